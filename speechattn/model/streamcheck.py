"""`speechattn stream-check`: the user-facing proof that streaming is exact.

Streams one recording through the ONNX model (with the portable client) at each chunk size,
pushing the audio in several patterns (one hop at a time, random sizes, all at once), and
compares every frame with the one-shot result: the torch model's `forward` when a checkpoint
is given, and the ONNX graph fed the whole file in one call in any case.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from speechattn.audio import HOP_SAMPLES, SAMPLE_RATE
from speechattn.errors import SpeechattnError, UsageError

TOLERANCE = 1e-4  # max |delta log-prob| accepted as "exact"
INT8_MIN_AGREEMENT = 0.97  # an int8 file against its checkpoint's fp32 weights: labels kept, as export --int8 checks


@dataclass
class CheckRow:
    chunk_frames: int
    pattern: str
    reference: str
    frames: int
    max_abs_diff: float
    argmax_agreement: float
    real_time_factor: float
    int8_against_fp32: bool = False  # an 8-bit file against torch: its rounding, not streaming, sets the difference

    @property
    def exact(self) -> bool:
        if self.int8_against_fp32:
            return self.argmax_agreement >= INT8_MIN_AGREEMENT
        return self.max_abs_diff <= TOLERANCE and self.argmax_agreement == 1.0


def push_patterns(num_samples: int, seed: int = 0) -> dict[str, list[int]]:
    """Piece sizes (in samples) for each way of pushing the audio."""
    rng = np.random.default_rng(seed)
    random_sizes, total = [], 0
    while total < num_samples:
        random_sizes.append(int(rng.integers(1, 4000)))
        total += random_sizes[-1]
    return {
        "one hop (160 samples) per push": [HOP_SAMPLES] * (-(-num_samples // HOP_SAMPLES)),
        "random 1-3999 samples per push": random_sizes,
        "whole recording in one push": [num_samples],
    }


def stream_pieces(model, audio: np.ndarray, chunk_frames: int, sizes: list[int]) -> tuple[np.ndarray, float]:
    """Log-probs (T, classes) of `audio` pushed in pieces of `sizes`, and the seconds it took."""
    import time

    stream = model.new_stream(chunk_frames)
    outputs, start, position = [], time.perf_counter(), 0
    for size in sizes:
        outputs.append(stream.push(audio[position : position + size]).log_probs)
        position += size
    outputs.append(stream.finish().log_probs)
    return np.concatenate(outputs), time.perf_counter() - start


def run_check(onnx_path: Path, audio: np.ndarray, checkpoint: Path | None, chunk_sizes: list[int] | None,
              num_threads: int = 1, progress: bool = True) -> list[CheckRow]:
    from speechattn_export.stream_client import StreamingModel
    from tqdm import tqdm

    try:
        model = StreamingModel(onnx_path, num_threads=num_threads)
    except Exception as error:  # onnxruntime's load errors, or the client's own check of the metadata
        raise SpeechattnError(f"cannot use {onnx_path} as a streaming model: {error}") from None
    chunk_sizes = chunk_sizes or list(model.allowed_chunk_frames)
    for chunk in chunk_sizes:
        if chunk not in model.allowed_chunk_frames:
            raise UsageError(f"chunk size {chunk} is not one this model allows: {model.allowed_chunk_frames} "
                             "(--chunk-frames)")
    torch_model = None
    if checkpoint is not None:
        from speechattn.model.encoder import load

        torch_model = load(checkpoint)
        same_architecture(model, torch_model, onnx_path, checkpoint)
    int8 = model.metadata.get("quantization", "none") != "none"
    patterns = push_patterns(len(audio))
    seconds = len(audio) / SAMPLE_RATE
    rows = []
    jobs = [(c, name) for c in chunk_sizes for name in patterns]
    for chunk, name in tqdm(jobs, desc="streaming", unit="run", disable=not progress, leave=False):
        streamed, elapsed = stream_pieces(model, audio, chunk, patterns[name])
        references = {"ONNX, one call": stream_pieces(model, audio, chunk, [len(audio)])[0]}
        if torch_model is not None:
            import torch

            frames = torch.tensor([-(-len(audio) // HOP_SAMPLES)])
            with torch.no_grad():  # row t labels frame t, the output delay taken off as the clients take it off
                references["torch forward()"] = torch_model.tag(torch.from_numpy(audio)[None], frames, chunk)[0].numpy()
        for reference_name, reference in references.items():
            if name.startswith("whole") and reference_name.startswith("ONNX"):
                continue  # identical by construction
            same_shape = reference.shape == streamed.shape
            diff = float(np.abs(reference - streamed).max()) if same_shape else float("inf")
            agree = float((reference.argmax(-1) == streamed.argmax(-1)).mean()) if same_shape else 0.0
            rows.append(CheckRow(chunk, name, reference_name, len(streamed), diff, agree, elapsed / seconds,
                                 int8 and reference_name.startswith("torch")))
    return rows


def same_architecture(model, torch_model, onnx_path: Path, checkpoint: Path) -> None:
    """One line when the checkpoint cannot be the one the file was exported from: its stream state or output delay
    differs (another number of layers, width or left context), instead of a comparison that fails everywhere."""
    state = torch_model.initial_state(1)
    theirs = {spec["name"]: [d for d in spec["shape"] if d != "batch"] for spec in model.states}
    caches = {"kv_cache": state.kv_cache, "conv_cache": state.conv_cache or ()}
    ours = {}
    for name, layers in caches.items():  # N x (1, ...) in torch
        if not layers:
            continue
        if name in theirs:  # contract version 1: all layers in one tensor, layer first
            ours[name] = [len(layers), *layers[0].shape[1:]]
        else:  # version 2: a tensor a layer
            ours.update({f"{name}_{i}": list(layer.shape[1:]) for i, layer in enumerate(layers)})
    differences = [f"{name} {theirs.get(name)} against {shape}" for name, shape in ours.items()
                   if list(theirs.get(name, [])) != list(shape)]
    delay = int(model.metadata.get("output_delay_frames", 0))
    if delay != torch_model.config.output_delay_frames:
        differences.append(f"output delay {delay} against {torch_model.config.output_delay_frames} frames")
    if differences:
        raise SpeechattnError(f"{checkpoint} is not what {onnx_path} was exported from: another architecture "
                              f"(the file's stream state {', '.join(differences)} in the checkpoint)")


def format_rows(rows: list[CheckRow]) -> str:
    lines = [f"{'chunk':>5}  {'pushed as':<32} {'compared with':<17} {'frames':>6}  {'max|Δ log-prob|':>15}  "
             f"{'argmax agree':>12}  {'RTF':>6}"]
    for r in rows:
        lines.append(f"{r.chunk_frames:>5}  {r.pattern:<32} {r.reference:<17} {r.frames:>6}  {r.max_abs_diff:>15.2e}  "
                     f"{100 * r.argmax_agreement:>11.2f}%  {r.real_time_factor:>6.3f}")
    return "\n".join(lines)
