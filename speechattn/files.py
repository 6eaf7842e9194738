"""Writing files whole or not at all: a temporary name in the same folder, renamed when complete; and reading input
paths with a bound.

A full disk, a kill or an exception part-way leaves the earlier file (if any) untouched and no partial file under
the final name; the temporary file is removed and the error names the file and the cause in one line.

An input path may name a device (/dev/zero never ends) or a FIFO (its open waits for a writer that may never come):
`special_kind` says which, so a reader refuses it in one line, or reads it with a bound in bytes and in waiting."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from speechattn.errors import SpeechattnError


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yields a temporary path beside `path` for a writer that takes a file name; renamed onto `path` when the
    block ends without an exception, removed otherwise.  The suffix is kept (some writers choose the format by it).

    A path naming a device or a pipe (-o /dev/stdout, /dev/null, a FIFO) is yielded itself and written in place:
    renaming onto it would replace the device node or the link to it (as root, /dev/stdout itself).  A symbolic
    link to a file is followed: the file it names is replaced, and the link stays."""
    path = Path(path)
    if special_kind(path) is not None:
        yield path
        return
    if path.is_symlink():
        path = path.resolve()
    suffix = "".join(path.suffixes)[-20:]  # x.jsonl.gz keeps .jsonl.gz: writers choose the format by it
    base = path.name[: len(path.name) - len(suffix)] if suffix else path.name
    # the base cut short: a final name near the 255-byte limit still gets a temporary name that fits
    handle, temporary = tempfile.mkstemp(prefix=f".{base[:100]}.", suffix=f".partial{suffix}",
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
            flush_to_disk(handle)


def flush_to_disk(handle) -> None:
    """Flush an open file and sync it to the disk, before atomic_path renames it; a pipe, a terminal or /dev/null
    (written in place) has nothing to sync."""
    handle.flush()
    if stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
        os.fsync(handle.fileno())


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


PIPE_WAIT_SECONDS = 10.0  # a FIFO or pipe nobody writes to gets this long before it is reported


def exists(path: str | Path) -> bool:
    """Whether a file is there; False for a name the file system refuses (too long: Python 3.11's pathlib raises
    ENAMETOOLONG), which reading or writing it then says in one line, as for any file that cannot be read."""
    try:
        return Path(path).exists()
    except OSError:
        return False


def is_directory(path: str | Path) -> bool:
    """Whether `path` is a directory; False for a name the file system refuses, as exists()."""
    try:
        return Path(path).is_dir()
    except OSError:
        return False


def permission_problem(path: str | Path) -> str:
    """Why this user may not reach `path`, in words: the first folder on the way that it cannot enter, or the file
    or folder itself that it cannot read.  (Path.exists() raises PermissionError for a path below such a folder.)"""
    path = Path(os.path.abspath(path))
    for folder in reversed(path.parents):
        if os.path.isdir(folder) and not os.access(folder, os.X_OK):
            return f"permission denied: this user cannot enter the folder {folder}"
    if os.path.isdir(path):
        return f"permission denied: this user cannot list the folder {path}"
    return "permission denied: this user cannot read it"


def listed_below(root: str | Path, pattern: str = "*") -> Iterator[Path]:
    """Path.rglob(pattern) (what is below `root`, its names matched by `pattern`, symbolic links to folders not
    followed, nothing for a root that is not there) with one difference: a folder on the way that this user cannot
    list is one line naming it, where rglob leaves it out in silence (a corpus read as smaller than it is)."""
    import fnmatch

    def refuse(error: OSError) -> None:
        if isinstance(error, PermissionError):
            raise SpeechattnError(f"{error.filename}: {permission_problem(error.filename)}")

    for directory, folders, names in os.walk(root, onerror=refuse):
        for name in [*folders, *names]:
            if fnmatch.fnmatchcase(name, pattern):
                yield Path(directory) / name


def audio_files_below(folder: Path, suffixes) -> list[Path]:
    """The files below `folder` whose suffix (lower-cased) is one of `suffixes`, recursively, sorted; hidden folders
    and files skipped.  A folder on the way that this user cannot list is one line naming it, not skipped in silence
    (Path.rglob leaves it out: a folder of unreadable recordings read as "no audio files")."""
    def refuse(error: OSError) -> None:
        raise SpeechattnError(f"{error.filename}: {permission_problem(error.filename)}"
                              if isinstance(error, PermissionError) else
                              f"{error.filename}: cannot list it ({error.strerror or error})")

    found = []
    for directory, folders, names in os.walk(folder, onerror=refuse):
        folders[:] = [name for name in folders if not name.startswith(".")]
        found.extend(Path(directory) / name for name in names if not name.startswith(".")
                     and Path(name).suffix.lower() in suffixes and os.path.isfile(os.path.join(directory, name)))
    return sorted(found)


def special_kind(path: str | Path) -> str | None:
    """"a device" (/dev/zero, a terminal), "a pipe" (a FIFO, a pipe such as /dev/stdin or <(...), a socket), or None
    for anything else (a regular file, a directory, nothing there)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return "a pipe"
    return None


def refuse_special(path: str | Path, what: str, error: type[SpeechattnError] = SpeechattnError) -> None:
    """One line for an input that must be a file (a model, a recipe, a text) but names a device or a pipe: reading
    it would never end (/dev/zero) or wait forever (a FIFO nobody writes to)."""
    kind = special_kind(path)
    if kind is not None:
        raise error(f"{path}: {kind}, not a file; give the {what} as a file")


def read_bounded(path: str | Path, what: str, max_bytes: int, error: type[SpeechattnError] = SpeechattnError) -> bytes:
    """A regular file's bytes, at most `max_bytes` (more is an error naming the file), or one line for a device or a
    pipe (refuse_special)."""
    refuse_special(path, what, error)
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as failure:
        raise error(f"{path}: cannot read the {what} ({failure.strerror or failure})") from None
    if len(data) > max_bytes:
        raise error(f"{path}: more than {max_bytes / 1e6:g} MB; not a {what}")
    return data


def wait_for_data(descriptor: int, name: str, seconds: float = PIPE_WAIT_SECONDS,
                  error: type[SpeechattnError] = SpeechattnError) -> None:
    """Returns once `descriptor` (a pipe or FIFO) has something to read or has ended; one line after `seconds` of
    silence, instead of waiting forever on a pipe no program writes to."""
    import select

    ready, _, _ = select.select([descriptor], [], [], seconds)
    if not ready:
        raise error(f"{name}: nothing arrived in {seconds:g} s (a pipe no program writes to?)")
