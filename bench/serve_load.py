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
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SPEECH = ROOT.parent / "shared" / "data" / "librispeech-clips" / "audio"


def clips(count: int) -> list[np.ndarray]:
    import soundfile as sf

    files = sorted(SPEECH.glob("*.opus"))[:count]
    if not files:
        raise SystemExit(f"{SPEECH}: no speech clips")
    return [np.round(sf.read(str(f), dtype="float32")[0] * 32767).astype("<i2") for f in files]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def client(url: str, audio: np.ndarray, seconds: float, frame_ms: float, jitter_ms: float, delays: list,
                 rng: random.Random) -> None:
    from websockets.asyncio.client import connect

    step = int(16000 * frame_ms / 1000)
    total = int(seconds * 16000)
    looped = np.resize(audio, total)
    async with connect(url, max_size=None) as ws:
        await ws.send(json.dumps({"type": "start", "sample_rate": 16000, "format": "int16"}))
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


def start_server(model: str, max_batch: int, threads: int | None) -> tuple[subprocess.Popen, str]:
    command = [sys.executable, "-m", "speechattn", "serve", "--model", model, "--port", "0", "--max-streams", "5000",
               "--max-batch", str(max_batch)] + (["--threads", str(threads)] if threads else [])
    process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    line = ""
    while "listening on" not in line:
        line = process.stderr.readline()
        if not line:
            raise SystemExit(f"the server stopped: exit {process.wait()}")
    return process, line.split()[-1]


async def one_level(url: str, speech: list[np.ndarray], clients: int, args) -> list[float]:
    delays: list[float] = []
    rng = random.Random(clients)
    tasks = []
    for number in range(clients):
        tasks.append(asyncio.create_task(client(url, speech[number % len(speech)], args.seconds, args.frame_ms,
                                                args.jitter_ms, delays, rng)))
        await asyncio.sleep(args.frame_ms / 1000 / max(1, clients))  # spread the starts over one frame
    await asyncio.gather(*tasks)
    return delays


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default-int8")
    parser.add_argument("--seconds", type=float, default=15.0, help="audio each client streams at each level")
    parser.add_argument("--frame-ms", type=float, default=40.0)
    parser.add_argument("--jitter-ms", type=float, default=20.0)
    parser.add_argument("--budget-ms", type=float, default=300.0)
    parser.add_argument("--max-clients", type=int, default=400)
    parser.add_argument("--threads", type=int, default=None, help="onnxruntime threads of the server")
    parser.add_argument("--arms", default="64,1", help="--max-batch of each server, in turn")
    args = parser.parse_args()
    levels = [n for n in (1, 10, 50, 100, 200, 300, 400, 600, 800) if n <= args.max_clients]
    speech = clips(max(levels))
    print(f"# {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start; model {args.model}; "
          f"{args.seconds:g} s per client per level, {args.frame_ms:g} ms frames, jitter 0-{args.jitter_ms:g} ms")
    print("| --max-batch | streams | p50 delay ms | p99 delay ms | server CPU % of a core per stream | "
          "load generator CPU % | load average |")
    print("|---|---|---|---|---|---|---|")
    for max_batch in (int(a) for a in args.arms.split(",")):
        process, url = start_server(args.model, max_batch, args.threads)
        try:
            for clients in levels:
                server_before, own_before, wall_before = cpu_seconds(process.pid), time.process_time(), time.monotonic()
                delays = asyncio.run(one_level(url, speech, clients, args))
                wall = time.monotonic() - wall_before
                server_cpu = (cpu_seconds(process.pid) - server_before) / wall
                own_cpu = (time.process_time() - own_before) / wall
                p50, p99 = (np.percentile(delays, [50, 99]) * 1000) if delays else (float("nan"),) * 2
                print(f"| {max_batch} | {clients} | {p50:.0f} | {p99:.0f} | {100 * server_cpu / clients:.1f} | "
                      f"{100 * own_cpu:.0f} | {os.getloadavg()[0]:.1f} |", flush=True)
                if p99 > args.budget_ms:
                    break
        finally:
            process.terminate()
            process.wait(30)


if __name__ == "__main__":
    main()
