"""The Node client of `speechattn serve` (export/node/remote.mjs, on the `ws` package) against a live server: the
same phones as the kit's PhoneStream alone, and a refusal in one line."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("websockets")
pytest.importorskip("prometheus_client")

from speechattn.audio import speechlike_signal  # noqa: E402
from speechattn.cli.common import load_onnx  # noqa: E402
from speechattn.runtime.serve import Server, ServeOptions  # noqa: E402
from speechattn_export.pipeline import DecodingOptions, PhoneStream  # noqa: E402
from test_serve import CONFIDENCE_TOLERANCE, same_segments  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")


@pytest.fixture()
def served(tiny_onnx):
    if NODE is None:
        pytest.skip("Node.js is not installed (the README's test command installs it: apt-get install nodejs)")
    if not (ROOT / "export" / "node" / "node_modules" / "ws").exists():
        pytest.skip("the ws package is not installed: (cd export/node && npm ci)")
    from test_serve_files import serving

    with serving(tiny_onnx, token="s3cret") as server:  # a server in a thread of its own, stopped after the test
        yield load_onnx(tiny_onnx), f"ws://127.0.0.1:{server.address[1]}/stream"


def node(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([NODE, "export/node/remote.mjs", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def test_the_node_remote_stream_gives_the_kits_phones(served, tmp_path):
    import json

    model, url = served
    audio = speechlike_signal(2.0, seed=15).astype("<f4")
    (tmp_path / "a.f32").write_bytes(audio.tobytes())
    result = node(url, str(tmp_path / "a.f32"), "--token", "s3cret", "--piece", "700")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    local = PhoneStream(model, DecodingOptions())
    for begin in range(0, len(audio), 700):
        local.push(audio[begin:begin + 700])
    local.finish()
    expected = local.segment_dicts()
    assert answer["samples"] == len(audio) and answer["segments_from_updates"] == len(expected) > 0
    assert same_segments(answer["segments"], expected)


def test_the_node_remote_stream_says_a_refusal_in_one_line(served, tmp_path):
    _, url = served
    (tmp_path / "a.f32").write_bytes(np.zeros(1600, "<f4").tobytes())
    wrong_token = node(url, str(tmp_path / "a.f32"), "--token", "nope")
    unserved_chunk = node(url, str(tmp_path / "a.f32"), "--token", "s3cret", "--chunk-frames", "999")
    assert wrong_token.returncode == 1 and wrong_token.stderr.count("\n") == 1
    assert "refused with HTTP 401" in wrong_token.stderr
    assert unserved_chunk.returncode == 1 and unserved_chunk.stderr.count("\n") == 1
    assert "chunk_frames 999" in unserved_chunk.stderr and "(code 1007)" in unserved_chunk.stderr


def kit_segments(model, audio: np.ndarray, seconds_before: float = 0.0) -> list[dict]:
    local = PhoneStream(model, DecodingOptions())
    local.push(audio)
    local.finish()
    return [{**s, "start": round(s["start"] + seconds_before, 6), "end": round(s["end"] + seconds_before, 6)}
            for s in local.segment_dicts()]


def stop_a_then_serve_b(a, client: subprocess.Popen, model, seconds: float) -> tuple[str, str]:
    """After `seconds` of the client streaming to replica A (its own process), SIGTERM to A (which must exit 0), then
    server B on A's port in a thread, while the client retries (0.2 s, 0.4 s, ...); the client's (stdout, stderr).
    The client, A and B are stopped whatever happens."""
    import signal

    loop = asyncio.new_event_loop()
    b = Server(model, ServeOptions(port=a.port))
    thread = threading.Thread(target=lambda: loop.run_until_complete(b.serve()), daemon=True)
    try:
        time.sleep(seconds)
        a.process.send_signal(signal.SIGTERM)
        assert a.process.wait(30) == 0
        thread.start()
        return client.communicate(timeout=60)
    finally:
        client.kill()
        a.process.kill()
        if thread.is_alive():
            loop.call_soon_threadsafe(b.shutdown)
            thread.join(30)


def test_the_node_remote_stream_reconnects_after_a_sigterm_and_resends_what_was_not_taken(tiny_onnx, tmp_path):
    """Server A (its own process) gets SIGTERM mid-stream: the Node client (--reconnect, pieces at real-time pace)
    gets A's result of what it took in, opens a new stream at the same URL, now server B's, sends B the audio A did
    not take in and finishes.  The segments: the kit's for the audio A heard, then the kit's for the rest offset by
    it; every sample heard once."""
    import json

    from test_serve_replicas import Replica

    if NODE is None or not (ROOT / "export" / "node" / "node_modules" / "ws").exists():
        pytest.skip("Node.js and (cd export/node && npm ci) are needed")
    model = load_onnx(tiny_onnx)
    audio = speechlike_signal(3.0, seed=21).astype("<f4")
    (tmp_path / "a.f32").write_bytes(audio.tobytes())
    a = Replica(tiny_onnx)
    url = f"ws://127.0.0.1:{a.port}/stream"
    client = subprocess.Popen([NODE, "export/node/remote.mjs", url, str(tmp_path / "a.f32"), "--realtime",
                               "--reconnect", "--piece", "800"], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    out, err = stop_a_then_serve_b(a, client, model, 1.2)  # about a second of the audio streamed to A
    assert client.returncode == 0, err
    answer = json.loads(out)
    assert len(answer["seams"]) == 1 and 0.5 < answer["seams"][0] < 2.5, answer["seams"]
    heard = round(answer["seams"][0] * 16000)
    assert any("event=closed" in line or "1001" in line for line in a.lines)
    assert answer["samples"] == len(audio) and answer["duration"] == pytest.approx(len(audio) / 16000)
    expected = kit_segments(model, audio[:heard]) + kit_segments(model, audio[heard:], heard / 16000)
    got = answer["segments"]
    assert len(got) == len(expected) > 0 and all(
        (r["phone"], r["start"], r["end"]) == (e["phone"], pytest.approx(e["start"], abs=1e-6),
                                              pytest.approx(e["end"], abs=1e-6))
        and abs(r["confidence"] - e["confidence"]) <= CONFIDENCE_TOLERANCE for r, e in zip(got, expected))
    assert answer["segments_from_updates"] == len(expected)


def test_the_node_remote_stream_without_reconnect_says_a_shutdown_in_one_line(tiny_onnx, tmp_path):
    """Without --reconnect a server's SIGTERM mid-stream is an error (code 1001), not a short result taken for the
    whole stream."""
    import signal

    from test_serve_replicas import Replica

    if NODE is None or not (ROOT / "export" / "node" / "node_modules" / "ws").exists():
        pytest.skip("Node.js and (cd export/node && npm ci) are needed")
    (tmp_path / "a.f32").write_bytes(speechlike_signal(3.0, seed=22).astype("<f4").tobytes())
    a = Replica(tiny_onnx)
    client = subprocess.Popen([NODE, "export/node/remote.mjs", f"ws://127.0.0.1:{a.port}/stream",
                               str(tmp_path / "a.f32"), "--realtime"], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.2)
        a.process.send_signal(signal.SIGTERM)
        out, err = client.communicate(timeout=60)
    finally:
        client.kill()
        a.process.kill()
    assert client.returncode == 1 and out == "" and err.count("\n") == 1
    assert "shutting down" in err and "(code 1001)" in err


def test_the_node_remote_stream_takes_a_reader_up_at_their_word_after_a_sigterm(tmp_path):
    """A follow-along stream (--script) from Node, server A stopped mid-reading: the new stream on B starts its
    follower at the reader's word (script_from, `taken_up`), so the words after the seam go on from there: every
    word reported once, in order, none after the seam before the word taken up."""
    import json

    import soundfile as sf

    from test_serve_replicas import Replica

    if NODE is None or not (ROOT / "export" / "node" / "node_modules" / "ws").exists():
        pytest.skip("Node.js and (cd export/node && npm ci) are needed")
    bundled = ROOT / "export" / "models" / "default-int8.onnx"
    audio, rate = sf.read(ROOT / "speechattn" / "runtime" / "samples" / "please-enter-your-password.wav",
                          dtype="float32")
    (tmp_path / "a.f32").write_bytes(audio.astype("<f4").tobytes())  # 8 kHz, as recorded
    a = Replica(bundled)
    client = subprocess.Popen([NODE, "export/node/remote.mjs", a.url, str(tmp_path / "a.f32"), "--realtime",
                               "--reconnect", "--rate", str(rate), "--piece", str(rate // 25), "--script",
                               "Please enter your password, followed by the pound key."], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = stop_a_then_serve_b(a, client, load_onnx(bundled), 1.6)  # into the reading: "password" or after
    assert client.returncode == 0, err
    answer = json.loads(out)
    assert len(answer["seams"]) == 1 and len(answer["taken_up"]) == 1, answer
    seam, (taken_up,) = answer["seams"][0], answer["taken_up"]
    indices = [w["index"] for w in answer["words"]]
    after = [w["index"] for w in answer["words"] if w["start"] >= seam]
    assert 1 <= taken_up <= 9 and indices == sorted(set(indices)), (taken_up, indices)
    assert after and min(after) >= taken_up and indices[-1] == 8, (seam, taken_up, answer["words"])
