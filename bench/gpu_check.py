"""The GPU path of training and evaluation, checked on a CUDA GPU beside the CPU in the same run.

    python bench/gpu_check.py [--recipe RECIPE] [--set SECTION.KEY=VALUE ...] [--steps 30]

Prints:
  1. parity: the bundled default model (speechattn/runtime/models/default.pt) on the GPU in fp32 against the
     CPU, on the bundled LJ050 sample and on the speech-like test signal: max |Δ log-prob| and argmax agreement,
     full context and each chunk size; the GPU under bf16 autocast (what training uses) against the CPU's fp32;
  2. streaming on the GPU: StreamingSession pushed in random pieces against `forward` on the GPU, and against
     the CPU's stream;
  3. the training step as `speechattn train` runs it (Trainer.train_step: frontend, SpecAugment, forward with
     a drawn chunk size, in-place distillation when the recipe has it, backward, AdamW), fixed batches of the
     recipe's data: ms per step and frames/s on the GPU (fp32 and bf16) against this machine's CPU (fp32,
     all its cores).

The recipe's data must be prepared (default: recipes/default.yaml; `--set 'train.sets=[data/ljspeech/ljspeech]'`
trains on LJ Speech alone).  Needs torch with CUDA and a GPU: says so and exits 2 otherwise.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent


def compare(a: torch.Tensor, b: torch.Tensor) -> str:
    a, b = a.float().cpu(), b.float().cpu()
    if a.shape != b.shape:
        return f"SHAPES DIFFER {tuple(a.shape)} vs {tuple(b.shape)}"
    agreement = (a.argmax(-1) == b.argmax(-1)).float().mean().item()
    return f"max |Δ| {(a - b).abs().max().item():.2e}, argmax agreement {100 * agreement:.2f} %"


def parity(model_cpu, model_gpu, audio_by_name: dict[str, np.ndarray]) -> None:
    from speechattn.model.stream import offline_log_probs

    chunks = [None, *model_cpu.config.chunk_frames_choices]
    print("\n1. the default model on the GPU against the CPU (fp32 unless named)")
    print("| audio | chunk | GPU fp32 vs CPU | GPU bf16 autocast vs CPU fp32 |\n|---|---|---|---|")
    for name, audio in audio_by_name.items():
        x = torch.from_numpy(audio)[None]
        for chunk in chunks:
            reference = offline_log_probs(model_cpu, x, chunk)
            gpu = offline_log_probs(model_gpu, x.cuda(), chunk)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                bf16 = offline_log_probs(model_gpu, x.cuda(), chunk)
            print(f"| {name} | {chunk or 'full'} | {compare(gpu, reference)} | {compare(bf16, reference)} |")


def streaming(model_cpu, model_gpu, audio: np.ndarray, pushes: int = 23) -> None:
    from speechattn.model.stream import StreamingSession, offline_log_probs

    rng = np.random.default_rng(0)
    cuts = np.sort(rng.choice(np.arange(1, len(audio)), size=pushes - 1, replace=False))
    pieces = [torch.from_numpy(p)[None] for p in np.split(audio, cuts)]
    chunk = model_cpu.config.default_chunk_frames
    outputs = {}
    for name, model in (("gpu", model_gpu), ("cpu", model_cpu)):
        session = StreamingSession(model, chunk)
        rows = [session.push(piece) for piece in pieces] + [session.push(torch.zeros(1, 0), final=True)]
        outputs[name] = torch.cat(rows, dim=1)
    whole = offline_log_probs(model_gpu, torch.from_numpy(audio)[None].cuda(), chunk)
    print(f"\n2. streaming on the GPU, C = {chunk}, {pushes} pushes of random size")
    print(f"GPU stream vs GPU forward: {compare(outputs['gpu'], whole)}")
    print(f"GPU stream vs CPU stream:  {compare(outputs['gpu'], outputs['cpu'])}")
    print(f"stream output on: {outputs['gpu'].device}")


def step_speed(recipe_path: str, overrides: dict, runs) -> None:
    """runs: (device, precision, timed steps) each; the first is the one the ratios are against."""
    from speechattn.data.dataset import collate
    from speechattn.training.recipes import load_recipe
    from speechattn.training.train import Trainer, batches_of_epoch

    print(f"\n3. the training step (Trainer.train_step), {recipe_path}, fixed batches, after 3 warm-up steps")
    print("| device | precision | steps | ms per step | frames/s | x CPU |\n|---|---|---|---|---|---|")
    cpu_rate = None
    for device, precision, count in runs:
        train = {**overrides.get("train", {}), "device": device, "precision": precision, "loader_workers": 0}
        recipe = load_recipe(recipe_path, {**overrides, "train": train})
        with tempfile.TemporaryDirectory() as out:
            trainer = Trainer(recipe, Path(out), resume=False, progress=False, allow_command_sources=False)
            batches = batches_of_epoch(len(trainer.dataset), recipe.train.batch_size, 0, 0)[:4]
            fixed = [collate([trainer.dataset[i] for i in batch]) for batch in batches]
            for audio, labels, lengths in fixed[:3]:
                trainer.train_step(audio, labels, lengths)
            if device == "cuda":
                torch.cuda.synchronize()
            frames, started = 0, time.perf_counter()
            for number in range(count):
                audio, labels, lengths = fixed[number % len(fixed)]
                trainer.train_step(audio, labels, lengths)  # returns loss.item(): the step has finished
                frames += int(lengths.sum())
            seconds = time.perf_counter() - started
        rate = frames / seconds
        cpu_rate = cpu_rate or rate
        print(f"| {device} | {precision} | {count} | {1000 * seconds / count:.1f} | {rate:,.0f} | {rate / cpu_rate:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recipe", default=str(ROOT / "recipes" / "default.yaml"))
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE")
    parser.add_argument("--steps", type=int, default=30, help="timed training steps on the GPU (the CPU does a sixth)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print(f"no CUDA GPU visible to torch {torch.__version__}: nothing to check here", file=sys.stderr)
        sys.exit(2)
    import soundfile

    from speechattn.audio import speechlike_signal
    from speechattn.cli.common import parse_overrides as _parse_overrides
    from speechattn.model.encoder import load

    overrides = _parse_overrides(args.set)  # as `speechattn train --set` reads them
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, CPU threads {torch.get_num_threads()}")
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 means fp32 (torch's default; said here so it is seen)
    sample, rate = soundfile.read(ROOT / "speechattn" / "runtime" / "samples" / "this-no-longer-appears-to-be-the-case.wav",
                                  dtype="float32")
    assert rate == 16000
    audio = {"LJ050 sample (5 s)": sample, "speech-like signal (20 s)": speechlike_signal(20.0, seed=0)}
    model_cpu = load(ROOT / "speechattn" / "runtime" / "models" / "default.pt")
    model_gpu = load(ROOT / "speechattn" / "runtime" / "models" / "default.pt").to("cuda")
    failed = 0
    for section in (lambda: parity(model_cpu, model_gpu, audio), lambda: streaming(model_cpu, model_gpu, sample),
                    lambda: step_speed(args.recipe, overrides, [("cpu", "fp32", max(3, args.steps // 6)),
                                                                ("cuda", "fp32", args.steps), ("cuda", "bf16", args.steps)])):
        try:
            section()
        except Exception:  # a check that breaks is a finding: print it whole and go on to the next
            import traceback

            failed += 1
            print("FAILED:\n" + traceback.format_exc())
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
