"""`speechattn mic`: live phone transcription from an input device (PortAudio through sounddevice).

The capture callback only copies each block into a queue, with the time it arrived; the main
thread downmixes, resamples to 16 kHz (a streaming resampler), pushes the audio through the
ONNX model (one shared StreamingModel, one Stream) and the online segmenter, and shows:

  terminal   the confirmed phones, then the provisional ones (frames whose segment is still
             open, dimmed), silence collapsed to " · "; a status line with input level,
             latency p50/p95 and real-time factor.
  otherwise  one JSON line per confirmed segment (silence included, so segments tile the stream).
  --visemes  (lip sync) instead, one JSON line per frame of mouth-shape weights and one per final cue
             (visemes.py), flushed line by line so another program can read them live.
  --vmc      (lip sync) VRM's A I U E O blendshapes to an avatar app over the VMC protocol (vmc.py).

Latency of a frame: from the moment the block holding its last sample reached the callback to
the moment the model's posterior for it is out and its provisional label shown (it includes waiting
for the chunk to fill).  With the bigram decoder a label becomes final a fixed look-ahead later
(10 frames, 100 ms; decoder.py); the hysteresis rule confirms a phone after `min_frames` frames.  Figures are
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

from speechattn.audio import FRAMES_PER_SECOND, HOP_SAMPLES, SAMPLE_RATE, to_mono_16k
from speechattn.errors import SpeechattnError, UsageError
from speechattn_export.align import Follower as KitFollower
from speechattn_export.align import word_event
from speechattn_export.decoder import new_segmenter
from speechattn_export.pipeline import DecodingOptions
from speechattn_export.segments import Segment
from speechattn_export.visemes import SETS, VRM, Cue, CueMaker, VisemeSet, frame_weights

BLOCK_SECONDS = 0.02  # capture block: 20 ms
STALL_SECONDS = 3.0  # no audio for this long while the stream claims to run: the device is gone
STARTUP_SECONDS = 10.0  # the same, before the first block
# where to turn with no microphone: the README's recipe (a PulseAudio null sink whose monitor is the default source)
NO_DEVICE_HINT = ("no microphone here (a server, a container)? a PulseAudio null sink is one: what is played into it "
                  "is what mic hears (speechattn's README, \"No microphone\")")


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
        return f"no input devices; {NO_DEVICE_HINT}"
    lines = [f"{'':1}{'index':>5}  {'channels':>8}  {'rate':>6}  name (host API)"]
    for d in devices:
        lines.append(f"{'*' if d['default'] else ' '}{d['index']:>5}  {d['channels']:>8}  {d['sample_rate']:>6}  "
                     f"{d['name']} ({d['host_api']})")
    return "\n".join(lines) + "\n(* the default input)"


def choose_device(devices: list[dict], wanted: str | None) -> dict:
    if not devices:
        raise SpeechattnError("no input device found (PortAudio sees none; `speechattn mic --list-devices` shows "
                              f"what there is); {NO_DEVICE_HINT}")
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
        inputs = ", ".join(f"{d['index']} {d['name']!r}" for d in devices)
        raise SpeechattnError(f"no input device matches {wanted!r}; the inputs are {inputs} "
                              "(`speechattn mic --list-devices` shows them in full)")
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
    follow: str = ""  # mic --script: words heard and not heard, the delay of a word's final position

    def text(self) -> str:
        latency = ("n/a" if self.latency_p50_ms is None
                   else f"p50 {self.latency_p50_ms:.0f} ms, p95 {self.latency_p95_ms:.0f} ms")
        return (f"{self.seconds:.1f} s of audio, {self.segments} segments ({self.phones} phones), latency {latency}, "
                f"real-time factor {self.real_time_factor:.3f}, input overflows {self.overflows}, "
                f"dropped blocks {self.dropped_blocks}{self.follow}")


class Display:
    """Terminal: one rewritten line; elsewhere: JSON lines, each with its "type" (segment, word, cue, weights), so
    a reader of mic --script's lines (segments and words mixed) tells them apart by one key."""

    def __init__(self, phones: tuple, live: bool, output, visemes: VisemeSet | None = None) -> None:
        self.phones, self.live, self.output, self.visemes = phones, live and visemes is None, output, visemes
        self.confirmed: list[str] = []
        self.follower: Follower | None = None

    def weights(self, frame_indices: np.ndarray, weights: np.ndarray) -> None:
        """Lip sync: a JSON line per frame, {"type": "weights", "time": frame start in s, "weights": {shape: w}}."""
        shapes = self.visemes.shapes
        lines = [json.dumps({"type": "weights", "time": round(int(frame) / FRAMES_PER_SECOND, 3),
                             "weights": {shape: round(float(w), 3) for shape, w in zip(shapes, row)}})
                 for frame, row in zip(frame_indices, weights)]
        if lines:
            print("\n".join(lines), flush=True)

    def cues(self, cues: list[Cue]) -> None:
        """Lip sync: a JSON line per final cue, {"type": "cue", "start": s, "end": s, "value": shape}."""
        for cue in cues:
            print(json.dumps({"type": "cue", "start": round(cue.start_frame / FRAMES_PER_SECOND, 3),
                              "end": round(cue.end_frame / FRAMES_PER_SECOND, 3), "value": cue.shape}), flush=True)

    def segments(self, segments: list[Segment]) -> None:
        for s in segments:
            record = json.dumps({"type": "segment", "start": round(s.start_frame / FRAMES_PER_SECOND, 3),
                                 "end": round(s.end_frame / FRAMES_PER_SECOND, 3), "phone": self.phones[s.phone],
                                 "confidence": round(s.confidence, 4)})
            if self.output is not None:  # flushed line by line: a killed session keeps every line it showed
                self.output.write(record + "\n")
                self.output.flush()
            if not self.live and self.visemes is None:
                print(record, flush=True)
            name = self.phones[s.phone]
            if name == "sil":
                if self.confirmed and self.confirmed[-1] != "·":
                    self.confirmed.append("·")
            else:
                self.confirmed.append(name)
        del self.confirmed[:-200]

    def words(self, words, follower: Follower) -> None:
        """mic --script: a JSON line per word made final, {"type": "word", "index", "word", "start", "end", "gop",
        "not_heard": [positions passed over so far]}; in a terminal the status line shows the text instead."""
        self.follower = follower
        for word in words:
            record = json.dumps(word_event(word, follower.not_heard(), FRAMES_PER_SECOND), ensure_ascii=False)
            if self.output is not None:
                self.output.write(record + "\n")
                self.output.flush()
            if not self.live:
                print(record, flush=True)

    def status(self, provisional: list[str], level_db: float, summary: SessionSummary) -> None:
        if not self.live:
            return
        width = terminal_width()
        follower = getattr(self, "follower", None)
        if follower is not None:  # --script: the text, not the phones
            latency = follower.latencies.percentile(50)
            status = fit_status([f"  [{level_db:5.0f} dB  word delay p50 {'--' if latency is None else f'{latency:.0f}'} ms]",
                                 f"  [{level_db:4.0f} dB]", ""], width)
            sys.stdout.write("\r\033[K" + follower.line(width - len(status)) + status)
            sys.stdout.flush()
            return
        latency = "--" if summary.latency_p50_ms is None else f"{summary.latency_p50_ms:.0f}/{summary.latency_p95_ms:.0f}"
        status = fit_status([f"  [{level_db:5.0f} dB  latency p50/p95 {latency} ms  RTF {summary.real_time_factor:.3f}]",
                             f"  [{level_db:4.0f} dB  {latency} ms]", f"  [{level_db:4.0f} dB]", ""], width)
        text = " ".join(self.confirmed)
        pending = " ".join(p for p in provisional if p != "sil")
        room = width - len(status)
        pending = pending[-max(0, room - 12):] if room > 12 else ""  # the newest phones, and room for confirmed ones
        room -= len(pending) + 1
        shown = text[-room:] if room > 0 else ""
        sys.stdout.write("\r\033[K" + shown + " \033[2m" + pending + "\033[0m" + status)
        sys.stdout.flush()


def terminal_width() -> int:
    """The columns a status line may use: one less than the terminal's (a line that reaches the last column wraps
    on some terminals, and every redraw then leaves a line behind)."""
    import shutil

    return max(20, shutil.get_terminal_size(fallback=(80, 24)).columns - 1)


def fit_status(choices: list[str], width: int) -> str:
    """The longest of `choices` (longest first) that leaves half the line for the phones or words."""
    return next((choice for choice in choices if len(choice) <= width // 2), choices[-1])


class Follower(KitFollower):
    """mic --script: the kit's Follower (the live ScriptAligner: where the reader is, the words heard and passed
    over) with the terminal's line and the delay from a word's end to its final position shown."""

    def __init__(self, text: str, words, sentence_starts, phones, live: bool) -> None:
        super().__init__(words, phones, sentence_starts)
        self.text, self.live = text, live
        self.latencies = LatencyHistogram()  # a word's end in the audio -> its final position shown

    def line(self, width: int) -> str:
        """The text around the reader: final words green, the word being read in reverse video, passed-over
        words struck through and dim."""
        position, inside = self.aligner.position
        skipped = set(self.not_heard())
        lo = max(0, min(position, len(self.words) - 1) - 6)
        pieces, used = [], 0
        for i in range(lo, len(self.words)):
            word = self.words[i].text
            if used + len(word) + 1 > width:
                break
            style = ("\033[7m" if i == position and inside else "\033[32m" if i in self.heard else
                     "\033[2;9m" if i in skipped else "")
            pieces.append(f"{style}{word}\033[0m" if style else word)
            used += len(word) + 1
        return " ".join(pieces)


class Capture:
    """The input device: PortAudio's callback only copies each block into a queue (with its arrival time);
    overflows reported by PortAudio and blocks dropped on a full queue are counted."""

    def __init__(self, device: str | None) -> None:
        import sounddevice as sd

        self.info = choose_device(input_devices(), device)
        self.rate, self.channels = self.info["sample_rate"], min(2, self.info["channels"])
        self.blocks: queue.Queue = queue.Queue(maxsize=int(30 / BLOCK_SECONDS))  # 30 s of backlog before drops
        self.overflows = self.dropped = 0
        try:
            sd.check_input_settings(device=self.info["index"], channels=self.channels, samplerate=self.rate,
                                    dtype="float32")
            self.stream = sd.InputStream(device=self.info["index"], channels=self.channels, samplerate=self.rate,
                                         dtype="float32", blocksize=int(self.rate * BLOCK_SECONDS),
                                         callback=self._callback)
        except (sd.PortAudioError, ValueError) as error:
            raise SpeechattnError(f"input device {self.info['index']} ({self.info['name']}) refuses {self.channels} "
                                  f"channel(s) at {self.rate} Hz: {error}") from None

    def _callback(self, indata, frames, time_info, status) -> None:  # PortAudio's thread: copy, enqueue, nothing else
        if status.input_overflow:
            self.overflows += 1
        try:
            self.blocks.put_nowait((indata.copy(), time.monotonic()))
        except queue.Full:
            self.dropped += 1

    def get(self, timeout: float):
        """(block (frames, channels), arrival time), or None after `timeout` seconds without audio."""
        try:
            return self.blocks.get(timeout=timeout)
        except queue.Empty:
            return None

    def backlog(self):
        """The blocks captured but not yet taken."""
        while True:
            try:
                yield self.blocks.get_nowait()
            except queue.Empty:
                return


class Processor:
    """Captured blocks -> downmix, resampler, model stream, segmenter -> the display; measures latency from a
    frame's last sample arriving to its segment being final, the input level and the compute time."""

    def __init__(self, model, chunk: int, capture: Capture, display: Display, decoder: str, min_frames: int | None,
                 audio_file=None, vmc=None, follower: Follower | None = None) -> None:
        import soxr

        self.model, self.capture, self.display, self.audio_file = model, capture, display, audio_file
        self.resampler = (soxr.ResampleStream(capture.rate, SAMPLE_RATE, 1, dtype="float32")
                          if capture.rate != SAMPLE_RATE else None)
        self.stream, self.segmenter = model.new_stream(chunk), new_segmenter(decoder, model.phones, min_frames)
        self.latencies = LatencyHistogram()
        self.vmc = vmc  # a VmcSender, or None
        self.cue_maker = CueMaker(display.visemes, model.phones) if display.visemes is not None else None
        self.follower = follower
        self.arrivals: list[tuple[int, float]] = []  # arrival times of 16 kHz sample positions (block ends)
        self.samples_in = self.segments_out = self.phones_out = 0
        self.compute_seconds, self.level_db = 0.0, -120.0

    def summary(self) -> SessionSummary:
        seconds = self.samples_in / SAMPLE_RATE
        follow = ""
        if self.follower is not None:
            f = self.follower
            p50, p95 = f.latencies.percentile(50), f.latencies.percentile(95)
            delay = "n/a" if p50 is None else f"p50 {p50:.0f} ms, p95 {p95:.0f} ms"
            follow = (f"; script: {len(f.heard)} of {len(f.words)} words heard, {len(f.not_heard())} passed over, "
                      f"word delay {delay}")
        return SessionSummary(seconds, self.segments_out, self.phones_out, self.latencies.percentile(50),
                              self.latencies.percentile(95), self.compute_seconds / max(seconds, 1e-9),
                              self.capture.overflows, self.capture.dropped, follow)

    def provisional(self) -> list[str]:
        """The open segment's phone and the newest frame's best phone: shown dimmed, not yet final."""
        phones = (self.segmenter.phone, self.segmenter.run_phone)
        return [self.model.phones[p] for p in dict.fromkeys(phones) if p >= 0]

    def feed(self, block: np.ndarray | None, arrived: float, last: bool = False) -> None:
        """One captured block (frames, channels) through resampler, model and segmenter; last: flush all."""
        started = time.perf_counter()
        if block is None:
            block = np.zeros((0, self.capture.channels), np.float32)
        mono = to_mono_16k(block, SAMPLE_RATE, "microphone")
        if self.resampler is not None:
            mono = self.resampler.resample_chunk(mono, last=last).astype(np.float32)
        if self.audio_file is not None:
            self.audio_file.write(mono)
        self.samples_in += len(mono)
        self.arrivals.append((self.samples_in, arrived))
        if len(mono):
            self.level_db = 20 * np.log10(max(float(np.sqrt(np.mean(mono ** 2))), 1e-6))
        self._emit(self.stream.push(mono))
        if last:
            self._emit(self.stream.finish())
            self._confirm(self.segmenter.finish(), last=True)
            if self.follower is not None:
                self._follow(self.follower.finish())
        self.compute_seconds += time.perf_counter() - started

    def _emit(self, frames) -> None:
        if len(frames) == 0:
            return
        ends = (frames.frame_indices + 1) * HOP_SAMPLES  # 16 kHz sample after each frame's last
        positions = np.array([p for p, _ in self.arrivals])
        times = np.array([t for _, t in self.arrivals])
        which = np.minimum(np.searchsorted(positions, ends, side="left"), len(self.arrivals) - 1)
        self.latencies.add((time.monotonic() - times[which]) * 1000)
        self._mouth(frames)
        self._confirm(self.segmenter.push(frames.log_probs))
        if self.follower is not None:
            self._follow(self.follower.push(frames.log_probs))
        # arrival times are kept back to the aligner's lag, whose words end that far behind the newest frame
        keep = ends[-1] - (self.follower.aligner.options.lag_frames + 2) * HOP_SAMPLES if self.follower else ends[-1]
        while len(self.arrivals) > 1 and self.arrivals[1][0] <= keep:
            self.arrivals.pop(0)

    def _follow(self, words) -> None:
        """Words made final (the follower has counted them heard): their delay from the end of the word's audio,
        and the display."""
        follower = self.follower
        for word in words:
            end = word.end_frame * HOP_SAMPLES
            arrived = next((t for p, t in self.arrivals if p >= end), self.arrivals[-1][1] if self.arrivals else None)
            if arrived is not None:
                follower.latencies.add(np.array([(time.monotonic() - arrived) * 1000]))
        self.display.words(words, follower)

    def _mouth(self, frames) -> None:
        """Lip sync at the posteriors' latency: the shape weights of these frames, the newest one to the avatar."""
        if self.vmc is not None:
            self.vmc.send(frame_weights(frames.log_probs[-1:], VRM, self.model.phones)[0])
        if self.display.visemes is not None:
            self.display.weights(frames.frame_indices, frame_weights(frames.log_probs, self.display.visemes,
                                                                     self.model.phones))

    def _confirm(self, done: list[Segment], last: bool = False) -> None:
        self.segments_out += len(done)
        self.phones_out += sum(1 for s in done if self.model.phones[s.phone] != "sil")
        self.display.segments(done)
        if self.cue_maker is not None:
            self.display.cues(self.cue_maker.push(done) + (self.cue_maker.finish() if last else []))


class GrowingWav:
    """A float32 WAV whose header is rewritten after every block, so the file is complete and readable at any moment,
    even after a SIGKILL or a power cut (a WAV's sizes normally go into its header only when it is closed)."""

    def __init__(self, path: Path, sample_rate: int) -> None:
        self.handle = open(path, "wb")
        self.sample_rate, self.data_bytes = sample_rate, 0
        self._write_header()

    def _write_header(self) -> None:
        import struct

        fmt = struct.pack("<HHIIHH", 3, 1, self.sample_rate, self.sample_rate * 4, 4, 32)  # IEEE float, mono
        self.handle.seek(0)
        self.handle.write(b"RIFF" + struct.pack("<I", 4 + 8 + len(fmt) + 8 + self.data_bytes) + b"WAVE"
                          + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", self.data_bytes))
        self.handle.seek(0, 2)

    def write(self, samples: np.ndarray) -> None:
        if not len(samples):
            return
        self.handle.write(np.ascontiguousarray(samples, dtype="<f4").tobytes())
        self.data_bytes += 4 * len(samples)
        self._write_header()
        self.handle.flush()

    def close(self) -> None:
        self.handle.close()


def _open_audio_file(save_audio: Path | None):
    """The file for --save-audio: float samples where the format holds them, so it is exactly what the model heard.
    WAV: a GrowingWav, readable whatever ends the session; FLAC: libsndfile's, which a kill leaves decodable."""
    import soundfile as sf

    if not save_audio:
        return None
    if save_audio.suffix.lower() == ".wav":
        try:
            return GrowingWav(save_audio, SAMPLE_RATE)
        except OSError as error:
            raise SpeechattnError(f"--save-audio {save_audio}: cannot write ({error.strerror})") from None
    kind = sf.default_subtype(save_audio.suffix.lstrip(".").upper()) if save_audio.suffix else None
    if kind is None:
        raise SpeechattnError(f"--save-audio {save_audio}: unknown audio format (use .wav or .flac)")
    subtype = "FLOAT" if sf.check_format(save_audio.suffix.lstrip(".").upper(), "FLOAT") else kind
    return sf.SoundFile(str(save_audio), "w", samplerate=SAMPLE_RATE, channels=1, subtype=subtype)


def mouth_latency_text(model, chunk: int, decoder: str, min_frames: int | None) -> str:
    """The algorithmic mic-to-mouth delays: weights need the chunk and the output delay; a cue is final only after
    the decoder's look-ahead (the bigram decoder's, from the metadata, or the hysteresis rule's min_frames) and
    once the next shape has begun."""
    from speechattn_export.decoder import DecoderConfig
    from speechattn_export.segments import DEFAULT_MIN_FRAMES

    weights_ms = (chunk + model.output_delay_frames) * 10
    lookahead = (int(model.metadata.get("decoder_lookahead_frames", DecoderConfig().lookahead_frames))
                 if decoder == "bigram" else (min_frames or DEFAULT_MIN_FRAMES))
    return (f"mouth latency: weights {weights_ms} ms after the audio, cues from {weights_ms + lookahead * 10} ms "
            "(algorithmic), plus processing (the summary's latency)")


def run(model_path, device: str | None, options: DecodingOptions, output: Path | None,
        save_audio: Path | None, max_seconds: float | None = None, vmc=None, script=None) -> SessionSummary:
    """A live session: capture -> processor -> display until Ctrl-C (or SIGTERM, or `max_seconds` of audio);
    then everything captured is processed and flushed, and the summary returned.  `model_path`: an ONNX file or a
    StreamingModel loaded from one."""
    import sounddevice as sd

    from speechattn_export.stream_client import StreamingModel

    model = model_path if isinstance(model_path, StreamingModel) else StreamingModel(model_path, num_threads=1)
    model_path = Path(model.path)
    try:
        chunk = model.check_chunk(options.chunk_frames)
    except ValueError as error:
        raise UsageError(f"{model_path.name}: {error} (--chunk-frames)") from None
    decoder, min_frames = options.decoder, options.min_frames
    visemes = SETS[options.visemes] if options.visemes else None
    capture = Capture(device)
    live = sys.stdout.isatty()
    try:
        output_file = open(output, "w") if output else None
    except OSError as error:
        raise SpeechattnError(f"--output {output}: cannot write ({error.strerror})") from None
    display = Display(model.phones, live, output_file, visemes)
    follower = Follower(*script, model.phones, live) if script is not None else None
    if follower is not None:
        display.follower = follower
    processor = Processor(model, chunk, capture, display, decoder, min_frames, _open_audio_file(save_audio), vmc,
                          follower)
    stop = threading.Event()
    previous_handler = signal.signal(signal.SIGINT, lambda *_: stop.set())
    for name in ("SIGTERM", "SIGHUP"):  # a closed terminal (SIGHUP) ends the session as Ctrl-C does: outputs complete
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), lambda *_: stop.set())
    info = capture.info
    lip_sync = ""
    if visemes is not None or vmc is not None:
        lip_sync = (f"{visemes.name if visemes else 'VRM'} mouth shapes"
                    + (f", VMC to {vmc.host}:{vmc.port}" if vmc is not None else "")
                    + f"; {mouth_latency_text(model, chunk, decoder, min_frames)}; ")
    try:
        with capture.stream:
            last_audio, announced = time.monotonic(), False
            while not stop.is_set():
                if max_seconds is not None and processor.samples_in >= max_seconds * SAMPLE_RATE:
                    break
                item = capture.get(timeout=0.1)
                if item is None:
                    if time.monotonic() - last_audio > (STALL_SECONDS if announced else STARTUP_SECONDS):
                        raise SpeechattnError(f"input device {info['name']} stopped delivering audio "
                                              "(unplugged or taken away?)") from None
                    continue
                last_audio = time.monotonic()
                if not announced:  # said once audio really flows (a device can take a while to start)
                    announced = True
                    print(f"listening on {info['name']} (device {info['index']}, {capture.rate} Hz, "
                          f"{capture.channels} channel(s)); model {model_path.name}, chunk {chunk * 10} ms, "
                          f"{decoder} decoder; {lip_sync}Ctrl-C to stop", file=sys.stderr, flush=True)
                processor.feed(*item)
                processor.display.status(processor.provisional(), processor.level_db, processor.summary())
    except sd.PortAudioError as error:
        raise SpeechattnError(f"input device {info['name']} failed: {error}") from None
    finally:
        signal.signal(signal.SIGINT, previous_handler)
        try:  # what was captured but not yet processed, the frames still waiting for their chunk, the open segment
            for item in capture.backlog():
                processor.feed(*item)
            if processor.samples_in:
                processor.feed(None, time.monotonic(), last=True)
        finally:
            if output_file is not None:
                output_file.close()
            if processor.audio_file is not None:
                processor.audio_file.close()
            if live:
                sys.stdout.write("\n")
    return processor.summary()
