"""The default names of ``denoc-bridge simulate``'s animation and plot (issue 47).

A run writes ``MODEL.html`` and ``MODEL.png`` into the current folder, MODEL the model's name made
fit for a file name (:func:`file_stem`): the robot's name for a named or generated robot
(``panda``, ``planar_chain6``), the ``<mujoco model=...>`` or ``<robot name=...>`` of a file (its
file name when it gives none).  Many files of a collection are each a ``robot.xml`` in their own
folder, and two of them may name their models alike, so the folder keeps a record of which robot
wrote which of these files: ``.denoc-bridge-outputs.json`` (:data:`RECORD`), file name -> source
(the robot file's real path, or ``example-robot-data:NAME`` / ``built-in:NAME``).

A name is taken when neither ``MODEL.html`` nor ``MODEL.png`` exists, or when those that exist are
recorded as written from the same source (a second run of a robot overwrites its own pictures).
Otherwise the run takes ``MODEL-2``, ``MODEL-3``, ... (the one that source already holds, else the
first free one) and says so: a file of another robot, or one the record does not know (written by
hand, by an older version, or the record deleted), is never overwritten by a default name.
``--html`` and ``--plot`` name the files themselves and overwrite what is there, as always.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from pathlib import Path

from denoc_bridge._files import atomic_write_bytes

__all__ = ["RECORD", "file_stem", "source_key", "default_base", "record_written"]

#: the record, in the folder of the default outputs, of which robot wrote which of them
RECORD = ".denoc-bridge-outputs.json"

#: the default outputs' extensions: a name is taken for both together
EXTENSIONS = (".html", ".png")

#: longest stem of a default output (file systems allow 255 bytes; room for "-NN.html")
MAX_STEM = 100

#: names Windows keeps for devices, with any extension
_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{k}" for k in range(1, 10)), *(f"LPT{k}" for k in range(1, 10))}


def file_stem(name: str, fallback: str = "robot") -> str:
    """``name`` made a file name that needs no quoting in a shell and means the same on every
    system: ASCII letters, digits, ``_``, ``.`` and ``-`` (accents dropped, any other run of
    characters one ``_``: no path separator, space or shell character), not starting with ``-``
    or ``.`` (an option, a hidden file), at most :data:`MAX_STEM` characters, not a Windows
    device name; ``fallback`` (made so too) when nothing is left."""
    ascii_text = unicodedata.normalize("NFKD", str(name)).encode("ascii", "ignore").decode()
    text = re.sub(r"[^A-Za-z0-9_.-]+", "_", ascii_text).strip("._-")[:MAX_STEM].rstrip("._-")
    if not re.search(r"[A-Za-z0-9]", text):
        return file_stem(fallback) if fallback != name else "robot"
    if text.split(".")[0].upper() in _RESERVED:
        text += "_"
    return text


def source_key(src) -> str:
    """What identifies where a robot comes from across runs: a file's real path (a symbolic link
    and its target are one source), else the origin and name of a named or generated robot."""
    if src.origin == "file":
        return os.path.realpath(src.path)
    if src.origin == "example-robot-data":
        return f"example-robot-data:{src.name}"
    return f"built-in:{src.name}"


def _shown(key: str) -> str:
    """A source as the notes name it."""
    for origin, shown in (("example-robot-data:", "example-robot-data"), ("built-in:", "built in")):
        if key.startswith(origin):
            return f"{key[len(origin) :]} ({shown})"
    return key


def read_record(folder: Path) -> dict:
    """The record of ``folder`` (file name -> source); an unreadable or malformed record reads as
    empty (its files are then nobody's: never overwritten by a default name)."""
    try:
        data = json.loads((folder / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return {}
    return {k: v for k, v in files.items() if isinstance(k, str) and isinstance(v, str)}


def _owners(folder: Path, stem: str, record: dict) -> dict:
    """The files of ``stem`` (both extensions) that exist in ``folder`` -> their recorded source
    (None: not recorded)."""
    found: dict[str, str | None] = {}
    for ext in EXTENSIONS:
        name = stem + ext
        if os.path.lexists(folder / name):
            found[name] = record.get(name)
    return found


def default_base(folder: Path, stem: str, key: str) -> tuple[str, str]:
    """(the default outputs' stem in ``folder`` for the robot ``key`` whose name is ``stem``, why
    it is not ``stem`` itself, or "" when it is).  See the module docstring."""
    record = read_record(folder)

    def candidate(n: int) -> str:
        return stem if n == 1 else f"{stem}-{n}"

    def free_for(n: int) -> bool:
        return all(owner == key for owner in _owners(folder, candidate(n), record).values())

    # the name this robot already holds here (the lowest, if several), else the first one free
    held: list[int] = []
    for name, owner in record.items():
        m = re.fullmatch(re.escape(stem) + r"(?:-([0-9]{1,9}))?(\.html|\.png)", name)
        if owner == key and m and os.path.lexists(folder / name):
            k = int(m.group(1) or 1)
            if candidate(k) + m.group(2) == name:  # not "-1" nor "-02"
                held.append(k)
    n = next((k for k in sorted(held) if free_for(k)), 0)
    if not n:
        n = 1
        while not free_for(n):
            n += 1
    if n == 1:
        return stem, ""
    taken = {name: owner for name, owner in _owners(folder, stem, record).items() if owner != key}
    if not taken:  # the plain name is free again, but this robot's earlier output has another
        return candidate(n), f"this robot's earlier output in this folder is named {candidate(n)}"
    verb = "are" if len(taken) > 1 else "is"
    files = " and ".join(sorted(taken))
    others = sorted({_shown(owner) for owner in taken.values() if owner is not None})
    why = f"{files} in this folder {verb} " + (
        f"from {' and '.join(others)}" if others else "not recorded as written from this robot"
    )
    return candidate(n), why


def record_written(paths: list[Path], key: str, defaults: list[Path]) -> str:
    """Record that ``paths`` (the animation and plot just written) are the robot ``key``'s, in the
    record of their folders: always for ``defaults`` (the default-named ones), for a file given
    by name only where a record exists and lists it.  Entries of files gone are dropped.  Returns
    a note when a record cannot be written (else "")."""
    folders: dict[Path, list[str]] = {}
    for path in paths:
        folder = path.parent.resolve()
        if path in defaults or path.name in read_record(folder):
            folders.setdefault(folder, []).append(path.name)
    for folder, names in folders.items():
        record = {name: owner for name, owner in read_record(folder).items() if os.path.lexists(folder / name)}
        record.update(dict.fromkeys(names, key))
        text = json.dumps({"written by": "denoc-bridge simulate", "files": dict(sorted(record.items()))}, indent=1)
        try:
            atomic_write_bytes(folder / RECORD, (text + "\n").encode())
        except OSError as exc:
            return f"could not record which robot wrote {', '.join(names)} ({exc.strerror or exc})"
    return ""
