"""`speechattn transcribe`: audio files -> phone segments, streamed through the ONNX model.

A file is read in blocks (soundfile; PyAV's FFmpeg for what soundfile cannot open: AAC/M4A ...), downmixed,
resampled to 16 kHz with a streaming resampler, pushed through the portable client and the
online segmenter, so memory stays bounded however long the file (only `--plot` keeps the whole
audio and posteriors, for the picture).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from speechattn.audio import (FRAME_SHIFT_MS, FRAMES_PER_SECOND, SAMPLE_RATE, AudioError, DecoderMessages, check_file_rate,
                              not_audio, to_mono_16k)
from speechattn.errors import SpeechattnError
from speechattn.files import permission_problem, refuse_special
from speechattn_export.registry import bundled_names, resolve
from speechattn_export.pipeline import DecodingOptions, PhoneStream
from speechattn_export.segments import Segment, segment_dicts
from speechattn_export.visemes import (RHUBARB, CueRules, VisemeSet, cue_dicts as kit_cue_dicts, limit_cues, make_cues,
                                       rhubarb_shape, rhubarb_shapes)

BLOCK_SECONDS = 5.0  # audio read and pushed per step
CHECKPOINTS_DIR = Path(__file__).parent / "models"  # default.pt: the bundled model's torch checkpoint (--init-from)


log = logging.getLogger(__name__)
PLOT_MAX_SECONDS = 300  # a longer picture is unreadable at 10 ms resolution and costs gigabytes
FILE_PHASES = 2  # a file at its largest chunk: posteriors averaged over two shifts (docs/benchmarks.md, "Files over
# two phases"); a live chunk (--chunk-frames), alignment and the live clients take one


def file_phases(model, chunk_named: bool = False) -> int:
    """The phases a file gets by default (transcribe, the server's /transcribe, speechattn-rhubarb without a dialog):
    FILE_PHASES where the model's encoder step splits so (the bundled ones), 1 where it does not; 1 at a chunk named
    (--chunk-frames, chunk_frames=: a live chunk, read as the live clients read it)."""
    return FILE_PHASES if not chunk_named and FILE_PHASES in model.phase_counts else 1


def resolve_model(name: str | None) -> Path:
    """--model: a path to an ONNX file, or the name of a bundled model (the kit's table, export/models/models.json)."""
    try:
        path = resolve(name)
    except PermissionError:  # Path.exists() of a file in a folder this user cannot enter
        raise SpeechattnError(f"{name}: {permission_problem(name)}") from None
    except FileNotFoundError as error:
        bundled = name is None or str(name) in bundled_names()
        raise SpeechattnError(f"{error}; reinstall speechattn or give --model MODEL.onnx" if bundled else str(error)) \
            from None
    if path.suffix == ".pt":
        raise SpeechattnError(f"{path}: a checkpoint; export it first: speechattn export {path} -o model.onnx")
    refuse_special(path, "model")  # onnxruntime would read /dev/zero forever, or wait on a FIFO for a writer
    if not path.is_dir() and not os.access(path, os.R_OK):
        raise SpeechattnError(f"{path}: {permission_problem(path)}")
    return path


def wav_declared_seconds(path: Path) -> float | None:
    """The duration a RIFF/WAVE header announces for its data chunk (libsndfile reports what is really
    there, so a file cut short reads without complaint); None for other files or a streaming header."""
    import struct

    try:
        with open(path, "rb") as handle:
            head = handle.read(12)
            if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
                return None
            byte_rate = None
            while True:
                chunk = handle.read(8)
                if len(chunk) < 8:
                    return None
                name, size = chunk[:4], struct.unpack("<I", chunk[4:])[0]
                if name == b"fmt ":
                    fmt = handle.read(size + size % 2)
                    byte_rate = struct.unpack("<I", fmt[8:12])[0] if len(fmt) >= 12 else None
                elif name == b"data":
                    return size / byte_rate if byte_rate and size not in (0, 0xFFFFFFFF) else None
                else:
                    handle.seek(size + size % 2, 1)
    except OSError:
        return None


def wav_declared_rate(path: Path) -> int | None:
    """The sample rate a RIFF/WAVE fmt chunk declares; None for other files or no fmt chunk."""
    import struct

    try:
        with open(path, "rb") as handle:
            head = handle.read(12)
            if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
                return None
            for _ in range(64):
                chunk = handle.read(8)
                if len(chunk) < 8:
                    return None
                name, size = chunk[:4], struct.unpack("<I", chunk[4:])[0]
                if name == b"fmt ":
                    fmt = handle.read(min(size, 16))
                    return struct.unpack("<I", fmt[4:8])[0] if len(fmt) >= 8 else None
                handle.seek(size + size % 2, 1)
    except OSError:
        return None
    return None


PIPE_WAIT_SECONDS = 10.0  # a FIFO nobody writes to gets this long before it is reported
MAX_PIPED_BYTES = 8 << 30  # 8 GiB copied from a pipe at most: 74 h of 16 kHz 16-bit mono, 12 h of 48 kHz stereo
PIPED_AUDIO_STARTS = (b"RIFF", b"RIFX", b"RF64", b"BW64", b"fLaC", b"OggS", b"FORM", b".snd", b"caff", b"riff",
                      b"NIST", b"ID3")  # WAV, FLAC, Ogg, AIFF, AU, CAF, W64, NIST, MP3: what soundfile reads
PIPED_FORMATS = "WAV, FLAC, Ogg (Vorbis or Opus), MP3, AIFF, AU, CAF, W64 or NIST"  # what a pipe may carry (help)


def spooled_pipe(path: Path) -> Path | None:
    """A temporary file holding what standard input ("-"), a pipe or a FIFO brings, copied in 1 MiB blocks; None for
    anything else.

    A pipe can be read only once and soundfile cannot read every format from one (a FLAC loses sync, a WAV header
    is read twice), so it is spooled to disk and decoded as a file: memory stays bounded however long the input (a
    10-hour standard input held whole took 1.2 GB).  A device (/dev/zero) is refused; a pipe no program writes to is
    reported after PIPE_WAIT_SECONDS; input that does not start as audio is refused before it is copied, and more
    than MAX_PIPED_BYTES is refused.  The caller removes the file."""
    import os
    import sys
    import tempfile

    from speechattn.files import special_kind, wait_for_data

    if str(path) == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise AudioError("-: standard input is a terminal; pipe audio into it (speechattn transcribe - < a.wav)")
        descriptor, owned = sys.stdin.fileno(), False
    else:
        kind = special_kind(path)
        if kind is None:
            return None
        if kind == "a device":
            raise AudioError(f"{path}: a device, not an audio file")
        descriptor, owned = os.open(path, os.O_RDONLY | os.O_NONBLOCK), True  # a FIFO's open would wait for a writer
    handle, temporary = tempfile.mkstemp(prefix="speechattn-pipe-", suffix=".audio")
    try:
        wait_for_data(descriptor, str(path), PIPE_WAIT_SECONDS, AudioError)
        if owned:
            os.set_blocking(descriptor, True)
        head, size = b"", 0
        while chunk := os.read(descriptor, 1 << 20):
            if len(head) < 12:
                head += chunk[: 12 - len(head)]
                if len(head) >= 12 and not is_audio_start(head):
                    raise AudioError(f"{path}: what arrives does not start as audio (it starts with {head[:4]!r}); "
                                     f"pipe {PIPED_FORMATS}, or give a file")
            size += len(chunk)
            if size > MAX_PIPED_BYTES:
                raise AudioError(f"{path}: more than {MAX_PIPED_BYTES:,} bytes arrived from the pipe; give a file")
            try:
                os.write(handle, chunk)
            except OSError as error:
                raise AudioError(f"{path}: cannot keep what arrives from the pipe in {temporary} after "
                                 f"{size >> 20} MiB ({error.strerror}); give a file") from None
        return Path(temporary)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    finally:
        os.close(handle)
        if owned:
            os.close(descriptor)


def is_audio_start(head: bytes) -> bool:
    """Whether the first 12 bytes of a pipe can begin a file soundfile reads (MP3 frames begin with 11 set bits)."""
    return head.startswith(PIPED_AUDIO_STARTS) or (len(head) >= 2 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0)


class SizedBlocks:
    """An iterator of audio blocks that knows how many seconds the file holds (for a progress bar's total)."""

    def __init__(self, blocks: Iterator[np.ndarray], seconds: float | None) -> None:
        self.blocks, self.seconds = blocks, seconds if seconds and seconds > 0 else None

    def __iter__(self) -> Iterator[np.ndarray]:
        return self.blocks


def _readable_source(path: Path) -> Path | None:
    """The spooled copy of a pipe (standard input, a FIFO), or None for a file that exists and can be read; a clear
    AudioError otherwise."""
    import os

    try:
        source = spooled_pipe(path)  # standard input, a pipe or a FIFO: copied in blocks to a file, then read as one
        if source is None:
            if not path.exists():
                raise AudioError(f"{path}: no such file")
            if path.is_dir():
                raise AudioError(f"{path}: a directory, not an audio file")
            if not os.access(path, os.R_OK):  # said here, as the batch reaches it, so the other files are still done
                raise AudioError(f"{path}: cannot read (permission denied)")
    except PermissionError:  # below a folder this user cannot enter
        raise AudioError(f"{path}: cannot read ({permission_problem(path)})") from None
    except OSError as error:  # a name the file system refuses (too long), a pipe that fails while spooled
        raise AudioError(f"{path}: cannot read ({error.strerror or error})") from None
    return source


def read_blocks(path: Path, block_seconds: float = BLOCK_SECONDS) -> tuple[int, int, Iterator[np.ndarray]]:
    """(native sample rate, channels, iterator of mono 16 kHz float32 blocks)."""
    import soundfile as sf

    source = _readable_source(path)
    decoder = DecoderMessages()  # libmpg123's warnings on a damaged MP3 said in our one line, not among our lines
    try:
        with decoder:
            handle = sf.SoundFile(str(source if source is not None else path))
    except Exception as soundfile_error:  # formats libsndfile lacks (AAC/M4A, WMA, video files): PyAV's FFmpeg
        decoder.close()
        declared = wav_declared_rate(path) if source is None else None
        if declared is not None:
            check_file_rate(path, declared)  # 0 Hz or 4,294,967,295 Hz: named, not FFmpeg's 'Invalid data'
        if source is not None:
            if source.stat().st_size == 0:  # said as an empty file is, not as libsndfile's "Format not recognised"
                raise AudioError(f"{path}: nothing arrived (0 bytes), not audio") from None
            raise AudioError(f"{path}: cannot read audio from a pipe ({soundfile_error}); "
                             f"pipe {PIPED_FORMATS}, or give a file") from None
        if (reason := not_audio(path)) is not None:  # said as it is, not as a format PyAV might decode
            raise AudioError(f"{path}: {reason}") from None
        return ffmpeg_blocks(path, block_seconds, soundfile_error)
    finally:
        if source is not None:
            source.unlink(missing_ok=True)  # the open handle reads on; nothing is left behind

    check_file_rate(path, handle.samplerate)
    announced = wav_declared_seconds(path) if source is None else None
    if announced is not None and announced > handle.frames / handle.samplerate + 0.001:
        log.warning("%s: the header announces %.2f s but the file holds %.2f s (truncated?); transcribing what "
                    "is there", path, announced, handle.frames / handle.samplerate)
    return handle.samplerate, handle.channels, SizedBlocks(_soundfile_blocks(path, handle, decoder, block_seconds),
                                                        handle.frames / handle.samplerate)


def _soundfile_blocks(path: Path, handle, decoder: DecoderMessages, block_seconds: float) -> Iterator[np.ndarray]:
    """An open soundfile handle's blocks, checked for NaN/Inf, downmixed and resampled to mono 16 kHz."""
    import soxr

    resampler = (soxr.ResampleStream(handle.samplerate, SAMPLE_RATE, 1, dtype="float32", quality="HQ")
                 if handle.samplerate != SAMPLE_RATE else None)
    position = 0
    with handle:
        while True:
            try:
                with decoder:
                    block = handle.read(int(block_seconds * handle.samplerate), dtype="float32", always_2d=True)
            except Exception as error:
                decoder.close()
                raise AudioError(f"{path}: cannot read audio after {position / handle.samplerate:.2f} s "
                                 f"({error}); the file is damaged") from None
            if (said := decoder.first_unsaid()) is not None:
                log.warning("%s: the decoder reports a damaged stream (%s); transcribing what it decodes", path,
                            said)
            last = len(block) == 0
            finite = np.isfinite(block).all(axis=1)
            if not finite.all():
                first = (position + int(np.argmin(finite))) / handle.samplerate
                raise AudioError(f"{path}: samples are NaN or infinite, the first at {first:.3f} s ({int((~finite).sum())} "
                                 f"of the {len(block) / handle.samplerate:.3g} s read from {position / handle.samplerate:.2f} "
                                 "s); the file is corrupt")
            mono = to_mono_16k(block, SAMPLE_RATE, str(path))  # the stream resampler below does the rate
            position += len(block)
            if resampler is not None:
                mono = resampler.resample_chunk(mono, last=last).astype(np.float32)
            if len(mono):
                yield mono
            if last:
                decoder.close()
                return


FFMPEG_HINT = ("PyAV decodes it (it carries FFmpeg): pip install av, or pip install '.[formats]' in a clone of "
               "speechattn; or convert it to WAV or FLAC first")


def ffmpeg_blocks(path: Path, block_seconds: float, soundfile_error: Exception) -> tuple[int, int, SizedBlocks]:
    """What soundfile cannot open, decoded by PyAV (FFmpeg) in blocks: the same downmix (the channels' mean) and
    streaming resampler as the soundfile path, so memory stays bounded here too."""
    try:
        import av
    except ImportError:
        raise AudioError(f"{path}: soundfile cannot read this format ({soundfile_error}); {FFMPEG_HINT}") from None
    try:
        container = av.open(str(path))
        stream = next(s for s in container.streams if s.type == "audio")
    except StopIteration:
        container.close()
        raise AudioError(f"{path}: the file holds no audio stream") from None
    except Exception as error:
        raise AudioError(f"{path}: cannot read audio (soundfile: {soundfile_error}; FFmpeg: {error})") from None
    context = stream.codec_context  # None for a codec FFmpeg cannot open (a WAV of 0 bits a sample, an unknown tag)
    if context is None:
        container.close()
        raise AudioError(f"{path}: cannot read audio: soundfile cannot ({soundfile_error}) and FFmpeg has no decoder "
                         "for its codec")
    rate, channels = context.sample_rate, context.channels
    try:
        check_file_rate(path, rate)
    except AudioError:
        container.close()
        raise
    seconds = float(stream.duration * stream.time_base) if stream.duration and stream.time_base else None

    def blocks() -> Iterator[np.ndarray]:
        import soxr

        to_float = av.AudioResampler(format="fltp")  # planar float32 at the file's own rate and layout
        resampler = (soxr.ResampleStream(rate, SAMPLE_RATE, 1, dtype="float32", quality="HQ")
                     if rate != SAMPLE_RATE else None)
        pending: list[np.ndarray] = []
        size, step, position = 0, int(block_seconds * rate), 0

        def emit(last: bool) -> np.ndarray:
            nonlocal pending, size, position
            block = np.concatenate(pending) if pending else np.zeros(0, np.float32)
            pending, size = [], 0
            mono = to_mono_16k(block, SAMPLE_RATE, str(path), start_seconds=position / rate)
            position += len(block)
            return resampler.resample_chunk(mono, last=last).astype(np.float32) if resampler else mono

        with container:
            try:
                for frame in container.decode(stream):
                    for converted in to_float.resample(frame):
                        planes = converted.to_ndarray()  # (channels, samples)
                        pending.append(planes.mean(axis=0, dtype=np.float32))
                        size += planes.shape[1]
                    if size >= step:
                        yield emit(last=False)
            except AudioError:
                raise
            except Exception as error:
                raise AudioError(f"{path}: cannot read audio after {position / rate:.2f} s ({error}); "
                                 "the file is damaged") from None
            tail = emit(last=True)
            if len(tail):
                yield tail

    return rate, channels, SizedBlocks(blocks(), seconds)


@dataclass
class Transcript:
    file: str
    sample_rate: int  # the file's own rate
    channels: int
    duration: float  # seconds
    segments: list[Segment]
    model: str  # the model file's path (the JSON names it by file name and hash)
    chunk_frames: int
    output_delay_frames: int = 0
    phases: int = 1  # the posteriors averaged over this many shifts of the audio (transcribe --phases)
    audio: np.ndarray | None = None  # kept only for plots
    log_probs: np.ndarray | None = None
    phones: tuple = field(default_factory=tuple)
    visemes: VisemeSet = RHUBARB  # the set of --format visemes-json (rhubarb-* formats use RHUBARB)
    weights: np.ndarray | None = None  # (T, S) shape weights of `visemes`, when asked for
    name: str | None = None  # the CTM's file field where the stem is not distinct (inputs sharing a stem); None: it

    def segment_dicts(self) -> list[dict]:
        return segment_dicts(self.segments, self.phones, self.duration, FRAMES_PER_SECOND)


def primed(stream, model, blocks: Iterator[np.ndarray]) -> Iterator[np.ndarray]:
    """A file's blocks, `stream` (a PhoneStream or a Stream) given the file's pre-roll first where the model wants one
    (file_preroll: a model whose streams start empty); the first PREROLL_SEARCH_SECONDS are read ahead to choose it."""
    from speechattn_export.stream_client import PREROLL_SEARCH_SECONDS, file_preroll

    if not model.starts_empty:
        yield from blocks
        return
    blocks = iter(blocks)
    head, samples = [], 0
    for block in blocks:
        head.append(block)
        samples += len(block)
        if samples >= PREROLL_SEARCH_SECONDS * SAMPLE_RATE:
            break
    stream.prime(file_preroll(model, np.clip(np.concatenate(head), -1.0, 1.0) if head else np.zeros(0, np.float32)))
    yield from head
    yield from blocks


def transcribe_file(model, path: Path, options: DecodingOptions = DecodingOptions(), keep: bool = False,
                    progress: bool = False, on_progress: Callable[[float], None] | None = None,
                    block_seconds: float = BLOCK_SECONDS, phases: int = 1) -> Transcript:
    """Stream one file through `model` (a StreamingModel) and the kit's PhoneStream with `options`; with
    options.visemes, also keep each frame's shape weights of that set ((T, S), a few numbers per 10 ms: bounded by
    the file's length, not the model's).  on_progress(fraction of the file done) is called after each block when
    the file's length is known (every `block_seconds` of audio).  `phases` > 1 (`transcribe --phases`): the
    decoder reads each frame's posteriors averaged over that many shifts of the audio (the kit's PhaseStream)."""
    from tqdm import tqdm

    import tempfile

    phone_stream = (model.open(options, phases) if hasattr(model, "open")  # the kit's Model: its bigram loaded once
                    else PhoneStream(model, options, phases=phases))
    rate, channels, blocks = read_blocks(path, block_seconds)
    visemes = phone_stream.visemes
    kept_audio, kept_log_probs = [], []
    weights = tempfile.TemporaryFile() if visemes is not None else None  # (T, S) float64 rows, on disk: 453 MB an
    # hour as lists in memory; on disk 8 S bytes a frame (29 MB an hour for vrm), mapped back (weights_on_disk)
    samples, clipped, peak = 0, 0, 0.0
    total = getattr(blocks, "seconds", None)  # known for files soundfile opens; a pipe decoded whole knows it too
    bar_format = ("{desc}: {n:.0f} of {total:.0f} s of audio |{bar}| [{elapsed} < {remaining}, {rate_fmt}]"
                  if total else "{desc}: {n:.0f} s of audio [{elapsed}, {rate_fmt}]")
    with tqdm(desc=path.name, unit="s", unit_scale=False, disable=not progress, leave=False, total=total,
              bar_format=bar_format) as bar:
        for block in primed(phone_stream, model, blocks):
            samples += len(block)
            block_peak = float(np.abs(block).max()) if len(block) else 0.0
            if block_peak > 1.0:  # float files from audio editors go over full scale; the model takes [-1, 1]
                clipped += int(np.count_nonzero(np.abs(block) > 1.0))
                peak = max(peak, block_peak)
                block = np.clip(block, -1.0, 1.0)
            update = phone_stream.push(block)
            frames = update.frames
            if weights is not None:
                weights.write(np.ascontiguousarray(update.weights, np.float64).tobytes())
            if keep and samples > PLOT_MAX_SECONDS * SAMPLE_RATE:
                keep, kept_audio, kept_log_probs = False, [], []  # too long to draw: stop holding it
            if keep:
                kept_audio.append(block)
                kept_log_probs.append(frames.log_probs)
            bar.update(len(block) / SAMPLE_RATE)
            if on_progress is not None and total:
                on_progress(min(1.0, samples / SAMPLE_RATE / total))
    if samples == 0:
        raise AudioError(f"{path}: the file holds no audio samples")
    if clipped:
        log.warning("%s: float samples reach %.2f, over full scale; %d samples (%.3f %%) were clipped to [-1, 1]",
                    path, peak, clipped, 100 * clipped / samples)
    update = phone_stream.finish()
    if weights is not None:
        weights.write(np.ascontiguousarray(update.weights, np.float64).tobytes())
    if keep:
        kept_log_probs.append(update.frames.log_probs)
    return Transcript(file=str(path), sample_rate=rate, channels=channels, duration=samples / SAMPLE_RATE,
                      segments=phone_stream.segments, model=str(model.path), chunk_frames=phone_stream.chunk_frames,
                      output_delay_frames=model.output_delay_frames, phases=phases,
                      audio=np.concatenate(kept_audio) if keep else None,
                      log_probs=np.concatenate(kept_log_probs) if keep else None, phones=tuple(model.phones),
                      visemes=visemes or RHUBARB,
                      weights=weights_on_disk(weights, len(visemes.shapes)) if weights is not None else None)


def weights_on_disk(handle, shapes: int) -> np.ndarray:
    """The (T, shapes) float64 rows written to `handle` (an unnamed temporary file), mapped read-only: pages come
    from the file as they are read and can be dropped again, so the weights of any length take no lasting memory."""
    handle.flush()
    rows = handle.seek(0, 2) // (8 * shapes)
    if rows == 0:
        handle.close()
        return np.zeros((0, shapes))
    return np.memmap(handle, dtype=np.float64, mode="r", shape=(rows, shapes))


def shown_name(path: str) -> str:
    """A file name for a line of text: a newline or other control character as its escape (\\n), a byte that is not
    UTF-8 (which Python holds as a lone surrogate, and UTF-8 output cannot encode) as \\xNN, so one file stays one
    line and any name can be written."""
    def shown(c: str) -> str:
        if c.isprintable():
            return c
        if 0xDC80 <= ord(c) <= 0xDCFF:  # os.fsdecode's surrogateescape of an undecodable byte
            return f"\\x{ord(c) - 0xDC00:02x}"
        return c.encode("unicode_escape").decode("ascii")

    return "".join(map(shown, path))


def as_text(t: Transcript) -> str:
    phones = [s["phone"] for s in t.segment_dicts() if s["phone"] != "sil"]
    return f"{shown_name(t.file)}: {' '.join(phones)}"


JSON_FORMAT_VERSION = 2  # export/transcript.schema.json; 2: format_version, model as name + sha256, latency


@functools.lru_cache(maxsize=8)
def model_identity(path: str) -> dict:
    """A model file named without the local path: its file name and the SHA-256 of its bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"name": Path(path).name, "sha256": digest.hexdigest()}


def as_json(t: Transcript) -> str:
    return json.dumps({"format_version": JSON_FORMAT_VERSION, "file": t.file, "sample_rate": t.sample_rate,
                       "channels": t.channels, "duration": round(t.duration, 4), "frame_shift_ms": FRAME_SHIFT_MS,
                       "model": model_identity(t.model), "chunk_frames": t.chunk_frames,
                       "output_delay_frames": t.output_delay_frames, "phases": t.phases,
                       "segments": t.segment_dicts()})


def whole_frames(t: Transcript) -> int:
    """The duration in whole 10 ms frames (truncated, as Rhubarb truncates its duration)."""
    return int(t.duration * FRAMES_PER_SECOND + 1e-9)


def cue_dicts(t: Transcript, visemes: VisemeSet, rules: CueRules = CueRules()) -> list[dict]:
    """The mouth cues of the transcript's segments (the kit's CueMaker rules), in seconds; the last ends at the
    duration truncated to 10 ms, as Rhubarb's does."""
    return kit_cue_dicts(make_cues(t.segments, visemes, t.phones, rules), visemes, t.duration, FRAMES_PER_SECOND)


@dataclass(frozen=True)
class RhubarbOptions:
    """Rhubarb's own output settings (its --extendedShapes, --datFrameRate, --datUsePrestonBlair)."""

    extended_shapes: str = "GHX"  # the optional shapes to use, any of G H X ("": A-F only); see visemes.rhubarb_shapes
    dat_frame_rate: float = 24.0  # frames per second of the .dat file's frame numbers
    dat_preston_blair: bool = False  # .dat shape names MBP etc E AI O U FV L rest instead of A-F G H X

    def __post_init__(self) -> None:
        rhubarb_shapes(self.extended_shapes)  # a letter that names no shape: Rhubarb's message

    @property
    def shapes(self) -> frozenset[str]:
        return rhubarb_shapes(self.extended_shapes)


DAT_FRAME_RATES = (24.0, 100.0)  # Rhubarb's limits (exporters/DatExporter.cpp): cues are 10 ms apart
PRESTON_BLAIR = {"A": "MBP", "B": "etc", "C": "E", "D": "AI", "E": "O", "F": "U", "G": "FV", "H": "L", "X": "rest"}


def rhubarb_cue_dicts(t: Transcript, options: RhubarbOptions) -> list[dict]:
    """The cues of Rhubarb's files, with only the shapes `options` allows; none for under 10 ms of audio."""
    cues = limit_cues(make_cues(t.segments, RHUBARB, t.phones), options.shapes)
    return kit_cue_dicts(cues, RHUBARB, t.duration, FRAMES_PER_SECOND)


def dummy_if_empty(cues: list[dict], options: RhubarbOptions) -> list[dict]:
    """Rhubarb's JSON and XML hold at least one cue: for an empty recording, the closed mouth from 0 to 0."""
    return cues or [{"start": 0.0, "end": 0.0, "value": rhubarb_shape(RHUBARB.rest, options.shapes)}]


def as_rhubarb_tsv(t: Transcript, options: RhubarbOptions = RhubarbOptions()) -> str:
    """Rhubarb's TSV: a line per cue (start, tab, shape), then the end of the recording with the closed mouth."""
    lines = [f"{c['start']:.2f}\t{c['value']}" for c in rhubarb_cue_dicts(t, options)]
    lines.append(f"{whole_frames(t) / FRAMES_PER_SECOND:.2f}\t{rhubarb_shape(RHUBARB.rest, options.shapes)}")
    return "\n".join(lines) + "\n"


def as_rhubarb_json(t: Transcript, options: RhubarbOptions = RhubarbOptions()) -> str:
    """Rhubarb's JSON, laid out as Rhubarb writes it (numbers with two decimals, one cue per line)."""
    cues = dummy_if_empty(rhubarb_cue_dicts(t, options), options)
    rows = ",\n".join(f'    {{ "start": {c["start"]:.2f}, "end": {c["end"]:.2f}, "value": "{c["value"]}" }}' for c in cues)
    return ('{\n  "metadata": {\n    "soundFile": ' + json.dumps(t.file) + ',\n    "duration": '
            + f"{whole_frames(t) / FRAMES_PER_SECOND:.2f}" + '\n  },\n  "mouthCues": '
            + f"[\n{rows}\n  ]" + "\n}\n")


def as_rhubarb_xml(t: Transcript, options: RhubarbOptions = RhubarbOptions()) -> str:
    """Rhubarb's XML result document (quotes escaped too, as its writer, boost's property tree, does)."""
    from xml.sax.saxutils import escape

    cues = dummy_if_empty(rhubarb_cue_dicts(t, options), options)
    lines = ['<?xml version="1.0" encoding="utf-8"?>', "<rhubarbResult>", "  <metadata>",
             f"    <soundFile>{escape(shown_name(t.file), {chr(34): '&quot;', chr(39): '&apos;'})}</soundFile>",
             f"    <duration>{whole_frames(t) / FRAMES_PER_SECOND:.2f}</duration>",
             "  </metadata>", "  <mouthCues>"]
    lines += [f'    <mouthCue start="{c["start"]:.2f}" end="{c["end"]:.2f}">{c["value"]}</mouthCue>' for c in cues]
    lines += ["  </mouthCues>", "</rhubarbResult>"]
    return "\n".join(lines) + "\n"


def as_rhubarb_dat(t: Transcript, options: RhubarbOptions = RhubarbOptions()) -> str:
    """Moho's switch data as Rhubarb writes it (exporters/DatExporter.cpp), which Moho and OpenToonz import:
    MohoSwitch1, a line per cue with the frame it starts on (1 + whole frames at dat_frame_rate; a cue starting on
    the frame of the one written before is left out) and its shape, last the recording's end with the closed mouth
    (a frame later where that frame is taken)."""
    low, high = DAT_FRAME_RATES
    if not low <= options.dat_frame_rate <= high:
        raise ValueError(f"Frame rate must be between {low:g} and {high:g} fps.")

    def frame(seconds: float) -> int:  # seconds: whole 10 ms frames / 100, as Rhubarb's; times the rate, truncated
        return 1 + int(options.dat_frame_rate * seconds)

    def name(shape: str) -> str:
        return PRESTON_BLAIR[shape] if options.dat_preston_blair else shape

    lines, last = ["MohoSwitch1"], 0
    for cue in rhubarb_cue_dicts(t, options):
        number = frame(cue["start"])
        if number != last:
            lines.append(f"{number} {name(cue['value'])}")
            last = number
    end = frame(whole_frames(t) / FRAMES_PER_SECOND)
    lines.append(f"{end + 1 if end == last else end} {name(rhubarb_shape(RHUBARB.rest, options.shapes))}")
    return "\n".join(lines) + "\n"


VISEMES_FORMAT_VERSION = 1


def as_visemes_json(t: Transcript) -> str:
    """One object: the set's shapes, a row of weights per 10 ms frame (3 decimals) and the cues."""
    return "".join(visemes_json_pieces(t))


def visemes_json_pieces(t: Transcript, rows_per_piece: int = 1000) -> Iterator[str]:
    """as_visemes_json's text (json.dumps's, character for character) in pieces of `rows_per_piece` weight rows, so
    writing it never holds the whole document: an hour of oculus weights was 453 MB as Python lists."""
    if t.weights is None:
        raise ValueError("the transcript kept no viseme weights (transcribe_file(..., visemes=SET))")
    head = json.dumps({"format_version": VISEMES_FORMAT_VERSION, "file": t.file, "duration": round(t.duration, 4),
                       "model": model_identity(t.model), "visemes": t.visemes.name, "shapes": list(t.visemes.shapes),
                       "frame_shift_ms": FRAME_SHIFT_MS})
    yield head[:-1] + ', "weights": ['
    for start in range(0, len(t.weights), rows_per_piece):
        rows = np.asarray(t.weights[start : start + rows_per_piece], dtype=np.float64).tolist()
        text = ", ".join("[" + ", ".join(repr(round(w, 3)) for w in row) + "]" for row in rows)
        yield (", " if start else "") + text
    yield '], "cues": ' + json.dumps(cue_dicts(t, t.visemes)) + "}"


def ctm_name(path: str, name: str | None = None) -> str:
    """A CTM record is whitespace-separated: the file's stem (or `name`) with spaces, tabs or newlines each replaced
    by _."""
    import re

    return shown_name(re.sub(r"\s", "_", Path(path).stem if name is None else name)) or "_"


def as_ctm(t: Transcript) -> str:
    """NIST CTM: file channel start duration phone confidence, one line per segment (silence included); the file
    field is the file's stem (or the transcript's distinct name) with whitespace replaced by _ (ctm_name)."""
    name = ctm_name(t.file, t.name)
    return "\n".join(f"{name} 1 {s['start']:.2f} {s['end'] - s['start']:.2f} {s['phone']} {s['confidence']:.4f}"
                     for s in t.segment_dicts())


def write_textgrid(t: Transcript, path) -> None:
    from praatio import textgrid

    entries = [(s["start"], s["end"], s["phone"]) for s in t.segment_dicts() if s["end"] > s["start"]]
    if not entries:
        raise AudioError(f"{t.file}: {t.duration * 1000:.1f} ms of audio is shorter than one 10 ms frame's "
                         "interval: nothing to write as a TextGrid")
    grid = textgrid.Textgrid()
    grid.addTier(textgrid.IntervalTier("phones", entries, 0, t.duration))
    grid.save(str(path), format="long_textgrid", includeBlankSpaces=True)


def textgrid_text(t: Transcript) -> str:
    """The Praat long TextGrid as text (praatio writes files only: through a scratch file)."""
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        write_textgrid(t, Path(scratch) / "out.TextGrid")
        return (Path(scratch) / "out.TextGrid").read_text()


def plot_transcript(t: Transcript, path) -> None:
    """Waveform, spectrogram, posteriorgram and segments in one PNG."""
    from speechattn.runtime.plots import plot_posteriors

    plot_posteriors(t.audio, t.log_probs, t.phones, t.segment_dicts(), path,
                    f"{Path(t.file).name}: {t.duration:.2f} s, chunk {t.chunk_frames} frames"
                    f"{f', {t.phases} phases' if t.phases != 1 else ''}, {Path(t.model).name}")
