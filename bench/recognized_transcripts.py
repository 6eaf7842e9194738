"""Words for recordings that came without a transcript, from pocketsphinx's recognizer (its en-us acoustic model and
language model): a tab-separated file (id, text) that bench/real_edges.py --transcripts reads.

../shared/data/librispeech-clips has no transcripts. bench/real_edges.py's reference edges come from the signal
alone, so the words need only say roughly what was spoken for every aligner to find the speech: recognized words
(bronze: some are wrong) serve, and every aligner gets the same ones. One
clip per speaker (the first of each, by id) gives the most voices for the CPU.

    python bench/recognized_transcripts.py ../shared/data/librispeech-clips --limit 100 --out /tmp/libri.tsv
    python bench/real_edges.py --librispeech ../shared/data/librispeech-clips --transcripts /tmp/libri.tsv
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

RATE = 16000


def first_per_speaker(root: Path) -> list[Path]:
    """Each speaker's first clip (LibriSpeech ids: speaker-chapter-utterance), speakers in order of id."""
    firsts: dict[str, Path] = {}
    for path in sorted(root.rglob("*")):
        if path.suffix in (".flac", ".wav", ".opus"):
            firsts.setdefault(path.stem.split("-")[0], path)
    return [firsts[s] for s in sorted(firsts, key=lambda s: (len(s), s))]


def recognize(paths: list[Path], out: Path) -> None:
    import pocketsphinx
    import soundfile as sf
    from tqdm import tqdm

    from speechattn.files import atomic_write_text
    from speechattn_export.resample import resample

    decoder = pocketsphinx.Decoder(samprate=RATE, loglevel="FATAL")
    rows = []
    for path in tqdm(paths, desc="recognizing", unit="clip"):
        audio, rate = sf.read(path, dtype="float32", always_2d=True)
        audio = resample(audio.mean(axis=1), rate, RATE) if rate != RATE else audio.mean(axis=1)
        decoder.start_utt()
        decoder.process_raw((np.clip(audio, -1.0, 1.0) * 32767).astype(np.int16).tobytes(), full_utt=True)
        decoder.end_utt()
        hypothesis = decoder.hyp()
        words = [w for w in (hypothesis.hypstr if hypothesis else "").split() if not w.startswith("<")]
        if words:
            rows.append(f"{path.stem}\t{' '.join(words).upper()}\n")
    atomic_write_text(out, "".join(rows))
    print(f"{out}: {len(rows)} of {len(paths)} clips with words")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path, help="a folder of clips (ID.flac|wav|opus anywhere below)")
    parser.add_argument("--limit", type=int, default=None, help="the first N speakers")
    parser.add_argument("--out", type=Path, required=True, help="the tab-separated file to write (id, text)")
    args = parser.parse_args()
    paths = first_per_speaker(args.root)[:args.limit]
    if not paths:
        parser.error(f"{args.root}: no .flac, .wav or .opus clips")
    recognize(paths, args.out)


if __name__ == "__main__":
    main()
