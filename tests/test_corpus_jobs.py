"""Corpus jobs of `transcribe` and `align` (speechattn/runtime/batch.py): the same files from --jobs 1, --jobs N and
--threads 1 on long recordings; one summary and one exit-status rule; no more workers than files; inputs that share
a stem; workers that end with their parent; a bad --dictionary said once; a recording id too long for a file name;
a reader that stops early; a file the user cannot read."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from speechattn.audio import speechlike_signal
from speechattn.cli import main

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "speechattn" / "runtime" / "samples"
WORDS = "please enter your password"


def long_recording(path: Path, seconds: float = 70.0, seed: int = 0) -> Path:
    """The bundled samples (at 16 kHz) and speech-like signal, in turn, until `seconds`: a long file of real speech."""
    import soxr

    pieces, total, number = [], 0, 0
    speech = []
    for sample in sorted(SAMPLES.glob("*.wav")):
        audio, rate = sf.read(sample, dtype="float32")
        speech.append(soxr.resample(audio, rate, 16000).astype(np.float32))
    while total < seconds * 16000:
        piece = speech[number % 2] if number % 3 != 2 else speechlike_signal(1.5, seed=seed + number)
        pieces.append(piece)
        total += len(piece)
        number += 1
    sf.write(path, np.concatenate(pieces)[: int(seconds * 16000)], 16000, subtype="PCM_16")
    return path


def speechattn(*args, wait: bool = True, **settings):
    command = [sys.executable, "-m", "speechattn", *map(str, args)]
    if not wait:
        return subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True, **settings)
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, **settings)


def outputs(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if not p.name.startswith(".")}


@pytest.fixture(scope="module")
def long_corpus(tmp_path_factory) -> Path:
    """Two recordings of 70 s: long enough that onnxruntime splits its work across threads."""
    folder = tmp_path_factory.mktemp("long")
    for number in range(2):
        long_recording(folder / f"long{number}.wav", seed=number)
    return folder


def test_every_way_writes_the_same_files_for_long_recordings(long_corpus, tmp_path):
    """--jobs 1 (this process), --jobs 2 (worker processes) and --threads 1 to standard output give the same
    numbers: each stream runs on --threads onnxruntime threads (1), whatever --jobs."""
    written = {}
    for jobs in (1, 2):
        result = speechattn("transcribe", long_corpus, "--output-dir", tmp_path / f"jobs{jobs}", "--format", "json",
                            "--model", "default-int8", "--jobs", jobs)
        assert result.returncode == 0, result.stderr
        written[jobs] = outputs(tmp_path / f"jobs{jobs}")
    assert sorted(written[1]) == ["long0.json", "long1.json"]
    assert written[1] == written[2]
    printed = speechattn("transcribe", long_corpus, "--format", "json", "--model", "default-int8", "--threads", 1)
    assert printed.returncode == 0, printed.stderr
    by_file = {Path(json.loads(line)["file"]).stem + ".json": json.loads(line) for line in printed.stdout.splitlines()}
    assert by_file == {name: json.loads(text) for name, text in written[1].items()}


def summary(err: str) -> str:
    return re.sub(r"[\d.]+ s of audio in [\d.]+ s(, [\d.]+ x real time)?", "T", err.strip().splitlines()[-1])


def test_jobs_1_and_jobs_n_close_with_the_same_summary(tmp_path, tiny_onnx):
    for name in ("a", "b"):
        sf.write(tmp_path / f"{name}.wav", speechlike_signal(0.5, seed=len(name)), 16000)
    lines = {}
    for jobs in (1, 2):
        result = speechattn("transcribe", tmp_path / "a.wav", tmp_path / "b.wav", "--model", tiny_onnx,
                            "--output-dir", tmp_path / f"out{jobs}", "--jobs", jobs)
        assert result.returncode == 0, result.stderr
        lines[jobs] = summary(result.stderr)
    assert lines[1] == f"speechattn transcribe: 2 files, T; 0 failed, 0 skipped as done; written to {tmp_path / 'out1'}"
    assert lines[2] == lines[1].replace("out1", "out2")


def mfa_corpus(folder: Path, names=("a.wav", "b.wav"), transcribed=("a", "b"), seconds: float = 1.0) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for number, name in enumerate(names):
        sf.write(folder / name, speechlike_signal(seconds, seed=number), 16000)
    for stem in transcribed:
        (folder / f"{stem}.lab").write_text(WORDS + "\n")
    return folder


def test_corpus_align_exit_status_follows_its_summary(tmp_path, tiny_onnx, capsys):
    """Exit 0 when every audio file's alignment is in --output-dir at the end, 1 when any is not; a file without a
    transcript is counted as failed in the summary, not reported as '0 failed' beside exit 1."""
    corpus = mfa_corpus(tmp_path / "c", names=("a.wav", "b.wav", "lonely.wav"))
    out = tmp_path / "out"
    code = main(["align", str(corpus), "--output-dir", str(out), "--model", str(tiny_onnx), "--force"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "lonely.wav: no .lab or .txt beside it; skipped" in err
    assert "2 file(s) aligned, 1 failed (1 with no transcript beside it), 0 skipped as done;" in err
    (corpus / "lonely.lab").write_text(WORDS)
    code = main(["align", str(corpus), "--output-dir", str(out), "--model", str(tiny_onnx), "--force"])
    err = capsys.readouterr().err
    assert code == 0 and "1 file(s) aligned, 0 failed, 2 skipped as done" in err, err
    assert sorted(outputs(out)) == ["a.TextGrid", "b.TextGrid", "lonely.TextGrid"]


def test_transcribe_exit_status_follows_the_same_rule(tmp_path, tiny_onnx, capsys):
    """An input whose output an earlier run left is not done unless --resume skips it: exit 1, then 0."""
    sf.write(tmp_path / "a.wav", speechlike_signal(0.5), 16000)
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.txt").write_text("an earlier run's\n")
    code = main(["transcribe", str(tmp_path / "a.wav"), "--model", str(tiny_onnx), "--output-dir", str(out)])
    err = capsys.readouterr().err
    assert code == 1 and "a.txt exists (an earlier run?): not replaced" in err and "1 failed, 0 skipped" in err, err
    assert (out / "a.txt").read_text() == "an earlier run's\n"
    code = main(["transcribe", str(tmp_path / "a.wav"), "--model", str(tiny_onnx), "--output-dir", str(out),
                 "--resume"])
    err = capsys.readouterr().err
    assert code == 0 and "0 files, 0.0 s of audio" in err and "0 failed, 1 skipped as done" in err, err


def test_jobs_n_starts_no_more_workers_than_files(tmp_path, tiny_onnx, monkeypatch):
    import concurrent.futures

    from speechattn.runtime.batch import FileJob, run_processes
    from speechattn.runtime.workers import TranscribeSettings, TranscribeWorker
    from speechattn_export.pipeline import DecodingOptions

    sizes = []

    class Pool(concurrent.futures.ProcessPoolExecutor):  # the real pool; the size it was asked for noted
        def __init__(self, max_workers, *args, **kwargs):
            sizes.append(max_workers)
            super().__init__(max_workers, *args, **kwargs)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Pool)
    jobs = []
    for name in ("a", "b"):
        sf.write(tmp_path / f"{name}.wav", speechlike_signal(0.5), 16000)
        jobs.append(FileJob(str(tmp_path / f"{name}.wav"), str(tmp_path / f"{name}.json")))
    settings = TranscribeSettings(str(tiny_onnx), "json", DecodingOptions())
    results = list(run_processes(jobs, TranscribeWorker, settings, 8))
    assert [r.error for r in results] == [None, None] and sizes == [2]
    assert list(run_processes(jobs[:1], TranscribeWorker, settings, 8))[0].error is None and sizes == [2]  # here
    assert list(run_processes([], TranscribeWorker, settings, 8)) == [] and sizes == [2]


def test_inputs_that_share_a_stem_each_get_their_output(tmp_path, tiny_onnx, capsys):
    """a.wav and a.flac beside one a.lab: two alignments, none lost."""
    corpus = tmp_path / "c"
    corpus.mkdir()
    sf.write(corpus / "a.wav", speechlike_signal(1.0, seed=1), 16000)
    sf.write(corpus / "a.flac", speechlike_signal(1.0, seed=2), 16000)
    (corpus / "a.lab").write_text(WORDS)
    out = tmp_path / "out"
    code = main(["align", str(corpus), "--output-dir", str(out), "--model", str(tiny_onnx), "--format", "json",
                 "--force"])  # a random model on a speech-like signal: its scores say nothing of the naming
    err = capsys.readouterr().err
    assert code == 0 and "2 file(s) aligned, 0 failed" in err, err
    written = outputs(out)
    assert sorted(written) == ["a.flac.json", "a.wav.json"]
    assert {Path(json.loads(text)["file"]).name for text in written.values()} == {"a.wav", "a.flac"}


def children(pid: int) -> list[int]:
    try:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def running(pid: int) -> bool:
    """A process that exists and is not a zombie (a dead child its new parent has not reaped yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads the process tree from Linux's /proc")
@pytest.mark.parametrize("command", ["transcribe", "align"])
def test_workers_end_when_their_parent_is_killed(tmp_path, command):
    corpus = tmp_path / "c"
    corpus.mkdir()
    long_recording(corpus / "x0.wav", seconds=60.0)
    for number in range(1, 6):
        shutil.copy(corpus / "x0.wav", corpus / f"x{number}.wav")
        (corpus / f"x{number}.lab").write_text(WORDS * 20)
    (corpus / "x0.lab").write_text(WORDS * 20)
    job = speechattn(command, corpus, "--output-dir", tmp_path / "out", "--model", "default-int8", "--jobs", 2,
                     wait=False, start_new_session=True)
    workers = []
    try:
        deadline = time.monotonic() + 60
        while len(children(job.pid)) < 2 and time.monotonic() < deadline and job.poll() is None:
            time.sleep(0.05)
        workers = children(job.pid)
        assert len(workers) >= 2 and job.poll() is None, (workers, job.poll())
        os.kill(job.pid, signal.SIGKILL)
        job.wait(timeout=30)
        deadline = time.monotonic() + 10
        while any(running(worker) for worker in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [worker for worker in workers if running(worker)]
    finally:  # nothing of this test left running, whatever failed
        for process in [job.pid, *workers, *children(job.pid)]:
            if running(process):
                os.kill(process, signal.SIGKILL)
        job.wait(timeout=30)
        job.stderr.close()


@pytest.mark.parametrize("given, message", [
    (["--dictionary", "bad.dict"], 'bad.dict:2: "XX" is not a phone'),
    (["--dictionary", "missing.dict"], "missing.dict: no such dictionary file"),
    (["--model", "garbage.onnx"], "garbage.onnx: cannot load as a speechattn ONNX model"),
])
def test_what_every_worker_needs_is_checked_once_before_any_starts(tmp_path, tiny_onnx, given, message):
    """A bad --dictionary or --model with --jobs: one line, exit 1, not a traceback from each worker."""
    corpus = mfa_corpus(tmp_path / "c")
    (tmp_path / "bad.dict").write_text("PLEASE P L IY Z\nBAD XX YY\n")
    (tmp_path / "garbage.onnx").write_bytes(b"not a model")
    option, name = given
    chosen = {"--model": tiny_onnx, option: tmp_path / name}
    result = speechattn("align", corpus, "--output-dir", tmp_path / "out", "--jobs", 2,
                        *[part for pair in chosen.items() for part in pair])
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert not (tmp_path / "out").exists() or not outputs(tmp_path / "out")


def test_a_recording_id_too_long_for_a_file_name_fails_alone(tmp_path, tiny_onnx, capsys):
    """One output name over the file system's 255 bytes fails that recording in one line; the others are aligned,
    one of them with a name of 249 bytes (its temporary name is cut to fit)."""
    ids = ["r0", "x" * 300, "y" * 240]
    recordings = []
    for number, recording in enumerate(ids):
        path = tmp_path / f"r{number}.wav"
        sf.write(path, speechlike_signal(1.0, seed=number), 16000, subtype="PCM_16")
        recordings.append({"id": recording, "sources": [{"type": "file", "channels": [0], "source": str(path)}],
                           "sampling_rate": 16000, "num_samples": 16000, "duration": 1.0, "channel_ids": [0]})
    with gzip.open(tmp_path / "x_recordings_dev.jsonl.gz", "wt") as f:
        f.writelines(json.dumps(r) + "\n" for r in recordings)
    with gzip.open(tmp_path / "x_supervisions_dev.jsonl.gz", "wt") as f:
        f.writelines(json.dumps({"id": r, "recording_id": r, "start": 0, "duration": 1.0, "text": WORDS}) + "\n"
                     for r in ids)
    out = tmp_path / "out"
    code = main(["align", str(tmp_path / "x_supervisions_dev.jsonl.gz"), "--output-dir", str(out), "--model",
                 str(tiny_onnx), "--force"])
    err = capsys.readouterr().err
    assert code == 1 and "File name too long" in err and "Traceback" not in err, err
    assert "2 file(s) aligned, 1 failed" in err
    assert sorted(outputs(out)) == ["r0.TextGrid", "y" * 240 + ".TextGrid"]


@pytest.mark.parametrize("command", ["transcribe", "align"])
def test_a_reader_that_stops_early_is_not_an_error(tmp_path, command):
    """`speechattn ... | head -c 1`: the reader is gone once it has what it wants (transcribe: the first file's; align:
    before its one write); exit 0, no error, no summary."""
    audio = long_recording(tmp_path / "long.wav", seconds=60.0)
    shutil.copy(audio, audio.with_name("again.wav"))
    arguments = [audio, audio.with_name("again.wav")] if command == "transcribe" else [audio, WORDS, "--force"]
    job = speechattn(command, *arguments, "--format", "json", "--model", "default-int8", wait=False,
                     stdout=subprocess.PIPE)
    if command == "transcribe":
        assert job.stdout.read(1)
    job.stdout.close()
    _, err = job.communicate(timeout=120)
    assert job.returncode == 0 and "error" not in err and "1 file" not in err, err


def as_nobody() -> list[str] | None:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return None
    return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


@pytest.mark.skipif(as_nobody() is None, reason="needs root to run the command as a user who cannot read a file "
                                                "(root reads everything), and setpriv")
@pytest.mark.parametrize("jobs", [None, 1, 2])
def test_a_file_the_user_cannot_read_fails_alone(tiny_onnx, jobs):
    folder = Path(tempfile.mkdtemp(prefix="speechattn-unreadable-"))  # world-readable, unlike pytest's tmp_path
    try:
        folder.chmod(0o777)
        model = Path(shutil.copy(tiny_onnx, folder / "tiny.onnx"))
        for name in ("a", "secret", "z"):
            sf.write(folder / f"{name}.wav", speechlike_signal(0.5), 16000)
        (folder / "secret.wav").chmod(0)
        model.chmod(0o644)
        where = ["--output-dir", folder / "out", "--jobs", jobs] if jobs else []
        result = subprocess.run([*as_nobody(), sys.executable, "-m", "speechattn", "transcribe",
                                 *[str(folder / f"{name}.wav") for name in ("a", "secret", "z")], "--model", model,
                                 *map(str, where)], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert result.returncode == 1, result.stderr
        assert f"{folder / 'secret.wav'}: cannot read (permission denied)" in result.stderr
        assert "1 of 3 file(s) could not be transcribed" in result.stderr
        if jobs:
            assert sorted(outputs(folder / "out")) == ["a.txt", "z.txt"]
        else:
            assert result.stdout.count(str(folder)) == 2
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.skipif(as_nobody() is None, reason="needs root to run the command as a user who cannot read a file "
                                                "(root reads everything), and setpriv")
def test_align_of_a_recording_the_user_cannot_read_is_an_input_that_failed_not_a_usage_error(tiny_onnx):
    folder = Path(tempfile.mkdtemp(prefix="speechattn-unreadable-"))
    try:
        folder.chmod(0o777)
        model = Path(shutil.copy(tiny_onnx, folder / "tiny.onnx"))
        model.chmod(0o644)
        sf.write(folder / "secret.wav", speechlike_signal(0.5), 16000)
        (folder / "secret.wav").chmod(0)
        result = subprocess.run([*as_nobody(), sys.executable, "-m", "speechattn", "align", str(folder / "secret.wav"),
                                 "the words", "--model", str(model)], cwd=ROOT, capture_output=True, text=True,
                                timeout=120)
        assert result.returncode == 1, result.stderr  # 1: an input failed (it was 2, click's "not readable")
        assert f"speechattn align: error: {folder / 'secret.wav'}: cannot read (permission denied)" in result.stderr
    finally:
        shutil.rmtree(folder, ignore_errors=True)
