"""int8 choices side by side: label agreement with fp32 on real speech, chunking exactness, size and speed.

    python bench/int8_agreement.py [--checkpoint M.pt] [--utterances 40] [--calls 1000]

Exports the checkpoint (default: the shipped default.pt) to fp32 and quantizes it three ways:
  - weights-8bit      what `speechattn export --int8` writes: onnxruntime MatMulNBits, 8-bit weights in blocks of
                      32, each position's activations quantized inside the kernel (no calibration);
  - static-qdq        uint8 weights and activations, activation scales calibrated once (MinMax) on 90 s of
                      training-split speech (what the project shipped before);
  - static-qdq-edges  the same with the input projection and the classifier left in float.
Agreement: share of frames whose argmax equals fp32's, streaming in 80 ms chunks, over the last N utterances of
the speechocean762 and LJ Speech *training* splits (held out from calibration), and over the first N utterances
of each real dev set (asterisk prompts, speechocean762 dev, LJ050), where the README judges the model.
Chunking: max |Δ log-prob| between one call and random pieces.  Latency: one 80 ms chunk, one thread, the
files interleaved call by call.  Needs the prepared manifests (recipes/speechocean762.yaml, ljspeech.yaml,
synth-en.yaml).
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path

import numpy as np

from speechattn.model.encoder import load
from speechattn.model.export import _frontend_nodes, _quantize, _trace, _write_metadata, build_metadata, \
    chunking_difference
from speechattn.training.evaluate import streamed_log_probs
from speechattn_export.stream_client import StreamingModel

MODELS = Path(__file__).resolve().parent.parent / "export" / "models"
TRAIN = {name: Path(f"data/{name}/{name}_supervisions_train.jsonl.gz") for name in ("speechocean762", "ljspeech")}
SYNTH = Path("data/synth-en/synth-en_supervisions_train.jsonl.gz")
DEV = [Path("data/real-dev/real-dev_supervisions_dev.jsonl.gz"),
       Path("data/speechocean762/speechocean762_supervisions_dev.jsonl.gz"),
       Path("data/ljspeech/ljspeech_supervisions_dev.jsonl.gz")]


def cut_audio(manifest: Path, first: int | None = None, last: int | None = None) -> list[np.ndarray]:
    from speechattn.data.dataset import cuts_from_manifests
    from speechattn.data.manifests import recordings_beside

    cuts = list(cuts_from_manifests(recordings_beside(manifest), manifest))
    chosen = cuts[-last:] if last else cuts[:first]
    return [c.load_audio()[0].astype(np.float32) for c in chosen]


def streamed(path: Path, audios: list[np.ndarray]) -> np.ndarray:
    model = StreamingModel(path, num_threads=1)
    return np.concatenate([streamed_log_probs(model, audio, 8) for audio in audios])


def static_qdq(fp32: Path, out: Path, calibration: list[np.ndarray], exclude: list[str]) -> None:
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, \
        quantize_static

    model = StreamingModel(fp32, num_threads=1)
    session, feeds = model.session, []

    class Recording:  # every graph call's inputs while streaming the calibration audio
        def run(self, names, inputs):
            feeds.append({k: np.array(v) for k, v in inputs.items()})
            return session.run(names, inputs)

    model.session = Recording()
    for audio in calibration:
        stream = model.new_stream(8)
        stream.push(audio)
        stream.finish()

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.items = iter(feeds)

        def get_next(self):
            return next(self.items, None)

    quantize_static(str(fp32), str(out), Reader(), quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QUInt8, op_types_to_quantize=["MatMul"],
                    nodes_to_exclude=_frontend_nodes(fp32) + exclude, calibrate_method=CalibrationMethod.MinMax,
                    extra_options={"MatMulConstBOnly": True})


def latency(paths: dict[str, Path], audio: np.ndarray, calls: int) -> dict[str, float]:
    streams = {name: StreamingModel(p, num_threads=1).new_stream(8) for name, p in paths.items()}
    times = {name: [] for name in paths}
    position = 0
    for _ in range(calls):
        piece = audio[position : position + 1280]
        position = (position + 1280) % (len(audio) - 1280)
        for name, stream in streams.items():
            started = time.perf_counter()
            stream.push(piece)
            times[name].append(time.perf_counter() - started)
    return {name: 1e3 * float(np.median(t[50:])) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", type=Path, default=MODELS / "default.pt")
    parser.add_argument("--utterances", type=int, default=40, help="per training split, from its end")
    parser.add_argument("--calls", type=int, default=1000)
    args = parser.parse_args()
    logging.getLogger().setLevel(logging.ERROR)
    model = load(args.checkpoint)
    held_out = [a for m in TRAIN.values() for a in cut_audio(m, last=args.utterances)]
    dev = [a for m in DEV for a in cut_audio(m, first=args.utterances)]
    calibration = []
    for manifest in (SYNTH, *TRAIN.values()):  # 30 s from the start of each training split
        taken = 0.0
        for audio in cut_audio(manifest, first=30):
            if taken >= 30.0:
                break
            calibration.append(audio)
            taken += len(audio) / 16000
    total = sum(len(a) for a in calibration) / 16000
    with tempfile.TemporaryDirectory() as workdir:
        work = Path(workdir)
        fp32 = work / "fp32.onnx"
        _trace(model, fp32)
        _write_metadata(fp32, build_metadata(model, 8, "none"))
        files = {"fp32": fp32, "weights-8bit": work / "w8.onnx", "static-qdq": work / "qdq.onnx",
                 "static-qdq-edges": work / "qdq-edges.onnx"}
        _quantize(fp32, files["weights-8bit"])
        static_qdq(fp32, files["static-qdq"], calibration, [])
        static_qdq(fp32, files["static-qdq-edges"], calibration, ["/input_projection/MatMul", "/classifier/MatMul"])
        for name in files:
            if name != "fp32":
                _write_metadata(files[name], build_metadata(model, 8, name))
        reference = streamed(fp32, held_out).argmax(-1)
        dev_reference = streamed(fp32, dev).argmax(-1)
        p50 = latency(files, held_out[0] if len(held_out[0]) > 32000 else np.concatenate(held_out[:10]), args.calls)
        print(f"{args.checkpoint}: agreement with fp32 on {len(held_out)} held-out training-split utterances "
              f"({len(reference):,} frames) and {len(dev)} real dev utterances ({len(dev_reference):,} frames); "
              f"calibration for static-qdq: {total:.0f} s")
        print(f"{'file':<18} {'train-split':>11} {'real dev':>9} {'chunking Δ':>11} {'size MB':>8} "
              f"{'p50 ms (80 ms chunk)':>21}")
        for name, path in files.items():
            agreement = (streamed(path, held_out).argmax(-1) == reference).mean()
            dev_agreement = (streamed(path, dev).argmax(-1) == dev_reference).mean()
            difference = chunking_difference(path, held_out[0], 8)
            print(f"{name:<18} {100 * agreement:>10.2f}% {100 * dev_agreement:>8.2f}% {difference:>11.2e} "
                  f"{path.stat().st_size / 1e6:>8.2f} {p50[name]:>21.3f}")


if __name__ == "__main__":
    main()
