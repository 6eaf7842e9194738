"""Where manifests live: the one place their names are written.

`speechattn prepare` writes, for a recipe NAME and an output directory DIR, one pair per split:
    DIR/NAME_recordings_<split>.jsonl.gz  and  DIR/NAME_supervisions_<split>.jsonl.gz
Training reads them by prefix DIR/NAME; `eval` and the benches take a supervisions manifest and find its
recordings beside it.
"""

from __future__ import annotations

from pathlib import Path

SPLITS = ("train", "dev", "test")


def manifest_pair(prefix: str | Path, split: str) -> tuple[Path, Path]:
    """(recordings, supervisions) of one split under a prefix DIR/NAME."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
    prefix = Path(prefix)
    return (prefix.with_name(f"{prefix.name}_recordings_{split}.jsonl.gz"),
            prefix.with_name(f"{prefix.name}_supervisions_{split}.jsonl.gz"))


def recordings_beside(supervisions: str | Path) -> Path | None:
    """The recordings manifest that pairs with a supervisions manifest, or None when the name is not one
    `prepare` writes (the caller says what it expected)."""
    supervisions = Path(supervisions)
    if "_supervisions_" not in supervisions.name:
        return None
    return supervisions.with_name(supervisions.name.replace("_supervisions_", "_recordings_", 1))
