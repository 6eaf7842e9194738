"""Forced alignment of known words on the model's frame log-posteriors, offline or live, tolerant of a script
the speaker departed from.  numpy only.

The graph, left to right over the script's words w = 0 .. W-1, with a boundary b = 0 .. W before each word and
after the last:

    boundary b --> word b (every pronunciation variant: each phone a chain of min_frames states, the last one
                   looping; the last phone's last state is the word's exit) --> boundary b + 1
    boundary b --> silence b (loops) --> boundary b          optional silence between words
    boundary b --> garbage b (loops) --> boundary b          speech that is not in the script: an added word, a
                                                             repeat, a substitution; each frame pays
                                                             garbage_penalty against the best phone's score
    boundary b --> boundary b + 1, paying skip_penalty       a word of the script that was not said
    any boundary --> a sentence's first boundary, paying jump_penalty (live, by the distance in sentences:
                   near_jump_penalty to the next sentence's, back_jump_penalty to the present
                   or the last one's, jump_step_penalty more for each sentence further)
                                                             a reader who goes back a line or skips ahead

Emissions are the model's log posteriors (garbage: the best non-silence phone's); Viterbi picks one path.
Offline (`align`, `speechattn align`, --dialog) they are divided by the recording's own phone prior raised to
PRIOR_SCALE (its mean posterior per phone: a hybrid recognizer's scaled likelihoods), so a phone the model says
everywhere weighs less where it competes; live follow-along, which cannot see the whole recording, does not.
Every word on the path is heard; the others are reported as not heard.

Bounded memory and time for any length: only a window of words around the current position is searched
(window_back_words before, window_ahead_words after: the path cannot move faster than that between two
commits), and the path is committed `lag_frames` behind the newest frame: the best path's state there becomes
final and every path that does not pass through it is dropped (as the phone decoder does), so back-pointers are
kept for at most lag_frames + commit_every frames.  Memory: O(window states x lag), independent of the length;
time: O(frames x window states).  Offline alignment commits in blocks of lag_frames (3 s); live follow-along
(LIVE) commits every frame, 100 ms behind, and keeps the paths that leave the commit: a word is reported when
the best path 100 ms behind has left it, and a later, better path may report it (or a word before it) again, so
the follower is never stuck on a wrong early guess.

Confidence per phone: its goodness of pronunciation, the mean over its frames of log p(aligned phone) minus
log p(best other phone) (positive: the aligned phone won; in nats), and the mean posterior of the phone; per
word: the mean of its phones' values.

Per recording: an alignment score, how well the script explains the speech, in nats per frame (0 at best): the mean
over the frames of its words and of the speech not in the script of log p(aligned phone) - log max_p p (a likelihood
ratio against a free phone loop, frame by frame), each frame of speech not in the script counting UNSCRIPTED_SCORE,
plus NOT_HEARD_SCORE x the share of the script's words not heard.  Below AlignOptions.min_score the script does not
match the speech (another recording's text, the wrong file): the alignment is `unalignable`, and `speechattn align`
reports it instead of forcing the words onto the audio (as the Montreal Forced Aligner reports unalignable files).

Shapes and names: T frames, P phones (the model's, in output order), W words, n window chain states, nb window
boundaries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import math

import numpy as np

from speechattn_export.words import shorten

NEG = -np.inf
SILENCE = "sil"
# offline alignment divides the posteriors by the recording's phone prior to this power: on the dev sets 1.2-2.0
# points more frames agree with the references and Rhubarb's shapes from a script gain 0.9-1.8 points; the
# synthetic voices' boundaries (one pronunciation each) stay where they were (bench/align.py; 1.0 was worse)
PRIOR_SCALE = 0.6
PRIOR_FLOOR = 1e-4  # added to the mean posterior: a phone the recording never shows costs at most -log(1e-4) x 0.6
# the alignment score's terms (Alignment.score): a frame of speech not in the script counts as a phone 2.5 nats below
# the best, and a script with no word heard loses 1.5 nats.  On the dev sets (bench/align.py --mismatched, the default
# fp32 model) these weights (a grid of 1.5-4 and 0-3) refused as many recordings paired with another one's text as the
# best pair there, (3, 3) with its own threshold, and aligned more scripts with a word dropped, one added and one
# substituted (8 words or more: 90 / 84 / 100 % against 78 / 67 / 96 % on real-dev / speechocean762 / ljspeech)
UNSCRIPTED_SCORE = -2.5
NOT_HEARD_SCORE = -1.5


class PriorSums:
    """recording_prior over a recording that arrives in pieces: the same float64 sums in the same order (frame by
    frame), so the prior is the one `align` computes from the whole array, bit for bit."""

    def __init__(self, phones: int) -> None:
        self.sums, self.count = np.zeros(phones), 0

    def add(self, log_probs: np.ndarray) -> PriorSums:
        if len(log_probs):
            rows = np.exp(np.asarray(log_probs, dtype=np.float64))
            self.sums = np.concatenate([self.sums[None], rows]).sum(axis=0)  # numpy adds axis-0 rows in order
            self.count += len(log_probs)
        return self

    def prior(self, scale: float = PRIOR_SCALE) -> np.ndarray | None:
        if not scale or not self.count:
            return None
        return scale * np.log(self.sums / self.count + PRIOR_FLOOR)


def recording_prior(log_probs: np.ndarray, scale: float = PRIOR_SCALE) -> np.ndarray | None:
    """scale x the log of one recording's mean posterior per phone (P,), what `align` subtracts from every frame;
    None for scale 0 or no frames."""
    log_probs = np.asarray(log_probs)
    if not scale or not len(log_probs):
        return None
    return PriorSums(log_probs.shape[1]).add(log_probs).prior(scale)


def group_max(values: np.ndarray, starts: np.ndarray, group: np.ndarray, groups: np.ndarray):
    """(each group's maximum, the index of its first occurrence) of `values` cut into consecutive groups: `starts`
    each group's first index, `group` each value's group, `groups` 0 .. number of groups - 1."""
    top = np.maximum.reduceat(values, starts)
    hits = np.flatnonzero(values == top[group])
    return top, hits[np.searchsorted(group[hits], groups)]


@dataclass(frozen=True)
class AlignOptions:
    min_frames: int = 3  # states per phone: the shortest phone, in 10 ms frames
    skip_penalty: float = 20.0  # log score of leaving a word of the script out
    garbage_penalty: float = 1.5  # per frame of speech that is not the script, against the best phone
    garbage_entry_penalty: float = 10.0  # per stretch of such speech
    jump_penalty: float = 200.0  # going back to or ahead to a sentence's start (offline: a transcript is read in
    #                              order, and cheaper jumps let hard speech jump ahead and lose the text: 489 of 1,432
    #                              words of speechocean762's dev set read as one recording not heard at 40, 52 at 200)
    near_jump_penalty: float = 200.0  # where lower than jump_penalty, the price of a jump ahead to the next
    #                                   sentence's start: the rest of a line skipped, or from a line's end the next
    back_jump_penalty: float = 200.0  # where lower than jump_penalty, the price of a jump back to the start of the
    #                                   sentence being read or of the one just finished: a line read again
    jump_step_penalty: float = 0.0  # added to jump_penalty for each sentence past the first a jump moves, either way
    lag_frames: int = 300  # commit this far behind the newest frame (3 s: a 1 s lag lost non-native long-form
    commit_every: int = 300  # frames between commits (1: live)   speech, 136 of 667 words against 1)
    window_back_words: int = 4
    window_ahead_words: int = 48
    prune: bool = True  # drop the paths that do not pass through each commit (one consistent path)
    end_at_script_end: bool = True  # finish(): the best path that reaches the end of the script, the words after it
    #   skipped (offline: the whole text was read); False (LIVE): the best path at the last frame, wherever the reader
    #   stopped (a reader stopped inside "followed" of "... followed by the pound key" had "key" squeezed into the
    #   last frames, a skip of four words costing more than reading three short ones)
    min_score: float = -1.375  # an alignment scoring below this is unalignable: the script does not match the speech.
    #   The highest threshold that keeps 99 % of the true pairs of every dev set (bench/align.py --mismatched, the
    #   default fp32 model): true pairs aligned 99.0 / 99.2 / 100 % (real-dev / speechocean762 / ljspeech); paired with the
    #   text of the utterance half the set away, 96.9 / 97.1 / 100 % refused; 7 further on, 95.9 / 96.2 / 100 %

    def __post_init__(self) -> None:
        if not 1 <= self.min_frames <= 20:
            raise ValueError(f"min_frames must be from 1 to 20, not {self.min_frames}")
        if not 1 <= self.lag_frames <= 10_000 or not 1 <= self.commit_every <= 10_000:
            raise ValueError("lag_frames and commit_every must be from 1 to 10000")
        if not 0 <= self.window_back_words <= 1000 or not 1 <= self.window_ahead_words <= 10_000:
            raise ValueError("window_back_words must be 0..1000 and window_ahead_words 1..10000")
        for name in ("skip_penalty", "garbage_penalty", "garbage_entry_penalty", "jump_penalty", "near_jump_penalty",
                     "back_jump_penalty", "jump_step_penalty"):
            if not 0 <= getattr(self, name) < float("inf"):
                raise ValueError(f"{name} must be a finite number >= 0")
        if not -1000 <= self.min_score <= 0:
            raise ValueError(f"min_score must be a number from -1000 to 0, not {self.min_score}")
        if not isinstance(self.prune, bool) or not isinstance(self.end_at_script_end, bool):
            raise ValueError("prune and end_at_script_end must be True or False")


# follow-along: final 100 ms behind the newest frame, each frame committed without dropping the other paths: 100 ms
# is too little evidence to bet the whole future on (a wrong commit would leave the follower lost), so a later
# frame may leave the committed path and the follower recovers (bench/follow.py).  A reader may skip or go back: a
# jump reaches the sentence starts inside the window, so it reaches 32 words back (with 4, a reader who started a
# nine-word text again was lost for the whole second reading; tests/test_follow.py).  Jumps are priced by how far
# they go (bench/follow.py --limit 100 on the three dev sets, skips / sentences read twice, back within two words):
# with 40 for all, 55 of 71 skips; 20 to the next sentence and 40 to any other, 61 of 71 (66 taking either copy of
# a start the skipped sentence shares) but only 39 of 71 sentences read twice, because a far jump on a passing
# likeness (asterisk's "pound" heard as the start of "Password incorrect" four prompts on) moved the window past
# the reader, who was lost for several sentences; 15 back to the start of the present or the last sentence and 20
# more for each sentence past the next: 62 (68) of 71 skips and 63 of 71 sentences read twice
LIVE = AlignOptions(lag_frames=10, commit_every=1, prune=False, jump_penalty=40.0, near_jump_penalty=20.0,
                    back_jump_penalty=15.0, jump_step_penalty=20.0, window_back_words=32, end_at_script_end=False)


@dataclass(frozen=True)
class AlignedPhone:
    phone: str
    start_frame: int
    end_frame: int  # exclusive
    gop: float  # mean log p(this phone) - log p(best other phone) over its frames
    confidence: float  # mean posterior of this phone over its frames


@dataclass(frozen=True)
class AlignedWord:
    index: int  # position in the script
    text: str  # as written
    start_frame: int
    end_frame: int  # exclusive
    phones: tuple[AlignedPhone, ...]
    gop: float
    confidence: float


@dataclass
class Alignment:
    words: list[AlignedWord]  # in time order (a word read twice appears twice)
    not_heard: list[int]  # script positions of the words no path went through
    frames: int
    silences: list[tuple[int, int]] = field(default_factory=list)  # (start, end) frames of silence between words
    unscripted: list[tuple[int, int]] = field(default_factory=list)  # (start, end) frames of speech not in the script
    score: float = 0.0  # how well the script explains the speech, nats per frame, <= 0 (alignment_score)
    unalignable: bool = False  # score < the options' min_score: the script does not match the speech


class Script:
    """The word graph's layout: every chain state of every word, word by word, as flat arrays (global ids)."""

    def __init__(self, words, phones, min_frames: int, sentence_starts=None) -> None:
        index = {p: i for i, p in enumerate(phones)}
        if SILENCE not in index:
            raise ValueError(f"the model has no {SILENCE!r} phone")
        self.phones, self.silence, D = tuple(phones), index[SILENCE], min_frames
        self.texts = [getattr(w, "text", str(w)) for w in words]
        self.W = len(words)
        phone_of, word_of, first, loop, last, phone_start = [], [], [], [], [], []
        self.variants: list[list[tuple[int, int, tuple[str, ...]]]] = []  # per word: (first state, end, phones)
        for w, word in enumerate(words):
            variants = []
            for pronunciation in word.pronunciations:
                unknown = [p for p in pronunciation if p not in index or p == SILENCE]
                if unknown or not pronunciation:
                    raise ValueError(f"word {w} ({shorten(self.texts[w])!r}): pronunciation "
                                     f"{shorten(' '.join(pronunciation))} has phones the model lacks: "
                                     f"{shorten(' '.join(unknown)) or '(empty)'}")
                start = len(phone_of)
                for k, p in enumerate(pronunciation):
                    for d in range(D):
                        phone_start.append(len(phone_of) - d)
                        phone_of.append(index[p])
                        word_of.append(w)
                        first.append(k == 0 and d == 0)
                        loop.append(d == D - 1)
                        last.append(k == len(pronunciation) - 1 and d == D - 1)
                variants.append((start, len(phone_of), tuple(pronunciation)))
            if not variants:
                raise ValueError(f"word {w} ({shorten(self.texts[w])!r}) has no pronunciation")
            self.variants.append(variants)
        self.N = len(phone_of)
        self.phone_of = np.asarray(phone_of, dtype=np.int64)
        self.word_of = np.asarray(word_of, dtype=np.int64)
        self.first = np.asarray(first, dtype=bool)
        self.loop = np.asarray(loop, dtype=bool)
        self.last = np.asarray(last, dtype=bool)
        self.phone_start = np.asarray(phone_start, dtype=np.int64)  # the first state of each state's phone
        self.word_start = np.searchsorted(self.word_of, np.arange(self.W + 1))  # first chain state of each word
        starts = {0} | set(sentence_starts or ())
        self.sentence_start = np.zeros(self.W + 1, dtype=bool)
        self.sentence_start[[s for s in starts if 0 <= s <= self.W]] = True

    # unified ids: chain states [0, N), silence of boundary b: N + b, garbage of boundary b: N + W + 1 + b
    def silence_id(self, b):
        return self.N + b

    def garbage_id(self, b):
        return self.N + self.W + 1 + b


class Window:
    """The searched part of the graph: words [wa, wb) with boundaries wa .. wb; local arrays in unified order
    (chain states, then the boundaries' silences, then their garbages)."""

    def __init__(self, script: Script, wa: int, wb: int, options: AlignOptions) -> None:
        self.wa, self.wb = wa, wb
        self.a, self.b = int(script.word_start[wa]), int(script.word_start[wb])
        self.n, self.nb = self.b - self.a, wb - wa + 1
        s = script
        self.phone_of = s.phone_of[self.a:self.b]
        self.first = s.first[self.a:self.b]
        self.loop = s.loop[self.a:self.b]
        self.word_local = s.word_of[self.a:self.b] - wa  # boundary index a word state is entered from
        lasts = np.flatnonzero(s.last[self.a:self.b])
        self.last_local = lasts
        self.last_word_start = np.searchsorted(self.word_local[lasts], np.arange(self.nb - 1)) if len(lasts) else \
            np.zeros(0, dtype=np.int64)  # per word of the window: its first entry in last_local
        self.last_word = self.word_local[lasts]  # per entry of last_local: its word in the window
        # per word of the window, its variants' exits in order, padded with n (a -inf appended to the scores)
        counts = np.bincount(self.last_word, minlength=self.nb - 1) if len(lasts) else np.zeros(self.nb - 1, int)
        self.exit_table = np.full((self.nb - 1, max(int(counts.max(initial=0)), 1)), self.b - self.a, dtype=np.int64)
        if len(lasts):
            self.exit_table[self.last_word, np.arange(len(lasts)) - self.last_word_start[self.last_word]] = lasts
        self.words_range = np.arange(self.nb - 1)
        self.global_ids = np.concatenate([np.arange(self.a, self.b), s.N + np.arange(wa, wb + 1),
                                          s.N + s.W + 1 + np.arange(wa, wb + 1)])
        self.bound = np.arange(self.nb)
        self.sentence = np.flatnonzero(s.sentence_start[wa:wb + 1])
        # jumps to the next sentence: each boundary's sentence, counted from the one the window starts in, where each
        # sentence's boundaries start, and each sentence start's own sentence
        starts = s.sentence_start[wa:wb + 1]
        self.block = np.cumsum(starts) - int(starts[0])
        self.block_starts = np.flatnonzero(np.diff(self.block, prepend=-1))
        self.blocks = np.arange(len(self.block_starts))
        self.sentence_block = self.block[self.sentence]
        self.jump_costs: np.ndarray | None = None  # ScriptAligner._jump_costs, made once per window
        self.N, self.W = s.N, s.W
        self.single = len(lasts) == self.nb - 1  # one pronunciation per word: exits need no reduction
        self.first_index = np.flatnonzero(self.first)
        self.first_word = self.word_local[self.first]
        self.tail_bound = np.concatenate([self.bound, self.bound])  # the boundary each silence and garbage sits on
        # _step's constants, over every state at once (chain states, then the silences and garbages): what a state
        # may stay with (0; -inf for a chain state that is not its phone's last); where it is entered from, an index
        # into (the chain's scores, then the boundaries' B): the state before it in the chain, or for a word's first
        # state and for the silences and garbages a boundary; the entry's price (garbage_entry_penalty for a
        # garbage, 0 elsewhere); its emission, an index into the frame's scores with the garbage's appended
        self.stay_add = np.concatenate([np.where(self.loop, 0.0, NEG), np.zeros(2 * self.nb)])
        enter = np.arange(self.n) - 1
        enter[self.first_index] = self.n + self.first_word
        self.enter_index = np.concatenate([enter, self.n + self.tail_bound])
        self.enter_price = np.concatenate([np.zeros(self.n + self.nb), np.full(self.nb, options.garbage_entry_penalty)])
        self.skip_ramp = self.bound * options.skip_penalty  # b x skip_penalty per boundary
        self.emit_index = np.concatenate([self.phone_of, np.full(self.nb, s.silence), np.full(self.nb, len(s.phones))])
        self.emitted = np.empty(len(s.phones) + 1)  # _step's buffer: the frame's scores, then the garbage's
        self.own_local = np.arange(self.n + 2 * self.nb)  # where a state stays, its back-pointer: itself
        # ScriptAligner._boundaries' buffers, written each frame and not kept past it: each boundary's candidates
        # (a word's exit, none into boundary 0; its silence; its garbage) and their local states (back-pointers are
        # local to each window; a word's exit is fixed with one pronunciation per word, else found each frame)
        self.candidates = np.full((3, self.nb), NEG)
        self.candidate_sources = np.stack([np.concatenate([[-1], lasts]) if self.single else np.full(self.nb, -1),
                                           self.n + self.bound, self.n + self.nb + self.bound]).astype(np.int64)
        self.padded_chain = np.full(self.n + 1, NEG)

    def local_one(self, state: int) -> int:
        """One unified global id -> its local index (-1 outside the window): the scalar form of local()."""
        if self.a <= state < self.b:
            return state - self.a
        if state >= self.N:
            b = state - self.N
            kind = 0
            if b > self.W:
                b, kind = b - self.W - 1, 1
            if self.wa <= b <= self.wb:
                return self.n + kind * self.nb + b - self.wa
        return -1

    def local(self, ids: np.ndarray) -> np.ndarray:
        """Unified global ids -> local indices (-1 outside the window)."""
        ids = np.asarray(ids)
        out = np.full(ids.shape, -1, dtype=np.int64)
        chain = (ids >= self.a) & (ids < self.b)
        out[chain] = ids[chain] - self.a
        sil = ids - self.N
        inside = (sil >= self.wa) & (sil <= self.wb)
        out[inside] = self.n + sil[inside] - self.wa
        garbage = ids - self.N - self.W - 1
        inside = (garbage >= self.wa) & (garbage <= self.wb)
        out[inside] = self.n + self.nb + garbage[inside] - self.wa
        return out


class ScriptAligner:
    """push(log_probs (R, P)) -> words made final; finish() -> the rest and the whole Alignment.

    `position` is the provisional reading position (the best path's word or boundary at the newest frame).
    `start_word`: the path starts on the boundary before this word (W: after the last), not before the first (a
    follow-along stream taken up where another left off: the words before it are not this aligner's to hear, nor
    reported not heard)."""

    def __init__(self, words, phones, options: AlignOptions = AlignOptions(), sentence_starts=None,
                 log_prior: np.ndarray | None = None, start_word: int = 0) -> None:
        self.options = options
        o = options
        self._one_price = o.near_jump_penalty >= o.jump_penalty and o.back_jump_penalty >= o.jump_penalty and \
            not o.jump_step_penalty
        # subtracted from each frame's log posteriors for the search (recording_prior); GOP and confidence are the
        # posteriors' own
        self.log_prior = None if log_prior is None else np.asarray(log_prior, dtype=np.float64)
        self.script = Script(words, phones, options.min_frames, sentence_starts)
        s = self.script
        self.non_silence = np.array([i for i in range(len(phones)) if i != s.silence])
        if not 0 <= start_word <= s.W:
            raise ValueError(f"start_word {start_word} is not a word of the script, nor the end after its last "
                             f"(0 to {s.W})")
        self.start_word = int(start_word)
        self.window = self._window_around(self.start_word)
        w = self.window
        self.scores = np.full(w.n + 2 * w.nb, NEG)
        # before the first frame the path stands on boundary start_word, which is reached by entering its silence
        self.start = True
        # per pending frame: its window, the local index of each state's predecessor, and (for the first frame
        # after the window moved) the map from those indices to the previous frame's window (-1: none)
        self.backs: list[tuple[Window, np.ndarray, np.ndarray | None]] = []
        self.translation: np.ndarray | None = None
        self.rows: list[np.ndarray] = []  # log posteriors of pending frames
        self.frame = 0
        self.final_path: list[int] = []  # unified state per final frame
        self.final_stats: list[tuple[float, float]] = []  # (gop, posterior) of the final frame's state
        # the alignment score's sums over the final frames: log p(word phone) - log max p, added frame by frame (the
        # same order in the JavaScript port), the frames of words and of speech not in the script
        self.ratio_sum, self.word_frames, self.unscripted_frames = 0.0, 0, 0
        self.emitted_words = 0  # words of final_path reported by push
        self.done_words: list[AlignedWord] = []
        self.scan = 0  # the frame of final_path where the next word run may start
        self.word_runs: list[list] = []  # [word, start, end, (phone runs)] built from final frames

    def _window_around(self, word: int) -> Window:
        o, W = self.options, self.script.W
        wa = max(0, word - o.window_back_words)
        wb = min(W, max(word + o.window_ahead_words, wa + 1))
        return Window(self.script, wa, wb, o)

    # --- Viterbi ------------------------------------------------------------------------------------------
    def _boundaries(self, scores: np.ndarray, w: Window) -> tuple[np.ndarray, np.ndarray]:
        """(B (nb,), source (nb,)): the best score of standing on each boundary after the frame `scores`
        belong to, and the local index of the state that path was in at that frame."""
        o = self.options
        # each boundary's best source: a word's best exit (the first of equals), its silence, its garbage, the first
        # of equals in that order
        candidates, sources = w.candidates, w.candidate_sources  # (3, nb): exits, silences, garbages
        v = scores[:w.n]
        if w.single:
            candidates[0, 1:] = v[w.last_local]
        else:
            # each word's best exit and the first local last-state holding it
            padded = w.padded_chain  # the chain's scores and a NEG that the table's padding points at
            padded[:-1] = v
            table = padded[w.exit_table]  # (words, variants)
            first_hit = table.argmax(axis=1)
            candidates[0, 1:] = table[w.words_range, first_hit]
            sources[0, 1:] = w.exit_table[w.words_range, first_hit]
        candidates[1] = scores[w.n:w.n + w.nb]
        candidates[2] = scores[w.n + w.nb:]
        pick = candidates.argmax(axis=0)
        best = candidates[pick, w.bound]
        source = sources[pick, w.bound]
        # skips: B[b] = max over b' <= b of base[b'] - (b - b') skip_penalty
        lifted = best + w.skip_ramp
        running = np.maximum.accumulate(lifted)
        origin = np.maximum.accumulate(np.where(lifted >= running, w.bound, 0))
        B = running - w.skip_ramp
        B_src = source[origin]
        if len(w.sentence):
            if self._one_price:  # every start from the best boundary (none where no boundary is reached: -inf)
                jumper = int(B.argmax())
                jump = B[jumper] - o.jump_penalty
                better = w.sentence[B[w.sentence] < jump]
                if len(better):
                    B[better] = jump
                    B_src[better] = B_src[jumper]
            elif np.logical_or.reduce(np.isfinite(B)):
                # each start from each sentence's best boundary at the price of their distance (_jump_costs)
                top, first = group_max(B, w.block_starts, w.block, w.blocks)
                values = top[:, None] - self._jump_costs(w)  # (sentences of the window, starts)
                src = values.argmax(axis=0)
                value = values[src, np.arange(len(w.sentence))]
                better = B[w.sentence] < value
                B_src[w.sentence[better]] = B_src[first[src[better]]]
                B[w.sentence[better]] = value[better]
        return B, B_src

    def _jump_costs(self, w: Window) -> np.ndarray:
        """The price of a jump from each sentence of the window (its best boundary) to each sentence start: by the
        distance d in sentences, near_jump_penalty for d = 1, back_jump_penalty for d = 0 or -1, jump_penalty plus
        jump_step_penalty for each sentence past the first otherwise (the lowest that applies)."""
        if w.jump_costs is None:
            o = self.options
            d = w.sentence_block[None, :] - w.blocks[:, None]
            costs = o.jump_penalty + o.jump_step_penalty * np.maximum(np.abs(d) - 1, 0)
            costs = np.where(d == 1, np.minimum(costs, o.near_jump_penalty), costs)
            w.jump_costs = np.where((d == 0) | (d == -1), np.minimum(costs, o.back_jump_penalty), costs)
        return w.jump_costs

    def _step(self, row: np.ndarray, scored: np.ndarray, garbage: float) -> None:
        """One frame: `row` its log posteriors, `scored` the same less the prior (what the search scores), `garbage`
        the garbage states' emission (the best non-silence phone's, less garbage_penalty)."""
        w = self.window
        if self.start:  # the stream starts on boundary start_word (0): as if leaving a silence there
            B = np.full(w.nb, NEG)
            B[self.start_word - w.wa] = 0.0
            B = np.maximum.accumulate(B + w.skip_ramp) - w.skip_ramp
            B_src = np.full(w.nb, -1, dtype=np.int64)
            self.start = False
        else:
            B, B_src = self._boundaries(self.scores, w)
        old = self.scores
        # every state: stay (a chain state only on its phone's last state), or enter from the state before it in
        # the chain or from its boundary; then the frame's emission
        enter = np.concatenate((old[:w.n], B))[w.enter_index]
        enter -= w.enter_price
        stay = old + w.stay_add
        staying = stay >= enter
        new = np.maximum(stay, enter)
        emitted = w.emitted
        emitted[:-1] = scored
        emitted[-1] = garbage
        new += emitted[w.emit_index]
        back = np.where(staying, w.own_local, np.concatenate((w.own_local[:w.n], B_src))[w.enter_index])
        top = np.maximum.reduce(new)  # the ufunc, not ndarray.max's wrapper
        if math.isfinite(top):
            new -= top  # bounded over hours; the same shift for every state changes no decision
        self.scores = new
        self.backs.append((w, back, self.translation))
        self.translation = None
        self.rows.append(row)
        self.frame += 1

    # --- commits ----------------------------------------------------------------------------------------
    def _best_now(self) -> int:
        return int(self.window.global_ids[int(self.scores.argmax())])

    def _trace(self, local: int, count: int) -> list[int]:
        """Unified ids of the path ending in local state `local` at the newest frame, for the last `count`
        frames, oldest first."""
        path = []
        for window, back, translation in reversed(self.backs[len(self.backs) - count:]):
            path.append(int(window.global_ids[local]))
            local = int(back[local])
            if translation is not None and local >= 0:
                local = int(translation[local])
        return path[::-1]

    def _commit(self) -> None:
        """The best path's states of every pending frame but the last lag_frames become final; paths that do not
        pass through the newest final state are dropped; the window moves to where the path is."""
        keep = self.options.lag_frames
        count = len(self.backs) - keep
        path = self._trace(int(self.scores.argmax()), len(self.backs))
        self._finalise(path[:count])
        anchor = path[count - 1]
        if not self.options.prune:
            self.backs = self.backs[count:]
            self.rows = self.rows[count:]
            self._move_window()
            return
        # each current state traced back to the newest final frame: only those that pass through the anchor stay
        states = np.arange(len(self.scores))
        for window, back, translation in reversed(self.backs[count:]):
            states = back[np.maximum(states, 0)] * (states >= 0) - (states < 0)
            if translation is not None:
                states = np.where(states >= 0, translation[np.maximum(states, 0)], -1)
        oldest_final_window = self.backs[count - 1][0]
        ancestors = np.where(states >= 0, oldest_final_window.global_ids[np.maximum(states, 0)], -1)
        self.scores[ancestors != anchor] = NEG
        self.backs = self.backs[count:]
        self.rows = self.rows[count:]
        self._move_window()

    def _move_window(self) -> None:
        s = self.script
        best = self._best_now()
        word = int(s.word_of[best]) if best < s.N else (best - s.N) % (s.W + 1)
        window = self._window_around(word)
        if (window.wa, window.wb) == (self.window.wa, self.window.wb):
            return
        scores = np.full(window.n + 2 * window.nb, NEG)
        to_new = window.local(self.window.global_ids)
        inside = to_new >= 0
        scores[to_new[inside]] = self.scores[inside]
        self.translation = self.window.local(window.global_ids)  # new local -> old local, for the traces
        self.window, self.scores = window, scores

    def _finalise(self, path: list[int]) -> None:
        """Frames become final: their states, and each one's goodness of pronunciation and posterior."""
        s = self.script
        if not path:
            return
        states = np.asarray(path)
        rows = np.asarray(self.rows[:len(path)])  # (k, P)
        phones = np.where(states < s.N, s.phone_of[np.minimum(states, s.N - 1)] if s.N else 0,
                          np.where(states < s.N + s.W + 1, s.silence, -1))
        own = rows[np.arange(len(rows)), np.maximum(phones, 0)]
        best = rows.max(axis=1)
        second = np.partition(rows, -2, axis=1)[:, -2]
        gop = np.where(phones < 0, 0.0, np.where(own >= best, own - second, own - best))
        posterior = np.where(phones < 0, 0.0, np.exp(own))
        self.final_stats += list(zip(gop.tolist(), posterior.tolist()))
        words = states < s.N
        for ratio in (own - best)[words].tolist():
            self.ratio_sum += ratio
        self.word_frames += int(words.sum())
        self.unscripted_frames += int((phones < 0).sum())
        self.final_path += [int(x) for x in states]

    # --- the stream -------------------------------------------------------------------------------------
    def push(self, log_probs: np.ndarray) -> list[AlignedWord]:
        """Frames in; the words whose alignment became final (their end is final and the path has left them)."""
        log_probs = np.asarray(log_probs, dtype=np.float64)
        o = self.options
        for start in range(0, len(log_probs), 1024):  # the scores of a block of frames at once, memory bounded
            rows = log_probs[start:start + 1024]
            scored = rows if self.log_prior is None else rows - self.log_prior
            garbage = (scored[:, self.non_silence].max(axis=1) - o.garbage_penalty).tolist()
            for row, scored_row, garbage_row in zip(rows, scored, garbage):
                self._step(row, scored_row, garbage_row)
                if len(self.backs) >= o.lag_frames + o.commit_every:
                    self._commit()
        return self._new_words(final=False)

    def finish(self) -> Alignment:
        """End of stream: the best path that reaches the end of the script, the words after it skipped (with
        end_at_script_end; else the best path at the last frame)."""
        if self.backs:
            w = self.window
            B, B_src = self._boundaries(self.scores, w)
            end = w.nb - 1
            if self.options.end_at_script_end and w.wb == self.script.W and np.isfinite(B[end]) and B_src[end] >= 0:
                local = int(B_src[end])
            else:
                local = int(self.scores.argmax())
            if self.translation is not None:  # the last frame's commit moved the window: the trace starts in the
                # window that frame was scored in; a state that window lacked (no path reaches it): its best one
                local = int(self.translation[local])
                if local < 0:  # (the windows overlap: the new one is around a word of the old one)
                    held = np.flatnonzero(self.translation >= 0)
                    local = int(self.translation[held[int(self.scores[held].argmax())]])
            self._finalise(self._trace(local, len(self.backs)))
            self.backs, self.rows = [], []
        self.last_words = self._new_words(final=True)  # what this call made final (push returns its own)
        return self.alignment()

    @property
    def position(self) -> tuple[int, bool]:
        """(word index, inside the word) of the best path at the newest frame: inside = reading that word;
        otherwise at the boundary before it (a pause, or speech that is not in the script)."""
        if self.frame == 0:
            return self.start_word, False
        s, best = self.script, self._best_now()
        if best < s.N:
            return int(s.word_of[best]), True
        return int((best - s.N) % (s.W + 1)), False

    def _new_words(self, final: bool) -> list[AlignedWord]:
        """The words of the final frames not reported yet (a word still open at the newest final frame only when
        `final`); the scan goes on from where the last one stopped, so each frame is read once."""
        words, self.scan = self._words(final, self.scan)
        self.done_words += words
        self.emitted_words += len(words)
        return words

    def _words(self, final: bool, t: int = 0) -> tuple[list[AlignedWord], int]:
        """(the words of the final frames from frame t, the frame after the last of them)."""
        s, path = self.script, self.final_path
        words, T = [], len(path)
        while t < T:
            state = path[t]
            if state >= s.N:
                t += 1
                continue
            word = int(s.word_of[state])
            end = t
            while end < T and path[end] < s.N and s.word_of[path[end]] == word and \
                    not (end > t and s.first[path[end]] and path[end - 1] != path[end]):
                end += 1
            if end == T and not final:
                break
            if end < T and not self._goes_on(word, bool(s.last[path[end - 1]]), path[end]):
                # live: left to where no path goes from there (broken off inside the word, or back to a word that
                # does not start a sentence): a path given up for a better one (a moment's jump), not the word read
                t = end
                continue
            words.append(self._aligned_word(word, t, end))
            t = end
        return words, t

    def _goes_on(self, word: int, exited: bool, state: int) -> bool:
        """Whether a path can go from word `word` (from its exit, or else from inside it) to `state` (a word's state
        or a boundary's silence or garbage, both reached from a boundary b): from inside only to the next word or
        boundary; from the exit to any boundary after it (skips) or a sentence's start (jumps)."""
        s = self.script
        b = int(s.word_of[state]) if state < s.N else (state - s.N) % (s.W + 1)
        if not exited:
            return b == word + 1
        return b > word or bool(s.sentence_start[b])

    def _aligned_word(self, word: int, start: int, end: int) -> AlignedWord:
        s = self.script
        phones = []
        t = start
        while t < end:
            state = self.final_path[t]
            variant_phone = self._phone_position(state)
            stop = t
            while stop < end and self._phone_position(self.final_path[stop]) == variant_phone:
                stop += 1
            gops = [self.final_stats[i][0] for i in range(t, stop)]
            posts = [self.final_stats[i][1] for i in range(t, stop)]
            phones.append(AlignedPhone(s.phones[int(s.phone_of[state])], t, stop, float(np.mean(gops)),
                                       float(np.mean(posts))))
            t = stop
        return AlignedWord(word, s.texts[word], start, end, tuple(phones),
                           float(np.mean([p.gop for p in phones])), float(np.mean([p.confidence for p in phones])))

    def _phone_position(self, state: int) -> int:
        """A chain state -> the index of its phone's first state (states of one phone of one variant share it)."""
        return int(self.script.phone_start[state])

    def alignment(self) -> Alignment:
        s, path = self.script, self.final_path
        words: list[AlignedWord] = []
        for word in self.done_words:  # a word the live path left and re-entered (no pruning) is one word; offline
            # (one pruned path) a word that follows itself was read twice
            if not self.options.prune and words and words[-1].index == word.index and \
                    words[-1].end_frame == word.start_frame:
                last = words.pop()
                phones = last.phones + word.phones
                word = AlignedWord(word.index, word.text, last.start_frame, word.end_frame, phones,
                                   float(np.mean([p.gop for p in phones])),
                                   float(np.mean([p.confidence for p in phones])))
            words.append(word)
        heard = {w.index for w in words}
        silences, unscripted = [], []
        t = 0
        while t < len(path):
            state = path[t]
            if state < s.N:
                t += 1
                continue
            kind = silences if state < s.N + s.W + 1 else unscripted
            end = t
            while end < len(path) and path[end] == state:
                end += 1
            kind.append((t, end))
            t = end
        not_heard = [w for w in range(self.start_word, s.W) if w not in heard]
        score = alignment_score(self.ratio_sum, self.word_frames, self.unscripted_frames, len(not_heard),
                                s.W - self.start_word)
        return Alignment(words, not_heard, len(path), silences, unscripted, score, score < self.options.min_score)


def alignment_score(ratio_sum: float, word_frames: int, unscripted_frames: int, not_heard: int, words: int) -> float:
    """The alignment score (the module's doc): the mean over word and unscripted frames of log p(aligned phone) -
    log max p, each unscripted frame counting UNSCRIPTED_SCORE (0 with no such frame), plus NOT_HEARD_SCORE x the
    share of the words not heard."""
    frames = word_frames + unscripted_frames
    fit = (ratio_sum + UNSCRIPTED_SCORE * unscripted_frames) / frames if frames else 0.0
    return fit + (NOT_HEARD_SCORE * not_heard / words if words else 0.0)


def align(log_probs: np.ndarray, words, phones, options: AlignOptions = AlignOptions(),
          sentence_starts=None, prior_scale: float = PRIOR_SCALE) -> Alignment:
    """The alignment of one recording's log-posteriors (T, P) to its words (objects with .text and
    .pronunciations: tuples of the model's phone names), the posteriors divided by the recording's phone prior to
    the power prior_scale (0: not)."""
    aligner = ScriptAligner(words, phones, options, sentence_starts, recording_prior(log_probs, prior_scale))
    aligner.push(log_probs)
    return aligner.finish()


# --- follow-along ---------------------------------------------------------------------------------------------

class Position(NamedTuple):
    """Where the reader is at the newest frame: reading word `index` (inside), or at the boundary before it (a
    pause, or speech that is not in the script)."""

    index: int
    inside: bool


class Follower:
    """Follow-along: where a reader is in a known text, live (`speechattn mic --script`, Model.follow, the clients).

    A ScriptAligner with LIVE options (final 100 ms behind the newest frame; a reader may pause, repeat, skip or
    start again) and what a display needs: `position`, the aligned `phone` there, the words `heard` (each script
    position's latest reading) and the words passed over.  push(log_probs (R, P)) -> the words made final (in time
    order; a word read again comes again); finish() -> the last ones, and `alignment` is the whole Alignment.
    `start_word`: the reader is taken up at this word (a stream that goes on from another's position, as
    RemoteStream does across a server's restart); the words before it are neither heard nor passed over here."""

    def __init__(self, words, phones, sentence_starts=None, options: AlignOptions = LIVE, start_word: int = 0) -> None:
        self.words = list(words)
        self.aligner = ScriptAligner(self.words, phones, options, sentence_starts, start_word=start_word)
        self.heard: dict[int, AlignedWord] = {}  # script position -> its latest reading
        self.furthest = start_word - 1  # the furthest script position heard
        self.alignment: Alignment | None = None  # after finish()

    def push(self, log_probs: np.ndarray) -> list[AlignedWord]:
        return self._heard(self.aligner.push(log_probs))

    def finish(self) -> list[AlignedWord]:
        self.alignment = self.aligner.finish()
        return self._heard(self.aligner.last_words)

    def _heard(self, words: list[AlignedWord]) -> list[AlignedWord]:
        for word in words:
            self.heard[word.index] = word
            self.furthest = max(self.furthest, word.index)
        return words

    @property
    def position(self) -> Position:
        return Position(*self.aligner.position)

    @property
    def phone(self) -> str | None:
        """The best path's phone at the newest frame: the word's aligned phone, "sil" between words, None in speech
        that is not in the script (and before the first frame)."""
        a = self.aligner
        if a.frame == 0:
            return None
        s, best = a.script, a._best_now()
        return s.phones[int(s.phone_of[best])] if best < s.N else SILENCE if best < s.N + s.W + 1 else None

    def not_heard(self) -> list[int]:
        """Positions before the furthest word heard that no reading went through (passed over so far; after
        finish(), `alignment.not_heard` has the words after it too)."""
        return [i for i in range(self.aligner.start_word, self.furthest) if i not in self.heard]


def word_event(word: AlignedWord, not_heard, frames_per_second: int = 100) -> dict:
    """A word made final as `speechattn mic --script` and `node export/node/follow.mjs` print it (one JSON line):
    times in seconds (3 decimals), gop to 3 decimals, the positions passed over so far."""
    return {"type": "word", "index": word.index, "word": word.text, "start": round(word.start_frame / frames_per_second, 3),
            "end": round(word.end_frame / frames_per_second, 3), "gop": round(word.gop, 3), "not_heard": list(not_heard)}
