"""`speechattn train RECIPE`: train a phone tagger on prepared manifests.

AdamW with linear warm-up and cosine decay, gradient clipping, label smoothing, the attention
chunk size drawn per batch (full context included) so one set of weights serves every chunk size,
SpecAugment, on-the-fly waveform augmentation (augment.py), and optionally in-place distillation (on a
chunked batch, part of the loss pulls the chunked output toward the same model's full-context output).  Every random draw is a function of
(seed, step) or (seed, epoch, item), so a run resumed from its last checkpoint continues exactly
as if it had never stopped.  Checkpoints are written atomically (a kill at any moment leaves a
loadable one): last.pt every `checkpoint_every` steps, best.pt whenever dev frame accuracy improves.
Logs: train.csv (one row per step), dev.csv, and TensorBoard events in tensorboard/.  At the end:
curves.png (learning curves) and an evaluation of best.pt on the dev split at full context and at
every streaming chunk size (eval.json, eval.txt, confusion.png).

On a GPU the model trains in fp32 unless `train.precision` asks for bf16 or fp16 autocast (fp16 with a
gradient scaler); the frontend and evaluation stay in float32/float64.
"""

from __future__ import annotations

import logging

import csv
import math
import os
import time
from pathlib import Path

import numpy as np
import torch

from speechattn.data.manifests import check_manifest_values, manifest_pair
from speechattn.training.recipes import TrainConfig
from speechattn.errors import ConfigError, SpeechattnError, UsageError
from speechattn.audio import HOP_SAMPLES
from speechattn.phones import IGNORE


log = logging.getLogger(__name__)


def load_cuts(prefixes: list[str], split: str, allow_command_sources: bool = False):
    from speechattn.data.dataset import cuts_from_manifests

    cuts = []
    for prefix in prefixes:
        recordings, supervisions = manifest_pair(prefix, split)
        if not supervisions.exists():
            raise SpeechattnError(f"{supervisions}: no such manifest; run `speechattn prepare` first")
        for manifest in (supervisions, recordings):
            check_manifest_values(manifest)
        cuts += list(cuts_from_manifests(recordings, supervisions, allow_command_sources))
    return cuts


def frame_loss(log_probs: torch.Tensor, labels: torch.Tensor, smoothing: float) -> tuple[torch.Tensor, int, int]:
    """Label-smoothed NLL over the labelled frames; returns (loss, correct frames, labelled frames)."""
    mask = labels != IGNORE
    picked = log_probs.gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)  # (B, T)
    per_frame = -(1 - smoothing) * picked - smoothing * log_probs.mean(-1)
    count = int(mask.sum())
    loss = (per_frame * mask).sum() / max(count, 1)
    correct = int(((log_probs.argmax(-1) == labels) & mask).sum())
    return loss, correct, count


def delayed_labels(labels: torch.Tensor, delay_frames: int) -> torch.Tensor:
    """labels (B, T) -> the targets of a model with an output delay R: output t learns frame t - R's label; the
    first R outputs (before the audio) learn nothing."""
    if delay_frames == 0:
        return labels
    R = min(delay_frames, labels.shape[1])
    return torch.cat([labels.new_full((labels.shape[0], R), IGNORE), labels[:, : labels.shape[1] - R]], dim=1)


def distillation_loss(student: torch.Tensor, teacher: torch.Tensor, lengths: torch.Tensor,
                      first: int = 0) -> torch.Tensor:
    """KL(teacher || student) per frame, averaged over the real frames (first <= t < length) of the batch.

    student, teacher (B, T, classes) log-probabilities; every frame counts, labelled or not (the teacher has an
    opinion on the frames pseudo-labelling left out)."""
    t = torch.arange(student.shape[1], device=student.device)[None, :]
    valid = (t < lengths[:, None]) & (t >= first)  # (B, T)
    per_frame = (teacher.exp() * (teacher - student)).sum(-1)  # (B, T)
    return (per_frame * valid).sum() / valid.sum().clamp(min=1)


def learning_rate_factor(step: int, config: TrainConfig) -> float:
    """Linear warm-up to 1, then cosine decay to 0.05 at max_steps."""
    if step < config.warmup_steps:
        return (step + 1) / config.warmup_steps
    progress = (step - config.warmup_steps) / max(1, config.max_steps - config.warmup_steps)
    return 0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))


def batches_of_epoch(size: int, batch_size: int, seed: int, epoch: int) -> list[list[int]]:
    order = np.random.default_rng([seed, epoch]).permutation(size)
    return [order[i : i + batch_size].tolist() for i in range(0, size - batch_size + 1, batch_size)] or [order.tolist()]


def choose_device(config: TrainConfig) -> tuple[torch.device, torch.dtype | None]:
    """(device, autocast dtype or None) for this process."""
    if config.device == "cuda" and not torch.cuda.is_available():
        raise SpeechattnError("train.device is cuda but torch sees no GPU (a CPU build of torch, or no driver)")
    if config.device == "cpu" or not torch.cuda.is_available():
        if config.precision in ("bf16", "fp16"):
            raise SpeechattnError(f"train.precision {config.precision} needs a GPU; use fp32 or auto on CPU")
        return torch.device("cpu"), None
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if local_rank >= torch.cuda.device_count():
        raise SpeechattnError(f"process {local_rank} of this machine needs GPU {local_rank}, and torch sees "
                              f"{torch.cuda.device_count()}: start at most that many processes per machine "
                              "(torchrun --nproc_per_node), or train on the CPU (--set train.device=cpu)")
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    if config.precision == "bf16" and not torch.cuda.is_bf16_supported():
        raise SpeechattnError("train.precision bf16: this GPU has no bfloat16; use fp16 or fp32")
    # auto is fp32 on GPUs too: a model of the default size is too small for autocast to pay (on an H100,
    # bench/gpu_check.py: 37.9 ms per step in fp32 against 43.0 ms under bf16 autocast, batch 16 x 4 s)
    precision = "fp32" if config.precision == "auto" else config.precision
    return device, {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}[precision]


def evaluate(model, cuts, chunk_frames: int | None) -> tuple[float, float]:
    """(frame accuracy, PER) on whole `cuts`, no augmentation (evaluate.py has the definitions)."""
    from speechattn.training.evaluate import evaluate_checkpoint

    score = evaluate_checkpoint(model, cuts, [chunk_frames])[0]
    return score.frame_accuracy, score.phone_error_rate


def plot_curves(out: Path) -> None:
    """curves.png: training loss and frame accuracy (smoothed) and dev frame accuracy and PER by step."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    train_rows = list(csv.DictReader(open(out / "train.csv")))
    dev_rows = list(csv.DictReader(open(out / "dev.csv")))
    if not train_rows:
        return
    steps = np.array([int(r["step"]) for r in train_rows])
    window = max(1, len(steps) // 50)

    def smooth(values):
        values = np.asarray(values, dtype=float)
        return np.convolve(values, np.ones(window) / window, mode="valid")

    figure, (loss_axis, accuracy_axis) = plt.subplots(1, 2, figsize=(12, 4.5))
    loss_axis.plot(steps[window - 1 :], smooth([float(r["loss"]) for r in train_rows]), label="train loss")
    loss_axis.set_xlabel("step")
    loss_axis.set_ylabel(f"loss (label-smoothed, mean of {window} steps)")
    loss_axis.grid(alpha=0.3)
    accuracy_axis.plot(steps[window - 1 :], smooth([100 * float(r["frame_accuracy"]) for r in train_rows]),
                       label="train frame accuracy (augmented crops)", alpha=0.7)
    if dev_rows:
        dev_steps = [int(r["step"]) for r in dev_rows]
        accuracy_axis.plot(dev_steps, [100 * float(r["dev_frame_accuracy"]) for r in dev_rows], "o-",
                           label=f"dev frame accuracy (chunk {dev_rows[0]['chunk_frames']})")
        if "dev_per" in dev_rows[0]:
            accuracy_axis.plot(dev_steps, [100 * float(r["dev_per"]) for r in dev_rows], "s--", label="dev PER")
    accuracy_axis.set_xlabel("step")
    accuracy_axis.set_ylabel("%")
    accuracy_axis.grid(alpha=0.3)
    accuracy_axis.legend()
    figure.suptitle(out.name)
    figure.tight_layout()
    from speechattn.files import atomic_path

    with atomic_path(out / "curves.png") as temporary:
        figure.savefig(temporary, dpi=100)
    plt.close(figure)


def final_evaluation(best_path: Path, dev_cuts, out: Path, progress: bool) -> str:
    """Evaluate best.pt on dev at full context and every chunk size; write eval.json, eval.txt, confusion.png."""
    from speechattn.training.evaluate import evaluate_checkpoint, format_table, plot_confusion, write_json
    from speechattn.model.encoder import load

    model = load(best_path)
    chunks = [None, *model.config.chunk_frames_choices]
    scores = evaluate_checkpoint(model, dev_cuts, chunks, progress=progress)
    table = format_table(scores)
    (out / "eval.txt").write_text(f"{best_path} on the dev split ({len(dev_cuts)} utterances)\n{table}\n")
    write_json(scores, out / "eval.json", model=str(best_path), data="dev split")
    default = next(s for s in scores if s.chunk_frames == model.config.default_chunk_frames)
    plot_confusion(default, out / "confusion.png")
    return table


def normalisation_statistics(model, dataset, items: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    chosen = np.random.default_rng(seed).permutation(len(dataset))[:items]
    with torch.no_grad():
        features = torch.cat([model.frontend(torch.from_numpy(dataset.audio.segment(int(i)))[None])[0]
                              for i in chosen])
    return features.mean(0), features.std(0)


def config_differences(ours: dict, theirs: dict, prefix: str = "") -> list[str]:
    """Keys (dotted) whose values differ between two nested config dicts."""
    differing = []
    for key in sorted(set(ours) | set(theirs)):
        a, b = ours.get(key), theirs.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            differing += config_differences(a, b, f"{prefix}{key}.")
        elif (list(a) if isinstance(a, (list, tuple)) else a) != (list(b) if isinstance(b, (list, tuple)) else b):
            differing.append(f"{prefix}{key} ({b!r} there, {a!r} here)")
    return differing


def checkpoint_source(source: str) -> Path:
    """The checkpoint a recipe or command names: "default" is the bundled one, anything else a path."""
    from speechattn.runtime.transcribe import CHECKPOINTS_DIR

    return CHECKPOINTS_DIR / "default.pt" if source == "default" else Path(source)


def initial_weights(source: str, config, quiet: bool = False):
    """The model to fine-tune: `source` is "default" (the bundled checkpoint) or a checkpoint path; its
    architecture must equal the recipe's (dropout aside), its normalisation statistics are kept.  A different
    left context is the one difference taken: the weights do not depend on it, only the relative-bias tables'
    length does (`with_left_context`), so the recipe's is used and the change is logged.  Fewer layers than the
    checkpoint's is another: the recipe's model keeps evenly spaced layers of it (`with_num_layers`), to train a
    smaller model on from a larger one; the output delay, default chunk size and primed start are the recipe's."""
    from speechattn.model.encoder import CheckpointError, kept_layers, load, with_chunk_frames, with_left_context, \
        with_num_layers

    path = checkpoint_source(source)
    model = load(path)
    differing = [d for d in config_differences(config.to_dict(), model.config.to_dict()) if not d.startswith("dropout")]
    adaptable = [d for d in differing if d.startswith(("left_context_frames", "output_delay_frames", "default_chunk_frames",
                                                       "chunk_frames_choices",
                                                       "primed_start", "frontend.level_", "frontend.log_floor"))
                 or (d.startswith("num_layers") and config.num_layers < model.config.num_layers)]
    if len(adaptable) < len(differing):  # what blocks it first; what would be taken from the recipe after
        blocking = [d for d in differing if d not in adaptable]
        taken = f" (these differ as well but would be the recipe's: {'; '.join(adaptable)})" if adaptable else ""
        raise CheckpointError(f"{path}: cannot start from it, its model differs from the recipe's in "
                              + "; ".join(blocking) + taken)
    if config.num_layers < model.config.num_layers:
        if not quiet:
            log.info("%s: %d layers there, %d in the recipe: it starts from layers %s", path, model.config.num_layers,
                     config.num_layers, kept_layers(model.config.num_layers, config.num_layers))
        model = with_num_layers(model, config.num_layers)
    if model.config.left_context_frames != config.left_context_frames:
        if not quiet:
            log.info("%s: left context %d frames there, %d in the recipe: its relative-position biases are fitted to "
                     "the recipe's", path, model.config.left_context_frames, config.left_context_frames)
        model = with_left_context(model, config.left_context_frames)
    if tuple(model.config.chunk_frames_choices) != tuple(config.chunk_frames_choices):
        if not quiet:
            log.info("%s: chunks %s there, %s in the recipe: its relative-position biases are fitted to the recipe's "
                     "(far offsets as full context sees them)", path, list(model.config.chunk_frames_choices),
                     list(config.chunk_frames_choices))
        model = with_chunk_frames(model, config.chunk_frames_choices, config.default_chunk_frames)
    from dataclasses import replace

    # the output delay and the default chunk are no part of the weights (a model learns a delay by training on it),
    # nor is level normalisation (frontend.level_*) or the log floor, which the model learns to read by training
    level = {k: v for k, v in vars(config.frontend).items() if k.startswith("level_") or k == "log_floor"}
    tuned = type(model)(replace(model.config, dropout=config.dropout, output_delay_frames=config.output_delay_frames,
                                default_chunk_frames=config.default_chunk_frames, primed_start=config.primed_start,
                                frontend=replace(model.config.frontend, **level)))
    tuned.load_state_dict(model.state_dict())
    return tuned


def distributed() -> tuple[int, int]:
    """(rank, world size); under torchrun, joins the process group (NCCL on GPUs, gloo on CPUs)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1 and not torch.distributed.is_initialized():
        torch.distributed.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    return (torch.distributed.get_rank() if world > 1 else 0), world


PRIME_EVERY = 100  # steps between recomputing a primed_start model's silence caches
RUN_FILES = ("last.pt", "best.pt", "train.csv", "dev.csv")
LOG_HEADERS = {"train.csv": "step,loss,frame_accuracy,learning_rate,chunk_frames,seconds",
               "dev.csv": "step,dev_frame_accuracy,dev_per,chunk_frames"}
# settings a resumed run may take from the recipe given now instead of the one it recorded
RESUME_MAY_CHANGE = ("train.max_steps", "train.eval_every", "train.checkpoint_every", "train.final_eval",
                     "train.loader_workers", "train.device")


class RunDirectory:
    """The run directory, held by one training at a time: an exclusive lock (fcntl) on OUT/.lock, which the
    kernel releases when the process ends however it ends.  A lock file left by a process that no longer
    runs is reported as a crashed run and taken over."""

    def __init__(self, out: Path, rank: int) -> None:
        self.out, self.rank, self.handle, self.created = out, rank, None, False

    def __enter__(self) -> "RunDirectory":
        if self.rank != 0:
            return self
        import fcntl

        try:
            self.created = not self.out.exists()
            self.out.mkdir(parents=True, exist_ok=True)
            lock = self.out / ".lock"
            self.handle = open(lock, "a+")
        except OSError as error:
            raise SpeechattnError(f"{self.out}: cannot use as a run directory ({error.strerror})") from None
        try:
            fcntl.flock(self.handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.handle.seek(0)
            holder = self.handle.read().strip() or "another process"
            self.handle.close()
            raise SpeechattnError(f"{self.out}: another training ({holder}) is writing to this run directory; "
                                  "wait for it or use another --out") from None
        self.handle.seek(0)
        previous = self.handle.read().strip()
        if previous:
            log.warning("%s: the run before (%s) ended without releasing its lock (crashed or killed); taking over",
                        self.out, previous)
        self.handle.seek(0)
        self.handle.truncate()
        self.handle.write(f"pid {os.getpid()} on {os.uname().nodename}")
        self.handle.flush()
        return self

    def __exit__(self, kind, *exc) -> None:
        if self.handle is not None:
            self.handle.seek(0)
            self.handle.truncate()  # an empty lock file: released cleanly
            self.handle.close()
            if kind is not None and self.created and [p.name for p in self.out.iterdir()] == [".lock"]:
                (self.out / ".lock").unlink()  # refused before it wrote anything: leave nothing behind
                self.out.rmdir()

    def earlier_run(self) -> list[str]:
        return [name for name in RUN_FILES if (self.out / name).exists()]


def recorded_recipe(out: Path, given):
    """The recipe a run recorded when it started (OUT/recipe.yaml), so that a YAML edited since cannot change a
    resumed run silently.  Settings that differ in the recipe given now are refused, naming them, except the
    schedule-length and logging settings of RESUME_MAY_CHANGE, which are taken from the recipe given now."""
    from dataclasses import replace

    from speechattn.training.recipes import recipe_as_mapping, recipe_from_mapping, read_yaml

    record = out / "recipe.yaml"
    if not record.exists():
        log.warning("%s records no recipe (a run from an older version): resuming with %s as given", out, given.path)
        return given
    recipe = recipe_from_mapping(read_yaml(record), record, recipe_name=given.name)
    differing = config_differences(recipe_as_mapping(given), recipe_as_mapping(recipe))
    refused = [d for d in differing if not d.startswith(RESUME_MAY_CHANGE)]
    if refused:
        raise UsageError(f"{out}: this run was started with other settings than {given.path} has now: "
                              + "; ".join(refused) + ". Resume with the recipe it started with, or start a new run")
    changes = {d.split(" ")[0].removeprefix("train."): getattr(given.train, d.split(" ")[0].removeprefix("train."))
               for d in differing}
    if changes:
        log.info("resuming with %s from %s", ", ".join(f"{k}={v}" for k, v in changes.items()), given.path)
        recipe = replace(recipe, train=replace(recipe.train, **changes))
    return recipe


def check_resumable(last: Path) -> None:
    """A last.pt that training wrote (weights, optimizer, step), or one line saying what it is instead."""
    from speechattn.model.encoder import load

    if not last.exists():
        return
    load(last)  # a readable speechattn checkpoint at all
    payload = torch.load(last, map_location="cpu", weights_only=True)
    if "optimizer" not in payload or "step" not in payload:
        raise UsageError(f"{last}: not a training checkpoint (written by `speechattn init`?); to start "
                              "from its weights use --init-from, not --resume")


def write_recipe(out: Path, recipe) -> None:
    import yaml

    from speechattn.training.recipes import recipe_as_mapping

    text = f"# the fully resolved recipe of this run (from {recipe.path}); --resume reads it back\n"
    (out / "recipe.yaml").write_text(text + yaml.safe_dump(recipe_as_mapping(recipe), sort_keys=False))


class Trainer:
    """One training run, in named pieces around a flat loop (see `train`): data, model and optimizer set-up,
    one optimisation step, logging, evaluation and checkpoints."""

    def __init__(self, recipe, out: Path, resume: bool, progress: bool, allow_command_sources: bool) -> None:
        self.recipe, self.config, self.out = recipe, recipe.train, out
        self.rank, self.world = distributed()
        if self.world > 1 and self.config.phase_consistency:
            raise ConfigError("train.phase_consistency runs a second forward pass before the backward one, which "
                              "DistributedDataParallel does not take: train it in one process")
        self.device, self.autocast_dtype = choose_device(self.config)
        self.progress = progress and self.rank == 0
        self._data(allow_command_sources)
        self._model(resume)
        self.started = time.perf_counter()

    # -- set-up ------------------------------------------------------------------------------------------
    def _data(self, allow_command_sources: bool) -> None:
        from speechattn.data.dataset import AudioStore, FrameLabelDataset

        recipe, config = self.recipe, self.config
        prefixes = [prefix or str(Path(recipe.data.output or Path("data") / recipe.name) / recipe.name)
                    for prefix in config.sets]
        if any(not manifest_pair(p, "train")[1].exists() for p in prefixes) and config.sets == ("",):
            from speechattn.data.prepare import prepare

            if self.rank == 0:
                prepare(recipe, progress=self.progress)
            if self.world > 1:
                torch.distributed.barrier()
        # a set listed twice weighs twice in training; dev counts each utterance once
        self.train_cuts = load_cuts(prefixes, "train", allow_command_sources)
        if not self.train_cuts:
            raise SpeechattnError(f"{', '.join(dict.fromkeys(prefixes))}: no training utterances")
        self.dev_cuts = load_cuts(list(dict.fromkeys(prefixes)), "dev", allow_command_sources)
        if not self.dev_cuts and self.rank == 0:
            log.warning("no dev data in %s: best.pt follows nothing and no dev figures are written",
                        ", ".join(dict.fromkeys(prefixes)))
        store = None
        if config.audio_cache:
            if self.rank == 0:
                store = AudioStore(self.train_cuts, config.audio_cache, progress=self.progress)
            if self.world > 1:
                torch.distributed.barrier()  # rank 0 decodes; the others open what it wrote
            store = store or AudioStore(self.train_cuts, config.audio_cache)
        self.dataset = FrameLabelDataset(self.train_cuts, augment=self.recipe.augment if config.augment else None,
                                         crop_seconds=config.crop_seconds, seed=config.seed, store=store)
        self.per_epoch = len(batches_of_epoch(len(self.dataset), config.batch_size, config.seed, 0))

    def _model(self, resume: bool) -> None:
        from speechattn.model.encoder import PhoneTagger, load

        config, last = self.config, self.out / "last.pt"
        self.step, self.best, payload = 0, -1.0, None
        if resume and last.exists():  # train() has checked it is a training checkpoint (check_resumable)
            payload = torch.load(last, map_location="cpu", weights_only=True)
            model = load(last).train()
            self.step, self.best = payload["step"], payload["best_dev_accuracy"]
        else:
            if resume:
                log.warning("no checkpoint in %s to resume from: starting afresh", self.out)
            torch.manual_seed(config.seed)
            if config.init_from:
                model = initial_weights(config.init_from, self.recipe.model).train()
            else:
                model = PhoneTagger(self.recipe.model)
                model.frontend.set_normalization(*normalisation_statistics(
                    model, self.dataset, config.normalization_items, config.seed))
        if config.level_blind:
            model.blind_to_level()
        self.model = model.to(self.device)
        self.teacher = self._teacher()
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate,
                                           weight_decay=config.weight_decay)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lambda s: learning_rate_factor(s, config))
        if payload is not None:
            self.optimizer.load_state_dict(payload["optimizer"])
            self.scheduler.load_state_dict(payload["scheduler"])
        self.scaler = torch.amp.GradScaler("cuda", enabled=self.autocast_dtype == torch.float16)
        self.network = model
        if self.world > 1:
            self.network = torch.nn.parallel.DistributedDataParallel(
                model, device_ids=[self.device] if self.device.type == "cuda" else None)

    def _teacher(self):
        """`train.teacher` loaded, frozen and in eval mode (None without one)."""
        from speechattn.model.encoder import CheckpointError, load

        if not self.config.teacher:
            return None
        path = checkpoint_source(self.config.teacher)
        teacher = load(path)
        if teacher.config.num_classes != self.recipe.model.num_classes:
            raise CheckpointError(f"{path}: cannot teach this model: it has {teacher.config.num_classes} output "
                                  f"classes, the recipe's model {self.recipe.model.num_classes}")
        log.info("distilling from %s (%s parameters, output delay %d)", path, f"{teacher.num_parameters():,}",
                 teacher.config.output_delay_frames)
        return teacher.to(self.device).eval().requires_grad_(False).prime()

    # -- one step ----------------------------------------------------------------------------------------
    def train_step(self, audio, labels, lengths) -> tuple[float, float, int | None]:
        """One optimisation step; returns (loss, frame accuracy, chunk size or None for full context)."""
        from speechattn.data.augment import spec_augment

        config, step, rank = self.config, self.step, self.rank
        audio, labels, lengths = audio.to(self.device), labels.to(self.device), lengths.to(self.device)
        rng = np.random.default_rng([config.seed, step])
        choices = self.recipe.model.chunk_frames_choices
        odds = np.asarray(config.chunk_weights, dtype=np.float64) if config.chunk_weights else None
        chunk = None if rng.random() < config.full_context_share else int(
            rng.choice(choices, p=None if odds is None else odds / odds.sum()))
        torch.manual_seed(config.seed * 1_000_003 + step * 7919 + rank)  # dropout, reproducible on resume
        if self.model.config.primed_start and (step % PRIME_EVERY == 0 or not self.model.primed):
            self.model.prime()  # the silence caches follow the weights (constants in between: no gradient)
        self.model.train()
        with torch.no_grad():
            features = self.model.frontend(audio)
            if config.augment:
                generator = torch.Generator().manual_seed(step * 7919 + rank)
                features = spec_augment(features.cpu(), lengths.cpu(), generator, self.recipe.augment).to(self.device)
        dtype = self.autocast_dtype
        with torch.autocast(self.device.type, dtype=dtype or torch.float32, enabled=dtype is not None):
            log_probs = self.network(features, lengths, chunk)
            teacher = None
            if config.distill_weight > 0 and (chunk is not None or self.teacher is not None):
                with torch.no_grad():  # the unwrapped model: DDP has nothing to reduce for a forward without grad
                    teacher, first, known = self.teacher_output(audio, features, lengths, log_probs.shape[1])
            shifted = None
            S = self.recipe.model.frame_subsampling
            if chunk is not None and config.phase_consistency > 0 and S > 1:  # the same crop k frames later
                k = int(rng.integers(1, S))
                shifted = self.later_output(self.network, self.model.frontend, audio, lengths, k, log_probs.shape[1],
                                            chunk)
        log_probs = log_probs.float()
        labels = delayed_labels(labels, self.recipe.model.output_delay_frames)
        loss, correct, count = frame_loss(log_probs, labels, config.label_smoothing)
        if teacher is not None:
            loss = ((1 - config.distill_weight) * loss
                    + config.distill_weight * distillation_loss(log_probs, teacher, known, first))
        if shifted is not None:  # each output pulled toward the other's
            loss = loss + config.phase_consistency * 0.5 * (distillation_loss(log_probs, shifted.detach(), lengths)
                                                            + distillation_loss(shifted, log_probs.detach(), lengths))
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), config.grad_clip)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        if config.level_blind:
            self.model.blind_to_level()
        self.scheduler.step()
        self.step += 1
        return loss.item(), correct / max(count, 1), chunk

    def teacher_output(self, audio, features, lengths, T: int) -> tuple[torch.Tensor, int, torch.Tensor]:
        """The distillation target for the student's T outputs: (log-posteriors (B, T, classes), first, lengths),
        the target existing for outputs first <= t < lengths.  The teacher is this model at full context on the
        same features, or `train.teacher` on the unaugmented audio through its own frontend, its outputs moved
        by the difference of the two output delays; one phase, or the S phases averaged (`train.distill_phases`).
        Call without gradient."""
        teacher = self.teacher or self.model
        if self.config.distill_phases:
            output = self.phase_ensemble(teacher, audio, lengths, T)
        elif self.teacher is None:
            output = self.model(features, lengths, None).float()
        else:  # phase 0 of the separate teacher: its own frontend on the audio
            output = self.later_output(teacher, teacher.frontend, audio, lengths, 0, T, None)
        # frame f is labelled by the student's output f + R and the teacher's f + R': student t <-> teacher t + shift
        shift = teacher.config.output_delay_frames - self.model.config.output_delay_frames
        if shift > 0:  # the teacher's last `shift` outputs for the crop's end lie past it
            return torch.nn.functional.pad(output[:, shift:], (0, 0, 0, shift)), 0, lengths - shift
        if shift < 0:  # the student's first -shift outputs label frames before the crop
            return torch.nn.functional.pad(output[:, : T + shift], (0, 0, -shift, 0)), -shift, lengths
        return output, 0, lengths

    def phase_ensemble(self, model, audio: torch.Tensor, lengths: torch.Tensor, T: int) -> torch.Tensor:
        """model's full-context log-posteriors (B, T, classes) of the crop averaged over its S phases of frame
        subsampling: the crop and the same crop k = 1 .. S - 1 frames later (silence before it), each output
        aligned back to its frame.  Unaugmented audio; call without gradient."""
        S = model.config.frame_subsampling
        phases = [self.later_output(model, model.frontend, audio, lengths, k, T, None)
                  for k in range(S)]  # S x (B, T, classes)
        return torch.logsumexp(torch.stack(phases), dim=0) - math.log(S)  # log of the mean posterior

    @staticmethod
    def later_output(network, frontend, audio, lengths, k: int, T: int, chunk: int | None) -> torch.Tensor:
        """network's output (B, T, classes) for the crop k frames later (k hops of silence before it, no
        SpecAugment, features from `frontend`), aligned back to the crop's frames."""
        with torch.no_grad():
            later = frontend(torch.nn.functional.pad(audio, (k * HOP_SAMPLES, 0)))
        return network(later, lengths + k, chunk)[:, k : k + T].float()

    def batches(self):
        """The remaining batches, epoch after epoch, from exactly where `step` stands: one loader for the run, its
        batches naming their epoch ((epoch, index) items), so the worker processes start once.  A loader per epoch
        started them anew every epoch: on a GPU with a small data set that stall was two thirds of the time
        (bench/gpu_check.py's notes in the README)."""
        from speechattn.data.dataset import collate

        config = self.config

        def plan():
            epoch, position = divmod(self.step, self.per_epoch)
            while True:
                for batch in batches_of_epoch(len(self.dataset), config.batch_size, config.seed, epoch)[position:]:
                    yield [(epoch, index) for index in batch[self.rank :: self.world]]
                epoch, position = epoch + 1, 0

        yield from torch.utils.data.DataLoader(self.dataset, batch_sampler=plan(), collate_fn=collate,
                                               num_workers=config.loader_workers)

    # -- logs, evaluation, checkpoints -------------------------------------------------------------------
    def open_logs(self, resume: bool) -> None:
        """Start the CSV logs; on resume, rows written after the checkpoint resumed from are redone: drop them."""
        self.board = None
        if self.rank != 0:
            self.train_log, self.dev_log = open(os.devnull, "w"), open(os.devnull, "w")
        else:
            for name, header in LOG_HEADERS.items():
                path = self.out / name
                lines = path.read_text().splitlines() if resume and self.step and path.exists() else []
                kept = [line for line in lines if line and line[0].isdigit() and int(line.split(",")[0]) <= self.step]
                path.write_text("\n".join([header, *kept]) + "\n")
            self.train_log, self.dev_log = open(self.out / "train.csv", "a"), open(self.out / "dev.csv", "a")
            try:
                from torch.utils.tensorboard import SummaryWriter

                self.board = SummaryWriter(str(self.out / "tensorboard"), purge_step=self.step + 1 if self.step else None)
            except ImportError:  # tensorboard is a dependency; a trimmed install still trains
                pass
        self.train_writer, self.dev_writer = csv.writer(self.train_log), csv.writer(self.dev_log)

    def close_logs(self) -> None:
        self.train_log.close()
        self.dev_log.close()
        if self.board is not None:
            self.board.close()

    def log_step(self, loss: float, accuracy: float, chunk: int | None) -> None:
        rate = self.scheduler.get_last_lr()[0]
        self.train_writer.writerow([self.step, f"{loss:.5f}", f"{accuracy:.4f}", f"{rate:.3e}", chunk or 0,
                                    f"{time.perf_counter() - self.started:.1f}"])
        if self.step % 10 == 0:
            self.train_log.flush()  # so that a run can be watched with tail -f
        if self.board is not None:
            self.board.add_scalar("train/loss", loss, self.step)
            self.board.add_scalar("train/frame_accuracy", accuracy, self.step)
            self.board.add_scalar("train/learning_rate", rate, self.step)

    def checkpoint(self, path: Path) -> None:
        from speechattn.model.encoder import save_checkpoint
        from speechattn.training.recipes import recipe_as_mapping

        save_checkpoint(self.model, path, step=self.step, best_dev_accuracy=self.best,
                        optimizer=self.optimizer.state_dict(), scheduler=self.scheduler.state_dict(),
                        recipe=recipe_as_mapping(self.recipe), recipe_path=str(self.recipe.path))

    def evaluate_and_checkpoint(self) -> None:
        config, chunk = self.config, self.recipe.model.default_chunk_frames
        if (self.step % config.eval_every == 0 or self.step == config.max_steps) and self.dev_cuts:
            accuracy, per = evaluate(self.model, self.dev_cuts, chunk)
            self.dev_writer.writerow([self.step, f"{accuracy:.4f}", f"{per:.4f}", chunk])
            self.dev_log.flush()
            if self.board is not None:
                self.board.add_scalar("dev/frame_accuracy", accuracy, self.step)
                self.board.add_scalar("dev/per", per, self.step)
                self.board.flush()
            if accuracy > self.best:
                self.best = accuracy
                self.checkpoint(self.out / "best.pt")
        if self.step % config.checkpoint_every == 0 or self.step == config.max_steps:
            self.train_log.flush()
            self.checkpoint(self.out / "last.pt")

    def finish(self) -> str | None:
        """curves.png, and an evaluation of best.pt on dev at every chunk size."""
        plot_curves(self.out)
        best = self.out / "best.pt"
        if self.config.final_eval and self.dev_cuts and best.exists():
            return final_evaluation(best, self.dev_cuts, self.out, self.progress)
        return None


class ProgressLine:
    """Off a terminal (a log file, CI) tqdm is off: one log line every `every_seconds` instead, with the rate and
    the time left, so a long run never looks stalled."""

    def __init__(self, first_step: int, total: int, enabled: bool, every_seconds: float = 30.0) -> None:
        self.first, self.total, self.enabled, self.every = first_step, total, enabled, every_seconds
        self.started = self.last = time.monotonic()

    def update(self, step: int, loss: float, accuracy: float) -> None:
        now = time.monotonic()
        if not self.enabled or (now - self.last < self.every and step < self.total):
            return
        self.last = now
        per_step = (now - self.started) / max(step - self.first, 1)
        left = per_step * (self.total - step)
        log.info("step %d/%d  loss %.3f  frame accuracy %.3f  %.2f s/step  %d min %02d s left", step, self.total,
                 loss, accuracy, per_step, left // 60, left % 60)


def train(recipe, out: Path, resume: bool = False, progress: bool = True, overwrite: bool = False,
          allow_command_sources: bool = False) -> dict:
    """Train; under torchrun each of the N processes takes every N-th item of each batch, gradients are
    averaged by DistributedDataParallel, and rank 0 alone evaluates, logs and writes checkpoints.

    The run directory is locked while training; an earlier run in it is continued only with `resume` and
    replaced only with `overwrite`.  The fully resolved recipe is recorded there (recipe.yaml) and in every
    checkpoint, and a resumed run takes its settings from that record."""
    from tqdm import tqdm

    out = Path(out)
    rank = int(os.environ.get("RANK", "0"))
    with RunDirectory(out, rank) as run:
        earlier = run.earlier_run()
        if resume and (earlier or (out / "recipe.yaml").exists()):
            check_resumable(out / "last.pt")
            recipe = recorded_recipe(out, recipe)
        elif earlier and not overwrite and rank == 0:
            raise UsageError(f"{out} holds an earlier run ({', '.join(earlier)}): --resume continues it, "
                                  "--overwrite replaces it, or choose another --out")
        if recipe.train.init_from and not (resume and earlier):
            initial_weights(recipe.train.init_from, recipe.model, quiet=True)  # refuses another model before any work
        if rank == 0:
            log.info("%s: loading data and the model into %s ...", recipe.name, out)
        trainer = Trainer(recipe, out, resume, progress, allow_command_sources)
        if rank == 0:
            if not resume:
                for name in (*RUN_FILES, "eval.txt", "eval.json", "confusion.png", "curves.png"):
                    (out / name).unlink(missing_ok=True)
            write_recipe(out, recipe)
        config = recipe.train
        trainer.open_logs(resume)
        bar = tqdm(total=config.max_steps, initial=trainer.step, desc="training", unit="step",
                   disable=not trainer.progress)
        heartbeat = ProgressLine(trainer.step, config.max_steps, enabled=rank == 0 and not trainer.progress)
        try:
            if trainer.step < config.max_steps:
                for audio, labels, lengths in trainer.batches():
                    loss, accuracy, chunk = trainer.train_step(audio, labels, lengths)
                    if not math.isfinite(loss):
                        raise SpeechattnError(
                            f"{out}: the loss became {loss} at step {trainer.step}: training diverged (learning rate "
                            f"{config.learning_rate:g}, grad_clip {config.grad_clip:g}); no checkpoint of this step "
                            "was written, last.pt and best.pt hold the last finite weights")
                    trainer.log_step(loss, accuracy, chunk)
                    bar.set_postfix(loss=f"{loss:.3f}", acc=f"{accuracy:.3f}")
                    bar.update(1)
                    heartbeat.update(trainer.step, loss, accuracy)
                    if rank == 0:
                        trainer.evaluate_and_checkpoint()
                    if trainer.step >= config.max_steps:
                        break
        finally:
            bar.close()
            trainer.close_logs()
        evaluation = trainer.finish() if rank == 0 else None
    if trainer.world > 1:
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()
    return {"steps": trainer.step, "best_dev_frame_accuracy": trainer.best, "out": str(out),
            "processes": trainer.world, "rank": rank, "evaluation": evaluation, "dev_utterances": len(trainer.dev_cuts)}
