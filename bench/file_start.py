"""A file's first words through the file model: pre-rolls compared (what `file_preroll` chose, and the arms tried).

    python bench/file_start.py MANIFEST... [--arms kit,none,copy:1.0,...] [--limit N]

Per set and arm: frame accuracy and PER of the whole utterances (the bigram decoder, as `transcribe` prints), frame
accuracy over the 300 ms from the reference's first phone, and the share of utterances whose first phone comes out
right.  The live model's largest chunk (default-int8 at 32 frames, files' default before the file model) is the
first row.  Arms, each audio heard before the file with its frames dropped (file-int8 at 400 frames):

    none         nothing (a stream from empty caches)
    kit          the kit's file_preroll: the loudest second of the first four, then 0.2 s of digital silence
    copy:S       the file's first S seconds again          rev:S   the same, reversed in time
    loud:S       the loudest S seconds of the whole file    sil:S   S seconds of digital silence
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from rapidfuzz.distance import Levenshtein

from speechattn.cli.common import manifest_cuts
from speechattn.phones import IGNORE, PHONES
from speechattn.training.evaluate import SILENCE_INDEX, phone_sequence, utterances
from speechattn_export.decoder import new_segmenter
from speechattn_export.segments import segment_labels
from speechattn_export.stream_client import StreamingModel, file_preroll, loudest_stretch

HOP = 160
HEAD_FRAMES = 30
MODELS = Path(__file__).resolve().parent.parent / "export" / "models"


def preroll(model, audio: np.ndarray, arm: str) -> np.ndarray:
    if arm == "kit":
        return file_preroll(model, audio)
    if arm == "none":
        return np.zeros(0, np.float32)
    kind, seconds = arm.split(":")
    n = int(float(seconds) * 16000) // HOP * HOP
    if kind == "sil":
        return np.zeros(n, np.float32)
    if kind in ("copy", "rev"):
        head = audio[:n] if kind == "copy" else audio[:n][::-1]
        return np.ascontiguousarray(head[:len(head) // HOP * HOP])
    if kind == "loud":
        return loudest_stretch(audio, n, HOP)
    raise SystemExit(f"unknown arm {arm!r}")


def labels_of(model, audio: np.ndarray, chunk: int, before: np.ndarray, frames: int) -> np.ndarray:
    stream = model.new_stream(chunk)
    stream.prime(before)
    log_probs = np.concatenate([stream.push(audio).log_probs, stream.finish().log_probs])[:frames]
    segmenter = new_segmenter("bigram", PHONES)
    return segment_labels(segmenter.push(log_probs) + segmenter.finish(), frames)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("manifests", nargs="+", type=Path)
    parser.add_argument("--arms", default="kit,none,copy:1.0,rev:1.0,loud:1.0,sil:0.5")
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    live = StreamingModel(MODELS / "default-int8.onnx")
    files = StreamingModel(MODELS / "file-int8.onnx")
    runs = [("default-int8, 32 frames", live, 32, "none")] + [(f"file-int8, {a}", files, 400, a)
                                                              for a in args.arms.split(",")]
    print("| set | model, pre-roll | frame accuracy | PER | first 300 ms of speech | first phone right |")
    print("|---|---|---|---|---|---|")
    for manifest in args.manifests:
        tallies = {name: np.zeros(8) for name, *_ in runs}
        for _, audio, reference in utterances(manifest_cuts([manifest], args.limit)):
            reference = np.asarray(reference)
            speech = np.flatnonzero((reference != SILENCE_INDEX) & (reference != IGNORE))
            first = speech[0] if len(speech) else 0
            scored = reference != IGNORE
            for name, model, chunk, arm in runs:
                hypothesis = labels_of(model, audio, chunk, preroll(model, audio, arm), len(reference))
                head = slice(first, first + HEAD_FRAMES)
                hypothesis_phones = np.where(scored, hypothesis, IGNORE)
                ref_seq, hyp_seq = phone_sequence(reference), phone_sequence(hypothesis_phones)
                tallies[name] += [np.sum(hypothesis[scored] == reference[scored]), scored.sum(),
                                  Levenshtein.distance(ref_seq, hyp_seq), len(ref_seq),
                                  np.sum(hypothesis[head][scored[head]] == reference[head][scored[head]]),
                                  scored[head].sum(), bool(ref_seq and hyp_seq and ref_seq[0] == hyp_seq[0]), 1]
        for name, t in tallies.items():
            print(f"| {manifest.name.split('_')[0]} | {name} | {100 * t[0] / t[1]:.2f} % | {100 * t[2] / t[3]:.2f} % "
                  f"| {100 * t[4] / max(t[5], 1):.1f} % | {100 * t[6] / t[7]:.1f} % |", flush=True)


if __name__ == "__main__":
    main()
