"""What bad input gets: the catalogue.  Each test names the mistake, and asserts the refusal (exit status,
the one line), that nothing was lost or overwritten, and that nothing was run that should not have been.

In order: run directories, output names, over-full-scale audio, resuming with other settings, manifests that would
run commands, user mistakes in one line, pictures of long files, out-of-range numbers and the smaller ones.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from speechattn.audio import speechlike_signal
from speechattn.cli import main

SAMPLE = "speechattn/runtime/samples/please-enter-your-password.wav"


def one_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def refused(capsys, *args, status: int = 1) -> str:
    """The one line a refused command prints; status 2 for a usage error, 1 for a failure of its inputs."""
    code = main([str(a) for a in args])
    err = capsys.readouterr().err
    assert code == status, err
    return one_line(err)


@pytest.fixture
def earlier_run(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    for name, content in (("last.pt", b"weights"), ("best.pt", b"best"), ("train.csv", b"step,loss\n1,2.0\n")):
        (out / name).write_bytes(content)
    return out


def contents(directory: Path) -> dict:
    return {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file() and p.name != ".lock"}


# 1 ------------------------------------------------------------------------------------------------------
def test_training_into_an_earlier_run_is_refused_and_loses_nothing(capsys, earlier_run):
    before = contents(earlier_run)
    line = refused(capsys, "train", "recipes/tiny.yaml", "--out", earlier_run, status=2)
    assert "holds an earlier run (last.pt, best.pt, train.csv)" in line and "--resume" in line and "--overwrite" in line
    assert contents(earlier_run) == before


def test_resume_and_overwrite_together_are_refused(capsys, earlier_run):
    assert "give one of them" in refused(capsys, "train", "recipes/tiny.yaml", "--out", earlier_run, "--resume",
                                         "--overwrite", status=2)


# 2 ------------------------------------------------------------------------------------------------------
def test_a_second_training_into_a_locked_run_directory_is_refused(capsys, tmp_path):
    import fcntl

    out = tmp_path / "run"
    out.mkdir()
    with open(out / ".lock", "w") as lock:
        lock.write("pid 4242 on elsewhere")
        lock.flush()
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        line = refused(capsys, "train", "recipes/tiny.yaml", "--out", out)
    assert "another training (pid 4242 on elsewhere) is writing to this run directory" in line
    assert sorted(p.name for p in out.iterdir()) == [".lock"]


def test_a_stale_lock_from_a_crashed_run_is_reported_and_taken_over(tmp_path, caplog):
    from speechattn.training.train import RunDirectory

    out = tmp_path / "run"
    out.mkdir()
    (out / ".lock").write_text("pid 999999 on crashed-host")  # nobody holds it: the process is gone
    with caplog.at_level("WARNING"), RunDirectory(out, rank=0):
        assert (out / ".lock").read_text().startswith(f"pid {os.getpid()}")
    assert "pid 999999 on crashed-host" in caplog.text and "ended without releasing its lock" in caplog.text
    assert (out / ".lock").read_text() == ""  # released cleanly this time


# 3 ------------------------------------------------------------------------------------------------------
def test_inputs_sharing_a_stem_get_distinct_outputs(capsys, tmp_path, tiny_onnx):
    audio = speechlike_signal(0.5, seed=3)
    for relative in ("a.wav", "a.flac", "d1/x.wav", "d2/x.wav"):
        (tmp_path / relative).parent.mkdir(exist_ok=True)
        sf.write(tmp_path / relative, audio, 16000)
    out = tmp_path / "out"
    files = [tmp_path / r for r in ("a.wav", "a.flac", "d1/x.wav", "d2/x.wav")]
    assert main(["transcribe", *map(str, files), "--model", str(tiny_onnx), "--format", "json",
                 "--output-dir", str(out)]) == 0
    written = sorted(p.name for p in out.iterdir())
    assert written == ["a.flac.json", "a.wav.json", "d1__x.wav.json", "d2__x.wav.json"]
    assert {json.loads((out / name).read_text())["file"] for name in written} == {str(f) for f in files}
    capsys.readouterr()
    # to standard output as CTM, each file's lines carry its distinct name (all four were "a" or "x"), and a stem
    # no other input shares stays the stem
    solo = tmp_path / "solo.wav"
    sf.write(solo, audio, 16000)
    assert main(["transcribe", *map(str, files), str(solo), "--model", str(tiny_onnx), "--format", "ctm"]) == 0
    ids = {line.split()[0] for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert ids == {"a.wav", "a.flac", "d1__x.wav", "d2__x.wav", "solo"}, ids


# 4 ------------------------------------------------------------------------------------------------------
def test_float_audio_over_full_scale_is_clipped_with_a_warning_and_the_batch_goes_on(capsys, caplog, tmp_path,
                                                                                      tiny_onnx):
    loud = 2.5 * speechlike_signal(1.0, seed=4) / np.abs(speechlike_signal(1.0, seed=4)).max()
    sf.write(tmp_path / "loud.wav", loud.astype(np.float32), 16000, subtype="FLOAT")
    sf.write(tmp_path / "next.wav", speechlike_signal(0.5, seed=5), 16000)
    code = main(["transcribe", str(tmp_path / "loud.wav"), str(tmp_path / "next.wav"), "--model", str(tiny_onnx)])
    out, err = capsys.readouterr()
    assert code == 0 and "Traceback" not in err
    said = err + caplog.text  # the CLI logs to stderr; under pytest the log is captured here
    assert "loud.wav: float samples reach 2.50, over full scale" in said and "clipped to [-1, 1]" in said
    assert len(out.strip().splitlines()) == 2  # both files transcribed
    assert main(["stream-check", str(tiny_onnx), str(tmp_path / "loud.wav"), "--chunk-frames", "4"]) == 0


# 5 ------------------------------------------------------------------------------------------------------
def test_resume_with_other_model_settings_is_refused_naming_the_keys(capsys, tmp_path):
    from speechattn.training.recipes import load_recipe
    from speechattn.training.train import write_recipe

    out = tmp_path / "run"
    out.mkdir()
    write_recipe(out, load_recipe("recipes/tiny.yaml"))
    assert main(["init", "-o", str(tmp_path / "w.pt"), "--set", "num_layers=1", "--set", "model_dim=16"]) == 0
    capsys.readouterr()
    line = refused(capsys, "train", "recipes/tiny.yaml", "--out", out, "--resume", "--set", "model.num_layers=3",
                   "--set", "model.model_dim=32", status=2)
    assert "model.num_layers (2 there, 3 here)" in line and "model.model_dim (64 there, 32 here)" in line


def test_resume_from_an_init_checkpoint_is_refused(capsys, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    assert main(["init", "-o", str(out / "last.pt"), "--set", "num_layers=1", "--set", "model_dim=16"]) == 0
    capsys.readouterr()
    line = refused(capsys, "train", "recipes/tiny.yaml", "--out", out, "--resume", status=2)
    assert "not a training checkpoint (written by `speechattn init`?)" in line and "--init-from" in line


# 6 ------------------------------------------------------------------------------------------------------
def command_manifest(tmp_path: Path, payload: Path) -> Path:
    from lhotse import AudioSource, Recording, RecordingSet, SupervisionSegment, SupervisionSet

    recording = Recording(id="evil", sources=[AudioSource(type="command", channels=[0],
                                                          source=f"touch {payload}; cat {SAMPLE}")],
                          sampling_rate=8000, num_samples=8000, duration=1.0)
    RecordingSet.from_recordings([recording]).to_file(tmp_path / "x_recordings_dev.jsonl.gz")
    supervision = SupervisionSegment(id="evil", recording_id="evil", start=0.0, duration=1.0,
                                     alignment={"phone": []})
    SupervisionSet.from_segments([supervision]).to_file(tmp_path / "x_supervisions_dev.jsonl.gz")
    return tmp_path / "x_supervisions_dev.jsonl.gz"


def test_a_manifest_that_would_run_a_command_is_refused_and_runs_nothing(capsys, tmp_path, tiny_onnx):
    payload = tmp_path / "payload"
    manifest = command_manifest(tmp_path, payload)
    line = refused(capsys, "eval", tiny_onnx, manifest)
    assert "recording evil gets its audio from a command" in line and "--allow-command-sources" in line
    assert not payload.exists()


def test_the_user_may_opt_in_to_command_sources(capsys, tmp_path, tiny_onnx):
    payload = tmp_path / "payload"
    main(["eval", str(tiny_onnx), str(command_manifest(tmp_path, payload)), "--allow-command-sources"])
    assert payload.exists()  # the command ran, because the user said so
    assert "utterance evil: cannot load its audio" in one_line(capsys.readouterr().err)  # and gave other audio


# 7 ------------------------------------------------------------------------------------------------------
def test_a_one_sample_file_as_textgrid_is_one_line(capsys, tmp_path, tiny_onnx):
    sf.write(tmp_path / "one.wav", np.array([0.1], dtype=np.float32), 16000)
    assert main(["transcribe", str(tmp_path / "one.wav"), "--model", str(tiny_onnx), "--format", "textgrid"]) == 1
    err = capsys.readouterr().err
    assert "one.wav: 0.1 ms of audio is shorter than one 10 ms frame" in err and "Traceback" not in err
    assert main(["transcribe", str(tmp_path / "one.wav"), "--model", str(tiny_onnx), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["segments"] == []
    assert main(["transcribe", str(tmp_path / "one.wav"), "--model", str(tiny_onnx), "--format", "ctm"]) == 0
    assert capsys.readouterr().out == ""  # no segment, no line (it was a blank line)


@pytest.mark.parametrize("samples", [1, 200, 399])
def test_a_file_shorter_than_the_spectrograms_window_gets_its_picture(capsys, tmp_path, tiny_onnx, samples):
    """--plot of a file under one 25 ms window: scipy refused it (an internal error) and warned on stderr."""
    import warnings

    sf.write(tmp_path / "short.wav", np.full(samples, 0.1, dtype=np.float32), 16000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # scipy's "nperseg is greater than input length" is no longer said
        code = main(["transcribe", str(tmp_path / "short.wav"), "--model", str(tiny_onnx), "--plot",
                     str(tmp_path / "short.png")])
    err = capsys.readouterr().err
    assert code == 0 and "internal error" not in err and "nperseg" not in err, err
    assert (tmp_path / "short.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("case", ["output-dir is a file", "export to a missing directory",
                                  "init to a missing directory", "eval of a non-ONNX file",
                                  "eval of an ONNX file that is not ours", "init with no layers",
                                  "--set below a setting"])
def test_user_mistakes_are_one_line_not_a_traceback(capsys, tmp_path, tiny_onnx, case):
    import onnx
    from onnx import TensorProto, helper

    (tmp_path / "file").write_text("x")
    (tmp_path / "garbage.onnx").write_bytes(b"\x08\x07garbage")
    identity = helper.make_model(helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                                                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                                                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])]))
    onnx.save(identity, tmp_path / "other.onnx")
    assert main(["init", "-o", str(tmp_path / "m.pt"), "--set", "num_layers=1", "--set", "model_dim=16"]) == 0
    capsys.readouterr()
    args, expected, status = {
        "output-dir is a file": (["transcribe", SAMPLE, "--model", tiny_onnx, "--output-dir", tmp_path / "file"],
                                 "a file, not a directory", 2),
        "export to a missing directory": (["export", tmp_path / "m.pt", "-o", tmp_path / "no" / "m.onnx"],
                                          "does not exist", 2),
        "init to a missing directory": (["init", "-o", tmp_path / "no" / "m.pt"], "does not exist", 2),
        "eval of a non-ONNX file": (["eval", tmp_path / "garbage.onnx", tmp_path / "x_supervisions_dev.jsonl.gz"],
                                    "no such manifest", 1),
        "eval of an ONNX file that is not ours": (["transcribe", SAMPLE, "--model", tmp_path / "other.onnx"],
                                                  "cannot load as a speechattn ONNX model", 1),
        "init with no layers": (["init", "-o", tmp_path / "z.pt", "--set", "num_layers=0"], "at least 1", 2),
        "--set below a setting": (["train", "recipes/tiny.yaml", "--set", "train.batch_size.x=1"],
                                  "train.batch_size is a setting, not a section", 2),
    }[case]
    assert expected in refused(capsys, *args, status=status)


def test_eval_of_a_garbage_onnx_file_is_one_line(capsys, tmp_path):
    (tmp_path / "garbage.onnx").write_bytes(b"\x08\x07garbage")
    (tmp_path / "s_supervisions_dev.jsonl.gz").write_bytes(b"not gzip")
    (tmp_path / "s_recordings_dev.jsonl.gz").write_bytes(b"not gzip")
    line = refused(capsys, "eval", tmp_path / "garbage.onnx", tmp_path / "s_supervisions_dev.jsonl.gz")
    assert "not a readable lhotse manifest" in line or "cannot load as a speechattn ONNX model" in line


@pytest.mark.parametrize("problem", ["empty", "not gzip"])
def test_training_on_an_empty_or_unreadable_manifest_is_one_line(capsys, tmp_path, problem):
    from lhotse import RecordingSet, SupervisionSet

    prefix = tmp_path / "d" / "x"
    prefix.parent.mkdir()
    for split in ("train", "dev"):
        if problem == "empty":
            RecordingSet.from_recordings([]).to_file(f"{prefix}_recordings_{split}.jsonl.gz")
            SupervisionSet.from_segments([]).to_file(f"{prefix}_supervisions_{split}.jsonl.gz")
        else:
            for kind in ("recordings", "supervisions"):
                Path(f"{prefix}_{kind}_{split}.jsonl.gz").write_bytes(b"plain text, not gzip")
    line = refused(capsys, "train", "recipes/tiny.yaml", "--out", tmp_path / "run", "--set", f"train.sets=[{prefix}]")
    assert ("no training utterances" if problem == "empty" else "not a readable lhotse manifest") in line


@pytest.mark.parametrize("damage, message", [
    (lambda item: item.update(duration=-3.0), "duration -3.0 (must be above 0)"),
    (lambda item: item["alignment"]["phone"][0].__setitem__(0, "QQ"), "phone 'QQ' is not one of the 40 phones"),
    (lambda item: item["alignment"]["phone"][0].__setitem__(2, -0.5), "lasts more than 0 s"),
    (lambda item: item["alignment"]["phone"][0].__setitem__(1, 1e9), "starts after the utterance ends"),
], ids=["negative duration", "unknown phone", "negative phone duration", "phone after the end"])
def test_training_on_a_manifest_with_impossible_values_is_one_line_and_leaves_nothing(capsys, tmp_path, damage,
                                                                                      message):
    """These reached lhotse or the label builder as an assertion (an "internal error") or, for the last two, became
    silent garbage labels; eval refused them already, train now does the same before any work."""
    import gzip

    prefix = tmp_path / "d" / "x"
    prefix.parent.mkdir()
    sf.write(tmp_path / "a.wav", speechlike_signal(1.0, seed=5), 16000)
    recording = {"id": "a", "sources": [{"type": "file", "channels": [0], "source": str(tmp_path / "a.wav")}],
                 "sampling_rate": 16000, "num_samples": 16000, "duration": 1.0, "channel_ids": [0]}
    supervision = {"id": "a", "recording_id": "a", "start": 0.0, "duration": 1.0, "channel": 0, "speaker": "s",
                   "alignment": {"phone": [["AE", 0.0, 0.5, None], ["T", 0.5, 0.5, None]]}}
    damage(supervision)
    for split in ("train", "dev"):
        for kind, item in (("recordings", recording), ("supervisions", supervision)):
            with gzip.open(f"{prefix}_{kind}_{split}.jsonl.gz", "wt") as f:
                f.write(json.dumps(item) + "\n")
    line = refused(capsys, "train", "recipes/tiny.yaml", "--out", tmp_path / "run", "--set", f"train.sets=[{prefix}]")
    assert message in line and "x_supervisions_train.jsonl.gz:1: a:" in line
    assert not (tmp_path / "run").exists()  # refused before any work: no run directory left behind


def test_a_full_disk_during_a_checkpoint_is_named_and_leaves_no_temporary(tmp_path, monkeypatch):
    import torch

    from conftest import random_model
    from speechattn.model.encoder import CheckpointError, save_checkpoint

    def full_disk(payload, path):
        Path(path).write_bytes(b"partial")
        raise RuntimeError("[enforce fail at inline_container.cc:603] . unexpected pos 64 vs 0: No space left on device")

    monkeypatch.setattr(torch, "save", full_disk)
    with pytest.raises(CheckpointError, match="best.pt: cannot write the checkpoint: the disk is full"):
        save_checkpoint(random_model(), tmp_path / "best.pt")
    assert list(tmp_path.iterdir()) == []


# 8 ------------------------------------------------------------------------------------------------------
def test_no_picture_of_a_file_longer_than_the_plot_limit(capsys, tmp_path, tiny_onnx, monkeypatch):
    from speechattn.runtime import transcribe

    monkeypatch.setattr(transcribe, "PLOT_MAX_SECONDS", 2)
    sf.write(tmp_path / "long.wav", speechlike_signal(3.0, seed=8), 16000)
    code = main(["transcribe", str(tmp_path / "long.wav"), "--model", str(tiny_onnx), "--plot", str(tmp_path / "p.png")])
    out, err = capsys.readouterr()
    assert code == 0 and out.startswith(str(tmp_path / "long.wav"))
    assert "3 s is longer than the 2 s a picture can show; no plot" in err and not (tmp_path / "p.png").exists()


# 9 ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args, expected", [
    (["transcribe", SAMPLE, "--chunk-frames", "0"], "'--chunk-frames': 0 is not in the range x>=1"),
    (["transcribe", SAMPLE, "--threads", "-1"], "'--threads': -1 is not in the range 1<=x<=256"),
    (["eval", "m.onnx", "x.jsonl.gz", "--limit", "0"], "'--limit': 0 is not in the range x>=1"),
])
def test_out_of_range_numbers_are_refused(capsys, args, expected):
    assert expected in refused(capsys, *args, status=2)


def test_eval_of_a_checkpoint_refuses_a_chunk_size_it_was_not_trained_for(capsys, tmp_path, tiny_model):
    from speechattn.model.encoder import save_checkpoint

    save_checkpoint(tiny_model, tmp_path / "m.pt")
    manifest = command_manifest(tmp_path, tmp_path / "payload")  # never read: the chunk size is refused first?
    line = refused(capsys, "eval", tmp_path / "m.pt", manifest, "--allow-command-sources", "--chunk-frames", "5",
                   status=2)
    assert "chunk size(s) [5] not trained for" in line


def test_recipes_accept_3e_3_and_refuse_a_key_given_twice(tmp_path):
    from speechattn.errors import ConfigError
    from speechattn.training.recipes import load_recipe

    (tmp_path / "r.yaml").write_text("data:\n  corpus: synth\ntrain:\n  learning_rate: 3e-3\n")
    assert load_recipe(tmp_path / "r.yaml").train.learning_rate == 0.003
    (tmp_path / "d.yaml").write_text("data:\n  corpus: synth\ntrain:\n  max_steps: 5\n  max_steps: 50\n")
    with pytest.raises(ConfigError, match=r"d.yaml:5: 'max_steps' is given twice \(first on line 4\)"):
        load_recipe(tmp_path / "d.yaml")


def test_a_truncated_wav_is_transcribed_with_a_warning(capsys, caplog, tmp_path, tiny_onnx):
    sf.write(tmp_path / "t.wav", speechlike_signal(1.0, seed=9), 16000, subtype="PCM_16")
    data = (tmp_path / "t.wav").read_bytes()
    (tmp_path / "t.wav").write_bytes(data[: len(data) // 2])  # the header still announces 1 s
    assert main(["transcribe", str(tmp_path / "t.wav"), "--model", str(tiny_onnx)]) == 0
    err = capsys.readouterr().err
    assert "the header announces 1.00 s but the file holds 0.50 s (truncated?)" in err + caplog.text


def test_a_garbage_checkpoint_is_one_line_without_torch_internals(capsys, tmp_path):
    (tmp_path / "g.pt").write_bytes(b"PK\x03\x04 garbage")
    line = refused(capsys, "export", tmp_path / "g.pt", "-o", tmp_path / "g.onnx")
    assert "g.pt: not a readable checkpoint" in line and "file an issue" not in line


def test_missing_onnxruntime_says_how_to_install_it(tmp_path):
    blocker = ("import sys\nclass Block:\n    def find_spec(self, name, path=None, target=None):\n"
               "        if name.split('.')[0] == 'onnxruntime':\n"
               "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
               "sys.meta_path.insert(0, Block())\nfrom speechattn.cli import main\n"
               f"sys.exit(main(['transcribe', '{SAMPLE}']))")
    result = subprocess.run([sys.executable, "-c", blocker], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and one_line(result.stderr).endswith("pip install onnxruntime")


@pytest.mark.slow
def test_training_without_dev_data_says_so(capsys, caplog, tmp_path):
    from lhotse import Recording, RecordingSet, SupervisionSet

    from speechattn.data.corpora import _supervision
    from speechattn.data.synth import espeak, with_edge_silence

    prefix = tmp_path / "d" / "x"
    prefix.parent.mkdir()
    recordings, supervisions = [], []
    for number, text in enumerate(["one small test", "two more words"]):
        utterance = with_edge_silence(espeak().synthesize(text, "espeak:en-us", 160), 0.1, 0.1)
        sf.write(prefix.parent / f"u{number}.wav", utterance.audio, 16000)
        recording = Recording.from_file(prefix.parent / f"u{number}.wav", recording_id=f"u{number}")
        recordings.append(recording)
        supervisions.append(_supervision(recording, utterance.intervals, "s", text))
    RecordingSet.from_recordings(recordings).to_file(f"{prefix}_recordings_train.jsonl.gz")
    SupervisionSet.from_segments(supervisions).to_file(f"{prefix}_supervisions_train.jsonl.gz")
    RecordingSet.from_recordings([]).to_file(f"{prefix}_recordings_dev.jsonl.gz")
    SupervisionSet.from_segments([]).to_file(f"{prefix}_supervisions_dev.jsonl.gz")
    code = main(["train", "recipes/tiny.yaml", "--out", str(tmp_path / "run"), "--set", f"train.sets=[{prefix}]",
                 "--set", "train.max_steps=2", "--set", "train.batch_size=2", "--set", "train.normalization_items=2",
                 "--set", f"train.audio_cache={tmp_path / 'cache'}"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "no dev data, so no dev figures and no best.pt" in out and "best dev frame accuracy" not in out
    assert "no dev data in" in err + caplog.text


# round two ------------------------------------------------------------------------------------------------
def test_transcribe_never_replaces_an_earlier_output_without_overwrite(capsys, tmp_path, tiny_onnx):
    out = tmp_path / "out"
    out.mkdir()
    earlier = out / (Path(SAMPLE).stem + ".txt")
    earlier.write_text("an earlier run's result\n")
    code = main(["transcribe", str(SAMPLE), "--model", str(tiny_onnx), "--output-dir", str(out)])
    err = capsys.readouterr().err
    assert code == 1 and "exists (an earlier run?): not replaced; --overwrite replaces it" in err
    assert earlier.read_text() == "an earlier run's result\n"
    assert main(["transcribe", str(SAMPLE), "--model", str(tiny_onnx), "--output-dir", str(out), "--overwrite"]) == 0
    assert earlier.read_text().startswith(str(SAMPLE))


def test_outputs_are_written_whole_or_not_at_all(tmp_path, monkeypatch):
    import errno

    from speechattn.errors import SpeechattnError
    from speechattn.files import atomic_write_text

    target = tmp_path / "x.json"
    target.write_text("before")

    class FullDisk:  # a file on a disk that fills after 4096 bytes, as a real one does mid-write
        def __init__(self, path, mode):
            self.handle = open(path, mode)

        def write(self, data):
            self.handle.write(data[:4096])
            raise OSError(errno.ENOSPC, "No space left on device")

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

    monkeypatch.setattr("speechattn.files.open", FullDisk, raising=False)
    with pytest.raises(SpeechattnError, match="x.json: the disk is full; nothing was written"):
        atomic_write_text(target, "after")
    monkeypatch.undo()
    assert target.read_text() == "before" and sorted(p.name for p in tmp_path.iterdir()) == ["x.json"]


def test_a_plot_path_that_is_a_folder_or_not_png_is_refused_before_the_work(capsys, tmp_path, tiny_onnx):
    for plot, message in ((".", "ends as a directory does; give a file name"), (str(tmp_path), "give a .png file name"),
                          (str(tmp_path / "no" / "p.png"), "does not exist"),
                          (str(tmp_path / "p.png" / "q.png"), "does not exist")):
        code = main(["transcribe", str(SAMPLE), "--model", str(tiny_onnx), "--plot", plot])
        err = capsys.readouterr().err
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1, (plot, err)


def test_a_growing_wav_reads_whole_at_any_moment(tmp_path):
    from speechattn.runtime.mic import GrowingWav

    wav = GrowingWav(tmp_path / "h.wav", 16000)
    wav.write(np.full(1600, 0.25, np.float32))
    wav.write(np.full(800, -0.5, np.float32))
    audio, rate = sf.read(tmp_path / "h.wav")  # not closed: as a killed session leaves it
    assert rate == 16000 and len(audio) == 2400 and audio[0] == 0.25 and audio[-1] == -0.5


def test_mic_json_lines_are_flushed_as_they_are_shown(tmp_path):
    from speechattn.phones import PHONES
    from speechattn.runtime.mic import Display
    from speechattn_export.segments import Segment

    with open(tmp_path / "m.jsonl", "w") as handle:
        Display(tuple(PHONES), live=True, output=handle).segments([Segment(0, 10, 1, 0.9)])
        assert (tmp_path / "m.jsonl").read_text().count("\n") == 1  # on disk before the file is closed


def test_every_json_line_mic_writes_has_a_type(tmp_path, capsys):
    """mic --script printed segment lines without a "type" among word lines with one: every line says its type."""
    from speechattn.phones import PHONES
    from speechattn.runtime.mic import Display
    from speechattn_export.segments import Segment
    from speechattn_export.visemes import SETS, Cue

    with open(tmp_path / "m.jsonl", "w") as handle:
        Display(tuple(PHONES), live=False, output=handle).segments([Segment(0, 10, 1, 0.9), Segment(10, 14, 0, 0.5)])
    rhubarb = Display(tuple(PHONES), live=False, output=None, visemes=SETS["rhubarb"])
    rhubarb.cues([Cue(0, 10, "X")])
    rhubarb.weights(np.arange(2), np.full((2, len(SETS["rhubarb"].shapes)), 1 / 9))
    lines = [json.loads(line) for line in (tmp_path / "m.jsonl").read_text().splitlines()]
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines == printed[:2] and [line["type"] for line in printed] == ["segment", "segment", "cue", "weights",
                                                                           "weights"]
    assert lines[0] == {"type": "segment", "start": 0.0, "end": 0.1, "phone": PHONES[1], "confidence": 0.9}


def test_the_web_server_answers_a_nul_in_the_url_with_400_and_survives_hang_ups(monkeypatch, capfd):
    import http.client
    import socket
    import threading

    from speechattn.runtime import web

    monkeypatch.setattr(web, "IDLE_TIMEOUT_SECONDS", 1)
    monkeypatch.setattr(web.Handler, "timeout", 1)
    try:
        server, url = web.make_server("127.0.0.1", 0)
    except Exception as error:  # onnxruntime-web not installed beside the page
        pytest.skip(str(error))
    port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("GET", "/web/%00index.html")
        assert connection.getresponse().status == 400
        for _ in range(3):  # a browser that asks for the model and hangs up at once
            raw = socket.create_connection(("127.0.0.1", port), timeout=10)
            raw.sendall(b"GET /models/default.onnx HTTP/1.1\r\nHost: x\r\n\r\n")
            raw.recv(100)
            raw.close()
        idle = socket.create_connection(("127.0.0.1", port), timeout=10)  # says nothing: dropped after the timeout
        assert idle.recv(100) == b""
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("GET", "/web/")
        assert connection.getresponse().status == 200  # still serving
    finally:
        server.shutdown()
        server.server_close()
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize("case, message", [
    ("folder", "a directory; give a recipe file (.yaml)"),
    ("nested", "nested too deeply to be a recipe"),
    ("python tag", "not valid YAML"),
])
def test_recipes_that_are_no_recipe_are_one_line(capsys, tmp_path, case, message):
    recipe = tmp_path / "r.yaml"
    if case == "folder":
        recipe.mkdir()
    elif case == "nested":
        recipe.write_text("data:\n" + "".join("  " * depth + f"k{depth}:\n" for depth in range(1, 3000)))
    else:
        recipe.write_text("data: !!python/object/apply:os.system ['touch x']\n")
    assert message in refused(capsys, "prepare", recipe, status=2)


def test_a_bare_recipe_name_is_the_recipe_that_comes_with_speechattn():
    from speechattn.training.recipes import load_recipe

    assert load_recipe("tiny").path.name == "tiny.yaml" and load_recipe("default").model.output_delay_frames == 6


def with_metadata(source, target, **changes):
    import onnx

    proto = onnx.load(str(source))
    values = {p.key: p.value for p in proto.metadata_props}
    values.update(changes)
    del proto.metadata_props[:]
    for key, value in values.items():
        proto.metadata_props.add(key=key, value=value)
    onnx.save(proto, str(target))
    return values


@pytest.mark.parametrize("change, message", [
    (lambda v: {"hop_samples": "0"}, "hop_samples = 0 is outside 1..48000"),
    (lambda v: {"allowed_chunk_frames": "100000000", "default_chunk_frames": "100000000"},
     "must be sizes from 1 to 4096"),
    (lambda v: {"outputs": json.dumps({"log_probs": json.loads(v["states"])[0]["output"]})},
     "is not the graph's log-probabilities"),
    (lambda v: {"states": json.dumps([{**s, "shape": ["batch", 1 << 30]} if i == 0 else s
                                      for i, s in enumerate(json.loads(v["states"]))])}, "has shape"),
    (lambda v: {"states": json.dumps([{**s, "shape": ["batch", 7]} if i == 0 else s
                                      for i, s in enumerate(json.loads(v["states"]))])}, "in the graph"),
    (lambda v: {"states": json.dumps([{**s, "dtype": "float16"} if i == 0 else s
                                      for i, s in enumerate(json.loads(v["states"]))])}, "has dtype 'float16'"),
    (lambda v: {"sample_rate": "0"}, "sample_rate = 0"),
])
def test_an_onnx_file_whose_metadata_lies_is_refused_naming_the_file(capsys, tmp_path, tiny_onnx, change, message):
    import onnx

    values = {p.key: p.value for p in onnx.load(str(tiny_onnx)).metadata_props}
    with_metadata(tiny_onnx, tmp_path / "lying.onnx", **change(values))
    line = refused(capsys, "transcribe", SAMPLE, "--model", tmp_path / "lying.onnx")
    assert "lying.onnx" in line and message in line, line


def test_a_foreign_graph_with_our_metadata_is_refused(capsys, tmp_path, tiny_onnx):
    import onnx
    from onnx import TensorProto, helper

    ours = {p.key: p.value for p in onnx.load(str(tiny_onnx)).metadata_props}
    foreign = helper.make_model(helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])]),
                                opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    for key, value in ours.items():
        foreign.metadata_props.add(key=key, value=value)
    onnx.save(foreign, tmp_path / "foreign.onnx")
    line = refused(capsys, "transcribe", SAMPLE, "--model", tmp_path / "foreign.onnx")
    assert "foreign.onnx" in line and "does not describe this graph" in line


def test_ctm_file_names_with_spaces_or_newlines_stay_one_field(tmp_path, capsys, tiny_onnx):
    import shutil

    odd = tmp_path / "my talk\nfinal.wav"
    shutil.copy(SAMPLE, odd)
    assert main(["transcribe", str(odd), "--model", str(tiny_onnx), "--format", "ctm"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines and all(line.split()[0] == "my_talk_final" and len(line.split()) == 6 for line in lines)


def test_a_manifest_is_read_from_any_working_directory(tmp_path, monkeypatch, capsys, tiny_onnx):
    """prepare writes audio paths relative to where it ran; from elsewhere they are found from the manifest."""
    from lhotse import AudioSource, Recording, RecordingSet, SupervisionSegment, SupervisionSet
    from lhotse.supervision import AlignmentItem

    root = tmp_path / "project"
    (root / "data" / "x" / "audio").mkdir(parents=True)
    sf.write(root / "data" / "x" / "audio" / "a.wav", speechlike_signal(0.5, seed=2), 16000)
    recording = Recording(id="a", sources=[AudioSource(type="file", channels=[0], source="data/x/audio/a.wav")],
                          sampling_rate=16000, num_samples=8000, duration=0.5)
    RecordingSet.from_recordings([recording]).to_file(root / "data" / "x" / "x_recordings_dev.jsonl.gz")
    supervision = SupervisionSegment(id="a", recording_id="a", start=0.0, duration=0.5,
                                     alignment={"phone": [AlignmentItem(symbol="sil", start=0.0, duration=0.5)]})
    SupervisionSet.from_segments([supervision]).to_file(root / "data" / "x" / "x_supervisions_dev.jsonl.gz")
    manifest = root / "data" / "x" / "x_supervisions_dev.jsonl.gz"
    monkeypatch.chdir(tmp_path)  # not where the paths are relative to
    assert main(["eval", str(tiny_onnx), str(manifest), "--chunk-frames", "4"]) == 0
    monkeypatch.chdir(root / "data")
    (root / "data" / "x" / "audio" / "a.wav").unlink()
    line = refused(capsys, "eval", tiny_onnx, manifest.resolve(), "--chunk-frames", "4")
    assert "is neither here nor beside the manifest" in line


@pytest.mark.parametrize("setting, message", [
    ("train.learning_rate=.nan", "train.learning_rate must be a finite number, not nan"),
    ("train.grad_clip=.inf", "train.grad_clip must be a finite number, not inf"),
    ("train.learning_rate=-1", "train.learning_rate must be above 0 and at most 1"),
    ("train.crop_seconds=0", "train.crop_seconds must be from 0.1 to 600 s"),
    ("model.dropout=1.5", "dropout must be in [0, 1)"),
    ("model.num_layers=4000", "at most 64 layers"),
    ("model.model_dim=60000", "at most 64 layers, 8192 dims"),
])
def test_numeric_settings_out_of_range_are_refused_before_any_work(capsys, tmp_path, setting, message):
    line = refused(capsys, "train", "tiny", "--out", tmp_path / "run", "--set", setting, status=2)
    assert message in line and not (tmp_path / "run").exists()


@pytest.mark.slow
def test_a_run_whose_loss_becomes_non_finite_stops_and_writes_no_such_checkpoint(capsys, tmp_path, monkeypatch):
    from speechattn.training import train as training

    real_step = training.Trainer.train_step

    def diverging(self, audio, labels, lengths):
        loss, accuracy, chunk = real_step(self, audio, labels, lengths)
        if self.step >= 3:
            with torch.no_grad():
                next(self.model.parameters()).fill_(float("nan"))
            return float("nan"), accuracy, chunk
        return loss, accuracy, chunk

    import torch

    monkeypatch.setattr(training.Trainer, "train_step", diverging)
    line = refused(capsys, "train", "tiny", "--out", tmp_path / "run", "--set", "train.max_steps=20",
                   "--set", "train.checkpoint_every=2")
    assert "the loss became nan at step 3: training diverged" in line
    last = torch.load(tmp_path / "run" / "last.pt", weights_only=True)
    assert last["step"] == 2 and all(torch.isfinite(t).all() for t in last["model"].values() if t.is_floating_point())


def test_pseudo_labels_of_a_long_clip_come_from_bounded_windows(monkeypatch, tiny_model):
    """Full-context attention over a 10-minute clip wanted > 8 GB: long clips go through overlapping windows."""
    import torch

    from speechattn.training import pseudo

    audio = torch.from_numpy(speechlike_signal(6.0, seed=9))[None]
    frames = audio.shape[1] // 160
    with torch.no_grad():  # as pseudo_label runs it
        whole = pseudo.full_context_log_probs(tiny_model, audio, frames)
    monkeypatch.setattr(pseudo, "WINDOW_FRAMES", 200)
    monkeypatch.setattr(pseudo, "WINDOW_OVERLAP_FRAMES", 40)
    calls = []
    real_tag = type(tiny_model).tag
    monkeypatch.setattr(type(tiny_model), "tag", lambda self, a, n, c: calls.append(a.shape[1]) or real_tag(self, a, n, c))
    with torch.no_grad():
        windowed = pseudo.full_context_log_probs(tiny_model, audio, frames)
    assert windowed.shape == whole.shape and np.isfinite(windowed).all()
    assert max(calls) <= 200 * 160 and len(calls) == 4  # 600 frames: windows at 0, 160, 320, 480
    assert np.abs(windowed[:100] - whole[:100]).max() > 0  # really windowed: full context differs from window context


def test_a_sample_rate_of_zero_is_named_with_the_file(capsys, tmp_path, tiny_onnx):
    sf.write(tmp_path / "r0.wav", np.zeros(1600, np.float32), 16000, subtype="PCM_16")
    header = bytearray((tmp_path / "r0.wav").read_bytes())
    header[24:28] = (0).to_bytes(4, "little")  # the fmt chunk's sample rate
    (tmp_path / "r0.wav").write_bytes(bytes(header))
    assert main(["transcribe", str(tmp_path / "r0.wav"), "--model", str(tiny_onnx)]) == 1
    assert "r0.wav: the file says its sample rate is 0 Hz; it is damaged" in capsys.readouterr().err


def test_manifests_and_plots_are_written_through_a_temporary_name_with_their_suffixes(tmp_path):
    from lhotse import RecordingSet, load_manifest

    from speechattn.files import atomic_path

    target = tmp_path / "x_recordings_train.jsonl.gz"
    with atomic_path(target) as temporary:
        assert temporary.name.endswith(".partial.jsonl.gz") and temporary.parent == tmp_path
        assert not target.exists()
        RecordingSet.from_recordings([]).to_file(temporary)
    assert len(load_manifest(target)) == 0 and [p.name for p in tmp_path.iterdir()] == [target.name]
    with pytest.raises(RuntimeError):
        with atomic_path(tmp_path / "p.png") as temporary:
            temporary.write_bytes(b"half a picture")
            raise RuntimeError("killed mid-plot")
    assert [p.name for p in tmp_path.iterdir()] == [target.name]  # no partial file left, no p.png


def test_output_names_never_collide_whatever_the_input_names(tmp_path):
    from speechattn.cli.runtime import output_names

    (tmp_path / "d1").mkdir()
    (tmp_path / "d2").mkdir()
    files = [tmp_path / "d1" / "x.wav", tmp_path / "d2" / "x.wav", tmp_path / "d1__x.wav.wav", tmp_path / "x.flac",
             tmp_path / "x.wav", Path("-")]
    names = output_names(files)
    assert len(set(names.values())) == len(files), names


def test_a_raw_pickle_checkpoint_is_one_line_without_torch_warnings(capfd, tmp_path):
    import pickle

    (tmp_path / "raw.pt").write_bytes(pickle.dumps({"model": ValueError("a class weights_only refuses")}))
    assert main(["export", str(tmp_path / "raw.pt"), "-o", str(tmp_path / "m.onnx")]) == 1
    err = capfd.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "raw.pt: not a readable checkpoint" in err and "Warning" not in err
