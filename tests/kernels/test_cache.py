"""The kernels' cache (denoc_bridge.kernels.cache): one folder per content of the kernel sources,
used by this package's kernels only; and the one line a process prints when a kernel compiles
(denoc_bridge.kernels.notice)."""

import io
import os
import subprocess
import sys
from pathlib import Path

import numba
import pytest
from numba.core import caching

import denoc_bridge
from denoc_bridge.kernels import cache, entry, notice

ROOT = str(Path(denoc_bridge.__file__).resolve().parents[1])


def test_the_locator_is_first_and_serves_the_kernels_only():
    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
    assert impl._locator_classes[0] is cache.KernelCacheLocator
    locator = entry.forward_dynamics_state._cache._impl.locator
    assert isinstance(locator, cache.KernelCacheLocator)
    assert Path(locator.get_cache_path()) == cache.cache_dir()
    assert locator.get_source_stamp() == cache.source_hash()

    def elsewhere(x):
        return x

    assert cache.KernelCacheLocator.from_function(elsewhere, __file__) is None  # a test file: numba's own


def test_the_folder_names_numba_python_and_the_sources_content(tmp_path, monkeypatch):
    name = cache.folder_name()
    assert name.startswith(f"numba-{numba.__version__}-py{sys.version_info[0]}{sys.version_info[1]}-")
    assert name.endswith(cache.source_hash()) and len(cache.source_hash()) == 16
    # the hash covers every kernel file's content: copy the folder, change one byte of one file
    copy = tmp_path / "kernels"
    copy.mkdir()
    for p in cache.KERNELS_DIR.glob("*.py"):
        (copy / p.name).write_bytes(p.read_bytes())
    monkeypatch.setattr(cache, "KERNELS_DIR", copy)
    cache.source_hash.cache_clear()
    try:
        same = cache.source_hash()
        (copy / "joints.py").write_bytes((copy / "joints.py").read_bytes() + b"\n")
        cache.source_hash.cache_clear()
        changed = cache.source_hash()
    finally:
        cache.source_hash.cache_clear()
    assert same == name.rsplit("-", 1)[1]
    assert changed != same


def _root_in_subprocess(env_changes):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", cache.CACHE_ENV)}
    env.update(env_changes, PYTHONPATH=ROOT)
    code = "from denoc_bridge.kernels import cache; print(cache.cache_root())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def test_numba_cache_dir_then_our_variable_then_the_user_cache(tmp_path):
    assert _root_in_subprocess({"NUMBA_CACHE_DIR": str(tmp_path / "n")}) == tmp_path / "n" / "denoc_bridge"
    assert _root_in_subprocess({cache.CACHE_ENV: str(tmp_path / "d")}) == tmp_path / "d"
    assert _root_in_subprocess({"HOME": str(tmp_path / "home"), "XDG_CACHE_HOME": str(tmp_path / "xdg")}) == (
        tmp_path / "xdg" / "denoc_bridge"
    )


def test_prune_keeps_the_current_folder_and_the_most_recent_others(tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "cache_root", lambda: tmp_path)
    current = cache.cache_dir()
    current.mkdir()
    for i in range(5):
        old = tmp_path / f"numba-0.0-py00-{i:016d}"
        old.mkdir()
        os.utime(old, (1000 + i, 1000 + i))
    (tmp_path / "unrelated").mkdir()
    removed = cache.prune(keep=3)
    assert sorted(p.name for p in removed) == [f"numba-0.0-py00-{i:016d}" for i in range(3)]
    left = sorted(p.name for p in tmp_path.iterdir())
    assert current.name in left and "unrelated" in left and f"numba-0.0-py00-{4:016d}" in left


class _Ev:
    def __init__(self, func):
        self.data = {"dispatcher": type("D", (), {"py_func": func})(), "args": ()}


def _kernel_like():
    pass


_kernel_like.__module__ = "denoc_bridge.kernels.somewhere"


def test_the_notice_speaks_once_and_for_this_packages_kernels_only(monkeypatch):
    monkeypatch.delenv(notice.QUIET_ENV, raising=False)
    monkeypatch.delenv(notice.LOG_ENV, raising=False)
    out = io.StringIO()
    listener = notice.FirstCompileNotice(out)

    def user_function():
        pass

    listener.on_start(_Ev(user_function))  # a user's own njit function: not ours to announce
    assert out.getvalue() == ""
    listener.on_start(_Ev(_kernel_like))
    listener.on_start(_Ev(_kernel_like))
    text = out.getvalue()
    assert text.count("\n") == 1 and text.startswith("denoc_bridge: compiling")
    assert str(cache.cache_dir()) in text and "denoc-bridge compile" in text


def test_the_notice_is_quiet_on_request_and_logs_every_kernel(monkeypatch, tmp_path):
    log = tmp_path / "compiled.txt"
    monkeypatch.setenv(notice.QUIET_ENV, "1")
    monkeypatch.setenv(notice.LOG_ENV, str(log))
    out = io.StringIO()
    listener = notice.FirstCompileNotice(out)
    listener.on_start(_Ev(_kernel_like))
    listener.on_start(_Ev(_kernel_like))
    assert out.getvalue() == ""
    assert log.read_text().count("denoc_bridge.kernels.somewhere._kernel_like") == 2


@pytest.mark.slow
def test_a_process_that_compiles_says_so_once_on_stderr(tmp_path):
    # an empty cache (NUMBA_CACHE_DIR): the first call compiles and the process says so, once.
    # The package's own calls compile nothing since the last numba run went (issue 49: a loop
    # system's and a mimic-loop system's simulations are the compiled core's), so the test calls
    # numba's remaining forward dynamics entry (kernels/entry.py) twice itself
    code = (
        "import numpy as np, denoc_bridge as db\n"
        "from denoc_bridge.kernels import entry\n"
        "m = db.generators.chain(3)\n"
        "q, z = db.neutral_configuration(m), np.zeros(m.nv)\n"
        "for _ in range(2): entry.forward_dynamics_fast(m._kt, m.thread_work(), q, z, z, np.empty(m.nv))\n"
    )
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), PYTHONPATH=ROOT)
    env.pop(notice.QUIET_ENV, None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, timeout=900)
    assert out.stderr.count("denoc_bridge: compiling its numba kernels") == 1, out.stderr
    again = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert "compiling" not in again.stderr  # cached: silent
