"""Corpus throughput: audio-hours per wall-hour of `speechattn transcribe` (or `align`) over one folder, with 1 and 2
worker processes and on a local two-node Ray cluster (a head and a second node on 127.0.0.1, one CPU each: Ray's
cluster_utils), beside the plain single-process command, all in the same run on the same files.

    python bench/batch_scale.py [--files 400] [--seconds 4] [--model NAME] [--phases N] [--command transcribe|align]

The files are made here (speech-like test signal, or, for align, the bundled recordings repeated, each beside its
words).  Per-core efficiency = throughput / (cores used x the single-process throughput).  Each arm starts from an
empty output folder; each figure counts the whole command (start-up, model loading, writing outputs).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import soundfile as sf

ROOT = Path(__file__).resolve().parent.parent


def make_corpus(folder: Path, files: int, seconds: float, command: str) -> float:
    from speechattn.audio import speechlike_signal

    total = 0.0
    samples = ROOT / "speechattn" / "runtime" / "samples"
    recordings = [(p, p.stem.replace("-", " ")) for p in sorted(samples.glob("*.wav"))]
    for number in range(files):
        if command == "align":
            source, words = recordings[number % len(recordings)]
            shutil.copy(source, folder / f"u{number:05d}.wav")
            (folder / f"u{number:05d}.lab").write_text(words + "\n")
            total += sf.info(str(source)).duration
        else:
            audio = speechlike_signal(seconds, seed=number)
            sf.write(folder / f"u{number:05d}.wav", audio, 16000, subtype="PCM_16")
            total += len(audio) / 16000
    return total


def run(command: str, corpus: Path, out: Path, model: str | None, *options: str, phases: tuple = ()) -> float:
    shutil.rmtree(out, ignore_errors=True)
    args = ([sys.executable, "-m", "speechattn", "transcribe", str(corpus), "--format", "json"] if command == "transcribe"
            else [sys.executable, "-m", "speechattn", "align", str(corpus), "--format", "json"])
    started = time.perf_counter()
    chosen = ("--model", model) if model else ()
    result = subprocess.run([*args, "--output-dir", str(out), *chosen, "-q", *phases, *options], cwd=ROOT,
                            capture_output=True, text=True)
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(options) or 'one process'}: exit {result.returncode}: {result.stderr[-2000:]}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument("--seconds", type=float, default=4.0, help="length of each made file (transcribe)")
    parser.add_argument("--model", default=None,
                        help="a bundled model's name or an ONNX file  [default: the command's own: the files' model "
                             "for transcribe, the default for align]")
    parser.add_argument("--command", choices=("transcribe", "align"), default="transcribe")
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--phases", type=int, default=None, metavar="N",
                        help="transcribe --phases N (default: the command's own, 2 for a file at the largest chunk)")
    args = parser.parse_args()
    if args.phases is not None and args.command != "transcribe":
        parser.error("--phases here is transcribe's (align's default is one phase)")
    phases = ("--phases", str(args.phases)) if args.phases is not None else ()

    work = Path(tempfile.mkdtemp(prefix="speechattn-batch-"))
    try:
        corpus = work / "corpus"
        corpus.mkdir()
        audio = make_corpus(corpus, args.files, args.seconds, args.command)
        print(f"{args.command}, {args.files} files, {audio / 3600:.2f} h of audio, model {args.model or 'as the command chooses'}"
              f"{f', --phases {args.phases}' if phases else ''}, "
              f"{os.cpu_count()} cores on this machine; load average before: {os.getloadavg()[0]:.2f}")
        # the single-process figure: the job runner in this process, one onnxruntime thread (what each worker uses)
        single = ("--resume",) if args.command == "transcribe" else ()
        rows = [("one process, one thread (--jobs 1)", 1, run(args.command, corpus, work / "out", args.model, *single, phases=phases)),
                ("--jobs 2 (two worker processes)", 2, run(args.command, corpus, work / "out", args.model, "--jobs", "2", phases=phases))]
        if args.command == "transcribe":
            rows.append(("the plain command (onnxruntime's threads: all cores)", os.cpu_count(),
                         run(args.command, corpus, work / "out", args.model, phases=phases)))
        if not args.no_ray:
            os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")
            from ray.cluster_utils import Cluster

            cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
            cluster.add_node(num_cpus=1)
            cluster.wait_for_nodes()
            try:
                rows.append(("Ray, two nodes on 127.0.0.1 (1 CPU each)", 2,
                             run(args.command, corpus, work / "out", args.model, "--ray", cluster.address,
                                 phases=phases)))
            finally:
                cluster.shutdown()
        base = audio / rows[0][2]
        print(f"\n{'arm':<46} {'wall s':>8} {'audio h / wall h':>17} {'x one process':>14} {'per-core efficiency':>20}")
        for name, cores, wall in rows:
            rate = audio / wall
            print(f"{name:<46} {wall:>8.1f} {rate:>17,.0f} {rate / base:>14.2f} {rate / base / cores:>20.0%}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
