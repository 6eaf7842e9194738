"""Training the HMM-GMM boundary model (speechattn/runtime/hmm.py) by embedded Viterbi re-estimation.  numpy only.

    speechattn train-hmm data/ljspeech/ljspeech_supervisions_train.jsonl.gz \
        data/speechocean762/speechocean762_supervisions_train.jsonl.gz -o export/models/boundaries-hmm.npz

Start: each utterance's phone sequence and boundaries from its prepared frame labels (pocketsphinx's silver
alignment, `speechattn prepare`); each phone's frames cut in thirds for its three states, a pause one state.
Each state's mixture grows by splitting (1, 2, 4 ... `gaussians`), a few EM iterations at each size.  Then
`rounds` of embedded re-estimation: every utterance re-aligned by Viterbi over its own phone sequence with the
current model (each boundary free to move `band_frames` a round), the mixtures and self-loops re-estimated from
the new state occupancy.  The path log-likelihood per frame is logged each round; hard EM does not lower it.

Shapes: T frames, D feature dims, K Gaussians, n frames of one state.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass

import numpy as np

from speechattn.runtime.hmm import SILENCE, HmmGmm, align_segments, features, pieces

log = logging.getLogger(__name__)

VARIANCE_FLOOR = 1e-2  # features are normalised per utterance (variance 1)


@dataclass(frozen=True)
class HmmTrainConfig:
    gaussians: int = 8  # per state, a power of two
    rounds: int = 4  # of embedded re-estimation
    band_frames: int = 10  # how far a boundary may move in one round
    em_iterations: int = 3  # per mixture size and per round
    max_frames_per_state: int = 20_000  # a state's frames sampled for its mixture's EM
    seed: int = 0


@dataclass
class Utterance:
    x: np.ndarray  # (T, D) features
    segments: list[tuple[str, int, int]]  # (phone, start, end) covering [0, T)


def segments_from_labels(labels: np.ndarray, phones) -> list[tuple[str, int, int]] | None:
    """(phone, start, end) runs of frame labels; None where a frame is unlabelled (IGNORE)."""
    labels = np.asarray(labels)
    if len(labels) == 0 or (labels < 0).any():
        return None
    change = np.flatnonzero(np.diff(labels)) + 1
    starts, ends = np.concatenate([[0], change]), np.concatenate([change, [len(labels)]])
    return [(phones[int(labels[a])], int(a), int(b)) for a, b in zip(starts, ends)]


def state_labels(model_layout: tuple[np.ndarray, np.ndarray], phones, segments) -> np.ndarray:
    """(T,) each frame's state, each phone's frames cut evenly among its states."""
    first, counts = model_layout
    out = []
    for phone, start, end in segments:
        p = phones.index(phone)
        n = end - start
        out.append(first[p] + np.minimum((np.arange(n) * counts[p]) // max(n, 1), counts[p] - 1))
    return np.concatenate(out).astype(np.int64)


def gaussian_log_probs(x, means, variances, log_weights) -> np.ndarray:
    """(n, K) log weight + log N(x | mean, diag variance)."""
    precision = 1.0 / variances
    const = log_weights - 0.5 * (x.shape[1] * np.log(2 * np.pi) + np.log(variances).sum(-1)
                                 + (means * means * precision).sum(-1))
    return const + x @ (means * precision).T - 0.5 * (x * x) @ precision.T


def em(x, means, variances, log_weights, iterations: int):
    """EM on one state's frames; returns the mixture and the mean log-likelihood per frame before the last step."""
    score = -np.inf
    for _ in range(iterations):
        logp = gaussian_log_probs(x, means, variances, log_weights)  # (n, K)
        top = logp.max(1, keepdims=True)
        total = top + np.log(np.exp(logp - top).sum(1, keepdims=True))
        score = float(total.mean())
        r = np.exp(logp - total)  # (n, K) responsibilities
        mass = r.sum(0) + 1e-6
        means = (r.T @ x) / mass[:, None]
        variances = np.maximum((r.T @ (x * x)) / mass[:, None] - means ** 2, VARIANCE_FLOOR)
        log_weights = np.log(np.maximum(mass / mass.sum(), 1e-5))
    return means, variances, log_weights, score


def split(means, variances, log_weights):
    """Each Gaussian in two, the means 0.2 standard deviations apart."""
    offset = 0.2 * np.sqrt(variances)
    return (np.concatenate([means - offset, means + offset]), np.concatenate([variances, variances]),
            np.concatenate([log_weights, log_weights]) - np.log(2))


def fit_states(x_all, states_all, S: int, config: HmmTrainConfig, previous: HmmGmm | None, rng):
    """Every state's mixture from its frames: grown from one Gaussian, or a few EM steps from `previous`."""
    K, D = config.gaussians, x_all.shape[1]
    means = np.zeros((S, K, D), np.float32)
    variances = np.ones((S, K, D), np.float32)
    log_weights = np.full((S, K), -np.log(K), np.float32)
    order = np.argsort(states_all, kind="stable")
    bounds = np.searchsorted(states_all[order], np.arange(S + 1))
    for s in range(S):
        frames = order[bounds[s]:bounds[s + 1]]
        if len(frames) > config.max_frames_per_state:
            frames = rng.choice(frames, config.max_frames_per_state, replace=False)
        x = x_all[frames].astype(np.float64)
        if len(x) < 2 * K:
            if previous is not None:
                means[s], variances[s], log_weights[s] = (previous.means[s], previous.variances[s],
                                                          previous.log_weights[s])
            continue  # too few frames: the mixture stays as it was (or standard normal)
        if previous is not None:
            m, v, w, _ = em(x, previous.means[s], previous.variances[s], previous.log_weights[s],
                            config.em_iterations)
        else:
            m, v = x.mean(0, keepdims=True), np.maximum(x.var(0, keepdims=True), VARIANCE_FLOOR)
            w = np.zeros(1)
            while len(m) < K:
                m, v, w = split(m, v, w)
                m, v, w, _ = em(x, m, v, w, config.em_iterations)
        means[s], variances[s], log_weights[s] = m, v, w
    return means, variances, log_weights


def self_loops(states_all: np.ndarray, utterance_ends: np.ndarray, S: int) -> np.ndarray:
    """(S,) log self-loop probability from state occupancy: 1 - visits / frames."""
    frames = np.bincount(states_all, minlength=S).astype(np.float64)
    starts = np.ones(len(states_all), dtype=bool)
    starts[1:] = states_all[1:] != states_all[:-1]
    starts[utterance_ends[:-1]] = True
    visits = np.bincount(states_all[starts], minlength=S).astype(np.float64)
    stay = np.clip((frames - visits + 1) / (frames + 2), 0.05, 0.98)
    return np.log(stay).astype(np.float32)


def realign(model: HmmGmm, utterances: list[Utterance], band_frames: int) -> float:
    """Each utterance's segments re-aligned in place; returns the emission log-likelihood per frame of the paths."""
    total, frames = 0.0, 0
    for u in utterances:
        new_segments = []
        for part in pieces(u.segments, band_frames):
            try:
                new, score = align_segments(model, u.x, part, band_frames)
            except ValueError:  # no path fits the band: this piece keeps its boundaries, uncounted
                new_segments += part
                continue
            new_segments += new
            total += score
            frames += part[-1][2] - part[0][1]
        u.segments = merged(new_segments)
    return total / max(frames, 1)


def merged(segments):
    out = []
    for s in segments:
        if out and s[0] == out[-1][0] == SILENCE:
            out[-1] = (SILENCE, out[-1][1], s[2])
        else:
            out.append(s)
    return out


def train(utterances: list[Utterance], phones, config: HmmTrainConfig = HmmTrainConfig(),
          data_note: str = "") -> HmmGmm:
    if config.gaussians < 1 or config.gaussians & (config.gaussians - 1):
        raise ValueError(f"gaussians must be a power of two, not {config.gaussians}")
    if not utterances:
        raise ValueError("no utterances to train on")
    rng = np.random.default_rng(config.seed)
    phones = tuple(phones)
    layout = HmmGmm.layout(phones)
    S = int(layout[1].sum())
    x_all = np.concatenate([u.x for u in utterances])
    ends = np.cumsum([len(u.x) for u in utterances])
    model, scores, started = None, [], time.monotonic()
    for round_ in range(config.rounds + 1):
        states_all = np.concatenate([state_labels(layout, phones, u.segments) for u in utterances])
        means, variances, log_weights = fit_states(x_all, states_all, S, config, model, rng)
        model = HmmGmm(phones, *layout, means, variances, log_weights, self_loops(states_all, ends, S))
        if round_ < config.rounds:
            scores.append(realign(model, utterances, config.band_frames))
            log.info("round %d: path log-likelihood %.3f per frame (%.0f s)", round_ + 1, scores[-1],
                     time.monotonic() - started)
    info = {"config": asdict(config), "utterances": len(utterances), "frames": int(len(x_all)),
            "path_log_likelihood_per_round": [round(s, 4) for s in scores], "data": data_note}
    return HmmGmm(phones, *layout, means, variances, log_weights, model.log_stay, info=info)


def utterances_from_manifests(manifests, phones, limit: int | None = None) -> list[Utterance]:
    """Features and silver phone segments of each prepared utterance (first `limit` of each manifest)."""
    from speechattn.data.dataset import cuts_from_manifests
    from speechattn.data.manifests import recordings_beside
    from speechattn.training.evaluate import utterances

    out = []
    for manifest in manifests:
        cuts = list(cuts_from_manifests(recordings_beside(manifest), manifest))[:limit]
        for _, audio, labels in utterances(cuts):
            segments = segments_from_labels(labels, phones)
            if segments is not None:
                out.append(Utterance(features(audio, len(labels)), segments))
    return out
