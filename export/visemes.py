"""Phones -> mouth shapes for lip sync: three viseme sets, per-frame weights, and cues with animation rules.

Sets (their table: registry.VISEME_TABLES; every one of the 40 phones maps to exactly one shape of each;
tests/test_visemes.py):

  rhubarb  Rhubarb Lip Sync's nine mouth shapes, A-F basic and G, H, X extended (its README, "Mouth shapes"),
           the letters 2D pipelines (After Effects, Spine, Moho/OpenToonz, Godot importers) read.
  oculus   the 15 visemes of Oculus/Meta Lipsync (sil PP FF TH DD kk CH SS nn RR aa E ih oh ou).
  vrm      VRM's five mouth blendshapes A I U E O, plus "sil": the closed mouth (every blendshape 0).

Two outputs from the same tables:

  weights  per 10 ms frame, the model's phone posteriors summed per shape: (T, S), each row sums to 1.
           Smooth, available at the provisional latency; what 3D blendshapes (VRM, VMC) want.
  cues     one shape per interval, from the decoder's final segments and three animation rules (CueRules):
           a shape shorter than `min_hold_frames` is too brief to be seen and joins the shape before it;
           closed lips for P, B, M are kept however short (a bilabial never vanishes), and lengthened to
           the minimum hold with frames from the shape before; a silence shorter than `bridge_frames`
           between two shapes holds the shape before it (the mouth does not snap shut inside a phrase); the
           pause that ends a stream is kept however short (the mouth comes to rest).
           Cues tile the stream from 0, like Rhubarb's.

CueMaker is online: push(final segments) -> the cues made final by them, finish() -> the rest.  It sees
segments one at a time in order and keeps two runs (the open one and the one before it), so any chunking
of the audio gives the same cues as the whole file (the decoder's segments are chunking-invariant).

Shapes: T frames, P phones (the model's, in output order: StreamingModel.phones), S shapes of a set.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from speechattn_export.registry import SILENCE, VISEME_TABLES  # noqa: F401  (SILENCE: for callers)
from speechattn_export.segments import Segment

BILABIALS = ("P", "B", "M")


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: its matrices are cached per set
class VisemeSet:
    name: str
    shapes: tuple[str, ...]  # output order; weights columns
    rest: str  # the shape of silence (mouth at rest)
    closed_lips: str  # the shape of P, B, M
    covers: dict[str, tuple[str, ...]]  # shape -> the phones it is used for (each phone in exactly one)
    descriptions: dict[str, str]

    @property
    def table(self) -> dict[str, str]:
        """phone -> shape."""
        return {phone: shape for shape, phones in self.covers.items() for phone in phones}

    def matrix(self, phones: tuple[str, ...] | list[str]) -> np.ndarray:
        """(P, S) 0/1: row p has a single 1, in the column of phone p's shape (built once per phone order: the
        live paths ask for it on every push)."""
        return _matrix(self, tuple(phones))


@functools.lru_cache(maxsize=16)
def _matrix(visemes: VisemeSet, phones: tuple[str, ...]) -> np.ndarray:
    table, column = visemes.table, {shape: i for i, shape in enumerate(visemes.shapes)}
    unknown = [p for p in phones if p not in table]
    if unknown:
        raise ValueError(f"the {visemes.name} viseme set has no shape for {', '.join(unknown)}")
    out = np.zeros((len(phones), len(visemes.shapes)))
    out[np.arange(len(phones)), [column[table[p]] for p in phones]] = 1.0
    out.flags.writeable = False  # shared by every caller
    return out


SETS = {name: VisemeSet(name, tuple(t["shapes"]), t["rest"], t["closed_lips"], dict(t["covers"]),
                        dict(t["descriptions"])) for name, t in VISEME_TABLES.items()}  # the table: registry.py
RHUBARB, OCULUS, VRM = SETS["rhubarb"], SETS["oculus"], SETS["vrm"]
VRM_BLENDSHAPES = ("A", "I", "U", "E", "O")  # what a VRM 0.x avatar's mouth blendshape clips are called


def viseme_set(name: str) -> VisemeSet:
    try:
        return SETS[name]
    except KeyError:
        raise ValueError(f"viseme set must be one of {', '.join(SETS)}, not {name!r}") from None


def frame_weights(log_probs: np.ndarray, visemes: VisemeSet, phones) -> np.ndarray:
    """(T, P) log posteriors -> (T, S) shape weights, each row summing to 1."""
    posteriors = np.exp(np.asarray(log_probs, dtype=np.float64))
    weights = posteriors @ visemes.matrix(phones)
    return weights / np.maximum(weights.sum(axis=1, keepdims=True), 1e-12)


@dataclass(frozen=True)
class CueRules:
    min_hold_frames: int = 7  # 70 ms: two frames of a 30 fps animation, so every shape is seen
    bridge_frames: int = 10  # a pause up to 100 ms inside speech holds the shape before it

    def __post_init__(self) -> None:
        if self.min_hold_frames < 1 or self.bridge_frames < 0:
            raise ValueError("min_hold_frames must be >= 1 and bridge_frames >= 0")


@dataclass(frozen=True)
class Cue:
    start_frame: int
    end_frame: int  # exclusive
    shape: str

    @property
    def frames(self) -> int:
        return self.end_frame - self.start_frame


@dataclass
class _Run:  # a cue being built
    start: int
    end: int
    shape: str
    bilabial: bool  # holds P, B or M: closed lips that must not vanish


class CueMaker:
    """push(segments) -> cues made final by them; finish() -> the rest.  `current` is the shape of the newest
    final frames (what a live display shows before its cue is final)."""

    def __init__(self, visemes: VisemeSet, phones, rules: CueRules = CueRules()) -> None:
        self.visemes, self.rules = visemes, rules
        table = visemes.table
        self.shape_of = [table[p] for p in phones]
        self.bilabial = [p in BILABIALS for p in phones]
        self.open: _Run | None = None  # the run segments still extend
        self.pending: _Run | None = None  # the run before it: later rules may still lengthen or shorten it
        self.emitted = 0  # frames covered by final cues

    @property
    def current(self) -> str:
        return self.open.shape if self.open else self.visemes.rest

    def push(self, segments: list[Segment]) -> list[Cue]:
        done: list[Cue] = []
        for s in segments:
            if s.end_frame <= s.start_frame:
                continue
            shape, bilabial = self.shape_of[s.phone], self.bilabial[s.phone]
            if self.open is not None and self.open.shape == shape:
                self.open.end, self.open.bilabial = s.end_frame, self.open.bilabial or bilabial
                continue
            if self.open is not None:
                done += self._close(self.open, last=False)
            self.open = _Run(s.start_frame, s.end_frame, shape, bilabial)
        return done

    def finish(self) -> list[Cue]:
        done = self._close(self.open, last=True) if self.open is not None else []
        if self.pending is not None:
            done.append(self._emit(self.pending))
        self.open = self.pending = None
        return done

    def _close(self, run: _Run, last: bool) -> list[Cue]:
        """The open run ends (a different shape follows, or the stream ends): apply the rules against the run
        before it; that run becomes final unless this one joined it."""
        previous, rules, rest = self.pending, self.rules, self.visemes.rest
        if previous is None:
            self.pending = run
            return []
        pause = run.shape == rest and not run.bilabial
        if pause and not last and run.end - run.start < rules.bridge_frames:
            previous.end = run.end  # a short pause inside speech: hold the shape before it
            return []
        if run.end - run.start < rules.min_hold_frames and not (last and pause):  # the mouth closes at the end
            if not run.bilabial:
                previous.end = run.end  # too short to be seen: it joins the shape before it
                return []
            give = min(rules.min_hold_frames - (run.end - run.start),
                       max(0, previous.end - previous.start - rules.min_hold_frames))
            previous.end -= give  # closed lips lengthened with frames from the shape before
            run.start -= give
        if previous.shape == run.shape:  # a joined pause or short shape made neighbours equal
            previous.end, previous.bilabial = run.end, previous.bilabial or run.bilabial
            return []
        self.pending = run
        return [self._emit(previous)]

    def _emit(self, run: _Run) -> Cue:
        self.emitted = run.end
        return Cue(run.start, run.end, run.shape)


def make_cues(segments: list[Segment], visemes: VisemeSet, phones, rules: CueRules = CueRules()) -> list[Cue]:
    """All cues of one utterance's segments."""
    maker = CueMaker(visemes, phones, rules)
    return maker.push(segments) + maker.finish()


def cue_labels(cues: list[Cue], visemes: VisemeSet, num_frames: int) -> np.ndarray:
    """Frame labels (num_frames,) as shape indices of the set."""
    column = {shape: i for i, shape in enumerate(visemes.shapes)}
    labels = np.full(num_frames, column[visemes.rest], dtype=np.int64)
    for c in cues:
        labels[c.start_frame : min(c.end_frame, num_frames)] = column[c.shape]
    return labels



def cue_dicts(cues: list[Cue], visemes: VisemeSet, duration_seconds: float, frames_per_second: int = 100) -> list[dict]:
    """Cues in seconds, the last cut at the duration truncated to 10 ms (as Rhubarb does); an empty stream is one
    cue of the rest shape (JS: cueDicts)."""
    end_of_file = int(duration_seconds * frames_per_second + 1e-9)
    out = []
    for cue in cues:
        end = min(cue.end_frame, end_of_file)
        if end > cue.start_frame:
            out.append({"start": cue.start_frame / frames_per_second, "end": end / frames_per_second, "value": cue.shape})
    if not out and end_of_file > 0:
        out.append({"start": 0.0, "end": end_of_file / frames_per_second, "value": visemes.rest})
    return out


# Rhubarb's --extendedShapes: the basic shape each optional one becomes when it is left out (getBasicShape in Rhubarb's
# rhubarb/src/animation/animationRules.cpp); A-F are always used.
RHUBARB_BASIC_SHAPE = {"G": "A", "H": "C", "X": "A"}


def rhubarb_shapes(extended: str = "GHX") -> frozenset[str]:
    """The shapes Rhubarb uses with --extendedShapes EXTENDED: A-F and each letter given, in either case ("" for A-F
    only); a letter that names no shape is refused with Rhubarb's message."""
    shapes = set("ABCDEF")
    for letter in extended:
        if letter.upper() not in RHUBARB_BASIC_SHAPE and letter.upper() not in shapes:
            raise ValueError(f"{letter} is not a valid Shape value.")
        shapes.add(letter.upper())
    return frozenset(shapes)


def rhubarb_shape(shape: str, shapes: frozenset[str]) -> str:
    """`shape`, or its basic shape where `shapes` (rhubarb_shapes) leaves it out."""
    return shape if shape in shapes else RHUBARB_BASIC_SHAPE[shape]


def limit_cues(cues: list[Cue], shapes: frozenset[str]) -> list[Cue]:
    """Rhubarb's cues with only `shapes`: each shape left out becomes its basic one, and neighbours that then show the
    same shape are joined (Rhubarb does this last, on its joining timeline)."""
    out: list[Cue] = []
    for cue in cues:
        shape = rhubarb_shape(cue.shape, shapes)
        if out and out[-1].shape == shape and out[-1].end_frame == cue.start_frame:
            out[-1] = Cue(out[-1].start_frame, cue.end_frame, shape)
        else:
            out.append(Cue(cue.start_frame, cue.end_frame, shape))
    return out
