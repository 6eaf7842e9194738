"""Forced alignment where the truth is known: speechattn's aligner beside pocketsphinx's, on the same audio and
the same words, in the same run.

Synthesizes utterances from the built-in corpus plan (espeak-ng, flite and festival voices: the synthesizer's
own phone times are exact, the only fully independent reference here), gives both aligners the synthesizer's
phone sequence (one "word" per stretch between pauses, as bench/aligner_check.py does), and scores each against
the exact labels: the share of reference phone boundaries with a hypothesis boundary within 10 / 20 / 50 ms,
and the share of frames with the reference label.  CPU: process time of each aligner per hour of audio, one
thread (ours: the model streamed over the audio, then the aligner; pocketsphinx: its two-pass alignment).

With --deviate, each utterance's script is also damaged (one word dropped, one added, one substituted) and ours
is scored on the words both scripts share against its alignment with the true script: the share of their
boundaries that stay within 20 ms, and how many dropped words it reports as not heard.

With --manifests, the real-speech dev sets as well: each utterance's transcript through our lexicon and aligner,
and through pocketsphinx's aligner with its own dictionary, both scored against the manifest's frame labels —
which pocketsphinx's aligner drew (silver references that favour it: on them it largely agrees with itself).

With --mismatched (and --manifests), only scripts that do not match: each dev utterance aligned to its own text, to
the text of the utterance --offsets further on in its set (half the set, and 7: a set sorted by name pairs
neighbours with near-identical texts; pairs whose words are the same are left out) and, with 8 words or more, to its
own text damaged as --deviate damages it; the share of true pairs aligned, of other texts reported unalignable (the
kit's Alignment.unalignable: the score below AlignOptions.min_score) and of damaged scripts aligned, with the
score's spread.

    python bench/align.py [--utterances 120] [--deviate] [--manifests data/real-dev/real-dev_supervisions_dev.jsonl.gz ...]
    python bench/align.py --mismatched --model default --manifests data/*/*_supervisions_dev.jsonl.gz
    python bench/align.py --manifests data/*/*_supervisions_dev.jsonl.gz --agreed   # + bench/agreed_boundaries.py
"""

from __future__ import annotations

import argparse
import os
import time
from collections import defaultdict

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from speechattn.data.align import PhoneAligner  # noqa: E402
from speechattn.data.labels import frame_labels  # noqa: E402
from speechattn.data.synth import SynthConfig, engine, engine_of, plan, with_edge_silence  # noqa: E402
from speechattn_export.align import AlignOptions, align  # noqa: E402
from speechattn_export.pipeline import load_model  # noqa: E402
from speechattn_export.segments import label_intervals  # noqa: E402
from alignment_common import (SIL, TOLERANCES_MS, ScriptWord, log_posteriors, ours_labels,  # noqa: E402,F401
                              words_between_pauses)  # (bench/: the script's own folder)

def boundary_errors_ms(truth: np.ndarray, hypothesis: np.ndarray) -> list[int]:
    truth_edges = [s for s, _, _ in label_intervals(truth)][1:]
    hypothesis_edges = np.array([s for s, _, _ in label_intervals(hypothesis)][1:])
    if not hypothesis_edges.size:
        return [10_000] * len(truth_edges)
    return [int(np.min(np.abs(hypothesis_edges - edge))) * 10 for edge in truth_edges]


def word_bounds(alignment) -> dict[int, tuple[int, int]]:
    return {w.index: (w.start_frame, w.end_frame) for w in alignment.words}


def damaged(words: list[ScriptWord], rng) -> tuple[list[ScriptWord], dict[int, int], int | None]:
    """The script with one word dropped, one added and one substituted (when it has words enough): (script,
    {position in the damaged script: position in the true one} for the words kept intact, the dropped word's
    true position)."""
    if len(words) < 4:
        return words, {i: i for i in range(len(words))}, None
    drop, substitute = rng.choice(len(words), 2, replace=False)
    filler = ScriptWord("<added>", ("B", "AA", "N", "AH", "N", "AH"))
    out, mapping = [], {}
    for i, word in enumerate(words):
        if i == drop:
            continue
        if i == substitute:
            out.append(ScriptWord("<substituted>", ("K", "W", "IH", "L", "T")))
            continue
        mapping[len(out)] = i
        out.append(word)
    insert = int(rng.integers(0, len(out) + 1))
    out.insert(insert, filler)
    mapping = {(k + 1 if k >= insert else k): v for k, v in mapping.items()}
    return out, mapping, int(drop)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--utterances", type=int, default=120)
    parser.add_argument("--model", default="default",
                        help="ours: a bundled name or an ONNX file (default: default, as `speechattn align`)")
    parser.add_argument("--deviate", action="store_true", help="also align a damaged script (see above)")
    parser.add_argument("--min-frames", type=int, default=AlignOptions().min_frames)
    parser.add_argument("--manifests", nargs="*", default=[], help="dev sets (supervisions with recordings beside)")
    parser.add_argument("--limit", type=int, default=None, help="first N utterances of each manifest")
    parser.add_argument("--chunk-frames", type=int, default=None,
                        help="stream the model at this chunk (default: the largest it serves, as `speechattn align` does)")
    parser.add_argument("--mismatched", action="store_true",
                        help="only the dev sets' utterances aligned to other utterances' texts (see above)")
    parser.add_argument("--agreed", action="store_true",
                        help="with --manifests: also the real-speech boundaries two independent aligners agree on "
                             "(bench/agreed_boundaries.py; Praat's aligner the third: pip install '.[bench]')")
    parser.add_argument("--phases", type=int, default=1,
                        help="ours: the posteriors averaged over this many shifts of the audio, as `speechattn align "
                             "--phases` (default 1; the --agreed check too)")
    parser.add_argument("--offsets", default="half,7", help="--mismatched: pair each utterance with the text this many "
                                                             "further on (comma-separated; half: half the set)")
    args = parser.parse_args()
    if args.mismatched and not args.manifests:
        parser.error("--mismatched aligns the dev sets: give --manifests")
    return args


class SyntheticCheck:
    """Synthesized utterances aligned by both aligners to the synthesizer's phone sequence: each boundary's error,
    each utterance's frames agreeing and each aligner's CPU; with `deviate`, a damaged script's other words too."""

    def __init__(self, model, options: AlignOptions, args: argparse.Namespace):
        self.model, self.options, self.args, self.peer = model, options, args, PhoneAligner()
        self.agreement, self.errors = defaultdict(list), defaultdict(list)
        self.cpu, self.failures = defaultdict(float), defaultdict(int)
        self.kept, self.reported, self.dropped_total, self.audio_seconds = [], 0, 0, 0.0
        self.rng = np.random.default_rng(0)

    def add(self, job) -> None:
        name = engine_of(job.voice)
        utterance = engine(name).synthesize(job.text, job.voice, job.rate_wpm, job.pitch, job.pitch_range)
        utterance = with_edge_silence(utterance, job.lead_seconds, job.trail_seconds)
        frames = len(utterance.audio) // 160
        self.audio_seconds += len(utterance.audio) / 16000
        truth = frame_labels(utterance.intervals, frames)
        stretches = words_between_pauses(truth)
        start = time.process_time()
        aligned = self.peer.align(utterance.audio, stretches)
        self.cpu["pocketsphinx"] += time.process_time() - start
        start = time.process_time()
        log_probs = log_posteriors(self.model, utterance.audio, frames, self.args.chunk_frames,
                                   phases=self.args.phases)
        self.cpu["model"] += time.process_time() - start
        script = [ScriptWord(" ".join(w), tuple(w)) for w in stretches]
        ours = align(log_probs, script, self.model.phones, self.options)
        self.cpu["speechattn"] += time.process_time() - start
        hypotheses = {"speechattn": ours_labels(ours, frames)}
        if aligned is None:
            self.failures["pocketsphinx"] += 1
        else:
            hypotheses["pocketsphinx"] = frame_labels(aligned, frames)
        for aligner, hypothesis in hypotheses.items():
            for kind in (name, "all"):
                self.agreement[aligner, kind].append(float(np.mean(truth == hypothesis)))
                self.errors[aligner, kind] += boundary_errors_ms(truth, hypothesis)
        if self.args.deviate:
            self.deviate(script, log_probs, ours)

    def deviate(self, script, log_probs, ours) -> None:
        bad_script, mapping, dropped = damaged(script, self.rng)
        if dropped is None:
            return
        deviated = align(log_probs, bad_script, self.model.phones, self.options)
        reference, hypothesis = word_bounds(ours), word_bounds(deviated)
        for position, true_position in mapping.items():
            if true_position in reference:
                for a, b in zip(reference[true_position], hypothesis.get(position, (-99, -99))):
                    self.kept.append(abs(a - b) * 10)
        self.dropped_total += 1
        self.reported += dropped not in {mapping.get(p, -1) for p in hypothesis}

    def report(self, count: int) -> None:
        print(f"{count} synthesized utterances ({self.audio_seconds / 60:.1f} min), both aligners given the "
              f"synthesizer's phone sequence; model {self.args.model}; pocketsphinx failed on "
              f"{self.failures['pocketsphinx']}")
        print("| engine | aligner | boundaries within 10 / 20 / 50 ms | frames agreeing |")
        print("|---|---|---|---|")
        for (aligner, name) in sorted(self.errors, key=lambda k: (k[1] == "all", k[1], k[0])):
            e = np.array(self.errors[aligner, name])
            within = " / ".join(f"{100 * np.mean(e <= ms):.1f}" for ms in TOLERANCES_MS)
            print(f"| {name} | {aligner} | {within} % | {100 * np.mean(self.agreement[aligner, name]):.1f} % |")
        hours, cpu = self.audio_seconds / 3600, self.cpu
        print(f"CPU per hour of audio, one thread: speechattn {cpu['speechattn'] / hours:.0f} s (the model "
              f"{cpu['model'] / hours:.0f}, the aligner {(cpu['speechattn'] - cpu['model']) / hours:.0f}), "
              f"pocketsphinx {cpu['pocketsphinx'] / hours:.0f} s: {cpu['pocketsphinx'] / cpu['speechattn']:.1f} x less")
        if self.args.deviate and self.kept:
            kept_ms = np.array(self.kept)
            print(f"damaged scripts (one word dropped, one added, one substituted, {self.dropped_total} utterances): "
                  f"{100 * np.mean(kept_ms <= 20):.1f} % of the other words' boundaries within 20 ms of the true "
                  f"script's alignment; dropped words reported not heard: {self.reported} of {self.dropped_total}")


def main() -> None:
    args = parse_args()
    model = load_model(args.model, threads=1)
    if not 1 <= args.phases <= model.frame_subsampling:
        raise SystemExit(f"--phases: 1 to {model.frame_subsampling} for this model")
    args.chunk_frames = args.chunk_frames or max(model.allowed_chunk_frames)
    options = AlignOptions(min_frames=args.min_frames)
    if args.mismatched:
        mismatched(model, options, args.manifests, args.limit, args.chunk_frames, args.offsets.split(","), args.phases)
        return
    check = SyntheticCheck(model, options, args)
    jobs = plan(SynthConfig(hours=args.utterances * 4.2 / 3600))[: args.utterances]
    for job in jobs:
        check.add(job)
    check.report(len(jobs))
    if args.manifests:
        dev_sets(model, options, check.peer, args.manifests, args.limit, args.chunk_frames, args.phases)
    if args.manifests and args.agreed:
        from agreed_boundaries import dev_sets as agreed_sets

        print("\nreal speech, the boundaries the other two aligners agree on (bench/agreed_boundaries.py; model "
              f"{args.model}; {args.phases} phase(s))")
        agreed_sets(args.manifests, args.limit, model_name=args.model, phases=args.phases)


def dev_sets(model, options, peer, manifests, limit, chunk_frames=None, phases: int = 1) -> None:
    from pathlib import Path

    from speechattn.data.dataset import cuts_from_manifests
    from speechattn.data.manifests import recordings_beside
    from speechattn.phones import IGNORE
    from speechattn.training.evaluate import utterances
    from speechattn_export.words import Lexicon

    lexicon = Lexicon.load()
    print("\nreal speech, references drawn by pocketsphinx's aligner (silver; they favour it)")
    print("| set | aligner | boundaries within 10 / 20 / 50 ms | frames agreeing | not aligned |")
    print("|---|---|---|---|---|")
    for manifest in map(Path, manifests):
        cuts = list(cuts_from_manifests(recordings_beside(manifest), manifest))[:limit]
        agreement, errors, failed, cpu, seconds = defaultdict(list), defaultdict(list), defaultdict(int), \
            defaultdict(float), 0.0
        texts = {cut.supervisions[0].id: cut.supervisions[0].text or "" for cut in cuts}
        for item_id, audio, labels in utterances(cuts):
            frames = len(labels)
            scored = labels != IGNORE
            truth = np.where(scored, labels, SIL)
            seconds += len(audio) / 16000
            text = texts[item_id]
            words = lexicon.words(text)
            start = time.process_time()
            log_probs = log_posteriors(model, audio, frames, chunk_frames, phases=phases)
            cpu["model"] += time.process_time() - start
            ours = align(log_probs, words, model.phones, options) if words else None
            cpu["speechattn"] += time.process_time() - start
            start = time.process_time()
            theirs = peer.align_words(audio, [w.spoken for w in words]) if words else None
            cpu["pocketsphinx"] += time.process_time() - start
            for aligner, result in (("speechattn", ours), ("pocketsphinx", theirs)):
                if result is None:
                    failed[aligner] += 1
                    continue
                hypothesis = ours_labels(result, frames) if aligner == "speechattn" else frame_labels(result, frames)
                agreement[aligner].append(float(np.mean((truth == hypothesis)[scored])))
                errors[aligner] += boundary_errors_ms(truth, hypothesis)
        name = manifest.name.removesuffix(".jsonl.gz")
        for aligner in ("speechattn", "pocketsphinx"):
            e = np.array(errors[aligner])
            within = " / ".join(f"{100 * np.mean(e <= ms):.1f}" for ms in TOLERANCES_MS) if e.size else "-"
            print(f"| {name} ({len(cuts)} utterances, {seconds / 60:.1f} min) | {aligner} | {within} % | "
                  f"{100 * np.mean(agreement[aligner]):.1f} % | {failed[aligner]} |")
        print(f"CPU per hour of audio on {name}: speechattn {3600 * cpu['speechattn'] / seconds:.0f} s (the model "
              f"{3600 * cpu['model'] / seconds:.0f}), pocketsphinx {3600 * cpu['pocketsphinx'] / seconds:.0f} s: "
              f"{cpu['pocketsphinx'] / cpu['speechattn']:.1f} x less")


def mismatched(model, options, manifests, limit, chunk_frames, offsets, phases: int = 1) -> None:
    from pathlib import Path

    from speechattn.data.dataset import cuts_from_manifests
    from speechattn.data.manifests import recordings_beside
    from speechattn.training.evaluate import utterances
    from speechattn_export.words import Lexicon

    lexicon, rng = Lexicon.load(), np.random.default_rng(0)
    print(f"scripts that do not match: model streamed at {chunk_frames} frames; unalignable below "
          f"min_score {options.min_score:g}")
    print(f"| set | true pairs aligned | another's text refused ({' / '.join(f'{o} on' for o in offsets)}) | "
          "damaged script (8+ words) aligned | score p1 true / p99 other |")
    print("|---|---|---|---|---|")
    for manifest in map(Path, manifests):
        cuts = list(cuts_from_manifests(recordings_beside(manifest), manifest))[:limit]
        texts = {cut.supervisions[0].id: cut.supervisions[0].text or "" for cut in cuts}
        items = []
        for item_id, audio, labels in utterances(cuts):
            words = lexicon.words(texts[item_id])
            if words:
                log_probs = log_posteriors(model, audio, len(labels), chunk_frames, phases=phases)
                items.append((log_probs, words))
        n = len(items)
        true = [align(log_probs, words, model.phones, options) for log_probs, words in items]
        refused, other_scores = [], []
        for offset in offsets:
            k = n // 2 if offset == "half" else int(offset)
            results = [align(items[i][0], items[(i + k) % n][1], model.phones, options) for i in range(n)
                       if [w.spoken for w in items[i][1]] != [w.spoken for w in items[(i + k) % n][1]]]
            refused.append(f"{100 * np.mean([r.unalignable for r in results]):.1f} % of {len(results)}")
            other_scores += [r.score for r in results]
        damaged_aligned = [not align(log_probs, damaged(words, rng)[0], model.phones, options).unalignable
                           for log_probs, words in items if len(words) >= 8]
        name = manifest.name.removesuffix(".jsonl.gz")
        print(f"| {name} ({n} utterances) | {100 * np.mean([not r.unalignable for r in true]):.1f} % | "
              f"{' / '.join(refused)} | {100 * np.mean(damaged_aligned):.0f} % of {len(damaged_aligned)} | "
              f"{np.percentile([r.score for r in true], 1):.2f} / {np.percentile(other_scores, 99):.2f} |")


if __name__ == "__main__":
    main()
