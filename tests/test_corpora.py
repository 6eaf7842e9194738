"""Corpus readers on tiny fixtures in each format, built here: TIMIT, TextGrid (MFA), HTK .lab."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from conftest import write_timit_utterance
from speechattn.audio import speechlike_signal
from speechattn.data.corpora import CorpusError, read_htk_lab, read_textgrid_corpus, read_timit, supervision_frame_labels
from speechattn.phones import IGNORE, PHONE_TO_INDEX, PhoneMappingError


def labels_of(supervisions, index=0, frames=None):
    supervision = list(supervisions)[index]
    return supervision_frame_labels(supervision, frames or int(round(supervision.duration * 100)))


@pytest.fixture()
def timit(tmp_path):
    write_timit_utterance(tmp_path / "TIMIT" / "TRAIN" / "DR1" / "FCJF0")
    return tmp_path / "TIMIT"


def test_timit_reader(timit):
    recordings, supervisions = read_timit(timit)
    assert len(recordings) == 1 and recordings[0].sampling_rate == 16000 and recordings[0].num_samples == 8000
    supervision = list(supervisions)[0]
    assert supervision.speaker == "FCJF0" and supervision.text == "She had."
    labels = labels_of(supervisions)
    p = PHONE_TO_INDEX
    # sample-exact: sh covers samples [1200, 2000) = [75, 125) ms -> frames whose centre is inside: 7..11
    assert labels[:7].tolist() == [p["sil"]] * 7
    assert labels[7:12].tolist() == [p["SH"]] * 5
    assert labels[12:17].tolist() == [p["IH"]] * 5  # ix folds to IH
    assert labels[17:22].tolist() == [p["HH"]] * 5  # hv folds to HH
    assert labels[22:25].tolist() == [p["sil"]] * 3  # closure dcl is silence
    assert labels[25:35].tolist() == [p["AH"]] * 10  # ax-h folds to AH
    assert len(labels) == 50


def test_timit_unknown_phone_names_file_and_line(timit):
    phn = next(timit.rglob("*.PHN"))
    phn.write_text("0 1200 h#\n1200 8000 zz\n")
    with pytest.raises(PhoneMappingError, match=r"SA1.PHN:2: 'zz' is not a TIMIT-61 phone"):
        read_timit(timit)


def write_textgrid(path, duration, phones, words=None):
    from praatio import textgrid
    from praatio.utilities.constants import Interval

    grid = textgrid.Textgrid()
    grid.addTier(textgrid.IntervalTier("phones", [Interval(*x) for x in phones], 0, duration))
    if words:
        grid.addTier(textgrid.IntervalTier("words", [Interval(*x) for x in words], 0, duration))
    grid.save(str(path), format="long_textgrid", includeBlankSpaces=True)


def test_textgrid_reader_mfa_layout(tmp_path):
    corpus = tmp_path / "corpus" / "spk1"
    aligned = tmp_path / "aligned" / "spk1"
    corpus.mkdir(parents=True)
    aligned.mkdir(parents=True)
    sf.write(corpus / "utt1.flac", speechlike_signal(0.4, seed=2), 16000)
    # MFA leaves silence as empty intervals; spn marks a word it could not align
    write_textgrid(aligned / "utt1.TextGrid", 0.4,
                   [(0.05, 0.12, "HH"), (0.12, 0.2, "AH0"), (0.2, 0.25, "L"), (0.25, 0.3, "OW1"), (0.32, 0.38, "spn")],
                   words=[(0.05, 0.3, "hello"), (0.32, 0.38, "xyzzy")])
    recordings, supervisions = read_textgrid_corpus(tmp_path / "corpus", tmp_path / "aligned")
    supervision = list(supervisions)[0]
    assert supervision.speaker == "spk1" and supervision.text == "hello xyzzy"
    labels = labels_of(supervisions)
    p = PHONE_TO_INDEX
    assert labels[:5].tolist() == [p["sil"]] * 5
    assert labels[5:12].tolist() == [p["HH"]] * 7
    assert labels[12:20].tolist() == [p["AH"]] * 8
    assert labels[25:30].tolist() == [p["OW"]] * 5
    assert labels[30:32].tolist() == [p["sil"]] * 2
    assert labels[32:38].tolist() == [IGNORE] * 6


def test_textgrid_reader_errors(tmp_path):
    sf.write(tmp_path / "a.wav", speechlike_signal(0.2, seed=3), 16000)
    write_textgrid(tmp_path / "a.TextGrid", 0.2, [(0.0, 0.1, "AA1"), (0.1, 0.2, "QX")])
    with pytest.raises(PhoneMappingError, match=r"a.TextGrid tier 'phones'.*'QX' is not an ARPAbet phone"):
        read_textgrid_corpus(tmp_path)
    with pytest.raises(CorpusError, match="no tier named 'segments'"):
        read_textgrid_corpus(tmp_path, tier="segments")
    (tmp_path / "a.TextGrid").unlink()
    with pytest.raises(CorpusError, match="found no aligned utterances"):
        read_textgrid_corpus(tmp_path)


def test_htk_lab_reader(tmp_path):
    speaker = tmp_path / "anna"
    speaker.mkdir()
    sf.write(speaker / "u1.wav", speechlike_signal(0.3, seed=4), 16000)
    (speaker / "u1.lab").write_text("0 500000 pau\n500000 1500000 k\n1500000 2500000 ae\n2500000 3000000 pau\n")
    recordings, supervisions = read_htk_lab(tmp_path, symbols="festival")
    assert list(supervisions)[0].speaker == "anna"
    labels = labels_of(supervisions)
    p = PHONE_TO_INDEX
    assert labels.tolist() == [p["sil"]] * 5 + [p["K"]] * 10 + [p["AE"]] * 10 + [p["sil"]] * 5
    (speaker / "u1.lab").write_text("0 0.5 sil\n")
    with pytest.raises(CorpusError, match=r"u1.lab:1: times must be integers"):
        read_htk_lab(tmp_path)


def test_unreadable_audio_is_named(tmp_path):
    (tmp_path / "a.wav").write_bytes(b"RIFF....WAVEjunk")
    (tmp_path / "a.lab").write_text("0 100000 sil\n")
    with pytest.raises(CorpusError, match=r"a.wav: cannot read audio"):
        read_htk_lab(tmp_path)


def test_manifests_round_trip_through_lhotse_files(tmp_path, timit):
    from lhotse import load_manifest

    recordings, supervisions = read_timit(timit)
    supervisions.to_file(tmp_path / "sups.jsonl.gz")
    loaded = load_manifest(tmp_path / "sups.jsonl.gz")
    assert np.array_equal(labels_of(loaded), labels_of(supervisions))
    audio = recordings[0].load_audio()
    assert audio.shape == (1, 8000)


def test_a_textgrid_corpus_reads_every_audio_suffix_transcribe_reads(tmp_path):
    """Opus clips (which `transcribe` and `align` read) with their TextGrids become utterances (they were skipped:
    a corpus of opus files became 0 utterances)."""
    for number in range(2):
        sf.write(tmp_path / f"u{number}.opus", speechlike_signal(0.4, seed=number), 48000, format="OGG",
                 subtype="OPUS")
        write_textgrid(tmp_path / f"u{number}.TextGrid", 0.4, [(0.0, 0.2, "AA1"), (0.2, 0.4, "B")])
    recordings, supervisions = read_textgrid_corpus(tmp_path)
    assert len(list(supervisions)) == 2
