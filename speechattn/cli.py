"""The `speechattn` command.  Heavy imports live inside each command so `--help` is instant."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .errors import ConfigError, SpeechattnError


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


def cmd_init(args) -> int:
    import torch

    from .model import ModelConfig, PhoneTagger, save_checkpoint

    config = ModelConfig.from_dict(_parse_overrides(args.set), source="--set")
    torch.manual_seed(args.seed)
    model = PhoneTagger(config)
    save_checkpoint(model, args.output, seed=args.seed, trained=False)
    print(f"wrote {args.output}: randomly initialised (seed {args.seed}), {model.num_parameters():,} parameters, "
          f"{config.num_layers} layers x {config.model_dim} dims, {config.frontend.kind} features")
    return 0


def cmd_export(args) -> int:
    from .export import export_onnx
    from .model import load

    model = load(args.checkpoint)
    output = Path(args.output)
    print(f"exporting {args.checkpoint} ({model.num_parameters():,} parameters) -> {output}"
          f"{' (int8)' if args.int8 else ''}; verifying against torch ...", file=sys.stderr)
    verify_audio = None
    if args.verify_audio:
        from .audio import load_audio

        verify_audio = load_audio(args.verify_audio)
    result = export_onnx(model, output, chunk_frames=args.chunk_frames, int8=args.int8, verify_audio=verify_audio)
    size_mb = output.stat().st_size / 1e6
    print(f"wrote {output} ({size_mb:.1f} MB). Verified: {result}")
    return 0


def cmd_stream_check(args) -> int:
    from .audio import SAMPLE_RATE, load_audio, speechlike_signal
    from .streamcheck import TOLERANCE, format_rows, run_check

    if args.audio:
        audio, source = load_audio(args.audio), str(args.audio)
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
    from .prepare import prepare
    from .recipes import load_recipe

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


def cmd_data_stats(args) -> int:
    from .datastats import format_stats, manifest_stats, plot_phone_distribution

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

    from .augment import AugmentConfig
    from .dataset import FrameLabelDataset, cuts_from_manifests
    from .plots import plot_labelled_audio

    supervisions = Path(args.supervisions)
    recordings = supervisions.with_name(supervisions.name.replace("_supervisions_", "_recordings_"))
    if "_supervisions_" not in supervisions.name or not recordings.exists():
        raise SpeechattnError(f"{supervisions}: expected a *_supervisions_* manifest with its *_recordings_* beside it")
    cuts = cuts_from_manifests(recordings, supervisions)
    matches = [cut for cut in cuts if cut.supervisions[0].id == args.id]
    if not matches:
        raise SpeechattnError(f"{supervisions}: no item {args.id!r} (first ids: {', '.join(c.supervisions[0].id for c in list(cuts)[:3])})")
    dataset = FrameLabelDataset(matches, augment=AugmentConfig() if args.augment else None, crop_seconds=None,
                                seed=args.seed)
    audio, labels = dataset.load(matches[0], np.random.default_rng([args.seed, 0, 0]) if args.augment else None)
    supervision = matches[0].supervisions[0]
    print(f"{args.id}: {len(audio) / 16000:.2f} s, speaker {supervision.speaker}, text: {supervision.text}")
    from .labels import label_intervals
    from .phones import PHONES

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
    from .recipes import load_recipe
    from .train import train

    recipe = load_recipe(args.recipe, _parse_overrides(args.set))
    out = args.out or Path("runs") / recipe.name
    result = train(recipe, out, resume=args.resume, progress=sys.stderr.isatty())
    if result["rank"] != 0:
        return 0  # a torchrun worker other than rank 0: rank 0 reports
    print(f"{recipe.name}: {result['steps']} steps, {result['processes']} process(es); best dev frame accuracy {100 * result['best_dev_frame_accuracy']:.2f} % "
          f"(chunk {recipe.model.default_chunk_frames}); checkpoints and logs in {out}")
    if result["evaluation"]:
        print(f"best.pt on dev (written to {out}/eval.txt, eval.json, confusion.png; curves in curves.png):")
        print(result["evaluation"])
    return 0


def _manifest_cuts(paths: list[Path], limit: int | None):
    from .dataset import cuts_from_manifests

    cuts = []
    for supervisions in paths:
        recordings = supervisions.with_name(supervisions.name.replace("_supervisions_", "_recordings_"))
        if not supervisions.exists():
            raise SpeechattnError(f"{supervisions}: no such manifest")
        if "_supervisions_" not in supervisions.name or not recordings.exists():
            raise SpeechattnError(f"{supervisions}: expected a *_supervisions_* manifest from `speechattn prepare` "
                                  "with its *_recordings_* manifest beside it")
        cuts += list(cuts_from_manifests(recordings, supervisions))
    if not cuts:
        raise SpeechattnError(f"{', '.join(map(str, paths))}: no utterances")
    return cuts[:limit] if limit else cuts


def cmd_eval(args) -> int:
    import json

    from .evaluate import evaluate_checkpoint, evaluate_onnx, format_table, plot_confusion

    if args.min_frames < 1:
        raise SpeechattnError("--min-frames must be at least 1")
    cuts = _manifest_cuts(args.data, args.limit)
    model_path = Path(args.model)
    if not model_path.exists():
        raise SpeechattnError(f"{model_path}: no such model file")
    progress = sys.stderr.isatty()
    if model_path.suffix == ".onnx":
        from speechattn_export.stream_client import StreamingModel

        onnx_model = StreamingModel(model_path)
        allowed, default_chunk = onnx_model.allowed_chunk_frames, onnx_model.default_chunk_frames
        chunks = args.chunk_frames or list(allowed)
        if "full" in chunks:
            raise SpeechattnError("full context is for checkpoints; an ONNX file streams (give chunk sizes)")
        bad = [c for c in chunks if c not in allowed]
        if bad:
            raise SpeechattnError(f"chunk size(s) {bad} not allowed by {model_path}: {list(allowed)}")
        scores = evaluate_onnx(model_path, cuts, chunks, args.min_frames, progress=progress)
    else:
        from .model import load

        model = load(model_path)
        allowed, default_chunk = model.config.chunk_frames_choices, model.config.default_chunk_frames
        chunks = [None if c == "full" else c for c in (args.chunk_frames or ["full", *allowed])]
        scores = evaluate_checkpoint(model, cuts, chunks, args.min_frames, progress=progress)
    hours = sum(c.duration for c in cuts) / 3600
    shown = next((s for s in scores if s.chunk_frames == default_chunk), scores[-1])  # per-phone table, confusions
    if args.json:
        print(json.dumps({"model": str(model_path), "data": [str(d) for d in args.data], "utterances": len(cuts),
                          "hours": round(hours, 4), "min_frames": args.min_frames,
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


def cmd_transcribe(args) -> int:
    from speechattn_export.stream_client import StreamingModel

    from .audio import AudioError
    from .transcribe import as_ctm, as_json, as_text, plot_transcript, resolve_model, transcribe_file, write_textgrid

    if args.min_frames < 1:
        raise SpeechattnError("--min-frames must be at least 1")
    model_path = resolve_model(args.model)
    try:
        model = StreamingModel(model_path, num_threads=args.threads)
    except Exception as error:  # onnxruntime's load errors, our metadata checks
        raise SpeechattnError(f"{model_path}: cannot load as a speechattn ONNX model ({error})") from None
    chunk = args.chunk_frames or model.default_chunk_frames
    if chunk not in model.allowed_chunk_frames:
        raise SpeechattnError(f"--chunk-frames {chunk}: {model_path} serves {list(model.allowed_chunk_frames)}")
    if args.format == "textgrid" and len(args.files) > 1 and not args.output_dir:
        raise SpeechattnError("--format textgrid with several files needs --output-dir (one TextGrid per file)")
    if args.output_dir:
        args.output_dir.mkdir(parents=True, exist_ok=True)
    failed = 0
    for path in args.files:
        try:
            transcript = transcribe_file(model, path, chunk, args.min_frames, keep=bool(args.plot),
                                         progress=sys.stderr.isatty())
        except AudioError as error:
            print(f"speechattn transcribe: error: {error}", file=sys.stderr)
            failed += 1
            continue
        suffix = {"text": ".txt", "json": ".json", "ctm": ".ctm", "textgrid": ".TextGrid"}[args.format]
        target = args.output_dir / (path.stem + suffix) if args.output_dir else None
        if args.format == "textgrid":
            if target is None:
                import tempfile

                with tempfile.TemporaryDirectory() as scratch:
                    write_textgrid(transcript, Path(scratch) / "out.TextGrid")
                    print((Path(scratch) / "out.TextGrid").read_text(), end="")
            else:
                write_textgrid(transcript, target)
        else:
            text = {"text": as_text, "json": as_json, "ctm": as_ctm}[args.format](transcript)
            if target is None:
                print(text, flush=True)
            else:
                target.write_text(text + "\n")
        if target is not None:
            print(f"wrote {target}", file=sys.stderr)
        if args.plot:
            plot_path = args.plot if len(args.files) == 1 else args.plot.with_name(f"{args.plot.stem}-{path.stem}.png")
            plot_transcript(transcript, plot_path)
            print(f"wrote {plot_path}", file=sys.stderr)
    if failed:
        print(f"speechattn transcribe: {failed} of {len(args.files)} file(s) could not be read", file=sys.stderr)
        return 1
    return 0


def cmd_mic(args) -> int:
    from .mic import format_devices, input_devices, run
    from .transcribe import resolve_model

    try:
        import sounddevice  # noqa: F401
    except OSError as error:  # the PortAudio library itself is missing
        raise SpeechattnError(f"PortAudio is not installed ({error}); on Debian/Ubuntu: apt-get install libportaudio2") from None
    except ImportError:
        raise SpeechattnError("sounddevice is not installed: pip install 'speechattn[mic]'") from None
    if args.list_devices:
        print(format_devices(input_devices()))
        return 0
    if args.min_frames < 1:
        raise SpeechattnError("--min-frames must be at least 1")
    summary = run(resolve_model(args.model), args.device, args.chunk_frames, args.output, args.save_audio,
                  args.min_frames, args.seconds)
    print(f"speechattn mic: {summary.text()}", file=sys.stderr)
    for path in (args.output, args.save_audio):
        if path:
            print(f"wrote {path}", file=sys.stderr)
    return 0


def _chunk_arg(value: str):
    if value == "full":
        return value
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r}: a chunk size in frames (e.g. 8) or 'full'") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value!r}: chunk sizes are at least 1 frame")
    return number


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="speechattn",
        description="Streaming phone tagger: 16 kHz audio -> one of 40 phone labels every 10 ms, "
        "from a self-attention encoder with truncated attention, exported as one ONNX file.",
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"speechattn {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = commands.add_parser("init", help="write a randomly initialised checkpoint (for trying the pipeline)",
                            description="Write a checkpoint with random weights and the given model config.")
    p.add_argument("-o", "--output", required=True, type=Path, help="checkpoint to write (.pt)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a model setting, e.g. --set num_layers=4 --set frontend.kind=mfcc")
    p.set_defaults(func=cmd_init)

    p = commands.add_parser("prepare", help="build or read a corpus into lhotse manifests, split by speaker",
                            description="Prepare the corpus a recipe names: synthesize the built-in corpus "
                            "(recipes/synth-en.yaml), force-align real speech with pocketsphinx "
                            "(speechocean762.yaml, real-dev.yaml), or read a phone-aligned corpus (TIMIT, audio + "
                            "TextGrid phone tiers, audio + HTK .lab). Phones are mapped into the 40 classes (an "
                            "unknown symbol stops with the file and symbol named), speakers split into train/dev/"
                            "test, and lhotse manifests written. Finished work (synthesized audio, alignments) is "
                            "reused by a rerun.")
    p.add_argument("recipe", type=Path, help="recipe YAML, e.g. recipes/timit.yaml")
    p.add_argument("--out", type=Path, help="manifest directory (default: the recipe's data.output, else data/NAME)")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                   help="override a recipe setting, e.g. --set data.root=/corpora/TIMIT")
    p.set_defaults(func=cmd_prepare)

    p = commands.add_parser("data-stats", help="hours, speakers and frames per phone of a manifest",
                            description="Summarise a supervisions manifest from `speechattn prepare`: utterances, "
                            "speakers, hours and 10 ms frames per phone (as training labels them), optionally as a PNG.")
    p.add_argument("manifest", type=Path, help="a *_supervisions_*.jsonl.gz file")
    p.add_argument("--plot", type=Path, metavar="PNG", help="write a bar chart of the phone distribution")
    p.set_defaults(func=cmd_data_stats)

    p = commands.add_parser("show-item", help="print, plot and write out one item of a manifest with its labels",
                            description="Show one utterance of a manifest as training sees it: its phone labels, "
                            "a PNG of waveform, spectrogram and label segments, and a WAV to listen to; with "
                            "--augment, after the training augmentation.")
    p.add_argument("supervisions", type=Path, help="a *_supervisions_*.jsonl.gz file from `speechattn prepare`")
    p.add_argument("id", help="the utterance id")
    p.add_argument("--plot", type=Path, metavar="PNG", help="write the picture here")
    p.add_argument("--wav", type=Path, help="write the (augmented) audio here")
    p.add_argument("--augment", action="store_true", help="apply the default training augmentation")
    p.add_argument("--seed", type=int, default=0, help="augmentation seed (default 0)")
    p.set_defaults(func=cmd_show_item)

    p = commands.add_parser("train", help="train a model from a recipe",
                            description="Train the recipe's model on its prepared data (prepared first if missing): "
                            "AdamW with warm-up and cosine decay, label smoothing, a chunk size drawn per batch, "
                            "augmentation. Writes last.pt, best.pt (best dev frame accuracy), train.csv and dev.csv. "
                            "--resume continues exactly where the last checkpoint stopped. For several processes "
                            "or GPUs: torchrun --nproc_per_node=N -m speechattn.cli train RECIPE.")
    p.add_argument("recipe", type=Path, help="recipe YAML, e.g. recipes/tiny.yaml")
    p.add_argument("--out", type=Path, help="run directory (default runs/NAME)")
    p.add_argument("--resume", action="store_true", help="continue from OUT/last.pt")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                   help="override a recipe setting, e.g. --set train.max_steps=100")
    p.set_defaults(func=cmd_train)

    p = commands.add_parser("eval", help="frame accuracy and PER of a checkpoint or ONNX model on labelled data",
                            description="Evaluate MODEL (a .pt checkpoint, run one-shot per chunk size, or an .onnx "
                            "file, streamed through the portable client) on prepared manifests: frame accuracy (share "
                            "of 10 ms frames labelled right) and PER (edit distance of the non-silence phone "
                            "sequences, repeats merged, hypothesis after the segmenter, over the reference length) at "
                            "full context (checkpoints) and at every streaming chunk size; per-phone accuracy; a "
                            "confusion-matrix PNG.")
    p.add_argument("model", help="checkpoint (.pt) or ONNX file (.onnx)")
    p.add_argument("data", nargs="+", type=Path, help="*_supervisions_<split>.jsonl.gz manifest(s) from `speechattn prepare`")
    p.add_argument("--chunk-frames", type=_chunk_arg, nargs="+", metavar="C",
                   help="chunk sizes in frames, or 'full' (default: full and every size the model serves)")
    p.add_argument("--min-frames", type=int, default=3, help="segmenter: frames a new phone must hold (default 3)")
    p.add_argument("--limit", type=int, help="evaluate only the first N utterances")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--confusion", type=Path, metavar="PNG", help="write the confusion matrix (at the model's default chunk, else the last one evaluated) here")
    p.set_defaults(func=cmd_eval)

    p = commands.add_parser("transcribe", help="phone segments of audio files, streamed through the ONNX model",
                            description="Stream each FILE (wav, flac, ogg, mp3 ...; any sample rate and channel count: "
                            "downmixed and resampled to 16 kHz) through the ONNX model and print its phone segments "
                            "(start, end, phone, mean posterior as confidence). A new phone must hold for --min-frames "
                            "frames, so one-frame flickers do not become phones. Memory stays bounded for any length "
                            "(except with --plot). Formats: text (the phones), json (one object per file and line), "
                            "ctm, textgrid (Praat).")
    p.add_argument("files", nargs="+", type=Path, metavar="FILE", help="audio file(s)")
    p.add_argument("--model", help="ONNX file, or a bundled model: default (fp32), default-int8 (default: default)")
    p.add_argument("--format", choices=["text", "json", "textgrid", "ctm"], default="text", help="output format (default text)")
    p.add_argument("--output-dir", type=Path, metavar="DIR", help="write FILE-stem.{txt,json,ctm,TextGrid} here instead of stdout")
    p.add_argument("--plot", type=Path, metavar="PNG", help="draw waveform, spectrogram, posteriorgram and segments "
                   "(several files: PNG-stem-FILE-stem.png)")
    p.add_argument("--chunk-frames", type=int, help="streaming chunk in 10 ms frames (default: the model's, 8)")
    p.add_argument("--min-frames", type=int, default=3, help="segmenter: frames a new phone must hold (default 3)")
    p.add_argument("--threads", type=int, help="onnxruntime threads (default: all cores)")
    p.set_defaults(func=cmd_transcribe)

    p = commands.add_parser("mic", help="live phone transcription from a microphone",
                            description="Capture from an input device (PortAudio) at its own rate and channel count, "
                            "downmix and resample to 16 kHz, and stream through the ONNX model. In a terminal: the "
                            "phones as they are recognised (still-open segment dimmed, silence as ·) and a status line "
                            "(input level, latency p50/p95 from capture to display, real-time factor). Otherwise: one "
                            "JSON line per confirmed segment. Ctrl-C stops, flushes every output and prints a summary.")
    p.add_argument("--model", help="ONNX file, or a bundled model: default, default-int8 (default: default)")
    p.add_argument("--device", help="input device: index or part of its name (default: the system's default input)")
    p.add_argument("--list-devices", action="store_true", help="list input devices with their native rates and exit")
    p.add_argument("--chunk-frames", type=int, help="streaming chunk in 10 ms frames (default: the model's, 8)")
    p.add_argument("--min-frames", type=int, default=3, help="segmenter: frames a new phone must hold (default 3)")
    p.add_argument("--output", type=Path, metavar="FILE.jsonl", help="also write confirmed segments here as JSON lines")
    p.add_argument("--save-audio", type=Path, metavar="FILE.wav", help="write the 16 kHz mono audio the model heard")
    p.add_argument("--seconds", type=float, help="stop after this much audio (default: run until Ctrl-C)")
    p.set_defaults(func=cmd_mic)

    p = commands.add_parser("export", help="export a checkpoint to one streaming ONNX file",
                            description="Export CKPT to a single ONNX file (frontend, encoder and state all inside; "
                            "see export/CONTRACT.md). The file is written only if it agrees with torch over "
                            "12 chained pushes: max |Δ log-prob| <= 1e-4 for fp32, >= 99 %% equal labels for int8.")
    p.add_argument("checkpoint", type=Path, help="checkpoint (.pt) from `speechattn train` or `speechattn init`")
    p.add_argument("-o", "--output", required=True, type=Path, help="ONNX file to write")
    p.add_argument("--int8", action="store_true", help="quantize the encoder's matmuls to 8 bits (dynamic)")
    p.add_argument("--chunk-frames", type=int, default=None,
                   help="default chunk size recorded in the metadata (frames of 10 ms; default: the model's)")
    p.add_argument("--verify-audio", type=Path, metavar="AUDIO",
                   help="verify on this recording instead of the generated speech-like signal; give speech for a "
                   "trained model's int8 file (its outputs on the generated signal are near-tied and flip under int8)")
    p.set_defaults(func=cmd_export)

    p = commands.add_parser("stream-check", help="prove that streaming the ONNX model equals one-shot processing",
                            description="Stream AUDIO (or a generated signal) through MODEL.onnx with the portable "
                            "client at each chunk size and several push patterns, and print how far each result is "
                            "from the one-shot result (the torch model with --checkpoint; the ONNX graph in one call "
                            "always). Exit status 1 if any comparison is not exact.")
    p.add_argument("model", help="ONNX file from `speechattn export`")
    p.add_argument("audio", nargs="?", type=Path, help="audio file (any rate/channels soundfile reads); "
                   "default: a generated speech-like signal")
    p.add_argument("--checkpoint", type=Path, help="the checkpoint MODEL was exported from, to compare with torch")
    p.add_argument("--chunk-frames", type=int, nargs="+", help="chunk sizes to check (default: all the model allows)")
    p.add_argument("--seconds", type=float, default=6.0, help="length of the generated signal (default 6)")
    p.set_defaults(func=cmd_stream_check)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except SpeechattnError as error:
        print(f"speechattn {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into a reader that stopped early (head, less): not an error
        sys.stdout = open(os.devnull, "w")
        return 0


if __name__ == "__main__":
    sys.exit(main())
