"""Lip sync: the viseme tables, frame weights, cues and their rules (streaming equals offline), and the Rhubarb
files read the way Rhubarb's own documented examples read."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from speechattn.cli import main
from speechattn.phones import NUM_PHONES, PHONE_TO_INDEX, PHONES
from speechattn_export.segments import Segment
from speechattn_export.visemes import (OCULUS, RHUBARB, SETS, VRM, Cue, CueMaker, CueRules, cue_labels, frame_weights,
                                make_cues)

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "speechattn" / "runtime" / "samples" / "please-enter-your-password.wav"

# Rhubarb Lip Sync's README, "Output formats": its result for a recording of someone saying "Hi".
RHUBARB_TSV = "0.00\tX\n0.05\tD\n0.27\tC\n0.31\tB\n0.43\tX\n0.47\tX\n"
RHUBARB_XML = """<?xml version="1.0" encoding="utf-8"?>
<rhubarbResult>
  <metadata>
    <soundFile>C:\\Users\\Daniel\\Desktop\\av\\hi\\hi.wav</soundFile>
    <duration>0.47</duration>
  </metadata>
  <mouthCues>
    <mouthCue start="0.00" end="0.05">X</mouthCue>
    <mouthCue start="0.05" end="0.27">D</mouthCue>
    <mouthCue start="0.27" end="0.31">C</mouthCue>
    <mouthCue start="0.31" end="0.43">B</mouthCue>
    <mouthCue start="0.43" end="0.47">X</mouthCue>
  </mouthCues>
</rhubarbResult>
"""
RHUBARB_JSON = """{
  "metadata": {
    "soundFile": "C:\\\\Users\\\\Daniel\\\\Desktop\\\\av\\\\hi\\\\hi.wav",
    "duration": 0.47
  },
  "mouthCues": [
    { "start": 0.00, "end": 0.05, "value": "X" },
    { "start": 0.05, "end": 0.27, "value": "D" },
    { "start": 0.27, "end": 0.31, "value": "C" },
    { "start": 0.31, "end": 0.43, "value": "B" },
    { "start": 0.43, "end": 0.47, "value": "X" }
  ]
}
"""
TWO_DECIMALS = re.compile(r"^\d+\.\d\d$")


@pytest.mark.parametrize("visemes", SETS.values(), ids=list(SETS))
def test_every_phone_maps_to_exactly_one_shape_of_each_set(visemes):
    covered = [phone for phones in visemes.covers.values() for phone in phones]
    assert sorted(covered) == sorted(PHONES)  # each phone once: none missing, none twice
    assert set(visemes.covers) == set(visemes.shapes) == set(visemes.descriptions)
    matrix = visemes.matrix(PHONES)
    assert matrix.shape == (NUM_PHONES, len(visemes.shapes))
    np.testing.assert_array_equal(matrix.sum(axis=1), np.ones(NUM_PHONES))
    assert visemes.table["sil"] == visemes.rest
    assert {visemes.table[p] for p in ("P", "B", "M")} == {visemes.closed_lips}


def test_the_sets_are_the_ones_their_tools_name():
    assert RHUBARB.shapes == tuple("ABCDEFGHX")
    assert OCULUS.shapes == ("sil", "PP", "FF", "TH", "DD", "kk", "CH", "SS", "nn", "RR", "aa", "E", "ih", "oh", "ou")
    assert VRM.shapes == ("sil", "A", "I", "U", "E", "O")
    assert (RHUBARB.table["AA"], RHUBARB.table["F"], RHUBARB.table["L"], RHUBARB.table["UW"]) == ("D", "G", "H", "F")


@pytest.mark.parametrize("visemes", SETS.values(), ids=list(SETS))
def test_weights_sum_to_one_per_frame_and_follow_the_posteriors(visemes):
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(50, NUM_PHONES)) * 3
    log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    weights = frame_weights(log_probs, visemes, PHONES)
    assert weights.shape == (50, len(visemes.shapes))
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-12)
    assert (weights >= 0).all()
    certain = np.full((1, NUM_PHONES), -40.0)
    certain[0, PHONE_TO_INDEX["AA"]] = 0.0
    assert visemes.shapes[int(frame_weights(certain, visemes, PHONES).argmax())] == visemes.table["AA"]


def segments_of(runs: list[tuple[str, int]]) -> list[Segment]:
    out, at = [], 0
    for phone, frames in runs:
        out.append(Segment(at, at + frames, PHONE_TO_INDEX[phone], 0.9))
        at += frames
    return out


def shapes(cues: list[Cue]) -> list[tuple[str, int]]:
    return [(c.shape, c.frames) for c in cues]


def test_cues_tile_the_stream_and_merge_phones_of_one_shape():
    cues = make_cues(segments_of([("sil", 20), ("HH", 8), ("AY", 30), ("sil", 40)]), RHUBARB, PHONES)
    assert shapes(cues) == [("X", 20), ("B", 8), ("D", 30), ("X", 40)]
    cues = make_cues(segments_of([("sil", 20), ("S", 10), ("T", 10), ("sil", 30)]), RHUBARB, PHONES)  # S and T: both B
    assert shapes(cues) == [("X", 20), ("B", 20), ("X", 30)]


def test_a_shape_too_short_to_see_joins_the_shape_before_it():
    cues = make_cues(segments_of([("sil", 20), ("AA", 20), ("EH", 3), ("S", 20), ("sil", 20)]), RHUBARB, PHONES)
    assert shapes(cues) == [("X", 20), ("D", 23), ("B", 20), ("X", 20)]


def test_short_closed_lips_are_kept_and_lengthened_from_the_shape_before():
    cues = make_cues(segments_of([("sil", 20), ("AA", 20), ("P", 3), ("AA", 20), ("sil", 20)]), RHUBARB, PHONES)
    assert shapes(cues) == [("X", 20), ("D", 16), ("A", 7), ("D", 20), ("X", 20)]
    vrm = make_cues(segments_of([("sil", 20), ("AA", 20), ("M", 2), ("AA", 20), ("sil", 20)]), VRM, PHONES)
    assert shapes(vrm) == [("sil", 20), ("A", 15), ("sil", 7), ("A", 20), ("sil", 20)]


def test_a_short_pause_inside_speech_holds_the_shape_before_it_and_a_long_one_closes_the_mouth():
    short = make_cues(segments_of([("sil", 20), ("AA", 20), ("sil", 8), ("EH", 20), ("sil", 20)]), RHUBARB, PHONES)
    assert shapes(short) == [("X", 20), ("D", 28), ("C", 20), ("X", 20)]
    long = make_cues(segments_of([("sil", 20), ("AA", 20), ("sil", 30), ("EH", 20), ("sil", 5)]), RHUBARB, PHONES)
    assert shapes(long) == [("X", 20), ("D", 20), ("X", 30), ("C", 20), ("X", 5)]  # the trailing pause stays
    none = make_cues(segments_of([("sil", 20), ("AA", 20), ("sil", 8), ("EH", 20)]), RHUBARB, PHONES, rules=CueRules(1, 0))
    assert shapes(none) == [("X", 20), ("D", 20), ("X", 8), ("C", 20)]


phone_runs = st.lists(st.tuples(st.sampled_from(PHONES), st.integers(1, 25)), min_size=1, max_size=40)


@settings(max_examples=150, deadline=None)
@given(runs=phone_runs, cuts=st.lists(st.integers(0, 40), max_size=10), set_name=st.sampled_from(list(SETS)),
       min_hold=st.integers(1, 9), bridge=st.integers(0, 15))
def test_streaming_cues_equal_offline_cues_for_any_split_of_the_segments(runs, cuts, set_name, min_hold, bridge):
    visemes, rules = SETS[set_name], CueRules(min_hold, bridge)
    segments = segments_of(runs)
    offline = make_cues(segments, visemes, PHONES, rules=rules)
    maker, streamed, at = CueMaker(visemes, PHONES, rules=rules), [], 0
    for cut in sorted(cuts) + [len(segments)]:
        streamed += maker.push(segments[at:cut])
        at = max(at, cut)
    streamed += maker.finish()
    assert streamed == offline
    total = segments[-1].end_frame
    assert offline[0].start_frame == 0 and offline[-1].end_frame == total  # they tile the stream ...
    assert all(a.end_frame == b.start_frame and a.shape != b.shape for a, b in zip(offline, offline[1:]))  # ... with no gap
    reference = cue_labels(offline, visemes, total)
    assert reference.shape == (total,)
    bilabial_frames = {s.start_frame for s in segments if PHONES[s.phone] in ("P", "B", "M")}
    for frame in bilabial_frames:  # closed lips never vanish: a P, B or M frame start is inside a closed-lips cue
        assert any(c.shape == visemes.closed_lips and c.start_frame <= frame < c.end_frame for c in offline)


def rhubarb_cues_from_tsv(text: str) -> list[tuple[str, str]]:
    """Rhubarb's TSV as its importers read it: start<TAB>shape lines, the last the end of the recording."""
    rows = [line.split("\t") for line in text.rstrip("\n").split("\n")]
    assert all(len(row) == 2 for row in rows)
    return rows


def check_rhubarb_tsv(text: str) -> None:
    rows = rhubarb_cues_from_tsv(text)
    assert rows[0][0] == "0.00" and rows[-1][1] in ("X", "A")
    assert all(TWO_DECIMALS.match(start) and shape in RHUBARB.shapes for start, shape in rows)
    starts = [float(start) for start, _ in rows]
    assert starts == sorted(starts)


def check_rhubarb_json(text: str) -> None:
    data = json.loads(text)
    assert set(data) == {"metadata", "mouthCues"} and set(data["metadata"]) == {"soundFile", "duration"}
    assert all(set(cue) == {"start", "end", "value"} and cue["value"] in RHUBARB.shapes for cue in data["mouthCues"])
    numbers = re.findall(r'"(?:start|end|duration)": ([0-9.]+)', text)
    assert numbers and all(TWO_DECIMALS.match(n) for n in numbers)
    cues = data["mouthCues"]
    assert cues[0]["start"] == 0 and all(a["end"] == b["start"] for a, b in zip(cues, cues[1:]))
    assert cues[-1]["end"] == data["metadata"]["duration"]


def check_rhubarb_xml(text: str) -> None:
    assert text.startswith('<?xml version="1.0" encoding="utf-8"?>\n<rhubarbResult>')
    root = ElementTree.fromstring(text)
    assert root.tag == "rhubarbResult" and [child.tag for child in root] == ["metadata", "mouthCues"]
    assert [child.tag for child in root.find("metadata")] == ["soundFile", "duration"]
    cues = root.find("mouthCues")
    assert all(cue.tag == "mouthCue" and set(cue.attrib) == {"start", "end"} and cue.text in RHUBARB.shapes
               for cue in cues)
    assert all(TWO_DECIMALS.match(cue.attrib[key]) for cue in cues for key in ("start", "end"))
    assert TWO_DECIMALS.match(root.find("metadata/duration").text)


def test_the_checks_accept_rhubarbs_own_documented_examples():
    check_rhubarb_tsv(RHUBARB_TSV)
    check_rhubarb_json(RHUBARB_JSON)
    check_rhubarb_xml(RHUBARB_XML)


@pytest.mark.parametrize("output_format, check", [("rhubarb-tsv", check_rhubarb_tsv), ("rhubarb-json", check_rhubarb_json),
                                                  ("rhubarb-xml", check_rhubarb_xml)])
def test_transcribe_writes_rhubarbs_files(output_format, check, capsys):
    assert main(["transcribe", str(SAMPLE), "--format", output_format]) == 0
    text = capsys.readouterr().out
    check(text)
    assert len(set(re.findall(r"\b[ABCDEFGH]\b", text))) >= 4  # speech moves the mouth through several shapes


def test_the_three_rhubarb_files_hold_the_same_cues(capsys):
    outputs = {}
    for output_format in ("rhubarb-tsv", "rhubarb-json", "rhubarb-xml"):
        assert main(["transcribe", str(SAMPLE), "--format", output_format]) == 0
        outputs[output_format] = capsys.readouterr().out
    from_json = [(f"{c['start']:.2f}", c["value"]) for c in json.loads(outputs["rhubarb-json"])["mouthCues"]]
    from_xml = [(c.attrib["start"], c.text) for c in ElementTree.fromstring(outputs["rhubarb-xml"]).find("mouthCues")]
    from_tsv = [tuple(row) for row in rhubarb_cues_from_tsv(outputs["rhubarb-tsv"])]
    assert from_json == from_xml == from_tsv[:-1]


def test_visemes_json_has_a_row_of_weights_per_frame_and_the_cues(capsys):
    import jsonschema

    assert main(["transcribe", str(SAMPLE), "--format", "visemes-json", "--visemes", "oculus"]) == 0
    data = json.loads(capsys.readouterr().out)
    jsonschema.validate(data, json.loads((ROOT / "export" / "visemes.schema.json").read_text()))
    assert data["visemes"] == "oculus" and data["shapes"] == list(OCULUS.shapes)
    weights = np.array(data["weights"])
    assert weights.shape == (int(np.ceil(data["duration"] * 100)), 15)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=0.01)  # rounded to 3 decimals
    assert data["cues"][0]["start"] == 0 and {c["value"] for c in data["cues"]} <= set(OCULUS.shapes)


def test_a_viseme_set_that_does_not_fit_the_format_is_refused(capsys):
    assert main(["transcribe", str(SAMPLE), "--format", "rhubarb-tsv", "--visemes", "vrm"]) == 2
    assert "visemes-json" in capsys.readouterr().err
    assert main(["transcribe", str(SAMPLE), "--format", "ctm", "--visemes", "vrm"]) == 2


class OscReceiver:
    """A real python-osc UDP server on a free local port, collecting (address, arguments) in arrival order."""

    def __init__(self) -> None:
        import threading

        from pythonosc.dispatcher import Dispatcher
        from pythonosc.osc_server import ThreadingOSCUDPServer

        self.messages: list[tuple] = []
        dispatcher = Dispatcher()
        dispatcher.set_default_handler(lambda address, *args: self.messages.append((address, args)))
        self.server = ThreadingOSCUDPServer(("127.0.0.1", 0), dispatcher)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def wait_for(self, count: int, seconds: float = 10.0) -> list[tuple]:
        import time

        deadline = time.monotonic() + seconds
        while len(self.messages) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        return list(self.messages)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_vmc_blendshapes_arrive_at_a_real_udp_socket():
    from speechattn.runtime.vmc import VmcSender

    receiver = OscReceiver()
    try:
        sender = VmcSender("127.0.0.1", receiver.port)
        sender.send(np.array([0.5, 0.25, 0.125, 0.0625, 0.0625, 0.0]))  # VRM.shapes: sil A I U E O
        messages = receiver.wait_for(6)
    finally:
        receiver.close()
    assert [address for address, _ in messages] == ["/VMC/Ext/Blend/Val"] * 5 + ["/VMC/Ext/Blend/Apply"]
    assert [args for _, args in messages[:5]] == [("A", 0.25), ("I", 0.125), ("U", 0.0625), ("E", 0.0625), ("O", 0.0)]
    assert messages[5][1] == ()


@pytest.mark.parametrize("text, address", [("127.0.0.1", ("127.0.0.1", 39540)), ("localhost:39541", ("localhost", 39541)),
                                           ("[::1]:40000", ("::1", 40000))])
def test_vmc_addresses(text, address):
    from speechattn.runtime.vmc import parse_address

    assert parse_address(text) == address


@pytest.mark.parametrize("text", ["host:port", "host:0", ":39540", "host:70000"])
def test_a_bad_vmc_address_is_a_usage_error(text, capsys):
    assert main(["mic", "--vmc", text, "--seconds", "1"]) == 2
    assert "--vmc" in capsys.readouterr().err


def test_a_vmc_host_that_does_not_resolve_is_one_line_before_any_device_opens(capsys):
    assert main(["mic", "--vmc", "no-such-host.invalid", "--device", "no-such-microphone"]) == 1  # .invalid: RFC 6761
    err = capsys.readouterr().err
    assert "--vmc no-such-host.invalid:39540: cannot send there" in err and len(err.strip().splitlines()) == 1


def test_a_recording_shorter_than_a_frame_gives_a_resting_mouth_in_every_lip_sync_format(tmp_path, capsys):
    import soundfile as sf

    tiny = tmp_path / "tiny.wav"
    sf.write(tiny, np.zeros(80, np.float32), 16000)  # 5 ms
    for output_format in ("rhubarb-tsv", "rhubarb-json", "rhubarb-xml", "visemes-json"):
        assert main(["transcribe", str(tiny), "--format", output_format]) == 0
        text = capsys.readouterr().out
        if output_format == "rhubarb-tsv":
            assert text == "0.00\tX\n"
        elif output_format == "rhubarb-xml":
            assert ElementTree.fromstring(text).find("metadata/duration").text == "0.00"
        elif output_format == "rhubarb-json":  # Rhubarb's JSON always holds a cue: the closed mouth from 0 to 0
            assert json.loads(text)["mouthCues"] == [{"start": 0, "end": 0, "value": "X"}]
        else:
            assert json.loads(text)["cues"] == []


def test_the_command_line_offers_every_viseme_set_of_the_one_table(capsys):
    from speechattn.cli import main
    from speechattn_export.registry import VISEME_SET_NAMES

    assert VISEME_SET_NAMES == tuple(SETS)  # SETS is built from the registry's table: no copy to keep equal
    for command in ("transcribe", "mic"):
        assert main([command, "--help"]) == 0
        assert f"[{'|'.join(SETS)}]" in capsys.readouterr().out.replace("\n", "").replace(" ", "")
