"""docs/accuracy-latency.png: frame accuracy of a checkpoint against the latency of its final labels, one line per
dev set, from the JSON that `speechattn eval --json` writes for each set (bench/default_model.sh writes them).

    python tools/plot_accuracy_latency.py REPORT_DIR [-o docs/accuracy-latency.png]

Latency of a final label = (chunk + output delay + the decoder's look-ahead) x 10 ms, the worst case: a phone that
ends at the start of a chunk waits for the chunk to fill.  Solid: the bigram decoder (the default, 10 frames of
look-ahead); dashed: the hysteresis rule (final 3 frames later).  Full context is a dotted level (not streaming).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

SETS = {"ocean": "speechocean762 dev (non-native)", "asterisk": "asterisk prompts (native, 8 kHz)",
        "lj": "LJ050 (native, 16 kHz)"}


def main() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("-o", "--output", type=Path, default=Path("docs/accuracy-latency.png"))
    parser.add_argument("--delay", type=int, required=True, help="the model's output_delay_frames")
    parser.add_argument("--lookahead", type=int, default=10, help="the decoder's look-ahead, frames")
    parser.add_argument("--default-chunk", type=int, required=True)
    args = parser.parse_args()
    figure, axis = plt.subplots(figsize=(7, 4.2), dpi=120)
    for key, label in SETS.items():
        color = None
        # the bigram decoder finalises a frame `lookahead` frames later; the hysteresis rule min_frames (3) later
        for decoder, lag, style in (("bigram", args.lookahead, "-"), ("hysteresis", 3, "--")):
            results = json.loads((args.report / f"{key}-{decoder}.json").read_text())["results"]
            points = sorted(((r["chunk_frames"] + args.delay + lag) * 10, 100 * r["frame_accuracy"],
                             r["chunk_frames"]) for r in results if r["chunk_frames"] != "full")
            line, = axis.plot([p[0] for p in points], [p[1] for p in points], marker="o", linestyle=style,
                              color=color, label=f"{label}, {decoder}")
            color = line.get_color()
            for latency, accuracy, chunk in points:
                if chunk == args.default_chunk and decoder == "bigram":
                    axis.plot([latency], [accuracy], marker="*", markersize=16, color=color)
        full = next(r for r in json.loads((args.report / f"{key}-bigram.json").read_text())["results"]
                    if r["chunk_frames"] == "full")
        axis.axhline(100 * full["frame_accuracy"], color=color, linestyle=":", linewidth=1)
    axis.axvline(200, color="grey", linestyle="--", linewidth=1)
    axis.text(203, axis.get_ylim()[1] - 0.6, "200 ms budget", color="grey", fontsize=8)
    axis.set_xlim(0, 500)
    axis.set_xlabel("latency of final labels, ms (chunk + output delay + decoder look-ahead)")
    axis.set_ylabel("frame accuracy, %")
    axis.set_title(f"the default model: ★ default chunk ({args.default_chunk * 10} ms); dotted: full context",
                   fontsize=10)
    axis.legend(fontsize=7, loc="center left")
    axis.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(args.output)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
