"""The browser page's follow-along box (export/web/, the JS kit's Lexicon and Follower) in headless Chromium: a
bundled recording with its text, dropped on the page or read into the fake microphone (Chromium loops the file),
gives the Python kit's words (Model.follow) for the audio the page heard, marks every word read, and the mouth
follows the aligned phones.

Needs chromium, chromium-driver and `npm ci` in export/web, as tests/test_browser.py."""

from __future__ import annotations

import time
import urllib.parse

import numpy as np
import pytest

from test_browser import SAMPLE, browser, call, server, wait_for  # noqa: F401 (fixtures)

pytestmark = pytest.mark.slow
TEXT = "This no longer appears to be the case."  # SAMPLE's words
CAPTURE_SECONDS = 6.0  # the fake microphone loops the recording (2.3 s): the reader starts again twice
# The page's model is onnxruntime-web's WASM build, Python's x86 onnxruntime: the same fp32 graph, posteriors equal
# to about 1e-5 (tests/test_browser.py), so a near-tied frame may move a boundary.  Stated tolerance: the same words
# in the same order, each boundary within 2 frames (20 ms).
FRAMES_TOLERANCE = 2


def python_events(samples: np.ndarray, text: str = TEXT) -> list[dict]:
    from speechattn_export import load_model

    stream = load_model("default").follow(text)
    events = []
    for start in range(0, len(samples), 1280):  # any pieces give the same words (tests/test_follow.py)
        events += stream.word_events(stream.push(samples[start:start + 1280]).words)
    update = stream.finish()
    return events + stream.word_events(update.words, update.not_heard)


def assert_same_words(page: list[dict], python: list[dict]) -> float:
    """The same (index, word) sequence, boundaries within the tolerance; returns the largest difference in ms."""
    assert [(e["index"], e["word"]) for e in page] == [(e["index"], e["word"]) for e in python]
    worst = max((max(abs(a["start"] - b["start"]), abs(a["end"] - b["end"])) for a, b in zip(page, python)),
                default=0.0)
    assert worst <= FRAMES_TOLERANCE / 100 + 1e-9, worst
    return 1000 * worst


def marks(browser) -> list[tuple[str, str]]:  # noqa: F811 (the fixture imported above)
    return [tuple(pair) for pair in browser.execute_script(
        "return [...document.querySelectorAll('#text span')].map((s) => [s.textContent, s.className])")]


def test_a_dropped_recording_with_its_text_gives_the_python_kits_words(browser, server):  # noqa: F811
    import soundfile as sf

    browser.get(server + "?model=default.onnx&script=" + urllib.parse.quote(TEXT + "\nDo not say this line."))
    assert wait_for(browser, {"ready"}) == "ready", browser.find_element("id", "status").text
    assert call(browser, f"fetch('../samples/{SAMPLE.name}').then((r) => r.arrayBuffer())"
                         ".then((bytes) => window.speechattn.transcribeBytes(bytes)).then(() => null)") is None
    page = browser.execute_script("return window.speechattn.lastRun.follow.events")
    audio, _ = sf.read(SAMPLE, dtype="float32")
    expected = python_events(audio, TEXT + "\nDo not say this line.")
    assert page == expected  # fp32 from a file: the same posteriors to 1e-5, the same words to the frame
    assert marks(browser) == [(w, "read") for w in TEXT.rstrip(".").split()] + [
        (w, "skipped") for w in "Do not say this line".split()]


def test_the_fake_microphone_reads_the_text_and_the_page_follows_as_python_does(browser, server):  # noqa: F811
    browser.get(server + "?model=default.onnx&autostart&keep-audio&script=" + urllib.parse.quote(TEXT))
    assert wait_for(browser, {"listening"}) == "listening", browser.find_element("id", "status").text
    current, mouths = [], []  # the highlighted word and the drawn mouth, every 100 ms
    deadline = time.monotonic() + CAPTURE_SECONDS
    while time.monotonic() < deadline:
        current.append(tuple(w for w, mark in marks(browser) if mark == "current"))
        mouths.append(browser.find_element("id", "mouth").get_attribute("data-shape"))
        time.sleep(0.1)
    assert call(browser, "window.speechattn.stop()") is None
    page = browser.execute_script("return window.speechattn.run.follow.events")
    pushed = browser.execute_script("return window.speechattn.run.samples")
    captured = np.concatenate([np.asarray(block, dtype=np.float32) for block in
                               browser.execute_script("return window.speechattn.run.captured.map((b) => Array.from(b))")])
    latency = browser.find_element("id", "wordlatency").text

    assert marks(browser) == [(w, "read") for w in TEXT.rstrip(".").split()]  # every word read, none left out
    indices = [e["index"] for e in page]
    spoken = len(TEXT.split())
    assert indices.count(spoken - 1) >= 2, indices  # the loop's restarts followed: the last word read again
    found = iter(indices)
    assert all(any(i == k for i in found) for k in range(spoken)), indices  # a whole reading in order
    assert len({c for c in current if c}) >= 4, current  # the highlight moved through the words
    assert len(set(mouths)) >= 3 and sum(a != b for a, b in zip(mouths, mouths[1:])) >= 5, mouths
    assert latency.endswith("ms (p50)") and int(latency.split()[0]) <= 250, latency  # 80 ms pushes: 200-240 ms

    # the Python kit on the very samples the page pushed through its model
    worst_ms = assert_same_words(page, python_events(captured[:pushed]))
    print(f"page vs Python kit on the audio it heard: {len(page)} words equal, boundaries within {worst_ms:.0f} ms; "
          f"word final after its end: {latency}")
