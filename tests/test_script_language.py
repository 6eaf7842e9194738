"""A script's own language: a WebVTT file (align's TEXT, transcribe --dialog, speechattn-rhubarb -d, mic --script) is
read as its cues' words, in the language its header's `Language:` line names (speechattn.runtime.align
.script_and_language); --language overrides it, English keeps CMUdict, a language espeak-ng lacks is one line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import soundfile as sf

pytest.importorskip("espeakng_loader")

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_languages import SENTENCES, run_rhubarb, words_of  # noqa: E402

from speechattn.cli import main  # noqa: E402
from speechattn.runtime.align import script_and_language, webvtt_words  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CASE = ROOT / "speechattn" / "runtime" / "samples" / "this-no-longer-appears-to-be-the-case.wav"


def vtt(language: str | None, *cues: str) -> str:
    header = "WEBVTT\nKind: captions\n" + (f"Language: {language}\n" if language else "")
    return header + "".join(f"\n{n}\n00:00:0{n}.000 --> 00:00:0{n + 1}.000 align:start\n{cue}\n"
                            for n, cue in enumerate(cues))


def test_a_webvtt_files_words_are_its_cues_one_a_line_without_tags_notes_or_styles():
    text = ("\ufeffWEBVTT - a title\r\nLanguage: es-MX\r\n\r\nNOTE a note --> not words\r\n\r\nSTYLE\r\n::cue { color: red }\r\n"
            "\r\nintro\r\n00:00.000 --> 00:01.500 line:0\r\n<v Ana>¿Dónde <i>está</i></v>\r\nla llave?\r\n\r\n"
            "00:01.500 --> 00:03.000\r\nPan &amp; queso<00:02.000> hoy\r\n")
    words, language = script_and_language(text, "a.vtt")
    assert words == "¿Dónde está la llave?\nPan & queso hoy" and language == "es"
    assert webvtt_words(text)[1] == "es-MX"


@pytest.mark.parametrize("tag, given, expected", [
    ("es", None, "es"), ("pt-BR", None, "pt-BR"), ("fr-CA", None, "fr"), ("es-419", None, "es-419"),
    ("en-US", None, None), ("en", None, None), ("es", "fr", "fr"), (None, None, None), (None, "it", "it"),
])
def test_the_header_names_the_language_and_language_given_overrides_it(tag, given, expected):
    assert script_and_language(vtt(tag, "hola"), "a.vtt", given) == ("hola", expected)


def test_plain_text_is_read_as_it_is():
    text = "Language: es\nWEBVTT is not the first line here"
    assert script_and_language(text, "a.txt") == (text, None)
    assert script_and_language(text, "a.txt", "es") == (text, "es")


@pytest.fixture(scope="module")
def spanish(tmp_path_factory):
    from speechattn.runtime.espeak import espeak

    folder = tmp_path_factory.mktemp("es")
    text = SENTENCES["es"][0]
    sf.write(folder / "es.wav", espeak().synthesize(text, "es", phones=False).audio, 16000)
    lines = text.replace(" junto ", "\njunto ").split("\n")  # two cues
    (folder / "es.vtt").write_text(vtt("es", *lines), encoding="utf-8")
    (folder / "es.txt").write_text("\n".join(lines), encoding="utf-8")
    return folder


def aligned(capsys, *arguments) -> dict:
    assert main(["align", *map(str, arguments), "--format", "json", "-q"]) == 0
    return json.loads(capsys.readouterr().out)


def test_align_reads_a_webvtt_files_words_in_its_language_as_align_language_reads_plain_text(spanish, capsys):
    from_tag = aligned(capsys, spanish / "es.wav", spanish / "es.vtt")
    from_option = aligned(capsys, spanish / "es.wav", spanish / "es.txt", "--language", "es")
    overridden = aligned(capsys, spanish / "es.wav", spanish / "es.vtt", "--language", "it")
    assert from_tag["not_heard"] == [] and len(from_tag["words"]) == len(words_of(SENTENCES["es"][0]))
    assert from_tag["words"] == from_option["words"]
    assert [w["phones"] for w in overridden["words"]] != [w["phones"] for w in from_tag["words"]]


def test_an_english_tag_keeps_cmudict(tmp_path, capsys):
    (tmp_path / "a.vtt").write_text(vtt("en-US", "This no longer appears", "to be the case."))
    (tmp_path / "a.txt").write_text("This no longer appears\nto be the case.")
    assert aligned(capsys, CASE, tmp_path / "a.vtt")["words"] == aligned(capsys, CASE, tmp_path / "a.txt")["words"]


def test_a_language_espeak_lacks_is_one_line_naming_the_file_and_its_tag(tmp_path, capsys):
    (tmp_path / "a.vtt").write_text(vtt("xx-YY", "hola"))
    assert main(["align", str(CASE), str(tmp_path / "a.vtt")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a.vtt is in 'xx-YY' (its Language header)" in err and "--language" in err
    assert main(["mic", "--seconds", "1", "--script", str(tmp_path / "a.vtt")]) == 1  # before any device is opened
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'xx-YY'" in err


def test_transcribe_dialog_and_rhubarb_dialog_read_the_webvtt_files_language(spanish, capsys):
    def dialog_phones(*arguments):
        assert main(["transcribe", str(spanish / "es.wav"), "--format", "json", "-q", *map(str, arguments)]) == 0
        return [s["phone"] for s in json.loads(capsys.readouterr().out)["segments"]]

    assert dialog_phones("--dialog", spanish / "es.vtt") == dialog_phones("--dialog", spanish / "es.txt",
                                                                           "--language", "es")
    words = len(words_of(SENTENCES["es"][0]))
    runs = {name: run_rhubarb(capsys, "--consoleLevel", "Info", "-d", spanish / name, spanish / "es.wav")
            for name in ("es.vtt", "es.txt")}
    status, out, err = runs["es.vtt"]
    assert status == 0 and f"Dialog: {words} of {words} words aligned." in err
    plain = run_rhubarb(capsys, "--consoleLevel", "Info", "-d", spanish / "es.txt", "--language", "es",
                        spanish / "es.wav")
    assert out == plain[1]
    assert runs["es.txt"][1] != out  # the same words read as English give other cues


def supervisions_manifest(folder: Path, recordings: dict[str, Path], supervisions: list[tuple[str, str, str]]) -> Path:
    """A lhotse recordings manifest and the supervisions manifest beside it: (recording, text, language) each."""
    import gzip

    with gzip.open(folder / "c_recordings_dev.jsonl.gz", "wt") as f:
        for name, audio in recordings.items():
            f.write(json.dumps({"id": name, "sources": [{"type": "file", "channels": [0], "source": str(audio)}]})
                    + "\n")
    with gzip.open(folder / "c_supervisions_dev.jsonl.gz", "wt") as f:
        for number, (name, text, language) in enumerate(supervisions):
            f.write(json.dumps({"id": f"s{number}", "recording_id": name, "start": float(number), "duration": 1.0,
                                "text": text, "language": language}) + "\n")
    return folder / "c_supervisions_dev.jsonl.gz"


def test_a_manifests_supervisions_name_each_recordings_language(spanish, tmp_path, capsys):
    """lhotse's `language` (a name, Spanish, or a code, en): each recording aligned in its own; --language overrides
    every one; a language espeak-ng lacks fails that recording alone, in one line."""
    text = SENTENCES["es"][0]
    manifest = supervisions_manifest(tmp_path, {"es": spanish / "es.wav", "en": CASE, "xx": CASE},
                                     [("es", text, "Spanish"), ("en", "This no longer appears to be the case.", "en"),
                                      ("xx", "This no longer appears to be the case.", "Atlantean")])
    assert main(["align", str(manifest), "--output-dir", str(tmp_path / "out"), "--format", "json", "-q"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is in 'Atlantean' (the manifest's language)" in err, err
    spanish_words = json.loads((tmp_path / "out" / "es.json").read_text())["words"]
    assert spanish_words == aligned(capsys, spanish / "es.wav", spanish / "es.txt", "--language", "es")["words"]
    english_words = json.loads((tmp_path / "out" / "en.json").read_text())["words"]
    assert english_words == aligned(capsys, CASE, "This no longer appears to be the case.")["words"]
    assert not (tmp_path / "out" / "xx.json").exists()
    assert main(["align", str(manifest), "--output-dir", str(tmp_path / "it"), "--format", "json", "-q",
                 "--language", "it", "--force"]) == 0  # every recording in Italian: Atlantean is not asked for
    italian = json.loads((tmp_path / "it" / "es.json").read_text())["words"]
    assert [w["phones"] for w in italian] != [w["phones"] for w in spanish_words]


def test_a_recording_whose_supervisions_name_two_languages_is_one_line(spanish, tmp_path, capsys):
    manifest = supervisions_manifest(tmp_path, {"es": spanish / "es.wav"},
                                     [("es", "hola", "es"), ("es", "hello", "en")])
    assert main(["align", str(manifest), "--output-dir", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "recording es: its supervisions name 2 languages (en, es)" in err, err


def test_a_switch_to_another_voices_rules_leaves_no_mark_whatever_the_voices_name_length():
    """espeak-ng marks a word said by another voice's rules with both voices' names, (en) and (piqd): neither is a
    phoneme, so an English word in a Klingon script is its phonemes alone."""
    from speechattn.runtime.espeak import espeak

    phonemes = espeak().ipa("case", "piqd")  # spelt out: s|ˈiː|(piqd)|ʔ|ˈa|t|s|ˈi|ʔ|ˈe|t
    assert phonemes and not any("(" in p for p in phonemes), phonemes


def test_languages_by_name_are_espeaks_codes():
    from speechattn.runtime.languages import language_names

    names = language_names()
    assert names["spanish"] == "es" and names["french"] == "fr" and names["portuguese"] == "pt"
    assert names["cherokee"] == "chr"  # its voice file's name line carries a comment
