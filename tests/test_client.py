"""The portable client: bad input gets a clear error or a documented sanitisation; an hour streams flat."""

from __future__ import annotations

import json
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from speechattn.audio import HOP_SAMPLES, speechlike_signal
from speechattn_export.stream_client import StreamingModel


@pytest.fixture(scope="module")
def model(tiny_onnx) -> StreamingModel:
    return StreamingModel(tiny_onnx, num_threads=1)


def run_whole(model, audio, chunk_frames=4):
    stream = model.new_stream(chunk_frames)
    return np.concatenate([stream.push(audio).log_probs, stream.finish().log_probs])


def test_wrong_dtype_is_a_clear_error(model):
    stream = model.new_stream()
    with pytest.raises(TypeError, match="float32"):
        stream.push(np.zeros(160, dtype=np.int32))
    with pytest.raises(TypeError, match="float32"):
        stream.push(np.zeros(160, dtype=np.complex64))


def test_int16_pcm_is_read_as_scaled_float(model):
    audio = speechlike_signal(0.5, seed=1)
    pcm = np.round(audio * 32767).astype(np.int16)
    np.testing.assert_allclose(run_whole(model, pcm), run_whole(model, pcm.astype(np.float32) / 32768), atol=1e-6)


def test_wrong_shape_is_a_clear_error(model):
    with pytest.raises(ValueError, match=r"shape \(samples,\) or \(1, samples\)"):
        model.new_stream().push(np.zeros((2, 160), np.float32))
    with pytest.raises(ValueError, match="shape"):
        model.new_stream().push(np.zeros((1, 1, 160), np.float32))
    with pytest.raises(ValueError, match=r"shape \(3, samples\)"):
        model.new_stream(batch_size=3).push(np.zeros(160, np.float32))


def test_wrong_sample_rate_is_a_clear_error(model):
    with pytest.raises(ValueError, match="44100 Hz but the model takes 16000 Hz: resample"):
        model.new_stream().push(np.zeros(441, np.float32), sample_rate=44100)


def test_integer_scaled_float_audio_is_a_clear_error(model):
    with pytest.raises(ValueError, match="divide by 32768"):
        model.new_stream().push(np.full(160, 1200.0, np.float32))


def test_nan_and_inf_are_read_as_silence_with_a_warning(model):
    audio = speechlike_signal(0.5, seed=2)
    broken = audio.copy()
    broken[500:700] = np.nan
    broken[2000] = np.inf
    cleaned = np.where(np.isfinite(broken), broken, 0).astype(np.float32)
    stream = model.new_stream(4)
    with pytest.warns(UserWarning, match="201 NaN/Inf samples were read as silence"):
        out = np.concatenate([stream.push(broken).log_probs, stream.finish().log_probs])
    assert stream.nonfinite_samples == 201
    assert np.isfinite(out).all()
    np.testing.assert_array_equal(out, run_whole(model, cleaned))


def test_the_graph_itself_never_returns_nan(tiny_onnx):
    """An app that bypasses the client and feeds NaN/Inf straight into the graph still gets finite output."""
    session = ort.InferenceSession(str(tiny_onnx))
    meta = session.get_modelmeta().custom_metadata_map
    states = json.loads(meta["states"])
    feeds = {s["name"]: np.zeros([1 if d == "batch" else d for d in s["shape"]], s["dtype"]) for s in states}
    audio = np.full((1, 8 * HOP_SAMPLES), np.nan, np.float32)
    audio[0, ::3] = np.inf
    out = session.run(None, {"audio": audio, "chunk_frames": np.array(4), "flush": np.array(1), **feeds})
    assert all(np.isfinite(o).all() for o in out)


def test_empty_and_tiny_input(model):
    stream = model.new_stream(4)
    assert len(stream.push(np.zeros(0, np.float32))) == 0
    assert len(stream.push(np.zeros(37, np.float32))) == 0  # less than a hop: waits
    tail = stream.finish()
    assert len(tail) == 1 and np.isfinite(tail.log_probs).all()  # the partial hop is padded, not lost
    assert len(model.new_stream().finish()) == 0  # a stream that never got audio ends cleanly
    with pytest.raises(RuntimeError, match="finished"):
        stream.push(np.zeros(160, np.float32))


def test_zero_sample_graph_calls_work_for_every_frontend(tmp_path):
    """A flush with nothing pending is a zero-sample call; every frontend handles it (onnxruntime edge cases)."""
    from conftest import random_model, tiny_config
    from speechattn.model.export import export_onnx
    from speechattn.model.features import FrontendConfig

    for frontend in (FrontendConfig(), FrontendConfig(kind="mfcc", num_mel_bins=23, delta_order=2)):
        path = tmp_path / f"{frontend.kind}.onnx"
        export_onnx(random_model(tiny_config(frontend=frontend)), path)
        stream = StreamingModel(path).new_stream(4)
        assert len(stream.push(np.zeros(8 * HOP_SAMPLES, np.float32))) == 8
        assert len(stream.finish()) == 0


def test_unknown_chunk_size_and_foreign_models_are_clear_errors(model, tmp_path):
    with pytest.raises(ValueError, match=r"chunk_frames 5 is not one the model serves \(it was trained for \[1"):
        model.new_stream(5)
    plain = onnx.helper.make_model(onnx.helper.make_graph(
        [onnx.helper.make_node("Identity", ["x"], ["y"])], "g",
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1])],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1])]),
        ir_version=9, opset_imports=[onnx.helper.make_opsetid("", 17)])
    onnx.save(plain, tmp_path / "plain.onnx")
    with pytest.raises(ValueError, match="not a speechattn streaming model"):
        StreamingModel(tmp_path / "plain.onnx")


def _rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


@pytest.mark.slow
def test_an_hour_streams_with_flat_memory_and_no_drift(model):
    """3600 one-second pushes.  Memory after 60 min is what it was after 10; the last outputs equal those of
    a fresh stream started one receptive field (plus margin) earlier, so nothing accumulates over time."""
    chunk = 4
    meta = model.metadata
    receptive_field = int(meta["receptive_field_frames"]) + 3  # + the frontend's 240-sample window overlap
    base = speechlike_signal(30.0, seed=8)
    rng = np.random.default_rng(0)
    stream = model.new_stream(chunk)
    recent_audio, recent_out = [], []
    rss_at_10_min = None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing may be sanitised along the way
        for second in range(3600):
            offset = (second * 7919) % 29 * 16000  # vary the content: a different second of the base each time
            piece = (base[offset : offset + 16000] * rng.uniform(0.3, 1.0)
                     + rng.normal(0, 1e-3, 16000)).astype(np.float32)
            out = stream.push(piece).log_probs
            recent_audio = (recent_audio + [piece])[-3:]
            recent_out = (recent_out + [out])[-3:]
            if second == 600:
                rss_at_10_min = _rss_mb()
    growth = _rss_mb() - rss_at_10_min
    assert growth < 8.0, f"memory grew {growth:.1f} MB between minute 10 and minute 60"
    assert stream.frames_emitted == 360000
    assert {k: v.shape for k, v in stream.state.items()} == {
        k: v.shape for k, v in model.initial_state(1).items() if k != "pending_features"
    } | {"pending_features": stream.state["pending_features"].shape}

    # A fresh stream started `start` frames before the end (chunk aligned, beyond the receptive field).
    tail_audio = np.concatenate(recent_audio)  # the last 3 s = 300 frames
    tail_out = np.concatenate(recent_out)
    start = 300 - (receptive_field + 2 * chunk) // chunk * chunk - chunk
    fresh = model.new_stream(chunk).push(tail_audio[start * HOP_SAMPLES :]).log_probs
    compare = 2 * chunk  # the last two chunks
    assert np.abs(fresh[-compare:] - tail_out[-compare:]).max() <= 1e-4
    assert np.array_equal(fresh[-compare:].argmax(-1), tail_out[-compare:].argmax(-1))


@pytest.mark.parametrize("max_batch, bound", [(None, False), (2, False), (None, True), (2, True)])
def test_a_stream_set_gives_every_stream_what_it_gets_alone(model, max_batch, bound):
    """Streams join and leave at different times and push pieces of random size; stepping them together in
    one graph call per chunk changes nothing for any of them.  `bound`: the calls through I/O binding with the
    groups' state kept as onnxruntime's values (a GPU's way; here the CPU's memory), broken up into streams as they
    leave."""
    rng = np.random.default_rng(5)
    audios = {f"s{i}": speechlike_signal(float(rng.uniform(0.3, 1.5)), seed=30 + i) for i in range(5)}
    joins = {"s0": 0, "s1": 0, "s2": 3, "s3": 7, "s4": 12}  # the round each stream joins in
    streams = model.new_stream_set(4, max_batch=max_batch, bound=bound)
    assert streams.bound is bound
    positions, got = {}, {key: [] for key in audios}
    for round_number in range(200):
        for key, when in joins.items():
            if when == round_number:
                streams.add(key)
                positions[key] = 0
        for key in list(positions):
            size = int(rng.integers(0, 1500))
            streams.push(key, audios[key][positions[key] : positions[key] + size])
            positions[key] += size
        for key, frames in streams.step().items():
            got[key].append(frames.log_probs)
        for key in [k for k in positions if positions[k] >= len(audios[k])]:
            got[key].append(streams.remove(key).log_probs)
            del positions[key]
        if not positions and round_number > max(joins.values()):
            break
    assert len(streams) == 0
    for key, audio in audios.items():
        together = np.concatenate(got[key])
        alone = run_whole(model, audio)
        assert together.shape == alone.shape, key
        assert np.abs(together - alone).max() <= 1e-5, key


def test_a_bound_call_gives_exactly_what_a_plain_call_gives_and_keeps_the_state_as_onnxruntime_values(model):
    """run_bound (I/O binding) against run, call after call with each one's own state fed back: the same
    log-probabilities and states to the bit; its state is OrtValues (where the graph runs), numpy only through
    host_state, and it takes a numpy state too (a stream joining a group)."""
    audio = np.stack([speechlike_signal(1.2, seed=s) for s in (1, 2, 3)]).astype(np.float32)
    step = 4 * HOP_SAMPLES
    assert model.device == "cpu"
    plain = bound = model.initial_state(3)
    for begin in range(0, audio.shape[1] - step + 1, step):
        expected, plain = model.run(audio[:, begin:begin + step], 4, False, plain)
        got, bound = model.run_bound(audio[:, begin:begin + step], 4, False, bound)
        assert all(isinstance(value, ort.OrtValue) for value in bound.values())
        assert np.array_equal(got, expected)
        assert all(np.array_equal(value, plain[name]) for name, value in model.host_state(bound).items())
    expected, _ = model.run(audio[:, :3 * HOP_SAMPLES], 4, True, plain)
    got, _ = model.run_bound(audio[:, :3 * HOP_SAMPLES], 4, True, model.host_state(bound))
    assert got.shape[1] > 0 and np.array_equal(got, expected)


def test_a_provider_this_onnxruntime_lacks_is_one_line_naming_what_it_offers():
    """onnxruntime alone warns and runs on the CPU when asked for a provider it lacks; the client says so instead."""
    from speechattn_export.stream_client import providers_for

    assert providers_for("cpu") == ["CPUExecutionProvider"]
    with pytest.raises(ValueError, match="provider 'tpu': one of cpu, cuda"):
        providers_for("tpu")
    if "CUDAExecutionProvider" in ort.get_available_providers():
        pytest.skip("this onnxruntime has CUDA")
    with pytest.raises(ValueError, match=r"has no CUDAExecutionProvider \(it offers .*CPU\): .*onnxruntime-gpu"):
        providers_for("cuda")


def test_a_stream_set_refuses_a_key_twice_and_an_unknown_key(model):
    streams = model.new_stream_set()
    streams.add("a")
    with pytest.raises(KeyError, match="already"):
        streams.add("a")
    with pytest.raises(KeyError):
        streams.push("b", np.zeros(160, dtype=np.float32))


def test_the_readmes_embedding_snippet_runs_as_written_and_gives_what_transcribe_prints(capsys, monkeypatch):
    """The README's Python block, executed as it stands from the clone's root (it reads the bundled 16 kHz sample
    itself, in pieces), prints the segments `speechattn transcribe --format json` prints and the cues of
    --format rhubarb-json, at the live chunk it streams at (--chunk-frames 4; a file's default is the largest)."""
    import ast
    import json
    import re
    from pathlib import Path

    import soundfile as sf

    from speechattn.cli import main

    root = Path(__file__).resolve().parent.parent
    snippet = re.search(r"```python\n(.*?)```", (root / "README.md").read_text(), re.S).group(1)
    sample = root / "speechattn" / "runtime" / "samples" / "this-no-longer-appears-to-be-the-case.wav"
    assert sf.info(sample).samplerate == 16000 and sample.name in snippet
    monkeypatch.chdir(root)
    exec(compile(snippet, "README.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    segments, cues = ast.literal_eval(printed[0]), ast.literal_eval(printed[1])
    assert main(["transcribe", str(sample), "--model", "default-int8", "--format", "json", "--chunk-frames", "4"]) == 0
    assert segments == json.loads(capsys.readouterr().out)["segments"]
    assert main(["transcribe", str(sample), "--model", "default-int8", "--format", "rhubarb-json",
                 "--chunk-frames", "4"]) == 0  # the live chunk the snippet streams at
    rhubarb = json.loads(capsys.readouterr().out)["mouthCues"]
    assert [(round(c["start"], 2), round(c["end"], 2), c["value"]) for c in cues] == \
        [(c["start"], c["end"], c["value"]) for c in rhubarb]
