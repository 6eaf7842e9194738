"""`speechattn train RECIPE`: train a phone tagger on prepared manifests.

AdamW with linear warm-up and cosine decay, gradient clipping, label smoothing, the attention
chunk size drawn per batch (full context included) so one set of weights serves every chunk size,
SpecAugment, on-the-fly waveform augmentation (augment.py).  Every random draw is a function of
(seed, step) or (seed, epoch, item), so a run resumed from its last checkpoint continues exactly
as if it had never stopped.  Checkpoints are written atomically (a kill at any moment leaves a
loadable one): last.pt every `checkpoint_every` steps, best.pt whenever dev frame accuracy improves.
Logs: train.csv (one row per step), dev.csv, and TensorBoard events in tensorboard/.  At the end:
curves.png (learning curves) and an evaluation of best.pt on the dev split at full context and at
every streaming chunk size (eval.json, eval.txt, confusion.png).

On a GPU the encoder runs under bf16 autocast (fp16 with a gradient scaler where bf16 is missing);
the frontend and evaluation stay in float32/float64.
"""

from __future__ import annotations

import csv
import math
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from .errors import SpeechattnError
from .phones import IGNORE


@dataclass(frozen=True)
class TrainConfig:
    sets: tuple = ("",)  # manifest prefixes DIR/NAME (NAME_{recordings,supervisions}_{split}.jsonl.gz); "" = this recipe's
    batch_size: int = 16
    crop_seconds: float = 4.0  # training crops; dev utterances are whole
    max_steps: int = 20000
    learning_rate: float = 1e-3
    warmup_steps: int = 1000
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    label_smoothing: float = 0.1
    full_context_share: float = 0.2  # share of batches trained at full context; the rest draw a chunk size
    eval_every: int = 1000
    checkpoint_every: int = 500
    normalization_items: int = 200  # training utterances the feature mean/std are computed from
    augment: bool = True
    loader_workers: int = 2  # data loading and augmentation processes
    device: str = "auto"  # auto (the GPU of this process's rank when there is one, else CPU), cpu, cuda
    precision: str = "auto"  # auto (bf16 on GPUs that have it, else fp16 on GPU, fp32 on CPU), fp32, bf16, fp16
    final_eval: bool = True  # evaluate best.pt on dev at every chunk size when training ends
    seed: int = 0

    def __post_init__(self) -> None:
        from .errors import ConfigError

        if self.batch_size < 1 or self.max_steps < 1 or self.eval_every < 1 or self.checkpoint_every < 1:
            raise ConfigError("train.batch_size, max_steps, eval_every and checkpoint_every must be at least 1")
        if not 0 <= self.full_context_share <= 1 or not 0 <= self.label_smoothing < 1:
            raise ConfigError("train.full_context_share must be in [0, 1] and train.label_smoothing in [0, 1)")
        if self.device not in ("auto", "cpu", "cuda"):
            raise ConfigError(f"train.device must be auto, cpu or cuda, not {self.device!r}")
        if self.precision not in ("auto", "fp32", "bf16", "fp16"):
            raise ConfigError(f"train.precision must be auto, fp32, bf16 or fp16, not {self.precision!r}")


def manifest_pair(prefix: str, split: str) -> tuple[Path, Path]:
    directory, name = Path(prefix).parent, Path(prefix).name
    return directory / f"{name}_recordings_{split}.jsonl.gz", directory / f"{name}_supervisions_{split}.jsonl.gz"


def load_cuts(prefixes: list[str], split: str):
    from .dataset import cuts_from_manifests

    cuts = []
    for prefix in prefixes:
        recordings, supervisions = manifest_pair(prefix, split)
        if not supervisions.exists():
            raise SpeechattnError(f"{supervisions}: no such manifest; run `speechattn prepare` first")
        cuts += list(cuts_from_manifests(recordings, supervisions))
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
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    torch.cuda.set_device(device)
    precision = config.precision
    if precision == "auto":
        precision = "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    return device, {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}[precision]


def evaluate(model, cuts, chunk_frames: int | None) -> tuple[float, float]:
    """(frame accuracy, PER) on whole `cuts`, no augmentation (evaluate.py has the definitions)."""
    from .evaluate import evaluate_checkpoint

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
    figure.savefig(out / "curves.png", dpi=100)
    plt.close(figure)


def final_evaluation(best_path: Path, dev_cuts, out: Path, progress: bool) -> str:
    """Evaluate best.pt on dev at full context and every chunk size; write eval.json, eval.txt, confusion.png."""
    from .evaluate import evaluate_checkpoint, format_table, plot_confusion, write_json
    from .model import load

    model = load(best_path)
    chunks = [None, *model.config.chunk_frames_choices]
    scores = evaluate_checkpoint(model, dev_cuts, chunks, progress=progress)
    table = format_table(scores)
    (out / "eval.txt").write_text(f"{best_path} on the dev split ({len(dev_cuts)} utterances)\n{table}\n")
    write_json(scores, out / "eval.json", model=str(best_path), data="dev split")
    default = next(s for s in scores if s.chunk_frames == model.config.default_chunk_frames)
    plot_confusion(default, out / "confusion.png")
    return table


def normalisation_statistics(model, cuts, items: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    from .dataset import cut_audio

    chosen = np.random.default_rng(seed).permutation(len(cuts))[:items]
    with torch.no_grad():
        features = torch.cat([model.frontend(torch.from_numpy(cut_audio(cuts[i]))[None])[0] for i in chosen])
    return features.mean(0), features.std(0)


def distributed() -> tuple[int, int]:
    """(rank, world size); under torchrun, joins the process group (NCCL on GPUs, gloo on CPUs)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1 and not torch.distributed.is_initialized():
        torch.distributed.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    return (torch.distributed.get_rank() if world > 1 else 0), world


def train(recipe, out: Path, resume: bool = False, progress: bool = True) -> dict:
    """Train; under torchrun each of the N processes takes every N-th item of each batch, gradients are
    averaged by DistributedDataParallel, and rank 0 alone evaluates, logs and writes checkpoints."""
    from tqdm import tqdm

    from .augment import spec_augment
    from .dataset import FrameLabelDataset, collate
    from .model import PhoneTagger, load, save_checkpoint

    config: TrainConfig = recipe.train
    rank, world = distributed()
    device, autocast_dtype = choose_device(config)
    progress = progress and rank == 0
    prefixes = [prefix or str(Path(recipe.data.output or Path("data") / recipe.name) / recipe.name)
                for prefix in config.sets]
    if any(not manifest_pair(p, "train")[1].exists() for p in prefixes) and config.sets == ("",):
        from .prepare import prepare

        if rank == 0:
            prepare(recipe, progress=progress)
        if world > 1:
            torch.distributed.barrier()
    # a set listed twice weighs twice in training; dev counts each utterance once
    train_cuts, dev_cuts = load_cuts(prefixes, "train"), load_cuts(list(dict.fromkeys(prefixes)), "dev")
    out.mkdir(parents=True, exist_ok=True)
    last, best_path = out / "last.pt", out / "best.pt"

    step, best = 0, -1.0
    if resume and last.exists():
        model = load(last).train()
        payload = torch.load(last, map_location="cpu", weights_only=True)
        step, best = payload["step"], payload["best_dev_accuracy"]
    else:
        if resume:
            print(f"no checkpoint in {out} to resume from: starting afresh")
        torch.manual_seed(config.seed)
        model = PhoneTagger(recipe.model)
        model.frontend.set_normalization(*normalisation_statistics(model, train_cuts, config.normalization_items,
                                                                   config.seed))
        payload = None
    model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: learning_rate_factor(s, config))
    if payload is not None:
        optimizer.load_state_dict(payload["optimizer"])
        scheduler.load_state_dict(payload["scheduler"])
    scaler = torch.amp.GradScaler("cuda", enabled=autocast_dtype == torch.float16)

    network = model
    if world > 1:
        network = torch.nn.parallel.DistributedDataParallel(model, device_ids=[device] if device.type == "cuda" else None)

    dataset = FrameLabelDataset(train_cuts, augment=recipe.augment if config.augment else None,
                                crop_seconds=config.crop_seconds, seed=config.seed)
    per_epoch = len(batches_of_epoch(len(dataset), config.batch_size, config.seed, 0))
    extra = {"recipe": str(recipe.path), "train_config": asdict(config)}

    def checkpoint(path: Path) -> None:
        save_checkpoint(model, path, step=step, best_dev_accuracy=best, optimizer=optimizer.state_dict(),
                        scheduler=scheduler.state_dict(), **extra)

    headers = {"train.csv": "step,loss,frame_accuracy,learning_rate,chunk_frames,seconds",
               "dev.csv": "step,dev_frame_accuracy,dev_per,chunk_frames"}
    if rank == 0:  # start the logs; on resume, rows written after the checkpoint we resume from are redone: drop them
        for name, header in headers.items():
            path = out / name
            lines = path.read_text().splitlines() if resume and step and path.exists() else []
            kept = [line for line in lines if line and line[0].isdigit() and int(line.split(",")[0]) <= step]
            path.write_text("\n".join([header, *kept]) + "\n")
    train_path, dev_path = (out / "train.csv", out / "dev.csv") if rank == 0 else (os.devnull, os.devnull)
    with open(train_path, "a", newline="") as train_log, open(dev_path, "a", newline="") as dev_log:
        train_writer, dev_writer = csv.writer(train_log), csv.writer(dev_log)
        board = None
        if rank == 0:
            try:
                from torch.utils.tensorboard import SummaryWriter

                board = SummaryWriter(str(out / "tensorboard"), purge_step=step + 1 if step else None)
            except ImportError:  # tensorboard is a dependency; a trimmed install still trains
                pass
        bar = tqdm(total=config.max_steps, initial=step, desc="training", unit="step", disable=not progress)
        started = time.perf_counter()
        while step < config.max_steps:
            epoch, position = divmod(step, per_epoch)
            dataset.set_epoch(epoch)
            batches = [b[rank::world] for b in batches_of_epoch(len(dataset), config.batch_size, config.seed, epoch)]
            loader = torch.utils.data.DataLoader(dataset, batch_sampler=batches[position:], collate_fn=collate,
                                                 num_workers=config.loader_workers)
            for audio, labels, lengths in loader:
                if step >= config.max_steps:
                    break
                audio, labels, lengths = audio.to(device), labels.to(device), lengths.to(device)
                rng = np.random.default_rng([config.seed, step])
                chunk = None if rng.random() < config.full_context_share else int(rng.choice(recipe.model.chunk_frames_choices))
                torch.manual_seed(config.seed * 1_000_003 + step * 7919 + rank)  # dropout, reproducible on resume
                model.train()
                with torch.no_grad():
                    features = model.frontend(audio)
                    if config.augment:
                        generator = torch.Generator().manual_seed(step * 7919 + rank)
                        features = spec_augment(features.cpu(), lengths.cpu(), generator, recipe.augment).to(device)
                with torch.autocast(device.type, dtype=autocast_dtype or torch.float32, enabled=autocast_dtype is not None):
                    log_probs = network(features, lengths, chunk)
                loss, correct, count = frame_loss(log_probs.float(), labels, config.label_smoothing)
                optimizer.zero_grad(set_to_none=True)
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
                scaler.step(optimizer)
                scaler.update()
                scheduler.step()
                step += 1
                accuracy = correct / max(count, 1)
                train_writer.writerow([step, f"{loss.item():.5f}", f"{accuracy:.4f}",
                                       f"{scheduler.get_last_lr()[0]:.3e}", chunk or 0,
                                       f"{time.perf_counter() - started:.1f}"])
                bar.set_postfix(loss=f"{loss.item():.3f}", acc=f"{accuracy:.3f}")
                bar.update(1)
                if step % 10 == 0:
                    train_log.flush()  # so that a run can be watched with tail -f
                if rank != 0:
                    continue
                if board is not None:
                    board.add_scalar("train/loss", loss.item(), step)
                    board.add_scalar("train/frame_accuracy", accuracy, step)
                    board.add_scalar("train/learning_rate", scheduler.get_last_lr()[0], step)
                if step % config.eval_every == 0 or step == config.max_steps:
                    dev_accuracy, dev_per = (evaluate(model, dev_cuts, recipe.model.default_chunk_frames)
                                             if dev_cuts else (0.0, 1.0))
                    dev_writer.writerow([step, f"{dev_accuracy:.4f}", f"{dev_per:.4f}", recipe.model.default_chunk_frames])
                    dev_log.flush()
                    if board is not None:
                        board.add_scalar("dev/frame_accuracy", dev_accuracy, step)
                        board.add_scalar("dev/per", dev_per, step)
                        board.flush()
                    if dev_accuracy > best:
                        best = dev_accuracy
                        checkpoint(best_path)
                if step % config.checkpoint_every == 0 or step == config.max_steps:
                    train_log.flush()
                    checkpoint(last)
        bar.close()
        if board is not None:
            board.close()
    evaluation = None
    if rank == 0:
        plot_curves(out)
        if config.final_eval and dev_cuts and best_path.exists():
            evaluation = final_evaluation(best_path, dev_cuts, out, progress)
    if world > 1:
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()
    return {"steps": step, "best_dev_frame_accuracy": best, "out": str(out), "processes": world, "rank": rank,
            "evaluation": evaluation}
