"""What bench/align.py, bench/agreed_boundaries.py and bench/real_edges.py share (and import from here, so that none
imports another for its pieces): the model's posteriors of a recording, scripts made of the reference's phones,
our alignment as frame labels, the phone classes boundaries are grouped by, the tolerances they are scored at.
bench/align.py --agreed still runs bench/agreed_boundaries.py's check: one direction only."""

from __future__ import annotations

import numpy as np

from speechattn.phones import PHONE_TO_INDEX, PHONES
from speechattn_export.segments import label_intervals

SIL = PHONE_TO_INDEX["sil"]
TOLERANCES_MS = (10, 20, 50)  # a boundary counts as found within each of these of the reference's
CLASSES = {
    "stop": {"P", "B", "T", "D", "K", "G"}, "affricate": {"CH", "JH"},
    "fricative": {"F", "V", "TH", "DH", "S", "Z", "SH", "ZH", "HH"}, "nasal": {"M", "N", "NG"},
    "liquid/glide": {"L", "R", "W", "Y"},
}


def phone_class(phone: str) -> str:
    return next((name for name, members in CLASSES.items() if phone in members), "vowel")


class ScriptWord:
    """A word of a script given by its phones (the kit's Word has its text and pronunciations the same way)."""

    def __init__(self, text: str, phones: tuple[str, ...]) -> None:
        self.text, self.pronunciations = text, (phones,)


def words_between_pauses(labels: np.ndarray) -> list[list[str]]:
    """Frame labels -> the phones of each stretch between silences, one "word" each."""
    words, current = [], []
    for _, _, phone in label_intervals(labels):
        if phone == SIL:
            if current:
                words.append(current)
            current = []
        else:
            current.append(PHONES[phone])
    if current:
        words.append(current)
    return words


def ours_labels(alignment, frames: int) -> np.ndarray:
    """An alignment's phones as `frames` frame labels, silence between the words."""
    labels = np.full(frames, SIL, dtype=np.int64)
    for word in alignment.words:
        for p in word.phones:
            labels[p.start_frame:min(p.end_frame, frames)] = PHONE_TO_INDEX[p.phone]
    return labels


def log_posteriors(model, audio: np.ndarray, frames: int, chunk_frames: int, torch_model=None,
                   torch_chunk: str | None = None, phases: int = 1) -> np.ndarray:
    """(frames, phones) log-probabilities: the ONNX file streamed at `chunk_frames`, or with `torch_model` (weights
    in PyTorch: the bundled ones or --weights) the recording in one pass at `torch_chunk` frames a chunk, or "full": the whole
    recording seen at once (no streaming, no look-ahead bound).  phases > 1: the ONNX file's posteriors averaged over
    that many shifts of the audio (the kit's PhaseStream, as `speechattn align --phases`)."""
    if torch_model is None:
        stream = model.new_stream(chunk_frames, phases=phases)
        return np.concatenate([stream.push(audio).log_probs, stream.finish().log_probs])[:frames]
    import torch

    with torch.no_grad():
        samples = torch.from_numpy(np.ascontiguousarray(audio, dtype=np.float32))[None]
        lengths = torch.tensor([-(-len(audio) // 160)])
        chunk = None if torch_chunk == "full" else int(torch_chunk)
        return torch_model.tag(samples, lengths, chunk)[0, :frames].numpy()
