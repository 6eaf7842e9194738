"""How right is the mouth?  Viseme frame accuracy and viseme error rate on real speech, ours beside pocketsphinx.

For each utterance of each manifest, three phone streams become mouth cues through the same tables and the
same animation rules (speechattn/visemes.py: make_cues with the default CueRules):

  reference     the manifest's frame labels (silver: forced alignments), as runs of phones
  speechattn    the ONNX model streamed at its default chunk (--chunk-frames: another), through the bigram
                decoder: at the default what `mic --visemes` gives, at the largest (--chunk-frames 32 for the
                bundled files) what `transcribe --format rhubarb-json` and `speechattn-rhubarb` give a file
  pocketsphinx  pocketsphinx's allphone decoder (the recognizer Rhubarb Lip Sync uses), its own segments
  +script       with --dialog: ours given the utterance's transcript (`transcribe --dialog`): the aligned
                phones, and the recognised ones where the speech departs from the script

and are scored by the same code: frame accuracy (the share of 10 ms frames whose shape equals the reference's;
frames the reference ignores are left out) and viseme error rate (edit distance between the sequences of cue
shapes over the reference's number of cues: the mouth-change error rate).  For the Rhubarb and VRM sets, and
Oculus's 15 for reference.

Shown the moment it exists (a second table, VRM and Oculus): with the audio delayed by our latency, each cue is
drawn over the audio it belongs to (the scores above); without a delay, the display at audio time t shows what
existed at t:
  final cues    the cue labels shifted later by the final latency (model metadata `final_latency_ms`)
  low latency   the argmax of the frame weights (speechattn_export.visemes.frame_weights) of the newest frame the
                last whole chunk gave (chunk + output delay: `default_chunk_frames`, `output_delay_frames`, together
                `provisional_latency_ms`), held until the next chunk; delayed by the provisional latency it is the
                argmax of every frame's own weights
  never moves   the floor: every frame the set's most common reference shape
and, with --peers, real-time lip-sync tools (bench/lipsync_peers.py) at their own timestamps: their mouth per
frame becomes cues through the same animation rules (each shape as a phone it covers) and is scored by the same
code.  Own timestamps assume no latency compensation is needed: a tool's output stamped t is taken as shown at t,
though the tool only knows it later (the latency column, from each tool's code).  CPU per second of audio: ours
(stream, decoder, cues; one thread), pocketsphinx and pylipsync in this process, the browser tools as Chromium's
CPU minus the same page run without the tool, all in the same run.

    python bench/lipsync.py data/real-dev/real-dev_supervisions_dev.jsonl.gz \
        data/speechocean762/speechocean762_supervisions_dev.jsonl.gz data/ljspeech/ljspeech_supervisions_dev.jsonl.gz \
        [--peers headaudio,wlipsync,pylipsync]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
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


def shape_segments(frame_shapes: list[str], visemes, phones) -> list[Segment]:
    """A tool's shape per frame -> segments of one phone the set draws with that shape (its rest as silence, its
    closed lips as P), so make_cues applies to the tool's mouth the animation rules it applies to ours."""
    index = {phone: i for i, phone in enumerate(phones)}
    representative = {shape: covered[0] for shape, covered in visemes.covers.items()}
    representative[visemes.closed_lips], representative[visemes.rest] = "P", SILENCE
    labels = np.array([index[representative[shape]] for shape in frame_shapes], dtype=np.int64)
    return [Segment(start, end, phone, 1.0) for start, end, phone in label_intervals(labels)]


def shown_late(labels: np.ndarray, delay_frames: int, rest: int) -> np.ndarray:
    """Frame labels known `delay_frames` after their frame, shown at once over audio that is not delayed: the
    display at frame t shows label t - delay_frames (the rest shape before the first)."""
    shown = np.full_like(labels, rest)
    if delay_frames < len(labels):
        shown[delay_frames:] = labels[: len(labels) - delay_frames]
    return shown


def shown_per_chunk(labels: np.ndarray, chunk_frames: int, output_delay_frames: int, rest: int) -> np.ndarray:
    """The low-latency mouth over audio that is not delayed: during chunk k (frames k*chunk ... k*chunk + chunk - 1)
    the audio heard ends at frame k*chunk, so the newest frame out is k*chunk - 1 - output_delay_frames; it is held
    until the next chunk (the rest shape before the first)."""
    newest = (np.arange(len(labels)) // chunk_frames) * chunk_frames - 1 - output_delay_frames
    return np.where(newest >= 0, labels[np.clip(newest, 0, None)], rest)


class FrameScores:
    """Frame accuracy of frame labels against the reference cues (no cue sequence: no VER)."""

    def __init__(self) -> None:
        self.correct = self.frames = 0

    def add(self, reference: np.ndarray, shown: np.ndarray, scored: np.ndarray) -> None:
        self.correct += int(np.sum((reference == shown) & scored))
        self.frames += int(scored.sum())

    @property
    def frame_accuracy(self) -> float:
        return self.correct / max(1, self.frames)


class NeverMoves:
    """The floor: a mouth that always shows one shape, the set's most common reference shape (chosen after
    seeing them all).  Against one cue, the edit distance is the reference's cues less one if the shape is among
    them."""

    def __init__(self) -> None:
        self.frames_of, self.errors_of, self.frames, self.cues = Counter(), Counter(), 0, 0

    def add(self, reference: list, labels: np.ndarray, scored: np.ndarray, visemes) -> None:
        self.frames_of.update(visemes.shapes[i] for i in labels[scored])
        self.frames += int(scored.sum())
        shapes = {c.shape for c in reference}
        for shape in visemes.shapes:
            self.errors_of[shape] += len(reference) - (shape in shapes)
        self.cues += len(reference)

    @property
    def shape(self) -> str:
        return self.frames_of.most_common(1)[0][0] if self.frames_of else ""

    @property
    def frame_accuracy(self) -> float:
        return self.frames_of[self.shape] / max(1, self.frames)

    @property
    def error_rate(self) -> float:
        return self.errors_of[self.shape] / max(1, self.cues)


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


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("manifests", nargs="+", type=Path, help="*_supervisions_*.jsonl.gz with recordings beside")
    parser.add_argument("--model", type=Path, default=Path("export/models/default.onnx"))
    parser.add_argument("--sets", default="rhubarb,vrm,oculus", help="viseme sets, comma-separated")
    parser.add_argument("--limit", type=int, help="first N utterances of each manifest")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--dialog", action="store_true", help="also score ours given the transcript (+script)")
    parser.add_argument("--chunk-frames", type=int, default=None, metavar="C",
                        help="stream ours at this chunk (a file's mouth: no one waits for it) instead of the model's "
                             "default (the live one); the table of mouths shown the moment they exist is about live "
                             "latency and is measured at the default chunk only")
    parser.add_argument("--phases", type=int, default=1, metavar="N",
                        help="ours averaged over N evenly spaced shifts of the audio, as `transcribe --phases N`")
    parser.add_argument("--peers", default="", help="real-time lip-sync tools to run beside, comma-separated: "
                        "headaudio, wlipsync, pylipsync (bench/lipsync_peers.py); one not installed is skipped")
    return parser.parse_args()


MOMENT_ROWS = ("final now", "low latency now", "low latency delayed")


class Lipsync:
    """The model, pocketsphinx and the peers, and each manifest's scores by system and viseme set."""

    def __init__(self, args: argparse.Namespace):
        from pocketsphinx_peer import AllphoneDecoder

        from speechattn_export.stream_client import StreamingModel

        self.args = args
        self.sets = [SETS[name] for name in args.sets.split(",")]
        self.moment_sets = [v for v in self.sets if v.name in ("vrm", "oculus")]
        self.systems = SYSTEMS + (("+script",) if args.dialog else ())
        if args.dialog:
            from speechattn_export.words import Lexicon

            self.lexicon = Lexicon.load()
        self.peers = {}
        if args.peers:
            import lipsync_peers

            self.peers = lipsync_peers.load_peers([name for name in args.peers.split(",") if name])
        self.model = model = StreamingModel(args.model, num_threads=1)
        self.chunk = chunk = args.chunk_frames or model.default_chunk_frames
        if chunk not in model.allowed_chunk_frames:
            raise SystemExit(f"--chunk-frames {chunk}: {args.model.name} serves {list(model.allowed_chunk_frames)}")
        if args.phases not in model.phase_counts:
            raise SystemExit(f"--phases {args.phases}: {args.model.name} takes {list(model.phase_counts)}")
        if chunk != model.default_chunk_frames or args.phases != 1:
            self.moment_sets = []  # live latency: the default chunk's
        self.lookahead = int(model.metadata.get("decoder_lookahead_frames", "10"))
        self.frame_ms = int(model.metadata["frame_shift_ms"])
        self.final_frames = int(model.metadata["final_latency_ms"]) // self.frame_ms
        provisional_frames = int(model.metadata["provisional_latency_ms"]) // self.frame_ms
        if provisional_frames != model.default_chunk_frames + model.output_delay_frames:
            raise SystemExit(f"{args.model}: provisional_latency_ms is not the default chunk + output delay")
        self.sphinx = AllphoneDecoder()

    def manifest(self, manifest: Path) -> dict:
        """Every utterance of one manifest scored; its report entry (figures by set and system, CPU)."""
        from speechattn.data.dataset import cuts_from_manifests
        from speechattn.data.manifests import recordings_beside
        from speechattn.training.evaluate import utterances

        cuts = list(cuts_from_manifests(recordings_beside(manifest), manifest))[: self.args.limit]
        self.scores = {(system, v.name): VisemeScores() for system in self.systems + tuple(self.peers)
                       for v in self.sets}
        self.moments = {(row, v.name): FrameScores() for row in MOMENT_ROWS for v in self.moment_sets}
        self.floors = {v.name: NeverMoves() for v in self.sets}
        self.cpu_seconds, self.audio_seconds = Counter(), 0.0
        texts = {cut.supervisions[0].id: cut.supervisions[0].text or "" for cut in cuts}
        for item_id, audio, labels in utterances(cuts):
            self.utterance(audio, labels, texts[item_id])
        return self.entry(manifest.name.removesuffix(".jsonl.gz"))

    def utterance(self, audio, labels, text: str) -> None:
        from speechattn.training.evaluate import streamed_log_probs

        model, cpu_seconds = self.model, self.cpu_seconds
        frames = len(labels)
        self.audio_seconds += len(audio) / model.sample_rate
        started = time.process_time()
        log_probs = streamed_log_probs(model, audio, self.chunk, self.args.phases)[:frames]
        decoder = new_segmenter("bigram", PHONES)
        ours = decoder.push(log_probs) + decoder.finish()
        ours_cues = {v.name: make_cues(ours, v, PHONES) for v in self.sets}
        cpu_seconds["speechattn"] += time.process_time() - started
        started = time.process_time()
        theirs = label_segments(self.sphinx.frame_labels(audio)[:frames])
        cpu_seconds["pocketsphinx"] += time.process_time() - started
        outputs = {}
        for name, peer in self.peers.items():
            outputs[name] = peer.run(audio, frames)
            cpu_seconds[name] += outputs[name].cpu_seconds
        reference = label_segments(labels)
        scripted = None
        if self.args.dialog:
            from speechattn.runtime.align import script_segments
            from speechattn_export.align import align

            words = self.lexicon.words(text)
            scripted = script_segments(align(log_probs, words, model.phones), ours, model.phones) if words else ours
        scored = labels != IGNORE
        for v in self.sets:
            if scripted is not None:
                self.scores["+script", v.name].add(make_cues(reference, v, PHONES), make_cues(scripted, v, PHONES),
                                                   frames, scored, v)
            truth = make_cues(reference, v, PHONES)
            self.scores["speechattn", v.name].add(truth, ours_cues[v.name], frames, scored, v)
            self.scores["pocketsphinx", v.name].add(truth, make_cues(theirs, v, PHONES), frames, scored, v)
            truth_labels = cue_labels(truth, v, frames)
            self.floors[v.name].add(truth, truth_labels, scored, v)
            for name, output in outputs.items():
                if v.name in output.shapes:
                    hypothesis = make_cues(shape_segments(output.shapes[v.name], v, PHONES), v, PHONES)
                    self.scores[name, v.name].add(truth, hypothesis, frames, scored, v)
            if v in self.moment_sets:
                self.moment(v, truth_labels, ours_cues[v.name], log_probs, frames, scored)

    def moment(self, v, truth_labels, cues, log_probs, frames: int, scored) -> None:
        from speechattn_export.visemes import frame_weights

        rest = v.shapes.index(v.rest)
        final_now = shown_late(cue_labels(cues, v, frames), self.final_frames, rest)
        self.moments["final now", v.name].add(truth_labels, final_now, scored)
        argmax = frame_weights(log_probs, v, self.model.phones).argmax(axis=1)
        self.moments["low latency delayed", v.name].add(truth_labels, argmax, scored)
        self.moments["low latency now", v.name].add(
            truth_labels, shown_per_chunk(argmax, self.chunk, self.model.output_delay_frames, rest), scored)

    def entry(self, name: str) -> dict:
        """The manifest's rows printed; its figures."""
        report: dict = {}
        for v in self.sets:
            a, b = self.scores["speechattn", v.name], self.scores["pocketsphinx", v.name]
            print(f"{name:<34} {v.name:<8} {100 * a.frame_accuracy:>10.1f} % / {100 * a.error_rate:>5.1f} % "
                  f"{100 * b.frame_accuracy:>10.1f} % / {100 * b.error_rate:>5.1f} % "
                  f"{100 * (a.frame_accuracy - b.frame_accuracy):>+8.1f}")
            if self.args.dialog:
                c = self.scores["+script", v.name]
                print(f"{'':<34} {'+script':<8} {100 * c.frame_accuracy:>10.1f} % / {100 * c.error_rate:>5.1f} % "
                      f"(ours given the transcript: {100 * (c.frame_accuracy - a.frame_accuracy):+.1f} points)")
            report[v.name] = {
                system: {"frame_accuracy": s.frame_accuracy, "viseme_error_rate": s.error_rate, "frames": s.frames,
                         "reference_cues": s.cues} for system, s in (("speechattn", a), ("pocketsphinx", b))}
            for peer in self.peers:
                if v.name in self.peers[peer].sets:
                    s = self.scores[peer, v.name]
                    report[v.name][peer] = {"frame_accuracy": s.frame_accuracy, "viseme_error_rate": s.error_rate}
            floor = self.floors[v.name]
            report[v.name]["never moves"] = {"shape": floor.shape, "frame_accuracy": floor.frame_accuracy,
                                             "viseme_error_rate": floor.error_rate}
            for row in MOMENT_ROWS:
                if (row, v.name) in self.moments:
                    report[v.name][row] = {"frame_accuracy": self.moments[row, v.name].frame_accuracy}
        report["cpu_per_audio_second"] = {k: c / max(self.audio_seconds, 1e-9) for k, c in self.cpu_seconds.items()}
        report["audio_seconds"] = self.audio_seconds
        return report


def main() -> int:
    args = parse_args()
    run = Lipsync(args)
    model, chunk = run.model, run.chunk
    print(f"ours: {args.model.name} streamed at {'its default' if chunk == model.default_chunk_frames else 'a'} chunk ({chunk} frames)"
          f"{f', averaged over {args.phases} phases' if args.phases != 1 else ''}, bigram decoder: final labels "
          f"{(chunk + model.output_delay_frames + run.lookahead) * 10} ms after the audio; peer: pocketsphinx allphone "
          "(whole utterances); both through the same viseme tables and cue rules, scored by the same code")
    print(f"{'data':<34} {'set':<8} {'speechattn':>22} {'pocketsphinx':>22} {'ahead by':>9}")
    print(f"{'':<34} {'':<8} {'frame acc / VER':>22} {'frame acc / VER':>22} {'(frames)':>9}")
    tables = [(manifest.name.removesuffix(".jsonl.gz"), run.manifest(manifest)) for manifest in args.manifests]
    print("VER: viseme error rate (edit distance of the cue shapes / reference cues); labels: silver forced "
          "alignments made with pocketsphinx's acoustic model, which favours the peer's frame boundaries")
    print_moments(tables, [v.name for v in run.moment_sets], list(run.peers), chunk * run.frame_ms,
                  model.output_delay_frames * run.frame_ms, run.final_frames * run.frame_ms)
    if args.json:
        args.json.write_text(json.dumps(dict(tables), indent=1) + "\n")
    if run.peers:
        import lipsync_peers

        lipsync_peers.close_browser()
    return 0


def print_moments(tables: list, set_names: list[str], peers: list[str], chunk_ms: int, output_delay_ms: int,
                  final_ms: int) -> None:
    """The second table: each mouth shown the moment it exists, beside the peers and the floor."""
    if not set_names:
        return
    latency = {"speechattn": f"final cues: {final_ms} ms (audio delayed by it)",
               "final now": f"0 (cues shown {final_ms} ms late)",
               "low latency delayed": f"{chunk_ms + output_delay_ms} ms (audio delayed by it)",
               "low latency now": f"0 (weights {chunk_ms} ms chunk + {output_delay_ms} ms output delay late)",
               "pocketsphinx": "whole utterance", "never moves": "0"}
    if peers:
        from lipsync_peers import LATENCY

        latency.update({peer: LATENCY[peer] for peer in peers})
    print("\nshown the moment it exists: frame accuracy / VER per set; CPU per second of audio (this run)")
    rows = ["speechattn", "final now", "low latency delayed", "low latency now", "pocketsphinx", *peers,
            "never moves"]
    for name, figures in tables:
        print(f"{name}")
        for row in rows:
            cells = []
            for set_name in set_names:
                cell = figures[set_name].get(row)
                if cell is None:
                    cells.append(f"{'-':>18}")
                elif "viseme_error_rate" in cell:
                    cells.append(f"{100 * cell['frame_accuracy']:>6.1f} % / {100 * cell['viseme_error_rate']:>5.1f} %")
                else:
                    cells.append(f"{100 * cell['frame_accuracy']:>6.1f} %{'':>10}")
            cpu = figures["cpu_per_audio_second"].get(row)
            cpu_text = f"{1000 * cpu:>6.1f} ms/s" if cpu is not None else f"{'':>11}"
            print(f"  {row:<20} " + " ".join(f"{set_name}: {c}" for set_name, c in zip(set_names, cells))
                  + f"  {cpu_text}  latency: {latency[row]}")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
