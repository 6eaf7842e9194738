"""bench/agreed_boundaries.py's reference of real-speech phone boundaries: the boundaries two independent aligners
agree on (same kinds of sound on both sides, within a tolerance, one to one, at their mean), each aligner scored on
the other two's; and Praat's aligner, the third opinion, running on a bundled recording."""

from __future__ import annotations

import subprocess
import sys
import wave
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from agreed_boundaries import (  # noqa: E402
    agreed, arpabet_kind, boundaries, errors_against, espeak_kind, group, merged_silence)


def test_kinds_of_sound_from_both_phone_sets():
    assert [arpabet_kind(p) for p in ("sil", "AA1", "T", "CH", "S", "NG", "R")] == [
        "silence", "vowel", "stop", "affricate", "fricative", "nasal", "liquid/glide"]
    assert [espeak_kind(p) for p in ("", "_:", "oU", "t#", "dZ", "D", "N", "j", "i@3")] == [
        "silence", "silence", "vowel", "stop", "affricate", "fricative", "nasal", "liquid/glide", "vowel"]


def test_boundaries_are_changes_between_intervals_and_a_split_pause_is_one():
    intervals = merged_silence([(0, 100, "silence"), (100, 150, "silence"), (150, 200, "stop"), (200, 300, "vowel"),
                                (300, 380, "vowel"), (380, 500, "silence")])
    assert boundaries(intervals) == [(150.0, "silence", "stop"), (200.0, "stop", "vowel"),
                                     (300.0, "vowel", "vowel"), (380.0, "vowel", "silence")]
    assert [group(*b[1:]) for b in boundaries(intervals)] == [
        "silence→speech", "consonant→vowel", "vowel→vowel", "speech→silence"]


def test_two_aligners_agree_only_on_the_same_kinds_within_the_tolerance_one_to_one_at_their_mean():
    a = [(100.0, "silence", "stop"), (200.0, "stop", "vowel"), (300.0, "vowel", "nasal"), (400.0, "nasal", "silence")]
    b = [(112.0, "silence", "stop"), (205.0, "fricative", "vowel"), (330.0, "vowel", "nasal"),
         (395.0, "nasal", "silence"), (405.0, "nasal", "silence")]
    # 200: other kinds; 300 against 330: too far; 400: the nearer of two, once
    assert agreed(a, b, 20.0) == [(106.0, "silence", "stop"), (397.5, "nasal", "silence")]
    assert agreed(a, b, 0.0) == []


def test_an_aligner_is_scored_signed_against_its_nearest_boundary_of_the_same_kinds_and_misses_count():
    reference = [(106.0, "silence", "stop"), (397.5, "nasal", "silence"), (500.0, "vowel", "vowel")]
    hypothesis = [(90.0, "silence", "stop"), (150.0, "silence", "stop"), (410.0, "nasal", "silence")]
    assert errors_against(reference, hypothesis) == [
        ("silence→speech", -16.0), ("speech→silence", 12.5), ("vowel→vowel", 10_000.0)]


def test_praats_aligner_puts_a_bundled_sentence_where_its_speech_is():
    pytest.importorskip("parselmouth")
    from agreed_boundaries import Praat

    with wave.open(str(ROOT / "speechattn" / "runtime" / "samples" / "this-no-longer-appears-to-be-the-case.wav")) as f:
        audio = np.frombuffer(f.readframes(f.getnframes()), np.int16) / 32768.0
    intervals = Praat().align(audio, "this no longer appears to be the case")
    assert intervals is not None
    assert intervals[0][0] == 0.0 and abs(intervals[-1][1] - 1000 * len(audio) / 16000) < 1
    assert all(a[1] == b[0] for a, b in zip(intervals, intervals[1:]))  # they tile the recording
    speech = [i for i in intervals if i[2] != "silence"]
    assert len(speech) >= 20  # "this no longer appears to be the case": 23 phones (no word-separator pauses)
    assert speech[0][0] < 100 and speech[-1][1] > 2000  # speech from the start to about 2.2 s


def test_no_manifest_or_a_missing_one_is_one_line():
    script = str(ROOT / "bench" / "agreed_boundaries.py")
    for arguments, said in (([], "give --validate N and/or --manifests"),
                            (["--manifests", "/nonexistent/x.jsonl.gz"], "no such manifest")):
        result = subprocess.run([sys.executable, script, *arguments], capture_output=True, text=True, timeout=120)
        assert result.returncode == 2 and said in result.stderr, result.stderr
        assert "Traceback" not in result.stderr


def test_the_real_speech_check_runs_end_to_end_on_a_manifest_of_the_bundled_samples(capsys, tmp_path):
    """dev_sets on a lhotse manifest of the two bundled recordings: each aligner gets a reference the other two
    agree on, and the table of where ours and Praat's sit against pocketsphinx's boundaries has both."""
    pytest.importorskip("parselmouth")
    pytest.importorskip("pocketsphinx")
    from lhotse import Recording, RecordingSet, SupervisionSegment, SupervisionSet
    from lhotse.supervision import AlignmentItem

    from agreed_boundaries import dev_sets

    samples = ROOT / "speechattn" / "runtime" / "samples"
    recordings, supervisions = [], []
    for name, text in (("please-enter-your-password", "please enter your password"),
                       ("this-no-longer-appears-to-be-the-case", "this no longer appears to be the case")):
        recording = Recording.from_file(samples / f"{name}.wav", recording_id=name)
        recordings.append(recording)
        supervisions.append(SupervisionSegment(  # one placeholder phone: the check reads the words, not the labels
            id=name, recording_id=name, start=0.0, duration=recording.duration, text=text,
            alignment={"phone": [AlignmentItem("sil", 0.0, recording.duration)]}))
    RecordingSet.from_recordings(recordings).to_file(tmp_path / "s_recordings_dev.jsonl.gz")
    SupervisionSet.from_segments(supervisions).to_file(tmp_path / "s_supervisions_dev.jsonl.gz")
    dev_sets([tmp_path / "s_supervisions_dev.jsonl.gz"])
    out = capsys.readouterr().out
    assert "gave up on: speechattn 0, pocketsphinx 0, praat 0" in out, out
    for aligner in ("speechattn", "pocketsphinx", "praat"):
        kept = int(out.split(f"reference for {aligner}: ")[1].split()[0])
        assert kept > 5, out  # 28 phones and their pauses: most boundaries have a pair that agrees
    sit = out.split("where the others sit against pocketsphinx's boundaries")[1]
    row = next(line for line in sit.splitlines() if line.startswith("| all |")).split("|")
    assert int(row[2]) >= 20 and int(row[5]) >= 10, sit  # boundaries paired: ours, then Praat's
