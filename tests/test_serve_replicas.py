"""Past one machine: two `speechattn serve` replicas behind a real nginx (Debian's), streams spread over both, and
when one replica stops (SIGTERM) its clients get close 1001 with their result so far and the kit's RemoteStream goes
on through nginx on the other, its times offset so the whole reads as one stream."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("websockets")
pytest.importorskip("prometheus_client")

from speechattn.audio import speechlike_signal  # noqa: E402
from speechattn.cli.common import load_onnx  # noqa: E402
from speechattn_export.pipeline import DecodingOptions, PhoneStream  # noqa: E402
from test_serve import same_segments  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
pytestmark = pytest.mark.skipif(NGINX is None, reason="nginx is not installed (apt-get install nginx)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Replica:
    """`speechattn serve --port 0` (and `options`) in its own process, its log lines kept."""

    def __init__(self, model_path: Path, *options: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "speechattn", "serve", "--model", str(model_path), "--port", "0", *options],
            cwd=ROOT, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.lines: list[str] = []
        line = ""
        while "listening on" not in line:
            line = self.process.stderr.readline()
            assert line, "the server stopped before listening: " + "".join(self.lines)
            self.lines.append(line)
        self.port = int(line.rsplit(":", 1)[1].split("/")[0])
        self.url = f"ws://127.0.0.1:{self.port}/stream"
        threading.Thread(target=lambda: self.lines.extend(self.process.stderr), daemon=True).start()

    def metric(self, name: str) -> float:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=10) as response:
            for line in response.read().decode().splitlines():
                if line.startswith(name + " "):
                    return float(line.split()[1])
        raise AssertionError(f"no {name} in /metrics")

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(60)


NGINX_CONF = """
worker_processes 1;
pid {tmp}/nginx.pid;
events {{ worker_connections 512; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/body; proxy_temp_path {tmp}/proxy; fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi; scgi_temp_path {tmp}/scgi;
    map $http_upgrade $connection_upgrade {{ default upgrade; '' close; }}
    upstream speechattn {{
        server 127.0.0.1:{a} max_fails=1 fail_timeout=60s;
        server 127.0.0.1:{b} max_fails=1 fail_timeout=60s;
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://speechattn;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_read_timeout 3600s;
            proxy_send_timeout 3600s;
        }}
    }}
}}
"""


def start_nginx(tmp: Path, a: int, b: int) -> tuple[subprocess.Popen, int]:
    port = free_port()
    conf = tmp / "nginx.conf"
    conf.write_text(NGINX_CONF.format(tmp=tmp, a=a, b=b, port=port))
    process = subprocess.Popen([NGINX, "-p", str(tmp), "-c", str(conf), "-e", str(tmp / "error.log"),
                                "-g", "daemon off;"], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return process, port
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"nginx did not start: {process.stderr.read()}")
            time.sleep(0.05)


def local_segments(model, audio: np.ndarray, options: DecodingOptions) -> list[dict]:
    from speechattn_export.decoder import PhoneBigram

    stream = PhoneStream(model, options, PhoneBigram.load())
    stream.push(audio, sample_rate=16000)
    stream.finish()
    return stream.segment_dicts()


def test_two_replicas_behind_nginx_share_the_streams_and_a_stopped_ones_clients_go_on_at_the_other(tiny_onnx,
                                                                                                    tmp_path):
    """Six streams through nginx land on both replicas; replica A gets SIGTERM halfway: its streams get their result
    so far and close 1001, exits 0, and each RemoteStream(reconnect=True) opens a new stream through nginx (on B),
    sends the audio A did not take in, and finishes.  Each stream's segments are the kit's for the audio A heard,
    then the kit's for the rest offset by it; the streams B held never notice."""
    from speechattn_export.remote import RemoteStream

    model = load_onnx(tiny_onnx)
    options = DecodingOptions(decoder="bigram", min_frames=4, chunk_frames=int(model.allowed_chunk_frames[0]))
    replicas = [Replica(tiny_onnx), Replica(tiny_onnx)]
    nginx, port = start_nginx(tmp_path, replicas[0].port, replicas[1].port)
    url = f"ws://127.0.0.1:{port}/stream"
    clients = 6
    audios = [speechlike_signal(2.0 + 0.25 * number, seed=40 + number).astype(np.float32) for number in range(clients)]
    halfway, stopped = threading.Barrier(clients + 1, timeout=120), threading.Barrier(clients + 1, timeout=120)
    outcomes: list = [None] * clients

    def client(number: int) -> None:
        try:
            audio, piece = audios[number], 1600
            stream = RemoteStream(url, options, reconnect=True)
            half = len(audio) // 2 // piece * piece
            for begin in range(0, half, piece):
                stream.push(audio[begin:begin + piece])
            halfway.wait()
            stopped.wait()
            for begin in range(half, len(audio), piece):
                stream.push(audio[begin:begin + piece])
            stream.finish()
            outcomes[number] = stream
        except BaseException as error:  # reported by the assertion below, with the barrier released
            outcomes[number] = error
            halfway.abort()
            stopped.abort()

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    try:
        for thread in threads:
            thread.start()
        halfway.wait()
        time.sleep(0.3)  # the last pushes reach the replicas
        open_before = [replica.metric("speechattn_streams_open") for replica in replicas]
        replicas[0].process.send_signal(signal.SIGTERM)
        assert replicas[0].process.wait(60) == 0
        stopped.wait()
        for thread in threads:
            thread.join(120)
        opened_after = replicas[1].metric("speechattn_streams_total")
    finally:
        nginx.send_signal(signal.SIGQUIT)
        for replica in replicas:
            replica.process.send_signal(signal.SIGTERM)
        for process in [nginx] + [r.process for r in replicas]:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()

    assert sum(open_before) == clients and min(open_before) >= 1, open_before  # spread over both
    for number, stream in enumerate(outcomes):
        assert isinstance(stream, RemoteStream), (number, stream)
    moved = [stream for stream in outcomes if stream.seams]
    assert len(moved) == open_before[0] and opened_after == open_before[1] + len(moved)
    closed_1001 = [line for line in replicas[0].lines if "event=closed" in line and "code=1001" in line]
    assert len(closed_1001) == len(moved)  # one log line each
    for audio, stream in zip(audios, outcomes):
        if not stream.seams:
            assert same_segments(stream.segment_dicts(), local_segments(model, audio, options))
            continue
        heard = stream.results[0]["samples"]
        assert 0 < heard <= len(audio) and stream.seams == [heard / 16000]
        offset = heard / 16000
        expected = local_segments(model, audio[:heard], options) + [
            {**s, "start": round(s["start"] + offset, 6), "end": round(s["end"] + offset, 6)}
            for s in local_segments(model, audio[heard:], options)]
        assert same_segments(stream.segment_dicts(), expected)
        assert same_segments(stream.segments, expected)  # the updates, offset the same way
        assert stream.result["samples"] == len(audio)
