"""Where a streaming model's CPU goes, by onnxruntime operator, at the batch sizes a server steps its streams in.

For each batch size B: the CPU time of one graph call of B streams at the live chunk (timed without profiling,
one onnxruntime thread), and, from onnxruntime's own profile of the same calls, each kind of operator's share of
the time spent in the graph's nodes.  The state is fed back call after call, as a server's streams are, so the
key/value cache is full (its size is the model's, whatever the audio); the audio is quiet noise.

    python bench/model_ops.py                                  # default-int8, B = 1, 16, 64, 40 ms chunks
    python bench/model_ops.py --model default --batches 32 --chunk-frames 32
    python bench/model_ops.py --model default-int8 --against OLD.onnx --calls 400   # side by side, no profile

Read the shares together with docs/server.md's Capacity: the model's calls are about half of a loaded server's CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# operators that only move the state and the audio around (no arithmetic on them)
MOVING = ("Split", "Concat", "Slice", "Gather", "Reshape", "Transpose", "Unsqueeze", "Squeeze", "Expand",
          "Identity", "Where", "Cast", "Shape")
# a control-flow node's time is its branch's, whose nodes the profile lists as well: counted once, there
CONTROL_FLOW = ("If", "Loop", "Scan")


def calls(model, session, batch: int, chunk: int, count: int) -> float:
    """CPU seconds a call over `count` chained calls of `batch` streams."""
    rng = np.random.default_rng(0)
    state = model.initial_state(batch)
    model.session = session
    audio = [(rng.standard_normal((batch, chunk * model.hop_samples)) * 0.01).astype(np.float32) for _ in range(8)]
    for i in range(4):  # warm up: the arena, the first calls' allocations
        _, state = model.run(audio[i % 8], chunk, False, state)
    started = time.process_time()
    for i in range(count):
        _, state = model.run(audio[i % 8], chunk, False, state)
    return (time.process_time() - started) / count


def side_by_side(models, batches: list[int], chunk: int, count: int, rounds: int) -> None:
    """CPU per second of one stream's audio for each file at each batch size, the files interleaved (each round
    times every file once at a batch size; the fastest round kept), and each file's against the first's."""
    import onnxruntime as ort

    print(f"chunk {chunk} frames ({chunk * 10} ms), one onnxruntime thread, {count} calls a round, best of {rounds} "
          "rounds; CPU ms per second of one stream's audio (% of a core a live stream)\n")
    names = [f"{Path(m.path).parent.name}/{Path(m.path).name} (contract {m.metadata['contract_version']})"
             for m in models]
    width = max(len(n) for n in names)
    print(f"{'file':{width}}  " + "  ".join(f"{'B = ' + str(b):>16}" for b in batches))
    best = {}
    sessions = []
    for model in models:
        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = 1, 1
        sessions.append(ort.InferenceSession(model.path, sess_options=options, providers=["CPUExecutionProvider"]))
    for batch in batches:
        for _ in range(rounds):
            for index, (model, session) in enumerate(zip(models, sessions)):
                seconds = calls(model, session, batch, chunk, count)
                best[index, batch] = min(best.get((index, batch), seconds), seconds)
    for index, name in enumerate(names):
        cells = []
        for batch in batches:
            per_second = 1000 * best[index, batch] / batch * (1000 / (chunk * 10))  # ms CPU a stream-second
            ratio = f" {best[index, batch] / best[0, batch]:.2f}x" if index else ""
            cells.append(f"{per_second:7.2f}{ratio:>6}" if index else f"{per_second:7.2f}      ")
        print(f"{name:{width}}  " + "  ".join(f"{c:>16}" for c in cells))
    print(f"\n(the ratio: that file's CPU against {names[0]}'s, at the same batch size)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="default-int8", help="a bundled model's name or an ONNX file")
    parser.add_argument("--batches", default="1,16,64", help="streams a call, comma-separated")
    parser.add_argument("--chunk-frames", type=int, default=None, help="the chunk (default: the model's live chunk)")
    parser.add_argument("--calls", type=int, default=200, help="calls timed at each batch size")
    parser.add_argument("--against", action="append", default=[], metavar="FILE",
                        help="another file of the same model (an earlier export, another contract version): each "
                             "batch size timed for both, interleaved in rounds, instead of the operator profile")
    parser.add_argument("--rounds", type=int, default=5, help="with --against: rounds, the fastest round kept")
    args = parser.parse_args()
    import onnxruntime as ort

    from speechattn_export.pipeline import load_model

    try:
        model = load_model(args.model, threads=1)
        batches = [int(b) for b in args.batches.split(",")]
        if any(b < 1 or b > 4096 for b in batches):
            raise ValueError(f"--batches {args.batches}: each from 1 to 4096")
        chunk = model.check_chunk(args.chunk_frames or model.default_chunk_frames)
    except ValueError as error:
        raise SystemExit(f"model_ops.py: {error}") from None
    if args.against:
        try:
            others = [load_model(name, threads=1) for name in args.against]
        except ValueError as error:
            raise SystemExit(f"model_ops.py: {error}") from None
        side_by_side([model, *others], batches, chunk, args.calls, args.rounds)
        return
    print(f"{Path(model.path).name}, chunk {chunk} frames ({chunk * 10} ms), one onnxruntime thread, "
          f"{args.calls} calls a batch size\n")
    rows = []
    for batch in batches:
        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = 1, 1
        plain = ort.InferenceSession(model.path, sess_options=options, providers=["CPUExecutionProvider"])
        seconds = calls(model, plain, batch, chunk, args.calls)
        with tempfile.TemporaryDirectory() as folder:
            options.enable_profiling = True
            options.profile_file_prefix = os.path.join(folder, "ops")
            profiled = ort.InferenceSession(model.path, sess_options=options, providers=["CPUExecutionProvider"])
            calls(model, profiled, batch, chunk, max(20, args.calls // 4))
            events = json.loads(Path(profiled.end_profiling()).read_text())
        spent = Counter()
        for event in events:
            if event.get("cat") == "Node" and event.get("name", "").endswith("_kernel_time"):
                operator = event.get("args", {}).get("op_name", "?")
                if operator in CONTROL_FLOW:
                    continue
                spent[operator] += event["dur"]
        total = sum(spent.values()) or 1
        moving = sum(d for op, d in spent.items() if op in MOVING)
        rows.append((batch, seconds))
        stream_second = seconds / batch * (1000 / (chunk * 10))  # CPU seconds per second of one stream's audio
        print(f"B = {batch}: {1000 * seconds:.2f} ms CPU a call, {1000 * seconds / batch:.3f} ms a stream's chunk, "
              f"{100 * stream_second:.2f} % of a core a live stream; in the nodes: "
              f"{100 * moving / total:.0f} % moving data ({', '.join(MOVING[:4])}, ...)")
        for operator, duration in spent.most_common(8):
            print(f"    {operator:22s} {100 * duration / total:5.1f} %")
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        print(f"\nCPU a stream's chunk at B = {last[0]} against B = {first[0]}: {last[1] / last[0] / (first[1] / first[0]):.2f} x")


if __name__ == "__main__":
    main()
