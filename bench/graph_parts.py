"""Where one streaming call's time goes: a file's frontend and encoder cut apart and timed alone, beside the whole call.

    python bench/graph_parts.py [MODEL ...] [--chunk-frames C] [--calls 3000]

For each file (a bundled model's name or an ONNX file; default default-int8): the whole graph fed its own state
call after call, the frontend alone (audio and its states in, the normalised features out: every node the feature
normalisation is computed from) and the encoder alone (the features and the encoder's states in, the rest out), each
cut with onnx.utils.extract_model and timed in turn, one onnxruntime thread, p10 and p50 of the calls; then the
attention node alone at the file's sizes, its keys and values (B * K, L + C, D) against (B * K, H, L + C, Dh), which
onnxruntime's MultiHeadAttention takes without transposing them.  Parts do not add up to the whole exactly: each
timed alone pays onnxruntime's per-call cost once.  docs/benchmarks.md, "No stream-start If".
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def session(path_or_bytes):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(path_or_bytes, options, providers=["CPUExecutionProvider"])


def timed(sess, feeds: dict, calls: int) -> tuple[float, float]:
    """p10 and p50 of a call in microseconds, after 100 calls of warm-up."""
    for _ in range(100):
        sess.run(None, feeds)
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        sess.run(None, feeds)
        times.append(time.perf_counter() - started)
    return 1e6 * float(np.percentile(times, 10)), 1e6 * float(np.percentile(times, 50))


def warm_values(path: str, chunk: int) -> dict[str, np.ndarray]:
    """Every tensor of a call 50 calls into a stream of quiet noise (the state filled): graph inputs and the
    frontend's output, by name."""
    import onnx

    model = onnx.load(path)
    features = next(n.output[0] for n in model.graph.node if "model.frontend.feature_std" in n.input)
    model.graph.output.append(onnx.helper.make_tensor_value_info(features, onnx.TensorProto.FLOAT, None))
    sess = session(model.SerializeToString())
    specs = json.loads(sess.get_modelmeta().custom_metadata_map["states"])
    state = {s["name"]: np.zeros([1 if d == "batch" else d for d in s["shape"]], s["dtype"]) for s in specs}
    rng = np.random.default_rng(0)
    for _ in range(50):
        feeds = {"audio": (rng.standard_normal((1, chunk * 160)) * 0.05).astype(np.float32),
                 "chunk_frames": np.array(chunk), "flush": np.array(0), **state}
        outputs = sess.run(None, feeds)
        state = {s["name"]: value for s, value in zip(specs, outputs[1:])}
    return {**feeds, features: outputs[-1], "features": features}


def parts(path: str, chunk: int, calls: int, workdir: Path) -> None:
    import onnx
    from onnx.utils import extract_model

    values = warm_values(path, chunk)
    features = values.pop("features")
    graph = onnx.load(path, load_external_data=False).graph
    inputs, outputs = [i.name for i in graph.input], [o.name for o in graph.output]
    frontend_states = {"audio", "audio_tail", "feature_history", "level_estimate"}
    cuts = {"whole call": (inputs, outputs),
            "frontend": ([i for i in inputs if i in frontend_states],
                         [features] + [o for o in outputs if o[len("new_"):] in frontend_states]),
            "encoder": ([features] + [i for i in inputs if i not in frontend_states],
                        [o for o in outputs if o[len("new_"):] not in frontend_states])}
    for name, (ins, outs) in cuts.items():
        part = workdir / f"{name}.onnx"
        extract_model(path, str(part), ins, outs)
        p10, p50 = timed(session(str(part)), {k: values[k] for k in ins}, calls)
        print(f"| {Path(path).name} | {name} | {p10:.1f} | {p50:.1f} |")


def attention(path: str, chunk: int, calls: int) -> None:
    """One MultiHeadAttention node at the file's sizes (one stream, one chunk), keys and values 3-D against 4-D."""
    from onnx import TensorProto, helper

    import onnxruntime as ort

    metadata = session(path).get_modelmeta().custom_metadata_map
    config = json.loads(metadata["model_config"])
    H, D = config["num_heads"], config["model_dim"]
    C = chunk // config["frame_subsampling"]
    W = config["left_context_frames"] // config["frame_subsampling"] + C
    rng = np.random.default_rng(0)
    query = rng.standard_normal((1, C, D)).astype(np.float32)
    bias = rng.standard_normal((1, H, C, W)).astype(np.float32)
    for label, shape in (("(B * K, L + C, D)", [1, W, D]), ("(B * K, H, L + C, Dh)", [1, H, W, D // H])):
        node = helper.make_node("MultiHeadAttention", ["q", "k", "v", "", "", "b"], ["y"], domain="com.microsoft",
                                num_heads=H)
        graph = helper.make_graph([node], "attention", [
            helper.make_tensor_value_info("q", TensorProto.FLOAT, list(query.shape)),
            helper.make_tensor_value_info("k", TensorProto.FLOAT, shape),
            helper.make_tensor_value_info("v", TensorProto.FLOAT, shape),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, list(bias.shape))],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                        helper.make_opsetid("com.microsoft", 1)], ir_version=8)
        keys = rng.standard_normal(shape).astype(np.float32)
        p10, p50 = timed(session(model.SerializeToString()), {"q": query, "k": keys, "v": keys, "b": bias}, calls)
        print(f"| MultiHeadAttention, keys and values {label} | node alone (onnxruntime {ort.__version__}) | "
              f"{p10:.1f} | {p50:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", default=["default-int8"], help="bundled model names or ONNX files")
    parser.add_argument("--chunk-frames", type=int, default=None, help="the chunk (default: each model's default)")
    parser.add_argument("--calls", type=int, default=3000, help="timed calls a part")
    args = parser.parse_args()
    from speechattn_export.pipeline import load_model

    try:
        models = [load_model(name, threads=1) for name in args.models]
        chunks = [model.check_chunk(args.chunk_frames or model.default_chunk_frames) for model in models]
    except ValueError as error:
        raise SystemExit(f"graph_parts.py: {error}") from None
    print(f"one onnxruntime thread, one stream, {args.calls} calls a part; microseconds a call\n")
    print("| file | part | p10 us | p50 us |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for model, chunk in zip(models, chunks):
            parts(str(model.path), chunk, args.calls, Path(folder))
    attention(str(models[0].path), chunks[0], args.calls)


if __name__ == "__main__":
    main()
