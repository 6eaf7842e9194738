"""The HeadAudio-compatible node (export/js/headaudio.mjs) on the avatar page (export/web/avatar.html), in headless
Chromium with the fake microphone playing a bundled recording: the values its onvalue gives at each update are
`speechattn transcribe --format visemes-json` for the frame it shows, under TalkingHead's and three-vrm's names.

Needs chromium, chromium-driver and `npm ci` in export/web, as tests/test_browser.py."""

from __future__ import annotations

import contextlib
import io
import json
import time

import numpy as np
import pytest

from speechattn.cli import main
from test_browser import SAMPLE, WARM_UP_FRAMES, browser, call, played_as_captured, server  # noqa: F401 (fixtures)

pytestmark = pytest.mark.slow
CAPTURE_SECONDS = 6.0  # the fake microphone loops the recording (2.3 s): two and a half passes
# The node's values against transcribe's on the very samples the node heard (its 16 kHz audio, kept): the same
# model and stream, onnxruntime-web's WASM kernels against x86 onnxruntime's, and transcribe's 3 decimals
# (measured: docs in export/js/README.md, "HeadAudio-compatible driver").
SAME_AUDIO_TOLERANCE = 0.002
# The node's values against transcribe's on the recording itself (laid out as the fake device played it): the
# browser's 16 -> 48 kHz and the node's 48 -> 16 kHz conversions differ from none; the mean over frames and shapes.
RECORDING_MEAN_TOLERANCE = 0.05
OCULUS = {"sil": "viseme_sil", "PP": "viseme_PP", "FF": "viseme_FF", "TH": "viseme_TH", "DD": "viseme_DD",
          "kk": "viseme_kk", "CH": "viseme_CH", "SS": "viseme_SS", "nn": "viseme_nn", "RR": "viseme_RR",
          "aa": "viseme_aa", "E": "viseme_E", "ih": "viseme_I", "oh": "viseme_O", "ou": "viseme_U"}
VRM = {"A": "aa", "I": "ih", "U": "ou", "E": "ee", "O": "oh"}


def visemes_json(path, visemes: str) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        # the node streams live, at the model's default chunk (a file's default is the largest)
        assert main(["transcribe", str(path), "--format", "visemes-json", "--visemes", visemes, "-q",
                     "--chunk-frames", "4"]) == 0
    return json.loads(out.getvalue())


def listen(browser, server, visemes: str) -> tuple[list[dict], np.ndarray, dict]:  # noqa: F811 (the fixtures imported above)
    """The page's updates ({frame, values}), the 16 kHz audio its node heard, and the node's counters."""
    browser.get(server + f"avatar.html?record&autostart&visemes={visemes}")
    deadline = time.monotonic() + 60
    while (status := browser.execute_script("return window.avatar.status")) not in ("listening", "error"):
        assert time.monotonic() < deadline, browser.find_element("id", "status").text
        time.sleep(0.2)
    assert status == "listening", browser.find_element("id", "status").text
    opened = []  # the drawn mouth, looked at every 100 ms
    deadline = time.monotonic() + CAPTURE_SECONDS
    while time.monotonic() < deadline:
        opened.append(float(browser.find_element("id", "mouth").get_attribute("data-open")))
        time.sleep(0.1)
    updates = browser.execute_script("return window.avatar.updates")
    captured = np.concatenate([np.asarray(block, dtype=np.float32) for block in
                               browser.execute_script("return window.avatar.node.captured.map((b) => Array.from(b))")])
    node = browser.execute_script("const n = window.avatar.node; return {latencyMs: n.latencyMs, late: n.lateUpdates, "
                                  "names: n.names, events: window.avatar.events}")
    assert call(browser, "window.avatar.stop()") is None
    assert max(opened) > 0.4 and sum(a != b for a, b in zip(opened, opened[1:])) >= 10, f"the mouth drew {opened}"
    return updates, captured, node


def compare(updates: list[dict], weights: list[list[float]], columns: list[int], shift: int = 0) -> np.ndarray:
    """|node - transcribe| per shown frame (rows) and emitted name (columns); shift: transcribe's frame + shift."""
    shown = [u for u in updates if 0 <= u["frame"] + shift < len(weights)]
    ours = np.array([[u["values"][name] for name in names_of(updates)] for u in shown])
    theirs = np.array([[weights[u["frame"] + shift][k] for k in columns] for u in shown])
    return np.abs(ours - theirs)


def names_of(updates: list[dict]) -> list[str]:
    return list(updates[-1]["values"])


@pytest.mark.parametrize("visemes", ["oculus", "vrm"])
def test_the_headaudio_node_emits_transcribes_viseme_weights_for_the_frames_it_shows(browser, server, tmp_path,  # noqa: F811
                                                                                  visemes):
    import soundfile

    updates, captured, node = listen(browser, server, visemes)
    expected_names = OCULUS if visemes == "oculus" else VRM
    assert sorted(names_of(updates)) == sorted(expected_names.values())  # HeadAudio's / three-vrm's names, no others
    frames = [u["frame"] for u in updates]
    assert frames == sorted(frames) and len(set(frames)) == len(frames)  # one update per shown frame, in order
    assert len(frames) > 0.3 * 100 * CAPTURE_SECONDS  # display rate: one update per rendered frame (60 Hz at most)
    events = [e["event"] for e in node["events"]]  # speech starts and ends, in turn, as the loop passes its pauses
    assert events[:2] == ["started", "ended"] and all(a != b for a, b in zip(events, events[1:])), events
    assert node["latencyMs"] == 120  # the model's 40 ms chunk + 60 ms output delay + 20 ms margin

    soundfile.write(tmp_path / "heard.wav", captured, 16000, subtype="FLOAT")
    document = visemes_json(tmp_path / "heard.wav", visemes)
    shapes = document["shapes"]
    columns = [shapes.index(next(s for s, n in expected_names.items() if n == name)) for name in names_of(updates)]
    differences = compare(updates, document["weights"], columns)
    top = [max(u["values"], key=u["values"].get) for u in updates if u["frame"] >= WARM_UP_FRAMES]
    print(f"{visemes}: {len(differences)} updates over frames {frames[0]}-{frames[-1]}, {node['late']} late; "
          f"|node - transcribe| on the audio it heard: max {differences.max():.4f}, mean {differences.mean():.5f}; "
          f"{len(set(top))} different strongest names")
    assert len(differences) >= len(updates) - 2
    assert len(set(top)) >= (5 if visemes == "oculus" else 3)  # it moves: values that stayed put would fail here
    assert differences.max() <= SAME_AUDIO_TOLERANCE, f"max |difference| {differences.max():.4f}"
    # and the frame it names is the one it shows: 30 ms off is far outside the tolerance
    assert compare(updates, document["weights"], columns, shift=3).max() > 0.3

    # the recording itself, laid out as the fake device played it (as test_browser.py's microphone test does)
    audio, rate = soundfile.read(SAMPLE, dtype="float32")
    looped = played_as_captured(captured, audio)
    gain = float(np.dot(captured, looped) / np.dot(looped, looped))
    soundfile.write(tmp_path / "looped.wav", gain * looped, 16000, subtype="FLOAT")
    recording = compare([u for u in updates if u["frame"] >= WARM_UP_FRAMES],
                        visemes_json(tmp_path / "looped.wav", visemes)["weights"], columns)
    print(f"{visemes}: |node - transcribe| on the recording: mean {recording.mean():.4f}, "
          f"95th percentile {np.percentile(recording, 95):.4f} (level {gain:.3f})")
    assert recording.mean() <= RECORDING_MEAN_TOLERANCE, f"mean |difference| {recording.mean():.4f}"


def test_the_avatar_page_plays_a_recording_with_its_voice_delayed_and_the_mouth_follows(browser, server):  # noqa: F811 (the fixtures imported above)
    browser.get(server + "avatar.html?record")
    assert call(browser, "window.avatar.playSample()") is None
    assert browser.execute_script("return window.avatar.status") == "playing"
    delay = browser.execute_script("return window.avatar.node.latencyMs")
    opened = []
    for _ in range(30):  # 3 s: the 2.3 s recording, then silence
        opened.append(float(browser.find_element("id", "mouth").get_attribute("data-open")))
        time.sleep(0.1)
    assert delay == 120 and "played" in browser.find_element("id", "status").text
    assert max(opened) > 0.4 and opened[-1] < 0.1, f"the mouth drew {opened}"
    assert call(browser, "window.avatar.stop()") is None
