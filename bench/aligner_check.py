"""How good are pocketsphinx's forced alignments?  Check them where the truth is known.

Synthesizes utterances (the built-in corpus plan: espeak-ng, flite and festival voices), force-aligns
each with pocketsphinx given the synthesizer's own phone sequence (one "word" per stretch between
pauses), and compares frame by frame with the synthesizer's exact labels.  This bounds how much the
silver labels of the real-speech sets (speechocean762, the asterisk prompts) can be trusted.

    python bench/aligner_check.py [--utterances 150]
"""

from __future__ import annotations

import argparse
from collections import defaultdict

import numpy as np

from speechattn.data.align import PhoneAligner
from speechattn.data.labels import frame_labels
from speechattn_export.segments import label_intervals
from speechattn.data.synth import SynthConfig, engine, engine_of, plan, with_edge_silence
from alignment_common import words_between_pauses  # (bench/: the script's own folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--utterances", type=int, default=150)
    args = parser.parse_args()
    aligner = PhoneAligner()
    jobs = plan(SynthConfig(hours=args.utterances * 4.2 / 3600))[: args.utterances]
    agreement, boundary_errors, failures = defaultdict(list), defaultdict(list), defaultdict(int)
    for job in jobs:
        name = engine_of(job.voice)
        utterance = engine(name).synthesize(job.text, job.voice, job.rate_wpm, job.pitch, job.pitch_range)
        utterance = with_edge_silence(utterance, job.lead_seconds, job.trail_seconds)
        frames = len(utterance.audio) // 160
        truth = frame_labels(utterance.intervals, frames)
        aligned = aligner.align(utterance.audio, words_between_pauses(truth))
        if aligned is None:
            failures[name] += 1
            continue
        hypothesis = frame_labels(aligned, frames)
        agreement[name].append(float(np.mean(truth == hypothesis)))
        truth_edges = [s for s, _, _ in label_intervals(truth)][1:]
        hypothesis_edges = np.array([s for s, _, _ in label_intervals(hypothesis)][1:])
        if hypothesis_edges.size:
            boundary_errors[name] += [int(np.min(np.abs(hypothesis_edges - edge))) * 10 for edge in truth_edges]
    print(f"{len(jobs)} synthesized utterances, aligned by pocketsphinx given the true phone sequence")
    print("| engine | aligned | frames agreeing with the synthesizer | boundaries within 20 ms | median boundary error |")
    print("|---|---|---|---|---|")
    for name in sorted(agreement):
        errors = np.array(boundary_errors[name])
        print(f"| {name} | {len(agreement[name])}/{len(agreement[name]) + failures[name]} | "
              f"{100 * np.mean(agreement[name]):.1f} % | {100 * np.mean(errors <= 20):.1f} % | {np.median(errors):.0f} ms |")


if __name__ == "__main__":
    main()
