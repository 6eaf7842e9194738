"""Choose the bigram decoder's settings on held-out data, beside the hysteresis segmenter.

Streams each utterance of the given manifests through an ONNX model once (its default chunk), then scores
frame accuracy and PER for the hysteresis rule at several --min-frames and for the decoder over a
grid of (min_frames, lm_weight, insertion_penalty).  Tune on held-out data that is not a judging set
(the synthetic dev voices), then judge on the real sets.

    python bench/decoder_tuning.py export/models/default.onnx data/synth-en/synth-en_supervisions_dev.jsonl.gz
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from speechattn.data.dataset import cuts_from_manifests  # noqa: E402
from speechattn.data.manifests import recordings_beside  # noqa: E402
from speechattn_export.decoder import DecoderConfig  # noqa: E402
from speechattn.training.evaluate import Scores, streamed_log_probs, utterances  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("manifests", nargs="+", type=Path)
    parser.add_argument("--limit", type=int, default=300, help="utterances per manifest")
    parser.add_argument("--chunk-frames", type=int, default=None, help="default: the model's own")
    args = parser.parse_args()

    from speechattn_export.stream_client import StreamingModel

    model = StreamingModel(args.model, num_threads=1)
    args.chunk_frames = args.chunk_frames or model.default_chunk_frames
    items = []
    for manifest in args.manifests:
        cuts = list(cuts_from_manifests(recordings_beside(manifest), manifest))[: args.limit]
        items += [(labels, streamed_log_probs(model, audio, args.chunk_frames)[: len(labels)])
                  for _, audio, labels in utterances(cuts)]
    print(f"{len(items)} utterances from {', '.join(map(str, args.manifests))}")

    def score(**kwargs) -> Scores:
        scores = Scores(args.chunk_frames)
        for labels, log_probs in items:
            scores.add(labels, log_probs, **kwargs)
        return scores

    print(f"{'segmenter':<48} {'frame acc':>9} {'PER':>7}")
    for min_frames in (3, 4, 5):
        s = score(min_frames=min_frames)
        print(f"{'hysteresis, min_frames ' + str(min_frames):<48} {100 * s.frame_accuracy:8.2f}% {100 * s.phone_error_rate:6.2f}%")
    best = None
    for min_frames, lm_weight, penalty in itertools.product((2, 3, 4), (0.5, 1.0, 2.0), (0.0, 2.0, 4.0)):
        config = DecoderConfig(min_frames=min_frames, lm_weight=lm_weight, insertion_penalty=penalty)
        s = score(decoder="bigram", decoder_config=config)
        name = f"bigram, min {min_frames}, lm weight {lm_weight}, penalty {penalty}"
        print(f"{name:<48} {100 * s.frame_accuracy:8.2f}% {100 * s.phone_error_rate:6.2f}%", flush=True)
        if best is None or s.phone_error_rate < best[0]:
            best = (s.phone_error_rate, name)
    print(f"lowest PER: {best[1]} ({100 * best[0]:.2f} %)")


if __name__ == "__main__":
    main()
