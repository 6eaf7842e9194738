"""The ONNX file: equals torch through the portable client, describes itself, and refuses to be wrong."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

from conftest import random_model, tiny_config
from speechattn.model import export as export_module
from speechattn.audio import HOP_SAMPLES, speechlike_signal
from speechattn.model.export import ExportError, export_onnx
from speechattn.model.features import FrontendConfig
from speechattn.phones import PHONES
from speechattn.model.stream import offline_log_probs
from speechattn_export.stream_client import StreamingModel

ROOT = Path(__file__).resolve().parent.parent

TOLERANCE = 1e-4


def stream_file(model: StreamingModel, audio: np.ndarray, chunk_frames: int, sizes) -> np.ndarray:
    stream = model.new_stream(chunk_frames)
    outputs, position = [], 0
    for size in sizes:
        outputs.append(stream.push(audio[position : position + size]).log_probs)
        position += size
    outputs.append(stream.push(audio[position:]).log_probs)
    outputs.append(stream.finish().log_probs)
    return np.concatenate(outputs)


def random_sizes(seed: int, count: int, high: int = 3000) -> list[int]:
    return np.random.default_rng(seed).integers(0, high, size=count).tolist()


@pytest.mark.parametrize("chunk_frames", [1, 4, 8])
def test_onnx_through_client_equals_torch_forward(tiny_model, tiny_onnx, chunk_frames):
    audio = speechlike_signal(2.0, seed=11)
    reference = offline_log_probs(tiny_model, torch.from_numpy(audio)[None], chunk_frames)[0].numpy()
    model = StreamingModel(tiny_onnx)
    for sizes in (random_sizes(chunk_frames, 15), [HOP_SAMPLES] * 40, [7] * 30):  # >= 10 chained calls each
        streamed = stream_file(model, audio, chunk_frames, sizes)
        assert streamed.shape == reference.shape
        assert np.abs(streamed - reference).max() <= TOLERANCE
        assert np.array_equal(streamed.argmax(-1), reference.argmax(-1))


def test_mfcc_with_deltas_exports_exactly(tmp_path):
    model = random_model(tiny_config(frontend=FrontendConfig(kind="mfcc", num_mel_bins=23, delta_order=2)), seed=5)
    path = tmp_path / "mfcc.onnx"
    export_onnx(model, path)
    audio = speechlike_signal(1.5, seed=12)
    reference = offline_log_probs(model, torch.from_numpy(audio)[None], 4)[0].numpy()
    streamed = stream_file(StreamingModel(path), audio, 4, random_sizes(1, 12))
    assert np.abs(streamed - reference).max() <= TOLERANCE
    assert np.array_equal(streamed.argmax(-1), reference.argmax(-1))


@pytest.mark.slow
def test_int8_keeps_at_least_99_percent_of_labels(trained_model, tmp_path):
    path = tmp_path / "int8.onnx"
    export_onnx(trained_model, path, int8=True)
    audio = speechlike_signal(8.0, seed=13)  # audio the exporter's own check did not use
    reference = offline_log_probs(trained_model, torch.from_numpy(audio)[None], 4)[0].numpy()
    streamed = stream_file(StreamingModel(path), audio, 4, random_sizes(2, 40))
    assert (streamed.argmax(-1) == reference.argmax(-1)).mean() >= 0.99
    # the weights really are 8-bit: every Linear is a MatMulNBits with uint8 weights; the only MatMuls that read a
    # float constant are the frontend's (FFT stages, mel filters), which stay float by design
    graph = onnx.load(str(path)).graph
    constants = {i.name: i for i in graph.initializer}
    linears = sum(isinstance(m, torch.nn.Linear) for m in trained_model.modules())
    quantized = [n for n in graph.node if n.op_type == "MatMulNBits"]
    assert len(quantized) == linears
    assert all({a.name: a.i for a in n.attribute}["bits"] == 8 for n in quantized)
    assert all(constants[n.input[1]].data_type == onnx.TensorProto.UINT8 for n in quantized)
    float_matmuls = {n.name for n in graph.node if n.op_type == "MatMul" and set(constants).intersection(n.input)}
    assert float_matmuls and float_matmuls <= set(export_module._frontend_nodes(path))
    assert all(len(constants[i].dims) == 2 and constants[i].dims[1] == trained_model.config.frontend.num_mel_bins
               for n in graph.node if n.name in float_matmuls for i in n.input if i in constants)
    assert StreamingModel(path).metadata["quantization"] == "int8-weights"


@pytest.mark.slow
def test_int8_streams_exactly_at_every_chunk_size_and_push_pattern(trained_model, tmp_path):
    """Per-position activation quantization: a frame's integer arithmetic does not depend on what else one call holds."""
    path = tmp_path / "int8.onnx"
    export_onnx(trained_model, path, int8=True)
    model = StreamingModel(path)
    audio = speechlike_signal(3.0, seed=14)
    for chunk in model.allowed_chunk_frames:
        whole = stream_file(model, audio, chunk, [len(audio)])
        for sizes in (random_sizes(3, 1), random_sizes(4, 500), [160] * (len(audio) // 160 + 1)):
            assert np.array_equal(stream_file(model, audio, chunk, sizes), whole), (chunk, sizes[:5])


def test_batched_stream_equals_separate_streams(tiny_onnx):
    model = StreamingModel(tiny_onnx)
    audio = np.stack([speechlike_signal(1.0, seed=s) for s in (1, 2, 3)])
    batched = model.new_stream(4, batch_size=3)
    outputs = [batched.push(audio[:, i : i + 1111]).log_probs for i in range(0, audio.shape[1], 1111)]
    outputs.append(batched.finish().log_probs)
    together = np.concatenate(outputs, axis=1)
    for row in range(3):
        alone = stream_file(model, audio[row], 4, [1111] * 14)
        assert np.abs(together[row] - alone).max() <= TOLERANCE


def test_metadata_describes_every_input_and_output(tiny_onnx, tiny_model):
    meta = ort.InferenceSession(str(tiny_onnx)).get_modelmeta().custom_metadata_map
    for key in ("sample_rate", "hop_samples", "window_samples", "frame_shift_ms", "left_context_frames",
                "allowed_chunk_frames", "default_chunk_frames", "phones", "states", "model_version",
                "receptive_field_frames", "feature_type"):
        assert meta[key], key
    assert meta["phones"].split(",") == list(PHONES)
    assert int(meta["left_context_frames"]) == tiny_model.config.left_context_frames
    graph = onnx.load(str(tiny_onnx)).graph
    states = json.loads(meta["states"])
    named_inputs = set(json.loads(meta["inputs"]).values()) | {s["name"] for s in states}
    named_outputs = set(json.loads(meta["outputs"]).values()) | {s["output"] for s in states}
    assert named_inputs == {i.name for i in graph.input}
    assert named_outputs == {o.name for o in graph.output}
    assert len(graph.initializer) and not any(i.data_location == onnx.TensorProto.EXTERNAL for i in graph.initializer)


def test_every_tensor_the_file_declares_has_a_type(tiny_onnx):
    """Tools that post-process the file (onnxruntime's quantizers, shape inference) refuse an untyped tensor; the
    contrib attention nodes are the ones the exporter cannot type by itself."""
    graph = onnx.load(str(tiny_onnx)).graph
    declared = list(graph.value_info) + list(graph.input) + list(graph.output)
    assert declared and not [v.name for v in declared if v.type.tensor_type.elem_type == onnx.TensorProto.UNDEFINED]
    onnx.checker.check_model(onnx.shape_inference.infer_shapes(onnx.load(str(tiny_onnx))))


def test_a_client_written_from_metadata_alone_runs_the_model(tiny_onnx):
    """No shape, name or size below comes from anywhere but the file's own metadata."""
    session = ort.InferenceSession(str(tiny_onnx))
    meta = session.get_modelmeta().custom_metadata_map
    states = json.loads(meta["states"])
    io = json.loads(meta["inputs"])
    hop = int(meta["hop_samples"])
    chunk = int(meta["default_chunk_frames"])
    state = {s["name"]: np.zeros([1 if d == "batch" else d for d in s["shape"]], s["dtype"]) for s in states}
    audio = speechlike_signal(1.0, seed=21)
    labels = []
    for start in range(0, len(audio), hop * 3):  # three hops per call, not a chunk multiple
        piece = audio[start : start + hop * 3]
        piece = np.pad(piece, (0, (-len(piece)) % hop))[None]
        last = start + hop * 3 >= len(audio)
        feeds = {io["audio"]: piece, io["chunk_frames"]: np.array(chunk), io["flush"]: np.array(int(last)), **state}
        out = session.run(None, feeds)
        names = [o.name for o in session.get_outputs()]
        result = dict(zip(names, out))
        labels += result[json.loads(meta["outputs"])["log_probs"]][0].argmax(-1).tolist()
        state = {s["name"]: result[s["output"]] for s in states}
    reference = stream_file(StreamingModel(tiny_onnx), audio, chunk, [len(audio)]).argmax(-1).tolist()
    assert labels == reference


def test_exporter_refuses_a_graph_that_disagrees(tiny_model, tmp_path, monkeypatch):
    import copy

    real_trace = export_module._trace

    def trace_a_different_model(model, path):
        other = copy.deepcopy(model)
        with torch.no_grad():
            other.classifier.bias[3] += 0.01  # a tiny change, far above the tolerance
        real_trace(other, path)

    monkeypatch.setattr(export_module, "_trace", trace_a_different_model)
    with pytest.raises(ExportError, match="disagrees"):
        export_onnx(tiny_model, tmp_path / "bad.onnx")
    assert list(tmp_path.iterdir()) == []  # nothing written, no temporary left behind


def test_export_rejects_a_chunk_size_the_model_was_not_trained_for(tiny_model, tmp_path):
    with pytest.raises(ExportError, match="not one the model was trained for"):
        export_onnx(tiny_model, tmp_path / "x.onnx", chunk_frames=5)


@pytest.mark.parametrize("subsampling", [2, 4])
def test_subsampled_model_exports_exactly(tmp_path, subsampling):
    model = random_model(tiny_config(frame_subsampling=subsampling, left_context_frames=8,
                                     chunk_frames_choices=(4, 8), default_chunk_frames=4), seed=subsampling)
    path = tmp_path / "sub.onnx"
    export_onnx(model, path)
    audio = speechlike_signal(1.5, seed=13)
    streaming = StreamingModel(path)
    assert streaming.metadata["frame_subsampling"] == str(subsampling)
    for chunk_frames in (4, 8):
        reference = offline_log_probs(model, torch.from_numpy(audio)[None], chunk_frames)[0].numpy()
        for sizes in (random_sizes(subsampling, 12), [HOP_SAMPLES] * 20, [HOP_SAMPLES * 3] * 10):
            streamed = stream_file(streaming, audio, chunk_frames, sizes)
            assert streamed.shape == reference.shape
            assert np.abs(streamed - reference).max() <= TOLERANCE
            assert np.array_equal(streamed.argmax(-1), reference.argmax(-1))


def test_conv_module_exports_with_its_state_and_streams_exactly(tmp_path):
    model = random_model(tiny_config(frame_subsampling=4, conv_kernel=5, left_context_frames=8,
                                     chunk_frames_choices=(4, 8), default_chunk_frames=4), seed=5)
    path = tmp_path / "conv.onnx"
    export_onnx(model, path)
    streaming = StreamingModel(path)
    conv = [s for s in streaming.states if s["name"].startswith("conv_cache")]
    assert [s["name"] for s in conv] == [f"conv_cache_{i}" for i in range(model.config.num_layers)]
    assert all(s["shape"] == ["batch", 4, model.config.model_dim] for s in conv)  # a tensor a layer, batch first
    audio = speechlike_signal(1.5, seed=14)
    for chunk_frames in (4, 8):
        reference = offline_log_probs(model, torch.from_numpy(audio)[None], chunk_frames)[0].numpy()
        for sizes in (random_sizes(5, 12), [HOP_SAMPLES] * 20):
            streamed = stream_file(streaming, audio, chunk_frames, sizes)
            assert streamed.shape == reference.shape
            assert np.abs(streamed - reference).max() <= TOLERANCE
            assert np.array_equal(streamed.argmax(-1), reference.argmax(-1))


@pytest.mark.parametrize("which", ["tiny", "bundled default-int8"])
def test_each_layers_attention_is_one_node_and_its_cache_is_read_where_it_lies(which, tiny_model, tiny_onnx, tmp_path):
    """The graph's shape, which the streaming speed rests on (bench/streaming_speed.py, bench/model_ops.py): one
    com.microsoft MultiHeadAttention per layer and no attention left as small ops (Softmax, Transpose), the FFT as
    matmuls (no DFT operator: onnxruntime's recomputes its twiddle factors on every call), and (contract version 2)
    each layer's keys and values its own state, read by one node (the Concat with the new positions; no If at a
    primed model's stream start: its caches are held less silence's), never split from or stacked with the other
    layers', the new state one Slice of that Concat, the windows' keys and values each one Gather (no Split), head
    first as the attention node takes them (4-D: no transpose inside it)."""
    path = tiny_onnx if which == "tiny" else ROOT / "export/models/default-int8.onnx"
    layers = tiny_model.config.num_layers if which == "tiny" else 6
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    nodes = onnx.load(options.optimized_model_filepath).graph.node
    ops = [node.op_type for node in nodes]
    assert ops.count("MultiHeadAttention") == layers
    assert "Softmax" not in ops and ops.count("Transpose") == 2  # the FFT's, one before each stage
    assert "DFT" not in ops
    caches = {f"kv_cache_{i}": f"kv_cache_{i}" for i in range(layers)}  # layer i's cache as the layer reads it
    assert "If" not in ops  # nor the stream start of a primed model (the bundled one)
    producer = {output: node for node in nodes for output in node.output}
    readers = {}
    for node in nodes:
        for name in node.input:
            readers.setdefault(name, []).append(node)
    for i in range(layers):
        read = readers[caches[f"kv_cache_{i}"]]
        assert [n.op_type for n in read] == ["Concat"], (i, [n.op_type for n in read])
        new_state = producer[f"new_kv_cache_{i}"]
        assert new_state.op_type == "Slice" and new_state.input[0] == read[0].output[0]
    windows = [n for n in nodes if n.op_type == "Gather" and "/attention/Gather" in n.name]
    assert len(windows) == 2 * layers  # per layer: its windows' keys, its windows' values
    shapes = {tuple(d.dim_value or d.dim_param for d in v.type.tensor_type.shape.dim)
              for v in onnx.shape_inference.infer_shapes(onnx.load(options.optimized_model_filepath)).graph.value_info
              if v.name in {n.input[1] for n in nodes if n.op_type == "MultiHeadAttention"}}
    assert shapes and all(len(shape) == 4 for shape in shapes)  # (B * K, H, L + C, Dh)
    assert not any(n.op_type == "Split" and n.input[0] in {w.output[0] for w in windows} for n in nodes)
