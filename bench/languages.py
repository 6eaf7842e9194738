"""Words in other languages (`align --language`): how close the word boundaries come to espeak-ng's own timing.

Per language, --sentences "sentences" of --words frequent words each (wordfreq's list for the language, drawn with a
fixed seed: word sequences, not prose) are synthesized by espeak-ng with its default voice for the language, aligned
with `align --language LANG` (their phones through espeak-ng's IPA and speechattn.phones.IPA_TO_PHONES), and each
word's start and end compared with espeak-ng's: a word starts at its first sounding phoneme event at or after its word
event, and ends at the event after its last sounding phoneme.  English is the reference: the same with the en-us voice
and the words through CMUdict (`align` without --language), the path the model was trained for.

Phone boundaries are not compared: espeak-ng's phoneme events name its own mnemonics per language, which do not
correspond one to one with the phones the IPA table gives (ts is T S), so they cannot be paired without an alignment
of their own.

    python bench/languages.py                      # es fr it de ru, then English; about a minute on 2 cores
"""

from __future__ import annotations

import argparse
import random
import re
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf

LANGUAGES = ("es", "fr", "it", "de", "ru")


def sentences(language: str, count: int, words: int, seed: int) -> list[str]:
    import wordfreq

    vocabulary = [w for w in wordfreq.top_n_list(language, 3000) if re.fullmatch(r"[^\W\d_]+", w)][:2000]
    rng = random.Random(f"{seed}-{language}")
    return [" ".join(rng.choice(vocabulary) for _ in range(words)) + "." for _ in range(count)]


def espeak_words(utterance) -> list[tuple[int, float, float]]:
    """(first character, start s, end s) of each word as espeak-ng timed it."""
    events = utterance.events + [(utterance.duration, "_")]
    starts = [start for start, _, _ in utterance.word_starts] + [utterance.duration]
    words = []
    for (start, offset, _), next_start in zip(utterance.word_starts, starts[1:]):
        sounding = [i for i, (t, name) in enumerate(events[:-1]) if not name.startswith("_")
                    and start - 1e-9 <= t < next_start - 1e-9]
        if not sounding:
            continue
        words.append((offset, events[sounding[0]][0], events[sounding[-1] + 1][0]))
    return words


def measure(model, language: str | None, texts: list[str], voice: str, folder: Path) -> dict[str, np.ndarray]:
    from speechattn.runtime.align import align_file, load_lexicon, script_words
    from speechattn.runtime.espeak import espeak

    lexicon = load_lexicon(None, language)
    start_errors, end_errors, missing = [], [], 0
    for number, text in enumerate(texts):
        utterance = espeak().synthesize(text, voice, phones=False)
        audio = folder / f"{voice}-{number}.wav"
        sf.write(audio, utterance.audio, 16000)
        words, starts = script_words(text, "text", lexicon)
        aligned = align_file(model, audio, words, starts)
        by_offset = {words[w["index"]].start_char: w for w in aligned.word_dicts()}
        for offset, start, end in espeak_words(utterance):
            if offset not in by_offset:  # a word espeak-ng timed that the lexicon split or left out, or not heard
                missing += 1
                continue
            start_errors.append(by_offset[offset]["start"] - start)
            end_errors.append(by_offset[offset]["end"] - end)
    return {"start": np.array(start_errors), "end": np.array(end_errors), "missing": missing}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--languages", nargs="+", default=list(LANGUAGES))
    parser.add_argument("--sentences", type=int, default=20)
    parser.add_argument("--words", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default=None, help="as align --model [default: the bundled default]")
    args = parser.parse_args()
    from speechattn.cli.common import load_onnx
    from speechattn.runtime.transcribe import resolve_model

    model = load_onnx(resolve_model(args.model))
    print("| language | words | starts within 20 ms | ends within 20 ms | median abs start, end (ms) | "
          "words without a match |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for language in [*args.languages, None]:
            texts = sentences(language or "en", args.sentences, args.words, args.seed)
            result = measure(model, language, texts, language or "en-us", Path(folder))
            start, end = np.abs(result["start"]), np.abs(result["end"])
            name = language or "en (CMUdict, reference)"
            print(f"| {name} | {len(start)} | {(start <= 0.02).mean():.0%} | {(end <= 0.02).mean():.0%} | "
                  f"{np.median(start) * 1000:.0f}, {np.median(end) * 1000:.0f} | {result['missing']} |", flush=True)


if __name__ == "__main__":
    main()
