"""A stream on a `speechattn serve` server, with the local PhoneStream's push / finish interface.

    from speechattn_export.remote import RemoteStream

    stream = RemoteStream("ws://127.0.0.1:8765/stream", DecodingOptions(visemes="rhubarb"), sample_rate=8000)
    for piece in audio_pieces:                  # float32 in [-1, 1] or int16, any size
        update = stream.push(piece)             # what the server made final so far (never waits for it)
        update.segments, update.cues, update.words
    update = stream.finish()                    # waits for the rest and the server's result
    stream.segment_dicts(), stream.cue_dicts()  # everything, as `speechattn transcribe --format json` writes it

Needs the `websockets` package (pip install 'speechattn[serve]'), imported here only when a stream opens, so the
rest of the kit keeps to numpy and onnxruntime.  The messages are export/serve.schema.json's.
"""

from __future__ import annotations

import json
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


class RemoteStream:
    """One audio source streamed to a server.  Audio goes as float32 (int16 input is divided by 32768, as the local
    kit reads it), so the server hears exactly what a local PhoneStream would."""

    def __init__(self, url: str, options: DecodingOptions = DecodingOptions(), sample_rate: int = 16000,
                 token: str | None = None, script: str | None = None, weights: bool = False,
                 open_timeout: float = 10.0) -> None:
        try:
            from websockets.sync.client import connect
        except ModuleNotFoundError:
            raise ModuleNotFoundError("RemoteStream needs websockets: pip install 'speechattn[serve]' "
                                      "(or pip install websockets)", name="websockets") from None
        from websockets.exceptions import InvalidStatus

        headers = {"Authorization": f"Bearer {token}"} if token else None
        try:
            self.connection = connect(url, additional_headers=headers, open_timeout=open_timeout, max_size=None)
            self.connection.__enter__()  # held open across push() calls (websockets 17 asks for it)
        except InvalidStatus as error:
            status = error.response.status_code
            raise RemoteError(status, f"{url}: refused with HTTP {status} "
                                      f"({error.response.body.decode(errors='replace').strip()[:200]})") from None
        asked = {"decoder": options.decoder, "min_frames": options.min_frames, "chunk_frames": options.chunk_frames,
                 "visemes": options.visemes, "weights": weights or None, "script": script}
        self.connection.send(json.dumps({"type": "start", "sample_rate": int(sample_rate), "format": "float32",
                                         "options": {k: v for k, v in asked.items() if v is not None}}))
        self.ready = self._receive()
        if self.ready.get("type") != "ready":
            raise RemoteError(None, f"{url}: the server answered {self.ready.get('type')!r}, not ready")
        self.sample_rate, self.segments, self.cues, self.words = sample_rate, [], [], []
        self.result: dict | None = None

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
        self.connection.send(samples.astype("<f4").tobytes())
        return self._collect(wait=False)

    def finish(self) -> RemoteUpdate:
        """No more audio: the last updates and the server's result (result: the whole stream)."""
        if self.result is not None:
            raise RuntimeError("this stream is already finished")
        self.connection.send(json.dumps({"type": "end"}))
        update = self._collect(wait=True)
        self.connection.close()
        return update

    def _collect(self, wait: bool) -> RemoteUpdate:
        update = RemoteUpdate()
        rows = []
        while self.result is None:
            message = self._receive(timeout=None if wait else 0)
            if message is None:
                break
            if message["type"] == "result":
                self.result = message
            elif message["type"] == "update":
                update.segments += message.get("segments", [])
                update.cues += message.get("cues", [])
                update.words += message.get("words", [])
                update.position = message.get("position", update.position)
                rows += message.get("weights", [])
        if rows:
            update.weights = np.asarray(rows, dtype=np.float64)
        self.segments += update.segments
        self.cues += update.cues
        self.words += update.words
        return update

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
        """Every final segment: the server's result after finish(), else those received so far."""
        return self.result["segments"] if self.result is not None else list(self.segments)

    def cue_dicts(self) -> list[dict]:
        return self.result["cues"] if self.result is not None and "cues" in self.result else list(self.cues)

    def close(self) -> None:
        self.connection.close()
