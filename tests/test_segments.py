"""The segmenter: flickers stay inside the phone they interrupt, segments tile the stream, and
pushing frames in any pieces gives the same segments as one push."""

from __future__ import annotations

import numpy as np
import pytest

from speechattn_export.segments import Segmenter, segment, segment_labels


def one_hot_log_probs(labels, classes=40, confidence=0.9):
    labels = np.asarray(labels)
    probs = np.full((len(labels), classes), (1 - confidence) / (classes - 1))
    probs[np.arange(len(labels)), labels] = confidence
    return np.log(probs)


def test_flickers_shorter_than_min_frames_are_absorbed():
    labels = [1] * 10 + [2] * 2 + [1] * 10 + [3] * 3 + [1] * 5
    segments = segment(one_hot_log_probs(labels), min_frames=3)
    assert [(s.start_frame, s.end_frame, s.phone) for s in segments] == [(0, 22, 1), (22, 25, 3), (25, 30, 1)]
    # the absorbed flicker lowers the confidence: 2 of 22 frames give phone 1 only 0.1 / 39
    assert segments[0].confidence == pytest.approx((20 * 0.9 + 2 * 0.1 / 39) / 22)
    assert segments[1].confidence == pytest.approx(0.9)


def test_min_frames_one_keeps_every_argmax_run():
    labels = [0, 0, 5, 0, 7, 7]
    segments = segment(one_hot_log_probs(labels), min_frames=1)
    assert [(s.start_frame, s.end_frame, s.phone) for s in segments] == [(0, 2, 0), (2, 3, 5), (3, 4, 0), (4, 6, 7)]


@pytest.mark.parametrize("min_frames", [1, 2, 3, 5])
def test_segments_tile_the_stream_and_pieces_do_not_matter(min_frames):
    rng = np.random.default_rng(min_frames)
    labels = np.repeat(rng.integers(0, 40, 60), rng.integers(1, 8, 60))
    log_probs = one_hot_log_probs(labels, confidence=0.6) + rng.normal(0, 0.3, (len(labels), 40))
    whole = segment(log_probs, min_frames)
    assert whole[0].start_frame == 0 and whole[-1].end_frame == len(labels)
    assert all(a.end_frame == b.start_frame and a.phone != b.phone for a, b in zip(whole, whole[1:]))
    assert all(s.frames >= min_frames for s in whole[1:-1])
    segmenter, pieces, start = Segmenter(min_frames), [], 0
    while start < len(labels):
        size = int(rng.integers(0, 9))
        pieces += segmenter.push(log_probs[start : start + size])
        start += size
    assert pieces + segmenter.finish() == whole
    assert len(segment_labels(whole, len(labels))) == len(labels)


def test_an_empty_stream_has_no_segments():
    segmenter = Segmenter()
    assert segmenter.push(np.zeros((0, 40))) == [] and segmenter.finish() == []
