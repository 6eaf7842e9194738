"""`speechattn data-stats`: what a manifest holds, in numbers and one picture."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from speechattn.audio import FRAMES_PER_SECOND
from speechattn.errors import SpeechattnError
from speechattn.phones import IGNORE, NUM_PHONES, PHONES


@dataclass
class ManifestStats:
    utterances: int = 0
    speakers: set = field(default_factory=set)
    seconds: float = 0.0
    phone_frames: np.ndarray = field(default_factory=lambda: np.zeros(NUM_PHONES, dtype=np.int64))
    ignored_frames: int = 0

    @property
    def hours(self) -> float:
        return self.seconds / 3600


def manifest_stats(path: str | Path) -> ManifestStats:
    from lhotse import SupervisionSet, load_manifest

    from speechattn.data.corpora import supervision_frame_labels

    path = Path(path)
    if not path.exists():
        raise SpeechattnError(f"{path}: no such manifest")
    try:
        supervisions = load_manifest(path)
    except Exception as error:
        raise SpeechattnError(f"{path}: not a readable lhotse manifest ({error})") from None
    if not isinstance(supervisions, SupervisionSet):
        raise SpeechattnError(f"{path}: holds {type(supervisions).__name__}, not supervisions (the *_supervisions_* file)")
    stats = ManifestStats()
    for supervision in supervisions:
        stats.utterances += 1
        stats.speakers.add(supervision.speaker)
        stats.seconds += supervision.duration
        if supervision.alignment and "phone" in supervision.alignment:
            labels = supervision_frame_labels(supervision, int(round(supervision.duration * FRAMES_PER_SECOND)))
            stats.ignored_frames += int((labels == IGNORE).sum())
            stats.phone_frames += np.bincount(labels[labels != IGNORE], minlength=NUM_PHONES)
    return stats


def format_stats(stats: ManifestStats, name: str) -> str:
    total = max(int(stats.phone_frames.sum()), 1)
    lines = [f"{name}: {stats.utterances} utterances, {len(stats.speakers)} speakers, {stats.hours:.3f} hours",
             f"labelled frames: {int(stats.phone_frames.sum()):,} (+ {stats.ignored_frames:,} ignored)",
             f"{'phone':<6}{'frames':>10}{'share':>8}"]
    for index in np.argsort(-stats.phone_frames):
        lines.append(f"{PHONES[index]:<6}{stats.phone_frames[index]:>10,}{100 * stats.phone_frames[index] / total:>7.2f}%")
    missing = [PHONES[i] for i in range(NUM_PHONES) if stats.phone_frames[i] == 0]
    if missing:
        lines.append(f"phones with no frame: {' '.join(missing)}")
    return "\n".join(lines)


def plot_phone_distribution(stats: ManifestStats, name: str, path: str | Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = np.argsort(-stats.phone_frames)
    seconds = stats.phone_frames[order] / FRAMES_PER_SECOND
    figure, axis = plt.subplots(figsize=(12, 4.5))
    colours = ["#999999" if PHONES[i] == "sil" else "#3b75af" for i in order]
    axis.bar(range(NUM_PHONES), seconds, color=colours)
    axis.set_xticks(range(NUM_PHONES), [PHONES[i] for i in order], rotation=90)
    axis.set_ylabel("seconds of frames")
    axis.set_title(f"{name}: {stats.utterances} utterances, {len(stats.speakers)} speakers, "
                   f"{stats.hours:.2f} h — frames per phone")
    axis.grid(axis="y", alpha=0.3)
    figure.tight_layout()
    from speechattn.files import atomic_path

    with atomic_path(path) as temporary:
        figure.savefig(temporary, dpi=110)
    plt.close(figure)
