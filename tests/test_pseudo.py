"""`speechattn pseudo-label`: untranscribed speech labelled by a tagger; train.chunk_weights."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
import soundfile as sf
import torch

from speechattn.audio import SAMPLE_RATE, num_frames, speechlike_signal
from speechattn.cli import main
from speechattn.data.corpora import supervision_frame_labels
from speechattn.data.dataset import cuts_from_manifests
from speechattn_export.decoder import DecoderConfig, PhoneBigram, decode
from speechattn.errors import ConfigError
from speechattn.model.encoder import save_checkpoint
from speechattn.phones import IGNORE, PHONES
from speechattn_export.segments import segment_labels
from speechattn.training.pseudo import frame_pseudo_labels
from speechattn.training.recipes import load_recipe


def test_unsure_frames_are_left_unlabelled_and_the_rest_follow_the_decoded_path():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(120, len(PHONES))) * 3
    log_probs = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    table = PhoneBigram.load().for_phones(list(PHONES))
    path = segment_labels(decode(log_probs, table, DecoderConfig(), 0), 120)
    labels, confidence = frame_pseudo_labels(log_probs, table, 0, 0.5)
    np.testing.assert_allclose(confidence, np.exp(log_probs[np.arange(120), path]))
    assert np.array_equal(labels == IGNORE, confidence < 0.5)
    assert np.array_equal(labels[labels != IGNORE], path[labels != IGNORE])
    assert 0 < (labels == IGNORE).sum() < 120  # the cut does something on these posteriors, not all or nothing


def _clip_directory(root, clips: dict[str, tuple[str, float]]):
    (root / "audio").mkdir(parents=True)
    rows = ["utterance\tspeaker\tsubset\tseconds"]
    for index, (utterance, (speaker, seconds)) in enumerate(clips.items()):
        sf.write(root / "audio" / f"{utterance}.flac", speechlike_signal(seconds, seed=index), SAMPLE_RATE)
        rows.append(f"{utterance}\t{speaker}\ttest\t{seconds}")
    (root / "utterances.tsv").write_text("\n".join(rows) + "\n")


def test_pseudo_label_writes_training_manifests_whose_labels_are_the_teachers(tmp_path, tiny_model, capsys):
    _clip_directory(tmp_path / "clips", {"a-1": ("a", 1.5), "b-1": ("b", 2.0), "b-2": ("b", 0.05)})
    (tmp_path / "clips" / "audio" / "c-1.flac").write_bytes(b"not audio at all")
    with (tmp_path / "clips" / "utterances.tsv").open("a") as table:
        table.write("c-1\tc\ttest\t1.0\n")
    save_checkpoint(tiny_model, tmp_path / "teacher.pt")
    code = main(["pseudo-label", str(tmp_path / "clips"), "--out", str(tmp_path / "out"), "--name", "pl",
                 "--teacher", str(tmp_path / "teacher.pt"), "--min-confidence", "0.05"])
    captured = capsys.readouterr()
    # the 50 ms clip and the corrupt one are left out, named, exit status 1; the rest are labelled
    assert code == 1 and "pl: 2 utterances, 2 speakers" in captured.out
    reasons = captured.err.strip().splitlines()
    assert len(reasons) == 2 and "b-2.flac: shorter than 0.1 s" in reasons[0] and "c-1.flac" in reasons[1]
    assert reasons[1].endswith("c-1.flac: only 16 bytes, too short for any audio format")  # not lhotse's 'failed. Details:', cut short
    with gzip.open(tmp_path / "out" / "pl_supervisions_dev.jsonl.gz", "rt") as handle:
        assert handle.read().strip() == ""  # every utterance trains; dev and test exist, empty
    cuts = list(cuts_from_manifests(tmp_path / "out" / "pl_recordings_train.jsonl.gz",
                                    tmp_path / "out" / "pl_supervisions_train.jsonl.gz"))
    table = PhoneBigram.load().for_phones(list(PHONES))
    for cut in cuts:
        supervision = cut.supervisions[0]
        assert supervision.custom["fixed_split"] == "train" and "pseudo" in supervision.custom["labels"]
        audio = torch.from_numpy(cut.load_audio()[0])[None]
        frames = num_frames(audio.shape[-1])
        with torch.no_grad():
            log_probs = tiny_model(tiny_model.frontend(audio), torch.tensor([frames]), None)[0].double().numpy()
        expected, _ = frame_pseudo_labels(log_probs, table, 0, 0.05)
        assert np.array_equal(supervision_frame_labels(supervision, frames), expected)


def test_pseudo_label_refuses_a_directory_without_a_clip_list_in_one_line(tmp_path, capsys):
    (tmp_path / "audio").mkdir()
    assert main(["pseudo-label", str(tmp_path), "--out", str(tmp_path / "out")]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no utterances.tsv" in err


def test_chunk_weights_must_match_the_chunk_sizes(tmp_path):
    recipe = tmp_path / "r.yaml"
    recipe.write_text(json.dumps({"data": {"corpus": "synth"}, "train": {"chunk_weights": [1, 2]}}))
    with pytest.raises(ConfigError, match="chunk_weights has 2 entries"):
        load_recipe(recipe)
    recipe.write_text(json.dumps({"data": {"corpus": "synth"}, "train": {"chunk_weights": [0, 0, 0, 0]}}))
    with pytest.raises(ConfigError, match="positive sum"):
        load_recipe(recipe)
    recipe.write_text(json.dumps({"data": {"corpus": "synth"}, "train": {"chunk_weights": [0, 1, 0, 0]}}))
    assert load_recipe(recipe).train.chunk_weights == (0, 1, 0, 0)
