"""Saved states streamed to disk (issue 25, item 2): a long run writes its states to a ``.npy`` file
chunk by chunk as it goes, in flat memory, and :meth:`Trajectory.load <denoc_bridge.Trajectory.load>`
reads it back lazily (memory-mapped: ``traj.q[i]``, slices and the energies read the rows they need).

The file is a NumPy ``.npy`` array of records, one per saved state::

    t (f8)  q (f8, nq)  v (f8, nv)  a (f8, nv)  tau (f8, nv)  [constraint_error (f8)]  [limit_work (f8)]

(the last two for models with loop closures and runs with joint-limit stops), so that
``np.load(path, mmap_mode="r")["q"]`` reads it without denoc_bridge.  After the records comes a
JSON footer with the run's metadata (model and joint names, method, dt, status, message, ...),
which ``numpy.load`` ignores: ``<JSON> <its length, 8 bytes little-endian> DENOCTR1``.

While the run goes, the records go to a temporary file next to the target (``.NAME.HOST-PID-XXXXXXXX.part``,
:mod:`denoc_bridge._files`) whose header is rewritten after each chunk, so that it always reads as
the states written so far.  When the run ends (completed, interrupted by Ctrl-C, or failed) the
footer is written and the file is renamed onto the target: the target is the previous file until
then, never a torn one.  A process killed before the rename leaves the ``.part`` file, which the
next write of the same target removes.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import struct
from pathlib import Path
from typing import Any

import numpy as np

from denoc_bridge._files import commit, temporary_sibling
from denoc_bridge._resources import human_bytes
from denoc_bridge.errors import InputError, ResourceError

__all__ = ["StateStream", "read_states", "stream_target", "record_dtype", "STREAM_CHUNK_BYTES"]

#: the bytes of saved states a streaming run holds in memory before it writes them (twice: the
#: compiled run's rows and their records)
STREAM_CHUNK_BYTES = 8_000_000

FOOTER_MAGIC = b"DENOCTR1"
FORMAT = "denoc_bridge streamed trajectory"
VERSION = 1
_NPY_MAGIC = b"\x93NUMPY"


def record_dtype(nq: int, nv: int, loops: bool, stops: bool) -> np.dtype:
    """The record of one saved state (see the module docstring)."""
    fields: list[tuple[Any, ...]] = [("t", "<f8"), ("q", "<f8", (nq,)), ("v", "<f8", (nv,))]
    fields += [("a", "<f8", (nv,)), ("tau", "<f8", (nv,))]
    if loops:
        fields.append(("constraint_error", "<f8"))
    if stops:
        fields.append(("limit_work", "<f8"))
    return np.dtype(fields)


def stream_target(path: str | os.PathLike[str]) -> Path:
    """The file ``save_to`` names, ``.npy`` appended when it has no such suffix (as ``numpy.save``
    does); its folder must exist, and it must not be a folder."""
    if not isinstance(path, (str, os.PathLike)):
        raise InputError(f"save_to must be a file path (str or os.PathLike), got {type(path).__name__}")
    target = Path(path)
    if target.suffix.lower() != ".npy":
        target = target.with_name(target.name + ".npy")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise InputError(f"save_to: the folder {folder} of {target.name} does not exist")
    if target.is_dir():
        raise InputError(f"save_to: {target} is a folder, not a file")
    return target


def stream_bytes(dtype: np.dtype, n_rows: int) -> int:
    return 256 + n_rows * dtype.itemsize + 4096


def check_disk(target: Path, dtype: np.dtype, n_rows: int, n_steps: int, stride: int) -> None:
    """Refuse (:class:`~denoc_bridge.errors.ResourceError`, at once) a streaming run whose states
    cannot fit on the disk of ``target``, naming the figures and the options that help."""
    need = stream_bytes(dtype, n_rows)
    folder = target.parent if str(target.parent) else Path(".")
    free = shutil.disk_usage(folder).free
    if need <= free:
        return
    k = max(stride + 1, math.ceil(n_steps * dtype.itemsize / max(1, free // 2)))
    raise ResourceError(
        f"streaming {n_rows:,} states of {dtype.itemsize} bytes each to {target} would need about "
        f"{human_bytes(need)} of disk, but {human_bytes(free)} is free there; pass save_every={k} "
        "(or more: every k-th state is kept), a shorter t_final, or a folder on a larger disk",
        needed=int(need),
        available=int(free),
    )


class StateStream:
    """The writer of a streamed trajectory (see the module docstring): :meth:`append` the saved
    states chunk by chunk, then :meth:`finish` with the metadata (renames the file onto the
    target) or :meth:`abort` (removes it; the previous target stays)."""

    def __init__(self, target: Path, nq: int, nv: int, loops: bool, stops: bool, n_rows: int, stride: int):
        self.target, self.nq, self.nv, self.stride = target, nq, nv, stride
        self.dtype = record_dtype(nq, nv, loops, stops)
        self.loops, self.stops = loops, stops
        self.buffer_rows = int(max(1, min(n_rows, STREAM_CHUNK_BYTES // (2 * self.dtype.itemsize))))
        self._descr = np.lib.format.dtype_to_descr(self.dtype)
        body = len(self._dict(10**19)) + 1
        self.header_len = -(-(len(_NPY_MAGIC) + 4 + body) // 64) * 64
        if self.header_len - 10 > 65535:
            raise InputError(f"save_to: a model with nq = {nq}, nv = {nv} has too many fields for a .npy header")
        self.rows = 0
        self.done = False
        self.tmp = temporary_sibling(target)
        self._f = open(self.tmp, "r+b")  # closed by finish / abort
        self._rec = np.empty(self.buffer_rows, self.dtype)
        self._write_header()

    def _dict(self, rows: int) -> str:
        return f"{{'descr': {self._descr!r}, 'fortran_order': False, 'shape': ({rows},), }}"

    def _write_header(self) -> None:
        body = self._dict(self.rows).ljust(self.header_len - 10 - 1) + "\n"
        self._f.seek(0)
        self._f.write(_NPY_MAGIC + b"\x01\x00" + struct.pack("<H", len(body)) + body.encode("latin1"))

    def append(self, t, Q, V, A, TAU, E=None, S=None) -> None:
        """Write rows (t, q, v, a, tau, and the loops' errors E / the stops' energy S when the
        records have them); the header then counts them (the file reads as these rows so far)."""
        n = len(t)
        for i0 in range(0, n, self.buffer_rows):
            i1 = min(n, i0 + self.buffer_rows)
            rec = self._rec[: i1 - i0]
            rec["t"], rec["q"], rec["v"], rec["a"], rec["tau"] = t[i0:i1], Q[i0:i1], V[i0:i1], A[i0:i1], TAU[i0:i1]
            if self.loops:
                rec["constraint_error"] = E[i0:i1]
            if self.stops:
                rec["limit_work"] = S[i0:i1]
            self._f.seek(self.header_len + self.rows * self.dtype.itemsize)
            self._f.write(rec.view(np.uint8).data)
            self.rows += i1 - i0
        self._write_header()  # after the data: a killed process leaves a header that the data covers
        self._f.flush()

    def reset(self) -> None:
        """Drop the rows written (a run that starts again from its initial state)."""
        self.rows = 0
        self._f.truncate(self.header_len)
        self._write_header()

    def finish(self, meta: dict[str, Any]) -> Path:
        """Write the footer and rename the file onto the target; returns the target."""
        meta = {"format": FORMAT, "version": VERSION, "rows": self.rows, "save_every": self.stride, **meta}
        data = json.dumps(meta).encode()
        end = self.header_len + self.rows * self.dtype.itemsize
        self._f.seek(end)
        self._f.truncate(end)
        self._f.write(data + struct.pack("<Q", len(data)) + FOOTER_MAGIC)
        self._f.close()
        commit(self.tmp, self.target)
        self.done = True
        return self.target

    def abort(self) -> None:
        """Close and remove the temporary file (a no-op after :meth:`finish`)."""
        if self.done:
            return
        self.done = True
        self._f.close()
        try:
            self.tmp.unlink()
        except OSError:
            pass


def is_stream(path: Any) -> bool:
    """Whether ``path`` (a file path) starts as a ``.npy`` file."""
    if not isinstance(path, (str, os.PathLike)):
        return False
    try:
        with open(path, "rb") as f:
            return f.read(len(_NPY_MAGIC)) == _NPY_MAGIC
    except OSError:
        return False


def read_states(path: str | os.PathLike[str]) -> tuple[np.ndarray, dict[str, Any]]:
    """(records, metadata) of a streamed trajectory: the records memory-mapped (read-only; a
    field such as ``records["q"]`` reads the rows it is indexed with) and the footer's metadata.
    An :class:`~denoc_bridge.errors.InputError` for a file that is not one, or is torn."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        try:
            version = np.lib.format.read_magic(f)
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, fortran, dtype = read(f)
        except (ValueError, EOFError, SyntaxError, OSError) as exc:
            raise InputError(f"{path} is not a streamed trajectory (a damaged .npy header: {exc})") from None
        offset = f.tell()
        if fortran or len(shape) != 1 or dtype.names is None or not {"t", "q", "v", "a", "tau"} <= set(dtype.names):
            raise InputError(f"{path} is a .npy array, not a trajectory streamed by simulate(..., save_to=...)")
        end = offset + shape[0] * dtype.itemsize
        f.seek(max(0, size - 16))
        tail = f.read(16)
        n = struct.unpack("<Q", tail[:8])[0] if len(tail) == 16 else -1
        if size < end + 16 or tail[8:] != FOOTER_MAGIC or end + n + 16 != size:
            raise InputError(
                f"{path} is torn or incomplete: {shape[0]:,} records of {dtype.itemsize} bytes from byte {offset} "
                f"and the footer do not add up to its {size:,} bytes (a run killed before its rename leaves a "
                "'.part' file, not this)"
            )
        f.seek(end)
        try:
            meta = json.loads(f.read(n).decode())
        except (ValueError, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: its footer is not the metadata of a trajectory ({exc})") from None
    if meta.get("format") != FORMAT:
        raise InputError(f"{path}: its footer is not the metadata of a trajectory streamed by denoc_bridge")
    if shape[0] == 0:
        return np.zeros(0, dtype), meta
    return np.asarray(np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape)), meta
