"""Bad input gets one line and the right exit status, never a traceback: 2 for a usage error (an option, a setting),
1 for an input that fails (a file, a checkpoint, a manifest, a model whose metadata lies).  Each test asserts the
status, the one line, and that nothing was written or changed."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from speechattn.audio import speechlike_signal
from speechattn.cli import main

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "speechattn" / "runtime" / "samples" / "please-enter-your-password.wav"


def refused(capsys, *args, status: int) -> str:
    code = main([str(a) for a in args])
    err = capsys.readouterr().err
    lines = [line for line in err.strip().splitlines() if line]
    assert code == status and len(lines) == 1 and "Traceback" not in err, (code, err)
    return lines[0]


def needs_portaudio() -> None:
    try:
        import sounddevice  # noqa: F401
    except OSError:
        pytest.skip("PortAudio is not installed")


def files(directory: Path) -> dict:
    return {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file()}


# exit statuses ---------------------------------------------------------------------------------------------------
def test_a_chunk_size_the_model_does_not_serve_is_a_usage_error_in_mic_and_export(capsys, tmp_path, tiny_onnx):
    assert main(["init", "-o", str(tmp_path / "m.pt"), "--set", "num_layers=1", "--set", "model_dim=16"]) == 0
    capsys.readouterr()
    before = files(tmp_path)
    line = refused(capsys, "export", tmp_path / "m.pt", "-o", tmp_path / "m.onnx", "--chunk-frames", 5, status=2)
    assert "--chunk-frames 5 is not one" in line and "m.pt was trained for: [4, 8, 16, 32]" in line
    assert files(tmp_path) == before  # refused before the export began: nothing written
    line = refused(capsys, "stream-check", tiny_onnx, "--chunk-frames", 3, status=2)  # 1 is "not exact"
    assert "chunk size 3 is not one this model allows" in line
    needs_portaudio()
    line = refused(capsys, "mic", "--model", tiny_onnx, "--chunk-frames", 3, "--seconds", 0.1, status=2)
    assert "chunk_frames 3 is not one the model serves (it was trained for [1, 2, 4, 8])" in line


def checkpoint_variants(tmp_path: Path) -> dict[str, Path]:
    import torch

    assert main(["init", "-o", str(tmp_path / "m.pt"), "--set", "num_layers=1", "--set", "model_dim=16"]) == 0
    good = torch.load(tmp_path / "m.pt", weights_only=True)
    weights = dict(good["model"])
    first = next(iter(weights))
    square = next(k for k, v in weights.items() if v.ndim == 2)
    variants = {
        "no config": {k: v for k, v in good.items() if k != "config"},
        "model not a mapping": {**good, "model": [1, 2, 3]},
        "zero classes": {**good, "config": {**good["config"], "num_classes": 0}},
        "unknown key": {**good, "config": {**good["config"], "num_wheels": 4}},
        "weights mismatch": {**good, "model": {**{k: v for k, v in weights.items() if k != first},
                                               "extra.weight": torch.zeros(2)}},
        "weights of another shape": {**good, "model": {**weights, square: torch.zeros(3, 3)}},
    }
    paths = {}
    for name, payload in variants.items():
        paths[name] = tmp_path / f"{name.replace(' ', '-')}.pt"
        torch.save(payload, paths[name])
    return paths


@pytest.mark.parametrize("case, message", [
    ("no config", "a damaged speechattn checkpoint: its 'config' is missing"),
    ("model not a mapping", "a damaged speechattn checkpoint: its 'model' is not a mapping"),
    ("zero classes", "num_classes must be from 1 to 40 (the phone inventory), not 0 (in the checkpoint's config)"),
    ("unknown key", "unknown model setting(s): num_wheels (in the checkpoint's config)"),
    ("weights mismatch", "its weights do not fit its own config (1 missing, e.g. frontend.mel_banks; 1 unexpected, "
                         "e.g. extra.weight)"),
    ("weights of another shape", "1 of another shape, e.g."),
])
def test_a_damaged_checkpoint_is_one_line_naming_it_with_status_1(capsys, tmp_path, case, message):
    """An unknown key used to exit 2 (a usage error), a missing config to be an internal KeyError, a weights
    mismatch to print torch's whole key list over two lines."""
    checkpoint = checkpoint_variants(tmp_path)[case]
    capsys.readouterr()
    before = files(tmp_path)
    line = refused(capsys, "export", checkpoint, "-o", tmp_path / "out.onnx", status=1)
    assert line.startswith(f"speechattn export: error: {checkpoint}") and message in line, line
    assert files(tmp_path) == before


# internal errors a user can cause -------------------------------------------------------------------------------
@pytest.mark.parametrize("address, message", [
    ("localhost:３９５４０", "give HOST or HOST:PORT (port 1-65535"),  # Unicode digits: int() reads them
    ("", "give HOST or HOST:PORT"),  # used to be ignored: no avatar moved, nothing said
    ("a" * 64 + ".example", "is not a host name (labels of 1 to 63 characters between dots)"),
    ("a..b", "'a..b' is not a host name"),
])
def test_a_malformed_vmc_address_is_a_usage_error_before_any_device(capsys, address, message):
    line = refused(capsys, "mic", "--vmc", address, "--device", "no-such-microphone", "--seconds", 1, status=2)
    assert f"--vmc {address}" in line and message in line


def test_no_input_device_at_all_points_to_the_readmes_null_sink_recipe(capsys):
    """With no microphone the message said only that there was none; it now names the README's recipe (a PulseAudio
    null sink), in the one line of `mic` and under `mic --list-devices`.  Runs where PortAudio sees no input device
    (a server, a container; the test's PulseAudio is started by tests/test_mic.py alone)."""
    needs_portaudio()
    from speechattn.runtime.mic import input_devices

    if input_devices():
        pytest.skip("this machine has an input device")
    hint = 'a PulseAudio null sink is one: what is played into it is what mic hears (speechattn\'s README, "No microphone")'
    line = refused(capsys, "mic", "--seconds", 1, status=1)
    assert line == (f"speechattn mic: error: no input device found (PortAudio sees none; `speechattn mic --list-devices` "
                    f"shows what there is); no microphone here (a server, a container)? {hint}")
    assert main(["mic", "--list-devices"]) == 0 and capsys.readouterr().out.strip().endswith(hint)
    readme = (ROOT / "README.md").read_text()
    assert "No microphone (a server, a container, a test)? A PulseAudio null sink" in readme


def test_mic_with_a_file_that_is_no_onnx_model_is_one_line(capsys, tmp_path):
    needs_portaudio()
    (tmp_path / "m.onnx").write_bytes(b"\x08\x07not a model")
    line = refused(capsys, "mic", "--model", tmp_path / "m.onnx", "--device", "no-such-microphone", status=1)
    assert "m.onnx: cannot load as a speechattn ONNX model" in line
    (tmp_path / "m.pt").write_bytes(b"weights")
    assert "--model" in refused(capsys, "mic", "--model", tmp_path / "m.pt", status=1)


def manifest(tmp_path: Path, duration: float = 0.5, symbol: str = "sil", recording_duration: float = 0.5) -> Path:
    from lhotse import AudioSource, Recording, RecordingSet, SupervisionSegment, SupervisionSet
    from lhotse.supervision import AlignmentItem

    sf.write(tmp_path / "a.wav", speechlike_signal(0.5, seed=2), 16000)
    recording = Recording(id="a", sources=[AudioSource(type="file", channels=[0], source=str(tmp_path / "a.wav"))],
                          sampling_rate=16000, num_samples=8000, duration=recording_duration)
    RecordingSet.from_recordings([recording]).to_file(tmp_path / "x_recordings_dev.jsonl.gz")
    supervision = SupervisionSegment(id="a", recording_id="a", start=0.0, duration=duration,
                                     alignment={"phone": [AlignmentItem(symbol=symbol, start=0.0, duration=0.5)]})
    SupervisionSet.from_segments([supervision]).to_file(tmp_path / "x_supervisions_dev.jsonl.gz")
    return tmp_path / "x_supervisions_dev.jsonl.gz"


@pytest.mark.parametrize("command", ["eval", "data-stats", "show-item"])
@pytest.mark.parametrize("problem, message", [
    (dict(duration=-0.5), "x_supervisions_dev.jsonl.gz:1: a: duration -0.5 (must be above 0)"),
    (dict(recording_duration=-0.5), "x_recordings_dev.jsonl.gz:1: a: duration -0.5 (must be above 0)"),
    (dict(symbol="QQ"), "x_supervisions_dev.jsonl.gz:1: a: phone 'QQ' is not one of the 40 phones"),
])
def test_a_manifest_with_impossible_values_is_one_line_naming_file_line_and_item(capsys, tmp_path, tiny_onnx, command,
                                                                                problem, message):
    """lhotse met them deep inside: AssertionError new_duration=-0.5, ValueError tuple.index(x)."""
    supervisions = manifest(tmp_path, **problem)
    if command == "data-stats" and "recording_duration" in problem:
        pytest.skip("data-stats reads the supervisions only")
    before = files(tmp_path)
    args = {"eval": ["eval", tiny_onnx, supervisions, "--chunk-frames", 4], "data-stats": ["data-stats", supervisions],
            "show-item": ["show-item", supervisions, "a"]}[command]
    assert message in refused(capsys, *args, status=1)
    assert files(tmp_path) == before


def test_a_librarys_warning_is_one_line_without_its_source_line(capsys, monkeypatch, tiny_onnx):
    from speechattn.runtime import transcribe

    real = transcribe.transcribe_file

    def warns(*args, **kwargs):
        np.log(np.zeros(1))  # RuntimeWarning: divide by zero encountered in log
        return real(*args, **kwargs)

    monkeypatch.setattr(transcribe, "transcribe_file", warns)
    assert main(["transcribe", str(SAMPLE), "--model", str(tiny_onnx), "-q"]) == 0
    err = capsys.readouterr().err
    assert err.strip() == "speechattn transcribe: warning: divide by zero encountered in log", err


# ONNX metadata that lies ------------------------------------------------------------------------------------------
def with_metadata(source: Path, target: Path, **changes) -> Path:
    import onnx

    proto = onnx.load(str(source))
    values = {p.key: p.value for p in proto.metadata_props} | changes
    del proto.metadata_props[:]
    for key, value in values.items():
        proto.metadata_props.add(key=key, value=value)
    onnx.save(proto, str(target))
    return target


LIES = [
    (dict(hop_samples="1"), "hop_samples = 1 and frame_shift_ms = 10 disagree (1 samples every 10 ms is 100 Hz)"),
    (dict(hop_samples="80", frame_shift_ms="5"), "hop_samples = 80: a chunk of 1 frames (80 samples) does not run "
                                                 "through the graph"),
    (dict(hop_samples="320", frame_shift_ms="20"), "hop_samples = 320: 320 samples gave output of shape [1, 2, 40], "
                                                   "not [1, 1, 40]"),
    (dict(phones="sil,AA,AE"), "3 phones in the metadata, 40 classes in the graph's 'log_probs'"),
    (dict(sample_rate="8000"), "sample_rate = 8000, hop_samples = 160 and frame_shift_ms = 10 disagree"),
    (dict(frame_shift_ms="20"), "frame_shift_ms = 20 disagree (160 samples every 20 ms is 8000 Hz)"),
    (dict(decoder_lookahead_frames="ten"), "decoder_lookahead_frames = 'ten' is not an integer"),
    (dict(phones="s il," + ",".join(f"p{i}" for i in range(39))), "must be distinct names without spaces or newlines"),
    (dict(phones="sil\nx," + ",".join(f"p{i}" for i in range(39))), "must be distinct names without spaces or newlines"),
]


@pytest.mark.parametrize("changes, message", LIES)
def test_an_onnx_file_whose_metadata_disagrees_with_its_graph_is_refused_naming_it(capsys, tmp_path, tiny_onnx,
                                                                                   changes, message):
    lying = with_metadata(tiny_onnx, tmp_path / "lying.onnx", **changes)
    line = refused(capsys, "transcribe", SAMPLE, "--model", lying, "-o", tmp_path / "out.txt", status=1)
    assert f"{lying}: its metadata does not describe this graph (" in line and message in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lying.onnx"]


def test_a_model_for_another_rate_is_refused_by_the_16_khz_runtime(capsys, tmp_path, tiny_onnx):
    """Consistent metadata for 8 kHz (160 samples every 20 ms): the kit would feed it 8 kHz (as Node does), but the
    runtime streams 16 kHz in 10 ms frames, so it says so instead of ignoring the model's rate."""
    lying = with_metadata(tiny_onnx, tmp_path / "eight.onnx", sample_rate="8000", frame_shift_ms="20")
    line = refused(capsys, "transcribe", SAMPLE, "--model", lying, status=1)
    assert "eight.onnx: takes 8000 Hz audio in hops of 160 samples; speechattn streams 16000 Hz" in line


# file names ------------------------------------------------------------------------------------------------------
def test_a_newline_in_a_file_name_keeps_the_text_output_one_line_per_file(capsys, tmp_path, tiny_onnx):
    odd = tmp_path / "my talk\nfinal.wav"
    shutil.copy(SAMPLE, odd)
    assert main(["transcribe", str(odd), str(SAMPLE), "--model", str(tiny_onnx), "-q"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[0].startswith(str(tmp_path / "my talk\\nfinal.wav") + ": ")
    line = refused(capsys, "transcribe", tmp_path / "gone\nnow.wav", "--model", tiny_onnx, "-q", status=1)
    assert line == f"speechattn transcribe: error: {tmp_path}/gone\\nnow.wav: no such file"


@pytest.mark.parametrize("output_format", ["text", "ctm", "json", "rhubarb-xml"])
def test_a_wav_whose_name_is_not_utf8_is_read_and_written(capsys, tmp_path, tiny_onnx, output_format):
    raw = os.fsencode(tmp_path) + b"/caf\xe9.wav"  # Latin-1 é: not UTF-8
    shutil.copy(SAMPLE, raw)
    name = os.fsdecode(raw)
    out = tmp_path / "out"
    assert main(["transcribe", name, "--model", str(tiny_onnx), "-q", "--format", output_format,
                 "--output-dir", str(out)]) == 0
    assert capsys.readouterr().err == ""
    (written,) = out.iterdir()
    text = written.read_text(encoding="utf-8")
    if output_format == "json":
        assert json.loads(text)["file"] == name and len(json.loads(text)["segments"]) > 3
    else:
        assert "caf\\xe9" in text
    assert main(["transcribe", name, "--model", str(tiny_onnx), "-q", "--format", output_format]) == 0
    assert capsys.readouterr().out.strip()  # standard output too


# names the file system refuses, and files that are not audio ------------------------------------------------------
def test_a_file_name_too_long_for_the_file_system_is_one_line_as_input_and_as_output(capsys, tmp_path, tiny_onnx):
    """Python 3.11's pathlib raises ENAMETOOLONG from is_dir() and exists(): that was an 'internal error'."""
    long_name = tmp_path / ("x" * 300 + ".wav")
    model = ("--model", tiny_onnx)
    line = refused(capsys, "transcribe", long_name, *model, "--quiet", status=1)
    assert line.endswith(f"{long_name}: cannot read (File name too long)"), line
    line = refused(capsys, "align", long_name, "please enter your password", *model, status=1)
    assert line.endswith(f"{long_name}: cannot read (File name too long)"), line
    for command in (("transcribe", SAMPLE, "-o"), ("transcribe", SAMPLE, "--plot"),
                    ("align", SAMPLE, "please enter your password", "-o")):
        target = long_name.with_suffix(".png" if command[-1] == "--plot" else ".txt")
        line = refused(capsys, *command, target, *model, status=2)
        assert line.endswith(f"{target}: cannot write it (File name too long)"), line
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("content, said", [
    (b"", "an empty file (0 bytes), not audio"),
    (b"0123456789", "only 10 bytes, too short for any audio format"),
    ("word word word\nnot audio at all, but notes: café\n".encode(), "a text file, not audio"),
])
def test_a_file_that_is_not_audio_says_what_it_is_not_which_decoder_to_install(capsys, tmp_path, tiny_onnx, content,
                                                                             said):
    path = tmp_path / "take.wav"
    path.write_bytes(content)
    for command in (("transcribe", path, "--quiet"), ("align", path, "please enter your password")):
        line = refused(capsys, *command, "--model", tiny_onnx, status=1)
        assert line.endswith(f"{path}: {said}") and "pip install" not in line, line


def test_an_output_directory_that_is_a_file_is_refused_before_any_work(capsys, tmp_path):
    """prepare and pseudo-label said so only after aligning or labelling everything, as an internal error."""
    blocker = tmp_path / "a-file"
    blocker.write_text("mine")
    corpus = tmp_path / "corpus"
    (corpus / "audio").mkdir(parents=True)
    shutil.copy(SAMPLE, corpus / "audio" / "a.wav")
    (corpus / "utterances.tsv").write_text("a\tspeaker\n")
    line = refused(capsys, "pseudo-label", corpus, "--out", blocker, status=2)
    assert line.endswith(f"--out {blocker}: a file, not a directory")
    line = refused(capsys, "prepare", ROOT / "recipes" / "tiny.yaml", "--out", blocker / "sub", status=2)
    assert line.endswith(f"--out {blocker / 'sub'}: cannot create it (Not a directory)")
    assert blocker.read_text() == "mine" and sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "corpus"]


# permissions -----------------------------------------------------------------------------------------------------
RUN_EACH = """import contextlib, io, json, sys
from speechattn.cli import main
results = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        results.append((main(argv), err.getvalue()))
print(json.dumps(results))
"""


def as_a_user_who_cannot_enter(folder: Path, commands: list[list]) -> list[tuple[int, str]]:
    """Runs each command line in one Python process as a user who cannot enter `folder`: as root (who enters every
    folder), the user nobody with `folder` kept 0700; as anyone else, this user with `folder` made 0000."""
    import subprocess
    import sys

    root = os.geteuid() == 0
    if root and shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed: no way to run as another user")
    folder.chmod(0o700 if root else 0)
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if root else []
    try:
        done = subprocess.run([*nobody, sys.executable, "-c", RUN_EACH,
                               json.dumps([[str(a) for a in c] for c in commands])],
                              capture_output=True, text=True, timeout=120, cwd="/", env={**os.environ, "HOME": "/tmp"})
    finally:
        folder.chmod(0o755)
    assert done.returncode == 0, done.stderr
    return [(code, err) for code, err in json.loads(done.stdout)]


def test_a_model_or_input_in_a_folder_the_user_cannot_enter_is_one_line_naming_the_folder():
    """serve, transcribe and align --model in such a folder said 'internal error: PermissionError'; a corpus with
    such a folder inside read as if the folder were empty (or 'a directory with no audio files'), and prepare read
    such a corpus as smaller than it is."""
    import tempfile

    with tempfile.TemporaryDirectory() as place:
        corpus = Path(place) / "corpus"
        locked = corpus / "locked"
        (locked / "more").mkdir(parents=True)
        Path(place).chmod(0o777)  # the other user reaches it and writes there (--output-dir), not the folder below
        corpus.chmod(0o755)
        shutil.copy(ROOT / "export" / "models" / "default-int8.onnx", locked / "m.onnx")
        for wav in (corpus / "a.wav", locked / "more" / "b.wav"):
            shutil.copy(SAMPLE, wav)
            wav.with_suffix(".txt").write_text("please enter your password\n")
            wav.with_suffix(".lab").write_text("0 5000000 sil\n5000000 10000000 P\n")  # HTK: 100 ns units
        model = locked / "m.onnx"
        results = as_a_user_who_cannot_enter(locked, [
            ["serve", "--model", model, "--port", 0],
            ["transcribe", "--model", model, SAMPLE],
            ["align", "--model", model, SAMPLE, "please enter your password"],
            ["train", locked / "recipe.yaml"],
            ["transcribe", locked / "more" / "b.wav"],
            ["transcribe", corpus],
            ["align", corpus, "--output-dir", Path(place) / "out"],
            ["prepare", ROOT / "recipes" / "htk.yaml", "--set", f"data.root={corpus}", "--out", Path(place) / "prep"],
        ])
    enter = f"permission denied: this user cannot enter the folder {locked}"
    listing = f"{locked}: permission denied: this user cannot list the folder {locked}"
    expected = [f"speechattn serve: error: {model}: {enter}",
                f"speechattn transcribe: error: {model}: {enter}",
                f"speechattn align: error: {model}: {enter}",
                f"speechattn train: error: {locked / 'recipe.yaml'}: {enter}",
                f"speechattn transcribe: error: {locked / 'more' / 'b.wav'}: cannot read ({enter})",
                f"speechattn transcribe: error: {listing}",
                f"speechattn align: error: {listing}",
                f"speechattn prepare: error: {listing}"]
    assert len(results) == len(expected)
    for (code, err), line in zip(results, expected):
        lines = [text for text in err.splitlines() if "onnxruntime" not in text]  # its telemetry warning, as nobody
        assert (code, lines) == (1, [line]), (code, err)
