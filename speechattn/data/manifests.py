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


def check_manifest_values(path: Path) -> None:
    """One line naming the manifest, its line and item for a value no recording has, which lhotse would meet deep
    inside as an assertion or an index error: a duration or sample count that is not above 0, a negative or
    non-finite start, a phone outside the inventory.  Read line by line (gzip, JSON), so memory stays bounded; a
    file that is no manifest is left to the manifest reader to name."""
    import gzip
    import json
    import math

    from speechattn.data.corpora import IGNORED_SYMBOL
    from speechattn.errors import SpeechattnError
    from speechattn.phones import PHONES

    known = {*PHONES, IGNORED_SYMBOL}

    def positive(value) -> bool:
        return isinstance(value, (int, float)) and math.isfinite(value) and value > 0

    try:
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                item = json.loads(line)
                if not isinstance(item, dict):
                    return
                where = f"{path}:{number}: {item.get('id', '?')}"
                for key in ("duration", "sampling_rate", "num_samples"):
                    if key in item and not positive(item[key]):
                        raise SpeechattnError(f"{where}: {key} {item[key]!r} (must be above 0)")
                start = item.get("start", 0.0)
                if not (isinstance(start, (int, float)) and math.isfinite(start) and start >= 0):
                    raise SpeechattnError(f"{where}: start {start!r} (must be 0 or more)")
                alignment = item.get("alignment") if isinstance(item.get("alignment"), dict) else {}
                for entry in alignment.get("phone") or []:
                    symbol = entry[0] if isinstance(entry, list) and entry else entry
                    if symbol not in known:
                        raise SpeechattnError(f"{where}: phone {symbol!r} is not one of the {len(PHONES)} phones "
                                              "(speechattn prepare maps a corpus's phones into them)")
                    times = entry[1:3] if isinstance(entry, list) else []
                    if len(times) == 2 and not (all(isinstance(t, (int, float)) and math.isfinite(t) for t in times)
                                                and times[0] >= 0 and times[1] > 0):
                        raise SpeechattnError(f"{where}: phone {symbol!r} at {times[0]!r} s lasting {times[1]!r} s "
                                              "(a phone starts at 0 or later and lasts more than 0 s)")
                    end = start + item["duration"] if positive(item.get("duration")) else math.inf
                    if len(times) == 2 and times[0] >= end + 1.0:
                        raise SpeechattnError(f"{where}: phone {symbol!r} at {times[0]:g} s starts after the utterance "
                                              f"ends ({end:g} s): the alignment is not this recording's")
    except (OSError, EOFError, ValueError):  # not gzip or not JSON lines: the manifest reader says so
        return
