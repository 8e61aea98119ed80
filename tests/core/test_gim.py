"""The compiled GIM family (denoc_bridge/core/gim*.pxi) against the numba entries
(denoc_bridge/kernels/entry.py), in one process, on the same model table and work layout: the GIM,
its inverse (both branches of MINV_LTDL_WORK_PER_ENTRY), its block factors (both branches of
LTDL_MAX_WORK, link and module level, U D U^T and the inverses), the geometry entries, and the
same statuses and TypeErrors on bad input."""

from __future__ import annotations

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.io.robots import serial_chain
from denoc_bridge.kernels import entry as nb
from denoc_bridge.kernels import gim_ltdl
from denoc_bridge.kernels import tables as T
from denoc_bridge.testing import ALL_JOINT_TYPES, random_model

cy = pytest.importorskip("denoc_bridge.core.tree")

#: relative difference max|a - b| / max|b| allowed between the two compilations of one algorithm
#: (the same operations in the same order; only the contraction into FMAs may differ)
TOL = 1e-13


def bound(model, name):
    """TOL on the robots and chains; on the random trees (random inertias, massless links: GIMs
    of condition numbers up to 1e5) the inverse and the factors may differ by the round-off
    that the condition number carries, cond(I) eps (measured: up to 0.06 cond(I) eps with FMA
    contraction, 0.11 cond(I) eps with -ffp-contract=off against numba's contracted FMAs)."""
    if not name.startswith("random"):
        return TOL
    q, nv = _q(model), model.nv
    M = np.empty((nv, nv))
    assert nb.mass_matrix_state(model._kt, _work(model), q, M) == 0
    return max(TOL, np.linalg.cond(M) * np.finfo(float).eps)


def _model(name):
    if name.startswith("chain"):
        return serial_chain(int(name[5:]))
    if name.startswith("random"):
        seed = int(name[6:])
        return random_model(
            seed,
            n_links=3 + seed % 10,
            branching=0.4,
            n_roots=1 + seed % 3,
            joint_types=ALL_JOINT_TYPES,
            floating_base=seed % 2 == 0,
            massless=0.3 if seed % 3 == 0 else 0.0,
        )
    return db.load_robot(name)


ROBOTS = ["panda", "solo12", "talos", "chain10", "chain24", "chain100"]
RANDOM = [f"random{s}" for s in range(24)]
MODELS = {}


def model_of(name):
    if name not in MODELS:
        MODELS[name] = _model(name)
    return MODELS[name]


def _work(model):
    return db.Data(model).work


def _q(model, seed=0):
    return np.asarray(db.random_configuration(model, np.random.default_rng(seed)), dtype=float)


def rel(a, b):
    scale = np.max(np.abs(b)) if b.size else 0.0
    return float(np.max(np.abs(a - b)) / scale) if scale > 0 else float(np.max(np.abs(a - b), initial=0.0))


def _both(fn, model, *outs_shape, args=()):
    """(status, outputs) of the numba and the compiled entry ``fn`` at a random q, each on its own
    work array."""
    q = _q(model)
    res = []
    for mod in (nb, cy):
        outs = [np.full(s, np.nan) for s in outs_shape]
        status = getattr(mod, fn)(model._kt, _work(model), q, *outs, *args)
        res.append((status, outs))
    return res


@pytest.mark.parametrize("name", ROBOTS + RANDOM)
@pytest.mark.parametrize("fn", ["mass_matrix_state", "inverse_mass_matrix_state"])
def test_gim_and_inverse_match_numba(name, fn):
    model = model_of(name)
    (s0, (a,)), (s1, (b,)) = _both(fn, model, (model.nv, model.nv))
    assert s1 == s0
    if s0 == 0:
        tol = TOL if fn == "mass_matrix_state" else bound(model, name)
        assert rel(b, a) <= tol, f"{fn} on {name}: {rel(b, a):.2e} > {tol:.1e}"
        assert np.array_equal(b, b.T)


@pytest.mark.parametrize("name", ROBOTS + RANDOM)
@pytest.mark.parametrize("module_level", [False, True])
@pytest.mark.parametrize("inverse", [False, True])
def test_block_factors_match_numba(name, module_level, inverse):
    model = model_of(name)
    nv = model.nv
    (s0, (A0, B0)), (s1, (A1, B1)) = _both(
        "block_factors_state", model, (nv, nv), (nv, nv), args=(module_level, inverse)
    )
    assert s1 == s0
    if s0 == 0:
        tol = bound(model, name)
        assert rel(A1, A0) <= tol and rel(B1, B0) <= tol, (rel(A1, A0), rel(B1, B0), tol)


def test_both_branches_of_the_thresholds_are_taken():
    """chain10 and the robots invert by the LTDL of the GIM, chain24 and chain100 by the recursion;
    panda, solo12 and chain10 factor by the block LTDL, talos and chain100 by the recursion."""
    for name, minv_ltdl, factors_ltdl in [
        ("panda", True, True),
        ("solo12", True, True),
        ("talos", True, False),
        ("chain10", True, True),
        ("chain24", False, False),
        ("chain100", False, False),
    ]:
        model = model_of(name)
        ki, nv = model._kt.view(T.INT), model.nv
        lam, depth = np.empty(nv, dtype=np.int64), np.empty(nv, dtype=np.int64)
        gim_ltdl.dof_parents(ki, lam)
        assert (gim_ltdl.minv_work(lam, depth, nv) <= nb.MINV_LTDL_WORK_PER_ENTRY * nv * nv) == minv_ltdl, name
        for level in (False, True):
            assert (gim_ltdl.ltdl_work(ki, nv, level) <= nb.LTDL_MAX_WORK) == factors_ltdl, name


def _geometry_parts(model, work):
    """The parts of the work array that the consumers of a full geometry pass read
    (:class:`denoc_bridge.algorithms.dynamics.Geometry`): the (cos, sin) pairs, E_k and r_k, P_k,
    Psi_k, Ihat_k and Ihat_k^-1 (phitilde and the module accumulators are intermediate results
    of the articulated pass that nothing reads after it)."""
    L, nv = model.n_links, model.nv
    _, g, dof, p, ihat, ihatinv, _, _ = T.regions(L, nv, model.n_modules)
    return np.concatenate(
        [
            work[:L, T.C_CS : T.C_CS + 2].ravel(),
            work[g : g + 2 * L].ravel(),
            work[p : p + nv, :6].ravel(),
            work[dof : dof + nv, T.H_PSI : T.H_PSI + 6].ravel(),
            work[ihat : ihatinv + nv, :6].ravel(),
        ]
    )


@pytest.mark.parametrize("name", ["panda", "talos", "chain24"] + RANDOM[:12])
@pytest.mark.parametrize("factors", [False, True])
def test_geometry_and_factors_match_numba(name, factors):
    model = model_of(name)
    q, v = _q(model), np.random.default_rng(1).standard_normal(model.nv)
    parts, energies, statuses = [], [], []
    for mod in (nb, cy):
        work, energy = _work(model), np.zeros(1)
        work[:] = 0.0
        statuses.append(mod.geometry_and_factors(model._kt, work, q, v, factors, energy))
        parts.append(_geometry_parts(model, work))
        energies.append(energy[0])
    assert statuses[1] == statuses[0]
    assert abs(energies[1] - energies[0]) <= TOL * abs(energies[0])
    assert rel(parts[1], parts[0]) <= bound(model, name)


@pytest.mark.parametrize("name", ["panda", "talos", "solo12"] + RANDOM[:12])
def test_geometry_state_matches_numba(name):
    model = model_of(name)
    q = _q(model)
    works = []
    for mod in (nb, cy):
        work = _work(model)
        work[:] = 0.0
        assert mod.geometry_state(model._kt, work, q) == 0
        works.append(work)
    assert rel(works[1], works[0]) <= TOL


def test_an_empty_work_is_allocated():
    model = model_of("talos")
    q, nv = _q(model), model.nv
    for fn in ("mass_matrix_state", "inverse_mass_matrix_state"):
        a, b = np.empty((nv, nv)), np.empty((nv, nv))
        assert getattr(cy, fn)(model._kt, np.empty((0, T.W)), q, a) == 0
        assert getattr(cy, fn)(model._kt, _work(model), q, b) == 0
        assert np.array_equal(a, b)
    A, B = np.empty((nv, nv)), np.empty((nv, nv))
    assert cy.block_factors_state(model._kt, np.empty((0, T.W)), q, A, B, True, True) == 0
    assert cy.geometry_state(model._kt, np.empty((0, T.W)), q) == -2
    assert cy.geometry_and_factors(model._kt, np.empty((0, T.W)), q, np.zeros(nv), True, np.zeros(1)) == -2


def _singular_panda():
    """Panda with massless fingers: the articulated inertia of a finger joint is singular."""
    panda = db.load_robot("panda")
    mass, inertia = np.array(panda.mass, dtype=float), np.array(panda.inertia, dtype=float)
    fingers = [panda.link_names.index(n) for n in ("panda_leftfinger", "panda_rightfinger")]
    mass[fingers] = 0.0
    inertia[fingers] = 0.0
    return panda.replace(mass=mass, inertia=inertia)


def _bad_cases():
    """(label, model, q, out shape) with a status that is not 0."""
    solo = model_of("solo12")
    panda = model_of("panda")
    nv = panda.nv
    q = _q(panda)
    nan_q = q.copy()
    nan_q[3] = np.nan
    inf_q = q.copy()
    inf_q[0] = np.inf
    zero_quat = _q(solo)
    zero_quat[3:7] = 0.0
    return [
        ("nan", panda, nan_q, (nv, nv)),
        ("inf", panda, inf_q, (nv, nv)),
        ("zero quaternion", solo, zero_quat, (solo.nv, solo.nv)),
        ("short q", panda, q[:-1], (nv, nv)),
        ("long q", panda, np.append(q, 0.0), (nv, nv)),
        ("out rows", panda, q, (nv + 1, nv)),
        ("out columns", panda, q, (nv, nv - 1)),
        ("singular joint", _singular_panda(), q, (nv, nv)),
    ]


@pytest.mark.parametrize("case", range(8))
def test_bad_input_gives_the_statuses_of_numba(case):
    label, model, q, shape = _bad_cases()[case]
    for fn in ("mass_matrix_state", "inverse_mass_matrix_state"):
        s = [getattr(mod, fn)(model._kt, _work(model), q, np.empty(shape)) for mod in (nb, cy)]
        assert s[1] == s[0], (label, fn, s)
    for level in (False, True):
        for inverse in (False, True):
            s = [
                mod.block_factors_state(model._kt, _work(model), q, np.empty(shape), np.empty(shape), level, inverse)
                for mod in (nb, cy)
            ]
            assert s[1] == s[0], (label, level, inverse, s)
    if label == "singular joint":
        assert s[0] > 0


def test_a_wrong_work_shape_is_a_status():
    model = model_of("panda")
    q, nv = _q(model), model.nv
    for work in (np.empty((3, T.W)), np.empty((_work(model).shape[0], T.W + 1))):
        for mod in (nb, cy):
            assert mod.mass_matrix_state(model._kt, work, q, np.empty((nv, nv))) == -2
            assert mod.inverse_mass_matrix_state(model._kt, work, q, np.empty((nv, nv))) == -2
            assert mod.geometry_state(model._kt, work, q) == -2
            assert mod.geometry_and_factors(model._kt, work, q, np.zeros(nv), True, np.zeros(1)) == -2


def _type_errors(model):
    nv = model.nv
    q, kt, work = _q(model), model._kt, _work(model)
    ro = np.empty((nv, nv))
    ro.flags.writeable = False
    return [
        ("q float32", (kt, work, q.astype(np.float32), np.empty((nv, nv)))),
        ("q list", (kt, work, list(q), np.empty((nv, nv)))),
        ("q strided", (kt, work, np.repeat(q, 2)[::2], np.empty((nv, nv)))),
        ("q 2-D", (kt, work, q[None], np.empty((nv, nv)))),
        ("out float32", (kt, work, q, np.empty((nv, nv), dtype=np.float32))),
        ("out Fortran", (kt, work, q, np.asfortranarray(np.empty((nv, nv + 1)))[:, :nv])),
        ("out read-only", (kt, work, q, ro)),
        ("out 1-D", (kt, work, q, np.empty(nv * nv))),
        ("work read-only", (kt, np.asarray(work).copy().view(), q, np.empty((nv, nv)))),
        ("kt int", (kt.view(np.int64), work, q, np.empty((nv, nv)))),
    ]


@pytest.mark.parametrize("case", range(10))
def test_wrong_kinds_of_arrays_raise_type_error(case):
    model = model_of("panda")
    label, args = _type_errors(model)[case]
    if label == "work read-only":
        args[1].flags.writeable = False
    for fn in ("mass_matrix_state", "inverse_mass_matrix_state"):
        with pytest.raises(TypeError):
            getattr(cy, fn)(*args)
    with pytest.raises(TypeError):
        cy.block_factors_state(*args, np.empty((model.nv, model.nv)), False, False)
    with pytest.raises(TypeError):
        cy.block_factors_state(*args[:3], np.empty((model.nv, model.nv)), args[3], False, False)


def test_read_only_inputs_are_accepted():
    model = model_of("panda")
    q, nv = _q(model), model.nv
    q.flags.writeable = False
    out = np.empty((nv, nv))
    kt = model._kt.copy()
    kt.flags.writeable = False
    assert cy.mass_matrix_state(kt, _work(model), q, out) == 0
    assert rel(out, db.mass_matrix(model, q)) <= TOL


def test_finite_matrix():
    a = np.ones((7, 5))
    assert cy.finite_matrix(a) == nb.finite_matrix(a) == 0
    for bad in (np.inf, -np.inf, np.nan):
        for i in (0, 17, 34):
            b = a.copy()
            b.flat[i] = bad
            assert cy.finite_matrix(b) == nb.finite_matrix(b) == -3
    assert cy.finite_matrix(np.empty((0, 3))) == 0
    assert cy.finite_matrix(np.full(3, 1e308)) == 0
    with pytest.raises(TypeError):
        cy.finite_matrix(np.ones((4, 4), dtype=np.float32))
    with pytest.raises(TypeError):
        cy.finite_matrix(np.ones((4, 4))[:, ::2])


def test_geometry_and_factors_statuses_of_numba():
    """Bad velocities, configurations and lengths, and a singular joint, through the geometry
    entry (its v is checked like a state's)."""
    panda, singular = model_of("panda"), _singular_panda()
    q, nv = _q(panda), panda.nv
    nan_v, short_v = np.zeros(nv), np.zeros(nv - 1)
    nan_v[2] = np.nan
    nan_q = q.copy()
    nan_q[0] = np.nan
    for model, qq, v in [
        (panda, q, nan_v),
        (panda, nan_q, np.zeros(nv)),
        (panda, q, short_v),
        (panda, nan_q, short_v),
        (singular, q, np.zeros(nv)),
    ]:
        s = [mod.geometry_and_factors(model._kt, _work(model), qq, v, True, np.zeros(1)) for mod in (nb, cy)]
        assert s[1] == s[0] != 0, s


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the link mass matrices of such chains
@pytest.mark.parametrize("length", [1e100, 1e154, 1e200])
@pytest.mark.parametrize("n", [4, 30])
def test_overflowing_and_degenerate_chains_give_the_statuses_of_numba(length, n):
    """Chains of huge links: a GIM beyond float64 (-3) and articulated inertias lost to round-off
    (k + 1), through both branches of each threshold."""
    model = serial_chain(n, length=length)
    q, nv = _q(model), model.nv
    statuses = []
    for mod in (nb, cy):
        row = [
            getattr(mod, fn)(model._kt, _work(model), q, np.empty((nv, nv)))
            for fn in ("mass_matrix_state", "inverse_mass_matrix_state")
        ]
        for level in (False, True):
            for inverse in (False, True):
                A, B = np.empty((nv, nv)), np.empty((nv, nv))
                row.append(mod.block_factors_state(model._kt, _work(model), q, A, B, level, inverse))
        statuses.append(row)
    assert statuses[1] == statuses[0]
