"""Model commands: init, average, export, stream-check (torch)."""

from __future__ import annotations

import logging
import sys

import click

from speechattn.cli.common import OUTPUT_FILE, PATH, FiniteFloatRange, chunk_option, check_writable, option, parse_overrides, progress_wanted, \
    refuse_overwriting_inputs, \
    seed_option, set_option

MAX_CHECK_SECONDS = 3600  # stream-check keeps the signal and every result in memory


@click.command()
@option("-o", "--output", type=OUTPUT_FILE, required=True, help="checkpoint to write (.pt)")
@seed_option
@set_option("model.num_layers=4 --set model.frontend.kind=mfcc (the model. may be left out)")
def init(output, seed, overrides):
    """Write a randomly initialised checkpoint (for trying the pipeline)."""
    import torch

    from speechattn.errors import ConfigError
    from speechattn.model.encoder import ModelConfig, PhoneTagger, save_checkpoint
    from speechattn.training.recipes import SECTIONS, _merge

    settings = parse_overrides(overrides)
    model_settings = settings.pop("model", {})  # the recipe's spelling, as train and average take it
    for key in settings:
        if key in SECTIONS:
            raise ConfigError(f"--set {key}.*: a checkpoint holds only the model's settings; give model.KEY=VALUE")
    config = ModelConfig.from_dict(_merge(settings, model_settings, "model."), source="--set")
    torch.manual_seed(seed)
    check_writable(output)
    model = PhoneTagger(config)
    save_checkpoint(model, output, seed=seed, trained=False)
    print(f"wrote {output}: randomly initialised (seed {seed}), {model.num_parameters():,} parameters, "
          f"{config.num_layers} layers x {config.model_dim} dims, {config.frontend.kind} features")
    return 0


@click.command()
@click.argument("checkpoints", nargs=-1, required=True, type=PATH)
@option("-o", "--output", type=OUTPUT_FILE, required=True, help="checkpoint to write (.pt)")
@set_option("model.frontend.level_target_dbfs=-18.0")
def average(checkpoints, output, overrides):
    """Average the weights of CHECKPOINTS (runs of one architecture fine-tuned from the same weights: a "model
    soup") into one checkpoint, its settings the first's with --set applied (the recipe's keys, as `train --set`
    takes them: model.KEY).  Settings that change the weights' shapes are refused; the others (frontend, decoder,
    latency) apply to the averaged weights as they are.  Other chunk sizes (model.chunk_frames_choices,
    model.default_chunk_frames) fit the relative-position biases to them as full-context attention sees far
    offsets: for weights trained at full context, a large chunk serves a window of full context (a file model)."""

    from speechattn.errors import ConfigError
    from dataclasses import replace

    from speechattn.model.encoder import CheckpointError, ModelConfig, PhoneTagger, load, save_checkpoint, \
        weights_mismatch, with_chunk_frames
    from speechattn.training.recipes import _merge

    if len(checkpoints) < 2:
        raise click.UsageError("give two checkpoints or more to average")
    model_settings = _model_section(parse_overrides(overrides))
    refuse_overwriting_inputs({"--output": output}, list(checkpoints))
    check_writable(output)
    models = [load(path) for path in checkpoints]
    states = [model.state_dict() for model in models]
    for path, state in zip(checkpoints[1:], states[1:]):
        mismatch = weights_mismatch(states[0], state)
        if mismatch:
            raise CheckpointError(f"{path}: another architecture than {checkpoints[0]} ({mismatch}): only weights of "
                                  "the same shapes can be averaged")
    config = ModelConfig.from_dict(_merge(models[0].config.to_dict(), model_settings), source="--set model")
    merged = {name: (sum(state[name].double() for state in states) / len(states)).to(tensor.dtype)
              if tensor.is_floating_point() else tensor for name, tensor in states[0].items()}
    first = models[0].config
    # other chunk sizes: the relative-position biases are fitted to them after averaging (with_chunk_frames)
    model = PhoneTagger(replace(config, chunk_frames_choices=first.chunk_frames_choices,
                                default_chunk_frames=first.default_chunk_frames))
    if weights_mismatch(model.state_dict(), merged):
        raise ConfigError(f"--set {' '.join(overrides)}: changes the shapes of the weights; only settings that "
                          "keep them can be given here")
    model.load_state_dict(merged)
    if (config.chunk_frames_choices, config.default_chunk_frames) != (first.chunk_frames_choices,
                                                                      first.default_chunk_frames):
        model = with_chunk_frames(model, config.chunk_frames_choices, config.default_chunk_frames)
    model.eval().prime()  # the stream start follows from the averaged weights (primes only a primed_start model)
    save_checkpoint(model, output, averaged_from=[str(path) for path in checkpoints])
    print(f"wrote {output}: the mean of {len(models)} checkpoints' weights ({model.num_parameters():,} parameters)"
          + (f", with {', '.join(overrides)}" if overrides else ""))
    return 0


def _model_section(settings: dict) -> dict:
    """The `model` section of --set settings in the recipe's key space (model.frontend.kind=..., as `train --set`);
    a usage error naming the key for a bare model key or another section, which a checkpoint does not hold."""
    from dataclasses import fields

    from speechattn.errors import ConfigError
    from speechattn.model.encoder import ModelConfig
    from speechattn.training.recipes import SECTIONS

    for key in settings:
        if key in SECTIONS and key != "model":
            raise ConfigError(f"--set {key}.*: a checkpoint holds only the model's settings; give model.KEY=VALUE")
        if key != "model":
            bare = key in {f.name for f in fields(ModelConfig)}
            raise ConfigError(f"--set {key}: " + (f"give the recipe's key, as train --set takes it: model.{key}"
                                                  if bare else "unknown; give the model's settings as model.KEY=VALUE"))
    if not isinstance(settings.get("model", {}), dict):
        raise ConfigError("--set model: a section; give model.KEY=VALUE")
    return settings.get("model", {})


@click.command()
@click.argument("checkpoint", type=PATH)
@option("-o", "--output", type=OUTPUT_FILE, required=True, help="ONNX file to write")
@option("--int8", is_flag=True,
        help="8-bit weights for the encoder's matmuls (onnxruntime MatMulNBits; no calibration; chunking-exact)")
@chunk_option
@option("--verify-audio", type=PATH, default=None, metavar="AUDIO",
        help="verify on this recording instead of a generated speech-like signal (give speech for an int8 file)")
def export(checkpoint, output, int8, chunk_frames, verify_audio):
    """Export a checkpoint to one streaming ONNX file.

    Frontend, encoder and state all inside one file (see export/CONTRACT.md).  The file is written only
    if it agrees with torch over 12 chained pushes: max |Δ log-prob| <= 1e-4 for fp32, >= 97 % equal
    labels for int8 (and an int8 file must give the same output whether the audio comes in one call or in
    random pieces)."""
    from speechattn.errors import UsageError
    from speechattn.files import refuse_special
    from speechattn.model.encoder import load
    from speechattn.model.export import export_onnx

    refuse_overwriting_inputs({"-o": output}, [checkpoint, verify_audio])
    check_writable(output)
    audio = None
    if verify_audio is not None:  # before the checkpoint: a wrong recording is one line before any work
        from speechattn.audio import SAMPLE_RATE, load_audio

        refuse_special(verify_audio, "audio")
        audio = load_audio(verify_audio)
        if len(audio) < MIN_VERIFY_SECONDS * SAMPLE_RATE:  # a few frames would verify nothing (a 1-sample file
            # failed inside the verification)
            raise UsageError(f"--verify-audio {verify_audio}: {len(audio) / SAMPLE_RATE:.2f} s of audio; verifying "
                             f"takes at least {MIN_VERIFY_SECONDS:g} s (speech, for an int8 file)")
    model = load(checkpoint)
    if chunk_frames is not None and chunk_frames not in model.config.chunk_frames_choices:
        raise UsageError(f"--chunk-frames {chunk_frames} is not one {checkpoint} was trained for: "
                         f"{list(model.config.chunk_frames_choices)}")
    print(f"exporting {checkpoint} ({model.num_parameters():,} parameters) -> {output}"
          f"{' (int8)' if int8 else ''}; verifying against torch ...", file=sys.stderr)
    try:
        result = export_onnx(model, output, chunk_frames=chunk_frames, int8=int8, verify_audio=audio)
    except OSError as error:
        from speechattn.files import write_error

        raise write_error(output, error) from None
    print(f"wrote {output} ({output.stat().st_size / 1e6:.1f} MB). Verified: {result}")
    return 0


MIN_VERIFY_SECONDS = 1.0  # --verify-audio: a second of audio, 100 frames, for the int8 file's 97 % rule to mean much


@click.command("stream-check")
@click.argument("model")
@click.argument("audio", required=False, type=PATH)
@option("--checkpoint", type=PATH, default=None, help="the checkpoint MODEL was exported from, to compare with torch")
@option("--chunk-frames", type=click.IntRange(min=1), multiple=True, default=None, metavar="C",
        help="chunk sizes to check (repeatable)  [default: all the model allows]")
@option("--seconds", type=FiniteFloatRange(min=0.1, max=MAX_CHECK_SECONDS), default=6.0,
        help="length of the generated signal")
def stream_check(model, audio, checkpoint, chunk_frames, seconds):
    """Prove that streaming the ONNX model equals one-shot processing.

    Streams AUDIO (default: a generated speech-like signal) through MODEL (an ONNX file, or a bundled model's
    name: default, default-int8, file-int8) with the portable client
    at each chunk size and several push patterns and prints how far each result is from the one-shot
    result.  Exit status 1 if any comparison is not exact."""
    from speechattn.audio import SAMPLE_RATE, load_audio, speechlike_signal
    from speechattn.model.streamcheck import INT8_MIN_AGREEMENT, TOLERANCE, format_rows, run_check

    if audio:
        samples, source = load_audio(audio), str(audio)
        peak = float(abs(samples).max()) if samples.size else 0.0
        if peak > 1.0:
            logging.getLogger("speechattn.cli").warning(
                "%s: float samples reach %.2f, over full scale; clipped to [-1, 1]", audio, peak)
            samples = samples.clip(-1.0, 1.0)
    else:
        samples, source = speechlike_signal(seconds, seed=0), "generated speech-like signal (seed 0)"
    from speechattn.runtime.transcribe import resolve_model

    model = resolve_model(model)
    print(f"audio: {source}, {len(samples) / SAMPLE_RATE:.2f} s")
    rows = run_check(model, samples, checkpoint, list(chunk_frames) or None, progress=progress_wanted())
    print(format_rows(rows))
    bad = [r for r in rows if not r.exact]
    int8 = sum(r.int8_against_fp32 for r in rows)
    said = (f"; the {int8} of the int8 file against the checkpoint's fp32 weights: at least "
            f"{100 * INT8_MIN_AGREEMENT:.0f} % of the labels equal, as export --int8 checks" if int8 else "")
    if bad:
        print(f"NOT EXACT: {len(bad)} of {len(rows)} comparisons exceed {TOLERANCE:g} or change a label{said}")
        return 1
    print(f"streaming is exact: all {len(rows) - int8} comparisons within {TOLERANCE:g}, every frame's label "
          f"equal{said}")
    if checkpoint is None:
        print("(give --checkpoint CKPT to compare with the torch model as well)")
    return 0
