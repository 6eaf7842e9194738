"""CPU per second of audio of several streaming ONNX files, timed in turn, side by side.

    python bench/graph_cost.py export/models/default-int8.onnx NEW-int8.onnx [...] [--reps 40] [--seconds 5]

Each file streams the same noise in its default chunks (one thread, one stream, its states carried from call to
call); the files take turns, one pass each per round, so machine noise falls on all of them alike.  Prints each
file's CPU time per second of audio (median and minimum over the rounds), the ratio of the medians to the first
file's, and its node count after onnxruntime's optimiser.  For graph changes too small for streaming_speed.py's
per-call spread: docs/benchmarks.md, "Quiet microphones in noisy rooms", the level path's cost."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from speechattn.audio import HOP_SAMPLES, SAMPLE_RATE  # noqa: E402


def session(path: Path, optimized: Path | None = None):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.log_severity_level = 3
    if optimized is not None:
        options.optimized_model_filepath = str(optimized)
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


class Stream:
    """One file, fed chunk by chunk from zero states as its metadata describes them."""

    def __init__(self, path: Path) -> None:
        self.session = session(path)
        meta = self.session.get_modelmeta().custom_metadata_map
        self.specs = json.loads(meta["states"])
        self.chunk = int(meta["default_chunk_frames"])
        self.outputs = [o.name for o in self.session.get_outputs()]

    def cpu_seconds(self, audio: np.ndarray) -> float:
        state = {}
        for spec in self.specs:
            shape = [1 if d == "batch" else (0 if not isinstance(d, int) else d) for d in spec["shape"]]
            state[spec["name"]] = np.zeros(shape, np.int64 if spec["dtype"] == "int64" else np.float32)
        fixed = {"chunk_frames": np.array(self.chunk, np.int64), "flush": np.array(0, np.int64)}
        step = self.chunk * HOP_SAMPLES
        start = time.process_time()
        for i in range(0, len(audio) - step + 1, step):
            results = self.session.run(None, {"audio": audio[None, i : i + step], **fixed, **state})
            named = dict(zip(self.outputs, results))
            state = {spec["name"]: named[spec["output"]] for spec in self.specs}
        return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", type=Path, nargs="+", help="streaming ONNX files; the first is the reference")
    parser.add_argument("--reps", type=int, default=40, help="rounds (each file streams the audio once a round)")
    parser.add_argument("--seconds", type=float, default=5.0, help="audio per pass")
    args = parser.parse_args()
    for path in args.files:
        if not path.is_file():
            parser.error(f"{path}: no such file")
    import onnx

    nodes = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, path in enumerate(args.files):
            session(path, Path(tmp) / f"{k}.onnx")
            nodes.append(len(onnx.load(str(Path(tmp) / f"{k}.onnx")).graph.node))
    audio = (np.random.default_rng(0).standard_normal(int(args.seconds * SAMPLE_RATE)) * 0.05).astype(np.float32)
    streams = [Stream(path) for path in args.files]
    for stream in streams:  # warm-up
        stream.cpu_seconds(audio[: SAMPLE_RATE])
    times = [[] for _ in streams]
    for _ in range(args.reps):
        for stream, row in zip(streams, times):
            row.append(stream.cpu_seconds(audio) / args.seconds * 1000)
    medians = [float(np.median(row)) for row in times]
    print(f"one thread, {args.reps} rounds of {args.seconds:g} s of noise, each file in its default chunks")
    print("| file | chunk | ms of CPU per s of audio, median (min) | × the first | nodes after the optimiser |")
    print("|---|---|---|---|---|")
    for path, stream, row, median, count in zip(args.files, streams, times, medians, nodes):
        print(f"| {path} | {stream.chunk * 10} ms | {median:.2f} ({min(row):.2f}) | {median / medians[0]:.3f} | {count} |")


if __name__ == "__main__":
    main()
