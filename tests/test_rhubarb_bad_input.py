"""speechattn-rhubarb given bad paths, numbers and outputs: it never reads without end, never waits without end, never
overwrites what it reads, and fails as Rhubarb fails (exit status 1, its failure entry, no traceback); and its progress
events come as the model works through the audio, in Rhubarb's machine-readable format.

Each test asserts the exit status, the failure's one reason, that the files given are unchanged and nothing was left
behind, and (a timer) that nothing hung."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import soundfile as sf

from speechattn.audio import speechlike_signal
from test_bad_input_never_hang import within
from test_rhubarb import SAMPLE, events, rhubarb

FAILURE = "[Fatal] Application terminating with error: "
PROGRESS = re.compile(r'\{ "type": "progress", "value": (\d\.\d\d), "log": \{ "level": "Trace", "message": '
                      r'"Progress: (\d+)%" \} \}')  # MachineReadableStderrSink.cpp and ProgressEntry, Rhubarb 1.14.0


def command(*arguments) -> list[str]:
    return [sys.executable, "-m", "speechattn.cli.rhubarb", *map(str, arguments)]


@pytest.fixture
def files(tmp_path) -> dict[str, Path]:
    """An input recording and a dialog file in an otherwise empty folder (but for full_disk's), and what they hold."""
    (tmp_path / "in.wav").write_bytes(SAMPLE.read_bytes())
    (tmp_path / "dialog.txt").write_text("This no longer appears to be the case.\n")
    return {"in": tmp_path / "in.wav", "dialog": tmp_path / "dialog.txt"}


def unchanged(files: dict[str, Path]) -> bool:
    folder = files["in"].parent
    return (files["in"].read_bytes() == SAMPLE.read_bytes()
            and files["dialog"].read_text() == "This no longer appears to be the case.\n"
            and sorted(p.name for p in folder.iterdir() if p.name != "full") == ["dialog.txt", "in.wav"])


@pytest.fixture
def full_disk(tmp_path):
    """A folder on a file system with no space left: a 64 KiB tmpfs, filled (skipped where mounting is not allowed)."""
    folder = tmp_path / "full"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], capture_output=True,
                             text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.strip() or mounted.returncode}")
    try:
        with open(folder / "filler", "wb", buffering=0) as handle:
            try:
                while True:
                    handle.write(b"\0" * 4096)
            except OSError:  # ENOSPC: full
                pass
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


# --- the dialog file and the input: bounded, never waited on without end --------------------------------------------

@pytest.mark.parametrize("dialog, reason", [
    ("/dev/zero", "/dev/zero: a device, not a file; give the dialog as a file"),
    ("fifo", "{fifo}: a pipe, not a file; give the dialog as a file"),
])
def test_a_dialog_file_that_is_a_device_or_a_pipe_is_refused_without_reading_or_waiting(files, dialog, reason):
    fifo = files["in"].parent / "fifo"
    os.mkfifo(fifo)
    dialog = fifo if dialog == "fifo" else dialog
    with within(30):  # /dev/zero was read until the kernel killed the process at 22 GB; a FIFO waited for ever
        status, out, err = rhubarb("-q", "-d", dialog, files["in"])
    assert (status, out) == (1, "") and "Traceback" not in err
    assert err.endswith(f"Error reading file {dialog}.\n{reason.format(fifo=fifo)}\n"), err
    fifo.unlink()
    assert unchanged(files)


def test_a_dialog_file_over_the_bound_is_refused_before_it_is_read_whole(files, monkeypatch):
    from speechattn.runtime import align

    monkeypatch.setattr(align, "MAX_TEXT_BYTES", 10)
    status, _, err = rhubarb("-q", "-d", files["dialog"], files["in"])
    assert status == 1 and err.endswith(f"{files['dialog']}: more than 1e-05 MB; not a dialog\n"), err
    assert unchanged(files)


def test_an_input_fifo_is_read_as_the_file_is(files):
    fifo = files["in"].parent / "fifo"
    os.mkfifo(fifo)
    expected = rhubarb("-q", files["in"])[1]
    writer = threading.Thread(target=lambda: fifo.write_bytes(files["in"].read_bytes()))
    writer.start()
    with within(60):
        status, out, err = rhubarb("-q", fifo)
    writer.join()
    assert (status, out, err) == (0, expected, "") and expected.startswith("0.00\t")


def test_an_input_fifo_nobody_writes_to_fails_after_transcribes_wait(files, monkeypatch):
    from speechattn.runtime import transcribe

    monkeypatch.setattr(transcribe, "PIPE_WAIT_SECONDS", 0.5)
    fifo = files["in"].parent / "fifo"
    os.mkfifo(fifo)
    with within(30):  # the open of the audio waited for a writer for ever
        status, out, err = rhubarb("-q", fifo)
    assert (status, out) == (1, "") and "Traceback" not in err
    assert err.endswith(f"Could not open sound file {fifo}.\nnothing arrived in 0.5 s (a pipe no program writes to?)\n")


# --- --threads --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("threads", ["257", "1000", "2147483647"])
def test_a_thread_count_over_speechattns_bound_fails_before_the_start_in_one_line(threads):
    with within(30):
        status, out, err = rhubarb("--threads", threads, SAMPLE)
    assert (status, out, err) == (1, "", f"{FAILURE}Thread count must be 256 or lower.\n")


# --- -o and --logFile: never onto an input, never onto each other, never a name spelled as a folder ------------------

@pytest.mark.parametrize("option, names", [
    ("--logFile", "in"), ("--logFile", "dialog"), ("--logFile", "in/"), ("--logFile", "in-linked"),
    ("-o", "in"), ("-o", "dialog"), ("-o", "in/"), ("-o", "in-linked"),
])
def test_an_output_naming_an_input_is_refused_and_the_input_kept(files, option, names):
    folder = files["in"].parent
    target = {"in": str(files["in"]), "dialog": str(files["dialog"]), "in/": f"{files['in']}/",
              "in-linked": str(folder / "link.wav")}[names]
    if names == "in-linked":
        os.symlink(files["in"], folder / "link.wav")
    status, out, err = rhubarb("--machineReadable", option, target, "-d", files["dialog"], files["in"])
    (folder / "link.wav").unlink(missing_ok=True)
    failure = events(err)[-1]
    assert (status, out, failure["type"]) == (1, "", "failure")
    reason = failure["reason"].splitlines()[-1]
    source = files["in"] if names in ("in", "in-linked") else files["dialog"]
    assert reason == (f"{target}: ends as a directory does; give a file name (nothing was written)" if names == "in/"
                      else f"{option} {target} is one of the inputs ({source}): it would be overwritten; write elsewhere")
    if option == "--logFile":  # refused before the log file would be opened: the reason alone, before the start
        assert failure["reason"] == reason and [e["type"] for e in events(err)] == ["failure"]
    else:  # Rhubarb finds an output it cannot write once it has started; refused here before the work
        assert failure["reason"] == (f"Error processing file {files['in']}.\nCould not write output file {target}.\n"
                                     f"{reason}")
        assert [e["type"] for e in events(err)] == ["start", "failure"]  # no progress: no work done
    assert unchanged(files)


def test_the_log_file_and_the_output_named_alike_are_refused(files):
    folder = files["in"].parent
    status, out, err = rhubarb("-o", folder / "result.tsv", "--logFile", folder / "." / "result.tsv", files["in"])
    assert (status, out, err) == (1, "", f"{FAILURE}--logFile {folder / '.' / 'result.tsv'} is also -o "
                                         f"({folder / 'result.tsv'}): one would overwrite the other; write them apart\n")
    assert unchanged(files)


# --- full disks and a closed standard output: one line, exit status 1, no traceback ---------------------------------

def test_a_log_file_on_a_full_disk_fails_in_one_line(files, full_disk):
    done = subprocess.run(command("-q", "--logFile", full_disk / "log.txt", files["in"]), capture_output=True,
                          text=True, timeout=120)
    assert (done.returncode, done.stdout) == (1, "") and "Traceback" not in done.stderr
    assert done.stderr == (f"Rhubarb Lip Sync 1.14.0 processing file {files['in']}:\n{FAILURE}Could not write log "
                           f"file {full_disk / 'log.txt'}: No space left on device\n")
    done = subprocess.run(command("--machineReadable", "--logFile", full_disk / "log.txt", files["in"]),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert events(done.stderr)[-1]["reason"] == f"Could not write log file {full_disk / 'log.txt'}: No space left on device"
    assert unchanged(files)


def test_a_log_file_that_fills_the_disk_part_way_fails_the_run(tmp_path, files, full_disk):
    # The log passes the one page left after the progress: the dialog's path (in the command line entry, before
    # the work) and its ten long words not heard (one entry after it), 4.3 KB together.  Ten of eighteen words not
    # heard still align (score -1.17; a text of 600 words not heard is not the speech's: recognised instead).
    deep = tmp_path / ("d" * 250) / ("e" * 250) / ("f" * 250) / ("g" * 250)
    deep.mkdir(parents=True)
    long_dialog = deep / "long-dialog.txt"
    long_dialog.write_text("This no longer appears to be the case. " +
                           " ".join(["Extensionsofthecontractualobligationsnotwithstanding" * 4] * 10))
    (full_disk / "filler").write_bytes(b"\0" * 4096 * 15)  # one page of the 16 left: the start fits, the rest not
    done = subprocess.run(command("--machineReadable", "--logFile", full_disk / "log.txt", "-d", long_dialog,
                                  files["in"]), capture_output=True, text=True, timeout=120)
    found = events(done.stderr)  # every line JSON still: no traceback, no "Exception ignored" at exit
    assert (done.returncode, done.stdout, found[0]["type"], found[-1]["type"]) == (1, "", "start", "failure")
    assert found[-1]["reason"] == (f"Error processing file {files['in']}.\nCould not write log file "
                                   f"{full_disk / 'log.txt'}: No space left on device")
    assert 0 < (full_disk / "log.txt").stat().st_size <= 4096 and "progress" in [e["type"] for e in found]


def test_standard_output_closed_is_one_line_and_exit_status_1(files):
    for arguments in ([files["in"]], ["--help"], ["--version"]):
        done = subprocess.run(" ".join(command(*arguments)) + " >&-", shell=True, capture_output=True, text=True,
                              timeout=120)
        reason = ("Standard output is closed, so the result has nowhere to go; give -o FILE." if arguments[0] ==
                  files["in"] else "Could not write to standard output: standard output is closed")
        assert (done.returncode, done.stderr) == (1, f"{FAILURE}{reason}\n"), done.stderr
    done = subprocess.run(" ".join(command("-q", "-o", files["in"].parent / "x.tsv", files["in"])) + " >&-",
                          shell=True, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, "") and (files["in"].parent / "x.tsv").read_text().startswith("0.00\t")


def test_standard_output_on_a_full_disk_fails_in_one_line(files, full_disk):
    with open(full_disk / "out.tsv", "w") as stdout:
        done = subprocess.run(command("-q", files["in"]), stdout=stdout, stderr=subprocess.PIPE, text=True,
                              timeout=120)
    assert done.returncode == 1 and done.stderr == (
        f"Rhubarb Lip Sync 1.14.0 processing file {files['in']}:\n{FAILURE}Error processing file {files['in']}.\n"
        "Could not write to standard output: No space left on device\n")  # and no "Exception ignored" at exit


# --- progress as the work advances ----------------------------------------------------------------------------------

def progress_values(stderr: str) -> list[float]:
    """The progress events' values, each line checked against Rhubarb's exact format: two decimals, the whole percent."""
    values = []
    for line in stderr.splitlines():
        if '"type": "progress"' in line:
            match = PROGRESS.fullmatch(line)
            assert match, line
            value, percent = float(match.group(1)), int(match.group(2))
            assert percent - 0.5 <= value * 100 < percent + 1.5  # the value rounded, the percent truncated
            values.append(value)
    return values


def test_progress_comes_every_twentieth_as_the_model_works_through_a_long_recording(tmp_path):
    sf.write(tmp_path / "long.wav", speechlike_signal(20.0, seed=4), 16000)
    status, _, err = rhubarb("--machineReadable", tmp_path / "long.wav")
    values = progress_values(err)
    assert status == 0 and [e["type"] for e in events(err)][-1] == "success"
    assert values[0] == 0 and values[-1] == 1 and all(a < b for a, b in zip(values, values[1:]))
    assert len(values) >= 20 and max(b - a for a, b in zip(values, values[1:])) <= 0.051  # 5 s blocks: 0, .25 ... 1


def test_a_short_line_of_dialog_still_reports_about_every_tenth(files):
    for arguments in ([], ["-d", files["dialog"]]):  # recognised, and aligned to the dialog
        status, _, err = rhubarb("--machineReadable", *arguments, files["in"])  # 2.29 s: one 5 s block gave 0 and 1
        values = progress_values(err)
        assert status == 0 and len(values) >= 10 and max(b - a for a, b in zip(values, values[1:])) <= 0.12, values
