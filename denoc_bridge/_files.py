"""Atomic file writes (issue 25, item 4): a file is written to a temporary file in its own folder,
flushed to disk and renamed onto its name (``os.replace``, atomic on POSIX and Windows), so a
process killed or interrupted while writing leaves the previous file, or none, never a torn one."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_path", "atomic_write_bytes"]


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _umask()  # read once, at import (os.umask can only be read by setting it)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary path next to ``path`` for the caller to write; when the block ends without an
    exception it is flushed to disk and renamed onto ``path`` (with the mode a new file gets, or
    the mode of the file it replaces), otherwise removed (the previous file stays).

    >>> with atomic_path("out.png") as tmp:   # doctest: +SKIP
    ...     fig.savefig(tmp, format="png")
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=folder)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        try:
            mode = path.stat().st_mode & 0o777
        except OSError:
            mode = 0o666 & ~_UMASK
        os.chmod(tmp, mode)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:  # KeyboardInterrupt and SystemExit too: the temporary file goes
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (:func:`atomic_path`)."""
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        f.write(data)
