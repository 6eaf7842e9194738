"""Where manifests live: the one place their names are written.

`speechattn prepare` writes, for a recipe NAME and an output directory DIR, one pair per split:
    DIR/NAME_recordings_<split>.jsonl.gz  and  DIR/NAME_supervisions_<split>.jsonl.gz
Training reads them by prefix DIR/NAME; `eval` and the benches take a supervisions manifest and find its
recordings beside it.

Audio paths in a recordings manifest are absolute (`absolute_sources`), so a manifest works from any working
directory.  Manifests written before that held paths relative to the folder `prepare` ran in; readers find those
again from the manifest's folder (dataset.with_audio_found).
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


def unpaired(supervisions: Path, recordings: Path | None) -> str:
    """What is missing when `supervisions` is not a supervisions manifest with its recordings beside it."""
    if "_recordings_" in supervisions.name:
        return (f"{supervisions}: a recordings manifest (audio only, no labels); give the *_supervisions_* manifest "
                "beside it, whose phone alignments are the labels")
    if recordings is None:
        return (f"{supervisions}: expected a *_supervisions_* manifest from `speechattn prepare` with its "
                "*_recordings_* manifest beside it")
    return f"{supervisions}: its recordings manifest {recordings.name} is not beside it (`speechattn prepare` writes both)"


def absolute_sources(recordings):
    """The recordings with every relative file source made absolute against `base` (default: the working
    directory, where a reader's relative paths point)."""
    return sources_based(recordings, Path.cwd())


def sources_based(recordings, base: Path):
    """The recordings with every relative file source joined to `base` (normalised, links kept as named)."""
    import os

    from lhotse import RecordingSet
    from lhotse.audio import AudioSource

    def based(source):
        if source.type != "file" or Path(source.source).is_absolute():
            return source
        return AudioSource(type=source.type, channels=source.channels, source=os.path.normpath(base / source.source))

    return RecordingSet.from_recordings(
        type(recording)(**{**recording.__dict__, "sources": [based(s) for s in recording.sources]})
        for recording in recordings)


def manifest_lines(path: Path):
    """(line number, item) of a lhotse manifest (.jsonl.gz, or .jsonl), read line by line so that memory stays
    bounded; one line naming the file (and the line) for one that is damaged: a gzip file cut short, bytes that are
    not gzip, a line that is not UTF-8 JSON."""
    import gzip
    import json
    import zlib

    from speechattn.errors import SpeechattnError

    number = 0
    try:
        with open(path, "rb") as probe:
            start = probe.read(2)
        compressed = start == b"\x1f\x8b"
        if path.name.endswith(".gz") and start and not compressed:
            raise SpeechattnError(f"{path}: not a readable lhotse manifest: a .gz name but not gzip data (a damaged "
                                  "or renamed file?)")
        with (gzip.open(path, "rt", encoding="utf-8") if compressed else open(path, encoding="utf-8")) as lines:
            for number, line in enumerate(lines, 1):
                if line.strip():
                    yield number, json.loads(line)
    except EOFError:
        raise SpeechattnError(f"{path}: not a readable lhotse manifest: the gzip data ends early, {_where(number)} "
                              "(a truncated or unfinished file)") from None
    except (zlib.error, gzip.BadGzipFile):
        raise SpeechattnError(f"{path}: not a readable lhotse manifest: its gzip data is corrupt, "
                              f"{_where(number)}") from None
    except UnicodeDecodeError:
        raise SpeechattnError(f"{path}:{number + 1}: not a readable lhotse manifest: the line is not UTF-8 "
                              "text") from None
    except json.JSONDecodeError as error:
        raise SpeechattnError(f"{path}:{number}: not a readable lhotse manifest: the line is not JSON "
                              f"({error.msg})") from None
    except OSError as error:
        raise SpeechattnError(f"{path}: cannot read the manifest ({error.strerror or error})") from None


def _where(lines_read: int) -> str:
    return f"after line {lines_read}" if lines_read else "before its first line"


def check_manifest_values(path: Path) -> None:
    """One line naming the manifest, its line and item for a value no recording has, which lhotse would meet deep
    inside as an assertion or an index error: a duration or sample count that is not above 0, a negative or
    non-finite start, a phone outside the inventory.  Read line by line (manifest_lines), so memory stays bounded;
    a damaged file is named in one line there; JSON that is no manifest is left to the manifest reader to name."""
    import math

    from speechattn.data.corpora import IGNORED_SYMBOL
    from speechattn.errors import SpeechattnError
    from speechattn.phones import PHONES

    known = {*PHONES, IGNORED_SYMBOL}

    def positive(value) -> bool:
        return isinstance(value, (int, float)) and math.isfinite(value) and value > 0

    for number, item in manifest_lines(Path(path)):
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
