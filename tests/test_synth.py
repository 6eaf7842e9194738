"""The built-in synthetic corpus: espeak-ng phone timing, determinism, parallel cached builds."""

from __future__ import annotations

import numpy as np
import pytest

from speechattn.data.labels import frame_labels
from speechattn.phones import PHONE_TO_INDEX, PHONES, PhoneMappingError
import shutil

from speechattn.data.synth import SynthConfig, build_corpus, engine, espeak, phone_intervals, plan

P = PHONE_TO_INDEX


def test_phone_intervals_split_pairs_and_merge_the_linking_glide():
    events = [(0, "_"), (100, "k"), (200, "'A@"), (400, "i"), (500, ";"), (550, "'oU"), (700, "_:")]
    intervals = phone_intervals(events, 800, 100, "test")
    assert [(s, e, PHONES[p]) for s, e, p in intervals] == [
        (0.0, 1.0, "sil"), (1.0, 2.0, "K"), (2.0, 3.0, "AA"), (3.0, 4.0, "R"),  # A@ -> AA R, split in half
        (4.0, 5.5, "IY"),  # ";" extends the phone before it
        (5.5, 7.0, "OW"), (7.0, 8.0, "sil"),
    ]
    with pytest.raises(PhoneMappingError, match="test: 'Q!' is not an espeak-ng en-US phoneme"):
        phone_intervals([(0, "Q!")], 10, 100, "test")


def test_espeak_says_cat_as_k_ae_t():
    utterance = espeak().synthesize("cat", "en-us", rate_wpm=150)
    phones = [PHONES[p] for _, _, p in utterance.intervals if PHONES[p] != "sil"]
    assert phones == ["K", "AE", "T"]
    assert utterance.intervals[-1][1] == pytest.approx(utterance.duration, abs=1e-3)


def test_espeak_timing_agrees_with_the_audio():
    """Frames labelled silence are quiet; vowels are loud: the events' sample positions match the audio."""
    engine = espeak()
    vowels = {P[v] for v in "AA AE AH AO AW AY EH ER EY IH IY OW OY UH UW".split()}
    silence_db, vowel_db = [], []
    for voice in ("espeak:en-us+m3", "espeak:en-us-nyc+f2", "espeak:en-us+klatt4"):
        utterance = engine.synthesize("Seven big dogs, then a pause. And the quiet end!", voice, rate_wpm=170)
        frames = len(utterance.audio) // 160
        labels = frame_labels(utterance.intervals, frames)
        energy = (utterance.audio[: frames * 160].reshape(frames, 160) ** 2).mean(1)
        db = 10 * np.log10(energy + 1e-10)
        silence_db += db[labels == P["sil"]].tolist()
        vowel_db += db[np.isin(labels, list(vowels))].tolist()
    assert np.median(vowel_db) - np.median(silence_db) > 30  # measured: about 60 dB
    assert np.percentile(silence_db, 90) < np.percentile(vowel_db, 10)


def test_common_words_use_only_mapped_symbols():
    text = ("The quick brown fox jumps over the lazy dog. She sells sea shells; a measure of pleasure? "
            "Our fire and their hour, the car's door, a bottle and a button!")
    for voice in ("en-us", "en-us-nyc"):
        utterance = espeak().synthesize(text, voice)
        assert len(utterance.intervals) > 60


needs_flite_and_festival = pytest.mark.skipif(
    not (shutil.which("flite") and shutil.which("festival")),
    reason="flite/festival are not installed (.ci/run installs them: apt-get install flite festival festvox-*)",
)


@needs_flite_and_festival
@pytest.mark.parametrize("name", ["flite", "festival"])
def test_flite_and_festival_voices_say_cat_with_timing_that_fits_the_audio(name):
    synthesizer = engine(name)
    assert len(synthesizer.voices()) >= 3
    vowels = {P[v] for v in "AA AE AH AO EH IH IY OW UW".split()}
    for voice in synthesizer.voices():
        cat = synthesizer.synthesize("cat", voice)
        assert [PHONES[p] for _, _, p in cat.intervals if PHONES[p] != "sil"] == ["K", "AE", "T"], voice
        utterance = synthesizer.synthesize("Seven big dogs, then a pause.", voice, rate_wpm=150)
        frames = len(utterance.audio) // 160
        labels = frame_labels(utterance.intervals, frames)
        db = 10 * np.log10((utterance.audio[: frames * 160].reshape(frames, 160) ** 2).mean(1) + 1e-10)
        assert np.median(db[np.isin(labels, list(vowels))]) - np.median(db[labels == P["sil"]]) > 25, voice


def test_plan_is_deterministic_and_job_n_ignores_the_corpus_size():
    small, large = plan(SynthConfig(hours=0.01, seed=3, engines=("espeak",), engine_shares=(1.0,))), \
        plan(SynthConfig(hours=0.03, seed=3, engines=("espeak",), engine_shares=(1.0,)))
    assert small == large[: len(small)] and len(large) > len(small)
    assert plan(SynthConfig(hours=0.01, seed=3, engines=("espeak",), engine_shares=(1.0,))) == small
    assert plan(SynthConfig(hours=0.01, seed=4, engines=("espeak",), engine_shares=(1.0,)))[0] != small[0]
    assert len({job.voice for job in large}) > 5


@needs_flite_and_festival
def test_plan_draws_engines_by_their_shares():
    jobs = plan(SynthConfig(hours=0.5))
    shares = {name: np.mean([job.voice.startswith(name + ":") for job in jobs]) for name in ("espeak", "flite", "festival")}
    assert abs(shares["espeak"] - 0.6) < 0.05 and abs(shares["flite"] - 0.25) < 0.05
    assert abs(shares["festival"] - 0.15) < 0.05


@pytest.mark.slow
def test_build_runs_in_parallel_and_reuses_finished_utterances(tmp_path):
    engines = ("espeak", "flite", "festival") if shutil.which("flite") and shutil.which("festival") else ("espeak",)
    config = SynthConfig(hours=0.01, workers=2, seed=5, engines=engines, engine_shares=(1.0,) * len(engines))
    records, failures = build_corpus(config, tmp_path, progress=False)
    assert not failures and len(records) == len(plan(config))
    first = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    records_again, _ = build_corpus(config, tmp_path, progress=False)
    assert records_again == records
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == first  # nothing rewritten


@pytest.mark.slow
def test_prepare_synth_splits_by_voice(tmp_path, capsys):
    from lhotse import load_manifest

    from speechattn.cli import main

    assert main(["prepare", "recipes/synth-en.yaml", "--set", "synth.hours=0.05", "--out", str(tmp_path)]) == 0
    voices = {split: {s.speaker for s in load_manifest(tmp_path / f"synth-en_supervisions_{split}.jsonl.gz")}
              for split in ("train", "dev", "test")}
    assert voices["train"] and voices["dev"] and voices["test"]
    assert not (voices["train"] & voices["dev"]) and not (voices["train"] & voices["test"])
    assert not (voices["dev"] & voices["test"])


def test_espeak_table_covers_what_espeak_says_for_a_broad_word_sample():
    """1,000 random CMUdict words and the 200 commonest English words, both US voices: every phoneme
    event espeak-ng emits is in ESPEAK_TO_PHONES (synthesize() raises on any that is not)."""
    import wordfreq

    from speechattn.data.synth import vocabulary

    everything = vocabulary()[2]
    words = [everything[i] for i in np.random.default_rng(11).choice(len(everything), 1000, replace=False)]
    words += wordfreq.top_n_list("en", 200)
    for voice in ("espeak:en-us", "espeak:en-us-nyc"):
        for start in range(0, len(words), 100):
            utterance = espeak().synthesize(" ".join(words[start : start + 100]) + ".", voice, rate_wpm=300)
            assert utterance.intervals
