"""What lets `speechattn serve` hold many streams, each protected for exactness: the StreamSet keeps the stacked
state of streams stepped together, the batcher waits for the live streams' chunks, and --workers processes share
the port.  The tiny random model; the worker tests run the command itself."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("websockets")
pytest.importorskip("prometheus_client")

from speechattn.audio import speechlike_signal  # noqa: E402
from speechattn.cli.common import load_onnx  # noqa: E402
from speechattn.runtime.serve import Server, ServeOptions  # noqa: E402
from speechattn_export.decoder import PhoneBigram  # noqa: E402
from speechattn_export.pipeline import DecodingOptions, PhoneStream  # noqa: E402
from speechattn_export.stream_client import StreamSet  # noqa: E402
from test_serve import CONFIDENCE_TOLERANCE  # noqa: E402
from test_serve_replicas import Replica  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def model(tiny_onnx):
    return load_onnx(tiny_onnx)


class WatchedModel:
    """The model as a StreamSet sees it, noting each call whose state is the very dict a call returned before."""

    def __init__(self, model) -> None:
        self._model, self.returned, self.calls, self.reused = model, set(), 0, 0

    def __getattr__(self, name: str):
        return getattr(self._model, name)

    def run(self, audio, chunk_frames, final, state):
        self.calls += 1
        self.reused += id(state) in self.returned
        log_probs, new_state = self._model.run(audio, chunk_frames, final, state)
        self.returned.add(id(new_state))
        return log_probs, new_state


def test_streams_stepped_together_again_reuse_their_stacked_state_and_each_gets_what_it_gets_alone(model):
    """Seven streams at one pace (so the same ones are ready together, call after call), one of them late now and
    then, one joining late, one leaving unfinished (discard) and the rest finished (remove), at most 3 a call: most
    calls take the state the last call returned as it is, and every stream's frames equal the stream alone."""
    rng = np.random.default_rng(2)
    watched = WatchedModel(model)
    streams = StreamSet(watched, 4, max_batch=3)
    audios = {key: speechlike_signal(1.6, seed=40 + key).astype(np.float32) for key in range(7)}
    joins = {key: (0 if key != 6 else 9) for key in audios}
    at, got, owed = {}, {key: [] for key in audios}, 0
    step = 4 * model.hop_samples
    for round_number in range(60):
        for key, when in joins.items():
            if when == round_number:
                streams.add(key)
                at[key] = 0
        for key in list(at):
            size = step
            if key == 3:  # late now and then: nothing this round, what it owes next time
                if rng.uniform() < 0.2:
                    owed += 1
                    continue
                size, owed = step * (1 + owed), 0
            streams.push(key, audios[key][at[key]:at[key] + size])
            at[key] += size
        for key, frames in streams.step().items():
            got[key].append(frames.log_probs)
        if round_number == 20:
            streams.discard(5)
            del at[5]
        for key in [k for k in at if at[k] >= len(audios[k])]:
            got[key].append(streams.remove(key).log_probs)
            del at[key]
        if not at and round_number > 9:
            break
    assert len(streams) == 0 and not streams._stacks and not streams._held  # nothing held for a gone stream
    assert watched.reused > watched.calls // 2
    for key, audio in audios.items():
        if key == 5:
            continue
        alone = model.new_stream(4)
        expected = np.concatenate([alone.push(audio).log_probs, alone.finish().log_probs])
        together = np.concatenate(got[key])
        assert together.shape == expected.shape, key
        assert np.abs(together - expected).max() <= 1e-5, key


def test_the_servers_counted_model_counts_bound_calls_as_plain_ones_and_a_bound_set_is_exact(model):
    """On a GPU the server's stream sets call run_bound (the state stays on the device): those calls are counted in
    the metrics as run's are, and such a set of streams, here with the state in the CPU's memory, gives each stream
    what it gets alone."""
    from speechattn.runtime.serve import CountedModel, Metrics

    metrics = Metrics()
    counted = CountedModel(model, metrics)
    streams = StreamSet(counted, 4, max_batch=8, bound=True)
    audios = {key: speechlike_signal(0.8, seed=60 + key).astype(np.float32) for key in range(3)}
    for key, audio in audios.items():
        streams.add(key)
        streams.push(key, audio)
    got = {key: [frames.log_probs] for key, frames in streams.step().items()}
    for key in audios:
        got[key].append(streams.remove(key).log_probs)
    buckets = {line.split('le="')[1].split('"')[0]: float(line.split()[-1]) for line in metrics.text().decode()
               .splitlines() if line.startswith("speechattn_batch_streams_bucket")}
    assert buckets["4.0"] - buckets["2.0"] >= 1, buckets  # the bound call of all three, counted
    for key, audio in audios.items():
        alone = model.new_stream(4)
        expected = np.concatenate([alone.push(audio).log_probs, alone.finish().log_probs])
        assert np.abs(np.concatenate(got[key]) - expected).max() <= 1e-5, key


def test_the_batcher_waits_for_the_live_streams_chunks_and_steps_them_in_fewer_calls(model):
    """16 clients sending 40 ms frames at real-time pace, their frames spread over each 40 ms: waiting up to 20 ms
    for the live streams' chunks steps at least 1.5 times as many streams per graph call as not waiting, and each
    stream's segments are still the kit's alone."""
    audios = [speechlike_signal(1.5, seed=60 + n).astype(np.float32) for n in range(16)]
    frame = 640  # 40 ms at 16 kHz

    async def client(url, audio, phase):
        from websockets.asyncio.client import connect

        async with connect(url) as ws:
            await ws.send(json.dumps({"type": "start", "sample_rate": 16000, "format": "float32",
                                      "options": {"chunk_frames": 4}}))
            await ws.recv()
            await asyncio.sleep(phase)
            began = asyncio.get_running_loop().time()
            for number, start in enumerate(range(0, len(audio), frame)):
                await asyncio.sleep(max(0.0, began + number * 0.04 - asyncio.get_running_loop().time()))
                await ws.send(audio[start:start + frame].tobytes())
            await ws.send(json.dumps({"type": "end"}))
            return [json.loads(text) async for text in ws][-1]

    async def streams_per_call(wait_ms):
        server = Server(model, ServeOptions(port=0, max_wait_ms=wait_ms))
        task = asyncio.create_task(server.serve())
        await asyncio.wait_for(server.ready.wait(), 30)
        try:
            url = f"ws://127.0.0.1:{server.address[1]}/stream"
            results = await asyncio.gather(*(client(url, audio, 0.04 * n / len(audios))
                                             for n, audio in enumerate(audios)))
            histogram = server.metrics.batch_size
            return histogram._sum.get() / sum(b.get() for b in histogram._buckets), results
        finally:
            server.shutdown()
            await asyncio.wait_for(task, 30)

    waiting, results = asyncio.run(streams_per_call(20.0))
    not_waiting, _ = asyncio.run(streams_per_call(0.0))
    assert waiting >= 1.5 * not_waiting, (waiting, not_waiting)
    bigram = PhoneBigram.load()
    for audio, result in zip(audios, results):
        local = PhoneStream(model, DecodingOptions(chunk_frames=4), bigram)
        for start in range(0, len(audio), frame):
            local.push(audio[start:start + frame])
        local.finish()
        expected = local.segment_dicts()
        assert [(s["start"], s["end"], s["phone"]) for s in result["segments"]] == \
            [(s["start"], s["end"], s["phone"]) for s in expected]
        assert all(abs(s["confidence"] - e["confidence"]) <= CONFIDENCE_TOLERANCE
                   for s, e in zip(result["segments"], expected))


def Workers(model_path: Path, *options: str) -> Replica:
    """`speechattn serve --workers 2 --port 0` on the tiny model, its log lines collected."""
    return Replica(model_path, "--workers", "2", *options)


async def stream(url, audio, pace: float = 0.0, started: asyncio.Event | None = None):
    """One client: start, 40 ms frames (every `pace` seconds), end; (ready message, result, close code)."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    async with connect(url) as ws:
        await ws.send(json.dumps({"type": "start", "sample_rate": 16000, "format": "float32",
                                  "options": {"chunk_frames": 4}}))
        ready = json.loads(await ws.recv())
        if started is not None:
            started.set()

        async def send():
            try:
                for start in range(0, len(audio), 640):
                    await ws.send(audio[start:start + 640].tobytes())
                    await asyncio.sleep(pace)
                await ws.send(json.dumps({"type": "end"}))
            except ConnectionClosed:  # the server closed first (shutting down): its result is in the messages
                pass

        sender = asyncio.create_task(send())
        messages = [json.loads(text) async for text in ws]
        await sender
        return ready, messages[-1] if messages else None, ws.close_code


def test_two_workers_share_the_port_each_stream_equal_to_the_kit_and_metrics_sum_both(tiny_onnx, model):
    """--workers 2: twelve streams land on both processes (worker w numbers its streams w + 1, w + 3, ...), each
    one's phones are the kit's alone, and /metrics, whichever worker answers, counts every stream of both."""
    server = Workers(tiny_onnx)
    audios = [speechlike_signal(0.8 + 0.1 * n, seed=80 + n).astype(np.float32) for n in range(12)]
    try:
        async def main():
            return await asyncio.gather(*(stream(server.url, audio) for audio in audios))

        results = asyncio.run(main())
        totals = {server.metric("speechattn_streams_total") for _ in range(6)}
        audio_seconds = server.metric("speechattn_audio_seconds_total")
    finally:
        code = server.stop()
    assert code == 0
    assert {ready["stream"] % 2 for ready, _, _ in results} == {0, 1}  # both workers took streams
    assert totals == {12.0}
    assert audio_seconds == pytest.approx(sum(len(a) for a in audios) / 16000, rel=1e-6)
    pids = {line.split("pid=")[1].split()[0] for line in server.lines if "event=listening host" in line}
    assert len(pids) == 2
    for audio, (_, result, close) in zip(audios, results):
        local = PhoneStream(model, DecodingOptions(chunk_frames=4), PhoneBigram.load())
        local.push(audio)
        local.finish()
        assert close == 1000
        assert [(s["start"], s["end"], s["phone"]) for s in result["segments"]] == \
            [(s["start"], s["end"], s["phone"]) for s in local.segment_dicts()]


def test_max_streams_counts_both_workers_and_sigterm_gives_every_workers_streams_their_result(tiny_onnx):
    """--max-streams 4 over two workers: a fifth stream is refused 1013 whichever worker it reaches; another server
    on the same port is refused in one line (SO_REUSEPORT does not let it share the port); SIGTERM while four
    streams are open gives each its final result and close 1001, and the command exits 0."""
    server = Workers(tiny_onnx, "--max-streams", "4")
    second = subprocess.run([sys.executable, "-m", "speechattn", "serve", "--model", str(tiny_onnx), "--port",
                             str(server.port), "--workers", "2"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert second.returncode == 1 and second.stderr.strip().splitlines() == [
        f"speechattn serve: error: cannot listen on 127.0.0.1:{server.port} (--port: Address already in use)"]
    audio = speechlike_signal(20.0, seed=90).astype(np.float32)

    async def main():
        from websockets.asyncio.client import connect
        from websockets.exceptions import ConnectionClosed

        started = [asyncio.Event() for _ in range(4)]
        clients = [asyncio.create_task(stream(server.url, audio, pace=0.04, started=event)) for event in started]
        await asyncio.wait_for(asyncio.gather(*(event.wait() for event in started)), 30)
        refused = []
        for _ in range(4):  # a fifth, four times: the kernel may hand it to either worker
            async with connect(server.url) as ws:
                try:
                    await ws.send(json.dumps({"type": "start", "sample_rate": 16000}))
                    async for _ in ws:
                        pass
                except ConnectionClosed:  # closed before the start message went out
                    pass
                refused.append((ws.close_code, ws.close_reason))
        open_now = server.metric("speechattn_streams_open")
        await asyncio.sleep(0.5)
        server.process.send_signal(signal.SIGTERM)
        return refused, open_now, await asyncio.wait_for(asyncio.gather(*clients), 60)

    try:
        refused, open_now, results = asyncio.run(main())
        assert server.process.wait(60) == 0
    finally:
        if server.process.poll() is None:
            server.process.kill()
    assert open_now == 4
    assert all(code == 1013 and "full" in reason for code, reason in refused)
    for ready, result, close in results:
        assert close == 1001 and result["type"] == "result" and result["segments"]
    assert sum("event=stopped" in line for line in server.lines) == 2
