"""The Godot binding (export/godot): SpeechattnLipSync, a GDNative class over libspeechattn, run headless in Debian's
Godot 3.2.3 (godot3-server): the demo's script mode prints a recording's phones and Rhubarb cues, equal to the Python
kit's for the same pushes; a bad input is refused with the library's message, not a crash; the demo scene moves its
mouth.

Builds the binding and the C library with cmake into a temporary directory (cmake, a C compiler, godot3-server; the
README's test command installs them)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from test_native_csharp import PIECE_SECONDS as STREAM_WAV_PIECE_SECONDS
from test_native_csharp import assert_printed_is_the_kits, printed

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SAMPLES = sorted((ROOT / "speechattn" / "runtime" / "samples").glob("*.wav"))
MODEL = ROOT / "export" / "models" / "default-int8.onnx"
GODOT = shutil.which("godot3-server")  # Debian's godot3 is the X11 build: "X11 Display is not available", even with --no-window
PIECE_SECONDS = STREAM_WAV_PIECE_SECONDS  # cues.gd's pieces (0.1 s): StreamWav's, so the kit's run is the C# test's


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """The demo project as the binding's build lays it out (build/godot/demo), in a temporary directory."""
    missing = [tool for tool, found in (("cmake", shutil.which("cmake")), ("cc", shutil.which("cc")),
                                        ("godot3-server", GODOT)) if not found]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed (the README's test command installs them: apt-get install "
                    "cmake gcc godot3-server)")
    out = tmp_path_factory.mktemp("build-godot")
    configure = subprocess.run(["cmake", "-S", str(ROOT / "export" / "godot"), "-B", str(out),
                                f"-DSPEECHATTN_PYTHON={sys.executable}"], capture_output=True, text=True, timeout=120)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    made = subprocess.run(["cmake", "--build", str(out), "-j2"], capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stdout + made.stderr
    assert "warning" not in made.stdout + made.stderr
    return out / "demo"


def godot(demo: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """godot3-server headless in the demo project, with a home of its own (it writes its logs and settings there)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(home / "data"), "XDG_CONFIG_HOME": str(home / "config"),
           "XDG_CACHE_HOME": str(home / "cache"), "LANG": "en_US.UTF-8", "LC_ALL": ""}  # "C": Godot warns, falls back
    return subprocess.run([GODOT, "--path", str(demo), *args], capture_output=True, text=True, timeout=60, env=env)


@pytest.mark.parametrize("path", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_the_demo_prints_the_kits_phones_and_cues(demo, tmp_path, path):
    """Every cue (start, end, shape) and every phone (start, end, phone; the confidence, printed to nine decimals,
    within 1e-9 as tests/test_native_c.py holds the library's) equal PhoneStream's with the same model and pushes:
    the 8 kHz recording goes through the resampler."""
    result = godot(demo, tmp_path, "-s", "res://cues.gd", "--", str(MODEL), str(path), str(PIECE_SECONDS))
    assert result.returncode == 0, result.stdout + result.stderr
    assert_printed_is_the_kits(result.stdout, path)


def test_bad_inputs_are_refused_with_the_librarys_message_not_a_crash(demo, tmp_path):
    """A missing model file, an unknown viseme set, samples beyond +-2, a push or finish after finish: null (false) and
    the library's status and message; NaN samples are read as silence (as the kits read them); the instance stays
    usable (restart opens a new stream) and Godot exits normally."""
    shutil.copy(HERE / "godot" / "bad_input.gd", demo)
    result = godot(demo, tmp_path, "-s", "res://bad_input.gd", "--", str(MODEL))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = {line.split(": ", 1)[0]: line.split(": ", 1)[1] for line in result.stdout.splitlines() if ": " in line}
    missing = str(MODEL) + ".missing"
    assert lines["missing model"].startswith("False SPEECHATTN_ERR_FILE ") and missing in lines["missing model"]
    assert lines["push before a model"] == "Null SPEECHATTN_ERR_INVALID_ARGUMENT"
    assert lines["unknown visemes"].startswith("False SPEECHATTN_ERR_INVALID_ARGUMENT ") and \
        "nope" in lines["unknown visemes"]
    assert lines["loaded"] == "True"
    assert lines["nan"] == "18 0.1"  # TYPE_DICTIONARY: an update; 0.1 s heard
    assert lines["beyond 2"].startswith("Null SPEECHATTN_ERR_AUDIO ")
    assert lines["wrong type"].startswith("Null SPEECHATTN_ERR_INVALID_ARGUMENT push(samples")
    assert lines["odd bytes"] == "Null SPEECHATTN_ERR_INVALID_ARGUMENT"
    assert lines["finish"] == "18"
    assert lines["push after finish"].startswith("Null SPEECHATTN_ERR_STATE ")
    assert lines["finish twice"] == "Null SPEECHATTN_ERR_STATE"
    assert lines["restart"] == "True 18"
    # the library's own words: the same call through ctypes gives the same message
    lib = _library(demo)
    assert lines["missing model"].split(" ", 2)[2] == _model_create_error(lib, missing)


def _library(demo: Path):
    import ctypes

    lib = ctypes.CDLL(str(demo / "bin" / "libspeechattn.so.0"))
    lib.speechattn_last_error.restype = ctypes.c_char_p
    return lib


def _model_create_error(lib, path: str) -> str:
    import ctypes

    model = ctypes.c_void_p()
    assert lib.speechattn_model_create(path.encode(), None, ctypes.byref(model)) != 0
    return lib.speechattn_last_error().decode()


def test_the_demo_scene_moves_its_mouth_with_the_clip(demo, tmp_path):
    """The scene, headless (Godot's dummy audio driver plays the clip in real time): no script error, and the mouth
    takes at least four shapes besides the rest shape in the clip's first two seconds."""
    shutil.copy(HERE / "godot" / "probe.gd", demo)
    result = godot(demo, tmp_path, "-s", "res://probe.gd")
    assert result.returncode == 0 and "SCRIPT ERROR" not in result.stderr, result.stdout + result.stderr
    shown = {s[0] for s in printed(result.stdout, "shape")}
    assert len(shown - {"X"}) >= 4, result.stdout
