"""Where speech starts and stops on real recordings, from the signal alone: a check of forced alignment at the
edges of silence that no aligner drew: speechattn's neural aligner, the same with `align`'s HMM-GMM boundary stage
(speechattn/runtime/hmm.py), and pocketsphinx's aligner, in the same run.

No reachable real-speech corpus has hand-drawn or independently aligned phone boundaries under a licence we may
use (docs/data-hunt.md), so this builds the one boundary a signal shows without a labeller: where speech rises out
of silence and falls back into it. An onset or offset is taken from the short-time energy (10 ms Hann windows every
2.5 ms) against the recording's own floor: a stretch of speech is where the energy is more than --low-db above the
floor and somewhere reaches --high-db above it; stretches closer than --min-pause-ms are one. An edge is kept only
where it is *sharp* (the energy crosses from --low-db to --high-db within --sharp-ms), the recording is clean
(--min-snr-db between its floor and its peak) and the edge is not at the recording's own start or end; the others
are set apart and counted. Gradual edges (a final fricative fading out, a breathy onset) are exactly where
labellers disagree, so the check does not pretend to know them.

How far it can be trusted is measured, not assumed: --validate runs the same detector on synthetic voices whose
phone times are exact (espeak-ng, flite, festival; clean and with real room noise from ../shared/data/mssnsd-noise
mixed in) and prints how close its kept edges fall to the exact ones.

The check, on real speech:
  * Speech Commands v0.02 (CC BY 4.0; one word per clip, 2,600+ crowd speakers on their own microphones): the
    clips of the speakers whose id starts with 0-3 only (reserved for this check, kept out of training by
    recipes/speech-commands.yaml); the text is the word.
  * LibriSpeech (CC BY 4.0; read audiobooks): the clips of ../shared/data/librispeech-clips that have a transcript
    in a tab-separated file (id, text) such as fbai-speech's test-other reference, or pocketsphinx's recognized words
    (bench/recognized_transcripts.py: the folder has no transcripts); the pauses inside a sentence give edges too.
Each aligner gets the audio and the words; its speech/silence edges are its phone boundaries next to silence.
For each reference edge the nearest edge of the same kind (onset or offset) of each aligner is scored: the share
within 10 / 20 / 50 ms, the signed median (negative: the aligner's edge is earlier), by the phone class next to
the silence in speechattn's alignment.

    python bench/real_edges.py --validate 120 --synthetic 120
    python bench/real_edges.py --speech-commands /path/to/speech_commands_v0.02 \\
        --librispeech ../shared/data/librispeech-clips --transcripts test-other.tsv
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from alignment_common import (TOLERANCES_MS, log_posteriors, ours_labels, phone_class,  # noqa: E402,F401
                              ScriptWord, words_between_pauses)

HOP = 40  # 2.5 ms at 16 kHz
WINDOW = 160  # 10 ms
RATE = 16000
def energy_db(audio: np.ndarray) -> np.ndarray:
    """Short-time energy in dB: 10 ms Hann windows every 2.5 ms (window i centred at i * 2.5 ms + 5 ms)."""
    if len(audio) < WINDOW:
        return np.zeros(0)
    n = (len(audio) - WINDOW) // HOP + 1
    index = np.arange(WINDOW)[None, :] + HOP * np.arange(n)[:, None]
    frames = np.asarray(audio, dtype=np.float64)[index] * np.hanning(WINDOW)
    return 10 * np.log10(np.mean(frames ** 2, axis=1) + 1e-12)


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    change = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(change == 1), np.flatnonzero(change == -1)))


def peak_and_floor(energy: np.ndarray) -> tuple[float, float]:
    """A recording's peak (the 99.5th percentile of its energy) and floor (the 5th, at most 70 dB under the peak)."""
    peak = float(np.percentile(energy, 99.5))
    return peak, max(float(np.percentile(energy, 5)), peak - 70.0)


class Edge:
    def __init__(self, kind: str, ms: float, sharp: bool, at_recording_edge: bool) -> None:
        self.kind, self.ms, self.sharp, self.at_recording_edge = kind, ms, sharp, at_recording_edge

    def __repr__(self) -> str:
        return f"Edge({self.kind}, {self.ms:.1f} ms, sharp={self.sharp}, at_edge={self.at_recording_edge})"


def speech_edges(audio: np.ndarray, low_db: float = 15.0, high_db: float = 30.0, min_pause_ms: float = 120.0,
                 min_speech_ms: float = 40.0, sharp_ms: float = 5.0) -> tuple[list[Edge], float]:
    """The onsets and offsets of speech between pauses, from the energy alone, and the recording's peak-to-floor
    ratio in dB (the floor: the 5th percentile of the energy, at most 70 dB under the peak)."""
    energy = energy_db(audio)
    if not energy.size:
        return [], 0.0
    peak, floor = peak_and_floor(energy)
    low, high = energy > floor + low_db, energy > floor + high_db
    stretches: list[tuple[int, int]] = []
    for start, end in _runs(low):
        if not high[start:end].any():
            continue
        if stretches and (start - stretches[-1][1]) * HOP * 1000 / RATE < min_pause_ms:
            stretches[-1] = (stretches[-1][0], end)
        else:
            stretches.append((start, end))
    edges = []
    to_ms = lambda i: (i * HOP + WINDOW / 2) * 1000 / RATE  # noqa: E731
    for start, end in stretches:
        if (end - start) * HOP * 1000 / RATE < min_speech_ms:
            continue
        first_high = start + int(np.argmax(high[start:end]))
        last_high = end - int(np.argmax(high[start:end][::-1]))
        edges.append(Edge("onset", to_ms(start), (first_high - start) * HOP * 1000 / RATE <= sharp_ms, start <= 2))
        edges.append(Edge("offset", to_ms(end - 1), (end - last_high) * HOP * 1000 / RATE <= sharp_ms,
                          end >= len(energy) - 2))
    return edges, peak - floor


def kept(edges: list[Edge], snr_db: float, min_snr_db: float) -> list[Edge]:
    if snr_db < min_snr_db:
        return []
    return [e for e in edges if e.sharp and not e.at_recording_edge]


def aligner_edges(labels: np.ndarray, sil: int, phones) -> dict[str, list[tuple[float, str]]]:
    """An aligner's speech/silence edges from its frame labels: {kind: [(ms, the phone on the speech side)]}."""
    out = {"onset": [], "offset": []}
    for t in range(len(labels)):
        previous = labels[t - 1] if t else sil
        if previous == sil and labels[t] != sil:
            out["onset"].append((t * 10.0, phones[labels[t]]))
        if previous != sil and labels[t] == sil:
            out["offset"].append((t * 10.0, phones[previous]))
    if len(labels) and labels[-1] != sil:
        out["offset"].append((len(labels) * 10.0, phones[labels[-1]]))
    return out


def nearest(found: list[tuple[float, str]], ms: float) -> tuple[float, str] | None:
    return min(found, key=lambda f: abs(f[0] - ms)) if found else None


def torch_model(args):
    """The bundled weights (or --weights) as a PyTorch model, for --torch (None without it)."""
    if not args.torch:
        return None
    import torch

    from speechattn.training.recipes import load_recipe
    from speechattn.training.train import initial_weights

    torch.set_num_threads(1)
    if args.weights:
        from speechattn.model.encoder import load

        return load(args.weights).eval()
    recipe = load_recipe(str(Path(__file__).resolve().parents[1] / "recipes" / "default.yaml"), {})
    return initial_weights("default", recipe.model, quiet=True).eval()


# --- validation on synthetic speech with exact times ---------------------------------------------------------

def validate(count: int, args) -> None:
    import soundfile as sf

    from speechattn.data.synth import SynthConfig, engine, engine_of, plan, with_edge_silence

    noise_root = Path(__file__).resolve().parents[2] / "shared" / "data" / "mssnsd-noise"
    noises = sorted(p for p in noise_root.rglob("*") if p.suffix in (".wav", ".flac", ".opus"))
    rng = np.random.default_rng(1)
    jobs = plan(SynthConfig(hours=count * 4.2 / 3600))[:count]
    utterances = []
    for job in jobs:
        u = engine(engine_of(job.voice)).synthesize(job.text, job.voice, job.rate_wpm, job.pitch, job.pitch_range)
        utterances.append(with_edge_silence(u, job.lead_seconds, job.trail_seconds))
    print(f"the detector against exact edges: {len(utterances)} synthetic utterances (espeak-ng, flite, festival); "
          f"noise: {len(noises)} room recordings from mssnsd-noise")
    print("| noise (speech peak to noise RMS) | edge | kept | set apart | kept within 5 / 10 / 20 ms | median |")
    print("|---|---|---|---|---|---|")
    for noise_db in (None, 50, 40):
        errors, apart = defaultdict(list), defaultdict(int)
        for u in utterances:
            audio = u.audio.astype(np.float64)
            if noise_db is not None and noises:
                noise, _ = sf.read(noises[int(rng.integers(len(noises)))], dtype="float64")
                noise = np.resize(noise.mean(axis=1) if noise.ndim > 1 else noise, len(audio))
                peak = np.max(np.abs(audio))
                audio = audio + noise * (peak / 10 ** (noise_db / 20)) / (np.sqrt(np.mean(noise ** 2)) + 1e-12)
            speech = [(s * 1000, e * 1000) for s, e, p in u.intervals if p not in ("sil", 0)]
            edges, snr = speech_edges(audio, args.low_db, args.high_db, args.min_pause_ms, sharp_ms=args.sharp_ms)
            good = kept(edges, snr, args.min_snr_db)
            for edge in edges:
                if edge.at_recording_edge:
                    continue
                if edge not in good:
                    apart[edge.kind] += 1
                    continue
                exact = [s if edge.kind == "onset" else e for s, e in speech]
                errors[edge.kind].append(edge.ms - min(exact, key=lambda x: abs(x - edge.ms)))
        for kind in ("onset", "offset"):
            e = np.array(errors[kind])
            within = " / ".join(f"{100 * np.mean(np.abs(e) <= ms):.0f}" for ms in (5, 10, 20)) if e.size else "-"
            label = "none (digital silence)" if noise_db is None else f"{noise_db} dB"
            print(f"| {label} | {kind} | {e.size} | {apart[kind]} | {within} % | "
                  f"{np.median(e) if e.size else float('nan'):+.1f} ms |")


def synthetic_edges(count: int, args) -> None:
    """Both aligners' speech edges against the exact ones on synthetic voices: is a bias on real speech the
    aligner's own, or something real speech has?"""
    sys.path.insert(0, str(Path(__file__).resolve().parent))

    from speechattn.data.align import PhoneAligner
    from speechattn.data.labels import frame_labels
    from speechattn.data.synth import SynthConfig, engine, engine_of, plan, with_edge_silence
    from speechattn.phones import PHONE_TO_INDEX, PHONES
    from speechattn_export.align import AlignOptions, align
    from speechattn_export.pipeline import load_model

    sil = PHONE_TO_INDEX["sil"]
    model, peer, full = load_model(args.model, threads=1), PhoneAligner(), torch_model(args)
    chunk = args.chunk_frames or max(model.allowed_chunk_frames)
    scored = defaultdict(list)
    for job in plan(SynthConfig(hours=count * 4.2 / 3600))[:count]:
        u = engine(engine_of(job.voice)).synthesize(job.text, job.voice, job.rate_wpm, job.pitch, job.pitch_range)
        u = with_edge_silence(u, job.lead_seconds, job.trail_seconds)
        frames = len(u.audio) // 160
        truth = frame_labels(u.intervals, frames)
        stretches = words_between_pauses(truth)
        log_probs = log_posteriors(model, u.audio, frames, chunk, full, args.torch)
        script = [ScriptWord(" ".join(w), tuple(w)) for w in stretches]
        found = {"speechattn": aligner_edges(ours_labels(align(log_probs, script, model.phones, AlignOptions()),
                                                         frames), sil, PHONES)}
        theirs = peer.align(u.audio, stretches)
        if theirs is not None:
            found["pocketsphinx"] = aligner_edges(frame_labels(theirs, frames), sil, PHONES)
        intervals = sorted((s * 1000, e * 1000, PHONES[p] if not isinstance(p, str) else p) for s, e, p in u.intervals)
        speech = [(s, e, p) for s, e, p in intervals if p != "sil"]
        exact = {"onset": [], "offset": []}
        for i, (s, e, p) in enumerate(speech):
            if i == 0 or speech[i - 1][1] < s - 1:
                exact["onset"].append((s, p))
            if i == len(speech) - 1 or speech[i + 1][0] > e + 1:
                exact["offset"].append((e, p))
        for aligner, edges in found.items():
            for kind in ("onset", "offset"):
                for ms, phone in exact[kind]:
                    hit = nearest(edges[kind], ms)
                    error = hit[0] - ms if hit else 10_000.0
                    scored[aligner, kind].append(error)
                    scored[aligner, f"{kind}, {phone_class(phone)}"].append(error)
    print(f"\nspeech edges on {count} synthetic utterances against the exact times (the phone class from the "
          f"synthesizer's labels; a 10 ms frame grid alone puts an onset up to 10 ms early and an offset up to 10 ms "
          f"late)")
    print("| edge | edges | speechattn within 10 / 20 / 50 ms | median | pocketsphinx within 10 / 20 / 50 ms | median |")
    print("|---|---|---|---|---|---|")
    for key in sorted({k for _, k in scored}, key=lambda k: ("," in k, k)):
        cells = []
        for aligner in ALIGNERS:
            e = np.array(scored.get((aligner, key), []))
            cells += ([" / ".join(f"{100 * np.mean(np.abs(e) <= ms):.0f}" for ms in TOLERANCES_MS) + " %",
                       f"{np.median(e):+.0f} ms"] if e.size else ["-", "-"])
        print(f"| {key} | {len(scored['speechattn', key])} | " + " | ".join(cells) + " |")


# --- the check on real speech ----------------------------------------------------------------------------------

def speech_commands(root: Path, limit: int | None) -> list[tuple[str, Path, str]]:
    """(id, audio, word) for the reserved speakers of a Speech Commands folder: the dev split of the corpus reader
    (speechattn/data/corpora.py, ids starting 0-3), named and split as `speechattn prepare` names and splits them."""
    from speechattn.data.corpora import SPEECH_COMMANDS_SKIPPED, _speech_command, speech_commands_split

    items = []
    for path in sorted(root.glob("*/*.wav")):
        if path.parent.name in SPEECH_COMMANDS_SKIPPED or path.name.startswith("._"):
            continue
        utterance, word, speaker = _speech_command(path)
        if speech_commands_split(speaker) == "dev":
            items.append((utterance, path, word))
    rng = np.random.default_rng(0)
    order = rng.permutation(len(items))
    return [items[i] for i in order[:limit]]


def librispeech(root: Path, transcripts: Path, limit: int | None) -> list[tuple[str, Path, str]]:
    """(id, audio, text) of the clips under `root` with a row in `transcripts` (id, tab, text[, tab, ...])."""
    from speechattn.data.corpora import _text_lines

    texts = {}
    for line in _text_lines(transcripts, "transcript file"):
        fields = line.split("\t")
        if len(fields) >= 2:
            texts[fields[0].strip()] = fields[1].strip()
    items = [(p.stem, p, texts[p.stem]) for p in sorted(root.rglob("*")) if p.stem in texts
             and p.suffix in (".flac", ".wav", ".opus")]
    return items[:limit]


# check's aligners: the neural aligner alone, with align's HMM-GMM boundary stage (speechattn/runtime/hmm.py), and
# pocketsphinx's; each pair (scored, witness) is also scored on the edges where the energy and the witness agree
ALIGNERS = ("speechattn", "speechattn + HMM", "pocketsphinx")
PAIRS = (("speechattn", "pocketsphinx"), ("speechattn + HMM", "pocketsphinx"), ("pocketsphinx", "speechattn"),
         ("pocketsphinx", "speechattn + HMM"))


@dataclass
class EdgeTally:
    """What check counted: each aligner's errors by kind, the edges set apart, pocketsphinx's failures, CPU, the
    agreed edges' errors, and the recordings and seconds kept."""
    scored: dict
    apart: dict
    failed: dict
    cpu: dict
    agreed: dict
    recordings_kept: int
    seconds: float


def check(name: str, items, model, options, peer, args, full=None) -> None:
    import soundfile as sf

    from speechattn.runtime.hmm import bundled, refine

    from speechattn.data.labels import frame_labels
    from speechattn.phones import PHONE_TO_INDEX, PHONES
    from speechattn_export.align import align
    from speechattn_export.words import Lexicon

    sys.path.insert(0, str(Path(__file__).resolve().parent))

    from speechattn_export.resample import resample

    sil = PHONE_TO_INDEX["sil"]
    lexicon = Lexicon.load()
    scored, apart, recordings_kept, seconds = defaultdict(list), defaultdict(int), 0, 0.0
    failed, cpu, agreed = defaultdict(int), defaultdict(float), defaultdict(list)
    for _, path, text in items:
        audio, rate = sf.read(path, dtype="float32", always_2d=True)
        audio = resample(audio.mean(axis=1), rate, RATE) if rate != RATE else audio.mean(axis=1)
        edges, snr = speech_edges(audio, args.low_db, args.high_db, args.min_pause_ms, sharp_ms=args.sharp_ms)
        good = kept(edges, snr, args.min_snr_db)
        for edge in edges:
            if edge not in good and not edge.at_recording_edge:
                apart[edge.kind] += 1
        words = lexicon.words(text)
        if not good or not words:
            continue
        recordings_kept += 1
        seconds += len(audio) / RATE
        frames = len(audio) // 160
        start = time.process_time()
        log_probs = log_posteriors(model, audio, frames, args.chunk_frames, full, args.torch)
        ours = align(log_probs, words, model.phones, options)
        cpu["speechattn"] += time.process_time() - start
        start = time.process_time()
        refined = refine(bundled(), audio, ours, log_probs, model.phones)  # align's HMM-GMM boundary stage
        cpu["HMM stage"] += time.process_time() - start
        start = time.process_time()
        theirs = peer.align_words(audio, [w.spoken for w in words])
        cpu["pocketsphinx"] += time.process_time() - start
        found = {"speechattn": aligner_edges(ours_labels(ours, frames), sil, PHONES),
                 "speechattn + HMM": aligner_edges(ours_labels(refined, frames), sil, PHONES)}
        if theirs is None:
            failed["pocketsphinx"] += 1
        else:
            found["pocketsphinx"] = aligner_edges(frame_labels(theirs, frames), sil, PHONES)
        for edge in good:
            ours_edge = nearest(found["speechattn"][edge.kind], edge.ms)
            kind = f"{edge.kind}, {phone_class(ours_edge[1]) if ours_edge else '?'}"
            for aligner, theirs_found in found.items():
                hit = nearest(theirs_found[edge.kind], edge.ms)
                error = hit[0] - edge.ms if hit else 10_000.0
                scored[aligner, edge.kind].append(error)
                scored[aligner, kind].append(error)
                scored[aligner, "all"].append(error)
            # the edges that the energy and the *other* aligner place within --agree-ms of each other: a reference
            # two independent methods agree on, and that the aligner scored did not help to choose
            for aligner, other in PAIRS:
                if aligner not in found or other not in found:
                    continue
                witness = nearest(found[other][edge.kind], edge.ms)
                if witness and abs(witness[0] - edge.ms) <= args.agree_ms:
                    hit = nearest(found[aligner][edge.kind], (edge.ms + witness[0]) / 2)
                    agreed[aligner, other].append(hit[0] - (edge.ms + witness[0]) / 2 if hit else 10_000.0)
    report(name, len(items), EdgeTally(scored, apart, failed, cpu, agreed, recordings_kept, seconds), args.agree_ms)


def report(name: str, count: int, t: EdgeTally, agree_ms: float) -> None:
    """check's table: each aligner's edges by kind within 10 / 20 / 50 ms, the agreed edges, the CPU."""
    print(f"\n{name}: {t.recordings_kept} of {count} recordings with a kept edge ({t.seconds / 60:.1f} min); edges "
          f"kept {len(t.scored['speechattn', 'onset'])} onsets, {len(t.scored['speechattn', 'offset'])} offsets; set apart "
          f"(gradual or noisy) {t.apart['onset']} onsets, {t.apart['offset']} offsets; pocketsphinx could not align "
          f"{t.failed['pocketsphinx']} (its edges there not scored)")
    print("| edge (phone class beside the silence, in ours) | edges | " + " | ".join(
        f"{aligner} within 10 / 20 / 50 ms | median" for aligner in ALIGNERS) + " |")
    print("|---|---|" + "---|---|" * len(ALIGNERS))
    keys = sorted({k for _, k in t.scored}, key=lambda k: (k == "all", "," in k, k))
    for key in keys:
        cells = []
        for aligner in ALIGNERS:
            e = np.array(t.scored.get((aligner, key), []))
            if not e.size:
                cells += ["-", "-"]
                continue
            cells += [" / ".join(f"{100 * np.mean(np.abs(e) <= ms):.0f}" for ms in TOLERANCES_MS) + " %",
                      f"{np.median(e):+.0f} ms"]
        print(f"| {key} | {len(t.scored['speechattn', key])} | " + " | ".join(cells) + " |")
    cells = []
    for aligner, other in PAIRS:
        e = np.array(t.agreed[aligner, other])
        if e.size:
            cells.append(f"{aligner} on the {e.size} edges where the energy and {other} agree within "
                         f"{agree_ms:g} ms (their mean the reference): "
                         + " / ".join(f"{100 * np.mean(np.abs(e) <= ms):.0f}" for ms in TOLERANCES_MS)
                         + f" % within 10 / 20 / 50 ms, median {np.median(e):+.0f} ms")
    print("\n".join(cells))
    if t.seconds:
        print("CPU per hour of audio, one thread: " + ", ".join(f"{k} {3600 * v / t.seconds:.0f} s" for k, v in t.cpu.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--validate", type=int, metavar="N", help="the detector on N synthetic utterances")
    parser.add_argument("--synthetic", type=int, metavar="N",
                        help="both aligners' speech edges on N synthetic utterances against the exact times")
    parser.add_argument("--speech-commands", type=Path, help="a Speech Commands v0.02 folder (WORD/ID.wav)")
    parser.add_argument("--librispeech", type=Path, help="LibriSpeech clips (ID.flac|wav|opus anywhere below)")
    parser.add_argument("--transcripts", type=Path, help="--librispeech's texts: a tab-separated file, id and text")
    parser.add_argument("--limit", type=int, default=None, help="at most N recordings of each set")
    parser.add_argument("--model", default="default-int8")
    parser.add_argument("--chunk-frames", type=int, default=None, help="the model's chunk (default its largest)")
    parser.add_argument("--torch", metavar="CHUNK|full", default=None,
                        help="ours from the bundled weights in PyTorch (needs .[train]) in one pass at CHUNK frames a "
                        "chunk, or 'full': each whole recording at once, what a file aligner at full context would "
                        "start from; not the streamed file")
    parser.add_argument("--weights", type=Path, default=None,
                        help="--torch: this checkpoint instead of the bundled weights (any chunk sizes, subsampling, "
                             "output delay)")
    parser.add_argument("--low-db", type=float, default=15.0)
    parser.add_argument("--high-db", type=float, default=30.0)
    parser.add_argument("--sharp-ms", type=float, default=5.0)
    parser.add_argument("--min-pause-ms", type=float, default=120.0)
    parser.add_argument("--min-snr-db", type=float, default=45.0)
    parser.add_argument("--agree-ms", type=float, default=20.0,
                        help="an energy edge and the other aligner's within this: a reference of two")
    args = parser.parse_args()
    if args.weights and not args.torch:
        parser.error("--weights is read with --torch CHUNK|full (the streamed ONNX file is --model)")
    if args.weights and not args.weights.is_file():
        parser.error(f"{args.weights}: no such checkpoint")
    if args.validate:
        validate(args.validate, args)
    if args.synthetic:
        synthetic_edges(args.synthetic, args)
    if not (args.speech_commands or args.librispeech):
        if not (args.validate or args.synthetic):
            parser.error("give --validate N, --speech-commands DIR or --librispeech DIR --transcripts TSV")
        return
    if args.librispeech and not args.transcripts:
        parser.error("--librispeech needs --transcripts")
    from speechattn.errors import SpeechattnError

    sets = []  # read before any model loads: a wrong folder or file is one line at once
    for name, folder, read in (
            ("Speech Commands v0.02, speakers 0-3", args.speech_commands,
             lambda: speech_commands(args.speech_commands, args.limit)),
            ("LibriSpeech clips with a transcript", args.librispeech,
             lambda: librispeech(args.librispeech, args.transcripts, args.limit))):
        if folder is None:
            continue
        if not folder.is_dir():
            parser.error(f"{folder}: no such folder")
        try:
            items = read()
        except SpeechattnError as error:
            parser.error(str(error))
        if not items:
            parser.error(f"{folder}: no clips to check there ({name})")
        sets.append((name, items))

    from speechattn.data.align import PhoneAligner
    from speechattn_export.align import AlignOptions
    from speechattn_export.pipeline import load_model

    model = load_model(args.model, threads=1)
    args.chunk_frames = args.chunk_frames or max(model.allowed_chunk_frames)
    options, peer = AlignOptions(), PhoneAligner()
    ours = f"{args.weights or 'the bundled weights'} in PyTorch, chunk {args.torch}" if args.torch else \
        f"model {args.model}, chunk {args.chunk_frames} frames"
    print(f"ours: {ours}; edges kept where sharp ({args.low_db:g} to "
          f"{args.high_db:g} dB over the floor within {args.sharp_ms:g} ms) in recordings of {args.min_snr_db:g} dB "
          f"peak to floor or more")
    full = torch_model(args)  # loaded once for every set
    for name, items in sets:
        check(name, items, model, options, peer, args, full)


if __name__ == "__main__":
    main()
