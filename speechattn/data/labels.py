"""Frame labels from time alignments: the one function training, evaluation and tests all use.

Frame i is the label of hop i, time [10 i, 10 i + 10) ms (see audio.py), so it takes the phone
whose interval holds the hop's centre, 10 i + 5 ms.  Frames whose centre no interval covers are
silence.  Intervals are (start_seconds, end_seconds, phone_index), half-open, in any order.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from speechattn.audio import FRAMES_PER_SECOND
from speechattn.phones import PHONE_TO_INDEX, SILENCE

HOP_CENTRE_SECONDS = 0.5 / FRAMES_PER_SECOND  # 5 ms


def frame_labels(intervals: Iterable[tuple[float, float, int]], num_frames: int) -> np.ndarray:
    """(num_frames,) int64 phone indices; later intervals win where intervals overlap."""
    labels = np.full(num_frames, PHONE_TO_INDEX[SILENCE], dtype=np.int64)
    centres = np.arange(num_frames) / FRAMES_PER_SECOND + HOP_CENTRE_SECONDS
    for start, end, phone in intervals:
        first, last = np.searchsorted(centres, [start, end], side="left")
        labels[first:last] = phone
    return labels
