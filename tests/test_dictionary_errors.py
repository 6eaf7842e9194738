"""A malformed, missing or special --dictionary is one line (exit 1) in every command that takes one, before any
audio is read: transcribe --dialog, mic --script (before a device is opened), align of one file and of a corpus
with worker processes (checked once, not a traceback per worker)."""

from __future__ import annotations

import shutil

import pytest

from speechattn.cli import main

SAMPLE = "speechattn/runtime/samples/please-enter-your-password.wav"
WORDS = "please enter your password"


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name in ("a", "b"):
        shutil.copy(SAMPLE, folder / f"{name}.wav")
        (folder / f"{name}.lab").write_text(WORDS)
    return folder


def commands(corpus, output):
    return {
        "transcribe --dialog": ["transcribe", SAMPLE, "--dialog", WORDS],
        "mic --script": ["mic", "--script", WORDS],
        "align": ["align", SAMPLE, WORDS],
        "align corpus --jobs 2": ["align", corpus, "--output-dir", output, "--jobs", "2"],
    }


DICTIONARIES = {
    "a line without phones": ("HELLO HH AH L OW\nbroken line without phones\n", "is not a phone"),
    "an unknown phone": ("XYZZY QQ\n", '"QQ" is not a phone'),
    "nothing there": (None, "no such dictionary file"),
}


@pytest.mark.parametrize("dictionary", DICTIONARIES, ids=list(DICTIONARIES))
@pytest.mark.parametrize("command", ["transcribe --dialog", "mic --script", "align", "align corpus --jobs 2"])
def test_a_bad_dictionary_is_one_line_in_every_command_that_takes_one(capsys, tmp_path, corpus, command, dictionary):
    text, message = DICTIONARIES[dictionary]
    path = tmp_path / "mine.dict"
    if text is not None:
        path.write_text(text)
    output = tmp_path / "aligned"
    code = main([str(a) for a in commands(corpus, output)[command]] + ["--dictionary", str(path)])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 1 and len(lines) == 1 and "Traceback" not in err and "internal error" not in err, err
    assert message in lines[0] and str(path) in lines[0]
    assert not output.exists() or not any(output.iterdir())  # nothing aligned with the words it could not read
