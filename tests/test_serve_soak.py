"""bench/serve_soak.py, bounded: 20 s of streams opening and closing against `speechattn serve` (the command, with its
workers) on the tiny random model; some clients vanish mid-stream (TCP aborted) and some stop reading for a while."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("websockets")
pytest.importorskip("prometheus_client")
pytest.importorskip("soxr")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import serve_soak  # noqa: E402

from speechattn.audio import speechlike_signal  # noqa: E402


@pytest.fixture(scope="module")
def tally(tiny_onnx):
    speech = [speechlike_signal(3.0, seed=seed).astype("float32") for seed in range(6)]
    options = serve_soak.SoakOptions(minutes=20 / 60, streams=8, vanish_fraction=0.3, slow_fraction=0.15,
                                     shortest_seconds=1.0, longest_seconds=5.0, seed=1)
    return serve_soak.soak(str(tiny_onnx), speech, options, report=lambda *_, **__: None)


def test_soak_loses_and_mixes_up_no_stream(tally):
    assert tally.lost == 0 and tally.mismatched == 0, tally.problems
    assert tally.ok >= 10  # normally ended streams, each equal to the kit's PhoneStream alone


def test_soak_clients_that_vanish_leave_no_session_behind(tally):
    assert tally.vanished >= 3, tally
    assert tally.streams_open_at_end == 0, tally.log[-20:]  # /metrics, after the last stream
    left = serve_soak.how_vanished_left(tally)
    assert len(left) == tally.vanished and all("event=left" in line for line in left.values()), left  # at once
    stopped = serve_soak.streams_left_at_stop(tally.log)  # each worker's sessions at SIGTERM
    assert stopped and not any(stopped), tally.log[-20:]


def test_soak_samples_the_server_rss_every_ten_seconds(tally):
    assert len(tally.rss) >= 2 and all(mib > 0 for _, mib in tally.rss)
