"""The C# binding (export/csharp/Speechattn.cs), P/Invoke into libspeechattn, compiled with Debian's Mono (mcs) and run
under mono: the example streams a recording and prints its phones and Rhubarb cues, equal to the Python kit's for the
same pushes; a bad input throws SpeechattnException with the library's own message and status, never a crash; the C#
snippets of docs/embedding.md compile (and the console one runs).

Builds the C library with test_native_c.py's fixture (cmake, a C compiler); needs mono-mcs and mono-runtime (the
README's test command installs them)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from test_native_c import build  # noqa: F401  (the C library, built once in this module)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CSHARP = ROOT / "export" / "csharp"
SAMPLES = sorted((ROOT / "speechattn" / "runtime" / "samples").glob("*.wav"))
MODEL = ROOT / "export" / "models" / "default-int8.onnx"
PIECE_SECONDS = 0.1  # StreamWav's pieces


def mcs(out: Path, *sources: Path, target: str = "exe") -> Path:
    result = subprocess.run(["mcs", "-warnaserror", f"-target:{target}", f"-out:{out}", *map(str, sources)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return out


def mono(library: Path, exe: Path, *args: str) -> subprocess.CompletedProcess:
    """The program under mono, DllImport("speechattn") finding the build's libspeechattn.so on LD_LIBRARY_PATH."""
    env = {**os.environ, "LD_LIBRARY_PATH": str(library)}
    return subprocess.run(["mono", "--debug", str(exe), *args], capture_output=True, text=True, timeout=60, env=env)


@pytest.fixture(scope="module")
def library(request) -> Path:
    """The directory of the built libspeechattn.so (built only where Mono is there to use it)."""
    missing = [tool for tool in ("mcs", "mono") if not shutil.which(tool)]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed (the README's test command installs them: apt-get install "
                    "mono-mcs mono-runtime)")
    return request.getfixturevalue("build")


@pytest.fixture(scope="module")
def stream_wav(library, tmp_path_factory) -> Path:
    return mcs(tmp_path_factory.mktemp("csharp") / "StreamWav.exe", CSHARP / "Speechattn.cs",
               CSHARP / "examples" / "StreamWav.cs")


def kit_run(path: Path):
    """The Python kit's PhoneStream, pushed what StreamWav and the Godot demo's cues.gd push: the WAV's int16 samples
    at its own rate in pieces of PIECE_SECONDS."""
    from speechattn_export import DecodingOptions, load_model

    audio, rate = sf.read(path, dtype="int16")
    stream = load_model(str(MODEL)).open(DecodingOptions(visemes="rhubarb"))
    piece = int(PIECE_SECONDS * rate)
    for at in range(0, len(audio), piece):
        stream.push(audio[at:at + piece], sample_rate=rate)
    stream.finish()
    return stream


def printed(stdout: str, kind: str) -> list[list[str]]:
    return [line.split()[1:] for line in stdout.splitlines() if line.startswith(kind + " ")]


def assert_printed_is_the_kits(stdout: str, path: Path) -> None:
    """The printed "cue START END SHAPE" and "phone START END PHONE CONFIDENCE" lines (seconds) equal the kit's run
    of `path`: frames and names exactly, confidences within 1e-9."""
    stream = kit_run(path)
    cues = [[round(float(start) * 100), round(float(end) * 100), shape] for start, end, shape in printed(stdout, "cue")]
    assert cues == [[c.start_frame, c.end_frame, c.shape] for c in stream.cues] and len(cues) > 5
    phones = printed(stdout, "phone")
    assert [[round(float(start) * 100), round(float(end) * 100), phone] for start, end, phone, _ in phones] == \
        [[s.start_frame, s.end_frame, stream.model.phones[s.phone]] for s in stream.segments]
    np.testing.assert_allclose([float(p[3]) for p in phones], [s.confidence for s in stream.segments], rtol=0,
                               atol=1e-9)


@pytest.mark.parametrize("path", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_the_example_prints_the_kits_phones_and_cues(library, stream_wav, path):
    """Every cue (start, end, shape) and every phone (start, end, phone; the confidence, printed to nine decimals,
    within 1e-9 as tests/test_native_c.py holds the library's) equal PhoneStream's with the same model and pushes:
    the 8 kHz recording goes through the resampler."""
    result = mono(library, stream_wav, str(MODEL), str(path), "rhubarb")
    assert result.returncode == 0, result.stdout + result.stderr
    assert_printed_is_the_kits(result.stdout, path)


def library_error(library: Path, path: str) -> str:
    """What the C library itself says when speechattn_model_create is given `path` (through ctypes)."""
    import ctypes

    lib = ctypes.CDLL(str(library / "libspeechattn.so"))
    lib.speechattn_last_error.restype = ctypes.c_char_p
    model = ctypes.c_void_p()
    assert lib.speechattn_model_create(path.encode(), None, ctypes.byref(model)) != 0
    return lib.speechattn_last_error().decode()


def test_bad_inputs_throw_the_librarys_message_not_a_crash(library, tmp_path):
    """tests/csharp/BadInput.cs: a missing model file, unknown options, samples beyond +-2, no channels, another rate,
    a push or finish after finish, a prime after a push: SpeechattnException with the library's status and message
    (a missing file's in the very words the C library gives); an offset past the array or a null array: .NET's
    argument exceptions, before any native call; a disposed stream: ObjectDisposedException; NaN samples are read as
    silence (as the kits read them); a stream outlives its model's Dispose (the SafeHandle reference); and the
    process exits normally."""
    exe = mcs(tmp_path / "BadInput.exe", CSHARP / "Speechattn.cs", HERE / "csharp" / "BadInput.cs")
    result = mono(library, exe, str(MODEL))
    assert result.returncode == 0 and result.stdout.endswith("done\n"), result.stdout + result.stderr
    lines = dict(line.split(": ", 1) for line in result.stdout.splitlines() if ": " in line)
    missing = str(MODEL) + ".missing"
    assert lines["missing model"] == f"SpeechattnException File SPEECHATTN_ERR_FILE {library_error(library, missing)}"
    assert missing in lines["missing model"]
    assert lines["unknown visemes"].startswith("SpeechattnException InvalidArgument SPEECHATTN_ERR_INVALID_ARGUMENT ")
    assert "nope" in lines["unknown visemes"] and "nope" in lines["unknown decoder"]
    from speechattn_export import DecodingOptions, load_model

    kit = load_model(str(MODEL)).open(DecodingOptions(visemes="rhubarb"))
    kit.prime(np.zeros(1600, np.float32))  # as BadInput primes its stream
    with pytest.warns(UserWarning, match="1600 NaN/Inf samples were read as silence"):
        frames = len(kit.push(np.full(1600, np.nan, np.float32)).frames)
    assert lines["nan"] == f"returned {frames} frames, {kit.stream.nonfinite_samples} nonfinite" and frames > 0
    assert lines["beyond 2"].startswith("SpeechattnException Audio SPEECHATTN_ERR_AUDIO ")
    assert lines["no channels"].startswith("SpeechattnException Audio SPEECHATTN_ERR_AUDIO ")
    assert lines["another rate"].startswith("SpeechattnException Audio SPEECHATTN_ERR_AUDIO ")
    assert lines["past the array"].startswith("ArgumentOutOfRangeException ")
    assert lines["null samples"].startswith("ArgumentNullException ")
    assert lines["prime"] == "returned primed"
    assert lines["prime after push"].startswith("SpeechattnException State SPEECHATTN_ERR_STATE ")
    assert re.fullmatch(r"returned \d+ frames", lines["finish"])
    assert lines["push after finish"].startswith("SpeechattnException State SPEECHATTN_ERR_STATE ")
    assert lines["finish twice"].startswith("SpeechattnException State SPEECHATTN_ERR_STATE ")
    assert lines["push after dispose"].startswith("ObjectDisposedException ")
    assert re.fullmatch(r"returned \d+ frames, shapes sil,A,I,U,E,O", lines["a stream after all that"])
    assert re.fullmatch(r"returned \d+ frames", lines["stream after its model's dispose"])


def csharp_blocks() -> list[str]:
    return re.findall(r"^```csharp\n(.*?)^```", (ROOT / "docs" / "embedding.md").read_text(), re.S | re.M)


def test_the_docs_csharp_snippets_compile_and_the_console_one_runs(library, tmp_path):
    """docs/embedding.md's C#: the console example compiles with the binding and runs (a second of 8 kHz silence: one
    silence segment and the rest shape, as the kit gives them); the Unity MonoBehaviour compiles against the binding
    and tests/csharp/UnityEngineStandIn.cs (the few UnityEngine signatures it uses; not Unity, nothing there runs)."""
    console, unity = csharp_blocks()
    (tmp_path / "Console.cs").write_text(console)
    (tmp_path / "Unity.cs").write_text(unity)
    exe = mcs(tmp_path / "Console.exe", CSHARP / "Speechattn.cs", tmp_path / "Console.cs")
    result = mono(library, exe, str(MODEL))
    assert result.returncode == 0, result.stdout + result.stderr
    from speechattn_export import DecodingOptions, load_model

    stream = load_model(str(MODEL)).open(DecodingOptions(visemes="rhubarb"))
    updates = [stream.push(np.zeros(8000, np.int16), sample_rate=8000), stream.finish()]
    expected = [[item.start_frame, stream.model.phones[item.phone] if hasattr(item, "phone") else item.shape]
                for update in updates for item in [*update.segments, *update.cues]]
    assert [[round(float(start) * 100), name] for start, name in map(str.split, result.stdout.splitlines())] == \
        expected and len(expected) >= 2
    mcs(tmp_path / "Unity.dll", CSHARP / "Speechattn.cs", HERE / "csharp" / "UnityEngineStandIn.cs",
        tmp_path / "Unity.cs", target="library")


@pytest.mark.parametrize("content", [None, b"", b"not a wav file at all"])
def test_the_example_says_a_file_it_cannot_read_in_one_line(library, stream_wav, tmp_path, content):
    """A missing, empty or non-WAV file: one line naming it and exit 1 (it was a stack trace)."""
    path = tmp_path / "input.wav"
    if content is not None:
        path.write_bytes(content)
    result = mono(library, stream_wav, str(MODEL), str(path))
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("StreamWav: ") and "input.wav" in result.stderr
