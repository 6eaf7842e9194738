"""Accuracy of a model on labelled data: frame accuracy, PER, per-phone accuracy, confusions.

Definitions (DESIGN.md):
  frame accuracy  share of labelled 10 ms frames whose argmax label equals the reference.
  PER             edit distance between the phone sequences of hypothesis and reference, over
                  the reference length.  A sequence is the runs of equal labels (consecutive
                  repeats merged) with silence runs removed; the hypothesis is the segmenter's
                  output (segments.py), the same phones `speechattn transcribe` prints.
Frames labelled IGNORE in the reference count in neither.

A checkpoint is run one-shot (batched, `forward` with the chunk size, which equals streaming by
construction); an ONNX file is streamed through the portable client, as an application would.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from speechattn_export.segments import label_intervals
from speechattn.phones import IGNORE, NUM_PHONES, PHONES, SILENCE, PHONE_TO_INDEX
from speechattn_export.segments import segment_labels

SILENCE_INDEX = PHONE_TO_INDEX[SILENCE]


def phone_sequence(labels: np.ndarray) -> list[int]:
    """Runs of equal labels, silence and ignored runs dropped."""
    return [p for _, _, p in label_intervals(labels) if p not in (SILENCE_INDEX, IGNORE)]


@dataclass
class Scores:
    """Running totals over utterances for one chunk size."""

    chunk_frames: int | None  # None: full context
    confusion: np.ndarray = field(default_factory=lambda: np.zeros((NUM_PHONES, NUM_PHONES), dtype=np.int64))
    edits: int = 0
    reference_phones: int = 0
    utterances: int = 0

    def add(self, reference: np.ndarray, log_probs: np.ndarray, min_frames: int | None = None,
            decoder: str = "bigram", decoder_config=None) -> None:
        """reference (T,) labels with IGNORE; log_probs (T, classes) for the same frames.

        With the hysteresis segmenter frames are scored by their argmax and phones by the segments; with the
        bigram decoder both come from the decoded path (what transcribe prints)."""
        from rapidfuzz.distance import Levenshtein

        from speechattn_export.decoder import new_segmenter

        reference = np.asarray(reference)
        segmenter = new_segmenter(decoder, PHONES, min_frames, decoder_config)
        segments = segmenter.push(log_probs) + segmenter.finish()
        smoothed = segment_labels(segments, len(reference))
        hypothesis = log_probs.argmax(-1) if decoder == "hysteresis" else smoothed.copy()
        mask = reference != IGNORE
        np.add.at(self.confusion, (reference[mask], hypothesis[mask]), 1)
        smoothed[~mask] = IGNORE  # ignored reference frames do not produce phones either
        ref_seq, hyp_seq = phone_sequence(reference), phone_sequence(smoothed)
        self.edits += Levenshtein.distance(ref_seq, hyp_seq)
        self.reference_phones += len(ref_seq)
        self.utterances += 1

    @property
    def frames(self) -> int:
        return int(self.confusion.sum())

    @property
    def frame_accuracy(self) -> float:
        return float(np.trace(self.confusion) / max(1, self.frames))

    @property
    def phone_error_rate(self) -> float:
        return self.edits / max(1, self.reference_phones)

    def per_phone_accuracy(self) -> dict[str, float | None]:
        totals = self.confusion.sum(1)
        return {PHONES[i]: (float(self.confusion[i, i] / totals[i]) if totals[i] else None) for i in range(NUM_PHONES)}

    def summary(self) -> dict:
        return {"chunk_frames": self.chunk_frames or "full", "utterances": self.utterances, "frames": self.frames,
                "frame_accuracy": round(self.frame_accuracy, 5), "per": round(self.phone_error_rate, 5),
                "reference_phones": self.reference_phones, "per_phone_accuracy": {
                    k: (round(v, 4) if v is not None else None) for k, v in self.per_phone_accuracy().items()}}


def utterances(cuts):
    """(id, audio, reference labels) of each cut, whole, no augmentation."""
    from speechattn.data.dataset import FrameLabelDataset

    dataset = FrameLabelDataset(cuts, augment=None, crop_seconds=None)
    from speechattn.errors import SpeechattnError

    for index, cut in enumerate(dataset.cuts):
        try:
            audio, labels = dataset.item(index, None)
        except Exception as error:  # lhotse's loading errors: a missing file, a source that returns other audio
            message = str(error).splitlines()[0][:160] if str(error) else type(error).__name__
            raise SpeechattnError(f"utterance {cut.id}: cannot load its audio ({message})") from None
        yield cut.supervisions[0].id, audio, labels


def evaluate_checkpoint(model, cuts, chunk_sizes: list[int | None], min_frames: int | None = None,
                        progress: bool = False, batch_size: int = 8, decoder: str = "bigram") -> list[Scores]:
    import torch
    from tqdm import tqdm

    from speechattn.audio import HOP_SAMPLES, SAMPLE_RATE
    from speechattn.data.dataset import collate
    from speechattn.phones import IGNORE
    from speechattn_export.stream_client import preroll

    scores = [Scores(c) for c in chunk_sizes]
    model.eval()
    device = next(model.parameters()).device
    items = list(utterances(cuts))
    # a model whose streams start empty (not primed: exported with stream_start "empty", as the file model) hears each
    # utterance after its pre-roll, as its exported file does in `transcribe` and evaluate_onnx (file_preroll); the
    # pre-roll's frames are dropped
    starts_empty = not getattr(model, "primed", True)
    with torch.no_grad():
        for start in tqdm(range(0, len(items), batch_size), desc="evaluating", unit="batch", disable=not progress):
            batch = items[start : start + batch_size]
            heads = [preroll(audio, SAMPLE_RATE, HOP_SAMPLES) if starts_empty else np.zeros(0, np.float32)
                     for _, audio, _ in batch]
            skips = [len(head) // HOP_SAMPLES for head in heads]
            audio, _, lengths = collate([(np.concatenate([head, audio]), np.concatenate([np.full(skip, IGNORE), labels]))
                                         for head, skip, (_, audio, labels) in zip(heads, skips, batch)])
            for score in scores:
                log_probs = model.tag(audio.to(device), lengths.to(device), score.chunk_frames).float().cpu().numpy()
                for row, (_, _, labels) in enumerate(batch):
                    score.add(labels, log_probs[row, skips[row] : skips[row] + len(labels)], min_frames, decoder)
    return scores


def streamed_log_probs(model, audio: np.ndarray, chunk_frames: int, phases: int = 1) -> np.ndarray:
    """One utterance streamed through a StreamingModel in one push, as `transcribe` streams a file (its pre-roll
    where the model wants one, file_preroll; `phases` as transcribe --phases): log-probs (frames, classes)."""
    from speechattn_export.stream_client import file_preroll

    stream = model.new_stream(chunk_frames, phases=phases)
    stream.prime(file_preroll(model, audio))
    return np.concatenate([stream.push(audio).log_probs, stream.finish().log_probs])


def evaluate_onnx(path, cuts, chunk_sizes: list[int], min_frames: int | None = None, decoder: str = "bigram",
                  progress: bool = False, phases: int = 1) -> list[Scores]:
    from tqdm import tqdm

    from speechattn_export.stream_client import StreamingModel

    model = StreamingModel(path)
    scores = [Scores(c) for c in chunk_sizes]
    items = list(cuts)
    for _, audio, labels in tqdm(utterances(items), total=len(items), desc="evaluating", unit="utt",
                                 disable=not progress):
        for score in scores:
            score.add(labels, streamed_log_probs(model, audio, score.chunk_frames, phases)[: len(labels)], min_frames,
                      decoder)
    return scores


def format_table(scores: list[Scores], delay_frames: int = 0, decoder_lag_frames: int = 10) -> str:
    """latency: of a final label, worst case: the chunk filling, the model's output delay, the decoder's lag."""
    lines = [f"{'chunk':>6} {'latency':>8} {'frames':>9} {'frame acc':>9} {'PER':>7}"]
    for s in scores:
        latency = ("offline" if s.chunk_frames is None
                   else f"{(s.chunk_frames + delay_frames + decoder_lag_frames) * 10} ms")
        lines.append(f"{s.chunk_frames or 'full':>6} {latency:>8} {s.frames:>9} {100 * s.frame_accuracy:>8.2f}% "
                     f"{100 * s.phone_error_rate:>6.2f}%")
    return "\n".join(lines)


def plot_confusion(score: Scores, path, title: str = "") -> None:
    """Row-normalised confusion matrix (reference rows, hypothesis columns) as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    totals = score.confusion.sum(1, keepdims=True)
    normalised = score.confusion / np.maximum(totals, 1)
    figure, axis = plt.subplots(figsize=(11, 10))
    image = axis.imshow(normalised, cmap="viridis", vmin=0, vmax=1)
    axis.set_xticks(range(NUM_PHONES), PHONES, rotation=90, fontsize=8)
    axis.set_yticks(range(NUM_PHONES), [f"{p} ({n})" for p, n in zip(PHONES, totals[:, 0])], fontsize=7)
    axis.set_xlabel("recognised")
    axis.set_ylabel("reference (frames)")
    chunk = "full context" if score.chunk_frames is None else f"chunk {score.chunk_frames}"
    axis.set_title(title or f"frame confusions, {chunk}: accuracy {100 * score.frame_accuracy:.1f} %, "
                   f"PER {100 * score.phone_error_rate:.1f} %")
    figure.colorbar(image, ax=axis, fraction=0.04, label="share of the reference phone's frames")
    figure.tight_layout()
    from speechattn.files import atomic_path

    with atomic_path(path) as temporary:
        figure.savefig(temporary, dpi=100)
    plt.close(figure)


def write_json(scores: list[Scores], path, **extra) -> None:
    path.write_text(json.dumps({**extra, "results": [s.summary() for s in scores]}, indent=1) + "\n")
