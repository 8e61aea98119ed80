"""The sweeps of the matrix-free derivatives (denoc_bridge.kernels.directional), pass by pass,
against explicit references: the link terms against the 6x6 matrix C of the variation of a
link wrench with its twist (formed here from its definition), the tangent RNEA and its adjoint
against products with the dense inverse-dynamics derivatives (themselves Pinocchio's entry by
entry, tests/core/test_derivatives.py)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_state

import denoc_bridge as db
from denoc_bridge.algorithms import directional as adir
from denoc_bridge.kernels import directional as kdir
from denoc_bridge.kernels import lagrange
from denoc_bridge.testing import random_model
from denoc_bridge.validation import relative_error

TIGHT = 1e-12


def cross(x):
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def motion_cross(t):
    """t x (.) for a motion t = [w; v]: [[w x, 0], [v x, w x]]."""
    w, v = cross(t[:3]), cross(t[3:])
    return np.block([[w, np.zeros((3, 3))], [v, w]])


def coriolis_matrix(M, t):
    """C u = M (u x t) + u x* (M t) + t x* (M u) (the variation of the link wrench
    M tdot + t x* (M t) with the twist t along u) as a 6x6 matrix: -M [t x] + H(M t) + [t x*] M,
    with u x* h = H(h) u, H(h) = [[-hn x, -hf x], [-hf x, 0]] and [t x*] = -[t x]^T."""
    h = M @ t
    H = np.block([[-cross(h[:3]), -cross(h[3:])], [-cross(h[3:]), np.zeros((3, 3))]])
    return -M @ motion_cross(t) + H - motion_cross(t).T @ M


def link_inertia(rng):
    """(10 parameters, 6x6 matrix) of a random link inertia about its origin."""
    m = rng.uniform(0.5, 2.0)
    h = rng.standard_normal(3)
    A = rng.standard_normal((3, 3))
    Io = A @ A.T + np.eye(3)
    I10 = (m, *h, Io[0, 0], Io[0, 1], Io[0, 2], Io[1, 1], Io[1, 2], Io[2, 2])
    M = np.block([[Io, cross(h)], [-cross(h), m * np.eye(3)]])
    return I10, M


@pytest.mark.parametrize("seed", range(5))
def test_link_terms_match_the_coriolis_matrix(seed):
    rng = np.random.default_rng(seed)
    I10, M = link_inertia(rng)
    t, P, Q, U = (rng.standard_normal(6) for _ in range(4))
    C = coriolis_matrix(M, t)
    h = M @ t
    tup = tuple
    assert relative_error(np.array(kdir.inertia_times(I10, tup(P))), M @ P) <= TIGHT
    D = np.array(kdir.tangent_wrench(I10, tup(t), tup(h), tup(P), tup(Q)))
    assert relative_error(D, M @ P + C @ Q) <= TIGHT
    Z = np.array(kdir.coriolis_transpose_times(I10, tup(t), tup(h), tup(U)))
    assert relative_error(Z, C.T @ U) <= TIGHT


def sweeps(model, q, v, tau, fext, dq, dv, mu):
    """(dtau_dq dq + dtau_dv dv, dtau_dq^T mu, dtau_dv^T mu) from the sweeps at (q, v, FD)."""
    q, v, tau, fext = adir._state(model, q, v, tau, fext)
    work, buf = adir._buffers(model)
    kt, nv = model._kt, model.nv
    ki = kt.view(np.int32)
    qdd, jvp, gq, gv = np.empty(nv), np.empty(nv), np.empty(nv), np.empty(nv)
    assert lagrange.factorised_forward_dynamics(ki, kt, work, q, v, tau, fext, qdd) == 0
    kdir.tangent_forward(ki, kt, work, v, qdd, fext, dq, dv, buf)
    kdir.tangent_backward(ki, kt, work, nv, dq, buf, jvp)
    kdir.adjoint_forward(ki, kt, work, v, qdd, fext, mu, buf)
    kdir.adjoint_backward(ki, kt, work, nv, mu, buf, gq, gv)
    return qdd, jvp, gq, gv


@pytest.mark.parametrize("seed", range(6))
def test_sweeps_match_inverse_dynamics_derivatives(seed):
    """Every joint type over the seeds (universal and free-flyer included), f_ext on half."""
    model = random_model(seed=300 + seed, n_links=8, branching=0.5, n_roots=1 + seed % 2, floating_base=bool(seed % 2))
    q, v, tau, fext = random_state(model, seed)
    fext = fext if seed % 2 == 0 else None
    rng = np.random.default_rng(seed)
    dq, dv, mu = (rng.standard_normal(model.nv) for _ in range(3))
    qdd, jvp, gq, gv = sweeps(model, q, v, tau, fext, dq, dv, mu)
    dtau_dq, dtau_dv, _ = db.inverse_dynamics_derivatives(model, q, v, qdd, fext)
    assert relative_error(jvp, dtau_dq @ dq + dtau_dv @ dv) <= 1e-11
    assert relative_error(gq, dtau_dq.T @ mu) <= 1e-11
    assert relative_error(gv, dtau_dv.T @ mu) <= 1e-11


@pytest.mark.parametrize("jtype", list(db.JointType))
def test_sweeps_on_each_joint_type(jtype):
    model = random_model(seed=int(jtype) + 400, n_links=5, branching=0.4, joint_types=(jtype,))
    q, v, tau, fext = random_state(model, int(jtype))
    rng = np.random.default_rng(int(jtype))
    dq, dv, mu = (rng.standard_normal(model.nv) for _ in range(3))
    qdd, jvp, gq, gv = sweeps(model, q, v, tau, fext, dq, dv, mu)
    dtau_dq, dtau_dv, _ = db.inverse_dynamics_derivatives(model, q, v, qdd, fext)
    assert relative_error(jvp, dtau_dq @ dq + dtau_dv @ dv) <= 1e-11
    assert relative_error(gq, dtau_dq.T @ mu) <= 1e-11
    assert relative_error(gv, dtau_dv.T @ mu) <= 1e-11
