"""`speechattn prepare RECIPE`: read a corpus, split it by speaker, write lhotse manifests.

Output, in the recipe's data.output directory, for each split (train, dev, test): a recordings and a
supervisions manifest, named as data/manifests.py says.
Speakers never cross splits, so dev and test measure generalisation to new voices.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol

import numpy as np

from speechattn.data.corpora import (ASTERISK_SOUNDS, ASTERISK_TRANSCRIPTS, SYMBOL_MAPPINGS, read_an4,
                                     read_asterisk_prompts, read_htk_lab, read_librispeech, read_ljspeech,
                                     read_speech_commands, read_speechocean762, read_textgrid_corpus, read_timit)
from speechattn.data.manifests import SPLITS, absolute_sources, manifest_pair
from speechattn.data.synth import SynthConfig, read_synth_corpus, synth_audio_directory
from speechattn.data.synth_languages import read_languages_corpus
from speechattn.errors import ConfigError


@dataclass(frozen=True)
class DataConfig:
    """A recipe's `data` section: which corpus to prepare and how to split it."""

    corpus: str = ""  # a name in CORPORA; synth is built here (settings in the synth section)
    root: str | None = None  # the corpus directory (for the corpora that need one)
    textgrid_root: str | None = None  # textgrid: where the TextGrids are, mirroring root (default: root)
    tier: str = "phones"  # textgrid: the phone tier's name
    symbols: str = "arpabet"  # textgrid/htk: the labels' phone set: arpabet, timit or festival
    output: str | None = None  # manifest directory (default: data/<recipe name>)
    dev_speakers: float = 0.1  # share of speakers held out for dev
    test_speakers: float = 0.1  # share held out for test (TIMIT: its own TEST part instead)
    only_split: str | None = None  # put every utterance in this split (a dev-only set such as the asterisk prompts)
    transcripts: str | None = None  # asterisk: the prompts' transcript file; librispeech: a tab-separated 'id, text'
    #                                 file (besides LibriSpeech's own *.trans.txt); an4: one NeMo manifest
    aligner: str = "pocketsphinx"  # the transcribed corpora (speechocean762, ljspeech, asterisk, librispeech,
    #                                speech-commands, an4): who draws the phone labels from the
    #                                transcripts: pocketsphinx or speechattn (our aligner on the bundled model)
    seed: int = 0  # speaker split

    def __post_init__(self) -> None:  # "~/corpora" as a shell would read it (a quoted --set value, a recipe file)
        for key in ("root", "textgrid_root", "output", "transcripts"):
            value = getattr(self, key)
            if isinstance(value, str) and value.startswith("~"):
                object.__setattr__(self, key, str(Path(value).expanduser()))


class Recipe(Protocol):
    """What preparation reads of a recipe (training.recipes.Recipe, which sits above data)."""

    name: str
    data: DataConfig
    synth: SynthConfig


# reader(data settings, synth settings, output directory (for caches), progress) -> (RecordingSet, SupervisionSet)
CorpusReader = Callable[[DataConfig, SynthConfig, Path, bool], tuple]


@dataclass(frozen=True)
class Corpus:
    read: CorpusReader
    needs_root: bool = True  # data.root, the user's copy of the corpus, must be given


# The corpus registry: data.corpus NAME -> its reader (speechattn/data/corpora.py) and whether it needs data.root.
# Adding a corpus is a reader there and one entry here (CONTRIBUTING.md).
CORPORA: dict[str, Corpus] = {
    "synth": Corpus(lambda data, synth, output, progress: read_synth_corpus(
        synth, synth_audio_directory(synth, output), progress), needs_root=False),
    "synth-languages": Corpus(lambda data, synth, output, progress: read_languages_corpus(
        synth, synth_audio_directory(synth, output), progress), needs_root=False),
    "speechocean762": Corpus(lambda data, synth, output, progress: read_speechocean762(
        data.root, alignment_cache(data, output), synth.workers, progress, data.aligner)),
    "ljspeech": Corpus(lambda data, synth, output, progress: read_ljspeech(
        data.root, cache=alignment_cache(data, output), workers=synth.workers, progress=progress,
        aligner=data.aligner)),
    "asterisk": Corpus(lambda data, synth, output, progress: read_asterisk_prompts(
        data.root or ASTERISK_SOUNDS, data.transcripts or ASTERISK_TRANSCRIPTS, alignment_cache(data, output),
        synth.workers, progress, data.aligner), needs_root=False),
    "timit": Corpus(lambda data, synth, output, progress: read_timit(data.root)),
    "textgrid": Corpus(lambda data, synth, output, progress: read_textgrid_corpus(
        data.root, data.textgrid_root, tier=data.tier, symbols=data.symbols)),
    "htk": Corpus(lambda data, synth, output, progress: read_htk_lab(data.root, symbols=data.symbols)),
    "librispeech": Corpus(lambda data, synth, output, progress: read_librispeech(
        data.root, data.transcripts, alignment_cache(data, output), synth.workers, progress, data.aligner)),
    "speech-commands": Corpus(lambda data, synth, output, progress: read_speech_commands(
        data.root, alignment_cache(data, output), synth.workers, progress, data.aligner)),
    "an4": Corpus(lambda data, synth, output, progress: read_an4(
        data.root, data.transcripts, alignment_cache(data, output), synth.workers, progress, data.aligner)),
}


def alignment_cache(data: DataConfig, output: Path) -> Path:
    """Where a transcribed corpus keeps its alignments (one file per aligner, so switching never mixes them)."""
    return output / ("alignments.jsonl" if data.aligner == "pocketsphinx" else f"alignments-{data.aligner}.jsonl")


def output_of(recipe: Recipe, output: Path | None = None) -> Path:
    """Where a recipe's manifests go: `output` (prepare --out), else its data.output, else data/<recipe name>."""
    return Path(output or recipe.data.output or Path("data") / recipe.name)


def check_data(data: DataConfig, where: str | Path) -> None:
    """Refuse a data section that cannot be prepared, naming the file and the key."""
    from speechattn.data.align import ALIGNERS

    if data.corpus not in CORPORA:
        raise ConfigError(f"{where}: data.corpus must be one of {', '.join(CORPORA)}, not {data.corpus!r}")
    if data.aligner not in ALIGNERS:
        raise ConfigError(f"{where}: data.aligner must be one of {', '.join(ALIGNERS)}, not {data.aligner!r}")
    for key in ("root", "textgrid_root"):
        value = getattr(data, key)
        if key == "root" and not value and CORPORA[data.corpus].needs_root:
            raise ConfigError(f"{where}: data.root is required: the {data.corpus} corpus directory")
        if value and not Path(value).is_dir():
            raise ConfigError(f"{where}: data.{key}: no such directory: {value}")
    if data.only_split not in (None, "train", "dev", "test"):
        raise ConfigError(f"{where}: data.only_split must be train, dev or test, not {data.only_split!r}")
    if data.symbols not in SYMBOL_MAPPINGS:
        raise ConfigError(f"{where}: data.symbols must be arpabet, timit or festival, not {data.symbols!r}")
    for key in ("dev_speakers", "test_speakers"):
        if not 0 <= getattr(data, key) < 1:
            raise ConfigError(f"{where}: data.{key} is a share of speakers, from 0 up to (not including) 1")
    if not 0 <= data.seed <= 2**32 - 1:
        raise ConfigError(f"{where}: data.seed must be from 0 to {2**32 - 1:,}, not {data.seed:,}")
    if data.dev_speakers + data.test_speakers >= 1:
        raise ConfigError(f"{where}: data.dev_speakers + data.test_speakers leave no speaker for training")


@dataclass
class SplitSummary:
    split: str
    utterances: int
    speakers: int
    hours: float


def split_speakers(speakers: list[str], dev_share: float, test_share: float, seed: int,
                   fixed_test: set[str] = frozenset()) -> dict[str, str]:
    """Speaker -> split, deterministic by seed.  `fixed_test` speakers are test whatever the shares say."""
    free = sorted(set(speakers) - set(fixed_test))
    order = [free[i] for i in np.random.default_rng(seed).permutation(len(free))]
    total = len(set(speakers))
    num_dev = round(dev_share * total) if dev_share else 0
    num_test = 0 if fixed_test else (round(test_share * total) if test_share else 0)
    if free and dev_share and num_dev == 0:
        num_dev = 1  # a share asked for gets at least one speaker
    if free and test_share and not fixed_test and num_test == 0:
        num_test = 1
    assignment = {speaker: "test" for speaker in fixed_test}
    for position, speaker in enumerate(order):
        assignment[speaker] = "dev" if position < num_dev else "test" if position < num_dev + num_test else "train"
    return assignment


def prepare(recipe: Recipe, output: Path | None = None, progress: bool = True) -> list[SplitSummary]:
    """Read the recipe's corpus and write its manifests into `output`, the six files together: a failure (a full
    disk) replaces none of an earlier preparation's.  Audio paths are stored absolute, so that the manifests work
    from any working directory (data/manifests.py)."""
    import errno

    from speechattn.errors import SpeechattnError

    data = recipe.data
    output = output_of(recipe, output)
    try:
        recordings, supervisions = CORPORA[data.corpus].read(data, recipe.synth, output, progress)
    except OSError as error:  # the synthesized audio or an alignment cache: finished work is kept and reused
        if error.errno != errno.ENOSPC:
            raise
        raise SpeechattnError(f"{output}: the disk is full ({error.filename or 'preparing the corpus'}); no manifest "
                              "was written (finished work is kept and reused by the next run)") from None
    recordings = absolute_sources(recordings)
    speakers = [s.speaker for s in supervisions]
    fixed_test = {s.speaker for s in supervisions if (s.custom or {}).get("corpus_split") == "test"}
    if data.only_split:
        assignment = {speaker: data.only_split for speaker in speakers}
    else:
        assignment = split_speakers(speakers, data.dev_speakers, data.test_speakers, data.seed, fixed_test)

    def split_of(supervision) -> str:
        # a corpus that names its own train/dev split (LJ Speech by chapter) keeps it
        own = (supervision.custom or {}).get("fixed_split")
        return own if own in SPLITS and not data.only_split else assignment[supervision.speaker]

    from contextlib import ExitStack

    from speechattn.files import atomic_path, write_error

    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise write_error(output, error) from None
    summaries = []
    with ExitStack() as written:  # every file to a temporary name first; renamed together when all are whole
        for split in SPLITS:
            chosen = supervisions.filter(lambda s: split_of(s) == split)
            ids = {s.recording_id for s in chosen}
            chosen_recordings = recordings.filter(lambda r: r.id in ids)
            for path, manifest in zip(manifest_pair(output / recipe.name, split), (chosen_recordings, chosen)):
                manifest.to_file(written.enter_context(atomic_path(path)))
            summaries.append(SplitSummary(split, len(chosen), len({s.speaker for s in chosen}),
                                          sum(s.duration for s in chosen) / 3600))
    return summaries
