"""Recipes: YAML files in recipes/, validated on load, overridable with --set section.key=value.

A recipe is a mapping of sections.  `data` says which corpus to prepare and how to split it;
every key is checked (unknown key, wrong type, missing directory) with the key and file named.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .config import checked_fields
from .augment import AugmentConfig
from .errors import ConfigError
from .model import ModelConfig
from .train import TrainConfig
from .synth import SynthConfig

CORPORA = ("synth", "speechocean762", "asterisk", "timit", "textgrid", "htk")


@dataclass(frozen=True)
class DataConfig:
    corpus: str = ""  # one of CORPORA; synth is built here (settings in the synth section)
    root: str | None = None  # the corpus directory (not for synth)
    textgrid_root: str | None = None  # textgrid: where the TextGrids are, mirroring root (default: root)
    tier: str = "phones"  # textgrid: the phone tier's name
    symbols: str = "arpabet"  # textgrid/htk: the labels' phone set: arpabet, timit or festival
    output: str | None = None  # manifest directory (default: data/<recipe name>)
    dev_speakers: float = 0.1  # share of speakers held out for dev
    test_speakers: float = 0.1  # share held out for test (TIMIT: its own TEST part instead)
    only_split: str | None = None  # put every utterance in this split (a dev-only set such as the asterisk prompts)
    transcripts: str | None = None  # asterisk: the prompts' transcript file
    seed: int = 0  # speaker split


@dataclass(frozen=True)
class Recipe:
    name: str
    path: Path
    data: DataConfig
    synth: SynthConfig
    augment: AugmentConfig
    model: ModelConfig
    train: TrainConfig


SECTIONS = {"data": DataConfig, "synth": SynthConfig, "augment": AugmentConfig, "model": ModelConfig,
            "train": TrainConfig}


def _merge(base: dict, overrides: dict) -> dict:
    merged = dict(base)
    for key, value in overrides.items():
        merged[key] = _merge(merged.get(key) or {}, value) if isinstance(value, dict) else value
    return merged


def load_recipe(path: str | Path, overrides: dict | None = None) -> Recipe:
    import yaml

    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{path}: no such recipe")
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML ({error})") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a recipe is a mapping of sections ({', '.join(SECTIONS)})")
    raw = _merge(raw, overrides or {})
    unknown = sorted(set(raw) - set(SECTIONS))
    if unknown:
        raise ConfigError(f"{path}: unknown section(s): {', '.join(unknown)} (known: {', '.join(SECTIONS)})")
    sections = {}
    for name, cls in SECTIONS.items():
        values = raw.get(name) or {}
        if not isinstance(values, dict):
            raise ConfigError(f"{path}: section {name} must be a mapping of settings")
        try:
            if cls is ModelConfig:  # nested (frontend) and checked by the model's own loader
                sections[name] = ModelConfig.from_dict(values, source=str(path))
            else:
                sections[name] = cls(**checked_fields(cls, values, str(path), f"{name}.", what="setting"))
        except ConfigError as error:
            message = str(error)
            raise ConfigError(message if message.startswith(str(path)) else f"{path}: {message}") from None
    recipe = Recipe(name=path.stem, path=path, **sections)
    _check_data(recipe)
    return recipe


def _check_data(recipe: Recipe) -> None:
    data, where = recipe.data, recipe.path
    if data.corpus not in CORPORA:
        raise ConfigError(f"{where}: data.corpus must be one of {', '.join(CORPORA)}, not {data.corpus!r}")
    for key in ("root", "textgrid_root"):
        value = getattr(data, key)
        if key == "root" and not value and data.corpus not in ("synth", "asterisk"):
            raise ConfigError(f"{where}: data.root is required: the {data.corpus} corpus directory")
        if value and not Path(value).is_dir():
            raise ConfigError(f"{where}: data.{key}: no such directory: {value}")
    if data.only_split not in (None, "train", "dev", "test"):
        raise ConfigError(f"{where}: data.only_split must be train, dev or test, not {data.only_split!r}")
    if data.symbols not in ("arpabet", "timit", "festival"):
        raise ConfigError(f"{where}: data.symbols must be arpabet, timit or festival, not {data.symbols!r}")
    for key in ("dev_speakers", "test_speakers"):
        if not 0 <= getattr(data, key) < 1:
            raise ConfigError(f"{where}: data.{key} is a share of speakers, from 0 up to (not including) 1")
    if data.dev_speakers + data.test_speakers >= 1:
        raise ConfigError(f"{where}: data.dev_speakers + data.test_speakers leave no speaker for training")


