"""`speechattn mic` end to end through a real audio stack: a user PulseAudio with a null sink whose
monitor is the default source, PortAudio reading it through ALSA's pulse plugin, a recording played
into the sink with paplay, the CLI stopped with SIGINT."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from speechattn.audio import speechlike_signal

pytestmark = pytest.mark.slow  # a real audio stack: minutes, run in CI with -m ""

SAMPLE = Path("speechattn/runtime/samples/please-enter-your-password.wav")
BUNDLED = Path("export/models/default.onnx")


def start_pulse(runtime: Path):
    """A private PulseAudio server with a null sink whose monitor is the default source: (process, env)."""
    if not shutil.which("pulseaudio") or not shutil.which("paplay"):
        pytest.skip("PulseAudio is not installed (apt-get install pulseaudio pulseaudio-utils libportaudio2 "
                    "libasound2-plugins)")
    runtime.mkdir(parents=True, exist_ok=True)
    runtime.chmod(0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "PULSE_RUNTIME_PATH": str(runtime / "pulse")}
    server = subprocess.Popen(
        ["pulseaudio", "--daemonize=no", "--exit-idle-time=-1", "--disallow-exit", "-n",
         "--load=module-native-protocol-unix", "--load=module-null-sink sink_name=speechattn_test rate=48000"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 15
    while subprocess.run(["pactl", "info"], env=env, capture_output=True).returncode != 0:
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            pytest.skip(f"PulseAudio cannot run here: {server.stderr.read().decode()[-300:]}")
        time.sleep(0.2)
    subprocess.run(["pactl", "set-default-source", "speechattn_test.monitor"], env=env, check=True)
    return server, env


@pytest.fixture(scope="module")
def pulse(tmp_path_factory):
    server, env = start_pulse(tmp_path_factory.mktemp("pulse"))
    yield env
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=10)


def frame_phones(segments) -> np.ndarray:
    return np.concatenate([[s["phone"]] * round(100 * (s["end"] - s["start"])) for s in segments])


def live_chunk(model) -> str:
    """The model's default chunk, which mic streams at (`transcribe` takes a file's largest unless told)."""
    from speechattn_export.stream_client import StreamingModel

    return str(StreamingModel(model).default_chunk_frames)


def transcribe(path, model) -> list[dict]:
    result = subprocess.run([sys.executable, "-m", "speechattn.cli", "transcribe", str(path), "--model", str(model),
                             "--format", "json", "--chunk-frames", live_chunk(model)],
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout)["segments"]


@pytest.fixture(scope="module")
def utterance(tmp_path_factory, request):
    """(audio file, model): the bundled recording and model when the package ships one, else a
    speech-like signal and a tiny model trained on it (both give decisive labels)."""
    if BUNDLED.exists():
        return SAMPLE, BUNDLED
    path = tmp_path_factory.mktemp("utterance") / "speechlike.wav"
    sf.write(path, speechlike_signal(3.0, seed=11), 16000)
    return path, request.getfixturevalue("trained_onnx")


def test_mic_lists_the_pulse_devices(pulse):
    result = subprocess.run([sys.executable, "-m", "speechattn.cli", "mic", "--list-devices"], env=pulse,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "pulse" in result.stdout


def start_mic(pulse, model, output, saved, *options: str) -> subprocess.Popen:
    """`speechattn mic` on the null sink's monitor, writing both outputs; returns once it says it listens."""
    mic = subprocess.Popen([sys.executable, "-m", "speechattn", "mic", "--model", str(model), "--output",
                            str(output), "--save-audio", str(saved), *options], env=pulse, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    line = mic.stderr.readline()
    if not line.startswith("listening on"):
        mic.kill()
        raise AssertionError(line + mic.stderr.read())
    mic.listening = line  # what it said (communicate() would not see it again)
    return mic


def test_mic_transcribes_what_is_played_into_the_sink(pulse, utterance, tmp_path):
    audio_path, model = utterance
    output, saved = tmp_path / "mic.jsonl", tmp_path / "heard.wav"
    mic = start_mic(pulse, model, output, saved)
    try:
        started = time.monotonic()
        time.sleep(0.5)
        subprocess.run(["paplay", "-d", "speechattn_test", str(audio_path)], env=pulse, check=True, timeout=60)
        time.sleep(0.8)
        mic.send_signal(signal.SIGINT)
        stdout, stderr = mic.communicate(timeout=60)
    finally:
        if mic.poll() is None:
            mic.kill()
    assert mic.returncode == 0, stderr
    assert "Traceback" not in stderr and time.monotonic() - started < 60
    summary = next(line for line in stderr.splitlines() if line.startswith("speechattn mic:"))
    assert "input overflows 0, dropped blocks 0" in summary  # nothing was dropped
    p95 = float(summary.split("p95 ")[1].split(" ms")[0])
    assert p95 < 250, summary

    segments = [json.loads(line) for line in output.read_text().splitlines()]
    assert [json.loads(line) for line in stdout.splitlines()] == segments  # stdout is not a terminal: JSON lines
    heard, rate = sf.read(saved)
    assert rate == 16000 and segments[-1]["end"] == pytest.approx(len(heard) / 16000, abs=0.011)

    # the played utterance is in what the microphone heard (cross-correlation finds it)
    played, _ = sf.read(audio_path)
    if _ != 16000:
        import soxr

        played = soxr.resample(played, _, 16000)
    from scipy.signal import correlate

    assert len(heard) > len(played)
    correlation = correlate(heard, played, mode="valid", method="fft")
    offset = int(np.argmax(np.abs(correlation)))
    window = heard[offset : offset + len(played)]
    assert abs(np.dot(window, played)) / (np.linalg.norm(window) * np.linalg.norm(played)) > 0.9

    # the live phones agree with `speechattn transcribe` on the same audio
    live, offline = frame_phones(segments), frame_phones(transcribe(saved, model))
    shared = min(len(live), len(offline))
    assert abs(len(live) - len(offline)) <= 1 and np.mean(live[:shared] == offline[:shared]) >= 0.99  # float wav: exact

    # (transcribe of the original 8 kHz file is not asserted against: the audio reaches the model through
    # 8 -> 48 -> 44.1 -> 16 kHz resampling at a sub-hop offset that differs run to run, and the bundled model's
    # outputs on this telephone recording are close enough to tied that ~1/4 of its frames change; measured 76 %)


def test_mic_lip_sync_prints_weights_and_cues_and_moves_a_vmc_avatar(pulse, utterance, tmp_path):
    """--visemes: a JSON line per frame of weights and per final cue, the cues those of `transcribe --format
    rhubarb-json` on the audio the microphone heard; --vmc: the VRM blendshapes reach a real OSC server."""
    from test_visemes import OscReceiver

    audio_path, model = utterance
    output, saved = tmp_path / "mic.jsonl", tmp_path / "heard.wav"
    receiver = OscReceiver()
    try:
        mic = start_mic(pulse, model, output, saved, "--visemes", "rhubarb", "--vmc", f"127.0.0.1:{receiver.port}")
        import threading

        lines: list[str] = []  # read as they come, as a consumer would (a full pipe would hold the session up)
        reader = threading.Thread(target=lambda: lines.extend(mic.stdout), daemon=True)
        reader.start()
        try:
            time.sleep(0.5)
            subprocess.run(["paplay", "-d", "speechattn_test", str(audio_path)], env=pulse, check=True, timeout=60)
            time.sleep(0.8)
            mic.send_signal(signal.SIGINT)
            stderr = mic.stderr.read()
            mic.wait(timeout=60)
            reader.join(timeout=30)
        finally:
            if mic.poll() is None:
                mic.kill()
        messages = receiver.wait_for(6)
    finally:
        receiver.close()
    assert mic.returncode == 0, stderr
    assert "mouth latency: weights" in mic.listening and "VMC to 127.0.0.1" in mic.listening
    summary = next(line for line in stderr.splitlines() if line.startswith("speechattn mic:"))
    assert "input overflows 0, dropped blocks 0" in summary
    assert float(summary.split("p95 ")[1].split(" ms")[0]) < 250, summary  # lip sync keeps the session's pace
    records = [json.loads(line) for line in lines]
    weights = [r for r in records if r["type"] == "weights"]
    cues = [r for r in records if r["type"] == "cue"]
    assert len(weights) + len(cues) == len(records) and weights and cues
    assert [w["time"] for w in weights] == [round(i / 100, 3) for i in range(len(weights))]  # every frame, in order
    assert all(set(w["weights"]) == set("ABCDEFGHX") and abs(sum(w["weights"].values()) - 1) < 0.01 for w in weights)
    assert cues[0]["start"] == 0 and all(a["end"] == b["start"] for a, b in zip(cues, cues[1:]))
    assert {c["value"] for c in cues} - {"X"}, "speech moved the mouth"

    result = subprocess.run([sys.executable, "-m", "speechattn.cli", "transcribe", str(saved), "--model", str(model),
                             "--format", "rhubarb-json", "--chunk-frames", live_chunk(model)],
                            capture_output=True, text=True, check=True)
    offline = json.loads(result.stdout)["mouthCues"]

    def frames(cue_list):
        return np.concatenate([[c["value"]] * round(100 * (c["end"] - c["start"])) for c in cue_list])

    live, reference = frames(cues), frames(offline)
    shared = min(len(live), len(reference))
    assert np.mean(live[:shared] == reference[:shared]) >= 0.97

    names = [address for address, _ in messages]
    assert names[:6] == ["/VMC/Ext/Blend/Val"] * 5 + ["/VMC/Ext/Blend/Apply"]
    assert [args[0] for _, args in messages[:5]] == ["A", "I", "U", "E", "O"]
    assert all(0 <= args[1] <= 1 for address, args in messages if address.endswith("Val"))


def test_no_such_device_is_one_clear_error(pulse, utterance):
    result = subprocess.run([sys.executable, "-m", "speechattn.cli", "mic", "--model", str(utterance[1]),
                             "--device", "no-such-microphone"], env=pulse, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and "no input device matches 'no-such-microphone'" in result.stderr
    assert "Traceback" not in result.stderr and "\\n" not in result.stderr  # the inputs named in the line, no escapes
    assert len(result.stderr.strip().splitlines()) == 1 and "the inputs are" in result.stderr


@pytest.mark.parametrize("columns", [80, 40])
def test_the_live_status_line_fits_the_terminal_it_redraws_in(pulse, utterance, columns):
    """8 s of speech in an 80-column terminal once left 184 lines: a 110-column status line wrapped on every
    redraw.  Under a real pseudo-terminal of `columns`, every redraw fits one line and nothing scrolls."""
    import fcntl
    import pty
    import re
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {key: value for key, value in pulse.items() if key not in ("COLUMNS", "LINES")}
    mic = subprocess.Popen([sys.executable, "-m", "speechattn.cli", "mic", "--model", str(utterance[1])], env=env,
                           stdin=slave, stdout=slave, stderr=subprocess.PIPE, text=True)
    os.close(slave)
    shown = bytearray()

    def read_terminal():  # the terminal's screen: read as it is drawn, or the writer blocks on a full buffer
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the other end is closed: everything has been read
                return
            if not chunk:
                return
            shown.extend(chunk)

    import threading

    reader = threading.Thread(target=read_terminal, daemon=True)
    reader.start()
    try:
        assert mic.stderr.readline().startswith("listening on")
        for _ in range(3):  # about 10 s of speech
            subprocess.run(["paplay", "-d", "speechattn_test", str(utterance[0])], env=pulse, check=True, timeout=60)
        mic.send_signal(signal.SIGINT)
        mic.wait(timeout=60)
        reader.join(timeout=10)
    finally:
        if mic.poll() is None:
            mic.kill()
        os.close(master)
    assert mic.returncode == 0
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", shown.decode("utf-8", "replace"))
    redraws = [piece for line in text.split("\n") for piece in line.split("\r") if piece.strip()]
    assert len(redraws) > 20  # the status line was drawn, again and again
    assert max(len(piece) for piece in redraws) < columns
    assert text.count("\n") <= 2  # nothing scrolled: the last redraw and the end of the session


def test_a_device_that_disappears_ends_with_a_message_and_flushed_output(tmp_path, utterance):
    server, env = start_pulse(tmp_path / "pulse")
    output = tmp_path / "out.jsonl"
    mic = subprocess.Popen([sys.executable, "-m", "speechattn.cli", "mic", "--model", str(utterance[1]), "--output",
                            str(output)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert mic.stderr.readline().startswith("listening on")
        subprocess.run(["paplay", "-d", "speechattn_test", str(utterance[0])], env=env, check=True, timeout=60)
        server.kill()  # the audio server, and with it the device, goes away
        server.wait(timeout=10)
        stderr = mic.communicate(timeout=60)[1]
    finally:
        if mic.poll() is None:
            mic.kill()
    assert mic.returncode == 1 and "stopped delivering audio" in stderr and "Traceback" not in stderr
    lines = output.read_text().splitlines()
    assert lines and all(json.loads(line)["end"] > json.loads(line)["start"] for line in lines)  # complete lines


@pytest.mark.parametrize("how", ["SIGHUP", "SIGKILL"])
def test_a_session_ended_by_a_closed_terminal_or_a_kill_keeps_its_lines_and_a_readable_wav(pulse, utterance, tmp_path,
                                                                                           how):
    """SIGHUP ends the session as Ctrl-C does; SIGKILL gives it no chance, yet every JSON line shown so far is in the
    file (flushed line by line) and the WAV reads, its header updated with every block."""
    audio_path, model = utterance
    output, saved = tmp_path / "mic.jsonl", tmp_path / "heard.wav"
    mic = start_mic(pulse, model, output, saved)
    try:
        subprocess.run(["paplay", "-d", "speechattn_test", str(audio_path)], env=pulse, check=True, timeout=60)
        time.sleep(0.8)
        import queue
        import threading

        lines: queue.Queue = queue.Queue()  # stdout is a pipe: the JSON lines shown so far, read by a thread
        threading.Thread(target=lambda: [lines.put(line) for line in mic.stdout], daemon=True).start()
        shown = [lines.get(timeout=30) for _ in range(3)]
        mic.send_signal(getattr(signal, how))
        mic.wait(timeout=60)
    finally:
        if mic.poll() is None:
            mic.kill()
    written = output.read_text().splitlines()
    assert written[: len(shown)] == [s.strip() for s in shown]
    heard, rate = sf.read(saved)
    assert rate == 16000 and len(heard) > 16000 * 0.5
    if how == "SIGHUP":
        assert mic.returncode == 0


def test_mic_follows_a_script_read_into_the_sink(pulse, tmp_path):
    """mic --script: a JSON line per word as the reader passes it, in the script's order, and the summary's
    word delay; the words the reader left out are passed over."""
    if not BUNDLED.exists():
        pytest.skip("needs the bundled model")
    script = tmp_path / "script.txt"
    script.write_text("Please enter your password, followed by the pound key.\nDo not say this line.\n")
    output, saved = tmp_path / "follow.jsonl", tmp_path / "heard.wav"
    mic = start_mic(pulse, BUNDLED, output, saved, "--script", str(script))
    try:
        time.sleep(0.5)
        subprocess.run(["paplay", "-d", "speechattn_test", str(SAMPLE)], env=pulse, check=True, timeout=60)
        time.sleep(0.8)
        mic.send_signal(signal.SIGINT)
        stdout, stderr = mic.communicate(timeout=60)
    finally:
        if mic.poll() is None:
            mic.kill()
    assert mic.returncode == 0, stderr
    records = [json.loads(line) for line in stdout.splitlines()]
    assert {record["type"] for record in records} == {"segment", "word"}  # every line says which it is
    words = [record for record in records if record["type"] == "word"]
    heard = list(dict.fromkeys(w["word"] for w in words))
    assert heard[:9] == ["Please", "enter", "your", "password", "followed", "by", "the", "pound", "key"], heard
    assert all(a["end"] <= b["end"] for a, b in zip(words, words[1:]))
    summary = next(line for line in stderr.splitlines() if line.startswith("speechattn mic:"))
    assert "script: 9 of 14 words heard" in summary and "word delay p50" in summary, summary
