"""bench/hmm_boundaries.py's miss counts on the synthetic voices: the kind of each frame-label boundary, and the
misses split into near (one frame past the 20 ms tolerance) and far."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from hmm_boundaries import grid_kinds, near_far  # noqa: E402

from speechattn.phones import PHONE_TO_INDEX  # noqa: E402


def test_grid_kinds_names_each_boundary_of_frame_labels_in_order():
    sil, aa, t, s = (PHONE_TO_INDEX[p] for p in ("sil", "AA", "T", "S"))
    labels = np.array([sil, sil, aa, aa, t, s, s, sil])
    assert grid_kinds(labels) == ["silence→speech", "vowel→stop", "consonant→consonant", "speech→silence"]


def test_near_far_counts_only_misses_and_splits_them_at_30_ms():
    scored = [("x", e) for e in (0, -10, 20, -20, 30, -30, 25, 40, -70, 10_000)]
    assert near_far(scored) == (3, 3)
