"""An output named as a directory never writes onto the file of that name: `-o victim.wav/` once replaced a
recording with text and exited 0, because Path() drops the trailing separator.  Every option of every command
that writes one file refuses such a name in one line (exit 2), before any work, and the file is untouched."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from speechattn.cli import main

SAMPLE = "speechattn/runtime/samples/please-enter-your-password.wav"

# (command line before the output option, the option): every option that names one file to write
WRITERS = [
    (["transcribe", SAMPLE], "-o"),
    (["transcribe", SAMPLE], "--plot"),
    (["align", SAMPLE, "please enter your password"], "-o"),
    (["init"], "-o"),
    (["average", "a.pt", "b.pt"], "-o"),
    (["export", "model.pt"], "-o"),
    (["eval", "default", "data.jsonl.gz"], "--confusion"),
    (["data-stats", "manifest.jsonl.gz"], "--plot"),
    (["show-item", "supervisions.jsonl.gz", "item"], "--plot"),
    (["show-item", "supervisions.jsonl.gz", "item"], "--wav"),
    (["mic"], "--output"),
    (["mic"], "--save-audio"),
]


@pytest.mark.parametrize("spelling", ["{}/", "{}/.", "{}/.."])
@pytest.mark.parametrize("before, option", WRITERS, ids=[f"{c[0]} {o}" for c, o in WRITERS])
def test_an_output_spelled_as_a_directory_is_refused_and_the_file_of_that_name_is_untouched(
        capsys, tmp_path, before, option, spelling):
    victim = tmp_path / "victim.wav"
    shutil.copy(SAMPLE, victim)
    original = victim.read_bytes()
    code = main([*before, option, spelling.format(victim)])
    err = capsys.readouterr().err
    assert code == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert "ends as a directory does; give a file name" in lines[0]
    assert victim.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["victim.wav"]


def test_an_output_file_name_without_a_trailing_separator_is_still_written(capsys, tmp_path):
    output = tmp_path / "phones.txt"
    assert main(["transcribe", SAMPLE, "-o", str(output)]) == 0, capsys.readouterr().err
    assert output.read_text().split()  # the phones


def test_an_output_through_a_link_replaces_the_file_it_names_and_the_link_stays(capsys, tmp_path):
    target, link = tmp_path / "real.txt", tmp_path / "link.txt"
    target.write_text("before")
    link.symlink_to(target)
    assert main(["transcribe", SAMPLE, "-o", str(link)]) == 0, capsys.readouterr().err
    assert link.is_symlink() and link.resolve() == target
    assert target.read_text().split()[0].endswith(".wav:")


def test_an_output_naming_a_device_is_written_in_place_and_the_device_stays(capsys, tmp_path):
    """`-o /dev/stdout` once meant a temporary file in /dev renamed onto the link /dev/stdout (as root): the output
    is written to the device itself, through any link, and neither the device nor the link is replaced."""
    import os
    import stat

    link = tmp_path / "to-null"
    link.symlink_to("/dev/null")
    assert main(["transcribe", SAMPLE, "-o", str(link)]) == 0, capsys.readouterr().err
    assert link.is_symlink() and os.readlink(link) == "/dev/null" and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["to-null"]  # no temporary file left beside it


def test_an_output_naming_a_fifo_is_written_into_it_and_it_stays_a_fifo(capsys, tmp_path):
    import os
    import stat
    import threading

    fifo = tmp_path / "phones.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()), daemon=True)
    reader.start()
    assert main(["transcribe", SAMPLE, "-o", str(fifo)]) == 0, capsys.readouterr().err
    reader.join(timeout=30)
    capsys.readouterr()
    assert main(["transcribe", SAMPLE]) == 0
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and received and received[0] == capsys.readouterr().out


@pytest.mark.parametrize("before, option", WRITERS, ids=[f"{c[0]} {o}" for c, o in WRITERS])
def test_an_output_in_a_folder_that_does_not_exist_is_one_line_before_any_work(capsys, tmp_path, before, option):
    """`align -o missing/x.TextGrid` was an internal error after the work, `transcribe -o` one after it."""
    name = "out.png" if option in ("--plot", "--confusion") else "out.file"  # pictures are checked for .png first
    code = main([*before, option, str(tmp_path / "missing" / name)])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err and "internal error" not in err, err
    assert f"the directory {tmp_path / 'missing'} does not exist" in lines[0]


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root to run the command as another user (root reads and writes everything)")
def test_an_output_the_user_may_write_but_not_read_is_written(tiny_onnx):
    """An output is written, never read: `-o /dev/stdout` (a pipe another user made) or a write-only file must not
    be refused as 'not readable'."""
    import subprocess
    import sys
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="speechattn-write-only-"))  # world-readable, unlike pytest's tmp_path
    try:
        folder.chmod(0o777)
        model = Path(shutil.copy(tiny_onnx, folder / "tiny.onnx"))
        model.chmod(0o644)
        audio = Path(shutil.copy(SAMPLE, folder / "a.wav"))
        audio.chmod(0o644)
        output = folder / "phones.txt"
        output.write_text("")
        os.chown(output, 65534, -1)  # nobody's, writable by nobody only
        output.chmod(0o200)
        result = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", sys.executable, "-m",
                                 "speechattn", "transcribe", str(audio), "--model", str(model), "-o", str(output)],
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        output.chmod(0o644)
        assert output.read_text().startswith(f"{audio}:")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("name, starts", [("p.json", '{"format_version": 2'), ("p.TextGrid", 'File type = "ooTextFile"'),
                                          ("p.textgrid", 'File type = "ooTextFile"'), ("p.tsv", "0.00\t"),
                                          ("p.visemes.json", '{"format_version": 1'), ("p.ctm", "please-enter"),
                                          ("p.txt", str(SAMPLE)), ("p.out", str(SAMPLE))])
def test_an_output_file_without_format_is_written_in_the_format_its_extension_names(capsys, tmp_path, name, starts):
    """-o phones.json wrote plain text whatever the name; now the name's extension chooses, and --format wins."""
    assert main(["transcribe", str(SAMPLE), "-o", str(tmp_path / name), "-q"]) == 0, capsys.readouterr().err
    assert (tmp_path / name).read_text().startswith(starts)
    assert main(["transcribe", str(SAMPLE), "-o", str(tmp_path / name), "-q", "--format", "text"]) == 0
    assert (tmp_path / name).read_text().startswith(str(SAMPLE))


@pytest.mark.parametrize("name, starts", [("a.json", '{"format_version": 1'), ("a.TextGrid", 'File type = "ooTextFile"'),
                                          ("a.ctm", "please-enter"), ("a.txt", SAMPLE + ":\n")])
def test_an_alignment_file_without_format_is_written_in_the_format_its_extension_names(capsys, tmp_path, name, starts):
    assert main(["align", str(SAMPLE), "please enter your password followed by the pound key", "-o",
                 str(tmp_path / name), "-q"]) == 0, capsys.readouterr().err
    assert (tmp_path / name).read_text().startswith(starts)
