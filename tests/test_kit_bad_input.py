"""What bad input gets from the portable kit's public API (and `speechattn align`, which runs on it): every path
argument checked as the command line checks it, limits checked before the work, no silent garbage.

Paths: a device, a FIFO, a directory or nothing there is one ValueError line, never a read of /dev/zero or a wait on
a FIFO.  Limits: texts, tokens, dictionaries and thread counts bounded, refused before any word is pronounced.  No
silent garbage: a second finish(), channels read as samples, a text file that is not there read as the words, an
output delay the graph does not have."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_bad_input_never_hang import within

from speechattn.audio import speechlike_signal
from speechattn.cli import main
from speechattn_export.decoder import PhoneBigram
from speechattn_export.pipeline import DecodingOptions, load_model
from speechattn_export.stream_client import StreamingModel
from speechattn_export import words as kit_words
from speechattn_export.words import G2P, Lexicon

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "speechattn" / "runtime" / "samples" / "please-enter-your-password.wav"
SAMPLE_TEXT = "Please enter your password, followed by the pound key."


@pytest.fixture(scope="module")
def model(tiny_onnx):
    return load_model(tiny_onnx, threads=1)


def run(capsys, *args) -> tuple[int, str, str]:
    with within(60):
        code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# ---------------------------------------------------------------------------------------------------------
# 10: every path the kit's public API takes is checked as the command line checks it.

PATH_TAKERS = {
    "StreamingModel": lambda path, onnx: StreamingModel(path),
    "load_model": lambda path, onnx: load_model(path),
    "Lexicon.load": lambda path, onnx: Lexicon.load(path),
    "Model.follow(dictionary=)": lambda path, onnx: load_model(onnx).follow(SAMPLE_TEXT, dictionary=path),
    "G2P": lambda path, onnx: G2P(path),
    "PhoneBigram.load": lambda path, onnx: PhoneBigram.load(path),
}


@pytest.mark.parametrize("taker", PATH_TAKERS)
@pytest.mark.parametrize("kind", ["device", "fifo", "directory", "nothing there"])
def test_every_public_path_argument_refuses_a_device_a_fifo_a_directory_and_nothing_there_in_one_line(
        taker, kind, tmp_path, tiny_onnx):
    path = {"device": Path("/dev/zero"), "fifo": tmp_path / "fifo", "directory": tmp_path,
            "nothing there": tmp_path / "missing.file"}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    expected = {"device": f"{path}: a device, not a file; give the ", "fifo": f"{path}: a pipe, not a file; give the ",
                "directory": f"{path}: a directory, not a ", "nothing there": f"{path}: no such "}[kind]
    with within(10), pytest.raises(ValueError) as error:  # a read of /dev/zero never ends, a FIFO's open waits
        PATH_TAKERS[taker](path, tiny_onnx)
    message = str(error.value)
    assert message.startswith(expected) and "\n" not in message, message


def test_a_dictionary_past_its_bound_is_refused_without_reading_it_whole(tmp_path):
    huge = tmp_path / "huge.dict"
    with open(huge, "wb") as handle:
        handle.truncate(kit_words.MAX_DICTIONARY_BYTES * 5)  # sparse: 100 MB that cost no disk
    with pytest.raises(ValueError, match=f"{huge}: more than 20 MB; not a dictionary"):
        Lexicon.load(huge)


@pytest.mark.parametrize("threads", [-1, 0, 257, 2.5, True, "4"])
def test_thread_counts_outside_the_command_lines_1_to_256_are_refused(tiny_onnx, threads):
    for make in (lambda: StreamingModel(tiny_onnx, num_threads=threads), lambda: load_model(tiny_onnx, threads=threads)):
        with pytest.raises(ValueError, match=r"num_threads must be from 1 to 256 \(None: all cores\), not "):
            make()
    assert StreamingModel(tiny_onnx, num_threads=np.int64(2)).session is not None


# ---------------------------------------------------------------------------------------------------------
# 11: bounded work for bounded input, checked before the work.

MEASURE = """
import json, resource, sys, time
from speechattn.runtime.align import TextError, load_lexicon, read_text, script_words
lexicon = load_lexicon()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
try:
    text, name = read_text(sys.argv[1])
    script_words(text, name, lexicon)
    message = None
except TextError as error:
    message = str(error)
print(json.dumps({"seconds": time.perf_counter() - started, "message": message,
                  "grew_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024}))
"""


def measured(path: Path) -> dict:
    result = subprocess.run([sys.executable, "-c", MEASURE, str(path)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


def test_a_49_mb_text_is_refused_for_its_words_in_under_a_second_and_500_mb(tmp_path):
    big = tmp_path / "big.txt"
    big.write_text("the case " * 5_400_000)  # 48.6 MB, under the 50 MB read limit; 10.8 million words
    result = measured(big)
    assert result["message"] == (f"{big}: more than 200,000 words; align takes at most 200,000 per recording (about "
                                 "20 hours of speech): split the recording and its text")
    assert result["seconds"] < 1.0 and result["grew_mb"] < 500, result  # measured 0.2 s, 88 MB (before: past 10 GB)


def test_an_800_kb_word_is_refused_before_g2p_and_quoted_in_60_characters(tmp_path, capsys, tiny_onnx):
    word = tmp_path / "word.txt"
    word.write_text("a" * 800_000)  # one "word" cost 11 GB in g2p and was echoed whole on stderr
    result = measured(word)
    quoted = '"' + "a" * 59 + '…"'
    assert result["message"] == f"{word}: character 0: {quoted} is one word of 800,000 characters (at most 256); " \
                                "is this text?"
    assert result["seconds"] < 1.0 and result["grew_mb"] < 500, result
    code, out, err = run(capsys, "align", SAMPLE, word, "--model", tiny_onnx)
    assert code == 1 and out == "" and len(one_line(err)) < 250


def test_follow_checks_its_limits_before_it_pronounces_a_word(model):
    def no_g2p():
        raise AssertionError("a word was pronounced before the limits were checked")

    lexicon = Lexicon(Lexicon.load().entries, {}, g2p=no_g2p)
    with pytest.raises(kit_words.TooManyWords, match="more than 200,000 words"):
        model.follow("blorptastic " * 200_001, lexicon=lexicon)
    with pytest.raises(ValueError, match="is one word of 300 characters"):
        model.follow("blorptastic " + "z" * 300, lexicon=lexicon)
    with pytest.raises(ValueError, match="a text of 50,000,001 characters"):
        model.follow(" " * 50_000_001, lexicon=lexicon)
    assert len(lexicon.words("the " * 200_000)) == 200_000  # the limit itself is taken


# ---------------------------------------------------------------------------------------------------------
# 15: no silent garbage.

def test_a_second_finish_raises_and_adds_no_frames(model):
    audio = speechlike_signal(0.5, seed=3)
    stream = model.new_stream()
    frames = len(stream.push(audio)) + len(stream.finish())
    assert frames == -(-len(audio) // 160)
    with pytest.raises(RuntimeError, match="already finished"):
        stream.finish()
    for rate in (None, 8000):
        phone_stream = model.open(DecodingOptions(decoder="hysteresis", visemes="rhubarb"))
        phone_stream.push(audio if rate is None else audio[::2], sample_rate=rate)
        phone_stream.finish()
        segments, cues = list(phone_stream.segments), list(phone_stream.cues)
        with pytest.raises(RuntimeError, match="already finished"):
            phone_stream.finish()
        assert phone_stream.segments == segments and phone_stream.cues == cues
    follow = model.follow(SAMPLE_TEXT)
    follow.push(audio)
    follow.finish()
    with pytest.raises(RuntimeError, match="already finished"):
        follow.finish()


@pytest.mark.parametrize("rate", [16000, 44100, 8000])
def test_frames_by_channels_are_downmixed_at_any_rate(model, rate):
    left = speechlike_signal(0.6, seed=4)[: rate * 6 // 10]
    right = speechlike_signal(0.6, seed=5)[: rate * 6 // 10]
    mixed = ((left + right) / 2).astype(np.float32)

    def phones(audio):
        stream = model.open(DecodingOptions(decoder="hysteresis"))
        pieces = [stream.push(audio[:1000], sample_rate=rate), stream.push(audio[1000:], sample_rate=rate),
                  stream.finish()]
        return np.concatenate([u.frames.log_probs for u in pieces])

    stereo = np.stack([left, right], axis=1)  # (samples, 2): not to be read as interleaved mono
    np.testing.assert_array_equal(phones(stereo), phones(mixed))
    pcm = np.round(stereo * 32767).astype(np.int16)
    np.testing.assert_allclose(phones(pcm), phones(((pcm[:, 0] / 32768 + pcm[:, 1] / 32768) / 2).astype(np.float32)),
                               atol=1e-5)
    if rate == 16000:  # the contract's client takes them too
        stream = model.new_stream()
        frames = np.concatenate([stream.push(stereo).log_probs, stream.finish().log_probs])
        np.testing.assert_allclose(frames, phones(mixed), atol=1e-5)  # other pieces: equal within the contract's 1e-5


@pytest.mark.parametrize("shape, message", [
    ((2, 2), "is ambiguous"),
    ((1, 2), "is ambiguous"),
    ((2, 16000), r"channels first\? pass its transpose, audio\.T"),
    ((40, 40), r"got \(40, 40\)"),
    ((1, 1, 160), r"got \(1, 1, 160\)"),
])
def test_ambiguous_audio_shapes_are_refused_with_the_shape_named(model, shape, message):
    for rate in (None, 44100):
        with pytest.raises(ValueError, match=message):
            model.open().push(np.zeros(shape, np.float32), sample_rate=rate)
    with pytest.raises(ValueError, match=message):
        model.new_stream().push(np.zeros(shape, np.float32))


@pytest.mark.parametrize("text", ["missing.txt", "transcripts/utt1.LAB", "some/folder/utt1", "My Texts/a talk.txt"])
def test_align_says_a_text_file_that_looks_like_a_path_does_not_exist(capsys, tmp_path, tiny_onnx, text):
    code, out, err = run(capsys, "align", SAMPLE, tmp_path / text if "/" in text else text, "--model", tiny_onnx)
    assert code == 1 and out == "" and "no such text file" in one_line(err), err


def test_align_still_takes_the_words_themselves_and_its_help_states_the_rule(capsys, tiny_onnx):
    code, out, err = run(capsys, "align", SAMPLE, SAMPLE_TEXT, "--model", tiny_onnx, "-q")
    assert code == 0 and out.startswith(f"{SAMPLE}:\n") and "  Please\n" in out, (out, err)
    assert main(["align", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "a TEXT ending in .txt or .lab, or one word with a / in it, is a file name" in help_text


def with_metadata(source: Path, target: Path, **values) -> Path:
    import onnx

    proto = onnx.load(str(source))
    for prop in proto.metadata_props:
        if prop.key in values:
            prop.value = str(values[prop.key])
    onnx.save(proto, str(target))
    return target


def test_an_output_delay_the_graph_does_not_have_is_a_model_error_at_load(tiny_onnx, tmp_path, capsys):
    lying = with_metadata(tiny_onnx, tmp_path / "lying.onnx", output_delay_frames=300)  # exit 0, empty, before
    with pytest.raises(ValueError, match="output_delay_frames = 300 but the model_config it was exported with says 0"):
        StreamingModel(lying)
    code, out, err = run(capsys, "transcribe", SAMPLE, "--model", lying)
    assert code == 1 and out == "" and "output_delay_frames = 300" in one_line(err)
    config = json.loads(StreamingModel(tiny_onnx).metadata["model_config"])
    consistent = with_metadata(tiny_onnx, tmp_path / "consistent.onnx", output_delay_frames=300,
                               model_config=json.dumps({**config, "output_delay_frames": 300}))
    with pytest.raises(ValueError, match="sees only receptive_field_frames = 20 frames back"):
        StreamingModel(consistent)
