"""`speechattn serve --http-port`: whole files POSTed to /transcribe and /align get the JSON the command line writes
for the same file; bad requests each get their HTTP status, one line and one log line, and the live stream port
keeps serving beside them.  The real server on 127.0.0.1 (h11 on the same event loop), the tiny random model."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import urllib.error
import urllib.request

import numpy as np
import pytest

pytest.importorskip("websockets")
pytest.importorskip("prometheus_client")
pytest.importorskip("h11")

from speechattn.audio import speechlike_signal  # noqa: E402
from speechattn.cli.common import load_onnx  # noqa: E402
from speechattn.runtime.serve import Server, ServeOptions  # noqa: E402

SETTINGS = ["--decoder", "bigram", "--min-frames", "4"]
QUERY = "decoder=bigram&min_frames=4"


@contextlib.contextmanager
def serving(tiny_onnx, **settings):
    """A server with the file listener, its loop in a thread of its own."""
    loop = asyncio.new_event_loop()
    server = Server(load_onnx(tiny_onnx), ServeOptions(**{"port": 0, "http_port": 0, **settings}))

    def run():
        asyncio.set_event_loop(loop)
        loop.run_until_complete(server.serve())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    for _ in range(600):
        if server.http_address:
            break
        threading.Event().wait(0.05)
    try:
        yield server
    finally:
        loop.call_soon_threadsafe(server.shutdown)
        thread.join(30)


@pytest.fixture()
def server(tiny_onnx):
    with serving(tiny_onnx) as server:
        yield server


def post(server, path: str, body: bytes | None, headers: dict | None = None, method: str = "POST"):
    url = f"http://127.0.0.1:{server.http_address[1]}{path}"
    request = urllib.request.Request(url, data=body, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def wav_bytes(tmp_path, seconds: float = 1.2, rate: int = 16000) -> tuple[bytes, object]:
    import soundfile as sf

    path = tmp_path / "a.wav"
    sf.write(path, speechlike_signal(seconds, seed=12), rate, subtype="PCM_16")
    return path.read_bytes(), path


def cli_json(*args) -> dict:
    from speechattn.cli import main

    assert main(list(args)) == 0
    return json.loads(open(args[args.index("-o") + 1]).read())


def test_a_file_posted_to_transcribe_gets_the_json_transcribe_writes(server, tiny_onnx, tmp_path):
    body, path = wav_bytes(tmp_path)
    status, answer = post(server, f"/transcribe?name=a.wav&{QUERY}&", body)  # a trailing & (curl users) is no field
    expected = cli_json("transcribe", str(path), "--model", str(tiny_onnx), "--format", "json",
                        "-o", str(tmp_path / "out.json"), *SETTINGS)
    assert status == 200 and answer["file"] == "a.wav" and answer["segments"]
    assert {k: v for k, v in answer.items() if k != "file"} == {k: v for k, v in expected.items() if k != "file"}


def test_a_client_expecting_100_continue_gets_it_after_the_head_passes_and_a_refused_one_its_status_at_once(
        tiny_onnx, tmp_path):
    """curl sends `Expect: 100-continue` for a body over 1 MB and waits a second for 100 Continue, which never came.
    Now a head that passes the checks gets 100 at once, then the body brings the JSON; a head refused by its
    Content-Length (413) or token (401) gets that status at once and the body is never sent."""
    import socket

    body, _ = wav_bytes(tmp_path, 1.0)

    def expecting(server, length: int, token: str = "s3cret", body: bytes | None = None) -> tuple[bytes, bytes]:
        """(what arrived within 0.5 s of the head, what arrived after the body was sent, to the close)."""
        with socket.create_connection(server.http_address, timeout=30) as sock:
            sock.sendall(f"POST /transcribe?name=a.wav HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                         f"Content-Length: {length}\r\nExpect: 100-continue\r\n\r\n".encode())
            sock.settimeout(0.5)
            try:
                first = sock.recv(65536)
            except socket.timeout:
                first = b""
            rest = b""
            if body is not None and not first.startswith(b"HTTP/1.1 4"):
                sock.settimeout(30)
                sock.sendall(body)
                while chunk := sock.recv(65536):
                    rest += chunk
            return first, rest

    with serving(tiny_onnx, token="s3cret", max_file_bytes=1 << 20) as server:
        first, rest = expecting(server, len(body), body=body)
        too_big, _ = expecting(server, 2 << 20)
        wrong_token, _ = expecting(server, len(body), token="wrong")
    assert first == b"HTTP/1.1 100 Continue\r\n\r\n", first
    assert rest.startswith(b"HTTP/1.1 200 ") and json.loads(rest.split(b"\r\n\r\n", 1)[1])["file"] == "a.wav"
    assert too_big.startswith(b"HTTP/1.1 413 ") and wrong_token.startswith(b"HTTP/1.1 401 "), (too_big, wrong_token)


def test_align_takes_phases_as_the_command_line_does(tmp_path):
    """phases=2 (the bundled model steps 4 frames a position): the JSON of `align --phases 2`."""
    from pathlib import Path

    from speechattn.runtime.transcribe import resolve_model

    sample = Path(__file__).resolve().parent.parent / "speechattn" / "runtime" / "samples" / \
        "this-no-longer-appears-to-be-the-case.wav"
    model = resolve_model("default-int8")
    words = "this no longer appears to be the case"
    expected = cli_json("align", str(sample), words, "--model", str(model), "--format", "json", "-o",
                        str(tmp_path / "out.json"), "--phases", "2")
    plain = cli_json("align", str(sample), words, "--model", str(model), "--format", "json", "-o",
                     str(tmp_path / "plain.json"))
    with serving(model) as server:
        status, answer = post(server, "/align?name=case.wav&phases=2&text=" + words.replace(" ", "+"),
                              sample.read_bytes())
    assert status == 200
    assert {k: v for k, v in answer.items() if k != "file"} == {k: v for k, v in expected.items() if k != "file"}
    assert answer["words"] != plain["words"]  # the phases reached the alignment


def test_a_server_without_a_model_named_transcribes_files_with_the_files_model_as_transcribe_does(tiny_onnx, tmp_path):
    """serve without --model (options.files_model: the bundled files' model) answers /transcribe as `transcribe`
    without --model does; a request that names a chunk gets the live streams' model, as --chunk-frames does."""
    body, path = wav_bytes(tmp_path, seconds=2.5)
    with serving(tiny_onnx, files_model="file-int8") as server:
        status, answer = post(server, f"/transcribe?name=a.wav&{QUERY}", body)
        one_status, one = post(server, f"/transcribe?name=a.wav&{QUERY}&phases=1", body)
        live_status, live = post(server, f"/transcribe?name=a.wav&{QUERY}&chunk_frames=4", body)
    expected = cli_json("transcribe", str(path), "--format", "json", "-o", str(tmp_path / "out.json"), *SETTINGS)
    expected_one = cli_json("transcribe", str(path), "--format", "json", "-o", str(tmp_path / "one.json"), *SETTINGS,
                            "--phases", "1")
    assert status == 200 and answer["model"]["name"] == expected["model"]["name"] == "file-int8.onnx"
    assert {k: v for k, v in answer.items() if k != "file"} == {k: v for k, v in expected.items() if k != "file"}
    # the default is transcribe's, two phases; phases=1 is `--phases 1`, and another answer
    assert one_status == 200 and {k: v for k, v in one.items() if k != "file"} == {
        k: v for k, v in expected_one.items() if k != "file"}
    assert one["segments"] != answer["segments"]
    assert live_status == 200 and live["model"]["name"] == tiny_onnx.name and live["chunk_frames"] == 4


def test_a_file_posted_to_align_with_its_words_gets_the_json_align_writes(server, tiny_onnx, tmp_path):
    """With force=1 as with --force (the tiny random model matches no text); without it, the command line's
    refusal of a text that does not match the speech, as a 422."""
    body, path = wav_bytes(tmp_path, 2.0)
    words = "the cat sat on the mat"
    status, answer = post(server, "/align?name=a.wav&force=1&text=" + words.replace(" ", "+"), body)
    expected = cli_json("align", str(path), words, "--model", str(tiny_onnx), "--format", "json",
                        "-o", str(tmp_path / "out.json"), "--force")
    refused, refusal = post(server, "/align?name=a.wav&text=" + words.replace(" ", "+"), body)
    assert refused == 422 and refusal["error"].startswith("a.wav: the text does not match the speech")
    assert refusal["error"].endswith("give language=LANG; or give force=1 to align it anyway")  # the request's way
    assert status == 200 and answer["file"] == "a.wav"
    assert sorted([w["index"] for w in answer["words"]] + [w["index"] for w in answer["not_heard"]]) == list(range(6))
    assert {k: v for k, v in answer.items() if k != "file"} == {k: v for k, v in expected.items() if k != "file"}


def test_bad_file_requests_each_get_a_status_and_one_log_line_and_a_live_stream_goes_on(tiny_onnx, tmp_path, caplog):
    """Too big (said by Content-Length, before the body is read; and chunked, counted as it comes), not audio, an
    unknown parameter, align without words, GET, an unknown path, a wrong token, a head that never ends (408)."""
    import socket

    from speechattn_export.remote import RemoteStream

    body, _ = wav_bytes(tmp_path, 1.0)  # 32 KB: under the 64 KiB bound
    token = {"Authorization": "Bearer s3cret"}

    def chunked_too_big():
        with socket.create_connection(server.http_address, timeout=60) as s:
            s.sendall(b"POST /transcribe HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\n"
                      b"Transfer-Encoding: chunked\r\n\r\n")
            try:
                for _ in range(20):  # 20 x 8 KiB, past the 64 KiB bound
                    s.sendall(b"2000\r\n" + b"\0" * 0x2000 + b"\r\n")
            except OSError:
                pass  # the server answered and closed
            return int(s.recv(100).split()[1]), None

    def never_ending_head():
        with socket.create_connection(server.http_address, timeout=60) as s:
            s.sendall(b"POST /transcribe HTTP/1.1\r\nHost: x\r\n")
            return int(s.recv(100).split()[1]), None

    cases = {  # name: (call, status, words in the error)
        "too big, said up front": (lambda: post(server, "/transcribe", b"\0" * (65 << 10), token), 413,
                                   "at most 65,536"),
        "too big, chunked": (chunked_too_big, 413, None),
        "not audio": (lambda: post(server, "/transcribe?name=notes.wav", b"hello " * 100, token), 422,
                      "notes.wav: a text file, not audio"),
        "an unknown parameter": (lambda: post(server, "/transcribe?speed=2", body, token), 400,
                                 "unknown parameter 'speed'"),
        "a chunk the model does not serve": (lambda: post(server, "/transcribe?chunk_frames=999", body, token),
                                             400, "999"),
        "align without words": (lambda: post(server, "/align", body, token), 400, "?text="),
        "force=yes": (lambda: post(server, "/align?text=please&force=yes", body, token), 400,
                      "force is 1 or 0, not 'yes'"),
        "phases past the encoder's step": (lambda: post(server, "/align?text=please&phases=2", body, token), 400,
                                           "phases is 1 for this model"),
        "phases past the step, for a file": (lambda: post(server, "/transcribe?phases=4", body, token), 400,
                                             "phases is 1 for this model"),
        "a huge phases": (lambda: post(server, "/align?text=please&phases=" + "9" * 5000, body, token), 400,
                          "not '99999999999999999999'"),
        "min_frames in another script's digits": (
            lambda: post(server, "/transcribe?min_frames=%D9%A2", body, token), 400, "min_frames must be an integer"),
        "min_frames 2_0": (lambda: post(server, "/transcribe?min_frames=2_0", body, token), 400,
                           "min_frames must be an integer, not '2_0'"),
        "a parameter twice": (lambda: post(server, "/align?text=please&text=enter", body, token), 400,
                              "parameter 'text' is given 2 times"),
        "a text over the head bound": (lambda: post(server, "/align?text=" + "word+" * 14000, body, token), 431,
                                       "over 64 KiB"),
        "GET": (lambda: post(server, "/transcribe", None, token, "GET"), 405, "takes POST"),
        "an unknown path": (lambda: post(server, "/nothing", body, token), 404, "not found"),
        "a wrong token": (lambda: post(server, "/transcribe", body, {"Authorization": "Bearer no"}), 401,
                          "token"),
        "a head that never ends": (never_ending_head, 408, None),
    }
    audio = speechlike_signal(1.5, seed=13).astype(np.float32)
    with serving(tiny_onnx, max_file_bytes=64 << 10, token="s3cret", handshake_timeout_seconds=1.0) as server, \
            caplog.at_level("INFO", logger="speechattn.runtime.serve"):
        url = f"ws://127.0.0.1:{server.address[1]}/stream"
        live = RemoteStream(url, token="s3cret")
        outcomes = {}
        for number, (name, (call, _, _)) in enumerate(cases.items()):
            live.push(audio[number * 1600:(number + 1) * 1600])
            outcomes[name] = call()
        live.push(audio[len(cases) * 1600:])
        live.finish()
        status, good = post(server, "/transcribe?name=a.wav", body, token)
    for name, (_, expected, words) in cases.items():
        got, answer = outcomes[name]
        assert got == expected, (name, got, answer)
        if words is not None:
            assert words in answer["error"] and "\n" not in answer["error"], (name, answer)
    assert status == 200 and good["file"] == "a.wav"
    assert live.result["samples"] == len(audio) and live.result["segments"]
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("event=file")]
    assert len(lines) == len(cases) + 1  # one each, and the good file's
    assert all("/tmp" not in line for line in lines)  # the server's temporary paths stay its own
