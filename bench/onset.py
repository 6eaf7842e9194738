"""Speech at the very start of a stream: each dev utterance cut to begin 10 ms before its first phone, labelled
as it is, with 320 ms of silence prepended (whole 40 ms chunks), and in its whole recording; per model.

    python bench/onset.py MANIFEST... --model A.pt [--model B.pt ...] [--chunk-frames C] [--json out.json]

Per set, model and arm: the share of utterances whose first phone comes out right (the first non-silence phone of
the decoded path equals the reference's), frame accuracy over the first 300 ms after the cut, PER of the cut
utterance, and the share of the cut utterances' frames whose decoded label the prepended silence changed (near 0
for a model with primed_start: its outputs do not change, only the decoder's minimum duration meets the edge);
beside it the same for 330 ms, which moves the audio 10 ms against the model's 40 ms positions.  Checkpoints run
one-shot at the chunk size (equal to streaming by construction, primed as their config says), bigram decoder at
its default look-ahead, as `transcribe` prints.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from speechattn.audio import HOP_SAMPLES
from speechattn.cli.common import manifest_cuts
from speechattn_export.decoder import new_segmenter
from speechattn.model.encoder import load
from speechattn.phones import IGNORE, PHONES
from speechattn_export.segments import segment_labels
from speechattn.training.evaluate import SILENCE_INDEX, phone_sequence, utterances

HEAD_FRAMES = 30  # 300 ms after the cut
SILENCE_FRAMES = 32  # 320 ms: whole chunks for every chunk size up to 32 frames
ODD_FRAMES = 33  # 330 ms: not whole chunks (nor whole 40 ms encoder positions), so the audio moves against them
ARMS = ("cut at speech", "cut, +320 ms silence", "whole recording")


def tagged(model, audio: np.ndarray, chunk: int) -> np.ndarray:
    """A checkpoint's log-probs (T, classes) of one utterance, one-shot at the chunk size (T: its 10 ms frames)."""
    frames = -(-len(audio) // HOP_SAMPLES)
    with torch.no_grad():
        return model.tag(torch.from_numpy(audio)[None], torch.tensor([frames]), chunk)[0].numpy()


def decoded(model, audio: np.ndarray, chunk: int) -> np.ndarray:
    log_probs = tagged(model, audio, chunk)
    segmenter = new_segmenter("bigram", PHONES)
    return segment_labels(segmenter.push(log_probs) + segmenter.finish(), len(log_probs))


def decoded_after_silence(model, audio: np.ndarray, silence_frames: int, chunk: int, frames: int) -> np.ndarray:
    """The labels of the audio's first `frames` frames when `silence_frames` frames of silence come before it."""
    silence = np.zeros(silence_frames * HOP_SAMPLES, dtype=np.float32)
    return decoded(model, np.concatenate([silence, audio]), chunk)[silence_frames:][:frames]


class Tally:
    def __init__(self) -> None:
        self.first_right = self.utterances = self.head_right = self.head_frames = self.edits = self.phones = 0

    def add(self, reference: np.ndarray, hypothesis: np.ndarray) -> None:
        from rapidfuzz.distance import Levenshtein

        ref, hyp = phone_sequence(reference), phone_sequence(hypothesis)
        self.utterances += 1
        self.first_right += bool(ref and hyp and ref[0] == hyp[0])
        head = slice(0, HEAD_FRAMES)
        mask = reference[head] != IGNORE
        self.head_right += int((reference[head][mask] == hypothesis[head][mask]).sum())
        self.head_frames += int(mask.sum())
        self.edits += Levenshtein.distance(ref, hyp)
        self.phones += len(ref)

    def row(self) -> dict:
        return {"utterances": self.utterances, "first_phone": round(self.first_right / max(1, self.utterances), 4),
                "head_frame_accuracy": round(self.head_right / max(1, self.head_frames), 4),
                "per": round(self.edits / max(1, self.phones), 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("manifests", type=Path, nargs="+")
    parser.add_argument("--model", type=Path, action="append", required=True, help="a checkpoint (repeatable)")
    parser.add_argument("--chunk-frames", type=int, default=None, help="default: each model's default chunk")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    models = {str(path): load(path) for path in args.model}
    results = {}
    print("first phone right / frame accuracy over the first 300 ms / PER / labels changed by prepended silence")
    for manifest in args.manifests:
        name = manifest.name.split("_supervisions")[0]
        data = list(utterances(manifest_cuts([manifest])))
        for label, model in models.items():
            chunk = args.chunk_frames or model.config.default_chunk_frames
            tallies = {arm: Tally() for arm in ARMS}
            changed = changed_odd = frames = 0
            for _, audio, labels in data:
                speech = np.flatnonzero((labels != SILENCE_INDEX) & (labels != IGNORE))
                if len(speech) == 0:
                    continue
                cut = max(0, int(speech[0]) - 1)  # speech starts 10 ms into the cut
                head, reference = audio[cut * HOP_SAMPLES :], labels[cut:]
                alone = decoded(model, head, chunk)[: len(reference)]
                later = decoded_after_silence(model, head, SILENCE_FRAMES, chunk, len(reference))
                tallies[ARMS[0]].add(reference, alone)
                tallies[ARMS[1]].add(reference, later)
                tallies[ARMS[2]].add(reference, decoded(model, audio, chunk)[cut : cut + len(reference)])
                odd = decoded_after_silence(model, head, ODD_FRAMES, chunk, len(reference))
                changed += int((alone != later).sum())
                changed_odd += int((alone != odd).sum())
                frames += len(reference)
            rows = {arm: tally.row() for arm, tally in tallies.items()}
            rows["labels_changed_by_silence"] = round(changed / max(1, frames), 4)
            rows["labels_changed_by_330_ms"] = round(changed_odd / max(1, frames), 4)
            results.setdefault(name, {})[label] = rows
            for arm in ARMS:
                row = rows[arm]
                print(f"{name:<16} {label:<34} {arm:<22} {100 * row['first_phone']:5.1f} %  "
                      f"{100 * row['head_frame_accuracy']:5.1f} %  {100 * row['per']:5.1f} %   ({row['utterances']} utt.)")
            print(f"{name:<16} {label:<34} {'labels changed by +320 ms of silence':<40} "
                  f"{100 * rows['labels_changed_by_silence']:5.2f} %  (+330 ms, not whole chunks: "
                  f"{100 * rows['labels_changed_by_330_ms']:.2f} %)", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"chunk_frames": args.chunk_frames, "sets": results}, indent=1))


if __name__ == "__main__":
    main()
