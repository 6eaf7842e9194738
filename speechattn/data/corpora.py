"""Readers for phone-aligned corpora the user owns, producing lhotse manifests.

Every reader returns (RecordingSet, SupervisionSet): one recording and one supervision per
utterance, the supervision carrying the phone alignment in `alignment["phone"]` with symbols
already mapped into our 40 phones (or "<ignore>" for noise labels), so that a symbol we cannot
map stops the preparation with the file and symbol named, not training later.

  TIMIT         DIR/{TRAIN,TEST}/DR*/SPEAKER/*.WAV (NIST SPHERE) + .PHN (sample-exact)
  TextGrid      audio files + a TextGrid with a phone tier each (Montreal Forced Aligner output)
  HTK .lab      audio files + .lab files ("start end label", times in 100 ns units)
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Callable, Iterable

from speechattn.audio import AUDIO_SUFFIXES as CORE_AUDIO_SUFFIXES
from speechattn.audio import SAMPLE_RATE
from speechattn.errors import SpeechattnError
from speechattn.files import listed_below
from speechattn.phones import IGNORE, PHONES, from_arpabet, from_festival, from_timit

log = logging.getLogger(__name__)
_ALIGNER = None  # per worker process: see _align_item

IGNORED_SYMBOL = "<ignore>"
# Every suffix `transcribe` and `align` read (a textgrid corpus of .opus files became 0 utterances), and NIST SPHERE.
AUDIO_SUFFIXES = CORE_AUDIO_SUFFIXES + (".sph",)
SYMBOL_MAPPINGS: dict[str, Callable[[str, str], int]] = {
    "arpabet": from_arpabet,
    "timit": from_timit,
    "festival": from_festival,
}


class CorpusError(SpeechattnError):
    """A corpus that cannot be read as asked, with the file named."""


def phone_symbol(index: int) -> str:
    return IGNORED_SYMBOL if index == IGNORE else PHONES[index]


def phone_index(symbol: str) -> int:
    """Inverse of phone_symbol, for alignments stored in our manifests."""
    return IGNORE if symbol == IGNORED_SYMBOL else PHONES.index(symbol)


def _supervision(recording, intervals: list[tuple[float, float, int]], speaker: str, text: str | None = None,
                 custom: dict | None = None):
    from lhotse import SupervisionSegment
    from lhotse.supervision import AlignmentItem

    items = [AlignmentItem(symbol=phone_symbol(p), start=round(s, 6), duration=round(e - s, 6))
             for s, e, p in sorted(intervals) if e > s]
    return SupervisionSegment(id=recording.id, recording_id=recording.id, start=0.0, duration=recording.duration,
                              channel=0, speaker=speaker, text=text, alignment={"phone": items}, custom=custom)


def _recording(path: Path, recording_id: str):
    from lhotse import Recording

    try:
        recording = Recording.from_file(path, recording_id=recording_id)
    except Exception as error:  # lhotse/soundfile raise many types for unreadable audio
        raise CorpusError(f"{path}: {unreadable(path, error)}") from None
    if recording.num_samples == 0:
        raise CorpusError(f"{path}: the file holds no audio samples")
    return recording


def unreadable(path: Path, error: Exception) -> str:
    """Why audio could not be read, in one line: what the file is not (empty, text: transcribe's words), else the
    first decoder's reason from lhotse's message, which lists each backend's on a line after "... Details:"."""
    from speechattn.audio import not_audio

    if (reason := not_audio(Path(path))) is not None:
        return reason
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    first = next((line for line in lines if line.startswith("Exception #0")), None)
    said = first.rsplit(">: ", 1)[-1] if first else (lines[0] if lines else type(error).__name__)
    return f"cannot read audio ({said[:200]})"


def _manifests(recordings: list, supervisions: list, root: Path):
    from lhotse import RecordingSet, SupervisionSet

    if not recordings:
        raise CorpusError(f"{root}: found no aligned utterances")
    return RecordingSet.from_recordings(recordings), SupervisionSet.from_segments(supervisions)


def read_timit(root: str | Path):
    """TIMIT as distributed (any letter case): SPEAKER directory = speaker, phones from the .PHN files.

    Each supervision's custom["corpus_split"] is "train" or "test" from TIMIT's own TRAIN/TEST directories."""
    root = Path(root)
    recordings, supervisions = [], []
    for wav in sorted(p for p in listed_below(root) if p.suffix.lower() == ".wav"):
        phn = next((wav.with_suffix(s) for s in (".PHN", ".phn") if wav.with_suffix(s).exists()), None)
        if phn is None:
            continue
        speaker = wav.parent.name.upper()
        recording = _recording(wav, f"{wav.parent.parent.parent.name}_{speaker}_{wav.stem}".lower())
        intervals = []
        for number, line in enumerate(phn.read_text().splitlines(), 1):
            if not line.strip():
                continue
            parts = line.split()
            if len(parts) != 3:
                raise CorpusError(f"{phn}:{number}: expected 'start end phone', got {line!r}")
            start, end = int(parts[0]) / SAMPLE_RATE, int(parts[1]) / SAMPLE_RATE
            intervals.append((start, end, from_timit(parts[2], source=f"{phn}:{number}")))
        text_file = wav.with_suffix(".TXT") if wav.with_suffix(".TXT").exists() else wav.with_suffix(".txt")
        text = " ".join(text_file.read_text().split()[2:]) if text_file.exists() else None
        parts = {part.lower() for part in wav.relative_to(root).parts}
        split = "test" if "test" in parts else "train"
        recordings.append(recording)
        supervisions.append(_supervision(recording, intervals, speaker, text, custom={"corpus_split": split}))
    return _manifests(recordings, supervisions, root)


def _audio_files(root: Path) -> Iterable[Path]:
    return sorted(p for p in listed_below(root) if p.suffix.lower() in AUDIO_SUFFIXES)


def _speaker_of(audio: Path, root: Path) -> str:
    relative = audio.relative_to(root)
    return relative.parts[0] if len(relative.parts) > 1 else audio.stem.split("_")[0].split("-")[0]


def read_textgrid_corpus(root: str | Path, textgrid_root: str | Path | None = None, tier: str = "phones",
                         symbols: str = "arpabet"):
    """Audio under `root`, TextGrids (same relative path, .TextGrid) under `textgrid_root` (default: `root`).

    The speaker is the first directory below `root` (MFA's layout), else the file name up to '_' or '-'.
    """
    from praatio import textgrid

    root = Path(root)
    textgrid_root = Path(textgrid_root) if textgrid_root else root
    mapping = SYMBOL_MAPPINGS[symbols]
    recordings, supervisions = [], []
    for audio in _audio_files(root):
        grid_path = (textgrid_root / audio.relative_to(root)).with_suffix(".TextGrid")
        if not grid_path.exists():
            continue
        try:
            grid = textgrid.openTextgrid(str(grid_path), includeEmptyIntervals=True)
        except Exception as error:
            raise CorpusError(f"{grid_path}: cannot read TextGrid ({error})") from None
        if tier not in grid.tierNames:
            raise CorpusError(f"{grid_path}: no tier named {tier!r} (tiers: {', '.join(grid.tierNames)})")
        intervals = [(entry.start, entry.end, mapping(entry.label, f"{grid_path} tier {tier!r}"))
                     for entry in grid.getTier(tier).entries]
        words = None
        if "words" in grid.tierNames:
            words = " ".join(e.label for e in grid.getTier("words").entries if e.label.strip()) or None
        recording = _recording(audio, str(audio.relative_to(root).with_suffix("")).replace("/", "_"))
        recordings.append(recording)
        supervisions.append(_supervision(recording, intervals, _speaker_of(audio, root), words))
    return _manifests(recordings, supervisions, root)


HTK_TIME_UNITS_PER_SECOND = 10_000_000  # HTK label times are in 100 ns units


def read_htk_lab(root: str | Path, symbols: str = "arpabet"):
    """Audio files with a .lab beside each: lines 'start end label [score]', times in 100 ns."""
    root = Path(root)
    mapping = SYMBOL_MAPPINGS[symbols]
    recordings, supervisions = [], []
    for audio in _audio_files(root):
        lab = audio.with_suffix(".lab")
        if not lab.exists():
            continue
        intervals = []
        for number, line in enumerate(lab.read_text().splitlines(), 1):
            parts = line.split()
            if not parts or parts[0] == ".":  # "." ends an HTK master label file entry
                continue
            if len(parts) < 3:
                raise CorpusError(f"{lab}:{number}: expected 'start end label', got {line!r}")
            try:
                start, end = int(parts[0]) / HTK_TIME_UNITS_PER_SECOND, int(parts[1]) / HTK_TIME_UNITS_PER_SECOND
            except ValueError:
                raise CorpusError(f"{lab}:{number}: times must be integers (100 ns units), got {line!r}") from None
            intervals.append((start, end, mapping(parts[2], f"{lab}:{number}")))
        recording = _recording(audio, str(audio.relative_to(root).with_suffix("")).replace("/", "_"))
        recordings.append(recording)
        supervisions.append(_supervision(recording, intervals, _speaker_of(audio, root)))
    return _manifests(recordings, supervisions, root)


def supervision_intervals(supervision) -> list[tuple[float, float, int]]:
    """(start s, end s, phone index) of a supervision's phone alignment, times relative to the supervision."""
    return [(item.start - supervision.start, item.end - supervision.start, phone_index(item.symbol))
            for item in supervision.alignment["phone"]]


def supervision_frame_labels(supervision, num_frames: int):
    """Frame labels (see labels.py) of a supervision's phone alignment, times relative to the supervision."""
    from speechattn.data.labels import frame_labels

    return frame_labels(supervision_intervals(supervision), num_frames)


def _read_keyed(path: Path) -> dict[str, str]:
    """Kaldi-style 'key value...' lines -> {key: value}."""
    entries = {}
    for line in path.read_text().splitlines():
        key, _, value = line.strip().partition(" ") if "\t" not in line else line.strip().partition("\t")
        if key:
            entries[key] = value.strip()
    return entries


def _start_aligner(name: str) -> None:
    """Worker start: the aligner that draws the labels (speechattn.data.align.ALIGNERS)."""
    from speechattn.data.align import ALIGNERS

    global _ALIGNER
    _ALIGNER = ALIGNERS[name]()


def _align_item(item):
    """Worker: (id, audio path, pronunciations or None, words or None) -> (id, intervals or None)."""
    from speechattn.audio import load_audio

    utterance, audio_path, pronunciations, words = item
    audio = load_audio(audio_path)
    if pronunciations is not None:
        return utterance, _ALIGNER.align(audio, pronunciations)
    return utterance, _ALIGNER.align_words(audio, words)


def _aligned(items: list[tuple], cache: Path | None, workers: int, progress: bool,
             aligner: str = "pocketsphinx") -> dict[str, list | None]:
    """Force-align items (see _align_item) with `aligner` over `workers` processes; alignments already in the
    `cache` file (JSON lines) are reused, new ones appended."""
    import json
    import multiprocessing

    from tqdm import tqdm

    done: dict[str, list | None] = {}
    if cache and cache.exists():
        for line in cache.read_text().splitlines():
            record = json.loads(line)
            done[record["id"]] = record["intervals"]
    todo = [item for item in items if item[0] not in done]
    if todo:
        if cache:
            cache.parent.mkdir(parents=True, exist_ok=True)
        context = multiprocessing.get_context("spawn")
        with context.Pool(max(1, workers), _start_aligner, (aligner,)) as pool, \
                (open(cache, "a") if cache else open("/dev/null", "w")) as log:
            results = pool.imap_unordered(_align_item, todo, chunksize=8)
            for utterance, intervals in tqdm(results, total=len(todo), desc="aligning", unit="utt",
                                             disable=not progress):
                done[utterance] = intervals
                log.write(json.dumps({"id": utterance, "intervals": intervals}) + "\n")
    return done


def _aligned_manifests(items: list[tuple], done: dict, speakers: dict[str, str], texts: dict[str, str],
                       root: Path, labels: str):
    recordings, supervisions, failed = [], [], []
    for utterance, audio_path, *_ in items:
        intervals = done.get(utterance)
        if not intervals:
            failed.append(utterance)
            continue
        recording = _recording(Path(audio_path), utterance)
        recordings.append(recording)
        supervisions.append(_supervision(recording, [tuple(i) for i in intervals], speakers.get(utterance, "?"),
                                         texts[utterance], custom={"labels": labels}))
    if failed:
        log.warning("%d of %d utterances did not align and are left out: %s%s", len(failed), len(items),
                    ", ".join(failed[:10]), " ..." if len(failed) > 10 else "")
    return _manifests(recordings, supervisions, root)


def read_speechocean762(root: str | Path, cache: Path | None = None, workers: int = 2, progress: bool = True,
                        aligner: str = "pocketsphinx"):
    """speechocean762 (Kaldi-style files: text, utt2spk, text-phone, lexicon.txt; audio/<utt>.wav|.opus),
    force-aligned to phones with `aligner` (speechattn.data.align.ALIGNERS: pocketsphinx or speechattn).  Each
    word's pronunciation is its canonical phones from text-phone (else the lexicon's first).  Alignments are
    cached in `cache` (JSON lines) so a rerun aligns nothing twice; utterances that do not align are counted
    and left out."""
    root = Path(root)
    for name in ("text", "utt2spk"):
        if not (root / name).exists():
            raise CorpusError(f"{root}: no '{name}' file; is this a speechocean762 directory?")
    texts, speakers = _read_keyed(root / "text"), _read_keyed(root / "utt2spk")
    canonical: dict[str, dict[int, list[str]]] = {}
    if (root / "text-phone").exists():
        for key, phones in _read_keyed(root / "text-phone").items():
            utterance, _, position = key.rpartition(".")
            canonical.setdefault(utterance, {})[int(position)] = [p.split("_")[0] for p in phones.split()]
    lexicon: dict[str, list[str]] = {}
    if (root / "lexicon.txt").exists():
        for line in (root / "lexicon.txt").read_text().splitlines():
            word, *phones = line.split()
            lexicon.setdefault(word, phones)
    audio_files = {p.stem: p for p in listed_below(root / "audio") if p.suffix.lower() in AUDIO_SUFFIXES}

    items = []
    for utterance, text in sorted(texts.items()):
        if utterance not in audio_files:
            raise CorpusError(f"{root}: no audio for utterance {utterance}")
        words = text.split()
        pronunciations = []
        for position, word in enumerate(words):
            phones = canonical.get(utterance, {}).get(position) or lexicon.get(word)
            if not phones:
                raise CorpusError(f"{root}: no pronunciation for {word!r} in utterance {utterance}")
            for phone in phones:
                from_arpabet(phone, f"{root}/text-phone {utterance}.{position}")
            pronunciations.append(phones)
        items.append((utterance, str(audio_files[utterance]), pronunciations, None))

    done = _aligned(items, cache, workers, progress, aligner)
    return _aligned_manifests(items, done, speakers, texts, root, f"{aligner} forced alignment")


ASTERISK_SOUNDS = "/usr/share/asterisk/sounds/en_US_f_Allison"
ASTERISK_TRANSCRIPTS = "/usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz"


def read_asterisk_prompts(root: str | Path = ASTERISK_SOUNDS, transcripts: str | Path = ASTERISK_TRANSCRIPTS,
                          cache: Path | None = None, workers: int = 2, progress: bool = True,
                          aligner: str = "pocketsphinx"):
    """Debian's asterisk-core-sounds-en prompts (real recorded speech, one speaker, 8 kHz, upsampled on
    reading), force-aligned with `aligner` and its dictionary.  Prompts that are tones ("[beep]") or
    hold a word outside the dictionary are left out and counted."""
    import gzip

    from speechattn.data.align import ALIGNERS
    from speechattn.data.textnorm import spoken_words

    root, transcripts = Path(root), Path(transcripts)
    if not transcripts.exists():
        raise CorpusError(f"{transcripts}: no transcripts (apt-get install asterisk-core-sounds-en-wav)")
    opener = gzip.open if transcripts.suffix == ".gz" else open
    with opener(transcripts, "rt", errors="replace") as handle:
        entries = [line.split(":", 1) for line in handle if ":" in line and not line.startswith(";")]
    dictionary = ALIGNERS[aligner].dictionary()
    items, texts, tones, missing_audio, out_of_vocabulary = [], {}, 0, 0, {}
    for name, text in entries:
        name, text = name.strip(), text.strip()
        if text.startswith("[") or not text:
            tones += 1
            continue
        audio = root / f"{name}.wav"
        if not audio.exists():
            missing_audio += 1
            continue
        words = spoken_words(text)
        unknown = [w for w in words if not dictionary.in_dictionary(w)]
        if unknown or not words:
            for word in unknown:
                out_of_vocabulary[word] = out_of_vocabulary.get(word, 0) + 1
            continue
        utterance = name.replace("/", "_")
        items.append((utterance, str(audio), None, words))
        texts[utterance] = text
    log.info("asterisk prompts: %d transcripts; %d are tones, %d without audio, %d hold words outside the "
             "dictionary (%s%s); aligning %d", len(entries), tones, missing_audio,
             len(entries) - tones - missing_audio - len(items), ", ".join(sorted(out_of_vocabulary)[:12]),
             " ..." if len(out_of_vocabulary) > 12 else "", len(items))
    done = _aligned(items, cache, workers, progress, aligner)
    speakers = {utterance: "allison" for utterance, *_ in items}
    return _aligned_manifests(items, done, speakers, texts, root, f"{aligner} forced alignment")


def read_ljspeech(root: str | Path, dev_chapters: tuple[str, ...] = ("LJ050",), cache: Path | None = None,
                  workers: int = 2, progress: bool = True, aligner: str = "pocketsphinx"):
    """LJ Speech (metadata.csv 'id|text[|normalised text]', audio/<id>.wav|.opus; one US speaker),
    force-aligned with `aligner` and its dictionary.  One speaker only, so the split is by chapter
    (the id's prefix): `dev_chapters` go to dev, the rest to train (custom["fixed_split"]).  Clips
    holding a word outside the dictionary are left out and counted."""
    root = Path(root)
    metadata = root / "metadata.csv"
    if not metadata.exists():
        raise CorpusError(f"{root}: no metadata.csv; is this an LJ Speech directory?")
    audio_files = {p.stem: p for p in listed_below(root / "audio") if p.suffix.lower() in AUDIO_SUFFIXES}
    if not audio_files:
        audio_files = {p.stem: p for p in listed_below(root / "wavs", "*.wav")}
    clips = {}
    for number, line in enumerate(metadata.read_text().splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split("|")
        if len(fields) < 2:
            raise CorpusError(f"{metadata}:{number}: expected 'id|text', got {line!r}")
        utterance, text = fields[0].strip(), fields[-1].strip()
        if utterance not in audio_files:
            raise CorpusError(f"{root}: no audio for clip {utterance}")
        clips[utterance] = (audio_files[utterance], text, "lj",
                            "dev" if utterance.split("-")[0] in dev_chapters else "train")
    return _align_transcribed("ljspeech", clips, root, f"{len(clips)} clips", cache, workers, progress, aligner)


# Transcribed corpora from the data hunt (docs/data-hunt.md), labelled by forced alignment like LJ Speech.

MAX_TRANSCRIPT_BYTES = 256 * 1024 * 1024  # a transcript file or manifest far past any corpus's: not one
LIBRISPEECH_ID = re.compile(r"\d+-\d+-\d+")  # SPEAKER-CHAPTER-UTTERANCE
SPEECH_COMMANDS_SKIPPED = ("_background_noise_", "_silence_")  # noise, no word
SPEECH_COMMANDS_DEV_HASH_STARTS = ("0", "1", "2", "3")  # a quarter of the speakers, whatever the corpus's size
MANIFEST_DURATION_TOLERANCE_S = 0.05  # a NeMo manifest's duration against the audio's own


def _listed_audio(root: Path, suffixes: tuple[str, ...]) -> list[Path]:
    """Audio files under `root`, without the `._NAME` resource files a copy from macOS leaves beside each file."""
    return sorted(p for p in listed_below(root) if p.suffix.lower() in suffixes and not p.name.startswith("._")
                  and p.is_file())


def _text_lines(path: Path, what: str) -> list[str]:
    from speechattn.files import read_bounded

    data = read_bounded(path, what, MAX_TRANSCRIPT_BYTES, CorpusError)
    try:
        return data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise CorpusError(f"{path}: not UTF-8 text; not a {what}") from None


def _align_transcribed(corpus: str, clips: dict[str, tuple], root: Path, found: str, cache: Path | None,
                       workers: int, progress: bool, aligner: str):
    """clips: utterance -> (audio path, text, speaker, fixed split or None).  Clips holding a word outside the
    aligner's dictionary are left out and counted in one log line after `found` (what the reader found and left
    out); the rest are force-aligned (cached) and become manifests."""
    from speechattn.data.align import ALIGNERS
    from speechattn.data.textnorm import spoken_words

    dictionary = ALIGNERS[aligner].dictionary()
    items, out_of_vocabulary, skipped = [], {}, 0
    for utterance, (audio, text, _, _) in sorted(clips.items()):
        words = spoken_words(text)
        unknown = [w for w in words if not dictionary.in_dictionary(w)]
        if unknown or not words:
            skipped += 1
            for word in unknown:
                out_of_vocabulary[word] = out_of_vocabulary.get(word, 0) + 1
            continue
        items.append((utterance, str(audio), None, words))
    unknown_words = ", ".join(sorted(out_of_vocabulary)[:12]) + (" ..." if len(out_of_vocabulary) > 12 else "")
    log.info("%s: %s; %d hold words outside the dictionary%s; aligning %d", corpus, found, skipped,
             f" ({unknown_words})" if unknown_words else "", len(items))
    done = _aligned(items, cache, workers, progress, aligner)
    recordings, supervisions = _aligned_manifests(
        items, done, {u: clip[2] for u, clip in clips.items()}, {u: clip[1] for u, clip in clips.items()}, root,
        f"{aligner} forced alignment")
    for supervision in supervisions:
        if clips[supervision.id][3]:
            supervision.custom["fixed_split"] = clips[supervision.id][3]
    return recordings, supervisions


def read_librispeech(root: str | Path, transcripts: str | Path | None = None, cache: Path | None = None,
                     workers: int = 2, progress: bool = True, aligner: str = "pocketsphinx"):
    """LibriSpeech clips named SPEAKER-CHAPTER-UTTERANCE.flac|wav|opus anywhere under `root`, their text from
    LibriSpeech's own SPEAKER/CHAPTER/SPEAKER-CHAPTER.trans.txt files under `root` ('ID TEXT' lines, upper case)
    and from `transcripts`, a tab-separated file whose first two columns are id and text (fbai-speech's reference
    files: lower case, more columns after; it wins where both hold a clip).  Speaker = the id's first field.
    Force-aligned with `aligner`; clips without a transcript, or holding a word outside the dictionary, are left
    out and counted."""
    root = Path(root)
    audio: dict[str, Path] = {}
    for path in _listed_audio(root, (".flac", ".wav", ".opus")):
        if LIBRISPEECH_ID.fullmatch(path.stem):
            if path.stem in audio:
                raise CorpusError(f"{path}: a second audio file for clip {path.stem} (the first: {audio[path.stem]})")
            audio[path.stem] = path
    if not audio:
        raise CorpusError(f"{root}: no LibriSpeech clips (SPEAKER-CHAPTER-UTTERANCE.flac, .wav or .opus) under it")
    sources = [(p, " ", "ID TEXT") for p in sorted(listed_below(root, "*.trans.txt")) if not p.name.startswith("._")]
    if transcripts:
        sources.append((Path(transcripts), "\t", "ID<tab>TEXT[<tab>...]"))
    if not sources:
        raise CorpusError(f"{root}: no SPEAKER-CHAPTER.trans.txt under it, and no transcript file given "
                          "(data.transcripts: a tab-separated 'id, text' file)")
    texts: dict[str, str] = {}
    for path, separator, form in sources:
        for number, line in enumerate(_text_lines(path, "transcript file"), 1):
            if not line.strip():
                continue
            utterance, _, text = line.strip().partition(separator)
            text = text.split("\t")[0].strip()
            if not LIBRISPEECH_ID.fullmatch(utterance) or not text:
                raise CorpusError(f"{path}:{number}: expected '{form}' with a SPEAKER-CHAPTER-UTTERANCE id, "
                                  f"got {line[:80]!r}")
            texts[utterance] = text
    clips = {u: (path, texts[u], u.split("-")[0], None) for u, path in audio.items() if u in texts}
    found = (f"{len(audio)} clips, {len(audio) - len(clips)} without a transcript (left out; "
             f"{len(texts) - len(clips)} transcripts have no clip here)")
    return _align_transcribed("librispeech", clips, root, found, cache, workers, progress, aligner)


def speech_commands_split(speaker: str) -> str:
    """A Speech Commands speaker's split, fixed by the speaker's hash alone so that it never changes with the
    corpus's size: hashes starting with 0-3 are dev (reserved for the word-edge alignment check), the rest train."""
    return "dev" if speaker.startswith(SPEECH_COMMANDS_DEV_HASH_STARTS) else "train"


def _speech_command(path: Path) -> tuple[str, str, str]:
    """(utterance id, word, speaker hash) of WORD/HASH_nohash_N.wav or _unknown_/WORD_HASH_nohash_N.wav[.wav]."""
    name = path.name
    while name.lower().endswith(".wav"):
        name = name[:-4]
    fields = name.split("_")
    unknown = path.parent.name == "_unknown_"
    words = fields[:-3]
    if (len(fields) < 3 or fields[-2] != "nohash" or not fields[-1].isdigit()
            or not re.fullmatch(r"[0-9a-fA-F]+", fields[-3]) or (unknown and not words) or (words and not unknown)):
        raise CorpusError(f"{path}: not a Speech Commands clip name (WORD/HASH_nohash_N.wav, or "
                          "_unknown_/WORD_HASH_nohash_N.wav)")
    word = "_".join(words) if unknown else path.parent.name
    speaker = fields[-3].lower()
    return f"{word}_{speaker}_nohash_{fields[-1]}", word, speaker


def read_speech_commands(root: str | Path, cache: Path | None = None, workers: int = 2, progress: bool = True,
                         aligner: str = "pocketsphinx"):
    """Speech Commands (v0.02): one spoken word a clip, WORD/HASH_nohash_N.wav, and in the test set's
    `_unknown_` folder WORD_HASH_nohash_N.wav (the staged copy's end in .wav.wav); `_background_noise_` and
    `_silence_` hold no word and are left out.  The text is the word, the speaker its HASH, and the split fixed
    by the hash (speech_commands_split, custom["fixed_split"]).  Force-aligned with `aligner` as one word
    between silences."""
    root = Path(root)
    clips: dict[str, tuple] = {}
    noise = 0
    for path in sorted(p for p in listed_below(root) if len(p.relative_to(root).parts) == 2  # WORD/CLIP.wav
                       and p.suffix.lower() == ".wav" and not p.name.startswith("._")):
        if path.parent.name in SPEECH_COMMANDS_SKIPPED:
            noise += 1
            continue
        utterance, word, speaker = _speech_command(path)
        if utterance in clips:
            raise CorpusError(f"{path}: clip {utterance} is here twice (the first: {clips[utterance][0]})")
        clips[utterance] = (path, word, speaker, speech_commands_split(speaker))
    if not clips:
        raise CorpusError(f"{root}: no Speech Commands clips (WORD/HASH_nohash_N.wav) in its folders")
    found = f"{len(clips) + noise} clips, {noise} in {' or '.join(SPEECH_COMMANDS_SKIPPED)} (no word: left out)"
    return _align_transcribed("speech-commands", clips, root, found, cache, workers, progress, aligner)


def _manifest_audio(manifest: Path, listed: str, root: Path) -> Path | None:
    """The audio a NeMo manifest line names: an absolute path, or relative to the manifest's folder or to `root`;
    else the path's tail under the manifest's folder (NeMo's own manifests name audio relative to the repository
    they were written in: tests/data/asr/train/an4/wav/X.wav beside asr/an4_train.json)."""
    path = Path(listed)
    if path.is_absolute():
        return path if path.is_file() else None
    for start in range(len(path.parts)):
        for base in (manifest.parent, root) if start == 0 else (manifest.parent,):
            if (base / Path(*path.parts[start:])).is_file():
                return base / Path(*path.parts[start:])
    return None


def _audio_seconds(path: Path) -> float | None:
    """The audio's duration from its header, or None where soundfile cannot read it (_recording names it later)."""
    import soundfile

    try:
        return soundfile.info(str(path)).duration
    except Exception:  # soundfile raises several types for unreadable audio
        return None


def read_an4(root: str | Path, manifest: str | Path | None = None, cache: Path | None = None, workers: int = 2,
             progress: bool = True, aligner: str = "pocketsphinx"):
    """AN4 in NeMo's manifest layout: JSON lines {"audio_filepath", "duration", "text"} in `manifest`, else in
    every *.json directly in `root` (`._NAME` resource files ignored).  Audio paths are absolute or relative
    (see _manifest_audio); the duration is the audio's own.  Speaker from the file name (an442-mmxg-b -> mmxg).
    Force-aligned with `aligner`."""
    import json

    root = Path(root)
    manifests = [Path(manifest)] if manifest else sorted(p for p in root.glob("*.json") if not p.name.startswith("._"))
    if not manifests:
        raise CorpusError(f"{root}: no NeMo manifest (*.json) in it")
    clips: dict[str, tuple] = {}
    shorter = 0  # clips whose audio is shorter than their manifest says (the staged AN4 copy's are half as long)
    for path in manifests:
        for number, line in enumerate(_text_lines(path, "NeMo manifest"), 1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise CorpusError(f"{where}: not a JSON line ({error.msg})") from None
            if not isinstance(record, dict) or not isinstance(record.get("audio_filepath"), str) \
                    or not isinstance(record.get("text"), str):
                raise CorpusError(f"{where}: expected a JSON object with audio_filepath and text, got {line[:80]!r}")
            if record.get("offset"):
                raise CorpusError(f"{where}: an offset into the audio; give whole clips")
            audio = _manifest_audio(path, record["audio_filepath"], root)
            if audio is None:
                raise CorpusError(f"{where}: no audio at {record['audio_filepath']} (absolute, or relative to "
                                  f"{path.parent})")
            fields = audio.name.split(".")[0].split("-")
            if len(fields) < 3 or not fields[1]:
                raise CorpusError(f"{where}: {audio.name}: not an AN4 file name (SESSION-SPEAKER-b.wav, as "
                                  "an442-mmxg-b.wav)")
            utterance = audio.name.split(".")[0]
            if utterance in clips and clips[utterance][0] != audio:
                raise CorpusError(f"{where}: clip {utterance} is here twice ({clips[utterance][0]}, {audio})")
            clips[utterance] = (audio, record["text"], fields[1], None)
            listed, seconds = record.get("duration"), _audio_seconds(audio)
            if isinstance(listed, (int, float)) and seconds is not None:
                shorter += seconds < listed - MANIFEST_DURATION_TOLERANCE_S
    if shorter:
        log.warning("an4: %d of %d clips are shorter than their manifest's duration: check that their audio holds "
                    "the whole text (the alignment fits the text into the audio it has)", shorter, len(clips))
    return _align_transcribed("an4", clips, root, f"{len(clips)} clips", cache, workers, progress, aligner)
