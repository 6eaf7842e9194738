"""Rebuild a speechattn checkpoint (config + weights) from an fp32 ONNX file that `speechattn export` wrote.

The exporter keeps every parameter under its own name except the linear layers' weights, which it
stores transposed under generated names; each of those feeds a MatMul whose result is added to the
layer's named bias, which names the layer.  The rebuilt model is checked against the ONNX file on
speech before anything is written.  For files exported before attention became one MultiHeadAttention node
per layer (round 5 and earlier): later files keep every layer's relative-position bias only inside one
constant table, which this does not unpick (every checkpoint since round 3 ships anyway, as default.pt).

    python tools/checkpoint_from_onnx.py export/models/default.onnx -o speechattn/runtime/models/default.pt
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("onnx_file")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--audio", default="speechattn/runtime/samples/please-enter-your-password.wav")
    args = parser.parse_args()

    import onnx
    import torch

    from speechattn.model.encoder import ModelConfig, PhoneTagger, save_checkpoint

    graph_model = onnx.load(args.onnx_file)
    metadata = {p.key: p.value for p in graph_model.metadata_props}
    if metadata.get("quantization", "none") != "none":
        sys.exit(f"{args.onnx_file}: quantized; rebuild from the fp32 file")
    config = ModelConfig.from_dict(json.loads(metadata["model_config"]), source=args.onnx_file)
    initializers = {i.name: onnx.numpy_helper.to_array(i) for i in graph_model.graph.initializer}
    consumers: dict[str, list] = {}
    for node in graph_model.graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    state = {name.removeprefix("model."): torch.from_numpy(value.copy())
             for name, value in initializers.items() if name.startswith("model.")}
    for name, value in initializers.items():
        for node in consumers.get(name, []):
            if node.op_type != "MatMul" or name.startswith("model."):
                continue
            biases = [i for n in consumers.get(node.output[0], []) if n.op_type == "Add" for i in n.input
                      if i.startswith("model.") and i.endswith(".bias")]
            if len(biases) == 1:
                state[biases[0].removeprefix("model.").removesuffix(".bias") + ".weight"] = torch.from_numpy(value.T.copy())
    model = PhoneTagger(config)
    expected = model.state_dict()
    for key in expected:  # frontend constants are rebuilt from the config
        state.setdefault(key, expected[key])
    model.load_state_dict(state, strict=True)
    model.eval()

    from speechattn.audio import load_audio
    from speechattn_export.stream_client import StreamingModel

    audio = load_audio(args.audio)
    stream = StreamingModel(args.onnx_file).new_stream()
    onnx_log_probs = np.concatenate([stream.push(audio).log_probs, stream.finish().log_probs])
    with torch.no_grad():
        torch_log_probs = model(model.frontend(torch.from_numpy(audio)[None]),
                                torch.tensor([len(onnx_log_probs)]), config.default_chunk_frames)[0].numpy()
    difference = float(np.abs(torch_log_probs[: len(onnx_log_probs)] - onnx_log_probs).max())
    print(f"max |Δ log-prob| torch vs {args.onnx_file}: {difference:.2e} over {len(onnx_log_probs)} frames")
    if difference > 1e-3:
        sys.exit("the rebuilt model does not reproduce the ONNX file; nothing written")
    save_checkpoint(model, args.output, recovered_from=args.onnx_file)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
