"""The compiled configuration maps (denoc_bridge/core/configuration.pyx) against Pinocchio
(``pin.integrate`` and ``pin.difference`` on the same model; the coordinates' rate against the
central difference of ``pin.integrate``; the RKMK map ``dexpinv``, truncated after the second
bracket, against the exact ``dexp^-1`` that central differences of Pinocchio's maps give, within
its truncation), and the energies (tree.pyx, energy.pxi) against their formulas (the GIM's 1/2
v^T M v, Pinocchio's potential energy, the springs), on the same model tables: values (every
joint type, small-angle series and large rotations, batches), lengths that do not fit (status -2
or nan, nothing written, nothing read out of bounds) and the TypeError of arguments the entries
must not take.  (numba's kernels, the oracle of these maps until issue 49 deleted them, agreed
with the compiled ones to 2.2e-16.)"""

from __future__ import annotations

from functools import cache

import numpy as np
import pinocchio as pin
import pytest

import denoc_bridge as db
from denoc_bridge.core import configuration as cc
from denoc_bridge.core import tree as ct
from denoc_bridge.core.layout import INT
from tests.core.models import MODELS, model_of

SCALES = (1e-7, 0.3, 3.0)  # small-angle series, moderate and large rotations

#: integrate and difference against Pinocchio's, max|ours - pin| / max(1, max|pin|): other
#: formulas for the same maps (measured at most 1.3e-13, a difference of large rotations)
RTOL = 1e-12
#: the central differences' step and the error they leave (measured at most 2e-9 relative)
H, RTOL_FD = 1e-6, 1e-8
#: dexpinv = v - [xi, v] / 2 + [xi, [xi, v]] / 12 leaves the series' next term, about
#: |xi|^4 |v| / 720 per bracket: bounded by DEXP_C |xi|^4 |v| (measured at most 0.0053 with the
#: largest entries as norms); a wrong first bracket gives |xi| |v|
DEXP_C = 0.05


def ki_of(model: db.Model) -> np.ndarray:
    return model._kt.view(INT)


@cache
def pin_of(name: str) -> pin.Model:
    return db.to_pinocchio(model_of(name))


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


def compiled(f, model, a, b, n):
    out = np.full(n, np.nan)
    assert getattr(cc, f)(model._kt, a, b, out) == 0, f
    return out


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("scale", SCALES)
def test_maps_match_pinocchio(name, scale):
    model, pm = model_of(name), pin_of(name)
    q0, q1, v, xi = states(model, scale)
    assert rel(compiled("integrate", model, q0, v, model.nq), pin.integrate(pm, q0, v)) <= RTOL
    assert rel(compiled("difference", model, q0, q1, model.nv), pin.difference(pm, q0, q1)) <= RTOL
    rate = (pin.integrate(pm, q0, H * v) - pin.integrate(pm, q0, -H * v)) / (2 * H)
    assert rel(compiled("configuration_rate", model, q0, v, model.nq), rate) <= RTOL_FD * max(1.0, np.abs(v).max())
    # q1 close to q0: the series branches of log3, log6 and the planar log
    near = pin.integrate(pm, q0, v * 1e-6)
    assert rel(compiled("difference", model, q0, near, model.nv), pin.difference(pm, q0, near)) <= RTOL


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("scale", (1e-7, 0.05, 0.3))
def test_dexpinv_is_the_rkmk_rate(name, scale):
    """xi' = dexpinv(xi, v) moves q0 (+) xi with the body velocity v: the central difference of
    ``(q0 (+) xi) (-) (q0 (+) (xi + h xi'))`` over h is v, up to the series' truncation."""
    model, pm = model_of(name), pin_of(name)
    q0, _, _, xi = states(model, scale, seed=2)
    v = np.random.default_rng(3).standard_normal(model.nv)
    xd = compiled("dexpinv", model, xi, v, model.nv)
    qa, h = pin.integrate(pm, q0, xi), 1e-5
    moved = [pin.difference(pm, qa, pin.integrate(pm, q0, xi + s * h * xd)) for s in (1, -1)]
    err = np.abs((moved[0] - moved[1]) / (2 * h) - v).max()
    bound = DEXP_C * np.abs(xi).max() ** 4 * np.abs(v).max() + 1e-9
    assert err <= bound, (err, bound)


@pytest.mark.parametrize("name", ["random3", "random6", "talos"])
def test_integrate_in_place(name):
    """out may be q: the same numbers as into another array."""
    model = model_of(name)
    q0, _, v, _ = states(model, 2.0, seed=1)
    want = compiled("integrate", model, q0, v, model.nq)
    q = q0.copy()
    assert cc.integrate(model._kt, q, v, q) == 0
    assert np.array_equal(q, want)


@pytest.mark.parametrize("name", ["random1", "random6", "random7", "solo12", "talos"])
def test_batches_are_the_single_maps(name):
    model = model_of(name)
    rng = np.random.default_rng(3)
    B = 9
    Q0 = np.array([db.random_configuration(model, rng) for _ in range(B)])
    Q1 = np.array([db.random_configuration(model, rng) for _ in range(B)])
    V = rng.standard_normal((B, model.nv)) * 2.0
    got = np.empty_like(Q0)
    assert cc.integrate_batch(model._kt, Q0, V, got) == 0
    for b in range(B):  # each row is the single-state map
        assert np.array_equal(got[b], compiled("integrate", model, Q0[b], V[b], model.nq))
    assert rel(got[-1], pin.integrate(pin_of(name), Q0[-1], V[-1])) <= RTOL
    got = np.empty((B, model.nv))
    assert cc.difference_batch(model._kt, Q0, Q1, got) == 0
    for b in range(B):
        assert np.array_equal(got[b], compiled("difference", model, Q0[b], Q1[b], model.nv))
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


# ----------------------------------------------------------------- energies
#: energies: max|compiled - formulas| / max(1, |T|, |V|); the dense 1/2 v^T M v and Pinocchio's
#: potential round otherwise than the recursion, and the potential of a chain cancels (V of
#: -23.6 J from terms of some 100 J): measured at most 2.2e-15.
RTOL_ENERGY = 1e-14


def work_of(model: db.Model) -> np.ndarray:
    from denoc_bridge.core.layout import NMOD, W, work_rows

    S = ki_of(model)[0, NMOD] if model.n_links else 0
    return np.zeros((work_rows(model.n_links, model.nv, S), W))


def energy_state(model: db.Model, seed: int):
    rng = np.random.default_rng(seed)
    q = db.random_configuration(model, rng)
    v = rng.standard_normal(model.nv) * 2.0
    K = rng.random(model.nv) * 10.0
    q_rest = db.random_configuration(model, rng)
    return q, v, K, q_rest


def erel(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


def reference_energies(model, q, v, K, q_rest, springs):
    """(T, V) by their formulas: T = 1/2 v^T M v (the GIM, armature included), V = Pinocchio's
    gravitational potential energy plus 1/2 sum K_i d_i^2 with d = q (-) q_rest."""
    pm = db.to_pinocchio(model)
    T = 0.5 * v @ db.mass_matrix(model, q) @ v
    V = pin.computePotentialEnergy(pm, pm.createData(), q)
    if springs:
        V += 0.5 * K @ db.difference(model, q_rest, q) ** 2
    return T, V


@pytest.mark.parametrize("name", MODELS)
def test_energies_are_their_formulas(name):
    """The compiled energy pass against :func:`reference_energies` (numba's energy kernel, which
    this test compared it with before it went, agreed to 4e-15)."""
    model = model_of(name)
    for seed in range(3):
        q, v, K, q_rest = energy_state(model, seed)
        if seed == 2:  # rotor inertias (armature) on every joint
            model = model.replace(armature=np.random.default_rng(seed).uniform(0.1, 0.5, model.nv))
        for springs in (False, True):
            want = reference_energies(model, q, v, K, q_rest, springs)
            got = ct.energies_state(model._kt, work_of(model), q, v, K, q_rest, springs, np.empty(model.nv))
            assert erel(got, want) <= RTOL_ENERGY, (seed, springs, got, want, erel(got, want))


@pytest.mark.parametrize("name", ["random6", "random7", "panda", "talos"])
def test_energies_against_the_public_function(name):
    """The public db.energies (numba today) and, independently of both kernels, the kinetic
    energy 1/2 v^T M v with M from the GIM."""
    model = model_of(name)
    q, v, K, q_rest = energy_state(model, 4)
    T, V = ct.energies_state(model._kt, work_of(model), q, v, model.stiffness, model.rest_configuration,
                             bool(np.any(model.stiffness)), np.empty(model.nv))  # fmt: skip
    T0, V0 = db.energies(model, q, v)
    assert abs(T - T0) <= 1e-13 * max(1.0, abs(T0)) and abs(V - V0) <= 1e-13 * max(1.0, abs(V0))
    M = db.mass_matrix(model, q)
    assert abs(T - 0.5 * v @ M @ v) <= 1e-12 * max(1.0, T)


@pytest.mark.parametrize("name", ["random1", "random6", "solo12", "talos"])
def test_energies_chunks_are_the_single_states(name):
    """A batch's chunks give each state's energies bit for bit, and those are their formulas."""
    model = model_of(name)
    B = 11
    states_ = [energy_state(model, s) for s in range(B)]
    Q = np.array([s[0] for s in states_])
    V = np.array([s[1] for s in states_])
    K, q_rest = states_[0][2], states_[0][3]
    d = np.empty(model.nv)
    for springs in (False, True):
        got_T, got_V = np.full(B, np.nan), np.full(B, np.nan)
        for start, stop in ((0, 4), (4, 4), (4, B)):  # chunks, as multibody.data.run_chunks calls them
            assert ct.energies_chunk(model._kt, Q, V, K, q_rest, springs, got_T, got_V, start, stop) == 0
        for b in range(B):
            one = ct.energies_state(model._kt, work_of(model), Q[b], V[b], K, q_rest, springs, d)
            assert one == (got_T[b], got_V[b])
        want = reference_energies(model, Q[3], V[3], K, q_rest, springs)
        assert erel((got_T[3], got_V[3]), want) <= RTOL_ENERGY
    T, P = np.empty(0), np.empty(0)
    assert ct.energies_chunk(model._kt, Q[:0], V[:0], K, q_rest, True, T, P, 0, 0) == 0


def test_energy_lengths_that_do_not_fit():
    model = model_of("random3")
    kt, nv = model._kt, model.nv
    q, v, K, q_rest = energy_state(model, 0)
    work, d = work_of(model), np.empty(nv)
    ok = ct.energies_state(kt, work, q, v, K, q_rest, True, d)
    assert np.all(np.isfinite(ok))
    for args in (
        (kt, work, q[:-1], v, K, q_rest, True, d),
        (kt, work, q, v[:-1], K, q_rest, True, d),
        (kt, work, q, v, K[:-1], q_rest, True, d),
        (kt, work, q, v, K, q_rest[:-1], True, d),
        (kt, work, q, v, K, q_rest, True, d[:-1]),
        (kt, work[:-1], q, v, K, q_rest, True, d),
        (kt[:-1], work, q, v, K, q_rest, True, d),
        (kt[:, :40].copy(), work, q, v, K, q_rest, True, d),
    ):
        assert np.all(np.isnan(ct.energies_state(*args)))
    bad = kt.copy()  # a module that ends beyond the links
    bad.view(INT)[0, 89] = model.n_links + 5
    assert np.all(np.isnan(ct.energies_state(bad, work, q, v, K, q_rest, True, d)))
    Q, V = np.tile(q, (4, 1)), np.tile(v, (4, 1))
    T, P = np.full(4, 7.0), np.full(4, 7.0)
    assert ct.energies_chunk(kt, Q, V[:3], K, q_rest, True, T, P, 0, 4) == -2
    assert ct.energies_chunk(kt, Q, V, K, q_rest, True, T[:3], P, 0, 4) == -2
    assert ct.energies_chunk(kt, Q[:, :-1].copy(), V, K, q_rest, True, T, P, 0, 4) == -2
    assert ct.energies_chunk(bad, Q, V, K, q_rest, True, T, P, 0, 4) == -2
    assert ct.energies_chunk(kt, Q, V, K, q_rest, True, T, P, 3, 5) == -2
    assert ct.energies_chunk(kt, Q, V, K, q_rest, True, T, P, 3, 2) == -2
    assert np.all(T == 7.0) and np.all(P == 7.0)
    with pytest.raises(TypeError):
        ct.energies_state(kt, work, q.astype(np.float32), v, K, q_rest, True, d)
    with pytest.raises(TypeError):
        ct.energies_state(kt.view(INT), work, q, v, K, q_rest, True, d)
    with pytest.raises(TypeError):
        ct.energies_chunk(kt, q, v, K, q_rest, True, T, P, 0, 1)
