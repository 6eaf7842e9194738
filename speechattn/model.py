"""The phone tagger: frontend -> input projection -> N pre-norm transformer layers with
chunk-truncated self-attention -> per-frame classifier over the 40 phones.

Attention of a frame in chunk c (C consecutive frames) sees the L frames before
the chunk and the frames of its own chunk, nothing further right.  It is
computed chunk by chunk (each chunk's C queries against its L + C keys), so cost
is O(T * (L + C)), never T x T (except at full context, C = T, which is T x T by
definition).  Positions enter only as a learned per-head bias on the relative
offset (query - key, clipped), never an absolute index, so a stream can run for
hours.

Two entry points share one code path (`_encode`), so they agree by construction:
  forward(feats, lengths, chunk_frames)  batched, padded, for training and offline use
  step(feats, state, chunk_frames, final) streaming; the state is EncoderState, explicit tensors

Shapes: B batch, T frames, F feature dim, D model dim, H heads, Dh = D / H,
L left context frames, C chunk frames, K = T / C chunks, N layers, P pending frames (< C).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import NamedTuple

import torch
from torch import nn

from .config import checked_fields
from .errors import ConfigError, SpeechattnError
from .features import Frontend, FrontendConfig
from .phones import NUM_PHONES

CHECKPOINT_FORMAT = "speechattn-checkpoint-1"


@dataclass(frozen=True)
class ModelConfig:
    frontend: FrontendConfig = field(default_factory=FrontendConfig)
    num_layers: int = 6
    model_dim: int = 256
    num_heads: int = 4
    ffn_dim: int = 1024
    left_context_frames: int = 64
    chunk_frames_choices: tuple[int, ...] = (4, 8, 16, 32)  # streaming chunk sizes the weights serve
    default_chunk_frames: int = 8
    num_classes: int = NUM_PHONES
    dropout: float = 0.1

    def __post_init__(self) -> None:
        if self.model_dim % self.num_heads:
            raise ConfigError(f"model_dim {self.model_dim} is not divisible by num_heads {self.num_heads}")
        if not self.chunk_frames_choices or min(self.chunk_frames_choices) < 1:
            raise ConfigError("chunk_frames_choices must list chunk sizes >= 1 frame")
        if self.default_chunk_frames not in self.chunk_frames_choices:
            raise ConfigError(f"default_chunk_frames {self.default_chunk_frames} is not in {self.chunk_frames_choices}")
        if self.left_context_frames < 0:
            raise ConfigError("left_context_frames must be >= 0")

    @property
    def max_relative_past(self) -> int:  # largest offset query - key that streaming can meet
        return self.left_context_frames + max(self.chunk_frames_choices) - 1

    @property
    def max_relative_future(self) -> int:  # largest offset key - query inside a chunk
        return max(self.chunk_frames_choices) - 1

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict, source: str = "config") -> "ModelConfig":
        """Build from a plain dict (a checkpoint or a recipe), naming any unknown key or wrong type."""
        values = dict(values)
        frontend = FrontendConfig(**checked_fields(FrontendConfig, values.pop("frontend", {}) or {}, source, "frontend."))
        return cls(frontend=frontend, **checked_fields(cls, values, source, ""))


class EncoderState(NamedTuple):
    """Streaming state of the encoder; every tensor starts as zeros (see `initial_state`)."""

    pending_features: torch.Tensor  # (B, P, F): frames waiting for their chunk to fill, 0 <= P < C
    key_cache: torch.Tensor  # (N, B, L, D): attention keys of the last L frames, layer first
    value_cache: torch.Tensor  # (N, B, L, D)
    cached_frames: torch.Tensor  # (B,) int64: how many cache slots hold real frames (0..L)


class ChunkLayout(NamedTuple):
    """Index arithmetic shared by every layer of one call, computed once (see PhoneTagger._layout)."""

    batch: int | torch.Tensor  # B
    num_chunks: int | torch.Tensor  # K
    chunk_frames: int | torch.Tensor  # C
    key_index: torch.Tensor  # (K, L + C): positions of each chunk's keys in the left-extended sequence
    bias_index: torch.Tensor  # (C, L + C): index into the relative-bias table for query i, key j of a chunk
    key_mask: torch.Tensor  # (B, K, 1, 1, L + C) float: 0 where the key is visible, a huge negative where not


class ChunkedSelfAttention(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.num_heads = config.num_heads
        self.head_dim = config.model_dim // config.num_heads
        self.qkv = nn.Linear(config.model_dim, 3 * config.model_dim)
        self.out = nn.Linear(config.model_dim, config.model_dim)
        self.relative_bias = nn.Parameter(torch.zeros(config.num_heads, config.max_relative_past
                                                      + config.max_relative_future + 1))
        self.dropout = nn.Dropout(config.dropout)

    def forward(
        self, x: torch.Tensor, left_keys: torch.Tensor, left_values: torch.Tensor, layout: ChunkLayout
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """x (B, T, D), T = K * C; left_keys/values (B, L, D).

        Returns the attended output (B, T, D) and this layer's keys and values of x, each (B, T, D).
        """
        B, K, C = layout.batch, layout.num_chunks, layout.chunk_frames
        H, Dh = self.num_heads, self.head_dim
        window = layout.key_index.shape[1]  # L + C
        queries, keys, values = self.qkv(x).chunk(3, dim=-1)  # each (B, T, D)
        all_keys = torch.cat([left_keys, keys], dim=1)[:, layout.key_index]  # (B, K, L + C, D)
        all_values = torch.cat([left_values, values], dim=1)[:, layout.key_index]
        q = queries.reshape(B, K, C, H, Dh).transpose(2, 3)  # (B, K, H, C, Dh)
        k = all_keys.reshape(B, K, window, H, Dh).permute(0, 1, 3, 4, 2)  # (B, K, H, Dh, L + C)
        v = all_values.reshape(B, K, window, H, Dh).transpose(2, 3)  # (B, K, H, L + C, Dh)
        scores = (q @ k) * (1.0 / math.sqrt(Dh))  # (B, K, H, C, L + C)
        scores = scores + self.relative_bias[:, layout.bias_index] + layout.key_mask  # bias (H, C, L + C)
        weights = self.dropout(torch.softmax(scores, dim=-1))
        attended = (weights @ v).transpose(2, 3).reshape(B, K * C, H * Dh)  # (B, K, C, H, Dh) -> (B, T, D)
        return self.out(attended), keys, values


class EncoderLayer(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.attention_norm = nn.LayerNorm(config.model_dim)
        self.attention = ChunkedSelfAttention(config)
        self.ffn_norm = nn.LayerNorm(config.model_dim)
        self.ffn = nn.Sequential(
            nn.Linear(config.model_dim, config.ffn_dim),
            nn.GELU(),
            nn.Dropout(config.dropout),
            nn.Linear(config.ffn_dim, config.model_dim),
        )
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x, left_keys, left_values, layout: ChunkLayout):
        attended, keys, values = self.attention(self.attention_norm(x), left_keys, left_values, layout)
        x = x + self.dropout(attended)
        x = x + self.dropout(self.ffn(self.ffn_norm(x)))
        return x, keys, values


class PhoneTagger(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        self.frontend = Frontend(config.frontend)
        self.input_projection = nn.Linear(config.frontend.feature_dim, config.model_dim)
        self.layers = nn.ModuleList(EncoderLayer(config) for _ in range(config.num_layers))
        self.final_norm = nn.LayerNorm(config.model_dim)
        self.classifier = nn.Linear(config.model_dim, config.num_classes)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def _layout(self, batch, num_frames, left_frames: int, key_valid: torch.Tensor, chunk_frames) -> ChunkLayout:
        """Chunk arithmetic for a call of num_frames (a multiple of C) frames with left_frames of left context."""
        C, L = chunk_frames, left_frames
        device = key_valid.device
        num_chunks = num_frames // C
        window = torch.arange(L + C, device=device)  # (L + C,)
        key_index = torch.arange(num_chunks, device=device)[:, None] * C + window[None, :]  # (K, L + C)
        # Query i of a chunk sits at window position L + i, so its offset to key j is L + i - j, whatever the chunk.
        offset = L + torch.arange(C, device=device)[:, None] - window[None, :]  # (C, L + C)
        c = self.config
        bias_index = offset.clamp(-c.max_relative_future, c.max_relative_past) + c.max_relative_future
        hidden = torch.finfo(torch.float32).min
        key_mask = torch.where(key_valid[:, key_index], 0.0, hidden)[:, :, None, None, :]  # (B, K, 1, 1, L + C)
        return ChunkLayout(batch, num_chunks, C, key_index, bias_index, key_mask)

    def _encode(self, feats, left_keys, left_values, key_valid, chunk_frames):
        """feats (B, T, F), T a multiple of C; left_keys/values (N, B, L, D); key_valid (B, L + T).

        Returns log-probabilities (B, T, classes) and the new keys and values, each (N, B, T, D).
        """
        layout = self._layout(feats.shape[0], feats.shape[1], left_keys.shape[2], key_valid, chunk_frames)
        x = self.input_projection(feats)  # (B, T, D)
        new_keys, new_values = [], []
        for layer, keys, values in zip(self.layers, left_keys, left_values):
            x, layer_keys, layer_values = layer(x, keys, values, layout)
            new_keys.append(layer_keys)
            new_values.append(layer_values)
        log_probs = torch.log_softmax(self.classifier(self.final_norm(x)), dim=-1)
        return log_probs, torch.stack(new_keys), torch.stack(new_values)

    def forward(self, feats: torch.Tensor, lengths: torch.Tensor, chunk_frames: int | None) -> torch.Tensor:
        """Batched, padded: feats (B, T, F), lengths (B,) -> log-probs (B, T, classes).

        chunk_frames C: attention chunk size; None or 0 means full context (one chunk, no truncation).
        """
        B, T, _ = feats.shape
        full_context = not chunk_frames
        C = max(T, 1) if full_context else int(chunk_frames)
        padded = -(-T // C) * C
        feats = nn.functional.pad(feats, (0, 0, 0, padded - T))
        L = 0 if full_context else self.config.left_context_frames
        frame_valid = torch.arange(padded, device=feats.device)[None, :] < lengths.to(feats.device)[:, None]
        key_valid = torch.cat([torch.zeros(B, L, dtype=torch.bool, device=feats.device), frame_valid], dim=1)
        left = feats.new_zeros(self.config.num_layers, B, L, self.config.model_dim)
        log_probs, _, _ = self._encode(feats, left, left, key_valid, C)
        return log_probs[:, :T]

    def initial_state(self, batch_size: int = 1) -> EncoderState:
        c = self.config
        cache = torch.zeros(c.num_layers, batch_size, c.left_context_frames, c.model_dim)
        return EncoderState(
            pending_features=torch.zeros(batch_size, 0, c.frontend.feature_dim),
            key_cache=cache,
            value_cache=cache.clone(),
            cached_frames=torch.zeros(batch_size, dtype=torch.int64),
        )

    def step(
        self,
        feats: torch.Tensor,
        state: EncoderState,
        chunk_frames: int | torch.Tensor,
        final: bool | torch.Tensor = False,
    ) -> tuple[torch.Tensor, EncoderState]:
        """Stream feats (B, m, F), any m >= 0.  Emits log-probs (B, R, classes) for every frame whose chunk is
        complete (R is a multiple of C); the rest wait in the state.  With `final`, the pending frames are
        emitted as a last short chunk, exactly as `forward` treats a final partial chunk.

        Written with shape arithmetic only (no Python branches on values) so that the ONNX graph,
        where chunk_frames and final are tensors, runs the same code.
        """
        C = chunk_frames
        L = self.config.left_context_frames
        frames = torch.cat([state.pending_features, feats], dim=1)  # (B, n, F)
        n = frames.shape[1]
        complete = (n // C) * C
        ready = complete + final * (n - complete)  # frames emitted now
        padded = (ready + C - 1) // C * C  # a final short chunk is padded with masked frames
        position = torch.arange(padded, device=feats.device)
        chunk_input = frames[:, position.clamp(max=n - 1)]  # (B, padded, F); padding repeats a frame, masked below
        frame_valid = (position < ready)[None, :].expand(frames.shape[0], -1)  # (B, padded)
        slot = torch.arange(L, device=feats.device)[None, :]
        cache_valid = slot >= (L - state.cached_frames)[:, None]  # (B, L): the newest cached_frames slots are real
        key_valid = torch.cat([cache_valid, frame_valid], dim=1)
        log_probs, keys, values = self._encode(chunk_input, state.key_cache, state.value_cache, key_valid, C)

        all_keys = torch.cat([state.key_cache, keys[:, :, :ready]], dim=2)  # (N, B, L + ready, D)
        all_values = torch.cat([state.value_cache, values[:, :, :ready]], dim=2)
        new_state = EncoderState(
            pending_features=frames[:, ready:],
            key_cache=all_keys[:, :, all_keys.shape[2] - L :],
            value_cache=all_values[:, :, all_values.shape[2] - L :],
            cached_frames=torch.clamp(state.cached_frames + ready, max=L),
        )
        return log_probs[:, :ready], new_state


def save_checkpoint(model: PhoneTagger, path: str | Path, **extra) -> None:
    """Write atomically (temp file + rename): an interrupted save never leaves a broken checkpoint."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"format": CHECKPOINT_FORMAT, "config": model.config.to_dict(), "model": model.state_dict(), **extra}
    temporary = path.with_name(path.name + ".tmp")
    torch.save(payload, temporary)
    temporary.replace(path)


class CheckpointError(SpeechattnError, ValueError):
    """A checkpoint that cannot be loaded, with a message meant for the user."""


def load(path: str | Path, map_location: str = "cpu") -> PhoneTagger:
    """Rebuild the model from a checkpoint alone (its config travels inside)."""
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"{path}: no such checkpoint")
    try:
        payload = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as error:
        raise CheckpointError(f"{path}: not a readable checkpoint ({type(error).__name__}: {error})") from None
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{path}: not a speechattn checkpoint (expected format {CHECKPOINT_FORMAT})")
    config = ModelConfig.from_dict(payload["config"], source=str(path))
    model = PhoneTagger(config)
    try:
        model.load_state_dict(payload["model"])
    except RuntimeError as error:
        raise CheckpointError(f"{path}: its weights do not fit its own config: {error}") from None
    return model.eval()
