"""Data commands: prepare, data-stats, show-item (lhotse)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from speechattn.cli.common import (OUTPUT_FILE, PATH, check_writable, command_sources_option, manifest_cuts,
                                   option, output_directory, parse_overrides, progress_wanted,
                                   refuse_overwriting_inputs, seed_option, set_option)
from speechattn.errors import SpeechattnError, UsageError


@click.command()
@click.argument("recipe", type=PATH)
@option("--out", type=PATH, default=None, help="manifest directory  [default: the recipe's data.output]")
@set_option("data.root=/corpora/TIMIT")
def prepare(recipe, out, overrides):
    """Build or read a corpus into lhotse manifests, split by speaker.

    Synthesizes the built-in corpus (recipes/synth-en.yaml), force-aligns real speech with pocketsphinx
    (speechocean762.yaml, ljspeech.yaml, real-dev.yaml, librispeech-other.yaml, speech-commands.yaml, an4.yaml;
    --set data.aligner=speechattn for our own aligner on the bundled model instead), or reads a phone-aligned
    corpus (TIMIT, audio + TextGrid phone tiers, audio + HTK .lab).  Phones are mapped into the 40 classes (an
    unknown symbol stops with the file and symbol named).  Finished work (synthesized audio, alignments) is reused."""
    from speechattn.data.prepare import output_of, prepare as run_prepare
    from speechattn.training.recipes import load_recipe

    loaded = load_recipe(recipe, parse_overrides(overrides))
    output_directory(output_of(loaded, out), "--out")  # before the work
    started = time.perf_counter()
    summaries = run_prepare(loaded, out, progress=progress_wanted())
    source = "synthesized here" if loaded.data.corpus == "synth" else f"from {loaded.data.root}"
    print(f"{loaded.name}: {loaded.data.corpus} corpus {source}, {time.perf_counter() - started:.0f} s")
    print(f"{'split':<6} {'utterances':>10} {'speakers':>9} {'hours':>7}")
    for s in summaries:
        print(f"{s.split:<6} {s.utterances:>10} {s.speakers:>9} {s.hours:>7.3f}")
    return 0


def _png(plot: Path | None) -> None:
    if plot is not None:
        if plot.suffix.lower() != ".png":
            raise UsageError(f"--plot {plot}: give a .png file name")
        check_writable(plot)


@click.command("data-stats")
@click.argument("manifest", type=PATH)
@option("--plot", type=OUTPUT_FILE, default=None, metavar="PNG", help="write a bar chart of the phone distribution")
def data_stats(manifest, plot):
    """Utterances, speakers, hours and 10 ms frames per phone of a supervisions manifest."""
    from speechattn.data.datastats import format_stats, manifest_stats, plot_phone_distribution
    from speechattn.data.manifests import check_manifest_values
    from speechattn.files import refuse_special

    _png(plot)
    refuse_special(manifest, "manifest")
    if Path(manifest).is_file():
        check_manifest_values(manifest)
    stats = manifest_stats(manifest)
    name = Path(manifest).name.removesuffix(".jsonl.gz")
    if plot:  # written before anything is printed: a reader that stops early (| head) does not stop the file
        plot_phone_distribution(stats, name, plot)
    print(format_stats(stats, name))
    if plot:
        print(f"wrote {plot}")
    return 0


@click.command("show-item")
@click.argument("supervisions", type=PATH)
@click.argument("item_id", metavar="ID")
@option("--plot", type=OUTPUT_FILE, default=None, metavar="PNG", help="write waveform, spectrogram and labels here")
@option("--wav", type=OUTPUT_FILE, default=None, help="write the (augmented) audio here")
@option("--augment", is_flag=True, help="apply the default training augmentation")
@command_sources_option
@seed_option
def show_item(supervisions, item_id, plot, wav, augment, allow_command_sources, seed):
    """One utterance of a manifest as training sees it: labels, a picture, a WAV."""
    import numpy as np
    import soundfile as sf

    from speechattn.data.augment import AugmentConfig
    from speechattn.data.dataset import FrameLabelDataset
    from speechattn.files import atomic_path
    from speechattn.phones import PHONES
    from speechattn.runtime.plots import plot_labelled_audio
    from speechattn_export.segments import label_intervals

    _png(plot)
    if wav:
        check_writable(wav)
    cuts = manifest_cuts([supervisions], None, allow_command_sources)
    matches = [cut for cut in cuts if cut.supervisions[0].id == item_id]
    if not matches:
        raise SpeechattnError(f"{supervisions}: no item {item_id!r} (first ids: "
                              f"{', '.join(c.supervisions[0].id for c in list(cuts)[:3])})")
    dataset = FrameLabelDataset(matches, augment=AugmentConfig() if augment else None, crop_seconds=None, seed=seed)
    audio, labels = dataset.load(matches[0], np.random.default_rng([seed, 0, 0]) if augment else None)
    supervision = matches[0].supervisions[0]
    recording = matches[0].recording
    sources = [Path(str(s.source)) for s in (recording.sources if recording is not None else []) if s.type == "file"]
    refuse_overwriting_inputs({"--wav": wav, "--plot": plot}, [supervisions, *sources])
    title = f"{item_id} ({supervision.speaker}){' augmented' if augment else ''}: {supervision.text or ''}"
    if plot:  # the files before anything is printed: a reader that stops early (| head) does not stop them
        plot_labelled_audio(audio, labels, plot, title[:120])
    if wav:
        with atomic_path(wav) as temporary:
            sf.write(temporary, audio, 16000, format="WAV")
    print(f"{item_id}: {len(audio) / 16000:.2f} s, speaker {supervision.speaker}, text: {supervision.text}")
    print(" ".join(PHONES[p] if p >= 0 else "·" for _, _, p in label_intervals(labels)))
    for written in (plot, wav):
        if written:
            print(f"wrote {written}")
    return 0
