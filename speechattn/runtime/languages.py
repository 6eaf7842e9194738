"""Words in other languages: espeak-ng's pronunciation of each word as the model's English phones.

`align --language LANG` (and `transcribe --dialog`, `speechattn-rhubarb -d`, `mic --script`, the server's `/align`
and follow-along `language`) take the words' phones from here instead of CMUdict: each written word goes to espeak-ng
(the `espeakng-loader` wheel, driven by speechattn/runtime/espeak.py) on its own, so its phonemes stay its own, in IPA;
speechattn.phones.from_ipa turns every phoneme into the nearest of the 40.  LexiconOfLanguage answers
`words(text, max_words)` as the kit's Lexicon does, so the aligner cannot tell them
apart; each word's source is "espeak-ng".

Words are runs of letters and digits in any script, joined by an apostrophe or hyphen (l'arbre, aujourd'hui);
espeak-ng reads numbers in the language itself (23: veintitrés).  A word espeak-ng gives no phonemes is left out, as
the English lexicon leaves out what it cannot say.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from pathlib import Path

from speechattn.errors import SpeechattnError

WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")
LANGUAGES_HINT = "speechattn align --language list names them"
LANGUAGE_NAME = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8}){0,3}")  # es, pt-BR, en-GB-x-rp: a name a client may send
MAX_KNOWN_WORDS = 200_000  # words kept pronounced per language: a server's lexicon lives as long as the server
ESPEAK_LOCK = threading.Lock()  # libespeak-ng keeps one voice for the process: a server's threads take turns


class LanguageError(SpeechattnError):
    pass


class EspeakMissing(LanguageError):
    pass


def _espeak():
    try:
        import espeakng_loader  # noqa: F401
    except ImportError:
        raise EspeakMissing("--language needs espeak-ng: pip install '.[languages]' in a clone of speechattn (or "
                            "pip install espeakng-loader)") from None
    from speechattn.runtime.espeak import espeak

    return espeak()


@lru_cache(maxsize=1)
def languages() -> list[str]:
    """The voice names espeak-ng's data ships (es, fr, de, pt-BR, ...): the file names below its lang folder."""
    root = Path(_espeak().data_path) / "lang"
    return sorted(path.name for path in root.rglob("*") if path.is_file())


class LexiconOfLanguage:
    """The words of a text in `language` (an espeak-ng voice name) with their phones, as the kit's Lexicon.words."""

    def __init__(self, language: str):
        from speechattn.runtime.espeak import SynthesisError

        self.language = language
        self.known: dict[str, tuple[str, ...]] = {}  # written word -> its phones, pronounced once
        self.engine = _espeak()
        try:
            with ESPEAK_LOCK:
                self.engine.set_voice(language)
        except SynthesisError:
            raise LanguageError(f"espeak-ng has no language {language!r}: {LANGUAGES_HINT}") from None

    def phones(self, word: str) -> tuple[str, ...]:
        """One written word -> our phones (PhoneMappingError naming a phoneme with none)."""
        from speechattn.phones import PHONES, from_ipa

        if word not in self.known:
            if len(self.known) >= MAX_KNOWN_WORDS:
                self.known.clear()
            with ESPEAK_LOCK:
                phonemes = self.engine.ipa(word, self.language)
            self.known[word] = tuple(PHONES[index] for phoneme in phonemes for index in from_ipa(phoneme, self.language))
        return self.known[word]

    def words(self, text: str, max_words: int | None = None, on_chars=None) -> list:
        """The kit's Word for each spoken word (one pronunciation, source "espeak-ng"); the limits of the kit's
        Lexicon.words, checked before any word is pronounced; on_chars as its."""
        from speechattn_export.words import MAX_TEXT_CHARS, MAX_TOKEN_CHARS, Word, token_too_long, too_many_words

        if len(text) > MAX_TEXT_CHARS:
            raise ValueError(f"a text of {len(text):,} characters (at most {MAX_TEXT_CHARS:,}): split it")
        spans = []
        for match in WORD.finditer(text):
            if match.end() - match.start() > MAX_TOKEN_CHARS:
                raise token_too_long(text, match.start(), match.end())
            spans.append(match.span())
            if max_words is not None and len(spans) > max_words:
                raise too_many_words(max_words)
        words = []
        done = 0
        for start, end in spans:
            phones = self.phones(text[start:end])
            if phones:
                words.append(Word(text[start:end], text[start:end].lower(), (phones,), "espeak-ng", start, end))
            if on_chars is not None:
                on_chars(end - done)
                done = end
        return words


class Lexicons:
    """A server's lexicons, shared by its threads: the kit's English one (language None) and one per espeak-ng
    language asked for, each loaded at its first request.  `get` refuses a name no language could have, and one
    espeak-ng does not speak, with a LanguageError (EspeakMissing where espeak-ng is not installed)."""

    def __init__(self) -> None:
        self.loaded: dict[str | None, object] = {}
        self.loading = threading.Lock()

    def get(self, language: str | None = None):
        if language is not None and (not isinstance(language, str) or not LANGUAGE_NAME.fullmatch(language)):
            raise LanguageError(f"language must be an espeak-ng language name (es, fr, pt-BR ...), not "
                                f"{str(language)[:40]!r}")
        with self.loading:
            if language not in self.loaded:
                if language is None:
                    from speechattn_export.words import Lexicon

                    self.loaded[language] = Lexicon.load()
                else:
                    self.loaded[language] = LexiconOfLanguage(language)
            return self.loaded[language]


@lru_cache(maxsize=1)
def language_names() -> dict[str, str]:
    """espeak-ng's languages by their English name, lower case (spanish: es, french: fr), from each voice file's
    `name` line (Spanish (Spain)); where two share a name (Spanish (Latin America): es-419) the shorter code."""
    names: dict[str, str] = {}
    for path in sorted((Path(_espeak().data_path) / "lang").rglob("*"), key=lambda p: (len(p.name), p.name)):
        if path.is_file():
            line = next((held for held in path.read_text(errors="replace").splitlines() if held.startswith("name ")),
                        "")
            names.setdefault(line[5:].split("(")[0].split("//")[0].strip().lower(), path.name)
    return names


def espeak_language(tag: str, name: str, where: str = "its Language header") -> str | None:
    """A script's language tag (BCP 47: es, es-MX, pt-BR, en-US; or an English name: Spanish, as lhotse's recipes
    write it) as espeak-ng's language name: the whole tag where espeak-ng has it (pt-BR, es-419, fr-BE), else its
    language (es-MX: es, fr-CA: fr); None for English, which keeps the kit's lexicon (CMUdict), as a script without
    a tag does.  One espeak-ng lacks, or no espeak-ng: a LanguageError naming the script, its tag and `where`."""
    parts = tag.strip().replace("_", "-").lower().split("-")
    if parts[0] in ("en", "eng", "english"):
        return None
    try:
        codes = {language.lower(): language for language in languages()}
        named = language_names()
    except EspeakMissing:
        raise EspeakMissing(f"{name} is in {tag} ({where}): its words need espeak-ng: pip install "
                            "espeakng-loader (or give --language)") from None
    for length in range(len(parts), 0, -1):
        if "-".join(parts[:length]) in codes:
            return codes["-".join(parts[:length])]
    if tag.strip().lower() in named:
        return named[tag.strip().lower()]
    raise LanguageError(f"{name} is in {tag!r} ({where}), a language espeak-ng does not speak "
                        f"({LANGUAGES_HINT}): give --language")
