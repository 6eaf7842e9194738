"""The server's words in other languages: /align's `language` and the follow-along stream's `language` option take
the words' phones from espeak-ng as `align --language` does; an unknown language is refused naming it, a server
without espeak-ng says so; the start message with a language is valid against export/serve.schema.json."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

pytest.importorskip("websockets")
pytest.importorskip("h11")
pytest.importorskip("espeakng_loader")

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_languages import SENTENCES, espeak_word_starts  # noqa: E402
from test_serve_files import cli_json, post, serving  # noqa: E402
from test_serve_follow import closed_at_start  # noqa: E402

from speechattn_export.remote import RemoteStream  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "export" / "models" / "default-int8.onnx"
SCHEMA = json.loads((ROOT / "export" / "serve.schema.json").read_text())


@pytest.fixture(scope="module")
def spanish(tmp_path_factory):
    """Two Spanish sentences spoken by espeak-ng: (text, wav path, espeak-ng's word starts by character offset)."""
    from speechattn.runtime.espeak import espeak

    folder = tmp_path_factory.mktemp("es")
    spoken = []
    for number, text in enumerate(SENTENCES["es"][:2]):
        utterance = espeak().synthesize(text, "es", phones=False)
        sf.write(folder / f"es{number}.wav", utterance.audio, 16000)
        spoken.append((text, folder / f"es{number}.wav", espeak_word_starts(utterance)))
    return spoken


def query_text(text: str) -> str:
    from urllib.parse import quote_plus

    return quote_plus(text)


def test_align_with_a_language_places_spanish_words_where_espeak_spoke_them_as_the_command_line_does(spanish,
                                                                                                    tmp_path):
    errors = []
    with serving(BUNDLED) as server:
        for text, wav, reference in spanish:
            status, answer = post(server, f"/align?name=es.wav&language=es&text={query_text(text)}", wav.read_bytes())
            assert status == 200, answer
            expected = cli_json("align", str(wav), text, "--language", "es", "--model", str(BUNDLED), "--format",
                                "json", "-o", str(tmp_path / "out.json"))
            assert {k: v for k, v in answer.items() if k != "file"} == {k: v for k, v in expected.items() if k != "file"}
            assert answer["not_heard"] == [] and len(answer["words"]) == len(reference)
            errors += [abs(word["start"] - reference[at]) for word, at in zip(answer["words"], sorted(reference))]
        english_status, english = post(server, f"/align?name=es.wav&force=1&text={query_text(text)}",
                                       wav.read_bytes())
    assert np.median(errors) < 0.03 and max(errors) < 0.15, errors  # the CLI test's bounds (tests/test_languages.py)
    assert english_status == 200  # without a language: the kit's English lexicon, other phones
    assert [w["phones"] for w in english["words"]] != [w["phones"] for w in answer["words"]]


def webvtt(text: str, tag: str) -> str:
    return f"WEBVTT\nLanguage: {tag}\n\n00:00.000 --> 00:09.000\n{text}\n"


def test_a_webvtt_text_posted_to_align_is_in_the_language_its_header_names(spanish, tmp_path):
    """As align reads a .vtt script: its cues' words, in its Language header's language; language= overrides it."""
    text, wav, _ = spanish[0]
    with serving(BUNDLED) as server:
        _, named = post(server, f"/align?name=es.wav&language=es&text={query_text(text)}", wav.read_bytes())
        status, tagged = post(server, f"/align?name=es.wav&text={query_text(webvtt(text, 'es-MX'))}", wav.read_bytes())
        _, overridden = post(server, f"/align?name=es.wav&force=1&language=fr&text={query_text(webvtt(text, 'es'))}",
                             wav.read_bytes())
        refused, answer = post(server, f"/align?name=es.wav&text={query_text(webvtt(text, 'xx'))}", wav.read_bytes())
    assert status == 200 and tagged == named, tagged
    assert [w["phones"] for w in overridden["words"]] != [w["phones"] for w in named["words"]]  # French phones
    assert refused >= 400 and "'xx'" in answer["error"] and "\n" not in answer["error"], answer


@pytest.mark.parametrize("language, status, words", [
    ("xx", 400, "espeak-ng has no language 'xx'"),
    ("../../etc", 400, "not '../../etc'"),
    ("es%00", 400, "not 'es\\x00'"),
])
def test_align_refuses_an_unknown_language_naming_it(spanish, language, status, words):
    with serving(BUNDLED) as server:
        got, answer = post(server, f"/align?name=es.wav&language={language}&text=hola", spanish[0][1].read_bytes())
    assert got == status and words in answer["error"] and "\n" not in answer["error"], answer


def test_a_server_without_espeak_says_so_for_a_language_and_aligns_english_as_before(spanish, monkeypatch):
    monkeypatch.setitem(sys.modules, "espeakng_loader", None)  # import fails, as in the runtime install
    with serving(BUNDLED) as server:
        got, answer = post(server, "/align?name=es.wav&language=es&text=hola", spanish[0][1].read_bytes())
        english, _ = post(server, "/align?name=es.wav&force=1&text=hola", spanish[0][1].read_bytes())
    assert got == 501 and "no espeak-ng" in answer["error"] and "pip install espeakng-loader" in answer["error"]
    assert english == 200


def test_a_followed_stream_in_spanish_hears_the_words_where_espeak_spoke_them(spanish):
    text, wav, reference = spanish[0]
    audio, rate = sf.read(wav, dtype="float32")
    with serving(BUNDLED) as server:
        stream = RemoteStream(f"ws://127.0.0.1:{server.address[1]}/stream", sample_rate=rate, script=text,
                              language="es")
        events = []
        for start in range(0, len(audio), rate // 25):
            events += stream.push(audio[start:start + rate // 25]).words
        events += stream.finish().words
    assert stream.result["not_heard"] == []
    assert stream._start["options"]["language"] == "es"  # RemoteStream passes it through, as the schema reads it
    if importlib.util.find_spec("jsonschema"):
        import jsonschema

        jsonschema.validate(stream._start, SCHEMA)
    heard = sorted({e["index"]: e for e in events}.values(), key=lambda e: e["index"])
    assert [e["word"] for e in heard] == [text[at:].split()[0].strip("¿?,.") for at in sorted(reference)]
    errors = [abs(e["start"] - reference[at]) for e, at in zip(heard, sorted(reference))]
    assert np.median(errors) < 0.05 and max(errors) < 0.15, errors


def test_a_followed_stream_with_a_webvtt_script_follows_it_in_its_header_language(spanish):
    """The same words at the same times as the plain script with language es."""
    text, wav, _ = spanish[0]
    audio, rate = sf.read(wav, dtype="float32")
    heard = []
    with serving(BUNDLED) as server:
        for script, language in ((text, "es"), (webvtt(text, "es"), None)):
            stream = RemoteStream(f"ws://127.0.0.1:{server.address[1]}/stream", sample_rate=rate, script=script,
                                  language=language)
            events = stream.push(audio).words + stream.finish().words
            assert stream.result["not_heard"] == []
            heard.append(sorted({e["index"]: (e["word"], e["start"]) for e in events}.items()))
    assert heard[0] == heard[1] and len(heard[0]) == len(text.split()), heard


@pytest.mark.parametrize("options, reason", [
    ({"script": "hola a todos", "language": "xx"}, "espeak-ng has no language 'xx'"),
    ({"script": "hola a todos", "language": 7}, "not '7'"),
    ({"language": "es"}, "language is the script's: send the script too"),
    ({"script": "hola a todos", "language": "es"}, "no espeak-ng"),  # a server without it
])
def test_a_stream_with_an_unknown_language_is_refused_1007_naming_it(options, reason, monkeypatch):
    if reason == "no espeak-ng":
        monkeypatch.setitem(sys.modules, "espeakng_loader", None)  # import fails, as in the runtime install
    with serving(BUNDLED) as server:
        code, why = closed_at_start(server, options)
    assert code == 1007 and reason in why, why


def test_a_start_message_with_a_language_is_valid_against_the_schema_and_a_bad_name_is_not():
    jsonschema = pytest.importorskip("jsonschema")
    start = {"type": "start", "sample_rate": 16000, "format": "float32", "options": {"script": "hola", "language": "pt-BR"}}
    jsonschema.validate(start, SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**start, "options": {"script": "hola", "language": "../x"}}, SCHEMA)


def test_the_node_remote_stream_passes_the_language_through(spanish, tmp_path):
    """export/node/remote.mjs --script TEXT --language es: the Spanish words heard; --language xx: the refusal in
    one line."""
    import shutil
    import subprocess

    node = shutil.which("node")
    if node is None or not (ROOT / "export" / "node" / "node_modules" / "ws").exists():
        pytest.skip("Node.js and the ws package (cd export/node && npm ci) are not installed")
    text, wav, reference = spanish[0]
    audio, _ = sf.read(wav, dtype="float32")
    (tmp_path / "a.f32").write_bytes(audio.astype("<f4").tobytes())
    with serving(BUNDLED) as server:
        url = f"ws://127.0.0.1:{server.address[1]}/stream"
        runs = {language: subprocess.run([node, "export/node/remote.mjs", url, str(tmp_path / "a.f32"), "--script",
                                          text, "--language", language], cwd=ROOT, capture_output=True, text=True,
                                         timeout=120) for language in ("es", "xx")}
    assert runs["es"].returncode == 0, runs["es"].stderr
    words = {w["index"]: w["word"] for w in json.loads(runs["es"].stdout)["words"]}
    assert [words[i] for i in sorted(words)] == [text[at:].split()[0].strip("¿?,.") for at in sorted(reference)]
    assert runs["xx"].returncode == 1 and runs["xx"].stderr.count("\n") == 1
    assert "espeak-ng has no language 'xx'" in runs["xx"].stderr and "(code 1007)" in runs["xx"].stderr
