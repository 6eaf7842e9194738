"""Phone boundaries on real speech that two independent aligners agree on: a development check of where the words
fall that pocketsphinx alone did not draw, and each aligner scored on the boundaries the *other two* agree on.

No reachable real-speech corpus has hand-drawn or independently aligned phone boundaries under a licence we may
use (docs/data-hunt.md). Three aligners that share nothing run here on the same audio and the same words:
  * speechattn's (this project's model and Viterbi aligner, `speechattn align`);
  * pocketsphinx's (a CMU Sphinx HMM, its US English model and dictionary; it drew our training labels);
  * Praat's (eSpeak NG synthesizes the words, dynamic time warping maps the synthetic phones onto the recording,
    pauses found from the intensity; "SpeechSynthesizer & Sound & TextGrid: To TextGrid (align)", through the
    praat-parselmouth package). It knows nothing of either of the others: neither their models nor their labels.
Where two of them put a boundary between the same kinds of sound (silence, vowel, stop, affricate, fricative,
nasal, liquid/glide) within --agree-ms of each other, the boundary is taken at their mean; the third aligner is
scored on those boundaries: the share within 10 / 20 / 50 ms of its nearest boundary of the same kind, the signed
median (negative: earlier), by kind. Each aligner is thus scored on a reference it did not help to draw; the three
references differ, so the figures are not one exam, and boundaries none of the pairs agree on (the hard ones) are
in no reference: the figures are an upper bound on exactness, read them side by side.

How far Praat's aligner can be trusted is measured, not assumed: --validate N aligns synthetic voices whose phone
times are exact (flite and festival only: eSpeak's own voices would favour Praat, which synthesizes with eSpeak)
with all three and prints each one's boundaries against the exact ones, and the pairs' agreed boundaries against
them (how exact an agreed boundary is).

    python bench/agreed_boundaries.py --validate 60
    python bench/agreed_boundaries.py --manifests data/real-dev/real-dev_supervisions_dev.jsonl.gz ...
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from alignment_common import (TOLERANCES_MS, ScriptWord, log_posteriors, phone_class,  # noqa: E402
                              words_between_pauses)

AGGREGATE = ("all", "speech→silence", "silence→speech", "vowel→stop", "consonant→stop", "vowel→vowel",
             "vowel→consonant", "consonant→vowel", "consonant→consonant")
ALIGNERS = ("speechattn", "pocketsphinx", "praat")
OFFSET_WINDOW_MS = 100.0  # how far a boundary may be from pocketsphinx's to count as the same one (where they sit)
# eSpeak NG's English phoneme mnemonics (what Praat's aligner writes) by kind; anything else not a pause is a vowel
ESPEAK = {
    "stop": {"p", "b", "t", "d", "k", "g", "t#", "d#", "?", "t2", "d2", "k2"},
    "affricate": {"tS", "dZ"},
    "fricative": {"f", "v", "T", "D", "s", "z", "S", "Z", "h", "x"},
    "nasal": {"m", "n", "N", "n-", "m-"},
    "liquid/glide": {"l", "r", "w", "j", "r-", "l/", "l#", "w#"},
}
SHORT_PAUSE_MS = 30.0  # eSpeak's word separator "_" lasts a few ms in Praat's phoneme tier: not a pause


def arpabet_kind(phone: str) -> str:
    """real_edges.phone_class's kinds, and silence."""
    return "silence" if phone in ("sil", "SIL", "") else phone_class(phone.rstrip("012"))


def espeak_kind(phone: str) -> str:
    if phone in ("", "_", "_:", "_!", "_;"):
        return "silence"
    bare = phone.rstrip("',")
    return next((kind for kind, members in ESPEAK.items() if bare in members), "vowel")


def boundaries(intervals: list[tuple[float, float, str]]) -> list[tuple[float, str, str]]:
    """(ms, kind before, kind after) for each boundary between consecutive (start ms, end ms, kind) intervals, one
    interval a phone (so two vowels in a row have their boundary, vowel→vowel) or a pause (merged_silence: one)."""
    out = []
    for (_, end, before), (start, _, after) in zip(intervals, intervals[1:]):
        if before == "silence" and after == "silence":
            continue
        out.append(((end + start) / 2, before, after))
    return out


def group(before: str, after: str) -> str:
    if after == "silence":
        return "speech→silence"
    if before == "silence":
        return "silence→speech"
    if after == "stop":
        return "vowel→stop" if before == "vowel" else "consonant→stop"
    if before == "vowel":
        return "vowel→vowel" if after == "vowel" else "vowel→consonant"
    return "consonant→vowel" if after == "vowel" else "consonant→consonant"


def merged_silence(intervals: list[tuple[float, float, str]]) -> list[tuple[float, float, str]]:
    """Adjacent silences as one interval (a pause split in two is one pause)."""
    out: list[tuple[float, float, str]] = []
    for start, end, kind in intervals:
        if out and kind == "silence" and out[-1][2] == "silence":
            out[-1] = (out[-1][0], end, kind)
        else:
            out.append((start, end, kind))
    return out


def agreed(a: list[tuple[float, str, str]], b: list[tuple[float, str, str]], within_ms: float):
    """The boundaries of the same kinds on both sides within `within_ms` of each other, one to one (nearest first),
    at their mean: [(ms, before, after)]."""
    pairs = []
    for i, (ms_a, x, y) in enumerate(a):
        for j, (ms_b, u, v) in enumerate(b):
            if (x, y) == (u, v) and abs(ms_a - ms_b) <= within_ms:
                pairs.append((abs(ms_a - ms_b), i, j))
    used_a, used_b, out = set(), set(), []
    for _, i, j in sorted(pairs):
        if i in used_a or j in used_b:
            continue
        used_a.add(i)
        used_b.add(j)
        out.append(((a[i][0] + b[j][0]) / 2, a[i][1], a[i][2]))
    return sorted(out)


def errors_against(reference, hypothesis) -> list[tuple[str, float]]:
    """(group, signed error ms) of each reference boundary's nearest hypothesis boundary of the same kinds (an
    error of 10 s where the hypothesis has none of that kind)."""
    out = []
    for ms, before, after in reference:
        same = [h for h, x, y in hypothesis if (x, y) == (before, after)]
        error = min((h - ms for h in same), key=abs) if same else 10_000.0
        out.append((group(before, after), error))
    return out


class Praat:
    """Praat's aligner (eSpeak NG + dynamic time warping) through praat-parselmouth."""

    def __init__(self) -> None:
        try:
            import parselmouth
            from parselmouth.praat import call
        except ImportError as error:
            raise SystemExit("this bench needs praat-parselmouth: pip install '.[bench]'") from error
        self.parselmouth, self.call = parselmouth, call
        self.synthesizer = call("Create SpeechSynthesizer", "English (America)", "Female1")
        call(self.synthesizer, "Speech output settings", 16000, 0.01, 1.0, 1.0, 175, "Kirshenbaum_espeak")

    def align(self, audio: np.ndarray, text: str) -> list[tuple[float, float, str]] | None:
        """(start ms, end ms, kind) intervals covering the recording, or None where Praat gives up."""
        call = self.call
        sound = self.parselmouth.Sound(np.asarray(audio, dtype=np.float64), sampling_frequency=16000)
        grid = call(sound, "To TextGrid", "sentence", "")
        call(grid, "Set interval text", 1, 1, text)
        try:
            result = call([self.synthesizer, sound, grid], "To TextGrid (align)", 1, 1, 1, -35.0, 0.1, 0.1)
        except self.parselmouth.PraatError:
            return None
        tier = call(result, "Get number of tiers")
        intervals = []
        for i in range(1, call(result, "Get number of intervals", tier) + 1):
            start = 1000 * call(result, "Get start time of interval", tier, i)
            end = 1000 * call(result, "Get end time of interval", tier, i)
            label = call(result, "Get label of interval", tier, i).strip()
            if end <= start:
                continue
            if label.startswith("_") and end - start < SHORT_PAUSE_MS and intervals:
                previous = intervals[-1]
                intervals[-1] = (previous[0], end, previous[2])  # a word separator, not a pause
                continue
            intervals.append((start, end, espeak_kind(label)))
        return merged_silence(intervals) if intervals else None


def ours_intervals(alignment, frames: int) -> list[tuple[float, float, str]]:
    out, at = [], 0
    for word in alignment.words:
        for p in word.phones:
            if p.start_frame > at:
                out.append((at * 10.0, p.start_frame * 10.0, "silence"))
            out.append((p.start_frame * 10.0, p.end_frame * 10.0, arpabet_kind(p.phone)))
            at = p.end_frame
    if at < frames:
        out.append((at * 10.0, frames * 10.0, "silence"))
    return merged_silence(out)


def peer_intervals(result, phones) -> list[tuple[float, float, str]]:
    return merged_silence([(1000 * s, 1000 * e, arpabet_kind(phones[p] if not isinstance(p, str) else p))
                           for s, e, p in result])


def exact_intervals(intervals, phones) -> list[tuple[float, float, str]]:
    return merged_silence(sorted((1000 * s, 1000 * e, arpabet_kind(phones[p] if not isinstance(p, str) else p))
                                 for s, e, p in intervals))


def table(title: str, scored: dict, references: dict, counted: str = "reference kept") -> None:
    print(f"\n{title}")
    print("| boundary | " + " | ".join(f"{a}: {counted} | within 10 / 20 / 50 ms | median" for a in scored) + " |")
    print("|---|" + "---|---|---|" * len(scored))
    for name in AGGREGATE:
        cells = []
        for aligner, errors in scored.items():
            e = np.array([x for g, x in errors if name in ("all", g)])
            cells += [f"{e.size}", " / ".join(f"{100 * np.mean(np.abs(e) <= ms):.0f}" for ms in TOLERANCES_MS) + " %",
                      f"{np.median(e):+.0f} ms"] if e.size else ["0", "-", "-"]
        print(f"| {name} | " + " | ".join(cells) + " |")
    for aligner, (kept, total) in references.items():
        if total:
            print(f"reference for {aligner}: {kept} boundaries the other two agree on, of {total} each of them drew "
                  f"(their mean; {100 * kept / total:.0f} % kept, the rest set apart)")


def three_way(found: dict, agree_ms: float, scored: dict, references: dict) -> None:
    for aligner in ALIGNERS:
        others = [a for a in ALIGNERS if a != aligner]
        if aligner not in found or any(o not in found for o in others):
            continue
        reference = agreed(found[others[0]], found[others[1]], agree_ms)
        scored[aligner] += errors_against(reference, found[aligner])
        kept, total = references[aligner]
        references[aligner] = (kept + len(reference), total + (len(found[others[0]]) + len(found[others[1]])) // 2)


def validate(count: int, args) -> None:
    from speechattn.data.align import PhoneAligner
    from speechattn.data.synth import SynthConfig, engine, engine_of, plan, with_edge_silence
    from speechattn.phones import PHONES
    from speechattn_export.align import AlignOptions, align
    from speechattn_export.pipeline import load_model


    from speechattn.data.labels import frame_labels

    model, peer, praat = load_model(args.model, threads=1), PhoneAligner(), Praat()
    chunk = max(model.allowed_chunk_frames)
    jobs = [j for j in plan(SynthConfig(hours=count * 12 / 3600)) if engine_of(j.voice) != "espeak"][:count]
    exact_scored, pair_scored = defaultdict(list), defaultdict(list)
    for job in jobs:
        u = engine(engine_of(job.voice)).synthesize(job.text, job.voice, job.rate_wpm, job.pitch, job.pitch_range)
        u = with_edge_silence(u, job.lead_seconds, job.trail_seconds)
        frames = len(u.audio) // 160
        exact = boundaries(exact_intervals(u.intervals, PHONES))
        stretches = words_between_pauses(frame_labels(u.intervals, frames))
        found = {}
        log_probs = log_posteriors(model, u.audio, frames, chunk, phases=args.phases)
        ours = align(log_probs, [ScriptWord(" ".join(w), tuple(w)) for w in stretches], model.phones, AlignOptions())
        found["speechattn"] = boundaries(ours_intervals(ours, frames))
        theirs = peer.align(u.audio, stretches)
        if theirs is not None:
            found["pocketsphinx"] = boundaries(peer_intervals(theirs, PHONES))
        grid = praat.align(u.audio, job.text)
        if grid is not None:
            found["praat"] = boundaries(grid)
        for aligner, hypothesis in found.items():
            exact_scored[aligner] += errors_against(exact, hypothesis)
        for i, a in enumerate(ALIGNERS):
            for b in ALIGNERS[i + 1:]:
                if a in found and b in found:
                    pair_scored[f"{a} ∩ {b}"] += errors_against(agreed(found[a], found[b], args.agree_ms), exact)
    table(f"{len(jobs)} synthetic utterances (flite, festival), each aligner against the exact phone times",
          dict(exact_scored), {})
    table(f"the same: each pair's agreed boundaries (within {args.agree_ms:.0f} ms of each other) against the exact "
          f"ones (how exact a reference of agreed boundaries is)", dict(pair_scored), {})


def dev_sets(manifests, limit=None, model_name: str = "default", agree_ms: float = 20.0, phases: int = 1) -> None:
    """The check on real speech (dev manifests, supervisions with recordings beside); bench/align.py --agreed too."""
    from speechattn.data.align import PhoneAligner
    from speechattn.data.dataset import cuts_from_manifests
    from speechattn.data.manifests import recordings_beside
    from speechattn.phones import PHONES
    from speechattn.training.evaluate import utterances
    from speechattn_export.align import AlignOptions, align
    from speechattn_export.pipeline import load_model
    from speechattn_export.words import Lexicon

    model, peer, praat, lexicon = load_model(model_name, threads=1), PhoneAligner(), Praat(), Lexicon.load()
    chunk = max(model.allowed_chunk_frames)
    everything, every_reference = defaultdict(list), {a: (0, 0) for a in ALIGNERS}
    against_peer = defaultdict(list)  # each other aligner's offsets from pocketsphinx's boundaries (how they sit)
    for manifest in map(Path, manifests):
        cuts = list(cuts_from_manifests(recordings_beside(manifest), manifest))[:limit]
        texts = {cut.supervisions[0].id: cut.supervisions[0].text or "" for cut in cuts}
        scored, references, failed = defaultdict(list), {a: (0, 0) for a in ALIGNERS}, defaultdict(int)
        seconds, started = 0.0, time.monotonic()
        for item_id, audio, labels in utterances(cuts):
            frames, text = len(labels), texts[item_id]
            words = lexicon.words(text)
            if not words:
                continue
            seconds += len(audio) / 16000
            found = {}
            log_probs = log_posteriors(model, audio, frames, chunk, phases=phases)
            ours = align(log_probs, words, model.phones, AlignOptions())
            found["speechattn"] = boundaries(ours_intervals(ours, frames))
            theirs = peer.align_words(audio, [w.spoken for w in words])
            if theirs is not None:
                found["pocketsphinx"] = boundaries(peer_intervals(theirs, PHONES))
            grid = praat.align(audio, " ".join(w.text for w in words))
            if grid is not None:
                found["praat"] = boundaries(grid)
            for aligner in ALIGNERS:
                failed[aligner] += aligner not in found
            three_way(found, agree_ms, scored, references)
            for aligner in ("speechattn", "praat"):
                if aligner in found and "pocketsphinx" in found:
                    against_peer[aligner] += [(g, e) for g, e in errors_against(found["pocketsphinx"], found[aligner])
                                              if abs(e) <= OFFSET_WINDOW_MS]
        name = manifest.name.removesuffix("_supervisions_dev.jsonl.gz").removesuffix(".jsonl.gz")
        table(f"{name}: {len(cuts)} utterances, {seconds / 60:.1f} min; gave up on: " +
              ", ".join(f"{a} {failed[a]}" for a in ALIGNERS) + f" ({time.monotonic() - started:.0f} s)",
              dict(scored), references)
        for aligner in ALIGNERS:
            everything[aligner] += scored[aligner]
            every_reference[aligner] = tuple(x + y for x, y in zip(every_reference[aligner], references[aligner]))
    if len(manifests) > 1:
        table("all sets together", dict(everything), every_reference)
    table(f"where the others sit against pocketsphinx's boundaries (the nearest of the same kinds within "
          f"{OFFSET_WINDOW_MS:.0f} ms; negative: earlier), every set", dict(against_peer), {}, "boundaries paired")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--validate", type=int, default=0, metavar="N", help="N synthetic utterances (flite, festival)")
    parser.add_argument("--manifests", nargs="*", default=[], help="dev sets (supervisions with recordings beside)")
    parser.add_argument("--limit", type=int, default=None, help="first N utterances of each manifest")
    parser.add_argument("--model", default="default", help="speechattn's model (a bundled name or an ONNX file)")
    parser.add_argument("--agree-ms", type=float, default=20.0, help="two aligners agree within this (default 20)")
    parser.add_argument("--phases", type=int, default=1, help="ours: posteriors averaged over this many shifts of the "
                                                              "audio, as `speechattn align --phases` (default 1)")
    args = parser.parse_args()
    if not args.validate and not args.manifests:
        parser.error("give --validate N and/or --manifests")
    missing = [m for m in args.manifests if not Path(m).is_file()]
    if missing:
        parser.error(f"no such manifest: {missing[0]}")
    if args.validate:
        validate(args.validate, args)
    if args.manifests:
        dev_sets(args.manifests, args.limit, args.model, args.agree_ms, args.phases)


if __name__ == "__main__":
    main()
