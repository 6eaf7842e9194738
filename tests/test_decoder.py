"""The bigram decoder: a tiling of the stream, the same whatever the pieces, decisions bounded by its
look-ahead, and a phone bigram built exactly from a lexicon."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from speechattn.data.phonotactics import bigram_counts, log_bigram
from speechattn_export.decoder import DecoderConfig, PhoneBigram, PhoneDecoder, decode, new_segmenter
from speechattn.phones import PHONE_TO_INDEX, PHONES

SIL, AE, K, T = (PHONE_TO_INDEX[p] for p in ("sil", "AE", "K", "T"))


def random_log_probs(frames: int, seed: int) -> np.ndarray:
    logits = np.random.default_rng(seed).normal(0, 2.5, size=(frames, len(PHONES)))
    return logits - np.log(np.exp(logits).sum(-1, keepdims=True))


@pytest.fixture(scope="module")
def table() -> np.ndarray:
    return PhoneBigram.load().for_phones(list(PHONES))


def push_in_pieces(table, log_probs, sizes, config=DecoderConfig()):
    decoder = PhoneDecoder(table, config)
    segments, position = [], 0
    for size in sizes:
        segments += decoder.push(log_probs[position : position + size])
        position += size
    return segments + decoder.push(log_probs[position:]) + decoder.finish()


@settings(max_examples=40, deadline=None)
@given(data=st.data(), frames=st.integers(1, 120), lookahead=st.sampled_from([0, 3, 10]))
def test_segments_tile_the_stream_and_do_not_depend_on_the_pieces(table, data, frames, lookahead):
    config = DecoderConfig(lookahead_frames=lookahead)
    log_probs = random_log_probs(frames, seed=frames)
    whole = decode(log_probs, table, config)
    sizes = data.draw(st.lists(st.integers(0, 17), max_size=15))
    assert push_in_pieces(table, log_probs, sizes, config) == whole
    assert whole[0].start_frame == 0 and whole[-1].end_frame == frames
    assert all(a.end_frame == b.start_frame and a.phone != b.phone for a, b in zip(whole, whole[1:]))
    assert all(0 <= s.confidence <= 1 for s in whole)


def test_a_frame_is_final_exactly_lookahead_frames_after_it_arrives(table):
    config = DecoderConfig(lookahead_frames=10)
    log_probs = random_log_probs(200, seed=1)
    decoder = PhoneDecoder(table, config)
    final_end = 0
    for t in range(200):
        for segment in decoder.push(log_probs[t : t + 1]):
            assert segment.end_frame <= t + 1 - config.lookahead_frames  # nothing newer than the look-ahead is final
            final_end = segment.end_frame
        assert decoder.final == max(0, t + 1 - config.lookahead_frames)
    assert final_end > 150


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), lookahead=st.sampled_from([0, 2, 5, 10]), min_frames=st.sampled_from([2, 4]))
def test_final_labels_are_one_path_of_the_phone_loop(table, seed, lookahead, min_frames):
    """Each final label continues the path the earlier ones took, so no phone is shorter than min_frames
    (the first may be the silence a stream starts in, the last may end with the stream); labels taken from
    different best paths used to leave one- and two-frame phones on unsure posteriors."""
    config = DecoderConfig(lookahead_frames=lookahead, min_frames=min_frames)
    segments = decode(random_log_probs(300, seed), table, config)
    first, inner = segments[0], segments[1:-1]
    assert first.phone == SIL or first.frames >= min_frames
    assert [s.frames for s in inner if s.frames < min_frames] == []


def test_clear_posteriors_decode_to_their_phones_and_a_one_frame_flicker_is_absorbed(table):
    labels = [SIL] * 10 + [K] * 8 + [AE] * 12 + [T] * 6 + [SIL] * 10
    labels[22] = T  # one frame of T inside AE
    log_probs = np.full((len(labels), len(PHONES)), np.log(0.02 / (len(PHONES) - 1)))
    log_probs[np.arange(len(labels)), labels] = np.log(0.98)
    phones = [PHONES[s.phone] for s in decode(log_probs, table)]
    assert phones == ["sil", "K", "AE", "T", "sil"]


@pytest.mark.parametrize("seed", range(8))
def test_a_stream_starts_as_if_after_silence(table, seed):
    """Audio that starts with a little silence and then speech decodes as it does after a long silence (the
    decoder's half of "prepending silence changes nothing but the times"): the first 20 ms of silence stay
    silence and the first phone starts where it does, not pushed back by a silence that had to last min_frames."""
    rng = np.random.default_rng(seed)
    log_probs = random_log_probs(80, seed)
    first = int(rng.integers(1, len(PHONES)))
    for frames, phone in ((slice(0, 2), SIL), (slice(2, 8), first)):
        log_probs[frames] = np.log(0.05 / (len(PHONES) - 1))
        log_probs[frames, phone] = np.log(0.95)
    silence = np.full((30, len(PHONES)), np.log(0.001 / (len(PHONES) - 1)))
    silence[:, SIL] = np.log(0.999)
    alone = decode(log_probs, table)
    after = decode(np.concatenate([silence, log_probs]), table)
    assert (alone[0].phone, alone[0].end_frame, alone[1].phone, alone[1].start_frame) == (SIL, 2, first, 2)
    assert [(s.start_frame + 30, s.end_frame + 30, s.phone) for s in alone[1:]] == [
        (s.start_frame, s.end_frame, s.phone) for s in after[1:]]


def test_the_bigram_is_built_exactly_from_a_tiny_lexicon():
    pronunciations = {"cat": ["K", "AE1", "T"], "tack": ["T", "AE1", "K"]}
    weights = {"cat": 0.75, "tack": 0.25}
    counts = bigram_counts(pronunciations, weights, pause=0.2)
    expected = np.zeros_like(counts)
    first = {K: 0.75, T: 0.25}  # first phones, by word weight
    expected[K, AE] += 0.75
    expected[AE, T] += 0.75
    expected[T, AE] += 0.25
    expected[AE, K] += 0.25
    for last, weight in ((T, 0.75), (K, 0.25)):  # word ends: pause, or run into the next word
        expected[last, SIL] += weight * 0.2
        for phone, share in first.items():
            expected[SIL, phone] += weight * 0.2 * share
            if phone != last:  # a repeat (T T) merges into one phone: not counted
                expected[last, phone] += weight * 0.8 * share
    assert np.allclose(counts, expected, atol=1e-12)
    table = np.exp(log_bigram(counts, smoothing=0.0))
    assert table[K, AE] == pytest.approx(0.75 / (0.75 + 0.25 * 0.2 + 0.25 * 0.8 * 0.25))
    assert np.allclose(table[[K, AE, T, SIL]].sum(1), 1.0)


def test_new_segmenter_names_its_choices():
    assert isinstance(new_segmenter("bigram", list(PHONES)), PhoneDecoder)
    with pytest.raises(ValueError, match="bigram, hysteresis"):
        new_segmenter("viterbi", list(PHONES))
