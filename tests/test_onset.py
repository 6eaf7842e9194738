"""The start of a stream: a model with primed_start begins every stream from the caches a long silence leaves, so
silence prepended to the audio (whole chunks) changes nothing but the times, in torch and in the ONNX file, for
every chunk size, with an output delay, frame subsampling and the convolution module; streaming still equals
`tag` for any chunking; a stream joining a batch mid-way starts primed; the caches follow the weights through
checkpoints and training; models without the setting start from an empty cache as before."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import random_model, streamed, tiny_config
from speechattn.audio import HOP_SAMPLES, speechlike_signal
from speechattn.model.encoder import PhoneTagger, load, save_checkpoint
from speechattn.model.export import CACHE_STATES, export_onnx
from speechattn.model.stream import StreamingSession
from speechattn_export.stream_client import StreamingModel

CONFIGS = {
    "10 ms positions, delay 3": dict(output_delay_frames=3),
    "20 ms positions, delay 2, convolution": dict(frame_subsampling=2, chunk_frames_choices=(2, 4, 8),
                                                  default_chunk_frames=4, output_delay_frames=2, conv_kernel=3),
}
TOLERANCE = 1e-5  # the same graph on the same numbers; rounding only


@pytest.fixture(scope="module", params=list(CONFIGS))
def primed(request, tmp_path_factory):
    model = random_model(tiny_config(primed_start=True, **CONFIGS[request.param]), seed=11)
    path = tmp_path_factory.mktemp("primed") / "primed.onnx"
    export_onnx(model, path)
    return model, StreamingModel(path)


def tagged(model: PhoneTagger, audio: np.ndarray, chunk_frames: int) -> np.ndarray:
    frames = -(-len(audio) // HOP_SAMPLES)
    with torch.no_grad():
        return model.tag(torch.from_numpy(audio)[None], torch.tensor([frames]), chunk_frames)[0].numpy()


def test_prepending_silence_changes_nothing_but_the_times(primed):
    model, onnx_model = primed
    assert onnx_model.metadata["stream_start"] == "silence"
    audio = speechlike_signal(0.9, seed=12)
    for chunk in model.config.chunk_frames_choices:
        alone, _ = streamed(onnx_model, audio, chunk)
        alone_torch = tagged(model, audio, chunk)
        for chunks_of_silence in (1, 3, 40):
            shift = chunks_of_silence * chunk  # frames
            later = np.concatenate([np.zeros(shift * HOP_SAMPLES, np.float32), audio])
            log_probs, indices = streamed(onnx_model, later, chunk, [len(later) // 3])
            assert np.array_equal(indices, np.arange(len(alone) + shift))  # the same frames, `shift` hops later
            assert np.abs(log_probs[shift:] - alone).max() <= TOLERANCE, (chunk, chunks_of_silence)
            assert np.abs(tagged(model, later, chunk)[shift:] - alone_torch).max() <= TOLERANCE


def test_without_priming_the_first_frames_do_depend_on_what_came_before():
    """The property above is the priming's doing: the same model with an empty start gives other outputs."""
    empty = random_model(tiny_config(output_delay_frames=3), seed=11)
    audio = speechlike_signal(0.9, seed=12)
    later = np.concatenate([np.zeros(40 * HOP_SAMPLES, np.float32), audio])
    assert np.abs(tagged(empty, later, 4)[40:] - tagged(empty, audio, 4)).max() > 0.1


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seconds=st.floats(0.02, 1.2), sizes=st.lists(st.integers(0, 3000), max_size=10), data=st.data())
def test_a_primed_stream_with_any_chunking_equals_tag_on_the_whole_audio(primed, seconds, sizes, data):
    model, onnx_model = primed
    chunk = data.draw(st.sampled_from(model.config.chunk_frames_choices))
    audio = speechlike_signal(seconds, seed=13)
    reference = tagged(model, audio, chunk)
    log_probs, indices = streamed(onnx_model, audio, chunk, sizes)
    assert log_probs.shape == reference.shape and np.array_equal(indices, np.arange(len(reference)))
    assert np.abs(log_probs - reference).max() <= 1e-4  # fp32 graph against torch, as in test_export


def test_a_stream_joining_a_batch_midway_starts_primed(primed):
    _, onnx_model = primed
    first, second = speechlike_signal(1.0, seed=14), speechlike_signal(0.6, seed=15)
    streams = onnx_model.new_stream_set(4)
    streams.add("first")
    streams.push("first", first[:4000])
    out = {"first": [], "second": []}
    for key, frames in streams.step().items():
        out[key].append(frames.log_probs)
    streams.add("second")
    streams.push("first", first[4000:])
    streams.push("second", second)
    for key, frames in streams.step().items():
        out[key].append(frames.log_probs)
    for key, audio in (("first", first), ("second", second)):
        out[key].append(streams.remove(key).log_probs)
        alone, _ = streamed(onnx_model, audio, 4)
        assert np.abs(np.concatenate(out[key]) - alone).max() <= TOLERANCE, key


def test_a_stream_starts_from_zero_caches_with_nothing_substituted(primed):
    """The caches are held less silence's (PhoneTagger.prime: a long silence's positions are all alike), so a
    stream's zero caches are the caches a long silence leaves: the graph has no If and no Where on the caches (an If
    copied every cache on every call), each cache's one reader is the Concat with the new positions, and
    cached_frames is read only to count.  The tests above hold the outputs to forward's, which starts from the
    silence caches themselves."""
    import onnx

    _, onnx_model = primed
    graph = onnx.load(onnx_model.path).graph
    caches = {i.name for i in graph.input if i.name.startswith(CACHE_STATES)}  # kv_cache_0, .., conv_cache_0, ..
    assert caches and all(name[-1].isdigit() for name in caches)
    assert "If" not in {n.op_type for n in graph.node}
    assert not [n for n in graph.node if n.op_type == "Where" and caches & set(n.input)]
    for name in caches:
        assert [n.op_type for n in graph.node if name in n.input] == ["Concat"], name
    (counter,) = [n for n in graph.node if "cached_frames" in n.input]
    assert counter.op_type == "Add"


def test_a_long_silence_leaves_zero_caches(primed):
    """What the caches hold is relative to silence's: a stream of digital silence keeps them at zero (to float
    rounding), and speech does not."""
    model, onnx_model = primed
    chunk = model.config.default_chunk_frames
    for audio, silent in ((np.zeros(48 * HOP_SAMPLES, np.float32), True), (speechlike_signal(0.5, seed=18), False)):
        state = onnx_model.initial_state(1)
        _, state = onnx_model.run(audio[None], chunk, False, state)
        largest = max(float(np.abs(value).max()) for name, value in state.items() if name.startswith(CACHE_STATES))
        assert (largest <= 1e-4) == silent, largest


def test_a_primed_graph_hides_no_key(primed):
    """Primed, every cache slot holds a position from the first call on (silence's, then the stream's), and a
    flush's padding is seen as forward sees what follows an item's end: the attention has no mask to compute.  The
    tests above hold the outputs to forward's at every chunk size, flushes included."""
    import onnx

    _, onnx_model = primed
    graph = onnx.load(onnx_model.path).graph
    attention = [n for n in graph.node if n.op_type == "MultiHeadAttention"]
    assert attention and all(len(n.input) < 5 or not n.input[4] for n in attention)  # no key_padding_mask


def test_torch_streaming_starts_primed_as_forward_does(primed):
    model, _ = primed
    audio = torch.from_numpy(speechlike_signal(0.7, seed=16))[None]
    chunk = model.config.default_chunk_frames
    session = StreamingSession(model, chunk)
    pieces = [session.push(audio[:, :1234]), session.push(audio[:, 1234:], final=True)]
    frames = -(-audio.shape[1] // HOP_SAMPLES)
    with torch.no_grad():
        reference = model(model.frontend(audio), torch.tensor([frames]), chunk)
    assert torch.allclose(torch.cat(pieces, 1), reference, atol=TOLERANCE)


def test_the_caches_follow_the_weights_through_a_checkpoint(tmp_path):
    model = random_model(tiny_config(primed_start=True), seed=17)
    save_checkpoint(model, tmp_path / "m.pt")
    loaded = load(tmp_path / "m.pt")
    assert loaded.primed and torch.equal(loaded.primed_kv, model.primed_kv)
    assert torch.equal(loaded.silence_kv, model.silence_kv)
    assert "primed_kv" not in loaded.state_dict() and "silence_kv" not in loaded.state_dict()  # derived, never saved: old checkpoints load as before
    with torch.no_grad():
        loaded.classifier.weight.mul_(1.5)
        loaded.layers[0].attention.relative_bias.add_(0.5)
        loaded.layers[0].attention.qkv.bias.add_(0.5)  # what silence's keys and values are made of
    loaded.prime()
    assert not torch.allclose(loaded.primed_kv, model.primed_kv)  # new weights, new silence caches
    assert not torch.allclose(loaded.silence_kv, model.silence_kv)


def test_models_without_the_setting_start_empty(tiny_onnx, tiny_model):
    assert not tiny_model.primed
    assert StreamingModel(tiny_onnx).metadata["stream_start"] == "empty"
