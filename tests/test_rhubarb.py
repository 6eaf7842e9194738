"""speechattn-rhubarb: Rhubarb Lip Sync 1.14's command line, files and stderr, as its integrations read them; the
rhubarb-dat format and the shape-set options of `speechattn transcribe`; the kit's shape reduction.

The expected texts come from Rhubarb's README (its documented TSV/XML/JSON examples and machine-readable events) and
sources (main.cpp, the exporters, the stderr sinks, TCLAP's messages); the integrations' reading is mirrored from
extras/AdobeAfterEffects/Rhubarb Lip Sync.jsx (generateMouthCues, the --version check), extras/EsotericSoftwareSpine
RhubarbTask.kt (stderr line by line) and the Blender add-on's op_blender_rhubarb.py (stdout's JSON)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from speechattn.cli import main as speechattn_main
from speechattn.cli.rhubarb import ARGS, main
from speechattn_export.visemes import Cue, limit_cues, rhubarb_shapes

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "speechattn" / "runtime" / "samples"
SAMPLE = SAMPLES / "this-no-longer-appears-to-be-the-case.wav"  # 16 kHz, 2.29 s
SAMPLE_8K = SAMPLES / "please-enter-your-password.wav"  # 8 kHz, 3.28 s

# Rhubarb's README, "Output formats": its result for a recording of someone saying "Hi".
README_TSV = "0.00\tX\n0.05\tD\n0.27\tC\n0.31\tB\n0.43\tX\n0.47\tX\n"
README_XML = """<?xml version="1.0" encoding="utf-8"?>
<rhubarbResult>
  <metadata>
    <soundFile>C:\\Users\\Daniel\\Desktop\\av\\hi\\hi.wav</soundFile>
    <duration>0.47</duration>
  </metadata>
  <mouthCues>
    <mouthCue start="0.00" end="0.05">X</mouthCue>
    <mouthCue start="0.05" end="0.27">D</mouthCue>
    <mouthCue start="0.27" end="0.31">C</mouthCue>
    <mouthCue start="0.31" end="0.43">B</mouthCue>
    <mouthCue start="0.43" end="0.47">X</mouthCue>
  </mouthCues>
</rhubarbResult>
"""
README_JSON = """{
  "metadata": {
    "soundFile": "C:\\\\Users\\\\Daniel\\\\Desktop\\\\av\\\\hi\\\\hi.wav",
    "duration": 0.47
  },
  "mouthCues": [
    { "start": 0.00, "end": 0.05, "value": "X" },
    { "start": 0.05, "end": 0.27, "value": "D" },
    { "start": 0.27, "end": 0.31, "value": "C" },
    { "start": 0.31, "end": 0.43, "value": "B" },
    { "start": 0.43, "end": 0.47, "value": "X" }
  ]
}
"""
# Its "Machine-readable status messages": a failed run's last event.  (The README quotes the file name; 1.14 writes
# it bare: main.cpp and semanticEntries.cpp format path.u8string().)
README_FAILURE = ('{ "type": "failure", "reason": "Error processing file \\"no-such-file.wav\\".\\nCould not open sound '
                  'file \\"no-such-file.wav\\".\\nNo such file or directory", "log": { "level": "Fatal", "message": '
                  '"Application terminating with error: Error processing file \\"no-such-file.wav\\".\\nCould not open '
                  'sound file \\"no-such-file.wav\\".\\nNo such file or directory" } }')
SHAPES = set("ABCDEFGHX")
TWO_DECIMALS = r"\d+\.\d\d"


def layout(text: str) -> list[str]:
    """A Rhubarb file with its numbers, shape letters and sound file blanked, and a run of equal lines kept once: what
    every recording's file shares with the README's."""
    text = re.sub(r"(<soundFile>).*(</soundFile>)|(\"soundFile\": )\".*\"", r"\1\3PATH\2", text)
    text = re.sub(TWO_DECIMALS, "N", text)
    text = re.sub(r"(\t|>|\"value\": \")[A-HX](\n|<|\")", r"\1S\2", text)
    lines = text.split("\n")
    return [line for i, line in enumerate(lines) if i == 0 or line != lines[i - 1]]


def rhubarb(*arguments, cwd=None) -> tuple[int, str, str]:
    """speechattn-rhubarb in this process: (exit status, stdout, stderr)."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    previous = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main([str(a) for a in arguments], prog="rhubarb")
    finally:
        os.chdir(previous)
    return status, out.getvalue(), err.getvalue()


def tsv_cues(text: str) -> list[tuple[float, str]]:
    return [(float(start), shape) for start, shape in (line.split("\t") for line in text.splitlines())]


@pytest.fixture(scope="module")
def full_run() -> dict[str, str]:
    """The sample in each format, all shapes: {format: stdout}."""
    outputs = {}
    for export_format in ("tsv", "json", "xml", "dat"):
        status, out, _ = rhubarb("-q", "-f", export_format, SAMPLE_8K)
        assert status == 0
        outputs[export_format] = out
    return outputs


# --- the files -----------------------------------------------------------------------------------------------------

def test_the_layout_check_holds_for_rhubarbs_own_examples():
    assert layout(README_TSV) == ["N\tS", ""]  # lines of "start<TAB>shape" (the end line too), the last newline
    assert layout(README_JSON)[:3] == ["{", '  "metadata": {', '    "soundFile": PATH,']


@pytest.mark.parametrize("export_format, example", [("tsv", README_TSV), ("json", README_JSON), ("xml", README_XML)])
def test_each_file_is_laid_out_as_rhubarbs_readme_example(full_run, export_format, example):
    assert layout(full_run[export_format]) == layout(example)


def test_tsv_starts_at_zero_changes_shape_on_each_line_and_ends_with_the_truncated_length_and_x(full_run):
    cues = tsv_cues(full_run["tsv"])
    assert all(re.fullmatch(rf"{TWO_DECIMALS}\t[A-HX]", line) for line in full_run["tsv"].splitlines())
    assert cues[0][0] == 0.0 and [start for start, _ in cues] == sorted(start for start, _ in cues)
    assert all(a[1] != b[1] for a, b in zip(cues[:-2], cues[1:-1]))  # one cue per shape change (a joined timeline)
    assert cues[-1] == (3.28, "X")  # 3.285 s truncated to 10 ms
    assert len({shape for _, shape in cues}) >= 5


def test_json_and_xml_carry_the_absolute_sound_file_the_duration_and_tiling_cues(full_run):
    from xml.etree import ElementTree

    data = json.loads(full_run["json"])
    assert data["metadata"] == {"soundFile": str(SAMPLE_8K.resolve()), "duration": 3.28}
    cues = data["mouthCues"]
    assert cues[0]["start"] == 0 and cues[-1]["end"] == 3.28 and all(a["end"] == b["start"] for a, b in zip(cues, cues[1:]))
    root = ElementTree.fromstring(full_run["xml"])
    assert root.find("metadata/soundFile").text == str(SAMPLE_8K.resolve())
    assert [(float(c.get("start")), float(c.get("end")), c.text) for c in root.find("mouthCues")] == \
        [(c["start"], c["end"], c["value"]) for c in cues]
    assert [(c["start"], c["value"]) for c in cues] == tsv_cues(full_run["tsv"])[:-1]


def test_a_relative_input_is_named_absolute_in_the_file_and_as_given_in_the_events(tmp_path):
    shutil.copy(SAMPLE, tmp_path / "line.wav")
    status, out, err = rhubarb("--machineReadable", "-f", "json", "line.wav", cwd=tmp_path)
    assert status == 0
    assert json.loads(out)["metadata"]["soundFile"] == os.path.join(str(tmp_path), "line.wav")
    assert json.loads(err.splitlines()[0])["file"] == "line.wav"


def moho_switch(text: str) -> list[tuple[int, str]]:
    """A .dat as Moho and OpenToonz read it: the MohoSwitch1 line, then "frame shape" pairs, frames from 1, rising."""
    lines = text.splitlines()
    assert lines[0] == "MohoSwitch1" and text.endswith("\n")
    rows = [(int(frame), name) for frame, name in (line.split(" ") for line in lines[1:])]
    assert rows[0][0] == 1 and all(a[0] < b[0] for a, b in zip(rows, rows[1:]))
    return rows


def expected_dat(tsv: str, frame_rate: float) -> list[tuple[int, str]]:
    """DatExporter.cpp applied to a TSV: a cue on the frame of the last one written is left out; the end a frame
    later where its frame is taken."""
    *cues, (end, closed) = tsv_cues(tsv)
    rows: list[tuple[int, str]] = []
    for start, shape in cues:
        frame = 1 + int(frame_rate * start)
        if frame != (rows[-1][0] if rows else 0):
            rows.append((frame, shape))
    last = 1 + int(frame_rate * end)
    return rows + [(last + 1 if last == rows[-1][0] else last, closed)]


@pytest.mark.parametrize("frame_rate", [24, 30, 100])
def test_dat_holds_the_cues_on_frames_of_the_frame_rate(full_run, frame_rate):
    status, out, _ = rhubarb("-q", "-f", "dat", "--datFrameRate", frame_rate, SAMPLE_8K)
    assert status == 0
    assert moho_switch(out) == expected_dat(full_run["tsv"], frame_rate)
    if frame_rate == 24:
        assert out == full_run["dat"]


def test_dat_with_preston_blair_names_renames_the_same_frames(full_run):
    blair = {"A": "MBP", "B": "etc", "C": "E", "D": "AI", "E": "O", "F": "U", "G": "FV", "H": "L", "X": "rest"}
    status, out, _ = rhubarb("-q", "-f", "dat", "--datUsePrestonBlair", SAMPLE_8K)
    assert status == 0
    assert moho_switch(out) == [(frame, blair[shape]) for frame, shape in moho_switch(full_run["dat"])]


def test_the_frame_rate_is_checked_for_dat_only(full_run):
    status, _, err = rhubarb("-f", "dat", "--datFrameRate", "23.9", SAMPLE)
    assert (status, err) == (1, "[Fatal] Application terminating with error: Frame rate must be between 24 and 100 fps.\n")
    assert rhubarb("-q", "--datFrameRate", "10", SAMPLE_8K)[:2] == (0, full_run["tsv"])


# --- shapes ------------------------------------------------------------------------------------------------------------

def test_the_kit_reduces_shapes_as_rhubarb_does_and_joins_what_became_equal():
    assert rhubarb_shapes("") == frozenset("ABCDEF") and rhubarb_shapes("xg") == frozenset("ABCDEFGX")
    with pytest.raises(ValueError, match="^Z is not a valid Shape value.$"):
        rhubarb_shapes("GZ")
    cues = [Cue(0, 5, "X"), Cue(5, 9, "A"), Cue(9, 20, "G"), Cue(20, 30, "H"), Cue(30, 40, "C"), Cue(40, 50, "X")]
    assert limit_cues(cues, rhubarb_shapes("")) == [Cue(0, 20, "A"), Cue(20, 40, "C"), Cue(40, 50, "A")]
    assert limit_cues(cues, rhubarb_shapes("GHX")) == cues


@pytest.mark.parametrize("extended", ["", "G", "GX", "H", "hx"])
def test_extended_shapes_leave_out_the_others_mapped_to_their_basic_shapes(full_run, extended):
    allowed = set("ABCDEF") | set(extended.upper())
    basic = {"G": "A", "H": "C", "X": "A"}
    expected = []
    for start, shape in tsv_cues(full_run["tsv"])[:-1]:
        shape = shape if shape in allowed else basic[shape]
        if not expected or expected[-1][1] != shape:
            expected.append((start, shape))
    closed = "X" if "X" in allowed else "A"
    for export_format in ("tsv", "json", "dat"):
        status, out, _ = rhubarb("-q", "-f", export_format, "--extendedShapes", extended, SAMPLE_8K)
        assert status == 0
        assert set(re.findall(r"\b[A-HX]\b", out.replace("MohoSwitch1", ""))) <= allowed
        if export_format == "tsv":
            assert tsv_cues(out) == expected + [(3.28, closed)]
        elif export_format == "json":
            assert [(c["start"], c["value"]) for c in json.loads(out)["mouthCues"]] == expected
        else:
            assert moho_switch(out)[-1][1] == closed


def test_a_letter_that_is_no_shape_fails_as_rhubarb_fails():
    assert rhubarb("--extendedShapes", "GQ", SAMPLE)[::2] == \
        (1, "[Fatal] Application terminating with error: Q is not a valid Shape value.\n")


# --- stderr as the integrations read it ----------------------------------------------------------------------------

def events(stderr: str) -> list[dict]:
    """Every stderr line is one JSON object (Spine parses each line; a line that is not JSON stops it)."""
    lines = stderr.splitlines()
    assert stderr.endswith("\n") and all(line.startswith("{ ") and line.endswith(" }") for line in lines)
    return [json.loads(line) for line in lines]


def test_machine_readable_events_are_rhubarbs_start_progress_success(full_run):
    status, out, err = rhubarb("--machineReadable", "-f", "json", SAMPLE_8K)
    assert status == 0 and out == full_run["json"]
    found = events(err)
    assert [e["type"] for e in found][0] == "start" and found[-1]["type"] == "success"
    assert {e["type"] for e in found[1:-1]} == {"progress"}
    assert found[0] == {"type": "start", "file": str(SAMPLE_8K), "log": {
        "level": "Info", "message": f"Application startup. Input file: {SAMPLE_8K}."}}
    assert found[-1] == {"type": "success", "log": {"level": "Info", "message": "Application terminating normally."}}
    values = [e["value"] for e in found if e["type"] == "progress"]
    assert values[0] == 0 and values[-1] == 1 and values == sorted(values)
    for line, event in zip(err.splitlines(), found):
        if event["type"] == "progress":  # "value": 0.69 (two decimals) and "Progress: 68%" (the whole percent)
            assert re.search(rf'"value": {TWO_DECIMALS}, "log"', line) and event["log"]["level"] == "Trace"
            percent = int(re.fullmatch(r"Progress: (\d+)%", event["log"]["message"]).group(1))
            assert percent - 0.5 <= event["value"] * 100 < percent + 1.5  # the value rounded, the percent truncated


def test_a_missing_file_is_rhubarbs_failure_event_word_for_word():
    status, out, err = rhubarb("--machineReadable", "no-such-file.wav")
    assert (status, out) == (1, "")
    lines = err.splitlines()
    assert lines[0] == ('{ "type": "start", "file": "no-such-file.wav", "log": { "level": "Info", "message": '
                        '"Application startup. Input file: no-such-file.wav." } }')
    assert lines[-1] == README_FAILURE.replace('\\"no-such-file.wav\\"', "no-such-file.wav")
    assert json.loads(lines[-1])["reason"] == ("Error processing file no-such-file.wav.\nCould not open sound file "
                                               "no-such-file.wav.\nNo such file or directory")


def run_as_spine(*arguments) -> tuple[list[float], list[tuple[float, str]]]:
    """RhubarbTask.call of Rhubarb for Spine: stdout to a file, stderr read line by line; progress values; on
    "success" the file's mouthCues as (time, MouthShape.valueOf(value)); "failure" raises with its reason."""
    command = [sys.executable, "-m", "speechattn.cli.rhubarb", "--machineReadable", "--recognizer", "pocketSphinx",
               "--exportFormat", "json", "--extendedShapes", "GHX", *map(str, arguments)]
    import tempfile

    progress = []
    with tempfile.TemporaryFile("w+") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.PIPE, text=True, encoding="utf-8")
        try:
            for line in process.stderr:
                message = json.loads(line)
                if message["type"] == "progress":
                    progress.append(float(message["value"]))
                elif message["type"] == "success":
                    progress.append(1.0)
                    output.seek(0)
                    cues = json.loads(output.read())["mouthCues"]
                    assert all(c["value"] in SHAPES for c in cues)
                    return progress, [(float(c["start"]), c["value"]) for c in cues]
                elif message["type"] == "failure":
                    raise RuntimeError(message.get("reason") or "Rhubarb failed without reason.")
            raise RuntimeError("Rhubarb terminated unexpectedly.")
        finally:
            process.wait()


def test_spine_reads_progress_and_the_result_and_reports_a_failure_reason(full_run):
    progress, cues = run_as_spine(SAMPLE_8K)
    assert progress[0] == 0 and progress[-1] == 1
    assert cues == [(c["start"], c["value"]) for c in json.loads(full_run["json"])["mouthCues"]]
    with pytest.raises(RuntimeError, match=r"^Error processing file missing\.wav\.\nCould not open sound file"):
        run_as_spine("missing.wav")


def run_as_after_effects(tmp_path: Path, audio: Path, dialog: str, extended: str) -> list[dict]:
    """generateMouthCues of Rhubarb for After Effects: a dialog file, --logFile at --logLevel fatal, JSON to --output;
    a non-empty log is an error, its "[Fatal] ..." text the message."""
    (tmp_path / "dialog.txt").write_text(dialog)
    status = main(["--dialogFile", str(tmp_path / "dialog.txt"), "--recognizer", "phonetic", "--extendedShapes",
                   extended, "--exportFormat", "json", "--logFile", str(tmp_path / "log.txt"), "--logLevel", "fatal",
                   "--output", str(tmp_path / "output.json"), str(audio)])
    fatal_log = (tmp_path / "log.txt").read_text().strip() if (tmp_path / "log.txt").exists() else ""
    if fatal_log:
        match = re.search(r"\[Fatal\] ([\s\S]*)", fatal_log)
        raise RuntimeError("Error running Rhubarb Lip Sync.\n" + (match.group(1) if match else fatal_log))
    assert status == 0
    return json.loads((tmp_path / "output.json").read_text())["mouthCues"]


def test_after_effects_gets_cues_of_its_shapes_and_reads_a_failure_from_the_log(tmp_path, capsys):
    cues = run_as_after_effects(tmp_path, SAMPLE, "This no longer appears to be the case.", "GX")
    assert cues and {c["value"] for c in cues} <= set("ABCDEFGX")  # frames of its mouth comp: indexOf >= 0
    with pytest.raises(RuntimeError, match=r"^Error running Rhubarb Lip Sync.\nApplication terminating with error: "
                                           r"Error processing file .*missing\.wav\."):
        run_as_after_effects(tmp_path, tmp_path / "missing.wav", "", "GHX")


def test_version_satisfies_the_after_effects_check():
    status, out, _ = rhubarb("--version")
    match = re.search(r"Rhubarb Lip Sync version ((\d+)\.(\d+).(\d+)(-[0-9A-Za-z-.]+)?)", out)
    assert status == 0 and match and int(match.group(2)) == 1 and int(match.group(3)) >= 9
    assert out.startswith("\nRhubarb Lip Sync version 1.14.0\n") and out.endswith("\n\n") and "speechattn" in out


def test_the_default_stderr_says_what_it_does_draws_a_bar_and_says_done():
    status, _, err = rhubarb(SAMPLE)
    shown = ""
    for char in err:  # what a terminal shows: a backspace takes the character before it back
        shown = shown[:-1] if char == "\b" else shown + char
    assert status == 0
    assert shown == f"Generating lip sync data for {SAMPLE}.\nProgress: [####################] 100% \nDone.\n"


def test_quiet_says_nothing_on_success_and_names_the_file_before_an_error(tmp_path):
    assert rhubarb("-q", SAMPLE)[2] == ""
    status, _, err = rhubarb("-q", tmp_path / "gone.wav")
    assert status == 1 and err == (f"Rhubarb Lip Sync 1.14.0 processing file {tmp_path / 'gone.wav'}:\n[Fatal] "
                                   f"Application terminating with error: Error processing file {tmp_path / 'gone.wav'}.\n"
                                   f"Could not open sound file {tmp_path / 'gone.wav'}.\nNo such file or directory\n")


def test_console_level_shows_log_entries_and_the_recognizer_note():
    assert [e["type"] for e in events(rhubarb("--machineReadable", SAMPLE)[2])].count("log") == 0  # default: Error
    found = events(rhubarb("--machineReadable", "--consoleLevel", "info", "-r", "phonetic", SAMPLE)[2])
    messages = [e["log"]["message"] for e in found if e["type"] == "log"]
    assert "Starting animation." in messages and "Done exporting." in messages
    assert any("multilingual (-r phonetic: speech in any language)" in m for m in messages)
    assert {e["log"]["level"] for e in found if e["type"] == "log"} <= {"Info", "Warn", "Error", "Fatal"}
    assert rhubarb("-q", "--consoleLevel", "WARNING", SAMPLE)[0] == 0  # the README's name for Warn


def test_phonetic_recognizer_takes_the_multilingual_model(tmp_path):
    """-r phonetic (Rhubarb's recognizer for speech not in English) reads with the multilingual model, the default
    recognizer with the English files model; the log names the file."""
    models = {}
    for recognizer in ("phonetic", "pocketSphinx"):
        log = tmp_path / f"{recognizer}.log"
        assert rhubarb("-q", "-r", recognizer, "--logFile", log, "--logLevel", "debug", SAMPLE)[0] == 0
        models[recognizer] = re.search(r"\[Debug\] Model: (\S+),", log.read_text()).group(1)
    assert models == {"phonetic": "multilingual-int8.onnx", "pocketSphinx": "file-int8.onnx"}


def test_log_file_has_rhubarbs_line_layout_from_its_level(tmp_path):
    assert rhubarb("-q", "--logFile", tmp_path / "all.log", "--logLevel", "trace", SAMPLE)[0] == 0
    lines = (tmp_path / "all.log").read_text().splitlines()
    assert all(re.fullmatch(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] 1 \[(Trace|Debug|Info|Warn|Error|Fatal)\] .+", line)
               for line in lines)
    assert lines[0].endswith(f"[Info] Application startup. Input file: {SAMPLE}.")
    assert any("[Trace] Progress: 100%" in line for line in lines) and any('[Debug] Command line: "rhubarb"' in line
                                                                           for line in lines)
    assert rhubarb("-q", "--logFile", tmp_path / "info.log", SAMPLE)[0] == 0  # default level: Debug
    assert "[Trace]" not in (tmp_path / "info.log").read_text()


def test_speechattns_own_warnings_become_log_events_so_stderr_stays_json(tmp_path):
    import soundfile as sf

    loud = tmp_path / "loud.wav"
    sf.write(loud, np.full(16000, 1.5, np.float32), 16000, subtype="FLOAT")  # clipped, with a warning
    status, _, err = rhubarb("--machineReadable", "--consoleLevel", "warn", loud)
    found = events(err)
    assert status == 0 and any(e["type"] == "log" and e["log"]["level"] == "Warn" and "clipped" in e["log"]["message"]
                               for e in found)


# --- the dialog file -----------------------------------------------------------------------------------------------

def test_a_dialog_file_is_aligned_as_transcribe_dialog_aligns_it(tmp_path, capsys):
    from speechattn.cli import main as speechattn

    (tmp_path / "dialog.txt").write_text("Please enter your password, followed by the extension.\n")
    status, out, err = rhubarb("-f", "json", "--machineReadable", "--consoleLevel", "info",
                               "-d", tmp_path / "dialog.txt", SAMPLE_8K)
    messages = [e["log"]["message"] for e in events(err) if e["type"] == "log"]
    assert status == 0 and any("words aligned" in m for m in messages), messages
    assert any(m.startswith("Not heard in the recording:") and "extension" in m for m in messages)
    assert speechattn(["transcribe", str(SAMPLE_8K), "--format", "rhubarb-json",
                       "--dialog", str(tmp_path / "dialog.txt")]) == 0
    assert json.loads(out)["mouthCues"] == json.loads(capsys.readouterr().out)["mouthCues"]


def test_a_dialog_file_of_another_recording_is_not_forced_onto_the_speech_and_a_warning_says_so(tmp_path):
    (tmp_path / "dialog.txt").write_text("This no longer appears to be the case.\n")
    status, out, err = rhubarb("-f", "json", "--machineReadable", "--consoleLevel", "warn", "-d",
                               tmp_path / "dialog.txt", SAMPLE_8K)
    logged = [(e["log"]["level"], e["log"]["message"]) for e in events(err) if e["type"] == "log"]
    assert status == 0 and json.loads(out)["mouthCues"], err
    assert any(level == "Warn" and message.startswith("The dialog text does not match the speech (alignment score")
               for level, message in logged), logged
    assert not any("words aligned" in message for _, message in logged)


def test_a_missing_or_unreadable_dialog_file_fails_as_rhubarb_says(tmp_path):
    missing = tmp_path / "none.txt"
    status, _, err = rhubarb("-d", missing, SAMPLE)  # the bar goes on after the message, as Rhubarb's does
    assert status == 1 and (f"\n[Fatal] Application terminating with error: Error processing file {SAMPLE}.\n"
                            f"File {missing} does not exist.\nProgress (cont'd): ") in err
    (tmp_path / "latin1.txt").write_bytes("Caf\xe9".encode("latin-1"))
    status, _, err = rhubarb("-q", "-d", tmp_path / "latin1.txt", SAMPLE)
    assert status == 1 and err.endswith(f"Error reading file {tmp_path / 'latin1.txt'}.\nFile encoding is not ASCII or "
                                        "UTF-8.\n")


# --- the command line ----------------------------------------------------------------------------------------------

def short_usage() -> str:
    return ("rhubarb  [-r <pocketSphinx|phonetic>] [-f <dat|tsv|xml|json>] [--datFrameRate <number>] "
            "[--datUsePrestonBlair] [-d <string>] [--language <string>] [--extendedShapes <string>] [--threads <number>] [-q] "
            "[--machineReadable] [--consoleLevel <Trace|Debug|Info|Warn|Error|Fatal>] [--logFile <string>] "
            "[--logLevel <Trace|Debug|Info|Warn|Error|Fatal>] [-o <string>] [--] [--version] [-h] <string>")


def usage_error(argument_id: str, error: str) -> str:
    """NiceCmdLineOutput::failure, then the failure entry through the default sink."""
    return (f"Invalid command-line arguments. {argument_id}\n{error}\n\nShort usage:\n{short_usage()}\n\n"
            "For complete usage and help, type `rhubarb --help`\n\n"
            "[Fatal] Application terminating with error: Invalid command line.\n")


@pytest.mark.parametrize("arguments, argument_id, error", [
    ([SAMPLE, "--bogus"], "Argument: --bogus", "Couldn't find match for argument"),
    (["--bogus", SAMPLE], "Argument: --bogus", "Couldn't find match for argument"),  # TCLAP names the file
    (["-x", "-q", SAMPLE], "Argument: -x", "Couldn't find match for argument"),
    ([], " ", "Required argument missing: inputFile"),
    ([SAMPLE, "-o"], "Argument: -o (--output)", "Missing a value for this argument!"),
    (["--threads", "2.5", SAMPLE], "Argument: (--threads)", "Couldn't read argument value from string '2.5'"),
    (["--datFrameRate", "24fps", SAMPLE], "Argument: (--datFrameRate)", "Couldn't read argument value from string '24fps'"),
    (["-f", "tsv json", SAMPLE], "Argument: -f (--exportFormat)", "More than one valid value parsed from string 'tsv json'"),
    (["-q", "-q", SAMPLE], "Argument: -q (--quiet)", "Argument already set!"),
    ([SAMPLE, SAMPLE], f"Argument: {SAMPLE}", "Couldn't find match for argument"),
])
def test_a_bad_command_line_exits_1_with_rhubarbs_message(arguments, argument_id, error):
    status, out, err = rhubarb(*arguments)
    assert (status, out, err) == (1, "", usage_error(argument_id, error))


@pytest.mark.parametrize("arguments, reason", [
    (["-f", "mp4"], "mp4 is not a valid ExportFormat value."),
    (["-r", "whisper"], "whisper is not a valid RecognizerType value."),
    (["--logLevel", "loud"], "loud is not a valid Level value."),
    (["--threads", "0"], "Thread count must be 1 or higher."),
])
def test_a_value_rhubarb_cannot_use_is_a_failure_with_exit_status_1(arguments, reason):
    assert rhubarb(*arguments, SAMPLE)[::2] == (1, f"[Fatal] Application terminating with error: {reason}\n")


def test_help_prints_rhubarbs_usage_of_every_option():
    status, out, err = rhubarb("--help")
    assert (status, err) == (0, "")
    assert out.startswith(f"\nShort usage:\n{short_usage()}\n\nLong usage:\n\n") and out.endswith("\n\n")
    rows = out.split("Long usage:\n\n")[1].splitlines()[:-1]
    assert all(len(row) >= 78 and row[20:22] == "  " for row in rows)  # 20 and 56 columns, two spaces between
    assert rows[0] == "-r <pocketSphinx      The dialog recognizer.                                  "
    for arg in ARGS:
        assert arg.description.split()[0] in out
    assert rhubarb("-qh")[1] == out  # combined switches, as TCLAP takes them


def test_options_take_rhubarbs_spellings_and_case(full_run, tmp_path):
    status, out, _ = rhubarb("--quiet", "--exportFormat", "JSON", "--recognizer", "POCKETSPHINX", "--threads", "1",
                             SAMPLE_8K)
    assert status == 0 and out == full_run["json"]
    assert rhubarb("-q", "--", SAMPLE_8K)[1] == full_run["tsv"]  # after --: no more options
    status, out, _ = rhubarb("-q", "-o", tmp_path / "out.tsv", "-f", "tsv", SAMPLE_8K)
    assert (status, out) == (0, "") and (tmp_path / "out.tsv").read_text() == full_run["tsv"]
    (tmp_path / "out.tsv").write_text("old")
    assert rhubarb("-q", "--output", tmp_path / "out.tsv", SAMPLE_8K)[0] == 0  # replaced, as Rhubarb does
    assert (tmp_path / "out.tsv").read_text() == full_run["tsv"]


def test_an_output_that_cannot_be_written_fails_after_the_start(tmp_path):
    status, _, err = rhubarb("-q", "-o", tmp_path / "no" / "dir" / "x.tsv", SAMPLE)
    assert status == 1 and f"Error processing file {SAMPLE}.\nCould not write output file" in err


def test_the_console_script_runs_as_rhubarb_would_be_run(tmp_path, full_run):
    script = Path(sys.executable).with_name("speechattn-rhubarb")
    script = script if script.exists() else Path(shutil.which("speechattn-rhubarb") or script)
    assert script.exists(), "speechattn-rhubarb is not installed: pip install -e . (pyproject's [project.scripts])"
    done = subprocess.run([str(script), "-f", "dat", "-o", str(tmp_path / "line.dat"), str(SAMPLE_8K), "-q"],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert (tmp_path / "line.dat").read_text() == full_run["dat"]
    done = subprocess.run([str(script), str(SAMPLE), "--nope"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "For complete usage and help, type `speechattn-rhubarb --help`" in done.stderr


@pytest.mark.slow
@pytest.mark.skipif(not (shutil.which("blender") and shutil.which("xvfb-run")),
                    reason="blender and xvfb-run are not installed (apt-get install blender xvfb xauth; not in CI)")
def test_the_blender_addon_keys_our_cues():
    """tools/blender_rhubarb.py: the real Blender add-on, unchanged, runs speechattn-rhubarb and keys its cues.  The
    add-on is cloned from GitHub, or taken from $BLENDER_RHUBARB_ADDON (its folder, zip or git repository)."""
    addon = os.environ.get("BLENDER_RHUBARB_ADDON")
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "blender_rhubarb.py"),
                           *(["--addon", addon] if addon else [])], capture_output=True, text=True, timeout=600)
    if done.returncode != 0 and "could not clone" in done.stderr:
        pytest.skip(done.stderr.strip())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "OK: the add-on keyed the cues speechattn-rhubarb reported" in done.stdout


# --- speechattn transcribe -------------------------------------------------------------------------------------------

def test_transcribe_writes_the_same_rhubarb_files_with_the_same_shape_options(full_run, capsys):
    assert speechattn_main(["transcribe", str(SAMPLE_8K), "--format", "rhubarb-dat", "-q"]) == 0
    assert capsys.readouterr().out == full_run["dat"]
    for rhubarb_arguments, transcribe_arguments in [
            (["-f", "tsv", "--extendedShapes", ""], ["--format", "rhubarb-tsv", "--extended-shapes", ""]),
            (["-f", "dat", "--datFrameRate", "30", "--datUsePrestonBlair", "--extendedShapes", "G"],
             ["--format", "rhubarb-dat", "--dat-frame-rate", "30", "--dat-preston-blair", "--extended-shapes", "G"])]:
        expected = rhubarb("-q", *rhubarb_arguments, SAMPLE_8K)[1]
        assert speechattn_main(["transcribe", str(SAMPLE_8K), "-q", *transcribe_arguments]) == 0
        assert capsys.readouterr().out == expected


@pytest.mark.parametrize("arguments, message", [
    (["--format", "json", "--extended-shapes", "G"], "--extended-shapes chooses the shapes of the rhubarb-* formats"),
    (["--format", "rhubarb-tsv", "--dat-preston-blair"], "set the frames and names of --format rhubarb-dat"),
    (["--format", "rhubarb-dat", "--dat-frame-rate", "12"], "12.0 is not in the range 24<=x<=100"),
    (["--format", "rhubarb-xml", "--extended-shapes", "GK"], "K is not a valid Shape value."),
])
def test_transcribes_shape_options_are_refused_where_they_mean_nothing(arguments, message, capsys):
    assert speechattn_main(["transcribe", str(SAMPLE), *arguments]) == 2
    assert message in capsys.readouterr().err
