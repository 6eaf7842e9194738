"""How well do the synthesizer's phone timings match its audio?

For utterances of the built-in corpus plan (random voices, rates, pitches, texts):
  1. energy (dB, 10 ms frames) of frames labelled silence vs frames labelled as phones;
  2. at every silence -> speech label boundary, the offset to the audio's energy onset: walking out
     from the boundary (at most 100 ms), where frames cross to within 25 dB of the utterance's median
     speech level; and the same at speech -> silence boundaries.  Reported per engine (espeak-ng's
     voice variants with and without an echo effect apart).
Stops (P T K B D G) are left out: they begin with a closure, quiet by nature.

    python bench/synth_timing.py [--utterances 300]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from speechattn.data.labels import frame_labels
from speechattn_export.segments import label_intervals
from speechattn.phones import PHONE_TO_INDEX, PHONES
from speechattn.data.synth import SynthConfig, engine, engine_of, espeak, plan

SIL = PHONE_TO_INDEX["sil"]
STOPS = {PHONE_TO_INDEX[p] for p in "P T K B D G".split()}  # begin with a closure: quiet by nature


def frame_db(audio: np.ndarray) -> np.ndarray:
    frames = len(audio) // 160
    energy = (audio[: frames * 160].reshape(frames, 160).astype(np.float64) ** 2).mean(1)
    return 10 * np.log10(energy + 1e-12)


def energy_edge(loud: np.ndarray, boundary: int, rising: bool, low: int, high: int, reach: int = 10) -> int:
    """The frame where loudness changes nearest the label boundary, walking out from it (at most `reach`
    frames, and not past the runs on either side): for a rising edge, the first loud frame of the loud
    stretch at or after the boundary; for a falling edge, the first quiet frame after the loud stretch."""
    low, high = max(low, boundary - reach), min(high, boundary + reach)
    position = boundary
    if rising:
        if loud[position]:
            while position > low and loud[position - 1]:
                position -= 1
        else:
            while position < high - 1 and not loud[position]:
                position += 1
        return position
    if loud[position]:
        while position < high - 1 and loud[position]:
            position += 1
    else:
        while position > low and not loud[position - 1]:
            position -= 1
    return position


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--utterances", type=int, default=300)
    args = parser.parse_args()
    espeak_data = espeak().data_path
    jobs = plan(SynthConfig(hours=args.utterances * 3.8 / 3600))[: args.utterances]
    silence_db, speech_db, onsets, offsets, by_phone = [], [], [], [], {}
    echo_free: dict[str, tuple[list, list]] = {}
    echo_variants = {p.name for p in (Path(espeak_data) / "voices" / "!v").iterdir()
                     if any(line.strip().startswith("echo") and line.split()[2:3] != ["0"]
                            for line in p.read_text(errors="replace").splitlines())}
    for job in jobs:
        utterance = engine(engine_of(job.voice)).synthesize(job.text, job.voice, job.rate_wpm, job.pitch,
                                                            job.pitch_range)
        db = frame_db(utterance.audio)
        labels = frame_labels(utterance.intervals, len(db))
        level = np.median(db[labels != SIL]) - 25  # "loud": within 25 dB of this utterance's speech
        name = engine_of(job.voice)
        if name == "espeak":
            name += " (echo variants)" if job.voice.split("+")[1] in echo_variants else " (no echo)"
        groups = [echo_free.setdefault("all engines", ([], [])), echo_free.setdefault(name, ([], []))]
        silence_db += db[labels == SIL].tolist()
        speech_db += db[labels != SIL].tolist()
        loud = db > level
        runs = label_intervals(labels)
        for (s0, e0, p0), (s1, e1, p1) in zip(runs, runs[1:]):
            if p0 == SIL and p1 not in STOPS:  # silence -> speech at frame s1
                edge = energy_edge(loud, s1, rising=True, low=s0, high=e1)
                for group in groups:
                    group[0].append((edge - s1) * 10)
                by_phone.setdefault(PHONES[p1], []).append((edge - s1) * 10)
            if p1 == SIL and p0 not in STOPS:  # speech -> silence at frame s1
                edge = energy_edge(loud, s1, rising=False, low=s0, high=e1)
                for group in groups:
                    group[1].append((edge - s1) * 10)
    silence_db, speech_db = np.array(silence_db), np.array(speech_db)
    print(f"{len(jobs)} utterances, {len({j.voice for j in jobs})} voices, "
          f"{(len(silence_db) + len(speech_db)) / 100 / 60:.1f} minutes")
    print(f"frame energy, labelled silence: median {np.median(silence_db):.1f} dB, 90th percentile "
          f"{np.percentile(silence_db, 90):.1f} dB")
    print(f"frame energy, labelled phones:  median {np.median(speech_db):.1f} dB, 10th percentile "
          f"{np.percentile(speech_db, 10):.1f} dB")
    for group, (onsets, offsets) in sorted(echo_free.items()):
        for name, values in (("silence -> speech", onsets), ("speech -> silence", offsets)):
            values = np.array(values)
            print(f"{group}, {name}: {len(values)} boundaries; energy edge minus label edge: median "
                  f"{np.median(values):+.0f} ms, middle 80 % [{np.percentile(values, 10):+.0f}, "
                  f"{np.percentile(values, 90):+.0f}] ms, within +-10 ms: {100 * np.mean(np.abs(values) <= 10):.0f} %")
    worst = sorted(by_phone.items(), key=lambda kv: -abs(np.median(kv[1])))[:5]
    print("onset offsets by first phone (largest medians): "
          + ", ".join(f"{p} {np.median(v):+.0f} ms (n={len(v)})" for p, v in worst))


if __name__ == "__main__":
    main()
