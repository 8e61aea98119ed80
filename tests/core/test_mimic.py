"""The compiled entries of a model with mimic joints (denoc_bridge/core/mimic.pxi; they replaced
numba's kernels/gim_mimic.py and the entries of kernels/mimic.py, matched to 3.1e-15, the GIM
bit for bit on panda, baxter and pr2): the inverse dynamics and the GIM against the reduced tree's
``G^T ID(G .)`` and ``G^T M G`` (the tree's own entries, reduced in NumPy) and against Pinocchio's
rnea and crba of the mimic model; the inverse GIM against the dense inverse of the GIM; the
statuses of maps, lengths and values that do not fit (nothing read out of bounds) and the
TypeError of arrays of another kind."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pinocchio as pin
import pytest
from conftest import erd_robot_dir

import denoc_bridge as db
from denoc_bridge.constraints.mimic import _entry
from denoc_bridge.core import tree as cy
from tests.constraints.test_mimic import GRIPPER, J, L, R, pin_mimic

#: a chain of continuous mimic joints: (cos, sin) pairs expanded from atan2 of the mimicked pair
CONTINUOUS = R(
    L("a"), L("b"), L("c"),
    J("j1", "w", "a", "continuous"),
    J("j2", "a", "b", "continuous", mimic=("j1", -1.5, 0.2)),
    J("j3", "b", "c", "continuous", mimic=("j2", 0.5, 0.0), axis="1 0 0"),
)  # fmt: skip
ROBOTS = {
    "panda": ("panda_description/urdf/panda.urdf", False),
    "pr2": ("pr2_description/urdf/pr2.urdf", True),
}


def model_of(name: str) -> db.MimicModel:
    if name == "gripper":
        return db.load_urdf(GRIPPER, mimic=True)
    if name == "gripper-floating":
        return db.load_urdf(GRIPPER, floating_base=True, mimic=True)
    if name == "continuous":
        return db.load_urdf(CONTINUOUS, mimic=True)
    rel, floating = ROBOTS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return db.load_urdf(os.path.join(erd_robot_dir(), rel), floating_base=floating, mimic=True)


@pytest.mark.parametrize("name", ["gripper", "gripper-floating", "continuous", "panda", "pr2"])
def test_inverse_dynamics_and_gim_are_the_reduced_trees(name):
    mm = model_of(name)
    kt, work, im, fm, nqf, _ = _entry(mm, None)
    pm = pin_mimic(GRIPPER, name.endswith("floating")) if name.startswith("gripper") else None
    rng = np.random.default_rng(4)
    for _ in range(4):
        q = db.random_configuration(mm, rng)
        v, a = rng.standard_normal(mm.nv), rng.standard_normal(mm.nv)
        tau, M = np.full(mm.nv, 7.0), np.full((mm.nv, mm.nv), 7.0)
        assert cy.mimic_inverse_dynamics(kt, work, im, fm, nqf, q, v, a, tau) == 0
        assert cy.mimic_mass_matrix(kt, work, im, fm, nqf, q, M) == 0
        qf, vf, af = mm.expand(q, v, a)
        tau_ref = mm.reduce_forces(db.inverse_dynamics(mm.tree, qf, vf, af))
        M_ref = mm.reduce_forces(mm.reduce_forces(db.mass_matrix(mm.tree, qf), axis=0), axis=1)
        assert np.abs(tau - tau_ref).max() <= 1e-13 * max(1.0, np.abs(tau_ref).max())
        assert np.abs(M - M_ref).max() <= 1e-13 * np.abs(M_ref).max()
        if pm is not None:
            pd = pm.createData()
            assert np.abs(tau - pin.rnea(pm, pd, q, v, a)).max() <= 1e-12 * max(1.0, np.abs(tau).max())
            assert np.abs(M - pin.crba(pm, pd, q)).max() <= 1e-12 * np.abs(M).max()
        assert np.array_equal(db.inverse_dynamics(mm, q, v, a), tau) and np.array_equal(db.mass_matrix(mm, q), M)


def call(mm: db.MimicModel, q: np.ndarray, **change) -> tuple[int, np.ndarray]:
    kt, work, im, fm, nqf, _ = _entry(mm, None)
    args = dict(kt=kt, work=work, imap=im, fmap=fm, nqf=nqf, qr=q, out=np.full((mm.nv, mm.nv), 7.0))
    args.update(change)
    status = cy.mimic_inverse_mass_matrix(*args.values())
    return status, args["out"]


@pytest.mark.parametrize("name", ["gripper", "gripper-floating", "continuous", "panda", "pr2"])
def test_it_inverts_the_reduced_gim(name):
    mm = model_of(name)
    assert mm.n_constraints > 0
    rng = np.random.default_rng(3)
    for _ in range(4):
        q = db.random_configuration(mm, rng)
        status, got = call(mm, q)
        want = np.linalg.inv(db.mass_matrix(mm, q))
        assert status == 0
        assert np.abs(got - want).max() <= 1e-11 * np.abs(want).max()
        assert np.array_equal(got, got.T)
        assert np.array_equal(db.inverse_mass_matrix(mm, q), got)  # the public call takes it
        _, without_work = call(mm, q, work=np.zeros((0, 8)))  # an empty work: its own
        assert np.array_equal(without_work, got)


def test_maps_lengths_and_values_that_do_not_fit_get_a_status():
    mm = model_of("gripper-floating")
    kt, work, im, fm, nqf, _ = _entry(mm, None)
    q = db.random_configuration(mm, np.random.default_rng(0))
    nq, nv, nc = im[0], im[1], im[2]
    o = 4 + nq + nv  # s_q, m_q, s_v, m_v, circ, col
    bad_maps = []
    for at, value in [(0, nq + 1), (2, -1), (3, im[3] + 1), (4, nqf), (4 + nq, mm.tree.nv), (o, nqf),
                      (o + nc, -1), (o + 2 * nc, mm.tree.nv), (o + 3 * nc, -3)]:  # fmt: skip
        changed = im.copy()
        changed[at] = value
        bad_maps.append(changed)
    for changed in [*bad_maps, im[:-1].copy()]:
        status, out = call(mm, q, imap=changed)
        assert status == -2 and np.all(out == 7.0), changed
    for changed in bad_maps[:3]:  # the inverse dynamics and the GIM take the same maps
        v = np.zeros(mm.nv)
        assert cy.mimic_inverse_dynamics(kt, work, changed, fm, nqf, q, v, v, np.zeros(mm.nv)) == -2
        assert cy.mimic_mass_matrix(kt, work, changed, fm, nqf, q, np.zeros((mm.nv, mm.nv))) == -2
    v, bad_v = np.zeros(mm.nv), np.zeros(mm.nv)
    bad_v[2] = np.inf
    for vr, ar, status in [(v[:-1].copy(), v, -2), (v, v[:-1].copy(), -2), (bad_v, v, -1), (v, bad_v, -1)]:
        assert cy.mimic_inverse_dynamics(kt, work, im, fm, nqf, q, vr, ar, np.zeros(mm.nv)) == status
    assert cy.mimic_inverse_dynamics(kt, work, im, fm, nqf, q, v, v, np.zeros(mm.nv + 1)) == -2
    for change in [dict(fmap=fm[:-1].copy()), dict(nqf=nqf + 1), dict(qr=q[:-1].copy()),
                   dict(out=np.zeros((mm.nv, mm.nv + 1))), dict(work=np.zeros((3, 8))), dict(kt=kt[:, :-2].copy())]:  # fmt: skip
        status, _ = call(mm, q, **change)
        assert status == -2, change
    nan, zero_quaternion = q.copy(), q.copy()
    nan[5] = np.nan
    zero_quaternion[3:7] = 0.0
    for bad in (nan, zero_quaternion):
        assert call(mm, bad)[0] == -1


def test_dependent_mimic_rows_are_refused():
    """Two equal mimic rows: K M^-1 K^T is singular, -4 (the Python layer then solves densely)."""
    mm = model_of("gripper")
    kt, work, im, fm, nqf, _ = _entry(mm, None)
    nq, nv, nc = im[0], im[1], im[2]
    o = 4 + nq + nv
    im2, fm2 = im.copy(), fm.copy()
    for block in range(5):  # s_q, m_q, s_v, m_v, circ: row 1 := row 0
        im2[o + block * nc + 1] = im2[o + block * nc]
    fm2[1], fm2[nc + 1] = fm2[0], fm2[nc]
    q = db.random_configuration(mm, np.random.default_rng(1))
    assert call(mm, q, imap=im2, fmap=fm2)[0] == -4


def test_arrays_of_another_kind_raise_type_errors():
    mm = model_of("gripper")
    kt, work, im, fm, nqf, _ = _entry(mm, None)
    q = db.random_configuration(mm, np.random.default_rng(0))
    frozen = np.zeros((mm.nv, mm.nv))
    frozen.flags.writeable = False
    for change, culprit in [(dict(imap=im.astype(np.int32)), "imap"), (dict(fmap=list(fm)), "fmap"),
                            (dict(qr=q.astype(np.float32)), "qr"), (dict(out=frozen), "out")]:  # fmt: skip
        with pytest.raises(TypeError, match=culprit):
            call(mm, q, **change)


def forward(mm, q, v, tau, fext=None, springs=False, /, **change):
    """(status, a_r) of the compiled forward dynamics entry (``change`` replaces arguments)."""
    kt, work, im, fm, nqf, reach = _entry(mm, None)
    tree = mm.tree
    rng = np.random.default_rng(9)
    K, D = (rng.uniform(0.5, 2.0, tree.nv) for _ in range(2)) if springs else (np.zeros(0), np.zeros(0))
    q_rest = db.random_configuration(tree, rng) if springs else np.zeros(0)
    args = dict(kt=kt, work=work, imap=im, fmap=fm, nqf=nqf, reach=reach, qr=q, vr=v, tau=tau,
                fext=np.zeros((0, 6)) if fext is None else fext, K=K, D=D, q_rest=q_rest, passive=springs,
                out=np.full(mm.nv, 7.0))  # fmt: skip
    args.update(change)
    return cy.mimic_forward_dynamics(*args.values()), args


@pytest.mark.parametrize("name", ["gripper", "gripper-floating", "continuous", "panda", "pr2"])
def test_forward_dynamics_is_the_dense_solve(name):
    """a_r against the dense solve M_r a_r = tau_r + G^T (tau_p - h(q_full, G v) + J^T f) (the
    reduced tree's GIM and bias from its own entries), with external wrenches and the tree's
    springs and dampers (numba's mimic_accelerations, which the runs called, gave the same to
    1e-13 before it went)."""
    from denoc_bridge.multibody.inputs import pin_to_internal

    mm = model_of(name)
    tree = mm.tree
    rng = np.random.default_rng(5)
    for trial in range(4):
        q = db.random_configuration(mm, rng)
        v, tau = rng.standard_normal(mm.nv), rng.standard_normal(mm.nv)
        f_pin = rng.standard_normal((tree.n_links, 6)) if trial % 2 else np.zeros((tree.n_links, 6))
        springs = trial >= 2
        status, args = forward(mm, q, v, tau, pin_to_internal(f_pin), springs)
        assert status == 0
        a = args["out"]
        qf, vf = mm.expand(q, v)
        tp = np.zeros(tree.nv)
        if springs:
            tp = -args["K"] * db.difference(tree, args["q_rest"], qf) - args["D"] * vf
        M_r = db.mass_matrix(mm, q)
        h_r = mm.reduce_forces(db.inverse_dynamics(tree, qf, vf, np.zeros(tree.nv), f_pin) - tp)
        want = np.linalg.solve(M_r, tau - h_r)
        assert np.abs(a - want).max() <= 1e-11 * max(1.0, np.abs(want).max()), (trial, np.abs(a - want).max())
    assert np.array_equal(db.forward_dynamics(mm, q, v, tau), forward(mm, q, v, tau)[1]["out"])


def test_forward_dynamics_refuses_what_does_not_fit():
    mm = model_of("gripper-floating")
    kt, work, im, fm, nqf, reach = _entry(mm, None)
    rng = np.random.default_rng(2)
    q = db.random_configuration(mm, rng)
    v, tau = rng.standard_normal(mm.nv), rng.standard_normal(mm.nv)
    L, nvf = mm.tree.n_links, mm.tree.nv
    nan_v, zero_quaternion, nan_f = v.copy(), q.copy(), np.zeros((L, 6))
    nan_v[1], nan_f[2, 3] = np.nan, np.inf
    zero_quaternion[3:7] = 0.0
    for change, status in [
        (dict(vr=v[:-1].copy()), -2), (dict(tau=np.append(tau, 0.0)), -2), (dict(out=np.zeros(mm.nv + 1)), -2),
        (dict(reach=L + 1), -2), (dict(reach=-1), -2), (dict(fext=np.zeros((L - 1, 6))), -2),
        (dict(fext=np.zeros((L, 5))), -2), (dict(imap=im[:-1].copy()), -2), (dict(work=np.zeros((3, 8))), -2),
        (dict(passive=True, K=np.ones(nvf - 1), D=np.ones(nvf), q_rest=np.zeros(mm.tree.nq)), -2),
        (dict(passive=True, K=np.ones(nvf), D=np.ones(nvf), q_rest=np.zeros(mm.tree.nq + 1)), -2),
        (dict(vr=nan_v), -1), (dict(tau=nan_v), -1), (dict(qr=zero_quaternion), -1), (dict(fext=nan_f), -1),
    ]:  # fmt: skip
        got, args = forward(mm, q, v, tau, **change)
        assert got == status and ("out" in change or np.all(args["out"] == 7.0)), (change, got)
    g = model_of("gripper")  # two equal mimic rows: K M^-1 K^T singular
    kt, work, im, fm, nqf, reach = _entry(g, None)
    im2, fm2 = im.copy(), fm.copy()
    nq, nv, nc = im[0], im[1], im[2]
    o = 4 + nq + nv
    for block in range(5):
        im2[o + block * nc + 1] = im2[o + block * nc]
    fm2[1], fm2[nc + 1] = fm2[0], fm2[nc]
    qg = db.random_configuration(g, rng)
    assert forward(g, qg, np.zeros(g.nv), np.zeros(g.nv), imap=im2, fmap=fm2)[0] == -1
    with pytest.raises(TypeError, match="fext"):
        forward(mm, q, v, tau, fext=np.zeros((L, 6), dtype=np.float32))
    with pytest.raises(TypeError, match="tau"):
        forward(mm, q, v, list(tau))
