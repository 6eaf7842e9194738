"""Frame posteriors -> phone segments with English phonotactics: a streaming Viterbi decoder.

The hysteresis segmenter (segments.py beside this file) judges each frame's argmax alone, so unsure posteriors
on real speech come through as extra phones.  This decoder searches a phone loop instead: each
phone is a chain of `min_frames` states (the last one loops), a phone may follow another with the
probability a phone bigram gives (estimated from CMUdict pronunciations of frequent English text,
data/phonotactics.py), scaled by `lm_weight`, and every new phone pays `insertion_penalty`.  The
emission of a state is the model's log posterior of its phone.

Streaming with bounded look-ahead: after frame t the best path is traced back `lookahead_frames`
frames and the label of frame t - lookahead is final from then on (never revised), so the decoder
adds lookahead x 10 ms of latency and needs only the last lookahead + 1 frames' back-pointers.
The paths that do not pass through the state just made final are then dropped, so the final labels
are one path of the loop (no phone shorter than min_frames, no change the bigram forbids), not the
pieces of several best paths.
Each frame is processed the same way whatever the pieces it arrives in, so pushing audio in any
chunking gives the same labels.  Segments are runs of final labels; they tile the stream.
Confidence of a segment: the mean posterior of its phone over its frames (as in segments.py).

Shapes: P phones, D = min_frames chain states per phone, L look-ahead frames.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from speechattn_export.segments import Segment

DEFAULT_BIGRAM = Path(__file__).parent / "models" / "phone-bigram.json"  # data, built by speechattn/data/phonotactics.py
MAX_BIGRAM_BYTES = 10_000_000  # the bundled table is a few kB; a bigger file is no bigram
# push_many steps this many decoders or more as one; fewer go alone (stacking their state costs more than it saves
# below about 6: bench/serve_load.py --model-only)
BATCHED_FROM = 6


@dataclass(frozen=True)
class DecoderConfig:
    min_frames: int = 4  # 40 ms per phone at least (bench/decoder_tuning.py: 3-4 best on held-out synthetic voices)
    lookahead_frames: int = 10  # 100 ms of added latency
    lm_weight: float = 1.0
    insertion_penalty: float = 0.0  # log units per new phone

    def __post_init__(self) -> None:
        if self.min_frames < 1 or self.lookahead_frames < 0:
            raise ValueError("min_frames must be >= 1 and lookahead_frames >= 0")


class PhoneBigram:
    """log P(next phone | phone), (P, P), rows over the phones in the model's output order; the diagonal is
    unused (a phone continuing is its own state's loop, not a new phone)."""

    def __init__(self, phones: list[str], log_probs: np.ndarray) -> None:
        self.phones = list(phones)
        self.log_probs = np.asarray(log_probs, dtype=np.float64)

    @classmethod
    def load(cls, path: str | Path = DEFAULT_BIGRAM) -> "PhoneBigram":
        """The table of a JSON file ({"phones": [...], "log_probs": [[...]]}, as data/phonotactics.py writes it); a
        ValueError in one line for a path that is no readable file of at most MAX_BIGRAM_BYTES."""
        from speechattn_export.stream_client import read_bounded

        data = json.loads(read_bounded(path, "phone bigram", MAX_BIGRAM_BYTES))
        return cls(data["phones"], np.asarray(data["log_probs"]))

    def for_phones(self, phones: list[str]) -> np.ndarray:
        """The table reordered to `phones` (a model's output order); every phone must be in the table."""
        missing = [p for p in phones if p not in self.phones]
        if missing:
            raise ValueError(f"the phone bigram has no row for {', '.join(missing)}")
        order = [self.phones.index(p) for p in phones]
        return self.log_probs[np.ix_(order, order)]


class PhoneDecoder:
    """push(log_probs (R, P)) -> segments made final by these frames; finish() -> the rest.

    `phone` is the open segment's phone and `run_phone` the best path's phone at the newest frame (the
    provisional, not yet final part a live display may show)."""

    def __init__(self, log_bigram: np.ndarray, config: DecoderConfig = DecoderConfig(), silence: int = 0) -> None:
        P, D = log_bigram.shape[0], config.min_frames
        self.config, self.P, self.D = config, P, D
        transitions = config.lm_weight * np.asarray(log_bigram, dtype=np.float64) - config.insertion_penalty
        np.fill_diagonal(transitions, -np.inf)
        self.transitions = _shared_table(transitions)  # (P from, P to)
        self.initial = transitions[silence].copy()  # a stream starts as if after a long silence: entering a phone ...
        self.silence = silence  # ... or still in that silence, its minimum duration met (free to leave at once)
        self.scores: np.ndarray | None = None  # (P, D) best log score of a path ending in each state
        self.back: deque = deque(maxlen=config.lookahead_frames + 1)  # (P, D) int flat previous state, per frame
        self.rows: deque = deque(maxlen=config.lookahead_frames + 1)  # posteriors of the frames not yet final
        self.frame = 0  # frames pushed
        self.final = 0  # frames whose label is final
        self.phone, self.start, self.posterior_sum = -1, 0, 0.0
        self.run_phone = -1

    def push(self, log_probs: np.ndarray) -> list[Segment]:
        done: list[Segment] = []
        for row in np.asarray(log_probs, dtype=np.float64):
            self._step(row)
            count = self.frame - self.final
            if count > self.config.lookahead_frames:
                done += self._finalise([self._commit(count) // self.D])
        return done

    def finish(self) -> list[Segment]:
        """End of stream: every remaining frame's label from the best complete path, and the open segment."""
        done = self._finalise(self._trace(self.frame - self.final)) if self.frame > self.final else []
        if self.phone >= 0 and self.final > self.start:
            done.append(Segment(self.start, self.final, self.phone, self.posterior_sum / (self.final - self.start)))
        self.phone = -1
        return done

    def _step(self, row: np.ndarray) -> None:
        P, D = self.P, self.D
        back = np.empty((P, D), dtype=np.int64)
        if self.scores is None:
            new = np.full((P, D), -np.inf)
            new[:, 0] = self.initial
            new[self.silence, D - 1] = 0.0
            back[:] = -1
        else:
            old = self.scores
            new = np.empty((P, D))
            flat = np.arange(P * D).reshape(P, D)
            entering = old[:, D - 1][:, None] + self.transitions  # (from, to)
            source = entering.argmax(axis=0)
            new[:, 0] = entering[source, np.arange(P)]
            back[:, 0] = flat[source, D - 1]
            if D > 1:
                new[:, 1:] = old[:, :-1]
                back[:, 1:] = flat[:, :-1]
                stay = old[:, D - 1] >= old[:, D - 2]
                new[:, D - 1] = np.where(stay, old[:, D - 1], old[:, D - 2])
                back[:, D - 1] = np.where(stay, flat[:, D - 1], flat[:, D - 2])
            else:
                stay = old[:, 0] >= new[:, 0]
                new[:, 0] = np.where(stay, old[:, 0], new[:, 0])
                back[:, 0] = np.where(stay, flat[:, 0], back[:, 0])
        new += row[:, None]
        new -= new.max()  # keeps scores bounded over hours; the same shift for every state changes no decision
        self.scores = new
        self.back.append(back)
        self.rows.append(np.exp(row))
        self.frame += 1
        self.run_phone = int(new.argmax()) // D

    def _trace(self, count: int) -> list[int]:
        """Phones of the best path's last `count` frames, oldest first (count <= lookahead + 1)."""
        state = int(self.scores.argmax())
        phones = []
        for back in reversed(list(self.back)[-count:]):
            phones.append(state // self.D)
            state = int(back.flat[state])
        return phones[::-1]

    def _commit(self, count: int) -> int:
        """The best path's state at the oldest pending frame (`count` frames back), which becomes final; every
        path that leaves that state is dropped.  Later final labels then continue the same path, so the final
        labels are one path of the phone loop: each phone at least min_frames long, each change one the bigram
        allows; without this, a label taken from one best path and the next from another can leave a blip of a
        frame or two (an inserted phone)."""
        states = np.arange(self.P * self.D)  # each state now, traced back to its state at that frame
        backs = list(self.back)
        for back in reversed(backs[len(backs) - count + 1:]):
            states = back.reshape(-1)[states]
        kept = int(states[int(self.scores.argmax())])
        self.scores[(states != kept).reshape(self.P, self.D)] = -np.inf
        return kept

    def _finalise(self, phones: list[int]) -> list[Segment]:
        done = []
        rows = list(self.rows)[-(self.frame - self.final):]
        for phone, posteriors in zip(phones, rows):
            if phone != self.phone:
                if self.phone >= 0:
                    done.append(Segment(self.start, self.final, self.phone,
                                        self.posterior_sum / (self.final - self.start)))
                self.phone, self.start, self.posterior_sum = phone, self.final, 0.0
            self.posterior_sum += float(posteriors[phone])
            self.final += 1
        return done


_TABLES: dict[bytes, np.ndarray] = {}  # every distinct transition table the decoders use, once (_shared_table)


def _shared_table(transitions: np.ndarray) -> np.ndarray:
    """One read-only array for every decoder with the same transition table, so that push_many groups them by
    identity: comparing each decoder's table with its group's (np.array_equal) cost 3-11 % of push_many's CPU at
    16 streams a call (a dev A/B of 5 rounds, median 1.77 against 2.00 ms a stream-second).  At most 64 tables are kept (a server's decoders share one or a few)."""
    transitions.flags.writeable = False
    if len(_TABLES) >= 64:
        return transitions
    return _TABLES.setdefault(transitions.tobytes() + str(transitions.shape).encode(), transitions)


def push_many(decoders: list[PhoneDecoder], log_probs: list[np.ndarray]) -> list[list[Segment]]:
    """[d.push(x) for d, x in zip(decoders, log_probs)], the Viterbi step of every decoder with the same table,
    min_frames and frame count taken as one (B, P, P) numpy operation per frame (a server's streams, each with a
    chunk of frames).  Every score, back-pointer and decision equals the decoder's own push: the same float64
    operations, element for element, only batched; confidences within 1e-12 (np.exp of a stacked array may round
    an ulp apart), tests/test_decoder_batched.py.  A decoder may be in the list once."""
    results: list[list[Segment]] = [[] for _ in decoders]
    groups: dict[tuple, list[int]] = {}  # (settings, frames, a table's first decoder) -> the decoders stepped as one
    for number, (decoder, rows) in enumerate(zip(decoders, log_probs)):
        key = (decoder.config, decoder.silence, decoder.D, len(rows))
        first = next((k for k in groups if k[:4] == key and
                      (decoders[groups[k][0]].transitions is decoder.transitions or
                       np.array_equal(decoders[groups[k][0]].transitions, decoder.transitions))), None)
        groups.setdefault(first or key + (number,), []).append(number)
    for key, members in groups.items():
        if len(members) < BATCHED_FROM or key[3] == 0:  # too few to gain (no frames: no step at all)
            for number in members:
                results[number] = decoders[number].push(log_probs[number])
            continue
        found = _BatchedDecoders([decoders[i] for i in members]).push(np.stack([log_probs[i] for i in members]))
        for number, segments in zip(members, found):
            results[number] = segments
    return results


class _BatchedDecoders:
    """B PhoneDecoders of one table and min_frames stepped together for R frames each: their state is read into
    stacked arrays, stepped, and written back, so each decoder goes on alone (push, finish) as if it had pushed the
    frames itself.  Shapes: B decoders, R frames, P phones, D chain states, K = lookahead + 1 frames kept; the
    stacked back-pointers and posteriors, frame first, hold K frames before the call then the R new ones (K + r)."""

    def __init__(self, decoders: list[PhoneDecoder]) -> None:
        self.decoders = decoders
        first = decoders[0]
        self.P, self.D, self.K = first.P, first.D, first.config.lookahead_frames + 1
        self.transitions, self.silence, self.initial = first.transitions, first.silence, first.initial

    def push(self, log_probs: np.ndarray) -> list[list[Segment]]:
        decs, P, D, K = self.decoders, self.P, self.D, self.K
        B, R = log_probs.shape[:2]
        rows = np.asarray(log_probs, dtype=np.float64)  # (B, R, P)
        backs = np.zeros((K + R, B, P, D), dtype=np.int64)  # right-aligned: index K - 1 is the frame before
        posteriors = np.zeros((K + R, B, P))
        posteriors[K:] = np.exp(rows).transpose(1, 0, 2)  # as each decoder's np.exp(row)
        for b, d in enumerate(decs):
            if not d.back:
                continue
            block = getattr(d, "_stacked", None)  # what the last batched call left, unless a push alone came after
            if block is not None and len(d.back) == len(block[0]) and d.back[-1].base is block[0]:
                backs[K - len(d.back):K, b], posteriors[K - len(d.rows):K, b] = block
            else:
                backs[K - len(d.back):K, b] = np.stack(d.back)
                posteriors[K - len(d.rows):K, b] = np.stack(d.rows)
        fresh = np.array([d.scores is None for d in decs])
        scores = np.stack([np.zeros((P, D)) if d.scores is None else d.scores for d in decs])  # (B, P, D)
        frame = np.array([d.frame for d in decs])
        final = np.array([d.final for d in decs])
        phone = np.array([d.phone for d in decs])
        start = np.array([d.start for d in decs])
        posterior_sum = np.array([d.posterior_sum for d in decs])
        flat = np.arange(P * D).reshape(P, D)
        # The back-pointers again as indices into one frame's (B * P * D) states, for _commit's trace: one gather
        # a frame back instead of an addition and a gather
        offsets = (np.arange(B) * (P * D))[:, None, None]
        traced = np.empty_like(backs)  # (K + R, B, P, D); the call's own frames filled as they are decoded
        np.add(backs[:K], offsets, out=traced[:K])
        done: list[list[Segment]] = [[] for _ in decs]
        for r in range(R):
            back = backs[K + r]
            new = np.empty((B, P, D))
            entering = scores[:, :, D - 1][:, :, None] + self.transitions  # (B, from, to)
            source = entering.argmax(axis=1)  # (B, to)
            new[:, :, 0] = entering.max(axis=1)  # the element argmax picks, bit for bit
            back[:, :, 0] = flat[source, D - 1]
            if D > 1:
                new[:, :, 1:] = scores[:, :, :-1]
                back[:, :, 1:] = flat[:, :-1]
                stay = scores[:, :, D - 1] >= scores[:, :, D - 2]
                new[:, :, D - 1] = np.where(stay, scores[:, :, D - 1], scores[:, :, D - 2])
                back[:, :, D - 1] = np.where(stay, flat[:, D - 1], flat[:, D - 2])
            else:
                stay = scores[:, :, 0] >= new[:, :, 0]
                new[:, :, 0] = np.where(stay, scores[:, :, 0], new[:, :, 0])
                back[:, :, 0] = np.where(stay, flat[:, 0], back[:, :, 0])
            if fresh.any():  # a decoder's first frame: as PhoneDecoder._step with no scores yet
                first = np.full((P, D), -np.inf)
                first[:, 0] = self.initial
                first[self.silence, D - 1] = 0.0
                new[fresh], back[fresh] = first, -1
                fresh[:] = False
            np.add(back, offsets, out=traced[K + r])
            new += rows[:, r, :, None]
            new -= new.max(axis=(1, 2), keepdims=True)
            scores = new
            frame += 1
            run_phone = scores.reshape(B, -1).argmax(axis=1) // D
            ripe = np.flatnonzero(frame - final > K - 1)  # lookahead + 1 frames pending: the oldest becomes final
            if ripe.size:
                self._commit(ripe, r, scores, traced, posteriors, final, phone, start, posterior_sum, done)
        for b, d in enumerate(decs):
            kept = min(K, int(frame[b]))
            d._stacked = block = backs[K + R - kept:, b].copy(), posteriors[K + R - kept:, b].copy()
            d.back.clear()
            d.back.extend(block[0])  # views of the block: the next batched call copies the block at once
            d.rows.clear()
            d.rows.extend(block[1])
            d.scores, d.frame, d.final, d.run_phone = scores[b].copy(), int(frame[b]), int(final[b]), int(run_phone[b])
            d.phone, d.start, d.posterior_sum = int(phone[b]), int(start[b]), float(posterior_sum[b])
        return done

    def _commit(self, ripe, r, scores, traced, posteriors, final, phone, start, posterior_sum, done) -> None:
        """PhoneDecoder._commit, then _finalise of its one frame, for each decoder in `ripe` at the call's frame r:
        the best path's state K - 1 frames back becomes final, and the paths not through it are dropped.
        `traced`: the back-pointers as indices into a frame's flat (B * P * D) states."""
        P, D, K = self.P, self.D, self.K
        n, now = ripe.size, K + r
        every = n == len(scores)
        offsets = (ripe * (P * D))[:, None]
        states = offsets + np.arange(P * D)  # (n, P * D), into the flat states of a frame
        for j in range(K - 1):  # the newest K - 1 back-pointers, newest first
            states = traced[now - j].reshape(-1)[states]
        states -= offsets  # each decoder's own state numbers
        best = scores[slice(None) if every else ripe].reshape(n, -1).argmax(axis=1)
        kept = states[np.arange(n), best]  # (n,) each decoder's state at the frame made final
        dropped = (states != kept[:, None]).reshape(n, P, D)
        if every:
            scores[dropped] = -np.inf
        else:
            view = scores[ripe]
            view[dropped] = -np.inf
            scores[ripe] = view
        phones = kept // D
        for i in np.flatnonzero(phones != phone[ripe]):  # a new segment: the one before is done
            b = ripe[i]
            if phone[b] >= 0:
                done[b].append(Segment(int(start[b]), int(final[b]), int(phone[b]),
                                       float(posterior_sum[b] / (final[b] - start[b]))))
            phone[b], start[b], posterior_sum[b] = phones[i], final[b], 0.0
        posterior_sum[ripe] += posteriors[now - (K - 1), ripe, phones]
        final[ripe] += 1


def decode(log_probs: np.ndarray, log_bigram: np.ndarray, config: DecoderConfig = DecoderConfig(),
           silence: int = 0) -> list[Segment]:
    """All segments of one utterance's log-probs (T, P)."""
    decoder = PhoneDecoder(log_bigram, config, silence)
    return decoder.push(log_probs) + decoder.finish()


from speechattn_export.registry import DECODERS  # noqa: E402  (the names: one table for the CLI and the kit)


def new_segmenter(decoder: str, phones: list[str], min_frames: int | None = None,
                  config: DecoderConfig | None = None, bigram: PhoneBigram | None = None):
    """The online segmenter a runtime uses: "bigram" (this module's decoder) or "hysteresis" (segments.py).
    Both have push(log_probs) -> final segments, finish() -> the rest, and `phone` / `run_phone`."""
    from speechattn_export.segments import DEFAULT_MIN_FRAMES, Segmenter

    if decoder == "hysteresis":
        return Segmenter(min_frames or DEFAULT_MIN_FRAMES)
    if decoder != "bigram":
        raise ValueError(f"decoder must be one of {', '.join(DECODERS)}, not {decoder!r}")
    config = config or DecoderConfig()
    if min_frames:
        from dataclasses import replace

        config = replace(config, min_frames=min_frames)
    table = (bigram or PhoneBigram.load()).for_phones(list(phones))
    return PhoneDecoder(table, config, silence=list(phones).index("sil"))
