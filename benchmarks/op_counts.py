"""Floating-point operations per call of forward dynamics, counted by running the numba kernels'
Python source on counting numbers.

    python benchmarks/op_counts.py [--json PATH]

The kernels are executed as plain Python (``NUMBA_DISABLE_JIT=1``, set here
before numba is imported) on arrays of ``Flop`` objects that count every
multiplication, division, addition/subtraction, square root and
trigonometric call they take part in.  The counts are therefore those of the
code paths the compiled kernels take (one-DOF joints about coordinate axes,
branches on the rotation codes, the singularity guard), not a hand estimate.
A fused multiply-add counts as one multiplication and one addition, as in the
papers; negations, comparisons and copies are free.  The cosine and sine of a
joint angle count as two trigonometric operations (T), as in 003 §4.1 (the
compiled kernels evaluate them with a branch-free polynomial, :mod:`trig`,
whose own 20 M 28 A per joint are not included).

Counted on the benchmark chain (:func:`denoc_bridge.io.robots.serial_chain`,
revolute joints alternating x/y) at n = 10 and 20 links and reported as
``a n + b``; also on panda per call.

The compiled (Cython) passes are the numba kernels line for line; the numba kernels of inverse
dynamics, the GIM and its inverse by the scalar LTDL are gone (issue 48), with them the counts
this script took of them (``docs/performance.md`` keeps the figures it measured).  The forward
dynamics passes stay here while the numba derivatives run them (issue 49).
"""

from __future__ import annotations

import os

os.environ["NUMBA_DISABLE_JIT"] = "1"

import argparse
import json
import math

import numpy as np

COUNTS = {"mul": 0, "add": 0, "div": 0, "sqrt": 0, "trig": 0}


def _v(x):
    return x.v if isinstance(x, Flop) else float(x)


class Flop:
    """A float that counts the arithmetic it takes part in."""

    __slots__ = ("v",)

    def __init__(self, v):
        self.v = float(v)

    def _op(self, kind, value):
        COUNTS[kind] += 1
        return Flop(value)

    def __add__(self, o):
        return self._op("add", self.v + _v(o))

    def __radd__(self, o):
        return self._op("add", _v(o) + self.v)

    def __sub__(self, o):
        return self._op("add", self.v - _v(o))

    def __rsub__(self, o):
        return self._op("add", _v(o) - self.v)

    def __mul__(self, o):
        return self._op("mul", self.v * _v(o))

    def __rmul__(self, o):
        return self._op("mul", _v(o) * self.v)

    def __truediv__(self, o):
        return self._op("div", self.v / _v(o))

    def __rtruediv__(self, o):
        return self._op("div", _v(o) / self.v)

    def __neg__(self):
        return Flop(-self.v)

    def __pos__(self):
        return self

    def __abs__(self):
        return Flop(abs(self.v))

    def __float__(self):
        return self.v

    def __lt__(self, o):
        return self.v < _v(o)

    def __le__(self, o):
        return self.v <= _v(o)

    def __gt__(self, o):
        return self.v > _v(o)

    def __ge__(self, o):
        return self.v >= _v(o)

    def __eq__(self, o):
        return self.v == _v(o)

    def __ne__(self, o):
        return self.v != _v(o)

    def __hash__(self):
        return hash(self.v)

    def sqrt(self):
        return self._op("sqrt", math.sqrt(self.v))

    def cos(self):
        return self._op("trig", math.cos(self.v))

    def sin(self):
        return self._op("trig", math.sin(self.v))

    def isfinite(self):
        return math.isfinite(self.v)


def _flops(a):
    out = np.empty(np.shape(a), dtype=object)
    flat = out.reshape(-1)
    for i, x in enumerate(np.asarray(a, dtype=float).reshape(-1)):
        flat[i] = Flop(x)
    return out


def _reset():
    for k in COUNTS:
        COUNTS[k] = 0


def count(model, seed: int = 0) -> dict:
    """Operations of one forward dynamics call, per pass."""
    import denoc_bridge as db
    import denoc_bridge.kernels.inverse_dynamics as kid
    from denoc_bridge.core import layout as T
    from denoc_bridge.kernels.forward_dynamics import acceleration_forward_recursion, articulated_backward_recursion
    from denoc_bridge.kernels.inverse_dynamics import twist_forward_recursion

    kid.poly_ok = lambda q: False  # cos and sin as two trigonometric operations (T), as the papers count
    rng = np.random.default_rng(seed)
    q = db.random_configuration(model, rng)
    v, x = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    kt = model.kernel_table
    ki = kt.view(T.INT)
    kf = _flops(kt)
    L, nv = model.n_links, model.nv
    rows = T.work_rows(L, nv, model.n_modules)
    nofext = np.zeros((0, 6))
    result = {}

    def run(label, fn):
        _reset()
        fn()
        result[label] = dict(COUNTS)

    # forward dynamics: phi from the forward recursion with qdd = 0, then the two RGE passes
    work = _flops(np.zeros((rows, T.W)))
    qF, vF, tauF, out = _flops(q), _flops(v), _flops(x), _flops(np.zeros(nv))
    run(
        "fd.twist_forward_recursion",
        lambda: twist_forward_recursion(ki, kf, qF, vF, _flops(np.zeros(nv)), nofext, work, False),
    )
    run("fd.articulated_backward_recursion", lambda: articulated_backward_recursion(ki, kf, tauF, work, False))
    run("fd.acceleration_forward_recursion", lambda: acceleration_forward_recursion(ki, kf, work, out))
    a_counted = np.array([float(o) for o in out])
    a_ref = db.forward_dynamics(model, q, v, x)
    assert np.allclose(a_counted, a_ref, rtol=1e-12, atol=1e-12), "the counted run must reproduce forward_dynamics"
    result["fd"] = {k: sum(r[k] for lab, r in result.items() if lab.startswith("fd.")) for k in COUNTS}
    return result


def per_dof(n1: int = 10, n2: int = 20) -> dict:
    """``a n + b`` for each algorithm and kind of operation, from chains of n1 and n2 links."""
    from denoc_bridge.io.robots import serial_chain

    c1, c2 = count(serial_chain(n1)), count(serial_chain(n2))
    out = {}
    for label in c1:
        out[label] = {}
        for kind in COUNTS:
            a = (c2[label][kind] - c1[label][kind]) / (n2 - n1)
            b = c1[label][kind] - a * n1
            out[label][kind] = [a, b]
    return out


def _fmt(ab):
    a, b = ab
    a = int(a) if float(a).is_integer() else round(a, 2)
    b = int(b) if float(b).is_integer() else round(b, 2)
    return f"{a}n{'+' if b >= 0 else '-'}{abs(b)}" if a else f"{b}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the counts to this JSON file")
    args = parser.parse_args()
    chain = per_dof()
    from denoc_bridge.io.robots import load_robot

    try:
        panda = count(load_robot("panda"))
    except Exception as exc:  # example-robot-data missing
        panda = {"error": str(exc)}
    print("operations per call on the benchmark chain (n links), kernels run on counting numbers")
    print(f"{'pass':<36} {'mul+div':>12} {'add':>12} {'sqrt':>8} {'trig':>8}")
    for label, c in chain.items():
        md = [c["mul"][0] + c["div"][0], c["mul"][1] + c["div"][1]]
        print(f"{label:<36} {_fmt(md):>12} {_fmt(c['add']):>12} {_fmt(c['sqrt']):>8} {_fmt(c['trig']):>8}")
    if "fd" in panda:
        c = panda["fd"]
        print(f"panda fd: {c['mul'] + c['div']} M  {c['add']} A  {c['sqrt']} sqrt  {c['trig']} trig")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(chain=chain, panda=panda), f, indent=1)


if __name__ == "__main__":
    main()
