"""`speechattn mic`: live phone transcription from an input device (PortAudio through sounddevice).

The capture callback only copies each block into a queue, with the time it arrived; the main
thread downmixes, resamples to 16 kHz (a streaming resampler), pushes the audio through the
ONNX model (one shared StreamingModel, one Stream) and the online segmenter, and shows:

  terminal   the confirmed phones, then the provisional ones (frames whose segment is still
             open, dimmed), silence collapsed to " · "; a status line with input level,
             latency p50/p95 and real-time factor.
  otherwise  one JSON line per confirmed segment (silence included, so segments tile the stream).

Latency of a frame: from the moment the block holding its last sample reached the callback to
the moment the frame's label is shown (it includes waiting for the chunk to fill).  Figures are
kept in a fixed 1 ms histogram, so memory does not grow with the session.
"""

from __future__ import annotations

import json
import queue
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .audio import FRAMES_PER_SECOND, HOP_SAMPLES, SAMPLE_RATE, to_mono_16k
from .errors import SpeechattnError
from .segments import DEFAULT_MIN_FRAMES, Segment, Segmenter

BLOCK_SECONDS = 0.02  # capture block: 20 ms
STALL_SECONDS = 3.0  # no audio for this long while the stream claims to run: the device is gone
STARTUP_SECONDS = 10.0  # the same, before the first block


def input_devices() -> list[dict]:
    import sounddevice as sd

    try:
        devices = sd.query_devices()
    except sd.PortAudioError as error:
        raise SpeechattnError(f"cannot list audio devices ({error})") from None
    default_input = sd.default.device[0] if sd.default.device else -1
    return [{"index": i, "name": d["name"], "channels": d["max_input_channels"],
             "sample_rate": int(d["default_samplerate"]), "host_api": sd.query_hostapis(d["hostapi"])["name"],
             "default": i == default_input}
            for i, d in enumerate(devices) if d["max_input_channels"] > 0]


def format_devices(devices: list[dict]) -> str:
    if not devices:
        return "no input devices"
    lines = [f"{'':1}{'index':>5}  {'channels':>8}  {'rate':>6}  name (host API)"]
    for d in devices:
        lines.append(f"{'*' if d['default'] else ' '}{d['index']:>5}  {d['channels']:>8}  {d['sample_rate']:>6}  "
                     f"{d['name']} ({d['host_api']})")
    return "\n".join(lines) + "\n(* the default input)"


def choose_device(devices: list[dict], wanted: str | None) -> dict:
    if not devices:
        raise SpeechattnError("no input device found (no microphone, or PortAudio sees none); "
                              "`speechattn mic --list-devices` shows what there is")
    if wanted is None:
        chosen = [d for d in devices if d["default"]] or devices[:1]
        return chosen[0]
    if wanted.isdigit():
        matches = [d for d in devices if d["index"] == int(wanted)]
    else:
        matches = [d for d in devices if wanted.lower() in d["name"].lower()]
        exact = [d for d in matches if d["name"].lower() == wanted.lower()]
        matches = exact or matches
    if not matches:
        raise SpeechattnError(f"no input device matches {wanted!r}; inputs:\n{format_devices(devices)}")
    return matches[0]


class LatencyHistogram:
    """Milliseconds in 1 ms bins up to 10 s: percentiles in constant memory."""

    def __init__(self) -> None:
        self.counts = np.zeros(10_001, dtype=np.int64)

    def add(self, milliseconds: np.ndarray) -> None:
        np.add.at(self.counts, np.clip(np.round(milliseconds).astype(np.int64), 0, 10_000), 1)

    def percentile(self, q: float) -> float | None:
        total = self.counts.sum()
        if not total:
            return None
        return float(np.searchsorted(np.cumsum(self.counts), q / 100 * total))


@dataclass
class SessionSummary:
    seconds: float
    segments: int
    phones: int
    latency_p50_ms: float | None
    latency_p95_ms: float | None
    real_time_factor: float
    overflows: int
    dropped_blocks: int

    def text(self) -> str:
        latency = ("n/a" if self.latency_p50_ms is None
                   else f"p50 {self.latency_p50_ms:.0f} ms, p95 {self.latency_p95_ms:.0f} ms")
        return (f"{self.seconds:.1f} s of audio, {self.segments} segments ({self.phones} phones), latency {latency}, "
                f"real-time factor {self.real_time_factor:.3f}, input overflows {self.overflows}, "
                f"dropped blocks {self.dropped_blocks}")


class Display:
    """Terminal: one rewritten line; elsewhere: JSON lines of confirmed segments."""

    def __init__(self, phones: tuple, live: bool, output) -> None:
        self.phones, self.live, self.output = phones, live, output
        self.confirmed: list[str] = []

    def segments(self, segments: list[Segment]) -> None:
        for s in segments:
            record = json.dumps({"start": round(s.start_frame / FRAMES_PER_SECOND, 3),
                                 "end": round(s.end_frame / FRAMES_PER_SECOND, 3), "phone": self.phones[s.phone],
                                 "confidence": round(s.confidence, 4)})
            if self.output is not None:
                self.output.write(record + "\n")
            if not self.live:
                print(record, flush=True)
            name = self.phones[s.phone]
            if name == "sil":
                if self.confirmed and self.confirmed[-1] != "·":
                    self.confirmed.append("·")
            else:
                self.confirmed.append(name)
        del self.confirmed[:-200]

    def status(self, provisional: list[str], level_db: float, summary: SessionSummary) -> None:
        if not self.live:
            return
        latency = "--" if summary.latency_p50_ms is None else f"{summary.latency_p50_ms:.0f}/{summary.latency_p95_ms:.0f}"
        status = f"  [{level_db:5.0f} dB  latency p50/p95 {latency} ms  RTF {summary.real_time_factor:.3f}]"
        width = 110
        text = " ".join(self.confirmed)
        pending = " ".join(p for p in provisional if p != "sil")
        room = max(10, width - len(status) - len(pending) - 1)
        sys.stdout.write("\r\033[K" + text[-room:] + " \033[2m" + pending + "\033[0m" + status)
        sys.stdout.flush()


def run(model_path: Path, device: str | None, chunk_frames: int | None, output: Path | None,
        save_audio: Path | None, min_frames: int = DEFAULT_MIN_FRAMES, max_seconds: float | None = None) -> SessionSummary:
    import sounddevice as sd
    import soundfile as sf
    import soxr

    from speechattn_export.stream_client import StreamingModel

    info = choose_device(input_devices(), device)
    model = StreamingModel(model_path, num_threads=1)
    chunk = chunk_frames or model.default_chunk_frames
    if chunk not in model.allowed_chunk_frames:
        raise SpeechattnError(f"--chunk-frames {chunk}: {model_path} serves {list(model.allowed_chunk_frames)}")
    rate, channels = info["sample_rate"], min(2, info["channels"])
    blocks: queue.Queue = queue.Queue(maxsize=int(30 / BLOCK_SECONDS))  # 30 s of backlog before blocks drop
    counters = {"overflows": 0, "dropped": 0}

    def callback(indata, frames, time_info, status) -> None:  # PortAudio's thread: copy and enqueue, nothing else
        if status.input_overflow:
            counters["overflows"] += 1
        try:
            blocks.put_nowait((indata.copy(), time.monotonic()))
        except queue.Full:
            counters["dropped"] += 1

    try:
        sd.check_input_settings(device=info["index"], channels=channels, samplerate=rate, dtype="float32")
        capture = sd.InputStream(device=info["index"], channels=channels, samplerate=rate, dtype="float32",
                                 blocksize=int(rate * BLOCK_SECONDS), callback=callback)
    except (sd.PortAudioError, ValueError) as error:
        raise SpeechattnError(f"input device {info['index']} ({info['name']}) refuses {channels} channel(s) at "
                              f"{rate} Hz: {error}") from None

    live = sys.stdout.isatty()
    output_file = open(output, "w") if output else None
    audio_file = None
    if save_audio:  # float samples where the format holds them, so the file is exactly what the model heard
        kind = sf.default_subtype(save_audio.suffix.lstrip(".").upper()) if save_audio.suffix else None
        if kind is None:
            raise SpeechattnError(f"--save-audio {save_audio}: unknown audio format (use .wav or .flac)")
        subtype = "FLOAT" if sf.check_format(save_audio.suffix.lstrip(".").upper(), "FLOAT") else kind
        audio_file = sf.SoundFile(str(save_audio), "w", samplerate=SAMPLE_RATE, channels=1, subtype=subtype)
    display = Display(model.phones, live, output_file)
    resampler = soxr.ResampleStream(rate, SAMPLE_RATE, 1, dtype="float32") if rate != SAMPLE_RATE else None
    stream, segmenter = model.new_stream(chunk), Segmenter(min_frames)
    latencies = LatencyHistogram()
    # arrival times of 16 kHz sample positions (block ends), to date each frame's last sample
    arrivals: list[tuple[int, float]] = []
    samples_in = segments_out = phones_out = 0
    compute_seconds = 0.0
    level_db = -120.0
    stop = threading.Event()
    previous_handler = signal.signal(signal.SIGINT, lambda *_: stop.set())
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, lambda *_: stop.set())

    def summary() -> SessionSummary:
        seconds = samples_in / SAMPLE_RATE
        return SessionSummary(seconds, segments_out, phones_out, latencies.percentile(50), latencies.percentile(95),
                              compute_seconds / max(seconds, 1e-9), counters["overflows"], counters["dropped"])

    def emit(frames) -> None:
        if len(frames) == 0:
            return
        ends = (frames.frame_indices + 1) * HOP_SAMPLES  # 16 kHz sample after each frame's last
        positions = np.array([p for p, _ in arrivals])
        times = np.array([t for _, t in arrivals])
        which = np.minimum(np.searchsorted(positions, ends, side="left"), len(arrivals) - 1)
        latencies.add((time.monotonic() - times[which]) * 1000)
        while len(arrivals) > 1 and arrivals[1][0] <= ends[-1]:
            arrivals.pop(0)
        confirm(segmenter.push(frames.log_probs))

    def confirm(done: list[Segment]) -> None:
        nonlocal segments_out, phones_out
        segments_out += len(done)
        phones_out += sum(1 for s in done if model.phones[s.phone] != "sil")
        display.segments(done)

    def feed(block: np.ndarray | None, arrived: float, last: bool = False) -> None:
        """One captured block (frames, channels) through resampler, model and segmenter; last: flush all."""
        nonlocal samples_in, compute_seconds, level_db
        started = time.perf_counter()
        mono = to_mono_16k(block if block is not None else np.zeros((0, channels), np.float32), SAMPLE_RATE,
                           "microphone")
        if resampler is not None:
            mono = resampler.resample_chunk(mono, last=last).astype(np.float32)
        if audio_file is not None:
            audio_file.write(mono)
        samples_in += len(mono)
        arrivals.append((samples_in, arrived))
        if len(mono):
            level_db = 20 * np.log10(max(float(np.sqrt(np.mean(mono ** 2))), 1e-6))
        emit(stream.push(mono))
        if last:
            emit(stream.finish())
            confirm(segmenter.finish())
        compute_seconds += time.perf_counter() - started

    try:
        with capture:
            last_audio, announced = time.monotonic(), False
            while not stop.is_set():
                if max_seconds is not None and samples_in >= max_seconds * SAMPLE_RATE:
                    break
                try:
                    block, arrived = blocks.get(timeout=0.1)
                except queue.Empty:
                    if time.monotonic() - last_audio > (STALL_SECONDS if announced else STARTUP_SECONDS):
                        raise SpeechattnError(f"input device {info['name']} stopped delivering audio "
                                              "(unplugged or taken away?)") from None
                    continue
                last_audio = time.monotonic()
                if not announced:  # said once audio really flows (a device can take a while to start)
                    announced = True
                    print(f"listening on {info['name']} (device {info['index']}, {rate} Hz, {channels} channel(s)); "
                          f"model {model_path.name}, chunk {chunk * 10} ms; Ctrl-C to stop", file=sys.stderr, flush=True)
                feed(block, arrived)
                if live:  # provisional: the open segment's phone and a run that may yet become a phone
                    provisional = [model.phones[p] for p in dict.fromkeys((segmenter.phone, segmenter.run_phone)) if p >= 0]
                    display.status(provisional, level_db, summary())
    except sd.PortAudioError as error:
        raise SpeechattnError(f"input device {info['name']} failed: {error}") from None
    finally:
        signal.signal(signal.SIGINT, previous_handler)
        try:  # what was captured but not yet processed, the frames still waiting for their chunk, the open segment
            while True:
                try:
                    feed(*blocks.get_nowait())
                except queue.Empty:
                    break
            if samples_in:
                feed(None, time.monotonic(), last=True)
        finally:
            if output_file is not None:
                output_file.close()
            if audio_file is not None:
                audio_file.close()
            if live:
                sys.stdout.write("\n")
    return summary()
