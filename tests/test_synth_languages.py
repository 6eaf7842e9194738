"""Speech in other languages labelled in the model's phones (speechattn/data/synth_languages.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from speechattn.audio import SAMPLE_RATE, num_frames
from speechattn.data.synth import SynthesisError
from speechattn.data.synth_languages import FESTIVAL_IPA, FESTIVAL_VOICES, labelled
from speechattn.phones import PHONE_TO_INDEX, PHONES, from_ipa


def runs(labels: np.ndarray) -> list[str]:
    """The labels with repeats removed, as phone names."""
    return [PHONES[label] for number, label in enumerate(labels) if number == 0 or labels[number - 1] != label]


@pytest.mark.parametrize("language, text, expected", [
    ("es", "Hola, me llamo Juan y vivo en Madrid.", ["M", "AA", "DH", "R", "IY", "D"]),
    ("ru", "Привет, я люблю читать книги.", ["CH", "IY", "T", "AA", "T"]),
])
def test_a_sentence_gives_mostly_speech_frames_as_long_as_the_audio(language, text, expected):
    audio, labels = labelled(language, "m1", text)
    assert audio.dtype == np.float32 and audio.ndim == 1
    assert len(labels) == num_frames(len(audio))
    assert 1.5 < len(audio) / SAMPLE_RATE < 5.0
    speech = labels != PHONE_TO_INDEX["sil"]
    assert speech.mean() > 0.6
    assert labels[-1] == PHONE_TO_INDEX["sil"]  # the pause after the last word
    sequence = " ".join(runs(labels))
    assert " ".join(expected) in sequence


def test_a_voice_variant_changes_the_voice_not_the_phones():
    _, plain = labelled("es", "", "Buenos días.")
    _, female = labelled("es", "f2", "Buenos días.")
    assert [p for p in runs(plain) if p != "sil"] == [p for p in runs(female) if p != "sil"]


@pytest.mark.parametrize("arguments, message", [
    (("xx", "m1", "hola"), "no language 'xx'"),
    (("es", "m1", "hola", "flite"), "unknown synthesizer 'flite'"),
    (("ru", "lp_diphone", "ciao", "festival"), "speaks it, not 'ru'"),
    (("it", "nobody", "ciao", "festival"), "festival voice 'nobody'"),
])
def test_bad_arguments_are_a_clear_error(arguments, message):
    with pytest.raises(SynthesisError, match=message):
        labelled(*arguments)


def test_every_festival_phone_set_entry_has_phones():
    for phone_set, table in FESTIVAL_IPA.items():
        for segment, ipa in table.items():
            assert ipa == "" or from_ipa(ipa, phone_set), (phone_set, segment)
    assert {voice.phone_set for voice in FESTIVAL_VOICES.values()} <= set(FESTIVAL_IPA)


@pytest.mark.skipif(not Path("/usr/share/festival/voices/italian/lp_diphone").is_dir(),
                    reason="apt-get install festival festvox-italp16k")
def test_a_festival_voice_labels_its_own_segments():
    audio, labels = labelled("it", "lp_diphone", "Buongiorno, mi chiamo Giulia.", "festival")
    assert len(labels) == num_frames(len(audio))
    assert "M IY K Y AA M OW" in " ".join(runs(labels))  # mi chiamo: m i k j a m o
    assert (labels != PHONE_TO_INDEX["sil"]).mean() > 0.5


def test_the_corpus_plan_is_deterministic_and_each_voice_speaks_its_language():
    from speechattn.data.synth import SynthConfig
    from speechattn.data.synth_languages import plan_languages, script

    config = SynthConfig(hours=0.03, engines=("espeak",), engine_shares=(1.0,), languages=("es", "ru"),
                         voice_variants=("default", "m1"))
    jobs = plan_languages(config)
    assert jobs == plan_languages(config) and len(jobs) > 10
    assert {job.voice for job in jobs} == {"espeak:es", "espeak:es+m1", "espeak:ru", "espeak:ru+m1"}
    for job in jobs:
        scripts = {script(word) for word in job.text.replace(",", " ").rstrip(".?!").split()}
        assert scripts == ({"CYRILLIC"} if job.voice.startswith("espeak:ru") else {"LATIN"}), job.text


def test_hindi_words_keep_their_vowel_signs():
    from speechattn.data.synth_languages import vocabulary

    words, probabilities = vocabulary("hi")
    assert "लिए" in words and "के" in words  # a vowel sign is a mark, not a letter: isalpha() alone dropped them
    assert abs(probabilities.sum() - 1) < 1e-9


@pytest.mark.parametrize("settings, message", [
    ({"engines": ("espeak", "flite"), "engine_shares": (1, 1), "languages": ("es",)}, "uses espeak and festival"),
    ({"engines": ("espeak",), "engine_shares": (1,)}, "synth.languages"),
    ({"engines": ("festival",), "engine_shares": (1,), "festival_voices": ("nobody",)}, "unknown voice"),
])
def test_a_corpus_that_cannot_be_made_is_refused(settings, message):
    from speechattn.data.synth import SynthConfig
    from speechattn.data.synth_languages import plan_languages
    from speechattn.errors import ConfigError

    with pytest.raises(ConfigError, match=message):
        plan_languages(SynthConfig(hours=0.01, **settings))


def test_a_small_corpus_is_built_with_exact_labels(tmp_path):
    from speechattn.data.synth import SynthConfig
    from speechattn.data.synth_languages import read_languages_corpus

    config = SynthConfig(hours=0.004, engines=("espeak",), engine_shares=(1.0,), languages=("de",), workers=1)
    recordings, supervisions = read_languages_corpus(config, tmp_path, progress=False)
    assert len(recordings) == len(supervisions) >= 3
    assert {s.speaker for s in supervisions} == {"espeak:de"}


def test_the_multilingual_model_is_bundled_live_with_the_default_models_outputs_and_contract():
    """Every client and viseme table takes `--model multilingual` as it takes the default: the same phones, contract,
    chunks and latency."""
    from speechattn_export import load_model
    from speechattn_export.registry import registry

    assert registry()["models"]["multilingual"]["live"] is True
    multilingual, default = load_model("multilingual"), load_model("default-int8")
    for key in ("phones", "contract_version", "allowed_chunk_frames", "default_chunk_frames", "final_latency_ms",
                "stream_start", "quantization"):
        assert multilingual.metadata[key] == default.metadata[key], key
