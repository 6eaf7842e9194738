"""`speechattn prepare RECIPE`: read a corpus, split it by speaker, write lhotse manifests.

Output, in the recipe's data.output directory, for each split (train, dev, test): a recordings and a
supervisions manifest, named as data/manifests.py says.
Speakers never cross splits, so dev and test measure generalisation to new voices.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from speechattn.data.manifests import SPLITS, manifest_pair



class Recipe(Protocol):
    """What preparation reads of a recipe (training.recipes.Recipe; data sits below training, so only its shape)."""

    name: str
    data: object  # training.recipes.DataConfig
    synth: object  # data.synth.SynthConfig



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


def synth_audio_directory(recipe: Recipe, output: Path) -> Path:
    """Audio cache of the synthetic corpus, keyed by every setting that changes an utterance's content
    (not hours: job n depends only on the seed and n, so a larger corpus extends a smaller one)."""
    import hashlib
    import json
    from dataclasses import asdict

    from speechattn.data.synth import PLAN_VERSION

    settings = {k: v for k, v in asdict(recipe.synth).items() if k not in ("hours", "workers")}
    settings["plan_version"] = PLAN_VERSION
    key = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:10]
    return output / f"audio-{key}"


def read_corpus(recipe: Recipe, output: Path, progress: bool = True):
    from speechattn.data.corpora import (ASTERISK_SOUNDS, ASTERISK_TRANSCRIPTS, read_asterisk_prompts, read_htk_lab,
                          read_ljspeech, read_speechocean762, read_textgrid_corpus, read_timit)
    from speechattn.data.synth import read_synth_corpus

    data = recipe.data
    if data.corpus == "synth":
        return read_synth_corpus(recipe.synth, synth_audio_directory(recipe, output), progress)
    if data.corpus == "speechocean762":
        return read_speechocean762(data.root, output / "alignments.jsonl", recipe.synth.workers, progress)
    if data.corpus == "ljspeech":
        return read_ljspeech(data.root, cache=output / "alignments.jsonl", workers=recipe.synth.workers,
                             progress=progress)
    if data.corpus == "asterisk":
        return read_asterisk_prompts(data.root or ASTERISK_SOUNDS, data.transcripts or ASTERISK_TRANSCRIPTS,
                                     output / "alignments.jsonl", recipe.synth.workers, progress)
    if data.corpus == "timit":
        return read_timit(data.root)
    if data.corpus == "textgrid":
        return read_textgrid_corpus(data.root, data.textgrid_root, tier=data.tier, symbols=data.symbols)
    return read_htk_lab(data.root, symbols=data.symbols)


def prepare(recipe: Recipe, output: Path | None = None, progress: bool = True) -> list[SplitSummary]:
    data = recipe.data
    output = Path(output or data.output or Path("data") / recipe.name)
    recordings, supervisions = read_corpus(recipe, output, progress)
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

    output.mkdir(parents=True, exist_ok=True)
    summaries = []
    for split in SPLITS:
        chosen = supervisions.filter(lambda s: split_of(s) == split)
        ids = {s.recording_id for s in chosen}
        chosen_recordings = recordings.filter(lambda r: r.id in ids)
        recordings_path, supervisions_path = manifest_pair(output / recipe.name, split)
        from speechattn.files import atomic_path

        with atomic_path(recordings_path) as temporary:
            chosen_recordings.to_file(temporary)
        with atomic_path(supervisions_path) as temporary:
            chosen.to_file(temporary)
        summaries.append(SplitSummary(split, len(chosen), len({s.speaker for s in chosen}),
                                      sum(s.duration for s in chosen) / 3600))
    return summaries
