"""Follow-along (`mic --script`, the clients' live aligner) on real speech: how long after a word ends in the audio
its position is final, and how fast the follower is back when the reader skips a sentence or reads one again.

The utterances of a dev set are read one after another as one stream, in 40 ms pieces as a microphone gives
them: each piece through the model and the live aligner (export/align.py, LIVE options).  A word's delay is the
time from its end in the audio to the moment it is final on screen: the audio after it that had to arrive (the
chunk, the model's look-ahead, the aligner's lag) plus the measured compute of the piece that made it final.

Two readings of each set, each its own stream:

- Skips: the script holds every sentence, the audio leaves one out every `--skip-every` sentences; after each
  skip, which word of the sentence read next is the first the follower reports from the audio of that sentence on
  (0: its first word; "more": the third or later, or none).  Where the sentence read next begins with the same
  words as the skipped one (the asterisk prompts hold "To exit the menu" and "...to exit the menu", "Call-Forward
  on No Answer" and "Call-Forward on Busy"), no audio can tell which of the two is being read until they differ:
  the last column counts the skipped sentence's word j as the next one's word j over the words they share, unless
  the follower goes on in the skipped copy past them (the column before it does not).
- Going back: every `--skip-every` sentences the reader reads the sentence again at once (a line read twice: a
  jump back to its start); after each, which word of the sentence is the first the follower reports from the
  second reading (a report of a word whose start lies after the first reading's end), as for skips.

    python bench/follow.py data/real-dev/real-dev_supervisions_dev.jsonl.gz [--limit 40]
    python bench/follow.py MANIFEST --options '{"jump_penalty": 60}'   # a trial of other LIVE options
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from speechattn_export.align import LIVE, AlignOptions, ScriptAligner  # noqa: E402
from speechattn_export.pipeline import load_model  # noqa: E402
from speechattn_export.words import Lexicon  # noqa: E402

PIECE = 640  # 40 ms at 16 kHz: what a microphone callback hands over


def stream(model, audio: np.ndarray, words, starts, options: AlignOptions = LIVE):
    """(each word's index, start frame, end frame, the audio time in s at which it became final + compute of that
    piece)."""
    aligner = ScriptAligner(words, model.phones, options, starts)
    model_stream = model.new_stream()
    out = []
    for start in range(0, len(audio), PIECE):
        began = time.perf_counter()
        done = aligner.push(model_stream.push(audio[start:start + PIECE]).log_probs)
        compute = time.perf_counter() - began
        arrived = min(start + PIECE, len(audio)) / 16000
        out += [(w.index, w.start_frame, w.end_frame, arrived + compute) for w in done]
    done = aligner.push(model_stream.finish().log_probs)
    out += [(w.index, w.start_frame, w.end_frame, len(audio) / 16000) for w in done]
    return out


def first_word(results, first: int, length: int, twin: int | None = None, shared: int = 0, after: int = -1) -> int:
    """Which word of the sentence at script position `first` (`length` words) the follower reports first among the
    words that start at frame `after` or later: 0 its first word; 3 for none.  `twin`: the first position of the
    skipped sentence, whose first `shared` words are the next one's: its word j counts as word j, unless the
    follower goes on in that copy past the words they share before it reports the right one."""
    in_twin = None
    for index, start, _, _ in results:
        if start < after:
            continue
        if first <= index < first + length:
            return min(index - first if in_twin is None else in_twin, 3)
        if twin is not None and twin <= index < first:
            if index < twin + shared:
                in_twin = index - twin if in_twin is None else in_twin
            else:
                in_twin = None  # past the shared words in the wrong copy: the follower was not back
        elif in_twin is not None and index >= first + length:
            return min(in_twin, 3)  # on past both (the two sentences the same throughout)
    return 3 if in_twin is None else min(in_twin, 3)


def shared_words(a, b) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n].spoken == b[n].spoken:
        n += 1
    return n


def skips(model, sentences, every: int, options: AlignOptions):
    """(the words' delays in ms, heard, of words, [(first word reported, the same counting a shared start)])."""
    words, starts, audio, skipped_at = [], [], [], []
    samples = 0
    for n, (piece, sentence) in enumerate(sentences):
        starts.append(len(words))
        if n % every == every - 1 and n + 1 < len(sentences):
            # the skipped sentence's first word, the next sentence's first word and its length, their shared start,
            # and the frame where the next sentence's audio starts (less 100 ms: a word may start in the pause)
            skipped_at.append((len(words), len(words) + len(sentence), len(sentences[n + 1][1]),
                               shared_words(sentence, sentences[n + 1][1]), samples // 160 - 10))
        else:
            audio.append(piece)
            samples += len(piece)
        words += sentence
    results = stream(model, np.concatenate(audio), words, starts, options)
    delays = [(final - end / 100) * 1000 for _, _, end, final in results]
    found = [(first_word(results, first, length, after=after),
              first_word(results, first, length, skipped, shared, after=after))
             for skipped, first, length, shared, after in skipped_at]
    return delays, len({r[0] for r in results}), len(words), found


def read_again(model, sentences, every: int, options: AlignOptions):
    """[which word of a sentence read twice is reported first from its second reading]."""
    words, starts, audio, again = [], [], [], []
    samples = 0
    for n, (piece, sentence) in enumerate(sentences):
        starts.append(len(words))
        audio.append(piece)
        samples += len(piece)
        if n % every == every - 1 and n + 1 < len(sentences):
            again.append((len(words), len(sentence), samples // 160))  # the frame where the second reading starts
            audio.append(piece)
            samples += len(piece)
        words += sentence
    results = stream(model, np.concatenate(audio), words, starts, options)
    return [first_word(results, first, length, after=end) for first, length, end in again]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("manifests", nargs="+", type=Path)
    parser.add_argument("--model", default="default-int8")
    parser.add_argument("--limit", type=int, default=40, help="utterances of each set, read as one text")
    parser.add_argument("--skip-every", type=int, default=4)
    parser.add_argument("--options", type=json.loads, default={},
                        help="LIVE's fields replaced, as JSON (a trial: the kit keeps LIVE)")
    args = parser.parse_args()

    from speechattn.data.dataset import cuts_from_manifests
    from speechattn.data.manifests import recordings_beside
    from speechattn.training.evaluate import utterances

    options = dataclasses.replace(LIVE, **args.options)
    model, lexicon = load_model(args.model, threads=1), Lexicon.load()
    print(f"model {args.model} streamed in 40 ms pieces; live aligner lag {options.lag_frames * 10} ms"
          + (f"; LIVE with {json.dumps(args.options)}" if args.options else ""))
    print("| set | words | delay p50 / p95 | skipped sentences | first word reported after a skip: 1st / 2nd / 3rd / "
          "later or none | back within two words (a start shared with the skipped one: either copy) | sentences "
          "read twice: back within two words |")
    print("|---|---|---|---|---|---|---|")
    for manifest in args.manifests:
        cuts = list(cuts_from_manifests(recordings_beside(manifest), manifest))[: args.limit]
        texts = {c.supervisions[0].id: c.supervisions[0].text or "" for c in cuts}
        sentences = [(audio, lexicon.words(texts[i])) for i, audio, _ in utterances(cuts)]
        sentences = [(a, w) for a, w in sentences if w]
        delays, heard, total, found = skips(model, sentences, args.skip_every, options)
        again = read_again(model, sentences, args.skip_every, options)
        counts = np.bincount([f for f, _ in found], minlength=4)
        seconds = sum(len(a) for a, _ in sentences) / 16000
        print(f"| {manifest.name.removesuffix('.jsonl.gz')} ({len(sentences)} utterances, {seconds / 60:.1f} min) | "
              f"{heard} of {total} heard | {np.percentile(delays, 50):.0f} / {np.percentile(delays, 95):.0f} ms | "
              f"{len(found)} | {' / '.join(map(str, counts))} | {sum(f < 2 for f, _ in found)} "
              f"({sum(e < 2 for _, e in found)}) of {len(found)} | {sum(a < 2 for a in again)} of {len(again)} |",
              flush=True)


if __name__ == "__main__":
    main()
