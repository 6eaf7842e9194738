"""`speechattn serve`: many live streams from one server, every stream with a whole chunk ready stepped together in
one onnxruntime call (the batch dimension of the ONNX contract).

One asyncio event loop holds the connections (the `websockets` library); one batcher task collects the streams'
audio, waits at most `max_wait_ms` for the other live streams' chunks once one stream holds a chunk, and hands the
work to one worker thread (run_in_executor), so the loop keeps reading and writing while the graph runs.  The worker
steps the kit's StreamSet (one graph call for every ready stream, at most `max_batch` streams a call, with every
chunk they all hold), runs the bigram decoders of all stepped streams as one (decoder.push_many), and hands each
stream's frames and segments to its own kit PhoneStream (or FollowStream), so a stream's labels are the kit's own.
Only the worker touches the streams' state; the loop only appends raw audio to a session's `pending` list and sends
the messages the worker returns.  With `workers` > 1 (the command's default: one per core) that many processes,
each all of the above, listen on one port (SO_REUSEPORT), and count their streams and metrics together.

Protocol (export/serve.schema.json, docs/server.md), on ws://HOST:PORT/stream:
  client -> {"type": "start", "sample_rate": 16000, "format": "int16"|"float32", "options": {...}}   (text)
  server -> {"type": "ready", ...}
  client -> audio, little-endian, mono, in binary frames of any size (a sample may straddle two frames)
  server -> {"type": "update", "segments": [...], "cues": [...], "weights": [[...]], "words": [...], ...}
  client -> {"type": "end"}
  server -> the last update, then {"type": "result", ...}, and closes with 1000
HTTP on the same port: /healthz, /readyz, /metrics (Prometheus).

Close codes: 1000 done; 1001 the server is shutting down (after the final result); 1003 a text frame where audio
belongs; 1007 a start message or audio that cannot be read; 1008 idle, or the client stopped reading its results;
1009 a frame over max_frame_bytes (websockets); 1011 a bug; 1013 the server is full (max_streams) or draining.
HTTP 401 a wrong or missing token; 405 any method but GET (Allow: GET), on every path; 400 a GET with a body, or a
request line that is not HTTP/1.x; 408 a request or handshake not done within handshake_timeout_seconds.
"""

from __future__ import annotations

import asyncio
import hmac
import itertools
import json
import logging
import os
import time
import urllib.parse
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from speechattn.audio import FRAME_SHIFT_MS, FRAMES_PER_SECOND
from speechattn.errors import SpeechattnError, UsageError
from speechattn.runtime.languages import EspeakMissing, Lexicons
from speechattn_export.decoder import PhoneBigram, PhoneDecoder, push_many
from speechattn_export.pipeline import DecodingOptions, FollowStream, PhoneStream, Update
from speechattn_export.stream_client import Frames, StreamSet

log = logging.getLogger(__name__)
PROTOCOL_VERSION = 1
SAMPLE_FORMATS = {"int16": np.dtype("<i2"), "float32": np.dtype("<f4")}
MIN_RATE, MAX_RATE = 8000, 192000  # what the kit's resampler is made for
MAX_SCRIPT_CHARACTERS = 100_000
# Connections the kernel holds before the loop accepts them: asyncio's 100 dropped some of 1,000 clients connecting at
# once (as after a replica stops and its clients reconnect to this one), which then hung until their own timeout.
LISTEN_BACKLOG = 1024
MULTIPROCESS_DIRECTORY = "PROMETHEUS_MULTIPROC_DIR"  # prometheus-client's multiprocess mode, with --workers
# Buckets for the latency budget (a phone's label within 300 ms of its end), not prometheus' defaults.
DELAY_BUCKETS = (0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1.0, 2.0)
STEP_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.2, 0.5)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
# Replies the protocol writes by itself (pongs, close frames) to a client that does not read them: past this many
# bytes it is closed (1008).  A flood of pings, never reading the pongs, grew the server by 17 MiB a second.
MAX_UNREAD_REPLY_BYTES = 64 << 10
# The request head looked at before websockets sees it (request_refusal): longer heads go to websockets unjudged, which
# refuses past its own limits (8 KiB a line, 128 headers) with 414 or 431.
MAX_JUDGED_HEAD_BYTES = 16 << 10
# Audio frames websockets holds read but not yet taken, per connection, in bytes: its queue is counted in frames
# (16 by default, so 16 x --max-frame-bytes: 17 MiB a connection), so the frames are as many as fit this.
QUEUE_BYTES = 1 << 20
# The most one read from a client's socket takes.  asyncio's selector transport asks for 256 KiB a read, above glibc's
# mmap threshold: every read then mapped and unmapped a buffer for a 1.3 KB frame (13 us of a read's 16 us,
# measured on a socket pair), 0.3 ms of CPU a stream-second at 40 ms frames.  64 KiB comes from the heap.
READ_BYTES = 64 << 10


START_KEYS = {"type", "sample_rate", "format", "options"}  # the start message's (export/serve.schema.json)


class Refused(Exception):
    """A client's mistake: the connection is closed with `code` and the one-line reason."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code, self.reason = code, reason


@dataclass(frozen=True)
class ServeOptions:
    """The server's settings (`speechattn serve --help` says each one's use)."""

    host: str = "127.0.0.1"
    port: int = 8765
    max_streams: int = 256
    token: str | None = None
    idle_timeout_seconds: float = 30.0  # no message from a client for this long closes its stream (1008)
    handshake_timeout_seconds: float = 10.0  # an HTTP request or WebSocket handshake not done by then: 408, closed
    max_frame_bytes: int = 1 << 20  # websockets' max_size: 33 s of 16 kHz int16 in one frame
    max_ahead_seconds: float = 10.0  # a live stream may send this much audio ahead of real time, then is not read
    max_batch: int = 16  # streams in one graph call (1: one call per stream chunk, no batching); 8-32 cost least
    max_wait_ms: float = 5.0  # once a stream is ready, how long the batcher waits for the other live streams
    max_queued_messages: int = 256  # results waiting for a client that does not read them; past it: closed (1008)
    ping_interval_seconds: float = 20.0  # a ping to every client this often (a dead peer's writes fail)
    ping_timeout_seconds: float = 20.0  # no pong, and nothing else heard from the client, for this long: closed
    #                                     (1008); a client whose audio the server holds unread (it sent ahead of real
    #                                     time) is not asked: its pong waits behind that audio
    drain_seconds: float = 10.0  # on SIGTERM, how long open streams get to receive their final result
    http_port: int | None = None  # whole files (POST /transcribe, /align) on this port; None: no such listener
    max_file_bytes: int = 64 << 20  # the largest file POSTed (35 minutes of 16 kHz 16-bit WAV)
    max_file_seconds: float = 3600.0  # the longest file POSTed, in seconds of audio (413 past it, before decoding)
    upload_bytes_per_second: int = 64 << 10  # the slowest upload taken: a file's body must arrive within the idle
    #                                          timeout plus its length at this rate (64 MiB: 17 minutes), else 408
    decoding: DecodingOptions = field(default_factory=DecodingOptions)  # for streams that ask for nothing else
    files_model: str | None = None  # POST /transcribe without chunk_frames: this model (a bundled name or a path,
    #                                 loaded at the first such file), as `transcribe` takes the files' model; None: the
    #                                 live streams' own (serve without --model: the bundled files' model)
    workers: int = 1  # processes sharing the port (SO_REUSEPORT), each with its own loop, batcher and model
    provider: str | None = None  # where the workers' models run: "cpu", "cuda" (stream_client.PROVIDERS); None:
    #                              onnxruntime's first available

    def __post_init__(self) -> None:
        if not self.host.strip():
            raise UsageError("--host is empty: give 127.0.0.1, or 0.0.0.0 for every interface")
        if self.token is not None and not self.token.strip():
            raise UsageError("--token is empty: give a secret, or leave the option out for no token")
        if self.http_port is not None and self.http_port == self.port != 0:  # workers share ports (SO_REUSEPORT):
            # both listeners would bind it, and each connection would land on either at random
            raise UsageError(f"--http-port {self.http_port} is --port's too: give the whole-file listener a port of "
                             "its own")
        if not (self.ping_interval_seconds > 0 and self.ping_timeout_seconds > 0):
            raise UsageError("the ping interval and timeout are seconds above 0")


class Metrics:
    """Prometheus metrics in a registry of the server's own (several servers in one process stay apart).  With
    --workers, prometheus-client's multiprocess mode: each worker writes its values to files in
    PROMETHEUS_MULTIPROC_DIR (set before the worker imports prometheus_client), and /metrics, whichever worker
    answers it, sums every worker's (streams open: the live workers' sum)."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry()
        self.shared_directory = os.environ.get(MULTIPROCESS_DIRECTORY)
        r = self.registry
        self.streams_open = Gauge("speechattn_streams_open", "live streams open now", registry=r,
                                  multiprocess_mode="livesum")
        self.streams = Counter("speechattn_streams", "live streams opened", registry=r)
        self.audio_seconds = Counter("speechattn_audio_seconds", "seconds of audio received", registry=r)
        self.refusals = Counter("speechattn_refusals", "connections and streams refused or closed by the server",
                                ["reason"], registry=r)
        self.batch_size = Histogram("speechattn_batch_streams", "streams in one graph call", buckets=BATCH_BUCKETS,
                                    registry=r)
        self.step_seconds = Histogram("speechattn_graph_call_seconds", "seconds of one graph call",
                                      buckets=STEP_BUCKETS, registry=r)
        self.step_cpu_seconds = Counter("speechattn_graph_call_cpu_seconds", "CPU seconds of the graph calls (the "
                                        "calling thread's: all of it with one onnxruntime thread)", registry=r)
        self.file_requests = Counter("speechattn_file_requests", "whole files POSTed, by path and HTTP status",
                                     ["path", "status"], registry=r)
        self.delay = Histogram("speechattn_final_label_delay_seconds", "from the arrival of the audio that ends a "
                               "phone to its final segment leaving the server", buckets=DELAY_BUCKETS, registry=r)

    def text(self) -> bytes:
        from prometheus_client import CollectorRegistry, generate_latest

        if self.shared_directory is None:
            return generate_latest(self.registry)
        from prometheus_client.multiprocess import MultiProcessCollector

        every_worker = CollectorRegistry()
        MultiProcessCollector(every_worker, self.shared_directory)
        return generate_latest(every_worker)


class CountedModel:
    """The shared model as a StreamSet sees it, with every graph call's batch size and time counted."""

    def __init__(self, model, metrics: Metrics) -> None:
        self._model, self._metrics = model, metrics

    def __getattr__(self, name: str):
        return getattr(self._model, name)

    def run(self, audio, chunk_frames, final, state):
        return self._counted(self._model.run, audio, chunk_frames, final, state)

    def run_bound(self, audio, chunk_frames, final, state):  # a GPU's: the state stays on it (StreamSet.bound)
        return self._counted(self._model.run_bound, audio, chunk_frames, final, state)

    def _counted(self, run, audio, chunk_frames, final, state):
        started, cpu = time.perf_counter(), time.thread_time()
        result = run(audio, chunk_frames, final, state)
        self._metrics.step_seconds.observe(time.perf_counter() - started)
        self._metrics.step_cpu_seconds.inc(time.thread_time() - cpu)
        self._metrics.batch_size.observe(audio.shape[0])
        return result


@dataclass
class Session:
    """One live stream: the kit's PhoneStream (and FollowStream with a script), its audio not yet stepped, and the
    queue of messages for its client."""

    key: int
    peer: str
    phone_stream: PhoneStream
    follow: FollowStream | None
    sample_rate: int
    sample_format: np.dtype
    weights: bool
    outbox: asyncio.Queue
    provisional: bool = False  # every update carries the decoder's not-yet-final phones
    started: float = field(default_factory=time.monotonic)
    partial: bytes = b""  # the bytes of a sample split across two frames
    pending: list = field(default_factory=list)  # arrays at the client's rate, appended by the loop
    pending_samples: int = 0
    leftover_samples: int = 0  # model-rate samples in its Stream's buffer after the worker's last run
    received_samples: int = 0
    arrivals: deque = field(default_factory=deque)  # (seconds of audio received, monotonic time), for the delay
    last_arrival: float = 0.0  # monotonic time of its latest audio frame
    frame_seconds: float = 0.0  # the length of that frame: how the client paces its audio
    finishing: bool = False  # end asked for (or the server is draining): the worker finishes it next
    finished: bool = False
    gone: bool = False  # the client vanished: the worker drops it
    close_code: int = 1000
    close_reason: str = ""
    last_position: tuple | None = None  # follow-along: the reader's position last sent
    connection: object = None

    @property
    def chunk_frames(self) -> int:
        return self.phone_stream.chunk_frames

    def samples_of(self, data: bytes) -> np.ndarray:
        """The frame's samples (a trailing partial sample kept for the next frame), checked."""
        data = self.partial + data
        usable = len(data) // self.sample_format.itemsize * self.sample_format.itemsize
        self.partial = data[usable:]
        samples = np.frombuffer(data[:usable], dtype=self.sample_format)
        if samples.dtype.kind == "f" and samples.size:
            if not np.isfinite(samples).all():
                raise Refused(1007, "float32 audio holds NaN or infinite samples (are these int16 bytes?)")
            if float(np.abs(samples).max()) > 2.0:
                raise Refused(1007, f"float32 audio must lie in [-1, 1] but reaches {float(np.abs(samples).max()):.3g} "
                                    "(int16 bytes sent as float32? say \"format\": \"int16\")")
        return samples


class Server:
    """The model, the streams and the batcher.  `serve()` runs it until `shutdown()` (SIGTERM in the CLI)."""

    def __init__(self, model, options: ServeOptions = ServeOptions(), worker: int = 0, open_count=None) -> None:
        """`worker`: this process's number of options.workers (stream numbers stay apart: worker w numbers its
        streams w + 1, w + 1 + workers, ...); `open_count`: the workers' shared count of open streams (a
        multiprocessing Value) that max_streams bounds, None for this server's own."""
        self.model, self.options = model, options
        self.open_count = open_count
        self.metrics = Metrics()
        self.counted = CountedModel(model, self.metrics)
        self.bigram = PhoneBigram.load()
        self.lexicons = Lexicons()  # the follow-along scripts' and /align's, each loaded at its first use
        self.sessions: dict[int, Session] = {}
        self.slots = 0  # connections holding one of max_streams (started or not), without --workers
        self.joining: list[Session] = []  # opened since the worker last ran
        self.leaving: list[Session] = []  # gone (the client left, or was closed) before their stream finished
        self.stream_sets: dict[int, StreamSet] = {}  # chunk_frames -> the streams stepped with it
        self.ready_keys: set[int] = set()  # streams holding a whole chunk (an estimate, kept by the loop)
        self.urgent = False  # a stream joined, left or ended: the worker runs without waiting for a batch
        self.received_seconds = 0.0  # audio not yet counted in the metrics
        self.keys = itertools.count(1 + worker, max(1, options.workers))
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="speechattn-graph")
        self.wake = asyncio.Event()
        self.draining = False
        self.ready = asyncio.Event()
        self.address: tuple[str, int] | None = None
        self.http_address: tuple[str, int] | None = None  # the whole-file listener's, with options.http_port
        self._stop = asyncio.Event()

    # ---- HTTP ---------------------------------------------------------------------------------------------------
    def process_request(self, connection, request):
        path = urllib.parse.urlsplit(request.path).path
        if path == "/healthz":
            return connection.respond(200, "ok\n")
        if path == "/readyz":
            full = self.open_streams() >= self.options.max_streams
            if self.draining or full:
                return connection.respond(503, "draining\n" if self.draining else "full\n")
            return connection.respond(200, "ready\n")
        if path == "/metrics":
            self._count_audio()
            response = connection.respond(200, self.metrics.text().decode())
            del response.headers["Content-Type"]  # websockets' Headers add a value on assignment
            response.headers["Content-Type"] = "text/plain; version=0.0.4; charset=utf-8"
            return response
        if path != "/stream":
            return connection.respond(404, "not found: the stream is at /stream; /healthz /readyz /metrics\n")
        if self.options.token is not None and not self._token_ok(request):
            self.metrics.refusals.labels("token").inc()
            log.info("event=refused peer=%s reason=token", _peer(connection))
            return connection.respond(401, "a wrong or missing token: Authorization: Bearer TOKEN, or ?token=TOKEN\n")
        return None

    def open_streams(self) -> int:
        """Streams open in this server (every worker's, with --workers), counting connections not yet started."""
        return self.slots if self.open_count is None else self.open_count.value

    def _take_slot(self) -> bool:
        """One of max_streams for a connection, from its arrival (not its start message: 40 handshakes, then 40
        starts, all got "ready" on a server of 5); False when none is free.  Checked and taken in one step, under
        the workers' shared lock."""
        if self.open_count is None:  # one loop: nothing runs between the check and the count
            if self.slots >= self.options.max_streams:
                return False
            self.slots += 1
            return True
        with self.open_count.get_lock():
            if self.open_count.value >= self.options.max_streams:
                return False
            self.open_count.value += 1
            return True

    def _give_slot(self) -> None:
        if self.open_count is None:
            self.slots -= 1
            return
        with self.open_count.get_lock():
            self.open_count.value -= 1

    def _token_ok(self, request) -> bool:
        given = request.headers.get("Authorization", "")
        token = given[7:] if given[:7].lower() == "bearer " else None  # an auth scheme has no case (RFC 9110)
        if token is None:
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(request.path).query)
            token = (query.get("token") or [""])[0]
        return hmac.compare_digest(token.encode(), self.options.token.encode())

    # ---- a connection -------------------------------------------------------------------------------------------
    async def handle(self, connection) -> None:
        peer = _peer(connection)
        if self.draining or not self._take_slot():
            reason = "the server is shutting down" if self.draining else \
                f"the server is full ({self.options.max_streams} streams); try again later"
            self.metrics.refusals.labels("draining" if self.draining else "full").inc()
            log.info("event=refused peer=%s reason=%s", peer, "draining" if self.draining else "full")
            await connection.close(1013, reason)
            return
        try:
            await self._connection(connection, peer)
        finally:
            self._give_slot()

    async def _connection(self, connection, peer: str) -> None:
        """A connection holding a slot: its start, its audio, its results; every way it can end."""
        session = None
        try:
            session = await self._open(connection, peer)
            sender = asyncio.create_task(self._send_loop(connection, session))
            try:
                await self._read_loop(connection, session)
            except _connection_closed():
                if not session.finishing:
                    raise
            finally:
                if not session.finishing:  # the client left without "end", or was refused
                    sender.cancel()
            await sender  # the last update and the result, then the close
        except Refused as refused:
            self.metrics.refusals.labels(f"{refused.code}").inc()
            log.info("event=closed peer=%s stream=%s code=%d reason=%s", peer, session.key if session else "-",
                     refused.code, json.dumps(refused.reason))
            await connection.close(refused.code, refused.reason[:120])
        except _connection_closed() as closed:
            code = closed.rcvd.code if closed.rcvd else closed.sent.code if closed.sent else 1006
            if code == 1009:  # websockets closed it: a message over --max-frame-bytes (the start message too)
                self.metrics.refusals.labels("1009").inc()
                log.info("event=closed peer=%s stream=%s code=1009 reason=%s", peer, session.key if session else "-",
                         json.dumps(f"a message over --max-frame-bytes ({self.options.max_frame_bytes} bytes)"))
            elif not (session is not None and session.gone) and not getattr(connection, "closed_by_server", False):
                log.info("event=left peer=%s stream=%s code=%d", peer, session.key if session else "-", code)
        finally:
            if session is not None:
                if not session.finished:  # its stream leaves the set at the worker's next run
                    session.gone = self.urgent = True
                    self.leaving.append(session)
                    self.wake.set()
                self.sessions.pop(session.key, None)
                self.metrics.streams_open.set(len(self.sessions))

    async def _open(self, connection, peer: str) -> Session:
        try:
            start = await _within(connection.recv(), self.options.idle_timeout_seconds)
        except asyncio.TimeoutError:
            raise Refused(1008, f"no start message in {self.options.idle_timeout_seconds:g} s") from None
        if not isinstance(start, str):
            raise Refused(1003, 'the first message is a text frame {"type": "start", "sample_rate": ...}, not audio')
        request = _json_object(start)
        if request.get("type") != "start":
            raise Refused(1007, f'the first message must have "type": "start", not {request.get("type")!r}')
        unknown = sorted(set(request) - START_KEYS)  # "Format": "float32" was read as int16, garbage phones out
        if unknown:
            raise Refused(1007, f"unknown key {unknown[0]!r} in the start message (known: {', '.join(sorted(START_KEYS))}"
                                "; decoding options go in \"options\")")
        rate, sample_format = request.get("sample_rate"), request.get("format", "int16")
        if not isinstance(rate, int) or isinstance(rate, bool) or not MIN_RATE <= rate <= MAX_RATE:
            raise Refused(1007, f"sample_rate must be an integer from {MIN_RATE} to {MAX_RATE} (Hz), not {rate!r}")
        if sample_format not in SAMPLE_FORMATS:
            raise Refused(1007, f"format must be int16 or float32, not {sample_format!r}")
        asked = request.get("options", {})
        if not isinstance(asked, dict):
            raise Refused(1007, "options must be an object")
        for flag in ("weights", "provisional"):
            if flag in asked and not isinstance(asked[flag], bool):  # "no" was true
                raise Refused(1007, f"{flag} must be true or false, not {asked[flag]!r}")
        phone_stream, follow = self._streams(asked, await self._script_words(asked))
        session = Session(next(self.keys), peer, phone_stream, follow, rate, SAMPLE_FORMATS[sample_format],
                          bool(asked.get("weights", False)), asyncio.Queue(self.options.max_queued_messages),
                          provisional=bool(asked.get("provisional", False)), connection=connection)
        await connection.send(json.dumps({
            "type": "ready", "protocol_version": PROTOCOL_VERSION, "stream": session.key,
            "model": _model_identity(self.model.path), "model_sample_rate": self.model.sample_rate,
            "chunk_frames": session.chunk_frames, "frame_shift_ms": FRAME_SHIFT_MS,
            "phones": list(self.model.phones),
            "shapes": list(phone_stream.visemes.shapes) if phone_stream.visemes is not None else None}))
        self.sessions[session.key] = session  # only now: a client gone before ready leaves nothing behind
        self.joining.append(session)
        self.urgent = True
        self.metrics.streams.inc()
        self.metrics.streams_open.set(len(self.sessions))
        log.info("event=open peer=%s stream=%d rate=%d format=%s chunk=%d follow=%s", peer, session.key, rate,
                 sample_format, session.chunk_frames, follow is not None)
        return session

    async def _script_words(self, asked: dict) -> list | None:
        """The script's words (None without a script; a WebVTT script's cues, in the language its header names unless
        `language` says): the kit's lexicon, in the loop as before; in another `language` espeak-ng's, on a thread (0.14 ms a word: 2 s for the longest script, too long to hold the loop)."""
        known = {"decoder", "min_frames", "chunk_frames", "visemes", "weights", "script", "script_from", "language",
                 "provisional"}
        unknown = sorted(set(asked) - known)
        if unknown:
            raise Refused(1007, f"unknown option {unknown[0]!r} (known: {', '.join(sorted(known))})")
        script, language = asked.get("script"), asked.get("language")
        if script is None:
            for option in ("script_from", "language"):
                if option in asked:
                    raise Refused(1007, f"{option} is the script's: send the script too")
            return None
        if not isinstance(script, str) or not 0 < len(script) <= MAX_SCRIPT_CHARACTERS:
            raise Refused(1007, f"script must be the text read aloud, 1 to {MAX_SCRIPT_CHARACTERS:,} characters")
        from speechattn.runtime.align import script_and_language

        try:
            script, language = script_and_language(script, "script", language)  # WebVTT: its cues, in its Language
            lexicon = self.lexicons.get(language)
            if language is None:
                return lexicon.words(script)
            return await asyncio.to_thread(lexicon.words, script)
        except EspeakMissing:
            raise Refused(1007, "language: this server has no espeak-ng (pip install espeakng-loader)") from None
        except (SpeechattnError, ValueError) as error:  # an unknown language; a token too long to be a word
            raise Refused(1007, str(error)[:120]) from None

    def _streams(self, asked: dict, words: list | None) -> tuple[PhoneStream, FollowStream | None]:
        base = self.options.decoding
        try:
            options = DecodingOptions(decoder=asked.get("decoder", base.decoder),
                                      min_frames=asked.get("min_frames", base.min_frames),
                                      chunk_frames=self.model.check_chunk(asked.get("chunk_frames", base.chunk_frames)),
                                      visemes=asked.get("visemes", base.visemes), cue_rules=base.cue_rules)
        except (ValueError, TypeError) as error:
            raise Refused(1007, str(error)) from None
        if asked.get("weights") and options.visemes is None:
            raise Refused(1007, 'weights are mouth-shape weights: ask for "visemes" too')
        phone_stream = PhoneStream(self.model, options, self.bigram if options.decoder == "bigram" else None)
        script, start_word = asked.get("script"), asked.get("script_from", 0)
        if words is None:
            return phone_stream, None
        if type(start_word) is not int or start_word < 0:
            raise Refused(1007, "script_from must be a word index of the script, 0 or more")
        from speechattn_export.words import sentence_starts

        try:
            return phone_stream, FollowStream(phone_stream, words, sentence_starts(script, words), start_word=start_word)
        except ValueError as error:
            raise Refused(1007, str(error)) from None

    async def _read_loop(self, connection, session: Session) -> None:
        """The stream's messages until "end".  Whole binary frames are taken as websockets parses them
        (_ConnectionBounds.process_event), without a wait on recv() and a turn of this task each; frames that
        arrive while others wait in websockets' queue, text frames, and fragments come through recv()."""
        reader = _Reader(connection, self.options.idle_timeout_seconds)
        reader.listen(lambda data: self._take_audio(session, data))
        try:
            while not session.finishing:
                message = await reader.recv()
                if session.finishing:  # the server is draining: what comes after the final result is not read
                    return
                if isinstance(message, str):
                    if _json_object(message, "a text frame where audio belongs: audio goes in binary frames, text "
                                             'frames carry {"type": "end"}', 1003).get("type") != "end":
                        raise Refused(1003, 'the only text frame after "start" is {"type": "end"}; audio goes in '
                                            "binary frames")
                    session.finishing = self.urgent = True
                    self.wake.set()
                    return
                hold = self._take_audio(session, message)
                if hold:
                    await reader.hold(hold)
        finally:
            reader.stop()

    def _take_audio(self, session: Session, data: bytes) -> float:
        """A binary frame into the stream's pending audio; the seconds to stop reading the client for (0: none).
        Not read past real time + max_ahead_seconds (nor while that much waits for the graph): the client's sends
        back up through websockets' bounded queue into TCP, so no client grows the server's memory."""
        if session.finishing:
            return 0.0
        samples = session.samples_of(data)
        if not samples.size:
            return 0.0
        now, rate = time.monotonic(), session.sample_rate
        session.pending.append(samples)
        session.pending_samples += samples.size
        session.received_samples += samples.size
        session.arrivals.append((session.received_samples / rate, now))
        session.last_arrival, session.frame_seconds = now, samples.size / rate
        self.received_seconds += samples.size / rate  # counted at the batcher's next run (_count_audio)
        if session.key not in self.ready_keys and self._holds_chunk(session):
            self.ready_keys.add(session.key)
            self.wake.set()
        ahead = self.options.max_ahead_seconds
        early = session.received_samples / rate - (now - session.started) - ahead
        if early > 0:
            return early
        return 0.01 if session.pending_samples / rate > ahead and not session.gone else 0.0

    async def _send_loop(self, connection, session: Session) -> None:
        while True:
            message = await session.outbox.get()
            if message is None:  # the result went out: close
                await connection.close(session.close_code, session.close_reason)
                log.info("event=closed peer=%s stream=%d code=%d seconds=%.2f%s", session.peer, session.key,
                         session.close_code, session.received_samples / session.sample_rate,
                         "" if session.close_code in (1000, 1001) and not session.gone else
                         f" reason={json.dumps(session.close_reason)}")
                return
            await connection.send(json.dumps(message))

    # ---- the batcher --------------------------------------------------------------------------------------------
    async def batcher(self) -> None:
        loop = asyncio.get_running_loop()
        wait = self.options.max_wait_ms / 1000
        while True:
            await self.wake.wait()
            self.wake.clear()
            self._count_audio()
            if not self.ready_keys and not self.urgent:
                continue
            deadline = loop.time() + wait
            expected = 1 if self.options.max_batch == 1 else self._expected()
            while len(self.ready_keys) < expected and not self.urgent and loop.time() < deadline:
                try:  # the other live streams complete their chunk: wait for them, up to max_wait_ms
                    await _within(self.wake.wait(), deadline - loop.time())
                except asyncio.TimeoutError:
                    break
                self.wake.clear()
            work = self._collect()
            if work is None:
                continue
            try:
                messages = await loop.run_in_executor(self.worker, self._step, *work)
            except Exception as error:  # a defect: the batcher must go on, or every stream of the worker hangs
                log.error("event=error where=step error=%s", json.dumps(f"{type(error).__name__}: {error}"[:300]))
                log.debug("the step's traceback", exc_info=True)
                for session in list(self.sessions.values()):  # their streams' state is not known to be whole
                    self._abort(session, 1011, "internal error: the server could not step this stream")
                self.ready_keys = set()
                continue
            self.ready_keys = set()
            for s in self.sessions.values():  # what the worker left in each stream's buffer
                s.leftover_samples = s.phone_stream.stream.leftover.shape[1]
                if self._holds_chunk(s):
                    self.ready_keys.add(s.key)
            self._deliver(messages)
            if self.ready_keys:
                self.wake.set()

    def _count_audio(self) -> None:
        """The audio received since the last count, into the metrics: once a batcher run, not once a frame (with
        --workers a metric's increment is a write to a shared file; once a frame it took 7 % of a worker's Python
        time at 50 streams, py-spy)."""
        if self.received_seconds:
            self.metrics.audio_seconds.inc(self.received_seconds)
            self.received_seconds = 0.0

    def _expected(self) -> int:
        """The streams a batch waits for: each live one (audio within its frame length plus the window) that holds a
        chunk, or will within the window and one more of its frames at real-time pace.  Waiting for them makes one
        graph call of every stream instead of several of a few (streams' chunks arrive spread over each chunk
        period): docs/server.md has the measurement."""
        now, window, rate = time.monotonic(), self.options.max_wait_ms / 1000, self.model.sample_rate
        count = 0
        for s in self.sessions.values():
            if s.gone or s.finishing or now - s.last_arrival > s.frame_seconds + window + 0.1:
                continue
            buffered = s.leftover_samples + s.pending_samples * rate / s.sample_rate
            if buffered + rate * (window + s.frame_seconds) >= s.chunk_frames * self.model.hop_samples:
                count += 1
        return count

    def _holds_chunk(self, s: Session) -> bool:
        """Whether a stream holds a whole chunk: its buffer plus the audio waiting, at the model's rate."""
        waiting = s.pending_samples * self.model.sample_rate / s.sample_rate
        return s.leftover_samples + waiting >= s.chunk_frames * self.model.hop_samples

    def _collect(self):
        joining, self.joining = self.joining, []
        leaving, self.leaving = self.leaving, []
        self.urgent = False
        audio = []
        for s in self.sessions.values():
            if s.pending and not s.gone and not s.finished:
                audio.append((s, s.pending))
                s.pending, s.pending_samples = [], 0
        finishing = [s for s in self.sessions.values() if s.finishing and not s.finished and not s.gone]
        if not (joining or leaving or audio or finishing):
            return None
        return joining, audio, finishing, leaving

    def _step(self, joining, audio, finishing, gone) -> list[tuple[Session, list[dict]]]:
        """The worker thread: streams join and leave, audio goes in, every ready stream steps, ended ones finish."""
        out: dict[int, tuple[Session, list[dict]]] = {}

        def say(session: Session, message: dict) -> None:
            out.setdefault(session.key, (session, []))[1].append(message)

        for s in joining:
            stream_set = self.stream_sets.setdefault(s.chunk_frames, StreamSet(self.counted, s.chunk_frames,
                                                                                self.options.max_batch))
            stream_set.adopt(s.key, s.phone_stream.stream)  # the PhoneStream's own Stream, stepped in the set
        for s in gone:
            if s.chunk_frames in self.stream_sets:  # absent where a failed step never made the set
                self.stream_sets[s.chunk_frames].discard(s.key)
        for s, pieces in audio:
            try:
                for piece in pieces:
                    self._feed(s, piece)
            except ValueError as error:  # the kit's checks of the audio
                s.gone = True
                self.stream_sets[s.chunk_frames].discard(s.key)
                say(s, {"type": "error", "code": 1007, "message": str(error)})
        stepped = [(s, frames) for stream_set in self.stream_sets.values() for key, frames in stream_set.step().items()
                   if (s := self.sessions.get(key)) is not None and not s.gone]
        for (s, frames), decoded in zip(stepped, _decoded_together(stepped)):
            update = self._update_message(s, frames, final=False, decoded=decoded)
            if update is not None:
                say(s, update)
        for s in finishing:
            try:
                say(s, self._update_message(s, self._finish(s), final=True))
                say(s, self._result(s))
            except ValueError as error:
                say(s, {"type": "error", "code": 1007, "message": str(error)})
            s.finished = True
        return list(out.values())

    def _feed(self, s: Session, samples: np.ndarray) -> None:
        """PhoneStream.push up to the graph call: resampled by the kit's resampler, counted, buffered in the set."""
        ps = s.phone_stream
        if samples.dtype == np.int16:  # as PhoneStream.push reads int16, before the resampler
            samples = samples.astype(np.float32) / 32768.0
        samples = ps._resampled(samples, s.sample_rate)
        ps.samples += samples.shape[-1]
        self.stream_sets[s.chunk_frames].push(s.key, samples)

    def _finish(self, s: Session) -> Frames:
        """PhoneStream.finish on a stream in a set: the resampler's tail, then the buffered audio and the last
        partial chunk, alone (StreamSet.remove)."""
        ps = s.phone_stream
        stream_set = self.stream_sets[s.chunk_frames]
        if ps.resampler is not None:
            tail = ps.resampler.flush()[:max(0, ps._expected_samples() - ps.samples)]
            ps.samples += len(tail)
            stream_set.push(s.key, tail)
        return stream_set.remove(s.key)

    def _update_message(self, s: Session, frames: Frames, final: bool, decoded=None) -> dict | None:
        ps = s.phone_stream
        update: Update = ps._update(frames, final, decoded)
        message: dict = {"type": "update", "frames": int(ps.stream.frames_emitted)}
        fps = FRAMES_PER_SECOND
        if update.segments:
            message["segments"] = _segment_dicts(update, ps)
        if update.cues:
            message["cues"] = [{"start": c.start_frame / fps, "end": c.end_frame / fps, "value": c.shape}
                               for c in update.cues]
        if s.weights and update.weights is not None and len(update.weights):
            message["first_frame"] = int(frames.frame_indices[0])
            message["weights"] = np.round(update.weights, 3).tolist()
        moved = False
        if s.follow is not None:
            followed = s.follow._update(update, final)
            if followed.words:
                message["words"] = s.follow.word_events(followed.words, followed.not_heard)
            position = (int(followed.position.index), bool(followed.position.inside))
            moved, s.last_position = position != s.last_position, position
            message["position"] = {"index": position[0], "inside": position[1]}
            message["not_heard"] = [int(i) for i in followed.not_heard]
        if s.provisional and len(frames.frame_indices):
            message["provisional"] = _provisional(ps)
        says = moved or final or any(k in message for k in ("segments", "cues", "weights", "words", "provisional"))
        return message if says else None

    def _result(self, s: Session) -> dict:
        ps = s.phone_stream
        result = {"type": "result", "protocol_version": PROTOCOL_VERSION, "stream": s.key,
                  "model": _model_identity(self.model.path), "sample_rate": s.sample_rate,
                  "duration": round(ps.duration_seconds, 4), "chunk_frames": ps.chunk_frames,
                  "frame_shift_ms": FRAME_SHIFT_MS, "samples": s.received_samples, "segments": ps.segment_dicts()}
        if ps.visemes is not None:
            result["visemes"], result["cues"] = ps.visemes.name, ps.cue_dicts()
        if s.follow is not None:
            result["not_heard"] = [int(i) for i in s.follow.follower.alignment.not_heard]
        return result

    def _deliver(self, messages: list[tuple[Session, list[dict]]]) -> None:
        now = time.monotonic()
        for s, items in messages:
            if s.gone and not any(m["type"] == "error" for m in items):
                continue
            for message in items:
                if message["type"] == "update":  # all of it is in the result, even if the server stops now
                    message["samples"] = s.received_samples
                for segment in message.get("segments", ()):
                    self._observe_delay(s, segment["end"], now)
                try:
                    s.outbox.put_nowait(message)
                except asyncio.QueueFull:
                    self._close(s, 1008, f"the client stopped reading its results ({self.options.max_queued_messages} "
                                         "messages waiting)")
                    break
                if message["type"] == "error":
                    self._close(s, message["code"], message["message"])
                    break
            else:
                if s.finished:
                    s.close_code, s.close_reason = (1001, "the server is shutting down") if self.draining else \
                        (1000, "done")
                    try:
                        s.outbox.put_nowait(None)
                    except asyncio.QueueFull:
                        self._close(s, 1008, "the client stopped reading its results")

    def _observe_delay(self, s: Session, end_seconds: float, now: float) -> None:
        """From the arrival of the audio holding a phone's end to its final segment leaving (server side)."""
        input_end = end_seconds  # seconds of the stream are seconds of the client's audio at any rate
        while len(s.arrivals) > 1 and s.arrivals[0][0] < input_end:
            s.arrivals.popleft()
        if s.arrivals and s.arrivals[0][0] >= input_end:
            self.metrics.delay.observe(now - s.arrivals[0][1])

    def _abort(self, s: Session, code: int, reason: str) -> None:
        """Close a stream that will get no result (a defect, a drain that ran out of time), its results waiting or
        not: the close, and the end of its send loop (a finishing stream's handler waits on it)."""
        if not s.gone:  # its stream leaves the set at the worker's next run
            s.gone = self.urgent = True
            self.leaving.append(s)
            self.wake.set()
        self.metrics.refusals.labels(str(code)).inc()
        s.finished = True  # the send loop closes the connection with this code and says so in one line
        s.close_code, s.close_reason = code, reason[:120]
        while not s.outbox.empty():
            s.outbox.get_nowait()
        s.outbox.put_nowait(None)

    def _close(self, s: Session, code: int, reason: str) -> None:
        """Close a stream from the loop (a client that stopped reading, bad audio): one log line, the close code."""
        s.gone = self.urgent = True
        self.metrics.refusals.labels(str(code)).inc()
        log.info("event=closed peer=%s stream=%d code=%d reason=%s", s.peer, s.key, code, json.dumps(reason))
        self.leaving.append(s)
        self.wake.set()
        task = asyncio.get_running_loop().create_task(s.connection.close(code, reason[:120]))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    # ---- running ------------------------------------------------------------------------------------------------
    async def serve(self, ready=None) -> None:
        """Listen until shutdown(); `ready(host, port)` once the socket listens."""
        from websockets.asyncio.server import serve

        for name in ("websockets.server", "websockets.client"):
            logging.getLogger(name).setLevel(logging.WARNING)
        self._closing: set = set()
        batcher = asyncio.create_task(self.batcher())
        try:
            async with serve(self.handle, self.options.host, self.options.port, process_request=self.process_request,
                             reuse_port=self.options.workers > 1 or None,
                             create_connection=_bounded_connection(self), open_timeout=None, backlog=LISTEN_BACKLOG,
                             max_size=self.options.max_frame_bytes, max_queue=queue_frames(self.options),
                             # No permessage-deflate: PCM barely compresses, and inflating every frame took 3 % of
                             # a worker's time at 70 streams (py-spy); the updates are a few hundred bytes.
                             compression=None,
                             ping_interval=self.options.ping_interval_seconds,
                             ping_timeout=self.options.ping_timeout_seconds, close_timeout=5) as server:
                self.address = server.sockets[0].getsockname()[:2]
                log.info("event=listening host=%s port=%d max_streams=%d max_batch=%d workers=%d pid=%d loop=%s",
                         *self.address, self.options.max_streams, self.options.max_batch, self.options.workers,
                         os.getpid(), type(asyncio.get_running_loop()).__module__.split(".")[0])
                files = await self._serve_files()
                if ready is not None:
                    ready(*self.address, *(self.http_address[1:] if files else ()))
                self.ready.set()
                await self._stop.wait()
                server.server.close()  # stop listening: a load balancer's next connection goes to another replica
                if files is not None:
                    files[0].close()
                # Streams and files being worked on get their answers within the same drain time, side by side.
                await asyncio.gather(self._drain(), *([files[1].drain(self.options.drain_seconds)] if files else []))
        except OSError as error:
            from speechattn.errors import SpeechattnError

            raise SpeechattnError(f"cannot listen on {self.options.host}:{self.options.port} "
                                  f"({error.strerror or error})") from None
        finally:
            batcher.cancel()
            self.worker.shutdown(wait=True)

    async def _serve_files(self):
        """The whole-file HTTP listener (speechattn/runtime/serve_files.py), with options.http_port."""
        if self.options.http_port is None:
            return None
        from speechattn.runtime.serve_files import FileServer

        files = FileServer(self)
        try:
            listener = await asyncio.start_server(files.handle, self.options.host, self.options.http_port,
                                                  backlog=LISTEN_BACKLOG, reuse_port=self.options.workers > 1 or None)
        except OSError as error:
            from speechattn.errors import SpeechattnError

            raise SpeechattnError(f"cannot listen on {self.options.host}:{self.options.http_port} (--http-port: "
                                  f"{error.strerror or error})") from None
        self.http_address = listener.sockets[0].getsockname()[:2]
        log.info("event=listening_files host=%s port=%d max_file_bytes=%d", *self.http_address,
                 self.options.max_file_bytes)
        return listener, files

    async def _drain(self) -> None:
        """SIGTERM: refuse new streams, finish every open one (its final result, then close 1001)."""
        self.draining = True
        for s in self.sessions.values():
            s.finishing = True
        self.urgent = True
        self.wake.set()
        deadline = time.monotonic() + self.options.drain_seconds
        while self.sessions and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        log.info("event=stopped streams_left=%d", len(self.sessions))
        for s in list(self.sessions.values()):  # out of time: closed without their result, so the process ends
            self._abort(s, 1001, "the server is shutting down (no time left for this stream's result)")

    def shutdown(self) -> None:
        self._stop.set()


def _http_response(status: int, reason: str, text: str, headers: str = "", body: bool = True) -> bytes:
    data = text.encode() if body else b""
    return (f"HTTP/1.1 {status} {reason}\r\n{headers}Content-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n").encode() + data


def request_refusal(head: bytes) -> tuple[bool, bytes | None]:
    """The stream port's judgement of a request's first bytes, before websockets parses them: (decided, response).
    (False, None): not enough bytes yet; (True, None): websockets takes it (a GET without a body, or a head too long
    to judge); (True, response): the HTTP answer, and the connection closes.

    websockets answers every method alike (PUT /healthz got 200) and drops a request with a body without a word
    (POST /stream: the client saw the connection close); here each gets its status."""
    line_end = head.find(b"\n")
    if line_end < 0:
        return (len(head) > MAX_JUDGED_HEAD_BYTES), None
    method, _, rest = head[:line_end].rstrip(b"\r").partition(b" ")
    target, _, protocol = rest.partition(b" ")
    if not target or protocol not in (b"HTTP/1.1", b"HTTP/1.0"):
        return True, _http_response(400, "Bad Request", "not an HTTP/1.1 request: the stream is at "
                                    "ws://HOST:PORT/stream (a WebSocket), with /healthz /readyz /metrics\n")
    if method != b"GET":
        return True, _http_response(405, "Method Not Allowed",
                                    f"{method.decode('ascii', 'replace')}: this port answers GET only (the stream at "
                                    "/stream, /healthz /readyz /metrics); whole files are POSTed to the server's "
                                    "--http-port\n", headers="Allow: GET\r\n", body=method != b"HEAD")
    head_end = head.find(b"\r\n\r\n")
    if head_end < 0:
        return (len(head) > MAX_JUDGED_HEAD_BYTES), None
    fields = [line.partition(b":") for line in head[line_end + 1:head_end].split(b"\r\n")]
    body = any(name.strip().lower() == b"transfer-encoding" or
               (name.strip().lower() == b"content-length" and value.strip() != b"0") for name, _, value in fields)
    if body:
        return True, _http_response(400, "Bad Request", "a GET with a body: this port takes none\n")
    return True, None


class _ConnectionBounds:
    """What _bounded_connection adds to websockets' ServerConnection: the server's bounds on what a client can make
    it hold or wait for.

    The opening handshake (the HTTP request, then the upgrade) must finish within handshake_timeout_seconds: past
    it (an idle socket, a slowloris request) the client gets HTTP 408, the server one log line, and the socket is
    closed (websockets' own open_timeout would close it without a word).

    Keepalive: a client is alive while it answers pings, or while anything of it arrives; while the server itself
    holds its audio unread (a client ahead of real time, throttled through TCP), its pong waits behind that audio,
    so it is not timed out (websockets' own keepalive closed such clients 1011 after 40 s, with no result).  The
    pings still go out: a vanished peer makes the write fail and the connection is lost at once.

    Replies the protocol writes by itself (pongs) to a client that reads none of them are bounded by
    MAX_UNREAD_REPLY_BYTES: past it the client is closed 1008 and the socket dropped.

    The request's head is judged before websockets reads it (request_refusal): a method other than GET, or a body,
    is answered (405, 400) and the rest of what the client sends is read and dropped until it closes or the
    handshake's time is up, so the answer is not lost to a reset while its body still arrives."""

    owner: Server  # set by _bounded_connection (websockets' own `server` attribute is its Server)
    binary_opcode: object  # websockets' Opcode.BINARY, set there too (websockets is imported with the server)
    heard_at = 0.0  # loop time of the client's latest bytes
    unread_replies = 0  # bytes the protocol answered since the client last read everything we wrote
    closed_by_server = False  # a bound closed it and said so in a log line

    take_frame = None  # a stream's _Reader: whole binary frames go to it as they are parsed, not through recv()
    head = b""  # the request's first bytes while request_refusal has not decided
    judged = False
    refused = False  # answered by request_refusal: what follows is dropped

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        if hasattr(transport, "max_size"):  # asyncio's selector transport: its size of one read
            transport.max_size = READ_BYTES
        resume = self.recv_messages.resume

        def resumed() -> None:  # the client's bytes waited on the server until now: it was heard until now
            self.heard_at = self.loop.time()
            resume()

        # Without it, a keepalive check in the one loop turn between the queue emptying and the next read saw
        # the last read's time (a second ago for a client far ahead) and closed the client 1008.
        self.recv_messages.resume = resumed

    def data_received(self, data: bytes) -> None:
        self.heard_at = self.loop.time()
        if self.refused:
            return
        if not self.judged:
            self.head += data
            self.judged, response = request_refusal(self.head)
            if not self.judged:
                return
            data, self.head = self.head, b""
            if response is not None:
                self.refused = True
                status = response.split(b" ", 2)[1].decode()
                self.owner.metrics.refusals.labels(status).inc()
                log.info("event=refused peer=%s reason=http_%s request=%s", _peer(self), status,
                         json.dumps(data.split(b"\r\n", 1)[0][:200].decode("ascii", "replace")))
                self.transport.write(response)
                if self.transport.can_write_eof():
                    self.transport.write_eof()  # the answer is whole; the client's body is read and dropped
                return
        waiting = self.transport.get_write_buffer_size()
        if not waiting:  # everything written before has been taken by the client
            self.unread_replies = 0
        super().data_received(data)
        self.unread_replies += max(0, self.transport.get_write_buffer_size() - waiting)
        if self.unread_replies > MAX_UNREAD_REPLY_BYTES and not self.transport.is_closing():
            self._said(f"the client reads none of its replies ({self.unread_replies:,} bytes of pongs waiting)")
            self.protocol.fail(1008, "the client reads none of its replies")
            self.send_data()
            self.transport.abort()  # it reads nothing: the close frame would wait with the rest

    def process_event(self, event) -> None:
        """A whole binary frame to the stream's reader when nothing waits in websockets' queue before it (so the
        audio stays in order); anything else to websockets (recv())."""
        take = self.take_frame
        if take is not None and event.fin and event.opcode is self.binary_opcode and not len(self.recv_messages.frames):
            take(event.data)
        else:
            super().process_event(event)

    async def keepalive(self) -> None:
        from websockets.exceptions import ConnectionClosed

        while True:
            await asyncio.sleep(self.ping_interval)
            try:
                pong = await self.ping()
            except ConnectionClosed:
                return
            asked = self.loop.time()
            while not pong.done():
                heard = max(asked, self.heard_at)
                if self.recv_messages.paused:  # the server holds its bytes unread: the pong is among them
                    heard = self.loop.time()
                left = heard + self.ping_timeout - self.loop.time()
                if left <= 0:
                    self._said(f"no answer to a ping and nothing heard for {self.ping_timeout:g} s (the client "
                               "stopped reading, or is gone)")
                    async with self.send_context():
                        self.protocol.fail(1008, "no answer to a ping: the client stopped reading")
                    return
                try:
                    await asyncio.wait_for(asyncio.shield(pong), left)
                except asyncio.TimeoutError:
                    continue
                except ConnectionClosed:
                    return

    def _said(self, reason: str) -> None:
        """The one log line of a close by these bounds (the handler then says nothing more)."""
        self.closed_by_server = True
        self.owner.metrics.refusals.labels("1008").inc()
        log.info("event=closed peer=%s code=1008 reason=%s", _peer(self), json.dumps(reason))

    async def handshake(self, *args, **kwargs) -> None:
        seconds = self.owner.options.handshake_timeout_seconds
        try:
            await asyncio.wait_for(super().handshake(*args, **kwargs), seconds)
        except asyncio.TimeoutError:
            if self.refused:  # answered already; the client still sends or holds the socket
                raise
            self.owner.metrics.refusals.labels("408").inc()
            log.info("event=refused peer=%s reason=handshake_timeout seconds=%g", _peer(self), seconds)
            self.transport.write(b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
            raise  # websockets then drops the socket


def _bounded_connection(server: Server):
    """websockets' ServerConnection with the server's bounds on what a client can make it hold or wait for
    (_ConnectionBounds)."""
    from websockets.asyncio.server import ServerConnection
    from websockets.frames import Opcode

    return type("BoundedConnection", (_ConnectionBounds, ServerConnection), {"owner": server,
                                                                            "binary_opcode": Opcode.BINARY})


def queue_frames(options: ServeOptions) -> tuple[int, int]:
    """websockets' queue of frames read ahead of the server (high and low water marks): QUEUE_BYTES of frames of
    --max-frame-bytes, 1 to 16."""
    high = max(1, min(16, QUEUE_BYTES // options.max_frame_bytes))
    return high, high // 4


def memory_bound_bytes(options: ServeOptions, sample_rate: int = MAX_RATE) -> int:
    """The most a live stream's client can make the server hold, beside the model's state: the frames websockets
    queued (and one more being read), the audio read but not yet stepped (--max-ahead seconds of float32 at the
    client's rate, and one frame more), the pongs it owes, and its queued results (an update is at most a
    chunk's weights: about 25 KiB at 256 frames)."""
    queued = (queue_frames(options)[0] + 2) * options.max_frame_bytes
    ahead = int(options.max_ahead_seconds * sample_rate * 4) + options.max_frame_bytes
    return queued + ahead + MAX_UNREAD_REPLY_BYTES + options.max_queued_messages * (25 << 10)


if hasattr(asyncio, "timeout"):  # Python 3.11
    async def _within(awaitable, seconds: float):
        """asyncio.wait_for without its task: a client's every frame is read under the idle timeout, and
        wait_for's task a read cost 6 us of CPU a frame more (websockets' server on one core, 50 clients sending
        flat out: 19 against 13 us a frame)."""
        async with asyncio.timeout(seconds):
            return await awaitable
else:
    _within = asyncio.wait_for


class _Reader:
    """A stream's reads: recv() with the idle timeout (Refused 1008 once no message came for `seconds`), holds
    (the client not read for a while), and listen(): whole binary frames handed to `take` as they are parsed
    (_ConnectionBounds.process_event), where `take` returns the seconds to hold.  A frame taken so that asks for
    a hold, or that is refused, interrupts recv() (a cancel: recv() may be cancelled, its message stays queued,
    websockets' own guarantee), which holds or raises.

    One timer a stream, moved on only when it fires: asyncio.timeout around every read started and cancelled a
    timer a frame (6 % of a server core at 40 streams, py-spy); holds never time out."""

    def __init__(self, connection, seconds: float) -> None:
        self.connection, self.seconds = connection, seconds
        self.loop, self.task = asyncio.get_running_loop(), asyncio.current_task()
        self.heard = self.loop.time()  # loop time of the latest message (or of the end of a hold)
        self.holding, self.take, self.interruption = False, None, None
        self.timer = self.loop.call_at(self.heard + seconds, self._check)

    def listen(self, take) -> None:
        self.take = take
        self.connection.take_frame = self._taken

    def _taken(self, data: bytes) -> None:
        self.heard = self.loop.time()
        try:
            hold = self.take(data)
        except Exception as error:  # a Refused, or a defect: raised in the stream's task, as a recv()'d frame's
            self._interrupt(error)
            return
        if hold:
            self._interrupt(hold)

    def _interrupt(self, why) -> None:
        """recv() raises `why` (an exception) or holds `why` seconds; frames go through recv() meanwhile."""
        self.connection.take_frame = None
        if self.interruption is None:
            self.interruption = why
            self.task.cancel()

    def _check(self) -> None:
        if self.holding or self.loop.time() < self.heard + self.seconds:
            self.timer = self.loop.call_at(max(self.heard, self.loop.time()) + self.seconds, self._check)
            return
        self._interrupt(Refused(1008, f"idle for {self.seconds:g} s"))

    async def recv(self):
        while True:
            try:
                message = await self.connection.recv()
            except asyncio.CancelledError:
                why, self.interruption = self.interruption, None
                if why is None:
                    raise
                if hasattr(self.task, "uncancel"):  # Python 3.11: this cancel was ours, not the task's owner's
                    self.task.uncancel()
                if isinstance(why, Exception):
                    raise why from None
                await self.hold(why)
                continue
            self.heard = self.loop.time()
            return message

    async def hold(self, seconds: float) -> None:
        self.holding, self.connection.take_frame = True, None  # its frames wait in websockets' queue
        try:
            await _hold(self.connection, seconds)
        finally:
            self.holding, self.heard = False, self.loop.time()
        if self.take is not None:
            self.connection.take_frame = self._taken

    def stop(self) -> None:
        self.timer.cancel()
        self.connection.take_frame, self.take = None, None


async def _hold(connection, seconds: float) -> None:
    """Wait `seconds` without reading the client (its audio backs up into TCP), ending at once, with
    ConnectionClosed, if the connection is lost meanwhile: a client that vanished after sending ahead was stepped,
    a ghost holding a slot, until its unread audio ran out (minutes)."""
    lost = connection.connection_lost_waiter
    try:
        await asyncio.wait_for(asyncio.shield(lost), seconds)
    except asyncio.TimeoutError:
        return
    raise connection.close_exc


def _decoded_together(stepped: list[tuple[Session, Frames]]) -> list:
    """The bigram decoder's segments of every stepped stream, its Viterbi steps batched across the streams
    (decoder.push_many: each stream's result exactly its own decoder's); None for a stream the kit decodes itself."""
    decoded: list = [None] * len(stepped)
    batched = [number for number, (s, frames) in enumerate(stepped)
               if isinstance(s.phone_stream.segmenter, PhoneDecoder) and len(frames.frame_indices)]
    found = push_many([stepped[n][0].phone_stream.segmenter for n in batched], [stepped[n][1].log_probs for n in batched])
    for number, segments in zip(batched, found):
        decoded[number] = segments
    return decoded


def _provisional(ps: PhoneStream) -> dict:
    """The decoder's view past its final segments (as `speechattn mic` shows it): the open segment's phone and
    start, and the best path's phone at the newest frame; either may still change.  None where there is none."""
    segmenter, phones = ps.segmenter, ps.model.phones
    return {"open": phones[segmenter.phone] if segmenter.phone >= 0 else None,
            "start": round(segmenter.start / FRAMES_PER_SECOND, 4) if segmenter.phone >= 0 else None,
            "now": phones[segmenter.run_phone] if segmenter.run_phone >= 0 else None}


def _segment_dicts(update: Update, ps: PhoneStream) -> list[dict]:
    from speechattn_export.segments import segment_dicts

    return segment_dicts(update.segments, ps.model.phones, ps.duration_seconds, FRAMES_PER_SECOND)


def _json_object(text: str, what: str = "the message is not JSON", code: int = 1007) -> dict:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nesting too deep for the parser (a 1011 and a traceback)
        raise Refused(code, what) from None
    if not isinstance(value, dict):
        raise Refused(code, f"{what}: a JSON object is expected")
    return value


def _peer(connection) -> str:
    address = getattr(connection, "remote_address", None)
    return f"{address[0]}:{address[1]}" if address else "-"


def _connection_closed():
    from websockets.exceptions import ConnectionClosed

    return ConnectionClosed


def _model_identity(path: str) -> dict:
    from speechattn.runtime.transcribe import model_identity

    return model_identity(str(path))


def default_workers() -> int:
    """One worker a core this process may use (a worker's loop, decoding and graph calls keep one core busy):
    the cores it may run on, or fewer where its cgroup's CPU quota says so (a container's CPU limit)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        with open("/sys/fs/cgroup/cpu.max") as limit:  # cgroup v2: "max 100000", or "200000 100000" for 2 cores
            quota, period = limit.read().split()[:2]
    except (OSError, ValueError):
        return cores
    return cores if quota == "max" else max(1, min(cores, -(-int(quota) // int(period))))


def run(model, options: ServeOptions, ready=None, threads: int | None = None) -> None:
    """Serve until SIGTERM or SIGINT: open streams get their final result and close 1001.  With options.workers > 1,
    that many processes share the port (SO_REUSEPORT: the kernel spreads the connections), each loading the model
    from model.path with `threads` onnxruntime threads; `ready` is called once every one listens."""
    needed()
    if options.workers > 1:
        return _run_workers(model.path, threads, options, ready)
    import signal

    async def main() -> None:
        server = Server(model, options)
        loop = asyncio.get_running_loop()
        for number in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(number, server.shutdown)
        await server.serve(ready)

    _run_loop(main)


def _event_loop() -> str:
    """uvloop where it is installed (the serve extra has it) and SPEECHATTN_EVENT_LOOP is not `asyncio`: its loop is
    libuv's in Cython, and the loop's own turns for each 40 ms frame of every stream were a fifth of a server core's
    CPU at 60 streams on asyncio's pure-Python loop (py-spy).  A value it does not know: UsageError."""
    choice = os.environ.get("SPEECHATTN_EVENT_LOOP", "auto")
    if choice not in ("auto", "uvloop", "asyncio"):
        raise UsageError(f"SPEECHATTN_EVENT_LOOP={choice}: auto, uvloop or asyncio")
    if choice == "asyncio":
        return "asyncio"
    from importlib.util import find_spec

    if find_spec("uvloop") is None:
        if choice == "uvloop":
            raise UsageError("SPEECHATTN_EVENT_LOOP=uvloop: uvloop is not installed (pip install uvloop)")
        return "asyncio"
    return "uvloop"


def _run_loop(main) -> None:  # main: the coroutine function
    """asyncio.run on the loop _event_loop names."""
    if _event_loop() == "uvloop":
        import uvloop

        return uvloop.run(main())
    asyncio.run(main())


def needed() -> None:
    """ModuleNotFoundError (the CLI's one-line install hint) for a package of the [serve] extra that is missing,
    here, before any worker starts: in a worker it would be a traceback per process, or (h11) a whole-file request
    that never gets an answer."""
    from importlib.util import find_spec

    for name in ("websockets", "prometheus_client", "h11"):
        if find_spec(name) is None:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    _event_loop()  # SPEECHATTN_EVENT_LOOP's usage error here, the same with one worker or several


def _run_workers(model_path, threads, options: ServeOptions, ready) -> None:
    """Start options.workers processes on one port, pass SIGTERM and SIGINT on to them, wait until all have drained;
    one line (SpeechattnError) if one cannot start or stops on its own."""
    import multiprocessing
    import queue
    import signal
    import tempfile
    from dataclasses import replace

    from speechattn.errors import SpeechattnError

    context = multiprocessing.get_context("spawn")  # a fresh interpreter: no onnxruntime threads copied by fork
    holders = []  # sockets holding the ports chosen for port 0 until every worker listens on them
    port = _reserved_port(options.host, options.port, "--port", holders)
    http_port = None if options.http_port is None else \
        _reserved_port(options.host, options.http_port, "--http-port", holders)
    with tempfile.TemporaryDirectory(prefix="speechattn-metrics-") as metrics_directory:
        open_count, reports = context.Value("i", 0), context.Queue()
        worker_options = replace(options, port=port, http_port=http_port)
        workers = [context.Process(target=_worker, name=f"speechattn-serve-{number}", daemon=False,
                                   args=(str(model_path), threads, worker_options, number, metrics_directory,
                                         open_count, reports)) for number in range(options.workers)]
        stopping, failure, listening = False, None, 0

        def stop(*_) -> None:
            nonlocal stopping
            stopping = True
            for worker in workers:
                if worker.pid is not None and worker.exitcode is None:
                    os.kill(worker.pid, signal.SIGTERM)

        previous = {number: signal.signal(number, stop) for number in (signal.SIGTERM, signal.SIGINT)}
        try:
            for worker in workers:
                worker.start()
            while any(worker.is_alive() for worker in workers):
                try:
                    report = reports.get(timeout=0.2)
                except queue.Empty:
                    report = None
                if report == "ready":
                    listening += 1
                    if listening == len(workers):
                        for holder in holders:
                            holder.close()
                        if ready is not None:
                            ready(options.host, port, *(() if http_port is None else (http_port,)))
                elif report is not None and failure is None:  # a worker's one line: it could not start
                    failure = report
                    stop()
                ended = [w for w in workers if w.exitcode is not None]
                if ended and not stopping:
                    failure = failure or f"server worker {ended[0].name} stopped (exit {ended[0].exitcode})"
                    stop()
            for worker in workers:
                worker.join()
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)
            for holder in holders:
                holder.close()
        if failure is not None:
            raise SpeechattnError(failure)


def _reserved_port(host: str, port: int, option: str, holders: list) -> int:
    """The port the workers share (`port`, or for 0 one the kernel picks), held by a bound, not listening, socket
    with SO_REUSEPORT until they listen on it.  First bound without SO_REUSEPORT, so that a port another server
    already listens on is refused as usual instead of being shared with it."""
    import socket

    from speechattn.errors import SpeechattnError

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as asyncio's listeners: TIME_WAIT is free
            probe.bind((host, port))
            port = probe.getsockname()[1]
        holder = socket.socket(family, socket.SOCK_STREAM)
        holders.append(holder)
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        holder.bind((host, port))
    except OSError as error:
        for held in holders:
            held.close()
        raise SpeechattnError(f"cannot listen on {host}:{port} ({option}: {error.strerror or error})") from None
    return port


def _worker(model_path: str, threads, options: ServeOptions, number: int, metrics_directory: str, open_count,
            reports) -> None:
    """One worker process: the model, a Server on the shared port, until SIGTERM (passed on by the parent, or sent
    when the parent dies)."""
    import signal
    import sys

    os.environ[MULTIPROCESS_DIRECTORY] = metrics_directory  # before prometheus_client is imported here
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    _stop_with_parent()
    from speechattn.errors import SpeechattnError
    from speechattn_export.stream_client import StreamingModel, providers_for

    async def main() -> None:
        providers = providers_for(options.provider)
        server = Server(StreamingModel(model_path, providers=providers, num_threads=threads), options, number,
                        open_count)
        loop = asyncio.get_running_loop()
        for signal_number in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signal_number, server.shutdown)
        await server.serve(lambda *address: reports.put("ready"))

    try:
        _run_loop(main)
    except SpeechattnError as error:
        reports.put(str(error))
        sys.exit(1)


def _stop_with_parent() -> None:
    """Linux: SIGTERM to this worker when the server's first process dies, even by SIGKILL, so that no worker is
    left serving the port on its own (it drains its streams, as at any SIGTERM)."""
    import ctypes
    import multiprocessing
    import signal

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != multiprocessing.parent_process().pid:  # the parent died before prctl: stop now
        os.kill(os.getpid(), signal.SIGTERM)
