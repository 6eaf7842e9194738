"""Speech in other languages synthesized on this machine with exact phone timing, labelled in the model's phones.

The multilingual model keeps the English model's 40 outputs (docs/how-it-works.md, "Other languages"): every phoneme
a synthesizer says, in any language, is written in IPA and mapped through speechattn.phones.IPA_TO_PHONES to the
English phone with the nearest mouth.  Two synthesizers give the timing:

- espeak-ng (its ~100 languages, each with any voice variant: es+m1, ru+f2): each phoneme event names the phoneme
  twice, once per synthesis: in espeak-ng's mnemonics (where a pause is "_", "_:") and in IPA (where a pause and a
  few reduced vowels have no name).  The two syntheses say the same phonemes (their timing may differ by a few ms:
  the audio and timing are the first's); a pause is silence, a nameless vowel belongs to the phone before it.
- festival's voices for other languages (Debian's festvox-*): `utt.save.segs` gives each segment's end in the
  voice's own phone set; FESTIVAL_VOICES maps each set to IPA.

`labelled(language, voice, text, engine)` is the one entry: audio and one label per 10 ms frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from speechattn.audio import num_frames, to_mono_16k
from speechattn.data.synth import (Festival, SynthConfig, SynthesisError, SynthJob, Utterance, espeak,
                                   phone_intervals)
from speechattn.phones import PHONE_TO_INDEX, SILENCE, from_ipa

ENGINES = ("espeak", "festival")


@dataclass(frozen=True)
class FestivalVoice:
    language: str  # ISO 639-1, as wordfreq and espeak-ng name it
    phone_set: str  # a key of FESTIVAL_IPA
    encoding: str  # the text encoding the voice reads
    package: str  # the Debian package that ships it


# festival's phone sets for other languages -> IPA (each set's definition: /usr/share/festival/**/*phones*.scm and the
# voices' festvox/*.scm).  A segment is looked up whole, then without a final stress digit (Italian, Catalan "a1")
# and a length mark (Czech, Finnish "a:").  Pauses map to "" (silence).
_PAUSES = {"#": "", "##": "", "_": "", "pau": "", "h#": ""}
FESTIVAL_IPA: dict[str, dict[str, str]] = {
    "italian": {**_PAUSES, "i": "i", "e": "e", "E": "ɛ", "a": "a", "o": "o", "O": "ɔ", "u": "u", "j": "j", "w": "w",
                "p": "p", "t": "t", "k": "k", "b": "b", "d": "d", "g": "ɡ", "f": "f", "s": "s", "S": "ʃ", "v": "v",
                "z": "z", "Z": "ʒ", "ts": "ts", "tS": "tʃ", "dz": "dz", "dZ": "dʒ", "m": "m", "n": "n", "J": "ɲ",
                "ng": "ŋ", "nf": "ɱ", "l": "l", "L": "ʎ", "r": "r"},
    "catalan": {**_PAUSES, "ax": "ə", "a": "a", "b": "b", "d": "d", "e": "e", "E": "ɛ", "f": "f", "g": "ɡ", "i": "i",
                "j": "j", "J": "ɲ", "k": "k", "l": "l", "L": "ʎ", "m": "m", "n": "n", "o": "o", "O": "ɔ", "p": "p",
                "r": "ɾ", "rr": "r", "s": "s", "S": "ʃ", "t": "t", "u": "u", "w": "w", "z": "z", "Z": "ʒ"},
    "czech": {**_PAUSES, "a": "a", "b": "b", "c": "ts", "c~": "tʃ", "ch": "x", "d": "d", "d~": "ɟ", "dz": "dz",
              "dz~": "dʒ", "e": "e", "f": "f", "g": "ɡ", "h": "ɦ", "i": "ɪ", "j": "j", "k": "k", "l": "l", "m": "m",
              "n": "n", "n*": "ŋ", "n~": "ɲ", "o": "o", "p": "p", "r": "r", "r~": "ʒ", "r~*": "ʃ", "s": "s",
              "s~": "ʃ", "t": "t", "t~": "c", "u": "u", "v": "v", "z": "z", "z~": "ʒ"},  # ř: the fricative's mouth
    "finnish": {**_PAUSES, "a": "ɑ", "e": "e", "i": "i", "o": "o", "u": "u", "y": "y", "@": "æ", "7": "ø", "&": "ə",
                "p": "p", "t": "t", "k": "k", "b": "b", "d": "d", "g": "ɡ", "f": "f", "T": "θ", "D": "ð", "s": "s",
                "z": "z", "S": "ʃ", "Z": "ʒ", "h": "h", "v": "ʋ", "m": "m", "n": "n", "N": "ŋ", "l": "l", "L": "l",
                "r": "r", "j": "j", "w": "w"},
    "msu_ru": {**_PAUSES, "ii": "i", "yy": "ɨ", "uu": "u", "ee": "e", "oo": "o", "aa": "a", "a": "ɐ", "e": "ɪ",
               "i": "ɪ", "y": "ɨ", "u": "ʊ", "ae": "ɪ", "ay": "ə", "ur": "ʊ", "c": "ts", "ch": "tɕ", "sch": "ɕ",
               "sh": "ʂ", "zh": "ʐ", "h": "x", "hh": "xʲ", "j": "j",
               **{plain * (1 + soft): plain + "ʲ" * soft for plain in "pbtdkgfvszmnlr" for soft in (0, 1)}},
    "hindi": {**_PAUSES, "a": "ə", "aa": "aː", "ih": "ɪ", "iy": "iː", "uh": "ʊ", "uw": "uː", "eh": "e", "ee": "eː",
              "ay": "ɛ", "oh": "o", "oo": "oː", "aw": "ɔ", "f": "f", "k": "k", "g": "ɡ", "ch": "tʃ", "T": "ʈ",
              "D": "ɖ", "N": "ɳ", "th": "t", "dh": "d", "n": "n", "p": "p", "b": "b", "m": "m", "y": "j", "r": "r",
              "l": "l", "v": "ʋ", "L": "ɭ", "R": "ɾ", "s": "s", "sh": "ʃ", "j": "dʒ", "h": "ɦ", "ksh": "kʃ",
              "sri": "ʃr", "x": "x", "kh": "k", "gh": "ɡ", "td": "ʈ", "tth": "t", "ddh": "d", "bh": "b", "zh": "ʒ",
              "@": "ə", "w": "w"},
}

# The voices training may use, and the ones kept for the check (bench/mouth_languages.py): never both.
FESTIVAL_VOICES: dict[str, FestivalVoice] = {
    "lp_diphone": FestivalVoice("it", "italian", "iso-8859-1", "festvox-italp16k"),
    "pc_diphone": FestivalVoice("it", "italian", "iso-8859-1", "festvox-itapc16k"),
    "upc_ca_ona_hts": FestivalVoice("ca", "catalan", "iso-8859-1", "festvox-ca-ona-hts"),
    "czech_dita": FestivalVoice("cs", "czech", "iso-8859-2", "festvox-czech-dita"),
    "czech_krb": FestivalVoice("cs", "czech", "iso-8859-2", "festvox-czech-krb"),
    "czech_ph": FestivalVoice("cs", "czech", "iso-8859-2", "festvox-czech-ph"),
    "czech_machac": FestivalVoice("cs", "czech", "iso-8859-2", "festvox-czech-machac"),
    "suo_fi_lj_diphone": FestivalVoice("fi", "finnish", "iso-8859-1", "festvox-suopuhe-lj"),
    "hy_fi_mv_diphone": FestivalVoice("fi", "finnish", "iso-8859-1", "festvox-suopuhe-mv"),
    "msu_ru_nsh_clunits": FestivalVoice("ru", "msu_ru", "utf-8", "festvox-ru"),
    "hindi_NSK_diphone": FestivalVoice("hi", "hindi", "utf-8", "festvox-hi-nsk"),
    "marathi_NSK_diphone": FestivalVoice("mr", "hindi", "utf-8", "festvox-mr-nsk"),
    "telugu_NSK_diphone": FestivalVoice("te", "hindi", "utf-8", "festvox-te-nsk"),
}


class LanguageSynthesisError(SynthesisError):
    pass


def _ipa_phones(ipa: str, mnemonic: str, language: str) -> tuple[int, ...]:
    """One espeak-ng phoneme event, named both ways -> phone indices: a pause is silence, a phoneme whose IPA is empty
    (a reduced vowel) has none (its frames belong to the phone before)."""
    if mnemonic.lstrip("',").startswith("_"):
        return (PHONE_TO_INDEX[SILENCE],)
    if ipa.startswith("("):  # "(en)": a switch to another language's rules, not a phoneme
        return ()
    return from_ipa(ipa.replace('"', ""), language) if ipa else ()


def espeak_utterance(language: str, variant: str, text: str, rate_wpm: int = 175, pitch: int = 50,
                     pitch_range: int = 50) -> Utterance:
    """espeak-ng's voice `language` with voice variant `variant` ("" for the voice's own, or m1, f2 ...) says `text`:
    16 kHz audio and its phone intervals in our inventory."""
    engine = espeak()
    voice = f"{language}+{variant}" if variant else language
    try:
        named = engine.synthesize(text, voice, rate_wpm, pitch, pitch_range, phones=False)
    except SynthesisError:
        if engine.lib.espeak_SetVoiceByName(language.encode()) != 0:
            raise LanguageSynthesisError(f"espeak-ng has no language {language!r} (speechattn align --language "
                                         "list names them)") from None
        raise
    spelled = engine.synthesize(text, voice, rate_wpm, pitch, pitch_range, phones=False, ipa=True)
    starts = [start for start, _ in named.events]
    if len(starts) != len(spelled.events):  # the timing may move by a few ms; the phonemes never
        raise SynthesisError(f"espeak-ng {voice}: the two syntheses of {text[:40]!r} differ in their phonemes")
    rate = engine.sample_rate
    events = [(round(start * rate), (ipa, mnemonic)) for (start, mnemonic), (_, ipa) in zip(named.events,
                                                                                          spelled.events)]
    total = round(named.duration * rate)
    intervals = phone_intervals(events, total, rate, f"espeak-ng {voice}",
                                to_phones=lambda names, source: _ipa_phones(*names, language))
    return Utterance(named.audio, intervals, text, f"espeak:{voice}", named.word_starts,
                     [(start, ipa) for start, ipa in zip(starts, (ipa for _, ipa in spelled.events))])


class FestivalLanguages(Festival):
    """festival's voices for other languages (FESTIVAL_VOICES), each reading text in its own encoding."""

    ENCODINGS = {name: voice.encoding for name, voice in FESTIVAL_VOICES.items()}

    def utterance(self, voice: str, text: str, rate_wpm: int = 175) -> Utterance:
        """festival's `voice` says `text`: 16 kHz audio and its phone intervals in our inventory."""
        language = FESTIVAL_VOICES[voice].language
        table = FESTIVAL_IPA[FESTIVAL_VOICES[voice].phone_set]

        def to_phones(segment: str, source: str) -> tuple[int, ...]:
            for name in (segment, segment.rstrip("1"), segment.rstrip("1").replace(":", "")):
                if name in table:
                    return from_ipa(table[name], language) if table[name] else (PHONE_TO_INDEX[SILENCE],)
            raise LanguageSynthesisError(f"{source}: the segment {segment!r} is not in its phone set "
                                         "(speechattn.data.synth_languages.FESTIVAL_IPA)")

        samples, rate, ends = self.segments(text, voice, rate_wpm)
        events, start = [], 0
        for segment, end_seconds in ends:
            events.append((start, segment))
            start = max(start, min(round(end_seconds * rate), len(samples)))
        intervals = phone_intervals(events, start, rate, f"festival {voice}", to_phones=to_phones)
        return Utterance(to_mono_16k(samples, rate, f"festival {voice}"), intervals, text, f"festival:{voice}")


_festival: FestivalLanguages | None = None


def festival() -> FestivalLanguages:
    """The process's festival (one long-running program per voice)."""
    global _festival
    if _festival is None:
        _festival = FestivalLanguages()
    return _festival


def utterance(language: str, voice: str, text: str, engine: str = "espeak", rate_wpm: int = 175, pitch: int = 50,
              pitch_range: int = 50) -> Utterance:
    """`text` in `language` said by `voice` of `engine` (see labelled): audio and phone intervals."""
    if engine == "espeak":
        return espeak_utterance(language, voice, text, rate_wpm, pitch, pitch_range)
    if engine != "festival":
        raise LanguageSynthesisError(f"unknown synthesizer {engine!r} (available: {', '.join(ENGINES)})")
    if voice not in FESTIVAL_VOICES:
        raise LanguageSynthesisError(f"festival voice {voice!r} is not one of {', '.join(FESTIVAL_VOICES)}")
    if FESTIVAL_VOICES[voice].language != language:
        raise LanguageSynthesisError(f"festival voice {voice} speaks {FESTIVAL_VOICES[voice].language}, "
                                     f"not {language!r}")
    return festival().utterance(voice, text, rate_wpm)


def labelled(language: str, voice: str, text: str, engine: str = "espeak", rate_wpm: int = 175, pitch: int = 50,
             pitch_range: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """Synthesize `text` in `language` and label every 10 ms frame with the model's phone (speechattn.phones.PHONES).

    engine "espeak": `language` is an espeak-ng voice (es, fr, ru, pt-br, ...), `voice` a voice variant ("" for
    its own voice, m1 ... m7, f1 ... f5, or any name in its !v folder); rate, pitch and range as espeak-ng's.
    engine "festival": `voice` a festival voice in FESTIVAL_VOICES (lp_diphone, czech_dita, msu_ru_nsh_clunits ...;
    its Debian package installed) and `language` its language; rate through Duration_Stretch, pitch its own.
    Returns (audio (N,) float32 at 16 kHz, labels (num_frames(N),) int64), frame i labelled by the phone at its
    centre (speechattn.data.labels.frame_labels), silence where no phone is.  An unknown language, voice or engine,
    or a phoneme with no phone, is a SynthesisError naming it.
    """
    from speechattn.data.labels import frame_labels

    said = utterance(language, voice, text, engine, rate_wpm, pitch, pitch_range)
    return said.audio, frame_labels(said.intervals, num_frames(len(said.audio)))


# The multilingual training corpus (recipes/synth-multi.yaml): jobs as the English corpus's (synth.SynthJob), their
# voice naming the language: espeak:es+m1, espeak:es (the voice's own variant), festival:lp_diphone.
PLAN_VERSION = 1
WORDS_OF = {"mr": "hi"}  # wordfreq has no Marathi list: the Marathi voice reads Hindi words (the same script)
LIST_WORDS = 30000  # words drawn from, the commonest of each language's wordfreq list


def script(word: str) -> str:
    """The Unicode script of a word's first letter (LATIN, CYRILLIC, DEVANAGARI ...)."""
    import unicodedata

    return unicodedata.name(word[0], "UNKNOWN").split()[0]


def is_word(text: str) -> bool:
    """Letters and the marks written on them only (Devanagari's vowel signs are marks, not letters)."""
    import unicodedata

    return bool(text) and text[0].isalpha() and all(unicodedata.category(c)[0] in "LM" for c in text)


@lru_cache(maxsize=None)
def vocabulary(language: str) -> tuple[tuple[str, ...], np.ndarray]:
    """(words, probabilities): wordfreq's commonest words of `language` (letters and marks only) written wholly in its script (the script of
    most of its 100 commonest words; loanwords in Latin letters dropped from a Cyrillic list), by frequency."""
    import wordfreq
    from collections import Counter

    words = [w for w in wordfreq.top_n_list(WORDS_OF.get(language, language), LIST_WORDS) if is_word(w)]
    if not words:
        raise LanguageSynthesisError(f"wordfreq has no word list for {language!r}")
    own = Counter(script(w) for w in words[:100]).most_common(1)[0][0]
    words = [w for w in words if all(script(c) == own for c in w)]
    weights = np.array([wordfreq.word_frequency(w, WORDS_OF.get(language, language)) for w in words])
    return tuple(words), weights / weights.sum()


@lru_cache(maxsize=None)
def cumulative_of(language: str) -> np.ndarray:
    """The cumulative distribution of vocabulary(language)'s probabilities, ending at exactly 1 (as numpy's choice)."""
    cumulative = np.cumsum(vocabulary(language)[1])
    return cumulative / cumulative[-1]


def voices(config: SynthConfig) -> dict[str, list[str]]:
    """engine -> the corpus's voices of that engine (espeak:es+m1 ..., festival:lp_diphone ...)."""
    variants = ["" if v == "default" else f"+{v}" for v in config.voice_variants]
    return {"espeak": [f"espeak:{language}{variant}" for language in config.languages for variant in variants],
            "festival": [f"festival:{name}" for name in config.festival_voices]}


def language_of(voice: str) -> str:
    engine, name = voice.split(":", 1)
    return name.split("+", 1)[0] if engine == "espeak" else FESTIVAL_VOICES[name].language


def plan_languages(config: SynthConfig) -> list[SynthJob]:
    """The multilingual corpus as a deterministic list of jobs: job n depends only on (seed, n).  An engine by
    config.engine_shares, then a voice of it (a language and variant) uniformly; words by frequency in its language
    (frequent_word_share of them; the rest uniformly from the list)."""
    from speechattn.data.synth import MEAN_SECONDS_PER_WORD

    check_languages(config)
    by_engine = voices(config)
    shares = np.array(config.engine_shares, dtype=float) / sum(config.engine_shares)
    low, high = config.words_per_utterance
    expected_seconds = MEAN_SECONDS_PER_WORD * (low + high) / 2 + sum(config.edge_silence_seconds)
    jobs = []
    for number in range(int(np.ceil(config.hours * 3600 / expected_seconds))):
        rng = np.random.default_rng([config.seed, number, PLAN_VERSION])
        choices = by_engine[config.engines[rng.choice(len(config.engines), p=shares)]]
        voice = choices[rng.integers(len(choices))]
        words, probabilities = vocabulary(language_of(voice))
        cumulative = cumulative_of(language_of(voice))
        # words[cumulative.searchsorted(rng.random(), "right")] is rng.choice(len(words), p=probabilities), drawn as
        # numpy draws it (the same numbers), without summing 30,000 probabilities a word
        chosen = [words[cumulative.searchsorted(rng.random(), "right")] if rng.random() < config.frequent_word_share
                  else words[rng.integers(len(words))] for _ in range(rng.integers(low, high + 1))]
        text = " ".join(w + ("," if i < len(chosen) - 1 and rng.random() < config.comma_share else "")
                        for i, w in enumerate(chosen))
        text = text[0].upper() + text[1:] + rng.choice([".", ".", ".", "?", "!"])
        lead, trail = rng.uniform(*config.edge_silence_seconds, size=2)
        jobs.append(SynthJob(number, text, voice, int(rng.integers(*config.rate_wpm, endpoint=True)),
                             int(rng.integers(*config.pitch, endpoint=True)),
                             int(rng.integers(*config.pitch_range, endpoint=True)),
                             round(float(lead), 3), round(float(trail), 3)))
    return jobs


def check_languages(config: SynthConfig) -> None:
    """Refuse a multilingual corpus that cannot be made, naming the key."""
    from speechattn.errors import ConfigError

    if set(config.engines) - set(ENGINES):
        raise ConfigError(f"synth.engines: the multilingual corpus uses {' and '.join(ENGINES)}, not "
                          f"{list(config.engines)}")
    if "espeak" in config.engines and not config.languages:
        raise ConfigError("synth.languages: name espeak-ng's languages (es, fr, ...) for the multilingual corpus")
    if "festival" in config.engines and not config.festival_voices:
        raise ConfigError("synth.festival_voices: name festival's voices, or leave festival out of synth.engines")
    unknown = [name for name in config.festival_voices if name not in FESTIVAL_VOICES]
    if unknown:
        raise ConfigError(f"synth.festival_voices: unknown voice(s) {unknown} (known: {', '.join(FESTIVAL_VOICES)})")


def say_language(job: SynthJob) -> Utterance:
    """A job of the multilingual corpus, synthesized (build_corpus's worker calls it)."""
    engine, name = job.voice.split(":", 1)
    language, _, variant = name.partition("+")
    if engine == "festival":
        return utterance(FESTIVAL_VOICES[name].language, name, job.text, "festival", job.rate_wpm)
    return utterance(language, variant, job.text, "espeak", job.rate_wpm, job.pitch, job.pitch_range)


def read_languages_corpus(config: SynthConfig, directory, progress: bool = True):
    """Build (or reuse) the multilingual corpus in `directory`: lhotse (RecordingSet, SupervisionSet), speaker =
    voice."""
    from speechattn.data.synth import read_synth_corpus

    return read_synth_corpus(config, directory, progress, plan_languages, say_language)
