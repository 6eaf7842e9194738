"""libspeechattn (export/c), the C library: the third twin of the kits, held equal to the Python kit by the same
vectors (export/vectors/README.md): the segmenter vectors through its decoders, its resampler against Python's, every
bundled recording through every bundled model (int16 and float32, pieces of random sizes) giving exactly the
segments, cues and weights of PhoneStream; every refused input with its status and message; streams on one model from
many threads; valgrind on the example and the C tests.

Builds the library once (cmake, a C compiler; the README's test command installs them: apt-get install cmake gcc
valgrind) into a temporary directory, linking the onnxruntime of this Python's wheel."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted((ROOT / "speechattn" / "runtime" / "samples").glob("*.wav"))
MODELS = ROOT / "export" / "models"
SHORT = ROOT / "speechattn" / "runtime" / "samples" / "this-no-longer-appears-to-be-the-case.wav"


@pytest.fixture(scope="module")
def build(tmp_path_factory) -> Path:
    missing = [tool for tool in ("cmake", "cc") if not shutil.which(tool)]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed (the README's test command installs them: apt-get install "
                    "cmake gcc)")
    out = tmp_path_factory.mktemp("build-c")
    configure = subprocess.run(["cmake", "-S", str(ROOT / "export" / "c"), "-B", str(out),
                                f"-DSPEECHATTN_PYTHON={sys.executable}"], capture_output=True, text=True, timeout=120)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    made = subprocess.run(["cmake", "--build", str(out), "-j2"], capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stdout + made.stderr
    assert "warning" not in made.stdout + made.stderr, "the C library must build without warnings (-Wall -Wextra)"
    return out


def test_the_generated_viseme_tables_are_the_kits():
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "viseme_tables_c.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_the_c_decoders_pass_the_shared_segmenter_vectors(build):
    result = subprocess.run([str(build / "check_vectors"), str(ROOT / "tests" / "segmenter-vectors.json"),
                             str(MODELS / "phone-bigram.json")], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "6 of 6 cases agree" in result.stdout


class Resampler:
    """The library's resampler through ctypes."""

    def __init__(self, lib, source: int, target: int) -> None:
        self.lib, self.handle = lib, ctypes.c_void_p()
        assert lib.speechattn_resampler_create(source, target, ctypes.byref(self.handle)) == 0

    def _take(self, status, out, count) -> np.ndarray:
        assert status == 0
        return np.ctypeslib.as_array(out, shape=(count.value,)).copy() if count.value else np.zeros(0, np.float32)

    def process(self, x: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(x, dtype=np.float32)
        out, count = ctypes.POINTER(ctypes.c_float)(), ctypes.c_int64()
        status = self.lib.speechattn_resampler_process(self.handle, x.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                                       ctypes.c_int64(len(x)), ctypes.byref(out), ctypes.byref(count))
        return self._take(status, out, count)

    def flush(self) -> np.ndarray:
        out, count = ctypes.POINTER(ctypes.c_float)(), ctypes.c_int64()
        return self._take(self.lib.speechattn_resampler_flush(self.handle, ctypes.byref(out), ctypes.byref(count)),
                          out, count)

    def close(self) -> None:
        self.lib.speechattn_resampler_destroy(self.handle)


@pytest.mark.parametrize("rates", [(8000, 16000), (22050, 16000), (44100, 16000), (48000, 16000), (16000, 44100)])
def test_the_c_resampler_gives_pythons_samples_in_pieces_of_any_size(build, rates):
    """export/resample.py, sample for sample (both add float64 products; the order may differ: one float32 rounding,
    the tolerance test_js_clients.py gives JavaScript), white noise in pieces of random sizes."""
    from speechattn_export.resample import resample

    source, target = rates
    lib = ctypes.CDLL(str(build / "libspeechattn.so"))
    signal = (np.random.default_rng(source).standard_normal(source) * 0.2).astype(np.float32)
    python = resample(signal, source, target)
    sizes = np.random.default_rng(target + source).integers(0, 3000, size=100)
    resampler, pieces, at = Resampler(lib, source, target), [], 0
    for n in sizes:
        pieces.append(resampler.process(signal[at:at + n]))
        at += n
    pieces += [resampler.process(signal[at:]), resampler.flush()]
    resampler.close()
    ours = np.concatenate(pieces)[:round(len(signal) * target / source)]
    assert len(ours) == len(python)
    np.testing.assert_allclose(ours, python, rtol=0, atol=1e-7)


def python_run(model_name: str, audio: np.ndarray, rate: int, sizes, visemes, decoder: str, head=None):
    from speechattn_export import DecodingOptions, load_model

    model = load_model(model_name, threads=1)
    stream = model.open(DecodingOptions(decoder=decoder, visemes=visemes))
    if head is not None:
        stream.prime(head)
    updates, at = [], 0
    for n in [*sizes, None]:
        piece = audio[at:] if n is None else audio[at:at + n]
        at += len(piece)
        updates.append(stream.push(piece, sample_rate=rate))
    updates.append(stream.finish())
    return stream, updates


CASES = [  # (model, recording, input, viseme set, decoder): every model, every recording, both formats, every set
    ("default-int8", 0, "s16", "rhubarb", "bigram"), ("default-int8", 1, "f32", "oculus", "hysteresis"),
    ("default", 0, "f32", "vrm", "bigram"), ("default", 1, "s16", "rhubarb", "bigram"),
    ("file-int8", 0, "s16", "oculus", "bigram"), ("file-int8", 1, "f32", "vrm", "bigram"),
]


@pytest.mark.parametrize("model_name, number, form, visemes, decoder", CASES)
def test_every_recording_through_every_model_gives_what_phonestream_gives(build, tmp_path, model_name, number, form,
                                                                           visemes, decoder):
    """The same pushes (random sizes, at the recording's own rate: 8 kHz goes through the resampler) in C and in the
    kit: every update's segments and cues, and the frames' weights, equal (confidences and weights within 1e-9 and
    1e-6: exp may differ by an ulp between numpy and libm).  file-int8 starts empty: both get the file's pre-roll."""
    from speechattn_export.resample import resample
    from speechattn_export.stream_client import file_preroll

    path = SAMPLES[number]
    audio, rate = sf.read(path, dtype="int16")
    if form == "f32":
        audio = (audio.astype(np.float32) / 32768).astype(np.float32)
    sizes = [int(n) for n in np.random.default_rng(number * 7 + len(model_name)).integers(1, 4000, size=len(audio) // 2000)]
    head = None
    if model_name == "file-int8":  # the pre-roll from the file's first four seconds at 16 kHz, in both
        first = np.asarray(audio[:4 * rate], dtype=np.float32) / (32768 if form == "s16" else 1)
        head16 = first if rate == 16000 else resample(first, rate, 16000)
        head16.astype(np.float32).tofile(tmp_path / "head.f32")
        from speechattn_export import load_model

        head = file_preroll(load_model(model_name, threads=1), head16)
    stream, updates = python_run(model_name, audio, rate, sizes, visemes, decoder, head)
    np.ascontiguousarray(audio).tofile(tmp_path / "audio.raw")
    (tmp_path / "sizes.txt").write_text(" ".join(map(str, sizes)))
    result = subprocess.run([str(build / "conformance"), str(MODELS / f"{model_name}.onnx"), str(tmp_path / "audio.raw"),
                             form, str(rate), "1", str(tmp_path / "sizes.txt"), decoder, visemes, "0", "1",
                             str(tmp_path / "head.f32") if head is not None else "-",
                             str(tmp_path / "weights.f32")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    ours = json.loads(result.stdout)
    assert len(ours["updates"]) == len(updates)
    for mine, theirs in zip(ours["updates"], updates):
        assert mine["frames"] == len(theirs.frames)
        assert [s[:3] for s in mine["segments"]] == [[s.start_frame, s.end_frame, s.phone] for s in theirs.segments]
        np.testing.assert_allclose([s[3] for s in mine["segments"]], [s.confidence for s in theirs.segments],
                                   rtol=0, atol=1e-9)
        assert mine["cues"] == [[c.start_frame, c.end_frame, c.shape] for c in theirs.cues]
    assert [s[:3] for s in ours["segments"]] == [[s.start_frame, s.end_frame, s.phone] for s in stream.segments]
    assert ours["cues"] == [[c.start_frame, c.end_frame, c.shape] for c in stream.cues]
    assert ours["samples"] == stream.samples and len(stream.segments) > 5
    weights = np.fromfile(tmp_path / "weights.f32", dtype=np.float32)
    expected = np.concatenate([u.weights for u in updates])
    np.testing.assert_allclose(weights.reshape(expected.shape), expected, rtol=0, atol=1e-6)


def test_the_example_prints_the_kits_phones(build):
    """speechattn-c FILE...: `path: PH PH PH`, the phones (silence left out) PhoneStream gives with the same model in
    80 ms pushes."""
    from speechattn_export import load_model

    result = subprocess.run([str(build / "speechattn-c"), "--threads", "1", *map(str, SAMPLES)], capture_output=True,
                            text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    model = load_model("default-int8", threads=1)
    for line, path in zip(result.stdout.splitlines(), SAMPLES):
        audio, rate = sf.read(path, dtype="int16")
        stream = model.open()
        for at in range(0, len(audio), 1280):
            stream.push(audio[at:at + 1280], sample_rate=rate)
        stream.finish()
        phones = [s["phone"] for s in stream.segment_dicts() if s["phone"] != "sil"]
        assert line == f"{path}: {' '.join(phones)}"
    json_lines = subprocess.run([str(build / "speechattn-c"), "--json", "--visemes", "rhubarb", str(SHORT)],
                                capture_output=True, text=True, timeout=60, cwd=ROOT).stdout.splitlines()
    objects = [json.loads(line) for line in json_lines]
    assert {"phone", "confidence"} <= objects[0].keys() and "value" in objects[-1]


def nan_wav(folder: Path) -> Path:
    """A 16 kHz float WAV of 0.5 s whose samples 100-199 are NaN."""
    samples = np.zeros(8000, dtype=np.float32)
    samples[100:200] = np.nan
    sf.write(folder / "nan.wav", samples, 16000, subtype="FLOAT")
    return folder / "nan.wav"


def test_the_example_says_what_is_wrong_in_one_line(build, tmp_path):
    (tmp_path / "bad.wav").write_bytes(b"RIFF0000WAVEjunk")
    for args, words in [(["--model", str(tmp_path / "none.onnx"), str(SHORT)], "no such model file"),
                        ([str(tmp_path / "bad.wav")], "no data chunk"),
                        ([str(tmp_path / "missing.wav")], "cannot read"),
                        ([str(nan_wav(tmp_path))], "100 samples are NaN or infinite; the file is corrupt")]:
        result = subprocess.run([str(build / "speechattn-c"), *args], capture_output=True, text=True, timeout=60,
                                cwd=ROOT)
        assert result.returncode == 1 and words in result.stderr and len(result.stderr.splitlines()) == 1, result
    for args, line in [(["--visemes", "nope"], "--visemes must be one of rhubarb, oculus, vrm, not 'nope'"),
                       (["--decoder", "foo"], "--decoder must be one of bigram, hysteresis, not 'foo'"),
                       (["--chunk-frames", "abc"], "--chunk-frames takes a whole number from 1 to 4096, not 'abc'"),
                       (["--min-frames", "4x"], "--min-frames takes a whole number from 1 to 100, not '4x'"),
                       (["--chunk-frames", "3"], "chunk_frames 3 is not one the model serves"),
                       (["--raw", "16000:x:1"], "--raw takes RATE:s16|f32:CHANNELS, not '16000:x:1'")]:
        result = subprocess.run([str(build / "speechattn-c"), *args, str(SHORT)], capture_output=True, text=True,
                                timeout=60, cwd=ROOT)  # usage errors: status 2, before any file is read
        assert result.returncode == 2 and line in result.stderr and len(result.stderr.splitlines()) == 1, result
        assert not result.stdout
    away = subprocess.run([str(build / "speechattn-c"), str(SHORT)], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path)  # the default model is a path from the clone's root: said so
    assert away.returncode == 1 and "run from there or give --model M.onnx" in away.stderr, away
    asked = subprocess.run([str(build / "speechattn-c"), "--help"], capture_output=True, text=True, timeout=60)
    assert asked.returncode == 0 and asked.stdout.startswith("usage: speechattn-c") and not asked.stderr
    for args, line in [(["--bogus"], "no such option: '--bogus'"),
                       ([str(SHORT), "--model"], "options go before the files: '--model'")]:
        wrong = subprocess.run([str(build / "speechattn-c"), *args], capture_output=True, text=True, timeout=60)
        assert wrong.returncode == 2 and wrong.stderr == f"speechattn-c: {line} (--help for usage)\n" and \
            not wrong.stdout, wrong


def test_every_refused_input_has_its_status_and_message_and_threads_share_a_model(build, tmp_path):
    audio, _ = sf.read(SHORT, dtype="int16")
    audio.tofile(tmp_path / "audio.raw")
    result = subprocess.run([str(build / "test_api"), str(MODELS / "default-int8.onnx"), str(MODELS / "g2p.onnx"),
                             str(tmp_path / "audio.raw"), "4"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("\nok ") >= 50 and "FAIL" not in result.stdout


@pytest.mark.skipif(not shutil.which("valgrind"), reason="valgrind is not installed (apt-get install valgrind)")
def test_valgrind_finds_no_error_and_no_leak(build, tmp_path):
    """The example on a short recording and the C tests (one thread, for time) under memcheck: no invalid access, no
    leak of the library's own (onnxruntime's one-time allocations are "still reachable", not reported as leaks)."""
    audio, _ = sf.read(SHORT, dtype="int16")
    audio[:16000].tofile(tmp_path / "audio.raw")
    valgrind = ["valgrind", "--error-exitcode=1", "--leak-check=full", "--errors-for-leak-kinds=definite,indirect",
                f"--suppressions={ROOT / 'export' / 'c' / 'tests' / 'valgrind.supp'}", "-q"]
    for command in ([str(build / "speechattn-c"), "--threads", "1", "--visemes", "vrm", "--json", "--raw",
                     "16000:s16:1", str(tmp_path / "audio.raw")],
                    [str(build / "test_api"), str(MODELS / "default-int8.onnx"), str(MODELS / "g2p.onnx"),
                     str(tmp_path / "audio.raw"), "2"]):
        result = subprocess.run(valgrind + command, capture_output=True, text=True, timeout=600, cwd=ROOT)
        assert result.returncode == 0, result.stderr[-3000:]


def test_an_address_sanitizer_build_finds_nothing(build, tmp_path):
    """-DSPEECHATTN_SANITIZE=ON (AddressSanitizer, UBSan, LeakSanitizer): the C tests and the vectors run clean, and it
    builds without warnings at -O2 too (the optimiser's use-after-free analysis sees more than -O0)."""
    out = tmp_path / "asan"
    for command in (["cmake", "-S", str(ROOT / "export" / "c"), "-B", str(out), "-DSPEECHATTN_SANITIZE=ON",
                     f"-DSPEECHATTN_PYTHON={sys.executable}"], ["cmake", "--build", str(out), "-j2"]):
        made = subprocess.run(command, capture_output=True, text=True, timeout=600)
        assert made.returncode == 0 and "warning" not in made.stdout + made.stderr, made.stdout + made.stderr
    audio, _ = sf.read(SHORT, dtype="int16")
    audio.tofile(tmp_path / "audio.raw")
    environment = {**os.environ, "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0"}
    for command in ([str(out / "test_api"), str(MODELS / "default-int8.onnx"), str(MODELS / "g2p.onnx"),
                     str(tmp_path / "audio.raw"), "4"],
                    [str(out / "check_vectors"), str(ROOT / "tests" / "segmenter-vectors.json"),
                     str(MODELS / "phone-bigram.json")]):
        result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=environment)
        assert result.returncode == 0 and "ERROR: " not in result.stderr, result.stdout[-2000:] + result.stderr[-3000:]
