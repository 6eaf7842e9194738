"""The `speechattn` command: a click group, one command per verb.

Heavy imports (torch, onnxruntime, lhotse, matplotlib) live inside each command, so `--help` is
instant and the runtime commands (transcribe, mic) never import torch.  A user mistake prints one
line, `speechattn COMMAND: error: ...`, and exits 2; no traceback.  Logging is configured here and
nowhere else: library modules only use their own `logging.getLogger(__name__)`.

Shell completion (bash; zsh and fish alike):  eval "$(_SPEECHATTN_COMPLETE=bash_source speechattn)"
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import click

from speechattn.errors import ConfigError, SpeechattnError


def _parse_overrides(pairs: list[str]) -> dict:
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
        node[leaf] = yaml.safe_load(raw)
    return result


def _check_writable(output: Path) -> None:
    """One line now, before the work, if `output` cannot be written."""
    directory = output.parent if str(output.parent) else Path(".")
    if output.is_dir():
        raise SpeechattnError(f"{output}: a directory; give a file name")
    if not directory.is_dir():
        raise SpeechattnError(f"{output}: the directory {directory} does not exist")
    if not os.access(directory, os.W_OK) or (output.exists() and not os.access(output, os.W_OK)):
        raise SpeechattnError(f"{output}: not writable (read-only directory or file)")


def cmd_init(args) -> int:
    import torch

    from speechattn.model.encoder import ModelConfig, PhoneTagger, save_checkpoint

    config = ModelConfig.from_dict(_parse_overrides(args.set), source="--set")
    torch.manual_seed(args.seed)
    _check_writable(Path(args.output))
    model = PhoneTagger(config)
    save_checkpoint(model, args.output, seed=args.seed, trained=False)
    print(f"wrote {args.output}: randomly initialised (seed {args.seed}), {model.num_parameters():,} parameters, "
          f"{config.num_layers} layers x {config.model_dim} dims, {config.frontend.kind} features")
    return 0


def cmd_export(args) -> int:
    from speechattn.model.export import export_onnx
    from speechattn.model.encoder import load

    output = Path(args.output)
    _check_writable(output)
    model = load(args.checkpoint)
    print(f"exporting {args.checkpoint} ({model.num_parameters():,} parameters) -> {output}"
          f"{' (int8)' if args.int8 else ''}; verifying against torch ...", file=sys.stderr)
    verify_audio = None
    if args.verify_audio:
        from speechattn.audio import load_audio

        verify_audio = load_audio(args.verify_audio)
    try:
        result = export_onnx(model, output, chunk_frames=args.chunk_frames, int8=args.int8, verify_audio=verify_audio)
    except OSError as error:
        raise SpeechattnError(f"{output}: cannot write ({error.strerror or error})") from None
    size_mb = output.stat().st_size / 1e6
    print(f"wrote {output} ({size_mb:.1f} MB). Verified: {result}")
    return 0


def cmd_stream_check(args) -> int:
    from speechattn.audio import SAMPLE_RATE, load_audio, speechlike_signal
    from speechattn.model.streamcheck import TOLERANCE, format_rows, run_check

    if args.audio:
        audio, source = load_audio(args.audio), str(args.audio)
        peak = float(abs(audio).max()) if audio.size else 0.0
        if peak > 1.0:
            logging.getLogger("speechattn.cli").warning(
                "%s: float samples reach %.2f, over full scale; clipped to [-1, 1]", args.audio, peak)
            audio = audio.clip(-1.0, 1.0)
    else:
        audio, source = speechlike_signal(args.seconds, seed=0), "generated speech-like signal (seed 0)"
    if not Path(args.model).exists():
        raise SpeechattnError(f"{args.model}: no such model file")
    print(f"audio: {source}, {len(audio) / SAMPLE_RATE:.2f} s")
    rows = run_check(Path(args.model), audio, args.checkpoint, args.chunk_frames, progress=sys.stderr.isatty())
    print(format_rows(rows))
    bad = [r for r in rows if not r.exact]
    if bad:
        print(f"NOT EXACT: {len(bad)} of {len(rows)} comparisons exceed {TOLERANCE:g} or change a label")
        return 1
    print(f"streaming is exact: all {len(rows)} comparisons within {TOLERANCE:g}, every frame's label equal")
    if args.checkpoint is None:
        print("(give --checkpoint CKPT to compare with the torch model as well)")
    return 0


def cmd_prepare(args) -> int:
    from speechattn.data.prepare import prepare
    from speechattn.training.recipes import load_recipe

    recipe = load_recipe(args.recipe, _parse_overrides(args.set))
    import time

    started = time.perf_counter()
    summaries = prepare(recipe, args.out, progress=sys.stderr.isatty())
    source = "synthesized here" if recipe.data.corpus == "synth" else f"from {recipe.data.root}"
    print(f"{recipe.name}: {recipe.data.corpus} corpus {source}, {time.perf_counter() - started:.0f} s")
    print(f"{'split':<6} {'utterances':>10} {'speakers':>9} {'hours':>7}")
    for s in summaries:
        print(f"{s.split:<6} {s.utterances:>10} {s.speakers:>9} {s.hours:>7.3f}")
    return 0


def cmd_pseudo_label(args) -> int:
    import time

    from speechattn.training.pseudo import pseudo_label

    output = Path(args.out)
    started = time.perf_counter()
    summary = pseudo_label(args.root, output, args.name, args.teacher, args.min_confidence,
                           progress=sys.stderr.isatty())
    print(f"{args.name}: {summary.utterances} utterances, {summary.speakers} speakers, {summary.hours:.2f} h, "
          f"{time.perf_counter() - started:.0f} s; {summary.labelled_share:.1%} of frames labelled "
          f"(posterior >= {args.min_confidence}), mean posterior of the decoded phone {summary.mean_confidence:.3f}")
    print(f"wrote {output / args.name}_{{recordings,supervisions}}_train.jsonl.gz (list it in train.sets)")
    for reason in summary.skipped:
        print(f"left out: {reason}", file=sys.stderr)
    return 1 if summary.skipped else 0


def cmd_data_stats(args) -> int:
    from speechattn.data.datastats import format_stats, manifest_stats, plot_phone_distribution

    stats = manifest_stats(args.manifest)
    name = Path(args.manifest).name.removesuffix(".jsonl.gz")
    print(format_stats(stats, name))
    if args.plot:
        plot_phone_distribution(stats, name, args.plot)
        print(f"wrote {args.plot}")
    return 0


def cmd_show_item(args) -> int:
    import numpy as np
    import soundfile as sf

    from speechattn.data.augment import AugmentConfig
    from speechattn.data.dataset import FrameLabelDataset
    from speechattn.runtime.plots import plot_labelled_audio

    cuts = _manifest_cuts([Path(args.supervisions)], None, args.allow_command_sources)
    matches = [cut for cut in cuts if cut.supervisions[0].id == args.id]
    if not matches:
        raise SpeechattnError(f"{args.supervisions}: no item {args.id!r} (first ids: "
                              f"{', '.join(c.supervisions[0].id for c in list(cuts)[:3])})")
    dataset = FrameLabelDataset(matches, augment=AugmentConfig() if args.augment else None, crop_seconds=None,
                                seed=args.seed)
    audio, labels = dataset.load(matches[0], np.random.default_rng([args.seed, 0, 0]) if args.augment else None)
    supervision = matches[0].supervisions[0]
    print(f"{args.id}: {len(audio) / 16000:.2f} s, speaker {supervision.speaker}, text: {supervision.text}")
    from speechattn.segments import label_intervals
    from speechattn.phones import PHONES

    print(" ".join(PHONES[p] if p >= 0 else "·" for _, _, p in label_intervals(labels)))
    title = f"{args.id} ({supervision.speaker}){' augmented' if args.augment else ''}: {supervision.text or ''}"
    if args.plot:
        plot_labelled_audio(audio, labels, args.plot, title[:120])
        print(f"wrote {args.plot}")
    if args.wav:
        sf.write(args.wav, audio, 16000)
        print(f"wrote {args.wav}")
    return 0


def cmd_train(args) -> int:
    from speechattn.training.recipes import load_recipe
    from speechattn.training.train import train

    if args.resume and args.overwrite:
        raise SpeechattnError("--resume continues a run and --overwrite replaces it: give one of them")
    overrides = _parse_overrides(args.set)
    if args.init_from:
        overrides.setdefault("train", {})["init_from"] = args.init_from
    recipe = load_recipe(args.recipe, overrides)
    out = args.out or Path("runs") / recipe.name
    result = train(recipe, out, resume=args.resume, progress=sys.stderr.isatty(), overwrite=args.overwrite,
                   allow_command_sources=args.allow_command_sources)
    if result["rank"] != 0:
        return 0  # a torchrun worker other than rank 0: rank 0 reports
    best = (f"best dev frame accuracy {100 * result['best_dev_frame_accuracy']:.2f} % "
            f"(chunk {recipe.model.default_chunk_frames})" if result["dev_utterances"] else
            "no dev data, so no dev figures and no best.pt")
    print(f"{recipe.name}: {result['steps']} steps, {result['processes']} process(es); {best}; "
          f"checkpoints and logs in {out}")
    if result["evaluation"]:
        print(f"best.pt on dev (written to {out}/eval.txt, eval.json, confusion.png; curves in curves.png):")
        print(result["evaluation"])
    return 0


def _manifest_cuts(paths: list[Path], limit: int | None, allow_command_sources: bool = False):
    from speechattn.data.dataset import cuts_from_manifests
    from speechattn.data.manifests import recordings_beside

    cuts = []
    for supervisions in paths:
        recordings = recordings_beside(supervisions)
        if not supervisions.exists():
            raise SpeechattnError(f"{supervisions}: no such manifest")
        if recordings is None or not recordings.exists():
            raise SpeechattnError(f"{supervisions}: expected a *_supervisions_* manifest from `speechattn prepare` "
                                  "with its *_recordings_* manifest beside it")
        cuts += list(cuts_from_manifests(recordings, supervisions, allow_command_sources=allow_command_sources))
    if not cuts:
        raise SpeechattnError(f"{', '.join(map(str, paths))}: no utterances")
    return cuts[:limit] if limit else cuts


def cmd_eval(args) -> int:
    import json

    from speechattn.training.evaluate import evaluate_checkpoint, evaluate_onnx, format_table, plot_confusion

    cuts = _manifest_cuts(args.data, args.limit, args.allow_command_sources)
    model_path = Path(args.model)
    if not model_path.exists():
        raise SpeechattnError(f"{model_path}: no such model file")
    progress = sys.stderr.isatty()
    if model_path.suffix == ".onnx":
        onnx_model = _load_onnx(model_path)
        allowed, default_chunk = onnx_model.allowed_chunk_frames, onnx_model.default_chunk_frames
        chunks = args.chunk_frames or list(allowed)
        if "full" in chunks:
            raise SpeechattnError("full context is for checkpoints; an ONNX file streams (give chunk sizes)")
        bad = [c for c in chunks if c not in allowed]
        if bad:
            raise SpeechattnError(f"chunk size(s) {bad} not allowed by {model_path}: {list(allowed)}")
        scores = evaluate_onnx(model_path, cuts, chunks, args.min_frames, args.decoder, progress=progress)
    else:
        from speechattn.model.encoder import load

        model = load(model_path)
        allowed, default_chunk = model.config.chunk_frames_choices, model.config.default_chunk_frames
        chunks = [None if c == "full" else c for c in (args.chunk_frames or ["full", *allowed])]
        bad = [c for c in chunks if c is not None and c not in allowed]
        if bad:
            raise SpeechattnError(f"chunk size(s) {bad} not trained for by {model_path}: {list(allowed)} or full")
        scores = evaluate_checkpoint(model, cuts, chunks, args.min_frames, progress=progress, decoder=args.decoder)
    hours = sum(c.duration for c in cuts) / 3600
    shown = next((s for s in scores if s.chunk_frames == default_chunk), scores[-1])  # per-phone table, confusions
    if args.json:
        print(json.dumps({"model": str(model_path), "data": [str(d) for d in args.data], "utterances": len(cuts),
                          "hours": round(hours, 4), "min_frames": args.min_frames, "decoder": args.decoder,
                          "results": [s.summary() for s in scores]}, indent=1))
    else:
        print(f"{model_path} on {', '.join(map(str, args.data))}: {len(cuts)} utterances, {hours:.2f} h")
        print(format_table(scores))
        accuracy = shown.per_phone_accuracy()
        totals = shown.confusion.sum(1)
        cells = [f"{p:>4} {100 * a:5.1f}% {n:>7}" for (p, a), n in zip(accuracy.items(), totals) if a is not None]
        print(f"per-phone frame accuracy and frames, chunk {shown.chunk_frames or 'full'}:")
        for row in range(0, len(cells), 4):
            print("   ".join(cells[row : row + 4]))
    if args.confusion:
        plot_confusion(shown, args.confusion)
        print(f"wrote {args.confusion}", file=sys.stderr)
    return 0


def output_names(files: list[Path]) -> dict[Path, str]:
    """A distinct output name (without suffix) for every input: its stem, or where stems collide (a.wav and
    a.flac, d1/x.wav and d2/x.wav) its path below the colliding files' common directory, with the extension."""
    import os.path
    from collections import defaultdict

    by_stem: dict[str, list[Path]] = defaultdict(list)
    for path in dict.fromkeys(files):
        by_stem[path.stem].append(path)
    names = {}
    for stem, paths in by_stem.items():
        if len(paths) == 1:
            names[paths[0]] = stem
            continue
        common = Path(os.path.commonpath([str(p.resolve().parent) for p in paths]))
        for path in paths:
            names[path] = str(path.resolve().relative_to(common)).replace(os.sep, "__")
    return names


def cmd_transcribe(args) -> int:
    from speechattn.audio import AudioError
    from speechattn.runtime.transcribe import (PLOT_MAX_SECONDS, as_ctm, as_json, as_text, plot_transcript,
                                               resolve_model, transcribe_file, write_textgrid)

    model = _load_onnx(resolve_model(args.model), args.threads)
    chunk = args.chunk_frames or model.default_chunk_frames
    if chunk not in model.allowed_chunk_frames:
        raise SpeechattnError(f"--chunk-frames {chunk}: {model.path} serves {list(model.allowed_chunk_frames)}")
    if args.format == "textgrid" and len(args.files) > 1 and not args.output_dir:
        raise SpeechattnError("--format textgrid with several files needs --output-dir (one TextGrid per file)")
    if args.output_dir:
        if args.output_dir.exists() and not args.output_dir.is_dir():
            raise SpeechattnError(f"--output-dir {args.output_dir}: a file, not a directory")
        try:
            args.output_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise SpeechattnError(f"--output-dir {args.output_dir}: cannot create it ({error.strerror})") from None
        if not os.access(args.output_dir, os.W_OK):
            raise SpeechattnError(f"--output-dir {args.output_dir}: not writable")
    if args.plot:
        import importlib.util

        if importlib.util.find_spec("matplotlib") is None:
            raise SpeechattnError("--plot needs matplotlib: pip install 'speechattn[plot]'")
    names = output_names(args.files)
    suffix = {"text": ".txt", "json": ".json", "ctm": ".ctm", "textgrid": ".TextGrid"}[args.format]
    failed = 0
    for path in args.files:
        try:
            transcript = transcribe_file(model, path, chunk, args.min_frames, keep=bool(args.plot),
                                         progress=sys.stderr.isatty(), decoder=args.decoder)
            target = args.output_dir / (names[path] + suffix) if args.output_dir else None
            _write_transcript(transcript, args.format, target, write_textgrid,
                              {"text": as_text, "json": as_json, "ctm": as_ctm})
        except (AudioError, ValueError) as error:  # ValueError: what the client refuses to stream
            print(f"speechattn transcribe: error: {error}", file=sys.stderr)
            failed += 1
            continue
        except OSError as error:
            print(f"speechattn transcribe: error: {path}: cannot write {target} ({error.strerror})", file=sys.stderr)
            failed += 1
            continue
        if target is not None:
            print(f"wrote {target}", file=sys.stderr)
        if args.plot:
            if transcript.audio is None:
                print(f"speechattn transcribe: {path}: {transcript.duration:.0f} s is longer than the "
                      f"{PLOT_MAX_SECONDS} s a picture can show; no plot", file=sys.stderr)
                continue
            plot_path = args.plot if len(args.files) == 1 else args.plot.with_name(f"{args.plot.stem}-{names[path]}.png")
            plot_transcript(transcript, plot_path)
            print(f"wrote {plot_path}", file=sys.stderr)
    if failed:
        print(f"speechattn transcribe: {failed} of {len(args.files)} file(s) could not be transcribed", file=sys.stderr)
        return 1
    return 0


def _load_onnx(model_path: Path, threads: int | None = None):
    """The portable client's model, or one line saying why not."""
    try:
        from speechattn_export.stream_client import StreamingModel
    except ModuleNotFoundError as error:
        raise SpeechattnError(f"{error.name} is not installed: pip install onnxruntime") from None
    if not Path(model_path).exists():
        raise SpeechattnError(f"{model_path}: no such model file")
    try:
        return StreamingModel(model_path, num_threads=threads)
    except ModuleNotFoundError as error:  # the client imports onnxruntime when it opens a model
        raise SpeechattnError(f"{error.name} is not installed: pip install onnxruntime") from None
    except Exception as error:  # onnxruntime's load errors, our metadata checks
        detail = str(error).splitlines()[0][:160] if str(error) else type(error).__name__
        raise SpeechattnError(f"{model_path}: cannot load as a speechattn ONNX model ({detail})") from None


def _write_transcript(transcript, output_format: str, target: Path | None, write_textgrid, writers) -> None:
    if output_format == "textgrid":
        if target is None:
            import tempfile

            with tempfile.TemporaryDirectory() as scratch:
                write_textgrid(transcript, Path(scratch) / "out.TextGrid")
                print((Path(scratch) / "out.TextGrid").read_text(), end="")
        else:
            write_textgrid(transcript, target)
        return
    text = writers[output_format](transcript)
    if target is None:
        print(text, flush=True)
    else:
        target.write_text(text + "\n")


def cmd_web(args) -> int:
    from speechattn.runtime.web import serve

    serve(args.host, args.port, ready=lambda url: print(f"serving the page at {url} (Ctrl-C stops)", flush=True))
    return 0


def cmd_mic(args) -> int:
    from speechattn.runtime.mic import format_devices, input_devices, run
    from speechattn.runtime.transcribe import resolve_model

    try:
        import sounddevice  # noqa: F401
    except OSError as error:  # the PortAudio library itself is missing
        raise SpeechattnError(f"PortAudio is not installed ({error}); on Debian/Ubuntu: apt-get install libportaudio2") from None
    except ImportError:
        raise SpeechattnError("sounddevice is not installed: pip install sounddevice") from None
    if args.list_devices:
        print(format_devices(input_devices()))
        return 0
    summary = run(resolve_model(args.model), args.device, args.chunk_frames, args.output, args.save_audio,
                  args.min_frames, args.seconds, decoder=args.decoder)
    print(f"speechattn mic: {summary.text()}", file=sys.stderr)
    for path in (args.output, args.save_audio):
        if path:
            print(f"wrote {path}", file=sys.stderr)
    return 0


# ---------------------------------------------------------------------------------------------
# Declarations.  Options several commands share are declared once here.


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


PATH = click.Path(path_type=Path)
EXISTING_FILE = click.Path(path_type=Path, exists=True, dir_okay=False)


def _option(*names, **settings):
    settings.setdefault("show_default", True)
    return click.option(*names, **settings)


model_option = _option("--model", default=None, metavar="ONNX|NAME",
                       help="ONNX file, or a bundled model: default (fp32), default-int8  [default: default]")
chunk_option = _option("--chunk-frames", type=click.IntRange(min=1), default=None, metavar="C",
                       help="streaming chunk in 10 ms frames, one the model serves  [default: the model's, 8]")
min_frames_option = _option("--min-frames", type=click.IntRange(min=1), default=None,
                            help="shortest phone in 10 ms frames  [default: 4 with the bigram decoder, 3 with hysteresis]")
decoder_option = _option("--decoder", type=click.Choice(["bigram", "hysteresis"]), default="bigram",
                         help="phones from frame posteriors: a Viterbi phone loop with an English phone bigram "
                         "(adds 100 ms of latency), or the per-frame hysteresis rule")
threads_option = _option("--threads", type=click.IntRange(min=1), default=None,
                         help="onnxruntime threads  [default: all cores]")
seed_option = _option("--seed", type=int, default=0, help="random seed")


def set_option(example: str):
    return _option("--set", "overrides", multiple=True, metavar="SECTION.KEY=VALUE",
                   help=f"override a setting (repeatable; values read as YAML), e.g. --set {example}")


def _run(function, **kwargs) -> int:
    return function(SimpleNamespace(**kwargs))


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="speechattn", prog_name="speechattn")
def cli() -> None:
    """Streaming phone tagger: 16 kHz audio -> one of 40 phone labels every 10 ms, from a self-attention
    encoder with truncated attention, exported as one ONNX file.

    `speechattn COMMAND --help` explains each command."""


@cli.command()
@click.argument("files", nargs=-1, required=True, type=PATH, metavar="FILE...")
@model_option
@_option("--format", "output_format", type=click.Choice(["text", "json", "textgrid", "ctm"]), default="text",
         help="output format")
@_option("--output-dir", type=PATH, default=None, metavar="DIR",
         help="write FILE-stem.{txt,json,ctm,TextGrid} here instead of stdout")
@_option("--plot", type=PATH, default=None, metavar="PNG",
         help="draw waveform, spectrogram, posteriorgram and segments (several files: PNG-stem-FILE-stem.png)")
@chunk_option
@min_frames_option
@decoder_option
@threads_option
def transcribe(files, model, output_format, output_dir, plot, chunk_frames, min_frames, decoder, threads):
    """Phone segments of audio files, streamed through the ONNX model.

    Each FILE (wav, flac, ogg, mp3 ...; any sample rate and channel count: downmixed and resampled to
    16 kHz) is streamed through the model; its phone segments (start, end, phone, mean posterior as
    confidence) are printed.  A new phone must hold for --min-frames frames, so one-frame flickers do not
    become phones.  Memory stays bounded for any length.  Formats: text (the phones), json (one object
    per file and line), ctm, textgrid (Praat).  A file that cannot be read is reported in one line and
    the others are still transcribed (exit status 1)."""
    return _run(cmd_transcribe, files=list(files), model=model, format=output_format, output_dir=output_dir,
                plot=plot, chunk_frames=chunk_frames, min_frames=min_frames, decoder=decoder, threads=threads)


@cli.command()
@model_option
@_option("--device", default=None, help="input device: index or part of its name  [default: the system's input]")
@_option("--list-devices", is_flag=True, help="list input devices with their native rates and exit")
@chunk_option
@min_frames_option
@decoder_option
@_option("--output", type=PATH, default=None, metavar="FILE.jsonl", help="also write confirmed segments here")
@_option("--save-audio", type=PATH, default=None, metavar="FILE.wav", help="write the 16 kHz mono audio the model heard")
@_option("--seconds", type=click.FloatRange(min=0, min_open=True), default=None,
         help="stop after this much audio  [default: run until Ctrl-C]")
def mic(model, device, list_devices, chunk_frames, min_frames, decoder, output, save_audio, seconds):
    """Live phone transcription from a microphone.

    Captures from an input device (PortAudio) at its own rate and channel count, downmixes and
    resamples to 16 kHz, and streams through the ONNX model.  In a terminal: the phones as they are
    recognised (still-open segment dimmed, silence as ·) and a status line (input level, latency
    p50/p95 from capture to display, real-time factor).  Otherwise: one JSON line per confirmed
    segment.  Ctrl-C stops, flushes every output and prints a summary."""
    return _run(cmd_mic, model=model, device=device, list_devices=list_devices, chunk_frames=chunk_frames,
                min_frames=min_frames, decoder=decoder, output=output, save_audio=save_audio, seconds=seconds)


@cli.command()
@_option("--port", type=click.IntRange(0, 65535), default=8000, help="TCP port (0: any free port)")
@_option("--host", default="127.0.0.1", help="address to listen on (0.0.0.0: every interface)")
def web(port, host):
    """Serve the browser page: live phones from the microphone, in the page.

    The page (export/web/) runs the bundled model with onnxruntime-web (WebAssembly): microphone capture
    through an AudioWorklet, resampling to 16 kHz, 80 ms chunks, provisional and final phones, a scrolling
    posteriorgram, latency and real-time factor; a dropped audio file is transcribed too.  Needs
    onnxruntime-web beside the page: (cd export/web && npm ci).  Browsers allow the microphone on
    localhost; from another machine, serve it over HTTPS."""
    return _run(cmd_web, port=port, host=host)


@cli.command("eval")
@click.argument("model", type=PATH)
@click.argument("data", nargs=-1, required=True, type=PATH, metavar="MANIFEST...")
@_option("--chunk-frames", type=ChunkSizes(), multiple=True, default=None, metavar="C[,C...]|full",
         help="chunk sizes in frames, or 'full'  [default: full and every size the model serves]")
@min_frames_option
@decoder_option
@_option("--limit", type=click.IntRange(min=1), default=None, help="evaluate only the first N utterances")
@_option("--json", "as_json", is_flag=True, help="print the results as JSON")
@_option("--confusion", type=PATH, default=None, metavar="PNG",
         help="write the confusion matrix (at the model's default chunk) here")
@_option("--allow-command-sources", is_flag=True,
         help="let manifests run shell commands or fetch URLs to get their audio (lhotse 'command'/'url' sources)")
def evaluate(model, data, chunk_frames, min_frames, decoder, limit, as_json, confusion, allow_command_sources):
    """Frame accuracy and PER of a checkpoint or ONNX model on labelled data.

    MODEL is a .pt checkpoint (run one-shot per chunk size) or an .onnx file (streamed through the
    portable client); MANIFEST a *_supervisions_<split>.jsonl.gz from `speechattn prepare`.  Frame
    accuracy: share of 10 ms frames labelled right.  PER: edit distance of the non-silence phone
    sequences (repeats merged, hypothesis after the segmenter) over the reference length."""
    chunks = [size for group in chunk_frames or () for size in group] or None
    return _run(cmd_eval, model=model, data=list(data), chunk_frames=chunks, min_frames=min_frames, decoder=decoder,
                limit=limit,
                json=as_json, confusion=confusion, allow_command_sources=allow_command_sources)


@cli.command()
@click.argument("recipe", type=PATH)
@_option("--out", type=PATH, default=None, help="run directory  [default: runs/NAME]")
@_option("--resume", is_flag=True, help="continue from OUT/last.pt, with the recipe recorded in the run")
@_option("--overwrite", is_flag=True, help="replace an earlier run in OUT")
@_option("--init-from", default=None, metavar="default|CKPT",
         help="start from these weights (fine-tuning): the bundled default model or a checkpoint")
@_option("--allow-command-sources", is_flag=True,
         help="let manifests run shell commands or fetch URLs to get their audio (lhotse 'command'/'url' sources)")
@set_option("train.max_steps=100")
def train(recipe, out, resume, overwrite, init_from, allow_command_sources, overrides):
    """Train a model from a recipe.

    Trains the recipe's model on its prepared data (prepared first if missing): AdamW with warm-up and
    cosine decay, label smoothing, a chunk size drawn per batch, augmentation.  Writes last.pt, best.pt
    (best dev frame accuracy), train.csv, dev.csv, TensorBoard events, curves.png and an evaluation.
    --resume continues exactly where the last checkpoint stopped.  Several processes or GPUs:
    torchrun --nproc_per_node=N -m speechattn.cli train RECIPE."""
    return _run(cmd_train, recipe=recipe, out=out, resume=resume, overwrite=overwrite, init_from=init_from,
                allow_command_sources=allow_command_sources, set=list(overrides))


@cli.command()
@click.argument("checkpoint", type=PATH)
@_option("-o", "--output", type=PATH, required=True, help="ONNX file to write")
@_option("--int8", is_flag=True,
         help="8-bit weights for the encoder's matmuls (onnxruntime MatMulNBits; no calibration; chunking-exact)")
@chunk_option
@_option("--verify-audio", type=PATH, default=None, metavar="AUDIO",
         help="verify on this recording instead of a generated speech-like signal (give speech for an int8 file)")
def export(checkpoint, output, int8, chunk_frames, verify_audio):
    """Export a checkpoint to one streaming ONNX file.

    Frontend, encoder and state all inside one file (see export/CONTRACT.md).  The file is written only
    if it agrees with torch over 12 chained pushes: max |Δ log-prob| <= 1e-4 for fp32, >= 97 % equal
    labels for int8 (and an int8 file must give the same output whether the audio comes in one call or in
    random pieces)."""
    return _run(cmd_export, checkpoint=checkpoint, output=output, int8=int8, chunk_frames=chunk_frames,
                verify_audio=verify_audio)


@cli.command("stream-check")
@click.argument("model", type=PATH)
@click.argument("audio", required=False, type=PATH)
@_option("--checkpoint", type=PATH, default=None, help="the checkpoint MODEL was exported from, to compare with torch")
@_option("--chunk-frames", type=click.IntRange(min=1), multiple=True, default=None, metavar="C",
         help="chunk sizes to check (repeatable)  [default: all the model allows]")
@_option("--seconds", type=click.FloatRange(min=0.1), default=6.0, help="length of the generated signal")
def stream_check(model, audio, checkpoint, chunk_frames, seconds):
    """Prove that streaming the ONNX model equals one-shot processing.

    Streams AUDIO (default: a generated speech-like signal) through MODEL.onnx with the portable client
    at each chunk size and several push patterns and prints how far each result is from the one-shot
    result.  Exit status 1 if any comparison is not exact."""
    return _run(cmd_stream_check, model=model, audio=audio, checkpoint=checkpoint,
                chunk_frames=list(chunk_frames) or None, seconds=seconds)


@cli.command()
@_option("-o", "--output", type=PATH, required=True, help="checkpoint to write (.pt)")
@seed_option
@set_option("num_layers=4 --set frontend.kind=mfcc")
def init(output, seed, overrides):
    """Write a randomly initialised checkpoint (for trying the pipeline)."""
    return _run(cmd_init, output=output, seed=seed, set=list(overrides))


@cli.command()
@click.argument("recipe", type=PATH)
@_option("--out", type=PATH, default=None, help="manifest directory  [default: the recipe's data.output]")
@set_option("data.root=/corpora/TIMIT")
def prepare(recipe, out, overrides):
    """Build or read a corpus into lhotse manifests, split by speaker.

    Synthesizes the built-in corpus (recipes/synth-en.yaml), force-aligns real speech with pocketsphinx
    (speechocean762.yaml, ljspeech.yaml, real-dev.yaml), or reads a phone-aligned corpus (TIMIT, audio +
    TextGrid phone tiers, audio + HTK .lab).  Phones are mapped into the 40 classes (an unknown symbol
    stops with the file and symbol named).  Finished work (synthesized audio, alignments) is reused."""
    return _run(cmd_prepare, recipe=recipe, out=out, set=list(overrides))


@cli.command("pseudo-label")
@click.argument("root", type=click.Path(exists=True, file_okay=False, path_type=Path), metavar="DIR")
@_option("--out", type=PATH, required=True, help="directory for the manifests")
@_option("--name", default="pseudo", help="manifest name (the prefix train.sets lists is OUT/NAME)")
@_option("--teacher", default="default", metavar="CHECKPOINT|default", help="the tagger that labels")
@_option("--min-confidence", type=click.FloatRange(0, 1, max_open=True), default=0.5,
         help="frames whose decoded phone has a lower posterior stay unlabelled")
def pseudo_label(root, out, name, teacher, min_confidence):
    """Label untranscribed speech with a trained tagger (DIR/utterances.tsv + DIR/audio/).

    The teacher sees each whole utterance (full context); the bigram decoder gives the phone path; unsure
    frames are left out.  A streaming model trained on the result learns what the same weights know when
    they see the future, on whatever speakers DIR holds.  Labels made this way are bronze: measure on
    labelled dev speech whether they help."""
    return _run(cmd_pseudo_label, root=root, out=out, name=name, teacher=teacher, min_confidence=min_confidence)


@cli.command("data-stats")
@click.argument("manifest", type=PATH)
@_option("--plot", type=PATH, default=None, metavar="PNG", help="write a bar chart of the phone distribution")
def data_stats(manifest, plot):
    """Utterances, speakers, hours and 10 ms frames per phone of a supervisions manifest."""
    return _run(cmd_data_stats, manifest=manifest, plot=plot)


@cli.command("show-item")
@click.argument("supervisions", type=PATH)
@click.argument("item_id", metavar="ID")
@_option("--plot", type=PATH, default=None, metavar="PNG", help="write waveform, spectrogram and labels here")
@_option("--wav", type=PATH, default=None, help="write the (augmented) audio here")
@_option("--augment", is_flag=True, help="apply the default training augmentation")
@seed_option
def show_item(supervisions, item_id, plot, wav, augment, seed):
    """One utterance of a manifest as training sees it: labels, a picture, a WAV."""
    return _run(cmd_show_item, supervisions=supervisions, id=item_id, plot=plot, wav=wav, augment=augment, seed=seed,
                allow_command_sources=False)


def main(argv: list[str] | None = None) -> int:
    """Entry point: runs the group, turning every user mistake into one line and exit status 2."""
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    for noisy in ("lhotse", "matplotlib", "PIL", "urllib3", "numba"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in argv if not a.startswith("-")), "")
    prefix = f"speechattn {command}".rstrip() if command in cli.commands else "speechattn"
    try:
        result = cli.main(args=argv, prog_name="speechattn", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as error:
        click.echo(error.ctx.get_help() if error.ctx else str(error))
        return 2
    except click.UsageError as error:
        hint = f" (see {prefix} --help)"
        print(f"{prefix}: error: {error.format_message()}{hint}", file=sys.stderr)
        return 2
    except click.ClickException as error:
        print(f"{prefix}: error: {error.format_message()}", file=sys.stderr)
        return 2
    except click.exceptions.Abort:
        print("interrupted", file=sys.stderr)
        return 130
    except SpeechattnError as error:
        print(f"{prefix}: error: {error}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as error:
        package = (error.name or "").split(".")[0]
        hint = ("pip install onnxruntime" if package == "onnxruntime" else
                "pip install 'speechattn[plot]'" if package in ("matplotlib", "scipy") else
                "pip install 'speechattn[train]' (and torch==2.13.0 for the CPU build)")
        print(f"{prefix}: error: this needs {package}, which is not installed: {hint}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into a reader that stopped early (head, less): not an error
        sys.stdout = open(os.devnull, "w")
        return 0
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    sys.exit(main())
