"""Recipes: YAML files in recipes/, validated on load, overridable with --set section.key=value.

A recipe is a mapping of sections.  `data` says which corpus to prepare and how to split it;
every key is checked (unknown key, wrong type, missing directory) with the key and file named.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from speechattn.config import checked_fields
from speechattn.data.augment import AugmentConfig
from speechattn.data.prepare import DataConfig, check_data
from speechattn.errors import ConfigError
from speechattn.files import read_bounded
from speechattn.model.encoder import ModelConfig
from speechattn.data.synth import SynthConfig

MAX_RECIPE_BYTES = 16_000_000  # a recipe is a page of YAML: a huge file is not read whole


@dataclass(frozen=True)
class TrainConfig:
    sets: tuple[str, ...] = ("",)  # manifest prefixes DIR/NAME (NAME_{recordings,supervisions}_{split}.jsonl.gz); "" = this recipe's
    batch_size: int = 16
    crop_seconds: float = 4.0  # training crops; dev utterances are whole
    max_steps: int = 20000
    learning_rate: float = 1e-3
    warmup_steps: int = 1000
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    label_smoothing: float = 0.1
    full_context_share: float = 0.2  # share of batches trained at full context; the rest draw a chunk size
    chunk_weights: tuple[float, ...] = ()  # relative odds of model.chunk_frames_choices for those draws; () = equal
    distill_weight: float = 0.0  # in-place distillation: on chunked batches, this share of the loss is the KL
    # divergence from the same model's full-context output on the same batch (no gradient through it); 0 = off
    distill_phases: bool = False  # that teacher averages the full-context posteriors of the crop at all S phases
    # (the crop and the same crop 1 .. S - 1 frames later, aligned; unaugmented): S forwards without gradient
    teacher: str | None = None  # distil from this other model instead ("default" or a checkpoint path; any size,
    # subsampling and output delay): its full-context output on the unaugmented crop, on every batch
    phase_consistency: float = 0.0  # on chunked batches, this weight times the symmetric KL divergence between the
    # outputs for the crop and for the crop 1 .. S - 1 frames later (S = model.frame_subsampling; silence before
    # it, unaugmented), aligned: pulls the labels toward not depending on the 10 ms phase; 0 = off; one process
    level_blind: bool = False  # keep the input projection's weights off the direction a change of input gain moves
    # the log-mel features in (PhoneTagger.blind_to_level, after every step): the same labels at any input level by
    # construction, at no cost in the graph; log-mel only, and exact with model.frontend.log_floor 1.0e-16
    eval_every: int = 1000
    checkpoint_every: int = 500
    normalization_items: int = 200  # training utterances the feature mean/std are computed from
    augment: bool = True
    loader_workers: int = 2  # data loading and augmentation processes
    audio_cache: str = "data/audio-cache"  # training audio decoded once per data set into this directory ("": decode on every access)
    device: str = "auto"  # auto (the GPU of this process's rank when there is one, else CPU), cpu, cuda
    precision: str = "auto"  # auto (fp32: bf16 autocast measured slower for the default size, bench/gpu_check.py), fp32, bf16, fp16
    final_eval: bool = True  # evaluate best.pt on dev at every chunk size when training ends
    seed: int = 0
    init_from: str | None = None  # start from these weights: "default" (the bundled model) or a checkpoint path

    def __post_init__(self) -> None:
        from speechattn.errors import ConfigError

        if self.batch_size < 1 or self.max_steps < 1 or self.eval_every < 1 or self.checkpoint_every < 1:
            raise ConfigError("train.batch_size, max_steps, eval_every and checkpoint_every must be at least 1")
        if not 0 <= self.full_context_share <= 1 or not 0 <= self.label_smoothing < 1:
            raise ConfigError("train.full_context_share must be in [0, 1] and train.label_smoothing in [0, 1)")
        if not 0 < self.learning_rate <= 1:
            raise ConfigError(f"train.learning_rate must be above 0 and at most 1, not {self.learning_rate}")
        if not 0 < self.grad_clip <= 1e6 or not 0 <= self.weight_decay <= 1:
            raise ConfigError("train.grad_clip must be above 0 and train.weight_decay in [0, 1]")
        if self.crop_seconds is not None and not 0.1 <= self.crop_seconds <= 600:
            raise ConfigError(f"train.crop_seconds must be from 0.1 to 600 s, not {self.crop_seconds}")
        if self.warmup_steps < 0:
            raise ConfigError("train.warmup_steps must be >= 0")
        if not 0 <= self.distill_weight <= 1:
            raise ConfigError(f"train.distill_weight must be in [0, 1], not {self.distill_weight}")
        for key in ("distill_phases", "teacher"):
            if getattr(self, key) and self.distill_weight == 0:
                raise ConfigError(f"train.{key} sets the distillation teacher: it needs train.distill_weight above 0")
        if not 0 <= self.phase_consistency <= 10:
            raise ConfigError(f"train.phase_consistency must be in [0, 10], not {self.phase_consistency}")
        if any(not isinstance(w, (int, float)) or w < 0 for w in self.chunk_weights) or (
                self.chunk_weights and not sum(self.chunk_weights) > 0):
            raise ConfigError("train.chunk_weights must be non-negative numbers with a positive sum")
        for key, low, high in (("batch_size", 1, 4096), ("max_steps", 1, 10**9), ("warmup_steps", 0, 10**9),
                               ("eval_every", 1, 10**9), ("checkpoint_every", 1, 10**9),
                               ("normalization_items", 1, 100_000), ("loader_workers", 0, 64), ("seed", 0, 2**32 - 1)):
            if not low <= getattr(self, key) <= high:
                raise ConfigError(f"train.{key} must be from {low:,} to {high:,}, not {getattr(self, key):,}")
        if self.device not in ("auto", "cpu", "cuda"):
            raise ConfigError(f"train.device must be auto, cpu or cuda, not {self.device!r}")
        if self.precision not in ("auto", "fp32", "bf16", "fp16"):
            raise ConfigError(f"train.precision must be auto, fp32, bf16 or fp16, not {self.precision!r}")


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


def _merge(base: dict, overrides: dict, where: str = "") -> dict:
    merged = dict(base)
    for key, value in overrides.items():
        if isinstance(value, dict):
            existing = merged.get(key)
            if existing is not None and not isinstance(existing, dict):
                raise ConfigError(f"--set {where}{key}.{next(iter(value))}: {where}{key} is a setting, not a section")
            merged[key] = _merge(existing or {}, value, f"{where}{key}.")
        else:
            merged[key] = value
    return merged


def read_yaml(path: Path) -> dict:
    """A YAML mapping; a key given twice in one mapping is an error (plain YAML lets the last one win silently)."""
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
        pass

    def mapping(loader, node, deep=False):
        seen = {}
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=deep)
            if key in seen:
                raise ConfigError(f"{path}:{key_node.start_mark.line + 1}: {key!r} is given twice (first on line "
                                  f"{seen[key]})")
            seen[key] = key_node.start_mark.line + 1
        return loader.construct_mapping(node, deep)

    UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    if not path.exists():
        raise ConfigError(f"{path}: no such recipe (the recipes that come with speechattn: "
                          f"{', '.join(sorted(p.stem for p in packaged_recipes()))})")
    if path.is_dir():
        raise ConfigError(f"{path}: a directory; give a recipe file (.yaml)")
    try:
        text = read_bounded(path, "recipe", MAX_RECIPE_BYTES, ConfigError).decode()  # a FIFO or device: refused
        raw = yaml.load(text, Loader=UniqueKeyLoader) or {}
    except yaml.YAMLError as error:
        problem = str(getattr(error, "problem", "") or error).splitlines()[0]
        raise ConfigError(f"{path}: not valid YAML ({problem})") from None
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply to be a recipe") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a text file") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a recipe is a mapping of sections ({', '.join(SECTIONS)})")
    return raw


def packaged_recipes() -> list[Path]:
    """The recipes that come with speechattn: recipes/ in a checkout, the speechattn_recipes package in a wheel."""
    import importlib.util

    spec = importlib.util.find_spec("speechattn_recipes")
    folders = [Path(p) for p in (spec.submodule_search_locations or [])] if spec else []
    folders.append(Path(__file__).resolve().parent.parent.parent / "recipes")
    return next((sorted(f.glob("*.yaml")) for f in folders if f.is_dir() and any(f.glob("*.yaml"))), [])


def load_recipe(path: str | Path, overrides: dict | None = None) -> Recipe:
    """A recipe file; a bare name that is no file (`tiny`, `default`) is the recipe of that name that comes with
    speechattn."""
    path = Path(path)
    if not path.exists() and path.parent == Path(".") and path.suffix in ("", ".yaml"):
        path = next((p for p in packaged_recipes() if p.stem == path.stem), path)
    raw = read_yaml(path)
    try:
        return recipe_from_mapping(_merge(raw, overrides or {}), path)
    except ConfigError as error:
        if not overrides:
            raise
        try:
            recipe_from_mapping(raw, path)
        except ConfigError as own:
            if str(own) == str(error):  # the file's own mistake, whatever the --set
                raise error from None
        # the mistake is a --set's: the file alone is sound or fails otherwise (say a root a --set would give);
        # it was named as the recipe file's (site-packages/.../tiny.yaml: unknown setting train.max_step)
        raise ConfigError(f"--set: {str(error).removeprefix(f'{path}: ')}") from None


def recipe_as_mapping(recipe: Recipe) -> dict:
    """The fully resolved recipe (every setting, defaults included) as plain data: what a run records."""
    from dataclasses import asdict

    def plain(value):
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return value

    return {name: plain(asdict(getattr(recipe, name))) for name in SECTIONS}


def recipe_from_mapping(raw: dict, path: Path, recipe_name: str | None = None) -> Recipe:
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
    recipe = Recipe(name=recipe_name or path.stem, path=path, **sections)
    check_data(recipe.data, path)
    weights, choices = recipe.train.chunk_weights, recipe.model.chunk_frames_choices
    if weights and len(weights) != len(choices):
        raise ConfigError(f"{path}: train.chunk_weights has {len(weights)} entries; model.chunk_frames_choices "
                          f"{list(choices)} needs one each")
    return recipe
