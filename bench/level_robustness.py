"""Accuracy against input level, in quiet and in noisy rooms: each dev utterance mixed with real background noise at an
SNR (or left clean), the mix scaled to an RMS level (dBFS), then scored as `eval` does; pocketsphinx on the same audio.

    python bench/level_robustness.py MODEL.pt MANIFEST... [--levels -45,-35,-25,-15] [--snr clean,0,5,10,20]
        [--peer pocketsphinx] [--onnx export/models/default-int8.onnx] [--limit N] [--json FILE]

A live microphone meets every level (a quiet microphone, a speaker metres away) and, in a room, background noise
that is scaled with the speech: a model that does not care about level scores within a couple of points from -45 to
-15 dBFS at every SNR.  Noise: MS-SNSD's clips noise452..noise551 (speechattn/data/noise.py, DEV_NOISE_CLIPS, which
training never reads), one per utterance, chosen, started and looped by the utterance id, so every SNR and level of an
utterance carries the same noise; the SNR is the speech's power over its speech frames (the reference labels) against
the noise's over the utterance.  Each mix is scaled as a whole (one gain), peaks kept below full scale (counted as
"held").  The checkpoint runs one-shot at the chunk size (equal to streaming by construction), `--onnx` streams an
ONNX file through the portable client at its default chunk, both decoded by the bigram decoder; `--peer pocketsphinx`
decodes whole utterances in allphone mode as bench/pocketsphinx_peer.py does, scored by the same code.
Prints one line per condition, then per set and system a grid: rows SNR, columns level, cells frame accuracy / PER,
and the last column frame accuracy at the quietest level minus at the loudest.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from speechattn.audio import HOP_SAMPLES, load_audio  # noqa: E402
from speechattn.data.noise import dev_noise, mix_at_snr, noise_clips, rms_dbfs, set_level, speech_samples  # noqa: E402
from speechattn.phones import PHONE_TO_INDEX, SILENCE  # noqa: E402
from speechattn.training.evaluate import Scores, streamed_log_probs, utterances  # noqa: E402

CLEAN = None  # the SNR of a clean condition


def parse_snrs(text: str) -> list[float | None]:
    return [CLEAN if x.strip() == "clean" else float(x) for x in text.split(",")]


def snr_name(snr: float | None) -> str:
    return "clean" if snr is CLEAN else f"{snr:g} dB"


class Systems:
    """The systems scored, each `run(list of (audio, labels)) -> list of log-probs (frames, classes)`."""

    def __init__(self, args) -> None:
        self.runs, self.options = {}, {}  # name -> run, name -> Scores' (chunk_frames, add() keywords)
        self.describe: list[str] = []
        import torch

        from speechattn.model.encoder import load

        torch.set_num_threads(max(1, torch.get_num_threads()))
        model = load(args.model).eval()
        chunk = args.chunk_frames or model.config.default_chunk_frames
        self.runs["speechattn"] = lambda batch: self.torch_run(model, chunk, batch)
        self.options["speechattn"] = (chunk, {})
        self.describe.append(f"speechattn: {args.model} one-shot at chunk {chunk} frames")
        if args.onnx:
            from speechattn_export.stream_client import StreamingModel

            streaming = StreamingModel(args.onnx, num_threads=1)
            onnx_chunk = streaming.default_chunk_frames
            self.runs["onnx"] = lambda batch: [streamed_log_probs(streaming, audio, onnx_chunk) for audio, _ in batch]
            self.options["onnx"] = (onnx_chunk, {})
            self.describe.append(f"onnx: {args.onnx} streamed at chunk {onnx_chunk} frames")
        if args.peer == "pocketsphinx":
            from importlib.metadata import version

            from pocketsphinx_peer import AllphoneDecoder, one_hot

            sphinx = AllphoneDecoder()
            self.runs["pocketsphinx"] = lambda batch: [one_hot(sphinx.frame_labels(audio)) for audio, _ in batch]
            self.options["pocketsphinx"] = (None, {"min_frames": 1, "decoder": "hysteresis"})  # its own segments
            self.describe.append(f"pocketsphinx {version('pocketsphinx')} allphone on whole utterances, its own segments")

    @staticmethod
    def torch_run(model, chunk: int, batch) -> list[np.ndarray]:
        import torch

        from speechattn.data.dataset import collate

        audio, _, lengths = collate(batch)
        with torch.no_grad():
            log_probs = model.tag(audio, lengths, chunk).float().numpy()
        return list(log_probs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path, help="a checkpoint (.pt)")
    parser.add_argument("manifests", nargs="+", type=Path)
    parser.add_argument("--levels", default="-45,-35,-25,-15", help="RMS levels of the mix, dBFS, quietest first")
    parser.add_argument("--snr", default="clean", help="e.g. clean,0,5,10,20: dB of speech over noise, or clean")
    parser.add_argument("--noise-dir", type=Path, default=Path("../shared/data/mssnsd-noise/audio"),
                        help="MS-SNSD's noiseNNN clips (only the dev ones are read)")
    parser.add_argument("--chunk-frames", type=int, default=None, help="the checkpoint's chunk; default: the model's")
    parser.add_argument("--onnx", type=Path, help="also an ONNX file, streamed at its default chunk")
    parser.add_argument("--peer", choices=["pocketsphinx"], help="also pocketsphinx on the same audio")
    parser.add_argument("--limit", type=int, help="the first N utterances of each manifest")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    from speechattn.cli.common import manifest_cuts

    levels, snrs = [float(x) for x in args.levels.split(",")], parse_snrs(args.snr)
    systems = Systems(args)
    clips = [load_audio(path) for path in noise_clips(args.noise_dir, "dev")] if any(s is not CLEAN for s in snrs) else []
    if snrs != [CLEAN] and len(clips) == 0:
        parser.error(f"{args.noise_dir}: no dev noise clips (noise452 .. noise551)")
    print("; ".join(systems.describe) + f"; noise: {len(clips)} dev clips of {args.noise_dir}", flush=True)
    rows = []
    for manifest in args.manifests:
        name = manifest.name.split("_")[0]
        items = list(utterances(manifest_cuts([manifest], limit=args.limit)))
        natural = float(np.median([rms_dbfs(audio) for _, audio, _ in items]))
        masks = [speech_samples(labels, PHONE_TO_INDEX[SILENCE], HOP_SAMPLES, len(audio)) for _, audio, labels in items]
        noises = [dev_noise(clips, uid, len(audio)) for uid, audio, _ in items] if clips else []
        for snr in snrs:
            mixes = [audio if snr is CLEAN else mix_at_snr(audio, noise, snr, mask)
                     for (_, audio, _), noise, mask in zip(items, noises or [None] * len(items), masks)]
            for level in levels:
                pieces = [set_level(mix, level) for mix in mixes]
                batch = [(audio, labels) for (audio, _), (_, _, labels) in zip(pieces, items)]
                held = sum(clipped for _, clipped in pieces)
                reached = float(np.median([rms_dbfs(audio) for audio, _ in pieces]))  # below `level` where held
                for system, run in systems.runs.items():
                    chunk, options = systems.options[system]
                    score = Scores(chunk)
                    for start in range(0, len(batch), 8):
                        for (_, labels), log_probs in zip(batch[start : start + 8], run(batch[start : start + 8])):
                            score.add(labels, log_probs[: len(labels)], **options)
                    rows.append({"set": name, "system": system, "snr_db": snr, "level_dbfs": level,
                                 "frame_accuracy": score.frame_accuracy, "per": score.phone_error_rate,
                                 "utterances": len(items), "held_below_full_scale": held,
                                 "median_level_dbfs": reached,
                                 "natural_median_dbfs": natural})
                    print(f"{name:<16} {system:<12} {snr_name(snr):>6} {level:4.0f} dBFS  frame accuracy "
                          f"{100 * score.frame_accuracy:5.1f} %  PER {100 * score.phone_error_rate:5.1f} %  ({held} of "
                          f"{len(items)} held below full scale, median {reached:.1f} dBFS; natural level "
                          f"{natural:.0f} dBFS)", flush=True)
    print_grids(rows, snrs, levels)
    if args.json:
        from speechattn.files import atomic_path

        with atomic_path(args.json) as path:
            Path(path).write_text(json.dumps({"limit": args.limit, "systems": systems.describe, "rows": rows}, indent=1))


def print_grids(rows: list[dict], snrs: list, levels: list[float]) -> None:
    """Per set and system: rows SNR, columns level, cells frame accuracy / PER (%), then quietest minus loudest."""
    quiet, loud = levels[0], levels[-1]
    for name in dict.fromkeys(r["set"] for r in rows):
        for system in dict.fromkeys(r["system"] for r in rows):
            cell = {(r["snr_db"], r["level_dbfs"]): r for r in rows if r["set"] == name and r["system"] == system}
            print(f"\n{name}, {system} ({next(iter(cell.values()))['utterances']} utterances): frame accuracy / PER %")
            print("| SNR | " + " | ".join(f"{level:g} dBFS" for level in levels) + f" | {quiet:g} minus {loud:g} |")
            print("|---" * (len(levels) + 2) + "|")
            for snr in snrs:
                cells = [f"{100 * cell[snr, level]['frame_accuracy']:.1f} / {100 * cell[snr, level]['per']:.1f}"
                         for level in levels]
                spread = 100 * (cell[snr, quiet]["frame_accuracy"] - cell[snr, loud]["frame_accuracy"])
                print(f"| {snr_name(snr)} | " + " | ".join(cells) + f" | {spread:+.1f} |")
        print(f"{name}: held below full scale at {loud:g} dBFS (median level reached): " + ", ".join(
            f"{snr_name(snr)} {cell[snr, loud]['held_below_full_scale']} ({cell[snr, loud]['median_level_dbfs']:.1f})"
            for snr in snrs))


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
