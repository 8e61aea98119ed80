"""How much memory this process may still take, and the refusal of a request that would need more
(issue 25, item 2): the simulations, batches and sweeps compute what they would allocate before
allocating it, and call :func:`check_memory`, which answers at once."""

from __future__ import annotations

import os
import resource

from denoc_bridge.errors import ResourceError

__all__ = ["available_memory", "check_memory", "human_bytes", "MEMORY_FRACTION"]

#: The share of the available memory one request may take (the rest: Python, the OS,
#: the other arrays of the run).
MEMORY_FRACTION = 0.8


def human_bytes(n: float) -> str:
    """``n`` bytes as "1.5 GB" (powers of 1000)."""
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1000 or unit == "PB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.3g} {unit}"
        n /= 1000
    return f"{n:.3g} PB"  # pragma: no cover  (the loop returns)


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _rlimit_left(limit: int, field: str) -> int | None:
    """What the soft ``limit`` still allows this process, given its usage ``field`` of
    /proc/self/status (kB), or None without a limit."""
    soft, _ = resource.getrlimit(limit)
    if soft == resource.RLIM_INFINITY:
        return None
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field):
                    return max(0, soft - int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    return soft


def _address_space_left() -> int | None:
    """What ``ulimit -v`` (RLIMIT_AS) still allows this process, or None without a limit."""
    return _rlimit_left(resource.RLIMIT_AS, "VmSize:")


def _data_left() -> int | None:
    """What ``ulimit -d`` (RLIMIT_DATA: the heap and private anonymous mappings, not the files a
    process maps) still allows this process, or None without a limit."""
    return _rlimit_left(resource.RLIMIT_DATA, "VmData:")


def _cgroup_left() -> int | None:
    """What the cgroup (v2) memory limit of a container still allows, or None without one."""
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            limit = f.read().strip()
        if limit == "max":
            return None
        with open("/sys/fs/cgroup/memory.current") as f:
            return max(0, int(limit) - int(f.read().strip()))
    except (OSError, ValueError):
        return None


def available_memory() -> tuple[int | None, str]:
    """(bytes this process may still allocate, where the figure comes from): the smallest of the
    machine's available memory (``MemAvailable`` of /proc/meminfo), the address-space limit
    (``ulimit -v``), the data-segment limit (``ulimit -d``) and a container's cgroup limit; (None, "") where none is known."""
    figures = [
        (n, what)
        for n, what in (
            (_meminfo_available(), "available on this machine"),
            (_address_space_left(), "left under the address-space limit (ulimit -v)"),
            (_data_left(), "left under the data-segment limit (ulimit -d)"),
            (_cgroup_left(), "left under the container's memory limit"),
        )
        if n is not None
    ]
    return min(figures) if figures else (None, "")


def check_memory(n_bytes: float, what: str, helps: str) -> None:
    """Raise :class:`~denoc_bridge.errors.ResourceError` when ``n_bytes`` (what ``what`` would
    allocate) exceeds :data:`MEMORY_FRACTION` of :func:`available_memory`; the message names
    both figures and ``helps`` (the options that reduce it)."""
    available, where = available_memory()
    if available is None or n_bytes <= MEMORY_FRACTION * available:
        return
    raise ResourceError(
        f"{what} would need about {human_bytes(n_bytes)} of memory, but {human_bytes(available)} is {where}; {helps}",
        needed=int(n_bytes),
        available=int(available),
    )
