"""Words to phones: text normalisation, the bundled pronunciation lexicon (CMUdict, every variant, stress removed)
and a grapheme-to-phoneme fallback (models/g2p.onnx) for words it lacks.  The same API and results as
js/words.mjs; tests/words-vectors.json keeps the two equal.

    from speechattn_export.words import Lexicon
    lexicon = Lexicon.load()                    # or Lexicon.load("names.dict"): CMUdict/MFA lines that win
    for word in lexicon.words("Dr. Smith paid $5 for the 21st XYZ widget."):
        print(word.text, word.spoken, word.pronunciations[0], word.source, word.start_char, word.end_char)

From text to spoken words (one table each below; every spoken word keeps the span of its written token):

    tokens         TOKEN_PATTERN finds the written tokens: money ($5, £1,200.50), ordinals (21st), decades (1990s,
                   80s, 90's), clock times (3:30), numbers (42, 1,200, 3.5, .5, 50%), words (letters of ASCII and
                   Latin-1/Extended-A, joined by - ' ’ or ., with one ' or ’ before and one ' ’ or . after) and
                   SYMBOLS (& % + = @);
                   any other character (space, punctuation, quotes, other scripts, emoji) only separates tokens
    numbers        cardinals without "and" (1,200: one thousand two hundred), digits after a point one by one,
                   4-digit years 1100-1999 and 2010-2099 in pairs (1999: nineteen ninety nine, 1905: nineteen oh
                   five), a leading zero or more than 15 digits digit by digit, CURRENCIES ($5.50: five dollars and
                   fifty cents), % as percent, ordinals (21st: twenty first), decades plural (1990s: nineteen nineties),
                   clock times (3:30: three thirty, 7:00: seven o'clock, 12:05: twelve oh five)
    abbreviations  ABBREVIATIONS (mr, dr, vs, etc, e.g. ...: the final dot is theirs); BEFORE_A_NAME when a capital
                   letter follows after spaces (St. Louis: saint, Main St.: street)
    initials       letters each followed by a dot (U.S.A., J. R. R.) spelt as letter names ("u." "s." "a.", CMUdict's
                   entries for the letters); so is a word the lexicon lacks without a vowel (km, XKCD) or of 2 or 3
                   capitals (UCX; COVID goes to g2p)
    the rest       lower case, accents removed and FOLD (ß: ss); a final dot dropped; an apostrophe before or after
                   kept only where the lexicon has the word with it ('em, dogs'); a word the lexicon lacks split at
                   its hyphens and dots (jack-o-lantern: jack o lantern) when it has them

A spoken word is looked up in the user dictionary, then CMUdict, then as a possessive ('s after a word either has:
IH Z, S or Z by its last phone), then given to the g2p model.

Bounded work for bounded input, checked before the work: Lexicon.words refuses (ValueError) a text of more than
MAX_TEXT_CHARS characters, a token of more than MAX_TOKEN_CHARS (one 800 kB "word" cost 11 GB in g2p) and, counting
while it normalises and before it pronounces anything, more than MAX_WORDS spoken words (TooManyWords); a user
dictionary is read with a bound (MAX_DICTIONARY_BYTES) and never from a device or a pipe.  Messages quote the input
cut to QUOTE_CHARS (shorten).

Spans: start_char and end_char index the text's code points (Python str); JavaScript indexes UTF-16 code units,
the same for text without characters beyond U+FFFF (each emoji before a word moves JS's spans one further).
"""

from __future__ import annotations

import functools
import gzip
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
BUNDLED_LEXICON = HERE / "lexicon" / "cmudict.txt.gz"  # word TAB "PH PH ..." TAB variant ...; lexicon/README.md
G2P_MODEL = HERE / "models" / "g2p.onnx"
PHONES = tuple("AA AE AH AO AW AY B CH D DH EH ER EY F G HH IH IY JH K L M N NG "
               "OW OY P R S SH T TH UH UW V W Y Z ZH".split())  # the model's inventory less silence

# ---------------------------------------------------------------------------------------------------------
# The tables.  Every spoken word they produce is in CMUdict but zeroth, trillionth, twelves, thirteens and nineteens
# (which g2p says).

LETTER = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u017f"  # a regex class body: ASCII, Latin-1 and Extended-A letters
FOLD = {  # letters that are not a-z once lower-cased and stripped of accents; ’ is an apostrophe
    "æ": "ae", "ð": "d", "ø": "o", "þ": "th", "ß": "ss", "đ": "d", "ħ": "h", "ı": "i", "ĳ": "ij", "ĸ": "k",
    "ŀ": "l", "ł": "l", "ŉ": "n", "ŋ": "ng", "œ": "oe", "ŧ": "t", "ſ": "s", "’": "'",
}
ABBREVIATIONS = {  # written (lower case, without the final dot) -> spoken
    "mr": "mister", "mrs": "missus", "dr": "doctor", "st": "street", "mt": "mount", "vs": "versus",
    "etc": "et cetera", "e.g": "for example", "i.e": "that is", "jr": "junior", "sr": "senior", "prof": "professor",
}
BEFORE_A_NAME = {"st": "saint"}  # instead of ABBREVIATIONS when the next token starts with a capital after spaces
SYMBOLS = {"&": "and", "%": "percent", "+": "plus", "=": "equals", "@": "at"}
CURRENCIES = {  # symbol -> (one, many, one hundredth, many hundredths)
    "$": ("dollar", "dollars", "cent", "cents"),
    "£": ("pound", "pounds", "penny", "pence"),
    "€": ("euro", "euros", "cent", "cents"),
}
ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen").split()
TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
SCALES = ((10**12, "trillion"), (10**9, "billion"), (10**6, "million"), (10**3, "thousand"))
ORDINALS = {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth", "nine": "ninth",
            "twelve": "twelfth"}  # the others: twenty -> twentieth, four -> fourth
PLURALS = {"six": "sixes"}  # the others: ninety -> nineties, hundred -> hundreds
MAX_CARDINAL_DIGITS = 15  # longer numbers (and those with a leading zero) are read digit by digit
VOWELS = "aeiouy"  # a word the lexicon lacks and without one of these is spelt (km, XKCD)
MAX_SPELT_CAPITALS = 3  # so is a word of 2 or 3 capitals (UCX, but COVID goes to g2p)

INTEGER = "[0-9]{1,3}(?:,[0-9]{3})+(?![0-9])|[0-9]+"
NUMBER = f"(?:{INTEGER})(?:\\.[0-9]+)?|\\.[0-9]+"
TOKEN_PATTERN = "|".join((  # in order: the first alternative that matches at a position wins
    f"[$£€](?:{NUMBER})",  # money
    f"(?:{INTEGER})(?:[sS][tT]|[nN][dD]|[rR][dD]|[tT][hH])(?![{LETTER}0-9])",  # ordinal
    f"(?:[0-9]{{4}}|[0-9]{{2}})['’]?s(?![{LETTER}0-9])",  # decade
    "(?:[01]?[0-9]|2[0-3]):[0-5][0-9](?![0-9])",  # clock time
    f"(?:{NUMBER})%?",  # number
    f"['’]?[{LETTER}]+(?:[-'’.][{LETTER}]+)*['’.]?",  # word
    "[&%+=@]",  # symbol
))  # the same string in js/words.mjs (the vectors check it): plain classes only, no \d \w \s or flags
TOKEN = re.compile(TOKEN_PATTERN)
ONE_LETTER = re.compile(f"[{LETTER}]")
LETTER_AFTER_SPACES = re.compile(f" *([{LETTER}])")
APOSTROPHES = "'’"

MAX_TEXT_CHARS = 50_000_000  # as `speechattn align` reads at most 50 MB of a text
MAX_WORDS = 200_000  # spoken words: about 20 hours of speech; the aligner's word graph is built whole
MAX_TOKEN_CHARS = 256  # a written token: the longest words in English dictionaries have 45 letters, the vectors hold
#                        one of 210; g2p's cost grows with the length (an 800 kB "word" took 11 GB)
MAX_DICTIONARY_BYTES = 20_000_000  # a user dictionary (CMUdict itself is 3.6 MB)
QUOTE_CHARS = 60  # input quoted in a message is cut to this many characters


class TooManyWords(ValueError):
    """A text with more spoken words than the limit, found while counting, before any word is pronounced."""


def shorten(text: str, limit: int = QUOTE_CHARS) -> str:
    """Input as a message quotes it: at most `limit` characters, an ellipsis where it was cut."""
    return text if len(text) <= limit else text[:limit - 1] + "…"


# ---------------------------------------------------------------------------------------------------------
# Letters and numbers.

def fold(word: str) -> str:
    """Lower case, accents removed, FOLD applied: the form the lexicon is keyed by (Café -> cafe)."""
    decomposed = unicodedata.normalize("NFD", word.lower())
    return "".join(FOLD.get(c, c) for c in decomposed if not "\u0300" <= c <= "\u036f")


def cardinal(n: int) -> list[str]:
    if n == 0:
        return ["zero"]
    words = []
    for size, name in SCALES:
        if n >= size:
            words += below_thousand(n // size) + [name]
            n %= size
    return words + below_thousand(n) if n else words


def below_thousand(n: int) -> list[str]:
    words = [ONES[n // 100], "hundred"] if n >= 100 else []
    n %= 100
    if n >= 20:
        words.append(TENS[n // 10])
        n %= 10
    return words + [ONES[n]] if n else words


def integer_words(digits: str) -> list[str]:
    if (len(digits) > 1 and digits[0] == "0") or len(digits) > MAX_CARDINAL_DIGITS:
        return [ONES[int(d)] for d in digits]
    return cardinal(int(digits))


def year_words(digits: str) -> list[str] | None:
    """1999 -> nineteen ninety nine, 1900 -> nineteen hundred, 1905 -> nineteen oh five; None if not a year."""
    if not re.fullmatch("[0-9]{4}", digits) or not (1100 <= int(digits) <= 1999 or 2010 <= int(digits) <= 2099):
        return None
    high, low = divmod(int(digits), 100)
    return cardinal(high) + (["hundred"] if low == 0 else ["oh", ONES[low]] if low < 10 else cardinal(low))


def number_words(written: str) -> list[str]:
    """1,200.5 -> one thousand two hundred point five; .5 -> point five."""
    integer, _, fraction = written.replace(",", "").partition(".")
    return (integer_words(integer) if integer else []) + (["point"] + [ONES[int(d)] for d in fraction] if fraction else [])


def ordinal(word: str) -> str:
    return ORDINALS.get(word) or (word[:-1] + "ieth" if word.endswith("y") else word + "th")


def plural(word: str) -> str:
    return PLURALS.get(word) or (word[:-1] + "ies" if word.endswith("y") else word + "s")


def money_words(symbol: str, written: str) -> list[str]:
    one, many, one_hundredth, hundredths = CURRENCIES[symbol]
    integer, _, fraction = written.replace(",", "").partition(".")
    if fraction and len(fraction) != 2:  # $3.5: three point five dollars
        return number_words(written) + [many]
    units, cents = int(integer or "0"), int(fraction or "0")
    words = []
    if units or not cents:  # $0.99: ninety nine cents
        words = integer_words(integer or "0") + [one if units == 1 else many]
    if cents:
        words += (["and"] if words else []) + cardinal(cents) + [one_hundredth if cents == 1 else hundredths]
    return words


def numeric_words(token: str) -> list[str]:
    """A money, ordinal, decade, clock time or number token -> its spoken words."""
    if token[0] in CURRENCIES:
        return money_words(token[0], token[1:])
    if ":" in token:  # 3:30 three thirty, 7:00 seven o'clock, 12:05 twelve oh five
        hours, minutes = token.split(":")
        said = ["o'clock"] if minutes == "00" else (["oh"] if minutes[0] == "0" else []) + cardinal(int(minutes))
        return cardinal(int(hours)) + said
    if token[-2:].lower() in ("st", "nd", "rd", "th"):
        words = integer_words(token[:-2].replace(",", ""))
        return words[:-1] + [ordinal(words[-1])]
    if token.endswith("s"):
        digits = token.rstrip("s").rstrip(APOSTROPHES)
        words = year_words(digits) or integer_words(digits)
        return words[:-1] + [plural(words[-1])]
    if token.endswith("%"):
        return number_words(token[:-1]) + ["percent"]
    return year_words(token) or number_words(token)


# ---------------------------------------------------------------------------------------------------------
# Text -> spoken words with spans.

Span = tuple[int, int, str]  # (start_char, end_char, spoken word)


def normalise(text: str, known: Callable[[str], bool], max_words: int | None = None) -> list[Span]:
    """Every spoken word of the text with the span of the written token it came from.  known(spoken) says
    whether the lexicon has a word (the choices about apostrophes, hyphens and capitals depend on it).  ValueError
    for a token longer than MAX_TOKEN_CHARS; TooManyWords as soon as there are more than `max_words` (None: no
    limit), so a huge text costs no more than the limit."""
    if max_words is not None:
        check_tokens(text, max_words)
    spans: list[Span] = []
    for match in TOKEN.finditer(text):
        start, end = match.start(), match.end()
        if end - start > MAX_TOKEN_CHARS:
            raise token_too_long(text, start, end)
        if max_words is not None and len(spans) > max_words:
            break
        token = match.group()
        if token[0] in SYMBOLS and len(token) == 1:
            spans.append((start, end, SYMBOLS[token]))
        elif token[0] in CURRENCIES or token[0] in "0123456789.":
            spans += [(start, end, word) for word in numeric_words(token)]
        else:
            spans += word_spans(text, start, end, known)
    if max_words is not None and len(spans) > max_words:
        raise too_many_words(max_words)
    return spans


def check_tokens(text: str, max_words: int) -> None:
    """The limits by the token pattern alone, before any word is looked up: every written token is at least one
    spoken word, so more than max_words tokens is TooManyWords (a 49 MB text: 0.15 s, where normalising the words
    up to the limit took 0.8 s); a token past MAX_TOKEN_CHARS is a ValueError."""
    for count, match in enumerate(TOKEN.finditer(text), 1):
        if match.end() - match.start() > MAX_TOKEN_CHARS:
            raise token_too_long(text, match.start(), match.end())
        if count > max_words:
            raise too_many_words(max_words)


def token_too_long(text: str, start: int, end: int) -> ValueError:
    return ValueError(f'character {start:,}: "{shorten(text[start:start + QUOTE_CHARS + 1])}" is one word of '
                      f"{end - start:,} characters (at most {MAX_TOKEN_CHARS}); is this text?")


def too_many_words(max_words: int) -> TooManyWords:
    return TooManyWords(f"more than {max_words:,} words (at most {max_words:,}, about 20 hours of speech): split the "
                        "text")


def word_spans(text: str, start: int, end: int, known: Callable[[str], bool]) -> list[Span]:
    token = text[start:end]
    key = token[:-1].lower() if token.endswith(".") else token.lower()
    if key in ABBREVIATIONS:
        following = LETTER_AFTER_SPACES.match(text, end)
        spoken = BEFORE_A_NAME.get(key) if following and is_capital(following.group(1)) else None
        return [(start, end, word) for word in (spoken or ABBREVIATIONS[key]).split()]
    letters = (token[:-1] if token.endswith(".") else token).split(".")
    if all(ONE_LETTER.fullmatch(letter) for letter in letters) and (len(letters) > 1 or token.endswith(".")):
        return [(start, end, fold(letter) + ".") for letter in letters]  # initials: U.S.A., J.
    if token.endswith("."):
        end -= 1
    if text[start] in APOSTROPHES and not known(fold(text[start:end])):
        start += 1
    if text[end - 1] in APOSTROPHES and not known(fold(text[start:end])):
        end -= 1
    return [(start, end, word) for word in spoken_parts(text[start:end], known)]


def spoken_parts(written: str, known: Callable[[str], bool]) -> list[str]:
    """One word without its outer punctuation -> spoken words: itself if known, else its parts between hyphens and
    dots, else its letters if it has no vowel or is a short run of capitals, else itself (for g2p)."""
    word = fold(written)
    if known(word):
        return [word]
    if "-" in written or "." in written:
        return [spoken for part in re.split("[-.]", written) for spoken in spoken_parts(part, known)]
    if all(ONE_LETTER.fullmatch(c) for c in written) and (
            not any(c in VOWELS for c in word) or 2 <= len(written) <= MAX_SPELT_CAPITALS and all(map(is_capital, written))):
        return [fold(letter) + "." for letter in written]
    return [word]


def is_capital(c: str) -> bool:
    return c.lower() != c  # JS: c.toLowerCase() !== c (isupper() would differ on letters such as ĸ)


SENTENCE_MARKS = ".!?;"  # between two words, one of these or a line break: the second starts a sentence


def sentence_starts(text: str, words) -> list[int]:
    """The positions of the words (Word objects of this text, in order) that start a sentence or a line, 0 first:
    where the aligner lets a reader jump back or ahead to (a repeated line, a skipped sentence)."""
    starts, previous_end = [0], 0
    for i, word in enumerate(words):
        between = text[previous_end:word.start_char]
        if i and ("\n" in between or any(mark in between for mark in SENTENCE_MARKS)):
            starts.append(i)
        previous_end = word.end_char
    return starts


# ---------------------------------------------------------------------------------------------------------
# The grapheme-to-phoneme fallback.

class G2P:
    """models/g2p.onnx: letters (1, L) int64 -> log_probs (1, L*S, C); its alphabet and output symbols come from
    its metadata.  onnxruntime is imported here, when the first unknown word needs it."""

    def __init__(self, path: str | Path = G2P_MODEL):
        import onnxruntime

        from speechattn_export.stream_client import input_file

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1  # one short word at a time: threads cost more than they save
        self.session = onnxruntime.InferenceSession(input_file(path, "g2p model"), options,
                                                    providers=["CPUExecutionProvider"])
        metadata = self.session.get_modelmeta().custom_metadata_map
        if metadata.get("model_type") != "speechattn-g2p":
            raise ValueError(f"{path}: not a speechattn g2p model (metadata model_type is missing)")
        self.letter_ids = {letter: 1 + i for i, letter in enumerate(metadata["letters"])}
        self.symbols = metadata["symbols"].split(",")
        self.blank = self.symbols.index(metadata["blank"])
        self.cache: dict[str, tuple[str, ...]] = {}

    def phones(self, word: str) -> tuple[str, ...]:
        """One lower-case word -> its phones; letters outside the model's alphabet are skipped.  Any length: the
        cost grows with it (800,000 letters took 11 GB), so Lexicon bounds the words it passes (MAX_TOKEN_CHARS)."""
        if word not in self.cache:
            import numpy as np

            ids = [self.letter_ids[c] for c in word if c in self.letter_ids]
            if not ids:
                return ()
            log_probs = self.session.run(None, {"letters": np.array([ids], dtype=np.int64)})[0][0]  # (L*S, C)
            if len(self.cache) > 10_000:
                self.cache.clear()
            self.cache[word] = ctc_greedy(log_probs.argmax(-1).tolist(), self.symbols, self.blank)
        return self.cache[word]


def ctc_greedy(best: list[int], symbols: list[str], blank: int) -> tuple[str, ...]:
    """The best class of every slot -> symbols: repeats collapsed, blanks dropped."""
    return tuple(symbols[k] for i, k in enumerate(best) if k != blank and (i == 0 or best[i - 1] != k))


@functools.lru_cache(maxsize=1)
def bundled_g2p() -> G2P:
    return G2P(G2P_MODEL)


# ---------------------------------------------------------------------------------------------------------
# Dictionaries and the lexicon.

Pronunciations = tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Word:
    text: str  # the written token it came from, as in the text ("$5", "U.S.A.", "Dr.")
    spoken: str  # the normalised spoken word (lower case) that was looked up ("five", "u.", "doctor")
    pronunciations: Pronunciations  # every variant, phones of PHONES; the first is CMUdict's first
    source: str  # "user", "cmudict" or "g2p"
    start_char: int  # text[start_char:end_char] == self.text
    end_char: int


@functools.lru_cache(maxsize=1)
def bundled_entries() -> dict[str, str]:
    """CMUdict: word -> its variants as written in the file ("PH PH\\tPH PH"), parsed when looked up."""
    text = gzip.decompress(BUNDLED_LEXICON.read_bytes()).decode()
    return dict(line.split("\t", 1) for line in text.splitlines())


def parse_user_dictionary(text: str, name: str) -> dict[str, Pronunciations]:
    """CMUdict or MFA lines: WORD PH1 PH2 ... (WORD(2) for a variant, stress digits and MFA's probabilities
    before the phones allowed and dropped, # comments).  ValueError naming name:line for a bad line."""
    variants: dict[str, list[tuple[str, ...]]] = {}
    lines = (text[1:] if text.startswith("\ufeff") else text).split("\n")  # lines as editors number them
    for number, line in enumerate(lines, 1):
        fields = re.findall("[^ \t\r]+", line.split("#")[0])
        if not fields or fields[0].startswith(";;;"):
            continue
        if re.search("[,;]", fields[0][1:]):  # CSV-like "password,P AE S": the word would be "password,p"
            raise ValueError(f'{name}:{number}: "{shorten(fields[0])}" holds a comma or semicolon: separate the word '
                             "and its phones with spaces or a tab (WORD PH1 PH2 ...)")
        word = fold(re.sub(r"\([0-9]+\)$", "", fields[0]))
        symbols = fields[1:]
        while symbols and re.fullmatch("[0-9.]+", symbols[0]):  # MFA: pronunciation and silence probabilities
            symbols = symbols[1:]
        if not symbols:
            raise ValueError(f'{name}:{number}: "{shorten(fields[0])}" has no phones (expected WORD PH1 PH2 ...)')
        phones = tuple(re.sub("[012]$", "", symbol.upper()) for symbol in symbols)
        for symbol, phone in zip(symbols, phones):
            if phone not in PHONES:
                raise ValueError(f'{name}:{number}: "{shorten(symbol)}" is not a phone ({" ".join(PHONES)}; stress '
                                 "digits allowed)")
        if phones not in variants.setdefault(word, []):
            variants[word].append(phones)
    return {word: tuple(v) for word, v in variants.items()}


@functools.lru_cache(maxsize=8)
def user_entries(path: str, stamp: tuple[int, int]) -> dict[str, Pronunciations]:
    """Cached per path and (modification time, size): an edited file is read again.  At most MAX_DICTIONARY_BYTES,
    never from a device or a pipe (ValueError)."""
    from speechattn_export.stream_client import read_bounded

    try:
        text = read_bounded(path, "dictionary", MAX_DICTIONARY_BYTES).decode("utf-8")  # newlines as they are, as JS
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text") from None
    return parse_user_dictionary(text, path)


def possessive(variant: tuple[str, ...]) -> tuple[str, ...]:
    last = variant[-1] if variant else ""
    return variant + (("IH", "Z") if last in ("S", "Z", "SH", "ZH", "CH", "JH") else
                      ("S",) if last in ("P", "T", "K", "F", "TH") else ("Z",))


class Lexicon:
    """The bundled CMUdict, an optional user dictionary that wins for its words, and the g2p fallback."""

    def __init__(self, entries: dict[str, str], user: dict[str, Pronunciations], g2p: Callable[[], G2P] = bundled_g2p):
        self.entries = entries
        self.user = user
        self.g2p = g2p

    @classmethod
    def load(cls, user_dictionary: str | Path | None = None) -> Lexicon:
        """The bundled lexicon and g2p model (read once per process), with user_dictionary's words in front
        (ValueError in one line for a path that is not a readable file of at most MAX_DICTIONARY_BYTES: nothing
        there, a directory, a device such as /dev/zero, a pipe)."""
        from speechattn_export.stream_client import input_file

        user = {}
        if user_dictionary is not None:
            path = input_file(user_dictionary, "dictionary")
            status = Path(path).stat()
            user = user_entries(path, (status.st_mtime_ns, status.st_size))
        return cls(bundled_entries(), user)

    def words(self, text: str, max_words: int | None = MAX_WORDS, on_chars=None) -> list[Word]:
        """Normalise the text and pronounce every spoken word (g2p for those no dictionary has).  The limits come
        first: ValueError for more than MAX_TEXT_CHARS characters or a token past MAX_TOKEN_CHARS, TooManyWords for
        more than `max_words` spoken words (None: no limit), before any word is pronounced.  on_chars(n): n more of
        the text's characters pronounced (a progress bar's; g2p takes about 5 ms a word)."""
        if len(text) > MAX_TEXT_CHARS:
            raise ValueError(f"a text of {len(text):,} characters (at most {MAX_TEXT_CHARS:,}): split it")
        words, done = [], 0
        for start, end, spoken in normalise(text, self.known, max_words):
            pronunciations, source = self.lookup(spoken) or self.guess(spoken)
            words.append(Word(text[start:end], spoken, pronunciations, source, start, end))
            if on_chars is not None and end > done:
                on_chars(end - done)
                done = end
        return words

    def pronunciations(self, word: str) -> Pronunciations:
        """One word as written (any case; no numbers or abbreviations expanded) -> its pronunciations; ValueError
        for a word longer than MAX_TOKEN_CHARS."""
        if len(word) > MAX_TOKEN_CHARS:
            raise token_too_long(word, 0, len(word))
        spoken = fold(word)
        return (self.lookup(spoken) or self.guess(spoken))[0]

    def known(self, spoken: str) -> bool:
        return self.lookup(spoken) is not None

    def lookup(self, spoken: str) -> tuple[Pronunciations, str] | None:
        """(pronunciations, source) from the dictionaries, a possessive of a word they have included; None."""
        if spoken in self.user:
            return self.user[spoken], "user"
        if spoken in self.entries:
            return tuple(tuple(v.split()) for v in self.entries[spoken].split("\t")), "cmudict"
        if spoken.endswith("'s") and len(spoken) > 2:
            base = self.lookup(spoken[:-2])
            if base:
                return tuple(dict.fromkeys(possessive(v) for v in base[0])), base[1]
        return None

    def guess(self, spoken: str) -> tuple[Pronunciations, str]:
        return (self.g2p().phones(spoken),), "g2p"
