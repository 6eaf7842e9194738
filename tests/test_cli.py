"""The command line: the main job works end to end; user mistakes get one clear line, never a traceback."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import soundfile as sf

from speechattn.audio import AudioError, load_audio, speechlike_signal
from speechattn.cli import main
from speechattn.model.encoder import save_checkpoint


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory, tiny_model):
    path = tmp_path_factory.mktemp("ckpt") / "tiny.pt"
    save_checkpoint(tiny_model, path)
    return path


def test_init_export_and_stream_check(tmp_path, checkpoint, capsys):
    assert main(["init", "-o", str(tmp_path / "r.pt"), "--set", "num_layers=1", "--set", "model_dim=32",
                 "--set", "ffn_dim=32"]) == 0
    assert "randomly initialised" in capsys.readouterr().out
    onnx_path = tmp_path / "tiny.onnx"
    assert main(["export", str(checkpoint), "-o", str(onnx_path)]) == 0
    assert "argmax agreement = 100.00 %" in capsys.readouterr().out
    assert main(["stream-check", str(onnx_path), "--checkpoint", str(checkpoint), "--seconds", "1.5"]) == 0
    out = capsys.readouterr().out
    assert "streaming is exact" in out
    assert out.count("torch forward()") == 3 * 4  # three push patterns x four chunk sizes


def test_stream_check_against_the_checkpoint_of_a_model_with_an_output_delay_is_exact(tmp_path, capsys):
    """torch's rows are aligned with the audio as the clients align the file's (the first R dropped): compared
    as the graph emits them, every model with an output delay (the bundled one too) was 'NOT EXACT', 45-57 %."""
    assert main(["init", "-o", str(tmp_path / "d.pt"), "--set", "num_layers=1", "--set", "model_dim=32",
                 "--set", "ffn_dim=32", "--set", "output_delay_frames=2"]) == 0
    assert main(["export", str(tmp_path / "d.pt"), "-o", str(tmp_path / "d.onnx")]) == 0
    capsys.readouterr()
    assert main(["stream-check", str(tmp_path / "d.onnx"), "--checkpoint", str(tmp_path / "d.pt"), "--seconds", "1.5",
                 "--chunk-frames", "4"]) == 0
    assert "streaming is exact: all 5 comparisons" in capsys.readouterr().out


def test_stream_check_against_a_checkpoint_of_another_architecture_is_one_line(tmp_path, checkpoint, capsys):
    assert main(["export", str(checkpoint), "-o", str(tmp_path / "tiny.onnx")]) == 0
    assert main(["init", "-o", str(tmp_path / "other.pt"), "--set", "num_layers=1", "--set", "model_dim=16",
                 "--set", "ffn_dim=16"]) == 0
    capsys.readouterr()
    assert main(["stream-check", str(tmp_path / "tiny.onnx"), "--checkpoint", str(tmp_path / "other.pt"),
                 "--seconds", "1"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "is not what" in err and "another architecture (the file's stream state" in err


def test_stream_check_reads_any_rate_and_channel_count(tmp_path, checkpoint, capsys):
    onnx_path = tmp_path / "tiny.onnx"
    main(["export", str(checkpoint), "-o", str(onnx_path)])
    stereo = np.stack([speechlike_signal(1.0, seed=1)] * 2, axis=1)  # 16 kHz stereo
    import soxr

    sf.write(tmp_path / "stereo44k.wav", soxr.resample(stereo, 16000, 44100), 44100)
    assert main(["stream-check", str(onnx_path), str(tmp_path / "stereo44k.wav"), "--chunk-frames", "4"]) == 0
    assert "1.00 s" in capsys.readouterr().out


def test_load_audio_downmixes_and_resamples(tmp_path):
    mono = speechlike_signal(1.0, seed=2)
    sf.write(tmp_path / "a.flac", np.stack([mono, mono], axis=1), 16000)
    np.testing.assert_allclose(load_audio(tmp_path / "a.flac"), mono, atol=1e-4)
    sf.write(tmp_path / "b.wav", mono[::2], 8000)
    assert len(load_audio(tmp_path / "b.wav")) == 16000


@pytest.mark.parametrize("problem, message", [
    ("missing", "no such file"),
    ("folder", "x.wav: a directory, not an audio file"),
    ("empty", "holds no audio"),
    ("corrupt", "cannot read audio"),
    ("nan", "NaN or infinite"),
])
def test_bad_audio_files_are_clear_errors(tmp_path, problem, message):
    path = tmp_path / "x.wav"
    if problem == "empty":
        sf.write(path, np.zeros(0, np.float32), 16000)
    elif problem == "corrupt":
        path.write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunkjunkjunk")
    elif problem == "nan":
        sf.write(path, np.array([0.1, np.nan, 0.2], np.float32), 16000, subtype="FLOAT")
    elif problem == "folder":
        path.mkdir()
    with pytest.raises(AudioError, match=message):
        load_audio(path)


def test_tiny_file_streams(tmp_path, tiny_onnx, capsys):
    sf.write(tmp_path / "t.wav", speechlike_signal(0.05, seed=3)[:100], 16000)  # 100 samples, under one hop
    assert main(["stream-check", str(tiny_onnx), str(tmp_path / "t.wav"), "--chunk-frames", "4"]) == 0
    assert "streaming is exact" in capsys.readouterr().out


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "speechattn.cli", *args], capture_output=True, text=True)


@pytest.mark.parametrize("args, message, status", [
    (["export", "nope.pt", "-o", "x.onnx"], "nope.pt: no such checkpoint", 1),  # ran, and an input failed it
    (["stream-check", "nope.onnx"], "nope.onnx: no such model file", 1),
    (["init", "-o", "x.pt", "--set", "num_layer=3"], "unknown model setting(s): num_layer", 2),  # usage
    (["init", "-o", "x.pt", "--set", "model_dim"], "expected KEY=VALUE", 2),
    (["init", "-o", "x.pt", "--set", "model_dim=!!python/object:os.system x"], "not plain YAML", 2),
    (["init", "-o", "x.pt", "--set", "model_dim=[1,"], "not plain YAML", 2),
    (["transcribe", "a.wav", "--threads", "5000"], "5000 is not in the range", 2),
    (["stream-check", "x.onnx", "--seconds", "1e9"], "1000000000.0 is not in the range", 2),
    (["mic", "--seconds", "nan"], "not a finite number", 2),
])
def test_user_mistakes_print_one_line_and_exit_2_or_failures_1(tmp_path, args, message, status):
    result = subprocess.run([sys.executable, "-m", "speechattn", *args], capture_output=True, text=True,
                            cwd=tmp_path, timeout=120)
    assert result.returncode == status, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_corrupt_onnx_file_is_a_clear_error(tmp_path):
    (tmp_path / "bad.onnx").write_bytes(b"\x08\x07garbage")
    result = run_cli("stream-check", str(tmp_path / "bad.onnx"))
    assert result.returncode == 1 and "cannot use" in result.stderr and "Traceback" not in result.stderr


def test_help_is_instant_and_imports_no_heavy_module():
    code = "import sys, speechattn.cli as c; c.cli.get_help(c.click.Context(c.cli)); print(sorted(m for m in " \
           "('torch', 'onnxruntime', 'numpy', 'sounddevice', 'lhotse') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "[]"


def test_web_without_onnxruntime_web_says_how_to_install_it(monkeypatch, capsys):
    from speechattn.runtime import web

    monkeypatch.setattr(web, "ORT_WEB", web.ORT_WEB / "missing")
    monkeypatch.setattr(web, "VENDORED_ORT_WEB", web.VENDORED_ORT_WEB / "missing")
    assert main(["web", "--port", "0"]) == 1
    assert "onnxruntime-web is not installed beside the page" in capsys.readouterr().err


def test_web_stopped_with_sigterm_ends_cleanly_with_exit_0():
    """A service manager (systemd, docker stop) stops the page's server with SIGTERM: it ends as Ctrl-C ends it."""
    import signal

    process = subprocess.Popen([sys.executable, "-m", "speechattn", "web", "--port", "0"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        line = ""
        while "serving the page" not in line:  # printed on stdout once the socket listens
            line = process.stdout.readline()
            assert line, f"web stopped before serving (exit {process.poll()})"
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
        assert "Traceback" not in process.stderr.read()
    finally:
        process.kill()


def test_average_writes_the_mean_of_the_weights_with_the_settings_given(tmp_path, capsys):
    import torch

    from speechattn.model.encoder import load

    small = ["--set", "num_layers=1", "--set", "model_dim=32", "--set", "ffn_dim=32", "--set", "num_heads=2"]
    paths = [tmp_path / f"{seed}.pt" for seed in (1, 2, 3)]
    for seed, path in zip((1, 2, 3), paths):
        assert main(["init", "-o", str(path), "--seed", str(seed), *small]) == 0
    out = tmp_path / "mean.pt"
    assert main(["average", *map(str, paths), "-o", str(out), "--set", "model.frontend.level_target_dbfs=-18"]) == 0
    assert "the mean of 3 checkpoints' weights" in capsys.readouterr().out
    mean, parts = load(out), [load(p).state_dict() for p in paths]
    assert mean.config.frontend.level_target_dbfs == -18.0
    assert mean.config.num_layers == 1 and load(paths[0]).config.frontend.level_target_dbfs is None
    for name, tensor in mean.state_dict().items():
        expected = sum(p[name].double() for p in parts) / 3 if tensor.is_floating_point() else parts[0][name]
        assert torch.allclose(tensor.double(), expected, atol=1e-7), name
    assert not torch.equal(parts[0]["classifier.weight"], parts[1]["classifier.weight"])  # the seeds differ


def test_average_serves_the_mean_at_other_chunk_sizes_with_the_biases_fitted(tmp_path, capsys):
    """--set model.chunk_frames_choices: the mean's relative-bias tables grow to the new chunk (with_chunk_frames),
    the other weights are the mean's."""
    import torch

    from speechattn.model.encoder import load, with_chunk_frames

    small = ["--set", "num_layers=1", "--set", "model_dim=32", "--set", "ffn_dim=32", "--set", "num_heads=2"]
    paths = [tmp_path / f"{seed}.pt" for seed in (1, 2)]
    for seed, path in zip((1, 2), paths):
        assert main(["init", "-o", str(path), "--seed", str(seed), *small]) == 0
    mean, wide = tmp_path / "mean.pt", tmp_path / "wide.pt"
    assert main(["average", *map(str, paths), "-o", str(mean)]) == 0
    assert main(["average", *map(str, paths), "-o", str(wide), "--set", "model.chunk_frames_choices=[64]",
                 "--set", "model.default_chunk_frames=64"]) == 0
    served = load(wide)
    assert served.config.chunk_frames_choices == (64,) and served.config.default_chunk_frames == 64
    expected = with_chunk_frames(load(mean), (64,), 64).state_dict()
    for name, tensor in served.state_dict().items():
        assert torch.allclose(tensor, expected[name], atol=1e-7), name


def test_average_refuses_other_shapes_one_checkpoint_and_its_own_input(tmp_path, capsys):
    a, b = tmp_path / "a.pt", tmp_path / "b.pt"
    main(["init", "-o", str(a), "--set", "num_layers=1", "--set", "model_dim=32", "--set", "ffn_dim=32"])
    main(["init", "-o", str(b), "--set", "num_layers=2", "--set", "model_dim=32", "--set", "ffn_dim=32"])
    capsys.readouterr()
    for argv, message, status in (
            (["average", str(a), str(b), "-o", str(tmp_path / "m.pt")], "another architecture", 1),
            (["average", str(a), "-o", str(tmp_path / "m.pt")], "two checkpoints or more", 2),
            (["average", str(a), str(a), "-o", str(a)], "would be overwritten", 2),
            (["average", str(a), str(a), "-o", str(tmp_path / "m.pt"), "--set", "model.model_dim=64"],
             "changes the shapes of the weights", 2)):
        assert main(argv) == status, argv
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "m.pt").exists()


def test_init_takes_the_recipes_model_keys_as_train_and_average_do(tmp_path, capsys):
    """`--set model.num_layers=2` was 'unknown model setting(s): model'; the bare key still works."""
    assert main(["init", "-o", str(tmp_path / "a.pt"), "--set", "model.num_layers=1", "--set", "model_dim=32",
                 "--set", "model.ffn_dim=32", "--set", "model.frontend.kind=mfcc"]) == 0
    assert "1 layers x 32 dims, mfcc features" in capsys.readouterr().out
    assert main(["init", "-o", str(tmp_path / "b.pt"), "--set", "train.max_steps=3"]) == 2
    assert "a checkpoint holds only the model's settings; give model.KEY=VALUE" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.pt"]
