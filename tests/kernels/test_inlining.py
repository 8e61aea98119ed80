"""numba's inliner with the two speed-ups of :mod:`denoc_bridge.kernels.inlining`: same code, less work."""

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest
from numba.core import inline_closurecall

from denoc_bridge.kernels import inlining

#: a kernel that inlines a helper (branches, tuples, a loop) at several sites, through a second
#: inlined helper; prints its result and its optimised LLVM IR with numba's unique names removed
_PROGRAM = textwrap.dedent(
    """
    import json, re, sys
    import numpy as np
    from numba import njit
    import denoc_bridge.kernels  # installs the inliner's speed-ups unless DENOC_BRIDGE_NUMBA_INLINER=numba
    from denoc_bridge.kernels import inlining

    @njit(inline="always")
    def rot(code, c, s, x):
        if code == 0:
            return x[0], c * x[1] - s * x[2], s * x[1] + c * x[2]
        if code == 1:
            return c * x[0] + s * x[2], x[1], -s * x[0] + c * x[2]
        acc = 0.0
        for i in range(3):
            acc += x[i]
        return c * x[0] - s * x[1], s * x[0] + c * x[1], x[2] + acc

    @njit(inline="always")
    def twice(code, c, s, x):
        return rot(code, c, s, rot(code, c, s, x))

    @njit
    def kernel(codes, cs, out):
        x = (1.0, 2.0, 3.0)
        for k in range(codes.shape[0]):
            x = twice(codes[k], cs[k, 0], cs[k, 1], x)
            if k % 2:
                x = rot(codes[k], cs[k, 1], cs[k, 0], x)
        out[0], out[1], out[2] = x

    codes = np.array([0, 1, 2, 0, 2, 1, 1])
    cs = np.cos(np.arange(14.0)).reshape(7, 2)
    out = np.zeros(3)
    kernel(codes, cs, out)
    (llvm,) = kernel.inspect_llvm().values()
    llvm = re.sub(r"B[0-9]+v[0-9]+B", "BvB", llvm)  # numba's unique function names
    llvm = re.sub(r"\\[[0-9]+ x i8\\]", "[N x i8]", llvm)
    llvm = re.sub(r'%"[^"]*"|%[A-Za-z0-9_.$-]+', "%V", llvm)  # value names
    llvm = re.sub(r"(?m)^[A-Za-z0-9_.$-]+:", "L:", llvm)  # block labels
    llvm = re.sub(r"![0-9]+", "!M", re.sub(r" +;", " ;", llvm))
    print(json.dumps({"installed": inlining.installed(), "out": out.tolist(), "llvm": llvm}))
    """
)


def _compile(inliner: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != inlining.ENV}
    if inliner:
        env[inlining.ENV] = inliner
    run = subprocess.run(
        [sys.executable, "-c", _PROGRAM], env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_the_inlined_kernel_is_the_same_code_as_numbas():
    ours, numbas = _compile(None), _compile("numba")
    assert ours["installed"] and not numbas["installed"]
    assert ours["out"] == numbas["out"]
    assert re.search(r"fmul|fadd", ours["llvm"])  # the kernel's arithmetic is there
    assert ours["llvm"] == numbas["llvm"]


def test_the_speed_ups_are_installed_with_the_kernels():
    assert inlining.installed()
    assert inline_closurecall.copy.deepcopy.__self__ is inlining._PROXY
    assert inline_closurecall.InlineWorker.inline_function is inlining._inline_function


def test_each_helper_is_built_once_however_many_sites_inline_it(monkeypatch):
    from numba import njit

    @njit(inline="always")
    def helper(x):
        return x * x + 1.0

    @njit
    def kernel(x):
        return helper(x) + helper(2.0 * x) + helper(helper(x))

    built = []
    original = inline_closurecall.InlineWorker.run_untyped_passes

    def counting(self, func, enable_ssa=False):
        built.append(func.__name__)
        return original(self, func, enable_ssa)

    monkeypatch.setattr(inline_closurecall.InlineWorker, "run_untyped_passes", counting)
    assert kernel(1.5) == pytest.approx(3.25 + 10.0 + 3.25**2 + 1.0)
    assert built.count("helper") == 1  # four inlined calls, one build


def test_an_inlined_call_gets_its_own_copy_of_the_helper():
    # the table's IR is copied before inlining changes it: the same helper inlined in two
    # kernels with other arguments gives each its own numbers
    from numba import njit

    @njit(inline="always")
    def affine(a, b, x):
        y = a * x
        return y + b

    @njit
    def first(x):
        return affine(2.0, 1.0, x)

    @njit
    def second(x):
        return affine(3.0, -1.0, x) + affine(0.5, 0.0, x)

    assert first(4.0) == 9.0
    assert second(4.0) == 13.0
    assert first(1.0) == 3.0


def test_a_numba_with_another_inline_function_keeps_its_own():
    def other(self, caller_ir, block, i, function, arg_typs=None, extra=None):
        raise AssertionError

    assert inlining._replaceable(inlining._inline_function)
    assert not inlining._replaceable(other)
    assert not inlining._replaceable(len)
