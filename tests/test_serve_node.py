"""The Node client of `speechattn serve` (export/node/remote.mjs, on the `ws` package) against a live server: the
same phones as the kit's PhoneStream alone, and a refusal in one line."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("websockets")
pytest.importorskip("prometheus_client")

from speechattn.audio import speechlike_signal  # noqa: E402
from speechattn.cli.common import load_onnx  # noqa: E402
from speechattn.runtime.serve import Server, ServeOptions  # noqa: E402
from speechattn_export.pipeline import DecodingOptions, PhoneStream  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")
CONFIDENCE_TOLERANCE = 2e-4  # as tests/test_serve.py


@pytest.fixture()
def served(tiny_onnx):
    if NODE is None:
        pytest.skip("Node.js is not installed (the README's test command installs it: apt-get install nodejs)")
    if not (ROOT / "export" / "node" / "node_modules" / "ws").exists():
        pytest.skip("the ws package is not installed: (cd export/node && npm ci)")
    model = load_onnx(tiny_onnx)
    loop = asyncio.new_event_loop()
    server = Server(model, ServeOptions(port=0, token="s3cret"))

    def run():
        asyncio.set_event_loop(loop)
        loop.run_until_complete(server.serve())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    for _ in range(600):
        if server.address:
            break
        threading.Event().wait(0.05)
    yield model, f"ws://127.0.0.1:{server.address[1]}/stream"
    loop.call_soon_threadsafe(server.shutdown)
    thread.join(30)


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
    assert len(answer["segments"]) == len(expected) and all(
        (r["start"], r["end"], r["phone"]) == (e["start"], e["end"], e["phone"])
        and abs(r["confidence"] - e["confidence"]) <= CONFIDENCE_TOLERANCE
        for r, e in zip(answer["segments"], expected))


def test_the_node_remote_stream_says_a_refusal_in_one_line(served, tmp_path):
    _, url = served
    (tmp_path / "a.f32").write_bytes(np.zeros(1600, "<f4").tobytes())
    wrong_token = node(url, str(tmp_path / "a.f32"), "--token", "nope")
    unserved_chunk = node(url, str(tmp_path / "a.f32"), "--token", "s3cret", "--chunk-frames", "999")
    assert wrong_token.returncode == 1 and wrong_token.stderr.count("\n") == 1
    assert "refused with HTTP 401" in wrong_token.stderr
    assert unserved_chunk.returncode == 1 and unserved_chunk.stderr.count("\n") == 1
    assert "chunk_frames 999" in unserved_chunk.stderr and "(code 1007)" in unserved_chunk.stderr
