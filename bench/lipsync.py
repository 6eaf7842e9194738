"""How right is the mouth?  Viseme frame accuracy and viseme error rate on real speech, ours beside pocketsphinx.

For each utterance of each manifest, three phone streams become mouth cues through the same tables and the
same animation rules (speechattn/visemes.py: make_cues with the default CueRules):

  reference     the manifest's frame labels (silver: forced alignments), as runs of phones
  speechattn    the ONNX model streamed at its default chunk, through the bigram decoder: what `transcribe
                --format rhubarb-json` and `mic --visemes` give, at the default latency
  pocketsphinx  pocketsphinx's allphone decoder (the recognizer Rhubarb Lip Sync uses), its own segments
  +script       with --dialog: ours given the utterance's transcript (`transcribe --dialog`): the aligned
                phones, and the recognised ones where the speech departs from the script

and are scored by the same code: frame accuracy (the share of 10 ms frames whose shape equals the reference's;
frames the reference ignores are left out) and viseme error rate (edit distance between the sequences of cue
shapes over the reference's number of cues).  For the Rhubarb and VRM sets, and Oculus's 15 for reference.

    python bench/lipsync.py data/real-dev/real-dev_supervisions_dev.jsonl.gz \
        data/speechocean762/speechocean762_supervisions_dev.jsonl.gz data/ljspeech/ljspeech_supervisions_dev.jsonl.gz
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from speechattn_export.decoder import new_segmenter  # noqa: E402
from speechattn.phones import IGNORE, PHONES, PHONE_TO_INDEX, SILENCE  # noqa: E402
from speechattn_export.segments import Segment, label_intervals  # noqa: E402
from speechattn_export.visemes import SETS, cue_labels, make_cues  # noqa: E402

SYSTEMS = ("speechattn", "pocketsphinx")


def label_segments(labels: np.ndarray) -> list[Segment]:
    """Frame labels -> phone segments (ignored frames count as silence for the reference's cues)."""
    labels = np.where(labels == IGNORE, PHONE_TO_INDEX[SILENCE], labels)
    return [Segment(start, end, phone, 1.0) for start, end, phone in label_intervals(labels)]


class VisemeScores:
    def __init__(self) -> None:
        self.correct = self.frames = self.errors = self.cues = 0

    def add(self, reference: list, hypothesis: list, num_frames: int, scored: np.ndarray, visemes) -> None:
        from rapidfuzz.distance import Levenshtein

        ref, hyp = cue_labels(reference, visemes, num_frames), cue_labels(hypothesis, visemes, num_frames)
        self.correct += int(np.sum((ref == hyp) & scored))
        self.frames += int(scored.sum())
        self.errors += Levenshtein.distance([c.shape for c in reference], [c.shape for c in hypothesis])
        self.cues += len(reference)

    @property
    def frame_accuracy(self) -> float:
        return self.correct / max(1, self.frames)

    @property
    def error_rate(self) -> float:
        return self.errors / max(1, self.cues)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("manifests", nargs="+", type=Path, help="*_supervisions_*.jsonl.gz with recordings beside")
    parser.add_argument("--model", type=Path, default=Path("export/models/default.onnx"))
    parser.add_argument("--sets", default="rhubarb,vrm,oculus", help="viseme sets, comma-separated")
    parser.add_argument("--limit", type=int, help="first N utterances of each manifest")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--dialog", action="store_true", help="also score ours given the transcript (+script)")
    args = parser.parse_args()

    from pocketsphinx_peer import AllphoneDecoder

    from speechattn.data.dataset import cuts_from_manifests
    from speechattn.data.manifests import recordings_beside
    from speechattn.training.evaluate import streamed_log_probs, utterances
    from speechattn_export.stream_client import StreamingModel

    sets = [SETS[name] for name in args.sets.split(",")]
    systems = SYSTEMS + (("+script",) if args.dialog else ())
    if args.dialog:
        from speechattn.runtime.align import script_segments
        from speechattn_export.align import align
        from speechattn_export.words import Lexicon

        lexicon = Lexicon.load()
    model = StreamingModel(args.model, num_threads=1)
    chunk = model.default_chunk_frames
    lookahead = int(model.metadata.get("decoder_lookahead_frames", "10"))
    sphinx = AllphoneDecoder()
    print(f"ours: {args.model.name} streamed at its default chunk ({chunk} frames), bigram decoder: final labels "
          f"{(chunk + model.output_delay_frames + lookahead) * 10} ms after the audio; peer: pocketsphinx allphone "
          "(whole utterances); both through the same viseme tables and cue rules, scored by the same code")
    report: dict = {}
    print(f"{'data':<34} {'set':<8} {'speechattn':>22} {'pocketsphinx':>22} {'ahead by':>9}")
    print(f"{'':<34} {'':<8} {'frame acc / VER':>22} {'frame acc / VER':>22} {'(frames)':>9}")
    for manifest in args.manifests:
        cuts = list(cuts_from_manifests(recordings_beside(manifest), manifest))[: args.limit]
        scores = {(system, v.name): VisemeScores() for system in systems for v in sets}
        texts = {cut.supervisions[0].id: cut.supervisions[0].text or "" for cut in cuts}
        for item_id, audio, labels in utterances(cuts):
            frames = len(labels)
            scored = labels != IGNORE
            log_probs = streamed_log_probs(model, audio, chunk)[:frames]
            decoder = new_segmenter("bigram", PHONES)
            ours = decoder.push(log_probs) + decoder.finish()
            theirs = label_segments(sphinx.frame_labels(audio)[:frames])
            reference = label_segments(labels)
            scripted = None
            if args.dialog:
                words = lexicon.words(texts[item_id])
                scripted = script_segments(align(log_probs, words, model.phones), ours, model.phones) if words \
                    else ours
            for v in sets:
                if scripted is not None:
                    scores["+script", v.name].add(make_cues(reference, v, PHONES), make_cues(scripted, v, PHONES),
                                                  frames, scored, v)
                truth = make_cues(reference, v, PHONES)
                scores["speechattn", v.name].add(truth, make_cues(ours, v, PHONES), frames, scored, v)
                scores["pocketsphinx", v.name].add(truth, make_cues(theirs, v, PHONES), frames, scored, v)
        name = manifest.name.removesuffix(".jsonl.gz")
        for v in sets:
            a, b = scores["speechattn", v.name], scores["pocketsphinx", v.name]
            print(f"{name:<34} {v.name:<8} {100 * a.frame_accuracy:>10.1f} % / {100 * a.error_rate:>5.1f} % "
                  f"{100 * b.frame_accuracy:>10.1f} % / {100 * b.error_rate:>5.1f} % "
                  f"{100 * (a.frame_accuracy - b.frame_accuracy):>+8.1f}")
            if args.dialog:
                c = scores["+script", v.name]
                print(f"{'':<34} {'+script':<8} {100 * c.frame_accuracy:>10.1f} % / {100 * c.error_rate:>5.1f} % "
                      f"(ours given the transcript: {100 * (c.frame_accuracy - a.frame_accuracy):+.1f} points)")
            report.setdefault(name, {})[v.name] = {
                system: {"frame_accuracy": s.frame_accuracy, "viseme_error_rate": s.error_rate, "frames": s.frames,
                         "reference_cues": s.cues} for system, s in (("speechattn", a), ("pocketsphinx", b))}
    print("VER: viseme error rate (edit distance of the cue shapes / reference cues); labels: silver forced "
          "alignments made with pocketsphinx's acoustic model, which favours the peer's frame boundaries")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
