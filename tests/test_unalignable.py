"""A text that has nothing to do with the audio is not forced onto it: `speechattn align` reports the recording as
unalignable (one line, exit 1, nothing written; counted as failed in a corpus), --force writes it anyway, and every
alignment carries its score (the kit's Alignment.score, the JSON's "score", a comment line of the TextGrid that Praat
and praatio read past).  The bundled recordings, each with its own text and with the other's."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from speechattn.cli import main
from speechattn_export.align import NOT_HEARD_SCORE, UNSCRIPTED_SCORE, AlignOptions, align

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "speechattn" / "runtime" / "samples"
CASE = SAMPLES / "this-no-longer-appears-to-be-the-case.wav"
PASSWORD = SAMPLES / "please-enter-your-password.wav"
CASE_TEXT = "This no longer appears to be the case."  # as speechattn/runtime/samples/README.md gives them
PASSWORD_TEXT = "Please enter your password followed by the pound key."
OWN = [(CASE, CASE_TEXT), (PASSWORD, PASSWORD_TEXT)]
SWAPPED = [(CASE, PASSWORD_TEXT), (PASSWORD, CASE_TEXT)]


def run(capsys, *args):
    code = main(["align", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("model", ["default", "default-int8"])
@pytest.mark.parametrize("audio, text", SWAPPED, ids=["case with password's text", "password with case's text"])
def test_a_recording_aligned_to_another_recordings_text_is_refused_in_one_line(capsys, tmp_path, audio, text, model):
    target = tmp_path / "out.json"
    code, out, err = run(capsys, audio, text, "--model", model, "--format", "json", "-o", target)
    lines = err.strip().splitlines()
    assert code == 1 and out == "" and len(lines) == 1, err
    assert lines[0].startswith(f"speechattn align: error: {audio}: the text does not match the speech (alignment "
                               "score -") and f"below {AlignOptions().min_score:g})" in lines[0] and "--force" in lines[0]
    assert "for words not in English, give --language LANG" in lines[0]  # Spanish words read as English fail so
    assert not target.exists() and list(tmp_path.iterdir()) == []  # nothing written, no temporary file left


def test_a_text_too_long_for_its_audio_is_told_so_not_that_it_does_not_match(capsys, tmp_path):
    import soundfile

    clip = tmp_path / "clip.wav"  # the first 0.2 s of a recording (a cut file), given the whole sentence
    soundfile.write(clip, soundfile.read(PASSWORD, dtype="float32")[0][:3200], 16000)
    code, out, err = run(capsys, clip, PASSWORD_TEXT)
    last = err.strip().splitlines()[-1]
    assert code == 1 and out == ""
    assert last.startswith(f"speechattn align: error: {clip}: 0.20 s of audio is too short to hold 9 words "
                           "(alignment score -") and "the whole recording" in last and "--force" in last, err
    assert main(["align", str(clip), "Please."]) == 0  # one word fits: not refused as too short


@pytest.mark.parametrize("model", ["default", "default-int8"])
@pytest.mark.parametrize("audio, text", OWN, ids=["case", "password"])
def test_a_recording_aligned_to_its_own_text_aligns_with_its_score_in_the_json(capsys, audio, text, model):
    code, out, err = run(capsys, audio, text, "--model", model, "--format", "json")
    assert code == 0, err
    result = json.loads(out)
    assert result["unalignable"] is False and AlignOptions().min_score < result["score"] <= 0
    assert result["not_heard"] == [] and len(result["words"]) == len(text.split())
    assert f"alignment score {result['score']:.2f}" in err


def test_force_writes_an_unalignable_recording_and_says_so(capsys, tmp_path):
    target = tmp_path / "out.json"
    code, out, err = run(capsys, CASE, PASSWORD_TEXT, "--format", "json", "-o", target, "--force")
    assert code == 0, err
    result = json.loads(target.read_text())
    assert result["unalignable"] is True and result["score"] < AlignOptions().min_score
    assert "unalignable: written as --force asks" in err


def test_the_json_with_its_score_follows_the_schema(capsys):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "export" / "alignment.schema.json").read_text())
    for args in ([CASE, CASE_TEXT], [CASE, PASSWORD_TEXT, "--force"]):
        code, out, err = run(capsys, *args, "--format", "json")
        assert code == 0, err
        jsonschema.validate(json.loads(out), schema)
    assert {"score", "unalignable"} <= set(schema["required"])


def test_the_textgrid_carries_the_score_in_a_comment_line_and_praatio_reads_it_as_before(capsys, tmp_path):
    """Praat skips a line from "!" (a check with Praat 6.1.38 through parselmouth read such a file, and refused the
    same line without the "!"); praatio reads the header's xmin and xmax lines only."""
    from praatio import textgrid

    code, _, err = run(capsys, CASE, CASE_TEXT, "--format", "textgrid", "-o", tmp_path / "a.TextGrid")
    assert code == 0, err
    lines = [line.strip() for line in (tmp_path / "a.TextGrid").read_text().splitlines()]
    comment = [line for line in lines if line.startswith("!")]
    assert len(comment) == 1 and lines.index(comment[0]) == lines.index("size = 2") + 1
    assert comment[0].startswith("! alignment score = -0.") and comment[0].endswith(": aligned (speechattn align)")
    grid = textgrid.openTextgrid(str(tmp_path / "a.TextGrid"), includeEmptyIntervals=False)
    assert grid.tierNames == ("words", "phones") and grid.maxTimestamp > 2.0
    assert [e.label for e in grid.getTier("words").entries] == CASE_TEXT.rstrip(".").split()


def write_corpus(folder: Path, pairs) -> None:
    import shutil

    folder.mkdir()
    for n, (audio, text) in enumerate(pairs):
        shutil.copy(audio, folder / f"{n}.wav")
        (folder / f"{n}.lab").write_text(text)


def test_a_corpus_counts_an_unalignable_recording_as_failed_and_writes_the_others(capsys, tmp_path):
    write_corpus(tmp_path / "corpus", [(CASE, CASE_TEXT), (PASSWORD, CASE_TEXT)])
    out = tmp_path / "out"
    code, _, err = run(capsys, tmp_path / "corpus", "--output-dir", out, "--format", "json", "--model", "default-int8")
    assert code == 1
    assert "1 file(s) aligned, 1 failed" in err
    assert f"{tmp_path / 'corpus' / '1.wav'}: the text does not match the speech" in err
    assert sorted(p.name for p in out.iterdir()) == ["0.json"]
    code, _, err = run(capsys, tmp_path / "corpus", "--output-dir", out, "--format", "json", "--model", "default-int8",
                       "--force")
    assert code == 0 and "1 file(s) aligned, 0 failed, 1 skipped as done" in err
    assert json.loads((out / "1.json").read_text())["unalignable"] is True


def test_dialog_lip_sync_from_another_text_is_not_refused_nor_forced_onto_the_speech(capsys, tmp_path):
    """--dialog keeps its fallback to the recognised phones: a text that does not match the speech at all (another
    recording's) gives the phones recognised from the audio alone, exactly those of transcribe with the same model
    and chunk, and says so in one line even with --quiet (before, three of its words were put on the speech)."""
    code = main(["transcribe", str(CASE), "--dialog", PASSWORD_TEXT, "--format", "json", "-o", str(tmp_path / "a.json"),
                 "--quiet"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert err.count("\n") == 1 and "the dialog text does not match the speech (alignment score -" in err, err
    assert "the phones recognised from the audio alone instead" in err
    fallback = [s["phone"] for s in json.loads((tmp_path / "a.json").read_text())["segments"]]
    assert main(["transcribe", str(CASE), "--model", "default", "--chunk-frames", "32", "--format", "json", "-o",
                 str(tmp_path / "b.json")]) == 0
    assert fallback == [s["phone"] for s in json.loads((tmp_path / "b.json").read_text())["segments"]]
    assert not {"P", "W", "ER"} <= set(fallback)  # "password"'s phones are not laid on the speech
    capsys.readouterr()
    assert main(["transcribe", str(CASE), "--dialog", CASE_TEXT, "--format", "json", "--quiet"]) == 0  # its own text
    captured = capsys.readouterr()
    assert captured.err == "" and [s["phone"] for s in json.loads(captured.out)["segments"]][:4] == ["DH", "IH", "S", "N"]


def said(phones: list[int], frames: int, P: int = 40, sure: float = 0.9) -> np.ndarray:
    """(frames x len(phones), P) log posteriors: each phone said for `frames` frames at `sure`."""
    rows = np.full((frames * len(phones), P), np.log((1 - sure) / (P - 1)))
    for k, phone in enumerate(phones):
        rows[k * frames:(k + 1) * frames, phone] = np.log(sure)
    return rows


def test_the_score_is_the_mean_frame_ratio_with_unscripted_frames_and_words_not_heard_counted():
    """Known posteriors: the script as said scores 0 (each frame's aligned phone is its best); speech the script
    does not hold is scored UNSCRIPTED_SCORE a frame, a word not heard NOT_HEARD_SCORE x its share."""
    from types import SimpleNamespace

    from speechattn.phones import PHONES

    index = {p: i for i, p in enumerate(PHONES)}
    word = lambda text, phones: SimpleNamespace(text=text, pronunciations=(tuple(phones.split()),))  # noqa: E731
    cat, dog = word("cat", "K AE T"), word("dog", "D AO G")
    silence = said([index["sil"]], 20)
    audio = np.concatenate([silence, said([index[p] for p in "K AE T".split()], 8), silence])
    aligned = align(audio, [cat], PHONES, prior_scale=0.0)
    assert aligned.not_heard == [] and aligned.unscripted == [] and aligned.score == 0.0 and not aligned.unalignable
    aligned = align(audio, [cat, dog], PHONES, prior_scale=0.0)
    assert aligned.not_heard == [1] and aligned.score == pytest.approx(NOT_HEARD_SCORE / 2)
    other = np.concatenate([silence, said([index[p] for p in "S IY Z AH N".split()], 8), silence])
    aligned = align(other, [cat], PHONES, prior_scale=0.0)
    frames = sum(end - start for start, end in aligned.unscripted)
    assert aligned.unalignable and aligned.score < AlignOptions().min_score
    if aligned.not_heard:
        assert frames and aligned.score == pytest.approx(UNSCRIPTED_SCORE + NOT_HEARD_SCORE)
