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
L left context frames, C chunk frames, K = T / C chunks, N layers, P pending frames (< C),
S frame subsampling, T' = T / S, L' = L / S, C' = C / S encoder positions.

Frame subsampling (S = 2 or 4) stacks S consecutive 10 ms frames into one encoder position (a
stride-S convolution of kernel S, written as a reshape and the input projection) and the classifier
emits S distributions per position, so the output is still one distribution per 10 ms frame while
the transformer runs on T / S positions.  C and L are multiples of S, so a chunk never splits a
position; the last, partial position of a stream is padded with zero features in both entry points.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import NamedTuple

import torch
from torch import nn

from speechattn.audio import HOP_SAMPLES
from speechattn.config import checked_fields
from speechattn.errors import ConfigError, SpeechattnError
from speechattn.model.features import CopyReshape, Frontend, FrontendConfig
from speechattn.phones import NUM_PHONES

CHECKPOINT_FORMAT = "speechattn-checkpoint-1"
# Settings added to ModelConfig after checkpoints were first written, with the value that meant what an older
# checkpoint, which lacks them, was trained as (not today's defaults; the bundled model of commit d41fb6f has
# neither of the last two).
ABSENT_FROM_OLDER_CHECKPOINTS = {"frame_subsampling": 1, "conv_kernel": 0, "primed_start": False, "output_delay_frames": 0}


@dataclass(frozen=True)
class ModelConfig:
    """The model's dimensions and streaming settings, saved inside every checkpoint.  The defaults are the bundled
    model's (speechattn/runtime/models/default.pt: 2,763,208 parameters; tests/test_model.py holds them equal)."""

    frontend: FrontendConfig = field(default_factory=FrontendConfig)
    num_layers: int = 6
    model_dim: int = 192
    num_heads: int = 4
    ffn_dim: int = 768
    left_context_frames: int = 128  # 10 ms frames before a chunk that attention sees
    chunk_frames_choices: tuple[int, ...] = (4, 8, 16, 32)  # streaming chunk sizes the weights serve
    default_chunk_frames: int = 4  # 40 ms
    num_classes: int = NUM_PHONES
    dropout: float = 0.0  # dropout's random masks cost a fifth to a third of a CPU step (docs/training.md)
    frame_subsampling: int = 4  # 10 ms frames per encoder position: 1, 2 or 4
    conv_kernel: int = 0  # a causal depthwise convolution module over this many positions in each layer (0: none)
    primed_start: bool = True  # streams (and forward's chunks) start from the caches a long silence leaves, not
    # from an empty cache, so prepending silence changes nothing but the times (PhoneTagger.prime); train with it on
    output_delay_frames: int = 6  # look-ahead by output delay: the output at frame t labels frame t - R, so every
    # frame's label has seen R frames (10 ms each) after it, across chunk boundaries; `tag` and the clients align
    # the outputs with the audio (drop the first R, flush R frames of silence at the end)

    def __post_init__(self) -> None:
        if self.num_layers < 1 or self.model_dim < 1 or self.num_heads < 1 or self.ffn_dim < 1:
            raise ConfigError("num_layers, model_dim, num_heads and ffn_dim must each be at least 1")
        if self.frame_subsampling not in (1, 2, 4):
            raise ConfigError(f"frame_subsampling must be 1, 2 or 4, not {self.frame_subsampling}")
        S = self.frame_subsampling
        if any(c % S for c in self.chunk_frames_choices) or self.left_context_frames % S:
            raise ConfigError(f"with frame_subsampling {S}, every chunk size and left_context_frames must be "
                              f"multiples of {S}")
        if self.model_dim % self.num_heads:
            raise ConfigError(f"model_dim {self.model_dim} is not divisible by num_heads {self.num_heads}")
        if not self.chunk_frames_choices or min(self.chunk_frames_choices) < 1:
            raise ConfigError("chunk_frames_choices must list chunk sizes >= 1 frame")
        if self.default_chunk_frames not in self.chunk_frames_choices:
            raise ConfigError(f"default_chunk_frames {self.default_chunk_frames} is not in {self.chunk_frames_choices}")
        if self.left_context_frames < 0:
            raise ConfigError("left_context_frames must be >= 0")
        if self.num_layers > 64 or self.model_dim > 8192 or self.num_heads > 128 or self.ffn_dim > 32768:
            raise ConfigError(f"num_layers {self.num_layers}, model_dim {self.model_dim}, num_heads {self.num_heads}, "
                              f"ffn_dim {self.ffn_dim}: at most 64 layers, 8192 dims, 128 heads, FFN 32768")
        if not 0 <= self.dropout < 1:
            raise ConfigError(f"dropout must be in [0, 1), not {self.dropout}")
        parameters = self.num_layers * (4 * self.model_dim ** 2 + 2 * self.model_dim * self.ffn_dim)
        if parameters > 2_000_000_000:  # 8 GB of fp32 weights before gradients and optimizer state
            raise ConfigError(f"{self.num_layers} layers x {self.model_dim} dims x FFN {self.ffn_dim} is about "
                              f"{parameters / 1e9:.0f} billion parameters: more than this tool trains (2 billion)")
        if not 0 <= self.output_delay_frames <= 100:
            raise ConfigError(f"output_delay_frames must be from 0 to 100 (1 s), not {self.output_delay_frames}")
        if self.conv_kernel < 0 or self.conv_kernel == 1 or self.conv_kernel > 256:
            raise ConfigError(f"conv_kernel must be 0 (no convolution module) or from 2 to 256, not {self.conv_kernel}")
        if self.left_context_frames > 4096 or max(self.chunk_frames_choices) > 4096:  # the clients' bound too
            raise ConfigError(f"left_context_frames {self.left_context_frames} and chunk_frames_choices "
                              f"{list(self.chunk_frames_choices)}: at most 4096 frames (41 s) each")
        if not 1 <= self.num_classes <= NUM_PHONES:
            raise ConfigError(f"num_classes must be from 1 to {NUM_PHONES} (the phone inventory), not {self.num_classes}")

    @property
    def left_context_positions(self) -> int:  # L' = L / S: key/value cache slots per layer
        return self.left_context_frames // self.frame_subsampling

    @property
    def max_relative_past(self) -> int:  # largest offset query - key (encoder positions) that streaming can meet
        return (self.left_context_frames + max(self.chunk_frames_choices)) // self.frame_subsampling - 1

    @property
    def max_relative_future(self) -> int:  # largest offset key - query inside a chunk
        return max(self.chunk_frames_choices) // self.frame_subsampling - 1

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict, source: str = "config") -> "ModelConfig":
        """Build from a plain dict (a checkpoint or a recipe), naming any unknown key or wrong type."""
        values = dict(values)
        frontend = values.pop("frontend", {}) or {}
        if not isinstance(frontend, dict):  # --set model.frontend=3
            raise ConfigError(f"{source}: frontend is a section of settings (frontend.KEY), not {frontend!r}")
        frontend = FrontendConfig(**checked_fields(FrontendConfig, frontend, source, "frontend."))
        return cls(frontend=frontend, **checked_fields(cls, values, source, ""))


class EncoderState(NamedTuple):
    """Streaming state of the encoder; every tensor starts as zeros (see `initial_state`)."""

    pending_features: torch.Tensor  # (B, P, F): frames waiting for their chunk to fill, 0 <= P < C
    kv_cache: tuple[torch.Tensor, ...]  # N x (B, L', 2D): each layer's attention keys, then values, of the last L'
    # positions, batch first: one tensor a layer, so a call reads each where it lies and writes it once; a primed
    # model's (and its conv_cache) held less silence's (PhoneTagger.prime), so zeros are a long silence's caches
    cached_frames: torch.Tensor  # (B,) int64: how many cache slots hold real positions (0..L')
    conv_cache: tuple[torch.Tensor, ...] | None = None  # N x (B, W - 1, D): each layer's convolution input at the
    # last W - 1 positions (W = conv_kernel); zeros at the start, as the causal padding of `forward`; None without it


class ChunkLayout(NamedTuple):
    """Index arithmetic shared by every layer of one call, computed once (see PhoneTagger._layout)."""

    batch: int | torch.Tensor  # B
    num_chunks: int | torch.Tensor  # K
    chunk_frames: int | torch.Tensor  # C
    key_index: torch.Tensor  # (K, L + C): positions of each chunk's keys in the left-extended sequence
    kv_rows: tuple | None  # graph path: (K, H, L + C) each, the rows of each chunk's keys and of its values, head by
    # head, in the left-extended keys and values seen as (B, 2 H (L + T), Dh); None on the Python-size path
    bias_index: torch.Tensor | None  # (C, L + C): index into the relative-bias table for query i, key j of a chunk
    # (None on the graph path, where _encode slices every layer's biases from one constant table)
    key_mask: torch.Tensor  # (B, K, 1, 1, L + C) float: 0 where the key is visible, a huge negative where not;
    # on the graph path (sizes are tensors, chunks folded into the batch) (B * K, L + C) int32: 1 visible, 0 not
    shapes: tuple | None = None  # graph path: int64 shapes (-1, C, D), (-1, H, L + C, Dh), (B, -1, D), (B, -1, Dh):
    # the folded queries, the folded key (and value) windows head first, the output and the keys' and values' rows
    # (-1 = B * K, T or 2 H (L + T), inferred)


class ShapeReshape(torch.autograd.Function):
    """x.reshape(shape) with shape an int64 tensor computed in the graph: one Reshape node fed that tensor (a
    traced reshape rebuilds its shape from scalars at the call).  No gradient: the graph path only."""

    @staticmethod
    def forward(ctx, x, shape):
        return x.reshape(shape.tolist())

    @staticmethod
    def symbolic(g, x, shape):
        return g.op("Reshape", x, shape)


class Positions(torch.autograd.Function):
    """x[:, start:end] with start and end (1,) int64 tensors computed once: in the graph one Slice a state, where
    slicing with traced scalars exported two Unsqueezes of the bounds beside each (N layers' caches share them).  No
    gradient: the streaming path only."""

    @staticmethod
    def forward(ctx, x, start, end):
        return x[:, int(start) : int(end)]

    @staticmethod
    def symbolic(g, x, start, end):
        return g.op("Slice", x, start, end, g.op("Constant", value_t=torch.tensor([1], dtype=torch.int64)))


class ZeroPadded(torch.autograd.Function):
    """frames (B, n, F), ready <= n and padded >= ready -> (B, padded, F): the first `ready` frames, then zeros.  In
    the graph a Slice and a Pad, where indexing with a validity mask exported as nine nodes.  No gradient: the
    streaming path only."""

    @staticmethod
    def forward(ctx, frames, ready, padded):
        ready, padded = int(ready), int(padded)
        return nn.functional.pad(frames[:, :ready], (0, 0, 0, padded - ready))

    @staticmethod
    def symbolic(g, frames, ready, padded):
        def constant(values):
            return g.op("Constant", value_t=torch.tensor(values, dtype=torch.int64))

        kept = g.op("Slice", frames, constant([0]), g.op("Unsqueeze", ready, constant([0])), constant([1]))
        extra = g.op("Unsqueeze", g.op("Sub", padded, ready), constant([0]))  # frames of zeros after them
        return g.op("Pad", kept, g.op("Concat", constant([0, 0, 0, 0]), extra, constant([0]), axis_i=0))


def _none(g):  # an omitted optional input of an ONNX node
    from torch.onnx._internal.torchscript_exporter.symbolic_helper import _optional_input_placeholder_tensor

    return _optional_input_placeholder_tensor(g)


class WindowAttention(torch.autograd.Function):
    """Chunked attention with the chunks folded into the batch, as one node in the ONNX graph.

    queries (B, T, D); keys_values (B, L + T, 2D), each position's key then its value (the left context, then this
    call's positions); key_rows and value_rows (K, H, L + C), the rows of each chunk's keys and values, head by
    head, in keys_values seen as (B, 2 H (L + T), Dh); bias (1, H, C, L + C) relative-position bias; key_mask
    (B * K, L + C) int32, 1 where the key is visible; shapes from the layout.  Returns (B, T, D).  In the graph the
    keys and the values of the windows are each one Gather from that free reshape (the windows copied once, no
    Split), head first: onnxruntime's com.microsoft MultiHeadAttention takes keys and values of shape
    (B * K, H, L + C, Dh) as they are, where (B * K, L + C, D) ones are transposed inside it on every call
    (measured alone: 4.7 against 8.7 us a node for a 40 ms chunk).  That node (softmax(q k^T / sqrt(Dh) + bias +
    mask) v per head; a hidden key's weight is exactly 0 either way: onnxruntime adds -10000, torch the float32
    minimum) is one where the plain ops exported as about a dozen small ones; torch computes the same with plain
    ops."""

    @staticmethod
    def forward(ctx, queries, keys_values, key_rows, value_rows, bias, key_mask, query_shape, window_shape,
                output_shape, rows_shape, num_heads):
        BK, C, D = query_shape.tolist()
        window = window_shape.tolist()  # (B * K, H, L + C, Dh)
        H, Dh = num_heads, D // num_heads
        q = queries.reshape(BK, C, H, Dh).transpose(1, 2)  # (B * K, H, C, Dh)
        rows = keys_values.reshape(rows_shape.tolist())  # (B, 2 H (L + T), Dh): a position's key heads, then value's
        k = rows[:, key_rows].reshape(window).transpose(2, 3)  # (B, K, H, L + C, Dh) -> (B * K, H, Dh, L + C)
        v = rows[:, value_rows].reshape(window)  # (B * K, H, L + C, Dh)
        scores = (q @ k) * (1.0 / math.sqrt(Dh)) + bias  # (B * K, H, C, L + C)
        if key_mask is not None:
            scores = scores + torch.where(key_mask.bool(), 0.0, torch.finfo(torch.float32).min)[:, None, None, :]
        weights = torch.softmax(scores, dim=-1)
        return (weights @ v).transpose(1, 2).reshape(output_shape.tolist())  # (B * K, C, H, Dh) -> (B, T, D)

    @staticmethod
    def symbolic(g, queries, keys_values, key_rows, value_rows, bias, key_mask, query_shape, window_shape,
                 output_shape, rows_shape, num_heads):
        # allowzero: a call with no complete chunk has B * K = 0 (without it a 0 in a shape copies a dimension)
        query = g.op("Reshape", queries, query_shape, allowzero_i=1)  # (B * K, C, D)
        rows = g.op("Reshape", keys_values, rows_shape, allowzero_i=1)  # (B, 2 H (L + T), Dh), no copy
        key, value = (g.op("Reshape", g.op("Gather", rows, index, axis_i=1), window_shape, allowzero_i=1)
                      for index in (key_rows, value_rows))  # (B, K, H, L + C, Dh) -> (B * K, H, L + C, Dh) each
        mask = _none(g) if key_mask is None or key_mask.node().mustBeNone() else key_mask
        attended = g.op("com.microsoft::MultiHeadAttention", query, key, value, _none(g), mask, bias,
                        num_heads_i=num_heads)  # scale defaults to 1 / sqrt(Dh)
        # a contrib op has no type for the exporter to infer: declare it (float, (B * K, C, D)), or the file's
        # value_info carries an untyped tensor that onnxruntime's quantization tools cannot load
        attended.setType(queries.type().with_sizes([None, None, None]))
        return g.op("Reshape", attended, output_shape, allowzero_i=1)


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
        self, x: torch.Tensor, left: torch.Tensor, layout: ChunkLayout, bias: torch.Tensor | None = None,
        silence: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """x (B, T, D), T = K * C; left (B, L, 2D) the left context's keys and values (each position's key, then
        its value); on the graph path `bias` is this layer's relative bias for the layout, (1, H, C, L + C)
        (PhoneTagger._encode gathers all layers' at once).  `silence` (2D,): the key and value every position of
        a long silence has (PhoneTagger.prime); given, keys and values are held less it, in `left` and in what is
        returned, so a zero left context is silence's.  Attention is blind to the keys' shift (a key k - k0 moves
        each query's scores by the same q . k0, which softmax takes away) and each output, a weighted mean of values
        (the weights sum to 1), moves by -v0, added back before the output projection; the qkv projection's bias
        takes k0 and v0 off, a constant in the graph.  (Folding v0 into the output projection's bias instead would
        save the Add but change what an int8 file quantizes there: measured, its labels moved from the earlier
        file's on up to 1.5 % of frames.)

        Returns the attended output (B, T, D) and the keys and values of the left context followed by those
        of x, (B, L + T, 2D): the streaming cache is cut from them.
        """
        B, K, C = layout.batch, layout.num_chunks, layout.chunk_frames
        H, Dh = self.num_heads, self.head_dim
        window = layout.key_index.shape[1]  # L + C
        D = H * Dh  # split with constant sizes: `chunk` exports as a chain of shape arithmetic per layer
        qkv_bias = self.qkv.bias if silence is None else self.qkv.bias - torch.cat([silence.new_zeros(D), silence])
        queries, keys_values = nn.functional.linear(x, self.qkv.weight, qkv_bias).split([D, 2 * D], dim=-1)
        every = torch.cat([left, keys_values], dim=1)  # (B, L + T, 2D)
        if layout.shapes is not None:  # sizes are tensors: the ONNX graph and torch streaming
            attended = WindowAttention.apply(queries, every, *layout.kv_rows, bias, layout.key_mask, *layout.shapes, H)
            if silence is not None:  # the weighted mean of values less silence's: silence's value added back
                attended = attended + silence[D:]
            return self.out(attended), every
        all_keys, all_values = every[..., :D], every[..., D:]
        bias = self.relative_bias[:, layout.bias_index]  # (H, C, L + C)
        # Python sizes (training, evaluation): each chunk's window is a strided view of the left-extended
        # sequence, so there is no gather whose backward is a slow scatter (bench/train_speed.py: ~25 % of
        # a training step).
        q = queries.reshape(B, K, C, H, Dh).transpose(2, 3)  # (B, K, H, C, Dh)
        k = all_keys.unfold(1, window, C).reshape(B, K, H, Dh, window)  # (B, K, D, L + C) -> (B, K, H, Dh, L + C)
        v = all_values.unfold(1, window, C).reshape(B, K, H, Dh, window).transpose(3, 4)  # (B, K, H, L + C, Dh)
        scores = (q @ k) * (1.0 / math.sqrt(Dh))  # (B, K, H, C, L + C)
        if layout.key_mask is not None:
            scores = scores + layout.key_mask
        weights = self.dropout(torch.softmax(scores + bias, dim=-1))
        attended = (weights @ v).transpose(2, 3).reshape(B, K * C, H * Dh)  # (B, K, C, H, Dh) -> (B, T, D)
        return self.out(attended), every


class ConvModule(nn.Module):
    """Conformer-style local convolution, causal: LayerNorm -> depthwise convolution over the last W positions
    (this one and W - 1 before it, never later ones) -> SiLU -> pointwise Linear.  Its left context arrives as
    explicit input (`left`, the previous W - 1 normalised positions), so streaming carries it as state."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        W, D = config.conv_kernel, config.model_dim
        self.norm = nn.LayerNorm(D)
        self.depthwise = nn.Parameter(torch.randn(W, D) / math.sqrt(W))
        self.depthwise_bias = nn.Parameter(torch.zeros(D))
        self.pointwise = nn.Linear(D, D)

    def forward(self, x: torch.Tensor, left: torch.Tensor, silence: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """x (B, T, D), left (B, W - 1, D) -> output (B, T, D) and the convolution input of the left context
        followed by this call's, (B, W - 1 + T, D): the streaming state is cut from it.  `silence` (D,): the
        convolution input of a long silence; given, inputs are held less it (in `left` and what is returned): the
        norm's bias takes it off, and, every output summing W inputs, the depthwise bias gives back its weighted
        sum (no node in the graph), so a zero left context is silence's."""
        norm_bias, depthwise_bias = self.norm.bias, self.depthwise_bias
        if silence is not None:
            norm_bias, depthwise_bias = norm_bias - silence, depthwise_bias + silence * self.depthwise.sum(0)
        y = nn.functional.layer_norm(x, self.norm.normalized_shape, self.norm.weight, norm_bias, self.norm.eps)
        sequence = torch.cat([left, y], dim=1)  # (B, W - 1 + T, D)
        T, W = y.shape[1], self.depthwise.shape[0]
        # Shifted slices, not conv1d: a call with T = 0 positions gives an empty result (onnxruntime's Conv
        # rejects an input shorter than its kernel), and there is no Python branch on sizes.
        total = depthwise_bias + sequence[:, 0:T] * self.depthwise[0]
        for j in range(1, W):
            total = total + sequence[:, j : j + T] * self.depthwise[j]
        return self.pointwise(nn.functional.silu(total)), sequence


class EncoderLayer(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.attention_norm = nn.LayerNorm(config.model_dim)
        self.attention = ChunkedSelfAttention(config)
        self.conv = ConvModule(config) if config.conv_kernel else None
        self.ffn_norm = nn.LayerNorm(config.model_dim)
        self.ffn = nn.Sequential(
            nn.Linear(config.model_dim, config.ffn_dim),
            nn.GELU(),
            nn.Dropout(config.dropout),
            nn.Linear(config.ffn_dim, config.model_dim),
        )
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x, left, layout: ChunkLayout, left_conv=None, bias=None, silence=None):
        """x (B, T, D) and this layer's left contexts (B, L, 2D) and (B, W - 1, D) -> x and the left-extended keys,
        values and convolution inputs (see ChunkedSelfAttention, ConvModule); `silence`, a pair (2D,) and (D,) or
        None: the caches held less silence's."""
        silence_kv, silence_conv = silence if silence is not None else (None, None)
        attended, keys_values = self.attention(self.attention_norm(x), left, layout, bias, silence_kv)
        x = x + self.dropout(attended)
        conv_sequence = None
        if self.conv is not None:
            convolved, conv_sequence = self.conv(x, left_conv, silence_conv)
            x = x + self.dropout(convolved)
        x = x + self.dropout(self.ffn(self.ffn_norm(x)))
        return x, keys_values, conv_sequence


class PhoneTagger(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        self.frontend = Frontend(config.frontend)
        S = config.frame_subsampling
        self.input_projection = nn.Linear(S * config.frontend.feature_dim, config.model_dim)
        self.layers = nn.ModuleList(EncoderLayer(config) for _ in range(config.num_layers))
        self.final_norm = nn.LayerNorm(config.model_dim)
        self.classifier = nn.Linear(config.model_dim, S * config.num_classes)
        # The stream start (see `prime`): per allowed chunk size, the caches after silence, (choices, N, 1, L', 2D)
        # and (choices, N, 1, W - 1, D); None until primed.  Derived from the weights, never saved.
        self.register_buffer("primed_kv", None, persistent=False)
        self.register_buffer("primed_conv", None, persistent=False)
        # What every position of those caches holds (a long silence's positions are all alike): (N, 2D) and (N, D).
        # `step` holds its caches less them, so a stream's zero caches are silence's (ChunkedSelfAttention.forward)
        self.register_buffer("silence_kv", None, persistent=False)
        self.register_buffer("silence_conv", None, persistent=False)

    @property
    def primed(self) -> bool:
        return self.primed_kv is not None

    @torch.no_grad()
    def prime(self) -> "PhoneTagger":
        """With config.primed_start: start every stream as if it followed a long silence, not an empty cache.

        Primed, a stream (step with cached_frames = 0, and each of forward's items) starts from the caches that
        digital silence as long as the receptive field leaves, one set per allowed chunk size, so prepending
        silence (whole chunks) to the audio changes nothing but the times.  The caches follow from the weights:
        `load` primes, training primes again every few steps, export traces them as constants.

        Each cache's positions are then all alike (the same silence at every one, to float rounding: 4e-6 on the
        bundled model's keys of size 16, whatever the chunk size), so one key and value a layer, `silence_kv`, and
        one convolution input, `silence_conv`, stand for them: `step` holds its caches less those, and a stream's
        zero caches are silence's with no substitution at its start."""
        c = self.config
        self.primed_kv = self.primed_conv = self.silence_kv = self.silence_conv = None
        if not c.primed_start or c.left_context_positions == 0:  # nothing cached, nothing to prime
            return self
        training = self.training
        self.eval()
        device = self.classifier.weight.device
        receptive = c.num_layers * (c.left_context_frames + max(c.chunk_frames_choices)) + max(c.chunk_frames_choices)
        start = self.initial_state(1)
        start = start._replace(pending_features=start.pending_features.to(device),
                               kv_cache=tuple(t.to(device) for t in start.kv_cache),
                               cached_frames=start.cached_frames.to(device),
                               conv_cache=tuple(t.to(device) for t in start.conv_cache) if c.conv_kernel else None)
        kv, conv = [], []
        for C in c.chunk_frames_choices:
            frames = -(-receptive // C) * C + C
            silence = self.frontend(torch.zeros(1, frames * HOP_SAMPLES, device=device))
            _, state = self.step(silence, start, C)
            kv.append(torch.stack(state.kv_cache))  # (N, 1, L', 2D)
            conv.append(torch.stack(state.conv_cache) if c.conv_kernel else None)
        self.primed_kv = torch.stack(kv)
        self.primed_conv = torch.stack(conv) if c.conv_kernel else None
        self.silence_kv = self.primed_kv.mean(dim=(0, 3))[:, 0]  # (choices, N, 1, L', 2D) -> (N, 2D)
        self.silence_conv = self.primed_conv.mean(dim=(0, 3))[:, 0] if c.conv_kernel else None  # (N, D)
        return self.train(training)

    def _primed_caches(self, chunk_frames) -> tuple[tuple[torch.Tensor, ...], tuple[torch.Tensor, ...] | None]:
        """The primed keys and values, N x (1, L', 2D), and convolution inputs, N x (1, W - 1, D), for chunk size C
        (an int, or a tensor in the graph: a C the model does not list gets the first listed size's)."""
        choices = self.config.chunk_frames_choices
        if isinstance(chunk_frames, int):
            index = choices.index(chunk_frames) if chunk_frames in choices else 0
        else:
            index = (torch.tensor(choices) == chunk_frames).to(torch.int32).argmax()
        conv = self.primed_conv[index].unbind(0) if self.primed_conv is not None else None
        return self.primed_kv[index].unbind(0), conv

    def level_direction(self) -> torch.Tensor:
        """(S * F,): how the input projection's input moves per unit of log input gain: 1 / std on every log-mel bin
        of each of the S stacked frames, 0 on the deltas (a constant has none).  Log-mel only (an MFCC model's level
        sits in its energy term); exact where no band is at the log floor (frontend.log_floor)."""
        frontend = self.config.frontend
        if frontend.kind != "fbank":
            raise ConfigError("a level-blind input projection needs log-mel features (frontend.kind: fbank)")
        static = frontend.static_dim
        direction = torch.zeros(frontend.feature_dim)
        direction[:static] = 1.0 / self.frontend.feature_std[:static].cpu()
        return direction.repeat(self.config.frame_subsampling)

    @torch.no_grad()
    def blind_to_level(self) -> None:
        """Project the input projection's weights off `level_direction`: a gain on the input (a constant added to
        every log-mel bin) then changes nothing the encoder sees, at no cost in the graph."""
        v = self.level_direction().to(self.input_projection.weight)
        weight = self.input_projection.weight  # (D, S * F)
        weight -= torch.outer(weight @ v, v) / (v @ v)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def _layout(self, batch, num_chunks, left_frames: int, key_valid: torch.Tensor | None, chunk_frames,
                device=None) -> ChunkLayout:
        """Chunk arithmetic for a call of num_chunks chunks of C frames with left_frames of left context;
        key_valid None: every key is visible (a primed model: no mask).  On the graph path `batch` is the (1,)
        int64 tensor of B."""
        C, L = chunk_frames, left_frames
        span = C + L  # one node for every use of L + C in the graph
        window = torch.arange(span, device=device)  # (L + C,)
        key_index = torch.arange(num_chunks, device=device)[:, None] * C + window[None, :]  # (K, L + C)
        if isinstance(C, int) and isinstance(num_chunks, int) and num_chunks > 0:
            hidden = torch.finfo(torch.float32).min
            key_mask = None if key_valid is None else \
                torch.where(key_valid[:, key_index], 0.0, hidden)[:, :, None, None, :]  # (B, K, 1, 1, L + C)
            return ChunkLayout(batch, num_chunks, C, key_index, None, self._bias_index(C, L, device), key_mask)
        # Sizes are tensors (the ONNX graph, torch streaming): the chunks fold into the batch of one attention
        # node per layer, with the shapes it needs computed here once for all layers (-1 for the sizes that
        # follow from the others: fewer nodes to compute them).
        D = self.config.model_dim
        one = torch.ones(1, dtype=torch.int64)
        chunk, width = torch.as_tensor(C).unsqueeze(0), torch.as_tensor(span).unsqueeze(0)  # C, L + C as slices' bounds
        folded = torch.cat([-one, chunk, one * D])  # (B * K, C, D)
        H = self.config.num_heads
        window_shape = torch.cat([-one, one * H, width, one * (D // H)])  # (B * K, H, L + C, Dh): keys, or values
        batch = batch if torch.is_tensor(batch) else torch.tensor([batch])  # a call with no chunk: torch's int
        output_shape = torch.cat([batch, -one, one * D])  # (B, T, D)
        rows_shape = torch.cat([batch, -one, one * (D // H)])  # (B, 2 H (L + T), Dh)
        # head h of position j's key is row 2 H j + h of the (B, 2 H (L + T), Dh) view, of its value 2 H j + H + h
        key_rows = key_index[:, None, :] * (2 * H) + torch.arange(H, device=device)[None, :, None]  # (K, H, L + C)
        kv_rows = (key_rows, key_rows + H)
        key_mask = None if key_valid is None else \
            ShapeReshape.apply(key_valid[:, key_index].to(torch.int32), torch.cat([-one, width]))  # (B * K, L + C)
        return ChunkLayout(batch, num_chunks, C, key_index, kv_rows, None, key_mask,
                           (folded, window_shape, output_shape, rows_shape))

    def _bias_index(self, C: int, L: int, device=None) -> torch.Tensor:
        """(C, L + C) index into the relative-bias table: query i of a chunk sits at window position L + i, so its
        offset to key j is L + i - j, whatever the chunk (clipped to the offsets the table holds)."""
        c = self.config
        offset = L + torch.arange(C, device=device)[:, None] - torch.arange(L + C, device=device)[None, :]
        return offset.clamp(-c.max_relative_future, c.max_relative_past) + c.max_relative_future

    def _encode(self, feats, left, key_valid, chunk_frames, left_conv=None, sizes=None, relative=False):
        """feats (B, T, F), T a multiple of C; left, N x (B, L', 2D): each layer's left context's keys and values;
        key_valid (B, L' + T'); left_conv, N x (B, W - 1, D), with the convolution module; `sizes` (streaming): the
        (1,) int64 tensor of B and the number of chunks, where the caller has them (fewer graph nodes than reading
        feats' shape); `relative` (a primed model's `step`): every cache, given and returned, is held less silence's
        (silence_kv, silence_conv), so zeros are silence's.

        Returns log-probabilities (B, T, classes) and, per layer, the left context followed by this call's
        positions: keys and values N x (B, L' + T', 2D) and convolution inputs N x (B, W - 1 + T', D) (None
        without the module).  Each layer's state is its own tensor, batch first: a layer reads its cache where it
        lies (one Concat with the new positions) and nothing restacks the layers.
        """
        S = self.config.frame_subsampling
        B, T, F = feats.shape[0], feats.shape[1], self.config.frontend.feature_dim  # F a plain int, even when traced
        L = int(left[0].shape[1])  # L': a constant of the graph (the cache's size), not a computed shape
        batch, num_chunks = sizes if sizes is not None else (B, T // chunk_frames)
        layout = self._layout(batch, num_chunks, L, key_valid, chunk_frames // S, feats.device)
        x = self.input_projection(CopyReshape.apply(feats, 0, -1, S * F))  # (B, T', S * F) -> (B, T', D)
        N = len(self.layers)
        new_kv, new_conv = [], []
        lefts = left_conv if left_conv is not None else [None] * N
        biases = [None] * N
        if layout.shapes is not None:  # every layer's relative bias: N x (1, H, C', L' + C')
            # For the largest chunk the biases are a constant of the graph; a smaller chunk's are its top-left
            # corner (query i, key j: offset L' + i - j either way), so a call slices them instead of gathering.
            index = self._bias_index(max(self.config.chunk_frames_choices) // S, L)  # (C'max, L' + C'max)
            table = torch.stack([layer.attention.relative_bias for layer in self.layers])[:, :, index]
            C = layout.chunk_frames
            biases = table[:, :, :C, : C + L].split(1)
        silences = [None] * N
        if relative:
            silences = [(kv, conv) for kv, conv in zip(self.silence_kv, self.silence_conv if left_conv is not None
                                                        else [None] * N)]
        for layer, layer_left, conv, bias, silence in zip(self.layers, left, lefts, biases, silences):
            x, layer_kv, conv_sequence = layer(x, layer_left, layout, conv, bias, silence)
            new_kv.append(layer_kv)
            new_conv.append(conv_sequence)
        logits = self.classifier(self.final_norm(x))  # (B, T', S * classes)
        logits = CopyReshape.apply(logits, 0, -1, self.config.num_classes)  # (B, T, classes)
        conv_sequences = new_conv if left_conv is not None else None
        return torch.log_softmax(logits, dim=-1), new_kv, conv_sequences

    def forward(self, feats: torch.Tensor, lengths: torch.Tensor, chunk_frames: int | None) -> torch.Tensor:
        """Batched, padded: feats (B, T, F), lengths (B,) -> log-probs (B, T, classes).

        chunk_frames C: attention chunk size; None or 0 means full context (one chunk, no truncation).
        """
        B, T, _ = feats.shape
        S = self.config.frame_subsampling
        full_context = not chunk_frames
        C = -(-max(T, 1) // S) * S if full_context else int(chunk_frames)
        padded = -(-T // C) * C
        frame_valid = torch.arange(padded, device=feats.device)[None, :] < lengths.to(feats.device)[:, None]
        # frames past an item's length are zeros, as in `step`: with S > 1 they share a position with real frames
        feats = nn.functional.pad(feats, (0, 0, 0, padded - T)) * frame_valid[:, :, None]
        L = 0 if full_context else self.config.left_context_positions
        position_valid = frame_valid[:, ::S]  # a position is real when its first frame is
        primed = self.primed and not full_context
        # Primed, no key is hidden: the left context is silence's, the keys past an item's end come after every real
        # query but those of its last chunk, which see them as `step`'s flush sees its padding (zeros)
        key_valid = None if primed else \
            torch.cat([torch.full((B, L), False, dtype=torch.bool, device=feats.device), position_valid], 1)
        left = [feats.new_zeros(B, L, 2 * self.config.model_dim)] * self.config.num_layers
        left_conv = self._zero_conv_state(B, feats)
        if primed:  # the stream starts after silence, as `step` starts a primed stream
            kv, conv = self._primed_caches(C)
            left = [layer_kv.expand(B, -1, -1) for layer_kv in kv]
            left_conv = [layer_conv.expand(B, -1, -1) for layer_conv in conv] if conv is not None else None
        log_probs, _, _ = self._encode(feats, left, key_valid, C, left_conv)
        return log_probs[:, :T]

    def tag(self, audio: torch.Tensor, lengths: torch.Tensor, chunk_frames: int | None) -> torch.Tensor:
        """Audio (B, N) zero-padded past each item's end, lengths (B,) in frames -> log-probs (B, T, classes) with
        row t labelling frame t of the audio, T = ceil(N / 160): `forward` on the audio followed by R frames of silence,
        its first R rows dropped (R = output_delay_frames), as the streaming clients do."""
        R = self.config.output_delay_frames
        audio = nn.functional.pad(audio, (0, R * HOP_SAMPLES))
        log_probs = self(self.frontend(audio), lengths + R, chunk_frames)
        return log_probs[:, R:]

    def _zero_conv_state(self, batch_size: int, like: torch.Tensor) -> tuple[torch.Tensor, ...] | None:
        c = self.config
        if not c.conv_kernel:
            return None
        return tuple(like.new_zeros(batch_size, c.conv_kernel - 1, c.model_dim) for _ in range(c.num_layers))

    def initial_state(self, batch_size: int = 1) -> EncoderState:
        c = self.config
        cache = tuple(torch.zeros(batch_size, c.left_context_positions, 2 * c.model_dim) for _ in range(c.num_layers))
        return EncoderState(
            pending_features=torch.zeros(batch_size, 0, c.frontend.feature_dim),
            kv_cache=cache,
            cached_frames=torch.zeros(batch_size, dtype=torch.int64),
            conv_cache=self._zero_conv_state(batch_size, cache[0]),
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
        S = self.config.frame_subsampling
        L = self.config.left_context_positions
        # Primed, the caches are held less silence's (see prime): a stream's first call, its caches zeros, starts
        # from the caches silence leaves with nothing substituted, and every slot holds a position from the start.
        frames = torch.cat([state.pending_features, feats], dim=1)  # (B, n, F)
        n = frames.shape[1]
        complete = (n // C) * C
        ready = complete + final * (n - complete)  # frames emitted now
        chunks = (ready + C - 1) // C
        padded = chunks * C  # a final short chunk is padded with zeros
        chunk_input = ZeroPadded.apply(frames, ready, padded)  # (B, padded, F); padding is zeros, as in forward
        ready_positions = (ready + (S - 1)) // S
        # Keys are the L' cache slots, then this call's padded / S positions: a slot is real when it holds one of the
        # newest cached_frames cached positions, a position when it is one of the first ready_positions.
        if self.primed:  # nothing hidden: the cache holds positions from the start, a flush's padding is seen as
            # forward sees what follows an item's end (fewer graph nodes, no mask for the attention)
            key_valid = None
            cached_frames = torch.clamp(state.cached_frames + L, max=L)  # L, whether the stream starts (0) or not
        else:
            slot = torch.arange(L + padded // S, device=feats.device)[None, :]  # (1, L' + padded / S)
            key_valid = (slot >= (L - state.cached_frames)[:, None]) & (slot < L + ready_positions)
            cached_frames = torch.clamp(state.cached_frames + ready_positions, max=L)
        sizes = (torch._shape_as_tensor(frames)[:1], chunks) if torch.is_tensor(chunks) else None
        log_probs, every, all_conv = self._encode(chunk_input, state.kv_cache, key_valid, C, state.conv_cache, sizes,
                                                  relative=self.primed)
        # every, N x (B, L' + padded', 2D), and all_conv hold the old state followed by this call's positions; the
        # new state is the last L' (W - 1) of them that are real: positions ready' - L' .. ready' - 1, cache included.
        first = torch.as_tensor(ready_positions).reshape(1)  # (1,) int64, shared by every layer's Slice
        new_conv = None
        if state.conv_cache is not None:
            W = self.config.conv_kernel
            new_conv = tuple(Positions.apply(sequence, first, first + (W - 1)) for sequence in all_conv)
        new_state = EncoderState(
            pending_features=frames[:, ready:],
            kv_cache=tuple(Positions.apply(layer_kv, first, first + L) for layer_kv in every),
            cached_frames=cached_frames,
            conv_cache=new_conv,
        )
        return log_probs[:, :ready], new_state


def kept_layers(have: int, want: int) -> list[int]:
    """Which of `have` layers a model of `want` <= have layers keeps: evenly spaced, the first and the last always."""
    if want == 1:
        return [have - 1]
    return sorted({round(i * (have - 1) / (want - 1)) for i in range(want)})


def with_num_layers(model: PhoneTagger, num_layers: int) -> PhoneTagger:
    """The same model with fewer layers (`kept_layers` of them, weights unchanged; the frontend, input projection,
    final norm and classifier as they are): a start for a smaller, faster model trained on from a larger one."""
    from dataclasses import replace

    have = model.config.num_layers
    if not 1 <= num_layers <= have:
        raise CheckpointError(f"cannot make {num_layers} layers out of {have}: a model can start from a larger one, "
                              "never a smaller")
    keep = kept_layers(have, num_layers)
    smaller = PhoneTagger(replace(model.config, num_layers=num_layers))
    state = {}
    for name, value in model.state_dict().items():
        if name.startswith("layers."):
            _, index, rest = name.split(".", 2)
            if int(index) not in keep:
                continue
            name = f"layers.{keep.index(int(index))}.{rest}"
        state[name] = value
    smaller.load_state_dict(state)
    return smaller.train(model.training)


def with_left_context(model: PhoneTagger, left_context_frames: int) -> PhoneTagger:
    """The same weights with another left context L: every layer's relative-bias table keeps its entries for the
    offsets both contexts can meet; a longer context gives the new far offsets the bias of the old farthest one,
    which is what full-context attention already used for them (offsets beyond the table are clamped to its end).
    With L unchanged, or on an utterance no longer than the shorter context reaches, the output is unchanged."""
    from dataclasses import replace

    return with_bias_tables_for(model, replace(model.config, left_context_frames=left_context_frames))


def with_chunk_frames(model: PhoneTagger, chunk_frames_choices, default_chunk_frames: int | None = None) -> PhoneTagger:
    """The same weights served at other chunk sizes: every layer's relative-bias table keeps its entries for the
    offsets both can meet, and a larger chunk's new far offsets (ahead and behind) get the bias of the old farthest
    one, which is what full-context attention already used for them (offsets beyond the table are clamped to its
    ends).  For weights trained at full context (train.full_context_share 1): a large chunk is then a window of
    full context, the whole chunk seen at once.  Smaller chunks keep the entries they meet."""
    from dataclasses import replace

    choices = tuple(int(c) for c in chunk_frames_choices)
    default = default_chunk_frames if default_chunk_frames is not None else (
        model.config.default_chunk_frames if model.config.default_chunk_frames in choices else max(choices))
    return with_bias_tables_for(model, replace(model.config, chunk_frames_choices=choices,
                                               default_chunk_frames=default))  # the config checks them


def with_bias_tables_for(model: PhoneTagger, config: ModelConfig) -> PhoneTagger:
    """The model's weights under `config` (another left context or other chunk sizes): each relative-bias table
    (index = clamp(query - key, -future, past) + future: the future side first) cut or grown on each side to the
    offsets `config` can meet, a grown side repeating its farthest entry as clamping did."""
    old = model.config
    grow_future = config.max_relative_future - old.max_relative_future
    grow_past = config.max_relative_past - old.max_relative_past
    adapted = PhoneTagger(config)
    state = dict(model.state_dict())
    for name, table in state.items():
        if name.endswith("attention.relative_bias"):
            table = table[:, max(0, -grow_future):table.shape[1] - max(0, -grow_past)]
            state[name] = torch.cat([table[:, :1].expand(-1, max(grow_future, 0)), table,
                                     table[:, -1:].expand(-1, max(grow_past, 0))], dim=1).clone()
    adapted.load_state_dict(state)
    return adapted.train(model.training)


def save_checkpoint(model: PhoneTagger, path: str | Path, **extra) -> None:
    """Write atomically (temp file + rename): an interrupted save never leaves a broken checkpoint."""
    path = Path(path)
    broken = [name for name, tensor in model.state_dict().items()
              if tensor.is_floating_point() and not torch.isfinite(tensor).all()]
    if broken:
        raise CheckpointError(f"{path}: not written: the weights hold NaN or infinite values ({', '.join(broken[:3])}"
                              f"{' ...' if len(broken) > 3 else ''}); training diverged")
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"format": CHECKPOINT_FORMAT, "config": model.config.to_dict(), "model": model.state_dict(), **extra}
    temporary = path.with_name(path.name + ".tmp")
    try:
        torch.save(payload, temporary)
        temporary.replace(path)
    except (OSError, RuntimeError) as error:  # torch wraps a full disk in a RuntimeError of its own
        temporary.unlink(missing_ok=True)
        full = "No space left" in str(error) or "unexpected pos" in str(error) or getattr(error, "errno", 0) == 28
        reason = "the disk is full" if full \
            else (error.strerror if isinstance(error, OSError) and error.strerror else str(error).splitlines()[0])
        raise CheckpointError(f"{path}: cannot write the checkpoint: {reason}") from None


class CheckpointError(SpeechattnError, ValueError):
    """A checkpoint that cannot be loaded, with a message meant for the user."""


def load(path: str | Path, map_location: str = "cpu") -> PhoneTagger:
    """Rebuild the model from a checkpoint alone (its config travels inside), primed when its config says so."""
    from speechattn.files import refuse_special

    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"{path}: no such checkpoint")
    refuse_special(path, "checkpoint", CheckpointError)  # torch.load would read /dev/zero or wait on a FIFO forever
    try:
        import warnings

        with warnings.catch_warnings():  # torch warns about a raw pickle in two lines before it refuses it
            warnings.simplefilter("ignore")
            payload = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as error:
        detail = str(error).splitlines()[0][:100] if str(error) else type(error).__name__
        if "file an issue" in detail or "Weights only load failed" in detail:
            detail = "it holds objects other than tensors and plain data, or is not a torch file"
        raise CheckpointError(f"{path}: not a readable checkpoint ({detail})") from None
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{path}: not a speechattn checkpoint (expected format {CHECKPOINT_FORMAT})")
    for key in ("config", "model"):
        if not isinstance(payload.get(key), dict):
            raise CheckpointError(f"{path}: a damaged speechattn checkpoint: its {key!r} is "
                                  f"{'missing' if key not in payload else 'not a mapping'}")
    try:  # a damaged checkpoint is a failed input (exit 1), not a usage error
        config = ModelConfig.from_dict({**ABSENT_FROM_OLDER_CHECKPOINTS, **payload["config"]}, source=str(path))
    except ConfigError as error:  # the range checks of __post_init__ do not name the file
        named = str(error) if str(error).startswith(str(path)) else f"{path}: {error}"
        raise CheckpointError(f"{named} (in the checkpoint's config)") from None
    model = PhoneTagger(config)
    mismatch = weights_mismatch(model.state_dict(), payload["model"])
    if mismatch:
        raise CheckpointError(f"{path}: its weights do not fit its own config ({mismatch})")
    # every command that loads a checkpoint (eval, export, average, --init-from) would otherwise carry NaN on
    broken = next((name for name, tensor in payload["model"].items() if isinstance(tensor, torch.Tensor)
                   and tensor.is_floating_point() and not torch.isfinite(tensor).all()), None)
    if broken:
        raise CheckpointError(f"{path}: parameter {broken} holds NaN or infinite values (a diverged run?); "
                              "refusing to use these weights")
    try:
        model.load_state_dict(payload["model"])
    except (RuntimeError, TypeError, AttributeError) as error:  # a value that is no tensor
        raise CheckpointError(f"{path}: its weights do not fit its own config "
                              f"({str(error).splitlines()[-1].strip()[:200]})") from None
    return model.eval().prime()  # primes only a primed_start model


def weights_mismatch(expected: dict, given: dict) -> str:
    """"" when `given` has every tensor of `expected` in its shape and nothing else; otherwise the counts and the
    first name of each kind of difference, in one line (torch's own message lists every key over several lines)."""
    missing = [k for k in expected if k not in given]
    unexpected = [k for k in given if k not in expected]
    wrong = [k for k in expected if k in given and tuple(getattr(given[k], "shape", ())) != tuple(expected[k].shape)]
    parts = [f"{len(missing)} missing, e.g. {missing[0]}" if missing else "",
             f"{len(unexpected)} unexpected, e.g. {unexpected[0]}" if unexpected else "",
             f"{len(wrong)} of another shape, e.g. {wrong[0]}: {list(getattr(given[wrong[0]], 'shape', []))} there, "
             f"{list(expected[wrong[0]].shape)} here" if wrong else ""]
    return "; ".join(p for p in parts if p)
