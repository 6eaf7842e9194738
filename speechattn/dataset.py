"""The training data path: lhotse cuts -> (16 kHz audio, frame labels), augmented on the fly.

Each item is one supervision's cut: speed-perturbed through lhotse (which moves the phone
alignment), resampled to 16 kHz, augmented (augment.py), cropped to at most `crop_seconds` at a
hop boundary, and labelled with labels.frame_labels, the one labelling function.  Features are
computed from the audio by the model's own frontend in the training step, as in the ONNX graph.
"""

from __future__ import annotations

import numpy as np

from .audio import HOP_SAMPLES, SAMPLE_RATE, num_frames
from .augment import AugmentConfig, augment_waveform


def cut_audio(cut) -> np.ndarray:
    """A cut's audio as mono float32 at 16 kHz."""
    if cut.sampling_rate != SAMPLE_RATE:
        cut = cut.resample(SAMPLE_RATE)
    audio = cut.load_audio()
    return (audio.mean(axis=0) if audio.ndim == 2 else audio).astype(np.float32)


class FrameLabelDataset:
    """Map-style dataset over a lhotse CutSet; item i of epoch e is a deterministic function of (seed, e, i)."""

    def __init__(self, cuts, augment: AugmentConfig | None = None, crop_seconds: float | None = 4.0,
                 seed: int = 0) -> None:
        self.cuts = list(cuts)
        self.augment = augment
        self.crop_seconds = crop_seconds
        self.seed = seed
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return len(self.cuts)

    def _labels(self, cut, frames: int) -> np.ndarray:
        """Frame labels of the cut's supervision, which starts where the cut does (cuts_from_manifests)."""
        from .corpora import supervision_frame_labels

        return supervision_frame_labels(cut.supervisions[0], frames)

    def load(self, cut, rng: np.random.Generator | None):
        """(audio (N,) float32 16 kHz, labels (ceil(N / 160),) int64) of one cut; no rng: no randomness."""
        if rng is not None and self.augment is not None:
            factor = float(rng.choice(self.augment.speed_factors))
            if factor != 1.0:
                cut = cut.perturb_speed(factor)
        cut = cut.resample(SAMPLE_RATE) if cut.sampling_rate != SAMPLE_RATE else cut
        audio = cut_audio(cut)
        labels = self._labels(cut, num_frames(len(audio)))
        if rng is not None and self.augment is not None:
            babble = None
            if self.augment.babble_share > 0 and len(self.cuts) > 1:
                others = rng.choice(len(self.cuts), size=min(3, len(self.cuts) - 1), replace=False)
                babble = [cut_audio(self.cuts[i]) for i in others]
            audio = augment_waveform(audio, rng, self.augment, babble)
        if self.crop_seconds and len(audio) > self.crop_seconds * SAMPLE_RATE and rng is not None:
            crop_frames = int(self.crop_seconds * SAMPLE_RATE) // HOP_SAMPLES
            start = int(rng.integers(0, len(labels) - crop_frames + 1))
            audio = audio[start * HOP_SAMPLES : (start + crop_frames) * HOP_SAMPLES]
            labels = labels[start : start + crop_frames]
        return audio, labels

    def __getitem__(self, index: int):
        return self.load(self.cuts[index], np.random.default_rng([self.seed, self.epoch, index]))


def cuts_from_manifests(recordings_path, supervisions_path):
    """One cut per supervision (the whole utterance), from the files `speechattn prepare` writes."""
    from lhotse import CutSet, load_manifest

    cuts = CutSet.from_manifests(recordings=load_manifest(recordings_path), supervisions=load_manifest(supervisions_path))
    return cuts.trim_to_supervisions(keep_overlapping=False)


def collate(items: list[tuple[np.ndarray, np.ndarray]]):
    """Pad a batch: audio (B, N_max) float32, labels (B, T_max) int64 padded with IGNORE, lengths (B,) frames."""
    import torch

    from .phones import IGNORE

    longest = max(len(a) for a, _ in items)
    longest += (-longest) % HOP_SAMPLES
    audio = torch.zeros(len(items), longest)
    labels = torch.full((len(items), longest // HOP_SAMPLES), IGNORE, dtype=torch.int64)
    lengths = torch.zeros(len(items), dtype=torch.int64)
    for row, (samples, frame_labels) in enumerate(items):
        audio[row, : len(samples)] = torch.from_numpy(samples)
        labels[row, : len(frame_labels)] = torch.from_numpy(frame_labels)
        lengths[row] = len(frame_labels)
    return audio, labels, lengths
