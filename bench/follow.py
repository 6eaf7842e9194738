"""Follow-along (`mic --script`, the clients' live aligner) on real speech: how long after a word ends in the audio
its position is final, and how fast the follower recovers when the reader skips a sentence.

The utterances of a dev set are read one after another as one stream, in 40 ms pieces as a microphone gives
them: each piece through the model and the live aligner (export/align.py, LIVE options).  A word's delay is the
time from its end in the audio to the moment it is final on screen: the audio after it that had to arrive (the
chunk, the model's look-ahead, the aligner's lag) plus the measured compute of the piece that made it final.

Skips: the script holds every sentence, the audio leaves one out every `--skip-every` sentences; after each skip,
which word of the sentence read next is the first the follower reports (0: its first word; "more": the third or
later, or none).  Where the skipped sentence has the same words as the one read next (the asterisk prompts hold
"To exit the menu" and "...to exit the menu"), no audio can tell which of the two was read: the last column counts
the skipped sentence's word j as the next one's word j there (the column before it does not).

    python bench/follow.py data/real-dev/real-dev_supervisions_dev.jsonl.gz [--limit 40]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from speechattn_export.align import LIVE, ScriptAligner  # noqa: E402
from speechattn_export.pipeline import load_model  # noqa: E402
from speechattn_export.words import Lexicon  # noqa: E402

PIECE = 640  # 40 ms at 16 kHz: what a microphone callback hands over


def stream(model, audio: np.ndarray, words, starts):
    """(each word's index, end frame, the audio time in s at which it became final + compute of that piece)."""
    aligner = ScriptAligner(words, model.phones, LIVE, starts)
    model_stream = model.new_stream()
    out = []
    for start in range(0, len(audio), PIECE):
        began = time.perf_counter()
        done = aligner.push(model_stream.push(audio[start:start + PIECE]).log_probs)
        compute = time.perf_counter() - began
        arrived = min(start + PIECE, len(audio)) / 16000
        out += [(w.index, w.end_frame, arrived + compute) for w in done]
    done = aligner.push(model_stream.finish().log_probs)
    out += [(w.index, w.end_frame, len(audio) / 16000) for w in done]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("manifests", nargs="+", type=Path)
    parser.add_argument("--model", default="default-int8")
    parser.add_argument("--limit", type=int, default=40, help="utterances of each set, read as one text")
    parser.add_argument("--skip-every", type=int, default=4)
    args = parser.parse_args()

    from speechattn.data.dataset import cuts_from_manifests
    from speechattn.data.manifests import recordings_beside
    from speechattn.training.evaluate import utterances

    model, lexicon = load_model(args.model, threads=1), Lexicon.load()
    print(f"model {args.model} streamed in 40 ms pieces; live aligner lag {LIVE.lag_frames * 10} ms")
    print("| set | words | delay p50 / p95 | skipped sentences | first word reported after a skip: 1st / 2nd / 3rd / "
          "later or none | back within two words (a sentence the same as the skipped one: either copy) |")
    print("|---|---|---|---|---|---|")
    for manifest in args.manifests:
        cuts = list(cuts_from_manifests(recordings_beside(manifest), manifest))[: args.limit]
        texts = {c.supervisions[0].id: c.supervisions[0].text or "" for c in cuts}
        sentences = [(audio, lexicon.words(texts[i])) for i, audio, _ in utterances(cuts)]
        sentences = [(a, w) for a, w in sentences if w]
        words, starts, audio, skipped_at = [], [], [], []
        for n, (piece, sentence) in enumerate(sentences):
            starts.append(len(words))
            if n % args.skip_every == args.skip_every - 1 and n + 1 < len(sentences):
                # the skipped sentence's first word, the next sentence's first word and its length
                skipped_at.append((len(words), len(words) + len(sentence), len(sentences[n + 1][1])))
            else:
                audio.append(piece)
            words += sentence
        audio = np.concatenate(audio)
        results = stream(model, audio, words, starts)
        delays = np.array([(final - end / 100) * 1000 for _, end, final in results])
        recovered, either = [], []
        for skipped, first, length in skipped_at:
            # the follower is back when it reports a word of the sentence read after the skip: which word of that
            # sentence it reports first (0: its first word)
            found = [index - first for index, _, _ in results if first <= index < first + length]
            recovered.append(found[0] if found else 3)
            same = [w.spoken for w in words[skipped:first]] == [w.spoken for w in words[first:first + length]]
            found = [index - (first if index >= first else skipped) for index, _, _ in results
                     if first <= index < first + length or (same and skipped <= index < first)]
            either.append(found[0] if found else 3)
        counts = np.bincount(np.minimum(recovered, 3), minlength=4) if recovered else np.zeros(4, int)
        print(f"| {manifest.name.removesuffix('.jsonl.gz')} ({len(sentences)} utterances, "
              f"{len(audio) / 16000 / 60:.1f} min) | {len(results)} of {len(words)} heard | "
              f"{np.percentile(delays, 50):.0f} / {np.percentile(delays, 95):.0f} ms | {len(skipped_at)} | "
              f"{' / '.join(map(str, counts))} | {sum(r < 2 for r in either)} of {len(either)} |")


if __name__ == "__main__":
    main()
