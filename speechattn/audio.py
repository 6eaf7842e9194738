"""Audio constants and loading.

Every time quantity in the project derives from the numbers here.
Frame i is the label of hop i, samples [HOP_SAMPLES*i, HOP_SAMPLES*(i+1));
its analysis window is the WINDOW_SAMPLES samples that end with that hop,
[HOP_SAMPLES*i - (WINDOW_SAMPLES - HOP_SAMPLES), HOP_SAMPLES*(i+1)), with zeros
before the start of the audio.  One hop in gives one frame out, so a stream
never waits for audio beyond the hop it is labelling.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

from speechattn.errors import SpeechattnError

SAMPLE_RATE = 16000  # Hz
HOP_SAMPLES = 160  # 10 ms
WINDOW_SAMPLES = 400  # 25 ms
TAIL_SAMPLES = WINDOW_SAMPLES - HOP_SAMPLES  # 240: audio a stream carries between calls
FRAME_SHIFT_MS = 1000 * HOP_SAMPLES // SAMPLE_RATE  # 10
FRAMES_PER_SECOND = SAMPLE_RATE // HOP_SAMPLES  # 100
FILE_RATES_HZ = (1000, 768000)  # the sample rates read: a 1 Hz header made 16,000 samples of every one (hours of work)
# what a directory of recordings is searched for (soundfile's formats, then FFmpeg's through PyAV)
AUDIO_SUFFIXES = (".wav", ".flac", ".ogg", ".oga", ".opus", ".mp3", ".aiff", ".aif", ".au", ".w64", ".caf", ".m4a",
                  ".aac", ".wma")


class AudioError(SpeechattnError, ValueError):
    """Audio that cannot be used, with a message meant for the user."""


def check_file_rate(source, rate) -> None:
    """An AudioError naming the file when the rate its header declares is 0 (damaged) or outside FILE_RATES_HZ."""
    low, high = FILE_RATES_HZ
    if not rate or rate <= 0:
        raise AudioError(f"{source}: the file says its sample rate is {rate} Hz; it is damaged")
    if not low <= rate <= high:
        raise AudioError(f"{source}: the file says its sample rate is {rate:,} Hz; speechattn reads {low:,} to "
                         f"{high:,} Hz (a damaged header?)")


def num_frames(num_samples: int) -> int:
    """Frames produced for `num_samples` samples (a final partial hop is zero-padded)."""
    return -(-num_samples // HOP_SAMPLES)


def to_mono_16k(samples: np.ndarray, sample_rate: int, source: str = "audio", start_seconds: float = 0.0) -> np.ndarray:
    """Downmix (frames, channels) or (frames,) audio to mono float32 at 16 kHz.

    Non-finite samples are an error: they mean a corrupt file, and replacing them
    silently would hide it.  The message gives the time of the first one (samples
    start at `start_seconds` of the file).
    """
    if not sample_rate or sample_rate <= 0:
        raise AudioError(f"{source}: the file says its sample rate is {sample_rate} Hz; it is damaged")
    samples = np.asarray(samples)
    if samples.ndim == 2:
        samples = samples.mean(axis=1)
    elif samples.ndim != 1:
        raise AudioError(f"{source}: expected mono or (samples, channels) audio, got shape {samples.shape}")
    if np.issubdtype(samples.dtype, np.integer):
        samples = samples.astype(np.float32) / float(np.iinfo(samples.dtype).max + 1)
    samples = samples.astype(np.float32, copy=False)
    finite = np.isfinite(samples)
    if not finite.all():
        bad = int(np.size(samples) - np.count_nonzero(finite))
        first = start_seconds + int(np.argmin(finite)) / sample_rate
        raise AudioError(f"{source}: {bad} samples are NaN or infinite, the first at {first:.3f} s; the file is corrupt")
    if sample_rate != SAMPLE_RATE:
        import soxr

        samples = soxr.resample(samples, sample_rate, SAMPLE_RATE, quality="HQ").astype(np.float32)
    return np.ascontiguousarray(samples)


class DecoderMessages:
    """What a codec library writes straight to the process's stderr (libmpg123 on a truncated MP3: "Warning: Xing
    stream size off by more than 1% ...") kept out of the terminal while soundfile runs it, for the caller to say
    in its own one line.  A context manager, entered around each call into the decoder; `lines` has the text."""

    def __init__(self) -> None:
        import tempfile

        self.lines: list[str] = []
        self.said = False
        self._capture = tempfile.TemporaryFile()
        self._saved: int | None = None

    def __enter__(self) -> "DecoderMessages":
        try:
            sys.stderr.flush()
            self._saved = os.dup(2)
            os.dup2(self._capture.fileno(), 2)
        except (OSError, ValueError):  # no descriptor 2 (a closed stderr): nothing to keep out
            self._saved = None
        return self

    def __exit__(self, *exc) -> None:
        if self._saved is None:
            return
        os.dup2(self._saved, 2)
        os.close(self._saved)
        self._saved = None
        if self._capture.tell():
            self._capture.seek(0)
            text = self._capture.read(4096).decode("utf-8", "replace")
            self._capture.seek(0)
            self._capture.truncate()
            self.lines += [line.strip() for line in text.splitlines() if line.strip()]

    def first_unsaid(self) -> str | None:
        """The decoder's first line, cut to 120 characters, once per file (None after it has been said)."""
        if self.said or not self.lines:
            return None
        self.said = True
        line = self.lines[0]
        return line if len(line) <= 120 else line[:117] + "..."

    def close(self) -> None:
        self._capture.close()


def load_audio(path: str | Path) -> np.ndarray:
    """Read any file soundfile can read (wav, flac, ogg, mp3 ...) as mono 16 kHz float32."""
    import soundfile as sf

    from speechattn.files import refuse_special

    path = Path(path)
    try:
        if not path.exists():
            raise AudioError(f"{path}: no such file")
        if path.is_dir():
            raise AudioError(f"{path}: a directory, not an audio file")
        refuse_special(path, "audio", AudioError)  # read whole: /dev/zero never ends, a FIFO may never open
    except OSError as error:  # a name the file system refuses (too long)
        raise AudioError(f"{path}: cannot read ({error.strerror or error})") from None
    decoder = DecoderMessages()
    try:
        with decoder:
            samples, sample_rate = sf.read(str(path), dtype="float32", always_2d=True)
    except Exception as error:  # soundfile raises several types for unreadable files
        raise AudioError(f"{path}: cannot read audio ({error})") from None
    finally:
        decoder.close()
    if (said := decoder.first_unsaid()) is not None:
        import logging

        logging.getLogger(__name__).warning("%s: the decoder reports a damaged stream (%s); using what it decodes",
                                            path, said)
    if samples.shape[0] == 0:
        raise AudioError(f"{path}: the file holds no audio samples")
    check_file_rate(path, sample_rate)
    return to_mono_16k(samples, sample_rate, source=str(path))


def speechlike_signal(seconds: float, seed: int = 0, with_classes: bool = False):
    """A deterministic test signal with speech-like structure: voiced stretches (harmonics of a gliding
    f0 under random formant envelopes), noise bursts like fricatives, and pauses.  It exercises every
    part of the frontend and the streaming code.  It is not speech; with `with_classes` it also returns
    a per-sample class (a phone index: sil for pauses, S for noise, IY/EH/AA by first formant) that a
    tiny model can learn in seconds, for tests that need a trained rather than a random model."""
    from speechattn.phones import PHONE_TO_INDEX

    rng = np.random.default_rng(seed)
    total = int(seconds * SAMPLE_RATE)
    out = np.zeros(total, dtype=np.float64)
    classes = np.zeros(total, dtype=np.int64)
    position = 0
    while position < total:
        length = min(int(rng.uniform(0.04, 0.25) * SAMPLE_RATE), total - position)
        t = np.arange(length) / SAMPLE_RATE
        kind = rng.choice(["voiced", "noise", "pause"], p=[0.55, 0.25, 0.2])
        if kind == "voiced":
            f0 = rng.uniform(90, 260) * (1 + rng.uniform(-0.2, 0.2) * t / max(t[-1], 1e-3))
            phase = 2 * np.pi * np.cumsum(f0) / SAMPLE_RATE
            formants = rng.uniform([250, 800, 2000], [900, 2200, 3200])
            segment = np.zeros(length)
            for harmonic in range(1, 30):
                frequency = harmonic * f0.mean()
                if frequency > 7000:
                    break
                gain = sum(np.exp(-(((frequency - f) / 120.0) ** 2)) for f in formants) + 0.02
                segment += gain * np.sin(harmonic * phase) / harmonic**0.5
            segment *= rng.uniform(0.05, 0.3) / max(np.abs(segment).max(), 1e-9)
            vowel = "IY" if formants[0] < 500 else "EH" if formants[0] < 700 else "AA"
            classes[position : position + length] = PHONE_TO_INDEX[vowel]
        elif kind == "noise":
            spectrum = np.fft.rfft(rng.standard_normal(length))
            frequencies = np.fft.rfftfreq(length, 1 / SAMPLE_RATE)
            spectrum *= frequencies > rng.uniform(1500, 4500)
            segment = np.fft.irfft(spectrum, length)
            segment *= rng.uniform(0.02, 0.1) / max(np.abs(segment).max(), 1e-9)
            classes[position : position + length] = PHONE_TO_INDEX["S"]
        else:
            segment = rng.standard_normal(length) * 1e-4
        ramp = np.minimum(1.0, np.minimum(np.arange(length), np.arange(length)[::-1]) / 80.0)
        out[position : position + length] = segment * ramp
        position += length
    if with_classes:
        return out.astype(np.float32), classes
    return out.astype(np.float32)


SHORTEST_AUDIO_BYTES = 26  # below any audio container's header (an Ogg page's is 27, a WAV's 44, FLAC's 42)
AUDIO_MAGIC = (b"RIFF", b"RIFX", b"RF64", b"fLaC", b"OggS", b"ID3", b"FORM", b"caff", b".snd", b"wvpk")


def not_audio(path: Path) -> str | None:
    """Why a file soundfile could not open is not audio at all, where its bytes say so (empty, shorter than any
    audio header, text); None where it may be audio (an audio container's magic, damaged or not) in a format
    soundfile lacks."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return None  # the decoder's own error says it
    if size == 0:
        return "an empty file (0 bytes), not audio"
    if head.startswith(AUDIO_MAGIC) or (len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0):  # MPEG sync
        return None  # audio, damaged or in a format soundfile lacks: the decoders' own words
    if size < SHORTEST_AUDIO_BYTES:
        return f"only {size} bytes, too short for any audio format"
    if b"\0" not in head:
        try:
            text = head.decode("utf-8")
        except UnicodeDecodeError as error:
            text = head[: error.start].decode("utf-8") if error.start >= len(head) - 3 else None  # a cut character
        if text is not None and sum(c.isprintable() or c.isspace() for c in text) >= 0.95 * len(text):
            return "a text file, not audio"
    return None
