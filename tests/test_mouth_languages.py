"""bench/mouth_languages.py: the per-language mouth check's scoring, tables and command line (no data, no network)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import mouth_languages  # noqa: E402
from mouth_languages import Tally, alignment_labels, markdown_tables, target_lines, word_draws  # noqa: E402


def tiny_tally() -> Tally:
    """English real: ours right on 9 of 10 rhubarb frames, the peer on 5; Spanish real: ours 6 of 10, the peer 4."""
    tally = Tally()
    truth = {"rhubarb": list("XXAABBCCDD")}
    tally.add(("real", "en"), truth, {"ours": {"rhubarb": list("XXAABBCCDX")},
                                      "peer": {"rhubarb": list("XXAAXXXXXX")}}, 0.1)
    tally.add(("real", "es"), truth, {"ours": {"rhubarb": list("XXAABBXXXX")},
                                      "peer": {"rhubarb": list("XXAAXXXXXX")[:6] + list("AAAA")}}, 0.1)
    return tally


def test_frame_accuracy_counts_frames_whose_shape_equals_the_reference():
    tally = tiny_tally()
    assert tally.accuracy(("real", "en"), "ours", "rhubarb") == pytest.approx(90.0)
    assert tally.accuracy(("real", "en"), "peer", "rhubarb") == pytest.approx(40.0)
    assert tally.accuracy(("real", "es"), "ours", "rhubarb") == pytest.approx(60.0)
    assert tally.accuracy(("real", "es"), "ours", "vrm") is None  # not drawn
    assert tally.floor(("real", "es"), "rhubarb") == ("X", pytest.approx(20.0))  # ties: the first counted


def test_tables_print_a_row_per_language_and_the_targets_per_language():
    tally, rows = tiny_tally(), [("real", "en"), ("real", "es")]
    table = markdown_tables(tally, rows, ["ours", "peer"])
    assert "| en real (silver; 1 utt., 0.0 min) | 90.0 | 40.0 | 20.0 (X) |" in table
    assert "| es real (silver; 1 utt., 0.0 min) | 60.0 | 40.0 | 20.0 (X) |" in table
    targets = target_lines(tally, rows, ["ours"], ["peer"])
    # 30 points behind English (the target: within 5), 20 ahead of the peer (the target: 5 ahead): not met
    assert "| es real | 60.0; -30.0; +20.0 (peer): not met | — | — |" in targets


def test_synthetic_target_is_three_points_of_english():
    tally = Tally()
    truth = {"vrm": ["A"] * 100}
    tally.add(("synthetic", "en"), truth, {"ours": {"vrm": ["A"] * 90 + ["I"] * 10}}, 1.0)
    tally.add(("synthetic", "fi"), truth, {"ours": {"vrm": ["A"] * 88 + ["I"] * 12}}, 1.0)
    tally.add(("synthetic", "cs"), truth, {"ours": {"vrm": ["A"] * 86 + ["I"] * 14}}, 1.0)
    targets = target_lines(tally, [("synthetic", "en"), ("synthetic", "fi"), ("synthetic", "cs")], ["ours"], [])
    assert "| fi synthetic | — | — | 88.0; -2.0; no peer: met |" in targets
    assert "| cs synthetic | — | — | 86.0; -4.0; no peer: not met |" in targets
    assert "within 3 points of English in 1 languages (not met: the target is ten)" in targets


def test_an_alignment_becomes_a_phone_per_frame_with_silence_between_words():
    alignment = {"words": [{"phones": [{"phone": "M", "start": 0.02, "end": 0.05},
                                       {"phone": "AA", "start": 0.05, "end": 0.08}]}]}
    from speechattn.phones import PHONE_TO_INDEX

    labels = alignment_labels(alignment, 10)
    sil, m, aa = PHONE_TO_INDEX["sil"], PHONE_TO_INDEX["M"], PHONE_TO_INDEX["AA"]
    assert labels.tolist() == [sil, sil, m, m, m, aa, aa, aa, sil, sil]


def test_word_draws_are_fixed_by_the_checks_seed_and_differ_between_languages():
    assert word_draws("te", 2, 3) == word_draws("te", 2, 3)
    assert all(len(text.split()) == 3 for text in word_draws("te", 2, 3))
    assert mouth_languages.SEED == 20261206
    assert word_draws("te", 1, 3) != word_draws("te", 2, 3)[1:]


def test_help_and_a_bad_option_from_the_command_line():
    script = str(BENCH / "mouth_languages.py")
    shown = subprocess.run([sys.executable, script, "--help"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0
    for option in ("--languages", "--models", "--peers", "--limit", "SILVER"):
        assert option in shown.stdout
    wrong = subprocess.run([sys.executable, script, "--peers", "lipsyncer"], capture_output=True, text=True,
                           timeout=60)
    assert wrong.returncode == 2
    assert "unknown lipsyncer" in wrong.stderr and "Traceback" not in wrong.stderr


def test_real_target_needs_both_english_within_5_and_every_peer_5_behind():
    truth = {"rhubarb": ["A"] * 100}

    def mouth(right: int) -> dict:
        return {"rhubarb": ["A"] * right + ["B"] * (100 - right)}

    tally = Tally()
    tally.add(("real", "en"), truth, {"ours": mouth(90), "peer": mouth(70)}, 1.0)
    tally.add(("real", "es"), truth, {"ours": mouth(86), "peer": mouth(80)}, 1.0)  # both met
    tally.add(("real", "fr"), truth, {"ours": mouth(86), "peer": mouth(82)}, 1.0)  # the peer only 4 behind
    targets = target_lines(tally, [("real", "en"), ("real", "es"), ("real", "fr")], ["ours"], ["peer"])
    assert "| es real | 86.0; -4.0; +6.0 (peer): met | — | — |" in targets
    assert "| fr real | 86.0; -4.0; +4.0 (peer): not met | — | — |" in targets


def test_english_is_the_best_models_english():
    """A model worse at English is held to the better model's English figure, not its own."""
    truth = {"vrm": ["A"] * 100}
    tally = Tally()
    tally.add(("synthetic", "en"), truth, {"english": {"vrm": ["A"] * 90 + ["I"] * 10},
                                           "multi": {"vrm": ["A"] * 80 + ["I"] * 20}}, 1.0)
    tally.add(("synthetic", "es"), truth, {"english": {"vrm": ["A"] * 70 + ["I"] * 30},
                                           "multi": {"vrm": ["A"] * 85 + ["I"] * 15}}, 1.0)
    targets = target_lines(tally, [("synthetic", "en"), ("synthetic", "es")], ["english", "multi"], [])
    assert "| es synthetic | — | — | 85.0; -5.0; no peer: not met |" in targets


def test_another_aligners_references_are_real_rows_of_their_own_held_to_their_own_english():
    """--reference-model default,multilingual: the real rows once per aligner; each kind's English is its own and
    the real target (5 points, the peers 5 behind) holds for the second kind too."""
    args = mouth_languages.parse_args(["--languages", "es", "--kinds", "real", "--reference-model",
                                       "default,multilingual"])
    assert mouth_languages.rows_of(args) == [("real", "en"), ("real", "es"), ("real, multilingual-aligned", "en"),
                                             ("real, multilingual-aligned", "es")]
    truth = {"rhubarb": ["A"] * 100}

    def mouth(right: int) -> dict:
        return {"rhubarb": ["A"] * right + ["B"] * (100 - right)}

    tally = Tally()
    tally.add(("real", "en"), truth, {"ours": mouth(95), "peer": mouth(70)}, 1.0)
    tally.add(("real", "es"), truth, {"ours": mouth(86), "peer": mouth(80)}, 1.0)
    tally.add(("real, multilingual-aligned", "en"), truth, {"ours": mouth(90), "peer": mouth(70)}, 1.0)
    tally.add(("real, multilingual-aligned", "es"), truth, {"ours": mouth(86), "peer": mouth(80)}, 1.0)
    rows = [("real", "en"), ("real", "es"), ("real, multilingual-aligned", "en"), ("real, multilingual-aligned", "es")]
    targets = target_lines(tally, rows, ["ours"], ["peer"])
    assert "| es real | 86.0; -9.0; +6.0 (peer): not met | — | — |" in targets
    assert "| es real, multilingual-aligned | 86.0; -4.0; +6.0 (peer): met | — | — |" in targets
    assert "synthetic, rhubarb" not in targets  # no real kind counted as synthetic
