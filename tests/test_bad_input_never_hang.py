"""Bad input never hangs and never exhausts memory: devices, FIFOs and pipes given as any path; standard input of any
length; numbers far out of range.  Each test asserts the exit status, the one line, that nothing was written or
left behind, and (a timer or a subprocess timeout) that nothing hung."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from speechattn.audio import speechlike_signal
from speechattn.cli import main

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "speechattn" / "runtime" / "samples" / "please-enter-your-password.wav"


class Hung(BaseException):
    """Raised by `within` in a command that did not return in time (a BaseException: main() must not catch it)."""


@contextmanager
def within(seconds: float):
    """Fails the test with Hung if the block takes longer than `seconds` (a blocking open or read is interrupted)."""
    def expire(signum, frame):
        raise Hung(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def refused(capsys, *args, status: int = 1, seconds: float = 30) -> str:
    with within(seconds):
        code = main([str(a) for a in args])
    err = capsys.readouterr().err
    lines = [line for line in err.strip().splitlines() if line]
    assert code == status and len(lines) == 1 and "Traceback" not in err, (code, err)
    return lines[0]


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


def mic_available() -> bool:
    try:
        import sounddevice  # noqa: F401
    except OSError:
        return False
    return True


@pytest.mark.parametrize("case", ["model fifo", "model device", "recipe fifo", "recipe device", "dialog fifo",
                                  "dictionary device", "dictionary fifo", "script fifo", "checkpoint fifo",
                                  "audio to read whole fifo", "manifest fifo", "audio device"])
def test_devices_and_fifos_given_as_paths_are_refused_in_one_line(capsys, tmp_path, tiny_onnx, fifo, case):
    if case == "script fifo" and not mic_available():
        pytest.skip("PortAudio is not installed")
    (tmp_path / "m.pt").write_bytes(b"")
    manifest = tmp_path / "x_supervisions_dev.jsonl.gz"
    os.mkfifo(manifest)
    os.mkfifo(tmp_path / "x_recordings_dev.jsonl.gz")
    args, expected, status = {
        "model fifo": (["transcribe", SAMPLE, "--model", fifo], f"{fifo}: a pipe, not a file; give the model", 1),
        "model device": (["transcribe", SAMPLE, "--model", "/dev/zero"], "/dev/zero: a device, not a file", 1),
        "recipe fifo": (["train", fifo, "--out", tmp_path / "run"], f"{fifo}: a pipe, not a file; give the recipe", 2),
        "recipe device": (["prepare", "/dev/zero"], "/dev/zero: a device, not a file; give the recipe", 2),
        "dialog fifo": (["transcribe", SAMPLE, "--model", tiny_onnx, "--dialog", fifo],
                        f"{fifo}: a pipe, not a file; give the dialog", 1),
        "dictionary device": (["transcribe", SAMPLE, "--model", tiny_onnx, "--dialog", "please enter",
                               "--dictionary", "/dev/zero"], "/dev/zero: a device, not a file; give the dictionary", 1),
        "dictionary fifo": (["transcribe", SAMPLE, "--model", tiny_onnx, "--dialog", "please enter",
                             "--dictionary", fifo], f"{fifo}: a pipe, not a file; give the dictionary", 1),
        "script fifo": (["mic", "--model", tiny_onnx, "--script", fifo], f"{fifo}: a pipe, not a file; give the script", 1),
        "checkpoint fifo": (["export", fifo, "-o", tmp_path / "m.onnx"], f"{fifo}: a pipe, not a file; give the checkpoint", 1),
        "audio to read whole fifo": (["stream-check", tiny_onnx, fifo], f"{fifo}: a pipe, not a file; give the audio", 1),
        "manifest fifo": (["eval", tiny_onnx, manifest], f"{manifest}: a pipe, not a file; give the manifest", 1),
        "audio device": (["transcribe", "/dev/zero", "--model", tiny_onnx, "-q"], "/dev/zero: a device, not an audio file",
                         1),
    }[case]
    with within(30):
        code = main([str(a) for a in args])
    err = capsys.readouterr().err
    assert code == status and expected in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert fifo.is_fifo() and sorted(p.name for p in tmp_path.iterdir()) == [
        "fifo", "m.pt", "x_recordings_dev.jsonl.gz", "x_supervisions_dev.jsonl.gz"]  # nothing written


def test_a_fifo_carrying_flac_is_transcribed_as_the_file_is(capsys, tmp_path, tiny_onnx, fifo):
    """soundfile cannot read FLAC from a pipe: the FIFO is spooled to a file in blocks and read as one."""
    sf.write(tmp_path / "a.flac", speechlike_signal(2.0, seed=1), 16000)
    assert main(["transcribe", str(tmp_path / "a.flac"), "--model", str(tiny_onnx), "--format", "json", "-q"]) == 0
    expected = json.loads(capsys.readouterr().out)["segments"]
    writer = threading.Thread(target=lambda: fifo.write_bytes((tmp_path / "a.flac").read_bytes()))
    writer.start()
    with within(60):
        code = main(["transcribe", str(fifo), "--model", str(tiny_onnx), "--format", "json", "-q"])
    writer.join()
    assert code == 0 and json.loads(capsys.readouterr().out)["segments"] == expected


def test_a_pipe_longer_than_the_bound_is_refused_and_leaves_no_temporary_file(capsys, tmp_path, tiny_onnx, fifo,
                                                                              monkeypatch):
    import tempfile

    from speechattn.runtime import transcribe

    monkeypatch.setattr(transcribe, "MAX_PIPED_BYTES", 1 << 20)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    sf.write(tmp_path / "long.wav", speechlike_signal(40.0, seed=2), 16000)  # 1.2 MB

    def write():
        try:
            fifo.write_bytes((tmp_path / "long.wav").read_bytes())
        except BrokenPipeError:  # the reader gave up, as it should
            pass

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    with within(30):
        code = main(["transcribe", str(fifo), "--model", str(tiny_onnx), "-q"])
    err = capsys.readouterr().err
    assert code == 1 and f"{fifo}: more than 1,048,576 bytes arrived from the pipe; give a file" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "long.wav"]


def test_what_does_not_start_as_audio_on_standard_input_is_refused_before_it_is_copied(tmp_path, tiny_onnx):
    result = subprocess.run(f"cat /dev/zero | {sys.executable} -m speechattn transcribe - -q --model {tiny_onnx}",
                            shell=True, capture_output=True, text=True, timeout=60, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert result.returncode == 1 and result.stdout == ""
    assert "-: what arrives does not start as audio (it starts with b'\\x00\\x00\\x00\\x00'); pipe WAV, FLAC, Ogg" \
        in result.stderr and "Traceback" not in result.stderr
    assert not list(tmp_path.glob("speechattn-pipe-*"))  # no spooled copy left behind (onnxruntime leaves its .ses)


def test_nothing_on_standard_input_is_said_as_an_empty_file_is(tmp_path, tiny_onnx):
    result = subprocess.run([sys.executable, "-m", "speechattn", "transcribe", "-", "-q", "--model", str(tiny_onnx)],
                            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                            env={**os.environ, "TMPDIR": str(tmp_path)})
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.strip() == "speechattn transcribe: error: -: nothing arrived (0 bytes), not audio", result.stderr
    assert not list(tmp_path.glob("speechattn-pipe-*"))


def test_standard_input_is_streamed_in_the_memory_a_file_takes(tmp_path, tiny_onnx):
    """Five minutes through standard input take no more memory than by path (held whole, the pipe added twice its
    9.6 MB: the bytes and their BytesIO copy; a 10-hour stdin took 1.2 GB against 95 MB by path)."""
    sf.write(tmp_path / "five.wav", np.tile(speechlike_signal(30.0, seed=3), 10), 16000, subtype="PCM_16")
    command = f"{sys.executable} -m speechattn transcribe -q --model {tiny_onnx}"
    peaks = {"path": peak_kib(f"{command} {tmp_path / 'five.wav'}", tmp_path),
             "pipe": peak_kib(f"cat {tmp_path / 'five.wav'} | {command} -", tmp_path)}  # KiB
    assert peaks["pipe"] < peaks["path"] + 4096, peaks  # within 4 MiB, the file being 9.6 MB
    assert not list(tmp_path.glob("speechattn-pipe-*"))


def peak_kib(command: str, tmp_path: Path) -> int:
    """The largest resident set (KiB) of the processes `command` (a shell line) starts."""
    measure = ("import resource, subprocess, sys; subprocess.run(sys.argv[1], shell=True, check=True, "
               "stdout=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    result = subprocess.run([sys.executable, "-c", measure, command], capture_output=True, text=True, timeout=300,
                            env={**os.environ, "TMPDIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    return int(result.stdout.strip())


def test_visemes_json_takes_the_memory_json_takes(tmp_path, tiny_onnx, capsys):
    """The weights go to an unnamed temporary file as they come and are written out in pieces: five minutes of
    oculus weights add under 10 MB (as Python lists they took 453 MB an hour, 38 MB for five minutes); the text is
    json.dumps's, character for character."""
    sf.write(tmp_path / "five.wav", np.tile(speechlike_signal(30.0, seed=3), 10), 16000, subtype="PCM_16")
    command = f"{sys.executable} -m speechattn transcribe -q --model {tiny_onnx} {tmp_path / 'five.wav'} --format"
    peaks = {fmt: peak_kib(f"{command} {fmt}", tmp_path) for fmt in ("json", "visemes-json --visemes oculus")}
    assert peaks["visemes-json --visemes oculus"] < peaks["json"] + 10 * 1024, peaks
    from speechattn.runtime.transcribe import as_visemes_json, transcribe_file
    from speechattn_export.pipeline import DecodingOptions
    from speechattn_export.stream_client import StreamingModel

    sf.write(tmp_path / "short.wav", speechlike_signal(3.0, seed=4), 16000)
    t = transcribe_file(StreamingModel(tiny_onnx), tmp_path / "short.wav", DecodingOptions(visemes="oculus"))
    document = json.loads(as_visemes_json(t))
    assert as_visemes_json(t) == json.dumps({**document, "weights": [[round(float(w), 3) for w in row]
                                                                    for row in np.asarray(t.weights)]})
    assert len(document["weights"]) == 300


@pytest.mark.parametrize("setting, message", [
    ("model.left_context_frames=1000000000", "at most 4096 frames (41 s) each"),
    ("model.chunk_frames_choices=[1000000000]", "default_chunk_frames 8 is not in (1000000000,)"),
    ("model.conv_kernel=1000000000", "conv_kernel must be 0 (no convolution module) or from 2 to 256"),
    ("train.loader_workers=-1", "train.loader_workers must be from 0 to 64, not -1"),
    ("train.loader_workers=100000", "train.loader_workers must be from 0 to 64, not 100,000"),
    ("train.seed=100000000000000000000000", "train.seed must be from 0 to 4,294,967,295"),
    ("model.num_classes=0", "num_classes must be from 1 to 40 (the phone inventory), not 0"),
    ("model.num_classes=100000", "num_classes must be from 1 to 40 (the phone inventory), not 100000"),
    ("train.normalization_items=-5", "train.normalization_items must be from 1 to 100,000, not -5"),
    ("train.batch_size=1000000000", "train.batch_size must be from 1 to 4,096"),
    ("model.frontend.num_mel_bins=100000", "frontend.num_mel_bins must be from 1 to 256"),
    ("augment.freq_masks=1000000000", "augment.freq_masks must be from 0 to 20, not 1,000,000,000"),
    ("augment.time_mask_frames=-1", "augment.time_mask_frames must be from 0 to 1,000, not -1"),
    ("augment.speed_factors=[1000000000]", "augment.speed_factors must list factors from 0.5 to 2"),
    ("augment.rt60_seconds=[0,100000]", "augment.rt60_seconds must lie from 0.01 to 10"),
    ("synth.hours=1e9", "synth.hours must be above 0 and at most 10,000"),
    ("synth.workers=100000", "synth.workers must be from 1 to 256, not 100,000"),
    ("synth.words_per_utterance=[0,1000000]", "synth.words_per_utterance must lie from 0 to 200"),
    ("synth.comma_share=5", "synth.comma_share is a share, from 0 to 1, not 5"),
    ("synth.seed=-1", "synth.seed must be from 0 to 4,294,967,295, not -1"),
    ("data.seed=100000000000000000000000", "data.seed must be from 0 to 4,294,967,295"),
])
def test_every_recipe_number_has_a_range_checked_before_any_work(capsys, tmp_path, setting, message):
    line = refused(capsys, "train", "tiny", "--out", tmp_path / "run", "--set", setting, status=2)
    assert message in line and list(tmp_path.iterdir()) == []  # no run directory left behind


@pytest.mark.parametrize("args, message", [
    (["init", "-o", "{tmp}/m.pt", "--seed", "100000000000000000000000"], "is not in the range 0<=x<=4294967295"),
    (["init", "-o", "{tmp}/m.pt", "--set", "left_context_frames=5000"], "at most 4096 frames"),
    (["transcribe", str(SAMPLE), "--min-frames", "1000000000"], "min_frames must be a whole number from 1 to 100, not 1000000000"),
])
def test_numeric_options_out_of_range_are_refused_before_any_work(capsys, tmp_path, args, message):
    line = refused(capsys, *[a.format(tmp=tmp_path) for a in args], status=2)
    assert message in line and list(tmp_path.iterdir()) == []


def wav_with_rate(path: Path, rate: int) -> Path:
    sf.write(path, np.zeros(16000, np.float32), 16000, subtype="PCM_16")
    header = bytearray(path.read_bytes())
    header[24:28] = rate.to_bytes(4, "little")  # the fmt chunk's sample rate
    header[28:32] = (2 * rate & 0xFFFFFFFF).to_bytes(4, "little")  # and its byte rate
    path.write_bytes(bytes(header))
    return path


@pytest.mark.parametrize("rate", [1, 4_294_967_295])
def test_a_sample_rate_no_recording_has_is_refused_naming_the_file(capsys, tmp_path, tiny_onnx, rate):
    """A 1 Hz header made every sample 16,000 (a second of samples became 4.4 hours of work)."""
    wav = wav_with_rate(tmp_path / "r.wav", rate)
    before = wav.read_bytes()
    with within(30):
        code = main(["transcribe", str(wav), "--model", str(tiny_onnx), "-o", str(tmp_path / "r.txt")])
    err = capsys.readouterr().err
    assert code == 1 and f"r.wav: the file says its sample rate is {rate:,} Hz; speechattn reads 1,000 to 768,000 Hz" \
        in err and "Traceback" not in err, err
    assert wav.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["r.wav"]
