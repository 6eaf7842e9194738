"""Streaming from raw PCM: the frontend and the encoder stepped together, with every piece of
state an explicit, named tensor.  `StreamingGraph` is exactly what `speechattn export` writes
to ONNX; `StreamingSession` drives the same code from torch.

State (all zeros at the start of a stream; B batch, N layers, L left context, D model dim):
  audio_tail        (B, 240)         float32  the last 240 samples, the start of the next frame's window
  feature_history   (B, H, S)        float32  recent static features, only when deltas are on
  level_estimate    (B, 2, 3)        float32  the input level's two forgetting sums and the frames heard (as
                                              float32s, then the float32 of each one's remainder), only
                                              with level normalisation (frontend.level_target_dbfs)
  pending_features  (B, P, F)        float32  frames waiting for their chunk to fill (P grows 0..C-1)
  kv_cache_i        (B, L', 2D)      float32  layer i's attention keys, then values, of the last L' = L / S encoder
                                              positions (i = 0 .. N - 1: one tensor a layer, batch first); a primed
                                              model's less silence's (PhoneTagger.prime), so zeros are silence's
  cached_frames     (B,)             int64    how many of the L' cache slots hold real positions
  conv_cache_i      (B, W-1, D)      float32  layer i's convolution input at the last W - 1 positions (only with
                                              the convolution module, model.conv_kernel = W)

This is contract version 2 (export/CONTRACT.md).  Version 1 files held each cache as one tensor, layer first
((N, B, L', 2D) `kv_cache`, (N, B, W-1, D) `conv_cache`); the graph then split it into layers, joined each with the
new positions and restacked them every call, and the clients still read such files.
"""

from __future__ import annotations

import torch
from torch import nn

from speechattn.audio import HOP_SAMPLES, TAIL_SAMPLES
from speechattn.model.encoder import EncoderState, PhoneTagger
from speechattn.model.features import LEVEL_STATE

BATCH = "batch"  # symbolic dimension name in state specs


def state_specs(model: PhoneTagger) -> list[dict]:
    """Name, initial shape (with "batch" for the batch dimension) and dtype of every state tensor, in graph order."""
    c = model.config
    frontend = c.frontend
    specs = [{"name": "audio_tail", "shape": [BATCH, TAIL_SAMPLES], "dtype": "float32"}]
    if frontend.delta_order:
        specs.append(
            {"name": "feature_history", "shape": [BATCH, frontend.history_frames, frontend.static_dim], "dtype": "float32"}
        )
    if frontend.level_norm:
        specs.append({"name": "level_estimate", "shape": [BATCH, *LEVEL_STATE], "dtype": "float32"})
    specs += [
        {"name": "pending_features", "shape": [BATCH, 0, frontend.feature_dim], "dtype": "float32"},
        *({"name": f"kv_cache_{i}", "shape": [BATCH, c.left_context_positions, 2 * c.model_dim], "dtype": "float32"}
          for i in range(c.num_layers)),
        {"name": "cached_frames", "shape": [BATCH], "dtype": "int64"},
    ]
    if c.conv_kernel:
        specs += [{"name": f"conv_cache_{i}", "shape": [BATCH, c.conv_kernel - 1, c.model_dim], "dtype": "float32"}
                  for i in range(c.num_layers)]
    for spec in specs:
        spec["output"] = "new_" + spec["name"]
    return specs


def initial_state(model: PhoneTagger, batch_size: int = 1, device: torch.device | str = "cpu") -> dict[str, torch.Tensor]:
    dtypes = {"float32": torch.float32, "int64": torch.int64}
    return {
        spec["name"]: torch.zeros([batch_size if d == BATCH else d for d in spec["shape"]], dtype=dtypes[spec["dtype"]],
                                  device=device)
        for spec in state_specs(model)
    }


class StreamingGraph(nn.Module):
    """(audio, chunk_frames, flush, *state) -> (log_probs, *new_state); the exported ONNX graph.

    audio (B, 160*m) float32; chunk_frames () int64; flush () int64, 1 on the last call of a stream.
    log_probs (B, R, classes): one row per frame whose chunk completed in this call (R = 0 is normal).
    """

    def __init__(self, model: PhoneTagger) -> None:
        super().__init__()
        self.model = model
        self.state_names = [spec["name"] for spec in state_specs(model)]

    def forward(self, audio: torch.Tensor, chunk_frames: torch.Tensor, flush: torch.Tensor, *states: torch.Tensor):
        state = dict(zip(self.state_names, states))
        history = state.get("feature_history", audio.new_zeros(audio.shape[0], 0, 0))
        outputs = self.model.frontend.step(audio, state["audio_tail"], history, state.get("level_estimate"))
        feats, new_tail, new_history = outputs[:3]
        new_level = outputs[3] if len(outputs) > 3 else None
        N = self.model.config.num_layers
        encoder_state = EncoderState(
            state["pending_features"], tuple(state[f"kv_cache_{i}"] for i in range(N)), state["cached_frames"],
            tuple(state[f"conv_cache_{i}"] for i in range(N)) if self.model.config.conv_kernel else None,
        )
        log_probs, encoder_state = self.model.step(feats, encoder_state, chunk_frames, flush)
        new_state = {"audio_tail": new_tail, "feature_history": new_history, "level_estimate": new_level,
                     "pending_features": encoder_state.pending_features, "cached_frames": encoder_state.cached_frames,
                     **{f"kv_cache_{i}": cache for i, cache in enumerate(encoder_state.kv_cache)},
                     **{f"conv_cache_{i}": cache for i, cache in enumerate(encoder_state.conv_cache or ())}}
        return (log_probs, *(new_state[name] for name in self.state_names))


class StreamingSession:
    """Torch-side stream over arbitrary-size pushes of 16 kHz float audio (the reference for the ONNX client).
    Runs where the model's weights are (CPU or a GPU); pushes may come from anywhere, outputs are on that device."""

    def __init__(self, model: PhoneTagger, chunk_frames: int | None = None, batch_size: int = 1) -> None:
        self.graph = StreamingGraph(model.eval())
        self.device = next(model.parameters()).device
        self.chunk_frames = chunk_frames or model.config.default_chunk_frames
        self.state = initial_state(model, batch_size, self.device)
        self.leftover = torch.zeros(batch_size, 0, device=self.device)

    @torch.no_grad()
    def push(self, audio: torch.Tensor, final: bool = False) -> torch.Tensor:
        """audio (B, n) -> log-probs (B, R, classes) of the frames completed so far."""
        audio = torch.cat([self.leftover, audio.to(self.device, torch.float32)], dim=1)
        usable = audio.shape[1] // HOP_SAMPLES * HOP_SAMPLES
        if final and usable < audio.shape[1]:  # zero-pad the last partial hop, as the one-shot path does
            audio = nn.functional.pad(audio, (0, HOP_SAMPLES - audio.shape[1] % HOP_SAMPLES))
            usable = audio.shape[1]
        self.leftover = audio[:, usable:]
        # chunk size and flush stay on the CPU on any device: shape arithmetic, as in the graph's shape tensors
        chunk, flush = torch.tensor(self.chunk_frames, dtype=torch.int64), torch.tensor(int(final))
        outputs = self.graph(audio[:, :usable], chunk, flush, *self.state.values())
        self.state = dict(zip(self.state, outputs[1:]))
        return outputs[0]


@torch.no_grad()
def offline_log_probs(model: PhoneTagger, audio: torch.Tensor, chunk_frames: int | None) -> torch.Tensor:
    """One-shot reference: audio (B, N) -> log-probs (B, ceil(N/160), classes) with attention chunk C, as the graph
    emits them (with an output delay R, row t labels frame t - R; `PhoneTagger.tag` aligns them with the audio)."""
    feats = model.frontend(audio)
    lengths = torch.full((audio.shape[0],), feats.shape[1], dtype=torch.int64)
    return model(feats, lengths, chunk_frames)
