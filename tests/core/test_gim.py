"""The compiled GIM family (denoc_bridge/core/gim*.pxi), in one process, on the same model table and
work layout:

* the GIM and its inverse (both branches of MINV_LTDL_WORK_PER_ENTRY) against Pinocchio's
  ``crba`` and ``computeMinverse``;
* the block factors (both ways: the LTDL of the GIM and the recursion on the articulated masses,
  link and module level, U D U^T and the inverses) by their identities (``U D U^T = I``,
  ``U^-T D^-1 U^-1 = I^-1``, ``U^-1 U = 1``, the block structure of the partition, which makes
  the factors unique) and the explicit module factors of the papers (algorithms/reference.py);
* the geometry entries against Pinocchio (link placements, twists, kinetic energy) and the
  articulated factors against the explicit articulated-link quantities (000 eqs. 19-21 with
  every link its own module) and the link-level factors;
* statuses and TypeErrors on bad input.

numba's GIM entries, block factors, geometry entries and articulated factors are gone (issue 48);
their values and statuses were compared with these, in one process, before they went: the
statuses asserted below are the ones they gave."""

from __future__ import annotations

import copy

import numpy as np
import pinocchio as pin
import pytest

import denoc_bridge as db
from denoc_bridge.algorithms import reference as ref
from denoc_bridge.algorithms.dynamics import Geometry
from denoc_bridge.core import layout as T
from denoc_bridge.io.robots import serial_chain
from denoc_bridge.multibody.modules import Module
from denoc_bridge.testing import ALL_JOINT_TYPES, random_model

cy = pytest.importorskip("denoc_bridge.core.tree")

#: relative difference max|a - b| / max|b| allowed between two computations of one well-conditioned
#: quantity
TOL = 1e-13


def cond_bound(M):
    """The bound of two ways to the factors of the GIM ``M`` and of their identities: the
    round-off its condition number carries, cond(I) eps (measured: at most 0.22 cond(I) eps on
    every model here, the LTDL of the GIM against the recursion, link and module level), and
    TOL on well-conditioned GIMs."""
    return max(TOL, np.linalg.cond(M) * np.finfo(float).eps)


def symmetric(upper):
    """The full matrix of Pinocchio's upper triangle."""
    return np.triu(upper) + np.triu(upper, 1).T


def gim(model, q):
    """The GIM by Pinocchio's ``crba``."""
    pm, pd = pinocchio_of(model)
    return symmetric(pin.crba(pm, pd, q))


def inverse_gim(model, q):
    """The inverse GIM by Pinocchio's ``computeMinverse``."""
    pm, pd = pinocchio_of(model)
    return symmetric(pin.computeMinverse(pm, pd, q))


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


@pytest.mark.parametrize("name", ROBOTS + RANDOM)
@pytest.mark.parametrize("fn", ["mass_matrix_state", "inverse_mass_matrix_state"])
def test_gim_and_inverse_match_pinocchio(name, fn):
    """The GIM to 1e-14 (measured: at most 1.0e-15 on every model here); the inverse to the
    round-off its condition number carries, cond(I) eps (random inertias, massless links: GIMs
    of condition numbers up to 1e5; measured: at most 0.17 cond(I) eps)."""
    model = model_of(name)
    q, nv = _q(model), model.nv
    out = np.full((nv, nv), np.nan)
    assert getattr(cy, fn)(model._kt, _work(model), q, out) == 0
    M = gim(model, q)
    theirs, tol = (M, 1e-14) if fn == "mass_matrix_state" else (inverse_gim(model, q), cond_bound(M))
    assert rel(out, theirs) <= tol, f"{fn} on {name}: {rel(out, theirs):.2e} > {tol:.1e}"
    assert np.array_equal(out, out.T)


CHOSEN, LTDL, RECURSION, LTDL_REFUSED = 0, 1, 2, -4  # the entries' ``way`` hook, and the LTDL's refusal


def groups(model, module_level):
    """The group (link or module) of each column, and each group's parent group."""
    if module_level:
        mods = model.modules
        group = np.empty(model.nv, dtype=int)
        for g, m in enumerate(mods):
            group[m.v_slice] = g
        return group, [m.parent for m in mods]
    group = np.repeat(np.arange(model.n_links), model.nv_joint)
    return group, list(model.parent)


def structure(model, module_level):
    """(U may be non-zero, D may be non-zero) masks of the partition: U unit block upper
    triangular with blocks (r, c) only where the group of r is the group of c or an ancestor of
    it, D block diagonal."""
    group, parent = groups(model, module_level)
    anc = np.zeros((len(parent), len(parent)), dtype=bool)  # anc[a, g]: a is g or an ancestor of g
    for g in range(len(parent)):
        a = g
        while a >= 0:
            anc[a, g] = True
            a = parent[a]
    return anc[np.ix_(group, group)], group[:, None] == group[None, :]


def block_factors(model, q, module_level, inverse, way):
    nv = model.nv
    A, B = np.full((nv, nv), np.nan), np.full((nv, nv), np.nan)
    status = cy.block_factors_state(model._kt, _work(model), q, A, B, module_level, inverse, way)
    return status, A, B


def check_structure(model, module_level, A, B):
    """Exact zeros outside the partition's pattern, unit diagonal blocks of U, symmetric D."""
    u_mask, d_mask = structure(model, module_level)
    assert not np.any(A[~u_mask]) and not np.any(B[~d_mask])
    assert np.array_equal(A[d_mask], np.eye(model.nv)[d_mask])
    assert np.array_equal(B, B.T)


@pytest.mark.parametrize("name", ROBOTS + RANDOM)
@pytest.mark.parametrize("module_level", [False, True])
def test_block_factors_satisfy_their_identities(name, module_level):
    """Both ways and the chosen one: U D U^T = I (Pinocchio's ``crba``), U^-T D^-1 U^-1 = I^-1
    (Pinocchio's ``computeMinverse``), U^-1 U = 1 and D^-1 D = 1, in the block pattern of the
    partition; the LTDL's factors are the recursion's (the factors are unique) and the chosen
    way's are one of them bit for bit."""
    model = model_of(name)
    q, nv = _q(model), model.nv
    M, Minv = gim(model, q), inverse_gim(model, q)
    tol = cond_bound(M)
    got = {}
    for inverse in (False, True):
        for way in (RECURSION, LTDL, CHOSEN):
            status, A, B = block_factors(model, q, module_level, inverse, way)
            if way == LTDL and status == LTDL_REFUSED:
                continue
            assert status == 0, (inverse, way, status)
            check_structure(model, module_level, A, B)
            got[inverse, way] = A, B
            if inverse:
                assert rel(A.T @ B @ A, Minv) <= tol, ("U^-T D^-1 U^-1", way, rel(A.T @ B @ A, Minv), tol)
            else:
                assert rel(A @ B @ A.T, M) <= tol, ("U D U^T", way, rel(A @ B @ A.T, M), tol)
        U, D = got[False, RECURSION]
        if inverse:
            Uinv, Dinv = got[True, RECURSION]
            assert rel(Uinv @ U, np.eye(nv)) <= tol and rel(Dinv @ D, np.eye(nv)) <= tol
        if (inverse, LTDL) in got:
            for x, y in zip(got[inverse, LTDL], got[inverse, RECURSION]):
                assert rel(x, y) <= tol, ("LTDL vs recursion", inverse, rel(x, y), tol)
        chosen = LTDL if (inverse, LTDL) in got and cy.factors_take_ltdl(model._kt, module_level) else RECURSION
        for x, y in zip(got[inverse, CHOSEN], got[inverse, chosen]):
            assert np.array_equal(x, y)


@pytest.mark.parametrize("name", ["panda", "solo12", "talos", "chain10"] + RANDOM[:12])
def test_module_factors_are_the_explicit_ones(name):
    """Module level against the block formulas of 000 eqs. 18-21 and the block inverse of 002
    eqs. A.13-A.18 on the explicit DeNOC matrices (algorithms/reference.py)."""
    model = model_of(name)
    q = _q(model)
    tol = cond_bound(gim(model, q))
    for inverse, explicit in ((False, ref.module_factors), (True, ref.module_factors_inverse)):
        status, A, B = block_factors(model, q, True, inverse, CHOSEN)
        assert status == 0
        U, D = explicit(model, q)
        assert rel(A, U) <= tol and rel(B, D) <= tol, (inverse, rel(A, U), rel(B, D), tol)


def test_the_identity_checks_can_fail():
    """A factor with one entry moved is caught by the checks above."""
    model = model_of("panda")
    q = _q(model)
    M = gim(model, q)
    _, A, B = block_factors(model, q, False, False, CHOSEN)
    A[0, 3] *= 1 + 1e-11
    assert rel(A @ B @ A.T, M) > cond_bound(M)
    _, A, B = block_factors(model, q, False, False, CHOSEN)
    A[3, 0] = 1e-300  # below the diagonal
    with pytest.raises(AssertionError):
        check_structure(model, False, A, B)


def test_both_branches_of_the_thresholds_are_taken():
    """chain10 and the robots invert by the LTDL of the GIM, chain24 and chain100 by the recursion
    (the choice of numba's deleted inverse GIM, its work count against MINV_LTDL_WORK_PER_ENTRY);
    panda, solo12 and chain10 factor by the block LTDL, talos and chain100 by the recursion (the
    choice of numba's deleted block factors, the same counts and LTDL_MAX_WORK = 1500); both
    measured before they went."""
    for name, minv_ltdl, factors_ltdl in [
        ("panda", True, True),
        ("solo12", True, True),
        ("talos", True, False),
        ("chain10", True, True),
        ("chain24", False, False),
        ("chain100", False, False),
    ]:
        model = model_of(name)
        assert cy.inverse_takes_ltdl(model._kt) == minv_ltdl, name
        for level in (False, True):
            assert cy.factors_take_ltdl(model._kt, level) == factors_ltdl, name


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


def pinocchio_of(model):
    """Pinocchio's model and data, or None if its joints are not one per link (every model here
    has one, checked)."""
    pm = db.to_pinocchio(model)
    assert pm.njoints == model.n_links + 1
    return pm, pm.createData()


def placements_and_twists(model, geo, v):
    """World placements (R_k, o_k) and link-frame twists [v_k; w_k] (Pinocchio's ``LOCAL``
    layout) from E_k, r_k (link k's origin in its parent's frame; E_k turns the parent's
    coordinates into link k's) and P_k's rows, by the forward recursion of 000 eq. 5."""
    L = model.n_links
    R, o, t = np.zeros((L, 3, 3)), np.zeros((L, 3)), np.zeros((L, 6))
    for k in range(L):
        b = model.parent[k]
        Rb, ob = (np.eye(3), np.zeros(3)) if b < 0 else (R[b], o[b])
        wb, vb = (np.zeros(3), np.zeros(3)) if b < 0 else (t[b, 3:], t[b, :3])
        E, r = geo.E[k], geo.r[k]
        R[k], o[k] = Rb @ E.T, ob + Rb @ r
        v0, z = model.idx_v[k], model.nv_joint[k]
        Pk, vk = geo.P[v0 : v0 + z], v[v0 : v0 + z]
        t[k, 3:] = E @ wb + Pk[:, :3].T @ vk
        t[k, :3] = E @ (vb + np.cross(wb, r)) + Pk[:, 3:].T @ vk
    return R, o, t


def check_against_pinocchio(model, geo, q, v):
    """E_k, r_k and P_k of ``geo`` place the links and move them as Pinocchio does."""
    pm, pd = pinocchio_of(model)
    pin.forwardKinematics(pm, pd, q, v)
    R, o, t = placements_and_twists(model, geo, v)
    for k in range(model.n_links):
        M = pd.oMi[k + 1]
        assert np.abs(R[k] - M.rotation).max() <= 1e-13, k
        assert np.abs(o[k] - M.translation).max() <= 1e-13 * max(1.0, np.abs(M.translation).max()), k
        tw = np.r_[pd.v[k + 1].linear, pd.v[k + 1].angular]
        assert np.abs(t[k] - tw).max() <= 1e-12 * max(1.0, np.abs(tw).max()), k


GEOMETRY_MODELS = ["panda", "talos", "solo12", "chain24"] + RANDOM[:12]


def articulated_links(model, q):
    """(Psi_k (6 x n_k, world frame), Ihat_k) of every link k: 000 eqs. (19)-(21) on the
    explicit matrices (algorithms/reference.py) with every link its own module, the partition of
    the link-level factors of 001 (A.3)-(A.7) (a copy of ``model`` whose modules are its links)."""
    links = copy.copy(model)
    links._modules = tuple(
        Module(
            index=k,
            parent=int(model.parent[k]),
            links=range(k, k + 1),
            link_names=model.link_names[k : k + 1],
            joint_names=model.joint_names[k : k + 1],
            children=tuple(int(c) for c in np.flatnonzero(np.asarray(model.parent) == k)),
            v_start=int(model.idx_v[k]),
            nv=int(model.nv_joint[k]),
        )
        for k in range(model.n_links)
    )
    blocks = ref._module_blocks(links, q)
    return blocks.Psi, blocks.Ihat


@pytest.mark.parametrize("name", GEOMETRY_MODELS)
@pytest.mark.parametrize("factors", [False, True])
def test_geometry_and_factors_against_pinocchio(name, factors):
    """The geometry (E_k, r_k, P_k) and the kinetic energy against Pinocchio; with ``factors``,
    Psi_k, Ihat_k and Ihat_k^-1 against the explicit articulated-link quantities
    (:func:`articulated_links`) and Ihat_k, Ihat_k^-1 against the diagonal blocks of the
    link-level D and D^-1 (tested above by their identities)."""
    model = model_of(name)
    q, v = _q(model), np.random.default_rng(1).standard_normal(model.nv)
    work, energy = _work(model), np.zeros(1)
    work[:] = 0.0
    status = cy.geometry_and_factors(model._kt, work, q, v, factors, energy)
    assert status == 0
    geo = Geometry(model, work, float(energy[0]))
    check_against_pinocchio(model, geo, q, v)
    pm, pd = pinocchio_of(model)
    pin.crba(pm, pd, q)  # computeKineticEnergy reads the placements and twists of forwardKinematics
    pin.forwardKinematics(pm, pd, q, v)
    kinetic = pin.computeKineticEnergy(pm, pd)
    assert abs(geo.energy - kinetic) <= 1e-12 * abs(kinetic), (geo.energy, kinetic)
    if not factors:
        return
    R, _, _ = placements_and_twists(model, geo, v)
    Psi, Ihat = articulated_links(model, q)
    tol = cond_bound(gim(model, q))
    for k in range(model.n_links):
        v0, z = model.idx_v[k], model.nv_joint[k]
        Rk = np.kron(np.eye(2), R[k])  # link frame -> world frame, both halves
        parts = (
            ("Psi", Rk @ geo.Psi[v0 : v0 + z].T, Psi[k]),
            ("Ihat", geo.Ihat[v0 : v0 + z, :z], Ihat[k]),
            ("IhatInv", geo.IhatInv[v0 : v0 + z, :z], np.linalg.inv(Ihat[k])),
        )
        for part, ours, theirs in parts:
            assert rel(ours, theirs) <= max(tol, 1e-12), (part, k, rel(ours, theirs), tol)
    for inverse, part in ((False, geo.Ihat), (True, geo.IhatInv)):
        st, _, B = block_factors(model, q, False, inverse, CHOSEN)
        assert st == 0
        for k in range(model.n_links):
            v0, z = model.idx_v[k], model.nv_joint[k]
            assert rel(part[v0 : v0 + z, :z], B[v0 : v0 + z, v0 : v0 + z]) <= max(tol, 1e-12), (inverse, k)


@pytest.mark.parametrize("name", GEOMETRY_MODELS)
def test_geometry_state_against_pinocchio(name):
    """The lean geometry pass: placements and twists (through P_k) as Pinocchio's, and the same
    E_k, r_k and P_k as the full pass of geometry_and_factors."""
    model = model_of(name)
    q, v = _q(model), np.random.default_rng(2).standard_normal(model.nv)
    work = _work(model)
    work[:] = 0.0
    assert cy.geometry_state(model._kt, work, q) == 0
    geo = Geometry(model, work, 0.0)
    check_against_pinocchio(model, geo, q, v)
    full = _work(model)
    assert cy.geometry_and_factors(model._kt, full, q, v, False, np.zeros(1)) == 0
    other = Geometry(model, full, 0.0)
    for part in ("E", "r", "P"):
        assert np.array_equal(getattr(geo, part), getattr(other, part)), part


def test_the_pinocchio_checks_can_fail():
    """A placement, a P_k row or a velocity moved by a little is caught."""
    model = model_of("panda")
    q, v = _q(model), np.random.default_rng(2).standard_normal(model.nv)
    work = _work(model)
    assert cy.geometry_state(model._kt, work, q) == 0
    for part, index in (("r", (3, 1)), ("P", (4, 2)), ("E", (2, 0, 1))):
        geo = Geometry(model, work, 0.0)
        getattr(geo, part)[index] += 1e-9
        with pytest.raises(AssertionError):
            check_against_pinocchio(model, geo, q, v)


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
    fingers = [panda.link_names.index(n) for n in FINGERS]
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


STATE_ENTRIES = ("mass_matrix_state", "inverse_mass_matrix_state")
FINGERS = ("panda_leftfinger", "panda_rightfinger")
#: the status of each bad input but the singular joint (numba's deleted entries gave these)
BAD_INPUT = {
    "nan": -1,
    "inf": -1,
    "zero quaternion": -1,
    "short q": -2,
    "long q": -2,
    "out rows": -2,
    "out columns": -2,
}


@pytest.mark.parametrize("case", range(8))
def test_bad_input_gives_the_statuses_of_numba(case):
    """The GIM and its inverse give the statuses of numba's deleted entries: -1 a value, -2 a
    length; a singular articulated inertia is no obstacle to the GIM (0) and named by the inverse
    (k + 1, a finger); the block factors, every level and way, give those of the inverse GIM (the
    same checks, the same articulated pass: numba's deleted block factors gave exactly these)."""
    label, model, q, shape = _bad_cases()[case]
    statuses = [getattr(cy, fn)(model._kt, _work(model), q, np.empty(shape)) for fn in STATE_ENTRIES]
    if label == "singular joint":
        assert statuses[0] == 0 and model.link_names[statuses[1] - 1] in FINGERS, statuses
    else:
        assert statuses == [BAD_INPUT[label]] * 2, (label, statuses)
    expected = statuses[1]
    for level in (False, True):
        for inverse in (False, True):
            for way in (CHOSEN, RECURSION):
                got = cy.block_factors_state(
                    model._kt, _work(model), q, np.empty(shape), np.empty(shape), level, inverse, way
                )
                assert got == expected, (label, level, inverse, way, got, expected)


def test_a_wrong_work_shape_is_a_status():
    model = model_of("panda")
    q, nv = _q(model), model.nv
    for work in (np.empty((3, T.W)), np.empty((_work(model).shape[0], T.W + 1))):
        for fn in STATE_ENTRIES:
            assert getattr(cy, fn)(model._kt, work, q, np.empty((nv, nv))) == -2
        assert cy.geometry_state(model._kt, work, q) == -2
        assert cy.geometry_and_factors(model._kt, work, q, np.zeros(nv), True, np.zeros(1)) == -2
        A, B = np.empty((nv, nv)), np.empty((nv, nv))
        assert cy.block_factors_state(model._kt, work, q, A, B, True, True) == -2


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
    assert cy.finite_matrix(a) == 0
    for bad in (np.inf, -np.inf, np.nan):
        for i in (0, 17, 34):
            b = a.copy()
            b.flat[i] = bad
            assert cy.finite_matrix(b) == -3
    assert cy.finite_matrix(np.empty((0, 3))) == 0
    assert cy.finite_matrix(np.full(3, 1e308)) == 0
    with pytest.raises(TypeError):
        cy.finite_matrix(np.ones((4, 4), dtype=np.float32))
    with pytest.raises(TypeError):
        cy.finite_matrix(np.ones((4, 4))[:, ::2])


def test_geometry_and_factors_statuses_of_numba():
    """Bad velocities, configurations and lengths, and a singular joint, through the geometry
    entry (its v is checked like a state's, the lengths first): -1, -1, -2, -2 and the joint
    that the inverse GIM names (numba's deleted geometry entry gave exactly these)."""
    panda, singular = model_of("panda"), _singular_panda()
    q, nv = _q(panda), panda.nv
    nan_v, short_v = np.zeros(nv), np.zeros(nv - 1)
    nan_v[2] = np.nan
    nan_q = q.copy()
    nan_q[0] = np.nan
    named = cy.inverse_mass_matrix_state(singular._kt, _work(singular), q, np.empty((nv, nv)))
    assert singular.link_names[named - 1] in FINGERS
    for model, qq, v, expected in [
        (panda, q, nan_v, -1),
        (panda, nan_q, np.zeros(nv), -1),
        (panda, q, short_v, -2),
        (panda, nan_q, short_v, -2),
        (singular, q, np.zeros(nv), named),
    ]:
        s = cy.geometry_and_factors(model._kt, _work(model), qq, v, True, np.zeros(1))
        assert s == expected, (s, expected)


#: (GIM, inverse GIM) statuses of chains of n links of the given length: -3 a GIM beyond float64,
#: k + 1 an articulated inertia lost to round-off (numba's deleted entries gave these)
HUGE_CHAINS = {
    (4, 1e100): (0, 0),
    (4, 1e154): (-3, 2),
    (4, 1e200): (-3, 4),
    (30, 1e100): (0, 28),
    (30, 1e154): (-3, 28),
    (30, 1e200): (-3, 30),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the link mass matrices of such chains
@pytest.mark.parametrize("length", [1e100, 1e154, 1e200])
@pytest.mark.parametrize("n", [4, 30])
def test_overflowing_and_degenerate_chains_give_the_statuses_of_numba(length, n):
    """Chains of huge links: a GIM beyond float64 (-3) and articulated inertias lost to round-off
    (k + 1), through both branches of each threshold: the GIM and its inverse give the statuses
    of numba's deleted entries, the block factors those of the inverse GIM (as numba's deleted
    block factors did on every one of these chains, compared before they went)."""
    model = serial_chain(n, length=length)
    q, nv = _q(model), model.nv
    statuses = tuple(getattr(cy, fn)(model._kt, _work(model), q, np.empty((nv, nv))) for fn in STATE_ENTRIES)
    assert statuses == HUGE_CHAINS[n, length]
    for level in (False, True):
        for inverse in (False, True):
            A, B = np.empty((nv, nv)), np.empty((nv, nv))
            got = cy.block_factors_state(model._kt, _work(model), q, A, B, level, inverse)
            assert got == statuses[1], (level, inverse, got, statuses)
