"""`speechattn align` and `transcribe --dialog` on the bundled recordings: the words in order at plausible times,
the formats (JSON schema, MFA's TextGrid tiers, CTM), corpus mode (MFA's layout, resumable, several processes),
a script the speaker departed from, and bad texts: one line each, never a traceback, never a hang."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from speechattn.cli import main

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "speechattn" / "runtime" / "samples"
CASE = SAMPLES / "this-no-longer-appears-to-be-the-case.wav"
PASSWORD = SAMPLES / "please-enter-your-password.wav"
CASE_TEXT = "This no longer appears to be the case."
PASSWORD_TEXT = "Please enter your password, followed by the pound key."


def run(capsys, *args):
    code = main(["align", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_words_come_out_in_order_tiling_the_speech(capsys):
    code, out, err = run(capsys, CASE, CASE_TEXT, "--format", "json", "--model", "default-int8")
    assert code == 0, err
    result = json.loads(out)
    words = result["words"]
    assert [w["word"] for w in words] == ["This", "no", "longer", "appears", "to", "be", "the", "case"]
    assert result["not_heard"] == []
    assert all(a["end"] <= b["start"] for a, b in zip(words, words[1:]))
    assert 0 <= words[0]["start"] < 0.2 and 2.0 < words[-1]["end"] <= result["duration"]
    for w in words:
        assert w["phones"][0]["start"] == w["start"] and w["phones"][-1]["end"] == w["end"]
        assert all(p["end"] > p["start"] for p in w["phones"])
    assert [p["phone"] for p in words[-1]["phones"]] == ["K", "EY", "S"]


def test_the_file_is_aligned_with_its_own_prior_whether_its_frames_wait_in_memory_or_on_disk(monkeypatch):
    """align_file holds the log posteriors until the recording's prior is known (PriorSums): in memory, or past
    SPOOL_BYTES in a temporary file; either way the alignment is `align` on the whole array, with the prior."""
    import numpy as np

    from speechattn.runtime import align as runtime
    from speechattn.runtime.transcribe import read_blocks
    from speechattn_export import load_model
    from speechattn_export.align import align
    from speechattn_export.words import Lexicon

    model, words = load_model("default-int8"), Lexicon.load().words(CASE_TEXT)
    _, _, blocks = read_blocks(CASE)
    stream = model.new_stream(runtime.offline_chunk(model))
    log_probs = np.concatenate([stream.push(np.concatenate(list(blocks))).log_probs, stream.finish().log_probs])
    expected = align(log_probs.astype(np.float32), words, model.phones)
    assert expected.words != align(log_probs.astype(np.float32), words, model.phones, prior_scale=0.0).words
    in_memory = runtime.align_file(model, CASE, words, boundaries="neural").alignment
    refined_in_memory = runtime.align_file(model, CASE, words).alignment
    monkeypatch.setattr(runtime, "SPOOL_BYTES", 1000)
    on_disk = runtime.align_file(model, CASE, words, boundaries="neural").alignment
    assert in_memory == on_disk == expected
    # the HMM-GMM boundary stage (the default) reads the same samples and posteriors back from either spool
    assert runtime.align_file(model, CASE, words).alignment == refined_in_memory
    assert [w.text for w in refined_in_memory.words] == [w.text for w in expected.words]


def test_json_follows_its_schema(capsys):
    import jsonschema

    schema = json.loads((ROOT / "export" / "alignment.schema.json").read_text())
    code, out, _ = run(capsys, PASSWORD, PASSWORD_TEXT, "--format", "json")
    assert code == 0
    jsonschema.validate(json.loads(out), schema)


def test_the_textgrid_has_mfas_tiers_and_opens_in_praatio(capsys, tmp_path):
    from praatio import textgrid

    code, out, err = run(capsys, CASE, CASE_TEXT, "--format", "textgrid", "-o", tmp_path / "case.TextGrid")
    assert code == 0 and out == "" and "wrote" in err
    grid = textgrid.openTextgrid(str(tmp_path / "case.TextGrid"), includeEmptyIntervals=False)
    assert grid.tierNames == ("words", "phones")
    assert [e.label for e in grid.getTier("words").entries] == ["This", "no", "longer", "appears", "to", "be",
                                                                  "the", "case"]
    assert grid.getTier("phones").entries[-1].label == "S"


def test_ctm_is_a_line_per_word(capsys):
    code, out, _ = run(capsys, CASE, CASE_TEXT, "--format", "ctm")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 8
    assert lines[2].split()[0] == "this-no-longer-appears-to-be-the-case" and lines[2].split()[4] == "longer"


def test_a_word_the_speaker_left_out_is_reported_and_the_rest_keep_their_times(capsys):
    _, true_out, _ = run(capsys, CASE, CASE_TEXT, "--format", "json")
    code, out, err = run(capsys, CASE, "This no longer really appears to be the case.", "--format", "json")
    assert code == 0 and "not heard: really" in err
    true_words, words = json.loads(true_out)["words"], json.loads(out)["words"]
    assert [w["word"] for w in words] == [w["word"] for w in true_words]
    assert all(abs(a["start"] - b["start"]) <= 0.02 and abs(a["end"] - b["end"]) <= 0.02
               for a, b in zip(words, true_words))
    assert json.loads(out)["not_heard"] == [{"index": 3, "word": "really"}]


def test_a_corpus_in_mfas_layout_is_aligned_resumably_by_several_processes(capsys, tmp_path):
    corpus, out = tmp_path / "corpus", tmp_path / "aligned"
    (corpus / "speaker1").mkdir(parents=True)
    (corpus / "speaker1" / "case.wav").write_bytes(CASE.read_bytes())
    (corpus / "speaker1" / "case.lab").write_text(CASE_TEXT)
    (corpus / "password.wav").write_bytes(PASSWORD.read_bytes())
    (corpus / "password.txt").write_text(PASSWORD_TEXT)
    (corpus / "lonely.wav").write_bytes(CASE.read_bytes())
    code, _, err = run(capsys, corpus, "--output-dir", out, "--jobs", "2")
    assert code == 1 and "lonely.wav: no .lab or .txt beside it; skipped" in err  # the others are aligned
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.TextGrid")) == [
        "password.TextGrid", "speaker1/case.TextGrid"]
    assert "2 file(s) aligned, 1 failed (1 with no transcript beside it), 0 skipped as done" in err
    (corpus / "lonely.wav").unlink()
    before = (out / "password.TextGrid").stat().st_mtime_ns
    code, _, err = run(capsys, corpus, "--output-dir", out)
    assert code == 0 and "2 file(s) already aligned" in err and "0 file(s) aligned" in err
    assert (out / "password.TextGrid").stat().st_mtime_ns == before


def test_a_corpus_written_over_its_own_transcripts_or_into_a_read_only_place_is_refused_before_any_work(capsys,
                                                                                                        tmp_path):
    """--output-dir the corpus itself with --format text names each output a.txt: the transcript beside a.wav was
    taken for a finished alignment (skipped, exit 0), and --overwrite wrote over it.  A read-only --output-dir was an
    internal error.  Both are one line now, exit 2, every transcript as it was."""
    import os

    corpus = tmp_path / "corpus"
    (corpus / "sub").mkdir(parents=True)
    (corpus / "case.wav").write_bytes(CASE.read_bytes())
    (corpus / "case.txt").write_text(CASE_TEXT)
    (corpus / "sub" / "password.wav").write_bytes(PASSWORD.read_bytes())
    (corpus / "sub" / "password.lab").write_text(PASSWORD_TEXT)
    for extra in ([], ["--overwrite"]):
        code, _, err = run(capsys, corpus, "--output-dir", corpus, "--format", "text", *extra)
        assert code == 2 and "would write" in err and "case.txt, which is one of the inputs" in err, err
        assert (corpus / "case.txt").read_text() == CASE_TEXT
    code, _, err = run(capsys, corpus, "--output-dir", corpus, "--format", "json")  # beside them: allowed
    assert code == 0, err
    assert (corpus / "case.json").is_file() and (corpus / "sub" / "password.json").is_file()
    import shutil
    import subprocess
    import sys

    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    # root writes anywhere: as root, the command runs without the capability to pass file permissions
    unprivileged = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"] if os.geteuid() == 0 else []
    if unprivileged and shutil.which("setpriv") is None:
        pytest.skip("root, and no setpriv to run the command without its override of file permissions")
    result = subprocess.run([*unprivileged, sys.executable, "-m", "speechattn", "align", str(corpus), "--output-dir",
                             str(locked / "out")], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 2 and "--output-dir" in result.stderr and "cannot create it" in result.stderr, \
        result.stderr
    assert "internal error" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_a_lhotse_supervisions_manifest_is_aligned_as_the_same_corpus_in_mfas_layout(capsys, tmp_path):
    """Each recording aligned to its supervisions' texts (two supervisions of one recording: its text in two
    lines), one output per recording id, equal to the MFA-layout corpus of the same files and words."""
    import gzip
    import json

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "case.wav").write_bytes(CASE.read_bytes())
    (corpus / "case.lab").write_text(CASE_TEXT)
    (corpus / "password.wav").write_bytes(PASSWORD.read_bytes())
    (corpus / "password.lab").write_text(PASSWORD_TEXT)
    half = len(CASE_TEXT.split()) // 2
    supervisions = [("case", 0.5, " ".join(CASE_TEXT.split()[half:])), ("password", 0.0, PASSWORD_TEXT),
                    ("case", 0.0, " ".join(CASE_TEXT.split()[:half]))]
    with gzip.open(tmp_path / "c_recordings_dev.jsonl.gz", "wt") as f:
        for name in ("case", "password"):
            f.write(json.dumps({"id": name, "sources": [{"type": "file", "channels": [0],
                                                         "source": str(corpus / f"{name}.wav")}]}) + "\n")
    with gzip.open(tmp_path / "c_supervisions_dev.jsonl.gz", "wt") as f:
        for number, (name, start, text) in enumerate(supervisions):
            f.write(json.dumps({"id": f"s{number}", "recording_id": name, "start": start, "duration": 0.5,
                                "text": text}) + "\n")
    code, _, err = run(capsys, tmp_path / "c_supervisions_dev.jsonl.gz", "--output-dir", tmp_path / "m",
                       "--format", "json")
    assert code == 0 and "2 file(s) aligned, 0 failed" in err, err
    assert run(capsys, corpus, "--output-dir", tmp_path / "f", "--format", "json")[0] == 0
    for name in ("case", "password"):
        manifest, folder = (json.loads((tmp_path / d / f"{name}.json").read_text()) for d in ("m", "f"))
        assert [w["word"] for w in manifest["words"]] == [w["word"] for w in folder["words"]]
        assert [(w["start"], w["end"]) for w in manifest["words"]] == [(w["start"], w["end"]) for w in folder["words"]]


@pytest.mark.parametrize("text, message", [
    ("", "empty; nothing to align"),
    ("   \n\t ", "empty; nothing to align"),
    ("... !!! ???", "nothing speakable"),
])
def test_texts_with_nothing_to_align_are_one_line(capsys, text, message):
    code, out, err = run(capsys, CASE, text)
    assert code == 1 and out == "" and message in err and len(err.strip().splitlines()) == 1


def test_a_text_that_is_not_utf8_or_far_too_long_is_refused_in_one_line(capsys, tmp_path):
    (tmp_path / "latin1.txt").write_bytes("ça ne paraît plus être le cas".encode("latin-1"))
    code, _, err = run(capsys, CASE, tmp_path / "latin1.txt")
    assert code == 1 and "not UTF-8 text" in err and len(err.strip().splitlines()) == 1
    (tmp_path / "huge.txt").write_text("the case " * 1_200_000)  # 10.8 MB, 2.4 million words
    code, _, err = run(capsys, CASE, tmp_path / "huge.txt")
    assert code == 1 and "words; align takes at most 200,000" in err


def test_a_text_ten_times_longer_than_the_audio_gives_a_partial_result_and_says_so(capsys, caplog):
    text = CASE_TEXT + " " + " ".join(["Please enter your password, followed by the pound key."] * 8)
    code, out, err = run(capsys, CASE, text, "--format", "json", "--force")  # unalignable: 70 of 80 words not heard
    assert code == 0
    result = json.loads(out)
    assert [w["word"] for w in result["words"]][:3] == ["This", "no", "longer"]
    assert len(result["not_heard"]) >= 70
    assert "most will be reported as not heard" in caplog.text


def test_dialog_makes_the_mouth_follow_the_script(capsys):
    assert main(["transcribe", str(CASE), "--format", "rhubarb-json", "--dialog", CASE_TEXT]) == 0
    with_script = json.loads(capsys.readouterr().out)["mouthCues"]
    assert main(["transcribe", str(CASE), "--format", "json", "--dialog", CASE_TEXT]) == 0
    phones = [s["phone"] for s in json.loads(capsys.readouterr().out)["segments"] if s["phone"] != "sil"]
    assert phones[:3] == ["DH", "IH", "S"] and phones[-3:] == ["K", "EY", "S"]
    assert with_script[0]["start"] == 0 and with_script[-1]["value"] == "X"
    assert {c["value"] for c in with_script} <= set("ABCDEFGHX")


def test_dialog_goes_with_one_recording(capsys):
    assert main(["transcribe", str(CASE), str(PASSWORD), "--dialog", CASE_TEXT]) == 2
    assert "--dialog gives the words of one recording" in capsys.readouterr().err


def test_a_fifo_or_a_device_as_the_text_or_dictionary_is_refused_not_waited_on(capsys, tmp_path):
    import os

    os.mkfifo(tmp_path / "fifo")
    for args in ((CASE, tmp_path / "fifo"), (CASE, "/dev/zero"), (CASE, CASE_TEXT, "--dictionary", tmp_path / "fifo")):
        code, _, err = run(capsys, *args)
        assert code == 1 and "not a file" in err and len(err.strip().splitlines()) == 1, err


def test_phases_average_the_posteriors_in_one_file_and_in_a_corpus_alike(capsys, tmp_path):
    """--phases 2: the file's posteriors are the kit's PhaseStream's (two shifts of the audio averaged), through
    one file and through the corpus workers alike; past the model's encoder step it is a usage error."""
    import numpy as np

    from speechattn.runtime.align import hmm_boundaries
    from speechattn.runtime.transcribe import read_blocks
    from speechattn_export import load_model
    from speechattn_export.align import align
    from speechattn_export.stream_client import PhaseStream
    from speechattn_export.words import Lexicon

    model = load_model("default-int8")
    stream = PhaseStream(model, max(model.allowed_chunk_frames), 2)
    audio = np.concatenate(list(read_blocks(CASE)[2]))
    log_probs = np.concatenate([stream.push(audio).log_probs, stream.finish().log_probs])
    expected = align(log_probs, Lexicon.load().words(CASE_TEXT), model.phones)
    # then the HMM-GMM boundary stage, on the samples as align_file spools them (16 bits)
    samples = (np.round(np.clip(audio, -1.0, 1.0) * 32767).astype(np.int16) * (1 / 32767)).astype(np.float32)
    expected = hmm_boundaries(expected, samples, log_probs, model.phones)
    code, out, err = run(capsys, CASE, CASE_TEXT, "--format", "json", "--model", "default-int8", "--phases", "2")
    assert code == 0, err
    phones = [(p["phone"], round(p["start"] * 100), round(p["end"] * 100))
              for w in json.loads(out)["words"] for p in w["phones"]]
    assert phones == [(p.phone, p.start_frame, p.end_frame) for w in expected.words for p in w.phones]
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "case.wav").write_bytes(CASE.read_bytes())
    (corpus / "case.lab").write_text(CASE_TEXT)
    code, _, err = run(capsys, corpus, "--output-dir", tmp_path / "out", "--format", "json", "--model",
                       "default-int8", "--phases", "2", "--jobs", "2")
    assert code == 0, err
    assert json.loads((tmp_path / "out" / "case.json").read_text())["words"] == json.loads(out)["words"]
    for wrong in ("5", "3", "0", "-1", "64"):  # one range, said alike for every count that is not one of them
        code, out, err = run(capsys, CASE, CASE_TEXT, "--phases", wrong)
        assert code == 2 and out == ""
        assert err.strip().splitlines() == [f"speechattn align: error: --phases {wrong}: this model's encoder steps 4 "
                                            "frame(s) at a time; give --phases 1 or 2 or 4 (evenly spaced shifts "
                                            "within it)"]


def test_a_token_spoken_as_several_words_is_one_interval_and_one_word_not_heard(capsys, tmp_path):
    """'$5' is spoken 'five dollars', '2026' 'twenty twenty six': each written token is one entry of the words
    (its interval from its first spoken word's start to its last's end, their phones in order), not one a spoken
    word under the same text; a token not heard at all is named once."""
    import soundfile

    from speechattn.runtime.espeak import espeak

    audio = tmp_path / "paid.wav"
    soundfile.write(audio, espeak().synthesize("I paid five dollars in twenty twenty six.", "en-us",
                                               phones=False).audio, 16000)
    code, out, err = run(capsys, audio, "I paid $5 in 2026.", "--format", "json")
    assert code == 0, err
    words = json.loads(out)["words"]
    assert [w["word"] for w in words] == ["I", "paid", "$5", "in", "2026"]
    five, year = words[2], words[4]
    assert [p["phone"] for p in five["phones"]][:3] == ["F", "AY", "V"] and five["phones"][-1]["phone"] == "Z"
    assert five["start"] == five["phones"][0]["start"] and five["end"] == five["phones"][-1]["end"]
    assert [p["phone"] for p in year["phones"]].count("W") == 2 and words[3]["index"] < year["index"]
    code, out, err = run(capsys, CASE, CASE_TEXT + " In 2026.", "--force")
    assert code == 0 and out.rstrip().endswith("not heard: In 2026"), out
    assert "2 word(s) not heard" in err and "not heard: In" not in err  # stdout says it once; stderr counts them


def test_speech_outside_the_script_inside_a_token_splits_it_and_the_textgrid_is_written(capsys, tmp_path):
    """'2026' read 'twenty twenty ... six' with other words between: the token's spoken words are not one interval
    over the speech outside the script (a TextGrid refuses overlapping intervals: it was an internal error)."""
    import soundfile

    from speechattn.runtime.espeak import espeak

    audio = tmp_path / "year.wav"
    soundfile.write(audio, espeak().synthesize("I paid in twenty twenty, the weather is nice today, six, Doctor "
                                               "Smith.", "en-us", phones=False).audio, 16000)
    text = "I paid in 2026, Dr. Smith."
    code, out, err = run(capsys, audio, text, "--format", "json")
    assert code == 0, err
    result = json.loads(out)
    assert result["unscripted"], result  # the weather is nice today
    for gap in result["unscripted"]:
        assert not [w for w in result["words"] if w["start"] < gap["end"] and w["end"] > gap["start"]], result
    assert [w["word"] for w in result["words"]].count("2026") == 2
    code, _, err = run(capsys, audio, text, "-o", tmp_path / "year.TextGrid")
    assert code == 0 and (tmp_path / "year.TextGrid").exists(), err
