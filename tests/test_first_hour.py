"""What a new user meets in the first hour: the README's commands, the package's metadata, the JSON schema,
standard input, `python -m speechattn`, exit statuses, --debug, config types, progress off a terminal."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest

from speechattn.cli import main

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "speechattn" / "runtime" / "samples" / "this-no-longer-appears-to-be-the-case.wav"


def test_the_readme_is_a_product_page_with_the_two_commands_first():
    text = (ROOT / "README.md").read_text()
    lines = text.splitlines()
    assert len(lines) <= 250
    assert lines[0].startswith("# speechattn")
    block = text.split("```")[1].strip().splitlines()
    assert len(block) == 2 and block[0].startswith("python3 -m venv") and "pytest" in block[1]
    assert "speechattn transcribe" in block[0] and "--index-url https://download.pytorch.org/whl/cpu" in text
    for link in re.findall(r"\]\(((?!http)[^)#]+)", text):  # every local link points at a file that exists
        assert (ROOT / link).exists(), link


def test_the_readmes_first_command_prints_what_the_readme_shows_beside_the_words_phones(capsys, monkeypatch):
    """The first thing a newcomer sees: the block under the first command is what it prints (the timing aside), and
    the dictionary's phones shown beside it are the kit lexicon's first pronunciation of each word said, under it."""
    import shlex

    from speechattn.runtime.align import load_lexicon

    blocks = (ROOT / "README.md").read_text().split("```")
    command = shlex.split(blocks[1].strip().splitlines()[0].split(" && ")[-1])
    assert command[0] == "speechattn" and Path(command[-1]).name == SAMPLE.name
    monkeypatch.chdir(ROOT)
    assert main(command[1:]) == 0
    printed = capsys.readouterr()
    shown = blocks[3].strip().splitlines()
    assert printed.out.splitlines() == shown[:1]
    timing = r"[\d.]+ s of audio in [\d.]+ s, [\d.]+ x real time"
    assert re.fullmatch(timing, shown[1].split("1 file, ")[1])
    assert [re.sub(timing, "T", line) for line in printed.err.splitlines() if "onnxruntime" not in line] == \
        [re.sub(timing, "T", shown[1])]
    introduction = " ".join(blocks[2].split())
    dictionary = re.search(r"the phones heard from the sound alone, to set beside CMUdict's phones of the words said "
                           r"\(the kit's lexicon\): `([A-Z ·]+)`", introduction).group(1)
    said = re.search(rf'`{SAMPLE.name}` \("([^"]+)"', (SAMPLE.parent / "README.md").read_text()).group(1)
    assert f'("{said}",' in introduction  # the words named where the command is introduced
    assert [word.split() for word in dictionary.split(" · ")] == \
        [list(word.pronunciations[0]) for word in load_lexicon().words(said)]


def test_the_package_says_what_it_is_and_its_licence(tmp_path):
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]  # SPDX (PEP 639)
    assert "Apache License" in (ROOT / "LICENSE").read_text()[:200]
    assert not any(c.startswith("License ::") for c in project["classifiers"])  # the expression says it alone
    assert project["authors"] and any("Typed" in c for c in project["classifiers"])
    assert (ROOT / "speechattn" / "py.typed").exists()
    assert set(project["optional-dependencies"]) == {"plot", "formats", "cluster", "serve", "train", "test", "bench",
                                                            "languages"}  # no [mic]: it is base
    assert any(d.startswith("sounddevice") for d in project["dependencies"])


def transcript_schema() -> dict:
    return json.loads((ROOT / "export" / "transcript.schema.json").read_text())


def test_json_output_follows_its_schema_and_names_the_model_without_a_path(capsys):
    import jsonschema

    assert main(["transcribe", str(SAMPLE), "--format", "json", "--model", "default-int8"]) == 0
    result = json.loads(capsys.readouterr().out)
    jsonschema.validate(result, transcript_schema())
    assert result["format_version"] == 2 and result["model"]["name"] == "default-int8.onnx"
    assert "/" not in json.dumps(result["model"])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**result, "model": "/home/me/default.onnx"}, transcript_schema())


def test_standard_input_is_read_once_and_gives_what_the_file_gives():
    command = [sys.executable, "-m", "speechattn", "transcribe", "--format", "json"]
    from_file = subprocess.run([*command, str(SAMPLE)], capture_output=True, text=True, timeout=120)
    with open(SAMPLE, "rb") as handle:
        dash = subprocess.run([*command, "-"], stdin=handle, capture_output=True, text=True, timeout=120)
    piped = subprocess.run(  # /dev/stdin is a pipe here: read once too (it used to lose the first 4096 bytes)
        f"cat {SAMPLE} | {sys.executable} -m speechattn transcribe --format json /dev/stdin",
        shell=True, capture_output=True, text=True, timeout=120)
    assert from_file.returncode == dash.returncode == piped.returncode == 0, (dash.stderr, piped.stderr)
    segments = json.loads(from_file.stdout)["segments"]
    assert json.loads(dash.stdout)["segments"] == segments == json.loads(piped.stdout)["segments"]
    assert json.loads(dash.stdout)["file"] == "-"


def test_a_fifo_nobody_writes_to_is_reported_not_waited_on(tmp_path, monkeypatch, capsys):
    import os

    from speechattn.runtime import transcribe

    monkeypatch.setattr(transcribe, "PIPE_WAIT_SECONDS", 0.5)
    os.mkfifo(tmp_path / "fifo")
    assert main(["transcribe", str(tmp_path / "fifo")]) == 1
    assert "fifo: nothing arrived in 0.5 s (a pipe no program writes to?)" in capsys.readouterr().err


def test_python_dash_m_speechattn_is_the_command():
    result = subprocess.run([sys.executable, "-m", "speechattn", "--help"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0 and "transcribe" in result.stdout and "--debug" in result.stdout


def test_a_bug_is_one_line_by_default_and_a_traceback_with_debug(monkeypatch, capsys):
    from speechattn.runtime import transcribe

    def broken(*args, **kwargs):
        raise KeyError("phones")

    monkeypatch.setattr(transcribe, "transcribe_file", broken)
    assert main(["transcribe", str(SAMPLE)]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "internal error: KeyError: 'phones'" in err and "--debug" in err
    with pytest.raises(KeyError):
        main(["--debug", "transcribe", str(SAMPLE)])
    monkeypatch.setenv("SPEECHATTN_DEBUG", "1")
    with pytest.raises(KeyError):
        main(["transcribe", str(SAMPLE)])


def test_an_internal_import_error_is_a_bug_not_an_install_hint(monkeypatch, capsys):
    from speechattn.runtime import transcribe

    def broken(*args, **kwargs):
        import speechattn.no_such_module  # noqa: F401

    monkeypatch.setattr(transcribe, "transcribe_file", broken)
    assert main(["transcribe", str(SAMPLE)]) == 1
    err = capsys.readouterr().err
    assert "internal error: ModuleNotFoundError" in err and "pip install" not in err


def test_config_types_come_from_annotations(tmp_path):
    from speechattn.errors import ConfigError
    from speechattn.training.recipes import load_recipe

    recipe = load_recipe(ROOT / "recipes" / "tiny.yaml", {"train": {"chunk_weights": [0.5, 2]}})
    assert recipe.train.chunk_weights == (0.5, 2.0)
    for bad, message in (({"train": {"chunk_weights": ["a"]}}, "must be a list of numbers"),
                         ({"model": {"chunk_frames_choices": [4.5]}}, "must be a list of integers"),
                         ({"train": {"learning_rate": float("nan")}}, "must be a finite number"),
                         ({"augment": {"gain_db": [1, 2, 3]}}, "must be a list of 2 numbers")):
        with pytest.raises(ConfigError, match=message):
            load_recipe(ROOT / "recipes" / "tiny.yaml", bad)


def test_training_off_a_terminal_logs_progress_with_the_time_left(caplog):
    from speechattn.training.train import ProgressLine

    line = ProgressLine(0, 100, enabled=True, every_seconds=0.0)
    with caplog.at_level(logging.INFO, logger="speechattn.training.train"):
        line.update(10, 1.234, 0.5)
    assert re.search(r"step 10/100  loss 1.234  frame accuracy 0.500  .* s/step  \d+ min \d\d s left", caplog.text)
    quiet = ProgressLine(0, 100, enabled=False, every_seconds=0.0)
    caplog.clear()
    quiet.update(10, 1.0, 0.5)
    assert caplog.text == ""


def test_the_web_page_is_served_from_the_runtime_files_a_wheel_carries(tmp_path, monkeypatch):
    """An installed wheel has onnxruntime-web's three runtime files in export/web/ort-web (setup.py copies them);
    the server maps the page's import path onto them."""
    import shutil

    from speechattn.runtime import web

    fake_export = tmp_path / "speechattn_export"
    shutil.copytree(ROOT / "export" / "web", fake_export / "web", ignore=shutil.ignore_patterns("node_modules", "ort-web"))
    (fake_export / "web" / "ort-web").mkdir()
    for name in web.ORT_WEB_FILES:
        (fake_export / "web" / "ort-web" / name).write_text(name)
    monkeypatch.setattr(web, "export_dir", lambda: fake_export)
    table = web.routes()
    assert table["/web/node_modules/onnxruntime-web/dist/"] == fake_export / "web" / "ort-web"
    assert list(table)[0] == "/web/node_modules/onnxruntime-web/dist/"  # matched before /web/


@pytest.mark.slow
def test_the_wheel_carries_the_page_runtime_the_recipes_and_the_schema(tmp_path):
    """`pip wheel .`: what `pip install speechattn && speechattn web` needs is inside (given npm ci in export/web)."""
    import zipfile

    if not (ROOT / "export" / "web" / "node_modules" / "onnxruntime-web" / "dist" / "ort.wasm.min.mjs").exists():
        pytest.skip("onnxruntime-web is not installed: (cd export/web && npm ci)")
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                             str(tmp_path), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    names = set(zipfile.ZipFile(next(tmp_path.glob("speechattn-*.whl"))).namelist())
    for name in ("speechattn_export/web/ort-web/ort.wasm.min.mjs", "speechattn_export/web/ort-web/NOTICE.txt",
                 "speechattn_export/web/ort-web/ort-wasm-simd-threaded.wasm", "speechattn_export/transcript.schema.json",
                 "speechattn_recipes/tiny.yaml", "speechattn_recipes/default.yaml", "speechattn/py.typed",
                 "speechattn_export/models/default-int8.onnx", "speechattn_export/models/g2p.onnx",
                 "speechattn_export/lexicon/cmudict.txt.gz"):
        assert name in names, name
    assert not any("node_modules" in n for n in names)


def test_long_file_progress_shows_the_total_and_the_time_left(capsys):
    from speechattn.runtime.transcribe import resolve_model, transcribe_file
    from speechattn_export.stream_client import StreamingModel

    model = StreamingModel(resolve_model("default-int8"))
    transcribe_file(model, SAMPLE, progress=True)
    err = capsys.readouterr().err
    assert re.search(r"of 2 s of audio \|.*\| \[.* < ", err), err[-300:]


@pytest.mark.parametrize("boundaries", ["hmm", "neural"])
def test_align_progress_goes_on_after_the_audio_until_the_words_are_placed(capsys, boundaries):
    from speechattn.runtime.align import align_file, load_lexicon, script_words
    from speechattn.runtime.transcribe import resolve_model
    from speechattn_export.stream_client import StreamingModel

    model = StreamingModel(resolve_model("default-int8"))
    words, starts = script_words("This no longer appears to be the case.", "the text", load_lexicon(None))
    aligned = align_file(model, SAMPLE, words, starts, progress=True, boundaries=boundaries)
    err = capsys.readouterr().err
    assert re.search(r"aligning \S+: \d+ of 2 s of audio \|", err), err[-300:]
    assert "placing the words in " + SAMPLE.name + ":   0 % |" in err, err[-300:]  # the second half has its bar
    if boundaries == "hmm":  # the boundary stage counts every frame of the alignment once
        import soundfile

        from speechattn.runtime.hmm import bundled, refine

        counted = []
        refine(bundled(), soundfile.read(SAMPLE, dtype="float32")[0], aligned.alignment, on_frames=counted.append)
        assert sum(counted) == aligned.alignment.frames and min(counted) > 0 and len(counted) >= 1
