"""What the 40 ms phase costs: each dev utterance labelled as it is, and with its log-probabilities averaged over
the four 10 ms shifts of the audio against the model's four-frame encoder positions.

    python bench/phase_ensemble.py MANIFEST... [--model M.pt] [--chunk-frames C]

Frame subsampling 4 stacks four 10 ms frames into one encoder position, so the same audio 10, 20 or 30 ms later
is labelled anew (bench/onset.py: 12-17 % of decoded labels change).  Averaging the four shifts' log-probabilities
(each shifted back into place) before the bigram decoder shows how much accuracy a phase-invariant model could
gain; as a runtime option it would cost four times the compute and 30 ms of latency, so this is a measurement, not
a mode.  Prints frame accuracy / PER per set, one phase against four.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch

from speechattn.audio import HOP_SAMPLES
from speechattn.cli.common import manifest_cuts
from speechattn.model.encoder import load
from speechattn.runtime.transcribe import CHECKPOINTS_DIR
from speechattn.training.evaluate import Scores, utterances
from onset import tagged  # bench/onset.py, beside this file


def shifted_log_probs(model, audio: np.ndarray, shift: int, chunk: int, frames: int) -> np.ndarray:
    """Log-probs of the audio's frames with `shift` frames of silence before it, shifted back into place."""
    padded = np.concatenate([np.zeros(shift * HOP_SAMPLES, np.float32), audio])
    return tagged(model, padded, chunk)[shift : shift + frames]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("manifests", type=Path, nargs="+")
    parser.add_argument("--model", type=Path, default=CHECKPOINTS_DIR / "default.pt")
    parser.add_argument("--chunk-frames", type=int, default=None, help="default: the model's default chunk")
    args = parser.parse_args()
    torch.set_num_threads(1)
    model = load(args.model)
    chunk = args.chunk_frames or model.config.default_chunk_frames
    phases = model.config.frame_subsampling
    print(f"{args.model}, chunk {chunk} frames, bigram decoder: frame accuracy / PER")
    for manifest in args.manifests:
        one, averaged = Scores(chunk), Scores(chunk)
        for _, audio, labels in utterances(manifest_cuts([manifest])):
            shifts = [shifted_log_probs(model, audio, k, chunk, len(labels)) for k in range(phases)]
            one.add(labels, shifts[0])
            mean = np.mean(shifts, axis=0)
            averaged.add(labels, mean - np.log(np.exp(mean).sum(-1, keepdims=True)))
        name = manifest.name.split("_supervisions")[0]
        for label, score in (("one phase", one), (f"{phases} phases averaged", averaged)):
            print(f"{name:<16} {label:<20} {100 * score.frame_accuracy:5.1f} % / {100 * score.phone_error_rate:5.1f} %",
                  flush=True)


if __name__ == "__main__":
    main()
