"""Frame accuracy against the streaming chunk, per real set, for one or more reports of bench/default_model.sh:
the streaming gap as a picture.

    python tools/plot_chunk_accuracy.py runs/new/report runs/default/report --label new --label default \
        -o chunk-accuracy.png
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

SETS = {"ocean": "speechocean762 dev", "asterisk": "asterisk prompts", "lj": "LJ050"}
ORDER = ["4", "8", "16", "32", "full"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("reports", nargs="+", type=Path, help="report directories (SET-bigram.json inside)")
    parser.add_argument("--label", action="append", default=[])
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = args.label + [str(r) for r in args.reports[len(args.label):]]
    figure, axes = plt.subplots(1, len(SETS), figsize=(12, 3.8), sharey=False)
    for axis, (key, title) in zip(axes, SETS.items()):
        for report, label in zip(args.reports, labels):
            results = json.loads((report / f"{key}-bigram.json").read_text())["results"]
            accuracy = {str(r["chunk_frames"]): 100 * r["frame_accuracy"] for r in results}
            axis.plot(ORDER, [accuracy[c] for c in ORDER], marker="o", label=label)
            full = accuracy["full"]
            axis.axhspan(full - 2, full, color=axis.lines[-1].get_color(), alpha=0.08)
        axis.set(title=title, xlabel="chunk (10 ms frames)", ylabel="frame accuracy (%)")
        axis.grid(alpha=0.3)
    axes[0].legend(fontsize="small", loc="lower right")
    figure.suptitle("streaming chunk against full context (shaded: within 2 points of full context)", fontsize="medium")
    figure.tight_layout()
    args.output.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(args.output, dpi=110)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
