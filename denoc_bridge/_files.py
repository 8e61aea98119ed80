"""Atomic file writes (issue 25, item 4): a file is written to a temporary file in its own folder,
flushed to disk and renamed onto its name (``os.replace``, atomic on POSIX and Windows), so a
process killed or interrupted while writing leaves the previous file, or none, never a torn one.

The temporary file is ``.NAME.HOST-PID-XXXXXXXX.part`` (HOST and PID: the writing process's
machine and id).  A process killed (SIGKILL, a power cut) before its rename leaves that file
behind; the next write of the same ``NAME`` on the same machine removes the ones whose process is
gone (:func:`remove_stale_parts`; those of other machines, in a shared folder, are left alone), and
no reader takes a ``.part`` file for the file it stands for."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["make_folder", "atomic_path", "atomic_write_bytes", "temporary_sibling", "commit", "remove_stale_parts"]


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _umask()  # read once, at import (os.umask can only be read by setting it)


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):  # another user's process, or no way to tell: alive
        return True
    return True


_PART = re.compile(r"^\.(?P<name>.+)\.(?P<host>[A-Za-z0-9_]+)-(?P<pid>\d+)-[A-Za-z0-9_]+\.part$")
#: this machine's name as it stands in the temporary files' names
_HOST = re.sub(r"[^A-Za-z0-9_]", "_", socket.gethostname())[:40] or "host"


def remove_stale_parts(path: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporary files that writers of ``path`` on this machine killed before their
    rename left next to it (``.NAME.HOST-PID-XXXXXXXX.part`` whose process PID is gone); returns
    them.  A ``.part`` of a process that still runs (another writer of the same file) or of
    another machine is left alone."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    removed: list[Path] = []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return removed
    for entry in entries:
        m = _PART.match(entry.name)
        if m and m["name"] == path.name and m["host"] == _HOST and not _process_alive(int(m["pid"])):
            with contextlib.suppress(OSError):
                entry.unlink()
                removed.append(entry)
    return removed


def make_folder(folder: Path) -> None:
    """Create ``folder`` and its missing parents; an :class:`OSError` naming it when that cannot
    be done (a file stands in the way, no permission)."""
    if folder.is_dir():
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        why = "a file stands in the way" if isinstance(exc, (FileExistsError, NotADirectoryError)) else exc.strerror
        raise type(exc)(exc.errno, f"cannot create the folder {folder}: {why or exc}") from None


def temporary_sibling(path: str | os.PathLike[str]) -> Path:
    """A new empty temporary file next to ``path`` (``.NAME.HOST-PID-XXXXXXXX.part``), after removing
    the stale ones of earlier writers that were killed (:func:`remove_stale_parts`).  A missing
    folder of ``path`` is created (the one rule of every writer of the package, issue 21)."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    make_folder(folder)
    remove_stale_parts(path)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.{_HOST}-{os.getpid()}-", suffix=".part", dir=folder)
    os.close(fd)
    return Path(name)


def commit(tmp: str | os.PathLike[str], path: str | os.PathLike[str]) -> None:
    """Give ``tmp`` the mode a new file gets (or the mode of the file it replaces), flush it to
    disk and rename it onto ``path`` (atomic)."""
    path = Path(path)
    try:
        mode = path.stat().st_mode & 0o777
    except OSError:
        mode = 0o666 & ~_UMASK
    os.chmod(tmp, mode)
    with open(tmp, "rb+") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary path next to ``path`` for the caller to write; when the block ends without an
    exception it is flushed to disk and renamed onto ``path`` (with the mode a new file gets, or
    the mode of the file it replaces), otherwise removed (the previous file stays).

    >>> with atomic_path("out.png") as tmp:   # doctest: +SKIP
    ...     fig.savefig(tmp, format="png")
    """
    tmp = temporary_sibling(path)
    try:
        yield tmp
        commit(tmp, path)
    except BaseException:  # KeyboardInterrupt and SystemExit too: the temporary file goes
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (:func:`atomic_path`)."""
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        f.write(data)
