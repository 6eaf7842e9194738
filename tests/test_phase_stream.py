"""The kit's PhaseStream (`speechattn align --phases`): each frame's posteriors averaged over shifts of the audio
by whole hops within the encoder's step, equal to the same audio streamed plainly after that many hops of silence,
the silence's rows dropped; one phase is a plain Stream exactly; bad counts are refused in one line."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp

from speechattn.audio import HOP_SAMPLES, speechlike_signal
from speechattn_export.stream_client import PhaseStream, StreamingModel

from conftest import random_model, tiny_config


@pytest.fixture(scope="module", params=[False, True], ids=["starts-empty", "starts-after-silence"])
def s4_model(request, tmp_path_factory):
    """A tiny random model whose encoder steps 4 frames a position (as the bundled one)."""
    from speechattn.model.export import export_onnx

    config = tiny_config(frame_subsampling=4, chunk_frames_choices=(4, 8), default_chunk_frames=4,
                         left_context_frames=8, primed_start=request.param)
    path = tmp_path_factory.mktemp("phases") / "s4.onnx"
    export_onnx(random_model(config, seed=3), path)
    return StreamingModel(path, num_threads=1)


def plain(model, audio, chunk, head=np.zeros(0, np.float32)):
    """The plain stream's rows of `audio` heard after `head` (its rows dropped)."""
    stream = model.new_stream(chunk)
    skip = len(head) // HOP_SAMPLES
    rows = np.concatenate([stream.push(np.concatenate([head, audio])).log_probs, stream.finish().log_probs])
    return rows[skip:]


def pushed(stream, audio, sizes=(1234, 160, 7, 5000)):
    out, at = [], 0
    for size in sizes:
        out.append(stream.push(audio[at:at + size]))
        at += size
    out += [stream.push(audio[at:]), stream.finish()]
    indices = np.concatenate([f.frame_indices for f in out])
    assert (indices == np.arange(len(indices))).all()  # every frame once, in order
    return np.concatenate([f.log_probs for f in out])


def test_one_phase_is_the_plain_stream_exactly(s4_model):
    audio = speechlike_signal(1.3, seed=5)
    assert (pushed(PhaseStream(s4_model, 8, 1), audio) == plain(s4_model, audio, 8)).all()


@pytest.mark.parametrize("phases, shifts", [(2, (0, 2)), (4, (0, 1, 2, 3))])
def test_the_phases_are_the_audio_after_that_much_silence_averaged(s4_model, phases, shifts):
    audio = speechlike_signal(1.3, seed=6)
    stream = PhaseStream(s4_model, 8, phases)
    assert tuple(stream.shifts) == shifts
    got = pushed(stream, audio)
    each = [plain(s4_model, audio, 8, np.zeros(k * HOP_SAMPLES, np.float32)) for k in shifts]
    assert all(len(rows) == len(got) for rows in each)  # every phase labels the same frames
    expected = logsumexp(np.stack(each).astype(np.float64), axis=0) - np.log(len(shifts))
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert not np.allclose(each[0], each[-1], atol=1e-3)  # the phases differ: the average is not one of them
    np.testing.assert_allclose(logsumexp(got, axis=1), 0.0, atol=1e-5)  # still a distribution a frame


def test_a_pre_roll_primes_every_phase(s4_model):
    """A file model's pre-roll (Stream.prime) comes before each phase's own silence."""
    audio, head = speechlike_signal(1.0, seed=7), speechlike_signal(0.3, seed=8)[: 30 * HOP_SAMPLES]
    stream = PhaseStream(s4_model, 4, 2)
    stream.prime(head)
    got = pushed(stream, audio, sizes=(999,))
    each = [plain(s4_model, audio, 4, np.concatenate([head, np.zeros(k * HOP_SAMPLES, np.float32)])) for k in (0, 2)]
    np.testing.assert_allclose(got, logsumexp(np.stack(each), axis=0) - np.log(2), atol=1e-5)
    with pytest.raises(RuntimeError, match="before the stream's first push"):
        stream.prime(head)


@pytest.mark.parametrize("phases", [0, 3, 5, -1, True, 2.0, "2", 10 ** 30])
def test_a_count_that_does_not_divide_the_encoder_step_is_refused(s4_model, phases):
    """Evenly spaced shifts only: 3 phases of a 4-frame step would be 0, 1, 2 frames (or not whole frames)."""
    assert s4_model.phase_counts == (1, 2, 4)
    with pytest.raises(ValueError, match=r"^phases must be 1 or 2 or 4 for this model \(the counts that divide its "
                                         r"encoder's step of 4 frames evenly\), not '.{1,20}'$"):
        PhaseStream(s4_model, 4, phases)


def test_a_model_with_one_frame_a_position_has_one_phase(tiny_onnx):
    model = StreamingModel(tiny_onnx, num_threads=1)
    assert model.frame_subsampling == 1
    assert model.phase_counts == (1,)
    with pytest.raises(ValueError, match="phases must be 1 for this model"):
        PhaseStream(model, 4, 2)


def test_the_model_opens_a_phase_stream_for_one_stream_only(s4_model):
    assert isinstance(s4_model.new_stream(4, phases=2), PhaseStream)
    assert not isinstance(s4_model.new_stream(4), PhaseStream)
    with pytest.raises(ValueError, match="batch_size 1"):
        s4_model.new_stream(4, batch_size=2, phases=2)
    with pytest.raises(ValueError, match="phases must be 1 or 2 or 4"):
        s4_model.new_stream(4, phases=True)
