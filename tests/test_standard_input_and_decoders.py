"""What standard input takes is what the help says it takes, and a codec library's own warnings (libmpg123 on a
damaged MP3) are said in our one line instead of being printed among our lines."""

from __future__ import annotations

import subprocess
import sys

import pytest
import soundfile as sf

from speechattn.audio import speechlike_signal
from speechattn.cli import main

# every format the help names for standard input, as soundfile writes it: (suffix, format, subtype)
PIPED = [("wav", "WAV", "PCM_16"), ("flac", "FLAC", "PCM_16"), ("opus", "OGG", "OPUS"), ("ogg", "OGG", "VORBIS"),
         ("mp3", "MP3", "MPEG_LAYER_III"), ("aiff", "AIFF", "PCM_16"), ("au", "AU", "PCM_16"), ("caf", "CAF", "PCM_16"),
         ("w64", "W64", "PCM_16"), ("nist", "NIST", "PCM_16")]
NAMES = {"wav": "WAV", "flac": "FLAC", "opus": "Opus", "ogg": "Vorbis", "mp3": "MP3", "aiff": "AIFF", "au": "AU",
         "caf": "CAF", "w64": "W64", "nist": "NIST"}


def cli(*args, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "speechattn.cli", *map(str, args)], input=stdin,
                          capture_output=True, timeout=120)


@pytest.mark.parametrize("suffix, kind, subtype", PIPED, ids=[p[0] for p in PIPED])
def test_every_format_the_help_names_for_standard_input_is_transcribed_from_a_pipe(capsys, tmp_path, tiny_onnx,
                                                                                   suffix, kind, subtype):
    main(["transcribe", "--help"])
    assert NAMES[suffix] in " ".join(capsys.readouterr().out.split())  # named in the help
    path = tmp_path / f"a.{suffix}"
    sf.write(path, speechlike_signal(2.0, seed=3), 16000, format=kind, subtype=subtype)
    piped = cli("transcribe", "-", "--model", tiny_onnx, "--format", "json", stdin=path.read_bytes())
    assert piped.returncode == 0, piped.stderr.decode()
    from_file = cli("transcribe", path, "--model", tiny_onnx, "--format", "json")
    import json

    assert json.loads(piped.stdout)["segments"] == json.loads(from_file.stdout)["segments"]


@pytest.fixture
def truncated_mp3(tmp_path):
    whole = tmp_path / "whole.mp3"
    sf.write(whole, speechlike_signal(3.0, seed=1), 16000, format="MP3")
    cut = tmp_path / "cut.mp3"
    cut.write_bytes(whole.read_bytes()[:3000])  # its Xing header announces more than is there
    return cut


@pytest.mark.parametrize("words", [[], ["please enter", "--force"]], ids=["transcribe", "align"])
def test_a_truncated_mp3_is_decoded_with_the_decoders_warning_in_our_one_line(truncated_mp3, tiny_onnx, words):
    result = cli("align" if words else "transcribe", truncated_mp3, *words, "--model", tiny_onnx)
    err = result.stderr.decode()
    assert result.returncode == 0, err
    assert "Traceback" not in err
    mentions = [line for line in err.splitlines() if "Xing" in line]
    assert len(mentions) == 1 and mentions[0].startswith(f"{truncated_mp3}: the decoder reports a damaged stream ("), err
