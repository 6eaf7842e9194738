"""bench/real_edges.py's reference edges from the signal alone: where speech rises out of silence and falls back,
kept only where the edge is sharp and the recording clean."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from real_edges import aligner_edges, kept, nearest, phone_class, speech_edges  # noqa: E402

RATE = 16000


def burst(seconds: float, start: float, end: float, fade_ms: float = 0.0, noise_db: float = -80.0,
          seed: int = 0) -> np.ndarray:
    """A 200 Hz vowel-like tone from `start` to `end` (s) over quiet noise; `fade_ms` fades its end out as a voice
    decays, evenly in dB."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * RATE)) / RATE
    audio = 10 ** (noise_db / 20) * rng.standard_normal(len(t))
    on = (t >= start) & (t < end)
    envelope = np.ones(len(t))
    if fade_ms:
        fading = (t >= end - fade_ms / 1000) & (t < end)
        envelope[fading] = 10 ** (-np.linspace(0, 70, fading.sum()) / 20)  # 70 dB down, evenly in dB
    audio[on] += 0.3 * np.sin(2 * np.pi * 200 * t[on]) * envelope[on]
    return audio


def test_an_abrupt_onset_and_offset_are_found_within_a_hop_of_where_they_are():
    edges, snr = speech_edges(burst(1.0, 0.3137, 0.7021))
    assert snr > 45
    good = kept(edges, snr, 45)
    onsets = [e.ms for e in good if e.kind == "onset"]
    offsets = [e.ms for e in good if e.kind == "offset"]
    assert len(onsets) == 1 and abs(onsets[0] - 313.7) <= 5
    assert len(offsets) == 1 and abs(offsets[0] - 702.1) <= 5


def test_a_fading_end_is_set_apart_not_guessed():
    edges, snr = speech_edges(burst(1.0, 0.3, 0.7, fade_ms=150))
    good = kept(edges, snr, 45)
    assert [e.kind for e in good] == ["onset"]
    assert any(e.kind == "offset" and not e.sharp for e in edges)


def test_a_noisy_recording_keeps_no_edge():
    edges, snr = speech_edges(burst(1.0, 0.3, 0.7, noise_db=-20))
    assert snr < 45 and kept(edges, snr, 45) == []


def test_speech_at_the_recording_start_is_not_an_onset_anyone_can_score():
    edges, snr = speech_edges(burst(1.0, 0.0, 0.5))
    assert [e.kind for e in kept(edges, snr, 45)] == ["offset"]


def test_a_short_pause_joins_its_stretches_and_a_long_one_splits_them():
    audio = burst(1.5, 0.2, 0.5) + burst(1.5, 0.56, 0.8, noise_db=-200, seed=1) + burst(1.5, 1.0, 1.3, noise_db=-200)
    edges, _ = speech_edges(audio, min_pause_ms=120)
    assert [round(e.ms / 10) * 10 for e in edges] == [200, 800, 1000, 1300]


def test_an_aligners_speech_edges_come_from_its_labels_with_the_phone_beside_the_silence():
    phones = ("sil", "AA", "T", "S")
    labels = np.array([0, 0, 1, 1, 2, 0, 0, 3, 3])
    assert aligner_edges(labels, 0, phones) == {"onset": [(20.0, "AA"), (70.0, "S")],
                                                "offset": [(50.0, "T"), (90.0, "S")]}
    assert nearest([(20.0, "AA"), (70.0, "S")], 60.0) == (70.0, "S") and nearest([], 1.0) is None
    assert [phone_class(p) for p in ("T", "S", "M", "L", "AA", "JH")] == [
        "stop", "fricative", "nasal", "liquid/glide", "vowel", "affricate"]


def test_the_word_end_experiment_moves_only_ends_before_silence_to_where_the_energy_falls():
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    from extend_word_ends import extended
    from lhotse.supervision import AlignmentItem

    from real_edges import energy_db

    audio = burst(1.0, 0.2, 0.53)  # speech to 530 ms, the labels end it at 500 ms
    energy = energy_db(audio)
    floor = float(np.percentile(energy, 5))
    items = [AlignmentItem("AA", 0.2, 0.1), AlignmentItem("T", 0.3, 0.2), AlignmentItem("sil", 0.5, 0.5)]
    out, moved = extended(list(items), energy, floor, 15.0, 100.0)
    assert [(i.symbol, round(i.start, 3)) for i in out] == [("AA", 0.2), ("T", 0.3), ("sil", out[2].start)]
    assert 0.525 <= out[1].start + out[1].duration <= 0.54
    assert abs(out[2].start - (out[1].start + out[1].duration)) < 1e-6  # the silence starts where the phone ends
    assert len(moved) == 1 and 25 <= moved[0] <= 40
    capped, _ = extended(list(items), energy, floor, 15.0, 10.0)  # never more than --max-ms
    assert abs(capped[1].start + capped[1].duration - 0.51) < 0.003


def test_a_missing_or_empty_folder_or_an_unreadable_transcript_file_is_one_line_not_an_empty_table(tmp_path):
    import subprocess

    script = str(Path(__file__).resolve().parent.parent / "bench" / "real_edges.py")
    (tmp_path / "empty").mkdir()
    (tmp_path / "texts.tsv").write_text("1-2-3\thello\n")
    for arguments, said in (
            (["--speech-commands", str(tmp_path / "nothing")], "no such folder"),
            (["--speech-commands", str(tmp_path / "empty")], "no clips to check there"),
            (["--librispeech", str(tmp_path / "empty"), "--transcripts", str(tmp_path / "texts.tsv")],
             "no clips to check there"),
            (["--librispeech", str(tmp_path), "--transcripts", str(tmp_path / "missing.tsv")],
             "cannot read the transcript file"),
            (["--librispeech", str(tmp_path), "--transcripts", str(tmp_path / "empty")],
             "cannot read the transcript file"),
            (["--synthetic", "3", "--torch", "full", "--weights", str(tmp_path / "none.pt")], "no such checkpoint"),
            (["--synthetic", "3", "--weights", str(tmp_path / "texts.tsv")], "--weights is read with --torch")):
        result = subprocess.run([sys.executable, script, *arguments], capture_output=True, text=True, timeout=120)
        assert result.returncode == 2 and said in result.stderr, (arguments, result.stderr)
        assert "Traceback" not in result.stderr and not result.stdout
