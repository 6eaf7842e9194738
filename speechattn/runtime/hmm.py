"""HMM-GMM phone boundaries at 10 ms: the boundary stage of `align` for files.  numpy only.

The neural aligner (the kit's export/align.py) says which phones were spoken and roughly where; this stage moves
each boundary to where a hidden Markov model with Gaussian-mixture emissions over MFCC frames puts it, as the
aligners people trust for boundaries (HTK, Kaldi, MFA, pocketsphinx) draw them, helped by the neural posteriors
(a hybrid: each state's emission is its mixture's log-likelihood plus neural_weight x its phone's neural
log-posterior; the first model's HMM-GMM alone, weight 0, was level with it on real speech and 5 points behind
it within 20 ms on the synthetic voices' exact times).  The model is trained on this project's own speech and on
its synthetic voices, whose phone times are exact (speechattn/training/hmm.py, `speechattn train-hmm`); its
parameter file ships beside the bundled ONNX models (export/models/boundaries-hmm.npz).

Features: 13 MFCCs (c0 included) of a 25 ms Hamming window centred on each 10 ms frame (frame t's centre at
10 t + 5 ms, as the frame labels), their deltas and delta-deltas, mean and variance normalised per utterance (a
file: per block of about 20 s with 1.5 s of context each side): 39.  Topology: each phone STATES_PER_PHONE
left-to-right states, no skips (30 ms shortest phone, as the neural aligner's min_frames); silence one state (a
pause between words may be a frame); each state a diagonal-covariance mixture of K Gaussians and a self-loop
probability.  Context: a phone's first state may depend on the kind of sound before it and its last state on the
kind after it (CONTEXTS: silence, vowel, stop ...; the states tied by kind, not by phone, and where the training
data had too few frames of a context its phone's context-free state serves): state_of maps (phone, state, kind)
to a state.

Refinement: a forward-backward pass over the neural aligner's own sequence (its phones, its pauses; speech it put
outside the script stays where it is), each boundary free to move at most `band_frames` from where the neural
aligner put it, and placed where the posterior probability that the next phone has begun crosses one half, the
emissions scaled by `posterior_temperature` (0.1: flattened, so that a boundary the frames do not pin down stays
near the middle of what the paths allow; posterior_temperature 0 takes the best path, chain_viterbi, instead).
The pass runs piece by piece between pauses long enough that no boundary can cross their middle, state by state
(chain_entry_medians), over only the (frame, state) pairs the band allows; memory is bounded by the longest
stretch of speech without such a pause.

Shapes and names: T frames, D feature dims (39), S states, K Gaussians per state, N chain states of one piece.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SAMPLE_RATE = 16000  # Hz
HOP_SAMPLES = 160  # 10 ms
WINDOW_SAMPLES = 400  # 25 ms
FFT_SIZE = 512
MEL_BANDS = 26
MEL_LOW_HZ, MEL_HIGH_HZ = 20.0, 7600.0
CEPSTRA = 13
DELTA_WINDOW = 2  # frames each side of the regression
FEATURE_DIMS = 3 * CEPSTRA
STATES_PER_PHONE = 3
SILENCE = "sil"
FORMAT = "speechattn-hmm-gmm/2"  # the parameter file's "format" entry
FORMATS_READ = ("speechattn-hmm-gmm/1", FORMAT)  # /1: no state_of, every state context-free
# the kinds of sound a state's context is told by (bench/agreed_boundaries.py's kinds of boundary)
CONTEXTS = ("silence", "vowel", "stop", "affricate", "fricative", "nasal", "liquid/glide")
_KIND_OF = {phone: kind for kind, members in (
    ("stop", "P B T D K G"), ("affricate", "CH JH"), ("fricative", "F V TH DH S Z SH ZH HH"), ("nasal", "M N NG"),
    ("liquid/glide", "L R W Y")) for phone in members.split()}


def context_of(phone: str) -> int:
    """The index in CONTEXTS of a phone's kind of sound (vowels: the phones of no other kind)."""
    return 0 if phone == SILENCE else CONTEXTS.index(_KIND_OF.get(phone, "vowel"))
# refinement's settings, chosen on the real-speech dev sets and the synthetic voices together (docs/benchmarks.md,
# "HMM-GMM boundaries"): a boundary moves at most 40 ms; each state's emission is its mixture's log-likelihood +
# 3 x its phone's neural log-posterior.  With the model trained on the synthetic voices too, 40 ms and 3 x kept
# their exact times (97.5 % within 20 ms; 20 ms and 4 x: 97.5) and gained 0.8 of a point on real speech (88.0).
DEFAULT_BAND_FRAMES = 4
DEFAULT_NEURAL_WEIGHT = 3.0
# 0: each boundary where the best path puts it (chain_viterbi); above 0: where the posterior that the next phone has
# begun crosses one half, over every path the band allows, the emissions scaled by this (chain_entry_medians).
# Chosen on seed 1's synthetic jobs 2,000-2,299 and 141 utterances of the training speech (silver), within 20 ms:
# 0.1 98.28 / 87.38 %, 0.08 98.34 / 87.23, 0.15 98.19 / 87.11, 0.25 97.99 / 86.78, the best path 97.73 / 86.13
DEFAULT_POSTERIOR_TEMPERATURE = 0.1


# --- features ------------------------------------------------------------------------------------------------

def _mel_filterbank() -> np.ndarray:
    """(FFT_SIZE // 2 + 1, MEL_BANDS) triangular filters on the mel scale."""
    def mel(hz):
        return 1127.0 * np.log1p(np.asarray(hz) / 700.0)

    edges_mel = np.linspace(mel(MEL_LOW_HZ), mel(MEL_HIGH_HZ), MEL_BANDS + 2)
    bin_mel = mel(np.arange(FFT_SIZE // 2 + 1) * SAMPLE_RATE / FFT_SIZE)
    lower, centre, upper = edges_mel[:-2], edges_mel[1:-1], edges_mel[2:]
    rising = (bin_mel[:, None] - lower) / (centre - lower)
    falling = (upper - bin_mel[:, None]) / (upper - centre)
    return np.maximum(0.0, np.minimum(rising, falling))


_FILTERS = _mel_filterbank()
_WINDOW = np.hamming(WINDOW_SAMPLES)
_DCT = np.sqrt(2.0 / MEL_BANDS) * np.cos(np.pi / MEL_BANDS * (np.arange(MEL_BANDS)[:, None] + 0.5)
                                         * np.arange(CEPSTRA))  # (MEL_BANDS, CEPSTRA), DCT-II


def cepstra(audio: np.ndarray, frames: int | None = None) -> np.ndarray:
    """(frames, CEPSTRA) MFCCs of 16 kHz mono audio; frames defaults to len(audio) // HOP_SAMPLES."""
    audio = np.asarray(audio, dtype=np.float64).reshape(-1)
    frames = len(audio) // HOP_SAMPLES if frames is None else frames
    if frames <= 0:
        return np.zeros((0, CEPSTRA), dtype=np.float32)
    emphasised = np.append(audio[:1], audio[1:] - 0.97 * audio[:-1]) if len(audio) else audio
    # frame t's window: samples [160 t + 80 - 200, 160 t + 80 + 200), zero outside the recording
    left = WINDOW_SAMPLES // 2 - HOP_SAMPLES // 2
    needed = (frames - 1) * HOP_SAMPLES + WINDOW_SAMPLES
    padded = np.zeros(needed)
    piece = emphasised[:needed - left]
    padded[left:left + len(piece)] = piece
    windows = np.lib.stride_tricks.sliding_window_view(padded, WINDOW_SAMPLES)[::HOP_SAMPLES][:frames]
    power = np.abs(np.fft.rfft(windows * _WINDOW, FFT_SIZE)) ** 2  # (T, FFT_SIZE // 2 + 1)
    energies = power @ _FILTERS
    floor = max(float(energies.mean()) * 1e-6, 1e-10)  # silence's digital zeros and the empty bands of 8 kHz audio
    return (np.log(np.maximum(energies, floor)) @ _DCT).astype(np.float32)


def deltas(x: np.ndarray) -> np.ndarray:
    """(T, C) regression over ±DELTA_WINDOW frames, the edges repeated."""
    n = DELTA_WINDOW
    padded = np.pad(x, ((n, n), (0, 0)), mode="edge")
    T = len(x)
    return sum(k * (padded[n + k:n + k + T] - padded[n - k:n - k + T]) for k in range(1, n + 1)) / (
        2 * sum(k * k for k in range(1, n + 1)))


def features(audio: np.ndarray, frames: int | None = None) -> np.ndarray:
    """(T, FEATURE_DIMS) float32: MFCCs, deltas, delta-deltas, normalised per utterance."""
    c = cepstra(audio, frames)
    d = deltas(c)
    x = np.concatenate([c, d, deltas(d)], axis=1)
    if len(x):
        x = (x - x.mean(axis=0)) / np.maximum(x.std(axis=0), 1e-3)
    return x.astype(np.float32)


# --- the model -----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class HmmGmm:
    phones: tuple[str, ...]  # the phones, SILENCE among them
    state_of: np.ndarray  # (P, STATES_PER_PHONE, len(CONTEXTS)) int: phone p's k-th state beside kind c (the kind
    # before it for its first state, after it for its last; the others, and silence's, the same in every context)
    state_count: np.ndarray  # (P,) int
    means: np.ndarray  # (S, K, D) float32
    variances: np.ndarray  # (S, K, D)
    log_weights: np.ndarray  # (S, K)
    log_stay: np.ndarray  # (S,) log self-loop probability
    band_frames: int = DEFAULT_BAND_FRAMES  # refinement: how far a boundary may move
    neural_weight: float = DEFAULT_NEURAL_WEIGHT  # refinement: the neural log-posterior's weight in each emission
    posterior_temperature: float = DEFAULT_POSTERIOR_TEMPERATURE  # refinement: 0 the best path, else posteriors
    info: dict = dataclasses.field(default_factory=dict)  # how it was trained (data, rounds, likelihoods)

    @classmethod
    def layout(cls, phones) -> tuple[np.ndarray, np.ndarray]:
        """(state_of, state_count) with no context: each phone's states consecutive, the same in every context."""
        counts = np.array([1 if p == SILENCE else STATES_PER_PHONE for p in phones], dtype=np.int64)
        first = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        k = np.minimum(np.arange(STATES_PER_PHONE)[None, :], counts[:, None] - 1)  # (P, STATES_PER_PHONE)
        state_of = np.repeat((first[:, None] + k)[:, :, None], len(CONTEXTS), axis=2)
        return state_of, counts

    @property
    def states(self) -> int:
        return len(self.means)

    @property
    def phone_of_state(self) -> np.ndarray:
        """(S,) each state's phone."""
        out = np.zeros(self.states, dtype=np.int64)
        for p in range(len(self.phones)):
            out[self.state_of[p].reshape(-1)] = p
        return out

    def chain_state(self, p: int, k: int, left: int, right: int) -> int:
        """Phone p's k-th state between kinds left and right (CONTEXTS indices)."""
        return int(self.state_of[p, k, left if k == 0 else right])

    def index(self, phone: str) -> int:
        return self.phones.index(phone)

    def log_likelihoods(self, x: np.ndarray, states: np.ndarray | None = None) -> np.ndarray:
        """(T, len(states)) log p(frame | state), states default all."""
        states = np.arange(self.states) if states is None else np.asarray(states)
        mu, var, lw = self.means[states], self.variances[states], self.log_weights[states]  # (U, K, D)
        U, K, D = mu.shape
        precision = 1.0 / var
        const = lw - 0.5 * (D * np.log(2 * np.pi) + np.log(var).sum(-1) + (mu * mu * precision).sum(-1))  # (U, K)
        x = np.asarray(x, dtype=np.float32)
        linear = x @ (mu * precision).reshape(U * K, D).T  # (T, U K)
        quadratic = (x * x) @ (-0.5 * precision).reshape(U * K, D).T
        per_gaussian = (linear + quadratic).reshape(len(x), U, K) + const
        top = per_gaussian.max(-1)
        return top + np.log(np.exp(per_gaussian - top[..., None]).sum(-1))

    def pair_log_likelihoods(self, x: np.ndarray, frames: np.ndarray, states: np.ndarray) -> np.ndarray:
        """(n,) log p(x[frames[i]] | states[i]): only the pairs a band allows, not every state at every frame."""
        constants, scaled_means, half_precisions = self._pair_terms()
        xf = x[frames]  # (n, D)
        per_gaussian = constants[states] + np.einsum("nd,nkd->nk", xf, scaled_means[states]) \
            - np.einsum("nd,nkd->nk", xf * xf, half_precisions[states])  # (n, K)
        top = per_gaussian.max(-1)
        return top + np.log(np.exp(per_gaussian - top[:, None]).sum(-1))

    def _pair_terms(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(S, K) log weight - log normaliser - mean' precision mean / 2, (S, K, D) mean x precision, precision / 2:
        computed once."""
        cached = self.__dict__.get("_pair_cache")
        if cached is None:
            D, precision = self.means.shape[-1], 1.0 / self.variances
            constants = self.log_weights - 0.5 * (D * np.log(2 * np.pi) + np.log(self.variances).sum(-1)
                                                  + (self.means ** 2 * precision).sum(-1))
            cached = (constants.astype(np.float32), (self.means * precision).astype(np.float32),
                      (0.5 * precision).astype(np.float32))
            object.__setattr__(self, "_pair_cache", cached)
        return cached

    # the parameter file: one .npz, arrays plus a JSON header ("format", phones, info)
    def save(self, path: Path) -> None:
        from speechattn.files import atomic_write_bytes

        header = {"format": FORMAT, "phones": list(self.phones), "states_per_phone": STATES_PER_PHONE,
                  "contexts": list(CONTEXTS), "feature_dims": FEATURE_DIMS, "band_frames": self.band_frames,
                  "neural_weight": self.neural_weight, "posterior_temperature": self.posterior_temperature,
                  "info": self.info}
        buffer = io.BytesIO()
        np.savez_compressed(buffer, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
                            means=self.means.astype(np.float32), variances=self.variances.astype(np.float32),
                            log_weights=self.log_weights.astype(np.float32),
                            log_stay=self.log_stay.astype(np.float32), state_of=self.state_of.astype(np.int16))
        atomic_write_bytes(path, buffer.getvalue())

    @classmethod
    def load(cls, path: Path) -> HmmGmm:
        path = Path(path)
        try:
            with np.load(path) as f:
                header = json.loads(bytes(f["header"]).decode())
                if not isinstance(header, dict) or header.get("format") not in FORMATS_READ:
                    found = header.get("format") if isinstance(header, dict) else None
                    raise ValueError(f"{path}: format {found!r}, expected {FORMAT!r}")
                arrays = {k: f[k] for k in ("means", "variances", "log_weights", "log_stay")}
                if header["format"] != FORMATS_READ[0]:
                    arrays["state_of"] = f["state_of"].astype(np.int64)
        except ValueError as error:
            if str(error).startswith(f"{path}: format"):
                raise
            raise ValueError(f"{path}: not an HMM-GMM parameter file ({type(error).__name__})") from None
        except (OSError, KeyError, EOFError) as error:
            raise ValueError(f"{path}: not an HMM-GMM parameter file ({type(error).__name__})") from None
        phones = tuple(header["phones"])
        state_of, counts = cls.layout(phones)
        state_of = arrays.get("state_of", state_of)
        mu = arrays["means"]
        S = len(mu)
        if mu.ndim != 3 or mu.shape[2] != FEATURE_DIMS or arrays["variances"].shape != mu.shape \
                or arrays["log_weights"].shape != mu.shape[:2] or arrays["log_stay"].shape != (S,) \
                or state_of.shape != (len(phones), STATES_PER_PHONE, len(CONTEXTS)) or not 0 <= state_of.min() \
                or state_of.max() >= S:
            raise ValueError(f"{path}: array shapes do not fit {len(phones)} phones of {FEATURE_DIMS} dims")
        return cls(phones, state_of, counts, mu, arrays["variances"], arrays["log_weights"], arrays["log_stay"],
                   band_frames=int(header.get("band_frames", DEFAULT_BAND_FRAMES)),
                   neural_weight=float(header.get("neural_weight", DEFAULT_NEURAL_WEIGHT)),
                   posterior_temperature=float(header.get("posterior_temperature", DEFAULT_POSTERIOR_TEMPERATURE)),
                   info=header.get("info", {}))


BUNDLED_FILE = "boundaries-hmm.npz"  # beside the bundled ONNX models (export/models/)


def bundled_path() -> Path:
    from speechattn_export.registry import MODELS_DIR

    return MODELS_DIR / BUNDLED_FILE


@functools.lru_cache(maxsize=1)
def bundled() -> HmmGmm:
    """The bundled boundary model (`speechattn train-hmm`, export/models/README.md)."""
    return HmmGmm.load(bundled_path())


# --- Viterbi over a chain of states, each frame limited to a range of it --------------------------------------

def chain_viterbi(emissions: np.ndarray, stay: np.ndarray, windows: np.ndarray) -> np.ndarray:
    """The best path through a left-to-right chain of N states (each frame: stay, or move one state on), from its
    first state at frame 0 to its last at frame T-1 (T: the last window's end).  windows: (N, 2) the frames [a, b)
    each state may hold; emissions: state j's log-likelihoods over its window, the windows one after another
    (sum of b - a values); stay: (N,) log self-loop probabilities.  Returns (T,) states, or raises ValueError where
    no path fits the windows.

    Solved state by state, not frame by frame (a chain has a third as many states as frames): with c = stay[j],
    delta_j(t) = max(delta_j(t-1) + c, enter_j(t)) + e_j(t) is, with the prefix sums P(t) = sum_{r<=t} (c + e_j(r)),
    P(t) + max_{s<=t} (enter_j(s) + e_j(s) - P(s)): one running maximum; its argmax is where the path entered j."""
    N, T = len(windows), int(windows[-1, 1])
    move = np.log1p(-np.exp(np.minimum(stay, -1e-6)))
    emissions = np.asarray(emissions, dtype=np.float64)
    counting = np.arange(T + 1)
    entered, previous, previous_a, offset = [], None, 0, 0
    for j in range(N):
        a, b = int(windows[j, 0]), int(windows[j, 1])
        if b <= a:
            raise ValueError("no path through the chain fits the frames")
        e = emissions[offset:offset + b - a]
        offset += b - a
        enter = np.full(b - a, -np.inf)
        if j == 0:
            if a == 0:
                enter[0] = 0.0
        else:  # enter j at frame s from j-1 at frame s-1: previous's frames [previous_a, previous_a + len)
            first, last = max(a, previous_a + 1), min(b, previous_a + len(previous) + 1)
            if last > first:
                enter[first - a:last - a] = previous[first - 1 - previous_a:last - 1 - previous_a] + move[j - 1]
        prefix = np.cumsum(stay[j] + e)
        value = enter + e - prefix
        best = np.maximum.accumulate(value)
        entered.append((a, np.maximum.accumulate(np.where(value == best, counting[:b - a], 0))))
        previous, previous_a = prefix + best, a
    if not previous_a <= T - 1 < previous_a + len(previous) or not np.isfinite(previous[T - 1 - previous_a]):
        raise ValueError("no path through the chain fits the frames")
    path = np.empty(T, dtype=np.int64)
    t = T - 1
    for j in range(N - 1, -1, -1):
        a, arg = entered[j]
        s = a + int(arg[t - a])
        path[s:t + 1] = j
        t = s - 1
    return path


def chain_entry_medians(emissions: np.ndarray, stay: np.ndarray, windows: np.ndarray,
                        wanted: np.ndarray | None = None) -> np.ndarray:
    """For each state j of the chain chain_viterbi walks (the same emissions, stay and windows): the first frame by
    which the path has entered j with posterior probability one half or more, over every path the windows allow (a
    forward-backward pass, where chain_viterbi keeps the one best path).  Returns (N,) frames, the first state's 0;
    wanted: (N,) bool, the states to find it for (the others 0; default all).  Raises ValueError where no path fits
    the windows.

    Solved state by state as chain_viterbi is, with a log-sum where it takes a maximum (P: the prefix sums of stay[j]
    + e_j over j's window): alpha_j(t) = P(t) + logsumexp_{s<=t} (enter_j(s) + e_j(s) - P(s)) and beta_j(t) = -P(t)
    + logsumexp_{u>=t} (P(u) + leave_j(u)); j is entered at s with probability exp(enter_j(s) + e_j(s) + beta_j(s)
    - log Z)."""
    N, T = len(windows), int(windows[-1, 1])
    move = np.log1p(-np.exp(np.minimum(stay, -1e-6)))
    emissions = np.asarray(emissions, dtype=np.float64)
    offsets = np.concatenate([[0], np.cumsum(windows[:, 1] - windows[:, 0])])
    wanted = np.ones(N, dtype=bool) if wanted is None else np.asarray(wanted, dtype=bool)
    entering, prefixes, alpha, alpha_a = [], [], None, 0  # entering: enter_j + e_j over j's window
    for j in range(N):
        a, b = int(windows[j, 0]), int(windows[j, 1])
        if b <= a:
            raise ValueError("no path through the chain fits the frames")
        e = emissions[offsets[j]:offsets[j + 1]]
        enter = np.full(b - a, -np.inf)
        if j == 0:
            if a == 0:
                enter[0] = 0.0
        else:  # enter j at frame s from j-1 at frame s-1
            first, last = max(a, alpha_a + 1), min(b, alpha_a + len(alpha) + 1)
            if last > first:
                enter[first - a:last - a] = alpha[first - 1 - alpha_a:last - 1 - alpha_a] + move[j - 1]
        prefix = np.cumsum(stay[j] + e)
        enter += e
        entering.append(enter)
        prefixes.append(prefix)
        alpha, alpha_a = prefix + np.logaddexp.accumulate(enter - prefix), a
    if not alpha_a <= T - 1 < alpha_a + len(alpha) or not np.isfinite(alpha[T - 1 - alpha_a]):
        raise ValueError("no path through the chain fits the frames")
    log_z = alpha[T - 1 - alpha_a]
    medians = np.zeros(N, dtype=np.int64)
    after, after_a = None, 0  # state j+1's e + beta over its window
    for j in range(N - 1, -1, -1):
        a, b = int(windows[j, 0]), int(windows[j, 1])
        leave = np.full(b - a, -np.inf)
        if j == N - 1:
            leave[T - 1 - a] = 0.0
        else:  # leave j at frame u for j+1 at frame u+1
            first, last = max(a, after_a - 1), min(b, after_a + len(after) - 1)
            if last > first:
                leave[first - a:last - a] = after[first + 1 - after_a:last + 1 - after_a] + move[j]
        prefix = prefixes[j]
        beta = np.logaddexp.accumulate((prefix + leave)[::-1])[::-1] - prefix
        if j > 0 and wanted[j]:
            reached = np.cumsum(np.exp(np.minimum(entering[j] + beta - log_z, 0.0)))
            medians[j] = a + min(int(np.searchsorted(reached, 0.5 * reached[-1])), b - a - 1)
        after, after_a = emissions[offsets[j]:offsets[j + 1]] + beta, a
    return medians


def segment_chain(model: HmmGmm, phones: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(chain states, the segment of each chain position) of a phone sequence, each phone's first and last states
    those of its neighbours' kinds (silence beyond the ends)."""
    kinds = [0] + [context_of(p) for p in phones] + [0]
    states, segment = [], []
    for i, phone in enumerate(phones):
        p = model.index(phone)
        for k in range(int(model.state_count[p])):
            states.append(model.chain_state(p, k, kinds[i], kinds[i + 2]))
            segment.append(i)
    return np.asarray(states, dtype=np.int64), np.asarray(segment, dtype=np.int64)


def chain_emissions(model: HmmGmm, x: np.ndarray, segments: list[tuple[str, int, int]], band_frames: int,
                    neural=None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The chain of consecutive (phone, start, end) segments over frames [segments[0].start, segments[-1].end) of
    features x, each boundary at most band_frames from where it is: (states (N,), the segment of each (N,), windows
    (N, 2) in frames from the first segment's start, emissions of each window's frames, state by state).  neural:
    (log_probs (T, P'), their phones, weight): each state's emission gains weight x its phone's neural
    log-posterior (a hybrid)."""
    t0, t1 = segments[0][1], segments[-1][2]
    states, segment_of = segment_chain(model, [s[0] for s in segments])
    # each state may hold the frames of its segment's band: at most band_frames beyond its neural edges
    starts = np.array([s[1] for s in segments])[segment_of] - t0
    ends = np.array([s[2] for s in segments])[segment_of] - t0
    T = t1 - t0
    windows = np.stack([np.clip(starts - band_frames, 0, T), np.clip(ends + band_frames, 0, T)], axis=1)
    lengths = windows[:, 1] - windows[:, 0]
    pair_state = np.repeat(states, lengths)  # every (frame, state) pair a window holds, state by state
    pair_frame = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths - windows[:, 0], lengths)
    emissions = model.pair_log_likelihoods(x[t0:t1], pair_frame, pair_state)
    if neural is not None:
        log_probs, neural_phones, weight = neural
        column = np.array([neural_phones.index(p) for p in model.phones])[model.phone_of_state]
        emissions = emissions + weight * np.asarray(log_probs[t0:t1], dtype=np.float32)[pair_frame,
                                                                                       column[pair_state]]
    return states, segment_of, windows, emissions


def align_segments(model: HmmGmm, x: np.ndarray, segments: list[tuple[str, int, int]], band_frames: int,
                   neural=None) -> tuple[list[tuple[str, int, int]], float, np.ndarray]:
    """Re-align consecutive (phone, start, end) segments covering frames [segments[0].start, segments[-1].end) of
    features x by the best path, each boundary at most band_frames from where it was (neural: chain_emissions').
    Returns the new segments, the path's log-likelihood and its (T,) states (the model's, one a frame)."""
    t0, t1 = segments[0][1], segments[-1][2]
    phones = [s[0] for s in segments]
    states, segment_of, windows, emissions = chain_emissions(model, x, segments, band_frames, neural)
    lengths = windows[:, 1] - windows[:, 0]
    path = chain_viterbi(emissions, model.log_stay[states], windows)
    T = t1 - t0
    frames = np.arange(T)
    score = float(emissions[(np.cumsum(lengths) - lengths)[path] + frames - windows[path, 0]].sum())
    seg_path = segment_of[path]
    change = np.flatnonzero(np.diff(seg_path)) + 1
    bounds = np.concatenate([[0], change, [T]]) + t0
    out = [(phones[i], int(a), int(b)) for i, a, b in zip(seg_path[np.concatenate([[0], change])], bounds[:-1],
                                                          bounds[1:])]
    return out, score, states[path]


def posterior_segments(model: HmmGmm, x: np.ndarray, segments: list[tuple[str, int, int]], band_frames: int,
                       neural=None, temperature: float = 1.0) -> list[tuple[str, int, int]]:
    """The same segments, each boundary where the posterior probability that the next segment has begun crosses
    one half (chain_entry_medians), the emissions scaled by temperature.  Every path enters a state a frame or more
    after the state before it, so the medians do too, and each segment keeps a frame a state; ValueError where no
    path fits (or rounding broke that)."""
    t0, t1 = segments[0][1], segments[-1][2]
    states, segment_of, windows, emissions = chain_emissions(model, x, segments, band_frames, neural)
    firsts = np.flatnonzero(np.diff(segment_of)) + 1  # each segment's first state but the first segment's
    medians = chain_entry_medians(temperature * emissions, model.log_stay[states], windows,
                                  np.isin(np.arange(len(states)), firsts))
    bounds = np.concatenate([[0], medians[firsts], [t1 - t0]])
    if (np.diff(bounds) <= 0).any():
        raise ValueError("a segment lost its frames")
    return [(s[0], t0 + int(a), t0 + int(b)) for s, a, b in zip(segments, bounds[:-1], bounds[1:])]


def pieces(segments: list[tuple[str, int, int]], band_frames: int) -> list[list[tuple[str, int, int]]]:
    """Split a segment sequence in the middle of each pause longer than 2 band_frames + 2 frames (no boundary can
    cross its middle), so each piece is aligned on its own."""
    out, current = [], []
    for phone, start, end in segments:
        if phone == SILENCE and end - start > 2 * band_frames + 2 and current:
            middle = (start + end) // 2
            out.append(current + [(phone, start, middle)])
            current = [(phone, middle, end)]
        else:
            current.append((phone, start, end))
    if current:
        out.append(current)
    return out


# --- refining the neural aligner's alignment ------------------------------------------------------------------

FIXED = "<fixed>"  # a span the refinement leaves where it is (speech outside the script)
BLOCK_FRAMES = 2000  # pieces are refined in blocks of about 20 s, their features computed and normalised together
CONTEXT_FRAMES = 150  # with 1.5 s of audio each side


def refine(model: HmmGmm, audio, alignment, log_probs=None, phones=None, on_frames=None):
    """The kit's Alignment with each phone's and pause's edges where the HMM-GMM puts them, each within the
    model's band_frames of the neural aligner's; phones, words, scores and confidences unchanged.
    audio: 16 kHz samples, an array or a function (first sample, end sample) -> samples; log_probs: the neural
    model's (T, P) log-posteriors in `phones` order, an array or a function (first frame, end frame) -> array (the
    hybrid's term, weighted by the model's neural_weight; without them the HMM-GMM alone).  on_frames(n): n more
    of the alignment's frames done (a progress bar's)."""
    samples = audio if callable(audio) else (lambda a, b: audio[a:b])
    posteriors = log_probs if log_probs is None or callable(log_probs) else (lambda a, b: log_probs[a:b])
    T, band = alignment.frames, model.band_frames
    filled = _segments(alignment)
    moved, done = {}, 0  # (phone, old start) -> (new start, new end); frames done
    for block in _blocks([part for piece in _between_fixed(filled) if piece[0][0] != FIXED
                          for part in pieces(_merged_silence(piece), band)]):
        a, b = max(0, block[0][0][1] - CONTEXT_FRAMES), min(T, block[-1][-1][2] + CONTEXT_FRAMES)
        x = features(samples(a * HOP_SAMPLES, b * HOP_SAMPLES + WINDOW_SAMPLES), b - a)
        neural = None
        if posteriors is not None and model.neural_weight:
            neural = (posteriors(a, b), tuple(phones), model.neural_weight)
        for part in block:
            local = [(phone, start - a, end - a) for phone, start, end in part]
            try:
                new = posterior_segments(model, x, local, band, neural, model.posterior_temperature) \
                    if model.posterior_temperature > 0 else align_segments(model, x, local, band, neural)[0]
            except ValueError:  # no path fits (a piece too short for its phones): keep the neural boundaries
                new = local
            for (phone, start, _), (_, first, end) in zip(part, new):
                moved[(phone, start)] = (first + a, end + a)
        if on_frames is not None and b > done:
            on_frames(b - done)
            done = b
    if on_frames is not None and T > done:
        on_frames(T - done)
    return _moved_alignment(alignment, moved)


def _segments(alignment) -> list[tuple[str, int, int]]:
    """(phone, start, end) covering every frame: the phones, silence, and FIXED for speech outside the script."""
    spans = [(p.phone, p.start_frame, p.end_frame) for w in alignment.words for p in w.phones]
    spans += [(SILENCE, a, b) for a, b in alignment.silences] + [(FIXED, a, b) for a, b in alignment.unscripted]
    spans = sorted((s for s in spans if s[2] > s[1]), key=lambda s: (s[1], s[2]))
    filled, at = [], 0
    for phone, start, end in spans:  # frames no span holds are silence
        if start > at:
            filled.append((SILENCE, at, start))
        if end > at:
            filled.append((phone, max(start, at), end))
        at = max(at, end)
    if at < alignment.frames:
        filled.append((SILENCE, at, alignment.frames))
    return filled


def _blocks(parts):
    out, current = [], []
    for part in parts:
        if current and part[-1][2] - current[0][0][1] > BLOCK_FRAMES:
            out.append(current)
            current = []
        current.append(part)
    return out + [current] if current else out


def _between_fixed(segments):
    out, current = [], []
    for s in segments:
        if s[0] == FIXED:
            if current:
                out.append(current)
            out.append([s])
            current = []
        else:
            current.append(s)
    if current:
        out.append(current)
    return out


def _merged_silence(segments):
    out = []
    for s in segments:
        if out and s[0] == SILENCE and out[-1][0] == SILENCE:
            out[-1] = (SILENCE, out[-1][1], s[2])
        else:
            out.append(s)
    return out


def _moved_alignment(alignment, moved: dict):
    words = []
    for w in alignment.words:
        phones = tuple(dataclasses.replace(p, start_frame=a, end_frame=b) for p in w.phones
                       for a, b in [moved.get((p.phone, p.start_frame), (p.start_frame, p.end_frame))])
        words.append(dataclasses.replace(w, phones=phones, start_frame=phones[0].start_frame,
                                         end_frame=phones[-1].end_frame) if phones else w)
    # silence: every frame neither a word's nor speech outside the script
    taken = np.zeros(alignment.frames + 1, dtype=bool)
    taken[-1] = True
    for a, b in [(p.start_frame, p.end_frame) for w in words for p in w.phones] + list(alignment.unscripted):
        taken[a:b] = True
    edges = np.flatnonzero(np.diff(np.concatenate([[True], taken]).astype(np.int8)))
    silences = [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2])]
    return dataclasses.replace(alignment, words=words, silences=silences)
