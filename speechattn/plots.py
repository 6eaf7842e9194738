"""Pictures of audio with phone labels: waveform, spectrogram and the label segments in one PNG."""

from __future__ import annotations

import numpy as np

from .audio import FRAMES_PER_SECOND, SAMPLE_RATE
from .labels import label_intervals
from .phones import IGNORE, PHONES


def plot_labelled_audio(audio: np.ndarray, labels: np.ndarray, path, title: str = "") -> None:
    """Waveform, log spectrogram (25 ms Hann, 10 ms hop) and frame labels drawn as segments."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from scipy.signal import spectrogram

    seconds = len(audio) / SAMPLE_RATE
    figure, (wave_axis, spec_axis, label_axis) = plt.subplots(
        3, 1, figsize=(max(8.0, min(40.0, 4 * seconds)), 6), sharex=True,
        gridspec_kw={"height_ratios": [1, 2, 0.6]})
    wave_axis.plot(np.arange(len(audio)) / SAMPLE_RATE, audio, linewidth=0.5, color="#3b75af")
    wave_axis.set_ylabel("amplitude")
    wave_axis.set_title(title)
    frequencies, times, power = spectrogram(audio, fs=SAMPLE_RATE, window="hann", nperseg=400, noverlap=240)
    spec_axis.pcolormesh(times, frequencies, 10 * np.log10(power + 1e-10), shading="auto", cmap="magma")
    spec_axis.set_ylabel("Hz")
    for start, end, phone in label_intervals(labels):
        begin, finish = start / FRAMES_PER_SECOND, end / FRAMES_PER_SECOND
        name = "·" if phone == IGNORE else PHONES[phone]
        colour = "#dddddd" if name in ("sil", "·") else "#a6c8e8"
        label_axis.axvspan(begin, finish, color=colour, ec="white", lw=0.8)
        label_axis.text((begin + finish) / 2, 0.5, "" if name == "sil" else name, ha="center", va="center",
                        fontsize=8, rotation=90 if finish - begin < 0.04 else 0)
        spec_axis.axvline(begin, color="white", linewidth=0.3, alpha=0.6)
    label_axis.set_yticks([])
    label_axis.set_xlabel("seconds")
    label_axis.set_xlim(0, seconds)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
