"""Whole files over HTTP beside `speechattn serve`'s live streams: POST /transcribe and POST /align on --http-port,
each answering with the JSON the command line writes (`transcribe --format json`, `align --format json`).

    curl --data-binary @a.wav 'http://127.0.0.1:8766/transcribe?name=a.wav'
    curl --data-binary @a.wav 'http://127.0.0.1:8766/align?name=a.wav&text=the+words+read+aloud[&force=1]'
    curl --data-binary @b.wav 'http://127.0.0.1:8766/align?name=b.wav&language=es&text=hola+a+todos'

Why a second listener: websockets parses only a WebSocket handshake (a GET with no body), so uploads go to a small
HTTP/1.1 server on the same event loop, parsed by h11 (python-hyper's sans-I/O HTTP/1.1 parser, the one under
httpcore and uvicorn: pure Python, no dependencies, strict about framing).  One request per connection
(Connection: close); `Expect: 100-continue` is answered 100 once the head passes its checks.  Bounds: the request
head (line and headers, so also align's text) within MAX_HEAD_BYTES and the handshake timeout (else 408); the body
at most max_file_bytes (413, said before it is read when Content-Length gives it away), the whole of it by a deadline that its length sets at the slowest rate taken
(upload_bytes_per_second; else 408: eight uploads of a byte every 10 s held every slot, indefinitely), at most
MAX_UPLOADS arriving at once; at most MAX_FILE_JOBS whole files queued or running, one at a time on a thread of its
own (503 past it), so live streams keep the batcher's thread and an upload still arriving holds no file's slot.  Every request gets
one log line; a file that cannot be read gets 422 and the command line's one line as {"error": ...}.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import re
import tempfile
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from speechattn.errors import SpeechattnError

log = logging.getLogger("speechattn.runtime.serve")
MAX_HEAD_BYTES = 64 << 10  # the request line and headers: align's text rides in the query (about 10,000 words)
MAX_FILE_JOBS = 8  # whole files running or waiting for the file threads; one more gets 503
FILE_THREADS = 2  # files worked on at once: a short file waits behind at most one other file, not a queue of them
MAX_UPLOADS = 64  # requests whose body is still arriving; one more gets 503
READ_BYTES = 1 << 16
STOP_SECONDS = 2.0  # after the drain: how long a file being worked on has to reach its next block and be answered
ENDPOINTS = ("/transcribe", "/align")
TRANSCRIBE_PARAMETERS = {"name", "token", "decoder", "min_frames", "chunk_frames", "phases"}
ALIGN_PARAMETERS = {"name", "token", "text", "force", "phases", "language"}


class HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


class FileServer:
    """The HTTP listener for whole files, sharing the live server's model, options, token check and metrics."""

    def __init__(self, server) -> None:
        self.server, self.options = server, server.options
        self.jobs = 0  # whole files queued or running
        self.uploads = 0  # requests whose body is arriving
        self.executor = ThreadPoolExecutor(max_workers=FILE_THREADS, thread_name_prefix="speechattn-files")
        self.files_model = None  # options.files_model once loaded (_files_model)
        self.loading = threading.Lock()  # the files' model, loaded once by whichever thread is first
        self.stopping = False  # the drain ran out of time: files still worked on stop at their next block (503)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One connection, one request: the answer (or the error's status and line), one log line, closed."""
        import h11

        address = writer.get_extra_info("peername")
        peer = f"{address[0]}:{address[1]}" if address else "-"
        started = time.monotonic()
        connection = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD_BYTES)
        path, queued = "-", False
        try:
            try:
                request = await self._next(connection, reader, self.options.handshake_timeout_seconds)
                if not isinstance(request, h11.Request):
                    raise HttpError(400, "no request")
                path = urllib.parse.urlsplit(request.target.decode("latin-1")).path
                query = self._query(request)
                self._check(request, path, query)
                with tempfile.TemporaryDirectory(prefix="speechattn-serve-") as folder:
                    name = _file_name(query.get("name", "upload"))
                    upload = Path(folder) / name
                    self.uploads += 1
                    try:
                        await self._receive(connection, reader, writer, request, upload)
                    finally:
                        self.uploads -= 1
                    if self.jobs >= MAX_FILE_JOBS:
                        raise HttpError(503, f"busy: {MAX_FILE_JOBS} files are waiting; try again later")
                    self.jobs += 1  # counted until the answer is written: a shutdown waits for it
                    queued = True
                    answer = await asyncio.get_running_loop().run_in_executor(self.executor, self._work, path,
                                                                              query, upload, name)
                status, body = 200, answer.encode()
            except HttpError as error:
                status, body = error.status, json.dumps({"error": error.message}).encode()
            except h11.RemoteProtocolError as error:
                status = error.error_status_hint
                body = json.dumps({"error": f"a malformed HTTP request ({error})"}).encode()
            except ConnectionError:
                log.info("event=file peer=%s path=%s status=- reason='the client left'", peer, path)
                writer.close()
                return
            except Exception as error:  # a defect: the request still gets its answer, the log the traceback
                log.error("event=error where=file error=%s", json.dumps(f"{type(error).__name__}: {error}"[:300]),
                          exc_info=log.isEnabledFor(logging.DEBUG))
                status, body = 500, json.dumps({"error": "internal error: the server could not read this "
                                                         "file"}).encode()
            self.server.metrics.file_requests.labels(path if path in ENDPOINTS else "other", str(status)).inc()
            log.info("event=file peer=%s path=%s status=%d seconds=%.2f%s", peer, path, status,
                     time.monotonic() - started, "" if status == 200 else f" reason={json.loads(body)['error']!r}")
            await self._respond(connection, writer, status, body)
        finally:
            if queued:
                self.jobs -= 1

    async def drain(self, seconds: float) -> None:
        """Shutting down (the listener already closed): wait up to `seconds` for the files in hand; then the files
        still worked on stop at their next block of audio and are answered 503 (a file of hours held the process
        for minutes, and its request got no answer)."""
        deadline = time.monotonic() + seconds
        while self.jobs and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        self.stopping = True
        answered = time.monotonic() + STOP_SECONDS
        while self.jobs and time.monotonic() < answered:
            await asyncio.sleep(0.02)
        self.executor.shutdown(wait=False, cancel_futures=True)

    async def _next(self, connection, reader, seconds: float, deadline: float | None = None,
                    late: str = "the request did not arrive within {seconds:g} s"):
        """The next h11 event, reading as it needs, every read within `seconds` and all by `deadline` (monotonic
        time; else 408 with `late`)."""
        import h11

        deadline = min(time.monotonic() + seconds, deadline if deadline is not None else float("inf"))
        while True:
            event = connection.next_event()
            if event is not h11.NEED_DATA:
                return event
            try:
                data = await asyncio.wait_for(reader.read(READ_BYTES), max(0.0, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                raise HttpError(408, late.format(seconds=seconds)) from None
            connection.receive_data(data)

    def _query(self, request) -> dict[str, str]:
        query = urllib.parse.urlsplit(request.target.decode("latin-1")).query
        query = "&".join(field for field in query.split("&") if field)  # a trailing or doubled & is no field
        try:
            pairs = urllib.parse.parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query),
                                           errors="strict", max_num_fields=16)
        except ValueError as error:
            raise HttpError(400, f"a query that cannot be read ({error})") from None
        names = [name for name, _ in pairs]
        if len(set(names)) < len(names):  # text=please&text=enter aligned "enter" alone
            twice = next(name for name in names if names.count(name) > 1)
            raise HttpError(400, f"parameter {twice!r} is given {names.count(twice)} times: give it once")
        return dict(pairs)

    def _check(self, request, path: str, query: dict) -> None:
        """Method, path, token, parameters and size, before any of the body is read."""
        head = len(request.target) + sum(len(key) + len(value) + 4 for key, value in request.headers)
        if head > MAX_HEAD_BYTES:  # h11 bounds only a head still incomplete: one read may bring a whole longer one
            raise HttpError(431, f"the request line and headers are over {MAX_HEAD_BYTES >> 10} KiB (align's text "
                                 "rides in the query: align a text that long with the command line)")
        if path not in ENDPOINTS:
            raise HttpError(404, "not found: POST /transcribe or POST /align (live streams: ws://HOST:PORT/stream)")
        if request.method != b"POST":
            raise HttpError(405, f"{path} takes POST with the audio file as the body")
        if self.options.token is not None and not self.server._token_ok(_HeaderView(request)):
            self.server.metrics.refusals.labels("token").inc()
            raise HttpError(401, "a wrong or missing token: Authorization: Bearer TOKEN, or ?token=TOKEN")
        known = TRANSCRIBE_PARAMETERS if path == "/transcribe" else ALIGN_PARAMETERS
        unknown = sorted(set(query) - known)
        if unknown:
            raise HttpError(400, f"unknown parameter {unknown[0]!r} (known: {', '.join(sorted(known))})")
        if path == "/align" and not query.get("text", "").strip():
            raise HttpError(400, "align needs the words read aloud: ?text=...")
        if path == "/align" and "language" in query:
            self._check_language(query["language"])
        if query.get("force", "0") not in ("0", "1", "true", "false"):  # force=yes was taken as no force
            raise HttpError(400, f"force is 1 or 0, not {query['force'][:20]!r}")
        counts = self.server.model.phase_counts  # phases, checked before the body comes (a files model with
        if "phases" in query and query["phases"] not in map(str, counts):  # another step: its 422 at the file)
            raise HttpError(400, f"phases is {' or '.join(map(str, counts))} for this model (evenly spaced shifts "
                                 f"within its encoder's step), not {query['phases'][:20]!r}")
        length = _header(request, b"content-length")
        if length is not None and int(length) > self.options.max_file_bytes:
            raise HttpError(413, f"the file is {int(length):,} bytes; this server takes at most "
                                 f"{self.options.max_file_bytes:,} (--max-file-bytes)")
        if self.jobs >= MAX_FILE_JOBS:
            raise HttpError(503, f"busy: {MAX_FILE_JOBS} files are waiting; try again later")
        if self.uploads >= MAX_UPLOADS:
            raise HttpError(503, f"busy: {MAX_UPLOADS} uploads are arriving; try again later")

    def _check_language(self, language: str) -> None:
        """An unknown language is a 400 naming it, a server without espeak-ng a 501, before the body comes; the
        language's lexicon is loaded here once, for every request after it."""
        from speechattn.runtime.languages import EspeakMissing, LanguageError

        try:
            self.server.lexicons.get(language)
        except EspeakMissing:
            raise HttpError(501, f"language={language[:40]}: this server has no espeak-ng, which speaks the words of "
                                 "other languages (pip install espeakng-loader where it runs)") from None
        except LanguageError as error:
            raise HttpError(400, str(error)) from None

    async def _receive(self, connection, reader, writer, request, upload: Path) -> None:
        """The body, to a file in a folder of its own, bounded by max_file_bytes, the whole of it within the
        idle timeout plus its length at upload_bytes_per_second (no length given: the largest file's).

        A client that sent `Expect: 100-continue` (curl does for a body over 1 MB) waits for 100 Continue before
        the body: it is sent here, once the head has passed _check; a head that fails it gets its final status
        instead, and the body is never sent (unanswered, curl waited a second, then sent it anyway)."""
        import h11

        if connection.client_is_waiting_for_100_continue:
            writer.write(connection.send(h11.InformationalResponse(status_code=100, headers=[], reason=b"Continue")))

        length = _header(request, b"content-length")
        expected = int(length) if length is not None else self.options.max_file_bytes
        seconds = self.options.idle_timeout_seconds + expected / self.options.upload_bytes_per_second
        deadline = time.monotonic() + seconds
        late = (f"the body did not arrive within {seconds:.3g} s ({expected:,} bytes at "
                f"{self.options.upload_bytes_per_second:,} bytes a second, the slowest upload this server takes, "
                "after the idle timeout)")
        size = 0
        with open(upload, "wb") as handle:
            while True:
                event = await self._next(connection, reader, self.options.idle_timeout_seconds, deadline, late)
                if isinstance(event, h11.EndOfMessage):
                    break
                if not isinstance(event, h11.Data):
                    raise HttpError(400, "the request ended before its body")
                size += len(event.data)
                if size > self.options.max_file_bytes:
                    raise HttpError(413, f"the file is over {self.options.max_file_bytes:,} bytes (--max-file-bytes)")
                try:
                    handle.write(event.data)
                except OSError as error:  # a full disk: the client is told, the server goes on
                    raise HttpError(507, f"the server cannot store the upload ({error.strerror or error})") from None
        if not size:
            raise HttpError(400, "no file: send the audio file as the request body")

    def _work(self, path: str, query: dict, upload: Path, name: str) -> str:
        """A file thread: the command line's JSON, or its one line as a 422."""
        self._check_duration(upload, name)
        try:
            if path == "/transcribe":
                return self._transcribe(query, upload, name)
            return self._align(query, upload, name)
        except (SpeechattnError, ValueError) as error:
            raise HttpError(422, str(error).replace(str(upload), name).splitlines()[0][:400]) from None

    def _transcribe(self, query: dict, upload: Path, name: str) -> str:
        from speechattn.runtime.align import offline_chunk
        from speechattn.runtime.transcribe import as_json, file_phases, transcribe_file
        from speechattn_export.pipeline import DecodingOptions

        base, model = self.options.decoding, self.server.model
        if "chunk_frames" not in query and self.options.files_model is not None:
            model = self._files_model()  # a file's own model, as `transcribe` takes it; a chunk named: the live one
        try:  # a file's chunk: the largest, as `transcribe` (--chunk-frames is the live streams' default)
            options = DecodingOptions(decoder=query.get("decoder", base.decoder),
                                      min_frames=_integer(query, "min_frames", base.min_frames),
                                      chunk_frames=model.check_chunk(_integer(query, "chunk_frames",
                                                                              offline_chunk(model))),
                                      cue_rules=base.cue_rules)
        except ValueError as error:
            raise HttpError(400, str(error)) from None
        phases = (int(query["phases"]) if "phases" in query  # checked with the request's head
                  else file_phases(model, chunk_named="chunk_frames" in query))  # as `transcribe`'s default
        transcript = transcribe_file(model, upload, options, phases=phases, on_progress=self._going_on)
        return as_json(dataclasses.replace(transcript, file=name))

    def _files_model(self):
        """options.files_model, loaded at the first file that needs it (in the one file thread: no lock), one
        onnxruntime thread, as the file thread has; a file that is no model: its one line (ValueError), as a 422."""
        with self.loading:
            return self._load_files_model()

    def _load_files_model(self):
        if self.files_model is None:
            from speechattn.runtime.transcribe import resolve_model
            from speechattn_export.stream_client import StreamingModel, providers_for

            self.files_model = StreamingModel(resolve_model(self.options.files_model),
                                              providers=providers_for(self.options.provider), num_threads=1)
        return self.files_model

    def _align(self, query: dict, upload: Path, name: str) -> str:
        from speechattn.runtime.align import align_file, as_json, script_and_language, script_words

        # a WebVTT text's cues, in the language its header names unless language= says (checked with the request's
        # head); any other text as it is
        text, language = script_and_language(query["text"], "text", query.get("language"))
        lexicon = self.server.lexicons.get(language)
        phases = int(query.get("phases", "1"))  # as `align --phases`: checked with the request's head
        words, starts = script_words(text, "text", lexicon)
        aligned = dataclasses.replace(align_file(self.server.model, upload, words, starts, phases=phases,
                                                 on_progress=self._going_on), file=name)
        if query.get("force", "0") not in ("1", "true"):  # as `speechattn align` without --force
            aligned.check_alignable(force="force=1", language="language=LANG")
        return as_json(aligned)

    def _check_duration(self, upload: Path, name: str) -> None:
        """A file longer than max_file_seconds is refused (413) before it is decoded: a 180 KB FLAC of two hours'
        silence held the file thread 110 s.  soundfile's header says the length; a file only FFmpeg reads, whose
        length its header does not give, is bounded by max_file_bytes alone."""
        import soundfile

        try:
            seconds = soundfile.info(str(upload)).duration
        except Exception:  # not soundfile's: FFmpeg's path, whose errors are the command line's
            return
        if seconds > self.options.max_file_seconds:
            raise HttpError(413, f"{name} is {seconds / 60:.1f} minutes of audio; this server takes at most "
                                 f"{self.options.max_file_seconds / 60:g} (--max-file-seconds)")

    def _going_on(self, fraction_done: float) -> None:
        """Called after each block of a file: stop it when the server is shutting down and its drain ran out."""
        if self.stopping:
            raise HttpError(503, "the server is shutting down: send the file again (to another replica)")

    async def _respond(self, connection, writer, status: int, body: bytes) -> None:
        import h11

        kind = "application/json" if body.startswith((b"{", b"[")) else "text/plain"
        try:
            data = connection.send(h11.Response(status_code=status, headers=[
                ("Content-Type", f"{kind}; charset=utf-8"), ("Content-Length", str(len(body))),
                ("Connection", "close")])) + connection.send(h11.Data(data=body)) + connection.send(h11.EndOfMessage())
        except h11.LocalProtocolError:  # the request was too broken for h11 to answer it: a bare status line
            data = f"HTTP/1.1 {status} \r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body
        try:
            writer.write(data)
            await asyncio.wait_for(writer.drain(), self.options.idle_timeout_seconds)
        except (ConnectionError, asyncio.TimeoutError):
            pass  # the client left: its log line is written
        finally:
            writer.close()


class _HeaderView:
    """The bits of a websockets Request that Server._token_ok reads, from an h11 Request."""

    def __init__(self, request) -> None:
        self.path = request.target.decode("latin-1")
        self.headers = {"Authorization": (_header(request, b"authorization") or "")}


def _header(request, name: bytes) -> str | None:
    for key, value in request.headers:
        if key == name:
            return value.decode("latin-1")
    return None


def _integer(query: dict, key: str, default):
    if key not in query:
        return default
    if not re.fullmatch(r"-?[0-9]{1,9}", query[key]):  # int() also takes 2_0, spaces and other scripts' digits
        raise HttpError(400, f"{key} must be an integer, not {query[key][:20]!r}")
    return int(query[key])


def _file_name(name: str) -> str:
    """The uploaded file's name as the JSON's "file" and the temporary file's name (its extension tells the
    decoders the format): the last path part, plain characters only."""
    base = re.sub(r"[^A-Za-z0-9._-]", "_", name.replace("\\", "/").rsplit("/", 1)[-1])[:100].lstrip(".")
    return base or "upload"
