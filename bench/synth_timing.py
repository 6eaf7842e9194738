"""How well do the synthesizer's phone timings match its audio?

For utterances of the built-in corpus plan (random voices, rates, pitches, texts):
  1. energy (dB, 10 ms frames) of frames labelled silence vs frames labelled as phones;
  2. at every silence -> speech label boundary, the offset to the audio's energy onset (the first frame
     within +-100 ms whose energy rises 25 dB above the utterance's silence level); and the same at
     speech -> silence boundaries for the energy offset.

    python bench/synth_timing.py [--utterances 300]
"""

from __future__ import annotations

import argparse

import numpy as np

from speechattn.labels import frame_labels
from speechattn.phones import PHONE_TO_INDEX, PHONES
from speechattn.synth import SynthConfig, espeak, plan

SIL = PHONE_TO_INDEX["sil"]
STOPS = {PHONE_TO_INDEX[p] for p in "P T K B D G".split()}  # begin with a closure: quiet by nature


def frame_db(audio: np.ndarray) -> np.ndarray:
    frames = len(audio) // 160
    energy = (audio[: frames * 160].reshape(frames, 160).astype(np.float64) ** 2).mean(1)
    return 10 * np.log10(energy + 1e-12)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--utterances", type=int, default=300)
    args = parser.parse_args()
    engine = espeak()
    jobs = plan(SynthConfig(hours=args.utterances * 3.8 / 3600))[: args.utterances]
    silence_db, speech_db, onsets, offsets, by_phone = [], [], [], [], {}
    for job in jobs:
        utterance = engine.synthesize(job.text, job.voice, job.rate_wpm, job.pitch, job.pitch_range)
        db = frame_db(utterance.audio)
        labels = frame_labels(utterance.intervals, len(db))
        floor = np.percentile(db[labels == SIL], 50) if (labels == SIL).any() else db.min()
        silence_db += db[labels == SIL].tolist()
        speech_db += db[labels != SIL].tolist()
        for i in range(1, len(labels)):
            if labels[i - 1] == SIL and labels[i] != SIL and labels[i] not in STOPS:
                window = np.arange(max(0, i - 10), min(len(db), i + 11))
                loud = window[db[window] > floor + 25]
                if loud.size:
                    onsets.append((loud[0] - i) * 10)
                    by_phone.setdefault(PHONES[labels[i]], []).append((loud[0] - i) * 10)
            if labels[i - 1] != SIL and labels[i] == SIL and labels[i - 1] not in STOPS:
                window = np.arange(max(0, i - 10), min(len(db), i + 11))
                loud = window[db[window] > floor + 25]
                if loud.size:
                    offsets.append((loud[-1] + 1 - i) * 10)
    silence_db, speech_db = np.array(silence_db), np.array(speech_db)
    print(f"{len(jobs)} utterances, {len({j.voice for j in jobs})} voices, "
          f"{(len(silence_db) + len(speech_db)) / 100 / 60:.1f} minutes")
    print(f"frame energy, labelled silence: median {np.median(silence_db):.1f} dB, 90th percentile "
          f"{np.percentile(silence_db, 90):.1f} dB")
    print(f"frame energy, labelled phones:  median {np.median(speech_db):.1f} dB, 10th percentile "
          f"{np.percentile(speech_db, 10):.1f} dB")
    for name, values in (("silence -> speech", onsets), ("speech -> silence", offsets)):
        values = np.array(values)
        print(f"{name}: {len(values)} boundaries; energy edge minus label edge: median {np.median(values):+.0f} ms, "
              f"middle 80 % [{np.percentile(values, 10):+.0f}, {np.percentile(values, 90):+.0f}] ms, "
              f"within +-10 ms: {100 * np.mean(np.abs(values) <= 10):.0f} %")
    worst = sorted(by_phone.items(), key=lambda kv: -abs(np.median(kv[1])))[:5]
    print("onset offsets by first phone (largest medians): "
          + ", ".join(f"{p} {np.median(v):+.0f} ms (n={len(v)})" for p, v in worst))


if __name__ == "__main__":
    main()
