"""No command writes onto one of its inputs (resolved paths and hard links alike), and output that cannot be
written (standard output closed or full) is a failure reported in one line, never exit 0 with nothing written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from speechattn.cli import main

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "speechattn" / "runtime" / "samples" / "please-enter-your-password.wav"


def run_cli(*args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "speechattn", *map(str, args)], capture_output=True, text=True,
                          timeout=120, **kwargs)


def test_export_never_writes_onto_its_checkpoint_or_its_verify_audio(tmp_path, tiny_model, capsys):
    from speechattn.model.encoder import save_checkpoint

    checkpoint = tmp_path / "v.pt"
    save_checkpoint(tiny_model, checkpoint, seed=0, trained=False)
    audio = tmp_path / "speech.wav"
    audio.write_bytes(SAMPLE.read_bytes())
    os.link(checkpoint, tmp_path / "linked.onnx")
    before = checkpoint.read_bytes(), audio.read_bytes()
    for output, extra in ((checkpoint, []), (tmp_path / "linked.onnx", []), (audio, ["--verify-audio", audio])):
        assert main(["export", str(checkpoint), "-o", str(output), *map(str, extra)]) == 2
        assert "is one of the inputs" in capsys.readouterr().err
    assert (checkpoint.read_bytes(), audio.read_bytes()) == before


def test_export_refuses_verify_audio_too_short_to_verify_or_missing_before_loading_the_checkpoint(tmp_path,
                                                                                                 tiny_model, capsys):
    """A 1-sample recording failed inside the verification (an internal error), 200 samples 'verified' 2 frames."""
    import numpy as np
    import soundfile as sf

    from speechattn.model.encoder import save_checkpoint

    checkpoint = tmp_path / "v.pt"
    save_checkpoint(tiny_model, checkpoint, seed=0, trained=False)
    for samples in (1, 200, 15_999):
        sf.write(tmp_path / "short.wav", np.full(samples, 0.1, dtype=np.float32), 16000)
        assert main(["export", str(checkpoint), "-o", str(tmp_path / "x.onnx"), "--verify-audio",
                     str(tmp_path / "short.wav")]) == 2
        err = capsys.readouterr().err
        assert "s of audio; verifying takes at least 1 s" in err and "internal error" not in err, err
    assert main(["export", str(tmp_path / "not-there.pt"), "-o", str(tmp_path / "x.onnx"), "--verify-audio",
                 str(tmp_path / "missing.wav")]) != 0
    err = capsys.readouterr().err
    assert "missing.wav" in err and "not-there.pt" not in err, err  # the recording is checked first
    assert not (tmp_path / "x.onnx").exists()


def test_mic_refuses_one_file_for_two_outputs_and_an_unknown_audio_format(tmp_path, capsys):
    assert main(["mic", "--output", str(tmp_path / "x.wav"), "--save-audio", str(tmp_path / "x.wav")]) == 2
    assert "--output and --save-audio name the same file" in capsys.readouterr().err
    assert main(["mic", "--save-audio", str(tmp_path / "heard.mp3")]) == 2
    assert "give a .wav or .flac file name" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_closed_or_full_standard_output_is_a_failure_and_a_reader_that_stops_early_is_not():
    closed = run_cli("transcribe", SAMPLE, stdout=None, pass_fds=(), preexec_fn=lambda: os.close(1))
    assert closed.returncode == 1 and "cannot write standard output (standard output is closed)" in closed.stderr
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "speechattn", "transcribe", str(SAMPLE)], stdout=full,
                                stderr=subprocess.PIPE, text=True, timeout=120)
    assert result.returncode == 1 and "cannot write standard output (No space left on device)" in result.stderr
    piped = subprocess.run(f"{sys.executable} -m speechattn transcribe --format json {SAMPLE} | head -c 5",
                           shell=True, capture_output=True, text=True, timeout=120)
    assert piped.stdout == '{"for' and "Traceback" not in piped.stderr


@pytest.mark.parametrize("host", ["", "  "])
def test_web_refuses_an_empty_host_instead_of_listening_everywhere(host, capsys):
    assert main(["web", "--host", host, "--port", "0"]) == 2
    assert "--host is empty" in capsys.readouterr().err
