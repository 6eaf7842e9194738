"""The output inventory and every mapping into it.

Output index k of every model is PHONES[k]: silence, then the 39 ARPAbet phones of CMUdict
without stress.  Each source inventory (TIMIT-61, stressed ARPAbet from CMUdict and MFA, the
US English phone sets of festival and flite voices) has a complete table here; a symbol that is
in no table is an error naming the symbol and where it came from, never a silent drop.

A few source symbols carry no phone identity (MFA's `spn`, "spoken noise", the label of words
it could not align): they map to IGNORE, and frames with that label are left out of training
and scoring.
"""

from __future__ import annotations

import re

from speechattn.errors import SpeechattnError

SILENCE = "sil"

ARPABET = (
    "AA AE AH AO AW AY B CH D DH EH ER EY F G HH IH IY JH K L M N NG "
    "OW OY P R S SH T TH UH UW V W Y Z ZH"
).split()

PHONES: tuple[str, ...] = (SILENCE, *ARPABET)
NUM_PHONES = len(PHONES)  # 40
PHONE_TO_INDEX = {phone: index for index, phone in enumerate(PHONES)}
IGNORE = -100  # frame label excluded from loss and scoring (torch's default ignore_index)


class PhoneMappingError(SpeechattnError, KeyError):
    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


# TIMIT-61 -> our 40.  Lee & Hon (1989) folding, except that AO and ZH stay distinct (CMUdict keeps
# them, Lee & Hon merged them into AA and SH).  Closures, pauses, epenthetic silence and the glottal
# stop q (Lee & Hon delete it; a frame label cannot be deleted, and q is a closure) become silence.
# The flap dx becomes T, as CMUdict writes the flapped t of "butter".
TIMIT_TO_PHONE = {
    "iy": "IY", "ih": "IH", "eh": "EH", "ey": "EY", "ae": "AE", "aa": "AA", "aw": "AW", "ay": "AY",
    "ah": "AH", "ao": "AO", "oy": "OY", "ow": "OW", "uh": "UH", "uw": "UW", "ux": "UW", "er": "ER",
    "ax": "AH", "ix": "IH", "axr": "ER", "ax-h": "AH",
    "jh": "JH", "ch": "CH", "b": "B", "d": "D", "g": "G", "p": "P", "t": "T", "k": "K", "dx": "T",
    "s": "S", "sh": "SH", "z": "Z", "zh": "ZH", "f": "F", "th": "TH", "v": "V", "dh": "DH",
    "m": "M", "n": "N", "ng": "NG", "em": "M", "nx": "N", "en": "N", "eng": "NG",
    "l": "L", "r": "R", "w": "W", "y": "Y", "hh": "HH", "hv": "HH", "el": "L",
    "bcl": SILENCE, "dcl": SILENCE, "gcl": SILENCE, "pcl": SILENCE, "tcl": SILENCE, "kcl": SILENCE,
    "q": SILENCE, "pau": SILENCE, "epi": SILENCE, "h#": SILENCE,
}

# Festival's "radio" phone set (festival/lib/radio_phones.scm), used by the US English voices
# kal_diphone, ked_diphone and the HTS/clustergen voices, and flite's cmu_us phone set (a subset).
FESTIVAL_TO_PHONE = {
    **{phone.lower(): phone for phone in ARPABET},
    "ax": "AH", "axr": "ER", "dx": "T", "el": "L", "em": "M", "en": "N", "nx": "N", "hv": "HH",
    "pau": SILENCE, "h#": SILENCE, "brth": SILENCE,
}

# espeak-ng's en-US phoneme mnemonics (as its phoneme events name them, stress marks ' and , removed)
# -> one or two of our phones.  Collected by synthesizing 6,000 CMUdict words with the en-us and
# en-us-nyc voices, 20,000 more with function words and punctuation, and the 10-hour default corpus
# (74 symbols).  R-coloured vowels and syllabic consonants become two phones, as CMUdict writes them
# ("car" AA R, "fire" AY ER, "bottle" ... AH L); their interval is split in half.  The linking glide
# ";" that espeak inserts between vowels in hiatus ("brioche") has no CMUdict phone: an empty tuple
# means its frames belong to the phone before it.
ESPEAK_TO_PHONES: dict[str, tuple[str, ...]] = {
    "_": (SILENCE,), "_:": (SILENCE,), "_!": (SILENCE,), "_^_": (SILENCE,),
    "@": ("AH",), "@-": ("AH",), "@2": ("AH",), "a#": ("AH",), "V": ("AH",), "3": ("ER",), "3:": ("ER",),
    "a": ("AE",), "aa": ("AE",), "A:": ("AA",), "0": ("AA",), "A~": ("AA",),
    "O:": ("AO",), "O2": ("AO",), "O": ("AO",), "O~": ("AO",),
    "E": ("EH",), "eI": ("EY",), "I": ("IH",), "I2": ("IH",), "I#": ("IH",), "i": ("IY",), "i:": ("IY",),
    "oU": ("OW",), "U": ("UH",), "u:": ("UW",), "aI": ("AY",), "aU": ("AW",), "OI": ("OY",),
    "A@": ("AA", "R"), "o@": ("AO", "R"), "O@": ("AO", "R"), "e@": ("EH", "R"), "i@": ("IH", "R"),
    "i@3": ("IH", "R"), "U@": ("UH", "R"), "aI@": ("AY", "ER"), "aI3": ("AY", "ER"), "aU@": ("AW", "ER"),
    "@L": ("AH", "L"), "n-": ("AH", "N"), "m-": ("AH", "M"),
    "b": ("B",), "d": ("D",), "g": ("G",), "p": ("P",), "t": ("T",), "t#": ("T",), "t2": ("T",), "?": ("T",),
    "k": ("K",), "x": ("K",), "tS": ("CH",), "dZ": ("JH",), "f": ("F",), "v": ("V",), "T": ("TH",),
    "D": ("DH",), "s": ("S",), "z": ("Z",), "S": ("SH",), "Z": ("ZH",), "h": ("HH",), "m": ("M",),
    "n": ("N",), "N": ("NG",), "l": ("L",), "l#": ("L",), "r": ("R",), "r-": ("R",), "w": ("W",), "j": ("Y",),
    ";": (),
}

# Silence and noise labels found in aligner output (MFA, HTK, Kaldi) beside ARPAbet symbols.
_ALIGNER_SILENCES = {"", "sil", "sp", "<eps>", "pau", "h#", "sil_b", "sil_e", "sil_i", "sil_s"}
_ALIGNER_IGNORED = {"spn", "nsn", "<unk>", "unk", "oov", "lau", "ns"}


def _index(phone: str) -> int:
    return PHONE_TO_INDEX[phone]


def from_timit(symbol: str, source: str = "TIMIT") -> int:
    try:
        return _index(TIMIT_TO_PHONE[symbol.lower()])
    except KeyError:
        raise PhoneMappingError(f"{source}: {symbol!r} is not a TIMIT-61 phone") from None


def from_festival(symbol: str, source: str = "festival") -> int:
    try:
        return _index(FESTIVAL_TO_PHONE[symbol.lower()])
    except KeyError:
        raise PhoneMappingError(f"{source}: {symbol!r} is not a festival/flite US English phone") from None


def from_espeak(symbol: str, source: str = "espeak-ng") -> tuple[int, ...]:
    """An espeak-ng phoneme event name -> phone indices (see ESPEAK_TO_PHONES); stress marks are removed."""
    try:
        return tuple(_index(p) for p in ESPEAK_TO_PHONES[symbol.lstrip("',")])
    except KeyError:
        raise PhoneMappingError(f"{source}: {symbol!r} is not an espeak-ng en-US phoneme") from None


_STRESSED = re.compile(r"^([A-Za-z]+)[012]?$")


def from_arpabet(symbol: str, source: str = "ARPAbet") -> int:
    """Stressed or unstressed ARPAbet (CMUdict, MFA's english_us_arpa), plus aligners' silence/noise labels.

    Kaldi-style position suffixes (_B, _E, _I, _S) are removed first.
    """
    cleaned = symbol.strip()
    lowered = cleaned.lower()
    if lowered in _ALIGNER_SILENCES:
        return _index(SILENCE)
    if lowered in _ALIGNER_IGNORED:
        return IGNORE
    cleaned = re.sub(r"_[BEIS]$", "", cleaned)
    match = _STRESSED.match(cleaned)
    phone = match.group(1).upper() if match else None
    if phone == "AX":  # some dictionaries write schwa as AX; CMUdict writes AH0
        phone = "AH"
    if phone not in PHONE_TO_INDEX or phone == SILENCE:
        raise PhoneMappingError(f"{source}: {symbol!r} is not an ARPAbet phone")
    return _index(phone)


# espeak-ng's IPA (espeak_TextToPhonemes, any language) -> the nearest one or two of our phones, for words in other
# languages (speechattn/runtime/languages.py).  Collected from what espeak-ng emits for es, fr, it, de, ru, pt, nl and pl on
# tests/test_languages.py's sentences.  A phoneme is looked up whole (tʃ, aɪ), then without IPA_MODIFIERS (length,
# nasality, palatalisation: ɑ̃ is ɑ, rʲ is r), then as the longest entries that spell it (Russian ja: j a; œy: œ y).
# Front rounded vowels go to the English vowel of the same height (y UW, ø ER), the palatal nasal and lateral to
# two phones (ɲ N Y, ʎ L Y), the glottal stop to none (its frames belong to the phone before it).
IPA_TO_PHONES: dict[str, tuple[str, ...]] = {
    "a": ("AA",), "ɑ": ("AA",), "ɒ": ("AA",), "æ": ("AE",), "ɐ": ("AH",), "ə": ("AH",), "ʌ": ("AH",), "ɜ": ("AH",),
    "ɘ": ("AH",), "ɤ": ("AH",), "ɞ": ("ER",), "ø": ("ER",), "œ": ("ER",), "ɚ": ("ER",), "ɝ": ("ER",),
    "e": ("EY",), "ɛ": ("EH",), "i": ("IY",), "ɪ": ("IH",), "ɨ": ("IH",), "ᵻ": ("IH",), "o": ("OW",), "ɔ": ("AO",),
    "ɵ": ("UH",), "u": ("UW",), "ʊ": ("UH",), "y": ("UW",), "ʏ": ("UH",), "ɯ": ("UW",),
    "aɪ": ("AY",), "aʊ": ("AW",), "eɪ": ("EY",), "ɛɪ": ("EY",), "oɪ": ("OY",), "ɔɪ": ("OY",), "ɔø": ("OY",),
    "oʊ": ("OW",), "əʊ": ("OW",),
    "b": ("B",), "β": ("B",), "d": ("D",), "f": ("F",), "ɡ": ("G",), "g": ("G",), "ɣ": ("G",), "h": ("HH",),
    "ɦ": ("HH",), "x": ("HH",), "χ": ("HH",), "ç": ("HH",), "ħ": ("HH",), "j": ("Y",), "ʝ": ("Y",), "k": ("K",),
    "c": ("K",), "q": ("K",), "l": ("L",), "ɭ": ("L",), "ɫ": ("L",), "ʎ": ("L", "Y"), "m": ("M",), "ɱ": ("M",),
    "n": ("N",), "ɳ": ("N",), "ɲ": ("N", "Y"), "ŋ": ("NG",), "p": ("P",), "r": ("R",), "ɾ": ("R",), "ʁ": ("R",),
    "ʀ": ("R",), "ɹ": ("R",), "s": ("S",), "ʃ": ("SH",), "ɕ": ("SH",), "ʂ": ("SH",), "t": ("T",), "ʈ": ("T",),
    "ɖ": ("D",), "v": ("V",), "ʋ": ("V",), "w": ("W",), "ʍ": ("W",), "ɰ": ("W",), "z": ("Z",), "ʒ": ("ZH",),
    "ʑ": ("ZH",), "ʐ": ("ZH",), "θ": ("TH",), "ð": ("DH",), "ɟ": ("JH",),
    "tʃ": ("CH",), "tɕ": ("CH",), "ʈʂ": ("CH",), "dʒ": ("JH",), "dʑ": ("JH",), "ɖʐ": ("JH",), "ts": ("T", "S"),
    "dz": ("D", "Z"), "pf": ("P", "F"), "ʔ": (),
    # for the multilingual corpus (speechattn/data/synth_languages.py): Czech ř and its voiceless form as the
    # fricative of the same mouth, the central rounded ʉ (Swedish, Norwegian) as u, espeak-ng's Danish ε (Greek
    # epsilon) as ɛ, the lateral fricative ɬ as l
    "r̝": ("ZH",), "r̝̊": ("SH",), "ʉ": ("UW",), "ε": ("EH",), "ɬ": ("L",),
}
IPA_STRESS = "ˈˌ"
IPA_MODIFIERS = "ːˑ\u0303ʲʰʷˠˤ\u0329\u032f\u032a\u0306\u0361\u035c‿-'^?\"."  # length, nasal ~, palatal, aspirated,
# ties ...; espeak-ng's own marks: ^ (Russian), ? (Danish stød), " (Russian), . (Hindi's flap r.)
_IPA_LONGEST = max(len(symbol) for symbol in IPA_TO_PHONES)


def from_ipa(symbol: str, language: str) -> tuple[int, ...]:
    """One phoneme of espeak-ng's IPA for `language` -> phone indices (see IPA_TO_PHONES); PhoneMappingError naming
    the symbol and the language for one no entry spells."""
    bare = symbol.strip(IPA_STRESS)
    if bare in IPA_TO_PHONES:
        return tuple(_index(p) for p in IPA_TO_PHONES[bare])
    bare = "".join(c for c in bare if c not in IPA_MODIFIERS and c not in IPA_STRESS)
    phones: list[int] = []
    at = 0
    while at < len(bare):
        for size in range(min(_IPA_LONGEST, len(bare) - at), 0, -1):
            if bare[at:at + size] in IPA_TO_PHONES:
                phones += [_index(p) for p in IPA_TO_PHONES[bare[at:at + size]]]
                at += size
                break
        else:
            raise PhoneMappingError(f"espeak-ng {language}: the IPA phoneme {symbol!r} ({bare[at]!r}, "
                                    f"U+{ord(bare[at]):04X}) has no phone in speechattn.phones.IPA_TO_PHONES")
    return tuple(phones)
