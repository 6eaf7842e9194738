"""The training and data commands (prepare, train, eval, average, export, data-stats, show-item) on input they cannot
use: one line and the right exit status, nothing lost; bundled model names and the recipe's --set keys taken where
the other commands take them; manifests that work from any folder."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import write_timit_utterance
from speechattn.cli import main

ROOT = Path(__file__).resolve().parent.parent


def run(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def refused(capsys, *args, status: int) -> str:
    """The one line of a refused command (exit `status`, no traceback, no internal error)."""
    code, _, err = run(capsys, *args)
    lines = [line for line in err.strip().splitlines() if line]
    assert code == status and len(lines) == 1 and "Traceback" not in err and "internal error" not in err, (code, err)
    return lines[0]


def files(directory: Path) -> dict:
    return {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file()}


@pytest.fixture()
def prepared(tmp_path, monkeypatch):
    """A tiny TIMIT-layout corpus prepared in folder A with a relative data.root (as a user in A would type it);
    the test then runs in folder B."""
    here, there = tmp_path / "A", tmp_path / "B"
    there.mkdir()
    for number in range(4):
        write_timit_utterance(here / "TIMIT" / "TRAIN" / "DR1" / f"MSPK{number}", "SX1", seed=number)
    monkeypatch.chdir(here)
    assert main(["prepare", str(ROOT / "recipes" / "timit.yaml"), "--set", "data.root=TIMIT", "--out", "data",
                 "--set", "data.dev_speakers=0.25", "--set", "data.test_speakers=0.25"]) == 0
    monkeypatch.chdir(there)
    return here / "data" / "timit"


def manifest(prefix: Path, kind: str, split: str = "dev") -> Path:
    return prefix.with_name(f"{prefix.name}_{kind}_{split}.jsonl.gz")


def tiny_recipe(path: Path, sets: list[str], **train) -> Path:
    settings = {"max_steps": 2, "batch_size": 2, "eval_every": 1000, "checkpoint_every": 1000, "warmup_steps": 1,
                "normalization_items": 2, "loader_workers": 0, "final_eval": False, "audio_cache": "", **train}
    path.write_text("data: {corpus: synth}\n"  # never prepared: train.sets names the data
                    "model: {num_layers: 1, model_dim: 16, num_heads: 2, ffn_dim: 16, left_context_frames: 8, "
                    "chunk_frames_choices: [4, 8], default_chunk_frames: 8, frame_subsampling: 1, "
                    "output_delay_frames: 0, primed_start: false}\n"
                    f"train: {{sets: [{', '.join(sets)}], "
                    + ", ".join(f"{k}: {v!r}" if isinstance(v, str) else f"{k}: {str(v).lower()}"
                                for k, v in settings.items()) + "}\n")
    return path


def small_checkpoint(path: Path, seed: int = 0) -> Path:
    assert main(["init", "-o", str(path), "--seed", str(seed), "--set", "num_layers=1", "--set", "model_dim=16",
                 "--set", "ffn_dim=16", "--set", "num_heads=2"]) == 0
    return path


# 5. names accepted everywhere ------------------------------------------------------------------------------------
def test_eval_takes_the_bundled_model_names_that_transcribe_takes(capsys, prepared):
    for name in ("default", "default-int8"):
        code, out, err = run(capsys, "eval", name, manifest(prepared, "supervisions"), "--chunk-frames", "8", "--json")
        assert code == 0, err
        assert '"chunk_frames": 8' in out and '"utterances": 1' in out
    line = refused(capsys, "eval", "default", manifest(prepared, "supervisions"), "--chunk-frames", "full", status=2)
    assert "full context is for checkpoints; default is an ONNX file" in line
    assert f"evaluate the bundled default model's checkpoint: {ROOT / 'speechattn/runtime/models/default.pt'}" in line
    line = refused(capsys, "eval", "defualt", manifest(prepared, "supervisions"), status=1)
    assert "defualt: no such model file (or bundled model name: default, default-int8, file-int8, multilingual)" in line


def test_average_takes_the_recipe_keys_that_train_takes(capsys, tmp_path):
    from speechattn.cli.common import parse_overrides
    from speechattn.model.encoder import load
    from speechattn.training.recipes import load_recipe

    a, b = small_checkpoint(tmp_path / "a.pt", 1), small_checkpoint(tmp_path / "b.pt", 2)
    setting = "model.frontend.level_target_dbfs=-18"
    assert load_recipe("recipes/tiny.yaml", parse_overrides([setting])).model.frontend.level_target_dbfs == -18.0
    code, _, err = run(capsys, "average", a, b, "-o", tmp_path / "mean.pt", "--set", setting)
    assert code == 0, err
    assert load(tmp_path / "mean.pt").config.frontend.level_target_dbfs == -18.0
    before = files(tmp_path)
    line = refused(capsys, "average", a, b, "-o", tmp_path / "m.pt", "--set", "frontend.level_target_dbfs=-18",
                   status=2)
    assert "--set frontend: give the recipe's key, as train --set takes it: model.frontend" in line
    line = refused(capsys, "average", a, b, "-o", tmp_path / "m.pt", "--set", "train.seed=1", status=2)
    assert "a checkpoint holds only the model's settings; give model.KEY=VALUE" in line
    line = refused(capsys, "average", a, b, "-o", tmp_path / "m.pt", "--set", "model.num_layer=3", status=2)
    assert "unknown model setting(s): num_layer" in line
    for command in (["average", a, b, "-o", tmp_path / "m.pt"], ["train", "recipes/tiny.yaml", "--out", tmp_path / "r"]):
        line = refused(capsys, *command, "--set", "model.frontend=3", status=2)  # the same key, the same answer
        assert "frontend is a section of settings (frontend.KEY), not 3" in line
    assert files(tmp_path) == before


# 6. manifests that travel ----------------------------------------------------------------------------------------
def test_prepared_manifests_hold_absolute_audio_paths_and_work_from_another_folder(capsys, prepared, tmp_path):
    recordings = gzip.decompress(manifest(prepared, "recordings").read_bytes()).decode()
    assert f'"source": "{tmp_path / "A" / "TIMIT" / "TRAIN"}' in recordings
    code, out, err = run(capsys, "eval", "default", manifest(prepared, "supervisions"), "--chunk-frames", "8")
    assert code == 0 and "1 utterances" in out, err
    code, out, err = run(capsys, "transcribe", manifest(prepared, "recordings"), "--format", "text")
    assert code == 0 and "SX1.WAV" in out and "error" not in err, err
    recipe = tiny_recipe(tmp_path / "B" / "r.yaml", [str(prepared)], max_steps=2)
    code, out, err = run(capsys, "train", recipe, "--out", tmp_path / "B" / "run")
    assert code == 0 and "2 steps" in out, err
    assert (tmp_path / "B" / "run" / "last.pt").exists()


def test_old_manifests_with_relative_paths_are_found_from_the_manifest_folder(capsys, prepared, tmp_path):
    """Manifests written before paths were absolute: relative to where prepare ran (A), used from B."""
    old = tmp_path / "A" / "old"
    old.mkdir()
    for kind in ("recordings", "supervisions"):
        text = gzip.decompress(manifest(prepared, kind).read_bytes()).decode()
        (old / f"x_{kind}_dev.jsonl.gz").write_bytes(gzip.compress(text.replace(f"{tmp_path / 'A'}/", "").encode()))
    assert '"source": "TIMIT/TRAIN/' in gzip.decompress((old / "x_recordings_dev.jsonl.gz").read_bytes()).decode()
    code, out, err = run(capsys, "eval", "default", old / "x_supervisions_dev.jsonl.gz", "--chunk-frames", "8")
    assert code == 0 and "1 utterances" in out, err
    shutil.rmtree(tmp_path / "A" / "TIMIT")
    line = refused(capsys, "eval", "default", old / "x_supervisions_dev.jsonl.gz", status=1)
    assert "x_recordings_dev.jsonl.gz: recording " in line and "audio TIMIT/TRAIN/DR1/" in line
    assert "neither here nor beside the manifest" in line
    line = refused(capsys, "eval", "default", manifest(prepared, "supervisions"), status=1)  # an absolute path, gone
    assert f"audio {tmp_path / 'A' / 'TIMIT'}" in line and "no such file" in line


# 14. damaged manifests, manifests from elsewhere, a full disk ------------------------------------------------------
def damaged(kind: str, good: bytes) -> bytes:
    text = gzip.decompress(good)
    if kind == "truncated gzip":
        return good[: len(good) // 2]
    if kind == "garbage bytes":
        return bytes(range(256)) * 4
    if kind == "bad JSON line":
        return gzip.compress(text + b'{"id": "x", broken\n')
    corrupt = bytearray(gzip.compress(text * 20, mtime=0))  # "corrupt gzip": damaged inside the compressed stream
    for position in range(20, len(corrupt) - 10, 7):
        corrupt[position] ^= 0x55
    return bytes(corrupt)


DAMAGE = ("truncated gzip", "garbage bytes", "bad JSON line", "corrupt gzip")


@pytest.mark.parametrize("kind", DAMAGE)
@pytest.mark.parametrize("which", ["supervisions", "recordings"])
def test_a_damaged_manifest_is_one_line_in_every_command_that_reads_manifests(capsys, prepared, tmp_path, kind,
                                                                             which):
    bad = tmp_path / "bad"
    bad.mkdir()
    for side in ("recordings", "supervisions"):
        good = manifest(prepared, side, "train").read_bytes()
        (bad / f"x_{side}_train.jsonl.gz").write_bytes(damaged(kind, good) if side == which else good)
    target = bad / f"x_{which}_train.jsonl.gz"
    supervisions = bad / "x_supervisions_train.jsonl.gz"
    before = files(bad)
    commands = [["eval", "default", supervisions], ["show-item", supervisions, "train_mspk0_sx1"]]
    commands.append(["data-stats", supervisions] if which == "supervisions" else ["transcribe", target])
    for command in commands:
        line = refused(capsys, *command, status=1)
        assert str(target) in line and "not a readable lhotse manifest" in line, (command, line)
    code, _, err = run(capsys, "train", tiny_recipe(tmp_path / "r.yaml", [str(bad / "x")]), "--out", tmp_path / "run")
    last = err.strip().splitlines()[-1]
    assert code == 1 and "Traceback" not in err and "internal error" not in err, err
    assert str(target) in last and "not a readable lhotse manifest" in last, last
    assert files(bad) == before


def write_manifest(path: Path, lines: list[str]) -> Path:
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    return path


def test_eval_of_a_manifest_not_made_by_prepare_says_what_is_missing(capsys, prepared, tmp_path):
    recordings = gzip.decompress(manifest(prepared, "recordings").read_bytes()).decode().strip()
    lhotse = tmp_path / "lhotse"
    lhotse.mkdir()
    only = write_manifest(lhotse / "corpus_recordings_dev.jsonl.gz", [recordings])  # a recordings-only lhotse manifest
    line = refused(capsys, "eval", "default", only, status=1)
    assert "a recordings manifest (audio only, no labels); give the *_supervisions_* manifest beside it" in line
    alone = write_manifest(lhotse / "b_supervisions_dev.jsonl.gz", [recordings])
    line = refused(capsys, "eval", "default", alone, status=1)
    assert "its recordings manifest b_recordings_dev.jsonl.gz is not beside it" in line
    write_manifest(lhotse / "c_recordings_dev.jsonl.gz", [recordings])
    recording = json.loads(recordings)["id"]
    plain = write_manifest(lhotse / "c_supervisions_dev.jsonl.gz", [json.dumps({  # supervisions without alignments
        "id": "s1", "recording_id": recording, "start": 0.0, "duration": 0.5, "channel": 0, "text": "she had",
        "speaker": "someone", "alignment": {"word": [["SHE", 0.1, 0.2, 1.0]]}})])
    line = refused(capsys, "eval", "default", plain, status=1)
    assert "supervision s1 has no phone alignment (alignment.phone; alignments it has: word)" in line
    swapped = write_manifest(lhotse / "d_supervisions_dev.jsonl.gz", [recordings])
    write_manifest(lhotse / "d_recordings_dev.jsonl.gz", [recordings])
    line = refused(capsys, "eval", "default", swapped, status=1)
    assert "holds lhotse recordings, not supervisions" in line


@pytest.fixture()
def full_disk(tmp_path):
    """A real file system with no space left: a 256 KiB tmpfs (needs root), filled; unmounted afterwards."""
    mount = tmp_path / "full"
    mount.mkdir()
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def fill(directory: Path, leave_bytes: int = 0) -> None:
    """Fill the file system, then free `leave_bytes` again (tmpfs counts whole 4 KiB pages)."""
    descriptor = os.open(directory / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(descriptor, b"\0" * 4096):
            pass
    except OSError:  # ENOSPC: full
        os.ftruncate(descriptor, max(0, os.fstat(descriptor).st_size - leave_bytes))
    finally:
        os.close(descriptor)


def write_varied_utterance(speaker_dir: Path, seed: int) -> None:
    """A TIMIT utterance (conftest's) with phone boundaries of its own, so that manifests of many compress little."""
    import numpy as np

    write_timit_utterance(speaker_dir, "SX1", seed=seed)
    bounds = np.sort(np.random.default_rng(seed).choice(np.arange(1, 8000), 30, replace=False))
    phones = ["sh", "ix", "hv", "ae", "dcl", "d", "y", "er"]
    (speaker_dir / "SX1.PHN").write_text("".join(f"{a} {b} {phones[i % len(phones)]}\n" for i, (a, b) in
                                                 enumerate(zip([0, *bounds], [*bounds, 8000]))))


def test_prepare_on_a_full_disk_is_one_line_and_replaces_none_of_the_earlier_manifests(capsys, full_disk, tmp_path):
    corpus = tmp_path / "TIMIT"
    for number in range(4):
        write_varied_utterance(corpus / "TRAIN" / "DR1" / f"MSPK{number}", seed=number)
    settings = ["--set", f"data.root={corpus}", "--set", "data.dev_speakers=0.25", "--set", "data.test_speakers=0.25"]
    code, _, err = run(capsys, "prepare", ROOT / "recipes" / "timit.yaml", "--out", full_disk / "data", *settings)
    assert code == 0, err
    before = files(full_disk / "data")
    assert len(before) == 6
    for number in range(4, 60):  # the corpus grew: its new train supervisions take more than one 4 KiB page
        write_varied_utterance(corpus / "TRAIN" / "DR1" / f"MSPK{number}", seed=number)
    code, _, err = run(capsys, "prepare", ROOT / "recipes" / "timit.yaml", "--out", tmp_path / "sizes", *settings)
    sizes = {p.name: p.stat().st_size for p in (tmp_path / "sizes").iterdir()}
    assert code == 0 and sizes["timit_supervisions_train.jsonl.gz"] > 4096, (err, sizes)
    fill(full_disk, leave_bytes=4096 * -(-sizes["timit_recordings_train.jsonl.gz"] // 4096))  # the first file fits
    line = refused(capsys, "prepare", ROOT / "recipes" / "timit.yaml", "--out", full_disk / "data", *settings, status=1)
    assert "the disk is full; nothing was written" in line
    assert files(full_disk / "data") == before  # not one replaced (the pair would disagree), no temporary left


# 15. checkpoints holding NaN or infinite weights ------------------------------------------------------------------
@pytest.fixture()
def broken_checkpoint(tmp_path):
    import torch

    path = small_checkpoint(tmp_path / "good.pt")
    payload = torch.load(path, weights_only=True)
    name = "layers.0.attention_norm.weight" if "layers.0.attention_norm.weight" in payload["model"] \
        else next(k for k, v in payload["model"].items() if v.is_floating_point() and v.numel() > 1 and k != "mean")
    payload["model"][name] = payload["model"][name].clone()
    payload["model"][name].view(-1)[1] = float("nan")
    torch.save(payload, tmp_path / "nan.pt")
    return tmp_path / "nan.pt", name


def test_a_checkpoint_with_nan_weights_is_refused_naming_the_parameter_by_every_command(capsys, broken_checkpoint,
                                                                                       prepared, tmp_path):
    path, name = broken_checkpoint
    expected = f"{path}: parameter {name} holds NaN or infinite values"
    before = files(tmp_path)
    for command in (["eval", path, manifest(prepared, "supervisions")],
                    ["export", path, "-o", tmp_path / "m.onnx"],
                    ["average", path, tmp_path / "good.pt", "-o", tmp_path / "mean.pt"]):
        assert expected in refused(capsys, *command, status=1), command
    assert files(tmp_path) == before
    recipe = tiny_recipe(tmp_path / "r.yaml", [str(prepared)])
    code, _, err = run(capsys, "train", recipe, "--out", tmp_path / "run", "--init-from", path)
    assert code == 1 and "Traceback" not in err and expected in err.strip().splitlines()[-1], err
    assert not (tmp_path / "run" / "last.pt").exists()


def test_an_infinite_weight_is_refused_too(capsys, tmp_path):
    import torch

    path = small_checkpoint(tmp_path / "good.pt")
    payload = torch.load(path, weights_only=True)
    first = next(k for k, v in payload["model"].items() if v.is_floating_point())
    payload["model"][first] = torch.full_like(payload["model"][first], float("inf"))
    torch.save(payload, tmp_path / "inf.pt")
    line = refused(capsys, "export", tmp_path / "inf.pt", "-o", tmp_path / "m.onnx", status=1)
    assert f"parameter {first} holds NaN or infinite values" in line


@pytest.mark.parametrize("setting, words", [("train.max_step=5", "--set: unknown setting(s): train.max_step"),
                                            ("train.max_steps=five", "--set: train.max_steps must be an integer"),
                                            ("bogus.key=1", "--set: unknown section(s): bogus")])
def test_a_wrong_set_is_named_as_the_set_not_as_the_recipe_file(capsys, tmp_path, setting, words):
    """The packaged recipe is sound: its path (site-packages/.../tiny.yaml) was named as if the file were wrong."""
    line = refused(capsys, "train", "tiny", "--out", tmp_path / "run", "--set", setting, status=2)
    assert words in line and "tiny.yaml" not in line, line
    assert not (tmp_path / "run").exists()


def test_a_wrong_recipe_file_is_still_named_with_a_set_beside_it(capsys, tmp_path):
    recipe = tmp_path / "mine.yaml"
    recipe.write_text("train:\n  max_stepz: 5\n")
    line = refused(capsys, "train", recipe, "--out", tmp_path / "run", "--set", "train.max_steps=5", status=2)
    assert line.endswith(f"{recipe}: unknown setting(s): train.max_stepz"), line
