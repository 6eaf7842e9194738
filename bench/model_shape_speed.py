"""Streaming speed of other model shapes of about the default model's size, int8, random weights (speed does
not depend on them), beside silero-vad, one thread, interleaved call by call: where the next model could go for
the 0.5 ms target.  Accuracy of these shapes is not measured here (each needs its own training).

    python bench/model_shape_speed.py [--shape 6x192 --shape 4x224 --shape 3x256 --shape 6x192@64] [--calls 2000]

A shape LAYERSxDIM has FFN 4 x DIM, 4 heads, frame subsampling 4, left context 128 frames, as the shipped model;
LAYERSxDIM@LEFT sets another left context (10 ms frames).
"""

from __future__ import annotations

import os

for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[variable] = "1"

import argparse  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402

from speechattn.audio import speechlike_signal  # noqa: E402
from speechattn.model.encoder import ModelConfig, PhoneTagger  # noqa: E402
from streaming_speed import ChunkRunner, SileroRunner, interleaved_latency, unverified_int8  # noqa: E402


def int8_file(layers: int, dim: int, left: int, workdir: Path) -> tuple[Path, int]:
    torch.manual_seed(0)
    model = PhoneTagger(ModelConfig(num_layers=layers, model_dim=dim, ffn_dim=4 * dim, left_context_frames=left,
                                    frame_subsampling=4, dropout=0.0)).eval()
    int8 = workdir / f"{layers}x{dim}@{left}-int8.onnx"
    unverified_int8(model, int8, workdir / f"{layers}x{dim}@{left}.onnx")
    return int8, model.num_parameters()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", action="append",
                        help="LAYERSxDIM[@LEFT] (repeatable; LEFT is the left context in 10 ms frames, default 128; "
                             "default shapes 6x192, 4x224, 3x256)")
    parser.add_argument("--calls", type=int, default=2000, help="timed 80 ms chunks per model")
    args = parser.parse_args()
    torch.set_num_threads(1)
    shapes = args.shape or ["6x192", "4x224", "3x256"]
    audio = speechlike_signal(30.0, seed=1)
    with tempfile.TemporaryDirectory() as tmp:
        runners, sizes = {}, {}
        for shape in shapes:
            size, _, left = shape.partition("@")
            layers, dim = (int(x) for x in size.split("x"))
            path, sizes[shape] = int8_file(layers, dim, int(left or 128), Path(tmp))
            runners[shape] = ChunkRunner(path, audio)
        latency = interleaved_latency({**runners, "silero": SileroRunner(audio)}, args.calls)
    silero_per_second = latency["silero"]["mean"] / 32  # ms per ms of audio
    print("int8, one 80 ms chunk per call, one thread, interleaved with silero-vad")
    print("| shape | parameters | p50 ms | p99 ms | compute per second of audio vs silero-vad |")
    print("|---|---|---|---|---|")
    for shape in shapes:
        ratio = latency[shape]["mean"] / 80 / silero_per_second
        print(f"| {shape} | {sizes[shape]:,} | {latency[shape]['p50']:.2f} | {latency[shape]['p99']:.2f} | {ratio:.2f} × |")
    print(f"| silero-vad (32 ms call) | | {latency['silero']['p50']:.3f} | {latency['silero']['p99']:.3f} | 1.00 × |")


if __name__ == "__main__":
    main()
