"""`speechattn serve`'s promises against clients that do not play fair: a client far ahead of real time still gets
its result, --max-streams holds for any interleaving of handshakes and starts, a slow upload holds no file's slot
and ends at its deadline, a flood of pings never read is closed, a client that vanishes after sending ahead is
dropped at once.  The real server and real sockets on 127.0.0.1, the tiny random model; the bounds' timings are
shortened through ServeOptions so each test runs in seconds."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import struct
import threading
import time

import numpy as np
import pytest

pytest.importorskip("websockets")
pytest.importorskip("prometheus_client")
pytest.importorskip("h11")

from speechattn.cli.common import load_onnx  # noqa: E402
from speechattn.runtime.serve import (MAX_UNREAD_REPLY_BYTES, QUEUE_BYTES, Server, ServeOptions,  # noqa: E402
                                      memory_bound_bytes)
from speechattn_export.pipeline import DecodingOptions  # noqa: E402
from tests.test_serve import audio_at, local_result, running, same_segments, stop  # noqa: E402


@pytest.fixture(scope="module")
def model(tiny_onnx):
    return load_onnx(tiny_onnx)


def test_a_client_far_ahead_of_real_time_gets_its_result_though_its_pongs_wait_behind_its_audio(model):
    """A client pushes 6 s of audio at once (its socket takes it all) to a server that holds it to 0.5 s ahead of
    real time and pings every 0.5 s, waiting 0.5 s for the pong: the pong is behind seconds of unread audio, yet the
    stream is not closed for it (websockets' own keepalive closed it 1011 "keepalive ping timeout"): it ends 1000
    with the kit's phones."""
    from websockets.asyncio.client import connect

    audio = audio_at(16000, 6.0, 31)

    async def main():
        server, task, url = await running(model, max_ahead_seconds=0.5, ping_interval_seconds=0.5,
                                          ping_timeout_seconds=0.5)
        try:
            async with connect(url, max_size=None, ping_interval=None) as ws:
                await ws.send(json.dumps({"type": "start", "sample_rate": 16000, "format": "float32"}))
                await ws.recv()
                for begin in range(0, len(audio), 1600):
                    await ws.send(audio[begin:begin + 1600].tobytes())
                await ws.send(json.dumps({"type": "end"}))
                messages = [json.loads(text) async for text in ws]
                return messages, ws.close_code, ws.close_reason
        finally:
            await stop(server, task)

    messages, code, reason = asyncio.run(main())
    assert code == 1000, (code, reason)
    assert messages[-1]["type"] == "result"
    assert same_segments(messages[-1]["segments"], local_result(model, audio, 16000, DecodingOptions(), 1600)["segments"])


def test_the_kits_remote_stream_pushing_a_recording_at_once_gets_its_result(model):
    """RemoteStream.push never waits: a recording pushed at once, far ahead of real time, through a server that pings
    every 0.5 s and holds audio to 0.5 s ahead, still finishes with the kit's phones (neither side's keepalive
    closes it)."""
    from speechattn_export.remote import RemoteStream

    loop = asyncio.new_event_loop()
    holder = {}

    def serve():
        asyncio.set_event_loop(loop)
        holder["server"] = Server(model, ServeOptions(port=0, max_ahead_seconds=0.5, ping_interval_seconds=0.5,
                                                      ping_timeout_seconds=0.5))
        loop.run_until_complete(holder["server"].serve())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        for _ in range(300):
            if holder.get("server") is not None and holder["server"].address:
                break
            time.sleep(0.05)
        audio = audio_at(16000, 8.0, 32)
        remote = RemoteStream(f"ws://127.0.0.1:{holder['server'].address[1]}/stream", DecodingOptions())
        for begin in range(0, len(audio), 1600):  # small frames: websockets' queue of 16 fills, the rest waits
            remote.push(audio[begin:begin + 1600])
        remote.finish()
        assert same_segments(remote.segment_dicts(), local_result(model, audio, 16000, DecodingOptions(),
                                                                  1600)["segments"])
    finally:
        loop.call_soon_threadsafe(holder["server"].shutdown)
        thread.join(30)


def test_max_streams_holds_when_every_handshake_comes_before_any_start(model):
    """40 clients complete their handshakes, then all 40 send their start message, on a server of 5: exactly 5 get
    "ready"; the other 35 are closed 1013 "full" (a connection takes its slot when it arrives, not when it starts)."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    async def main():
        server, task, url = await running(model, max_streams=5)
        try:
            clients = [await connect(url) for _ in range(40)]
            outcomes = []
            for ws in clients:
                try:
                    await ws.send(json.dumps({"type": "start", "sample_rate": 16000}))
                except ConnectionClosed:
                    pass
            for ws in clients:
                try:
                    outcomes.append(json.loads(await asyncio.wait_for(ws.recv(), 10))["type"])
                except ConnectionClosed:
                    outcomes.append(ws.close_code)
            opened = len(server.sessions)
            for ws in clients:
                await ws.close()
            for _ in range(100):
                if not server.open_streams():
                    break
                await asyncio.sleep(0.05)
            left = server.open_streams()
            again = await connect(url)
            await again.send(json.dumps({"type": "start", "sample_rate": 16000}))
            reopened = json.loads(await again.recv())["type"]
            await again.close()
            return outcomes, opened, left, reopened
        finally:
            await stop(server, task)

    outcomes, opened, left, reopened = asyncio.run(main())
    assert outcomes.count("ready") == 5 and outcomes.count(1013) == 35, outcomes
    assert opened == 5 and left == 0 and reopened == "ready"  # every slot given back as its client left


def slow_upload(port: int, claimed: int, pause: float, stop_at: float) -> bytes:
    """A POST claiming `claimed` bytes whose body comes a byte every `pause` s; what the server answered."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(f"POST /transcribe?name=a.wav HTTP/1.1\r\nHost: x\r\nContent-Length: {claimed}\r\n\r\n".encode())
        sock.settimeout(pause)
        answer = b""
        while time.monotonic() < stop_at:
            try:
                sock.sendall(b"R")
            except OSError:
                break
            try:
                chunk = sock.recv(4096)
            except socket.timeout:
                continue
            except OSError:
                break
            if not chunk:
                break
            answer += chunk
        return answer


def test_slow_uploads_hold_no_files_slot_and_end_with_408_at_their_deadline(tiny_onnx, tmp_path):
    """Eight uploads claim 200,000 bytes and send a byte every 0.3 s (under the idle timeout, so each read is in
    time): a whole file POSTed beside them gets its 200 at once (they held every slot, indefinitely), and each slow
    one gets 408 at its deadline: the idle timeout plus its length at upload_bytes_per_second (1 + 2 s here)."""
    from tests.test_serve_files import post, serving, wav_bytes

    with serving(tiny_onnx, idle_timeout_seconds=1.0, upload_bytes_per_second=100_000) as server:
        port = server.http_address[1]
        answers: list = [None] * 8
        started = time.monotonic()

        def upload(number):
            answers[number] = slow_upload(port, 200_000, 0.3, started + 20)

        threads = [threading.Thread(target=upload, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        time.sleep(0.5)
        body, _ = wav_bytes(tmp_path)
        status, answer = post(server, "/transcribe", body)
        beside = time.monotonic() - started
        for thread in threads:
            thread.join(30)
        ended = time.monotonic() - started
    assert status == 200 and answer["segments"], answer
    assert beside < 2.9  # before the slow ones' deadline: they held no slot of the file thread's
    assert all(a.startswith(b"HTTP/1.1 408") and b"did not arrive within 3 s" in a for a in answers), answers
    assert ended < 6  # each at its deadline (3 s), not at the test's 20


def websocket_frame(opcode: int, payload: bytes) -> bytes:
    """A client's frame (masked, as RFC 6455 asks of clients), FIN set, payload under 126 bytes."""
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return struct.pack("!BB", 0x80 | opcode, 0x80 | len(payload)) + mask + masked


def raw_websocket(port: int, receive_buffer: int = 4096) -> socket.socket:
    """A WebSocket opened by hand on a socket with a small receive buffer, the start message sent, "ready" read."""
    import base64

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(f"GET /stream HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    sock.sendall(websocket_frame(1, json.dumps({"type": "start", "sample_rate": 16000}).encode()))
    sock.settimeout(10)
    ready = sock.recv(4096)
    assert b'"ready"' in ready
    return sock


def test_a_flood_of_pings_whose_pongs_are_never_read_is_closed_and_grows_nothing(model, caplog):
    """A client sends pings (125 bytes each) without reading a byte: the pongs it owes fill its socket, then the
    server's; past MAX_UNREAD_REPLY_BYTES of them the server drops it (one log line, code 1008) instead of growing
    (about 17 MiB a second before).  The server's unsent bytes for it never pass the bound by more than a frame."""

    async def main():
        server, task, url = await running(model)
        worst, dropped = 0, False
        try:
            sock = await asyncio.to_thread(raw_websocket, server.address[1])
            (session,) = server.sessions.values()
            transport = session.connection.transport
            transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
            sock.setblocking(False)
            ping = websocket_frame(9, b"p" * 125)
            for _ in range(40_000):  # 5 MB of pings
                try:
                    sock.send(ping)
                except BlockingIOError:
                    await asyncio.sleep(0.001)
                except OSError:  # reset: the server dropped it
                    dropped = True
                    break
                worst = max(worst, transport.get_write_buffer_size())
                if session.gone or transport.is_closing():
                    dropped = True
                    break
                await asyncio.sleep(0)
            for _ in range(100):
                if not server.sessions:
                    break
                await asyncio.sleep(0.05)
            sock.close()
            return worst, dropped, dict(server.sessions)
        finally:
            await stop(server, task)

    with caplog.at_level("INFO", logger="speechattn.runtime.serve"):
        worst, dropped, sessions = asyncio.run(main())
    assert dropped and not sessions
    assert worst <= MAX_UNREAD_REPLY_BYTES + 256, worst
    lines = [r.getMessage() for r in caplog.records if "code=1008" in r.getMessage()]
    assert len(lines) == 1 and "reads none of its replies" in lines[0], lines


def test_a_client_that_vanishes_after_sending_ahead_is_dropped_at_once(model):
    """A client sends 40 s of audio at once (held 1 s ahead of real time, the rest waiting in the sockets), then its
    socket is reset: the server drops its stream and gives back its slot within 2 s (it went on stepping the
    unread audio for minutes, a ghost)."""
    from websockets.asyncio.client import connect

    audio = np.round(audio_at(16000, 40.0, 33) * 32767).astype("<i2")

    async def main():
        server, task, url = await running(model, max_ahead_seconds=1.0)
        try:
            ws = await connect(url, max_size=None, ping_interval=None)
            await ws.send(json.dumps({"type": "start", "sample_rate": 16000}))
            await ws.recv()
            for begin in range(0, len(audio), 16000):
                try:
                    await asyncio.wait_for(ws.send(audio[begin:begin + 16000].tobytes()), 0.5)
                except asyncio.TimeoutError:
                    break  # the sockets are full: the rest would wait in this client
            await asyncio.sleep(1.0)
            held = len(server.sessions)
            sock = ws.transport.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            ws.transport.abort()  # a reset, as when the client's process dies with unread data
            vanished = time.monotonic()
            while server.sessions and time.monotonic() - vanished < 10:
                await asyncio.sleep(0.02)
            return held, time.monotonic() - vanished, server.open_streams()
        finally:
            await stop(server, task)

    held, seconds, slots = asyncio.run(main())
    assert held == 1
    assert seconds < 2.0, seconds
    assert slots == 0


@pytest.mark.parametrize("start, said", [
    ('{"type": "start", "sample_rate": 16000, "options": ' + "[" * 100_000 + "]" * 100_000 + "}",
     "the message is not JSON"),
    ('{"type": "start", "sample_rate": 16000, "options": {"decoder": ["bigram"]}}', "decoder must be one of"),
    ('{"type": "start", "sample_rate": 16000, "options": {"visemes": {"a": 1}}}', "visemes must be one of"),
    ('{"type": "start", "sample_rate": 16000, "options": {"chunk_frames": "4"}}', "chunk_frames '4' is not"),
])
def test_a_start_message_that_cannot_be_read_is_closed_1007_in_words_of_the_input(model, caplog, start, said):
    """Nesting too deep for the parser, a list or object where a name belongs, a number given as a string: each
    closes 1007 with a reason about the input (not 1011 and a traceback, not Python's "unhashable type", not the
    number 4 when the string "4" was sent), in one log line."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    async def main():
        server, task, url = await running(model)
        try:
            async with connect(url, max_size=None) as ws:
                await ws.send(start)
                try:
                    await ws.recv()
                except ConnectionClosed:
                    pass
                return ws.close_code, ws.close_reason
        finally:
            await stop(server, task)

    with caplog.at_level("INFO", logger="speechattn.runtime.serve"):
        code, reason = asyncio.run(main())
    assert code == 1007 and said in reason and "unhashable" not in reason, (code, reason)
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]


def test_a_client_sending_the_largest_frames_flat_out_makes_the_server_hold_no_more_than_the_stated_bound(model):
    """A client sends 1 MiB frames (the --max-frame-bytes default, 16 s of float32 each) as fast as the sockets take
    them: the frames websockets holds for it stay within QUEUE_BYTES and a frame (16 frames, 17 MiB, before), the
    audio read but not stepped within --max-ahead and a frame, and the whole within memory_bound_bytes, which
    docs/server.md states."""
    from websockets.asyncio.client import connect

    frame = 1 << 20
    audio = audio_at(16000, 16.0 * 8, 34).astype("<f4")  # eight frames

    async def main():
        server, task, url = await running(model, max_ahead_seconds=1.0)
        queued, pending = 0, 0
        try:
            async with connect(url, max_size=None, ping_interval=None) as ws:
                await ws.send(json.dumps({"type": "start", "sample_rate": 16000, "format": "float32"}))
                await ws.recv()
                (session,) = server.sessions.values()
                frames = session.connection.recv_messages.frames

                async def send():
                    for begin in range(0, len(audio), frame // 4):
                        await ws.send(audio[begin:begin + frame // 4].tobytes())

                sender = asyncio.create_task(send())
                for _ in range(150):  # 3 s of watching
                    queued = max(queued, sum(len(f.data) for f in frames.queue))
                    pending = max(pending, session.pending_samples * 4)
                    await asyncio.sleep(0.02)
                sender.cancel()
        finally:
            await stop(server, task)
        return queued, pending

    queued, pending = asyncio.run(main())
    options = ServeOptions()
    assert queued <= QUEUE_BYTES + frame, queued
    assert pending <= 16000 * 4 * 1.0 + frame, pending
    assert queued + pending <= memory_bound_bytes(options, 16000)


def wav_with(format_tag: int, bits: int) -> bytes:
    """A WAV whose header names a codec no decoder opens (0 bits a sample, or an unknown format tag)."""
    samples = b"\x00\x01" * 1600
    fmt = struct.pack("<HHIIHH", format_tag, 1, 16000, 32000, 2, bits)
    body = b"WAVEfmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(samples)) + samples
    return b"RIFF" + struct.pack("<I", len(body)) + body


@pytest.mark.parametrize("format_tag, bits", [(1, 0), (0x1234, 16)])
def test_a_wav_of_a_codec_no_decoder_opens_is_a_422_in_one_line_and_one_line_from_the_command(tiny_onnx, tmp_path,
                                                                                             format_tag, bits):
    """PCM of 0 bits, an unknown format tag: FFmpeg opens the file but has no decoder for it.  The server answers
    422 with the one line (it sent no answer, and logged a traceback); `transcribe` exits 1 with one line (it said
    "internal error")."""
    import subprocess
    import sys

    from tests.test_serve_files import post, serving

    path = tmp_path / "odd.wav"
    path.write_bytes(wav_with(format_tag, bits))
    with serving(tiny_onnx) as server:
        status, answer = post(server, "/transcribe?name=odd.wav", path.read_bytes())
    assert status == 422 and "cannot read audio" in answer["error"] and "\n" not in answer["error"], answer
    run = subprocess.run([sys.executable, "-m", "speechattn", "transcribe", "--model", str(tiny_onnx), str(path)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and run.stderr.count("\n") == 1, run.stderr
    assert "cannot read audio" in run.stderr and "internal error" not in run.stderr


def test_a_file_of_hours_is_413_before_it_is_decoded_and_a_short_file_beside_it_gets_its_answer(tiny_onnx, tmp_path):
    """Two hours of silence in FLAC (a small upload) is refused 413 by its header's length, past --max-file-seconds
    (it held the one file thread 110 s while a 3 s file waited); a short file POSTed beside it gets 200."""
    import soundfile as sf

    from tests.test_serve_files import post, serving, wav_bytes

    long_path = tmp_path / "hours.flac"
    with sf.SoundFile(long_path, "w", 16000, 1, subtype="PCM_16") as handle:
        silence = np.zeros(16000 * 600, np.int16)
        for _ in range(12):
            handle.write(silence)
    body, _ = wav_bytes(tmp_path)
    with serving(tiny_onnx) as server:
        results = {}
        hours = threading.Thread(target=lambda: results.update(hours=post(server, "/transcribe?name=hours.flac",
                                                                            long_path.read_bytes())))
        hours.start()
        started = time.monotonic()
        results["short"] = post(server, "/transcribe", body)
        short_seconds = time.monotonic() - started
        hours.join(60)
    status, answer = results["hours"]
    assert status == 413 and "120.0 minutes of audio" in answer["error"] and "--max-file-seconds" in answer["error"]
    assert results["short"][0] == 200 and short_seconds < 10


def test_sigterm_while_a_long_file_is_worked_on_answers_it_503_and_the_server_stops_within_the_drain(tiny_onnx,
                                                                                                    tmp_path):
    """A long file is being transcribed when the server is told to stop: after the drain time (0.5 s here) the file
    stops at its next block, its request is answered 503 ("send the file again"), and serve() returns within a few
    seconds (it took 138 s, and the request got no answer)."""
    import soundfile as sf

    from tests.test_serve_files import post

    path = tmp_path / "long.flac"
    noise = (np.random.default_rng(5).standard_normal(16000 * 60) * 0.05).astype(np.float32)
    with sf.SoundFile(path, "w", 16000, 1, subtype="PCM_16") as handle:
        for _ in range(40):
            handle.write(noise)
    loop = asyncio.new_event_loop()
    server = Server(load_onnx(tiny_onnx), ServeOptions(port=0, http_port=0, drain_seconds=0.5))
    thread = threading.Thread(target=lambda: loop.run_until_complete(server.serve()), daemon=True)
    thread.start()
    for _ in range(600):
        if server.http_address:
            break
        time.sleep(0.05)
    answer = {}
    poster = threading.Thread(target=lambda: answer.update(result=post(server, "/transcribe?name=long.flac",
                                                                       path.read_bytes())))
    poster.start()
    time.sleep(3.0)  # uploaded and being worked on (40 minutes of audio take the tiny model far longer)
    assert poster.is_alive()
    stopping = time.monotonic()
    loop.call_soon_threadsafe(server.shutdown)
    thread.join(30)
    stopped = time.monotonic() - stopping
    poster.join(30)
    status, body = answer["result"]
    assert status == 503 and "shutting down" in body["error"], (status, body)
    assert not thread.is_alive() and stopped < 5, stopped


def test_a_full_disk_during_an_upload_is_answered_507_in_one_line(tiny_onnx, tmp_path, monkeypatch):
    """The upload's file is where the disk is full (a name in the server's temporary folder that leads to /dev/full,
    which answers every write with ENOSPC, as a full disk does): the request gets 507 and one line (it got no
    answer, and the log a traceback), and the next upload is served."""
    import contextlib
    import tempfile

    from speechattn.runtime import serve_files
    from tests.test_serve_files import post, serving, wav_bytes

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    real = tempfile.TemporaryDirectory

    @contextlib.contextmanager
    def full_disk(prefix=None):
        with real(prefix=prefix) as folder:
            os.symlink("/dev/full", os.path.join(folder, "full.wav"))
            yield folder

    body, _ = wav_bytes(tmp_path)
    with serving(tiny_onnx) as server:
        monkeypatch.setattr(serve_files.tempfile, "TemporaryDirectory", full_disk)
        status, answer = post(server, "/transcribe?name=full.wav", body)
        monkeypatch.setattr(serve_files.tempfile, "TemporaryDirectory", real)
        after = post(server, "/transcribe?name=a.wav", body)
    assert status == 507 and "No space left on device" in answer["error"], (status, answer)
    assert after[0] == 200


def test_a_client_that_reads_nothing_and_sends_nothing_is_closed_1008_at_the_ping_timeout(model, caplog):
    """A started stream whose client then neither reads (so answers no ping) nor sends: the server sends its close,
    1008, at the ping timeout, with one log line (websockets' keepalive closed it 1011, the code of a server's
    defect).  The client reads only at the end, to see what the server sent."""

    async def main():
        server, task, url = await running(model, ping_interval_seconds=0.3, ping_timeout_seconds=0.3,
                                          idle_timeout_seconds=60)
        try:
            sock = await asyncio.to_thread(raw_websocket, server.address[1])
            started = time.monotonic()
            while not any("code=1008" in r.getMessage() for r in caplog.records) and time.monotonic() - started < 10:
                await asyncio.sleep(0.02)
            said_after = time.monotonic() - started

            def read_all() -> bytes:
                sock.settimeout(10)
                data = b""
                try:
                    while chunk := sock.recv(65536):
                        data += chunk
                except OSError:
                    pass
                return data

            data = await asyncio.to_thread(read_all)
            sock.close()
            return said_after, data
        finally:
            await stop(server, task)

    with caplog.at_level("INFO", logger="speechattn.runtime.serve"):
        said_after, data = asyncio.run(main())
    assert said_after < 2, said_after  # the ping's 0.3 s and its timeout's 0.3 s, and the loop's slack
    close = data.rfind(b"\x88")  # the close frame, after the pings it never read: code 1008
    assert close >= 0 and struct.unpack("!H", data[close + 2:close + 4])[0] == 1008, data[-40:]
    lines = [r.getMessage() for r in caplog.records if "code=1008" in r.getMessage()]
    assert len(lines) == 1 and "no answer to a ping" in lines[0], lines
