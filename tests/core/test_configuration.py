"""The compiled configuration maps (denoc_bridge/core/configuration.pyx) against the numba
kernels they replace, in one process, on the same model tables: values (every joint type,
small-angle series and large rotations, batches), lengths that do not fit (status -2, nothing
written, nothing read out of bounds) and the TypeError of arguments the entries must not take."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.core import configuration as cc
from denoc_bridge.kernels import configuration as kc
from denoc_bridge.kernels.tables import INT
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.testing import random_model

#: largest difference allowed, max|cython - numba| / max(1, max|numba|): the same formulas in
#: the same order; numba does not contract a * b + c, the native build's gcc does (FMA), and
#: numba's sin/cos/atan2 are LLVM's, not libm's: measured at most 2.2e-16 (not bit for bit
#: either with -ffp-contract=off).
RTOL = 1e-15

RANDOM = [
    dict(seed=s, n_links=n, branching=b, n_roots=r, floating_base=fb)
    for s, n, b, r, fb in [
        (0, 1, 0.0, 1, False),
        (1, 5, 0.3, 1, True),
        (2, 12, 0.5, 2, False),
        (3, 12, 0.8, 3, True),
        (4, 9, 0.0, 1, True),
        (5, 20, 0.4, 1, False),
        (6, 30, 0.6, 2, True),
        (7, 70, 0.1, 1, False),
    ]
]
ONE_TYPE = [f"type{int(t)}-{s}" for t in JointType for s in (10, 11)]  # chains of one joint type
ROBOTS = ["panda", "talos", "solo12"]
MODELS = [f"random{i}" for i in range(len(RANDOM))] + ONE_TYPE + ROBOTS
SCALES = (1e-7, 0.3, 3.0)  # small-angle series, moderate and large rotations


@cache
def model_of(name: str) -> db.Model:
    if name.startswith("random"):
        return random_model(**RANDOM[int(name[6:])])
    if name.startswith("type"):
        t, s = name[4:].split("-")
        return random_model(int(s), 6, branching=0.3, joint_types=(JointType(int(t)),))
    return db.load_robot(name)


def ki_of(model: db.Model) -> np.ndarray:
    return model._kt.view(INT)


def rel(a: np.ndarray, b: np.ndarray) -> float:
    """max|a - b| / max(1, max|b|)."""
    if a.size == 0:
        return 0.0
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


def states(model: db.Model, scale: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    q0 = db.random_configuration(model, rng)
    q1 = db.random_configuration(model, rng)
    v = rng.standard_normal(model.nv) * scale
    xi = rng.standard_normal(model.nv) * scale
    return q0, q1, v, xi


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("scale", SCALES)
def test_maps_match_numba(name, scale):
    model = model_of(name)
    ki = ki_of(model)
    q0, q1, v, xi = states(model, scale)
    for f, a, b, n in (
        ("integrate", q0, v, model.nq),
        ("difference", q0, q1, model.nv),
        ("configuration_rate", q0, v, model.nq),
        ("dexpinv", xi, v, model.nv),
    ):
        want, got = np.full(n, np.nan), np.full(n, np.nan)
        getattr(kc, f)(ki, a, b, want)
        assert getattr(cc, f)(model._kt, a, b, got) == 0
        assert rel(got, want) <= RTOL, (f, rel(got, want))
    # q1 close to q0: the series branches of log3, log6 and the planar log
    near = np.empty(model.nq)
    kc.integrate(ki, q0, v * 1e-6, near)
    want, got = np.empty(model.nv), np.empty(model.nv)
    kc.difference(ki, q0, near, want)
    cc.difference(model._kt, q0, near, got)
    assert rel(got, want) <= RTOL


@pytest.mark.parametrize("name", ["random3", "random6", "talos"])
def test_integrate_in_place(name):
    """out may be q, as in the numba kernel."""
    model = model_of(name)
    ki = ki_of(model)
    q0, _, v, _ = states(model, 2.0, seed=1)
    want = np.empty(model.nq)
    kc.integrate(ki, q0, v, want)
    q = q0.copy()
    assert cc.integrate(model._kt, q, v, q) == 0
    assert rel(q, want) <= RTOL


@pytest.mark.parametrize("name", ["random1", "random6", "random7", "solo12", "talos"])
def test_batches_match_numba(name):
    model = model_of(name)
    ki = ki_of(model)
    rng = np.random.default_rng(3)
    B = 9
    Q0 = np.array([db.random_configuration(model, rng) for _ in range(B)])
    Q1 = np.array([db.random_configuration(model, rng) for _ in range(B)])
    V = rng.standard_normal((B, model.nv)) * 2.0
    want, got = np.empty_like(Q0), np.empty_like(Q0)
    kc.integrate_batch(ki, Q0, V, want)
    assert cc.integrate_batch(model._kt, Q0, V, got) == 0
    assert rel(got, want) <= RTOL
    want, got = np.empty((B, model.nv)), np.empty((B, model.nv))
    kc.difference_batch(ki, Q0, Q1, want)
    assert cc.difference_batch(model._kt, Q0, Q1, got) == 0
    assert rel(got, want) <= RTOL
    for b in range(B):  # each row is the single-state map
        one = np.empty(model.nv)
        cc.difference(model._kt, Q0[b], Q1[b], one)
        assert np.array_equal(one, got[b])
    empty = np.empty((0, model.nq))
    assert cc.integrate_batch(model._kt, empty, np.empty((0, model.nv)), np.empty((0, model.nq))) == 0


def test_lengths_that_do_not_fit_write_nothing():
    model = model_of("random3")  # free-flyer, every joint type
    kt = model._kt
    ki = ki_of(model)
    nq, nv = model.nq, model.nv
    q, _, v, _ = states(model, 1.0)

    def untouched(f, *args, n):
        out = np.full(n, 7.0)
        assert f(kt, *args, out) == -2
        assert np.all(out == 7.0)

    untouched(cc.integrate, q[:-1], v, n=nq - 1)
    untouched(cc.integrate, q, v[:-1], n=nq)
    untouched(cc.integrate, q, v, n=nq + 1)
    untouched(cc.difference, q, q[:-1], n=nv)
    untouched(cc.difference, q, q, n=nv - 1)
    untouched(cc.configuration_rate, q, np.zeros(nv + 5), n=nq)
    untouched(cc.dexpinv, v, v[:-1], n=nv)
    untouched(cc.dexpinv, v[:-1], v[:-1], n=nv - 1)
    # a table and arrays of the same lengths that do not belong together: fewer joints than q
    out = np.full(nq, 7.0)
    assert cc.integrate(kt[:-1].copy(), q, v, out) == -2 and np.all(out == 7.0)
    # a joint type the kernels do not know, indices out of order, a joint's nq not its type's
    for row, col, value in ((1, 2, ki[1, 2] | 15 << 8), (-1, 0, ki[-1, 0] + 1000), (2, 85, ki[2, 85] + 1)):
        bad = kt.copy()
        bad.view(INT)[row, col] = value
        assert cc.integrate(bad, q, v, out) == -2 and np.all(out == 7.0)
        assert cc.difference(bad, q, q, np.zeros(nv)) == -2
    # batches: rows and columns
    Q, V = np.tile(q, (3, 1)), np.tile(v, (3, 1))
    OUT = np.full((3, nq), 7.0)
    assert cc.integrate_batch(kt, Q, V[:2], OUT) == -2
    assert cc.integrate_batch(kt, Q, V, OUT[:2]) == -2
    assert cc.integrate_batch(kt, Q[:, :-1].copy(), V, OUT[:, :-1].copy()) == -2
    assert cc.difference_batch(kt, Q, Q, np.zeros((3, nv + 1))) == -2
    assert np.all(OUT == 7.0)


def test_arguments_it_must_not_take_raise_type_error():
    model = model_of("random1")
    kt = model._kt
    q, _, v, _ = states(model, 1.0)
    out = np.empty(model.nq)
    for args in (
        (kt, list(q), v, out),  # not an array
        (kt, q.astype(np.float32), v, out),  # dtype
        (kt, q, v.astype(np.int64), out),
        (kt, np.repeat(q, 2)[::2], v, out),  # not contiguous
        (kt, q, v, out[None]),  # dimensions
        (kt, q.astype(">f8"), v, out),  # byte order
        (ki_of(model), q, v, out),  # the int view, not the float table
        (kt[0], q, v, out),  # not a table
        (None, q, v, out),
    ):
        with pytest.raises(TypeError):
            cc.integrate(*args)
    assert cc.integrate(kt[:, :10].copy(), q, v, out) == -2  # not a table: a status
    ro = out.copy()
    ro.flags.writeable = False
    with pytest.raises(TypeError, match="writeable"):
        cc.integrate(kt, q, v, ro)
    with pytest.raises(TypeError):
        cc.integrate_batch(kt, q, v, out)  # 1-D where the batch takes 2-D
    with pytest.raises(TypeError):
        cc.difference_batch(kt, q[None], q[None], np.empty(model.nv))
