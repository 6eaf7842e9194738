"""Writing files whole or not at all: a temporary name in the same folder, renamed when complete.

A full disk, a kill or an exception part-way leaves the earlier file (if any) untouched and no partial file under
the final name; the temporary file is removed and the error names the file and the cause in one line."""

from __future__ import annotations

import errno
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from speechattn.errors import SpeechattnError


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yields a temporary path beside `path` for a writer that takes a file name; renamed onto `path` when the
    block ends without an exception, removed otherwise.  The suffix is kept (some writers choose the format by it)."""
    path = Path(path)
    suffix = "".join(path.suffixes)[-20:]  # x.jsonl.gz keeps .jsonl.gz: writers choose the format by it
    base = path.name[: len(path.name) - len(suffix)] if suffix else path.name
    handle, temporary = tempfile.mkstemp(prefix=f".{base}.", suffix=f".partial{suffix}",
                                         dir=path.parent if str(path.parent) else ".")
    os.close(handle)
    temporary = Path(temporary)
    os.chmod(temporary, 0o666 & ~_umask())  # mkstemp makes it private; the final file gets the usual mode
    try:
        yield temporary
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise write_error(path, error) from None
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_error(path: Path, error: OSError) -> SpeechattnError:
    if error.errno == errno.ENOSPC:
        return SpeechattnError(f"{path}: the disk is full; nothing was written")
    return SpeechattnError(f"{path}: cannot write ({error.strerror or error})")


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    with atomic_path(path) as temporary:
        with open(temporary, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))
