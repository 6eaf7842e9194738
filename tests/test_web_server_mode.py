"""The browser page with ?server=ws://HOST:PORT/stream (export/web/): the audio goes to a real `speechattn serve`
instead of onnxruntime-web, and the page shows the server's phones and mouth; a wrong address is one red line.

Needs chromium, chromium-driver and `npm ci` in export/web, as tests/test_browser.py."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest

from test_browser import browser, call, drop_sample, python_json, server, wait_for  # noqa: F401 (fixtures)

pytest.importorskip("websockets")
pytest.importorskip("prometheus_client")

pytestmark = pytest.mark.slow
CONFIDENCE_TOLERANCE = 2e-4  # the server's confidences against the kit's (tests/test_serve.py)


class SpeechServer:
    """A real `speechattn serve` of the bundled model on a free port, in this process."""

    def __init__(self) -> None:
        from speechattn.cli.common import load_onnx
        from speechattn.runtime.serve import Server, ServeOptions
        from speechattn.runtime.transcribe import resolve_model

        self.served = Server(load_onnx(resolve_model("default")), ServeOptions(port=0))
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_until_complete, args=(self.served.serve(),), daemon=True)
        self.thread.start()
        for _ in range(600):
            if self.served.address:
                break
            time.sleep(0.05)
        self.url = f"ws://127.0.0.1:{self.served.address[1]}/stream"

    def stop(self) -> None:
        """As on SIGTERM: open streams get their result, then close 1001."""
        if self.thread.is_alive():
            self.loop.call_soon_threadsafe(self.served.shutdown)
            self.thread.join(30)


@pytest.fixture(scope="module")
def speech_server():
    running = SpeechServer()
    yield running.url
    running.stop()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_file_dropped_on_the_page_with_a_server_gives_the_kits_phones(browser, server, speech_server):  # noqa: F811
    browser.get(server + f"?server={speech_server}")
    assert wait_for(browser, {"ready"}) == "ready", browser.find_element("id", "status").text
    assert "on the server" in browser.find_element("id", "status").text
    assert browser.execute_script("return window.speechattn.model") is None  # no onnxruntime-web session
    drop_sample(browser)
    dropped = browser.execute_script("return window.speechattn.dropped")
    expected = python_json()["segments"]
    assert len(dropped) > 5
    assert [(s["start"], s["end"], s["phone"]) for s in dropped] == [
        (s["start"], s["end"], s["phone"]) for s in expected]
    assert max(abs(a["confidence"] - b["confidence"]) for a, b in zip(dropped, expected)) <= CONFIDENCE_TOLERANCE
    # shown as local phones are: the final ones, silence left out
    shown = browser.find_element("id", "final").text.split()
    assert shown == [s["phone"] for s in expected if s["phone"] != "sil"]


def test_the_fake_microphone_streams_to_the_server_and_the_mouth_moves(browser, server, speech_server):  # noqa: F811
    browser.get(server + f"?server={speech_server}&autostart")
    assert wait_for(browser, {"listening"}) == "listening", browser.find_element("id", "status").text
    shown = []
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        shown.append(browser.find_element("id", "mouth").get_attribute("data-shape"))
        time.sleep(0.1)
    assert call(browser, "window.speechattn.stop()") is None
    assert browser.execute_script("return window.speechattn.status") == "stopped"
    segments = browser.execute_script("return window.speechattn.run.segments")
    assert segments[0]["start"] == 0 and all(a["end"] == b["start"] for a, b in zip(segments, segments[1:]))
    assert segments[-1]["end"] > 4.0  # about 5 s of capture, all of it heard by the server
    assert len({s["phone"] for s in segments}) >= 8
    labels = browser.execute_script("return window.speechattn.run.labels()")  # a phone per 10 ms frame, as Run's
    assert len(labels) == round(100 * segments[-1]["end"]) and labels[0] == segments[0]["phone"]
    assert browser.find_element("id", "final").text.strip()
    assert len(set(shown) - {"X"}) >= 2, f"the mouth showed {shown}"


def test_a_server_shutting_down_mid_stream_is_one_red_line_and_its_phones_stay(browser, server):  # noqa: F811
    stopping = SpeechServer()
    try:
        browser.get(server + f"?server={stopping.url}&autostart")
        assert wait_for(browser, {"listening"}) == "listening", browser.find_element("id", "status").text
        time.sleep(2.0)
    finally:
        stopping.stop()
    assert wait_for(browser, {"never"}, seconds=10) == "error"
    status = browser.find_element("id", "status").text
    assert "the server is shutting down (code 1001)" in status and "\n" not in status
    assert browser.execute_script("return window.speechattn.run.result.samples") > 16000  # what it heard, kept
    assert browser.find_element("id", "final").text.strip()
    call(browser, "window.speechattn.stop()")  # the microphone closes; the red line stays
    assert "code 1001" in browser.find_element("id", "status").text
    assert browser.execute_script("return window.speechattn.microphone") is None
    assert not browser.find_element("id", "start").get_attribute("disabled")


@pytest.mark.parametrize(("address", "says"), [
    ("ws://127.0.0.1:{port}/stream", "ws://127.0.0.1:{port}/stream: no speechattn server answered"),
    ("http://127.0.0.1:{port}/stream", "not a WebSocket URL"),
    ("nonsense", "?server=nonsense: not a URL"),
])
def test_a_wrong_server_address_is_one_clear_line_on_the_page(browser, server, address, says):  # noqa: F811
    port = free_port()  # nothing listens there
    browser.get(server + f"?server={address.format(port=port)}")
    assert wait_for(browser, {"ready"}) == "error"
    status = browser.find_element("id", "status")
    assert says.format(port=port) in status.text and "\n" not in status.text
    assert status.get_attribute("class") == "error"
    assert browser.find_element("id", "start").get_attribute("disabled")
