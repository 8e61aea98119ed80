"""Where the compiled kernels are kept: one cache folder per *content* of the kernel sources.

numba caches a compiled function next to its source file (``__pycache__``) and keys it on that
one file's content: an edit of a callee in another file (or a package upgrade that changes only
the callee) leaves the caller's stale machine code in place, and a clone, an installed copy and
an editable install of the same sources each compile everything again.

:class:`KernelCacheLocator`, registered first among numba's cache locators for the functions of
this package (and for no other), keys every kernel on one stamp, the SHA-256 of *all* the kernel
sources (:func:`source_hash`), and keeps them in one folder named after that stamp, numba's
version and Python's (:func:`cache_dir`):

* ``$NUMBA_CACHE_DIR/denoc_bridge/`` when numba's own variable is set, else
* ``$DENOC_BRIDGE_CACHE_DIR`` when set, else
* the user's cache folder (``~/.cache/denoc_bridge`` on Linux), else, when that cannot be
  written, the package's own ``kernels/__pycache__``.

So the kernels compiled by ``pip install`` (the build step runs ``denoc-bridge compile``) serve the
installed package, an editable install and the clone's tests alike, on the machine that compiled
them; any change of any kernel file selects a fresh folder (nothing stale is ever loaded).  Inside
a folder numba's own index still keys each entry on the argument types, the CPU (name and
features) and the function's bytecode, so a cache made on another CPU is not used: the kernels
compile on first use there (:mod:`.notice` says so on stderr).
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numba
from numba.core import caching
from numba.misc.appdirs import AppDirs

#: the kernel sources: every ``*.py`` of this folder
KERNELS_DIR = Path(__file__).resolve().parent
#: the environment variable that moves the cache (numba's own NUMBA_CACHE_DIR wins over it)
CACHE_ENV = "DENOC_BRIDGE_CACHE_DIR"
#: folders of older sources kept beside the current one (other checkouts, branches, versions)
KEEP_FOLDERS = 8


@functools.lru_cache(maxsize=1)
def source_hash() -> str:
    """SHA-256 of the kernel sources (names and contents), 16 hex digits."""
    h = hashlib.sha256()
    for path in sorted(KERNELS_DIR.glob("*.py")):
        h.update(path.name.encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:16]


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    return True


def _user_cache_root() -> Path:
    return Path(AppDirs(appname="denoc_bridge", appauthor=False).user_cache_dir)


@functools.lru_cache(maxsize=1)
def cache_root() -> Path:
    """The folder holding the per-content cache folders (see the module docstring)."""
    if numba.config.CACHE_DIR:
        return Path(numba.config.CACHE_DIR) / "denoc_bridge"
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    root = _user_cache_root()
    if _writable(root):
        return root
    return KERNELS_DIR / "__pycache__"


def folder_name() -> str:
    """``numba-<version>-py<major><minor>-<source hash>``."""
    return f"numba-{numba.__version__}-py{sys.version_info[0]}{sys.version_info[1]}-{source_hash()}"


def cache_dir() -> Path:
    """The folder of this package's compiled kernels."""
    return cache_root() / folder_name()


def prune(keep: int = KEEP_FOLDERS) -> list[Path]:
    """Remove the cache folders of other sources beyond the ``keep`` most recently used ones;
    returns the removed folders."""
    root, current = cache_root(), cache_dir()
    if not root.is_dir():
        return []
    others = [p for p in root.iterdir() if p.is_dir() and p.name.startswith("numba-") and p != current]
    others.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    removed = others[max(0, keep - 1) :]
    for path in removed:
        shutil.rmtree(path, ignore_errors=True)
    return removed


class KernelCacheLocator(caching._CacheLocator):
    """numba's cache locator for the kernels of this package (see the module docstring)."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = str(cache_dir())

    def get_cache_path(self):
        return self._cache_path

    def get_source_stamp(self):
        return source_hash()

    def get_disambiguator(self):
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        try:
            if Path(py_file).resolve().parent != KERNELS_DIR:
                return None
        except (OSError, TypeError):
            return None
        self = cls(py_func, py_file)
        try:
            self.ensure_cache_path()
        except OSError:  # not writable: numba's own locators decide
            return None
        return self


def install() -> None:
    """Put :class:`KernelCacheLocator` first among numba's locators (once)."""
    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
    if KernelCacheLocator not in impl._locator_classes:
        impl._locator_classes.insert(0, KernelCacheLocator)
