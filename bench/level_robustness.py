"""Accuracy against input level: each dev utterance scaled to an RMS level (dBFS), then scored as `eval` does.

    python bench/level_robustness.py MODEL.pt MANIFEST... [--levels -45,-35,-25,-15] [--chunk-frames 4]

A live microphone meets every level (a quiet microphone, a speaker metres away): a model that does not care about
level scores within a couple of points from -45 to -15 dBFS.  Each utterance is scaled as a whole (one gain, the
same for all its samples), peaks kept below full scale (a clipped utterance is named); the checkpoint runs
one-shot at the chunk size (equal to streaming by construction) and the bigram decoder makes the phones.
Prints one row per level and set, and the spread (best minus worst) of frame accuracy per set.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from speechattn.cli.common import manifest_cuts
from speechattn.data.dataset import collate
from speechattn.model.encoder import load
from speechattn.training.evaluate import Scores, utterances


def rms_dbfs(audio: np.ndarray) -> float:
    return 20 * np.log10(max(float(np.sqrt(np.mean(np.square(audio, dtype=np.float64)))), 1e-10))


def scaled(audio: np.ndarray, level_dbfs: float) -> tuple[np.ndarray, bool]:
    gain = 10 ** ((level_dbfs - rms_dbfs(audio)) / 20)
    out = audio * gain
    peak = float(np.abs(out).max()) if out.size else 0.0
    return (out / peak * 0.999 if peak > 0.999 else out).astype(np.float32), peak > 0.999


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("manifests", nargs="+", type=Path)
    parser.add_argument("--levels", default="-45,-35,-25,-15")
    parser.add_argument("--chunk-frames", type=int, default=None, help="default: the model's")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    torch.set_num_threads(max(1, torch.get_num_threads()))
    model = load(args.model).eval()
    chunk = args.chunk_frames or model.config.default_chunk_frames
    levels = [float(x) for x in args.levels.split(",")]
    rows = []
    for manifest in args.manifests:
        items = list(utterances(manifest_cuts([manifest])))
        natural = np.median([rms_dbfs(audio) for _, audio, _ in items])
        for level in levels:
            score, clipped = Scores(chunk), 0
            for start in range(0, len(items), 8):
                batch = items[start : start + 8]
                pieces = [scaled(audio, level) for _, audio, _ in batch]
                clipped += sum(c for _, c in pieces)
                audio, _, lengths = collate([(a, labels) for (a, _), (_, _, labels) in zip(pieces, batch)])
                with torch.no_grad():
                    log_probs = model.tag(audio, lengths, chunk).float().numpy()
                for row, (_, _, labels) in enumerate(batch):
                    score.add(labels, log_probs[row, : len(labels)])
            rows.append({"set": manifest.name.split("_")[0], "level_dbfs": level, "natural_median_dbfs": natural,
                         "frame_accuracy": score.frame_accuracy, "per": score.phone_error_rate,
                         "utterances": len(items), "clipped_utterances": clipped})
            r = rows[-1]
            print(f"{r['set']:<16} {level:6.0f} dBFS  frame accuracy {100 * r['frame_accuracy']:5.1f} %  "
                  f"PER {100 * r['per']:5.1f} %  ({clipped} of {len(items)} utterances held below full scale; "
                  f"natural level {natural:.0f} dBFS)", flush=True)
    print(f"\nchunk {chunk} frames, {args.model}; spread of frame accuracy over {levels[0]:g} .. {levels[-1]:g} dBFS:")
    for name in dict.fromkeys(r["set"] for r in rows):
        values = [100 * r["frame_accuracy"] for r in rows if r["set"] == name]
        print(f"  {name:<16} {max(values) - min(values):4.1f} points (worst {min(values):.1f} %, best {max(values):.1f} %)")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
