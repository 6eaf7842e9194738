"""The training data path: lhotse cuts -> (16 kHz audio, frame labels), augmented on the fly.

Kept off the training step's critical path (bench/train_speed.py measures it):
  - every utterance is decoded and resampled to 16 kHz once, into an int16 memory-mapped file that
    the loader workers share (AudioStore); an item reads only the samples of its crop;
  - an item draws its speed factor and its crop first, then perturbs and augments only that crop
    (4 s), not the whole utterance; speed perturbation resamples the crop (soxr) and scales the
    phone alignment by the same factor, so the labels move with the audio;
  - simulated rooms come from a pool built once per worker (augment.RoomPool), babble from crops of
    other utterances in the same store, recorded noise (augment.noise_dir) from its training clips decoded once
    per worker (noise.TrainingNoise).
Item i of epoch e is a function of (seed, e, i) alone, so a resumed run sees the same data.  Features
are computed from the audio by the model's own frontend in the training step, as in the ONNX graph.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

import numpy as np

from speechattn.audio import FRAMES_PER_SECOND, HOP_SAMPLES, SAMPLE_RATE, num_frames
from speechattn.data.augment import AugmentConfig, RoomPool, augment_waveform
from speechattn.data.noise import TrainingNoise
from speechattn.files import atomic_path, atomic_write_text

log = logging.getLogger(__name__)
INT16_SCALE = 32768.0


def cut_audio(cut) -> np.ndarray:
    """A cut's audio as mono float32 at 16 kHz."""
    if cut.sampling_rate != SAMPLE_RATE:
        cut = cut.resample(SAMPLE_RATE)
    audio = cut.load_audio()
    return (audio.mean(axis=0) if audio.ndim == 2 else audio).astype(np.float32)


def cut_intervals(cut) -> np.ndarray:
    """(n, 3) float64 rows (start s, end s, phone index) of the cut's supervision, relative to the cut."""
    from speechattn.data.corpora import supervision_intervals

    return np.asarray(supervision_intervals(cut.supervisions[0]), dtype=np.float64).reshape(-1, 3)


def _labels(intervals: np.ndarray, frames: int, speed: float = 1.0, first_frame: int = 0) -> np.ndarray:
    """Frame labels of intervals played `speed` times faster, from output frame `first_frame` on."""
    from speechattn.data.labels import frame_labels

    shift = first_frame / FRAMES_PER_SECOND
    return frame_labels(((s / speed - shift, e / speed - shift, int(p)) for s, e, p in intervals), frames)


class AudioStore:
    """The 16 kHz mono audio of a list of cuts, decoded once into one int16 file (memory-mapped, so loader
    workers share it through the page cache).  The file's name is a hash of the cuts' ids and sources:
    a later run on the same data reuses it, different data never does.  A cut listed more than once (a set
    listed twice in train.sets weighs twice) is decoded and stored once."""

    FORMAT = 2  # the index holds each cut's start and length (format 1: one offset per cut, duplicates stored again)

    def __init__(self, cuts, directory: str | Path, progress: bool = False) -> None:
        from tqdm import tqdm

        identities = [json.dumps([c.id, c.recording.to_dict()["sources"], c.start, c.duration], sort_keys=True,
                                 default=str) for c in cuts]
        key = hashlib.sha256(json.dumps([self.FORMAT, identities]).encode()).hexdigest()[:16]
        directory = Path(directory)
        data_path, index_path = directory / f"{key}.i16", directory / f"{key}.json"
        if not index_path.exists():
            directory.mkdir(parents=True, exist_ok=True)
            stored, places, total = {}, [], 0  # identity -> (start, length) where it was written; each cut's
            # a temporary name of this writer's own, renamed when whole: two runs started at once on the same
            # data each decode it and the second rename replaces the first with the same bytes (a shared
            # temporary name made the slower run fail); the index goes last, so it never names a partial file
            with atomic_path(data_path) as temporary, open(temporary, "wb") as handle:
                for cut, identity in tqdm(zip(cuts, identities), total=len(cuts), desc="decoding audio once",
                                          unit="utt", disable=not progress):
                    if identity not in stored:
                        samples = np.clip(np.round(cut_audio(cut) * INT16_SCALE), -32768, 32767).astype("<i2")
                        handle.write(samples.tobytes())
                        stored[identity] = (total, len(samples))
                        total += len(samples)
                    places.append(stored[identity])
            atomic_write_text(index_path, json.dumps({"format": self.FORMAT, "starts": [p[0] for p in places],
                                                      "lengths": [p[1] for p in places], "total": total}))
            log.info("decoded %d utterances (%.2f h; %d listed) into %s", len(stored), total / SAMPLE_RATE / 3600,
                     len(cuts), data_path)
        index = json.loads(index_path.read_text())
        self.starts = np.asarray(index["starts"], dtype=np.int64)
        self.lengths = np.asarray(index["lengths"], dtype=np.int64)
        self.samples = np.memmap(data_path, dtype="<i2", mode="r", shape=(index["total"],)) if index["total"] else \
            np.zeros(0, dtype="<i2")

    def __len__(self) -> int:
        return len(self.starts)

    def length(self, index: int) -> int:
        return int(self.lengths[index])

    def segment(self, index: int, start: int = 0, stop: int | None = None) -> np.ndarray:
        """Samples [start, stop) of utterance `index` as float32."""
        length = self.length(index)
        stop = length if stop is None else min(stop, length)
        start = max(0, min(start, stop))
        base = int(self.starts[index])
        return self.samples[base + start : base + stop].astype(np.float32) / np.float32(INT16_SCALE)


class _CutAudio:
    """AudioStore's interface over the cuts themselves (decoded on every access): evaluation, show-item, tests."""

    def __init__(self, cuts) -> None:
        self.cuts = cuts

    def length(self, index: int) -> int:
        cut = self.cuts[index]
        return int(round(cut.duration * SAMPLE_RATE))

    def segment(self, index: int, start: int = 0, stop: int | None = None) -> np.ndarray:
        audio = cut_audio(self.cuts[index])
        return audio[max(0, start) : stop]


class FrameLabelDataset:
    """Map-style dataset over a lhotse CutSet; item i of epoch e is a deterministic function of (seed, e, i)."""

    def __init__(self, cuts, augment: AugmentConfig | None = None, crop_seconds: float | None = 4.0,
                 seed: int = 0, store: AudioStore | None = None) -> None:
        self.cuts = list(cuts)
        self.augment = augment
        self.crop_seconds = crop_seconds
        self.seed = seed
        self.audio = store if store is not None else _CutAudio(self.cuts)
        self.intervals = [cut_intervals(cut) for cut in self.cuts]
        self.rooms = RoomPool(augment, seed) if augment is not None else None
        self.recorded_noise = TrainingNoise(augment.noise_dir) if augment is not None and augment.noise_dir else None

    def __len__(self) -> int:
        return len(self.cuts)

    def load(self, cut, rng: np.random.Generator | None):
        """(audio (N,) float32 16 kHz, labels (ceil(N / 160),) int64) of one of the dataset's cuts."""
        return self.item(next(i for i, known in enumerate(self.cuts) if known is cut or known.id == cut.id), rng)

    def item(self, index: int, rng: np.random.Generator | None):
        """Item `index` with the draws of `rng`; no rng: the whole utterance, unaugmented."""
        intervals = self.intervals[index]
        if rng is None or self.augment is None:
            audio = self.audio.segment(index)
            labels = _labels(intervals, num_frames(len(audio)))
            if rng is not None and self.crop_seconds:
                audio, labels = self._crop_plain(audio, labels, rng)
            return audio, labels
        speed = float(rng.choice(self.augment.speed_factors))
        source_length = self.audio.length(index)
        output_frames = num_frames(int(source_length / speed))
        crop_frames = int(self.crop_seconds * FRAMES_PER_SECOND) if self.crop_seconds else output_frames
        first_frame = 0
        if output_frames > crop_frames:
            first_frame = int(rng.integers(0, output_frames - crop_frames + 1))
        frames = min(crop_frames, output_frames)
        source_start = int(round(first_frame * HOP_SAMPLES * speed))
        source_stop = source_start + int(np.ceil(frames * HOP_SAMPLES * speed)) + HOP_SAMPLES
        audio = self.audio.segment(index, source_start, source_stop)
        if speed != 1.0:
            import soxr

            audio = soxr.resample(audio, SAMPLE_RATE * speed, SAMPLE_RATE, quality="HQ").astype(np.float32)
        audio = audio[: frames * HOP_SAMPLES]
        if num_frames(len(audio)) < frames:  # the utterance ended inside the last hop
            frames = num_frames(len(audio))
        labels = _labels(intervals, frames, speed, first_frame)
        babble = None
        if self.augment.babble_share > 0 and len(self.cuts) > 1:
            others = rng.choice(len(self.cuts), size=min(3, len(self.cuts) - 1), replace=False)
            babble = []
            for other in others:
                start = int(rng.integers(0, max(1, self.audio.length(int(other)) - len(audio))))
                babble.append(self.audio.segment(int(other), start, start + len(audio)))
        audio = augment_waveform(audio, rng, self.augment, babble, self.rooms, self.recorded_noise)
        return audio, labels

    def _crop_plain(self, audio, labels, rng):
        crop_frames = int(self.crop_seconds * FRAMES_PER_SECOND)
        if len(labels) <= crop_frames:
            return audio, labels
        start = int(rng.integers(0, len(labels) - crop_frames + 1))
        return audio[start * HOP_SAMPLES : (start + crop_frames) * HOP_SAMPLES], labels[start : start + crop_frames]

    def __getitem__(self, index):
        """Item `(epoch, index)`, or `index` of epoch 0.  The epoch travels in the index so that one loader (and
        its worker processes) serves a whole run: no state to set in workers at each new epoch."""
        epoch, index = index if isinstance(index, tuple) else (0, index)
        return self.item(index, np.random.default_rng([self.seed, epoch, index]))


UNSAFE_SOURCES = ("command", "url")  # lhotse runs a 'command' source through a shell, fetches a 'url' one


def with_audio_found(recordings, manifest: Path):
    """Every file source, found, or one line naming the first missing file.  `speechattn prepare` writes absolute
    paths (data/manifests.py).  Older manifests hold paths relative to the folder `prepare` ran in: from another
    working directory they are found again from the manifest's folder or one of its parents, the first of the
    working directory and those folders that holds every recording's file (the same base for all)."""
    from speechattn.data.manifests import sources_based
    from speechattn.errors import SpeechattnError

    relative = [(r, s) for r in recordings for s in r.sources if s.type == "file" and not Path(s.source).is_absolute()]
    if relative:
        folder = manifest.resolve().parent
        bases = list(dict.fromkeys([Path.cwd(), folder, *folder.parents[:4]]))
        base = next((b for b in bases if all((b / s.source).exists() for _, s in relative)), None)
        if base is None:
            recording, source = next(((r, s) for r, s in relative if not Path(s.source).exists()), relative[0])
            raise SpeechattnError(f"{manifest}: recording {recording.id}'s audio {source.source} is neither here nor "
                                  "beside the manifest (its paths are relative to where `speechattn prepare` ran: run "
                                  "from there, or prepare again, which writes absolute paths)")
        if base != Path.cwd():
            recordings = sources_based(recordings, base)
    missing = next(((r, s) for r in recordings for s in r.sources if s.type == "file" and not Path(s.source).exists()),
                   None)
    if missing:
        raise SpeechattnError(f"{manifest}: recording {missing[0].id}'s audio {missing[1].source}: no such file")
    return recordings


MANIFEST_KINDS = {"RecordingSet": "recordings", "SupervisionSet": "supervisions", "CutSet": "cuts"}


def read_manifest(path: Path, kind):
    """A lhotse RecordingSet or SupervisionSet (`kind`) from a file, or one line saying why not: a damaged file
    (data/manifests.py: manifest_lines), one of another kind; an empty file is an empty set."""
    from lhotse import load_manifest

    from speechattn.data.manifests import manifest_lines
    from speechattn.errors import SpeechattnError

    if not any(True for _ in manifest_lines(path)):  # damaged: one line; empty: lhotse cannot tell its kind
        return kind.from_items([])
    try:
        manifest = load_manifest(path)
    except Exception as error:  # lhotse's errors for JSON that is not a manifest
        detail = str(error).splitlines()[0][:120] if str(error) else ""
        raise SpeechattnError(f"{path}: not a readable lhotse manifest ({type(error).__name__}: {detail})") from None
    if not isinstance(manifest, kind):
        held = MANIFEST_KINDS.get(type(manifest).__name__, type(manifest).__name__)
        raise SpeechattnError(f"{path}: holds lhotse {held}, not {MANIFEST_KINDS[kind.__name__]} (`speechattn "
                              "prepare` writes NAME_recordings_SPLIT and NAME_supervisions_SPLIT side by side)")
    return manifest


def cuts_from_manifests(recordings_path, supervisions_path, allow_command_sources: bool = False):
    """One cut per supervision (the whole utterance), from the files `speechattn prepare` writes.

    A recordings manifest whose audio comes from a shell command or a URL is refused unless the user
    says they trust it: manifests travel, and lhotse would run such a command as it loads the audio.
    Supervisions without phone alignments, or whose recording is not in the recordings manifest, are refused
    with the first one named: they would be dropped or fail later."""
    from lhotse import CutSet, RecordingSet, SupervisionSet

    from speechattn.errors import SpeechattnError

    recordings = read_manifest(Path(recordings_path), RecordingSet)
    if not allow_command_sources:
        for recording in recordings:
            for source in getattr(recording, "sources", ()):
                if source.type in UNSAFE_SOURCES:
                    raise SpeechattnError(
                        f"{recordings_path}: recording {recording.id} gets its audio from a {source.type} "
                        f"({str(source.source)[:60]!r}); refusing to run it (pass --allow-command-sources "
                        "if you trust this manifest)")
    recordings = with_audio_found(recordings, Path(recordings_path))
    supervisions = read_manifest(Path(supervisions_path), SupervisionSet)
    ids = set(recordings.ids)
    for supervision in supervisions:
        phones = (supervision.alignment or {}).get("phone")
        if phones is None:
            other = ", ".join(supervision.alignment or {}) or "none"
            raise SpeechattnError(f"{supervisions_path}: supervision {supervision.id} has no phone alignment "
                                  f"(alignment.phone; alignments it has: {other}): frame labels come from the "
                                  "phone alignments `speechattn prepare` writes")
        if supervision.recording_id not in ids:
            raise SpeechattnError(f"{supervisions_path}: supervision {supervision.id}'s recording "
                                  f"{supervision.recording_id} is not in {recordings_path}")
    cuts = CutSet.from_manifests(recordings=recordings, supervisions=supervisions)
    return cuts.trim_to_supervisions(keep_overlapping=False)


def collate(items: list[tuple[np.ndarray, np.ndarray]]):
    """Pad a batch: audio (B, N_max) float32, labels (B, T_max) int64 padded with IGNORE, lengths (B,) frames."""
    import torch

    from speechattn.phones import IGNORE

    longest = max(len(a) for a, _ in items)
    longest += (-longest) % HOP_SAMPLES
    audio = torch.zeros(len(items), longest)
    labels = torch.full((len(items), longest // HOP_SAMPLES), IGNORE, dtype=torch.int64)
    lengths = torch.zeros(len(items), dtype=torch.int64)
    for row, (samples, frame_labels) in enumerate(items):
        audio[row, : len(samples)] = torch.from_numpy(samples)
        labels[row, : len(frame_labels)] = torch.from_numpy(frame_labels)
        lengths[row] = len(frame_labels)
    return audio, labels, lengths
