"""What several commands share: option declarations, --set parsing, output checks, model loading.

Only click and the standard library at module level, so `speechattn --help` stays instant."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from speechattn.errors import ConfigError, SpeechattnError, UsageError
from speechattn_export.registry import DECODERS, registry


def parse_overrides(pairs: list[str] | tuple[str, ...]) -> dict:
    """--set a.b=value pairs -> nested dict; values are read as YAML (numbers, lists, true/false)."""
    import yaml

    result: dict = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set {pair!r}: expected KEY=VALUE, e.g. --set num_layers=4")
        node = result
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--set {pair!r}: {part} is set to a value and used as a section")
        try:
            node[leaf] = yaml.safe_load(raw)
        except yaml.YAMLError as error:  # a !!python tag, an unclosed bracket ...
            problem = str(getattr(error, "problem", "") or error).splitlines()[0]
            raise ConfigError(f"--set {pair!r}: the value is not plain YAML ({problem})") from None
    return result


def same_file(a, b) -> bool:
    """Whether two paths are one file (symbolic and hard links included); False when either does not exist."""
    try:
        return str(a) != "-" and str(b) != "-" and os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def refuse_overwriting_inputs(outputs: dict, inputs: list) -> None:
    """A usage error when an output path (option -> path) is one of the command's inputs, resolved or linked."""
    for option_name, output in outputs.items():
        if output is None:
            continue
        for source in inputs:
            if source is not None and (same_file(output, source) or Path(output).resolve() == Path(source).resolve()):
                raise UsageError(f"{option_name} {output} is one of the inputs ({source}): it would be overwritten; "
                                 "write elsewhere")


def check_writable(output: str | Path) -> None:
    """One line now, before the work, if `output` cannot be written as a file (given as the user's string, a name
    spelled as a directory, "x.wav/", is refused too: Path() would drop the separator and name the file x.wav)."""
    if isinstance(output, str) and (problem := directory_spelling(output)) is not None:
        raise UsageError(problem)
    output = Path(output)
    try:
        _check_writable(output)
    except OSError as error:  # a name the file system refuses (too long; Python 3.11's pathlib raises it)
        raise UsageError(f"{output}: cannot write it ({error.strerror or error})") from None


def _check_writable(output: Path) -> None:
    from speechattn.files import special_kind

    if special_kind(output) is not None:  # /dev/stdout, a FIFO: written in place (files.atomic_path), not beside
        if not os.access(output, os.W_OK):
            raise UsageError(f"{output}: not writable")
        return
    directory = output.parent if str(output.parent) else Path(".")
    if output.is_dir() or output.name in ("", ".", ".."):
        raise UsageError(f"{output}: a directory; give a file name")
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{output}: {directory} is a file, not a directory")
    if not directory.is_dir():
        raise UsageError(f"{output}: the directory {directory} does not exist")
    if not os.access(directory, os.W_OK) or (output.exists() and not os.access(output, os.W_OK)):
        raise UsageError(f"{output}: not writable (read-only directory or file)")


def output_directory(directory: Path, option: str = "--output-dir") -> None:
    """One line now, before the work, if `directory` cannot be made or written (a file, a read-only place, a name
    too long); made if it is not there."""
    try:
        if directory.exists() and not directory.is_dir():
            raise UsageError(f"{option} {directory}: a file, not a directory")
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UsageError(f"{option} {directory}: cannot create it ({error.strerror or error})") from None
    if not os.access(directory, os.W_OK):
        raise UsageError(f"{option} {directory}: not writable")


def progress_wanted() -> bool:
    """Progress bars on a terminal only (a log file gets the summaries)."""
    return sys.stderr.isatty()


def decoding_options(model, decoder: str = "bigram", min_frames: int | None = None, chunk_frames: int | None = None,
                     visemes: str | None = None):
    """The one DecodingOptions a command passes on, its chunk size checked against the model (a usage error)."""
    from speechattn_export.pipeline import DecodingOptions

    try:
        return DecodingOptions(decoder=decoder, min_frames=min_frames, chunk_frames=model.check_chunk(chunk_frames),
                               visemes=visemes)
    except ValueError as error:
        raise UsageError(f"{Path(model.path).name}: {error} (--chunk-frames)" if "chunk_frames" in str(error)
                         else str(error)) from None


def load_onnx(model_path: Path, threads: int | None = None, provider: str | None = None):
    """The portable client's model, or one line saying why not; `provider` "cpu" or "cuda" (None: onnxruntime's
    first available, as the client's default)."""
    from speechattn.audio import HOP_SAMPLES, SAMPLE_RATE
    from speechattn.files import permission_problem, refuse_special
    from speechattn_export.stream_client import StreamingModel, providers_for

    try:
        if not Path(model_path).exists():
            raise SpeechattnError(f"{model_path}: no such model file")
    except PermissionError:  # in a folder this user cannot enter
        raise SpeechattnError(f"{model_path}: {permission_problem(model_path)}") from None
    refuse_special(model_path, "model")
    try:
        providers = providers_for(provider)
    except ValueError as error:
        raise SpeechattnError(f"--provider {provider}: {error}") from None
    try:
        model = StreamingModel(model_path, providers=providers, num_threads=threads)
    except ValueError as error:  # the client's own checks name the file
        raise SpeechattnError(str(error).splitlines()[0][:400]) from None
    except Exception as error:
        # onnxruntime's load errors: RuntimeError subclasses and its own types (Fail, InvalidGraph ...)
        if not isinstance(error, (RuntimeError, OSError)) and not type(error).__module__.startswith("onnxruntime"):
            raise
        detail = str(error).splitlines()[0][:160] if str(error) else type(error).__name__
        raise SpeechattnError(f"{model_path}: cannot load as a speechattn ONNX model ({detail})") from None
    if (model.sample_rate, model.hop_samples) != (SAMPLE_RATE, HOP_SAMPLES):  # the runtime's audio and times
        raise SpeechattnError(f"{model_path}: takes {model.sample_rate} Hz audio in hops of {model.hop_samples} "
                              f"samples; speechattn streams {SAMPLE_RATE} Hz in hops of {HOP_SAMPLES} (10 ms)")
    return model


def manifest_cuts(paths: list[Path], limit: int | None = None, allow_command_sources: bool = False):
    from speechattn.data.dataset import cuts_from_manifests
    from speechattn.data.manifests import check_manifest_values, recordings_beside, unpaired
    from speechattn.files import refuse_special

    cuts = []
    for supervisions in paths:
        recordings = recordings_beside(supervisions)
        if not supervisions.exists():
            raise SpeechattnError(f"{supervisions}: no such manifest")
        if recordings is None or not recordings.exists():
            raise SpeechattnError(unpaired(supervisions, recordings))
        for manifest in (supervisions, recordings):
            refuse_special(manifest, "manifest")
            check_manifest_values(manifest)
        cuts += list(cuts_from_manifests(recordings, supervisions, allow_command_sources=allow_command_sources))
    if not cuts:
        raise SpeechattnError(f"{', '.join(map(str, paths))}: no utterances")
    return cuts[:limit] if limit else cuts


class ChunkSizes(click.ParamType):
    """Chunk sizes in frames, comma-separated or repeated, or "full" (eval)."""

    name = "C[,C...]|full"

    def convert(self, value, param, ctx):
        if isinstance(value, list):
            return value
        sizes = []
        for part in str(value).split(","):
            part = part.strip()
            if part == "full":
                sizes.append(part)
                continue
            try:
                number = int(part)
            except ValueError:
                self.fail(f"{part!r}: a chunk size in frames (e.g. 8) or 'full'", param, ctx)
            if number < 1:
                self.fail(f"{part!r}: chunk sizes are at least 1 frame", param, ctx)
            sizes.append(number)
        return sizes


class FiniteFloatRange(click.FloatRange):
    """click's FloatRange, refusing nan (which compares false with every bound, so FloatRange lets it through)."""

    def convert(self, value, param, ctx):
        import math

        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


PATH = click.Path(path_type=Path)


def directory_spelling(raw: str) -> str | None:
    """The one line for an output file spelled as a directory ("victim.wav/"), or None.  Path() drops a trailing
    separator, so "victim.wav/" would otherwise name the file victim.wav: a recording replaced by text."""
    if raw not in ("", "-") and (raw.endswith("/") or raw.endswith(os.sep) or raw.rstrip("/") in (".", "..")
                                 or raw.endswith("/.") or raw.endswith("/..")):
        return f"{raw}: ends as a directory does; give a file name (nothing was written)"
    return None


class OutputFile(click.Path):
    """An option or argument naming a file to write: refused in one line (exit 2) when spelled as a directory."""

    def __init__(self) -> None:
        super().__init__(path_type=Path, dir_okay=True, readable=False)  # written, not read: /dev/stdout too

    def convert(self, value, param, ctx):
        if isinstance(value, str) and (problem := directory_spelling(value)) is not None:
            self.fail(problem, param, ctx)
        return super().convert(value, param, ctx)


OUTPUT_FILE = OutputFile()  # every option that writes one file (-o, --plot, --confusion, --wav, --save-audio ...)


def option(*names, **settings):
    settings.setdefault("show_default", True)
    return click.option(*names, **settings)


def model_option_for(default: str):
    """--model, its default said as `default`."""
    return option("--model", default=None, metavar="ONNX|NAME",
                  help="ONNX file, or a bundled model: " + ", ".join(f"{name} ({entry['description']})" for name, entry
                                                                    in registry()["models"].items())
                  + f"  [default: {default}]")


model_option = model_option_for(registry()["default"])


def chunk_frames_option(default: str = "the model's"):
    """--chunk-frames, its default said as `default` (the live commands take the model's, a file its largest)."""
    return option("--chunk-frames", type=click.IntRange(min=1), default=None, metavar="C",
                  help=f"streaming chunk in 10 ms frames, one the model serves  [default: {default}]")


chunk_option = chunk_frames_option()
min_frames_option = option("--min-frames", type=click.IntRange(min=1), default=None,
                           help="shortest phone in 10 ms frames  [default: 4 with the bigram decoder, 3 with hysteresis]")
decoder_option = option("--decoder", type=click.Choice(DECODERS), default="bigram",
                        help="phones from frame posteriors: bigram = a Viterbi search over a phone loop weighted by "
                        "English phone pairs (final 100 ms after the frame); hysteresis = each frame's most likely "
                        "phone, a new phone once it has held --min-frames frames")
threads_option = option("--threads", type=click.IntRange(min=1, max=256), default=1,
                        help="onnxruntime threads of each stream (of each worker with --jobs): another count may change the "
                        "confidences written (onnxruntime splits its arithmetic by thread count); --jobs and --ray "
                        "never do")
seed_option = option("--seed", type=click.IntRange(0, 2**32 - 1), default=0, help="random seed")
command_sources_option = option(
    "--allow-command-sources", is_flag=True,
    help="let manifests run shell commands or fetch URLs to get their audio (lhotse 'command'/'url' sources)")


def set_option(example: str):
    return option("--set", "overrides", multiple=True, metavar="SECTION.KEY=VALUE",
                  help=f"override a setting (repeatable; values read as YAML), e.g. --set {example}")


def check_phases(model, phases: int) -> None:
    """--phases a count of evenly spaced shifts within the model's encoder step (StreamingModel.phase_counts), or a
    usage error."""
    if phases not in model.phase_counts:
        raise UsageError(f"--phases {phases}: this model's encoder steps {model.frame_subsampling} frame(s) at a time; "
                         f"give --phases {' or '.join(map(str, model.phase_counts))} (evenly spaced shifts within it)")


def speed_phrase(audio_seconds: float, wall_seconds: float) -> str:
    """", N x real time" (two figures under 10, so a tiny file is not "0 x"), or "" without a measure."""
    if wall_seconds <= 0 or not audio_seconds:
        return ""
    ratio = audio_seconds / wall_seconds
    return f", {ratio:.0f} x real time" if ratio >= 10 else f", {ratio:.2g} x real time"


def audio_amount(seconds: float) -> str:
    """How much audio, as the summaries say it: hours from 0.1 h (6 minutes), seconds below."""
    return f"{seconds / 3600:.2f} h" if seconds >= 360 else f"{seconds:.1f} s"


def known_language(language: str | None) -> str | None:
    """--language (align, transcribe --dialog, mic --script): a language espeak-ng does not speak is a usage error,
    before anything is read (without espeak-ng, the first text's words say what to install)."""
    if language is not None:
        from speechattn.runtime.languages import EspeakMissing, LanguageError, LexiconOfLanguage

        try:
            LexiconOfLanguage(language)
        except EspeakMissing:
            pass
        except LanguageError as error:
            raise UsageError(f"--language: {error}") from None
    return language
