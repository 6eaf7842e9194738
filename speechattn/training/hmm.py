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

import dataclasses
import logging
import time
from dataclasses import asdict, dataclass

import numpy as np

from speechattn.runtime.hmm import CONTEXTS, SILENCE, HmmGmm, align_segments, context_of, features, pieces

log = logging.getLogger(__name__)

VARIANCE_FLOOR = 1e-2  # features are normalised per utterance (variance 1)


@dataclass(frozen=True)
class HmmTrainConfig:
    gaussians: int = 8  # per state, a power of two
    rounds: int = 4  # of embedded re-estimation
    band_frames: int = 10  # how far a boundary may move in one round
    state_rounds: int = 0  # then rounds re-aligning the states within each phone, its boundaries kept
    context_min_frames: int = 0  # 0: no context; else a context's frames a state needs to be split by it
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
    """(T,) each frame's state, each phone's frames cut evenly among its states (model_layout: state_of and
    state_count, HmmGmm.layout's), the first and last of its neighbours' kinds."""
    state_of, counts = model_layout
    kinds = [0] + [context_of(s[0]) for s in segments] + [0]
    out = []
    for i, (phone, start, end) in enumerate(segments):
        p = phones.index(phone)
        n = end - start
        k = np.minimum((np.arange(n) * counts[p]) // max(n, 1), counts[p] - 1)
        out.append(state_of[p, k, np.where(k == 0, kinds[i], kinds[i + 2])])
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


def realign(model: HmmGmm, utterances: list[Utterance], band_frames: int) -> tuple[float, list[np.ndarray]]:
    """Each utterance's segments re-aligned in place; returns the emission log-likelihood per frame of the paths
    and each utterance's (T,) states along its path (a piece no path fits keeps its boundaries, its phones' frames
    cut evenly, uncounted).  band_frames 0: the states within each phone only, its boundaries kept."""
    total, frames, paths = 0.0, 0, []
    for u in utterances:
        new_segments, path = [], []
        for part in pieces(u.segments, band_frames):
            try:
                new, score, states = align_segments(model, u.x, part, band_frames)
            except ValueError:
                new_segments += part
                path.append(state_labels((model.state_of, model.state_count), model.phones, part))
                continue
            new_segments += new
            path.append(states)
            total += score
            frames += part[-1][2] - part[0][1]
        u.segments = merged(new_segments)
        paths.append(np.concatenate(path))
    return total / max(frames, 1), paths


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
    paths = [state_labels(layout, phones, u.segments) for u in utterances]
    model, scores, started = None, [], time.monotonic()
    for round_ in range(config.rounds + config.state_rounds + 1):
        states_all = np.concatenate(paths)
        means, variances, log_weights = fit_states(x_all, states_all, S, config, model, rng)
        model = HmmGmm(phones, *layout, means, variances, log_weights, self_loops(states_all, ends, S))
        if round_ < config.rounds + config.state_rounds:  # boundary rounds first, then states within phones
            score, paths = realign(model, utterances, config.band_frames if round_ < config.rounds else 0)
            scores.append(score)
            log.info("round %d: path log-likelihood %.3f per frame (%.0f s)", round_ + 1, score,
                     time.monotonic() - started)
    if config.context_min_frames:
        model = with_contexts(model, x_all, paths, utterances, ends, config, rng)
    info = {"config": asdict(config), "utterances": len(utterances), "frames": int(len(x_all)),
            "states": model.states, "path_log_likelihood_per_round": [round(s, 4) for s in scores],
            "data": data_note}
    return dataclasses.replace(model, info=info)


def with_contexts(model: HmmGmm, x_all, paths, utterances, ends, config: HmmTrainConfig, rng) -> HmmGmm:
    """Each phone's first state split by the kind of sound before it and its last by the kind after it, where the
    training data has at least context_min_frames of that context: each new state's mixture a few EM steps from
    its context-free state's (which stays, for the rarer contexts)."""
    first_or_last = np.zeros(model.states, dtype=bool)  # a phone's first or last state (not silence's)
    position = {}  # state -> (phone, k)
    for p, phone in enumerate(model.phones):
        for k in range(int(model.state_count[p])):
            position[int(model.state_of[p, k, 0])] = (p, k)
            first_or_last[int(model.state_of[p, k, 0])] = phone != SILENCE and k in (0, model.state_count[p] - 1)
    states_all = np.concatenate(paths)
    kind_all = np.concatenate([frame_kinds(u.segments, path, model) for u, path in zip(utterances, paths)])
    key = np.where(first_or_last[states_all], states_all * len(CONTEXTS) + kind_all, -1)
    counts = np.bincount(key[key >= 0], minlength=model.states * len(CONTEXTS))
    split_keys = np.flatnonzero(counts >= config.context_min_frames)
    state_of = model.state_of.copy()
    S, J = model.states, len(split_keys)
    means = np.concatenate([model.means, model.means[split_keys // len(CONTEXTS)]])
    variances = np.concatenate([model.variances, model.variances[split_keys // len(CONTEXTS)]])
    log_weights = np.concatenate([model.log_weights, model.log_weights[split_keys // len(CONTEXTS)]])
    relabelled = states_all.copy()
    for j, k in enumerate(split_keys):
        state, kind = divmod(int(k), len(CONTEXTS))
        p, position_in_phone = position[state]
        state_of[p, position_in_phone, kind] = S + j
        frames = np.flatnonzero(key == k)
        relabelled[frames] = S + j
        if len(frames) > config.max_frames_per_state:
            frames = rng.choice(frames, config.max_frames_per_state, replace=False)
        means[S + j], variances[S + j], log_weights[S + j], _ = em(
            x_all[frames].astype(np.float64), means[S + j], variances[S + j], log_weights[S + j],
            config.em_iterations)
    log_stay = self_loops(relabelled, ends, S + J)
    log_stay[:S] = model.log_stay  # the context-free states keep theirs, from every context's frames
    log.info("contexts: %d states split from %d", J, S)
    return HmmGmm(model.phones, state_of, model.state_count, means.astype(np.float32),
                  variances.astype(np.float32), log_weights.astype(np.float32), log_stay)


def frame_kinds(segments, path: np.ndarray, model: HmmGmm) -> np.ndarray:
    """(T,) the context that matters to each frame's state: the kind before its phone for a first state, after it
    for a last (a silence's frames: 0)."""
    kinds = [0] + [context_of(s[0]) for s in segments] + [0]
    out = np.zeros(len(path), dtype=np.int64)
    for i, (phone, start, end) in enumerate(segments):
        if phone == SILENCE:
            continue
        p = model.index(phone)
        first = int(model.state_of[p, 0, 0])
        out[start:end] = np.where(path[start:end] == first, kinds[i], kinds[i + 2])
    return out


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


SYNTHETIC_SEED = 1  # not 0: bench/align.py and bench/hmm_boundaries.py score the first utterances of seed 0's plan


def synthetic_utterances(hours: float, phones, seed: int = SYNTHETIC_SEED, progress: bool = True) -> list[Utterance]:
    """Features and exact phone segments of `hours` of the project's synthetic voices (data/synth.py's plan: espeak-ng,
    flite and festival voices, random texts, rates and pitches, edge silence), whose phone times are known."""
    from tqdm import tqdm

    from speechattn.data.labels import frame_labels
    from speechattn.data.synth import SynthConfig, engine, engine_of, plan, with_edge_silence

    out = []
    for job in tqdm(plan(SynthConfig(hours=hours, seed=seed)), desc="synthesizing", unit="utt", disable=not progress):
        u = engine(engine_of(job.voice)).synthesize(job.text, job.voice, job.rate_wpm, job.pitch, job.pitch_range)
        u = with_edge_silence(u, job.lead_seconds, job.trail_seconds)
        frames = len(u.audio) // 160
        segments = segments_from_labels(frame_labels(u.intervals, frames), phones)
        if segments is not None:
            out.append(Utterance(features(u.audio, frames), segments))
    return out

