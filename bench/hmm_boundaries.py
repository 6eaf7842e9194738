"""The HMM-GMM boundary stage (speechattn/runtime/hmm.py) on the real-speech agreed-boundaries check
(bench/agreed_boundaries.py) and on synthetic voices with exact phone times, beside today's neural aligner and
pocketsphinx's aligner in the same run.

Two steps, so that arms of the boundary stage are scored on the same peers:
  1. --cache FILE --manifests …: per utterance, ours (the default model at its largest chunk, `align`'s
     options), pocketsphinx's and Praat's boundaries, the features, and each aligner's CPU seconds; written once.
  2. --cache FILE --hmm MODEL.npz [--band N]: the neural alignment refined by the HMM-GMM, and every aligner
     scored on the boundaries the other two agree on (within 20 ms, their mean), by kind of boundary.  The HMM
     arm is scored on pocketsphinx ∩ Praat, as ours is; pocketsphinx on ours ∩ Praat and on hmm ∩ Praat.
     Each aligner also by broad kind (the edges of pauses, boundaries into a stop, the rest), and on the onsets and
     offsets of speech bench/real_edges.py's detector finds in the energy (drawn by no aligner).
--synthetic N (with --hmm): bench/align.py's N synthetic utterances (espeak-ng, flite, festival), whose phone times
are exact, each aligner against them, on bench/align.py's frame grid and continuous; --synthetic-cache FILE keeps
the utterances and the peers' alignments, so that arms are scored on the same ones.  The boundaries more than 20 ms
off are counted near (30 ms on the frame grid, one frame past the tolerance) and far, by synthesizer and kind.
--timing --manifests …: CPU of `align` with the HMM-GMM stage and of pocketsphinx's aligner, in the same run.

    python bench/hmm_boundaries.py --cache /tmp/dev.pkl --manifests data/real-dev/real-dev_supervisions_dev.jsonl.gz \
        data/speechocean762/speechocean762_supervisions_dev.jsonl.gz data/ljspeech/ljspeech_supervisions_dev.jsonl.gz
    python bench/hmm_boundaries.py --cache /tmp/dev.pkl --hmm export/models/boundaries-hmm.npz
    python bench/hmm_boundaries.py --hmm export/models/boundaries-hmm.npz --synthetic 150 --synthetic-cache /tmp/s.pkl
    python bench/hmm_boundaries.py --timing --limit 60 --manifests …  (the three dev sets)
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import pickle
import sys
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agreed_boundaries import (Praat, agreed, arpabet_kind, boundaries, errors_against, exact_intervals,  # noqa: E402
                               group, ours_intervals, peer_intervals, table)
from alignment_common import ScriptWord, log_posteriors, ours_labels, words_between_pauses  # noqa: E402


def cpu() -> float:
    return time.process_time()


def described(model) -> str:
    how = (f"posterior crossings, temperature {model.posterior_temperature:g}" if model.posterior_temperature > 0
           else "the best path")
    return f"band {model.band_frames} frames, neural weight {model.neural_weight:g}, {how}"


BROAD = {"speech→silence": "silence edges", "silence→speech": "silence edges", "vowel→stop": "stops",
         "consonant→stop": "stops"}  # the rest: "the rest"


def broad_summary(title: str, scored: dict) -> None:
    """Each aligner within 10 / 20 / 50 ms (one decimal) by broad kind: the edges of pauses, boundaries into a stop,
    the rest."""
    print(f"\n{title}, by broad kind (boundaries; within 10 / 20 / 50 ms, median):")
    for aligner, errors in scored.items():
        cells = []
        for broad in ("silence edges", "stops", "the rest"):
            e = np.array([x for g, x in errors if BROAD.get(g, "the rest") == broad])
            if e.size:
                cells.append(f"{broad} {e.size}: " + " / ".join(f"{100 * np.mean(np.abs(e) <= ms):.1f}"
                                                                 for ms in (10, 20, 50)) + f", {np.median(e):+.0f} ms")
        print(f"  {aligner}: " + "; ".join(cells))


def energy_edges(audio: np.ndarray, found: dict, scored: dict) -> None:
    """bench/real_edges.py's onsets and offsets of speech from the energy alone (sharp edges of a clean recording,
    drawn by no aligner); each aligner's nearest pause edge of the same kind, signed error (ms) into scored."""
    from real_edges import kept, speech_edges

    edges, snr = speech_edges(audio)
    for edge in kept(edges, snr, 45.0):
        for aligner, bounds in found.items():
            side = [ms for ms, before, after in bounds
                    if (before == "silence") == (edge.kind == "onset") and "silence" in (before, after)]
            error = min((ms - edge.ms for ms in side), key=abs) if side else 10_000.0
            scored[aligner].append((edge.kind, error))


def settings_of(args) -> dict:
    """The boundary stage's settings the command line overrides."""
    given = {"band_frames": args.band, "neural_weight": args.neural_weight,
             "posterior_temperature": args.posterior_temperature}
    return {k: v for k, v in given.items() if v is not None}


def cache_dev(manifests, path: Path, limit=None) -> None:
    from speechattn.data.align import PhoneAligner
    from speechattn.data.dataset import cuts_from_manifests
    from speechattn.data.manifests import recordings_beside
    from speechattn.phones import PHONES
    from speechattn.training.evaluate import utterances
    from speechattn_export.align import AlignOptions, align
    from speechattn_export.pipeline import load_model
    from speechattn_export.words import Lexicon

    model, peer, praat, lexicon = load_model("default", threads=1), PhoneAligner(), Praat(), Lexicon.load()
    chunk = max(model.allowed_chunk_frames)
    items = []
    for manifest in map(Path, manifests):
        cuts = list(cuts_from_manifests(recordings_beside(manifest), manifest))[:limit]
        texts = {cut.supervisions[0].id: cut.supervisions[0].text or "" for cut in cuts}
        name = manifest.name.split("_supervisions")[0]
        for item_id, audio, labels in utterances(cuts):
            frames, words = len(labels), lexicon.words(texts[item_id])
            if not words:
                continue
            item = {"set": name, "id": item_id, "frames": frames, "seconds": len(audio) / 16000}
            t = cpu()
            log_probs = log_posteriors(model, audio, frames, chunk)
            item["ours"] = align(log_probs, words, model.phones, AlignOptions())
            item["cpu_ours"] = cpu() - t
            item["log_probs"] = log_probs.astype(np.float16)
            t = cpu()
            theirs = peer.align_words(audio, [w.spoken for w in words])
            item["cpu_pocketsphinx"] = cpu() - t
            item["pocketsphinx"] = boundaries(peer_intervals(theirs, PHONES)) if theirs is not None else None
            grid = praat.align(audio, " ".join(w.text for w in words))
            item["praat"] = boundaries(grid) if grid is not None else None
            item["audio"] = audio.astype(np.float32)
            items.append(item)
        print(f"{name}: {sum(i['set'] == name for i in items)} utterances", flush=True)
    with open(path, "wb") as f:
        pickle.dump(items, f)


def score_dev(path: Path, hmm_path: Path, settings: dict, agree_ms: float = 20.0) -> None:
    from speechattn.phones import PHONES
    from speechattn.runtime.hmm import HmmGmm, refine

    with open(path, "rb") as f:
        items = pickle.load(f)
    model = dataclasses.replace(HmmGmm.load(hmm_path), **settings)
    per_set: dict = defaultdict(lambda: defaultdict(list))
    kept: dict = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    seconds, cpu_hmm, cpu_ours, cpu_peer = 0.0, 0.0, 0.0, 0.0
    onsets: dict = defaultdict(list)
    for item in items:
        t = cpu()
        refined = refine(model, item["audio"], item["ours"], item["log_probs"], PHONES)
        cpu_hmm += cpu() - t
        seconds += item["seconds"]
        cpu_ours += item["cpu_ours"]
        cpu_peer += item["cpu_pocketsphinx"]
        found = {"speechattn": boundaries(ours_intervals(item["ours"], item["frames"])),
                 "hmm": boundaries(ours_intervals(refined, item["frames"]))}
        if item["pocketsphinx"] is None or item["praat"] is None:
            continue
        found["pocketsphinx"], found["praat"] = item["pocketsphinx"], item["praat"]
        energy_edges(item["audio"], {k: found[k] for k in ("speechattn", "hmm", "pocketsphinx")}, onsets)
        arms = {"speechattn": ("pocketsphinx", "praat"), "hmm": ("pocketsphinx", "praat"),
                "pocketsphinx (on ours ∩ Praat)": ("speechattn", "praat"),
                "pocketsphinx (on hmm ∩ Praat)": ("hmm", "praat")}
        for arm, (a, b) in arms.items():
            reference = agreed(found[a], found[b], agree_ms)
            scored = arm.split(" ")[0]
            for name in (item["set"], "all"):
                per_set[name][arm] += errors_against(reference, found[scored])
                kept[name][arm][0] += len(reference)
                kept[name][arm][1] += (len(found[a]) + len(found[b])) // 2
    for name, scored in per_set.items():
        table(f"{name}: agreed boundaries (HMM {hmm_path.name}, {described(model)})", dict(scored),
              {a: tuple(v) for a, v in kept[name].items()})
    broad_summary("all three sets", {arm: per_set["all"][arm] for arm in ("speechattn", "hmm",
                                                                           "pocketsphinx (on hmm ∩ Praat)")})
    print("\nonsets and offsets of speech from the energy (bench/real_edges.py's detector, sharp edges of clean "
          "recordings), all three sets; within 10 / 20 / 50 ms, median:")
    for aligner, errors in onsets.items():
        print(f"  {aligner}: " + "; ".join(
            f"{kind}s {len(e)}: " + " / ".join(f"{100 * np.mean(np.abs(e) <= ms):.1f}" for ms in (10, 20, 50))
            + f", {np.median(e):+.0f} ms" for kind in ("onset", "offset")
            for e in [np.array([x for k, x in errors if k == kind])] if e.size))
    print("\nwithin 10 / 20 / 50 ms, one decimal:")
    for name, scored in per_set.items():
        print(f"  {name}: " + "; ".join(
            f"{arm} " + " / ".join(f"{100 * np.mean(np.abs([e for _, e in errors]) <= ms):.1f}" for ms in (10, 20, 50))
            for arm, errors in scored.items()))
    hours = seconds / 3600
    print(f"\nCPU per hour of audio ({seconds / 60:.1f} min): neural aligner {cpu_ours / hours:.1f} s, "
          f"HMM stage {cpu_hmm / hours:.1f} s, both {(cpu_ours + cpu_hmm) / hours:.1f} s; "
          f"pocketsphinx {cpu_peer / hours:.1f} s ({cpu_peer / (cpu_ours + cpu_hmm):.1f} × ours with the HMM)")


def synthetic_items(count: int, path: Path | None = None) -> list[dict]:
    """bench/align.py's first `count` synthetic utterances (its plan, all three synthesizers) with the neural
    aligner's and pocketsphinx's alignments and CPU; read from `path` where it holds them, else written there."""
    if path is not None and path.exists():
        with open(path, "rb") as f:
            items = pickle.load(f)
        if len(items) >= count:
            return items[:count]
    from speechattn.data.align import PhoneAligner
    from speechattn.data.labels import frame_labels
    from speechattn.data.synth import SynthConfig, engine, engine_of, plan, with_edge_silence
    from speechattn.phones import PHONES
    from speechattn_export.align import AlignOptions, align
    from speechattn_export.pipeline import load_model

    model, peer = load_model("default", threads=1), PhoneAligner()
    chunk = max(model.allowed_chunk_frames)
    items = []
    for job in plan(SynthConfig(hours=count * 4.2 / 3600))[:count]:
        u = engine(engine_of(job.voice)).synthesize(job.text, job.voice, job.rate_wpm, job.pitch, job.pitch_range)
        u = with_edge_silence(u, job.lead_seconds, job.trail_seconds)
        frames = len(u.audio) // 160
        item = {"audio": u.audio.astype(np.float32), "frames": frames, "seconds": len(u.audio) / 16000,
                "truth": frame_labels(u.intervals, frames), "exact": boundaries(exact_intervals(u.intervals, PHONES))}
        stretches = words_between_pauses(item["truth"])
        t = cpu()
        log_probs = log_posteriors(model, u.audio, frames, chunk)
        item["ours"] = align(log_probs, [ScriptWord(" ".join(w), tuple(w)) for w in stretches], model.phones,
                             AlignOptions())
        item["cpu_ours"] = cpu() - t
        item["log_probs"] = log_probs.astype(np.float32)
        t = cpu()
        theirs = peer.align(u.audio, stretches)
        item["cpu_pocketsphinx"] = cpu() - t
        item["pocketsphinx"] = None if theirs is None else (frame_labels(theirs, frames),
                                                            boundaries(peer_intervals(theirs, PHONES)))
        items.append(item)
    if path is not None:
        with open(path, "wb") as f:
            pickle.dump(items, f)
    return items


def synthetic(count: int, hmm_path: Path, settings: dict, arms=(), cache: Path | None = None) -> None:
    """bench/align.py's synthetic utterances, each aligner against the exact phone times: on bench/align.py's frame
    grid (any boundary, the nearest), and continuous (agreed_boundaries' kinds); CPU of each."""
    from speechattn.phones import PHONES
    from speechattn.data.synth import SynthConfig, plan
    from speechattn.runtime.hmm import HmmGmm, refine

    from align import boundary_errors_ms

    hmm = dataclasses.replace(HmmGmm.load(hmm_path), **settings)
    print(f"HMM {hmm_path.name}, {described(hmm)}")
    items = synthetic_items(count, cache)
    voices = [job.voice for job in plan(SynthConfig(hours=count * 4.2 / 3600))[:len(items)]]  # the items' own
    grid, continuous, cpu_used, seconds = defaultdict(list), defaultdict(list), defaultdict(float), 0.0
    by_voice: dict = defaultdict(list)  # (aligner, voice) -> frame-grid (kind of boundary, error ms)
    continuous_by_voice: dict = defaultdict(list)  # (aligner, voice) -> continuous (kind, error ms)
    for item, voice in zip(items, voices):
        frames, ours, log_probs = item["frames"], item["ours"], item["log_probs"]
        seconds += item["seconds"]
        cpu_used["speechattn"] += item["cpu_ours"]
        cpu_used["pocketsphinx"] += item["cpu_pocketsphinx"]
        t = cpu()
        refined = refine(hmm, item["audio"], ours, log_probs, PHONES)
        cpu_used["hmm"] += cpu() - t
        found = {"speechattn": ours, "hmm": refined}
        for band_frames, weight, temperature in arms:  # other settings of the stage, on the same utterances
            arm = dataclasses.replace(hmm, band_frames=band_frames, neural_weight=weight,
                                      posterior_temperature=temperature)
            found[f"hmm band {band_frames} weight {weight:g} temperature {temperature:g}"] = refine(
                arm, item["audio"], ours, log_probs, PHONES)
        kinds = grid_kinds(item["truth"])
        for name, alignment in found.items():
            errors = boundary_errors_ms(item["truth"], ours_labels(alignment, frames))
            grid[name] += errors
            by_voice[name, voice] += list(zip(kinds, errors))
            scored = errors_against(item["exact"], boundaries(ours_intervals(alignment, frames)))
            continuous[name] += scored
            continuous_by_voice[name, voice] += scored
        if item["pocketsphinx"] is not None:
            labels, theirs = item["pocketsphinx"]
            errors = boundary_errors_ms(item["truth"], labels)
            grid["pocketsphinx"] += errors
            by_voice["pocketsphinx", voice] += list(zip(kinds, errors))
            continuous["pocketsphinx"] += errors_against(item["exact"], theirs)
    print(f"{len(items)} synthetic utterances ({seconds / 60:.1f} min), within 10 / 20 / 50 ms of the exact times:")
    for name in grid:
        g, c = np.abs(grid[name]), np.abs([e for _, e in continuous[name]])
        print(f"  {name}: frame grid " + " / ".join(f"{100 * np.mean(g <= ms):.1f}" for ms in (10, 20, 50)) +
              " %; continuous " + " / ".join(f"{100 * np.mean(c <= ms):.1f}" for ms in (10, 20, 50)) + " %")
    hours = seconds / 3600
    print("  CPU per hour of audio: " + ", ".join(f"{k} {v / hours:.1f} s" for k, v in cpu_used.items()) +
          " (hmm: the boundary stage alone, after speechattn's)")
    by_synthesizer(by_voice)
    misses(by_voice, continuous_by_voice, ("speechattn", "hmm"))
    table("the same, continuous, by kind of boundary", dict(continuous), {})
    broad_summary("the same, continuous", dict(continuous))


def by_synthesizer(by_voice: dict) -> None:
    """Frame-grid boundaries more than 20 ms off, by synthesizer and by the voices with the most of them."""
    from speechattn.data.synth import engine_of

    print("the same, frame grid, boundaries more than 20 ms off by synthesizer (of all its boundaries):")
    for aligner in dict.fromkeys(a for a, _ in by_voice):
        engines: dict = defaultdict(list)
        for (a, voice), scored in by_voice.items():
            if a == aligner:
                engines[engine_of(voice)] += [e for _, e in scored]
        print(f"  {aligner}: " + "; ".join(f"{e} {np.sum(np.abs(x) > 20)} of {len(x)} "
                                           f"({100 * np.mean(np.abs(x) > 20):.1f} %)" for e, x in engines.items()))
    worst = sorted(((sum(abs(e) > 20 for _, e in x), v, len(x)) for (a, v), x in by_voice.items() if a == "hmm"),
                   reverse=True)
    print("  hmm, the voices with the most: " + "; ".join(f"{v} {n} of {total}" for n, v, total in worst[:6]))


def grid_kinds(truth: np.ndarray) -> list[str]:
    """The kind of each boundary of frame labels (agreed_boundaries.group), in boundary_errors_ms's order."""
    from speechattn.phones import PHONES
    from speechattn_export.segments import label_intervals

    runs = label_intervals(truth)
    return [group(arpabet_kind(PHONES[a]), arpabet_kind(PHONES[b])) for (_, _, a), (_, _, b) in zip(runs, runs[1:])]


def near_far(scored) -> tuple[int, int]:
    """Of (kind, error ms) pairs more than 20 ms off: (how many at most 30 ms off, how many further)."""
    off = np.abs([e for _, e in scored])
    return int(np.sum((off > 20) & (off <= 30))), int(np.sum(off > 30))


def misses(by_voice: dict, continuous_by_voice: dict, aligners) -> None:
    """Boundaries more than 20 ms off, near and far, by synthesizer and by kind.  On the frame grid errors are whole
    frames, so the near ones are 30 ms off (one frame past the tolerance: the reference and the boundary each stand
    for a time anywhere within their frame) and the far ones 40 ms or more; continuous, 20-30 ms and over 30 ms.
    Moving a boundary within its frame changes no frame-grid error; moving it one frame the right way turns a near
    miss into a hit, so (all - far) / all is the frame grid's ceiling for any placement within a frame either side."""
    from speechattn.data.synth import engine_of

    print("the same, boundaries more than 20 ms off, near + far (frame grid: 30 ms + 40 ms or more; continuous: "
          "20-30 ms + over 30 ms):")
    for aligner in aligners:
        for scale, table_of in (("frame grid", by_voice), ("continuous", continuous_by_voice)):
            engines: dict = defaultdict(list)
            kinds: dict = defaultdict(list)
            for (a, voice), scored in table_of.items():
                if a == aligner:
                    engines[engine_of(voice)] += scored
                    for kind, error in scored:
                        kinds[kind].append((kind, error))
            every = [x for scored in engines.values() for x in scored]
            near, far = near_far(every)
            line = f"  {aligner}, {scale}: all {near} + {far} of {len(every)}; " + "; ".join(
                f"{e} {' + '.join(map(str, near_far(x)))}" for e, x in engines.items())
            print(line + "; by kind: " + ", ".join(f"{k} {' + '.join(map(str, near_far(x)))}"
                                                  for k, x in sorted(kinds.items())))
            if scale == "frame grid":
                print(f"    every near miss moved one frame the right way, nothing else moved: "
                      f"{100 * (len(every) - far) / len(every):.2f} % within 20 ms (the most that moving each boundary "
                      f"at most one frame can reach)")


def timing(manifests, limit: int | None) -> None:
    """CPU per hour of audio of `align` (posteriors, the aligner, the bundled HMM-GMM stage) and of pocketsphinx's
    aligner, utterance by utterance in the same run (the dev sets' first `limit` utterances each); beside them the
    stage placing boundaries on the best path (posterior_temperature 0) where the bundled one uses posteriors."""
    from speechattn.data.align import PhoneAligner
    from speechattn.data.dataset import cuts_from_manifests
    from speechattn.data.manifests import recordings_beside
    from speechattn.runtime.hmm import bundled, refine
    from speechattn.training.evaluate import utterances
    from speechattn_export.align import AlignOptions, align
    from speechattn_export.pipeline import load_model
    from speechattn_export.words import Lexicon

    model, peer, lexicon, hmm = load_model("default", threads=1), PhoneAligner(), Lexicon.load(), bundled()
    chunk = max(model.allowed_chunk_frames)
    used, seconds = defaultdict(float), 0.0
    for manifest in map(Path, manifests):
        cuts = list(cuts_from_manifests(recordings_beside(manifest), manifest))[:limit]
        texts = {cut.supervisions[0].id: cut.supervisions[0].text or "" for cut in cuts}
        for item_id, audio, labels in utterances(cuts):
            words = lexicon.words(texts[item_id])
            if not words:
                continue
            seconds += len(audio) / 16000
            t = cpu()
            log_probs = log_posteriors(model, audio, len(labels), chunk)
            ours = align(log_probs, words, model.phones, AlignOptions())
            used["neural"] += cpu() - t
            t = cpu()
            refine(hmm, audio, ours, log_probs, model.phones)
            used["hmm"] += cpu() - t
            if hmm.posterior_temperature > 0:
                t = cpu()
                refine(dataclasses.replace(hmm, posterior_temperature=0.0), audio, ours, log_probs, model.phones)
                used["best path"] += cpu() - t
            t = cpu()
            peer.align_words(audio, [w.spoken for w in words])
            used["pocketsphinx"] += cpu() - t
    hours = seconds / 3600
    ours = used["neural"] + used["hmm"]
    print(f"CPU per hour of audio, {seconds / 60:.1f} min: neural aligner {used['neural'] / hours:.1f} s, HMM-GMM "
          f"stage {used['hmm'] / hours:.1f} s, align with both {ours / hours:.1f} s; pocketsphinx's aligner "
          f"{used['pocketsphinx'] / hours:.1f} s ({used['pocketsphinx'] / ours:.2f} x align's, "
          f"{used['pocketsphinx'] / used['neural']:.2f} x the neural aligner's alone)")
    if "best path" in used:
        print(f"  the stage on the best path instead of the posteriors: {used['best path'] / hours:.1f} s, align "
              f"{(used['neural'] + used['best path']) / hours:.1f} s "
              f"({used['pocketsphinx'] / (used['neural'] + used['best path']):.2f} x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, help="the peers' boundaries on the dev sets (written by --manifests)")
    parser.add_argument("--manifests", nargs="*", default=[], help="dev sets to cache (supervisions manifests)")
    parser.add_argument("--limit", type=int, default=None, help="first N utterances of each manifest")
    parser.add_argument("--hmm", type=Path, help="the HMM-GMM parameter file to score")
    parser.add_argument("--band", type=int, default=None, help="frames a boundary may move (default: the file's)")
    parser.add_argument("--neural-weight", type=float, default=None,
                        help="each state's emission gains this x its phone's neural log-posterior (default: the file's)")
    parser.add_argument("--posterior-temperature", type=float, default=None,
                        help="0: boundaries where the best path puts them; above 0: where the posteriors cross one "
                             "half, the emissions scaled by this (default: the file's)")
    parser.add_argument("--synthetic", type=int, default=0, metavar="N", help="N synthetic utterances")
    parser.add_argument("--synthetic-cache", type=Path, default=None,
                        help="--synthetic: the utterances and the peers' alignments, read if there, else written")
    parser.add_argument("--arms", default="", metavar="BAND:WEIGHT[:TEMPERATURE],...",
                        help="--synthetic: more settings of the boundary stage scored on the same utterances")
    parser.add_argument("--timing", action="store_true",
                        help="with --manifests: CPU of align and of pocketsphinx's aligner in the same run, no cache")
    args = parser.parse_args()
    if args.timing:
        timing(args.manifests, args.limit)
        return
    if args.manifests:
        if not args.cache:
            parser.error("--manifests needs --cache FILE to write")
        cache_dev(args.manifests, args.cache, args.limit)
    if args.hmm and args.cache:
        score_dev(args.cache, args.hmm, settings_of(args))
    if args.hmm and args.synthetic:
        arms = [(int(a.split(":")[0]), float(a.split(":")[1]), float((a.split(":") + ["0"])[2]))
                for a in args.arms.split(",") if a]
        synthetic(args.synthetic, args.hmm, settings_of(args), arms, args.synthetic_cache)
    if not (args.manifests or args.hmm):
        parser.error("give --manifests (with --cache) and/or --hmm")


if __name__ == "__main__":
    main()
