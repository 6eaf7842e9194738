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

import numpy as np

from speechattn.audio import num_frames, to_mono_16k
from speechattn.data.synth import Festival, SynthesisError, Utterance, espeak, phone_intervals
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
    engine.lib.espeak_ng_SetPhonemeEvents(1, 0)  # the English corpus reads mnemonics
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
        if samples.ndim > 1:
            samples = samples.mean(axis=1)
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
