"""The kernels compile on first use, once per argument types (denoc_bridge.kernels.compiling),
runs time their steps without the compilation, and a first run says what it compiles."""

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import njit, types

import denoc_bridge
from denoc_bridge.cli.warmup import CompileNotice
from denoc_bridge.kernels import entry
from denoc_bridge.kernels.compiling import njit_declared, njit_one_version

_SIG = types.float64(types.float64[::1])


def test_declared_signature_compiles_on_first_call_and_stays_strict():
    @njit_declared(_SIG)
    def first(a):
        return a[0] + 1.0

    assert first.signatures == []  # nothing at definition (import) time
    assert first(np.array([1.0, 2.0])) == 2.0
    assert len(first.signatures) == 1
    for bad in (np.array([1, 2]), np.array([1.0, 2.0])[::-1]):  # another dtype, a strided view
        with pytest.raises(TypeError):
            first(bad)
    assert len(first.signatures) == 1


def test_declared_signature_refuses_a_wrong_first_call_and_serves_kernels():
    @njit_declared(_SIG)
    def second(a):
        return a[0]

    with pytest.raises(TypeError):  # the first call compiles the declared signature, not this one
        second(np.array([1, 2]))
    assert len(second.signatures) == 1

    @njit
    def caller(a):
        return second(a) * 2.0

    assert caller(np.array([3.0])) == 6.0
    assert len(second.signatures) == 1


def test_the_entries_are_declared_not_compiled_at_import():
    kernels = (entry.forward_dynamics_state, entry.forward_dynamics_fast)
    for kernel in kernels:
        assert kernel._declared  # compiled on first use (maybe already, by another test)


def test_importing_the_package_and_the_cli_compiles_nothing(tmp_path):
    # an explicit signature (@njit(sig)) compiles at import: every command paid for it (the
    # derivatives and the inverse GIM: ~60 s of CPU on a fresh install); an empty cache shows it
    code = (
        "from numba.core import event\n"
        "names = []\n"
        "class L(event.Listener):\n"
        "    def on_start(self, ev): names.append(ev.data['dispatcher'].py_func.__qualname__)\n"
        "    def on_end(self, ev): pass\n"
        "event.register('numba:compile', L())\n"
        "import denoc_bridge, denoc_bridge.cli.main, denoc_bridge.pin\n"
        "print(names)\n"
    )
    root = str(Path(denoc_bridge.__file__).resolve().parents[1])  # this denoc_bridge, not the cwd's
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "PYTHONPATH": root}
    run = [sys.executable, "-c", code]
    out = subprocess.run(run, env=env, cwd=tmp_path, capture_output=True, text=True, check=True, timeout=600)
    assert out.stdout.strip() == "[]", out.stdout


def test_one_version_for_constant_flags_and_index_widths():
    @njit_one_version()
    def passes(x, flag, first):
        return x + first if flag else x

    @njit
    def calls(x):
        return passes(x, False, 0) + passes(x, True, np.int32(1)) + passes(x, True, 2)

    assert calls(1.0) == 1.0 + 2.0 + 3.0
    assert [str(s) for s in passes.signatures] == ["(float64, bool, int64)"]


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_first_run_says_what_it_compiles_and_a_warm_one_nothing():
    out = _Terminal()
    with CompileNotice(out):

        @njit
        def fresh(x):
            return x + 1

        fresh(1)
    text = out.getvalue()
    assert "compiled 1 kernel in" in text.splitlines()[-1]
    out = _Terminal()
    with CompileNotice(out):
        fresh(2)  # compiled: nothing to say
    assert out.getvalue() == ""
    pipe = io.StringIO()  # not a terminal: silent, as the progress bar
    with CompileNotice(pipe):

        @njit
        def other(x):
            return x - 1

        other(1)
    assert pipe.getvalue() == ""


def test_the_spinner_line_names_a_kernel_and_its_seconds_never_go_back():
    """Between two compilations the line keeps the last kernel's name (it showed an empty one),
    and its seconds count from the first compilation (they used to jump back when events nested
    or a compilation failed)."""
    notice = CompileNotice(io.StringIO())  # not a terminal: no spinner, the text alone

    class Ev:
        def __init__(self, f):
            self.data = {"dispatcher": type("D", (), {"py_func": f})()}

    def first_kernel():
        pass

    def second_kernel():
        pass

    notice.on_start(Ev(first_kernel))
    notice.on_start(Ev(second_kernel))  # nested
    seconds = []
    assert notice.text().startswith("compiling second_kernel (2 kernels so far, ")
    seconds.append(float(notice.text().split(", ")[1].split()[0]))
    notice.on_end(None)
    notice.on_end(None)
    assert notice.text().startswith("compiling second_kernel (2 kernels so far, ")  # between two
    seconds.append(float(notice.text().split(", ")[1].split()[0]))
    assert seconds == sorted(seconds)
