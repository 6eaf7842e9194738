"""Training throughput on this machine: frames/s of the data path alone, of the training step alone
(fixed batches, no loading) and end to end (loader workers feeding the step), for a recipe; compare recipes or
settings by running it for each on the same machine.

    python bench/train_speed.py recipes/default.yaml [--steps 12] [--set model.frame_subsampling=1 ...]

Also prints where one step's time goes (data wait, frontend + SpecAugment, forward, backward, optimizer).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("recipe")
    parser.add_argument("--steps", type=int, default=12, help="timed steps per measurement (after 2 warm-up steps)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE")
    args = parser.parse_args()

    from speechattn.cli.common import parse_overrides as _parse_overrides
    from speechattn.data.augment import spec_augment
    from speechattn.data.dataset import AudioStore, FrameLabelDataset, collate
    from speechattn.model.encoder import PhoneTagger
    from speechattn.training.recipes import load_recipe
    from speechattn.training.train import batches_of_epoch, frame_loss, load_cuts

    overrides = _parse_overrides(args.set)  # as `speechattn train --set` reads them
    recipe = load_recipe(args.recipe, overrides)
    config = recipe.train
    print(f"recipe {args.recipe}: batch {config.batch_size} x {config.crop_seconds} s crops, "
          f"{config.loader_workers} loader workers, torch threads {torch.get_num_threads()}")
    started = time.perf_counter()
    own = str(Path(recipe.data.output or Path("data") / recipe.name) / recipe.name)  # "" in train.sets: the recipe's
    cuts = load_cuts([prefix or own for prefix in config.sets], "train")
    store = AudioStore(cuts, config.audio_cache, progress=True)
    print(f"{len(cuts)} training utterances; audio store ready in {time.perf_counter() - started:.1f} s "
          f"(first run decodes, later runs reuse)")
    dataset = FrameLabelDataset(cuts, augment=recipe.augment, crop_seconds=config.crop_seconds, seed=config.seed,
                                store=store)
    batches = batches_of_epoch(len(dataset), config.batch_size, config.seed, 0)

    def make_loader(data, count):
        return torch.utils.data.DataLoader(data, batch_sampler=batches[:count], collate_fn=collate,
                                           num_workers=config.loader_workers, prefetch_factor=4 if config.loader_workers else None)

    def data_path(data, count) -> float:
        frames, clock = 0, None
        for number, (_, _, lengths) in enumerate(make_loader(data, count + 2)):
            if number == 2:
                clock, frames = time.perf_counter(), 0
            frames += int(lengths.sum())
        return frames / (time.perf_counter() - clock)

    torch.manual_seed(0)
    model = PhoneTagger(recipe.model)
    print(f"model: {model.num_parameters():,} parameters")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    chunk_choices = recipe.model.chunk_frames_choices
    parts = {"data wait": 0.0, "frontend + specaugment": 0.0, "forward": 0.0, "backward": 0.0, "optimizer": 0.0}

    def train_step(step, audio, labels, lengths, timed):
        marks = [time.perf_counter()]
        chunk = None if step % 5 == 0 else chunk_choices[step % len(chunk_choices)]
        with torch.no_grad():
            features = model.frontend(audio)
            features = spec_augment(features, lengths, torch.Generator().manual_seed(step), recipe.augment)
        marks.append(time.perf_counter())
        log_probs = model(features, lengths, chunk)
        loss, _, _ = frame_loss(log_probs, labels, config.label_smoothing)
        marks.append(time.perf_counter())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        marks.append(time.perf_counter())
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
        optimizer.step()
        marks.append(time.perf_counter())
        if timed:
            for name, (a, b) in zip(list(parts)[1:], zip(marks, marks[1:])):
                parts[name] += b - a

    def step_alone(count) -> float:
        fixed = [collate([dataset[i] for i in batch]) for batch in batches[:3]]
        frames = 0
        for step in range(count + 2):
            if step == 2:
                clock, frames = time.perf_counter(), 0
            audio, labels, lengths = fixed[step % len(fixed)]
            train_step(step, audio, labels, lengths, timed=False)
            frames += int(lengths.sum())
        return frames / (time.perf_counter() - clock)

    def end_to_end(data, count) -> float:
        frames, clock, waited = 0, None, time.perf_counter()
        for step, (audio, labels, lengths) in enumerate(make_loader(data, count + 2)):
            if step == 2:
                clock, frames = time.perf_counter(), 0
                for name in parts:
                    parts[name] = 0.0
            if clock is not None:
                parts["data wait"] += time.perf_counter() - waited
            train_step(step, audio, labels, lengths, timed=clock is not None)
            frames += int(lengths.sum())
            waited = time.perf_counter()
        return frames / (time.perf_counter() - clock)

    rows = []
    rows.append(("data path alone (audio store, per-crop augmentation)", data_path(dataset, args.steps)))
    rows.append(("training step alone (no loading)", step_alone(args.steps)))
    rows.append(("end to end", end_to_end(dataset, args.steps)))
    breakdown = dict(parts)
    print(f"\n{'measure':<66} {'frames/s':>10}")
    for name, rate in rows:
        print(f"{name:<66} {rate:>10,.0f}")
    total = sum(breakdown.values())
    print(f"\nwhere an end-to-end step's time goes ({args.steps} steps, {total / args.steps:.2f} s per step):")
    for name, seconds in breakdown.items():
        print(f"  {name:<26} {seconds / args.steps:6.3f} s  {100 * seconds / total:5.1f} %")


if __name__ == "__main__":
    main()
