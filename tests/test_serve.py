"""`speechattn serve`: many live streams over WebSocket, batched across streams, each equal to the kit's stream alone.

The server and its clients run in one asyncio loop (the real `websockets` server and client over TCP on 127.0.0.1),
on the tiny random model; the SIGTERM test runs the command itself."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("websockets")
pytest.importorskip("prometheus_client")

from speechattn.audio import speechlike_signal  # noqa: E402
from speechattn.cli.common import load_onnx  # noqa: E402
from speechattn.runtime.serve import Server, ServeOptions  # noqa: E402
from speechattn_export.pipeline import DecodingOptions, PhoneStream  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "export" / "serve.schema.json").read_text())
CONFIDENCE_TOLERANCE = 2e-4  # confidences are rounded to 4 decimals; batched and alone differ by float sums only


@pytest.fixture(scope="module")
def model(tiny_onnx):
    return load_onnx(tiny_onnx)


def audio_at(rate: int, seconds: float, seed: int) -> np.ndarray:
    import soxr

    return soxr.resample(speechlike_signal(seconds, seed=seed), 16000, rate).astype(np.float32) if rate != 16000 \
        else speechlike_signal(seconds, seed=seed).astype(np.float32)


def local_result(model, audio: np.ndarray, rate: int, options: DecodingOptions, piece: int) -> dict:
    """The same audio through the kit's PhoneStream alone, in the same pieces."""
    from speechattn_export.decoder import PhoneBigram

    stream = PhoneStream(model, options, PhoneBigram.load() if options.decoder == "bigram" else None)
    for start in range(0, len(audio), piece):
        stream.push(audio[start:start + piece], sample_rate=rate)
    stream.finish()
    return {"segments": stream.segment_dicts(), "cues": stream.cue_dicts() if options.visemes else None}


def same_segments(remote: list[dict], local: list[dict]) -> bool:
    return len(remote) == len(local) and all(
        (r["start"], r["end"], r["phone"]) == (lo["start"], lo["end"], lo["phone"])
        and abs(r["confidence"] - lo["confidence"]) <= CONFIDENCE_TOLERANCE for r, lo in zip(remote, local))


def check_schema(message: dict) -> None:
    import jsonschema

    jsonschema.validate(message, SCHEMA)


async def running(model, **settings):
    server = Server(model, ServeOptions(port=0, **settings))
    task = asyncio.create_task(server.serve())
    await asyncio.wait_for(server.ready.wait(), 30)
    return server, task, f"ws://127.0.0.1:{server.address[1]}/stream"


async def stop(server, task) -> None:
    server.shutdown()
    await asyncio.wait_for(task, 30)


async def stream_one(url, audio, rate, sample_format, piece, options: dict, messages: list | None = None):
    """A client: start, audio in pieces of `piece` samples, end; (result, close code, every message)."""
    from websockets.asyncio.client import connect

    seen = [] if messages is None else messages
    async with connect(url, max_size=None) as ws:
        start = {"type": "start", "sample_rate": rate, "format": sample_format, "options": options}
        check_schema(start)
        await ws.send(json.dumps(start))
        seen.append(json.loads(await ws.recv()))
        data = (np.round(audio * 32767).astype("<i2") if sample_format == "int16" else audio.astype("<f4"))
        for begin in range(0, len(data), piece):
            await ws.send(data[begin:begin + piece].tobytes())
            await asyncio.sleep(0)
        await ws.send(json.dumps({"type": "end"}))
        async for text in ws:
            seen.append(json.loads(text))
        return seen[-1], ws.close_code, seen


def test_two_dozen_concurrent_streams_each_equal_the_kit_streamed_alone(model):
    """24 streams at once, of different lengths, rates (8-48 kHz), sample formats, chunk sizes and piece sizes (one
    an odd number of bytes): each one's phones and cues equal the kit's PhoneStream of the same audio alone, and the
    server did step several streams in one call."""
    rng = np.random.default_rng(0)
    rates = (8000, 16000, 22050, 44100, 48000)
    chunks = model.allowed_chunk_frames
    plans = []
    for number in range(24):
        rate = rates[number % len(rates)]
        options = {"chunk_frames": int(chunks[number % len(chunks)]), "decoder": ("bigram", "hysteresis")[number % 2]}
        if number % 3 == 0:
            options["visemes"] = ("rhubarb", "vrm", "oculus")[number % 9 // 3]
        plans.append((rate, audio_at(rate, float(rng.uniform(0.3, 2.5)), number), ("int16", "float32")[number % 2],
                      int(rng.integers(37, 3000)), options))

    async def main():
        server, task, url = await running(model, max_batch=64, max_wait_ms=5)
        try:
            results = await asyncio.gather(*(stream_one(url, audio, rate, fmt, piece, options)
                                             for rate, audio, fmt, piece, options in plans))
            metrics = server.metrics
            calls = metrics.batch_size._sum.get(), sum(b.get() for b in metrics.batch_size._buckets)
        finally:
            await stop(server, task)
        return results, calls

    results, (streams_stepped, calls) = asyncio.run(main())
    assert streams_stepped > calls  # batches of more than one stream happened
    for (rate, audio, fmt, piece, options), (result, code, messages) in zip(plans, results):
        assert code == 1000 and result["type"] == "result"
        heard = np.round(audio * 32767).astype(np.int16) if fmt == "int16" else audio
        local = local_result(model, heard, rate, DecodingOptions(
            decoder=options["decoder"], chunk_frames=options["chunk_frames"], visemes=options.get("visemes")),
            piece)
        assert same_segments(result["segments"], local["segments"]), (rate, fmt, options)
        assert same_segments([s for m in messages if m["type"] == "update" for s in m.get("segments", [])],
                             local["segments"])  # the updates add up to the result
        if local["cues"] is not None:
            assert result["cues"] == local["cues"]
        for message in messages:
            check_schema(message)


def test_health_readiness_and_prometheus_metrics_answer_on_the_stream_port(model):
    async def main():
        server, task, url = await running(model)
        port = server.address[1]

        def get(path):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
                    return response.status, response.headers.get("Content-Type"), response.read().decode()
            except urllib.error.HTTPError as error:
                return error.code, None, error.read().decode()

        try:
            await stream_one(url, audio_at(16000, 0.5, 1), 16000, "int16", 800, {})
            answers = [await asyncio.to_thread(get, path) for path in ("/healthz", "/readyz", "/metrics", "/nothing")]
        finally:
            await stop(server, task)
        return answers

    (health, _, _), (ready, _, _), (status, kind, metrics), (missing, _, _) = asyncio.run(main())
    assert (health, ready, status, missing) == (200, 200, 200, 404)
    assert kind.startswith("text/plain; version=0.0.4")
    assert "speechattn_streams_total 1.0" in metrics and 'speechattn_final_label_delay_seconds_bucket{le="0.3"}' in metrics
    values = dict(line.rsplit(" ", 1) for line in metrics.splitlines() if line and not line.startswith("#"))
    assert abs(float(values["speechattn_audio_seconds_total"]) - 0.5) < 1e-6
    assert float(values["speechattn_batch_streams_count"]) >= 1


def raw_request(port: int, request: bytes) -> bytes:
    """Sends `request` whole (a body of megabytes too) and reads the answer until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def test_the_stream_port_answers_only_get_and_every_other_request_gets_an_http_answer(model):
    """PUT and DELETE /healthz answered 200; POST /stream (any request with a body, which websockets refuses) had
    the connection dropped without a word.  Every method but GET is 405 with Allow: GET, on every path (a HEAD
    without a body), a GET with a body 400, a line that is not HTTP/1.x 400; a 2 MB POST gets its 405 whole (its
    body is read and dropped, not reset under the answer); GET still works beside them."""
    big = b"\0" * (2 << 20)
    requests = {
        "PUT /healthz": b"PUT /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
        "DELETE /healthz": b"DELETE /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
        "HEAD /metrics": b"HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
        "POST /stream": b"POST /stream HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
        "POST /stream 2 MB": b"POST /stream HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(big) + big,
        "POST /nothing chunked": b"POST /nothing HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello"
                                 b"\r\n0\r\n\r\n",
        "GET with a body": b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
        "not HTTP": b"HELLO\r\n\r\n",
        "GET /healthz": b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
    }

    async def main():
        server, task, url = await running(model)
        try:
            answers = {name: await asyncio.to_thread(raw_request, server.address[1], request)
                       for name, request in requests.items()}
            result, code, _ = await stream_one(url, audio_at(16000, 0.5, 1), 16000, "int16", 800, {})
        finally:
            await stop(server, task)
        return answers, result, code

    answers, result, code = asyncio.run(main())
    heads = {name: answer.split(b"\r\n\r\n", 1)[0].decode().split("\r\n") for name, answer in answers.items()}
    for name in ("PUT /healthz", "DELETE /healthz", "HEAD /metrics", "POST /stream", "POST /stream 2 MB",
                 "POST /nothing chunked"):
        assert heads[name][0] == "HTTP/1.1 405 Method Not Allowed" and "Allow: GET" in heads[name], (name, heads[name])
    assert answers["HEAD /metrics"].endswith(b"Content-Length: 0\r\nConnection: close\r\n\r\n")
    assert answers["POST /stream 2 MB"].endswith(b"whole files are POSTed to the server's --http-port\n")
    assert heads["GET with a body"][0] == heads["not HTTP"][0] == "HTTP/1.1 400 Bad Request"
    assert heads["GET /healthz"][0] == "HTTP/1.1 200 OK" and answers["GET /healthz"].endswith(b"\r\n\r\nok\n")
    assert result["type"] == "result" and code == 1000


def test_a_stream_past_max_streams_is_closed_1013_with_a_reason_and_the_open_ones_go_on(model):
    from websockets.asyncio.client import connect

    async def main():
        server, task, url = await running(model, max_streams=2)
        try:
            async with connect(url) as first, connect(url) as second:
                for ws in (first, second):
                    await ws.send(json.dumps({"type": "start", "sample_rate": 16000}))
                    await ws.recv()
                async with connect(url) as third:
                    await third.wait_closed()
                    refused = third.close_code, third.close_reason
                result = None
                await first.send(np.zeros(1600, "<i2").tobytes())
                await first.send(json.dumps({"type": "end"}))
                async for text in first:
                    result = json.loads(text)
        finally:
            await stop(server, task)
        return refused, result, first.close_code

    (code, reason), result, first_code = asyncio.run(main())
    assert code == 1013 and "full (2 streams)" in reason
    assert result["type"] == "result" and first_code == 1000


def test_a_wrong_or_missing_token_is_refused_with_401_and_the_right_one_streams(model):
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus

    async def main():
        server, task, url = await running(model, token="s3cret")
        statuses = []
        try:
            for headers in (None, {"Authorization": "Bearer wrong"}):
                try:
                    async with connect(url, additional_headers=headers):
                        statuses.append("opened")
                except InvalidStatus as error:
                    statuses.append(error.response.status_code)
            result, code, _ = await stream_one(url + "?token=s3cret", audio_at(16000, 0.3, 3), 16000, "int16", 480, {})
            for scheme in ("Bearer", "bearer", "BEARER"):  # an HTTP auth scheme has no case
                async with connect(url, additional_headers={"Authorization": f"{scheme} s3cret"}):
                    statuses.append(scheme)
        finally:
            await stop(server, task)
        return statuses, result, code

    statuses, result, code = asyncio.run(main())
    assert statuses == [401, 401, "Bearer", "bearer", "BEARER"] and result["type"] == "result" and code == 1000


def test_bad_clients_each_get_a_close_code_and_a_good_stream_beside_them_is_unharmed(model, caplog):
    """Audio where the start belongs, a missing or wrong sample rate, an unknown option, text where audio belongs,
    float32 garbage, a frame over the size bound, silence past the idle timeout: each its close code and one log
    line; a stream running beside them gets the same result as alone."""
    from websockets.asyncio.client import connect

    start = json.dumps({"type": "start", "sample_rate": 16000, "format": "float32"})
    cases = {  # name: (messages sent, expected close code, words in the reason)
        "audio first": ([b"\x00\x01" * 100], 1003, "first message is a text frame"),
        "no sample rate": ([json.dumps({"type": "start"})], 1007, "sample_rate must be"),
        "a wrong sample rate": ([json.dumps({"type": "start", "sample_rate": 3})], 1007, "sample_rate must be"),
        "not JSON": (["{start"], 1007, "not JSON"),
        "an unknown option": ([json.dumps({"type": "start", "sample_rate": 16000, "options": {"speed": 2}})], 1007,
                              "unknown option 'speed'"),
        "an unserved chunk": ([json.dumps({"type": "start", "sample_rate": 16000, "options": {"chunk_frames": 999}})],
                              1007, "chunk_frames 999"),
        "a fractional min_frames": ([json.dumps({"type": "start", "sample_rate": 16000,
                                                 "options": {"min_frames": 2.5}})], 1007, "min_frames must be a whole"),
        "true as min_frames": ([json.dumps({"type": "start", "sample_rate": 16000, "options": {"min_frames": True}})],
                               1007, "min_frames must be a whole"),
        "a chunk of 8.0": ([json.dumps({"type": "start", "sample_rate": 16000, "options": {"chunk_frames": 8.0}})],
                           1007, "chunk_frames 8.0"),
        "provisional 'no'": ([json.dumps({"type": "start", "sample_rate": 16000, "options": {"provisional": "no"}})],
                             1007, "provisional must be true or false"),
        "a misspelt key": ([json.dumps({"type": "start", "sample_rate": 16000, "Format": "float32"})], 1007,
                           "unknown key 'Format' in the start message"),
        "text where audio belongs": ([start, "hello"], 1003, "audio goes in binary frames"),
        "garbage as float32": ([start, np.random.default_rng(0).bytes(4000)], 1007, "float32 audio"),
        "a frame over the bound": ([start, b"\x00" * (70 << 10)], 1009, ""),
        "silence past the idle timeout": ([start], 1008, "idle for 1 s"),
    }
    good_audio = audio_at(16000, 1.5, 4)

    async def bad(url, messages):
        async with connect(url, max_size=None) as ws:
            for message in messages:
                await ws.send(message)
            await ws.wait_closed()
            return ws.close_code, ws.close_reason

    async def main():
        server, task, url = await running(model, max_frame_bytes=64 << 10, idle_timeout_seconds=1.0)
        try:
            good = asyncio.create_task(stream_one(url, good_audio, 16000, "float32", 160, {}))
            outcomes = await asyncio.gather(*(bad(url, messages) for messages, _, _ in cases.values()))
            result, code, _ = await good
        finally:
            await stop(server, task)
        return outcomes, result, code

    with caplog.at_level("INFO", logger="speechattn.runtime.serve"):
        outcomes, result, code = asyncio.run(main())
    for (name, (_, expected, words)), (got, reason) in zip(cases.items(), outcomes):
        assert got == expected and words in reason, (name, got, reason)
    assert code == 1000 and same_segments(result["segments"], local_result(
        model, good_audio, 16000, DecodingOptions(), 160)["segments"])
    closed = [r.getMessage() for r in caplog.records if r.getMessage().startswith(("event=closed", "event=left"))]
    assert len(closed) == len(cases) + 1  # one line each, and the good stream's
    assert any("code=1009 reason=" in line and "--max-frame-bytes" in line for line in closed), closed


def test_a_defect_in_a_step_closes_the_streams_1011_in_one_line_and_the_server_goes_on(model, caplog, monkeypatch):
    """An error inside the batcher's step (once a float min_frames got that far) ended the batcher silently: every
    stream of the worker hung after "ready", new ones too, and SIGTERM could not stop the process.  Now the streams
    of that step are closed 1011, one log line says why, and the next stream gets its result."""
    from websockets.asyncio.client import connect

    audio = audio_at(16000, 1.0, 6)
    original, failures = Server._step, []

    def failing_once(self, *work):
        if not failures and any(pieces for _, pieces in work[1]):
            failures.append(1)
            raise TypeError("an integer is required")
        return original(self, *work)

    monkeypatch.setattr(Server, "_step", failing_once)

    async def first(url):
        async with connect(url) as ws:
            await ws.send(json.dumps({"type": "start", "sample_rate": 16000, "format": "float32"}))
            await ws.recv()
            await ws.send(audio.astype("<f4").tobytes())
            await ws.send(json.dumps({"type": "end"}))
            await asyncio.wait_for(ws.wait_closed(), 20)
            return ws.close_code, ws.close_reason

    async def main():
        server, task, url = await running(model)
        try:
            closed = await first(url)
            after = await asyncio.wait_for(stream_one(url, audio, 16000, "float32", 1600, {}), 30)
        finally:
            await stop(server, task)
        return closed, after, server.open_streams()

    with caplog.at_level("INFO", logger="speechattn.runtime.serve"):
        (code, reason), (result, after_code, _), still_open = asyncio.run(main())
    assert failures and code == 1011 and "internal error" in reason
    assert after_code == 1000 and same_segments(result["segments"], local_result(
        model, audio, 16000, DecodingOptions(), 1600)["segments"])
    assert still_open == 0
    errors = [r.getMessage() for r in caplog.records if r.getMessage().startswith("event=error")]
    assert errors == ['event=error where=step error="TypeError: an integer is required"'], errors


def test_a_stream_without_its_result_when_the_drain_runs_out_is_closed_and_the_server_still_stops(model, monkeypatch):
    """SIGTERM gives open streams drain_seconds for their result; one that cannot get it in time (here a step that
    takes 3 s) is closed 1001 when the time is up, so serve() returns instead of waiting on it for ever."""
    from websockets.asyncio.client import connect

    original = Server._step

    def slow(self, *work):
        if work[2]:  # the finishing streams' step
            time.sleep(3)
        return original(self, *work)

    monkeypatch.setattr(Server, "_step", slow)

    async def main():
        server, task, url = await running(model, drain_seconds=0.5)
        async with connect(url) as ws:
            await ws.send(json.dumps({"type": "start", "sample_rate": 16000, "format": "float32"}))
            await ws.recv()
            await ws.send(audio_at(16000, 0.5, 7).astype("<f4").tobytes())
            await asyncio.sleep(0.2)
            started = time.monotonic()
            server.shutdown()
            await asyncio.wait_for(ws.wait_closed(), 20)
            await asyncio.wait_for(task, 20)
            return ws.close_code, ws.close_reason, time.monotonic() - started

    code, reason, seconds = asyncio.run(main())
    assert code == 1001 and "no time left" in reason, (code, reason)
    assert seconds < 10, seconds


def test_a_stream_open_at_shutdown_gets_its_final_result_and_close_1001(model):
    from websockets.asyncio.client import connect

    audio = audio_at(16000, 1.0, 5)

    async def main():
        server, task, url = await running(model)
        async with connect(url) as ws:
            await ws.send(json.dumps({"type": "start", "sample_rate": 16000, "format": "float32"}))
            await ws.recv()
            await ws.send(audio.astype("<f4").tobytes())
            await asyncio.sleep(0.3)
            server.shutdown()
            messages = [json.loads(text) async for text in ws]
        await asyncio.wait_for(task, 30)
        return messages, ws.close_code, ws.close_reason

    messages, code, reason = asyncio.run(main())
    assert code == 1001 and "shutting down" in reason
    assert messages[-1]["type"] == "result"
    assert same_segments(messages[-1]["segments"], local_result(model, audio, 16000, DecodingOptions(), len(audio))["segments"])


def test_remote_stream_gives_the_local_streams_phones_and_cues(model):
    """The kit's RemoteStream (push / finish as PhoneStream) against a server in another thread."""
    from speechattn_export.remote import RemoteError, RemoteStream

    loop = asyncio.new_event_loop()
    holder = {}

    def serve():
        asyncio.set_event_loop(loop)
        holder["server"] = Server(model, ServeOptions(port=0))
        loop.run_until_complete(holder["server"].serve())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        for _ in range(300):
            if holder.get("server") is not None and holder["server"].address:
                break
            threading.Event().wait(0.05)
        url = f"ws://127.0.0.1:{holder['server'].address[1]}/stream"
        audio = np.round(audio_at(8000, 2.0, 6) * 32767).astype(np.int16)
        options = DecodingOptions(visemes="rhubarb")
        remote = RemoteStream(url, options, sample_rate=8000)
        pieces = [remote.push(audio[i:i + 400]) for i in range(0, len(audio), 400)]
        last = remote.finish()
        local = local_result(model, audio, 8000, options, 400)
        assert same_segments(remote.segment_dicts(), local["segments"])
        assert remote.cue_dicts() == local["cues"]
        assert same_segments([s for u in pieces + [last] for s in u.segments], local["segments"])
        with pytest.raises(RemoteError, match="chunk_frames 999"):
            RemoteStream(url, DecodingOptions(chunk_frames=999))
    finally:
        loop.call_soon_threadsafe(holder["server"].shutdown)
        thread.join(30)


@pytest.mark.parametrize("event_loop", ["uvloop", "asyncio"])
def test_serve_command_on_sigterm_gives_the_open_stream_its_result_and_exits_0(tiny_onnx, event_loop):
    """On either event loop (uvloop where installed, the command's default; asyncio's own with
    SPEECHATTN_EVENT_LOOP=asyncio), which its listening line names."""
    from websockets.sync.client import connect

    if event_loop == "uvloop":
        pytest.importorskip("uvloop")
    process = subprocess.Popen([sys.executable, "-m", "speechattn", "serve", "--model", str(tiny_onnx), "--port", "0"],
                               cwd=ROOT, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1", "SPEECHATTN_EVENT_LOOP": event_loop})
    try:
        line, lines = "", []
        while "listening on" not in line:
            line = process.stderr.readline()
            assert line, "the server stopped before listening"
            lines.append(line)
        assert any("event=listening host" in seen and f"loop={event_loop}" in seen for seen in lines), lines
        url = line.split()[-1]
        with connect(url) as ws:
            ws.send(json.dumps({"type": "start", "sample_rate": 16000}))
            ws.recv()
            ws.send(np.round(audio_at(16000, 0.8, 7) * 32767).astype("<i2").tobytes())
            threading.Event().wait(0.3)
            process.send_signal(signal.SIGTERM)
            messages = [json.loads(text) for text in ws]
            code = ws.close_code
        assert process.wait(30) == 0
    finally:
        process.kill()
    assert messages[-1]["type"] == "result" and code == 1001


@pytest.mark.parametrize("missing", ["prometheus_client", "h11"])
def test_serve_without_a_package_of_its_extra_says_what_to_install_in_one_line_with_workers_too(tiny_onnx, missing):
    """Checked before any worker starts: with two workers, a missing prometheus_client was a traceback from each,
    and a missing h11 (the whole-file listener's) a request that never got an answer."""
    blocker = ("import sys\n"
               "class Block:\n"
               "    def find_spec(self, name, path=None, target=None):\n"
               f"        if name.split('.')[0] == {missing!r}:\n"
               "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
               "sys.meta_path.insert(0, Block())\n"
               "from speechattn.cli import main\n"
               f"sys.exit(main(['serve', '--model', {str(tiny_onnx)!r}, '--port', '0', '--http-port', '0', "
               "'--workers', '2']))")
    result = subprocess.run([sys.executable, "-c", blocker], cwd=ROOT, capture_output=True, text=True, timeout=120)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1, result.stderr
    assert f"this needs {missing}, which is not installed: pip install '.[serve]'" in lines[0], lines[0]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_an_unknown_event_loop_is_one_line_and_a_usage_error(tiny_onnx, workers):
    """Checked before any worker starts, so one worker or several exit alike (2: a usage error)."""
    result = subprocess.run([sys.executable, "-m", "speechattn", "serve", "--model", str(tiny_onnx), "--port", "0",
                             "--workers", workers], cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "SPEECHATTN_EVENT_LOOP": "tokio"})
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, (result.returncode, result.stderr)
    assert "SPEECHATTN_EVENT_LOOP=tokio: auto, uvloop or asyncio" in lines[0], lines[0]


def test_serve_on_a_gpu_this_onnxruntime_cannot_use_is_one_line_before_anything_listens(tiny_onnx):
    """--provider cuda with the CPU build of onnxruntime: onnxruntime alone would warn and serve from the CPU."""
    import onnxruntime as ort

    if "CUDAExecutionProvider" in ort.get_available_providers():
        pytest.skip("this onnxruntime has CUDA")
    result = subprocess.run([sys.executable, "-m", "speechattn", "serve", "--model", str(tiny_onnx), "--port", "0",
                             "--provider", "cuda"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1, result.stderr
    assert "--provider cuda: this onnxruntime" in lines[0] and "onnxruntime-gpu" in lines[0], lines[0]


def test_the_whole_file_port_may_not_be_the_stream_port():
    """Workers share their ports (SO_REUSEPORT): both listeners on one port would each take connections at
    random, so one port for both is refused up front, with any worker count."""
    from speechattn.errors import UsageError

    with pytest.raises(UsageError, match="--http-port 8765 is --port's too"):
        ServeOptions(port=8765, http_port=8765)
    ServeOptions(port=0, http_port=0)  # two free ports, each its own
    ServeOptions(port=8765, http_port=8766)


def good_stream_beside(model, url, seconds: float, seed: int, pause: float = 0.02):
    """A well-behaved client paced at about real time; (result, close code) and the kit's segments alone."""
    audio = audio_at(16000, seconds, seed)

    async def paced():
        from websockets.asyncio.client import connect

        async with connect(url, max_size=None, open_timeout=60) as ws:
            await ws.send(json.dumps({"type": "start", "sample_rate": 16000, "format": "float32"}))
            await ws.recv()
            for begin in range(0, len(audio), 1600):
                await ws.send(audio[begin:begin + 1600].tobytes())
                await asyncio.sleep(pause)
            await ws.send(json.dumps({"type": "end"}))
            messages = [json.loads(text) async for text in ws]
            return messages[-1], ws.close_code

    return paced(), local_result(model, audio, 16000, DecodingOptions(), 1600)["segments"]


def test_a_client_that_stops_reading_is_closed_1008_and_its_results_stay_bounded(model, caplog):
    """A client sends a minute of audio with mouth-shape weights asked for, faster than real time, and reads nothing
    (its socket's receive buffer 4 KiB): the server's queue for it stops at max_queued_messages, the stream is
    closed 1008 with one log line and dropped from the server; when the client reads again it gets the close code.
    (Both sockets' buffers are 4 KiB, so the kernel holds little and the test runs in seconds.)
    A stream beside it gets the kit's phones."""
    import socket

    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    bound = 4
    audio = audio_at(16000, 60.0, 8).astype("<f4")

    async def main():
        server, task, url = await running(model, max_queued_messages=bound, max_ahead_seconds=120)
        deepest = 0
        try:
            good, local = good_stream_beside(model, url, 1.5, 9)
            good = asyncio.create_task(good)
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect(("127.0.0.1", server.address[1]))
            sock.setblocking(False)
            async with connect(url, sock=sock, max_queue=1, max_size=None) as ws:
                await ws.send(json.dumps({"type": "start", "sample_rate": 16000, "format": "float32",
                                          "options": {"visemes": "rhubarb", "weights": True}}))
                await ws.recv()
                (session,) = [s for s in server.sessions.values() if s.weights]
                # The server's socket buffer small too (a slow mobile peer's): the queue, not the kernel, fills.
                session.connection.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF,
                                                                                 4096)
                for begin in range(0, len(audio), 1600):  # 0.1 s a message: about one update each
                    if session.gone:  # the server closed it
                        break
                    await ws.send(audio[begin:begin + 1600].tobytes())
                    await asyncio.sleep(0.005)
                    deepest = max(deepest, session.outbox.qsize())
                for _ in range(600):
                    if session.gone:
                        break
                    deepest = max(deepest, session.outbox.qsize())
                    await asyncio.sleep(0.05)
                try:  # reading again: what was queued, then the close frame
                    async for _ in ws:
                        pass
                except ConnectionClosed:
                    pass
                stalled = ws.close_code, ws.close_reason
            result, code = await good
            for _ in range(200):  # the server's handler returns once the close handshake is done
                if not server.sessions:
                    break
                await asyncio.sleep(0.05)
        finally:
            await stop(server, task)
        return stalled, deepest, result, code, local, server

    with caplog.at_level("INFO", logger="speechattn.runtime.serve"):
        (stalled_code, reason), deepest, result, code, local, server = asyncio.run(main())
    assert stalled_code == 1008 and "stopped reading" in reason, (stalled_code, reason)
    assert deepest <= bound
    lines = [r.getMessage() for r in caplog.records if "code=1008" in r.getMessage()]
    assert len(lines) == 1 and "stopped reading" in lines[0]
    assert code == 1000 and same_segments(result["segments"], local)
    assert not server.sessions and all(not s.streams for s in server.stream_sets.values())


def test_a_thousand_idle_connections_are_each_closed_at_a_timeout_and_a_good_stream_is_unharmed(model, caplog):
    """500 TCP connections that send nothing get HTTP 408 at the handshake timeout; 500 WebSocket connections that
    never send their start message get close 1008 at the idle timeout (or 408, if the loaded machine did not finish
    their handshake in time); one log line each.  A stream running through it all gets the kit's phones."""
    import resource

    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 4096:  # both ends of every connection live in this process
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(8192, hard), hard))
    timeout = 3.0

    async def raw(port):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        answer = await asyncio.wait_for(reader.read(), 120)
        writer.close()
        return answer.split(b"\r\n", 1)[0].decode()

    async def silent_websocket(url):
        try:
            async with connect(url, open_timeout=120) as ws:
                await asyncio.wait_for(ws.wait_closed(), 120)
                return ws.close_code
        except InvalidStatus as error:
            return error.response.status_code

    async def main():
        # Room for every one: a connection holds one of --max-streams from its arrival, started or not.
        server, task, url = await running(model, idle_timeout_seconds=timeout, handshake_timeout_seconds=timeout,
                                          max_streams=1000)
        try:
            good, local = good_stream_beside(model, url, 3.0, 10, pause=0.05)
            good = asyncio.create_task(good)
            outcomes = await asyncio.gather(*[raw(server.address[1]) for _ in range(500)],
                                            *[silent_websocket(url) for _ in range(500)])
            result, code = await good
        finally:
            await stop(server, task)
        return outcomes, result, code, local

    with caplog.at_level("INFO", logger="speechattn.runtime.serve"):
        outcomes, result, code, local = asyncio.run(main())
    assert set(outcomes[:500]) == {"HTTP/1.1 408 Request Timeout"}
    assert set(outcomes[500:]) <= {1008, 408} and outcomes[500:].count(1008) >= 1
    lines = [r.getMessage() for r in caplog.records]
    assert sum("reason=handshake_timeout" in line for line in lines) == 500 + outcomes[500:].count(408)
    assert sum("code=1008" in line and "no start message" in line for line in lines) == outcomes[500:].count(1008)
    assert code == 1000 and same_segments(result["segments"], local)


def test_a_slowloris_request_gets_408_at_the_handshake_timeout_with_one_log_line(model, caplog):
    """A request whose headers trickle in one every 0.2 s and never end: 408 and the socket closed once the
    handshake timeout passes, not when the client chooses; a stream beside it gets the kit's phones."""
    import time

    async def slowloris(port):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n")
        started = time.monotonic()
        for number in range(300):  # a minute of headers, unless the server ends it
            try:
                writer.write(f"X-Slow-{number}: 1\r\n".encode())
                await writer.drain()
            except ConnectionError:
                break
            if reader.at_eof() or reader._buffer:  # the server answered
                break
            await asyncio.sleep(0.2)
        answer = await asyncio.wait_for(reader.read(), 30)
        writer.close()
        return answer.split(b"\r\n", 1)[0].decode(), time.monotonic() - started

    async def main():
        server, task, url = await running(model, handshake_timeout_seconds=1.0)
        try:
            good, local = good_stream_beside(model, url, 1.5, 11)
            good = asyncio.create_task(good)
            answer = await slowloris(server.address[1])
            result, code = await good
        finally:
            await stop(server, task)
        return answer, result, code, local

    with caplog.at_level("INFO", logger="speechattn.runtime.serve"):
        (status, seconds), result, code, local = asyncio.run(main())
    assert status == "HTTP/1.1 408 Request Timeout" and seconds < 30
    (line,) = [r.getMessage() for r in caplog.records if "handshake_timeout" in r.getMessage()]
    assert line.startswith("event=refused peer=127.0.0.1:") and line.endswith("reason=handshake_timeout seconds=1")
    assert code == 1000 and same_segments(result["segments"], local)


def test_provisional_updates_carry_the_decoders_open_phone_as_the_kit_holds_it_after_the_same_frames(model):
    """With "provisional": true, every update that labels new frames says what the decoder holds past its final
    segments; at each update's frame count it equals the kit's own decoder after the same frames (a PhoneStream
    pushed one chunk at a time: the decoder sees frames one by one, so the chunking does not matter)."""
    from speechattn.runtime.serve import _provisional

    audio = audio_at(16000, 2.0, 14)
    options = DecodingOptions(decoder="hysteresis", chunk_frames=int(model.allowed_chunk_frames[0]))

    async def main():
        from websockets.asyncio.client import connect

        server, task, url = await running(model)
        try:
            async with connect(url) as ws:
                await ws.send(json.dumps({"type": "start", "sample_rate": 16000, "format": "float32", "options": {
                    "decoder": options.decoder, "chunk_frames": options.chunk_frames, "provisional": True}}))
                await ws.recv()
                for begin in range(0, len(audio), 700):  # paced, so the updates come a few chunks at a time
                    await ws.send(audio[begin:begin + 700].astype("<f4").tobytes())
                    await asyncio.sleep(0.02)
                await ws.send(json.dumps({"type": "end"}))
                return [json.loads(text) async for text in ws], ws.close_code
        finally:
            await stop(server, task)

    messages, code = asyncio.run(main())
    local = PhoneStream(model, options)
    held = {}
    step = options.chunk_frames * model.hop_samples
    for begin in range(0, len(audio), step):
        local.push(audio[begin:begin + step])
        held[int(local.stream.frames_emitted)] = _provisional(local)
    updates = [m for m in messages if m["type"] == "update" and "provisional" in m]
    assert code == 1000 and len(updates) >= 10
    compared = [m for m in updates[:-1] if m["frames"] in held]  # the last: after finish, nothing open
    assert len(compared) >= len(updates) // 2
    for message in compared:
        assert message["provisional"] == held[message["frames"]], message["frames"]
        check_schema(message)
    assert any(m["provisional"]["open"] for m in compared)


def test_a_client_sending_faster_than_real_time_is_read_no_further_ahead_than_the_bound(model):
    """A live stream may run --max-ahead seconds ahead of real time; past that the server stops reading it (its
    sends wait in the sockets' buffers and then in the client), so a client that pushes 20 s of audio at once grows no
    memory in the server: what it has taken in stays within real time + the bound (+ one message) all along, and the
    stream still ends with the kit's phones."""
    from websockets.asyncio.client import connect

    ahead, piece = 1.0, 1600
    audio = audio_at(16000, 20.0, 21)

    async def main():
        server, task, url = await running(model, max_ahead_seconds=ahead)
        worst = -1e9
        try:
            async with connect(url, max_size=None) as ws:
                await ws.send(json.dumps({"type": "start", "sample_rate": 16000, "format": "float32"}))
                await ws.recv()
                (session,) = server.sessions.values()

                async def watch():
                    nonlocal worst
                    while not session.finishing:
                        taken = session.received_samples / 16000 - (time.monotonic() - session.started)
                        worst = max(worst, taken)
                        await asyncio.sleep(0.02)

                watcher = asyncio.create_task(watch())
                sending = time.monotonic()
                for begin in range(0, len(audio), piece):  # as fast as the socket takes it (the kernel's buffers)
                    await ws.send(audio[begin:begin + piece].tobytes())
                await ws.send(json.dumps({"type": "end"}))
                result = None
                async for text in ws:
                    message = json.loads(text)
                    if message["type"] == "result":
                        result = message
                taken_for = time.monotonic() - sending
                watcher.cancel()
            return result, taken_for, worst
        finally:
            await stop(server, task)

    result, taken_for, worst = asyncio.run(main())
    assert worst <= ahead + piece / 16000 + 0.05, worst  # never more than the bound ahead of real time
    assert taken_for > 20.0 - ahead - 0.5  # so the server took the audio in at about real time
    assert same_segments(result["segments"], local_result(model, audio, 16000, DecodingOptions(), piece)["segments"])
