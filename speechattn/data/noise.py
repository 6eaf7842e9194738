"""Real background noise (MS-SNSD's clips, ../shared/data/mssnsd-noise) for noisy dev conditions, and the split
that keeps the dev clips out of training.

A noisy dev utterance is made in two steps, each deterministic:

    noise = dev_noise(clips, utterance_id, length)   # one clip chosen by the id, looped and cropped to length
    mixed = mix_at_snr(speech, noise, snr_db, speech_mask)
    mixed, clipped = set_level(mixed, level_dbfs)     # the mix, not the speech, at the level a microphone gives

The SNR is active speech against the noise: speech power over the samples of the frames the reference labels call
speech (every label but silence; ITU-T P.56 measures speech the same way, over its active part), noise power over
the whole utterance's noise.  Measuring the speech over the whole utterance instead would make the same noise
louder for an utterance with long pauses.  The noise segment depends on the utterance id alone, so every SNR and
level of one utterance carries the same noise.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np

DEV_NOISE_CLIPS = range(452, 552)  # noise452 .. noise551: the last 100 of the 552 clips, dev only, never trained on
_CLIP_NAME = re.compile(r"noise(\d+)$")
FULL_SCALE_PEAK = 0.999  # set_level keeps peaks below this (an utterance that would clip is scaled down instead)


def noise_clips(folder: str | Path, split: str) -> list[Path]:
    """The clips of `folder` (noiseNNN.*) in `split`: "dev" the DEV_NOISE_CLIPS, "train" every other one."""
    if split not in ("train", "dev"):
        raise ValueError(f"split is 'train' or 'dev', not {split!r}")
    clips = []
    for path in Path(folder).iterdir():
        match = _CLIP_NAME.match(path.stem)
        if match and (int(match[1]) in DEV_NOISE_CLIPS) == (split == "dev"):
            clips.append((int(match[1]), path))
    return [path for _, path in sorted(clips)]


def utterance_rng(utterance_id: str) -> np.random.Generator:
    """A generator seeded by the id alone (a digest: Python's hash() changes between processes)."""
    return np.random.default_rng(int.from_bytes(hashlib.sha256(utterance_id.encode()).digest()[:8], "little"))


def dev_noise(clips: list[np.ndarray], utterance_id: str, length: int) -> np.ndarray:
    """`length` samples of one clip, chosen and started at a point drawn from the utterance id, looped as needed."""
    rng = utterance_rng(utterance_id)
    clip = clips[int(rng.integers(len(clips)))]
    start = int(rng.integers(len(clip)))
    return np.resize(np.roll(clip, -start), length).astype(np.float32)  # np.resize repeats the clip to fill length


class TrainingNoise:
    """The training split of a noise folder for augmentation, decoded on first use (int16: MS-SNSD's 452 training clips
    of ~6.5 s hold 94 MB) and kept for the loader worker's life."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self._clips: list[np.ndarray] | None = None

    def clips(self) -> list[np.ndarray]:
        if self._clips is None:
            from speechattn.audio import load_audio

            self._clips = [(np.clip(load_audio(path), -1, 1) * 32767).astype(np.int16)
                           for path in noise_clips(self.folder, "train")]
        return self._clips

    def draw(self, length: int, rng: np.random.Generator) -> np.ndarray:
        """`length` samples (float64) of a clip drawn from `rng`, from a drawn start, looped as needed."""
        clips = self.clips()
        clip = clips[int(rng.integers(len(clips)))]
        start = int(rng.integers(len(clip)))
        return np.resize(np.roll(clip, -start), length) / 32768.0


def power(audio: np.ndarray) -> float:
    return float(np.mean(np.square(audio, dtype=np.float64))) if audio.size else 0.0


def rms_dbfs(audio: np.ndarray) -> float:
    return 10 * np.log10(max(power(audio), 1e-20))


def speech_samples(labels: np.ndarray, silence: int, hop_samples: int, length: int) -> np.ndarray:
    """(length,) bool: the samples of the frames whose label is not `silence`."""
    return np.repeat(labels != silence, hop_samples)[:length]


def mix_at_snr(speech: np.ndarray, noise: np.ndarray, snr_db: float, speech_mask: np.ndarray) -> np.ndarray:
    """speech + noise scaled so that speech power over `speech_mask` over noise power is `snr_db`."""
    speech_power = power(speech[speech_mask]) if speech_mask.any() else power(speech)
    gain = np.sqrt(speech_power / (max(power(noise), 1e-20) * 10 ** (snr_db / 10)))
    return (speech.astype(np.float64) + gain * noise).astype(np.float32)


def set_level(audio: np.ndarray, level_dbfs: float) -> tuple[np.ndarray, bool]:
    """The audio at an RMS of `level_dbfs` (one gain for the whole utterance), and whether its peak had to be held
    below full scale instead (then it is quieter than asked)."""
    out = audio * 10 ** ((level_dbfs - rms_dbfs(audio)) / 20)
    peak = float(np.abs(out).max()) if out.size else 0.0
    clipped = peak > FULL_SCALE_PEAK
    return (out / peak * FULL_SCALE_PEAK if clipped else out).astype(np.float32), clipped
