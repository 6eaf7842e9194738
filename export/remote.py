"""A stream on a `speechattn serve` server, with the local PhoneStream's push / finish interface.

    from speechattn_export.remote import RemoteStream

    stream = RemoteStream("ws://127.0.0.1:8765/stream", DecodingOptions(visemes="rhubarb"), sample_rate=8000)
    for piece in audio_pieces:                  # float32 in [-1, 1] or int16, any size
        update = stream.push(piece)             # what the server made final so far (never waits for it)
        update.segments, update.cues, update.words
    update = stream.finish()                    # waits for the rest and the server's result
    stream.segment_dicts(), stream.cue_dicts()  # everything, as `speechattn transcribe --format json` writes it

With reconnect=True a stream closed by a server shutting down (close 1001, after the result of what it heard) goes
on in a new stream at the same URL (behind a load balancer: another replica): the audio the server did not take in
is sent again, and the new stream's segments, cues and words are offset by the audio before it (`seams` says where
the streams meet, in seconds); a follow-along stream's new follower takes the reader up at the last position the
old one sent (the start message's script_from), not at the script's first word.

Needs the `websockets` package (pip install 'speechattn[serve]'), imported here only when a stream opens, so the
rest of the kit keeps to numpy and onnxruntime.  The messages are export/serve.schema.json's.
"""

from __future__ import annotations

import json
import time
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from speechattn_export.pipeline import DecodingOptions


class RemoteError(RuntimeError):
    """The server refused or closed the stream: `code` is the WebSocket close code (or HTTP status), `reason` its
    one line."""

    def __init__(self, code: int | None, reason: str) -> None:
        super().__init__(f"{reason} (code {code})" if code else reason)
        self.code, self.reason = code, reason


@dataclass
class RemoteUpdate:
    """What the server made final since the last push (segments and cues as the JSON output's dicts)."""

    segments: list[dict] = field(default_factory=list)
    cues: list[dict] = field(default_factory=list)
    weights: np.ndarray | None = None  # (R, S) mouth-shape weights, with weights=True
    words: list[dict] = field(default_factory=list)  # follow-along words made final, with a script
    position: dict | None = None  # follow-along: the reader's position, {"index", "inside"}
    provisional: dict | None = None  # with provisional=True: {"open", "start", "now"}, the newest update's


class RemoteStream:
    """One audio source streamed to a server.  Audio goes as float32 (int16 input is divided by 32768, as the local
    kit reads it), so the server hears exactly what a local PhoneStream would.

    reconnect: when the server closes the stream because it is shutting down (1001, after the result of what it
    took in), open a new stream at the same URL (up to `attempts` tries, waiting 0.2 s, 0.4 s, ... between; a
    server that is full or draining, 1013 or HTTP 502/503, counts as a try), send it the audio the old one did not
    take in, and go on.  Times after a seam are offset by the audio before it, so they read as one stream's."""

    RESEND_SAMPLES = 1 << 16  # resent audio goes in messages of at most this many samples (256 KiB of float32)

    def __init__(self, url: str, options: DecodingOptions = DecodingOptions(), sample_rate: int = 16000,
                 token: str | None = None, script: str | None = None, weights: bool = False,
                 open_timeout: float = 10.0, reconnect: bool = False, attempts: int = 5,
                 provisional: bool = False, language: str | None = None) -> None:
        try:
            import websockets  # noqa: F401
        except ModuleNotFoundError:
            raise ModuleNotFoundError("RemoteStream needs websockets: pip install 'speechattn[serve]' "
                                      "(or pip install websockets)", name="websockets") from None
        self.url, self.token, self.open_timeout = url, token, open_timeout
        self.reconnect, self.attempts = reconnect, attempts
        asked = {"decoder": options.decoder, "min_frames": options.min_frames, "chunk_frames": options.chunk_frames,
                 "visemes": options.visemes, "weights": weights or None, "script": script,
                 "language": language, "provisional": provisional or None}  # language: the script's (espeak-ng's name)
        self._start = {"type": "start", "sample_rate": int(sample_rate), "format": "float32",
                       "options": {k: v for k, v in asked.items() if v is not None}}
        self.position: dict | None = None  # follow-along: the reader's position last received
        self._last_word: int | None = None  # follow-along: the index of the last word made final
        self.taken_up: list[int] = []  # follow-along: at each seam, the word the new stream's follower started at
        self.sample_rate, self.segments, self.cues, self.words = sample_rate, [], [], []
        self.result: dict | None = None
        self.results: list[dict] = []  # each stream's result, its times offset (one entry unless a seam happened)
        self.seams: list[float] = []  # seconds of the audio where a new stream took over
        self._ending = False
        self._offset_samples = 0  # samples of the audio heard by the streams before this one
        self._sent_samples = 0  # samples sent on this stream
        self._kept: deque = deque()  # the audio sent on this stream that the server has not said it took in
        self._kept_from = 0  # this stream's sample index of the first kept sample
        self._open(tries=1)

    def _open(self, tries: int) -> None:
        """Connect and start a stream: one try, or (reconnecting) up to `tries` while the server is away or full."""
        from websockets.exceptions import InvalidStatus
        from websockets.sync.client import connect

        headers = {"Authorization": f"Bearer {self.token}"} if self.token else None
        for attempt in range(tries):
            if attempt:
                time.sleep(0.2 * 2 ** (attempt - 1))
            last = attempt == tries - 1
            try:
                # No pings of ours: while the server holds audio sent ahead of real time unread, a ping waits behind
                # it, and websockets closed the stream (1011) after 40 s with no result.  The server pings us.
                self.connection = connect(self.url, additional_headers=headers, open_timeout=self.open_timeout,
                                          max_size=None, ping_interval=None)
                self.connection.__enter__()  # held open across push() calls (websockets 17 asks for it)
            except InvalidStatus as error:
                status = error.response.status_code
                if status in (502, 503, 504) and not last:
                    continue
                raise RemoteError(status, f"{self.url}: refused with HTTP {status} "
                                          f"({error.response.body.decode(errors='replace').strip()[:200]})") from None
            except OSError as error:
                if not last:
                    continue
                raise RemoteError(None, f"{self.url}: cannot connect ({error.strerror or error})") from None
            self._send(json.dumps(self._start))
            try:
                self.ready = self._receive()
            except RemoteError as error:
                if error.code == 1013 and not last:
                    continue
                raise
            if self.ready.get("type") != "ready":
                raise RemoteError(None, f"{self.url}: the server answered {self.ready.get('type')!r}, not ready")
            return

    @property
    def chunk_frames(self) -> int:
        return self.ready["chunk_frames"]

    def push(self, samples, sample_rate=None) -> RemoteUpdate:
        """Send audio (mono, at the rate given when the stream opened); returns what has arrived, without waiting."""
        if self.result is not None:
            raise RuntimeError("this stream is finished; open a new RemoteStream")
        if sample_rate is not None and sample_rate != self.sample_rate:
            raise ValueError(f"this stream was opened at {self.sample_rate} Hz, not {sample_rate} Hz")
        samples = np.asarray(samples)
        if samples.dtype == np.int16:
            samples = samples.astype(np.float32) / 32768.0
        if samples.dtype.kind != "f" or samples.ndim != 1:
            raise ValueError(f"audio must be mono float32 in [-1, 1] or int16, shape (samples,); got {samples.dtype} "
                             f"{samples.shape}")
        samples = samples.astype("<f4")
        if self.reconnect:
            self._kept.append(samples)
        self._sent_samples += samples.size
        self._send(samples.tobytes())
        return self._collect(wait=False)

    def finish(self) -> RemoteUpdate:
        """No more audio: the last updates and the server's result (result: the whole stream)."""
        if self.result is not None:
            raise RuntimeError("this stream is already finished")
        self._ending = True
        self._send(json.dumps({"type": "end"}))
        update = self._collect(wait=True)
        self.connection.close()
        return update

    def _send(self, message) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            self.connection.send(message)
        except ConnectionClosed:
            pass  # the server closed the stream: what it sent before closing says why (_collect reads it)

    def _collect(self, wait: bool) -> RemoteUpdate:
        update = RemoteUpdate()
        rows = []
        while self.result is None:
            message = self._receive(timeout=None if wait else 0)
            if message is None:
                break
            if message["type"] == "result":
                self._stream_ended(message)
            elif message["type"] == "update":
                offset = self._offset_samples / self.sample_rate
                update.segments += _offset(message.get("segments", []), offset)
                update.cues += _offset(message.get("cues", []), offset)
                update.words += _offset(message.get("words", []), offset)
                update.position = message.get("position", update.position)
                self.position = update.position or self.position
                if message.get("words"):
                    self._last_word = message["words"][-1]["index"]
                if "provisional" in message:
                    update.provisional = _offset_start(message["provisional"], offset)
                rows += message.get("weights", [])
                self._forget(message.get("samples", 0))
        if rows:
            update.weights = np.asarray(rows, dtype=np.float64)
        self.segments += update.segments
        self.cues += update.cues
        self.words += update.words
        return update

    def _forget(self, taken_samples: int) -> None:
        """The server took in this stream's first `taken_samples`: they need not be kept for a new stream."""
        while self._kept and self._kept_from + self._kept[0].size <= taken_samples:
            self._kept_from += self._kept.popleft().size

    def _stream_ended(self, result: dict) -> None:
        """A result: the end of the whole stream, or (the server shutting down) a seam."""
        offset = self._offset_samples / self.sample_rate
        heard = int(result.get("samples", self._sent_samples))
        shifted = {**result, "segments": _offset(result["segments"], offset)}
        if "cues" in result:
            shifted["cues"] = _offset(result["cues"], offset)
        self.results.append(shifted)
        if self._ending and heard >= self._sent_samples:
            self.result = {**shifted, "duration": round(offset + result["duration"], 4),
                           "samples": self._offset_samples + heard}
            return
        if not self.reconnect:
            self.connection.close()
            self.result = shifted
            raise RemoteError(1001, "the server closed the stream: it is shutting down (reconnect=True goes on in a "
                                    "new stream)")
        self._forget(heard)
        unheard = np.concatenate(list(self._kept))[heard - self._kept_from:] if self._kept else np.zeros(0, "<f4")
        self.connection.close()
        self._offset_samples += heard
        self.seams.append(self._offset_samples / self.sample_rate)
        self._kept.clear()
        self._kept_from, self._sent_samples = 0, 0
        if "script" in self._start["options"] and self.position:
            self._start["options"]["script_from"] = resume_word(self.position, self._last_word)
            self.taken_up.append(self._start["options"]["script_from"])
        self._open(tries=self.attempts)
        for begin in range(0, unheard.size, self.RESEND_SAMPLES):
            piece = unheard[begin:begin + self.RESEND_SAMPLES]
            self._kept.append(piece)
            self._sent_samples += piece.size
            self._send(piece.tobytes())
        if self._ending:
            self._send(json.dumps({"type": "end"}))

    def _receive(self, timeout=None) -> dict | None:
        from websockets.exceptions import ConnectionClosed

        try:
            text = self.connection.recv(timeout=timeout)
        except TimeoutError:
            return None
        except ConnectionClosed as closed:
            frame = closed.rcvd or closed.sent
            raise RemoteError(frame.code if frame else None,
                              f"the server closed the stream: {frame.reason if frame else 'connection lost'}") from None
        message = json.loads(text)
        if message.get("type") == "error":
            raise RemoteError(message.get("code"), message.get("message", ""))
        return message

    def segment_dicts(self) -> list[dict]:
        """Every final segment: the servers' results after finish(), else those received so far."""
        if self.result is None:
            return list(self.segments)
        return [segment for result in self.results for segment in result["segments"]]

    def cue_dicts(self) -> list[dict]:
        if self.result is None or "cues" not in self.result:
            return list(self.cues)
        return [cue for result in self.results for cue in result.get("cues", [])]

    def close(self) -> None:
        self.connection.close()


def resume_word(position: dict, last_word: int | None) -> int:
    """The word a new follower takes the reader up at: the reader's last position, or the word after it where the
    reader was inside a word the old stream's end made final (a word is reported once)."""
    index = int(position["index"])
    return index + 1 if position.get("inside") and last_word == index else index


def _offset_start(provisional: dict, seconds: float) -> dict:
    if not seconds or provisional["start"] is None:
        return provisional
    return {**provisional, "start": round(provisional["start"] + seconds, 6)}


def _offset(items: list[dict], seconds: float) -> list[dict]:
    """Segments, cues or words of a stream that began `seconds` into the audio, on the whole audio's clock."""
    if not seconds:
        return items
    return [{**item, "start": round(item["start"] + seconds, 6), "end": round(item["end"] + seconds, 6)}
            for item in items]
