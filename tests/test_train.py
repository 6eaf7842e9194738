"""`speechattn train`: the tiny recipe learns, checkpoints reload, and a resumed run continues exactly."""

from __future__ import annotations

import csv

import pytest
import torch

from speechattn.training import train as train_module
from speechattn.model.encoder import load
from speechattn.training.recipes import load_recipe

pytestmark = pytest.mark.slow  # training runs: minutes, run in CI with -m ""


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The tiny recipe with its data prepared once for the module."""
    from speechattn.data.prepare import prepare

    data = tmp_path_factory.mktemp("tiny-data")
    recipe = load_recipe("recipes/tiny.yaml", {"data": {"output": str(data)}})
    prepare(recipe, progress=False)
    return recipe


def rows(path):
    with open(path) as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def tiny_run(tiny, tmp_path_factory):
    out = tmp_path_factory.mktemp("tiny-run")
    return out, train_module.train(tiny, out, progress=False)


def test_tiny_recipe_trains_and_its_checkpoints_reload(tiny, tiny_run):
    tmp_path, result = tiny_run
    assert result["steps"] == 40
    losses = [float(r["loss"]) for r in rows(tmp_path / "train.csv")]
    assert len(losses) == 40
    assert sum(losses[-10:]) / 10 < sum(losses[:5]) / 5 - 0.3  # the loss falls
    assert {int(r["chunk_frames"]) for r in rows(tmp_path / "train.csv")} >= {0, 4, 8}  # full context and chunks
    assert len(rows(tmp_path / "dev.csv")) == 2
    for name in ("last.pt", "best.pt"):
        model = load(tmp_path / name)
        assert model.config == tiny.model
        assert not torch.equal(model.frontend.feature_std, torch.ones_like(model.frontend.feature_std))


def test_a_run_ends_with_curves_tensorboard_and_an_evaluation(tiny_run):
    import json

    out, result = tiny_run
    assert (out / "curves.png").read_bytes()[:4] == b"\x89PNG" and (out / "confusion.png").exists()
    assert list((out / "tensorboard").glob("events.out.tfevents.*"))
    evaluation = json.loads((out / "eval.json").read_text())["results"]
    assert [r["chunk_frames"] for r in evaluation] == ["full", 4, 8]
    best_dev = max(float(r["dev_frame_accuracy"]) for r in rows(out / "dev.csv"))
    assert evaluation[2]["frame_accuracy"] == pytest.approx(best_dev, abs=1e-4)  # best.pt, chunk 8, as logged
    assert "chunk" in result["evaluation"] and 0 <= evaluation[2]["per"] <= 2


def test_eval_of_checkpoint_and_its_onnx_export_agree(tiny, tiny_run, capsys):
    import json
    from pathlib import Path

    from speechattn.cli import main

    out, _ = tiny_run
    manifest = Path(tiny.data.output) / "tiny_supervisions_dev.jsonl.gz"
    assert main(["export", str(out / "best.pt"), "-o", str(out / "best.onnx")]) == 0
    results = {}
    for model in ("best.pt", "best.onnx"):
        capsys.readouterr()
        assert main(["eval", str(out / model), str(manifest), "--chunk-frames", "4,8", "--json"]) == 0
        results[model] = json.loads(capsys.readouterr().out)["results"]
    for torch_result, onnx_result in zip(results["best.pt"], results["best.onnx"]):
        assert onnx_result["frames"] == torch_result["frames"] > 1000
        # streaming through ONNX equals one-shot torch to 1e-5 in log-probs: labels agree (ties aside)
        assert onnx_result["frame_accuracy"] == pytest.approx(torch_result["frame_accuracy"], abs=2e-3)
        assert onnx_result["per"] == pytest.approx(torch_result["per"], abs=0.02)


def test_a_resumed_run_continues_exactly(tiny, tmp_path, monkeypatch):
    recipe = load_recipe("recipes/tiny.yaml", {"data": {"output": tiny.data.output},
                                               "train": {"max_steps": 12, "checkpoint_every": 6}})
    straight = tmp_path / "straight"
    train_module.train(recipe, straight, progress=False)

    interrupted = tmp_path / "interrupted"
    calls = {"n": 0}
    real_loss = train_module.frame_loss

    def loss_that_is_killed_at_step_9(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 9:
            raise KeyboardInterrupt  # as if the process were killed after the step-6 checkpoint
        return real_loss(*args, **kwargs)

    monkeypatch.setattr(train_module, "frame_loss", loss_that_is_killed_at_step_9)
    with pytest.raises(KeyboardInterrupt):
        train_module.train(recipe, interrupted, progress=False)
    monkeypatch.setattr(train_module, "frame_loss", real_loss)
    assert torch.load(interrupted / "last.pt", weights_only=True)["step"] == 6
    assert (interrupted / "dev.csv").read_text().startswith("step,")  # headers are on disk before any row
    result = train_module.train(recipe, interrupted, resume=True, progress=False)
    assert result["steps"] == 12
    a, b = load(straight / "last.pt").state_dict(), load(interrupted / "last.pt").state_dict()
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)
    assert [r["step"] for r in rows(interrupted / "train.csv")] == [str(s) for s in range(1, 13)]  # no step twice


def test_one_loader_serves_every_epoch_with_each_epochs_draws(tiny, tmp_path, monkeypatch):
    """Worker processes start once per run, not once per epoch (a stall that was two thirds of a GPU run on a
    small set), and each batch still holds its epoch's items from where the step stands."""
    from speechattn.data.dataset import collate

    recipe = load_recipe("recipes/tiny.yaml", {"data": {"output": tiny.data.output}})
    trainer = train_module.Trainer(recipe, tmp_path, resume=False, progress=False, allow_command_sources=False)
    built = []
    real_loader = torch.utils.data.DataLoader

    def counting_loader(*args, **kwargs):
        built.append(1)
        return real_loader(*args, **kwargs)

    monkeypatch.setattr(torch.utils.data, "DataLoader", counting_loader)
    per_epoch, size = trainer.per_epoch, recipe.train.batch_size
    trainer.step = per_epoch - 1  # one batch before the end of epoch 0
    stream = trainer.batches()
    got = [next(stream) for _ in range(2 * per_epoch + 1)]  # into epoch 2
    assert len(built) == 1
    expected = [(0, per_epoch - 1)] + [(e, b) for e in (1, 2) for b in range(per_epoch)][: 2 * per_epoch]
    for (audio, labels, lengths), (epoch, number) in zip(got, expected):
        batch = train_module.batches_of_epoch(len(trainer.dataset), size, recipe.train.seed, epoch)[number]
        want = collate([trainer.dataset[(epoch, index)] for index in batch])
        assert torch.equal(audio, want[0]) and torch.equal(labels, want[1]) and torch.equal(lengths, want[2])


def test_train_recipe_errors_name_the_key(tmp_path):
    from speechattn.errors import ConfigError

    path = tmp_path / "r.yaml"
    path.write_text("data: {corpus: synth}\ntrain: {batch_size: 0}\n")
    with pytest.raises(ConfigError, match="train.batch_size"):
        load_recipe(path)
    path.write_text("data: {corpus: synth}\nmodel: {num_layer: 2}\n")
    with pytest.raises(ConfigError, match=r"r.yaml: unknown model setting\(s\): num_layer"):
        load_recipe(path)


def test_two_processes_under_torchrun_train_together(tiny, tmp_path):
    """DDP over two gloo processes on CPU, launched the way users launch it."""
    import os
    import shutil
    import subprocess
    import sys

    torchrun = shutil.which("torchrun") or os.path.join(os.path.dirname(sys.executable), "torchrun")
    result = subprocess.run(
        [torchrun, "--standalone", "--nproc_per_node=2", "-m", "speechattn.cli", "train", "recipes/tiny.yaml",
         "--out", str(tmp_path / "run"), "--set", f"data.output={tiny.data.output}", "--set", "train.max_steps=4",
         "--set", "train.eval_every=4", "--set", "train.checkpoint_every=2"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert result.returncode == 0, result.stderr[-2000:]
    assert "4 steps, 2 process(es)" in result.stdout
    assert result.stdout.count("best dev frame accuracy") == 1  # rank 0 alone reports
    assert len(rows(tmp_path / "run" / "train.csv")) == 4
    assert load(tmp_path / "run" / "last.pt").config == tiny.model


def test_two_nodes_under_torchrun_train_together(tiny, tmp_path):
    """Two torchrun node ranks (one process each) meeting at 127.0.0.1, as two machines would: one DDP job."""
    import os
    import shutil
    import socket
    import subprocess
    import sys

    with socket.socket() as probe:  # a free port for the rendezvous
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    torchrun = shutil.which("torchrun") or os.path.join(os.path.dirname(sys.executable), "torchrun")
    nodes = [subprocess.Popen(
        [torchrun, "--nnodes=2", f"--node_rank={rank}", "--nproc_per_node=1", "--master_addr=127.0.0.1",
         f"--master_port={port}", "-m", "speechattn.cli", "train", "recipes/tiny.yaml", "--out", str(tmp_path / "run"),
         "--set", f"data.output={tiny.data.output}", "--set", "train.max_steps=4", "--set", "train.eval_every=4",
         "--set", "train.checkpoint_every=2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1", "GLOO_SOCKET_IFNAME": "lo"}) for rank in (0, 1)]
    outputs = [node.communicate(timeout=300) for node in nodes]
    assert [node.returncode for node in nodes] == [0, 0], [err[-2000:] for _, err in outputs]
    assert "4 steps, 2 process(es)" in outputs[0][0]  # node 0 holds rank 0, which reports for both
    assert "best dev frame accuracy" not in outputs[1][0]
    assert len(rows(tmp_path / "run" / "train.csv")) == 4
    assert load(tmp_path / "run" / "last.pt").config == tiny.model


def test_device_and_precision_choices_are_checked(monkeypatch):
    from speechattn.errors import ConfigError, SpeechattnError
    from speechattn.training.train import TrainConfig, choose_device

    assert choose_device(TrainConfig(device="cpu")) == (torch.device("cpu"), None)
    with pytest.raises(ConfigError, match="train.precision"):
        TrainConfig(precision="fp8")
    if not torch.cuda.is_available():
        assert choose_device(TrainConfig()) == (torch.device("cpu"), None)  # auto: fp32 on CPU
        with pytest.raises(SpeechattnError, match="needs a GPU"):
            choose_device(TrainConfig(precision="bf16"))
        with pytest.raises(SpeechattnError, match="sees no GPU"):
            choose_device(TrainConfig(device="cuda"))
    else:  # run where a GPU is (bench/gpu_check.py's machine); CI has none
        assert choose_device(TrainConfig()) == (torch.device("cuda", 0), None)  # auto: fp32, measured faster
        assert choose_device(TrainConfig(precision="bf16"))[1] == torch.bfloat16
        monkeypatch.setenv("LOCAL_RANK", str(torch.cuda.device_count()))  # one process more than there are GPUs
        with pytest.raises(SpeechattnError, match="nproc_per_node"):
            choose_device(TrainConfig())


def test_distillation_loss_is_the_kl_from_the_teacher_over_real_frames_only():
    from speechattn.training.train import distillation_loss

    generator = torch.Generator().manual_seed(0)
    teacher = torch.log_softmax(torch.randn(2, 5, 7, generator=generator), -1)
    student = torch.log_softmax(torch.randn(2, 5, 7, generator=generator), -1)
    lengths = torch.tensor([5, 2])
    assert distillation_loss(teacher, teacher, lengths).item() == pytest.approx(0.0, abs=1e-7)
    kl = (teacher.exp() * (teacher - student)).sum(-1)  # (B, T)
    expected = (kl[0].sum() + kl[1, :2].sum()) / 7
    assert distillation_loss(student, teacher, lengths).item() == pytest.approx(expected.item(), rel=1e-6)
    garbage = student.clone()
    garbage[1, 2:] = 0.0  # padding past item 1's length counts for nothing
    assert distillation_loss(garbage, teacher, lengths).item() == pytest.approx(expected.item(), rel=1e-6)


def test_a_run_with_distillation_trains_and_records_the_setting(tiny, tmp_path):
    from speechattn.errors import ConfigError

    recipe = load_recipe("recipes/tiny.yaml", {"data": {"output": tiny.data.output},
                                               "train": {"max_steps": 3, "full_context_share": 0.0,
                                                         "distill_weight": 0.5, "final_eval": False}})
    result = train_module.train(recipe, tmp_path / "run", progress=False)
    assert result["steps"] == 3
    losses = [float(r["loss"]) for r in rows(tmp_path / "run" / "train.csv")]
    assert all(0 < loss < 10 for loss in losses) and all(int(r["chunk_frames"]) for r in rows(tmp_path / "run" / "train.csv"))
    assert "distill_weight: 0.5" in (tmp_path / "run" / "recipe.yaml").read_text()
    with pytest.raises(ConfigError, match="train.distill_weight"):
        load_recipe("recipes/tiny.yaml", {"train": {"distill_weight": 1.5}})


def test_a_primed_start_run_keeps_its_silence_caches_in_step_with_the_weights(tiny, tmp_path, monkeypatch):
    """Training recomputes a primed_start model's caches every PRIME_EVERY steps (and before its first), and the
    checkpoint it writes loads primed from its own weights."""
    monkeypatch.setattr(train_module, "PRIME_EVERY", 2)
    from speechattn.model.encoder import PhoneTagger

    primings = []
    original = PhoneTagger.prime

    def counted(self):
        primings.append(self.training)
        return original(self)

    monkeypatch.setattr(PhoneTagger, "prime", counted)
    recipe = load_recipe("recipes/tiny.yaml", {"data": {"output": tiny.data.output}, "model": {"primed_start": True},
                                               "train": {"max_steps": 5, "final_eval": False}})
    train_module.train(recipe, tmp_path / "run", progress=False)
    assert len(primings) >= 3  # steps 0, 2 and 4 (and the dev evaluation's reloads)
    monkeypatch.setattr(PhoneTagger, "prime", original)
    model = load(tmp_path / "run" / "last.pt")
    assert model.config.primed_start and model.primed
    fresh = PhoneTagger(model.config)
    fresh.load_state_dict(model.state_dict())
    assert torch.equal(fresh.eval().prime().primed_kv, model.primed_kv)


def test_phase_consistency_trains_and_pulls_the_two_phases_together(tiny, tmp_path):
    """The shifted copy's KL term is part of the loss: with it on, a run of a subsampled model records losses above
    the same run's without it (the same seed draws the same batches and chunks), and both train."""
    from speechattn.errors import ConfigError

    losses = {}
    for weight in (0.0, 5.0):
        recipe = load_recipe("recipes/tiny.yaml", {
            "data": {"output": tiny.data.output},
            "model": {"frame_subsampling": 2, "chunk_frames_choices": [4, 8], "left_context_frames": 16},
            "train": {"max_steps": 3, "full_context_share": 0.0, "phase_consistency": weight, "final_eval": False,
                      "augment": False}})
        train_module.train(recipe, tmp_path / f"run-{weight}", progress=False)
        losses[weight] = [float(r["loss"]) for r in rows(tmp_path / f"run-{weight}" / "train.csv")]
    assert all(0 < loss < 20 for loss in losses[5.0])
    assert losses[5.0][0] > losses[0.0][0]  # the first step: the same weights and batch, plus the KL term
    with pytest.raises(ConfigError, match="train.phase_consistency"):
        load_recipe("recipes/tiny.yaml", {"train": {"phase_consistency": -1}})


def test_the_phase_ensemble_teacher_averages_the_phases_of_the_full_context_output(tiny, tmp_path):
    """train.distill_phases: with S = 1 the teacher is the plain full-context output of the unaugmented crop; with
    S = 2 it is the mean posterior of the crop and the crop one frame later, aligned; it enters the loss."""
    import math

    from speechattn.errors import ConfigError

    def recipe(subsampling, phases):
        return load_recipe("recipes/tiny.yaml", {
            "data": {"output": tiny.data.output},
            "model": {"frame_subsampling": subsampling, "chunk_frames_choices": [4, 8], "left_context_frames": 16},
            "train": {"max_steps": 3, "full_context_share": 0.0, "distill_weight": 0.5, "distill_phases": phases,
                      "final_eval": False, "augment": False}})

    def trainer(subsampling, out):
        return train_module.Trainer(recipe(subsampling, True), out, resume=False, progress=False,
                                    allow_command_sources=False)

    torch.manual_seed(0)
    audio, lengths = torch.randn(2, 16000) * 0.1, torch.tensor([100, 80])
    one = trainer(1, tmp_path / "s1")
    one.model.eval()  # no dropout: the same forward twice gives the same output
    with torch.no_grad():
        plain = one.model(one.model.frontend(audio), lengths, None)
        assert torch.allclose(one.phase_ensemble(one.model, audio, lengths, plain.shape[1]), plain, atol=1e-5)
    two = trainer(2, tmp_path / "s2")
    two.model.eval()
    with torch.no_grad():
        T = 100
        first = two.model(two.model.frontend(audio), lengths, None)[:, :T]
        later = two.model(two.model.frontend(torch.nn.functional.pad(audio, (160, 0))), lengths + 1, None)[:, 1:T + 1]
        expected = ((first.exp() + later.exp()) / 2).log()
        assert torch.allclose(two.phase_ensemble(two.model, audio, lengths, T), expected, atol=1e-5)
        assert not torch.allclose(first, later, atol=1e-3)  # the two phases differ, so the average is a new teacher

    losses = {}
    for phases in (False, True):
        train_module.train(recipe(2, phases), tmp_path / f"run-{phases}", progress=False)
        losses[phases] = [float(r["loss"]) for r in rows(tmp_path / f"run-{phases}" / "train.csv")]
    assert all(math.isfinite(loss) and 0 < loss < 20 for loss in losses[True])
    assert losses[True][0] != losses[False][0]  # the same weights and batch, another teacher
    with pytest.raises(ConfigError, match="train.distill_phases"):
        load_recipe("recipes/tiny.yaml", {"train": {"distill_phases": True, "distill_weight": 0}})


def test_a_separate_teacher_is_distilled_from_its_outputs_aligned_by_the_output_delays(tiny, tmp_path):
    """train.teacher: another model (here another size, subsampling and output delay) is the distillation target on
    every batch, its full-context outputs on the unaugmented audio moved by the difference of the two output delays
    so both label the same frame; a teacher with another phone set is refused in one line."""
    from speechattn.errors import ConfigError
    from speechattn.model.encoder import CheckpointError, ModelConfig, PhoneTagger, save_checkpoint

    torch.manual_seed(1)
    teacher_path = tmp_path / "teacher.pt"
    save_checkpoint(PhoneTagger(ModelConfig(num_layers=1, model_dim=32, num_heads=2, ffn_dim=64, left_context_frames=16,
                                            frame_subsampling=1, output_delay_frames=0, dropout=0.0)), teacher_path)

    def recipe(teacher, student_delay, steps=3, full_context_share=0.2):
        return load_recipe("recipes/tiny.yaml", {
            "data": {"output": tiny.data.output},
            "model": {"output_delay_frames": student_delay},
            "train": {"max_steps": steps, "distill_weight": 0.5, "teacher": teacher and str(teacher),
                      "final_eval": False, "full_context_share": full_context_share}})

    audio, lengths = torch.randn(2, 16000) * 0.1, torch.tensor([100, 80])
    for student_delay in (0, 3):
        trainer = train_module.Trainer(recipe(teacher_path, student_delay), tmp_path / f"d{student_delay}",
                                       resume=False, progress=False, allow_command_sources=False)
        with torch.no_grad():
            own = trainer.teacher(trainer.teacher.frontend(audio), lengths, None)  # (B, 100, classes), delay 0
            target, first, known = trainer.teacher_output(audio, None, lengths, 100)
        assert first == student_delay and torch.equal(known, lengths)
        # the student's output t labels frame t - delay: its target is the teacher's output for that frame
        assert torch.equal(target[:, student_delay:], own[:, : 100 - student_delay])
    # full-context batches only: in-place distillation leaves them alone, a separate teacher does not
    losses = {}
    for name, teacher in (("in-place", None), ("teacher", teacher_path)):
        result = train_module.train(recipe(teacher, 3, steps=2, full_context_share=1.0), tmp_path / name,
                                    progress=False)
        assert result["steps"] == 2
        losses[name] = [float(r["loss"]) for r in rows(tmp_path / name / "train.csv")]
    assert all(0 < loss < 20 for loss in losses["teacher"])
    assert losses["teacher"][0] != losses["in-place"][0]  # the same weights and batch; the teacher's KL added

    other = tmp_path / "other-phones.pt"
    save_checkpoint(PhoneTagger(ModelConfig(num_layers=1, model_dim=32, num_heads=2, ffn_dim=64, num_classes=10)),
                    other)
    with pytest.raises(CheckpointError, match="10 output classes"):
        train_module.Trainer(recipe(other, 0), tmp_path / "refused", resume=False, progress=False,
                             allow_command_sources=False)
    with pytest.raises(ConfigError, match="train.teacher"):
        load_recipe("recipes/tiny.yaml", {"train": {"teacher": str(teacher_path), "distill_weight": 0}})
