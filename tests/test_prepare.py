"""`speechattn prepare`: recipes validated with the key and file named; speaker-disjoint splits."""

from __future__ import annotations

import os

import pytest
from lhotse import load_manifest

from conftest import write_timit_utterance
from speechattn.cli import main
from speechattn.errors import ConfigError
from speechattn.data.prepare import split_speakers
from speechattn.training.recipes import load_recipe


@pytest.fixture()
def timit(tmp_path):
    root = tmp_path / "TIMIT"
    for number in range(10):
        write_timit_utterance(root / "TRAIN" / f"DR{number % 3 + 1}" / f"MSPK{number}", "SX1", seed=number)
        write_timit_utterance(root / "TRAIN" / f"DR{number % 3 + 1}" / f"MSPK{number}", "SX2", seed=number + 50)
    for number in range(3):
        write_timit_utterance(root / "TEST" / "DR1" / f"FTST{number}", "SI1", seed=100 + number)
    return root


def test_a_corpus_is_one_reader_and_one_registry_entry(tmp_path, timit, monkeypatch):
    """CONTRIBUTING.md's promise: an entry in CORPORA is all that the recipe checks and `prepare` need."""
    from speechattn.data import prepare as preparation
    from speechattn.data.corpora import read_timit

    monkeypatch.setitem(preparation.CORPORA, "mine",
                        preparation.Corpus(lambda data, synth, output, progress: read_timit(data.root)))
    recipe = tmp_path / "mine.yaml"
    recipe.write_text(f"data: {{corpus: mine, root: {timit}, dev_speakers: 0.2}}\n")
    assert main(["prepare", str(recipe), "--out", str(tmp_path / "out")]) == 0
    assert len(load_manifest(tmp_path / "out" / "mine_supervisions_test.jsonl.gz")) == 3  # TIMIT's TEST part
    with pytest.raises(ConfigError, match="data.root is required: the mine corpus directory"):
        load_recipe(recipe, {"data": {"root": None}})


def test_prepare_timit_writes_speaker_disjoint_splits(tmp_path, timit, capsys):
    out = tmp_path / "manifests"
    assert main(["prepare", "recipes/timit.yaml", "--set", f"data.root={timit}", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    speakers = {}
    for split in ("train", "dev", "test"):
        supervisions = load_manifest(out / f"timit_supervisions_{split}.jsonl.gz")
        recordings = load_manifest(out / f"timit_recordings_{split}.jsonl.gz")
        assert {s.recording_id for s in supervisions} == {r.id for r in recordings}
        speakers[split] = {s.speaker for s in supervisions}
    assert speakers["test"] == {"FTST0", "FTST1", "FTST2"}  # TIMIT's own TEST part
    assert len(speakers["dev"]) == 1 and len(speakers["train"]) == 9  # 10 % of the TRAIN speakers
    assert not speakers["dev"] & speakers["train"]
    assert "train" in printed and "utterances" in printed


def test_speaker_split_is_deterministic_by_seed():
    speakers = [f"s{i}" for i in range(40)]
    first = split_speakers(speakers, 0.1, 0.1, seed=3)
    assert first == split_speakers(list(reversed(speakers)), 0.1, 0.1, seed=3)
    assert first != split_speakers(speakers, 0.1, 0.1, seed=4)
    counts = {split: list(first.values()).count(split) for split in ("train", "dev", "test")}
    assert counts == {"train": 32, "dev": 4, "test": 4}


@pytest.mark.parametrize("text, message", [
    ("data: [1, 2]", "section data must be a mapping"),
    ("trainer: {}\n", "unknown section(s): trainer"),
    ("data: {corpus: synth}\nsynth: {hours: 0}\n", "synth.hours must be above 0"),
    ("data: {corpus: synth, only_split: holdout}\n", "data.only_split must be train, dev or test"),
    ("data: {corpus: synth}\naugment: {noise_probability: 1.5}\n", "augment.noise_probability is a probability"),
    ("data: {corpus: synth}\naugment: {snr_db: [30, 0]}\n", "augment.snr_db must be [low, high]"),
    ("data:\n  corpus: timit\n  root: {root}\n  dev_speaker: 0.1\n", "unknown setting(s): data.dev_speaker"),
    ("data:\n  corpus: timit\n  root: {root}\n  seed: first\n", "data.seed must be an integer"),
    ("data:\n  corpus: wsj\n  root: {root}\n", "data.corpus must be one of synth, synth-languages, speechocean762, ljspeech, asterisk, timit, textgrid, htk"),
    ("data: {corpus: synth}\nsynth: {rate_wpm: [250, 110]}\n", "synth.rate_wpm must be [low, high]"),
    ("data: {corpus: synth}\nsynth: {engines: [1]}\n", "synth.engines must be a list of strings"),
    ("data: {corpus: synth}\nsynth: {engines: [espeak, mbrola]}\n", "unknown synthesizer(s) ['mbrola']"),
    ("data: {corpus: synth}\nsynth: {engines: [espeak], engine_shares: [0.5, 0.5]}\n", "one positive share per"),
    ("data:\n  corpus: timit\n", "data.root is required"),
    ("data:\n  corpus: timit\n  root: {root}/nowhere\n", "data.root: no such directory"),
    ("data:\n  corpus: timit\n  root: {root}\n  dev_speakers: 0.6\n  test_speakers: 0.5\n", "leave no speaker"),
    ("data: {corpus: timit\n", "not valid YAML"),
])
def test_recipe_errors_name_the_key_and_file(tmp_path, text, message):
    path = tmp_path / "r.yaml"
    path.write_text(text.replace("{root}", str(tmp_path)))
    with pytest.raises(ConfigError) as error:
        load_recipe(path)
    assert message in str(error.value) and str(path) in str(error.value)


def test_shipped_recipes_are_valid_once_pointed_at_a_corpus(tmp_path):
    from pathlib import Path

    assert load_recipe("recipes/synth-en.yaml").synth.hours == 10.0
    for name in ("timit", "textgrid", "htk"):
        recipe = load_recipe(f"recipes/{name}.yaml", {"data": {"root": str(tmp_path)}})
        assert recipe.data.corpus == name
    shipped = {p.stem for p in Path("recipes").glob("*.yaml")}
    assert {"synth-en", "timit", "textgrid", "tiny", "default"} <= shipped
    for name in shipped - {"timit", "textgrid", "htk"}:
        load_recipe(f"recipes/{name}.yaml", {"data": {"root": str(tmp_path)}}
                    if name in ("speechocean762", "ljspeech", "real-dev", "librispeech-other", "speech-commands",
                                "an4") else {})  # corpora that may be absent


@pytest.mark.slow
def test_the_timit_recipe_trains(tmp_path, timit, capsys):
    out = tmp_path / "run"
    small = ["--set", "model.num_layers=1", "--set", "model.model_dim=32", "--set", "model.ffn_dim=64",
             "--set", "train.max_steps=3", "--set", "train.batch_size=4", "--set", "train.loader_workers=0",
             "--set", "train.normalization_items=5", "--set", "train.eval_every=3"]
    assert main(["train", "recipes/timit.yaml", "--set", f"data.root={timit}", "--set",
                 f"data.output={tmp_path / 'manifests'}", "--out", str(out), *small]) == 0
    assert "3 steps" in capsys.readouterr().out and (out / "best.pt").exists() and (out / "eval.json").exists()


def test_data_stats_counts_frames_per_phone_and_draws_them(tmp_path, timit, capsys):
    out = tmp_path / "manifests"
    main(["prepare", "recipes/timit.yaml", "--set", f"data.root={timit}", "--out", str(out)])
    capsys.readouterr()
    plot = tmp_path / "phones.png"
    assert main(["data-stats", str(out / "timit_supervisions_test.jsonl.gz"), "--plot", str(plot)]) == 0
    printed = capsys.readouterr().out
    # 3 test utterances x 50 frames: per utterance sil 15 + 3 + 7 (h#, dcl, h#), SH 5, IH 5, HH 5, AH 10
    assert "3 utterances, 3 speakers" in printed
    assert "labelled frames: 150 (+ 0 ignored)" in printed
    assert any(line.split()[:2] == ["sil", "75"] for line in printed.splitlines())
    assert any(line.split()[:2] == ["AH", "30"] for line in printed.splitlines())
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_data_stats_refuses_a_recordings_manifest(tmp_path, timit):
    out = tmp_path / "manifests"
    main(["prepare", "recipes/timit.yaml", "--set", f"data.root={timit}", "--out", str(out)])
    assert main(["data-stats", str(out / "timit_recordings_test.jsonl.gz")]) == 1


def test_show_item_prints_plots_and_writes_the_labelled_audio(tmp_path, timit, capsys):
    import soundfile as sf

    out = tmp_path / "manifests"
    main(["prepare", "recipes/timit.yaml", "--set", f"data.root={timit}", "--out", str(out)])
    capsys.readouterr()
    manifest = out / "timit_supervisions_test.jsonl.gz"
    plot, wav = tmp_path / "item.png", tmp_path / "item.wav"
    assert main(["show-item", str(manifest), "test_ftst0_si1", "--plot", str(plot), "--wav", str(wav)]) == 0
    printed = capsys.readouterr().out
    assert "sil SH IH HH sil AH sil" in printed  # the .PHN phones, folded, in order
    assert plot.read_bytes()[:4] == b"\x89PNG" and sf.info(wav).frames == 8000
    assert main(["show-item", str(manifest), "nope"]) == 1


def test_data_stats_writes_its_plot_when_its_reader_stops_early(tmp_path, timit):
    """`data-stats M --plot X | head` ended quietly at the first line the closed pipe refused (not an error) before
    the plot was drawn.  Here the reader is gone before anything is printed (`true`), and printing is unbuffered,
    so the first line printed meets the closed pipe."""
    import subprocess
    import sys

    out = tmp_path / "manifests"
    assert main(["prepare", "recipes/timit.yaml", "--set", f"data.root={timit}", "--out", str(out)]) == 0
    plot = tmp_path / "phones.png"
    command = f"{sys.executable} -m speechattn data-stats {out / 'timit_supervisions_test.jsonl.gz'} --plot {plot} | true"
    result = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert result.returncode == 0 and result.stderr == "", result
    assert plot.read_bytes()[:4] == b"\x89PNG"


def test_a_corpus_path_from_the_home_directory_is_read_as_a_shell_reads_it(tmp_path, monkeypatch):
    """`--set "data.root=~/corpus"` (quoted: the shell leaves the ~) was 'no such directory: ~/corpus'."""
    from speechattn.data.prepare import DataConfig

    monkeypatch.setenv("HOME", str(tmp_path))
    data = DataConfig(corpus="htk", root="~/corpus", output="~/manifests", transcripts="/abs/t.tsv")
    assert (data.root, data.output, data.transcripts) == (str(tmp_path / "corpus"), str(tmp_path / "manifests"),
                                                          "/abs/t.tsv")
