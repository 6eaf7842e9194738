"""An experiment on where the early word end is learned (issue 49; docs/benchmarks.md, "Real-speech edges from the
signal"): copies of prepared manifests whose phones before a silence end where the speech's energy ends.

For every phone followed by silence (or by nothing) in a supervision's phone alignment, the end moves later while
the energy (bench/real_edges.py's: 10 ms windows every 2.5 ms) stays above the recording's floor + --above-db,
by at most --max-ms; the silence after it starts there. Nothing else changes: onsets, phones inside speech, the
audio, the dev split (copied as it is, so a run's dev figures stay comparable).

    python tools/extend_word_ends.py data/ljspeech/ljspeech data/ends/ljspeech-ends [--above-db 15 --max-ms 100]
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from real_edges import HOP, RATE, WINDOW, energy_db, peak_and_floor  # noqa: E402

from speechattn.data.manifests import manifest_pair  # noqa: E402


def extended(items: list, energy: np.ndarray, floor: float, above_db: float, max_ms: float) -> tuple[list, list]:
    """(the items with each phone before a silence ended where the energy falls to the floor + above_db, the ms each
    end moved).  items: lhotse AlignmentItems sorted by start, 'sil' for silence; gaps between items are silence."""
    from lhotse.supervision import AlignmentItem

    out, moved = [], []
    index = lambda seconds: int(np.clip((seconds * RATE - WINDOW / 2) / HOP, 0, len(energy) - 1))  # noqa: E731
    for i, item in enumerate(items):
        following = items[i + 1] if i + 1 < len(items) else None
        end = item.start + item.duration
        if item.symbol == "sil" or (following is not None and following.symbol != "sil"
                                    and following.start <= end + 1e-6):
            out.append(item)
            continue
        limit = end + max_ms / 1000
        if following is not None:  # never into the next phone after the silence
            nxt = next((f for f in items[i + 1:] if f.symbol != "sil"), None)
            if nxt is not None:
                limit = min(limit, nxt.start - 0.01)
        new_end = end
        while new_end + HOP / RATE <= limit and energy[index(new_end + HOP / RATE)] > floor + above_db:
            new_end += HOP / RATE
        moved.append(1000 * (new_end - end))
        out.append(AlignmentItem(symbol=item.symbol, start=item.start, duration=round(new_end - item.start, 6)))
        if following is not None and following.symbol == "sil":
            items[i + 1] = AlignmentItem(symbol="sil", start=round(new_end, 6),
                                         duration=round(max(0.0, following.start + following.duration - new_end), 6))
    return [o for o in out if o.duration > 0], moved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", help="a prepared manifest prefix, e.g. data/ljspeech/ljspeech")
    parser.add_argument("target", help="the new prefix, e.g. data/ends/ljspeech-ends")
    parser.add_argument("--above-db", type=float, default=15.0)
    parser.add_argument("--max-ms", type=float, default=100.0)
    args = parser.parse_args()

    from lhotse import SupervisionSet, load_manifest

    Path(args.target).parent.mkdir(parents=True, exist_ok=True)
    for split in ("dev", "test"):
        for kind, path in zip(("recordings", "supervisions"), manifest_pair(args.source, split)):
            if path.exists():
                shutil.copyfile(path, manifest_pair(args.target, split)[kind == "supervisions"])
    recordings_path, supervisions_path = manifest_pair(args.source, "train")
    recordings = load_manifest(recordings_path)
    supervisions = load_manifest(supervisions_path)
    moved, out = [], []
    for supervision in supervisions:
        audio = recordings[supervision.recording_id].load_audio()
        audio = audio.mean(axis=0) if audio.ndim > 1 else audio
        energy = energy_db(audio)
        if not energy.size:
            out.append(supervision)
            continue
        _, floor = peak_and_floor(energy)
        items = sorted(supervision.alignment["phone"], key=lambda a: a.start)
        new_items, shifts = extended(items, energy, floor, args.above_db, args.max_ms)
        moved += shifts
        out.append(supervision.with_alignment("phone", new_items))
    target_recordings, target_supervisions = manifest_pair(args.target, "train")
    shutil.copyfile(recordings_path, target_recordings)
    SupervisionSet.from_segments(out).to_file(target_supervisions)
    m = np.array(moved) if moved else np.zeros(1)
    print(f"{args.source} -> {args.target}: {len(out)} utterances, {len(moved)} phones before a silence; moved "
          f"{np.mean(m > 0) * 100:.0f} % of them, by {np.median(m[m > 0]) if (m > 0).any() else 0:.1f} ms median "
          f"({np.percentile(m, 90):.1f} ms p90, cap {args.max_ms:g})")


if __name__ == "__main__":
    main()
