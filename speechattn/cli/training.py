"""Training commands: train, eval, pseudo-label (torch, lhotse)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from speechattn.cli.common import (OUTPUT_FILE, PATH, ChunkSizes, check_phases, check_writable, command_sources_option, decoder_option,
                                   load_onnx, manifest_cuts, min_frames_option, option, output_directory,
                                   parse_overrides, progress_wanted, set_option)
from speechattn.errors import SpeechattnError, UsageError


@click.command()
@click.argument("recipe", type=PATH)
@option("--out", type=PATH, default=None, help="run directory  [default: runs/NAME]")
@option("--resume", is_flag=True, help="continue from OUT/last.pt, with the recipe recorded in the run")
@option("--overwrite", is_flag=True, help="replace an earlier run in OUT")
@option("--init-from", default=None, metavar="default|CKPT",
        help="start from these weights (fine-tuning): the bundled default model or a checkpoint")
@command_sources_option
@set_option("train.max_steps=100")
def train(recipe, out, resume, overwrite, init_from, allow_command_sources, overrides):
    """Train a model from a recipe.

    Trains the recipe's model on its prepared data (prepared first if missing): AdamW with warm-up and
    cosine decay, label smoothing, a chunk size drawn per batch, augmentation.  Writes last.pt, best.pt
    (best dev frame accuracy), train.csv, dev.csv, TensorBoard events, curves.png and an evaluation.
    --resume continues exactly where the last checkpoint stopped.  Off a terminal a progress line is
    logged every 30 s.  Several processes or GPUs: torchrun --nproc_per_node=N -m speechattn train RECIPE."""
    from speechattn.training.recipes import load_recipe
    from speechattn.training.train import train as run_training

    if resume and overwrite:
        raise UsageError("--resume continues a run and --overwrite replaces it: give one of them")
    settings = parse_overrides(overrides)
    if init_from:
        settings.setdefault("train", {})["init_from"] = init_from
    loaded = load_recipe(recipe, settings)
    out = out or Path("runs") / loaded.name
    result = run_training(loaded, out, resume=resume, progress=progress_wanted(), overwrite=overwrite,
                          allow_command_sources=allow_command_sources)
    if result["rank"] != 0:
        return 0  # a torchrun worker other than rank 0: rank 0 reports
    best = (f"best dev frame accuracy {100 * result['best_dev_frame_accuracy']:.2f} % "
            f"(chunk {loaded.model.default_chunk_frames})" if result["dev_utterances"] else
            "no dev data, so no dev figures and no best.pt")
    print(f"{loaded.name}: {result['steps']} steps, {result['processes']} process(es); {best}; "
          f"checkpoints and logs in {out}")
    if result["evaluation"]:
        print(f"best.pt on dev (written to {out}/eval.txt, eval.json, confusion.png; curves in curves.png):")
        print(result["evaluation"])
    return 0


@click.command("eval")
@click.argument("model", metavar="MODEL")
@click.argument("data", nargs=-1, required=True, type=PATH, metavar="MANIFEST...")
@option("--chunk-frames", type=ChunkSizes(), multiple=True, default=None, metavar="C[,C...]|full",
        help="chunk sizes in frames, or 'full'  [default: full and every size the model serves]")
@min_frames_option
@decoder_option
@option("--limit", type=click.IntRange(min=1), default=None, help="evaluate only the first N utterances")
@option("--json", "as_json", is_flag=True, help="print the results as JSON")
@option("--confusion", type=OUTPUT_FILE, default=None, metavar="PNG",
        help="write the confusion matrix (at the model's default chunk) here")
@option("--phases", type=int, default=1, show_default=True, metavar="N",
        help="an ONNX model's posteriors averaged over N evenly spaced shifts of the audio, as transcribe --phases")
@command_sources_option
def evaluate(model, data, chunk_frames, min_frames, decoder, limit, as_json, confusion, phases, allow_command_sources):
    """Frame accuracy and PER of a checkpoint or ONNX model on labelled data.

    MODEL is a .pt checkpoint (run one-shot per chunk size), an .onnx file or a bundled model's name (default,
    default-int8, file-int8; streamed through the portable client, as `transcribe --model` takes them); MANIFEST a
    *_supervisions_<split>.jsonl.gz from `speechattn prepare`.  Frame
    accuracy: the share of 10 ms frames labelled right.  PER (phone error rate): the edit distance of the
    non-silence phone sequences (repeats merged, hypothesis after the decoder) over the reference length."""
    import json

    from speechattn.training.evaluate import evaluate_checkpoint, evaluate_onnx, format_table, plot_confusion

    chunks = [size for group in chunk_frames or () for size in group] or None
    if confusion:
        check_writable(confusion)
    cuts = manifest_cuts(list(data), limit, allow_command_sources)
    path = _eval_model_path(model)
    if path.suffix == ".onnx":
        onnx_model = load_onnx(path)
        allowed, default_chunk = onnx_model.allowed_chunk_frames, onnx_model.default_chunk_frames
        delay = onnx_model.output_delay_frames
        chunks = chunks or list(allowed)
        if "full" in chunks:
            raise UsageError(f"full context is for checkpoints; {model} is an ONNX file, which streams (give chunk "
                             f"sizes{_bundled_checkpoint_hint(model)})")
        bad = [c for c in chunks if c not in allowed]
        if bad:
            raise UsageError(f"chunk size(s) {bad} not allowed by {model}: {list(allowed)}")
        check_phases(onnx_model, phases)
        scores = evaluate_onnx(path, cuts, chunks, min_frames, decoder, progress=progress_wanted(), phases=phases)
    else:
        from speechattn.model.encoder import load

        if phases != 1:
            raise UsageError("--phases averages an ONNX model's streamed posteriors; export the checkpoint first")
        checkpoint = load(path)
        allowed, default_chunk = checkpoint.config.chunk_frames_choices, checkpoint.config.default_chunk_frames
        delay = checkpoint.config.output_delay_frames
        chunks = [None if c == "full" else c for c in (chunks or ["full", *allowed])]
        bad = [c for c in chunks if c is not None and c not in allowed]
        if bad:
            raise UsageError(f"chunk size(s) {bad} not trained for by {model}: {list(allowed)} or full")
        scores = evaluate_checkpoint(checkpoint, cuts, chunks, min_frames, progress=progress_wanted(),
                                     decoder=decoder)
    hours = sum(c.duration for c in cuts) / 3600
    shown = next((s for s in scores if s.chunk_frames == default_chunk), scores[-1])  # per-phone table, confusions
    if as_json:
        print(json.dumps({"model": str(model), "data": [str(d) for d in data], "utterances": len(cuts),
                          "hours": round(hours, 4), "min_frames": min_frames, "decoder": decoder,
                          "results": [s.summary() for s in scores]}, indent=1))
    else:
        print(f"{model} on {', '.join(map(str, data))}: {len(cuts)} utterances, {hours:.2f} h")
        from speechattn_export.decoder import DecoderConfig
        from speechattn_export.segments import DEFAULT_MIN_FRAMES

        lag = DecoderConfig().lookahead_frames if decoder == "bigram" else (min_frames or DEFAULT_MIN_FRAMES)
        print(format_table(scores, delay, lag))
        accuracy = shown.per_phone_accuracy()
        totals = shown.confusion.sum(1)
        cells = [f"{p:>4} {100 * a:5.1f}% {n:>7}" for (p, a), n in zip(accuracy.items(), totals) if a is not None]
        print(f"per-phone frame accuracy and frames, chunk {shown.chunk_frames or 'full'}:")
        for row in range(0, len(cells), 4):
            print("   ".join(cells[row : row + 4]))
    if confusion:
        plot_confusion(shown, confusion)
        print(f"wrote {confusion}", file=sys.stderr)
    return 0


def _eval_model_path(model: str) -> Path:
    """eval's MODEL: a checkpoint path, or what `transcribe --model` takes (an ONNX file or a bundled model's name,
    resolved by the kit's table, export/models/models.json)."""
    from speechattn.runtime.transcribe import resolve_model

    if Path(model).suffix == ".pt":
        if not Path(model).exists():
            raise SpeechattnError(f"{model}: no such model file")
        return Path(model)
    return resolve_model(model)


def _bundled_checkpoint_hint(model: str) -> str:
    """Where full context can be had for a bundled model: its torch checkpoint, when this install has one."""
    from speechattn.runtime.transcribe import CHECKPOINTS_DIR
    from speechattn_export.registry import bundled_names, default_name

    checkpoint = CHECKPOINTS_DIR / "default.pt"  # the bundled default model's checkpoint (train --init-from default)
    if model in bundled_names() and checkpoint.is_file():
        return f"; for full context evaluate the bundled {default_name()} model's checkpoint: {checkpoint}"
    return ""


@click.command("pseudo-label")
@click.argument("root", type=click.Path(exists=True, file_okay=False, path_type=Path), metavar="DIR")
@option("--out", type=PATH, required=True, help="directory for the manifests")
@option("--name", default="pseudo", help="manifest name (the prefix train.sets lists is OUT/NAME)")
@option("--teacher", default="default", metavar="CHECKPOINT|default", help="the tagger that labels")
@option("--min-confidence", type=click.FloatRange(0, 1, max_open=True), default=0.5,
        help="frames whose decoded phone has a lower posterior stay unlabelled")
def pseudo_label(root, out, name, teacher, min_confidence):
    """Label untranscribed speech with a trained tagger (DIR/utterances.tsv + DIR/audio/).

    DIR/utterances.tsv: a header line, then a tab-separated row per clip: its id (DIR/audio/ID.wav, .flac or any
    audio suffix, in any subfolder) and its speaker; further columns are ignored.

    The teacher sees each whole utterance (full context); the bigram decoder gives the phone path; unsure
    frames are left out.  A streaming model trained on the result learns what the same weights know when
    they see the future, on whatever speakers DIR holds.  Labels made this way are bronze: measure on
    labelled dev speech whether they help."""
    from speechattn.training.pseudo import pseudo_label as label

    output_directory(out, "--out")  # before the teacher labels anything
    started = time.perf_counter()
    summary = label(root, out, name, teacher, min_confidence, progress=progress_wanted())
    print(f"{name}: {summary.utterances} utterances, {summary.speakers} speakers, {summary.hours:.2f} h, "
          f"{time.perf_counter() - started:.0f} s; {summary.labelled_share:.1%} of frames labelled "
          f"(posterior >= {min_confidence}), mean posterior of the decoded phone {summary.mean_confidence:.3f}")
    print(f"wrote {out / name}_{{recordings,supervisions}}_train.jsonl.gz (list it in train.sets)")
    for reason in summary.skipped:
        print(f"left out: {reason}", file=sys.stderr)
    return 1 if summary.skipped else 0


@click.command("train-hmm")
@click.argument("manifests", nargs=-1, required=True, type=PATH, metavar="SUPERVISIONS...")
@option("--out", "-o", type=OUTPUT_FILE, required=True, help="the parameter file to write (.npz)")
@option("--synthetic-hours", type=click.FloatRange(0, 100), default=0.0,
        help="and this much of the project's synthetic voices, whose phone times are exact (espeak-ng, flite, "
             "festival; seconds of CPU an hour)")
@option("--gaussians", type=click.IntRange(1, 64), default=8, help="per state, a power of two")
@option("--rounds", type=click.IntRange(0, 20), default=0,
        help="rounds of embedded Viterbi re-estimation after the start from the silver labels")
@option("--state-rounds", type=click.IntRange(0, 20), default=2,
        help="then rounds re-aligning the states within each phone, its boundaries kept")
@option("--context-frames", type=click.IntRange(0), default=500,
        help="a phone's first (last) state split by the kind of sound before (after) it where the training data "
             "has this many frames of that context; 0: no context")
@option("--limit", type=click.IntRange(1), default=None, help="first N utterances of each manifest")
def train_hmm(manifests, out, synthetic_hours, gaussians, rounds, state_rounds, context_frames, limit):
    """Train the HMM-GMM boundary model `align` refines its boundaries with.

    SUPERVISIONS: prepared training manifests with phone alignments (`speechattn prepare`; their recordings
    beside them), e.g. data/ljspeech/ljspeech_supervisions_train.jsonl.gz and
    data/speechocean762/speechocean762_supervisions_train.jsonl.gz.  Each phone three states, silence one, a
    mixture of --gaussians diagonal Gaussians per state over 39 MFCC features at 10 ms, started from each
    utterance's silver phone boundaries (and the synthetic voices' exact ones); --rounds re-align and re-estimate
    (the path likelihood is printed each round), --state-rounds re-align the states within each phone; then the
    context-dependent states.  numpy only, one core: the bundled file (3 hours of speech and 1.75 of synthetic
    voices) takes a few minutes of CPU."""
    import logging

    from speechattn.phones import PHONES
    from speechattn.training.hmm import HmmTrainConfig, synthetic_utterances, train, utterances_from_manifests

    missing = [m for m in manifests if not m.is_file()]
    if missing:
        raise UsageError(f"no such manifest: {missing[0]}")
    if gaussians & (gaussians - 1):
        raise UsageError(f"--gaussians must be a power of two, not {gaussians}")
    check_writable(out)
    out = Path(out)
    logging.getLogger("speechattn.training.hmm").setLevel(logging.INFO)
    started = time.process_time()
    utterances = utterances_from_manifests(manifests, PHONES, limit)
    if not utterances:
        raise SpeechattnError("the manifests hold no utterance with phone labels on every frame")
    note = ", ".join(m.name for m in manifests)
    if synthetic_hours:
        synthetic = synthetic_utterances(synthetic_hours, PHONES)
        utterances += synthetic
        note += f", {len(synthetic)} utterances of synthetic voices ({synthetic_hours:g} h planned)"
    config = HmmTrainConfig(gaussians=gaussians, rounds=rounds, state_rounds=state_rounds,
                            context_min_frames=context_frames)
    model = train(utterances, PHONES, config, data_note=note)
    model.save(out)
    print(f"wrote {out}: {len(utterances)} utterances, {model.info['frames'] / 360000:.2f} h, {model.states} "
          f"states x {gaussians} Gaussians; {time.process_time() - started:.0f} s of CPU")
    for round_, score in enumerate(model.info["path_log_likelihood_per_round"], 1):
        print(f"round {round_}: path log-likelihood {score:.3f} per frame")
