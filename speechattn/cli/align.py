"""`speechattn align`: word and phone boundaries of recordings whose words are known (numpy + onnxruntime)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from speechattn.cli.common import (OUTPUT_FILE, PATH, check_phases, load_onnx, model_option, option, output_directory,
                                   audio_amount, known_language, progress_wanted, speed_phrase)
from speechattn.errors import UsageError

ALIGN_FORMAT_NAMES = ("text", "json", "textgrid", "ctm")
NOT_HEARD_SHOWN = 30  # words named on stderr; the JSON lists every one  # speechattn.runtime.align.ALIGN_FORMATS, named for --help


def corpus_pairs(folder: Path) -> tuple[list[tuple[Path, Path]], list[Path]]:
    """MFA's layout: each audio file with a .lab or .txt of the same stem beside it.  (pairs, audio without one)."""
    from speechattn.audio import AUDIO_SUFFIXES
    from speechattn.files import audio_files_below
    from speechattn.runtime.align import TEXT_SUFFIXES

    pairs, lonely = [], []
    for audio in audio_files_below(folder, AUDIO_SUFFIXES):
        text = next((audio.with_suffix(s) for s in TEXT_SUFFIXES if audio.with_suffix(s).is_file()), None)
        if text is None:
            lonely.append(audio)
        else:
            pairs.append((audio, text))
    return pairs, lonely


def _align_one(model, audio: Path, words, starts, output_format: str, target: Path | None, progress: bool = False,
               force: bool = False, phases: int = 1, boundaries: str = "hmm"):
    """Align one recording to its words (runtime.align.script_words) and write it (or return the text for stdout):
    (the AlignedFile, text).  A text that does not match the speech is an Unalignable error, nothing written, unless
    `force`.  A corpus goes through runtime/workers.py's AlignWorker instead."""
    from speechattn.files import atomic_write_text
    from speechattn.runtime.align import align_file, render

    aligned = align_file(model, audio, words, starts, progress=progress, phases=phases, boundaries=boundaries)
    if not force:
        aligned.check_alignable()
    rendered = render(output_format, aligned)
    if target is not None:
        atomic_write_text(target, rendered)
        rendered = None
    return aligned, rendered


def list_languages(ctx, language: str | None) -> str | None:
    """--language list: espeak-ng's voice names on stdout, before AUDIO is asked for; a language espeak-ng does not
    speak: a usage error, before anything is read (without espeak-ng, the file's alignment says what to install)."""
    if language == "list":
        from speechattn.runtime.languages import languages

        click.echo(" ".join(languages()))
        ctx.exit(0)
    return known_language(language)


@click.command()
@click.argument("audio", type=click.Path(path_type=Path, readable=False))  # unreadable: an input that failed (1)
@click.argument("text", required=False)
@model_option
@option("--format", "output_format", type=click.Choice(ALIGN_FORMAT_NAMES), default=None,
        help="text: a line per word; json (export/alignment.schema.json); textgrid: Praat, MFA's tiers words and "
             "phones; ctm: a line per word  [default: text for one file (with -o FILE, the format its extension "
             "names), textgrid for a corpus]")
@option("--output-dir", type=PATH, default=None, metavar="DIR",
        help="write one file per recording here (a corpus: the same relative paths)")
@option("-o", "--output", "output_file", type=OUTPUT_FILE, default=None, metavar="FILE", help="one recording's result")
@option("--dictionary", type=PATH, default=None, metavar="FILE",
        help="your pronunciations (WORD PH1 PH2 ..., CMUdict or MFA layout, one variant per line): added to and "
             "overriding the bundled CMUdict")
@option("--language", default=None, metavar="LANG", is_eager=True, callback=lambda ctx, _, value: list_languages(ctx, value),
        help="the words are in this language (an espeak-ng voice: es, fr, it, de, ru, pt, nl, pl ...; 'list' names "
             "them): their phones come from espeak-ng, each IPA phoneme as the nearest of the model's English phones "
             "(pip install espeakng-loader).  Without it: the language a WebVTT TEXT's Language header or a manifest's "
             "supervisions name, else English, through CMUdict")
@option("--jobs", type=click.IntRange(1, 256), default=1,
        help="worker processes for a corpus (at most one per file, one thread each)")
@option("--ray", "ray_address", default=None, metavar="ADDRESS",
        help="align a corpus on a Ray cluster: auto, HOST:PORT or local (as transcribe's --ray); "
             "--output-dir must be a folder every node sees; pip install '.[cluster]'")
@option("--overwrite", is_flag=True, help="align again files whose output exists (a corpus skips them otherwise)")
@option("--force", is_flag=True,
        help="write the alignment even where the text does not match the speech (its score below the threshold)")
@option("--phases", type=int, default=1, show_default=True, metavar="N",
        help="average the model's posteriors over N evenly spaced shifts of the audio: 1, 2 or 4 for the bundled "
             "models, whose encoder steps four 10 ms frames at a time (2: shifts of 0 and 20 ms; 4: 0, 10, 20, 30 "
             "ms).  Boundaries a little more exact, at N times the model's CPU (docs/benchmarks.md, \"Alignment "
             "over the phases\")")
@option("--boundaries", type=click.Choice(["hmm", "neural"]), default="hmm",
        help="hmm: each boundary moved (at most 40 ms) by the HMM-GMM boundary stage trained here, which measured "
             "closer on real speech and synthetic voices; neural: the neural aligner's own, as the Node.js, browser and C kits draw them "
             "(docs/benchmarks.md, \"HMM-GMM boundaries\")")
@option("-q", "--quiet", is_flag=True, help="no progress bar and no summary; errors only")
def align(audio, text, model, output_format, output_dir, output_file, dictionary, language, jobs, ray_address,
          overwrite, force, phases, boundaries, quiet):
    """Word and phone boundaries of speech whose words you know (forced alignment).

    AUDIO TEXT: one recording and its words (TEXT: a file, or the words themselves in quotes; a TEXT ending in
    .txt or .lab, or one word with a / in it, is a file name, and an error if no such file exists).  AUDIO alone, a
    folder: a corpus in the Montreal Forced Aligner's layout (each audio file beside a .lab or .txt of the
    same stem), written to --output-dir with the same relative paths, one TextGrid (or --format) each; or a
    lhotse supervisions manifest (its recordings manifest beside it): each recording aligned to the texts of its
    supervisions, one output per recording id.  Files already aligned are skipped, so an interrupted run resumes;
    --jobs N and --ray ADDRESS spread the corpus over processes or a Ray cluster (docs/cluster.md).  Exit status:
    0 when every recording's alignment is in --output-dir at the end (written now or by an earlier run), 1 when any
    is not (it failed, or has no transcript beside it: each is named, and counted in the summary), 2 for a wrong
    command line.

    The words become phones through CMUdict (every pronunciation variant; numbers, abbreviations and
    punctuation normalised) and a grapheme-to-phoneme model for words it lacks; --dictionary adds yours.  With
    --language LANG (es, fr, de ...) each word's phonemes come from espeak-ng instead, as the nearest of the
    model's English phones (docs/benchmarks.md, "Words in other languages").  A WebVTT file (.vtt) is read as
    its cues' words, in the language its header's `Language:` line names (es, pt-BR; en: CMUdict) unless
    --language or --dictionary says how they sound.  The
    alignment tolerates a script the speaker departed from: words left out are reported as not heard, speech
    that is not in the script is marked <unk>, and neither drags the rest off.  Each word and phone has a
    confidence (mean posterior) and a goodness of pronunciation (gop: how far the phone beat its best
    competitor, in nats); each recording an alignment score (nats per frame, 0 at best; in the JSON and the
    TextGrid).  A text that does not match the speech (score below -1.375: another recording's text) is not
    forced onto it: the recording is reported as unalignable and nothing is written for it (exit status 1; in a
    corpus it counts as failed), unless --force.  Memory stays bounded for any length."""
    from speechattn.runtime.transcribe import resolve_model

    started = time.perf_counter()
    model_path = resolve_model(model)
    if output_file is not None and output_dir is not None:
        raise UsageError("-o/--output names one file; --output-dir a folder: give one of them")
    from speechattn.files import is_directory
    from speechattn.runtime.batch import is_manifest

    if str(audio) != "-" and (is_directory(audio) or is_manifest(audio)):
        if text is not None:
            raise UsageError(f"{audio} is a corpus (a folder of audio beside .lab or .txt files, or a supervisions "
                             "manifest with their texts); give no TEXT")
        if output_dir is None:
            raise UsageError("a corpus is written to --output-dir DIR")
        return _align_corpus(audio, model, output_format or "textgrid", output_dir, dictionary, jobs, ray_address,
                             overwrite, quiet, started, force, phases, boundaries, language)
    if ray_address:
        raise UsageError("--ray aligns a corpus (a folder of audio files beside their .lab or .txt)")
    if text is None:
        raise UsageError("give the words: speechattn align AUDIO TEXT (a file, or the words in quotes)")
    return _align_file(Path(audio), text, model_path, output_format, output_dir, output_file, dictionary, language,
                       force, phases, boundaries, quiet, started)


def _align_file(audio: Path, text, model_path: Path, output_format, output_dir, output_file, dictionary, language,
                force: bool, phases: int, boundaries: str, quiet: bool, started: float) -> int:
    """One recording and its words: the alignment printed or written to -o / --output-dir, what was not heard and a
    summary on stderr."""
    from speechattn.cli.common import same_file

    from speechattn.runtime.align import ALIGN_FORMATS
    from speechattn.runtime.formats import format_of

    fmt = output_format or (format_of(output_file, {extension: name for name, (extension, _) in ALIGN_FORMATS.items()})
                            if output_file is not None else None) or "text"
    target = output_file
    if output_dir is not None:
        output_dir.mkdir(parents=True, exist_ok=True)
        target = output_dir / (Path(audio).stem + ALIGN_FORMATS[fmt][0])
    if target is not None and (same_file(target, audio) or same_file(target, Path(text))):
        raise UsageError(f"{target} is one of the inputs: it would be overwritten; write elsewhere")
    if output_file is not None:
        from speechattn.cli.common import check_writable

        check_writable(output_file)  # a missing folder, a read-only one: one line before the work
    from speechattn.runtime.align import load_lexicon, read_text, script_and_language, script_words
    from speechattn_export.words import shorten

    # the text and its limits first: before the model loads or any audio is read
    text, name = read_text(text)
    text, language = script_and_language(text, name, language, dictionary)
    words, starts = script_words(text, name, load_lexicon(dictionary, language), progress=progress_wanted() and not quiet)
    stream_model = load_onnx(model_path)
    check_phases(stream_model, phases)
    aligned, rendered = _align_one(stream_model, Path(audio), words, starts, fmt, target,
                                   progress=progress_wanted() and not quiet, force=force, phases=phases,
                                   boundaries=boundaries)
    seconds, not_heard = aligned.duration, aligned.not_heard
    if rendered is not None:
        print(rendered, end="", flush=True)
    if not quiet:
        if target is not None:
            print(f"wrote {target}", file=sys.stderr)
        if not_heard and not (target is None and fmt == "text"):  # the text on stdout ends with them already
            shown = " ".join(shorten(word) for word in not_heard[:NOT_HEARD_SHOWN])
            more = f" ... and {len(not_heard) - NOT_HEARD_SHOWN} more" if len(not_heard) > NOT_HEARD_SHOWN else ""
            print(f"speechattn align: not heard: {shown}{more}", file=sys.stderr)
        wall = time.perf_counter() - started
        forced = ", unalignable: written as --force asks" if aligned.alignment.unalignable else ""
        print(f"speechattn align: 1 file, {seconds:.1f} s of audio in {wall:.1f} s, {len(not_heard)} word(s) not heard, "
              f"alignment score {aligned.alignment.score:.2f}{forced}", file=sys.stderr)
    return 0


def _corpus_jobs(folder: Path, output_dir: Path, fmt: str) -> tuple[list, list]:
    """(a FileJob for every audio file of a folder in MFA's layout or every recording of a supervisions manifest,
    the audio files with no transcript beside them), each output's folder checked and no output one of the inputs."""
    from collections import Counter

    from speechattn.runtime.align import ALIGN_FORMATS
    from speechattn.runtime.batch import FileJob

    everything, lonely = [], []
    if folder.is_dir():
        pairs, lonely = corpus_pairs(folder)
        for audio in lonely:
            print(f"speechattn align: {audio}: no .lab or .txt beside it; skipped", file=sys.stderr)
        if not pairs:
            raise UsageError(f"{folder}: no audio file with a .lab or .txt transcript beside it (MFA's layout)")
        stems = Counter(audio.relative_to(folder).with_suffix("") for audio, _ in pairs)
        for audio, text in pairs:
            relative = audio.relative_to(folder)
            # a.wav and a.flac beside one a.lab: a.wav.TextGrid and a.flac.TextGrid, not one output for both
            named = relative.with_suffix("") if stems[relative.with_suffix("")] == 1 else relative
            target = output_dir / named.with_name(named.name + ALIGN_FORMATS[fmt][0])
            everything.append(FileJob(str(audio), str(target), str(text)))
    else:  # a lhotse supervisions manifest: one output per recording, named by its id
        import os

        from speechattn.runtime.batch import manifest_texts

        for recording, audio, words, language in manifest_texts(folder):
            name = recording.replace(os.sep, "__") + ALIGN_FORMATS[fmt][0]
            everything.append(FileJob(str(audio), str(output_dir / name), None, words, language))
    inputs = {Path(path).resolve(): path for job in everything for path in (job.source, job.text) if path is not None}
    for job in everything:  # --output-dir the corpus itself with --format text: a.txt is a.wav's transcript
        if Path(job.target).resolve() in inputs:
            raise UsageError(f"--output-dir {output_dir} --format {fmt} would write {job.target}, which is one of the "
                             f"inputs ({inputs[Path(job.target).resolve()]}): give another --output-dir or --format")
    for parent in {Path(job.target).parent for job in everything}:
        output_directory(parent)
    return everything, lonely


def _align_corpus(folder: Path, model, fmt: str, output_dir: Path, dictionary, jobs: int, ray_address: str | None,
                  overwrite: bool, quiet: bool, started: float, force: bool = False, phases: int = 1,
                  boundaries: str = "hmm", language: str | None = None) -> int:
    """A corpus in MFA's layout through the batch runner (runtime/batch.py): in this process (--jobs 1), worker
    processes or Ray actors, the files already aligned skipped, one progress bar, a summary.  Exit status 0 when
    every audio file's alignment is in output_dir at the end (written now or by an earlier run), 1 when any is not
    (it failed, its text does not match its speech, or it has no transcript beside it)."""
    from tqdm import tqdm

    from speechattn.runtime.align import load_lexicon
    from speechattn.runtime.workers import AlignSettings, AlignWorker
    from speechattn.runtime.batch import pending, run_job

    from speechattn.runtime.transcribe import resolve_model

    # what every worker needs, checked once here: one line, not one per worker
    check_phases(load_onnx(resolve_model(model)), phases)
    if dictionary is not None:
        from speechattn.files import refuse_special
        from speechattn.runtime.align import TextError

        refuse_special(dictionary, "dictionary", TextError)
    if dictionary is not None or language is not None:
        load_lexicon(dictionary, language)  # an unknown language, espeak-ng missing: one line, not one per worker
    output_directory(output_dir)  # a read-only place, a file: one line before the work
    everything, lonely = _corpus_jobs(folder, output_dir, fmt)
    todo, done = pending(everything, overwrite)
    if done and not quiet:
        print(f"speechattn align: {done} file(s) already aligned in {output_dir}: skipped (--overwrite redoes them)",
              file=sys.stderr)
    failed = []

    def report(result) -> None:
        if result.error:
            failed.append(result.source)
            tqdm.write(f"speechattn align: error: {result.error}", file=sys.stderr)

    settings = AlignSettings(None if model is None else str(model), fmt, str(dictionary) if dictionary else None, force,
                             phases, boundaries, language)
    results = run_job(todo, AlignWorker, settings, jobs, ray_address, progress=progress_wanted() and not quiet,
                      description="aligning", on_result=report)
    seconds, not_heard = sum(r.seconds for r in results), sum(r.not_heard for r in results)
    if not quiet:
        wall = time.perf_counter() - started
        speed = speed_phrase(seconds, wall)
        # "failed" counts every file whose alignment is not there (the exit status's rule): a file with no
        # transcript too, said apart ("0 failed" beside exit status 1 read as a bug)
        without = f" ({len(lonely)} with no transcript beside it)" if lonely else ""
        print(f"speechattn align: {len(todo) - len(failed)} file(s) aligned, {len(failed) + len(lonely)} "
              f"failed{without}, {done} skipped as done; {audio_amount(seconds)} of audio in {wall:.1f} s{speed}; "
              f"{not_heard} word(s) not heard; written to {output_dir}", file=sys.stderr)
    return 1 if failed or lonely else 0
