"""The runtime commands: transcribe, mic, web (numpy and onnxruntime only; never torch)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from speechattn.cli.common import (OUTPUT_FILE, PATH, FiniteFloatRange, check_phases, chunk_frames_option, chunk_option, decoder_option, decoding_options, load_onnx,
                                   min_frames_option, model_option, model_option_for, option, output_directory, progress_wanted, same_file,
                                   speed_phrase, threads_option, audio_amount, known_language)
from speechattn.errors import SpeechattnError, UsageError, one_line

from speechattn.runtime.formats import FORMATS, formats_help, write_transcript
from speechattn_export.registry import VISEME_SET_NAMES, default_name, files_name


def output_names(files: list[Path]) -> dict[Path, str]:
    """A distinct output name (without suffix) for every input: its stem, or where stems collide (a.wav and
    a.flac, d1/x.wav and d2/x.wav) its path below the colliding files' common directory, with the extension."""
    import os.path
    from collections import defaultdict

    by_stem: dict[str, list[Path]] = defaultdict(list)
    for path in dict.fromkeys(files):
        by_stem["stdin" if str(path) == "-" else path.stem].append(path)
    names = {}
    for stem, paths in by_stem.items():
        if len(paths) == 1:
            names[paths[0]] = stem
            continue
        common = Path(os.path.commonpath([str(p.resolve().parent) for p in paths]))
        for path in paths:
            names[path] = str(path.resolve().relative_to(common)).replace(os.sep, "__")
    taken: dict[str, int] = {}
    for path, name in names.items():  # a name made of a path can equal another file's stem: number the later ones
        count = taken.get(name, 0)
        taken[name] = count + 1
        if count:
            while f"{name}-{count + 1}" in names.values() or f"{name}-{count + 1}" in taken:
                count += 1
            names[path] = f"{name}-{count + 1}"
            taken[names[path]] = 1
    return names


def expand_inputs(arguments, files_from: Path | None = None) -> list[Path]:
    """The inputs in order, each directory replaced by the audio files below it (recursively, sorted; hidden
    folders and files skipped; a directory with none is a usage error), each lhotse manifest (.jsonl.gz) by its
    recordings' files, then the files --files-from lists."""
    from speechattn.audio import AUDIO_SUFFIXES
    from speechattn.files import audio_files_below, is_directory
    from speechattn.runtime.batch import files_from as listed, is_manifest, manifest_audio

    files: list[Path] = []
    for argument in [*arguments, *(listed(files_from) if files_from is not None else [])]:
        if str(argument) != "-" and is_manifest(argument):
            files.extend(manifest_audio(argument))
        elif str(argument) != "-" and is_directory(argument):
            found = audio_files_below(argument, AUDIO_SUFFIXES)
            if not found:
                raise UsageError(f"{argument}: a directory with no audio files ({', '.join(AUDIO_SUFFIXES)}) in it")
            files.extend(found)
        else:
            files.append(argument)
    return list(dict.fromkeys(files))  # a file named twice is transcribed once


def summary_line(files: int, audio_seconds: float, wall_seconds: float) -> str:
    return (f"{files} file{'s' if files != 1 else ''}, {audio_amount(audio_seconds)} of audio in {wall_seconds:.1f} s"
            f"{speed_phrase(audio_seconds, wall_seconds)}")


def rhubarb_options(output_format: str, extended_shapes: str | None, dat_frame_rate: float | None,
                    dat_preston_blair: bool):
    """--extended-shapes and the .dat settings as one RhubarbOptions; refused with a format they do not shape."""
    from speechattn.runtime.transcribe import RhubarbOptions

    if extended_shapes is not None and not FORMATS[output_format].rhubarb_shapes:
        raise UsageError(f"--extended-shapes chooses the shapes of the rhubarb-* formats, not of --format {output_format}")
    if (dat_frame_rate is not None or dat_preston_blair) and output_format != "rhubarb-dat":
        raise UsageError("--dat-frame-rate and --dat-preston-blair set the frames and names of --format rhubarb-dat")
    given = {"extended_shapes": extended_shapes, "dat_frame_rate": dat_frame_rate}
    try:
        return RhubarbOptions(**{k: v for k, v in given.items() if v is not None}, dat_preston_blair=dat_preston_blair)
    except ValueError as error:
        raise UsageError(f"--extended-shapes {extended_shapes}: {error} (any of G, H and X; '' for A-F only)") from None


def refuse_special_texts(**texts) -> None:
    """One line for a text (--dialog, --script, --dictionary) that names a device or a pipe: /dev/zero would be read
    to its bound and a FIFO waited on forever; words can be given in quotes instead."""
    from speechattn.files import refuse_special

    for what, path in texts.items():
        if path is not None:
            refuse_special(path, what)


@click.command()
@click.argument("files", nargs=-1, type=click.Path(path_type=Path, readable=False), metavar="FILE...")
@model_option_for(f"{files_name()} (trained at full context: 0.7-2.5 points more frame accuracy than "
                  f"{default_name()} on the dev sets, docs/benchmarks.md); {default_name()} with --chunk-frames or "
                  "--dialog")
@option("--format", "output_format", type=click.Choice(list(FORMATS)), default=None, show_default=False,
        help=f"output format: {formats_help()}  [default: text; with -o FILE, the format its extension names]")
@option("--output-dir", type=PATH, default=None, metavar="DIR",
        help="write one file per input here (FILE-stem and the format's extension) instead of stdout")
@option("-o", "--output", "output_file", type=OUTPUT_FILE, default=None, metavar="FILE",
        help="write the one input's result to FILE instead of stdout")
@option("-q", "--quiet", is_flag=True, help="no progress bar, no 'wrote' lines and no summary; errors only")
@option("--visemes", type=click.Choice(VISEME_SET_NAMES), default=None,
        help="mouth shapes of --format visemes-json: rhubarb (9 shapes), oculus (15 visemes), vrm (A I U E O)  "
             "[default: vrm]")
@option("--extended-shapes", default=None, metavar="GHX",
        help="rhubarb-* formats: which of Rhubarb's optional shapes G, H, X to use ('' for A-F only; one left out "
             "becomes its basic shape: G as A, H as C, X as A), as Rhubarb's --extendedShapes  [default: GHX]")
@option("--dat-frame-rate", type=FiniteFloatRange(min=24, max=100), default=None, metavar="FPS",
        help="rhubarb-dat: frames per second of its frame numbers, 24 to 100, as Rhubarb's --datFrameRate  "
             "[default: 24]")
@option("--dat-preston-blair", is_flag=True,
        help="rhubarb-dat: Preston Blair's shape names (MBP etc E AI O U FV L rest; OpenToonz needs them)")
@option("--plot", type=OUTPUT_FILE, default=None, metavar="PNG",
        help="draw waveform, spectrogram, posteriorgram and segments (several files: PNG-stem-FILE-stem.png); "
             "files up to 300 s (a longer one is transcribed and said to have no picture)")
@option("--overwrite", is_flag=True, help="replace outputs an earlier run left in --output-dir (refused otherwise)")
@chunk_frames_option("the largest the model serves: the files' model's 4 s, or a --model's largest (320 ms for "
                     "the live ones, more accurate than their 40 ms live chunk at a third of the CPU: "
                     "docs/benchmarks.md, \"Files at the largest chunk\"); a chunk given picks the live model "
                     "unless --model names one")
@min_frames_option
@decoder_option
@threads_option
@option("--phases", type=int, default=None, metavar="N",
        help="average the model's posteriors over N evenly spaced shifts of the audio (1, 2 or 4 for the bundled "
             "models: their encoder steps four 10 ms frames at a time) before the decoder: more accurate, at N times "
             "the model's CPU (docs/benchmarks.md, \"Files over two phases\"); not with --dialog (align --phases "
             "aligns)  [default: 2 for a file at the largest chunk (1 where the model's step does not split in two), 1 with "
             "--chunk-frames or --dialog]")
@option("--dialog", default=None, metavar="TEXT",
        help="the words spoken (a file, or the words in quotes): phones and mouth shapes follow the script, aligned "
             "to the audio (speechattn align), and the recognised phones where the speech departs from it")
@option("--dictionary", type=PATH, default=None, metavar="FILE", help="your pronunciations for --dialog (see align)")
@option("--language", default=None, metavar="LANG", callback=lambda ctx, _, value: known_language(value),
        help="the words of --dialog are in this language (an espeak-ng voice: es, fr, de ...; see align --language; without it a WebVTT dialog's Language header, else English)")
@option("--files-from", type=PATH, default=None, metavar="LIST",
        help="also the audio files LIST names, one per line (relative to LIST's folder)")
@option("--resume", is_flag=True,
        help="skip inputs whose output is in --output-dir already (an interrupted job goes on where it stopped)")
@option("--jobs", type=click.IntRange(1, 256), default=1,
        help="worker processes, at most one per file, each streaming on --threads (needs --output-dir); with --ray, "
             "actors at most")
@option("--ray", "ray_address", default=None, metavar="ADDRESS",
        help="run the job on a Ray cluster: auto (the one `ray start` joined this machine to), HOST:PORT (its "
             "head; one line if none answers within 30 s), or local (a Ray started for this job); --output-dir "
             "must be a folder every node sees; pip install '.[cluster]' (docs/cluster.md)")
def transcribe(files, model, output_format, output_dir, output_file, quiet, visemes, overwrite, plot, chunk_frames,
               min_frames, decoder, threads, phases, dialog, dictionary, language, extended_shapes, dat_frame_rate,
               dat_preston_blair, files_from, resume, jobs, ray_address):
    """Phone segments of audio files, streamed through the ONNX model.

    Each FILE (wav, flac, ogg, mp3 ...; m4a/AAC and other FFmpeg formats with PyAV installed; any sample rate
    and channel count: downmixed and resampled to 16 kHz; - reads standard input (WAV, FLAC, Ogg
    Vorbis or Opus, MP3, AIFF, AU, CAF, W64 or NIST; spooled to a temporary file, up to 8 GiB); a directory:
    the audio files below it, recursively) is streamed through the model and its phone segments
    (start, end, phone, mean posterior as confidence) are printed.  The bigram decoder turns frame
    posteriors into phones (see --decoder).  Memory stays bounded for any length.  Formats: text (the
    phones), json (one object per file and line; schema in export/transcript.schema.json), ctm, textgrid
    (Praat), and for lip sync: rhubarb-tsv, rhubarb-json, rhubarb-xml, rhubarb-dat (Rhubarb Lip Sync's files, its nine mouth
    shapes: what Rhubarb importers read) and visemes-json (a row of mouth-shape weights per 10 ms frame and the
    cues, for --visemes SET).  A file that cannot be read is reported in one line and the others are still transcribed
    (exit status 1).  With --output-dir, an output that exists is not replaced without --overwrite (--resume
    skips its input instead); no output may be one of the inputs.  A summary (files, hours of audio, speed) closes
    the run on stderr.

    A corpus: FILE may be a lhotse manifest (recordings, or supervisions with their recordings beside them), and
    --files-from a list of files.  --jobs N runs N worker processes and --ray ADDRESS a Ray cluster's actors, each
    with the model loaded once; outputs are written whole or not at all, so --resume after any interruption does
    only what is missing (docs/cluster.md).  Every --jobs and --ray writes the same files.

    Exit status, for one file or a corpus: 0 when every input was done (or skipped by --resume as done before), 1
    when any was not (each is named), 2 for a wrong command line, before any work.  A reader that stops early
    (| head) is not a failure: 0."""
    import time

    started = time.perf_counter()
    if not files and files_from is None:
        raise UsageError("give the audio: FILE..., a folder, a lhotse manifest or --files-from LIST")
    files = expand_inputs(files, files_from)
    _check_outputs(files, output_file, output_dir, plot, resume, overwrite, jobs, ray_address, dialog)
    output_format, spec, rhubarb = _output_format(output_format, output_file, visemes, extended_shapes, dat_frame_rate,
                                                  dat_preston_blair)
    _check_written(files, output_file, plot, output_format, spec, output_dir)
    if plot:
        _check_plot(plot)
    stream_model, model, phases = _file_model(model, chunk_frames, dialog, threads, phases)
    from speechattn.runtime.align import offline_chunk

    options = decoding_options(stream_model, decoder, min_frames, chunk_frames or offline_chunk(stream_model),
                               (visemes or "vrm") if spec.takes_visemes else None)
    script = _dialog_script(dialog, dictionary, files, plot, language)
    if output_dir:
        output_directory(output_dir)
    names = output_names(files)
    if output_dir and dialog is None and not plot and all(str(f) != "-" for f in files):  # a corpus, any --jobs
        return _transcribe_job(files, names, model, output_format, output_dir, options, rhubarb, jobs, ray_address,
                               overwrite, resume, threads, quiet, started, stream_model, phases)
    failed, seconds = 0, 0.0
    for path in files:
        target = output_dir / (names[path] + spec.extension) if output_dir else output_file
        done = _transcribe_one(path, target, names[path], files, stream_model, options, script, phases, output_format,
                               rhubarb, plot, output_file, overwrite, resume, quiet)
        if done is None:  # failed, said in its line
            failed += 1
        else:
            seconds += done
    if not quiet and (len(files) > 1 or not failed):  # one file that failed: its error is the one line
        print(f"speechattn transcribe: {summary_line(len(files) - failed, seconds, time.perf_counter() - started)}",
              file=sys.stderr)
    if failed:
        if len(files) > 1:  # one input: its error line says it all
            print(f"speechattn transcribe: {failed} of {len(files)} file(s) could not be transcribed", file=sys.stderr)
        return 1
    return 0


def _check_outputs(files, output_file, output_dir, plot, resume, overwrite, jobs, ray_address, dialog) -> None:
    """Where the results go (-o, --output-dir, --resume, --overwrite) and how a corpus runs (--jobs, --ray), checked
    together before anything is read: one line each."""
    if resume and overwrite:
        raise UsageError("--resume skips the outputs that exist, --overwrite replaces them: give one of them")
    if (resume or jobs > 1 or ray_address) and output_dir is None:
        what = "--resume" if resume else "--jobs" if jobs > 1 else "--ray"
        raise UsageError(f"{what} writes one file per input: give --output-dir DIR")
    if (jobs > 1 or ray_address) and (plot or dialog is not None or any(str(f) == "-" for f in files)):
        raise UsageError("--jobs and --ray transcribe files into --output-dir; --plot, --dialog and standard input "
                         "(-) go without them")
    if output_file is not None:
        if output_dir is not None:
            raise UsageError("-o/--output names one file; --output-dir a folder: give one of them")
        if len(files) != 1:
            raise UsageError(f"-o/--output takes the result of one input; {len(files)} inputs: use --output-dir")
        if plot and same_file(plot, output_file):
            raise UsageError(f"-o {output_file} and --plot name the same file")
        from speechattn.cli.common import check_writable

        check_writable(output_file)  # a missing or read-only folder: one line now, not after the work
    if [str(f) for f in files].count("-") > 1:
        raise UsageError("- (standard input) can be given once")


def _output_format(output_format, output_file, visemes, extended_shapes, dat_frame_rate, dat_preston_blair):
    """--format (or the one -o's extension names; text otherwise), its table entry, and the options that shape it
    (--visemes, Rhubarb's --extended-shapes and .dat settings), checked against it: (name, spec, RhubarbOptions)."""
    if output_format is None:  # -o phones.json writes JSON, a.TextGrid a TextGrid (it wrote text whatever the name)
        from speechattn.runtime.formats import EXTENSIONS, format_of

        output_format = (format_of(output_file, EXTENSIONS) if output_file is not None else None) or "text"
    spec = FORMATS[output_format]
    if spec.rhubarb_shapes and visemes not in (None, "rhubarb"):
        raise UsageError(f"--format {output_format} writes Rhubarb's nine shapes; --visemes {visemes} goes with "
                         "--format visemes-json")
    if visemes and not spec.takes_visemes and not spec.rhubarb_shapes:
        raise UsageError(f"--visemes {visemes} chooses the shapes of --format visemes-json (or rhubarb-*), "
                         f"not of --format {output_format}")
    return output_format, spec, rhubarb_options(output_format, extended_shapes, dat_frame_rate, dat_preston_blair)


def _check_written(files, output_file, plot, output_format: str, spec, output_dir) -> None:
    """No file written (-o, --plot) is an input, and a format of one file per input has a folder for several."""
    for written in (output_file, plot):
        clash = next((f for f in files if written is not None and same_file(f, written)), None)
        if clash is not None:
            raise UsageError(f"{written} is one of the inputs: it would be overwritten; write elsewhere")
    if spec.one_file_each and len(files) > 1 and not output_dir:
        raise UsageError(f"--format {output_format} with several files needs --output-dir (one file each)")


def _check_plot(plot: Path) -> None:
    """--plot: a .png that can be written, and matplotlib there to draw it."""
    import importlib.util

    from speechattn.cli.common import check_writable

    if plot.suffix.lower() != ".png":
        raise UsageError(f"--plot {plot}: give a .png file name")
    check_writable(plot)
    if importlib.util.find_spec("matplotlib") is None:
        raise SpeechattnError("--plot needs matplotlib, which is not installed: pip install '.[plot]' in a clone "
                              "of speechattn, or pip install matplotlib scipy")  # exit 1, as any missing package


def _file_model(model, chunk_frames, dialog, threads, phases):
    """--model (default: the files' own, unless a live --chunk-frames or --dialog keeps the default) loaded, and
    --phases (default: two for a file at its largest chunk, one for a live chunk or a script), checked against it:
    (the loaded model, the name or path it was loaded from, phases)."""
    from speechattn.runtime.transcribe import file_phases, resolve_model

    if model is None and chunk_frames is None and dialog is None:
        model = files_name()  # a file's own model; --chunk-frames (a live chunk) and alignment keep the default
    stream_model = load_onnx(resolve_model(model), threads)
    if phases is None:
        phases = file_phases(stream_model, chunk_named=chunk_frames is not None) if dialog is None else 1
    check_phases(stream_model, phases)
    if phases != 1 and dialog is not None:
        raise UsageError("--phases averages the recognition of a file; --dialog aligns its script: give one of them "
                         "(speechattn align --phases aligns a script over the phases)")
    return stream_model, model, phases


def _dialog_script(dialog, dictionary, files, plot, language=None):
    """--dialog (the words of the one recording, with --dictionary's pronunciations or in --language) as script_words
    gives them, or None."""
    if dialog is None:
        if dictionary is not None:
            raise UsageError("--dictionary gives pronunciations for --dialog's words; give --dialog too")
        if language is not None:
            raise UsageError("--language is the language of --dialog's words; give --dialog too")
        return None
    if len(files) != 1:
        raise UsageError(f"--dialog gives the words of one recording; {len(files)} inputs (speechattn align "
                         "aligns a corpus)")
    if plot:
        raise UsageError("--plot draws the recognised phones; give it without --dialog")
    from speechattn.runtime.align import load_lexicon, read_text, script_and_language, script_words

    refuse_special_texts(dialog=dialog, dictionary=dictionary)
    text, name = read_text(dialog, "dialog")
    text, language = script_and_language(text, name, language, dictionary)  # a WebVTT file's own Language
    return script_words(text, name, load_lexicon(dictionary, language))


def _transcribe_one(path, target, name, files, stream_model, options, script, phases, output_format, rhubarb, plot,
                    output_file, overwrite, resume, quiet) -> float | None:
    """One input of a run in this process, written to `target` (None: standard output), its picture drawn:
    the seconds of audio it had (0 for one skipped by --resume), or None when it failed (said in one line)."""
    from speechattn.audio import AudioError
    from speechattn.runtime.transcribe import PLOT_MAX_SECONDS, plot_transcript, transcribe_file

    try:
        if target is not None and target.exists():
            if resume:
                if not quiet:
                    print(f"speechattn transcribe: {target} exists: skipped (--resume)", file=sys.stderr)
                return 0.0
            if any(same_file(f, target) for f in files):
                raise AudioError(f"{path}: its output {target} is one of the inputs; give another --output-dir")
            if not overwrite and output_file is None:  # -o FILE names its output: replacing it is asked for
                raise AudioError(f"{target} exists (an earlier run?): not replaced; --overwrite replaces it, "
                                 "--resume skips its input")
        if script is not None:
            from speechattn.runtime.align import dialog_mismatch, dialog_transcript

            transcript, aligned = dialog_transcript(stream_model, path, *script, options,
                                                    progress=progress_wanted() and not quiet)
            if mismatch := dialog_mismatch(aligned):  # said even with --quiet: not the output asked for
                print(f"speechattn transcribe: {path}: {mismatch}", file=sys.stderr)
            elif aligned.not_heard and not quiet:
                print(f"speechattn transcribe: {path}: not heard (from --dialog): {' '.join(aligned.not_heard)}",
                      file=sys.stderr)
        else:
            transcript = transcribe_file(stream_model, path, options, keep=bool(plot),
                                         progress=progress_wanted() and not quiet, phases=phases)
        if str(path) != "-" and name != path.stem:  # inputs sharing a stem: CTM ids apart, as their files
            transcript.name = name
        write_transcript(transcript, output_format, target, rhubarb)
    except (AudioError, ValueError) as error:  # ValueError: what the client refuses to stream
        print(f"speechattn transcribe: error: {one_line(error)}", file=sys.stderr)
        return None
    except BrokenPipeError:  # the reader of our output stopped early (| head): not an error; main() ends quietly
        raise
    except OSError as error:
        where = target if target is not None else "standard output"
        print(f"speechattn transcribe: error: {one_line(path)}: cannot write {where} ({error.strerror})", file=sys.stderr)
        return None
    if target is not None and not quiet:
        print(f"wrote {target}", file=sys.stderr)
    if plot:
        if transcript.audio is None:
            print(f"speechattn transcribe: {path}: {transcript.duration:.0f} s is longer than the "
                  f"{PLOT_MAX_SECONDS} s a picture can show; no plot", file=sys.stderr)
            return transcript.duration
        plot_path = plot if len(files) == 1 else plot.with_name(f"{plot.stem}-{name}.png")
        plot_transcript(transcript, plot_path)
        if not quiet:
            print(f"wrote {plot_path}", file=sys.stderr)
    return transcript.duration


def _transcribe_job(files, names, model, output_format, output_dir, options, rhubarb, jobs, ray_address, overwrite,
                    resume, threads, quiet, started, loaded=None, phases: int = 1) -> int:
    """A corpus job (runtime/batch.py), --jobs 1 included: the files whose output is missing, in this process, by
    worker processes or by Ray actors, one progress bar over the whole job, the failed files listed, one summary.
    Exit status 0 when every input was done (now, or by an earlier run that --resume skips), 1 when any was not.
    `loaded`: the model as this process loaded it, for a job run here."""
    import functools
    import time

    from tqdm import tqdm

    from speechattn.cli.common import same_file
    from speechattn.files import exists
    from speechattn.runtime.batch import FileJob, FileResult, pending, run_job
    from speechattn.runtime.workers import TranscribeSettings, TranscribeWorker

    extension = FORMATS[output_format].extension
    everything = [FileJob(str(path), str(output_dir / (names[path] + extension))) for path in files]
    for job in everything:
        if any(same_file(f, Path(job.target)) for f in files):
            raise UsageError(f"{job.source}: its output {job.target} is one of the inputs; give another --output-dir")
    todo, done = pending(everything, overwrite) if resume or overwrite else (list(everything), 0)
    if done and not quiet:
        print(f"speechattn transcribe: {done} file(s) already in {output_dir}: skipped", file=sys.stderr)
    failed = []

    def report(result) -> None:
        if result.error:
            failed.append(result.source)
            tqdm.write(f"speechattn transcribe: error: {result.error}", file=sys.stderr)

    if not (resume or overwrite):  # an earlier run's output is never replaced unasked: that input fails, in one line
        for job in [job for job in todo if exists(job.target)]:
            todo.remove(job)
            report(FileResult(job.source, 0.0, f"{one_line(job.target)} exists (an earlier run?): not replaced; "
                                                "--overwrite replaces it, --resume skips its input"))
    settings = TranscribeSettings(None if model is None else str(model), output_format, options, rhubarb, threads,
                                  phases)
    here = jobs == 1 and not ray_address and loaded is not None
    make_worker = functools.partial(TranscribeWorker, model=loaded) if here else TranscribeWorker
    results = run_job(todo, make_worker, settings, jobs, ray_address, progress=progress_wanted() and not quiet,
                      description="transcribing", on_result=report)
    seconds = sum(r.seconds for r in results)
    tried = len(everything) - done
    if not quiet:
        wall = time.perf_counter() - started
        print(f"speechattn transcribe: {summary_line(tried - len(failed), seconds, wall)}; {len(failed)} failed, "
              f"{done} skipped as done; written to {output_dir}", file=sys.stderr)
    if failed:
        shown = "\n  ".join(one_line(f) for f in failed[:20])
        more = f"\n  ... and {len(failed) - 20} more (each named above)" if len(failed) > 20 else ""
        print(f"speechattn transcribe: {len(failed)} of {tried} file(s) could not be transcribed; after fixing them, "
              f"the same command with --resume does only these:\n  {shown}{more}", file=sys.stderr)
        return 1
    return 0


@click.command()
@model_option
@option("--device", default=None, help="input device: index or part of its name  [default: the system's input]")
@option("--list-devices", is_flag=True, help="list input devices with their native rates and exit")
@chunk_option
@min_frames_option
@decoder_option
@option("--output", type=OUTPUT_FILE, default=None, metavar="FILE.jsonl", help="also write confirmed segments here")
@option("--save-audio", type=OUTPUT_FILE, default=None, metavar="FILE.wav", help="write the 16 kHz mono audio the model heard")
@option("--seconds", type=FiniteFloatRange(min=0, max=7 * 24 * 3600, min_open=True), default=None,
        help="stop after this much audio  [default: run until Ctrl-C]")
@option("--visemes", type=click.Choice(VISEME_SET_NAMES), default=None,
        help="lip sync: print a JSON line per 10 ms frame of mouth-shape weights and per final mouth cue of this "
             "set instead of phones")
@option("--script", "script_file", type=PATH, default=None, metavar="FILE",
        help="follow along: the text being read aloud; shows the words read, the word being read and the words "
             "passed over, live (elsewhere: a JSON line per word)")
@option("--dictionary", type=PATH, default=None, metavar="FILE", help="your pronunciations for --script (see align)")
@option("--language", default=None, metavar="LANG", callback=lambda ctx, _, value: known_language(value),
        help="the words of --script are in this language (an espeak-ng voice: es, fr, de ...; see align --language; without it a WebVTT script's Language header, else English)")
@option("--vmc", default=None, metavar="HOST[:PORT]",
        help="lip sync: send VRM's A I U E O mouth blendshapes over the VMC protocol (OSC/UDP) to an avatar app "
             "such as VSeeFace  [port default: 39540]")
def mic(model, device, list_devices, chunk_frames, min_frames, decoder, output, save_audio, seconds, visemes, script_file,
        dictionary, language, vmc):
    """Live phone transcription from a microphone.

    Captures from an input device (PortAudio) at its own rate and channel count, downmixes and
    resamples to 16 kHz, and streams through the ONNX model.  In a terminal: the phones as they are
    recognised (still-open segment dimmed, silence as ·) and a status line (input level, latency
    p50/p95 from capture to display, real-time factor).  Otherwise: one JSON line per confirmed
    segment.  Ctrl-C stops, flushes every output and prints a summary.

    Lip sync: --visemes SET prints mouth shapes instead (weights every 10 ms, cues when final), for another
    program to read live; --vmc HOST[:PORT] moves a VRM avatar's mouth in a VMC receiver (VSeeFace, VNyan,
    Warudo: turn on its VMC receiver, port 39540).  The delay from the microphone to the mouth is printed at
    the start.

    Follow-along: --script FILE shows where the reader is in the text (words read, the word being read, words
    passed over), each word final about 200 ms after its end; the reader may pause, repeat a line or skip ahead."""
    from speechattn.cli.common import check_writable
    from speechattn.runtime.mic import format_devices, input_devices, run
    from speechattn.runtime.transcribe import resolve_model

    sender = None
    if vmc is not None:  # a bad address (an empty one too) is said before any device is opened
        from speechattn.runtime.vmc import VmcSender, parse_address

        sender = VmcSender(*parse_address(vmc))
    try:
        import sounddevice  # noqa: F401
    except OSError as error:  # the PortAudio library itself is missing
        raise SpeechattnError(f"PortAudio is not installed ({error}); on Debian/Ubuntu: apt-get install libportaudio2") from None
    if list_devices:
        print(format_devices(input_devices()))
        return 0
    if output and save_audio and (output.resolve() == save_audio.resolve() or same_file(output, save_audio)):
        raise UsageError(f"--output and --save-audio name the same file ({output}): each needs its own")
    for path in (output, save_audio):
        if path:
            if script_file is not None and same_file(path, script_file):
                raise UsageError(f"{path} is the --script: it would be overwritten; write elsewhere")
            check_writable(path)
    if save_audio and save_audio.suffix.lower() not in (".wav", ".flac"):
        raise UsageError(f"--save-audio {save_audio}: give a .wav or .flac file name")
    if model and not str(model).endswith(".onnx") and Path(str(model)).exists():
        raise SpeechattnError(f"--model {model}: not an ONNX file (export a checkpoint first: speechattn export)")
    stream_model = load_onnx(resolve_model(model), threads=1)  # a file that is no model: one line, before a device
    from speechattn_export.pipeline import DecodingOptions

    options = DecodingOptions(decoder=decoder, min_frames=min_frames, chunk_frames=chunk_frames, visemes=visemes)
    script = None
    if script_file is not None:
        from speechattn.runtime.align import load_lexicon, read_text, script_and_language, script_words

        refuse_special_texts(script=script_file, dictionary=dictionary)
        text, name = read_text(script_file, "script")
        text, language = script_and_language(text, name, language, dictionary)  # a WebVTT file's own Language
        script = (text, *script_words(text, name, load_lexicon(dictionary, language)))
    elif dictionary is not None:
        raise UsageError("--dictionary gives pronunciations for --script's words; give --script too")
    elif language is not None:
        raise UsageError("--language is the language of --script's words; give --script too")
    summary = run(stream_model, device, options, output, save_audio, seconds, vmc=sender, script=script)
    print(f"speechattn mic: {summary.text()}", file=sys.stderr)
    for path in (output, save_audio):
        if path:
            print(f"wrote {path}", file=sys.stderr)
    return 0


@click.command()
@option("--port", type=click.IntRange(0, 65535), default=8000, help="TCP port (0: any free port)")
@option("--host", default="127.0.0.1", help="address to listen on (0.0.0.0: every interface)")
def web(port, host):
    """Serve the browser page: live phones from the microphone, in the page.

    The page (export/web/) runs a bundled model (fp32 by default, int8 in its menu) with onnxruntime-web (WebAssembly): microphone capture
    through an AudioWorklet, resampling to 16 kHz, provisional and final phones, a scrolling posteriorgram,
    latency and real-time factor; a dropped audio file is transcribed too.  onnxruntime-web's runtime files come
    with the package (no Node.js needed).  Browsers allow the microphone on localhost; from another machine,
    serve it over HTTPS."""
    from speechattn.runtime.web import serve

    serve(host, port, ready=lambda url: print(f"serving the page at {url} (Ctrl-C stops)", flush=True))
    return 0
