"""Forced alignment to phones for training labels: pocketsphinx (its bundled US English acoustic model) or
speechattn's own aligner on the bundled model (ALIGNERS; a recipe's data.aligner picks one).

pocketsphinx:

Two passes, as pocketsphinx documents: word alignment of the given text, then sub-word alignment
on that segmentation.  Each word position gets its own dictionary entry carrying the pronunciation
asked for, so per-utterance pronunciations (speechocean762's canonical phones) never collide.
`bestpath` is off: with it, the zero-length sentence-start word gets an "impossible duration" and
the second pass fails.  A failed alignment is retried once with wider beams.

These labels come from an aligner: silver, not gold.  Frame f of pocketsphinx covers
[10 f, 10 f + 10) ms, the same hop as ours.
"""

from __future__ import annotations

import numpy as np

from speechattn.audio import FRAMES_PER_SECOND, SAMPLE_RATE
from speechattn.phones import IGNORE, PHONE_TO_INDEX, from_arpabet
from speechattn.runtime.align import ModelAligner

DEFAULT_BEAMS = {}  # pocketsphinx's own defaults
WIDE_BEAMS = {"beam": 1e-80, "wbeam": 1e-60, "pbeam": 1e-80}


class PhoneAligner:
    @classmethod
    def dictionary(cls) -> PhoneAligner:
        """What decides which words can be aligned (in_dictionary): pocketsphinx's bundled dictionary."""
        return cls()

    def __init__(self) -> None:
        self._decoders: dict = {}
        self._calls = 0  # pocketsphinx refuses to add a word twice: every call gets fresh word names

    def _decoder(self, wide: bool):
        import pocketsphinx

        if wide not in self._decoders:
            beams = WIDE_BEAMS if wide else DEFAULT_BEAMS
            self._decoders[wide] = pocketsphinx.Decoder(samprate=SAMPLE_RATE, lm=None, bestpath=False,
                                                        loglevel="FATAL", **beams)
        return self._decoders[wide]

    def align(self, audio: np.ndarray, pronunciations: list[list[str]]) -> list[tuple[float, float, int]] | None:
        """audio: 16 kHz float32; pronunciations: ARPAbet phones per word (stress marks allowed).

        Returns (start s, end s, phone index) intervals covering the utterance, or None if it cannot be aligned.
        """
        pcm = (np.clip(audio, -1.0, 1.0) * 32767).astype(np.int16).tobytes()
        for wide in (False, True):
            result = self._align_once(self._decoder(wide), pcm, pronunciations)
            if result is not None:
                return result
        return None

    def in_dictionary(self, word: str) -> bool:
        """Is `word` in pocketsphinx's bundled dictionary (CMUdict, lower case)?"""
        return self._decoder(False).lookup_word(word) is not None

    def align_words(self, audio: np.ndarray, words: list[str]) -> list[tuple[float, float, int]] | None:
        """Like `align`, with the words' pronunciations (and alternates) from pocketsphinx's dictionary."""
        pcm = (np.clip(audio, -1.0, 1.0) * 32767).astype(np.int16).tobytes()
        for wide in (False, True):
            result = self._align_once(self._decoder(wide), pcm, None, words)
            if result is not None:
                return result
        return None

    def _align_once(self, decoder, pcm: bytes, pronunciations: list[list[str]] | None, words: list[str] | None = None):
        self._calls += 1
        if pronunciations is not None:
            words = []
            for position, phones in enumerate(pronunciations):
                token = f"speechattn_{self._calls}_{position}"
                decoder.add_word(token, " ".join(p.rstrip("012").upper() for p in phones), True)
                words.append(token)
        try:
            decoder.set_align_text(" ".join(words))
            decoder.start_utt()
            decoder.process_raw(pcm, full_utt=True)
            decoder.end_utt()
            if decoder.hyp() is None:
                return None
            decoder.set_alignment()
            decoder.start_utt()
            decoder.process_raw(pcm, full_utt=True)
            decoder.end_utt()
            alignment = decoder.get_alignment()
        except RuntimeError:  # pocketsphinx's way of saying the audio does not fit the text
            return None
        if alignment is None:
            return None
        intervals = []
        for word in alignment:
            for phone in word:
                start = phone.start / FRAMES_PER_SECOND
                end = (phone.start + phone.duration) / FRAMES_PER_SECOND
                name = phone.name
                index = IGNORE if name.startswith("+") else PHONE_TO_INDEX["sil"] if name == "SIL" else from_arpabet(name)
                intervals.append((start, end, index))
        return intervals or None


# data.aligner NAME -> the class that draws the labels (`dictionary()`: a light object for `in_dictionary`)
ALIGNERS = {"pocketsphinx": PhoneAligner, "speechattn": ModelAligner}  # ModelAligner: speechattn/runtime/align.py
