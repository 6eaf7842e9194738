"""The HMM-GMM boundary stage (speechattn/runtime/hmm.py) and its trainer (speechattn/training/hmm.py)."""

from __future__ import annotations

import dataclasses
import gzip
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from speechattn.phones import PHONES
from speechattn.runtime import hmm
from speechattn.runtime.hmm import FORMAT, HmmGmm, chain_viterbi, features, refine
from speechattn.training.hmm import HmmTrainConfig, Utterance, segments_from_labels, train
from speechattn_export.align import AlignedPhone, AlignedWord, Alignment

RATE = 16000


def sound(kind: str, frames: int, rng) -> np.ndarray:
    """10 ms frames of one of three sounds MFCCs tell apart: near-silence, a hiss, a low hum."""
    n = frames * 160
    t = np.arange(n) / RATE
    if kind == "sil":
        return 0.001 * rng.standard_normal(n)
    if kind == "S":
        return 0.2 * rng.standard_normal(n)
    return 0.3 * np.sin(2 * np.pi * 220 * t) + 0.15 * np.sin(2 * np.pi * 660 * t) + 0.002 * rng.standard_normal(n)


def utterance(rng, layout=(("sil", 20), ("AA", 15), ("S", 12), ("AA", 18), ("sil", 20))):
    """(audio, exact segments): a signal whose phone boundaries are known to the sample."""
    audio, segments, at = [], [], 0
    for phone, frames in layout:
        frames = int(frames + rng.integers(-3, 4))
        audio.append(sound(phone, frames, rng))
        segments.append((phone, at, at + frames))
        at += frames
    return np.concatenate(audio).astype(np.float32), segments


def shifted(segments, rng, most: int):
    """The same segments with each inner boundary moved up to `most` frames (each phone kept 3 frames or more)."""
    edges = [s[2] for s in segments[:-1]]
    moved = [e + int(rng.integers(-most, most + 1)) for e in edges]
    bounds = [0] + moved + [segments[-1][2]]
    return [(p, a, b) for (p, _, _), a, b in zip(segments, bounds, bounds[1:])]


@pytest.fixture(scope="module")
def trained():
    rng = np.random.default_rng(0)
    utterances = []
    for _ in range(12):
        audio, segments = utterance(rng)
        utterances.append(Utterance(features(audio), shifted(segments, rng, 2)))  # silver: a little off
    return train(utterances, PHONES, HmmTrainConfig(gaussians=2, rounds=3, em_iterations=3))


def test_re_estimation_never_lowers_the_path_likelihood(trained):
    scores = trained.info["path_log_likelihood_per_round"]
    assert len(scores) == 3
    assert all(b >= a - 1e-3 for a, b in zip(scores, scores[1:])), scores


def alignment_of(segments, frames) -> Alignment:
    """A kit Alignment holding `segments`' phones as one word, its pauses as silences."""
    phones = tuple(AlignedPhone(p, a, b, 0.0, 1.0) for p, a, b in segments if p != "sil")
    word = AlignedWord(0, "x", phones[0].start_frame, phones[-1].end_frame, phones, 0.0, 1.0)
    silences = [(a, b) for p, a, b in segments if p == "sil"]
    return Alignment([word], [], frames, silences)


def test_refined_boundaries_land_on_a_synthetic_signals_known_boundaries(trained):
    rng = np.random.default_rng(1)
    model = dataclasses.replace(trained, neural_weight=0.0, band_frames=4)  # the HMM-GMM alone
    errors_before, errors_after = [], []
    for _ in range(5):
        audio, exact = utterance(rng)
        frames = exact[-1][2]
        guessed = shifted(exact, rng, 3)
        refined = refine(model, audio, alignment_of(guessed, frames))
        got = [(p.start_frame, p.end_frame) for p in refined.words[0].phones]
        truth = [(a, b) for p, a, b in exact if p != "sil"]
        before = [(a, b) for p, a, b in guessed if p != "sil"]
        errors_after += [abs(x - y) for g, t in zip(got, truth) for x, y in zip(g, t)]
        errors_before += [abs(x - y) for g, t in zip(before, truth) for x, y in zip(g, t)]
        assert refined.silences[0][0] == 0 and refined.silences[-1][1] == frames  # the pauses follow the phones
    assert max(errors_after) <= 1, errors_after  # within a frame of the truth
    assert np.mean(errors_after) < np.mean(errors_before)


def test_chain_viterbi_finds_the_best_cut_and_refuses_windows_no_path_fits():
    # two states, emissions favour state 0 for 3 frames and state 1 for 5
    e = np.array([[0, -5]] * 3 + [[-5, 0]] * 5, dtype=float)
    windows = np.array([[0, 8], [0, 8]])
    stay = np.log([0.5, 0.5])
    flat = np.concatenate([e[0:8, 0], e[0:8, 1]])
    assert chain_viterbi(flat, stay, windows).tolist() == [0, 0, 0, 1, 1, 1, 1, 1]
    with pytest.raises(ValueError):
        chain_viterbi(np.zeros(4), stay, np.array([[0, 2], [6, 8]]))  # a gap between the windows


def test_the_shipped_parameter_file_loads_and_has_the_format_the_command_writes(tmp_path, trained):
    shipped = hmm.bundled()
    assert shipped.phones == tuple(PHONES)
    assert shipped.means.shape == (shipped.states, shipped.means.shape[1], hmm.FEATURE_DIMS)
    assert shipped.states == 3 * (len(PHONES) - 1) + 1
    assert shipped.info["utterances"] > 1000 and "speechocean762" in shipped.info["data"]
    assert shipped.band_frames == hmm.DEFAULT_BAND_FRAMES and shipped.neural_weight == hmm.DEFAULT_NEURAL_WEIGHT
    path = tmp_path / "written.npz"
    trained.save(path)
    again = HmmGmm.load(path)
    for name in ("means", "variances", "log_weights", "log_stay"):
        assert np.allclose(getattr(again, name), getattr(trained, name), atol=1e-6)
    with np.load(path) as written, np.load(hmm.bundled_path()) as bundled_file:
        assert sorted(written.files) == sorted(bundled_file.files)
        assert json.loads(bytes(written["header"]))["format"] == FORMAT
        assert {k: bundled_file[k].dtype for k in bundled_file.files} == {k: written[k].dtype for k in written.files}


def test_a_file_that_is_not_a_parameter_file_is_one_line(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not an HMM-GMM parameter file") as raised:
        HmmGmm.load(bad)
    assert "\n" not in str(raised.value)
    other = tmp_path / "other.npz"
    np.savez(other, header=np.frombuffer(json.dumps({"format": "x"}).encode(), dtype=np.uint8))
    with pytest.raises(ValueError, match="format 'x'"):
        HmmGmm.load(other)


def test_segments_from_labels_leaves_out_unlabelled_utterances():
    labels = np.array([39, 39, 0, 0, 0, 39])
    assert segments_from_labels(labels, PHONES) == [(PHONES[39], 0, 2), (PHONES[0], 2, 5), (PHONES[39], 5, 6)]
    assert segments_from_labels(np.array([0, -100, 0]), PHONES) is None


def test_train_hmm_bad_input_is_one_line(tmp_path):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "speechattn", "train-hmm", *args], capture_output=True, text=True)

    missing = run(str(tmp_path / "none.jsonl.gz"), "--out", str(tmp_path / "x.npz"))
    assert missing.returncode == 2 and missing.stderr.strip().count("\n") == 0 and "no such manifest" in missing.stderr
    manifest = tmp_path / "m_supervisions_train.jsonl.gz"
    with gzip.open(manifest, "wt") as f:
        f.write("")
    odd = run(str(manifest), "--out", str(tmp_path / "x.npz"), "--gaussians", "3")
    assert odd.returncode == 2 and "power of two" in odd.stderr and odd.stderr.strip().count("\n") == 0
    assert not Path(tmp_path / "x.npz").exists()
