"""The transcribed corpora from the data hunt (docs/data-hunt.md): LibriSpeech with its transcripts, Speech
Commands, AN4 in NeMo's manifests.  Each reader on a tiny fixture in the corpus's real layout, built here from real
speech (the bundled LJ Speech clip) and flite's voices, and force-aligned by pocketsphinx as `prepare` does."""

from __future__ import annotations

import json
import shutil
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from speechattn.audio import SAMPLE_RATE
from speechattn.data.corpora import (CorpusError, read_an4, read_librispeech, read_speech_commands,
                                     speech_commands_split)

needs_flite = pytest.mark.skipif(not shutil.which("flite"), reason="flite is not installed (.ci/run installs it)")
LJ_CLIP = Path(__file__).resolve().parents[1] / "speechattn" / "runtime" / "samples" / \
    "this-no-longer-appears-to-be-the-case.wav"  # real speech, 16 kHz: LJ Speech's LJ050-0255


@lru_cache(maxsize=None)
def spoken(text: str, voice: str = "flite:slt") -> np.ndarray:
    """16 kHz float32 speech of `text` from flite (the same words every run)."""
    from speechattn.data.synth import engine

    return engine("flite").synthesize(text, voice).audio


def write_audio(path: Path, audio: np.ndarray, **format) -> int:
    """Writes `audio` at 16 kHz; returns its length in samples."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(path, audio, SAMPLE_RATE, **format)
    return len(audio)


def resource_file(path: Path) -> None:
    """A macOS `._NAME` AppleDouble file: not audio, not JSON; a reader that opened it would fail."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        " + bytes(range(256)))


def spoken_symbols(supervision) -> list[str]:
    return [item.symbol for item in supervision.alignment["phone"] if item.symbol not in ("sil", "<ignore>")]


def summary(recordings, supervisions) -> dict[str, tuple]:
    """id -> (text, speaker, length in samples at 16 kHz) from the manifests; every clip labelled with speech, not
    silence alone."""
    for supervision in supervisions:
        assert spoken_symbols(supervision), f"{supervision.id}: labelled silence only"
        assert supervision.custom["labels"] == "pocketsphinx forced alignment"
    for recording in recordings:
        assert recording.sampling_rate == SAMPLE_RATE
    return {s.id: (s.text, s.speaker, recordings[s.recording_id].num_samples) for s in supervisions}


@pytest.fixture()
def librispeech(tmp_path):
    """LibriSpeech's own layout: SPEAKER/CHAPTER/ with the clips and SPEAKER-CHAPTER.trans.txt; one clip (opus)
    without a transcript; a `._` resource file beside a clip."""
    root = tmp_path / "LibriSpeech" / "test-other"
    lj, _ = sf.read(LJ_CLIP, dtype="float32")
    durations = {
        "1688-142285-0000": write_audio(root / "1688/142285/1688-142285-0000.flac", lj),
        "1688-142285-0001": write_audio(root / "1688/142285/1688-142285-0001.wav", spoken("She reads a book.")),
        "3764-168670-0020": write_audio(root / "3764/168670/3764-168670-0020.flac",
                                        spoken("Seven big dogs ran over the hill.", "flite:kal")),
        "40-222-0000": write_audio(root / "40/222/40-222-0000.opus", spoken("Good morning."), format="OGG",
                                   subtype="OPUS"),
    }
    (root / "1688/142285/1688-142285.trans.txt").write_text(
        "1688-142285-0000 THIS NO LONGER APPEARS TO BE THE CASE\n1688-142285-0001 SHE READS A BOOK\n")
    (root / "3764/168670/3764-168670.trans.txt").write_text("3764-168670-0020 SEVEN BIG DOGS RAN OVER THE HILL\n")
    resource_file(root / "1688/142285/._1688-142285-0000.flac")
    return root, durations


@needs_flite
def test_librispeech_reader_reads_its_own_layout_and_leaves_clips_without_a_transcript_out(librispeech, tmp_path,
                                                                                          caplog):
    root, durations = librispeech
    with caplog.at_level("INFO"):
        recordings, supervisions = read_librispeech(root, cache=tmp_path / "a.jsonl", workers=1, progress=False)
    assert summary(recordings, supervisions) == {
        "1688-142285-0000": ("THIS NO LONGER APPEARS TO BE THE CASE", "1688", durations["1688-142285-0000"]),
        "1688-142285-0001": ("SHE READS A BOOK", "1688", durations["1688-142285-0001"]),
        "3764-168670-0020": ("SEVEN BIG DOGS RAN OVER THE HILL", "3764", durations["3764-168670-0020"]),
    }
    assert "librispeech: 4 clips, 1 without a transcript (left out" in caplog.text
    first = [s for s in supervisions if s.id == "3764-168670-0020"][0]
    assert spoken_symbols(first)[:5] == ["S", "EH", "V", "AH", "N"]
    assert all("fixed_split" not in s.custom for s in supervisions)  # split by speaker, as prepare does


@needs_flite
def test_librispeech_reader_takes_a_tab_separated_transcript_file(librispeech, tmp_path, caplog):
    """fbai-speech's reference file: id, lower-case text, more columns; rows for clips not here are fine."""
    root, durations = librispeech
    for old in root.rglob("*.trans.txt"):
        old.unlink()
    transcripts = tmp_path / "test-other.tsv"
    transcripts.write_text('40-222-0000\tgood morning\t[]\t["aderke"]\n'
                           '1688-142285-0001\tshe reads a book\t[]\t[]\n'
                           '5484-24318-0000\tnot a clip here\t[]\t[]\n')
    with caplog.at_level("INFO"):
        recordings, supervisions = read_librispeech(root, transcripts, tmp_path / "a.jsonl", workers=1,
                                                    progress=False)
    assert summary(recordings, supervisions) == {
        "40-222-0000": ("good morning", "40", durations["40-222-0000"]),
        "1688-142285-0001": ("she reads a book", "1688", durations["1688-142285-0001"]),
    }
    assert "4 clips, 2 without a transcript (left out; 1 transcripts have no clip here)" in caplog.text


@pytest.mark.parametrize("name, line", [
    ("1688/142285/1688-142285.trans.txt", "1688-142285-0000"),  # an id without its text
    ("1688/142285/1688-142285.trans.txt", "THIS NO LONGER APPEARS"),  # text without an id
    ("given.tsv", "1688-142285-0000 this no longer appears"),  # spaces where the tab belongs
])
def test_a_malformed_librispeech_transcript_line_is_one_error_naming_file_and_line(tmp_path, name, line):
    root = tmp_path / "test-other"
    write_audio(root / "1688/142285/1688-142285-0000.flac", np.zeros(1600, np.float32))
    path = root / name if name.endswith(".trans.txt") else tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    separator = "\t" if name == "given.tsv" else " "
    path.write_text(f"1688-142285-0001{separator}A GOOD LINE\n\n{line}\n")
    with pytest.raises(CorpusError, match=rf"^{path}:3: expected '.*' with a SPEAKER-CHAPTER-UTTERANCE id, "
                                          rf"got {line!r}$"):
        read_librispeech(root, path if name == "given.tsv" else None, workers=1, progress=False)


def test_librispeech_without_any_transcript_is_one_error(tmp_path):
    write_audio(tmp_path / "1688-142285-0000.wav", np.zeros(1600, np.float32))
    with pytest.raises(CorpusError, match="no SPEAKER-CHAPTER.trans.txt under it, and no transcript file given"):
        read_librispeech(tmp_path, workers=1, progress=False)
    with pytest.raises(CorpusError, match=f"^{tmp_path / 'absent.tsv'}: cannot read the transcript file"):
        read_librispeech(tmp_path, tmp_path / "absent.tsv", workers=1, progress=False)


def one_second(audio: np.ndarray) -> np.ndarray:
    """Speech Commands' clips are 1 s: the word, then silence."""
    return np.pad(audio[:SAMPLE_RATE], (0, max(0, SAMPLE_RATE - len(audio))))


@pytest.fixture()
def speech_commands(tmp_path):
    """The v0.02 test set's layout: word folders, `_unknown_` with WORD_HASH_nohash_N.wav.wav names, `_silence_`,
    and the full set's `_background_noise_`; a `._` resource file."""
    root = tmp_path / "speech-commands"
    write_audio(root / "yes/0a1b2c3d_nohash_0.wav", one_second(spoken("yes")))
    write_audio(root / "stop/f00dbabe_nohash_1.wav", one_second(spoken("stop", "flite:kal")))
    write_audio(root / "_unknown_/follow_3cafe123_nohash_0.wav.wav", one_second(spoken("follow")))
    write_audio(root / "_silence_/1024.wav", np.zeros(SAMPLE_RATE, np.float32))
    write_audio(root / "_background_noise_/white_noise.wav",
                np.random.default_rng(0).normal(0, 0.1, SAMPLE_RATE).astype(np.float32))
    resource_file(root / "yes/._0a1b2c3d_nohash_0.wav")
    return root


@needs_flite
def test_speech_commands_reader_yields_each_word_and_leaves_noise_out(speech_commands, tmp_path, caplog):
    with caplog.at_level("INFO"):
        recordings, supervisions = read_speech_commands(speech_commands, tmp_path / "a.jsonl", workers=1,
                                                        progress=False)
    assert summary(recordings, supervisions) == {
        "yes_0a1b2c3d_nohash_0": ("yes", "0a1b2c3d", SAMPLE_RATE),
        "stop_f00dbabe_nohash_1": ("stop", "f00dbabe", SAMPLE_RATE),
        "follow_3cafe123_nohash_0": ("follow", "3cafe123", SAMPLE_RATE),
    }
    assert {s.id: s.custom["fixed_split"] for s in supervisions} == {
        "yes_0a1b2c3d_nohash_0": "dev", "stop_f00dbabe_nohash_1": "train", "follow_3cafe123_nohash_0": "dev"}
    assert "5 clips, 2 in _background_noise_ or _silence_ (no word: left out)" in caplog.text
    yes = [s for s in supervisions if s.text == "yes"][0]
    assert spoken_symbols(yes) == ["Y", "EH", "S"]


def test_speech_commands_split_is_fixed_by_the_speaker_hash_alone():
    """Hashes starting with 0-3 are dev (the word-edge check's speakers), all others train, whatever else is in
    the corpus: the same speaker lands in the same split in a corpus of 3 clips or of 100,000."""
    hashes = [f"{first}{rest}" for first in "0123456789abcdef" for rest in ("0000000", "fb2a9c1")]
    assert {h: speech_commands_split(h) for h in hashes} == {h: "dev" if h[0] in "0123" else "train" for h in hashes}


@pytest.mark.parametrize("name", ["yes/README.wav", "yes/0a1b2c3d_nohash.wav", "_unknown_/0a1b2c3d_nohash_0.wav",
                                  "yes/yes_0a1b2c3d_nohash_0.wav", "yes/not-hex_nohash_0.wav"])
def test_a_file_not_named_as_speech_commands_names_clips_is_one_error(tmp_path, name):
    write_audio(tmp_path / name, np.zeros(1600, np.float32))
    with pytest.raises(CorpusError, match=f"^{tmp_path / name}: not a Speech Commands clip name"):
        read_speech_commands(tmp_path, workers=1, progress=False)


@pytest.fixture()
def an4(tmp_path):
    """NeMo's layout: asr/an4_{train,val}.json, audio under asr/{train,test}/an4/wav, the train manifest naming
    its audio relative to NeMo's repository (tests/data/asr/...) as the real one does, the val manifest by an
    absolute path; `._` resource files beside the manifests and the audio."""
    root = tmp_path / "asr"
    stop = write_audio(root / "train/an4/wav/an46-mmap-b.wav", spoken("stop", "flite:kal"))
    forty = write_audio(root / "train/an4/wav/cen3-fjlp-b.wav", spoken("two forty"))
    yes = write_audio(root / "test/an4/wav/an442-mmxg-b.wav", spoken("yes", "flite:kal"))
    (root / "an4_train.json").write_text(
        json.dumps({"audio_filepath": "tests/data/asr/train/an4/wav/an46-mmap-b.wav", "duration": stop / SAMPLE_RATE,
                    "text": "stop"}) + "\n" +
        json.dumps({"audio_filepath": "tests/data/asr/train/an4/wav/cen3-fjlp-b.wav",
                    "duration": forty / SAMPLE_RATE, "text": "two forty"}) + "\n")
    (root / "an4_val.json").write_text(json.dumps({"audio_filepath": str(root / "test/an4/wav/an442-mmxg-b.wav"),
                                                   "duration": yes / SAMPLE_RATE, "text": "yes"}) + "\n")
    resource_file(root / "._an4_train.json")
    resource_file(root / "train/an4/wav/._an46-mmap-b.wav")
    return root, {"stop": stop, "forty": forty, "yes": yes}


@needs_flite
def test_an4_reader_reads_nemo_manifests_and_ignores_resource_files(an4, tmp_path, caplog):
    root, durations = an4
    with caplog.at_level("INFO"):
        recordings, supervisions = read_an4(root, cache=tmp_path / "a.jsonl", workers=1, progress=False)
    assert summary(recordings, supervisions) == {
        "an46-mmap-b": ("stop", "mmap", durations["stop"]),
        "cen3-fjlp-b": ("two forty", "fjlp", durations["forty"]),
        "an442-mmxg-b": ("yes", "mmxg", durations["yes"]),
    }
    assert "an4: 3 clips; 0 hold words outside the dictionary; aligning 3" in caplog.text
    assert "shorter than their manifest" not in caplog.text


@needs_flite
def test_an4_audio_shorter_than_its_manifest_says_is_reported(an4, tmp_path, caplog):
    """The staged AN4 copy's clips are half as long as its manifests say: the reader says so."""
    root, durations = an4
    (root / "an4_val.json").write_text(json.dumps({"audio_filepath": "test/an4/wav/an442-mmxg-b.wav",
                                                   "duration": 2 * durations["yes"] / SAMPLE_RATE,
                                                   "text": "yes"}) + "\n")
    with caplog.at_level("INFO"):
        read_an4(root, cache=tmp_path / "a.jsonl", workers=1, progress=False)
    assert "an4: 1 of 3 clips are shorter than their manifest's duration" in caplog.text


@pytest.mark.parametrize("line, problem", [
    ('{"audio_filepath": "train/an4/wav/an46-mmap-b.wav", "text": "stop"', "not a JSON line"),
    ('{"audio_filepath": "train/an4/wav/an46-mmap-b.wav", "duration": 1.0}', "expected a JSON object with"),
    ('["train/an4/wav/an46-mmap-b.wav", "stop"]', "expected a JSON object with"),
    ('{"audio_filepath": "train/an4/wav/an99-mxyz-b.wav", "text": "stop"}', "no audio at train/an4/wav/an99"),
    ('{"audio_filepath": "train/an4/wav/an46-mmap-b.wav", "text": "stop", "offset": 0.5}', "an offset into"),
    ('{"audio_filepath": "train/an4/wav/stop.wav", "text": "stop"}', "stop.wav: not an AN4 file name"),
])
def test_a_malformed_an4_manifest_line_is_one_error_naming_file_and_line(tmp_path, line, problem):
    for name in ("an46-mmap-b", "stop"):
        write_audio(tmp_path / f"train/an4/wav/{name}.wav", np.zeros(1600, np.float32))
    manifest = tmp_path / "an4_train.json"
    manifest.write_text(json.dumps({"audio_filepath": "train/an4/wav/an46-mmap-b.wav", "text": "stop"}) +
                        f"\n{line}\n")
    with pytest.raises(CorpusError, match=f"^{manifest}:2: {problem}"):
        read_an4(tmp_path, workers=1, progress=False)


@needs_flite
@pytest.mark.parametrize("recipe", ["librispeech-other", "speech-commands", "an4"])
def test_each_new_recipe_prepares_its_corpus_end_to_end(recipe, librispeech, speech_commands, an4, tmp_path, capsys):
    """`speechattn prepare recipes/NAME.yaml`, pointed at the tiny fixture: manifests for every split, the speech
    commands dev speakers in dev."""
    from lhotse import load_manifest

    from speechattn.cli import main

    roots = {"librispeech-other": [f"data.root={librispeech[0]}", "data.transcripts=null"],
             "speech-commands": [f"data.root={speech_commands}"], "an4": [f"data.root={an4[0]}"]}
    out = tmp_path / f"out-{recipe}"
    settings = [item for setting in [*roots[recipe], "synth.workers=1"] for item in ("--set", setting)]
    assert main(["prepare", f"recipes/{recipe}.yaml", *settings, "--out", str(out)]) == 0
    assert f"{recipe}: " in capsys.readouterr().out
    prepared = {split: load_manifest(out / f"{recipe}_supervisions_{split}.jsonl.gz") if
                (out / f"{recipe}_supervisions_{split}.jsonl.gz").stat().st_size else None
                for split in ("train", "dev", "test")}
    supervisions = [s for manifest in prepared.values() if manifest for s in manifest]
    assert len(supervisions) == 3
    if recipe == "speech-commands":
        assert {s.speaker for s in prepared["dev"]} == {"0a1b2c3d", "3cafe123"}
        assert {s.speaker for s in prepared["train"]} == {"f00dbabe"}
