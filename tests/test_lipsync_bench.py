"""bench/lipsync.py's scoring of a mouth shown the moment it exists, of a tool's mouth through our cue rules, and of
the never-moving floor; bench/lipsync_peers.py's timestamps -> frames."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from lipsync import NeverMoves, shape_segments, shown_late, shown_per_chunk  # noqa: E402
from lipsync_peers import frames_from_events, oculus_to_vrm  # noqa: E402

from speechattn.phones import PHONES  # noqa: E402
from speechattn_export.segments import Segment  # noqa: E402
from speechattn_export.visemes import OCULUS, VRM, Cue, make_cues  # noqa: E402


def test_labels_known_late_are_shown_late_with_the_rest_shape_before():
    labels = np.array([1, 2, 3, 4, 5])
    assert shown_late(labels, 2, 0).tolist() == [0, 0, 1, 2, 3]
    assert shown_late(labels, 0, 0).tolist() == [1, 2, 3, 4, 5]
    assert shown_late(labels, 9, 0).tolist() == [0, 0, 0, 0, 0]


def test_the_low_latency_mouth_shows_the_newest_frame_of_the_last_whole_chunk_until_the_next():
    labels = np.arange(10, 26)  # frame t's own label is 10 + t
    shown = shown_per_chunk(labels, chunk_frames=4, output_delay_frames=2, rest=0)
    # chunk 0: nothing heard yet; after frames 0-3 the model has put out frames 0-1: frame 1 held for frames 4-7
    assert shown.tolist() == [0, 0, 0, 0, 11, 11, 11, 11, 15, 15, 15, 15, 19, 19, 19, 19]
    # the display is always between output_delay + 1 and output_delay + chunk frames behind the audio
    behind = np.arange(16)[4:] - (shown[4:] - 10)
    assert behind.min() == 3 and behind.max() == 6


def test_a_tools_shapes_become_the_cues_our_rules_make_from_phones_of_those_shapes():
    # two frames of E inside A are too brief to be seen (under 70 ms) and join A, as they would for our phones
    shapes = ["sil"] * 5 + ["A"] * 10 + ["E"] * 2 + ["A"] * 10 + ["sil"] * 5
    cues = make_cues(shape_segments(shapes, VRM, PHONES), VRM, PHONES)
    assert [(c.start_frame, c.end_frame, c.shape) for c in cues] == [(0, 5, "sil"), (5, 27, "A"), (27, 32, "sil")]
    # Oculus's closed lips stand for P, so a single frame of them is kept and lengthened as our phone P would be
    shapes = ["aa"] * 10 + ["PP"] + ["aa"] * 10
    cues = make_cues(shape_segments(shapes, OCULUS, PHONES), OCULUS, PHONES)
    index = PHONES.index
    phones = [Segment(0, 10, index("AA"), 1.0), Segment(10, 11, index("P"), 1.0), Segment(11, 21, index("AA"), 1.0)]
    assert cues == make_cues(phones, OCULUS, PHONES)
    assert [c.shape for c in cues] == ["aa", "PP", "aa"] and cues[1].frames > 1


def test_the_floor_is_the_most_common_reference_shape_held_throughout():
    floor = NeverMoves()
    reference = [Cue(0, 3, "sil"), Cue(3, 9, "A"), Cue(9, 10, "sil")]
    labels = np.array([0] * 3 + [1] * 6 + [0])  # VRM columns: sil, A
    floor.add(reference, labels, np.ones(10, bool), VRM)
    assert floor.shape == "A" and floor.frame_accuracy == 0.6
    assert floor.error_rate == 2 / 3  # one cue of A against sil A sil: two deletions


def test_tool_outputs_hold_from_their_stamp_to_the_next():
    assert frames_from_events([0.015, 0.03], ["A", "E"], 5, "sil") == ["sil", "sil", "A", "E", "E"]
    assert frames_from_events([], [], 2, "sil") == ["sil", "sil"]


def test_every_oculus_viseme_is_one_vrm_shape():
    mapping = oculus_to_vrm()
    assert set(mapping) == set(OCULUS.shapes) and mapping["PP"] == "sil" and mapping["aa"] == "A"
