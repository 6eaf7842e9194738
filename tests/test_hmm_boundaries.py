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
from speechattn.runtime.hmm import FORMAT, HmmGmm, chain_entry_medians, chain_viterbi, features, refine
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


def entry_medians_by_enumeration(emissions: np.ndarray, stay: np.ndarray, T: int) -> list[int]:
    """chain_entry_medians' answer with every window the whole utterance, from every path written out: (T, N)
    emissions; each path's weight exp(its log-likelihood)."""
    import itertools

    N = emissions.shape[1]
    move = np.log1p(-np.exp(stay))
    weights = {}
    for entries in itertools.combinations(range(1, T), N - 1):  # the frames states 1 .. N-1 are entered
        path = np.searchsorted(np.array(entries), np.arange(T), side="right")
        score = emissions[np.arange(T), path].sum() + sum(stay[path[t]] if path[t] == path[t - 1] else move[path[t - 1]]
                                                          for t in range(1, T))
        weights[entries] = np.exp(score)
    total = sum(weights.values())
    medians = [0]
    for j in range(1, N):
        reached = [sum(w for entries, w in weights.items() if entries[j - 1] <= s) / total for s in range(T)]
        medians.append(next(s for s in range(T) if reached[s] >= 0.5))
    return medians


def test_chain_entry_medians_match_every_path_written_out():
    rng = np.random.default_rng(3)
    T, N = 9, 3
    for _ in range(4):
        emissions = rng.normal(0, 2, (T, N))
        stay = np.log(rng.uniform(0.3, 0.9, N))
        windows = np.array([[0, T]] * N)
        flat = np.concatenate([emissions[:, j] for j in range(N)])
        expected = entry_medians_by_enumeration(emissions, stay, T)
        assert chain_entry_medians(flat, stay, windows).tolist() == expected
        only_last = chain_entry_medians(flat, stay, windows, np.array([False, False, True]))
        assert only_last.tolist() == [0, 0, expected[2]]  # the states not wanted are left 0


def test_chain_entry_medians_split_flat_emissions_in_the_middle_and_refuse_what_no_path_fits():
    stay = np.log([0.5, 0.5])
    # every path of 2 states over 8 frames equally likely: state 1 entered at frames 1 .. 7, the median 4
    assert chain_entry_medians(np.zeros(16), stay, np.array([[0, 8], [0, 8]])).tolist() == [0, 4]
    e = np.array([[0, -9]] * 3 + [[-9, 0]] * 5, dtype=float)  # a sure cut: the best path's
    flat = np.concatenate([e[:, 0], e[:, 1]])
    assert chain_entry_medians(flat, stay, np.array([[0, 8], [0, 8]])).tolist() == [0, 3]
    with pytest.raises(ValueError):
        chain_entry_medians(np.zeros(4), stay, np.array([[0, 2], [6, 8]]))


def test_refined_by_posteriors_boundaries_land_on_a_synthetic_signals_known_boundaries(trained):
    rng = np.random.default_rng(1)
    model = dataclasses.replace(trained, neural_weight=0.0, band_frames=4, posterior_temperature=0.5)
    errors = []
    for _ in range(5):
        audio, exact = utterance(rng)
        frames = exact[-1][2]
        refined = refine(model, audio, alignment_of(shifted(exact, rng, 3), frames))
        got = [(p.start_frame, p.end_frame) for p in refined.words[0].phones]
        errors += [abs(x - y) for g, t in zip(got, [(a, b) for p, a, b in exact if p != "sil"]) for x, y in zip(g, t)]
    assert max(errors) <= 1, errors


def test_the_shipped_parameter_file_loads_and_has_the_format_the_command_writes(tmp_path, trained):
    shipped = hmm.bundled()
    assert shipped.phones == tuple(PHONES)
    assert shipped.means.shape == (shipped.states, shipped.means.shape[1], hmm.FEATURE_DIMS)
    context_free = 3 * (len(PHONES) - 1) + 1
    assert shipped.states > context_free  # context-dependent states beside the context-free ones
    assert sorted(set(shipped.phone_of_state.tolist())) == list(range(len(PHONES)))
    assert shipped.info["utterances"] > 1000 and "speechocean762" in shipped.info["data"]
    assert "synthetic voices" in shipped.info["data"]
    assert shipped.band_frames == hmm.DEFAULT_BAND_FRAMES and shipped.neural_weight == hmm.DEFAULT_NEURAL_WEIGHT
    assert shipped.posterior_temperature == hmm.DEFAULT_POSTERIOR_TEMPERATURE > 0  # posteriors, the file silent
    path = tmp_path / "written.npz"
    trained.save(path)
    again = HmmGmm.load(path)
    assert np.array_equal(again.state_of, trained.state_of)
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


@pytest.fixture(scope="module")
def with_contexts():
    rng = np.random.default_rng(2)
    utterances = [Utterance(features(audio), segments) for audio, segments in (utterance(rng) for _ in range(12))]
    return train(utterances, PHONES, HmmTrainConfig(gaussians=2, rounds=0, state_rounds=1, context_min_frames=20))


def test_contexts_split_a_phones_edge_states_by_the_kind_of_sound_beside_it(with_contexts, tmp_path):
    model, aa = with_contexts, PHONES.index("AA")
    silence, fricative, nasal = (hmm.CONTEXTS.index(k) for k in ("silence", "fricative", "nasal"))
    context_free = HmmGmm.layout(PHONES)[0]
    # AA follows silence and S in the training data: its first state has one for each; a nasal never came first
    assert model.state_of[aa, 0, silence] != model.state_of[aa, 0, fricative]
    assert model.state_of[aa, 0, nasal] == context_free[aa, 0, 0] < len(context_free.reshape(-1))
    assert model.state_of[aa, 2, silence] != model.state_of[aa, 2, fricative]  # and its last, by what follows
    assert len(set(model.state_of[aa, 1].tolist())) == 1  # the middle state has no context
    states, _ = hmm.segment_chain(model, ["sil", "AA", "S", "AA", "sil"])
    assert states[1] == model.state_of[aa, 0, silence] and states[7] == model.state_of[aa, 0, fricative]
    path = tmp_path / "contexts.npz"
    model.save(path)
    assert np.array_equal(HmmGmm.load(path).state_of, model.state_of)


def test_refined_boundaries_with_contexts_land_on_the_known_boundaries(with_contexts):
    rng = np.random.default_rng(3)
    model = dataclasses.replace(with_contexts, neural_weight=0.0, band_frames=4)
    errors = []
    for _ in range(5):
        audio, exact = utterance(rng)
        refined = refine(model, audio, alignment_of(shifted(exact, rng, 3), exact[-1][2]))
        got = [(p.start_frame, p.end_frame) for p in refined.words[0].phones]
        errors += [abs(x - y) for g, t in zip(got, [(a, b) for p, a, b in exact if p != "sil"]) for x, y in zip(g, t)]
    assert max(errors) <= 1, errors


def test_a_version_1_file_without_contexts_still_loads(tmp_path, trained):
    path = tmp_path / "v1.npz"
    header = {"format": "speechattn-hmm-gmm/1", "phones": list(PHONES), "band_frames": 2, "neural_weight": 4.0}
    np.savez(path, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8), means=trained.means,
             variances=trained.variances, log_weights=trained.log_weights, log_stay=trained.log_stay)
    loaded = HmmGmm.load(path)
    assert np.array_equal(loaded.state_of, HmmGmm.layout(PHONES)[0]) and loaded.states == trained.states
