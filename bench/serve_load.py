"""Live streams one `speechattn serve` holds: N simulated clients stream real speech at real-time pace with
network-like jitter, for N = 1, 10, 50, 100, 200, ... until p99 passes the budget, against the server with batching
(--max-batch 64) and without (--max-batch 1, one onnxruntime call per stream chunk), in the same run.

    python bench/serve_load.py [--seconds 15] [--model default-int8] [--budget-ms 300] [--max-clients 400]

Delay: from a phone's end in the audio (the moment a live microphone would have captured it: the client's start
plus the segment's end time) to the update carrying its final segment arriving at the client.  Each client sends
--frame-ms of 16 kHz int16 every --frame-ms, each send late by a uniform 0..--jitter-ms.  Server CPU (user + system
from /proc) per stream, and the load generator's own CPU, are printed beside the machine's load average: on a
shared machine the figures move with the neighbours.  Speech: ../shared/data/librispeech-clips (read English, 261
speakers), each client a different clip, looped.

    python bench/serve_load.py --model-only [--batches 1,16,64] [--io-binding both]   # the model alone, no server
    python bench/serve_load.py --provider cuda --arms 256,1024                          # on a GPU (docs/server.md)
    python bench/serve_load.py --one-core 0,1 --arms 16 [--baseline DIR]                # what one server core holds

--one-core SERVER,CLIENTS: the server (one worker, one onnxruntime thread) pinned to core SERVER and the load
generator to core CLIENTS, each process's CPU counted apart from /proc, so the figure is what one server core holds.
At each level it also prints the server's CPU per stream-second beside the model alone at the server's mean batch (an
onnxruntime session on the same file, one thread, chained calls at the live chunk, timed on the server's core between
levels) and beside its own graph calls' CPU (the server's speechattn_graph_call_cpu_seconds), and the ratios: the
server's own cost beyond the model.  On a shared machine the CPU ratios hold up; the streams held do not.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SPEECH = ROOT.parent / "shared" / "data" / "librispeech-clips" / "audio"


def clips(count: int, folder: Path = SPEECH) -> list[np.ndarray]:
    import soundfile as sf

    files = sorted(folder.glob("*.opus"))[:count]
    if not files:
        raise SystemExit(f"{folder}: no speech clips (.opus); give --speech FOLDER")
    return [np.round(sf.read(str(f), dtype="float32")[0] * 32767).astype("<i2") for f in files]


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its children (the server's workers), from /proc."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if stat.parent.name == str(pid) or fields[1] == str(pid):  # fields[1]: the parent's pid
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


async def client(url: str, audio: np.ndarray, seconds: float, frame_ms: float, jitter_ms: float, delays: list,
                 rng: random.Random, chunk_frames: int | None = None) -> None:
    from websockets.asyncio.client import connect

    step = int(16000 * frame_ms / 1000)
    total = int(seconds * 16000)
    looped = np.resize(audio, total)
    async with connect(url, max_size=None) as ws:
        start = {"type": "start", "sample_rate": 16000, "format": "int16"}
        if chunk_frames:
            start["options"] = {"chunk_frames": chunk_frames}
        await ws.send(json.dumps(start))
        await ws.recv()
        started = time.monotonic()

        async def receive():
            async for text in ws:
                message = json.loads(text)
                now = time.monotonic()
                for segment in message.get("segments", ()) if message["type"] == "update" else ():
                    delays.append(now - (started + segment["end"]))

        receiver = asyncio.create_task(receive())
        for number, begin in enumerate(range(0, total, step)):
            due = started + (begin + step) / 16000 + rng.uniform(0, jitter_ms / 1000)  # the frame exists at its end
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            await ws.send(looped[begin:begin + step].tobytes())
        await ws.send(json.dumps({"type": "end"}))
        await receiver


def start_server(model: str, max_batch: int, threads: int | None, cpus: set[int] | None = None,
                 workers: int | None = None, max_wait_ms: float | None = None,
                 provider: str = "cpu", tree: Path | None = None,
                 extra: tuple = ()) -> tuple[subprocess.Popen, str]:
    """The server, from this checkout or from `tree` (another checkout's copy: its speechattn and its kit)."""
    command = [sys.executable, "-m", "speechattn", "serve", "--model", model, "--port", "0", "--max-streams", "5000",
               "--max-batch", str(max_batch), "--provider", provider] + \
        (["--threads", str(threads)] if threads else []) + \
        (["--workers", str(workers)] if workers else []) + \
        (["--max-wait-ms", str(max_wait_ms)] if max_wait_ms is not None else []) + list(extra)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if tree is not None:  # its packages ahead of this checkout's editable install (the kit under its import name)
        kit = Path(tempfile.mkdtemp(prefix="serve-load-kit-"))
        (kit / "speechattn_export").symlink_to(tree.resolve() / "export")
        env["PYTHONPATH"] = os.pathsep.join([str(tree.resolve()), str(kit)])
    process = subprocess.Popen(command, cwd=tree or ROOT, stderr=subprocess.PIPE, text=True, env=env,
                               preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)
    line = ""
    while "listening on" not in line:
        line = process.stderr.readline()
        if not line:
            raise SystemExit(f"the server stopped: exit {process.wait()}")
    # Its log read on (and dropped) from here on: a pipe nobody reads fills at 64 KiB (a few hundred streams' open
    # and close lines), and the server's next log line then blocks its event loop.
    threading.Thread(target=_drain_log, args=(process.stderr,), daemon=True).start()
    return process, line.split()[-1]


def _drain_log(stream) -> None:
    for _ in stream:
        pass


async def one_level(url: str, speech: list[np.ndarray], clients: range, total: int, args) -> list[float]:
    delays: list[float] = []
    rng = random.Random(clients.start * 7919 + total)
    tasks = []
    for number in clients:
        tasks.append(asyncio.create_task(client(url, speech[number % len(speech)], args.seconds, args.frame_ms,
                                                args.jitter_ms, delays, rng, args.chunk_frames)))
        await asyncio.sleep(args.frame_ms / 1000 / max(1, len(clients)))  # spread the starts over one frame
    await asyncio.gather(*tasks)
    return delays


def _share(job) -> tuple[list[float], float]:
    """One load-generator process's clients: (their delays, its CPU seconds)."""
    url, speech, clients, total, args = job
    before = time.process_time()
    delays = asyncio.run(one_level(url, speech, clients, total, args))
    return delays, time.process_time() - before


def run_level(url: str, speech: list[np.ndarray], clients: int, args) -> tuple[list[float], float]:
    """All clients of one level, spread over --client-processes processes (one Python process of asyncio clients
    tops out near 200 streams of 40 ms frames, and would measure itself): (delays, the generator's CPU seconds)."""
    processes = max(1, min(args.client_processes, clients))
    shares = [range(clients * i // processes, clients * (i + 1) // processes) for i in range(processes)]
    if processes == 1:
        return _share((url, speech, shares[0], clients, args))
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(processes) as pool:
        results = list(pool.map(_share, [(url, speech, share, clients, args) for share in shares]))
    return [d for delays, _ in results for d in delays], sum(cpu for _, cpu in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default-int8")
    parser.add_argument("--seconds", type=float, default=15.0, help="audio each client streams at each level")
    parser.add_argument("--frame-ms", type=float, default=40.0)
    parser.add_argument("--jitter-ms", type=float, default=20.0)
    parser.add_argument("--chunk-frames", type=int, default=None,
                        help="the chunk each client asks for (default: the model's; a larger one costs less a stream and "
                        "delays its labels by the difference)")
    parser.add_argument("--budget-ms", type=float, default=300.0)
    parser.add_argument("--max-clients", type=int, default=400)
    parser.add_argument("--threads", type=int, default=None, help="onnxruntime threads of the server")
    parser.add_argument("--workers", type=int, default=None, help="the server's --workers (default: its own)")
    parser.add_argument("--max-wait-ms", type=float, default=None, help="the server's --max-wait-ms (default: its own)")
    parser.add_argument("--server-args", default="",
                        help="--one-core: more `speechattn serve` options for this checkout's server, not the baseline's "
                        "(an option tried against the same server without it)")
    parser.add_argument("--levels", default="1,10,50,100,200,300,400,600,800,1000,1200",
                        help="the numbers of streams tried, in turn (up to --max-clients)")
    parser.add_argument("--model-only", action="store_true",
                        help="no server: the model's CPU per stream at each batch size (StreamSet fed directly, one "
                        "thread), and the bigram decoder's per stream, alone and batched (decoder.push_many)")
    parser.add_argument("--arms", default="64,1", help="--max-batch of each server, in turn")
    parser.add_argument("--provider", choices=("cpu", "cuda"), default="cpu",
                        help="where the server's (or --model-only's) model runs: the server's --provider")
    parser.add_argument("--batches", default="1,2,4,8,16,32,64,128",
                        help="--model-only: streams per graph call, in turn (a GPU: try 64,256,1024)")
    parser.add_argument("--io-binding", choices=("auto", "on", "off", "both"), default="auto",
                        help="--model-only: the stream set's calls through I/O binding with the state kept where the "
                        "model runs (on), or the state through numpy (off); auto: on for cuda, as the server does")
    parser.add_argument("--server-cpus", default=None, metavar="0,1",
                        help="pin the server to these cores (the rest for the load generator): a 2-core server on a "
                        "bigger machine")
    parser.add_argument("--one-core", default=None, metavar="SERVER,CLIENTS",
                        help="the server (one worker) on core SERVER, the load generator on core CLIENTS (e.g. 0,1); "
                        "prints the server's CPU per stream-second against the model alone at its mean batch")
    parser.add_argument("--baseline", type=Path, default=None, metavar="DIR",
                        help="--one-core: also a server from another checkout (say `git archive HEAD | tar -x -C DIR` "
                        "before a change), each level run against it and this checkout's in turn, the same model file")
    parser.add_argument("--speech", type=Path, default=SPEECH, help="a folder of .opus speech clips")
    parser.add_argument("--client-processes", type=int, default=1,
                        help="load-generator processes the clients are spread over")
    args = parser.parse_args()
    if args.model_only:
        return model_only(args)
    if args.one_core:
        return one_core(args)
    levels = [n for n in (int(level) for level in args.levels.split(",")) if n <= args.max_clients]
    speech = clips(max(levels), args.speech)
    cpus = {int(c) for c in args.server_cpus.split(",")} if args.server_cpus else None
    if cpus:
        os.sched_setaffinity(0, set(range(os.cpu_count())) - cpus)  # the generator keeps off the server's cores
    print(f"# {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start; model {args.model}; "
          f"{args.seconds:g} s per client per level, {args.frame_ms:g} ms frames, jitter 0-{args.jitter_ms:g} ms; "
          f"chunk {args.chunk_frames or 'the model default'} frames; "
          f"server on {'cores ' + args.server_cpus if cpus else 'any core'}, {args.workers or 'default'} worker(s), "
          f"--max-wait-ms {'default' if args.max_wait_ms is None else f'{args.max_wait_ms:g}'}, "
          f"clients in {args.client_processes} process(es)")
    print("| --max-batch | streams | p50 delay ms | p99 delay ms | server CPU % of a core per stream | "
          "load generator CPU % | load average |")
    print("|---|---|---|---|---|---|---|")
    for max_batch in (int(a) for a in args.arms.split(",")):
        process, url = start_server(args.model, max_batch, args.threads, cpus, args.workers, args.max_wait_ms,
                                    args.provider)
        try:
            for clients in levels:
                server_before, wall_before = cpu_seconds(process.pid), time.monotonic()
                delays, generator_seconds = run_level(url, speech, clients, args)
                wall = time.monotonic() - wall_before
                server_cpu = (cpu_seconds(process.pid) - server_before) / wall
                own_cpu = generator_seconds / wall
                p50, p99 = (np.percentile(delays, [50, 99]) * 1000) if delays else (float("nan"),) * 2
                print(f"| {max_batch} | {clients} | {p50:.0f} | {p99:.0f} | {100 * server_cpu / clients:.1f} | "
                      f"{100 * own_cpu:.0f} | {os.getloadavg()[0]:.1f} |", flush=True)
                if p99 > args.budget_ms:
                    break
        finally:
            process.terminate()
            process.wait(30)


def server_metrics(url: str) -> dict:
    """The server's /metrics sums this mode reads: audio seconds taken in, graph calls, streams in them, and the
    calls' seconds."""
    import urllib.request

    names = {"speechattn_audio_seconds_total": "audio", "speechattn_batch_streams_count": "calls",
             "speechattn_batch_streams_sum": "streams", "speechattn_graph_call_seconds_sum": "graph",
             "speechattn_graph_call_cpu_seconds_total": "graph_cpu"}
    http = url.replace("ws://", "http://").rsplit("/", 1)[0] + "/metrics"
    values = dict.fromkeys(names.values(), 0.0)
    with urllib.request.urlopen(http, timeout=10) as answer:
        for line in answer.read().decode().splitlines():
            name, _, value = line.partition(" ")
            if name in names:
                values[names[name]] += float(value)
    return values


def model_alone(model, batch: float, core: int, back: set[int], stream_seconds: float = 20.0, rounds: int = 3) -> float:
    """CPU seconds a stream-second of the model alone on `core` at `batch` streams a call (chained calls at the
    live chunk, bench/model_ops.py's; the median of `rounds`; a fractional mean batch: the two whole batches beside
    it, interpolated), then this process goes back to the cores `back`."""
    sys.path.insert(0, str(ROOT / "bench"))
    from model_ops import calls

    chunk = model.default_chunk_frames
    chunk_seconds = chunk * model.hop_samples / model.sample_rate
    os.sched_setaffinity(0, {core})
    try:
        costs = {}
        for whole in sorted({max(1, int(batch)), max(1, int(batch) + (batch % 1 > 0))}):
            count = max(20, int(stream_seconds / (whole * chunk_seconds)))
            costs[whole] = float(np.median([calls(model, model.session, whole, chunk, count)
                                            for _ in range(rounds)])) / (whole * chunk_seconds)
    finally:
        os.sched_setaffinity(0, back)
    low, high = min(costs), max(costs)
    return costs[low] if low == high else costs[low] + (batch - low) * (costs[high] - costs[low])


def one_core(args) -> None:
    """--one-core SERVER,CLIENTS: the server, one worker, on one core; the clients on another; each level's delay,
    the server's CPU per stream-second, the model alone at the server's mean batch, and the ratio.  With --baseline,
    a server from that checkout beside this one's, each level run against both in turn."""
    from speechattn.runtime.transcribe import resolve_model
    from speechattn_export.stream_client import StreamingModel

    try:
        server_core, client_core = (int(c) for c in args.one_core.split(","))
        if {server_core, client_core} - os.sched_getaffinity(0) or server_core == client_core:
            raise ValueError
    except ValueError:
        raise SystemExit(f"serve_load.py: --one-core {args.one_core}: two different cores of "
                         f"{sorted(os.sched_getaffinity(0))}, the server's then the clients'") from None
    if args.baseline is not None and not (args.baseline / "speechattn" / "runtime" / "serve.py").is_file():
        raise SystemExit(f"serve_load.py: --baseline {args.baseline}: not a checkout of speechattn")
    os.sched_setaffinity(0, {client_core})  # the clients (and their processes, forked from here) on their own core
    levels = [n for n in (int(level) for level in args.levels.split(",")) if n <= args.max_clients]
    speech = clips(max(levels), args.speech)
    path = str(resolve_model(args.model))  # one file for every server, whatever each checkout bundles
    model = StreamingModel(path, num_threads=1)
    trees = {"this": None, **({"baseline": args.baseline} if args.baseline else {})}
    print(f"# one-core: server on core {server_core} (1 worker, 1 onnxruntime thread), clients on core {client_core} "
          f"in {args.client_processes} process(es); model {path}, chunk {model.default_chunk_frames} frames; "
          f"{args.seconds:g} s per client per level, {args.frame_ms:g} ms frames, jitter 0-{args.jitter_ms:g} ms; "
          f"load average {os.getloadavg()[0]:.2f} at the start" +
          (f"; baseline: {args.baseline}" if args.baseline else ""))
    print("| server | --max-batch | streams | p50 delay ms | p99 delay ms | mean streams a call | server CPU ms per "
          "stream-second | model alone at that batch, ms | ratio | its graph calls' CPU, ms | ratio to them | streams its "
          "CPU covers | server core % busy | load generator core % | load average |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    held = {}
    for max_batch in (int(a) for a in args.arms.split(",")):
        servers = {name: start_server(path, max_batch, 1, {server_core}, 1, args.max_wait_ms, args.provider, tree,
                                      () if tree else tuple(args.server_args.split()))
                   for name, tree in trees.items()}
        try:
            past = set()
            for clients in levels:
                for name, (process, url) in servers.items():
                    if name in past:
                        continue
                    row = one_core_level(url, process, speech, clients, model, server_core, client_core, args)
                    print(f"| {name} | {max_batch} | {clients} | " + " | ".join(row["cells"]) + " |", flush=True)
                    if row["p99"] > args.budget_ms:
                        past.add(name)
                    else:
                        held[name, max_batch] = (clients, row)
                if len(past) == len(servers):
                    break
        finally:
            for process, _ in servers.values():
                process.terminate()
                process.wait(30)
    for (name, max_batch), (clients, row) in held.items():
        print(f"# {name}, --max-batch {max_batch}: one server core held {clients} streams within p99 "
              f"{args.budget_ms:g} ms (p99 {row['p99']:.0f} ms), {row['server']:.2f} ms of server CPU a stream-second "
              f"against {row['alone']:.2f} ms for the model alone at its batch: {row['ratio']:.2f} x")


def one_core_level(url, process, speech, clients: int, model, server_core: int, client_core: int, args) -> dict:
    """One level of --one-core: its clients, then the model alone on the server's core at the level's mean batch."""
    before, server_before, wall_before = server_metrics(url), cpu_seconds(process.pid), time.monotonic()
    delays, generator_seconds = run_level(url, speech, clients, args)
    wall = time.monotonic() - wall_before
    server_cpu = cpu_seconds(process.pid) - server_before
    after = server_metrics(url)
    load = os.getloadavg()[0]
    audio = max(after["audio"] - before["audio"], 1e-9)
    batch = (after["streams"] - before["streams"]) / max(1.0, after["calls"] - before["calls"])
    alone = 1000 * model_alone(model, batch, server_core, {client_core})
    server = 1000 * server_cpu / audio
    p50, p99 = (np.percentile(delays, [50, 99]) * 1000) if delays else (float("nan"),) * 2
    inside = 1000 * (after["graph_cpu"] - before["graph_cpu"]) / audio  # 0 from a server without the counter
    cells = [f"{p50:.0f}", f"{p99:.0f}", f"{batch:.1f}", f"{server:.2f}", f"{alone:.2f}", f"{server / alone:.2f}",
             f"{inside:.2f}" if inside else "-", f"{server / inside:.2f}" if inside else "-", f"{1000 / server:.0f}", f"{100 * server_cpu / wall:.0f}", f"{100 * generator_seconds / wall:.0f}", f"{load:.2f}"]
    return {"cells": cells, "p99": p99, "server": server, "alone": alone, "ratio": server / alone}


def device_copies(path: str, providers: list) -> list[str]:
    """The copies onnxruntime put between the device and the host in the graph it runs with `providers` (its
    MemcpyToHost / MemcpyFromHost nodes, from the optimized graph it saves), each as 'MemcpyToHost -> the node types
    that read it': where nodes fall back to the CPU.  None on the CPU alone (nothing to load: the onnx package,
    which a runtime install lacks, is needed only on a device)."""
    if all(provider == "CPUExecutionProvider" for provider in providers):
        return []
    import tempfile

    import onnx
    import onnxruntime as ort

    with tempfile.TemporaryDirectory() as folder:
        options = ort.SessionOptions()
        options.optimized_model_filepath = os.path.join(folder, "optimized.onnx")
        options.log_severity_level = 3
        ort.InferenceSession(path, options, providers=providers)
        return copies_in(onnx.load(options.optimized_model_filepath, load_external_data=False).graph)


def copies_in(graph) -> list[str]:
    """An ONNX graph's MemcpyToHost / MemcpyFromHost nodes, as device_copies says them."""
    readers: dict[str, list[str]] = {}
    writers: dict[str, str] = {}
    for node in graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node.op_type)
        for name in node.output:
            writers[name] = node.op_type
    copies = []
    for node in graph.node:
        if node.op_type == "MemcpyToHost":
            copies.append(f"{node.op_type} -> {', '.join(sorted(set(readers.get(node.output[0], ['(an output)']))))}")
        elif node.op_type == "MemcpyFromHost":
            copies.append(f"{writers.get(node.input[0], '(an input)')} -> {node.op_type}")
    return copies


def model_only(args, seconds: float = 4.0) -> None:
    """Per second of audio per stream: the CPU (process time, one onnxruntime thread) and the wall-clock time of the
    graph calls of a StreamSet of B streams at the model's default chunk, then the bigram decoder of each stream
    alone and of all at once.  With --provider cuda the wall clock is the one that counts (the GPU's time is not
    the process's CPU), and the I/O binding arms show what keeping the state on the GPU saves."""
    from speechattn.runtime.transcribe import resolve_model
    from speechattn_export.decoder import new_segmenter, push_many
    from speechattn_export.stream_client import StreamingModel, providers_for

    try:
        providers = providers_for(args.provider)
        batches = [int(b) for b in args.batches.split(",")]
        if not all(1 <= b <= 8192 for b in batches):
            raise ValueError(f"--batches {args.batches}: each from 1 to 8192")
    except ValueError as error:
        raise SystemExit(f"serve_load.py: {error}") from None
    from speechattn.errors import SpeechattnError

    try:
        model = StreamingModel(resolve_model(args.model), providers=providers, num_threads=1)
    except (SpeechattnError, ValueError) as error:
        raise SystemExit(f"serve_load.py: {error}") from None
    chunk = model.default_chunk_frames * model.hop_samples
    speech = clips(max(batches), args.speech)
    calls = int(seconds * model.sample_rate / chunk)
    binding = {"auto": [model.device != "cpu"], "on": [True], "off": [False], "both": [False, True]}[args.io_binding]
    copies = device_copies(model.path, providers)
    print(f"# {args.model} on {model.session.get_providers()[0]}, chunk {model.default_chunk_frames} frames, "
          f"{seconds:g} s of speech per stream, one onnxruntime thread; load average {os.getloadavg()[0]:.1f}; "
          f"{len(copies)} copies between the device and the host in the graph"
          + (f": {'; '.join(copies)}" if copies else ""))
    print("| streams per graph call | I/O binding | model ms CPU per stream-second | model ms wall per stream-second | "
          "streams per core (model CPU) | real-time streams (model wall) | bigram decoder alone ms | "
          "decoder batched ms |")
    print("|---|---|---|---|---|---|---|---|")
    for batch, bound in ((b, on) for b in batches for on in binding):
        streams = model.new_stream_set(max_batch=batch, bound=bound)
        for key in range(batch):
            streams.add(key)
        alone = [new_segmenter("bigram", model.phones) for _ in range(batch)]
        together = [new_segmenter("bigram", model.phones) for _ in range(batch)]
        model_cpu = model_wall = alone_cpu = together_cpu = 0.0
        for call in range(calls):
            for key in range(batch):
                streams.push(key, np.resize(speech[key], (call + 1) * chunk)[call * chunk:])
            started, wall = time.process_time(), time.perf_counter()
            frames = streams.step()
            model_cpu += time.process_time() - started
            model_wall += time.perf_counter() - wall
            started = time.process_time()
            for key, got in frames.items():
                alone[key].push(got.log_probs)
            alone_cpu += time.process_time() - started
            started = time.process_time()
            push_many([together[key] for key in frames], [got.log_probs for got in frames.values()])
            together_cpu += time.process_time() - started
        stream_seconds = batch * calls * chunk / model.sample_rate
        print(f"| {batch} | {'on' if bound else 'off'} | {1000 * model_cpu / stream_seconds:.1f} | "
              f"{1000 * model_wall / stream_seconds:.1f} | {stream_seconds / model_cpu:.0f} | "
              f"{stream_seconds / model_wall:.0f} | {1000 * alone_cpu / stream_seconds:.2f} | "
              f"{1000 * together_cpu / stream_seconds:.2f} |", flush=True)


if __name__ == "__main__":
    main()
