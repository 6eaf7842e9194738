"""On-the-fly augmentation for the training data path.  Evaluation uses none of it.

Waveform, in this order: speed perturbation (lhotse's, which moves the phone alignment with the
audio), gain, simulated room reverberation (pyroomacoustics image-source rooms), additive noise
(coloured noise, babble made of other utterances, or recorded room noise from `noise_dir`) at a random SNR, band limiting (telephone
band or a random low-pass).  Features: SpecAugment-style frequency and time masks (training step).
Every draw comes from the generator the caller passes, so a seed reproduces an epoch exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from speechattn.audio import SAMPLE_RATE


@dataclass(frozen=True)
class AugmentConfig:
    speed_factors: tuple[float, ...] = (0.9, 1.0, 1.1)  # one drawn per utterance; labels move with the audio
    gain_db: tuple[float, float] = (-12.0, 6.0)  # uniform, relative to the recording's level (used when level_dbfs is empty)
    level_dbfs: tuple[float, ...] = ()  # [low, high]: set each utterance's RMS level to a level drawn uniformly from this range
    # (dBFS), so the model meets quiet microphones and distant speakers; peaks are kept below full scale
    reverb_probability: float = 0.3
    rt60_seconds: tuple = (0.15, 0.8)  # reverberation time of the simulated room
    noise_probability: float = 0.5
    snr_db: tuple[float, float] = (0.0, 30.0)  # uniform
    babble_share: float = 0.3  # of the noisy utterances, those whose noise is babble
    noise_dir: str = ""  # recorded noise clips (noiseNNN.*, MS-SNSD's layout); "" = none. Only their training split
    # is read (speechattn/data/noise.py: DEV_NOISE_CLIPS are bench/level_robustness.py's and never trained on)
    recorded_noise_share: float = 0.0  # of the noisy utterances that are not babble, those whose noise is recorded
    band_limit_probability: float = 0.2  # half telephone band (300-3400 Hz), half random low-pass 3-7 kHz
    freq_masks: int = 2  # SpecAugment: masks per utterance
    freq_mask_bins: int = 10  # widest frequency mask
    time_masks: int = 2
    time_mask_frames: int = 20  # widest time mask (10 ms frames)
    room_pool: int = 64  # distinct simulated rooms per run, each built once and reused (0: a new room every draw)

    def __post_init__(self) -> None:
        from speechattn.errors import ConfigError

        for key in ("reverb_probability", "noise_probability", "babble_share", "band_limit_probability",
                    "recorded_noise_share"):
            if not 0 <= getattr(self, key) <= 1:
                raise ConfigError(f"augment.{key} is a probability, from 0 to 1")
        if self.level_dbfs and (len(self.level_dbfs) != 2 or self.level_dbfs[0] > self.level_dbfs[1]
                                or not -120 <= self.level_dbfs[0] <= self.level_dbfs[1] <= 0):
            raise ConfigError(f"augment.level_dbfs must be [low, high] dBFS, each from -120 to 0, not {list(self.level_dbfs)}")
        for key in ("gain_db", "rt60_seconds", "snr_db"):
            low_high = getattr(self, key)
            if len(low_high) != 2 or low_high[0] > low_high[1]:
                raise ConfigError(f"augment.{key} must be [low, high], not {list(low_high)}")
        if self.recorded_noise_share > 0 and not self.noise_dir:
            raise ConfigError("augment.recorded_noise_share needs augment.noise_dir, a folder of noise clips")
        if self.noise_dir:
            from speechattn.data.noise import noise_clips

            if not Path(self.noise_dir).is_dir() or not noise_clips(self.noise_dir, "train"):
                raise ConfigError(f"augment.noise_dir: {self.noise_dir} is no folder of noiseNNN clips outside the "
                                  "dev ones (noise452 .. noise551)")
        if self.room_pool < 0:
            raise ConfigError("augment.room_pool must be >= 0")
        if not self.speed_factors or not all(0.5 <= f <= 2 for f in self.speed_factors):
            raise ConfigError(f"augment.speed_factors must list factors from 0.5 to 2, not {list(self.speed_factors)}")
        for key, low, high in (("gain_db", -120, 60), ("rt60_seconds", 0.01, 10), ("snr_db", -30, 120)):
            if not low <= getattr(self, key)[0] <= getattr(self, key)[1] <= high:
                raise ConfigError(f"augment.{key} must lie from {low} to {high}, not {list(getattr(self, key))}")
        for key, high in (("freq_masks", 20), ("freq_mask_bins", 80), ("time_masks", 100), ("time_mask_frames", 1000),
                          ("room_pool", 10_000)):
            if not 0 <= getattr(self, key) <= high:
                raise ConfigError(f"augment.{key} must be from 0 to {high:,}, not {getattr(self, key):,}")


def apply_gain(audio: np.ndarray, rng: np.random.Generator, config: AugmentConfig) -> np.ndarray:
    if not config.level_dbfs:
        return audio * np.float32(10 ** (rng.uniform(*config.gain_db) / 20))
    target_rms = 10 ** (rng.uniform(*config.level_dbfs) / 20)
    rms = float(np.sqrt(np.mean(np.square(audio, dtype=np.float64)))) if audio.size else 0.0
    if rms < 1e-6:  # digital silence: nothing to scale
        return audio
    gain = target_rms / rms
    peak = float(np.max(np.abs(audio)))
    return audio * np.float32(min(gain, 0.99 / peak))


def room_impulse_response(rng: np.random.Generator, config: AugmentConfig) -> np.ndarray:
    """A shoebox room of random size and reverberation time, random source and microphone positions."""
    import pyroomacoustics as pra

    size = rng.uniform([3.0, 3.0, 2.4], [10.0, 8.0, 4.0])
    rt60 = rng.uniform(*config.rt60_seconds)
    try:
        absorption, max_order = pra.inverse_sabine(rt60, size)
    except ValueError:  # the room cannot be that reverberant: take the most absorbent version of it
        absorption, max_order = 1.0, 0
    room = pra.ShoeBox(size, fs=SAMPLE_RATE, materials=pra.Material(absorption), max_order=min(max_order, 15))
    room.add_source(rng.uniform(0.5, size - 0.5))
    room.add_microphone(rng.uniform(0.5, size - 0.5))
    room.compute_rir()
    return np.asarray(room.rir[0][0], dtype=np.float64)


class RoomPool:
    """`size` simulated rooms, room k a function of (seed, k) alone, each built on first use and kept: a
    room costs tens of milliseconds to simulate, so drawing from a pool keeps it off the training step."""

    def __init__(self, config: AugmentConfig, seed: int = 0) -> None:
        self.config, self.seed = config, seed
        self._rooms: dict[int, np.ndarray] = {}

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        if self.config.room_pool == 0:
            return room_impulse_response(rng, self.config)
        k = int(rng.integers(self.config.room_pool))
        if k not in self._rooms:
            self._rooms[k] = room_impulse_response(np.random.default_rng([self.seed, 104_729, k]), self.config)
        return self._rooms[k]


def apply_reverb(audio: np.ndarray, rng: np.random.Generator, config: AugmentConfig,
                 rooms: RoomPool | None = None) -> np.ndarray:
    """Convolve with a simulated room; the direct path stays where it was (labels do not move)."""
    from scipy.signal import fftconvolve

    rir = rooms.draw(rng) if rooms is not None else room_impulse_response(rng, config)
    direct = int(np.argmax(np.abs(rir)))
    wet = fftconvolve(audio.astype(np.float64), rir[direct:])[: len(audio)]
    scale = np.sqrt((audio.astype(np.float64) ** 2).sum() / max((wet**2).sum(), 1e-12))
    return (wet * scale).astype(np.float32)


def coloured_noise(length: int, rng: np.random.Generator) -> np.ndarray:
    """Noise with power falling as 1/f^beta, beta in [0, 2] (white to brown)."""
    beta = rng.uniform(0.0, 2.0)
    spectrum = np.fft.rfft(rng.standard_normal(length))
    frequencies = np.fft.rfftfreq(length, 1 / SAMPLE_RATE)
    spectrum *= np.where(frequencies > 0, np.maximum(frequencies, 20.0) ** (-beta / 2), 0.0)
    return np.fft.irfft(spectrum, length)


def add_noise(audio: np.ndarray, noise: np.ndarray, rng: np.random.Generator, config: AugmentConfig) -> np.ndarray:
    signal_power = float((audio.astype(np.float64) ** 2).mean())
    noise_power = float((noise**2).mean())
    if signal_power <= 0 or noise_power <= 0:
        return audio
    snr = rng.uniform(*config.snr_db)
    return (audio + noise * np.sqrt(signal_power / (noise_power * 10 ** (snr / 10)))).astype(np.float32)


def band_limit(audio: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    from scipy.signal import butter, sosfiltfilt

    if rng.random() < 0.5:
        sos = butter(6, [300, 3400], btype="bandpass", fs=SAMPLE_RATE, output="sos")  # telephone
    else:
        sos = butter(8, rng.uniform(3000, 7000), btype="lowpass", fs=SAMPLE_RATE, output="sos")
    return sosfiltfilt(sos, audio).astype(np.float32)


def augment_waveform(audio: np.ndarray, rng: np.random.Generator, config: AugmentConfig,
                     babble_sources: list[np.ndarray] | None = None, rooms: RoomPool | None = None,
                     recorded_noise=None) -> np.ndarray:
    """Everything after speed perturbation (which the dataset applies, to move the labels with the audio).
    `recorded_noise`: a noise.TrainingNoise; without one (or with recorded_noise_share 0) nothing more is drawn, so
    a recipe without recorded noise sees the data it saw before the option existed."""
    audio = apply_gain(audio, rng, config)
    if rng.random() < config.reverb_probability:
        audio = apply_reverb(audio, rng, config, rooms)
    if rng.random() < config.noise_probability:
        if babble_sources and rng.random() < config.babble_share:
            noise = np.zeros(len(audio))
            for source in babble_sources:
                start = rng.integers(0, max(1, len(source) - len(audio)))
                piece = source[start : start + len(audio)]
                noise[: len(piece)] += piece
        elif recorded_noise is not None and config.recorded_noise_share > 0 \
                and rng.random() < config.recorded_noise_share:
            noise = recorded_noise.draw(len(audio), rng)
        else:
            noise = coloured_noise(len(audio), rng)
        audio = add_noise(audio, noise, rng, config)
    if rng.random() < config.band_limit_probability:
        audio = band_limit(audio, rng)
    return np.clip(audio, -1.0, 1.0).astype(np.float32)


def spec_augment(features, lengths, generator, config: AugmentConfig):
    """Frequency and time masks on (B, T, F) features, in place of the masked values: zeros (the mean,
    after normalisation).  `generator` is a torch.Generator; masks stay inside each item's length."""
    import torch

    features = features.clone()
    B, T, F = features.shape
    for b in range(B):
        length = int(lengths[b])
        for _ in range(config.freq_masks):
            width = int(torch.randint(0, config.freq_mask_bins + 1, (1,), generator=generator))
            start = int(torch.randint(0, max(1, F - width), (1,), generator=generator))
            features[b, :, start : start + width] = 0.0
        for _ in range(config.time_masks):
            width = int(torch.randint(0, min(config.time_mask_frames, max(1, length // 5)) + 1, (1,),
                                      generator=generator))
            start = int(torch.randint(0, max(1, length - width), (1,), generator=generator))
            features[b, start : start + width, :] = 0.0
    return features
