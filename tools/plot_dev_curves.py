"""Dev curves of several training runs in one picture (frame accuracy and PER at the default chunk).

    python tools/plot_dev_curves.py runs/A runs/B [--label A --label B] [--reference 0.790 "default"] -o curves.png
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", type=Path, help="run directories holding dev.csv")
    parser.add_argument("--label", action="append", default=[], help="one per run, in order (default: the names)")
    parser.add_argument("--reference", nargs=2, metavar=("ACCURACY", "LABEL"), help="a horizontal line, e.g. the "
                        "model the runs started from")
    parser.add_argument("--title", default="dev set, default chunk")
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = args.label + [run.name for run in args.runs[len(args.label):]]
    figure, (accuracy_axis, per_axis) = plt.subplots(1, 2, figsize=(10, 4))
    for run, label in zip(args.runs, labels):
        rows = list(csv.DictReader((run / "dev.csv").open()))
        if not rows:
            raise SystemExit(f"{run / 'dev.csv'}: no evaluations yet")
        steps = [int(r["step"]) for r in rows]
        accuracy_axis.plot(steps, [100 * float(r["dev_frame_accuracy"]) for r in rows], marker="o", label=label)
        per_axis.plot(steps, [100 * float(r["dev_per"]) for r in rows], marker="o", label=label)
    if args.reference:
        accuracy_axis.axhline(100 * float(args.reference[0]), color="grey", linestyle="--", label=args.reference[1])
    accuracy_axis.set(xlabel="step", ylabel="frame accuracy (%)", title=args.title)
    per_axis.set(xlabel="step", ylabel="phone error rate (%)", title=args.title)
    for axis, corner in ((accuracy_axis, "lower right"), (per_axis, "upper right")):
        axis.grid(alpha=0.3)
        axis.legend(loc=corner, fontsize="small")
    figure.tight_layout()
    args.output.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(args.output, dpi=110)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
