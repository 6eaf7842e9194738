"""`speechattn align`: audio and its words -> word and phone boundaries, streamed in bounded memory.

A file is read in blocks (transcribe.read_blocks), streamed through the model, and its frame log-posteriors go
to the kit's ScriptAligner (export/align.py) as they come, which commits the path 3 s behind: memory does not
grow with the length.  The words come from the kit's lexicon (CMUdict, its variants, numbers and abbreviations
normalised, a grapheme-to-phoneme model for the rest; a user dictionary on top).  The boundaries are then
moved by the HMM-GMM boundary stage (runtime/hmm.py, `boundaries="hmm"`, the default), each at most 40 ms, where it
measured better on real speech and on the synthetic voices' exact times (docs/benchmarks.md, "HMM-GMM boundaries"); `boundaries="neural"` keeps the neural
aligner's own.
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from speechattn.audio import FRAMES_PER_SECOND, SAMPLE_RATE, AudioError
from speechattn.errors import SpeechattnError
from speechattn.phones import IGNORE, PHONE_TO_INDEX
from speechattn_export.align import AlignOptions, Alignment, PriorSums, ScriptAligner
from speechattn_export.align import align as align_log_probs
from speechattn_export.segments import Segment
from speechattn_export.words import MAX_WORDS, TooManyWords, sentence_starts, shorten

log = logging.getLogger(__name__)
MAX_TEXT_BYTES = 50_000_000  # read at most this much of a text (a pipe or device never makes us wait for more)
# MAX_WORDS (the kit's, 200,000): about 20 hours of speech; the word graph's layout is built whole (about 100 bytes a
# state), so the words are counted before any is pronounced
TEXT_SUFFIXES = (".lab", ".txt")  # a corpus's transcripts, in MFA's layout: beside each audio file, the same stem
ALIGN_FORMAT_VERSION = 1  # export/alignment.schema.json


class TextError(SpeechattnError, ValueError):
    """A text that cannot be aligned, with a message meant for the user."""


class Unalignable(SpeechattnError):
    """A recording whose text does not match its speech (the kit's Alignment.unalignable): reported, not forced."""


def names_a_file(source: str) -> bool:
    """Whether a TEXT argument is a file name rather than the words: it ends in .txt or .lab (any case), or it is one
    word (no space) with a / in it.  Such a name that does not exist is an error, never words to align."""
    source = source.strip()
    return source.lower().endswith(TEXT_SUFFIXES + (".vtt",)) or (
        any(separator in source for separator in {"/", os.sep}) and not any(c.isspace() for c in source))


def read_text(source: str | Path, what: str = "text") -> tuple[str, str]:
    """(the text, its name for messages) of a file, or of the argument itself when no such file exists and it does
    not look like a file name (names_a_file: a string given on the command line).  Bounded: at most MAX_TEXT_BYTES
    are read; not UTF-8 is an error."""
    if not str(source).strip():
        return str(source), "the text given"
    path = Path(str(source))
    try:
        exists = path.exists()
        is_dir = exists and path.is_dir()
    except OSError:  # a name too long for the file system: words, not a file
        exists = is_dir = False
    if is_dir:
        raise TextError(f"{path}: a directory, not a {what}")
    if not exists:
        if names_a_file(str(source)):
            raise TextError(f"{shorten(str(source))}: no such {what} file (a name ending in .txt, .lab or .vtt, or one "
                            "word with a /, is read as a file; give the words themselves in quotes)")
        return str(source), "the text given"
    from speechattn.files import refuse_special

    refuse_special(path, what, TextError)  # a FIFO nobody writes to would hang, a device never end
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_TEXT_BYTES + 1)
    except OSError as error:
        raise TextError(f"{path}: cannot read the {what} ({error.strerror or error})") from None
    if len(data) > MAX_TEXT_BYTES:
        raise TextError(f"{path}: more than {MAX_TEXT_BYTES / 1e6:.0f} MB of {what}; split it")
    try:
        return data.decode("utf-8-sig"), str(path)
    except UnicodeDecodeError as error:
        raise TextError(f"{path}: not UTF-8 text (byte {error.start}: {data[error.start:error.start + 1]!r}); "
                        "save it as UTF-8") from None


WEBVTT = re.compile(r"WEBVTT(?:[ \t][^\n]*)?(?:\r?\n|$)")  # a WebVTT file's first line (after the byte-order mark)
WEBVTT_SKIPPED = re.compile(r"(?:NOTE|STYLE|REGION)(?:[ \t]|$)")  # blocks that hold no words


def webvtt_words(text: str) -> tuple[str, str | None]:
    """A WebVTT file's words, each cue's on a line of its own (a sentence start, as a line of a plain script), its
    cue settings, tags (<v Ana>, <i>, <00:01.500>) and entities gone; and the language its header names in a
    `Language:` line (YouTube's captions, ffmpeg's and most editors' write one), or None."""
    import html

    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    header = next((i for i, line in enumerate(lines) if not line.strip()), len(lines))
    language = None
    for line in lines[1:header]:
        key, _, value = line.partition(":")
        if key.strip().lower() == "language" and value.strip():
            language = value.strip()
    cues, block = [], []
    for line in lines[header:] + [""]:
        if line.strip():
            block.append(line)
            continue
        timing = next((i for i, held in enumerate(block) if "-->" in held), None)
        if block and timing is not None and not WEBVTT_SKIPPED.match(block[0]):
            cue = html.unescape(re.sub(r"<[^>]*>", "", " ".join(block[timing + 1:]))).strip()
            if cue:
                cues.append(cue)
        block = []
    return "\n".join(cues), language


def script_and_language(text: str, name: str, language: str | None = None,
                        dictionary: str | Path | None = None) -> tuple[str, str | None]:
    """(the words to align, their language for load_lexicon) of a script as read: a WebVTT file's cues, in the
    language its header names (espeak_language: English keeps the kit's lexicon) unless --language or --dictionary
    says how its words sound; any other text as it is, in `language`."""
    text = text.removeprefix("\ufeff")  # speechattn-rhubarb reads a dialog as Rhubarb does, its byte-order mark kept
    if not WEBVTT.match(text):
        return text, language
    words, tag = webvtt_words(text)
    if tag is not None and language is None and dictionary is None:
        from speechattn.runtime.languages import espeak_language

        language = espeak_language(tag, name)
        log.info("%s: language %s, from its Language header (%s)", name, language or "English", tag)
    return words, language


def load_lexicon(dictionary: str | Path | None = None, language: str | None = None):
    """The kit's Lexicon with the user's dictionary on top, or a TextError in one line (nothing there, a directory,
    a device or a pipe, too big, not UTF-8, a bad line).  With a `language` (an espeak-ng voice name), the words of
    that language through espeak-ng instead (speechattn/runtime/languages.py)."""
    from speechattn_export.words import Lexicon

    if language is not None:
        from speechattn.runtime.languages import LexiconOfLanguage

        if dictionary is not None:
            raise TextError("--dictionary holds English pronunciations (CMUdict's phones); give it or --language, "
                            "not both")
        return LexiconOfLanguage(language)
    try:
        return Lexicon.load(dictionary)
    except ValueError as error:
        raise TextError(str(error)) from None


def script_words(text: str, name: str, lexicon, progress: bool = False) -> tuple[list, list[int]]:
    """(the words to align, the script positions where a sentence or line starts), or a TextError in one line.  The
    limits come before the work: the kit counts the words (at most MAX_WORDS) and bounds each token's length before
    it pronounces any (a 49 MB text grew past 10 GB when the count came after).  progress: a bar of the text's
    characters pronounced, shown once it has taken 2 s (173,000 words no dictionary has take g2p about 15 minutes)."""
    from tqdm import tqdm

    if not text or text.isspace():  # not text.strip(): a copy of a 50 MB text
        raise TextError(f"{name}: empty; nothing to align")
    try:
        with tqdm(total=len(text), desc=f"pronouncing the words of {name}", unit="char", unit_scale=True, delay=2,
                  disable=not progress, leave=False) as bar:
            words = lexicon.words(text, max_words=MAX_WORDS, on_chars=bar.update)
    except TooManyWords:
        raise TextError(f"{name}: more than {MAX_WORDS:,} words; align takes at most {MAX_WORDS:,} per recording "
                        "(about 20 hours of speech): split the recording and its text") from None
    except ValueError as error:  # a token too long to be a word, a text too long
        raise TextError(f"{name}: {error}") from None
    if not words:
        raise TextError(f"{name}: nothing speakable in it (no word the lexicon can pronounce)")
    return words, sentence_starts(text, words)


@dataclass
class AlignedFile:
    file: str
    sample_rate: int
    channels: int
    duration: float  # seconds
    model: str  # the model file's path
    words: list  # the script's words (kit Word objects)
    alignment: Alignment
    phones: tuple = ()
    recognised: list[Segment] = field(default_factory=list)  # the decoder's segments, kept for --dialog

    def word_dicts(self) -> list[dict]:
        """The aligned words, one entry a written token where the words carry their place in the text (start_char):
        the spoken words a token became ("$5.50": five dollars fifty cents), heard one after the other with no
        speech outside the script between them, as one interval, its index the first's, its gop their
        frame-weighted mean, its confidence the least of theirs (export/js/align.mjs's alignmentDicts with words,
        the same)."""
        out: list[dict] = []
        merged: list[tuple[int, int, float, int]] = []  # each entry's next index, end frame, gop x frames, frames
        for w in self.alignment.words:
            phones = [{"phone": p.phone, "start": _seconds(p.start_frame, self.duration),
                       "end": _seconds(p.end_frame, self.duration), "gop": round(p.gop, 3),
                       "confidence": round(p.confidence, 4)} for p in w.phones]
            frames = w.end_frame - w.start_frame
            token = self._token(w.index)
            if out and token is not None and w.index == merged[-1][0] and token == self._token(out[-1]["index"]) \
                    and not any(a < w.start_frame and b > merged[-1][1] for a, b in self.alignment.unscripted):
                _, _, total, count = merged[-1]
                merged[-1] = (w.index + 1, w.end_frame, total + w.gop * frames, count + frames)
                out[-1].update(end=_seconds(w.end_frame, self.duration),
                               confidence=min(out[-1]["confidence"], round(w.confidence, 4)),
                               gop=round((total + w.gop * frames) / max(count + frames, 1), 3))
                out[-1]["phones"] += phones
                continue
            out.append({"word": w.text, "index": w.index, "start": _seconds(w.start_frame, self.duration),
                        "end": _seconds(w.end_frame, self.duration), "gop": round(w.gop, 3),
                        "confidence": round(w.confidence, 4), "phones": phones})
            merged.append((w.index + 1, w.end_frame, w.gop * frames, frames))
        return out

    def _token(self, index: int) -> int | None:
        """Where the written token of the script's `index`-th spoken word starts in the text (None: not known)."""
        return getattr(self.words[index], "start_char", None)

    def _token_end(self, index: int) -> int:
        """The script position after the last spoken word of `index`'s written token."""
        end, token = index + 1, self._token(index)
        while token is not None and end < len(self.words) and self._token(end) == token:
            end += 1
        return end

    def not_heard_indices(self) -> list[int]:
        """The script positions of the written tokens none of whose spoken words was heard, one a token (the
        first's)."""
        missing, out = set(self.alignment.not_heard), []
        for i in sorted(missing):
            token = self._token(i)
            first_of_token = token is None or i == 0 or self._token(i - 1) != token
            if first_of_token and all(j in missing for j in range(i, self._token_end(i))):
                out.append(i)
        return out

    @property
    def not_heard(self) -> list[str]:
        return [self.words[i].text for i in self.not_heard_indices()]

    def check_alignable(self, min_score: float = AlignOptions.min_score, force: str = "--force",
                        language: str = "--language LANG") -> None:
        """An Unalignable error in one line when the text does not match the speech (`speechattn align` without
        --force; --dialog and follow-along never refuse); `force`: how the caller asks to align it anyway,
        `language`: how it names the words' language (Spanish words read as English do not match)."""
        if self.alignment.unalignable and too_short(len(self.words), self.duration):
            raise Unalignable(f"{self.file}: {self.duration:.2f} s of audio is too short to hold {written(self.words)} "
                              f"words (alignment score {self.alignment.score:.2f}, below {min_score:g}): not aligned; "
                              f"check that it is the whole recording, or give {force} to align it anyway")
        if self.alignment.unalignable:
            raise Unalignable(f"{self.file}: the text does not match the speech (alignment score "
                              f"{self.alignment.score:.2f}, below {min_score:g}): not aligned; check that it is this "
                              f"recording's text and, for words not in English, give {language}; or give {force} to "
                              "align it anyway")


def written(words) -> int:
    """How many written words (tokens) a script's spoken words came from ("$5" is one, spoken as two)."""
    return len({getattr(w, "start_char", i) for i, w in enumerate(words)})


def too_short(words: int, duration: float) -> bool:
    """Whether `duration` seconds of audio are too short to say `words` words (more than ten a second)."""
    return words > 10 * max(duration, 0.1)


def _seconds(frame: int, duration: float) -> float:
    return round(min(frame / FRAMES_PER_SECOND, duration), 3)


def offline_chunk(model) -> int:
    """The chunk a file streams at (align, transcribe, speechattn-rhubarb; not mic or the live clients): the largest
    the model serves, since nobody waits for a file's labels.  The bundled model's 320 ms chunk against its 40 ms
    default: alignment 10 % less CPU, 0.1-1.1 points more frames agreeing with the dev sets' references, the same
    boundaries on the synthetic voices (bench/align.py --chunk-frames); recognition 0.5-1.9 points more frame
    accuracy and 0.9-2.5 less PER on the three dev sets, the mouth level or ahead, at a third of the CPU
    (docs/benchmarks.md, "Files at the largest chunk")."""
    return max(model.allowed_chunk_frames)


SPOOL_BYTES = 64 << 20  # align_file's log posteriors held in memory before they go to a temporary file


BOUNDARIES = ("hmm", "neural")  # align_file's boundary stages: the HMM-GMM's refinement, or the neural aligner's own


def align_file(model, path: Path, words, sentence_starts=None, options: AlignOptions = AlignOptions(),
               decoding=None, progress: bool = False, on_progress=None,
               block_seconds: float | None = None, phases: int = 1, boundaries: str = "hmm") -> AlignedFile:
    """Stream one file through `model` (a StreamingModel) and align it to `words`; with `decoding` (the kit's
    DecodingOptions), also keep the decoder's free recognition of the same frames (what --dialog falls back to
    where the speech departs from the script); on_progress(fraction done) every `block_seconds` of audio
    (default: transcribe's BLOCK_SECONDS).  `phases` > 1: the posteriors aligned are averaged over that many shifts
    of the audio (the kit's PhaseStream; `align --phases`); not with `decoding`.  boundaries: "hmm" (the bundled
    HMM-GMM moves each phone's edges, runtime/hmm.py; the file's samples wait in a spool as the posteriors do) or
    "neural" (the neural aligner's own)."""
    from tqdm import tqdm

    from speechattn.runtime.transcribe import BLOCK_SECONDS, primed, read_blocks

    if boundaries not in BOUNDARIES:
        raise ValueError(f"boundaries must be one of {', '.join(BOUNDARIES)}, not {boundaries!r}")
    stream = model.new_stream(offline_chunk(model), phases=phases)  # a wrong phases: refused before the file is read
    rate, channels, blocks = read_blocks(path, block_seconds or BLOCK_SECONDS)
    segmenter = None
    if decoding is not None:
        from speechattn_export.pipeline import PhoneStream

        phone_stream = PhoneStream(model, decoding)
        stream, segmenter = phone_stream.stream, phone_stream.segmenter
        if phases != 1:
            raise ValueError("phases > 1 aligns a file alone, not with its free recognition (decoding)")
    recognised: list[Segment] = []
    # the log posteriors wait for the recording's prior: float32, in memory up to 64 MiB (70 minutes of the
    # bundled model's 40 phones), beyond that in a temporary file, so memory stays bounded at any length
    spool, counts, P = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES), [], len(model.phones)
    sums = PriorSums(P)
    samples_spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) if boundaries == "hmm" else None

    def keep(log_probs: np.ndarray) -> None:
        piece = np.ascontiguousarray(log_probs, dtype="<f4")
        sums.add(piece)
        spool.write(piece.tobytes())
        counts.append(len(piece))

    samples = 0
    total = getattr(blocks, "seconds", None)
    with tqdm(desc=f"aligning {path.name}", unit="s", disable=not progress, leave=False, total=total,
              bar_format="{desc}: {n:.0f} of {total:.0f} s of audio |{bar}| [{elapsed} < {remaining}]"
              if total else "{desc}: {n:.0f} s of audio [{elapsed}]") as bar:
        for block in primed(stream, model, blocks):
            samples += len(block)
            if samples_spool is not None:  # 16-bit: 115 MB an hour, in memory up to SPOOL_BYTES
                samples_spool.write(np.round(np.clip(block, -1.0, 1.0) * 32767).astype("<i2").tobytes())
            frames = stream.push(np.clip(block, -1.0, 1.0))
            keep(frames.log_probs)
            if segmenter is not None:
                recognised += segmenter.push(frames.log_probs)
            bar.update(len(block) / SAMPLE_RATE)
            if on_progress is not None and total:
                on_progress(min(1.0, samples / SAMPLE_RATE / total))
    if samples == 0:
        raise AudioError(f"{path}: the file holds no audio samples")
    frames = stream.finish()
    keep(frames.log_probs)
    if segmenter is not None:
        recognised += segmenter.push(frames.log_probs) + segmenter.finish()
    aligner = ScriptAligner(words, model.phones, options, sentence_starts, sums.prior())
    alignment = _placed(aligner, spool, counts, samples_spool, samples, model.phones,
                        tqdm(desc=f"placing the words in {path.name}", disable=not progress, leave=False,
                             bar_format="{desc}: {percentage:3.0f} % |{bar}| [{elapsed} < {remaining}]"))
    duration = samples / SAMPLE_RATE
    if too_short(len(words), duration):
        log.warning("%s: %d words for %.2f s of audio: most will be reported as not heard", path, written(words),
                    duration)
    return AlignedFile(str(path), rate, channels, duration, str(model.path), words, alignment,
                       tuple(model.phones), recognised)


def _placed(aligner, spool, counts: list[int], samples_spool, samples: int, phones, bar) -> Alignment:
    """The second half of align_file's work, after the audio: the spooled posteriors (counts rows a push) through
    the aligner, then (with the samples' spool) the HMM stage's boundaries; `bar` (a tqdm) counts both passes."""
    P = len(phones)
    bar.reset(total=(2 if samples_spool is not None else 1) * sum(counts))
    spool.seek(0)
    with spool, bar:
        for count in counts:
            aligner.push(np.frombuffer(spool.read(count * 4 * P), dtype="<f4").reshape(count, P))
            bar.update(count)
        alignment = aligner.finish()
        if samples_spool is not None:
            with samples_spool:
                alignment = hmm_boundaries(alignment, spool_reader(samples_spool, samples, 1, "<i2", 1 / 32767),
                                           spool_reader(spool, sum(counts), P, "<f4"), phones, bar.update)
    return alignment


def spool_reader(spool, rows: int, width: int, dtype: str, scale: float = 1.0):
    """(first row, end row) -> float32 rows of a spooled array, zero beyond its ends; a row of width 1 is a
    scalar."""
    item = np.dtype(dtype).itemsize * width

    def read(first: int, end: int) -> np.ndarray:
        out = np.zeros((end - first, width), dtype=np.float32)
        a, b = max(first, 0), min(end, rows)
        if b > a:
            spool.seek(a * item)
            out[a - first:b - first] = np.frombuffer(spool.read((b - a) * item), dtype=dtype).reshape(-1, width) * scale
        return out[:, 0] if width == 1 else out

    return read


def hmm_boundaries(alignment: Alignment, samples, log_probs, phones, on_frames=None) -> Alignment:
    """The alignment with its boundaries moved by the bundled HMM-GMM (runtime/hmm.py); samples, log_probs and
    on_frames as hmm.refine takes them.  Unalignable or empty alignments are left as they are."""
    from speechattn.runtime.hmm import bundled, refine

    if alignment.unalignable or not alignment.words:
        return alignment
    return refine(bundled(), samples, alignment, log_probs, phones, on_frames)


# --- output formats -----------------------------------------------------------------------------------------

def as_json(a: AlignedFile) -> str:
    from speechattn.runtime.transcribe import model_identity

    unscripted = [{"start": _seconds(s, a.duration), "end": _seconds(e, a.duration)} for s, e in
                  a.alignment.unscripted]
    return json.dumps({"format_version": ALIGN_FORMAT_VERSION, "file": a.file, "sample_rate": a.sample_rate,
                       "channels": a.channels, "duration": round(a.duration, 4), "frame_shift_ms": 10,
                       "model": model_identity(a.model), "words": a.word_dicts(),
                       "not_heard": [{"index": i, "word": a.words[i].text} for i in a.not_heard_indices()],
                       "unscripted": unscripted, "score": round(a.alignment.score, 3),
                       "unalignable": a.alignment.unalignable}, ensure_ascii=False)


def as_ctm(a: AlignedFile) -> str:
    """NIST CTM of the words: file channel start duration word confidence."""
    from speechattn.runtime.transcribe import ctm_name

    name = ctm_name(a.file)
    return "\n".join(f"{name} 1 {w['start']:.2f} {w['end'] - w['start']:.2f} {'_'.join(w['word'].split()) or '_'} "
                     f"{w['confidence']:.4f}" for w in a.word_dicts())


def tiers(a: AlignedFile) -> dict[str, list[tuple[float, float, str]]]:
    """MFA's two tiers: words (speech not in the script as <unk>) and phones (as spn); silence left empty."""
    words, phones = [], []
    for w in a.word_dicts():
        words.append((w["start"], w["end"], w["word"]))
        phones += [(p["start"], p["end"], p["phone"]) for p in w["phones"]]
    for start, end in a.alignment.unscripted:
        words.append((_seconds(start, a.duration), _seconds(end, a.duration), "<unk>"))
        phones.append((_seconds(start, a.duration), _seconds(end, a.duration), "spn"))
    keep = lambda entries: sorted((s, e, label) for s, e, label in entries if e > s)  # noqa: E731
    return {"words": keep(words), "phones": keep(phones)}


def as_textgrid(a: AlignedFile) -> str:
    """Praat's long TextGrid with MFA's tiers `words` and `phones`, and the alignment score in a comment line of the
    header (after `size = 2`): Praat skips a line from "!" (a line without it, Praat 6.1 refuses) and praatio reads
    the header's lines 4 and 5 only, so both read the file as before (tests/test_unalignable.py)."""
    import tempfile

    from praatio import textgrid

    grid = textgrid.Textgrid(minTimestamp=0.0, maxTimestamp=max(round(a.duration, 3), 0.001))
    for name, entries in tiers(a).items():
        grid.addTier(textgrid.IntervalTier(name, entries, 0.0, grid.maxTimestamp))
    with tempfile.TemporaryDirectory() as scratch:
        target = Path(scratch) / "out.TextGrid"
        grid.save(str(target), format="long_textgrid", includeBlankSpaces=True)
        lines = target.read_text().split("\n")
    size = next(i for i, line in enumerate(lines) if line.startswith("size = "))
    lines.insert(size + 1, textgrid_score_line(a.alignment))
    return "\n".join(lines)


def textgrid_score_line(alignment: Alignment) -> str:
    """The TextGrid's comment line holding the alignment score."""
    verdict = "unalignable (written with --force)" if alignment.unalignable else "aligned"
    return f"! alignment score = {alignment.score:.3f} nats per frame: {verdict} (speechattn align)"


def as_text(a: AlignedFile) -> str:
    lines = [f"{w['start']:8.3f} {w['end']:8.3f}  {w['word']}" for w in a.word_dicts()]
    if a.not_heard:
        lines.append(f"not heard: {' '.join(a.not_heard)}")
    return f"{a.file}:\n" + "\n".join(lines)


ALIGN_FORMATS = {"text": (".txt", as_text), "json": (".json", as_json), "textgrid": (".TextGrid", as_textgrid),
                 "ctm": (".ctm", as_ctm)}


def render(name: str, aligned: AlignedFile) -> str:
    text = ALIGN_FORMATS[name][1](aligned)
    return text if text.endswith("\n") else text + "\n"


# --- the script as lip sync (--dialog) ----------------------------------------------------------------------

def dialog_segments(a: AlignedFile) -> list[Segment]:
    """Phone segments tiling the file from the alignment: the aligned phones, silence between words, and where
    the speech departs from the script (stretches not in it) the recognised phones there.  A script that does not
    match the speech at all (an unalignable alignment: the wrong dialog file) is not forced onto it: the recognised
    phones, as without a script."""
    if a.alignment.unalignable:
        return list(a.recognised)
    return script_segments(a.alignment, a.recognised, a.phones)


def dialog_mismatch(a: AlignedFile) -> str | None:
    """What to tell the user when dialog_segments fell back to the recognised phones, else None."""
    if not a.alignment.unalignable:
        return None
    return (f"the dialog text does not match the speech (alignment score {a.alignment.score:.2f}, below "
            f"{AlignOptions().min_score}): the phones recognised from the audio alone instead")


def script_segments(alignment: Alignment, recognised: list[Segment], phones) -> list[Segment]:
    """The segments of dialog_segments from an Alignment, the decoder's segments of the same frames, and the
    model's phones."""
    index = {p: i for i, p in enumerate(phones)}
    total = alignment.frames
    labels = np.full(total, index["sil"], dtype=np.int64)
    confidence = np.ones(total)
    for word in alignment.words:
        for p in word.phones:
            labels[p.start_frame:p.end_frame] = index[p.phone]
            confidence[p.start_frame:p.end_frame] = p.confidence
    for start, end in alignment.unscripted:
        for s in recognised:
            lo, hi = max(start, s.start_frame), min(end, s.end_frame)
            if hi > lo:
                labels[lo:hi] = s.phone
                confidence[lo:hi] = s.confidence
    segments, t = [], 0
    while t < total:
        end = t
        while end < total and labels[end] == labels[t]:
            end += 1
        segments.append(Segment(t, end, int(labels[t]), float(confidence[t:end].mean())))
        t = end
    return segments


def dialog_transcript(model, path: Path, words, sentence_starts, decoding, progress: bool = False, on_progress=None,
                      block_seconds: float | None = None):
    """transcribe --dialog: the file's Transcript whose phones are the script's, aligned (the recognised ones
    where the speech departs from it), so every lip-sync format follows the script: (Transcript, AlignedFile).
    Mouth weights (visemes-json) are the aligned shape's, one per frame."""
    from speechattn.runtime.transcribe import Transcript
    from speechattn_export.visemes import RHUBARB, SETS

    aligned = align_file(model, path, words, sentence_starts, decoding=decoding, progress=progress,
                         on_progress=on_progress, block_seconds=block_seconds)
    segments = dialog_segments(aligned)
    visemes = SETS[decoding.visemes] if decoding.visemes else None
    weights = None
    if visemes is not None:
        labels = np.zeros(aligned.alignment.frames, dtype=np.int64)
        for s in segments:
            labels[s.start_frame:s.end_frame] = s.phone
        weights = visemes.matrix(model.phones)[labels]
    transcript = Transcript(file=str(path), sample_rate=aligned.sample_rate, channels=aligned.channels,
                            duration=aligned.duration, segments=segments, model=str(model.path),
                            chunk_frames=model.check_chunk(decoding.chunk_frames),
                            output_delay_frames=model.output_delay_frames, phones=tuple(model.phones),
                            visemes=visemes or RHUBARB, weights=weights)
    return transcript, aligned


# --- training labels (prepare with data.aligner: speechattn) ---------------------------------------------------

LABEL_OPTIONS = AlignOptions(skip_penalty=1000.0)  # a corpus's transcript is taken as true


class ModelAligner:
    """speechattn's own aligner (the kit's export/align.py, as `speechattn align` runs it) on the bundled default
    model's streamed log-posteriors, the words pronounced by the kit's lexicon (CMUdict with every variant).
    Intervals: the aligned phones; silence between words; speech the aligner put outside the script (its garbage
    loop) is IGNORE.  A corpus's transcript is taken as true: leaving a word out costs LABEL_OPTIONS.skip_penalty
    (with `align`'s default of 20, a third of LJ Speech's clips lost a short "the" or "and"), and a recording where
    a word was still not heard is not aligned (None), as pocketsphinx fails one whose text does not fit."""

    @classmethod
    def dictionary(cls) -> ModelAligner:
        return cls(load_model=False)

    def __init__(self, model: str = "default", load_model: bool = True) -> None:
        from speechattn_export.words import Lexicon

        self.lexicon = Lexicon.load()
        self.model = None
        if load_model:
            from speechattn.runtime.transcribe import resolve_model
            from speechattn_export.stream_client import StreamingModel

            self.model = StreamingModel(resolve_model(model), num_threads=1)

    def in_dictionary(self, word: str) -> bool:
        from speechattn_export.words import fold

        return self.lexicon.known(fold(word))

    def align(self, audio: np.ndarray, pronunciations: list[list[str]]) -> list[tuple[float, float, int]] | None:
        """audio: 16 kHz float32; pronunciations: ARPAbet phones per word (stress marks allowed), one variant."""
        from speechattn_export.words import Word

        words = [Word(" ".join(phones), "", (tuple(p.rstrip("012").upper() for p in phones),), "given", 0, 0)
                 for phones in pronunciations]
        return self._align(audio, words)

    def align_words(self, audio: np.ndarray, words: list[str]) -> list[tuple[float, float, int]] | None:
        """Like `align`, each word with all its pronunciations in the lexicon."""
        from speechattn_export.words import Word

        return self._align(audio, [Word(w, w, self.lexicon.pronunciations(w), "cmudict", 0, 0) for w in words])

    def _align(self, audio: np.ndarray, words) -> list[tuple[float, float, int]] | None:
        stream = self.model.new_stream(offline_chunk(self.model))
        log_probs = [stream.push(np.clip(audio, -1.0, 1.0)).log_probs, stream.finish().log_probs]
        log_probs = np.concatenate([x.reshape(-1, x.shape[-1]) for x in log_probs])
        # without the recording prior: the labels the measured arm was trained on (docs/training.md)
        alignment = align_log_probs(log_probs, words, self.model.phones, LABEL_OPTIONS, prior_scale=0.0)
        if alignment.not_heard or not alignment.words:
            return None
        spans = [(p.start_frame, p.end_frame, PHONE_TO_INDEX[p.phone]) for w in alignment.words for p in w.phones]
        spans += [(a, b, PHONE_TO_INDEX["sil"]) for a, b in alignment.silences]
        spans += [(a, b, IGNORE) for a, b in alignment.unscripted]
        return [(a / FRAMES_PER_SECOND, b / FRAMES_PER_SECOND, index) for a, b, index in sorted(spans) if b > a]
