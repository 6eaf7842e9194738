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


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("recipe")
    parser.add_argument("--steps", type=int, default=12, help="timed steps per measurement (after 2 warm-up steps)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE")
    return parser.parse_args()


class Throughput:
    """A recipe's training set, model and optimizer, and the three measurements of frames a second; `parts` holds
    where the end-to-end steps' time went."""

    def __init__(self, recipe_path: str, overrides: list[str], steps: int):
        from speechattn.cli.common import parse_overrides as _parse_overrides
        from speechattn.data.dataset import AudioStore, FrameLabelDataset
        from speechattn.model.encoder import PhoneTagger
        from speechattn.training.recipes import load_recipe
        from speechattn.training.train import batches_of_epoch, load_cuts

        self.recipe = recipe = load_recipe(recipe_path, _parse_overrides(overrides))  # as `speechattn train --set`
        self.config = config = recipe.train
        print(f"recipe {recipe_path}: batch {config.batch_size} x {config.crop_seconds} s crops, "
              f"{config.loader_workers} loader workers, torch threads {torch.get_num_threads()}")
        started = time.perf_counter()
        own = str(Path(recipe.data.output or Path("data") / recipe.name) / recipe.name)  # "" in train.sets: the recipe's
        cuts = load_cuts([prefix or own for prefix in config.sets], "train")
        store = AudioStore(cuts, config.audio_cache, progress=True)
        print(f"{len(cuts)} training utterances; audio store ready in {time.perf_counter() - started:.1f} s "
              f"(first run decodes, later runs reuse)")
        self.dataset = FrameLabelDataset(cuts, augment=recipe.augment, crop_seconds=config.crop_seconds,
                                         seed=config.seed, store=store)
        self.batches, epoch = [], 0  # a small set's epochs one after another, as training takes them
        while len(self.batches) < steps + 2:
            self.batches += batches_of_epoch(len(self.dataset), config.batch_size, config.seed, epoch)
            epoch += 1
        torch.manual_seed(0)
        self.model = PhoneTagger(recipe.model)
        print(f"model: {self.model.num_parameters():,} parameters")
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-4)
        self.parts = {"data wait": 0.0, "frontend + specaugment": 0.0, "forward": 0.0, "backward": 0.0,
                      "optimizer": 0.0}

    def loader(self, count: int):
        from speechattn.data.dataset import collate

        workers = self.config.loader_workers
        return torch.utils.data.DataLoader(self.dataset, batch_sampler=self.batches[:count], collate_fn=collate,
                                           num_workers=workers, prefetch_factor=4 if workers else None)

    def data_path(self, count: int) -> float:
        frames, clock = 0, None
        for number, (_, _, lengths) in enumerate(self.loader(count + 2)):
            if number == 2:
                clock, frames = time.perf_counter(), 0
            frames += int(lengths.sum())
        return frames / (time.perf_counter() - clock)

    def train_step(self, step: int, audio, labels, lengths, timed: bool) -> None:
        from speechattn.data.augment import spec_augment
        from speechattn.training.train import frame_loss

        choices, model = self.recipe.model.chunk_frames_choices, self.model
        marks = [time.perf_counter()]
        chunk = None if step % 5 == 0 else choices[step % len(choices)]
        with torch.no_grad():
            features = model.frontend(audio)
            features = spec_augment(features, lengths, torch.Generator().manual_seed(step), self.recipe.augment)
        marks.append(time.perf_counter())
        loss, _, _ = frame_loss(model(features, lengths, chunk), labels, self.config.label_smoothing)
        marks.append(time.perf_counter())
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        marks.append(time.perf_counter())
        torch.nn.utils.clip_grad_norm_(model.parameters(), self.config.grad_clip)
        self.optimizer.step()
        marks.append(time.perf_counter())
        if timed:
            for name, (a, b) in zip(list(self.parts)[1:], zip(marks, marks[1:])):
                self.parts[name] += b - a

    def step_alone(self, count: int) -> float:
        from speechattn.data.dataset import collate

        fixed = [collate([self.dataset[i] for i in batch]) for batch in self.batches[:3]]
        frames = 0
        for step in range(count + 2):
            if step == 2:
                clock, frames = time.perf_counter(), 0
            audio, labels, lengths = fixed[step % len(fixed)]
            self.train_step(step, audio, labels, lengths, timed=False)
            frames += int(lengths.sum())
        return frames / (time.perf_counter() - clock)

    def end_to_end(self, count: int) -> float:
        frames, clock, waited = 0, None, time.perf_counter()
        for step, (audio, labels, lengths) in enumerate(self.loader(count + 2)):
            if step == 2:
                clock, frames = time.perf_counter(), 0
                self.parts = dict.fromkeys(self.parts, 0.0)
            if clock is not None:
                self.parts["data wait"] += time.perf_counter() - waited
            self.train_step(step, audio, labels, lengths, timed=clock is not None)
            frames += int(lengths.sum())
            waited = time.perf_counter()
        return frames / (time.perf_counter() - clock)


def main() -> None:
    args = parse_args()
    bench = Throughput(args.recipe, args.set, args.steps)
    rows = [("data path alone (audio store, per-crop augmentation)", bench.data_path(args.steps)),
            ("training step alone (no loading)", bench.step_alone(args.steps)),
            ("end to end", bench.end_to_end(args.steps))]
    print(f"\n{'measure':<66} {'frames/s':>10}")
    for name, rate in rows:
        print(f"{name:<66} {rate:>10,.0f}")
    total = sum(bench.parts.values())
    print(f"\nwhere an end-to-end step's time goes ({args.steps} steps, {total / args.steps:.2f} s per step):")
    for name, seconds in bench.parts.items():
        print(f"  {name:<26} {seconds / args.steps:6.3f} s  {100 * seconds / total:5.1f} %")


if __name__ == "__main__":
    main()
