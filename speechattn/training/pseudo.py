"""`speechattn pseudo-label`: frame labels for untranscribed speech, made by a trained tagger.

The teacher runs at full context (it sees the whole utterance, past and future), the bigram decoder
turns its posteriors into a phone path, and frames whose decoded phone has a posterior below
`min_confidence` are left unlabelled (IGNORE: they count for nothing in training).  What a streaming
student learns from these labels is what the same weights know when they see the future: a
full-context teacher distilled into chunked attention, on speakers no labelled set has.  The labels
are bronze; whether they help is measured on held-out labelled speech (README, default model).

Input: a directory with `utterances.tsv` (utterance, speaker, ... columns, a header line) and
`audio/<utterance>.<ext>`, the layout of ../shared/data/librispeech-clips.  Output: manifests
DIR/NAME_{recordings,supervisions}_train.jsonl.gz (and empty dev and test pairs, so the set can be
listed in `train.sets` like any other; every utterance is training data).
"""

from __future__ import annotations

import csv
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from speechattn.errors import SpeechattnError
from speechattn.files import listed_below

log = logging.getLogger(__name__)

AUDIO_SUFFIXES = (".wav", ".flac", ".opus", ".ogg")


@dataclass
class PseudoLabelSummary:
    utterances: int
    speakers: int
    hours: float
    labelled_share: float  # of frames, after the confidence cut
    mean_confidence: float
    skipped: list[str]  # clips left out: unreadable or under 0.1 s, each with the reason


def read_clip_list(root: Path) -> list[tuple[str, str, Path]]:
    """(utterance, speaker, audio path) of every row of root/utterances.tsv."""
    table = root / "utterances.tsv"
    if not table.exists():
        raise SpeechattnError(f"{root}: no utterances.tsv (utterance, speaker columns and a header line)")
    audio = {p.stem: p for p in listed_below(root / "audio") if p.suffix.lower() in AUDIO_SUFFIXES}
    clips = []
    with table.open(newline="") as handle:
        rows = csv.reader(handle, delimiter="\t")
        header = next(rows, None)
        if not header or len(header) < 2:
            raise SpeechattnError(f"{table}: expected a header line with at least utterance and speaker")
        for number, row in enumerate(rows, 2):
            if not row:
                continue
            if len(row) < 2:
                raise SpeechattnError(f"{table}:{number}: expected utterance<TAB>speaker, got {row!r}")
            utterance, speaker = row[0].strip(), row[1].strip()
            if utterance not in audio:
                raise SpeechattnError(f"{root}: no audio for utterance {utterance} under audio/")
            clips.append((utterance, speaker, audio[utterance]))
    if not clips:
        raise SpeechattnError(f"{table}: lists no utterances")
    return clips


def frame_pseudo_labels(log_probs: np.ndarray, log_bigram: np.ndarray, silence: int,
                        min_confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """(labels (T,) with IGNORE below min_confidence, confidence (T,)): the decoded path of one utterance."""
    from speechattn_export.decoder import DecoderConfig, decode
    from speechattn.phones import IGNORE
    from speechattn_export.segments import segment_labels

    labels = segment_labels(decode(log_probs, log_bigram, DecoderConfig(), silence), len(log_probs))
    confidence = np.exp(log_probs[np.arange(len(labels)), labels])
    labels = labels.copy()
    labels[confidence < min_confidence] = IGNORE
    return labels, confidence


WINDOW_FRAMES = 3000  # 30 s: full-context attention over longer clips is done in overlapping windows of this size
WINDOW_OVERLAP_FRAMES = 400  # each window's outputs are kept only from 2 s past its start (context on both sides)


def full_context_log_probs(model, samples, frames: int) -> np.ndarray:
    """(frames, classes) at full context; a clip longer than WINDOW_FRAMES in overlapping windows, so memory stays
    bounded (full attention over a whole 10-minute clip wanted > 8 GB).  Each frame's row comes from the window
    where it has at least half the overlap of context on each side (except at the clip's ends)."""
    import torch

    if frames <= WINDOW_FRAMES:
        return model.tag(samples, torch.tensor([frames]), None)[0, :frames].float().numpy()
    from speechattn.audio import HOP_SAMPLES

    step, half = WINDOW_FRAMES - WINDOW_OVERLAP_FRAMES, WINDOW_OVERLAP_FRAMES // 2
    pieces, start = [], 0
    while True:
        end = min(start + WINDOW_FRAMES, frames)
        window = samples[:, start * HOP_SAMPLES : end * HOP_SAMPLES]
        rows = model.tag(window, torch.tensor([end - start]), None)[0, : end - start].float().numpy()
        keep_from = 0 if start == 0 else half
        keep_to = end - start if end == frames else end - start - half
        pieces.append(rows[keep_from:keep_to])
        if end == frames:
            break
        start += step
    out = np.concatenate(pieces)
    assert len(out) == frames, (len(out), frames)
    return out


def pseudo_label(root: str | Path, output: str | Path, name: str = "pseudo", teacher: str = "default",
                 min_confidence: float = 0.5, progress: bool = True) -> PseudoLabelSummary:
    import torch
    from lhotse import RecordingSet, SupervisionSet
    from tqdm import tqdm

    from speechattn.audio import FRAMES_PER_SECOND, num_frames
    from speechattn.data.corpora import CorpusError, _recording, _supervision, unreadable
    from speechattn.data.manifests import SPLITS, manifest_pair
    from speechattn_export.decoder import PhoneBigram
    from speechattn.model.encoder import load
    from speechattn.phones import IGNORE, PHONES
    from speechattn_export.segments import label_intervals
    from speechattn.training.train import checkpoint_source

    if not 0 <= min_confidence < 1:
        raise SpeechattnError("--min-confidence must be in [0, 1)")
    root, output = Path(root), Path(output)
    clips = read_clip_list(root)
    model = load(checkpoint_source(teacher)).eval()
    log_bigram = PhoneBigram.load().for_phones(list(PHONES))
    silence = PHONES.index("sil")
    recordings, supervisions, labelled, total, confidence_sum, skipped = [], [], 0, 0, 0.0, []
    with torch.no_grad():
        for utterance, speaker, path in tqdm(clips, desc="pseudo-labelling", unit="utt", disable=not progress):
            try:  # one bad clip is reported and left out; the others are still labelled
                recording = _recording(path, utterance)
                audio = recording.load_audio()
            except CorpusError as error:
                skipped.append(str(error).splitlines()[0][:200])
                continue
            except Exception as error:  # decoders raise many types for a damaged file
                skipped.append(f"{path}: {unreadable(path, error)}")
                continue
            audio = audio.mean(0) if audio.ndim == 2 else audio
            frames = num_frames(audio.shape[-1])
            if frames < 10:
                skipped.append(f"{path}: shorter than 0.1 s")
                continue
            samples = torch.from_numpy(np.ascontiguousarray(audio, dtype=np.float32))[None]
            log_probs = full_context_log_probs(model, samples, frames)
            labels, confidence = frame_pseudo_labels(log_probs.astype(np.float64), log_bigram, silence,
                                                     min_confidence)
            kept = labels != IGNORE
            labelled, total = labelled + int(kept.sum()), total + frames
            confidence_sum += float(confidence.sum())
            intervals = [(s / FRAMES_PER_SECOND, e / FRAMES_PER_SECOND, p) for s, e, p in label_intervals(labels)]
            supervisions.append(_supervision(recording, intervals, speaker, custom={
                "fixed_split": "train", "labels": f"pseudo: {teacher} at full context, bigram decoder, "
                                                  f"posterior >= {min_confidence}"}))
            recordings.append(recording)
    if not supervisions:
        raise SpeechattnError(f"{root}: no clip could be labelled ({'; '.join(skipped[:3])})")
    from speechattn.files import atomic_path

    output.mkdir(parents=True, exist_ok=True)
    for split in SPLITS:
        recordings_path, supervisions_path = manifest_pair(output / name, split)
        keep = split == "train"
        with atomic_path(recordings_path) as temporary:
            RecordingSet.from_recordings(recordings if keep else []).to_file(temporary)
        with atomic_path(supervisions_path) as temporary:
            SupervisionSet.from_segments(supervisions if keep else []).to_file(temporary)
    return PseudoLabelSummary(len(supervisions), len({s.speaker for s in supervisions}),
                              sum(s.duration for s in supervisions) / 3600, labelled / max(1, total),
                              confidence_sum / max(1, total), skipped)
