"""espeak-ng through its C API (the `espeakng-loader` wheel: libespeak-ng and its data, no system install): speech
with exact phone timing for the built-in training corpus (speechattn/data/synth.py) and words' phonemes in IPA for the
languages it speaks (speechattn/runtime/languages.py).

With phoneme events switched on, the synthesis callback receives, beside the audio, one event per phoneme carrying
the output sample where it starts, and one per word.  A phone lasts until the next phoneme event; the pause after the
last word ends at the last one.  The library is a process-wide singleton, so each process holds one `Espeak`.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from speechattn.audio import SAMPLE_RATE
from speechattn.errors import SpeechattnError
from speechattn.phones import from_espeak

ESPEAK_EVENT_END = 0  # espeakEVENT_LIST_TERMINATED
ESPEAK_EVENT_WORD = 1  # espeakEVENT_WORD
ESPEAK_EVENT_PHONEME = 7  # espeakEVENT_PHONEME
AUDIO_OUTPUT_SYNCHRONOUS = 2
CHARS_UTF8 = 1  # espeakCHARS_UTF8
PHONEMES_IPA = 0x02  # espeak_TextToPhonemes: IPA; bits 8-23 the separator between phonemes
PHONEME_SEPARATOR = "|"
LANGUAGE_SWITCH = re.compile(r"\([a-z]{2,8}(?:-[a-z0-9]+)*\)", re.IGNORECASE)  # (en): another voice's rules say the
# word, in English; (piqd): Klingon's back: espeak-ng writes the name of the voice it switches to
INITIALIZE_PHONEME_EVENTS = 0x0001
ESPEAK_RATE, ESPEAK_PITCH, ESPEAK_RANGE = 1, 3, 4  # espeak_PARAMETER
US_ENGLISH_VOICES = ("en-us", "en-us-nyc")
MAX_ECHO_PERCENT = 100  # voice variants with a louder echo than this are not used


class SynthesisError(SpeechattnError):
    pass


@dataclass
class Utterance:
    audio: np.ndarray  # (N,) float32, 16 kHz
    intervals: list[tuple[float, float, int]] = field(default_factory=list)  # (start s, end s, phone index)
    text: str = ""
    voice: str = ""
    word_starts: list[tuple[float, int, int]] = field(default_factory=list)  # (start s, text offset, length) per word
    events: list[tuple[float, str]] = field(default_factory=list)  # (start s, espeak-ng phoneme name), as synthesized

    @property
    def duration(self) -> float:
        return len(self.audio) / SAMPLE_RATE


class _EventId(ctypes.Union):
    _fields_ = [("number", ctypes.c_int), ("name", ctypes.c_char_p), ("string", ctypes.c_char * 8)]


class _Event(ctypes.Structure):  # espeak_EVENT in speak_lib.h
    _fields_ = [("type", ctypes.c_int), ("unique_identifier", ctypes.c_uint), ("text_position", ctypes.c_int),
                ("length", ctypes.c_int), ("audio_position", ctypes.c_int), ("sample", ctypes.c_int),
                ("user_data", ctypes.c_void_p), ("id", _EventId)]


_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(_Event))


def phone_intervals(events: list[tuple[int, str]], total_samples: int, sample_rate: int,
                    source: str, to_phones=from_espeak) -> list[tuple[float, float, int]]:
    """Phoneme events (start sample, name) -> (start s, end s, phone) intervals in our inventory; `to_phones(name,
    source)` gives a name's phones (default: an espeak-ng en-US mnemonic's).

    Two-phone symbols split their span in half; a symbol with no phone of its own (the linking glide)
    extends the phone before it."""
    intervals: list[list] = []
    bounds = [start for start, _ in events] + [total_samples]
    for (start, name), end in zip(events, bounds[1:]):
        if end <= start:
            continue
        phones = to_phones(name, source)
        if not phones:
            if intervals:
                intervals[-1][1] = end
            continue
        step = (end - start) / len(phones)
        for number, phone in enumerate(phones):
            intervals.append([start + number * step, start + (number + 1) * step, phone])
    return [(s / sample_rate, e / sample_rate, p) for s, e, p in intervals]


class Espeak:
    """libespeak-ng through its C API, with phoneme events."""

    def __init__(self) -> None:
        import espeakng_loader

        self.lib = ctypes.CDLL(espeakng_loader.get_library_path())
        self.data_path = espeakng_loader.get_data_path()
        self.sample_rate = self.lib.espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, self.data_path.encode(),
                                                      INITIALIZE_PHONEME_EVENTS)
        if self.sample_rate <= 0:
            raise SynthesisError(f"espeak-ng failed to initialise with data from {self.data_path}")
        self._chunks: list[np.ndarray] = []
        self._events: list[tuple[int, str]] = []
        self._words: list[tuple[int, int, int]] = []  # (sample, text position counted from 1, length)
        self._phonemized = False  # TextToPhonemes called since the last synthesis
        self._callback = _CALLBACK(self._on_synth)  # kept referenced: the library calls it later
        self.lib.espeak_SetSynthCallback(self._callback)

    def _on_synth(self, wav, num_samples, events) -> int:
        if num_samples > 0:
            self._chunks.append(np.ctypeslib.as_array(wav, shape=(num_samples,)).copy())
        index = 0
        while events[index].type != ESPEAK_EVENT_END:
            event = events[index]
            if event.type == ESPEAK_EVENT_PHONEME:
                self._events.append((event.sample, event.id.string.decode("utf-8", "replace")))
            elif event.type == ESPEAK_EVENT_WORD:
                self._words.append((event.sample, event.text_position, event.length))
            index += 1
        return 0  # 0: go on synthesizing

    def voices(self) -> list[str]:
        """The US English voices with every usable voice variant the data ships (en-us+m3, en-us-nyc+f2 ...).

        Variants whose echo is louder than the voice itself ("echo 10 10000": the robot family, Demonic,
        RicishayMax) are left out: their echoes fill the pauses, so the audio no longer matches the phone
        labels (measured up to 23 loud frames inside one labelled pause).  Mild room-like echoes stay."""
        variants = []
        for path in sorted((Path(self.data_path) / "voices" / "!v").iterdir()):
            if not path.is_file():
                continue
            echo = [line.split() for line in path.read_text(errors="replace").splitlines()
                    if line.strip().startswith("echo")]
            if echo and len(echo[0]) >= 3 and int(echo[0][2]) > MAX_ECHO_PERCENT:
                continue
            variants.append(path.name)
        return [f"espeak:{voice}+{variant}" for voice in US_ENGLISH_VOICES for variant in variants]

    def set_voice(self, voice: str) -> None:
        if self.lib.espeak_SetVoiceByName(voice.removeprefix("espeak:").encode()) != 0:
            raise SynthesisError(f"espeak-ng has no voice {voice!r}")

    def ipa(self, text: str, voice: str) -> list[str]:
        """The text's phonemes in IPA as the voice says them (espeak_TextToPhonemes), stress marks kept: one list of
        phonemes for the whole text (clauses joined; the marks of a switch to another language's rules, "(en)",
        dropped, the phonemes kept).  A word at a time keeps each word's phonemes its own."""
        function = self.lib.espeak_TextToPhonemes
        function.restype = ctypes.c_char_p
        function.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_int]
        self.set_voice(voice)
        self._phonemized = True
        encoded = ctypes.create_string_buffer(text.encode("utf-8"))
        position = ctypes.c_void_p(ctypes.addressof(encoded))
        phonemes: list[str] = []
        while position.value:  # one clause a call; the library sets the pointer to NULL after the last
            clause = function(ctypes.byref(position), CHARS_UTF8, PHONEMES_IPA | (ord(PHONEME_SEPARATOR) << 8))
            clause = LANGUAGE_SWITCH.sub("", (clause or b"").decode("utf-8", "replace"))
            phonemes += [p for p in re.split(rf"[{PHONEME_SEPARATOR}\s]", clause) if p]
        return phonemes

    def synthesize(self, text: str, voice: str, rate_wpm: int = 175, pitch: int = 50, pitch_range: int = 50,
                   phones: bool = True, ipa: bool = False) -> Utterance:
        """Audio at 16 kHz with espeak-ng's own timing: each word's start, each phoneme event (named in espeak-ng's
        mnemonics, or with `ipa` in IPA, where a pause has an empty name) and, with `phones` (US English voices),
        the phone intervals in our inventory."""
        import soxr

        self.set_voice(voice)
        self.lib.espeak_ng_SetPhonemeEvents(1, int(ipa))
        for parameter, value in ((ESPEAK_RATE, rate_wpm), (ESPEAK_PITCH, pitch), (ESPEAK_RANGE, pitch_range)):
            self.lib.espeak_SetParameter(parameter, int(value), 0)
        if self._phonemized:  # after some 20 TextToPhonemes calls the next synthesis lost its first phoneme's events
            self.lib.espeak_Synth(b" ", 2, 0, 0, 0, 0, None, None)  # (cat: A T, no K); a synthesized space flushes it
            self.lib.espeak_Synchronize()
            self._phonemized = False
        self._chunks, self._events, self._words = [], [], []
        encoded = text.encode("utf-8")
        status = self.lib.espeak_Synth(encoded, len(encoded) + 1, 0, 0, 0, 0, None, None)
        self.lib.espeak_Synchronize()
        if status != 0 or not self._chunks:
            raise SynthesisError(f"espeak-ng could not synthesize {text[:40]!r} with {voice} (status {status})")
        raw = np.concatenate(self._chunks).astype(np.float32) / 32768.0
        intervals = phone_intervals(self._events, len(raw), self.sample_rate, f"espeak-ng {voice}") if phones else []
        audio = soxr.resample(raw, self.sample_rate, SAMPLE_RATE, quality="HQ").astype(np.float32)
        rate = self.sample_rate
        return Utterance(audio=audio, intervals=intervals, text=text, voice=voice,
                         word_starts=[(sample / rate, position - 1, length) for sample, position, length in self._words],
                         events=[(sample / rate, name) for sample, name in self._events])


@lru_cache(maxsize=1)
def espeak() -> Espeak:
    """The process's espeak-ng (the library keeps global state, so one per process)."""
    return Espeak()
