"""The compiled kinematics (denoc_bridge/core/kinematics.pxi: placements of the link frames, the
links' twists, sums over subtrees) against the readable reference (algorithms/reference.py),
sums by hand and Pinocchio's forwardKinematics; lengths, tables and values that do not fit (a status,
nothing read out of bounds) and the TypeError of arguments the entries must not take."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import denoc_bridge as db
from denoc_bridge.algorithms.reference import denoc_matrices, world_kinematics
from denoc_bridge.core import tree as ct
from denoc_bridge.core.layout import INT, NMOD, PARENT, W, work_rows
from tests.core.models import MODELS, model_of


def work_of(model: db.Model) -> np.ndarray:
    S = model._kt.view(INT)[0, NMOD] if model.n_links else 0
    return np.zeros((work_rows(model.n_links, model.nv, S), W))


def rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max())) if a.size else 0.0


def compiled(model: db.Model, q: np.ndarray, v: np.ndarray):
    L = model.n_links
    R, p, t = np.full((L, 3, 3), np.nan), np.full((L, 3), np.nan), np.full((L, 6), np.nan)
    assert ct.placements_state(model._kt, work_of(model), q, R, p) == 0
    assert ct.twists_state(model._kt, work_of(model), q, v, t) == 0
    return R, p, t


@pytest.mark.parametrize("name", MODELS)
def test_kinematics_match_the_reference(name):
    """The readable NumPy oracle (algorithms/reference.py; numba's kernels are deleted, their
    values matched within 7.4e-16): R_k, o_k of world_kinematics, and the twists of 000 (9),
    t = N_l N_d qd in the inertial frame, turned into each link's frame."""
    model = model_of(name)
    rng = np.random.default_rng(5)
    for _ in range(3):
        q, v = db.random_configuration(model, rng), rng.standard_normal(model.nv) * 2.0
        kin = world_kinematics(model, q)
        N_l, N_d = denoc_matrices(model, q)
        tw = (N_l @ N_d @ v).reshape(-1, 6)  # (omega_k, odot_k), inertial frame
        want = np.concatenate([np.einsum("kji,kj->ki", kin.R, tw[:, :3]), np.einsum("kji,kj->ki", kin.R, tw[:, 3:])], 1)
        R, p, t = compiled(model, q, v)
        assert rel(R, kin.R) <= 1e-13 and rel(p, kin.o) <= 1e-13 and rel(t, want) <= 1e-12


@pytest.mark.parametrize("name", [m for m in MODELS if not m.startswith("type5")] + ["solo12"])
def test_kinematics_match_pinocchio(name):
    """oMi[k + 1] and v[k + 1] (linear first) of pin.forwardKinematics, and the energies of
    pin.computeKineticEnergy / computePotentialEnergy (without armature: Pinocchio's kinetic energy
    gets that of an unaligned revolute joint wrong, tests/algorithms/test_energies.py)."""
    model = model_of(name).replace(armature=None)
    pm = db.to_pinocchio(model)
    pd = pm.createData()
    rng = np.random.default_rng(8)
    q, v = db.random_configuration(model, rng), rng.standard_normal(model.nv)
    pin.forwardKinematics(pm, pd, q, v)
    R, p, t = compiled(model, q, v)
    for k in range(model.n_links):
        assert np.abs(R[k] - pd.oMi[k + 1].rotation).max() <= 1e-12
        assert np.abs(p[k] - pd.oMi[k + 1].translation).max() <= 1e-12 * max(1.0, np.abs(p).max())
        assert np.abs(t[k, 3:] - pd.v[k + 1].linear).max() <= 1e-12 * max(1.0, np.abs(t).max())
        assert np.abs(t[k, :3] - pd.v[k + 1].angular).max() <= 1e-12 * max(1.0, np.abs(t).max())
    d = np.empty(model.nv)
    T, V = ct.energies_state(model._kt, work_of(model), q, v, np.zeros(model.nv), q, False, d)
    assert T == pytest.approx(pin.computeKineticEnergy(pm, pd, q, v), rel=1e-12, abs=1e-12)
    assert V == pytest.approx(pin.computePotentialEnergy(pm, pd, q), rel=1e-12, abs=1e-12)


def test_subtree_sums_by_hand():
    """A tree given by its parents: each row the sum over its subtree."""
    model = db.testing.random_model(4, 7, branching=0.6, n_roots=2)
    parent = model._kt.view(INT)[:, PARENT]
    x = np.arange(1.0, 1.0 + 2 * model.n_links).reshape(-1, 2)
    out = np.empty_like(x)
    assert ct.subtree_sums(model._kt, x, out) == 0
    for k in range(model.n_links):
        sub = [j for j in range(model.n_links) if k in ancestors(parent, j)]
        assert np.array_equal(out[k], x[sub].sum(axis=0))


def ancestors(parent, j):
    out = [j]
    while parent[out[-1]] >= 0:
        out.append(parent[out[-1]])
    return out


def test_what_does_not_fit_is_a_status():
    model = model_of("random3")
    kt, L, nv = model._kt, model.n_links, model.nv
    q, v = db.random_configuration(model, 0), np.ones(nv)
    work = work_of(model)
    R, p, t = np.full((L, 3, 3), 7.0), np.full((L, 3), 7.0), np.full((L, 6), 7.0)
    for args, status in (
        ((kt, work, q[:-1], R, p), -2),
        ((kt, work[:-1], q, R, p), -2),
        ((kt, work, q, R[:-1], p), -2),
        ((kt, work, q, R, p[:-1]), -2),
        ((kt, work, q, R, np.zeros((L, 4))), -2),
        ((kt, np.zeros((0, W)), q, R, p), -2),  # no work array of its own
        ((kt[:, :40].copy(), work, q, R, p), -2),
        ((kt, work, np.where(np.arange(q.size) == 2, np.nan, q), R, p), -1),
        ((kt, work, np.zeros_like(q), R, p), -1),  # zero quaternions
    ):
        assert ct.placements_state(*args) == status
    for args, status in (
        ((kt, work, q, v[:-1], t), -2),
        ((kt, work, q, v, t[:-1]), -2),
        ((kt, work, q, np.full(nv, np.inf), t), -1),
    ):
        assert ct.twists_state(*args) == status
    for row, col, value in ((L - 1, PARENT, L), (0, PARENT, 0), (1, 2, 15 << 8), (0, 89, L + 5)):
        bad = kt.copy()
        bad.view(INT)[row, col] = value
        assert ct.placements_state(bad, work, q, R, p) == -2
        assert ct.twists_state(bad, work, q, v, t) == -2
    bad = kt.copy()
    bad.view(INT)[L - 1, PARENT] = L
    x = np.ones((L, 3))
    assert ct.subtree_sums(bad, x, np.full((L, 3), 7.0)) == -2
    assert ct.subtree_sums(kt, x, np.full((L, 2), 7.0)) == -2
    assert ct.subtree_sums(kt, x[:-1], np.full((L - 1, 3), 7.0)) == -2
    assert np.all(R == 7.0) and np.all(p == 7.0) and np.all(t == 7.0)


def test_arguments_it_must_not_take_raise_type_error():
    model = model_of("random1")
    kt, L = model._kt, model.n_links
    q, v, work = db.random_configuration(model, 0), np.zeros(model.nv), work_of(model)
    R, p, t = np.empty((L, 3, 3)), np.empty((L, 3)), np.empty((L, 6))
    for args in (
        (kt, work, list(q), R, p),
        (kt, work, q.astype(np.float32), R, p),
        (kt, work, q, R.reshape(L, 9), p),  # 2-D where R is 3-D
        (kt, work, q, R, p.T),  # not C-contiguous
        (kt.view(INT), work, q, R, p),
    ):
        with pytest.raises(TypeError):
            ct.placements_state(*args)
    ro = t.copy()
    ro.flags.writeable = False
    with pytest.raises(TypeError, match="writeable"):
        ct.twists_state(kt, work, q, v, ro)
    with pytest.raises(TypeError):
        ct.subtree_sums(kt, np.ones(L), np.ones(L))
