"""Pictures of audio with phones: waveform, spectrogram, (posteriorgram,) phone segments in one PNG."""

from __future__ import annotations

import numpy as np

from speechattn.audio import FRAMES_PER_SECOND, SAMPLE_RATE
from speechattn_export.segments import label_intervals
from speechattn.phones import IGNORE, PHONES


def _figure(audio: np.ndarray, height_ratios: list[float], height: float, title: str):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from scipy.signal import spectrogram

    seconds = len(audio) / SAMPLE_RATE
    figure, axes = plt.subplots(len(height_ratios), 1, figsize=(max(8.0, min(40.0, 4 * seconds)), height),
                                sharex=True, gridspec_kw={"height_ratios": height_ratios})
    wave_axis, spec_axis = axes[0], axes[1]
    wave_axis.plot(np.arange(len(audio)) / SAMPLE_RATE, audio, linewidth=0.5, color="#3b75af")
    wave_axis.set_ylabel("amplitude")
    wave_axis.set_title(title)
    # a recording shorter than one window (a 1-sample file) is one window of it, zero-padded
    padded = np.pad(audio, (0, max(0, 400 - len(audio))))
    frequencies, times, power = spectrogram(padded, fs=SAMPLE_RATE, window="hann", nperseg=400, noverlap=240)
    spec_axis.pcolormesh(times, frequencies, 10 * np.log10(power + 1e-10), shading="auto", cmap="magma")
    spec_axis.set_ylabel("Hz")
    return plt, figure, axes


def _segments(plt, axis, spec_axis, segments, seconds: float, xlabel: str) -> None:
    """segments: (start s, end s, name, shade in [0, 1] or None for grey)."""
    for begin, finish, name, shade in segments:
        colour = "#dddddd" if name in ("sil", "·") else plt.cm.Blues(0.25 + 0.6 * (0.5 if shade is None else shade))
        axis.axvspan(begin, finish, color=colour, ec="white", lw=0.8)
        if name != "sil":
            axis.text((begin + finish) / 2, 0.5, name, ha="center", va="center", fontsize=8,
                      rotation=90 if finish - begin < 0.04 else 0)
        spec_axis.axvline(begin, color="white", linewidth=0.3, alpha=0.6)
    axis.set_yticks([])
    axis.set_xlabel(xlabel)
    axis.set_xlim(0, seconds)


def _save(plt, figure, path) -> None:
    figure.tight_layout()
    from speechattn.files import atomic_path

    with atomic_path(path) as temporary:
        figure.savefig(temporary, dpi=100)
    plt.close(figure)


def plot_labelled_audio(audio: np.ndarray, labels: np.ndarray, path, title: str = "") -> None:
    """Waveform, log spectrogram (25 ms Hann, 10 ms hop) and frame labels drawn as segments."""
    plt, figure, (_, spec_axis, label_axis) = _figure(audio, [1, 2, 0.6], 6, title)
    segments = [(start / FRAMES_PER_SECOND, end / FRAMES_PER_SECOND, "·" if phone == IGNORE else PHONES[phone], None)
                for start, end, phone in label_intervals(labels)]
    _segments(plt, label_axis, spec_axis, segments, len(audio) / SAMPLE_RATE, "seconds")
    _save(plt, figure, path)


def plot_posteriors(audio: np.ndarray, log_probs: np.ndarray, phones: tuple, segments: list[dict], path,
                    title: str = "") -> None:
    """Waveform, spectrogram, posteriorgram and recognised segments ({start, end, phone, confidence})."""
    plt, figure, (_, spec_axis, post_axis, seg_axis) = _figure(audio, [1, 1.6, 2.4, 0.5], 9, title)
    posteriors = np.exp(log_probs)
    peaks = posteriors.max(0)  # rows: the phones that ever matter (and at least the 8 likeliest), so they stay readable
    used = np.union1d(np.flatnonzero(peaks > 0.2), np.argsort(peaks)[-8:])
    post_axis.imshow(posteriors[:, used].T, aspect="auto", origin="lower", cmap="Greys", vmin=0, vmax=1,
                     extent=(0, len(posteriors) / FRAMES_PER_SECOND, -0.5, len(used) - 0.5), interpolation="nearest")
    post_axis.set_yticks(range(len(used)), [phones[i] for i in used], fontsize=7)
    post_axis.set_ylabel("posterior")
    _segments(plt, seg_axis, spec_axis, [(s["start"], s["end"], s["phone"], s["confidence"]) for s in segments],
              len(audio) / SAMPLE_RATE, "seconds (segment shade: confidence)")
    _save(plt, figure, path)
