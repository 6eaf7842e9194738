"""The frontend: raw 16 kHz PCM -> normalised log-mel filterbank or MFCC frames, in torch ops.

Everything here exports to ONNX, so the same code runs in training and inside
the streaming graph.  It follows Kaldi's feature pipeline (and so matches
kaldi-native-fbank configured alike): per frame, remove the DC offset,
pre-emphasise (0.97), apply the Povey window, zero-pad to a 512-point FFT,
take the power spectrum, apply triangular mel filters (1127 ln(1 + f/700)),
and take the log with a floor of float32 epsilon.  MFCC adds Kaldi's DCT,
cepstral liftering and (optionally) the raw log energy in place of C0.

The spectral analysis runs in float64 up to the power spectrum: DC removal,
pre-emphasis and the window as element-wise ops, then a real FFT of 512 points
(SquaredSpectrum: torch.fft.rfft in torch; in the graph two stages of small
DFTs, each a matmul with a constant), each frame on its own, so a frame's
spectrum cannot depend on how many frames one call holds.  The mel filterbank
sums non-negative powers and runs in float32.

Framing (see audio.py): frame i ends at sample 160*(i+1) and reaches 240
samples back; a stream carries those 240 samples between calls as state, so
features of audio fed in any hop-multiple pieces equal the one-shot features
exactly.  Deltas are causal: Kaldi's regression formula over the 2N+1 most
recent frames (the delta of frame i-N, placed at frame i), with the frames
before the stream taken as digital silence.

Shapes: B batch, N samples, T frames, F feature dim, S static feature dim,
H history frames (2 * delta_window * delta_order).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from speechattn.errors import ConfigError
from speechattn.audio import HOP_SAMPLES, SAMPLE_RATE, TAIL_SAMPLES, WINDOW_SAMPLES

FFT_SIZE = 512  # WINDOW_SAMPLES rounded up to a power of two, as Kaldi does
NUM_FFT_BINS = FFT_SIZE // 2 + 1  # 257
LOG_FLOOR = float(np.finfo(np.float32).eps)  # Kaldi's floor before the log
LEVEL_GATE = 1e-10  # frames whose mean square is at most this (-100 dBFS: digital silence) leave the level estimate
# The level's three float64 sums travel between calls as six float32 numbers, each sum as a float32 and the float32
# of what it leaves over (about 48 bits: the contract's states are float32), and the gain's log is rounded to steps of
# 2^-16 (0.00007 dB): one call and many then give the same gain, bit for bit, but once in about 10^9 frames.  Carried
# in three float32 numbers the sums of one chunking and another differed in their 24th bit, the gain in its 7th
# decimal, and the weight-only int8 file, which quantizes each frame's activations on their own, turned that into
# 0.05 of log-probability between one call and random pieces.
LEVEL_GAIN_STEPS = 2.0 ** 16
LEVEL_STATE = (2, 3)  # the three sums' float32 parts, then the float32 of what each leaves over
LEVEL_BLOCK_FRAMES = 512  # forward() estimates the level in blocks this long (a call's decays shrink with its length)
BLOCK_SAMPLES = 80  # the largest length that divides the tail (240), the hop (160) and the window (400)
assert not (TAIL_SAMPLES % BLOCK_SAMPLES or HOP_SAMPLES % BLOCK_SAMPLES or WINDOW_SAMPLES % BLOCK_SAMPLES)


@dataclass(frozen=True)
class FrontendConfig:
    kind: str = "fbank"  # "fbank" (log-mel) or "mfcc"
    num_mel_bins: int = 80  # Kaldi's MFCC default is 23
    num_ceps: int = 13  # MFCC only
    use_energy: bool = True  # MFCC only: C0 replaced by the raw log energy, as in Kaldi
    cepstral_lifter: float = 22.0  # MFCC only
    delta_order: int = 0  # 0: static only; 1: + delta; 2: + delta + delta-delta
    delta_window: int = 2  # N in Kaldi's regression formula
    low_freq_hz: float = 20.0
    high_freq_hz: float = 8000.0
    preemphasis: float = 0.97
    # Level normalisation inside the graph (None: off).  A running estimate of the input's level, the mean power of
    # the frames heard so far with exponential forgetting (time constant level_time_constant_s; frames of digital
    # silence count for nothing), sets a gain that brings the spectrum to this RMS level before the log, as if
    # the audio had been recorded there; the gain is held within +level_max_gain_db / -level_max_cut_db.  State:
    # level_estimate, exact under any chunking (contract).
    level_target_dbfs: float | None = None
    level_time_constant_s: float = 1.0
    level_max_gain_db: float = 40.0
    level_max_cut_db: float = 20.0
    level_weighting: str = "mean"  # "mean": every frame alike; "power": each frame's power weighted by itself
    #                                (speech sets the level and pauses barely count, but after a fall in level
    #                                the loud past is forgotten 2-3 times slower: labels after a 30 dB fall
    #                                agreed on 44 % of frames with a steady quiet stream, against 68 % with "mean")
    level_onset_frames: float = 100.0  # the first frames heard are brought to a level ramping from
    level_onset_dbfs: float = -40.0  # this one to level_target_dbfs (see Frontend._level_gains)
    level_band_db: float = 0.0  # a level within this many dB of the target is left as it is (a dead band: 0, every
    #                             level is brought to the target; 5, a level of -27 dBFS to a target of -20 gains 2 dB)
    # The floor on each mel band's power (and MFCC's energy) before the log, on audio in [-1, 1].  The default, float32's
    # epsilon, is Kaldi's number, but Kaldi applies it to 16-bit sample values, 90 dB louder: here it floors the quiet
    # bands of quiet audio (1-5 % of the bins of the noisy dev mixes at -45 dBFS, 0.3 % or less at -15), a level cue
    # the model can learn.  1e-16 is Kaldi's floor moved to [-1, 1] (epsilon / 32768^2): of the dev sets at -45 dBFS,
    # 0.0005 % of the bins reach it (the empty band above 4 kHz of the upsampled telephone prompts), none of the rest.
    log_floor: float = LOG_FLOOR

    def __post_init__(self) -> None:
        if self.kind not in ("fbank", "mfcc"):
            raise ConfigError(f"frontend.kind must be 'fbank' or 'mfcc', not {self.kind!r}")
        if self.delta_order not in (0, 1, 2):
            raise ConfigError(f"frontend.delta_order must be 0, 1 or 2, not {self.delta_order}")
        if self.kind == "mfcc" and self.num_ceps > self.num_mel_bins:
            raise ConfigError("frontend.num_ceps cannot exceed frontend.num_mel_bins")
        if not 0 <= self.low_freq_hz < self.high_freq_hz <= SAMPLE_RATE / 2:
            raise ConfigError("need 0 <= frontend.low_freq_hz < frontend.high_freq_hz <= 8000")
        if self.level_weighting not in ("power", "mean"):
            raise ConfigError(f"frontend.level_weighting must be 'power' or 'mean', not {self.level_weighting!r}")
        if not -80 <= self.level_onset_dbfs <= 0:
            raise ConfigError(f"frontend.level_onset_dbfs must be from -80 to 0, not {self.level_onset_dbfs}")
        if self.level_target_dbfs is not None and not -60 <= self.level_target_dbfs <= 0:
            raise ConfigError(f"frontend.level_target_dbfs must be from -60 to 0 (or null: off), not "
                              f"{self.level_target_dbfs}")
        for key, low, high in (("num_mel_bins", 1, 256), ("num_ceps", 1, 256), ("delta_window", 1, 50),
                               ("cepstral_lifter", 0, 1000), ("preemphasis", 0, 1),
                               ("level_time_constant_s", 0.1, 60), ("level_max_gain_db", 0, 80),
                               ("level_max_cut_db", 0, 80), ("level_onset_frames", 0, 100_000),
                               ("level_band_db", 0, 40), ("log_floor", 1e-30, 1.0)):
            if not low <= getattr(self, key) <= high:
                raise ConfigError(f"frontend.{key} must be from {low} to {high}, not {getattr(self, key)}")

    @property
    def static_dim(self) -> int:
        return self.num_ceps if self.kind == "mfcc" else self.num_mel_bins

    @property
    def feature_dim(self) -> int:
        return self.static_dim * (1 + self.delta_order)

    @property
    def history_frames(self) -> int:
        return 2 * self.delta_window * self.delta_order

    @property
    def level_norm(self) -> bool:
        return self.level_target_dbfs is not None


class CopyReshape(torch.autograd.Function):
    """x.reshape(shape) with shape in ONNX's convention: 0 copies that dimension of x, -1 is inferred.  Exported
    as one Reshape with a constant shape, where a shape built from traced sizes exports as a chain of Shape,
    Gather, Unsqueeze and Concat nodes."""

    @staticmethod
    def forward(ctx, x, size0: int, size1: int, size2: int):  # 3-D; ints one by one (the exporter takes no tuple)
        ctx.input_shape = x.shape
        return x.reshape([x.shape[i] if d == 0 else d for i, d in enumerate((size0, size1, size2))])

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shape), None, None, None

    @staticmethod
    def symbolic(g, x, size0, size1, size2):
        return g.op("Reshape", x, g.op("Constant", value_t=torch.tensor([size0, size1, size2], dtype=torch.int64)))


def povey_window() -> np.ndarray:
    n = np.arange(WINDOW_SAMPLES)
    return (0.5 - 0.5 * np.cos(2 * np.pi * n / (WINDOW_SAMPLES - 1))) ** 0.85


# The 512-point FFT as two stages of small DFTs (Cooley-Tukey, 512 = 16 x 32), each a matmul with a constant.
# Sample n = 32 a + b (a < 16, b < 32), bin k = c + 16 d (c < 16, d < 16): X[k] = sum_b W32^(b d) W512^(b c)
# sum_a W16^(a c) x[n].  Bins 0 and 256 are left out: no mel filter weighs them (Kaldi's filters start above
# 0 Hz and stop below Nyquist), so k = c + 16 d for d < 16 covers every bin that counts.
_A, _B, _C, _D = 16, 32, 16, 16


def _fft_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(stage 1 (16, 32): W16^(a c), real parts then imaginary as columns; twiddles (2, 32, 16): W512^(b c),
    real and imaginary; stage 2 (64, 32): W32^(b d) as a real matrix taking [re b, im b] to [re d, im d])."""
    ac = 2 * np.pi * np.outer(np.arange(_A), np.arange(_C)) / _A
    stage1 = np.concatenate([np.cos(ac), -np.sin(ac)], axis=1)
    bc = -2 * np.pi * np.outer(np.arange(_B), np.arange(_C)) / FFT_SIZE
    twiddles = np.stack([np.cos(bc), np.sin(bc)])
    bd = -2 * np.pi * np.outer(np.arange(_B), np.arange(_D)) / _B
    re, im = np.cos(bd), np.sin(bd)
    stage2 = np.block([[re, im], [-im, re]])  # [Xr, Xi] = [Zr, Zi] @ stage2
    return stage1, twiddles, stage2


_SPECTRUM_BINS = torch.arange(_C)[:, None] + _C * torch.arange(_D)[None, :]  # (c, d): bin c + 16 d


def fft_bin_order() -> np.ndarray:
    """The bin of each of SquaredSpectrum's 512 outputs: for each c, the real parts of d = 0..15, then the
    imaginary ones."""
    return np.repeat(_SPECTRUM_BINS.numpy()[:, None, :], 2, axis=1).reshape(-1)  # (c, re/im, d)


class SquaredSpectrum(torch.autograd.Function):
    """(B, T, 400) float64 frames and the _fft_tables() -> (B, T, 512): the squared real and imaginary parts of
    their 512-point FFT (zero-padded), in fft_bin_order(), so the power spectrum's mel filterbank is one matmul.

    In the graph: Pad, 5 Reshape, 2 Transpose, 2 MatMul, Split, Mul, Sub, Add, Concat (19 nodes), 3x faster in
    onnxruntime than its DFT operator, which computes its twiddle factors anew on every call (125 against 40 us
    for 8 frames, one core).  The constants are the right operands: onnxruntime's MatMul broadcasts a constant
    left operand over no frames (T = 0) with an error.  The graph's products fold the frames into rows, whose
    results do not depend on how many rows there are (stream-check and the streaming tests hold it to that).
    In torch (training, evaluation) the same spectrum comes from torch.fft.rfft, five times faster than small
    batched matmuls there; the two agree to float64 rounding (the export's verification compares them)."""

    @staticmethod
    def forward(ctx, frames, stage1, twiddles, stage2):
        B, T = frames.shape[0], frames.shape[1]
        rows = torch.cat([frames.reshape(-1, WINDOW_SAMPLES), frames.new_zeros(1, WINDOW_SAMPLES)])  # MKL refuses
        spectrum = torch.fft.rfft(rows, n=FFT_SIZE)[:-1, _SPECTRUM_BINS]  # an empty FFT: one row more, dropped
        spectrum = spectrum.reshape(B, T, _C, _D)  # bin c + 16 d
        parts = torch.stack([spectrum.real, spectrum.imag], dim=3)  # (B, T, c, re/im, d)
        return (parts * parts).reshape(B, T, _C * 2 * _D)

    @staticmethod
    def symbolic(g, frames, stage1, twiddles, stage2):
        def constant(values):
            return g.op("Constant", value_t=torch.tensor(values, dtype=torch.int64))

        padded = g.op("Pad", frames, constant([0, 0, 0, 0, 0, FFT_SIZE - WINDOW_SAMPLES]))
        # Reshapes with 0 (copy B) and -1 (T, or T x rows; 0 when the call brings no frame).  The products take
        # (B, rows, K) against the constant: a Transpose right before a MatMul would be fused into it, and the
        # fused kernel rejects a call with no frame.
        x = g.op("Transpose", g.op("Reshape", padded, constant([0, -1, _A, _B])), perm_i=[0, 1, 3, 2])
        y = g.op("MatMul", g.op("Reshape", x, constant([0, -1, _A])), stage1)  # (B, T x b, re/im c)
        yr, yi = g.op("Split", g.op("Reshape", y, constant([0, -1, _B, 2 * _C])), constant([_C, _C]), axis_i=3,
                      outputs=2)
        tr, ti = g.op("Split", twiddles, constant([1, 1]), axis_i=0, outputs=2)
        zr = g.op("Sub", g.op("Mul", yr, tr), g.op("Mul", yi, ti))
        zi = g.op("Add", g.op("Mul", yr, ti), g.op("Mul", yi, tr))
        z = g.op("Transpose", g.op("Concat", zr, zi, axis_i=2), perm_i=[0, 1, 3, 2])  # (B, T, c, re/im b)
        spectrum = g.op("MatMul", g.op("Reshape", z, constant([0, -1, 2 * _B])), stage2)  # (B, T x c, re/im d)
        return g.op("Reshape", g.op("Mul", spectrum, spectrum), constant([0, -1, _C * 2 * _D]))


def mel_filterbank(num_bins: int, low_freq_hz: float, high_freq_hz: float) -> np.ndarray:
    """(257, num_bins) Kaldi triangular mel filters; the Nyquist bin has no weight, as in Kaldi."""

    def mel(freq_hz: np.ndarray | float) -> np.ndarray:
        return 1127.0 * np.log1p(np.asarray(freq_hz) / 700.0)

    low, high = mel(low_freq_hz), mel(high_freq_hz)
    delta = (high - low) / (num_bins + 1)
    fft_mel = mel(np.arange(FFT_SIZE // 2) * SAMPLE_RATE / FFT_SIZE)
    banks = np.zeros((NUM_FFT_BINS, num_bins))
    for b in range(num_bins):
        left, centre, right = low + b * delta, low + (b + 1) * delta, low + (b + 2) * delta
        rising = (fft_mel - left) / (centre - left)
        falling = (right - fft_mel) / (right - centre)
        inside = (fft_mel > left) & (fft_mel < right)
        banks[: FFT_SIZE // 2, b] = np.where(inside, np.minimum(rising, falling), 0.0)
    return banks


def dct_matrix(num_bins: int, num_ceps: int, lifter: float) -> np.ndarray:
    """(num_bins, num_ceps) Kaldi's orthonormal DCT-II with cepstral liftering folded in."""
    n = np.arange(num_bins)[None, :]
    k = np.arange(num_ceps)[:, None]
    dct = np.sqrt(2.0 / num_bins) * np.cos(np.pi / num_bins * (n + 0.5) * k)
    dct[0] = np.sqrt(1.0 / num_bins)
    if lifter:
        dct *= (1.0 + 0.5 * lifter * np.sin(np.pi * np.arange(num_ceps) / lifter))[:, None]
    return dct.T


def delta_kernel(window: int) -> np.ndarray:
    """Kaldi's regression weights n / (2 * sum n^2), n = -N..N."""
    n = np.arange(-window, window + 1, dtype=np.float64)
    return n / (2.0 * np.sum(n[window + 1 :] ** 2))


def frame_energy(frames: torch.Tensor) -> torch.Tensor:
    """(B, T, 400) -> (B, T, 1) float64: each frame's energy after DC removal, sum (x - mean)^2 = sum x^2 - (sum x)^2
    / n, in float64 to keep the difference exact.  Sums as matmuls: onnxruntime's ReduceSum returns a 0-frame input
    unreduced."""
    samples = frames.double()
    ones = torch.ones(WINDOW_SAMPLES, 1, dtype=torch.float64, device=frames.device)
    return (samples * samples) @ ones - (samples @ ones) ** 2 / WINDOW_SAMPLES


class Frontend(nn.Module):
    """PCM -> normalised features.  `step` streams; `forward` is the one-shot equivalent."""

    def __init__(self, config: FrontendConfig) -> None:
        super().__init__()
        self.config = config
        f32 = torch.float32
        # Computed from the config, not stored in checkpoints (persistent=False); float64 like the analysis.
        self.register_buffer("window", torch.tensor(povey_window(), dtype=torch.float64), persistent=False)
        banks = mel_filterbank(config.num_mel_bins, config.low_freq_hz, config.high_freq_hz)
        self.register_buffer("mel_banks", torch.tensor(banks, dtype=f32))
        stage1, twiddles, stage2 = (torch.tensor(t, dtype=torch.float64) for t in _fft_tables())
        self.register_buffer("fft_stage1", stage1, persistent=False)
        self.register_buffer("fft_twiddles", twiddles, persistent=False)
        self.register_buffer("fft_stage2", stage2, persistent=False)
        self.register_buffer("fft_bins", torch.tensor(fft_bin_order()), persistent=False)
        # level normalisation: a frame's mean square as one matmul
        self.register_buffer("level_mean", torch.full((WINDOW_SAMPLES, 1), 1.0 / WINDOW_SAMPLES, dtype=torch.float64),
                             persistent=False)
        if config.kind == "mfcc":
            dct = dct_matrix(config.num_mel_bins, config.num_ceps, config.cepstral_lifter)
            self.register_buffer("dct", torch.tensor(dct, dtype=f32))
        self.delta_weights = [float(w) for w in delta_kernel(config.delta_window)]
        # Global mean/variance normalisation; statistics are set from training data and travel in the checkpoint.
        self.register_buffer("feature_mean", torch.zeros(config.feature_dim))
        self.register_buffer("feature_std", torch.ones(config.feature_dim))
        # Static features of an all-zero window: what the frames before a stream are taken to be.
        self.register_buffer("silence_features", torch.zeros(config.static_dim))
        with torch.no_grad():
            self.silence_features.copy_(self._static_features(torch.zeros(1, 1, WINDOW_SAMPLES))[0, 0])

    @property
    def feature_dim(self) -> int:
        return self.config.feature_dim

    def initial_state(self, batch_size: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
        """(audio_tail (B, 240), feature_history (B, H, S)), both zeros: a stream starts after silence."""
        history = torch.zeros(batch_size, self.config.history_frames, self.config.static_dim)
        return torch.zeros(batch_size, TAIL_SAMPLES), history

    def initial_level(self, batch_size: int = 1) -> torch.Tensor:
        """level_estimate (B, 2, 3): the level's two forgetting sums and the frames heard, each as a float32 (first
        row) and the float32 of its remainder (second row; see LEVEL_STATE); zeros (nothing heard)."""
        return torch.zeros(batch_size, *LEVEL_STATE)

    def _level_gains(self, centered: torch.Tensor, level: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """centered (B, m, 400) float64 (the frames after DC removal), level (B, 2, 3) -> (power gain (B, m, 1)
        float64, new level (B, 2, 3)).

        Per frame k: p_k its mean square, on_k = p_k > LEVEL_GATE, h_k the frames heard so far (those with on).  The
        level is the forgetting mean of the powers heard, u_k / v_k with u_k = a u_(k-1) + w_k p_k and v_k = a v_(k-1)
        + w_k on a frame heard (w_k = 1, or p_k with level_weighting "power"; a = exp(-hop / time constant)), both
        as they were on one not heard.  The gain brings that level to a target that moves from level_onset_dbfs to
        level_target_dbfs over the first level_onset_frames frames heard: the first frames of a stream (often a
        room's noise alone, whose level says nothing of the speech to come) are set quiet, where noise reads as
        silence, whatever their level.  Digital silence changes nothing.

        All m frames at once, in few graph nodes (each costs its dispatch more than its arithmetic at four frames a
        call): the state's two rows (the sums' float32 parts, then their remainders) and each frame's terms, u, v
        and h, weighted by a^(h_last - h_j), their decay to the call's last frame (at most 1: nothing overflows), in
        one cumulative sum; the ratio u_k / v_k needs no decay back to frame k, and the sums at the last frame are
        the new state.  The gains are worked out for the state's rows too and dropped at the end (one slice, not
        two).  In float64, the sums carried in six float32 numbers and the gain's log rounded (LEVEL_GAIN_STEPS):
        any split of the frames into calls gives the same gains, bit for bit."""
        c = self.config
        power = (centered * centered) @ self.level_mean  # (B, m, 1): each frame's mean square
        on = (power > LEVEL_GATE).to(torch.float64)
        weight = on * power if c.level_weighting == "power" else on
        rows = torch.cat([level.double(), torch.cat([weight * power, weight, on], dim=2)], dim=1)  # (B, 2 + m, 3)
        heard = torch.cumsum(rows[:, :, 2:], dim=1)  # (B, 2 + m, 1): frames heard (whole numbers: exact)
        heard_last = heard[:, -1:]
        decay = torch.exp((heard - heard_last) * (HOP_SAMPLES / SAMPLE_RATE / c.level_time_constant_s))
        totals = torch.cumsum(rows * decay, dim=1)  # u_k, v_k (and h_k decayed: not used) times a^(h_last - h_k)
        u, v, _ = torch.split(totals, 1, dim=2)
        estimate = u / torch.clamp(v, min=1e-300)  # nothing heard yet: 0, the largest gain (of silence: nothing)
        # the target in steps of the rounding: onset + ramp * (target - onset), the ramp min(heard / frames, 1)
        steps = LEVEL_GAIN_STEPS * math.log(10.0) / 10.0
        onset, rise = c.level_onset_dbfs * steps, (c.level_target_dbfs - c.level_onset_dbfs) * steps
        target = torch.clamp(heard * (rise / max(c.level_onset_frames, 1.0)) + onset, max=onset + rise)
        wanted = target - torch.log(estimate) * LEVEL_GAIN_STEPS
        if c.level_band_db > 0:  # the dead band: only the distance beyond it is made up
            wanted = torch.sign(wanted) * torch.clamp(wanted.abs() - c.level_band_db * steps, min=0.0)
        log_gain = torch.round(torch.clamp(wanted, min=-c.level_max_cut_db * steps, max=c.level_max_gain_db * steps))
        gain = torch.exp(log_gain * (1.0 / LEVEL_GAIN_STEPS))[:, 2:]  # the frames' (the state's two rows dropped)
        last = torch.cat([totals[:, -1:, :2], heard_last], dim=2)  # (B, 1, 3)
        high = last.to(level.dtype)
        return gain, torch.cat([high, (last - high.double()).to(level.dtype)], dim=1)

    def set_normalization(self, mean: torch.Tensor, std: torch.Tensor) -> None:
        self.feature_mean.copy_(mean)
        self.feature_std.copy_(std.clamp(min=1e-5))

    @staticmethod
    def _centered(frames: torch.Tensor) -> torch.Tensor:
        """(B, T, 400) -> float64, each frame's mean removed (a 0-frame ReduceMean broadcasts alike)."""
        samples = frames.double()
        return samples - samples.mean(-1, keepdim=True)

    def _static_features(self, frames: torch.Tensor, gain: torch.Tensor | None = None,
                         centered: torch.Tensor | None = None) -> torch.Tensor:
        # frames: (B, T, 400) -> (B, T, S); gain (B, T, 1) float64: power gain of each frame (level normalisation);
        # centered: the frames after DC removal where the caller has them already.
        # float64 up to the power spectrum: a quiet bin in a loud frame is a near-cancelling sum, where float32 rounding
        # moved log-mel by up to 1e-2 (measured with the earlier matmul analysis, whose rounding also depended
        # on how many frames one call held).  Each frame is transformed on its own, so calls never matter.
        samples = self._centered(frames) if centered is None else centered
        a = self.config.preemphasis  # Kaldi: x[0] -= a * x[0]; x[t] -= a * x[t - 1]
        if samples.shape[1]:  # one Pad node in the graph (torch's own refuses no frames)
            samples = samples - a * nn.functional.pad(samples[..., :-1], (1, 0), mode="replicate")
        else:
            samples = samples - a * torch.cat([samples[..., :1], samples[..., :-1]], dim=-1)
        squares = SquaredSpectrum.apply(samples * self.window, self.fft_stage1, self.fft_twiddles,
                                         self.fft_stage2)
        if gain is not None:
            squares = squares * gain
        # power = re² + im² of each bin, then the filterbank: one matmul with each filter's row at both parts of
        # its bin.  A sum of non-negative terms, so float32 loses nothing here (the cancellation is in the FFT,
        # which stays float64) and reads half the bytes.
        power = squares.float() @ self.mel_banks[self.fft_bins]  # (B, T, num_mel_bins)
        log_mel = torch.log(torch.clamp(power, min=self.config.log_floor)).to(frames.dtype)
        if self.config.kind == "fbank":
            return log_mel
        ceps = log_mel @ self.dct  # (B, T, num_ceps)
        if self.config.use_energy:
            energy = frame_energy(frames)  # (B, T, 1), Kaldi's raw energy
            if gain is not None:
                energy = energy * gain
            log_energy = torch.log(torch.clamp(energy, min=self.config.log_floor)).to(frames.dtype)
            ceps = torch.cat([log_energy, ceps[..., 1:]], dim=-1)
        return ceps

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        # Checkpoints written before the FFT frontend hold the (400, 514) analysis matrix it replaced; the
        # FFT computes the same transform, so the matrix is dropped.
        state_dict.pop(prefix + "frame_transform", None)
        # the silence's features follow from the config (its log floor): a checkpoint's copy of them is replaced by
        # this frontend's, so weights started from another floor see silence as their floor makes it
        if prefix + "silence_features" in state_dict:
            state_dict[prefix + "silence_features"] = self.silence_features.clone()
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def _deltas(self, sequence: torch.Tensor) -> torch.Tensor:
        # sequence: (B, T + 2N, S) -> (B, T, S), the regression slope over each window of 2N+1 frames.
        # Shifted slices rather than conv1d: with T = 0 (a call that brings no new frame) they give an
        # empty result, where onnxruntime's Conv rejects an input shorter than its kernel.
        length = sequence.shape[1] - 2 * self.config.delta_window
        # Terms added one by one, not stacked and summed: see the note on ReduceSum above.
        terms = [w * sequence[:, j : j + length] for j, w in enumerate(self.delta_weights) if w]
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total

    def step(
        self, audio: torch.Tensor, audio_tail: torch.Tensor, feature_history: torch.Tensor,
        level_estimate: torch.Tensor | None = None,
    ):
        """Features of a hop-multiple piece of a stream.

        audio: (B, 160*m) float in [-1, 1]; non-finite samples count as 0 and values are clipped to [-1, 1].
        Returns features (B, m, F), new audio_tail (B, 240), new feature_history (B, H, S), and with level
        normalisation (config.level_target_dbfs) the new level_estimate (B, 6) as a fourth.
        """
        # x - x is 0 exactly when x is finite (NaN for NaN and +-Inf): 3 graph nodes where isfinite exported as 7
        audio = torch.where(audio - audio == 0, audio, torch.zeros((), dtype=audio.dtype)).clamp(-1.0, 1.0)
        buffer = torch.cat([audio_tail, audio], dim=1)  # (B, 240 + 160*m)
        # Frames gathered as blocks of 80 samples (the tail is 3 blocks, a hop 2, a window 5): frame i is blocks
        # 2i .. 2i + 4.  One Gather of 5m rows, 5x faster in onnxruntime than gathering 400m single samples.
        blocks = CopyReshape.apply(buffer, 0, -1, BLOCK_SAMPLES)  # (B, 3 + 2m, 80)
        starts = torch.arange(0, audio.shape[1] // BLOCK_SAMPLES, HOP_SAMPLES // BLOCK_SAMPLES, device=audio.device)
        block_index = starts[:, None] + torch.arange(WINDOW_SAMPLES // BLOCK_SAMPLES, device=audio.device)[None, :]
        frames = CopyReshape.apply(blocks[:, block_index], 0, -1, WINDOW_SAMPLES)  # (B, m, 5, 80) -> (B, m, 400)
        new_level = None
        if self.config.level_norm:
            if level_estimate is None:
                level_estimate = self.initial_level(audio.shape[0]).to(audio)
            centered = self._centered(frames)
            gain, new_level = self._level_gains(centered, level_estimate)
            static = self._static_features(frames, gain, centered)  # (B, m, S)
        else:
            static = self._static_features(frames)
        new_tail = buffer[:, -TAIL_SAMPLES:]

        order, window = self.config.delta_order, self.config.delta_window
        if order == 0:
            features, new_history = static, feature_history
        else:
            # history is stored relative to silence so that an all-zero state means "silence before the stream"
            sequence = torch.cat([feature_history + self.silence_features, static], dim=1)  # (B, H + m, S)
            parts, derived = [static], sequence
            for _ in range(order):
                derived = self._deltas(derived)  # loses 2N frames each time
                parts.append(derived[:, derived.shape[1] - static.shape[1] :])
            features = torch.cat(parts, dim=-1)
            new_history = sequence[:, sequence.shape[1] - 2 * window * order :] - self.silence_features
        features = (features - self.feature_mean) / self.feature_std
        if self.config.level_norm:
            return features, new_tail, new_history, new_level
        return features, new_tail, new_history

    def forward(self, audio: torch.Tensor) -> torch.Tensor:
        """One-shot features: audio (B, N) -> (B, ceil(N / 160), F); a final partial hop is zero-padded."""
        remainder = audio.shape[1] % HOP_SAMPLES
        if remainder:
            audio = nn.functional.pad(audio, (0, HOP_SAMPLES - remainder))
        tail, history = self.initial_state(audio.shape[0])
        tail, history = tail.to(audio), history.to(audio)
        if not self.config.level_norm:
            return self.step(audio, tail, history)[0]
        # in blocks: a call's sums are scaled by their decay to its last frame, e^(-0.01 frames / time constant) for
        # its first frame, which must stay far from float64's underflow (about 70,000 frames; the clients hand over 256)
        level, parts, block = self.initial_level(audio.shape[0]).to(audio), [], LEVEL_BLOCK_FRAMES * HOP_SAMPLES
        for start in range(0, max(audio.shape[1], 1), block):
            features, tail, history, level = self.step(audio[:, start:start + block], tail, history, level)
            parts.append(features)
        return torch.cat(parts, dim=1)
