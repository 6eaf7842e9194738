"""A soak of `speechattn serve`: for --minutes, about --streams clients at a time stream real speech at real-time pace,
streams opening and closing; the server's memory must stay flat and no stream may be lost or mixed up.

    python bench/serve_soak.py [--minutes 30] [--streams 20] [--model default-int8] [--rss-bound-mib 20]

Each stream: a random clip of ../shared/data/librispeech-clips (looped where shorter) cut to 2-20 s, resampled with
soxr to 8, 16 or 44.1 kHz, sent as int16 in pieces of 20, 40 or 100 ms every piece's length, with a chunk size the
model serves.  85 % end normally ("end", then the result), 10 % vanish (the TCP connection aborted mid-stream, no
close frame), 5 % stop reading for 2-8 s mid-stream and then read on.  Every normally ended stream that got a result
is checked (--check-fraction of them) against the kit's PhoneStream on the same audio in the same pieces, in a
separate process: ok, or mismatched; a normally ended stream without a result is lost.  The server's RSS (the
server and its workers, /proc VmRSS) is sampled every 10 s; the verdict: RSS growth from minute 2 to the last minute
within --rss-bound-mib, lost = 0, mismatched = 0, /metrics' speechattn_streams_open back to 0, and one server
`event=left` log line per vanished client.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import subprocess
import sys
import threading
import time
import urllib.request
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SPEECH = ROOT.parent / "shared" / "data" / "librispeech-clips" / "audio"
RATES = (8000, 16000, 44100)
PIECES_MS = (20, 40, 100)
CONFIDENCE_TOLERANCE = 2e-4  # as tests/test_serve.py: confidences are rounded to 4 decimals, batched sums differ
RSS_EVERY_SECONDS = 10.0
MAX_PENDING_CHECKS = 40  # past this, streams go unchecked rather than the checks' backlog growing


@dataclass(frozen=True)
class SoakOptions:
    minutes: float = 30.0
    streams: int = 20  # concurrent clients kept streaming
    check_fraction: float = 1.0  # of the normally ended streams, checked against the kit's PhoneStream alone
    vanish_fraction: float = 0.10  # clients that abort their TCP connection mid-stream
    slow_fraction: float = 0.05  # clients that stop reading for 2-8 s mid-stream
    shortest_seconds: float = 2.0
    longest_seconds: float = 20.0
    seed: int = 0


@dataclass
class Tally:
    """What the soak saw: stream outcomes, RSS samples (seconds since the start, MiB), and the server's log."""
    started: float = field(default_factory=time.monotonic)
    ok: int = 0
    mismatched: int = 0
    lost: int = 0
    unchecked: int = 0  # normally ended with a result, not in the checked sample
    vanished: int = 0
    slow_ok: int = 0
    slow_closed: int = 0  # a slow reader the server closed (1008: too many results queued for it)
    done: int = 0
    rss: list = field(default_factory=list)
    done_at: list = field(default_factory=list)  # seconds since the start, one per finished stream
    problems: list = field(default_factory=list)
    vanished_streams: list = field(default_factory=list)  # the server's number of each stream whose client vanished
    log: list = field(default_factory=list)


def speech_clips(folder: Path = SPEECH, count: int = 200) -> list[np.ndarray]:
    """16 kHz float32 clips, the first `count` of the folder."""
    import soundfile as sf

    files = sorted(folder.glob("*.opus"))[:count]
    if not files:
        raise SystemExit(f"{folder}: no speech clips")
    return [sf.read(str(f), dtype="float32")[0] for f in files]


def server_rss_mib(pid: int) -> float:
    """VmRSS of the server and its children (the --workers processes), MiB."""
    total_kib = 0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:  # gone meanwhile
            continue
        parent = re.search(r"^PPid:\s+(\d+)", text, re.M)
        rss = re.search(r"^VmRSS:\s+(\d+) kB", text, re.M)
        if rss and (status.parent.name == str(pid) or (parent and parent.group(1) == str(pid))):
            total_kib += int(rss.group(1))
    return total_kib / 1024


def start_server(model: str) -> tuple[subprocess.Popen, str, list[str], threading.Thread]:
    """`speechattn serve --port 0`: (the process, its address host:port, its log lines, the thread filling them)."""
    command = [sys.executable, "-m", "speechattn", "serve", "--model", model, "--port", "0"]
    process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    line = ""
    while "listening on" not in line:
        line = process.stderr.readline()
        if not line:
            raise SystemExit(f"the server stopped: exit {process.wait()}")
    log: list[str] = [line]
    reader = threading.Thread(target=lambda: log.extend(iter(process.stderr.readline, "")), daemon=True)
    reader.start()
    return process, line.split()[-1].removeprefix("ws://").split("/")[0], log, reader


# ---- the local check, in its own process -------------------------------------------------------------------------
_model = None


def _load(model_path: str) -> None:
    global _model
    from speechattn.cli.common import load_onnx

    os.nice(10)  # the checks wait for spare CPU, the server comes first
    _model = load_onnx(Path(model_path), threads=1)


def local_segments(audio: np.ndarray, rate: int, chunk_frames: int, piece: int) -> list[dict]:
    """The kit's PhoneStream alone on the same int16 audio, in the same pieces."""
    from speechattn_export.decoder import PhoneBigram
    from speechattn_export.pipeline import DecodingOptions, PhoneStream

    options = DecodingOptions(chunk_frames=chunk_frames)
    stream = PhoneStream(_model, options, PhoneBigram.load() if options.decoder == "bigram" else None)
    for start in range(0, len(audio), piece):
        stream.push(audio[start:start + piece], sample_rate=rate)
    stream.finish()
    return stream.segment_dicts()


def same_segments(remote: list[dict], local: list[dict]) -> bool:
    return len(remote) == len(local) and all(
        (r["start"], r["end"], r["phone"]) == (lo["start"], lo["end"], lo["phone"])
        and abs(r["confidence"] - lo["confidence"]) <= CONFIDENCE_TOLERANCE for r, lo in zip(remote, local))


# ---- one client --------------------------------------------------------------------------------------------------
@dataclass
class Plan:
    audio: np.ndarray  # int16 at `rate`
    rate: int
    chunk_frames: int
    piece: int  # samples per message
    kind: str  # "normal", "vanish" or "slow"
    stop_at: float  # fraction of the audio sent before vanishing or pausing the reading
    pause_seconds: float


def make_plan(rng: random.Random, speech: list[np.ndarray], chunks: list[int], options: SoakOptions) -> Plan:
    import soxr

    clip = speech[rng.randrange(len(speech))]
    seconds = rng.uniform(options.shortest_seconds, options.longest_seconds)
    audio = np.resize(clip, int(seconds * 16000))  # looped where the clip is shorter
    rate = rng.choice(RATES)
    if rate != 16000:
        audio = soxr.resample(audio, 16000, rate)
    draw = rng.random()
    kind = "vanish" if draw < options.vanish_fraction else \
        "slow" if draw < options.vanish_fraction + options.slow_fraction else "normal"
    return Plan(np.round(np.clip(audio, -1, 1) * 32767).astype("<i2"), rate, rng.choice(chunks),
                int(rate * rng.choice(PIECES_MS) / 1000), kind, rng.uniform(0.2, 0.8), rng.uniform(2.0, 8.0))


async def run_client(url: str, plan: Plan) -> tuple[str, dict | None, int | None]:
    """(what happened, the result message or None, the close code)."""
    from websockets.asyncio.client import connect

    messages: list[dict] = []
    async with connect(url, max_size=None, open_timeout=60) as ws:
        await ws.send(json.dumps({"type": "start", "sample_rate": plan.rate, "format": "int16",
                                  "options": {"chunk_frames": plan.chunk_frames}}))
        reading = asyncio.Event()
        reading.set()

        async def receive():
            async for text in ws:
                messages.append(json.loads(text))
                await reading.wait()

        receiver = asyncio.create_task(receive())
        started = time.monotonic()
        stop_sample = int(plan.stop_at * len(plan.audio)) if plan.kind != "normal" else len(plan.audio)
        for begin in range(0, len(plan.audio), plan.piece):
            if begin >= stop_sample and plan.kind == "vanish":
                ws.transport.abort()  # no close frame: the client is gone
                receiver.cancel()
                ready = next((m for m in messages if m.get("type") == "ready"), {})
                return "vanished", ready.get("stream"), None
            if begin >= stop_sample and plan.kind == "slow" and reading.is_set():
                reading.clear()
                asyncio.get_running_loop().call_later(plan.pause_seconds, reading.set)
            due = started + (begin + plan.piece) / plan.rate  # a piece exists at its end
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            try:
                await ws.send(plan.audio[begin:begin + plan.piece].tobytes())
            except Exception:  # closed by the server (a slow reader: 1008)
                break
        try:
            await ws.send(json.dumps({"type": "end"}))
        except Exception:
            pass
        reading.set()
        await receiver
        result = messages[-1] if messages and messages[-1].get("type") == "result" else None
        return "ended", result, ws.close_code


class _Soak:
    """The soak's clients on one event loop: streams kept at `options.streams`, each ended one counted, the normally
    ended ones checked in `pool` against the kit's PhoneStream alone, the server's RSS sampled."""

    def __init__(self, url, process, pool, chunks, speech, options: SoakOptions, tally: Tally, report):
        self.url, self.process, self.pool, self.chunks, self.speech = url, process, pool, chunks, speech
        self.options, self.tally, self.report = options, tally, report
        self.rng = random.Random(options.seed)
        self.checking: set = set()

    async def sample_rss(self):
        tally, minute_shown = self.tally, 0
        while True:
            now = time.monotonic() - tally.started
            tally.rss.append((now, server_rss_mib(self.process.pid)))
            if int(now // 60) > minute_shown:
                minute_shown = int(now // 60)
                self.report(f"| {minute_shown} | {tally.done} | {tally.rss[-1][1]:.1f} |", flush=True)
            await asyncio.sleep(RSS_EVERY_SECONDS)

    async def one(self, plan: Plan):
        tally = self.tally
        try:
            what, result, code = await run_client(self.url, plan)
        except Exception as error:  # a refused or broken connection: the stream is lost unless it vanished
            what, result, code = ("vanished", None, None) if plan.kind == "vanish" else \
                (f"error {type(error).__name__}: {error}", None, None)
        tally.done += 1
        tally.done_at.append(time.monotonic() - tally.started)
        if what == "vanished":
            tally.vanished += 1
            tally.vanished_streams.append(result)
        elif plan.kind == "slow" and result is None and code == 1008:
            tally.slow_closed += 1
        elif result is None:
            tally.lost += 1
            tally.problems.append(f"lost: {plan.kind} {plan.rate} Hz chunk {plan.chunk_frames}: {what} "
                                  f"code {code}")
        elif self.rng.random() < self.options.check_fraction and len(self.checking) < MAX_PENDING_CHECKS:
            future = self.pool.submit(local_segments, plan.audio, plan.rate, plan.chunk_frames, plan.piece)
            task = asyncio.create_task(self.verify(plan, result, asyncio.wrap_future(future)))
            self.checking.add(task)
            task.add_done_callback(self.checking.discard)  # its audio goes with it
        else:
            tally.unchecked += 1

    async def verify(self, plan: Plan, result: dict, local):
        tally = self.tally
        try:
            alone = await local
        except Exception as error:
            alone = [{"error": f"{type(error).__name__}: {error}"}]
        if same_segments(result["segments"], alone):
            tally.ok += plan.kind == "normal"
            tally.slow_ok += plan.kind == "slow"
        else:
            tally.mismatched += 1
            tally.problems.append(f"mismatched: {plan.kind} {plan.rate} Hz chunk {plan.chunk_frames} "
                                  f"piece {plan.piece}: {len(result['segments'])} segments here, "
                                  f"{len(alone)} alone")

    async def run(self):
        deadline = self.tally.started + self.options.minutes * 60
        sampler = asyncio.create_task(self.sample_rss())
        running: set = set()
        while time.monotonic() < deadline:
            while len(running) < self.options.streams:
                running.add(asyncio.create_task(self.one(make_plan(self.rng, self.speech, self.chunks,
                                                                   self.options))))
                await asyncio.sleep(self.rng.uniform(0, 0.2))  # streams open spread out, not in one burst
            finished, running = await asyncio.wait(running, timeout=max(0.0, deadline - time.monotonic()),
                                                   return_when=asyncio.FIRST_COMPLETED)
        await asyncio.gather(*running)
        while self.checking:  # verify tasks remove themselves; wait for the last ones
            await asyncio.wait(list(self.checking))
        sampler.cancel()
        self.tally.rss.append((time.monotonic() - self.tally.started, server_rss_mib(self.process.pid)))  # at the end


def soak(model: str, speech: list[np.ndarray], options: SoakOptions = SoakOptions(), report=print) -> Tally:
    """Run the soak against a fresh server; print a row a minute through `report`; the tally."""
    from speechattn.cli.common import load_onnx
    from speechattn.runtime.transcribe import resolve_model

    model_path = str(resolve_model(model))
    chunks = [int(c) for c in load_onnx(Path(model_path)).allowed_chunk_frames]
    # The checking process first: forked later, it would hold copies of the open sockets, and a client that
    # vanished then would not reach the server (no FIN while the copy lives) until its idle timeout.
    pool = ProcessPoolExecutor(1, initializer=_load, initargs=(model_path,))
    pool.submit(int).result()
    process, address, log, reader = start_server(model)
    tally = Tally(log=log)
    try:
        asyncio.run(_Soak(f"ws://{address}/stream", process, pool, chunks, speech, options, tally, report).run())
        tally.streams_open_at_end = streams_open(address)
    finally:
        pool.shutdown(cancel_futures=True)
        process.terminate()
        process.wait(60)
        reader.join(10)  # the last lines: event=stopped streams_left=...
    return tally


def streams_open(address: str, wait_seconds: float = 30.0) -> float:
    """/metrics' speechattn_streams_open, waited for (up to `wait_seconds`) to come back to 0."""
    waited_until = time.monotonic() + wait_seconds
    while True:
        text = urllib.request.urlopen(f"http://{address}/metrics", timeout=10).read().decode()
        value = float(re.search(r"^speechattn_streams_open(?:\{[^}]*\})? (\S+)$", text, re.M).group(1))
        if value == 0 or time.monotonic() > waited_until:
            return value
        time.sleep(1)


def rss_growth(tally: Tally, from_seconds: float = 60.0) -> float:
    """Mean RSS of the last minute less the mean of the minute from `from_seconds` (minute 2: 60-120 s), MiB."""
    end = tally.rss[-1][0]
    first = [mib for at, mib in tally.rss if from_seconds <= at < from_seconds + 60] or [tally.rss[0][1]]
    last = [mib for at, mib in tally.rss if at >= end - 60]
    return float(np.mean(last) - np.mean(first))


def left_lines(log: list[str]) -> int:
    return sum("event=left" in line for line in log)


def how_vanished_left(tally: Tally) -> dict:
    """Each vanished client's stream: the server's last log line about it (`event=left ...`, or a close the server
    made, e.g. when idle), or None where the client vanished before its "ready" arrived."""
    said: dict[int, str] = {}
    for line in tally.log:
        stream = re.search(r" stream=(\d+) ", line)
        if stream:
            said[int(stream.group(1))] = line.strip()
    return {stream: said.get(stream, "no log line") if stream is not None else "vanished before ready"
            for stream in tally.vanished_streams}


def streams_left_at_stop(log: list[str]) -> list[int]:
    """Each worker's `event=stopped streams_left=N` at SIGTERM: the sessions it still held."""
    return [int(m.group(1)) for line in log for m in [re.search(r"event=stopped streams_left=(\d+)", line)] if m]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default-int8")
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--streams", type=int, default=20, help="concurrent clients kept streaming")
    parser.add_argument("--check-fraction", type=float, default=1.0,
                        help="normally ended streams checked against the kit's PhoneStream alone")
    parser.add_argument("--rss-bound-mib", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--vanish-fraction", type=float, default=0.10)
    parser.add_argument("--slow-fraction", type=float, default=0.05)
    parser.add_argument("--speech", type=Path, default=SPEECH, help="a folder of .opus speech clips")
    args = parser.parse_args()
    speech = speech_clips(args.speech)
    print(f"# {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start; model {args.model}; "
          f"{args.minutes:g} min, {args.streams} streams at a time; {len(speech)} clips", flush=True)
    print("| minute | streams done | server RSS MiB |\n|---|---|---|", flush=True)
    tally = soak(args.model, speech, SoakOptions(args.minutes, args.streams, args.check_fraction, args.vanish_fraction,
                                                 args.slow_fraction, seed=args.seed))
    growth = rss_growth(tally)
    left = left_lines(tally.log)
    not_left = {stream: line for stream, line in how_vanished_left(tally).items() if "event=left" not in line}
    print(f"# RSS: first sample {tally.rss[0][1]:.1f}, last {tally.rss[-1][1]:.1f} MiB, peak "
          f"{max(m for _, m in tally.rss):.1f}; growth minute 2 -> last minute {growth:+.1f} MiB (bound "
          f"{args.rss_bound_mib:g}); from mid-run to the last minute "
          f"{rss_growth(tally, tally.rss[-1][0] / 2):+.1f} MiB")
    print(f"# streams {tally.done}: ok {tally.ok}, slow readers ok {tally.slow_ok}, slow readers closed by the server "
          f"{tally.slow_closed}, unchecked {tally.unchecked}, vanished {tally.vanished}, lost {tally.lost}, "
          f"mismatched {tally.mismatched}; load average {os.getloadavg()[0]:.1f} at the end")
    print(f"# /metrics speechattn_streams_open at the end: {tally.streams_open_at_end:g}; server log: "
          f"{sum('event=open' in line for line in tally.log)} event=open, {left} event=left "
          f"(vanished clients {tally.vanished}, {len(not_left)} of them without an event=left line)")
    for stream, line in list(not_left.items())[:10]:
        print(f"# vanished stream {stream}: {line}")
    print(f"# at SIGTERM, sessions each worker still held: {streams_left_at_stop(tally.log)}")
    for problem in tally.problems[:20]:
        print(f"# {problem}")
    passed = growth <= args.rss_bound_mib and tally.lost == 0 and tally.mismatched == 0 and \
        tally.streams_open_at_end == 0 and not not_left and not any(streams_left_at_stop(tally.log))
    print(f"# verdict: {'PASS' if passed else 'FAIL'}", flush=True)
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
