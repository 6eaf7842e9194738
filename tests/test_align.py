"""Forced alignment with pocketsphinx, and the speechocean762 recipe built on it."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from speechattn.data.align import ModelAligner, PhoneAligner
from speechattn.data.labels import frame_labels
from speechattn.phones import PHONE_TO_INDEX, PHONES
from speechattn.data.synth import engine

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "speechocean762-train"
needs_speechocean = pytest.mark.skipif(not SHARED.exists(), reason=f"{SHARED} is not here (CI has it beside the repo)")
needs_flite = pytest.mark.skipif(not shutil.which("flite"), reason="flite is not installed (.ci/run installs it)")


@needs_flite
@pytest.mark.parametrize("aligner", [PhoneAligner, ModelAligner], ids=["pocketsphinx", "speechattn"])
def test_alignment_of_synthetic_speech_matches_the_known_timing(aligner):
    """flite knows its exact phone times; each label aligner (data.aligner), given the phones, must find them
    (measured: pocketsphinx 89 %) and put every phone in order."""
    utterance = engine("flite").synthesize("Seven big dogs ran over the hill.", "flite:slt")
    frames = len(utterance.audio) // 160
    truth = frame_labels(utterance.intervals, frames)
    phones = [PHONES[p] for _, _, p in utterance.intervals if PHONES[p] != "sil"]
    aligned = aligner().align(utterance.audio, [phones])
    assert aligned is not None
    assert [PHONES[p] for _, _, p in aligned if PHONES[p] != "sil"] == phones
    assert np.mean(frame_labels(aligned, frames) == truth) > 0.75
    words = aligner().align_words(utterance.audio, "seven big dogs ran over the hill".split())
    assert words is not None and [PHONES[p] for _, _, p in words if PHONES[p] != "sil"][:5] == ["S", "EH", "V",
                                                                                                 "AH", "N"]


def test_audio_that_does_not_fit_the_text_is_reported_not_forced():
    noise = np.random.default_rng(0).normal(0, 0.3, 1600).astype(np.float32)  # 0.1 s cannot hold 30 phones
    assert PhoneAligner().align(noise, [["S", "EH", "V", "AH", "N"]] * 6) is None


@pytest.fixture()
def speechocean(tmp_path):
    """Four utterances of the shared speechocean762 copy, with their Kaldi-style files."""
    chosen = ["000010011", "000010035", "000010053"]
    root = tmp_path / "so762"
    (root / "audio").mkdir(parents=True)
    for name in ("text", "utt2spk", "text-phone"):
        lines = [line for line in (SHARED / name).read_text().splitlines() if line.split()[0].split(".")[0] in chosen]
        (root / name).write_text("\n".join(lines) + "\n")
    shutil.copy(SHARED / "lexicon.txt", root / "lexicon.txt")
    for utterance in chosen:
        shutil.copy(SHARED / "audio" / f"{utterance}.opus", root / "audio")
    return root


@needs_speechocean
def test_speechocean762_aligns_with_canonical_phones_and_caches(speechocean, tmp_path):
    from speechattn.data.corpora import read_speechocean762, supervision_frame_labels

    cache = tmp_path / "alignments.jsonl"
    recordings, supervisions = read_speechocean762(speechocean, cache, workers=1, progress=False)
    assert len(supervisions) == 3 and cache.read_text().count("\n") == 3
    first = [s for s in supervisions if s.id == "000010011"][0]
    assert first.text == "WE CALL IT BEAR" and first.speaker == "0001"
    labels = supervision_frame_labels(first, int(first.duration * 100))
    spoken = [PHONES[p] for p in labels[np.r_[True, labels[1:] != labels[:-1]]] if PHONES[p] != "sil"]
    assert spoken == ["W", "IY", "K", "AO", "L", "IH", "T", "B", "EH", "R"]  # text-phone's canonical phones
    assert labels[0] == PHONE_TO_INDEX["sil"]
    # a rerun aligns nothing (every alignment made is appended to the cache) and gives the same labels
    before = cache.read_bytes()
    _, again = read_speechocean762(speechocean, cache, workers=1, progress=False)
    assert cache.read_bytes() == before
    assert [s.alignment["phone"] for s in again] == [s.alignment["phone"] for s in supervisions]


def test_our_aligner_refuses_audio_that_cannot_hold_the_text():
    noise = np.random.default_rng(0).normal(0, 0.3, 1600).astype(np.float32)
    assert ModelAligner().align(noise, [["S", "EH", "V", "AH", "N"]] * 6) is None


@needs_speechocean
def test_speechocean762_labelled_by_our_aligner_keeps_its_own_cache(speechocean, tmp_path):
    from speechattn.data.corpora import read_speechocean762, supervision_frame_labels
    from speechattn.data.prepare import DataConfig, alignment_cache

    cache = alignment_cache(DataConfig(corpus="speechocean762", aligner="speechattn"), tmp_path)
    assert cache.name == "alignments-speechattn.jsonl"
    _, supervisions = read_speechocean762(speechocean, cache, workers=1, progress=False, aligner="speechattn")
    assert len(supervisions) == 3 and cache.read_text().count("\n") == 3
    first = [s for s in supervisions if s.id == "000010011"][0]
    assert first.custom["labels"] == "speechattn forced alignment"
    labels = supervision_frame_labels(first, int(first.duration * 100))
    spoken = [PHONES[p] for p in labels[np.r_[True, labels[1:] != labels[:-1]]] if p >= 0 and PHONES[p] != "sil"]
    assert spoken == ["W", "IY", "K", "AO", "L", "IH", "T", "B", "EH", "R"]


def test_an_unknown_aligner_is_refused_naming_the_key(tmp_path):
    from speechattn.data.prepare import DataConfig, check_data
    from speechattn.errors import ConfigError

    with pytest.raises(ConfigError, match="data.aligner must be one of pocketsphinx, speechattn, not 'mfa'"):
        check_data(DataConfig(corpus="synth", aligner="mfa"), "r.yaml")


ASTERISK = Path("/usr/share/asterisk/sounds/en_US_f_Allison")


@pytest.mark.skipif(not ASTERISK.exists(), reason="asterisk-core-sounds-en-wav is not installed (.ci/run installs it)")
def test_asterisk_prompts_align_and_out_of_vocabulary_prompts_are_left_out(tmp_path, caplog):
    from speechattn.data.corpora import read_asterisk_prompts

    transcripts = tmp_path / "prompts.txt"
    transcripts.write_text("; a comment\nvm-goodbye: Goodbye!\nauth-thankyou: Thank you.\n"
                           "beep: [this is a simple beep tone]\nagent-pass: Zorblax qwxyz.\n")
    with caplog.at_level("INFO"):
        recordings, supervisions = read_asterisk_prompts(ASTERISK, transcripts, tmp_path / "a.jsonl", workers=1,
                                                         progress=False)
    printed = caplog.text
    assert "1 are tones" in printed and "1 hold words outside the dictionary (qwxyz, zorblax)" in printed
    assert {s.id for s in supervisions} == {"vm-goodbye", "auth-thankyou"}
    assert recordings["vm-goodbye"].sampling_rate == 8000  # read as 16 kHz by the data path
    thanks = [s for s in supervisions if s.id == "auth-thankyou"][0]
    assert [i.symbol for i in thanks.alignment["phone"] if i.symbol != "sil"] == ["TH", "AE", "NG", "K", "Y", "UW"]


def test_prompt_text_becomes_spoken_words():
    from speechattn.data.textnorm import spoken_words

    assert spoken_words("Press * then #, or dial 162.") == ["press", "star", "then", "pound", "or", "dial", "one",
                                                             "hundred", "sixty", "two"]
    assert spoken_words("Waldo's 'premier' provider") == ["waldo's", "premier", "provider"]
