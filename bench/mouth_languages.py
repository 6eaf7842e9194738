"""Mouths in other languages (issue 66, items 4 and 5): the mouth's frame accuracy per language and per viseme set,
ours beside the peers on the same audio in the same run.

Two kinds of speech, kept apart from what the multilingual model trains on (its trainer uses the other voices and
another seed; speechattn/data/synth_languages.py FESTIVAL_VOICES says which festival voices are the check's):

  synthetic  exact references: the synthesizer's own phone timing, labelled per 10 ms frame in the model's phones by
             speechattn.data.synth_languages.labelled (IPA -> speechattn.phones.IPA_TO_PHONES).  espeak-ng's voice
             variants m3 m6 f3 f5 in every language, and the festival voices pc_diphone (it), czech_machac (cs),
             hy_fi_mv_diphone (fi) and telugu_NSK_diphone (te).  The words: wordfreq's 2,000 most frequent words of
             the language drawn with seed 20261206 + the language's index in ALL_LANGUAGES (Telugu, which wordfreq
             lacks: pseudo-words of two to four Telugu syllables, same seed rule).  English is the reference:
             espeak-ng's en-us with the same variants, through the same path (IPA, not its mnemonics).
  real       SILVER references: Debian's asterisk-core-sounds-LL prompts (the -g722 packages: 16 kHz; the base
             package lists what each prompt says), each aligned to its text with `speechattn align --language LL`
             (English: `speechattn align`, CMUdict), the bundled default model, `--boundaries neural`.  The
             references are drawn by our own English model's aligner, so they favour our models' boundaries, as the
             pocketsphinx-aligned English dev set favours pocketsphinx.  `--reference-model default,multilingual`
             adds the same prompts aligned by the multilingual model's aligner as rows of their own (English too,
             so each is compared with English on the same kind of reference): the model under test then drew its
             own references.  A prompt whose text holds * # ( ) / @ or a
             web address is left out (the speech says something else); one align reports unalignable, or with a
             word not heard, is left out and counted.

Every mouth becomes frames of each viseme set through the same tables (export/visemes.py) and is scored by the same
code as bench/lipsync.py (VisemeScores): the reference phones and ours (each model streamed at its default chunk,
the bigram decoder: the live mouth with its audio delayed) through the same cue rules; pocketsphinx's allphone
phones (English) through the same tables and rules; HeadAudio and wLipSync (bench/lipsync_peers.py) through the
same rules at their own timestamps; the real Rhubarb Lip Sync 1.14.0 (`-r phonetic --extendedShapes GHX`, its own
cues as it writes them: Rhubarb's nine shapes only).

    python bench/mouth_languages.py                      # everything (data prepared once under data/mouth_languages)
    python bench/mouth_languages.py --languages es,fr --limit 5 --peers pocketsphinx
    python bench/mouth_languages.py --reference-model default,multilingual   # both aligners' references
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

DATA = ROOT / "data" / "mouth_languages"
ASTERISK = ROOT / "data" / "asterisk-langs" / "root" / "usr" / "share"  # dpkg -x of the debs (docs/benchmarks.md)
RHUBARB = ROOT / "data" / "rhubarb" / "build" / "rhubarb" / "rhubarb"  # built from source (docs/benchmarks.md)
SEED = 20261206
# Every language the check may draw, in a fixed order: a language's seed is SEED + its index here.
ALL_LANGUAGES = ("en", "es", "fr", "it", "de", "ru", "pt", "nl", "pl", "cs", "fi", "tr", "sv", "hu", "ro", "el",
                 "te", "hi", "uk", "ca")
SYNTHETIC_LANGUAGES = ("en", "es", "fr", "it", "de", "ru", "pt", "nl", "pl", "cs", "fi", "tr", "te")
REAL_LANGUAGES = ("en", "es", "fr", "it", "ru")
ESPEAK_VARIANTS = ("m3", "m6", "f3", "f5")  # the check's; training uses the others
FESTIVAL_CHECK = {"it": "pc_diphone", "cs": "czech_machac", "fi": "hy_fi_mv_diphone", "te": "telugu_NSK_diphone"}
ESPEAK_VOICE = {"en": "en-us"}  # espeak-ng's voice for a language where its name differs
SETS = ("rhubarb", "oculus", "vrm")
BUNDLED_MODELS = ("default-int8", "default", "multilingual")
PEERS = ("rhubarb", "pocketsphinx", "headaudio", "wlipsync")
SET_TITLES = {"rhubarb": "Rhubarb's nine shapes", "oculus": "Oculus's 15 visemes", "vrm": "VRM's A I U E O and closed"}
MOUTH_TITLES = {"rhubarb": "Rhubarb 1.14.0 -r phonetic", "headaudio": "HeadAudio", "wlipsync": "wLipSync"}
SKIPPED_TEXT = re.compile(r"[*#()/@\[\]]|www|http")
TELUGU_CONSONANTS = "కగచజటడతదనపబమయరలవసహ"
TELUGU_VOWEL_SIGNS = ("", "ా", "ి", "ీ", "ు", "ూ", "ె", "ే", "ొ", "ో")


@dataclass
class Item:
    """One utterance of the check: audio (16 kHz float32) and its reference, one phone index per 10 ms frame."""

    kind: str  # "synthetic", "real" or "real, NAME-aligned" (the references of another model's aligner)
    language: str
    name: str  # unique within (kind, language)
    voice: str
    audio: np.ndarray
    labels: np.ndarray
    text: str = ""

    @property
    def key(self) -> str:
        """Names the audio (the mouths' cache): the two references of the English prompts share it."""
        return f"{self.kind.split(',')[0]}/{self.language}/{self.name}"


@dataclass
class Dropped:
    """Utterances left out, by language and reason."""

    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))


# --- synthetic speech -------------------------------------------------------------------------------------------


def word_draws(language: str, count: int, words: int) -> list[str]:
    """`count` texts of `words` words each, drawn with the check's seed (SEED + the language's index)."""
    rng = random.Random(SEED + ALL_LANGUAGES.index(language))
    if language == "te":
        def word() -> str:
            return "".join(rng.choice(TELUGU_CONSONANTS) + rng.choice(TELUGU_VOWEL_SIGNS)
                           for _ in range(rng.randint(2, 4)))
        return [" ".join(word() for _ in range(words)) for _ in range(count)]
    import wordfreq

    vocabulary = [w for w in wordfreq.top_n_list(language, 3000) if re.fullmatch(r"[^\W\d_]+", w)][:2000]
    return [" ".join(rng.choice(vocabulary) for _ in range(words)) + "." for _ in range(count)]


def synthetic_voices(language: str) -> list[tuple[str, str]]:
    """(engine, voice) pairs of the check for a language: espeak-ng's variants where espeak-ng has the language's
    words (not Telugu, which only festival's voice reads here), festival's voice where there is one."""
    voices = [] if language == "te" else [("espeak", variant) for variant in ESPEAK_VARIANTS]
    if language in FESTIVAL_CHECK:
        voices.append(("festival", FESTIVAL_CHECK[language]))
    return voices


def synthetic_items(language: str, per_voice: int, words: int, dropped: Dropped) -> list[Item]:
    """The language's synthetic utterances, made once and kept under data/mouth_languages/synthetic.  The texts are
    drawn in turn for each voice; one the labeller refuses (a phoneme with no phone in IPA_TO_PHONES) is counted in
    `dropped` and the next text is drawn in its place (at most per_voice * 5 draws per voice)."""
    from speechattn.data.synth_languages import labelled
    from speechattn.errors import SpeechattnError

    folder = DATA / "synthetic" / language
    folder.mkdir(parents=True, exist_ok=True)
    voices = synthetic_voices(language)
    if len(voices) == 1:  # Telugu: festival's voice alone says as much as four espeak-ng variants
        per_voice *= len(ESPEAK_VARIANTS)
    texts = iter(word_draws(language, per_voice * len(voices) * 5, words))
    items = []
    for engine, voice in voices:
        made = 0
        for number, text in zip(range(per_voice * 5), texts):
            if made == per_voice:
                break
            name = f"{engine}-{voice}-{len(items):03d}"
            cached = folder / f"{engine}-{voice}-{hashlib.sha1(text.encode()).hexdigest()[:12]}.npz"
            if not cached.exists():
                try:
                    audio, labels = labelled(ESPEAK_VOICE.get(language, language), voice, text, engine)
                except SpeechattnError as error:
                    dropped.counts[language, f"synthetic text refused ({str(error).split(': ')[-1][:60]})"] += 1
                    continue
                np.savez(cached, audio=audio.astype(np.float32), labels=labels)
            stored = np.load(cached)
            items.append(Item("synthetic", language, name, f"{engine} {voice}", stored["audio"], stored["labels"],
                              text))
            made += 1
    return items


# --- real speech (silver) ---------------------------------------------------------------------------------------


def prompt_texts(language: str) -> dict[str, str]:
    """prompt name (digits/1, agent-loginok ...) -> what it says, from the base package's list."""
    listing = ASTERISK / "doc" / f"asterisk-core-sounds-{language}" / f"core-sounds-{language}.txt.gz"
    if not listing.exists():
        raise SystemExit(f"{listing} is missing: apt-get download asterisk-core-sounds-{language} "
                         f"asterisk-core-sounds-{language}-g722 and dpkg -x them into {ASTERISK.parents[1]} "
                         "(docs/benchmarks.md, 'Mouths in other languages')")
    texts = {}
    for line in gzip.open(listing, "rt", encoding="utf-8-sig"):
        if line.startswith(";") or ":" not in line:
            continue
        name, text = line.split(":", 1)
        texts[name.strip()] = text.strip().strip('"')
    return texts


def prompt_audio(language: str) -> dict[str, Path]:
    """prompt name -> its .g722 file (16 kHz)."""
    folders = sorted((ASTERISK / "asterisk" / "sounds").glob(f"{language}_*"))
    if not folders:
        raise SystemExit(f"no {ASTERISK}/asterisk/sounds/{language}_*: dpkg -x asterisk-core-sounds-{language}-g722")
    return {str(path.relative_to(folders[0]).with_suffix("")): path for path in folders[0].rglob("*.g722")}


def decode_g722(path: Path) -> np.ndarray:
    """A .g722 prompt (64 kbit/s, 16 kHz) -> float32 samples, through the G722 wheel (pip install g722)."""
    try:
        import G722
    except ImportError:
        raise SystemExit("the real prompts are G.722: pip install g722") from None
    pcm = np.asarray(G722.G722(16000, 64000).decode(path.read_bytes()), dtype=np.int16)
    return pcm.astype(np.float32) / 32768


def prepare_real(language: str, prompts: int, dropped: Dropped) -> tuple[Path, list[str]]:
    """`prompts` of the language's prompts (drawn with the language's seed) as a corpus in MFA's layout (16 kHz WAV
    + .lab) under data/mouth_languages/real."""
    import soundfile as sf

    corpus = DATA / "real" / language / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    texts, audio = prompt_texts(language), prompt_audio(language)
    usable = []
    for name, text in texts.items():
        if name not in audio:
            dropped.counts[language, "no audio"] += 1
        elif SKIPPED_TEXT.search(text) or not re.search(r"[^\W\d_]", text):
            dropped.counts[language, "text with symbols"] += 1
        else:
            usable.append(name)
    drawn = random.Random(SEED + ALL_LANGUAGES.index(language)).sample(sorted(usable), min(prompts, len(usable)))
    stems = []
    for name in sorted(drawn):
        stem = corpus / name.replace("/", "--")
        if not stem.with_suffix(".wav").exists():
            sf.write(stem.with_suffix(".wav"), decode_g722(audio[name]), 16000, subtype="PCM_16")
            stem.with_suffix(".lab").write_text(texts[name].lstrip(". ") + "\n", encoding="utf-8")
        stems.append(stem.name)
    return corpus, stems


def align_real(language: str, corpus: Path, stems: list[str], jobs: int, reference_model: str) -> Path:
    """`speechattn align CORPUS --output-dir ALIGNED --format json --model DEFAULT --boundaries neural [--language
    LL]`: the bundled default as committed (model_path) and the kit's own boundaries, so the references depend on
    nothing else that may change; ALIGNED is named by the model's hash (a new default draws them afresh), and a run
    resumes where one stopped.  align's complaints (prompts it finds unalignable) are counted by real_items, not
    printed; each prompt align left without a result gets a .unalignable mark, so a rerun with every prompt settled
    does not call align at all."""
    model = model_path(reference_model)
    aligned = corpus.parent / f"aligned-{hashlib.sha256(model.read_bytes()).hexdigest()[:12]}"
    if all((aligned / f"{stem}.json").exists() or (aligned / f"{stem}.unalignable").exists() for stem in stems):
        return aligned
    command = [sys.executable, "-m", "speechattn", "align", str(corpus), "--output-dir", str(aligned),
               "--format", "json", "--jobs", str(jobs), "--quiet", "--model", str(model), "--boundaries", "neural"]
    if language != "en":
        command += ["--language", language]
    done = subprocess.run(command, capture_output=True, text=True, check=False)  # 1: a prompt was unalignable
    if done.returncode not in (0, 1) or "internal error" in done.stderr:
        raise SystemExit(f"speechattn align failed on {corpus}: {done.stderr.strip()[-400:]}")
    for stem in stems:
        if not (aligned / f"{stem}.json").exists():
            (aligned / f"{stem}.unalignable").touch()
    return aligned


def alignment_labels(alignment: dict, frames: int) -> np.ndarray:
    """An alignment JSON (export/alignment.schema.json) -> one phone index per 10 ms frame (silence between words)."""
    from speechattn.data.labels import frame_labels
    from speechattn.phones import PHONE_TO_INDEX

    intervals = [(p["start"], p["end"], PHONE_TO_INDEX[p["phone"]]) for w in alignment["words"] for p in w["phones"]]
    return frame_labels(intervals, frames)


def real_kinds(reference_models: list[str]) -> list[str]:
    """The real speech's kinds, one per aligner drawing its references: "real" (the first), "real, NAME-aligned"."""
    return ["real"] + [f"real, {name}-aligned" for name in reference_models[1:]]


def real_items(language: str, prompts: int, dropped: Dropped, jobs: int, reference_model: str = "default",
               kind: str = "real") -> list[Item]:
    """The prompts `reference_model`'s aligner found alignable, each with its silver reference; what is left out
    counted in `dropped` (the prompts themselves once, with the first kind; the aligner's refusals per kind)."""
    import soundfile as sf

    from speechattn.audio import num_frames

    corpus, stems = prepare_real(language, prompts, dropped if kind == "real" else Dropped())
    aligned = align_real(language, corpus, stems, jobs, reference_model)
    by = "" if kind == "real" else f" ({reference_model}'s aligner)"
    items = []
    for stem in stems:
        lab = corpus / f"{stem}.lab"
        result = aligned / f"{lab.stem}.json"
        if not result.exists():
            dropped.counts[language, f"unalignable{by}"] += 1
            continue
        alignment = json.loads(result.read_text())
        if alignment["not_heard"] or alignment["unalignable"]:
            dropped.counts[language, f"a word not heard{by}"] += 1
            continue
        audio, _ = sf.read(lab.with_suffix(".wav"), dtype="float32")
        items.append(Item(kind, language, lab.stem, "asterisk", audio,
                          alignment_labels(alignment, num_frames(len(audio))), lab.read_text().strip()))
    return items


def pocketsphinx_referenced(items: list[Item]) -> list[Item]:
    """The English prompts again, with the project's other silver references: pocketsphinx's forced alignments of
    the same recordings (data/real-dev, `speechattn prepare recipes/real-dev.yaml`, made from their 8 kHz WAVs), to
    show how much the reference's aligner moves the figures."""
    from speechattn.data.labels import frame_labels
    from speechattn.phones import from_arpabet

    manifest = ROOT / "data" / "real-dev" / "real-dev_supervisions_dev.jsonl.gz"
    if not manifest.exists():
        return []
    aligned = {}
    for line in gzip.open(manifest, "rt", encoding="utf-8"):
        supervision = json.loads(line)
        aligned[supervision["id"].replace("/", "--")] = [(start, start + length, from_arpabet(phone))
                                                       for phone, start, length, _ in supervision["alignment"]["phone"]]
    return [Item("real, pocketsphinx-aligned", item.language, item.name, item.voice, item.audio,
                 frame_labels(aligned[item.name], len(item.labels)), item.text)
            for item in items if item.name in aligned]


# --- the mouths -------------------------------------------------------------------------------------------------


def model_path(name: str) -> Path:
    """A bundled model's name (models.json; `multilingual`: export/models/multilingual-int8.onnx where models.json
    lacks it) or an ONNX file.  A bundled model is read as committed (git HEAD), kept under data/mouth_languages/models
    by its hash, so a file being rewritten in the working tree meanwhile does not change the check; one not yet
    committed is read from the tree."""
    from speechattn.errors import SpeechattnError
    from speechattn.runtime.transcribe import resolve_model

    try:
        path = resolve_model(name)
    except SpeechattnError:
        path = ROOT / "export" / "models" / f"{name}-int8.onnx"
        if not path.exists():
            raise
    if path.resolve().parent != ROOT / "export" / "models":
        return path
    committed = subprocess.run(["git", "-C", str(ROOT), "show", f"HEAD:export/models/{path.name}"],
                               capture_output=True, check=False).stdout
    if not committed:
        return path
    pinned = DATA / "models" / f"{path.stem}-{hashlib.sha256(committed).hexdigest()[:12]}.onnx"
    if not pinned.exists():
        pinned.parent.mkdir(parents=True, exist_ok=True)
        pinned.write_bytes(committed)
    return pinned


class Ours:
    """A model streamed at its default chunk through the bigram decoder, as `mic --visemes` (its audio delayed)."""

    def __init__(self, path: Path) -> None:
        from speechattn_export.stream_client import StreamingModel

        self.model, self.path = StreamingModel(path, num_threads=1), path
        self.sets = SETS
        self.cache_tag = hashlib.sha256(path.read_bytes()).hexdigest()[:12]

    def segments(self, item: Item) -> list:
        from speechattn.training.evaluate import streamed_log_probs
        from speechattn_export.decoder import new_segmenter

        log_probs = streamed_log_probs(self.model, item.audio, self.model.default_chunk_frames)[: len(item.labels)]
        decoder = new_segmenter("bigram", self.model.phones)
        return decoder.push(log_probs) + decoder.finish()


class PocketSphinx:
    """pocketsphinx's allphone decoder (English phones), through the same tables and cue rules."""

    sets, cache_tag = SETS, "allphone"

    def __init__(self) -> None:
        from pocketsphinx_peer import AllphoneDecoder

        self.decoder = AllphoneDecoder()

    def segments(self, item: Item) -> list:
        from lipsync import label_segments

        return label_segments(self.decoder.frame_labels(item.audio)[: len(item.labels)])


class RealRhubarb:
    """Rhubarb Lip Sync 1.14.0 (`rhubarb -r phonetic --extendedShapes GHX -f json`): its own cues, one of its nine
    shapes per 10 ms frame (the shape of the cue holding the frame's start)."""

    sets, cache_tag = ("rhubarb",), "1.14.0-phonetic"

    def __init__(self, executable: Path = RHUBARB) -> None:
        if not executable.exists():
            raise PeerUnavailableHere(f"no {executable} (build it: docs/benchmarks.md, 'Mouths in other languages')")
        self.executable = executable

    def shapes(self, item: Item) -> dict[str, list[str]]:
        import soundfile as sf

        with tempfile.TemporaryDirectory() as folder:
            wav = Path(folder) / "item.wav"
            sf.write(wav, item.audio, 16000, subtype="PCM_16")
            done = subprocess.run([str(self.executable), "-r", "phonetic", "--extendedShapes", "GHX", "-f", "json",
                                   "--threads", "1", "-q", str(wav)], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"rhubarb failed on {item.key}: {done.stderr.strip()[-300:]}")
        cues = json.loads(done.stdout)["mouthCues"]
        frames = len(item.labels)
        starts = np.arange(frames) * 0.01 + 1e-9
        ends = np.array([cue["end"] for cue in cues])
        index = np.minimum(np.searchsorted(ends, starts, side="right"), len(cues) - 1)
        return {"rhubarb": [cues[i]["value"] for i in index]}


class BrowserPeer:
    """HeadAudio or wLipSync through bench/lipsync_peers.py: their mouth per frame through our cue rules."""

    def __init__(self, peer, name: str) -> None:
        self.peer, self.sets, self.cache_tag = peer, peer.sets, name

    def shapes(self, item: Item) -> dict[str, list[str]]:
        return self.peer.run(item.audio, len(item.labels)).shapes


class PeerUnavailableHere(Exception):
    pass


def load_mouths(models: list[str], peers: list[str]) -> dict:
    """name -> mouth; peers that cannot run here are printed with the reason and left out."""
    mouths: dict = {}
    for name in models:
        try:
            label, _, file = name.partition("=")  # NAME=FILE: a file under a name of its own
            mouths[label] = Ours(model_path(file or label))
        except Exception as error:  # noqa: BLE001 - a missing model is reported, not fatal
            print(f"model {name} skipped: {error}")
    browser = [name for name in peers if name in ("headaudio", "wlipsync")]
    if browser:
        import lipsync_peers

        for name, peer in lipsync_peers.load_peers(browser).items():
            mouths[name] = BrowserPeer(peer, name)
    for name in peers:
        try:
            if name == "rhubarb":
                mouths[name] = RealRhubarb()
            elif name == "pocketsphinx":
                mouths[name] = PocketSphinx()
            elif name not in ("headaudio", "wlipsync"):
                raise SystemExit(f"--peers: unknown {name!r} (choose from {', '.join(PEERS)})")
        except PeerUnavailableHere as reason:
            print(f"peer {name} skipped: {reason}")
    return mouths


def frame_shapes(mouth, item: Item) -> dict[str, list[str]]:
    """The mouth's shape per 10 ms frame for each set it draws, kept under data/mouth_languages/cache (by the
    model's hash or the peer's name and the audio's hash) so a rerun scores only what changed."""
    from lipsync import shape_segments
    from speechattn.phones import PHONES
    from speechattn_export.visemes import SETS as VISEME_SETS
    from speechattn_export.visemes import cue_labels, make_cues

    digest = hashlib.sha1(item.audio.tobytes()).hexdigest()[:16]
    cached = DATA / "cache" / mouth.cache_tag / f"{item.key.replace('/', '_')}-{digest}.json"
    if cached.exists():
        return json.loads(cached.read_text())
    frames = len(item.labels)
    if hasattr(mouth, "segments"):
        segments = mouth.segments(item)
        phones = getattr(getattr(mouth, "model", None), "phones", PHONES)
        shapes = {}
        for name in mouth.sets:
            visemes = VISEME_SETS[name]
            labels = cue_labels(make_cues(segments, visemes, phones), visemes, frames)
            shapes[name] = [visemes.shapes[i] for i in labels]
    else:
        shapes = mouth.shapes(item)
        if not isinstance(mouth, RealRhubarb):  # the real-time tools through our cue rules, as bench/lipsync.py
            for name in list(shapes):
                visemes = VISEME_SETS[name]
                cues = make_cues(shape_segments(shapes[name], visemes, PHONES), visemes, PHONES)
                shapes[name] = [visemes.shapes[i] for i in cue_labels(cues, visemes, frames)]
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(shapes))
    return shapes


def reference_shapes(item: Item) -> dict[str, list[str]]:
    """The reference phones through the same tables and cue rules."""
    from lipsync import label_segments
    from speechattn.phones import PHONES
    from speechattn_export.visemes import SETS as VISEME_SETS
    from speechattn_export.visemes import cue_labels, make_cues

    segments, frames = label_segments(item.labels), len(item.labels)
    return {name: [VISEME_SETS[name].shapes[i] for i in cue_labels(make_cues(segments, VISEME_SETS[name], PHONES),
                                                                   VISEME_SETS[name], frames)] for name in SETS}


# --- scores and tables ------------------------------------------------------------------------------------------


class Tally:
    """Frames right per (kind, language) row, mouth and set, pooled over the row's utterances; the floor (a mouth
    that never moves: the row's most common reference shape) from the reference's shape counts."""

    def __init__(self) -> None:
        self.right: dict = defaultdict(int)  # (row, mouth, set) -> frames whose shape equals the reference's
        self.frames: dict = defaultdict(int)  # (row, set) -> frames scored
        self.shape_frames: dict = defaultdict(lambda: defaultdict(int))  # (row, set) -> reference shape -> frames
        self.seconds: dict = defaultdict(float)  # row -> seconds of audio
        self.utterances: dict = defaultdict(int)  # row -> utterances

    def add(self, row: tuple[str, str], reference: dict[str, list[str]], mouths: dict[str, dict[str, list[str]]],
            seconds: float) -> None:
        self.seconds[row] += seconds
        self.utterances[row] += 1
        for set_name, truth in reference.items():
            truth_array = np.asarray(truth, dtype=object)
            self.frames[row, set_name] += len(truth)
            for shape in truth:
                self.shape_frames[row, set_name][shape] += 1
            for mouth, shapes in mouths.items():
                if set_name in shapes:
                    self.right[row, mouth, set_name] += int(np.sum(np.asarray(shapes[set_name], dtype=object)
                                                                   == truth_array))

    def accuracy(self, row, mouth: str, set_name: str) -> float | None:
        """Percent of frames right; None where the mouth does not draw the set (or the row is empty)."""
        if (row, mouth, set_name) not in self.right or not self.frames[row, set_name]:
            return None
        return 100 * self.right[row, mouth, set_name] / self.frames[row, set_name]

    def floor(self, row, set_name: str) -> tuple[str, float]:
        counts = self.shape_frames[row, set_name]
        shape = max(counts, key=counts.get)
        return shape, 100 * counts[shape] / self.frames[row, set_name]


def row_label(tally: Tally, row: tuple[str, str]) -> str:
    kind, language = row
    reference = "exact" if kind == "synthetic" else "silver"
    return (f"{language} {kind} ({reference}; {tally.utterances[row]} utt., {tally.seconds[row] / 60:.1f} min)")


def markdown_tables(tally: Tally, rows: list, mouths: list[str]) -> str:
    """A table per viseme set: a row per (kind, language), a column per mouth and the floor; frame accuracy in %."""
    out = []
    for set_name in SETS:
        drawn = [m for m in mouths if any(tally.accuracy(r, m, set_name) is not None for r in rows)]
        out.append(f"\n{SET_TITLES[set_name]}: frame accuracy (%)\n")
        out.append("| speech | " + " | ".join(MOUTH_TITLES.get(m, m) for m in drawn) + " | never moves |")
        out.append("|---|" + "---|" * (len(drawn) + 1))
        for row in rows:
            if not tally.frames[row, set_name]:
                continue
            cells = [tally.accuracy(row, m, set_name) for m in drawn]
            shape, floor = tally.floor(row, set_name)
            out.append(f"| {row_label(tally, row)} | " + " | ".join("—" if c is None else f"{c:.1f}" for c in cells)
                       + f" | {floor:.1f} ({shape}) |")
    return "\n".join(out)


def target_lines(tally: Tally, rows: list, models: list[str], peers: list[str]) -> str:
    """Issue 66 item 5, a table per model, a row per language and kind, a cell per set: ours, then ours less
    English's on the same kind of speech and reference, then ours less the best peer's (named).  English's is the
    best English figure of the models measured (the mouth an English speaker gets), so a model whose English is worse
    does not meet the target more easily.  Real speech meets it within 5 points of English and 5 ahead of every peer;
    synthetic within 3 points of English (in at least ten languages)."""
    out = []
    for model in models:
        out += [f"\ntargets, {model}: ours %; ours - English (same kind, the best model's); ours - the best peer\n",
                "| speech | " + " | ".join(SETS) + " |", "|---|" + "---|" * len(SETS)]
        synthetic_met: dict = defaultdict(int)
        for row in rows:
            kind, language = row
            english = (kind, "en")
            if language == "en" or english not in rows:
                continue
            cells = []
            for set_name in SETS:
                ours = tally.accuracy(row, model, set_name)
                reference = max((a for a in (tally.accuracy(english, m, set_name) for m in models) if a is not None),
                                default=None)
                if ours is None or reference is None:
                    cells.append("—")
                    continue
                figures = {p: tally.accuracy(row, p, set_name) for p in peers}
                figures = {p: a for p, a in figures.items() if a is not None}
                best = max(figures, key=figures.get) if figures else None
                real = kind.startswith("real")
                met = ours - reference >= (-5 if real else -3)
                if real:
                    met = met and best is not None and ours - figures[best] >= 5
                else:
                    synthetic_met[set_name] += met
                peer_text = f"{ours - figures[best]:+.1f} ({best})" if best else "no peer"
                cells.append(f"{ours:.1f}; {ours - reference:+.1f}; {peer_text}: {'met' if met else 'not met'}")
            out.append(f"| {language} {kind} | " + " | ".join(cells) + " |")
        for set_name, count in synthetic_met.items():
            out.append(f"\nsynthetic, {set_name}, {model}: within 3 points of English in {count} languages "
                       f"({'met' if count >= 10 else 'not met'}: the target is ten)")
    return "\n".join(out)


def comma_list(text: str, allowed: tuple[str, ...] | None, option: str) -> list[str]:
    names = [name for name in text.split(",") if name]
    unknown = [name for name in names if allowed is not None and name not in allowed]
    if unknown:
        raise argparse.ArgumentTypeError(f"{option}: unknown {', '.join(unknown)} (choose from {', '.join(allowed)})")
    return names


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    every = tuple(dict.fromkeys(SYNTHETIC_LANGUAGES + REAL_LANGUAGES))
    parser.add_argument("--languages", default=",".join(every), type=lambda t: comma_list(t, every, "--languages"),
                        help="comma-separated (English, the reference, is always added) [default: %(default)s]")
    parser.add_argument("--kinds", default="synthetic,real",
                        type=lambda t: comma_list(t, ("synthetic", "real"), "--kinds"), help="[default: %(default)s]")
    parser.add_argument("--models", default=",".join(BUNDLED_MODELS), type=lambda t: comma_list(t, None, "--models"),
                        help="bundled model names or ONNX files (NAME=FILE: a file under a name); one that is missing "
                             "is skipped [default: %(default)s]")
    parser.add_argument("--reference-model", default="default", metavar="NAME|FILE[,...]",
                        type=lambda t: comma_list(t, None, "--reference-model"),
                        help="the model whose aligner draws the real speech's silver references; several: the real "
                             "rows once per model, side by side ('real, NAME-aligned' after the first) "
                             "[default: %(default)s]")
    parser.add_argument("--peers", default=",".join(PEERS), type=lambda t: comma_list(t, PEERS, "--peers"),
                        help="peers on the same audio ('' for none); one that cannot run is skipped with the reason "
                             "[default: %(default)s]")
    parser.add_argument("--limit", type=int, metavar="N", help="the first N utterances per language and kind")
    parser.add_argument("--prompts", type=int, default=400, metavar="N",
                        help="real prompts drawn per language (before those left out) [default: %(default)s]")
    parser.add_argument("--per-voice", type=int, default=10, metavar="N",
                        help="synthetic texts per voice [default: %(default)s]")
    parser.add_argument("--words", type=int, default=8, help="words per synthetic text [default: %(default)s]")
    parser.add_argument("--jobs", type=int, default=1, help="align's worker processes [default: %(default)s]")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be at least 1")
    if "en" not in args.languages:
        args.languages = ["en", *args.languages]
    return args


def rows_of(args) -> list[tuple[str, str]]:
    rows = []
    for kind in args.kinds:
        if kind == "synthetic":
            rows += [(kind, language) for language in args.languages if language in SYNTHETIC_LANGUAGES]
        else:
            rows += [(real, language) for real in real_kinds(args.reference_model) for language in args.languages
                     if language in REAL_LANGUAGES]
    return rows


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from tqdm import tqdm

    mouths = load_mouths(args.models, args.peers)
    models = [name.partition("=")[0] for name in args.models if name.partition("=")[0] in mouths]
    for name in models:
        print(f"{name}: {mouths[name].path} (sha256 {mouths[name].cache_tag}...), streamed at its default chunk "
              f"({mouths[name].model.default_chunk_frames} frames)")
    peers = [name for name in args.peers if name in mouths]
    tally, dropped, rows = Tally(), Dropped(), rows_of(args)
    references = dict(zip(real_kinds(args.reference_model), args.reference_model))
    for row in tqdm(list(rows), desc="languages", unit="language"):
        kind, language = row
        items = (synthetic_items(language, args.per_voice, args.words, dropped) if kind == "synthetic"
                 else real_items(language, args.prompts, dropped, args.jobs, references[kind], kind))[: args.limit]
        for item in tqdm(items, desc=f"{language} {kind}", unit="utt.", leave=False):
            shapes = {name: frame_shapes(mouth, item) for name, mouth in mouths.items()}
            tally.add(row, reference_shapes(item), shapes, len(item.audio) / 16000)
        if row == ("real", "en"):  # the same audio and mouths (cached) against pocketsphinx's alignments
            same, other = ("real, same prompts", "en"), ("real, same prompts, pocketsphinx-aligned", "en")
            rows[rows.index(row) + 1: rows.index(row) + 1] = [same, other]
            ours_aligned = {item.name: item for item in items}
            for item in pocketsphinx_referenced(items):
                shapes = {name: frame_shapes(mouth, item) for name, mouth in mouths.items()}
                tally.add(same, reference_shapes(ours_aligned[item.name]), shapes, len(item.audio) / 16000)
                tally.add(other, reference_shapes(item), shapes, len(item.audio) / 16000)
    if peers and any(p in ("headaudio", "wlipsync") for p in peers):
        import lipsync_peers

        lipsync_peers.close_browser()
    print(f"\nmouths: {', '.join(mouths)}; references: synthetic exact (the synthesizer's timing), real SILVER "
          f"(speechattn align [--language LL] --model {', then '.join(args.reference_model)})")
    if dropped.counts:
        print("left out: " + "; ".join(f"{lang} {why}: {n}" for (lang, why), n in
                                                   sorted(dropped.counts.items())))
    print(markdown_tables(tally, rows, models + peers))
    print(target_lines(tally, rows, models, peers))
    if args.json:
        figures = {f"{kind}/{language}": {"utterances": tally.utterances[kind, language],
                                          "seconds": tally.seconds[kind, language],
                                          **{f"{m}/{s}": tally.accuracy((kind, language), m, s)
                                             for m in mouths for s in SETS}}
                   for kind, language in rows}
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
