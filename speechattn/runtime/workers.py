"""The workers of corpus jobs (runtime/batch.py): what one process or Ray actor holds (the model, loaded once) and
does to one file.  Settings are picklable and name the model as the user gave it, resolved where the worker runs (on
a cluster, each node's own install)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from speechattn.audio import AudioError
from speechattn.errors import SpeechattnError, one_line
from speechattn.files import atomic_write_text
from speechattn.runtime.align import align_file, load_lexicon, read_text, render, script_words
from speechattn.runtime.batch import FileJob, FileResult
from speechattn.runtime.formats import write_transcript
from speechattn.runtime.transcribe import RhubarbOptions, resolve_model, transcribe_file
from speechattn_export.pipeline import DecodingOptions


@dataclass(frozen=True)
class TranscribeSettings:
    """What every worker of a batch job (runtime/batch.py) needs to transcribe a file on its own: picklable, the
    model by the name or path the user gave (resolved where the worker runs: on a cluster, each node's install)."""

    model: str | None
    output_format: str
    options: DecodingOptions
    rhubarb: RhubarbOptions | None = None
    threads: int = 1  # onnxruntime threads of the stream: a file's numbers depend on it (transcribe --threads)
    phases: int = 1  # transcribe --phases: the posteriors averaged over that many shifts of the audio


class TranscribeWorker:
    """A batch worker: the model loaded once (settings.threads onnxruntime threads, one by default), then one file at
    a time, each output written whole or not at all; a file that cannot be read or written comes back as its error
    line."""

    def __init__(self, settings: TranscribeSettings, model=None) -> None:
        """`model`: one loaded already in this process with settings.threads (a job run here need not load twice)."""
        from speechattn_export.stream_client import StreamingModel

        self.settings = settings
        self.model = model or StreamingModel(resolve_model(settings.model), num_threads=settings.threads)

    def __call__(self, job: FileJob) -> FileResult:
        try:
            transcript = transcribe_file(self.model, Path(job.source), self.settings.options,
                                         phases=self.settings.phases)
            write_transcript(transcript, self.settings.output_format, Path(job.target), self.settings.rhubarb)
        except (AudioError, ValueError) as error:
            return FileResult(job.source, 0.0, one_line(error))
        except OSError as error:
            return FileResult(job.source, 0.0, f"{one_line(job.source)}: cannot write {job.target} "
                                               f"({error.strerror or error})")
        return FileResult(job.source, transcript.duration)


@dataclass(frozen=True)
class AlignSettings:
    """What every worker of an alignment job (runtime/batch.py) needs: picklable; the model by the name or path the
    user gave (resolved where the worker runs)."""

    model: str | None
    output_format: str
    dictionary: str | None = None
    force: bool = False  # write recordings whose text does not match the speech (otherwise each fails, unalignable)
    phases: int = 1  # align --phases: the posteriors averaged over that many shifts of the audio
    boundaries: str = "hmm"  # align --boundaries: the HMM-GMM boundary stage ("hmm") or the neural aligner's own
    language: str | None = None  # align --language: the words through espeak-ng (runtime/languages.py)


class AlignWorker:
    """A batch worker: the model and the lexicon loaded once, then one recording and its words at a time, each
    output written whole or not at all; a file that cannot be read, aligned or written comes back as its error, and so
    does one whose text does not match its speech (unalignable, nothing written; settings.force writes it)."""

    def __init__(self, settings: AlignSettings) -> None:
        from speechattn_export.stream_client import StreamingModel

        self.settings = settings
        self.model = StreamingModel(resolve_model(settings.model), num_threads=1)
        self.lexicons = {None: load_lexicon(settings.dictionary, settings.language)}  # a bad one: a TextError

    def _lexicon(self, job: FileJob):
        """--language's or --dictionary's lexicon where one is given; else that of the language the job's
        supervisions name (a lhotse manifest's `language`: es, Spanish; English: the kit's), loaded once."""
        if job.language is None or self.settings.language is not None or self.settings.dictionary is not None:
            return self.lexicons[None]
        from speechattn.runtime.languages import espeak_language

        language = espeak_language(job.language, f"{job.source}'s supervisions", "the manifest's language")
        if language not in self.lexicons:
            self.lexicons[language] = load_lexicon(None, language)
        return self.lexicons[language]

    def __call__(self, job: FileJob) -> FileResult:
        try:
            text, name = (job.words, f"{job.source}'s supervisions") if job.words else read_text(job.text)
            words, starts = script_words(text, name, self._lexicon(job))
            aligned = align_file(self.model, Path(job.source), words, starts, phases=self.settings.phases,
                                 boundaries=self.settings.boundaries)
            if not self.settings.force:
                aligned.check_alignable()
            atomic_write_text(job.target, render(self.settings.output_format, aligned))
        except (SpeechattnError, ValueError) as error:
            return FileResult(job.source, 0.0, one_line(error))
        except OSError as error:
            return FileResult(job.source, 0.0, f"{one_line(job.source)}: cannot write {job.target} "
                                               f"({error.strerror or error})")
        return FileResult(job.source, aligned.duration, None, len(aligned.not_heard))
