"""Pieces of the dense derivatives kernel: the link inertias and the matrices C in closed form
against their 6x6 definitions, and the entries zeroed before the backward pass (exactly those
that no supporting chain writes)."""

from __future__ import annotations

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.kernels import derivative_algebra as ka
from denoc_bridge.kernels import derivative_passes as kp
from denoc_bridge.kernels import derivatives as kd
from denoc_bridge.kernels import tables as T
from denoc_bridge.multibody import inputs
from denoc_bridge.multibody.inputs import NO_FEXT
from denoc_bridge.testing import random_model


def _rotation(rng):
    Q, R = np.linalg.qr(rng.standard_normal((3, 3)))
    return Q * np.sign(np.diag(R))


def _full_inertia(I10):
    A = np.array([[I10[0], I10[1], I10[2]], [I10[1], I10[3], I10[4]], [I10[2], I10[4], I10[5]]])
    h, m = I10[6:9], I10[9]
    H = np.array([[0, -h[2], h[1]], [h[2], 0, -h[0]], [-h[1], h[0], 0]])
    return np.block([[A, H], [H.T, m * np.eye(3)]])


def _full_coriolis(C12):
    c = C12[9:12]
    K = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
    return np.block([[C12[:9].reshape(3, 3), np.zeros((3, 3))], [K, np.zeros((3, 3))]])


@pytest.mark.parametrize("seed", range(4))
def test_inertia_and_coriolis_closed_forms(seed):
    """Ten numbers of the link inertia and twelve of C = I (u x t) + u x* (I t) + t x* (I u):
    equal to :func:`_world_inertia` and :func:`_coriolis_matrix`, and their actions equal the
    6x6 products."""
    rng = np.random.default_rng(seed)
    model = random_model(seed, n_links=5)
    kf = model._kt
    oR = np.stack([_rotation(rng) for _ in range(kf.shape[0])])
    op = rng.standard_normal((kf.shape[0], 3))
    I10, C12 = np.empty((kf.shape[0], 10)), np.empty((kf.shape[0], 12))
    Iw, Cw = np.empty((6, 6)), np.empty((6, 6))
    for k in range(kf.shape[0]):
        ka._inertia10(kf, k, oR.reshape(-1, 9), op, I10)
        ka._world_inertia(kf, k, oR[k], op[k], Iw)
        assert np.abs(_full_inertia(I10[k]) - Iw).max() <= 1e-13 * np.abs(Iw).max()
        t, x = rng.standard_normal(6), rng.standard_normal(6)
        h = ka._iact(I10, k, tuple(t))
        assert np.allclose(h, Iw @ t, rtol=0, atol=1e-13 * np.abs(Iw).max() * np.abs(t).max())
        ka._coriolis12(I10, k, tuple(t), h, C12)
        ka._coriolis_matrix(Iw, t, Cw)
        scale = np.abs(Cw).max()
        assert np.abs(_full_coriolis(C12[k]) - Cw).max() <= 1e-13 * scale
        assert np.abs(np.array(ka._cact(C12, k, tuple(x))) - Cw @ x).max() <= 1e-13 * scale * np.abs(x).max()


def _nan_filled_derivatives(model, q, v, a, ki=None):
    ki = model._kt.view(T.INT) if ki is None else ki
    nv = model.nv
    dq, dv, M = (np.full((nv, nv), np.nan) for _ in range(3))
    kd.zero_unrelated(ki, nv, dq, dv, M)
    kd.derivatives_unchecked(ki, model._kt, q, v, a, NO_FEXT, np.empty(nv), dq, dv, M)
    return dq, dv, M


def _related(model):
    """related[r, c]: DOFs r and c on one supporting chain (one's link an ancestor of, or, the
    other's)."""
    ki = model._kt.view(T.INT)
    link = np.empty(model.nv, dtype=int)
    for k in range(ki.shape[0]):
        link[ki[k, T.IDX_V] : ki[k, T.IDX_V] + ki[k, T.NV]] = k
    related = np.zeros((model.nv, model.nv), dtype=bool)
    for c in range(model.nv):
        j = link[c]
        while j >= 0:
            related[c, link == j] = related[link == j, c] = True
            j = ki[j, T.PARENT]
    return related


@pytest.mark.parametrize("seed", range(6))
def test_every_entry_written_or_zeroed(seed):
    """On depth-first trees exactly the entries of DOFs on no common chain are zeroed first; with
    the backward pass every entry is set, equal to the public function's (the compiled core's,
    to round-off)."""
    model = random_model(seed, n_links=9, branching=0.6, floating_base=seed % 2 == 1)
    related = _related(model)
    assert (~related).any()  # these trees branch
    nv = model.nv
    zeroed = [np.full((nv, nv), np.nan) for _ in range(3)]
    kd.zero_unrelated(model._kt.view(T.INT), nv, *zeroed)
    for x in zeroed:
        assert (x[~related] == 0.0).all() and np.isnan(x[related]).all()
    rng = np.random.default_rng(seed)
    q, v, a = db.random_configuration(model, rng), rng.standard_normal(nv), rng.standard_normal(nv)
    got = _nan_filled_derivatives(model, q, v, a)
    ref = db.inverse_dynamics_derivatives(model, q, v, a)
    for x, y in zip(got, ref):
        assert not np.isnan(x).any()
        np.testing.assert_allclose(x, y, rtol=0, atol=1e-13 * np.abs(y).max())


def test_zeroes_everything_without_depth_first_numbering():
    """A DOF numbering whose subtrees are not ranges (a breadth-first one) zeroes every entry."""
    L = 4  # 0 <- 1 <- 3 and 0 <- 2: depth first 0 1 3 2; number it 0 1 2 3 (breadth first)
    ki = np.zeros((L, 128), dtype=T.INT)
    for k, (p, iv) in enumerate(((-1, 0), (0, 1), (0, 2), (1, 3))):
        ki[k, T.PARENT], ki[k, T.IDX_V], ki[k, T.NV] = p, iv, 1
    dq, dv, M = (np.full((L, L), np.nan) for _ in range(3))
    kd.zero_unrelated(ki, L, dq, dv, M)
    assert not (dq.any() or dv.any() or M.any())
    ki[2, T.IDX_V], ki[3, T.IDX_V] = 3, 2  # link 2 takes DOF 3, link 3 DOF 2: depth first
    dq, dv, M = (np.full((L, L), np.nan) for _ in range(3))
    kd.zero_unrelated(ki, L, dq, dv, M)
    unrelated = np.zeros((L, L), dtype=bool)
    unrelated[2, 3] = unrelated[3, 2] = unrelated[1, 3] = unrelated[3, 1] = True
    for x in (dq, dv, M):
        assert (x[unrelated] == 0.0).all() and np.isnan(x[~unrelated]).all()


def test_cholesky_inverse():
    """The dense inverse of the forward derivatives (up to DENSE_MINV_MAX DOF): equal to
    numpy's within round-off on SPD matrices of every size up to the bound, refused (False) on
    an indefinite one."""
    rng = np.random.default_rng(0)
    for n in range(1, kd.DENSE_MINV_MAX + 1):
        A = rng.standard_normal((n, n))
        M = A @ A.T + 0.1 * np.eye(n)
        Minv, W = np.empty((n, n)), np.empty((n, n))
        assert kd.cholesky_inverse(M, Minv, W)
        ref = np.linalg.inv(M)
        assert np.abs(Minv - ref).max() <= 1e-12 * np.linalg.cond(M) * np.abs(ref).max()
        assert (Minv == Minv.T).all()
    M = np.diag([1.0, -1.0, 2.0])
    assert not kd.cholesky_inverse(M, np.empty((3, 3)), np.empty((3, 3)))


@pytest.mark.parametrize("seed", range(6))
def test_acceleration_pass_adds_the_terms_of_the_accelerations(seed):
    """The passes at a = 0 (M, dtau/dv and the bias tau(q, v, 0)) then
    :func:`.derivative_passes.acceleration_pass` with the accelerations a give dtau/dq of the
    fused passes at a (alpha and the composite wrenches are linear in a): every joint type,
    universal joints included (their second column's node rate moves with the first's
    acceleration), with and without external wrenches; and the forward derivatives of such trees
    (the entry solves ``M qdd = tau - bias`` with the passes at a = 0) satisfy the
    implicit-function theorem against the inverse derivatives at FD(q, v, tau)."""
    types = (db.JointType.UNIVERSAL, db.JointType.REVOLUTE) if seed < 2 else tuple(db.JointType)
    model = random_model(seed=seed, n_links=8, branching=0.5, joint_types=types, floating_base=seed % 2 == 1)
    rng = np.random.default_rng(seed)
    q = db.random_configuration(model, rng)
    v, a = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    fext = rng.standard_normal((model.n_links, 6)) if seed % 3 else None
    q, v, a, fx, _ = inputs.state(model, q, v, a, fext, "a")
    ki, kt, nv = model._kt.view(T.INT), model._kt, model.nv
    ref = [np.zeros((nv, nv)) for _ in range(3)]
    tau = np.empty(nv)
    kd.derivatives_unchecked(ki, kt, q, v, a, fx, tau, *ref)
    split = [np.zeros((nv, nv)) for _ in range(3)]
    ws, zero, bias = kp.workspace(ki.shape[0], nv), np.zeros(nv), np.empty(nv)
    kp.kinematics_pass(ki, kt, q, v, zero, fx, ws)
    kp.composite_pass(ki, kt, zero, bias, *split, ws, False)
    kp.acceleration_pass(ki, a, split[0], ws)
    scale = np.abs(ref[0]).max()
    assert np.abs(split[0] - ref[0]).max() <= 1e-12 * scale
    assert np.array_equal(split[1], ref[1]) and np.array_equal(split[2], ref[2])  # no a in dv, M
    assert np.abs(bias + ref[2] @ a - tau).max() <= 1e-12 * np.abs(tau).max()
    ddq, ddv, Minv = db.forward_dynamics_derivatives(model, q, v, tau, fext)
    qdd = db.forward_dynamics(model, q, v, tau, fext)
    assert np.abs(qdd - a).max() <= 1e-9 * np.abs(a).max()
    dq, dv, M = db.inverse_dynamics_derivatives(model, q, v, qdd, fext)
    assert np.abs(M @ ddq + dq).max() <= 1e-10 * np.abs(dq).max()
    assert np.abs(M @ ddv + dv).max() <= 1e-10 * np.abs(dv).max()
    assert np.abs(Minv @ M - np.eye(nv)).max() <= 1e-10
