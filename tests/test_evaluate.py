"""Evaluation numbers on fixtures whose answers are known by hand."""

from __future__ import annotations

import numpy as np
import pytest

from speechattn.training.evaluate import Scores, phone_sequence
from speechattn.phones import IGNORE, PHONE_TO_INDEX

from test_segments import one_hot_log_probs

P = PHONE_TO_INDEX


def labels_of(*runs):
    return np.concatenate([np.full(n, P[name] if name != "·" else IGNORE) for name, n in runs])


def test_phone_sequence_merges_repeats_and_drops_silence_and_ignored():
    labels = labels_of(("sil", 3), ("K", 2), ("K", 2), ("AE", 4), ("sil", 2), ("AE", 3), ("·", 2), ("T", 3))
    assert phone_sequence(labels) == [P["K"], P["AE"], P["AE"], P["T"]]


def test_frame_accuracy_and_per_on_a_known_answer():
    reference = labels_of(("sil", 10), ("K", 6), ("AE", 10), ("T", 6), ("sil", 10))  # K AE T
    hypothesis = labels_of(("sil", 10), ("G", 6), ("AE", 13), ("T", 3), ("sil", 10))  # G AE T
    score = Scores(chunk_frames=8)
    score.add(reference, one_hot_log_probs(hypothesis), decoder="hysteresis")
    assert score.frames == 42
    assert score.frame_accuracy == pytest.approx((10 + 10 + 3 + 10) / 42)  # G for K, AE for 3 frames of T
    assert score.edits == 1 and score.reference_phones == 3  # one substitution
    assert score.phone_error_rate == pytest.approx(1 / 3)
    accuracy = score.per_phone_accuracy()
    assert accuracy["K"] == 0.0 and accuracy["T"] == pytest.approx(3 / 6) and accuracy["sil"] == 1.0
    assert accuracy["ZH"] is None  # no reference frames
    assert score.confusion[P["K"], P["G"]] == 6
    shorter = Scores(chunk_frames=8)  # a 2-frame T is below the segmenter's 3: deleted
    shorter.add(reference, one_hot_log_probs(labels_of(("sil", 10), ("G", 6), ("AE", 14), ("T", 2), ("sil", 10))),
                decoder="hysteresis")
    assert shorter.edits == 2


def test_ignored_frames_count_nowhere_and_flickers_are_not_insertions():
    reference = labels_of(("·", 5), ("S", 10), ("IY", 10))
    hypothesis = labels_of(("Z", 5), ("S", 4), ("F", 1), ("S", 5), ("IY", 10))  # one-frame F flicker
    score = Scores(chunk_frames=None)
    score.add(reference, one_hot_log_probs(hypothesis), decoder="hysteresis")
    assert score.frames == 20 and score.frame_accuracy == pytest.approx(19 / 20)  # frames: the argmax
    assert score.edits == 0  # the segmenter absorbs the flicker; the ignored Z frames produce no phone
    raw = Scores(chunk_frames=None)
    raw.add(reference, one_hot_log_probs(hypothesis), min_frames=1, decoder="hysteresis")
    assert raw.edits == 2  # without smoothing: F and the second S are insertions
    decoded = Scores(chunk_frames=None)
    decoded.add(reference, one_hot_log_probs(hypothesis))  # the bigram decoder: frames from the decoded path
    assert decoded.frame_accuracy == 1.0 and decoded.edits == 0  # the flicker is gone from frames and phones


def test_scores_add_up_over_utterances():
    score = Scores(chunk_frames=4)
    reference = labels_of(("sil", 4), ("AA", 8), ("sil", 4))
    score.add(reference, one_hot_log_probs(reference))
    score.add(reference, one_hot_log_probs(labels_of(("sil", 16))))  # the phone deleted
    assert score.utterances == 2 and score.reference_phones == 2 and score.edits == 1
    assert score.frame_accuracy == pytest.approx((16 + 8) / 32)
    assert score.summary()["per"] == 0.5


def test_an_onnx_model_is_scored_over_the_phases_as_transcribe_reads_a_file():
    """speechattn eval --phases N streams each utterance as transcribe --phases N does: its pre-roll, then the kit's
    PhaseStream; N = 1 is the plain stream."""
    import numpy as np

    from speechattn.audio import speechlike_signal
    from speechattn.training.evaluate import streamed_log_probs
    from speechattn_export import load_model
    from speechattn_export.stream_client import PhaseStream, file_preroll

    model, audio = load_model("file-int8"), speechlike_signal(2.0, seed=4)
    stream = PhaseStream(model, 400, 2)
    stream.prime(file_preroll(model, audio))
    expected = np.concatenate([stream.push(audio).log_probs, stream.finish().log_probs])
    assert (streamed_log_probs(model, audio, 400, 2) == expected).all()
    plain = model.new_stream(400)
    plain.prime(file_preroll(model, audio))
    single = np.concatenate([plain.push(audio).log_probs, plain.finish().log_probs])
    assert (streamed_log_probs(model, audio, 400) == single).all()
    assert not np.allclose(single, expected, atol=1e-3)
