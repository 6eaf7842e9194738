"""Our model against pocketsphinx's phone decoder on the same real speech, side by side.

pocketsphinx runs in allphone mode with its bundled US English acoustic model and phone language
model (en-us-phone.lm.bin), the classic open-source phone recognizer; it decodes whole utterances
(no streaming).  Ours streams each utterance through the ONNX model at the given chunk size.
Both are scored with the same code (speechattn/evaluate.py): frame accuracy and PER against the
manifest's labels.  pocketsphinx's own segments are its phones (no extra smoothing); ours go
through the decoder (--decoder, default the bigram decoder), as `speechattn transcribe` prints them.

Caveat printed with the results: the real-speech labels of speechocean762 and the asterisk
prompts were themselves made by pocketsphinx's aligner, with the same acoustic model, so
boundaries favour pocketsphinx's frame accuracy.  PER (phone sequences) is less affected.

    python bench/pocketsphinx_peer.py data/real-dev/real-dev_supervisions_dev.jsonl.gz \
        data/speechocean762/speechocean762_supervisions_dev.jsonl.gz --model export/models/default.onnx
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from speechattn.audio import FRAMES_PER_SECOND, SAMPLE_RATE  # noqa: E402
from speechattn.data.manifests import recordings_beside  # noqa: E402
from speechattn.training.evaluate import Scores, streamed_log_probs, utterances  # noqa: E402
from speechattn.phones import NUM_PHONES, PHONE_TO_INDEX, SILENCE, from_arpabet  # noqa: E402


class AllphoneDecoder:
    def __init__(self) -> None:
        import pocketsphinx

        model = Path(pocketsphinx.get_model_path()) / "en-us"
        self.decoder = pocketsphinx.Decoder(samprate=SAMPLE_RATE, allphone=str(model / "en-us-phone.lm.bin"),
                                            lm=None, dict=None, lw=2.0, beam=1e-20, pbeam=1e-20, bestpath=False,
                                            loglevel="FATAL")

    def frame_labels(self, audio: np.ndarray) -> np.ndarray:
        """One phone index per 10 ms frame; pocketsphinx's SIL and noise units are silence."""
        pcm = (np.clip(audio, -1, 1) * 32767).astype(np.int16).tobytes()
        self.decoder.start_utt()
        self.decoder.process_raw(pcm, full_utt=True)
        self.decoder.end_utt()
        frames = -(-len(audio) // (SAMPLE_RATE // FRAMES_PER_SECOND))
        labels = np.full(frames, PHONE_TO_INDEX[SILENCE], dtype=np.int64)
        for seg in self.decoder.seg():
            name = seg.word
            if name in ("SIL", "<s>", "</s>", "<sil>") or name.startswith("+") or name.startswith("["):
                continue
            labels[seg.start_frame : seg.end_frame + 1] = from_arpabet(name)
        return labels


def one_hot(labels: np.ndarray) -> np.ndarray:
    log_probs = np.full((len(labels), NUM_PHONES), -30.0)
    log_probs[np.arange(len(labels)), labels] = 0.0
    return log_probs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("manifests", nargs="+", type=Path, help="*_supervisions_*.jsonl.gz with recordings beside")
    parser.add_argument("--model", type=Path, default=Path("export/models/default.onnx"))
    parser.add_argument("--chunk-frames", type=int, default=None, help="ours: default the model's own")
    parser.add_argument("--decoder", choices=["bigram", "hysteresis"], default="bigram", help="ours: posteriors to phones")
    parser.add_argument("--limit", type=int, help="first N utterances of each manifest")
    parser.add_argument("--threads", type=int, default=1, help="onnxruntime threads (pocketsphinx uses one)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    from speechattn.data.dataset import cuts_from_manifests
    from speechattn_export.stream_client import StreamingModel

    ours_model = StreamingModel(args.model, num_threads=args.threads)
    args.chunk_frames = args.chunk_frames or ours_model.default_chunk_frames
    meta = ours_model.metadata
    lookahead = int(meta.get("decoder_lookahead_frames", "10")) if args.decoder == "bigram" else 0
    latency_ms = (args.chunk_frames + ours_model.output_delay_frames + lookahead) * ours_model.frame_shift_ms
    sphinx = AllphoneDecoder()
    report = {"latency": {"chunk_frames": args.chunk_frames, "output_delay_frames": ours_model.output_delay_frames,
                          "decoder_lookahead_frames": lookahead, "final_ms": latency_ms,
                          "metadata_final_latency_ms": meta.get("final_latency_ms")}}
    print(f"ours: {args.model} streamed at chunk {args.chunk_frames}, {args.threads} thread(s); "
          f"peer: pocketsphinx {version('pocketsphinx')} allphone, bundled en-us model and phone LM")
    print(f"algorithmic latency of our final labels: {latency_ms:.0f} ms = chunk {args.chunk_frames} + output delay "
          f"{ours_model.output_delay_frames} + decoder look-ahead {lookahead} frames of 10 ms (metadata: "
          f"final_latency_ms {meta.get('final_latency_ms', 'not stated')})")
    print(f"{'data':<34} {'system':<12} {'frame acc':>9} {'PER':>7} {'s per s audio':>14}")
    for manifest in args.manifests:
        recordings = recordings_beside(manifest)
        cuts = list(cuts_from_manifests(recordings, manifest))[: args.limit]
        ours, peer = Scores(args.chunk_frames), Scores(None)
        ours_seconds = peer_seconds = audio_seconds = 0.0
        for _, audio, labels in utterances(cuts):
            audio_seconds += len(audio) / SAMPLE_RATE
            started = time.perf_counter()
            log_probs = streamed_log_probs(ours_model, audio, args.chunk_frames)
            ours_seconds += time.perf_counter() - started
            ours.add(labels, log_probs[: len(labels)], decoder=args.decoder)
            started = time.perf_counter()
            hypothesis = sphinx.frame_labels(audio)[: len(labels)]
            peer_seconds += time.perf_counter() - started
            peer.add(labels, one_hot(hypothesis), min_frames=1, decoder="hysteresis")  # its own segments, as they are
        name = manifest.name.removesuffix(".jsonl.gz")
        for system, score, seconds in (("speechattn", ours, ours_seconds), ("pocketsphinx", peer, peer_seconds)):
            print(f"{name:<34} {system:<12} {100 * score.frame_accuracy:>8.2f}% {100 * score.phone_error_rate:>6.2f}% "
                  f"{seconds / audio_seconds:>14.4f}")
            report.setdefault(name, {})[system] = {"frame_accuracy": score.frame_accuracy, "per": score.phone_error_rate,
                                                   "seconds_per_audio_second": seconds / audio_seconds,
                                                   "utterances": score.utterances, "frames": score.frames}
        report[name]["hours"] = audio_seconds / 3600
    print("labels: pocketsphinx forced alignments (silver) made with the same acoustic model the peer decodes "
          "with, so frame boundaries favour the peer")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
