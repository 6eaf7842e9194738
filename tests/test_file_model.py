"""Files' own model: file-int8 is what a file gets when no model is named, after a pre-roll of the file's loudest
second (file_preroll, Stream.prime), the same in Python and Node."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from speechattn.cli import main
from speechattn_export import load_model
from speechattn_export.stream_client import PREROLL_GAP_SECONDS, file_preroll

from test_js_clients import ROOT, node

PASSWORD = ROOT / "speechattn" / "runtime" / "samples" / "please-enter-your-password.wav"


def quiet_with_a_burst(seconds: float, burst_at: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    audio = (0.001 * rng.standard_normal(int(seconds * 16000))).astype(np.float32)
    at = int(burst_at * 16000)
    audio[at:at + 16000] += (0.3 * np.sin(np.arange(16000) * 0.07)).astype(np.float32)
    return audio


def test_the_pre_roll_is_the_loudest_second_of_the_first_four_then_a_silence():
    model = load_model("file-int8")
    gap = int(PREROLL_GAP_SECONDS * 16000)
    audio = quiet_with_a_burst(6.0, 2.0)
    preroll = file_preroll(model, audio)
    assert len(preroll) == 16000 + gap and not preroll[16000:].any()
    assert np.array_equal(preroll[:16000], audio[32000:48000])  # the burst, on a hop
    # a burst after the first four seconds is not looked for; the first of equal windows wins
    late = quiet_with_a_burst(8.0, 5.0)
    assert np.array_equal(file_preroll(model, late)[:16000], late[np.argmax([np.sum(late[i:i + 16000] ** 2.0, dtype=np.float64)
                                                                           for i in range(0, 48001, 160)]) * 160:][:16000])
    short = audio[:8037]  # shorter than a second: all of it, in whole hops
    assert np.array_equal(file_preroll(model, short), np.concatenate([short[:8000], np.zeros(gap, np.float32)]))
    assert len(file_preroll(model, audio[:0])) == 0
    # a model primed with a silence's caches gets none
    assert len(file_preroll(load_model("default-int8"), audio)) == 0


def test_a_primed_stream_is_the_stream_of_pre_roll_and_audio_with_the_pre_roll_frames_dropped():
    model = load_model("file-int8")
    audio = quiet_with_a_burst(5.3, 0.05, seed=1)
    preroll = file_preroll(model, audio)
    skip = len(preroll) // 160
    whole = model.new_stream(400)
    expected = np.concatenate([whole.push(np.concatenate([preroll, audio])).log_probs, whole.finish().log_probs])[skip:]
    stream = model.new_stream(400)
    stream.prime(preroll)
    pieces, at = [], 0
    for size in (1, 4000, 17, 30000, 50000, len(audio)):
        frames = stream.push(audio[at:at + size])
        pieces.append(frames)
        at += size
    pieces.append(stream.finish())
    got = np.concatenate([p.log_probs for p in pieces])
    assert np.concatenate([p.frame_indices for p in pieces]).tolist() == list(range(len(expected)))
    assert len(got) == -(-len(audio) // 160)
    np.testing.assert_allclose(got, expected, atol=1e-5)  # the same graph calls: streaming's tolerance
    with pytest.raises(RuntimeError, match="before the stream's first push"):
        stream.prime(preroll)
    with pytest.raises(ValueError, match="whole hops"):
        model.new_stream(400).prime(preroll[:-1])
    quiet = model.new_stream(400)
    assert len(quiet.push(audio[:16000]).log_probs) == 0  # pushed, though no chunk came out yet
    with pytest.raises(RuntimeError, match="before the stream's first push"):
        quiet.prime(preroll)


def test_a_file_gets_the_file_model_and_a_live_chunk_or_a_dialog_the_default(capsys):
    assert main(["transcribe", str(PASSWORD), "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["model"]["name"] == "file-int8.onnx" and result["chunk_frames"] == 400
    assert main(["transcribe", str(PASSWORD), "--format", "json", "--chunk-frames", "32"]) == 0
    assert json.loads(capsys.readouterr().out)["model"]["name"] == "default.onnx"
    assert main(["transcribe", str(PASSWORD), "--format", "json", "--dialog",
                 "please enter your password followed by the pound key"]) == 0
    assert json.loads(capsys.readouterr().out)["model"]["name"] == "default.onnx"


def test_the_pre_roll_changes_the_first_words_only_as_measured():
    """The password sample at 8 kHz, "please" 70 ms in: without the pre-roll the file model hears no vowel in
    "enter"; with it, as `transcribe --phases 1` prints it (docs/benchmarks.md has the dev sets' figures)."""
    from speechattn.runtime.transcribe import transcribe_file

    phones = load_model("file-int8").phones
    said = [phones[s.phone] for s in transcribe_file(load_model("file-int8"), PASSWORD).segments]
    said = " ".join(p for p in said if p != "sil")
    assert said.startswith("T IY S EH N D Y R AH P AE F AO ER D F AO L AH D B AH DH AH")


def test_node_makes_the_same_pre_roll(tmp_path):
    model = load_model("file-int8")
    audio = quiet_with_a_burst(4.5, 1.234, seed=2)
    audio[100] = np.nan  # read as silence by both
    source = tmp_path / "head.f32"
    audio.astype("<f4").tofile(source)
    script = (
        "import { readFileSync } from 'node:fs';"
        "import { filePreroll } from './export/js/speechattn.mjs';"
        f"const b = readFileSync({json.dumps(str(source))});"
        "const head = new Float32Array(b.buffer, b.byteOffset, b.length / 4);"
        "const out = filePreroll({ hopSamples: 160, sampleRate: 16000, startsEmpty: true }, head);"
        "process.stdout.write(Buffer.from(out.buffer, out.byteOffset, out.byteLength).toString('base64'));"
    )
    result = node("--input-type=module", "-e", script)
    assert result.returncode == 0, result.stderr
    ours = np.frombuffer(base64.b64decode(result.stdout), dtype="<f4")
    assert np.array_equal(ours, file_preroll(model, audio))


def test_a_checkpoint_whose_streams_start_empty_is_evaluated_after_the_pre_roll_as_its_onnx_file(tiny_model, tiny_onnx,
                                                                                                   monkeypatch):
    """`speechattn eval` of a PyTorch checkpoint whose streams start empty (primed_start false, as the file model's)
    prepends each utterance's pre-roll and drops its frames, as the exported file is streamed (evaluate_onnx,
    `transcribe`): the same log-probabilities, whatever the batch's lengths."""
    from speechattn.audio import speechlike_signal
    from speechattn.training import evaluate

    items = [(f"u{i}", speechlike_signal(seconds, seed=i), np.zeros(int(seconds * 100), np.int64))
             for i, seconds in enumerate((0.5, 1.3, 2.6))]
    monkeypatch.setattr(evaluate, "utterances", lambda cuts: iter(items))
    seen = {"torch": [], "onnx": []}
    for arm, run in (("torch", lambda: evaluate.evaluate_checkpoint(tiny_model, items, [4], batch_size=2)),
                     ("onnx", lambda: evaluate.evaluate_onnx(tiny_onnx, items, [4]))):
        def add(self, reference, log_probs, *rest, _arm=arm, **options):
            seen[_arm].append(np.array(log_probs))
        monkeypatch.setattr(evaluate.Scores, "add", add)
        run()
    assert [len(x) for x in seen["torch"]] == [len(x) for x in seen["onnx"]] == [50, 130, 260]
    for ours, exported in zip(seen["torch"], seen["onnx"]):
        assert np.max(np.abs(ours - exported)) < 1e-3
