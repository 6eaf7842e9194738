"""Follow-along through `speechattn serve`: a stream opened with a script gets the words the kit's FollowStream
gives for the same audio in the same pieces, and the words not heard at the end, from the bundled model."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

pytest.importorskip("websockets")

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_serve_files import serving  # noqa: E402

from speechattn_export import load_model  # noqa: E402
from speechattn_export.remote import RemoteStream  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "speechattn" / "runtime" / "samples"
BUNDLED = ROOT / "export" / "models" / "default-int8.onnx"


def local_words(model, text: str, audio: np.ndarray, rate: int, piece: int):
    stream = model.follow(text)
    events = []
    for start in range(0, len(audio), piece):
        update = stream.push(audio[start:start + piece], sample_rate=rate)
        events += stream.word_events(update.words, update.not_heard)
    update = stream.finish()
    events += stream.word_events(update.words, update.not_heard)
    return events, [int(i) for i in update.not_heard]


def remote_words(url: str, text: str, audio: np.ndarray, rate: int, piece: int):
    stream = RemoteStream(url, sample_rate=rate, script=text)
    events = []
    for start in range(0, len(audio), piece):
        events += stream.push(audio[start:start + piece]).words
    events += stream.finish().words
    return events, stream.result.get("not_heard")


def key(events: list[dict]) -> list[tuple]:
    return [(e["index"], e["word"], round(e["start"], 2), round(e["end"], 2)) for e in events]


@pytest.mark.parametrize("name, text, piece_ms", [
    ("please-enter-your-password.wav", "Please enter your password, followed by the pound key.", 40),
    ("this-no-longer-appears-to-be-the-case.wav", "This no longer appears to be the case.", 100),
    # two words the reader never says: reported not heard by both
    ("this-no-longer-appears-to-be-the-case.wav", "This no longer appears to be the case. Thank you.", 40),
])
def test_a_followed_stream_through_the_server_gives_the_kits_words(name, text, piece_ms):
    audio, rate = sf.read(SAMPLES / name, dtype="float32")
    piece = rate * piece_ms // 1000
    local, local_not_heard = local_words(load_model("default-int8"), text, audio, rate, piece)
    with serving(BUNDLED) as server:
        url = f"ws://127.0.0.1:{server.address[1]}/stream"
        remote, remote_not_heard = remote_words(url, text, audio, rate, piece)
    assert local and key(remote) == key(local)
    assert remote_not_heard == local_not_heard
    if "Thank you" in text:
        assert local_not_heard == [8, 9]


@pytest.mark.parametrize("options, reason", [
    ({"script_from": 2}, "send the script too"),
    ({"script": "Please enter your password.", "script_from": 5}, "not a word of the script"),
    ({"script": "Please enter your password.", "script_from": -1}, "0 or more"),
    ({"script": "Please enter your password.", "script_from": "2"}, "0 or more"),
])
def test_a_script_from_that_is_no_word_of_the_script_is_refused_1007(options, reason):
    with serving(BUNDLED) as server:
        code, why = closed_at_start(server, options)
    assert code == 1007 and reason in why, why


def closed_at_start(server, options: dict) -> tuple[int, str]:
    """A stream started with `options` and read until the server closes it: (close code, reason)."""
    from websockets.sync.client import connect

    with connect(f"ws://127.0.0.1:{server.address[1]}/stream") as ws:
        ws.send(json.dumps({"type": "start", "sample_rate": 16000, "format": "float32", "options": options}))
        with pytest.raises(Exception):
            while True:
                ws.recv(timeout=10)
        return ws.close_code, ws.close_reason


def test_a_followed_stream_goes_on_at_the_readers_word_after_a_server_restart():
    """Server A shuts down with the reader past "password"; the RemoteStream (reconnect=True) opens a new stream on
    server B at the same address with script_from = the last position A sent, and B's follower takes the reader up
    there: every word comes once, in order, and B passes over none of the words A heard."""
    audio, rate = sf.read(SAMPLES / "please-enter-your-password.wav", dtype="float32")
    text = "Please enter your password, followed by the pound key."
    piece, seam = rate * 40 // 1000, int(1.56 * rate)  # 1.56 s: the pause after "password"
    with serving(BUNDLED) as server_a:
        port = server_a.address[1]
        stream = RemoteStream(f"ws://127.0.0.1:{port}/stream", sample_rate=rate, script=text, reconnect=True)
        events = []
        for start in range(0, seam, piece):
            events += stream.push(audio[start:min(start + piece, seam)]).words
            time.sleep(0.005)
        time.sleep(0.5)  # A steps what it has
    with serving(BUNDLED, port=port):
        for start in range(seam, len(audio), piece):
            events += stream.push(audio[start:start + piece]).words
        events += stream.finish().words
    assert len(stream.seams) == 1
    taken_up, = stream.taken_up
    assert taken_up == 4, taken_up  # "password" was made final by A's end: B starts at the boundary after it
    indices = [e["index"] for e in events]

    assert indices == sorted(set(indices)) and indices[-1] == 8, indices
    assert set(range(taken_up, 9)) <= set(indices) and stream.result["not_heard"] == []
