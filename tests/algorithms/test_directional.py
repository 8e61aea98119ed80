"""Matrix-free derivatives of forward dynamics (JVP and VJP): against the dense derivatives
(themselves entry by entry Pinocchio's, tests/algorithms/test_derivatives.py) on random trees of
every joint type and on example-robot-data robots, against Pinocchio's own
``computeABADerivatives``, the adjoint identity, and central differences on the manifold, on
every joint type and on long chains where no dense matrix is formed."""

from __future__ import annotations

import warnings

import numpy as np
import pinocchio as pin
import pytest
from conftest import load_robot_quietly, mixed_tree, pin_fext, random_state

import denoc_bridge as db
from denoc_bridge.io.robots import serial_chain
from denoc_bridge.testing import random_model
from denoc_bridge.validation import relative_error

JT = db.JointType
TIGHT = 1e-10


def dense_products(model, q, v, tau, fext, d, lam):
    ddq, ddv, Minv = db.forward_dynamics_derivatives(model, q, v, tau, fext)
    dq, dv, dtau = d
    return ddq @ dq + ddv @ dv + Minv @ dtau, (ddq.T @ lam, ddv.T @ lam, Minv.T @ lam)


def backward_error(M, x, b):
    """Normwise backward error of x as a solution of M x = b (a backward-stable solve: a few
    eps, whatever kappa(M))."""
    r = np.abs(M @ x - b).max()
    return r / (np.abs(M).sum(axis=1).max() * np.abs(x).max() + np.abs(b).max())


def product_error(x, A, mu):
    """The error of x as ``-A^T mu``: relative to the result, or, where the sum cancels (its
    terms more than 1e3 times larger than it), to 1e-3 of the terms' magnitudes: two
    implementations that round the entries of A differently in the last bits (a few eps) move a
    cancelling product by eps times the cancellation, not by eps of the result (a 300-DOF tree:
    1.1e-10 of the result, terms 3e5 times larger than it)."""
    ref = -A.T @ mu
    err = np.abs(x - ref).max()
    scale = max(np.abs(ref).max(), 1e-3 * (np.abs(A).T @ np.abs(mu)).max())
    return err / scale if scale > 0 else err


def check_against_dense(model, seed, with_fext=True, tol=TIGHT):
    """Forward errors against the dense products within ``tol`` or, where kappa(M) amplifies
    the last bits of the dense inverse beyond it, within first-order perturbation theory
    (``10 sqrt(n) kappa eps``); and the backward statements always within ``tol``: mapped back
    by M, the results are the dense right-hand sides (products with the inverse-dynamics
    derivatives, no inverse involved)."""
    q, v, tau, fext = random_state(model, seed)
    fext = fext if with_fext else None
    rng = np.random.default_rng(1000 + seed)
    d = tuple(rng.standard_normal(model.nv) for _ in range(3))
    lam = rng.standard_normal(model.nv)
    jvp_ref, vjp_ref = dense_products(model, q, v, tau, fext, d, lam)
    jvp = db.forward_dynamics_jvp(model, q, v, tau, *d, f_ext=fext)
    vjp = db.forward_dynamics_vjp(model, q, v, tau, lam, f_ext=fext)
    qdd = db.forward_dynamics(model, q, v, tau, fext)
    dtau_dq, dtau_dv, M = db.inverse_dynamics_derivatives(model, q, v, qdd, fext)
    kappa = np.linalg.cond(M)
    allowed = max(tol, 10 * np.sqrt(model.nv) * kappa * np.finfo(float).eps)
    errors = {"jvp": relative_error(jvp, jvp_ref)}
    for name, x, ref in zip(("vjp_q", "vjp_v", "vjp_tau"), vjp, vjp_ref):
        errors[name] = relative_error(x, ref)
    bad = {k: e for k, e in errors.items() if not e <= allowed}
    assert not bad, f"{model.name} (seed {seed}, kappa {kappa:.1e}): errors above {allowed:g}: {bad}"
    gq, gv, mu = vjp
    backward = {
        "M jvp": backward_error(M, jvp, d[2] - dtau_dq @ d[0] - dtau_dv @ d[1]),
        "M vjp_tau": backward_error(M, mu, lam),
        "vjp_q": product_error(gq, dtau_dq, mu),
        "vjp_v": product_error(gv, dtau_dv, mu),
    }
    bad = {k: e for k, e in backward.items() if not e <= tol}
    assert not bad, f"{model.name} (seed {seed}): mapped back, errors above {tol:g}: {bad}"
    # the adjoint identity <lam, J d> = <J^T lam, d>
    lhs = lam @ jvp
    rhs = sum(g @ x for g, x in zip(vjp, d))
    assert abs(lhs - rhs) <= 1e-11 * (np.abs(lam) @ np.abs(jvp) + sum(np.abs(g) @ np.abs(x) for g, x in zip(vjp, d)))


@pytest.mark.parametrize("seed", range(12))
def test_random_trees_match_dense(seed):
    check_against_dense(mixed_tree(seed), seed, with_fext=seed % 3 != 0)


@pytest.mark.parametrize("jtype", list(JT))
def test_each_joint_type_matches_dense(jtype):
    model = random_model(seed=int(jtype) + 200, n_links=6, branching=0.4, joint_types=(jtype,))
    check_against_dense(model, int(jtype))
    check_against_dense(model, int(jtype) + 1, with_fext=False)


def test_entry_by_entry():
    """Unit directions give the columns of the dense matrices, unit weights their rows."""
    model = random_model(seed=7, n_links=6, branching=0.5, floating_base=True)
    q, v, tau, fext = random_state(model, 7)
    ddq, ddv, Minv = db.forward_dynamics_derivatives(model, q, v, tau, fext)
    nv = model.nv
    cols = np.empty((3, nv, nv))
    rows = np.empty((3, nv, nv))
    for j in range(nv):
        e = np.zeros(nv)
        e[j] = 1.0
        cols[0, :, j] = db.forward_dynamics_jvp(model, q, v, tau, dq=e, f_ext=fext)
        cols[1, :, j] = db.forward_dynamics_jvp(model, q, v, tau, dv=e, f_ext=fext)
        cols[2, :, j] = db.forward_dynamics_jvp(model, q, v, tau, dtau=e, f_ext=fext)
        gq, gv, gt = db.forward_dynamics_vjp(model, q, v, tau, e, f_ext=fext)
        rows[0, j], rows[1, j], rows[2, j] = gq, gv, gt
    for k, ref in enumerate((ddq, ddv, Minv)):
        assert relative_error(cols[k], ref) <= TIGHT
        assert relative_error(rows[k], ref) <= TIGHT


@pytest.mark.parametrize("name", ["panda", "talos", "solo12"])
def test_robots_match_dense(name):
    model = load_robot_quietly(name)
    for seed in range(2):
        check_against_dense(model, seed, with_fext=seed == 0)


def test_a_few_hundred_dofs_match_dense():
    model = random_model(seed=3, n_links=150, branching=0.2, floating_base=True)
    assert model.nv > 300
    check_against_dense(model, 3)
    chain = serial_chain(300)
    check_against_dense(chain, 4, with_fext=False)


def check_against_pinocchio(model, seed, with_fext=True):
    """The JVP and the VJP against the products with ``pin.computeABADerivatives``' matrices
    (ddq_dq, ddq_dv, Minv), within TIGHT or the conditioning's first-order bound as
    :func:`check_against_dense`."""
    q, v, tau, fext = random_state(model, seed)
    fext = fext if with_fext else np.zeros_like(fext)
    rng = np.random.default_rng(2000 + seed)
    dq, dv, dtau, lam = (rng.standard_normal(model.nv) for _ in range(4))
    pm = db.to_pinocchio(model)
    pd = pm.createData()
    pin.computeABADerivatives(pm, pd, q, v, tau, pin_fext(fext))
    Minv = np.triu(pd.Minv) + np.triu(pd.Minv, 1).T
    ddq, ddv = pd.ddq_dq, pd.ddq_dv
    jvp = db.forward_dynamics_jvp(model, q, v, tau, dq, dv, dtau, f_ext=fext)
    gq, gv, gtau = db.forward_dynamics_vjp(model, q, v, tau, lam, f_ext=fext)
    kappa = np.linalg.cond(pd.M + np.triu(pd.M, 1).T)
    allowed = max(TIGHT, 10 * np.sqrt(model.nv) * kappa * np.finfo(float).eps)
    errors = {
        "jvp": relative_error(jvp, ddq @ dq + ddv @ dv + Minv @ dtau),
        "gq": relative_error(gq, ddq.T @ lam),
        "gv": relative_error(gv, ddv.T @ lam),
        "gtau": relative_error(gtau, Minv @ lam),
    }
    bad = {k: e for k, e in errors.items() if not e <= allowed}
    assert not bad, f"{model.name} (seed {seed}, kappa {kappa:.1e}): errors above {allowed:g}: {bad}"


@pytest.mark.parametrize("name", ["panda", "talos", "solo12"])
def test_robots_match_pinocchio(name):
    model = load_robot_quietly(name)
    for seed in range(3):
        check_against_pinocchio(model, seed, with_fext=seed != 1)


@pytest.mark.parametrize("seed", range(8))
def test_random_trees_match_pinocchio(seed):
    """Every joint type Pinocchio's derivatives are a reference for (not its universal joint:
    tests/algorithms/test_derivatives.py)."""
    model = mixed_tree(seed, model_seed=600 + seed, joint_types=tuple(t for t in JT if t != JT.UNIVERSAL))
    check_against_pinocchio(model, seed, with_fext=seed % 3 != 0)


def fourth_order_difference(f, h):
    """f'(0) by the fourth-order central difference of steps h and 2h."""
    return (8 * (f(h) - f(-h)) - (f(2 * h) - f(-2 * h))) / (12 * h)


@pytest.mark.parametrize("jtype", list(JT))
def test_each_joint_type_matches_central_differences_on_the_manifold(jtype):
    """The JVP against fourth-order central differences of the forward dynamics along
    ``integrate(q, s dq)``, ``v + s dv``, ``tau + s dtau`` (truncation ~h^4, round-off
    ~eps / h), and the VJP against the differences of ``lam . qdd`` in random directions, with
    external wrenches."""
    model = random_model(seed=int(jtype) + 700, n_links=6, branching=0.4, joint_types=(jtype,), floating_base=True)
    q, v, tau, fext = random_state(model, int(jtype))
    rng = np.random.default_rng(int(jtype))
    d = tuple(rng.standard_normal(model.nv) for _ in range(3))
    lam = rng.standard_normal(model.nv)

    def qdd(s, d):
        dq, dv, dtau = d
        return db.forward_dynamics(model, db.integrate(model, q, s * dq), v + s * dv, tau + s * dtau, fext)

    fd = fourth_order_difference(lambda s: qdd(s, d), 1e-3)
    assert relative_error(db.forward_dynamics_jvp(model, q, v, tau, *d, f_ext=fext), fd) <= 1e-8
    gq, gv, gtau = db.forward_dynamics_vjp(model, q, v, tau, lam, f_ext=fext)
    for _ in range(3):
        e = tuple(rng.standard_normal(model.nv) for _ in range(3))
        ref = fourth_order_difference(lambda s: lam @ qdd(s, e), 1e-3)
        assert abs(gq @ e[0] + gv @ e[1] + gtau @ e[2] - ref) <= 1e-8 * (np.abs(lam) @ np.abs(fd) + abs(ref))


def central_difference(model, q, v, tau, d, h):
    dq, dv, dtau = d
    plus = db.forward_dynamics(model, db.integrate(model, q, h * dq), v + h * dv, tau + h * dtau)
    minus = db.forward_dynamics(model, db.integrate(model, q, -h * dq), v - h * dv, tau - h * dtau)
    return (plus - minus) / (2 * h)


def check_long_chain(n, tol_forward, tol_backward):
    """A long chain, where no n x n matrix is formed: the JVP against central differences of the
    forward dynamics on the manifold (within ``tol_forward``: through M^-1 the result carries
    the conditioning of the chain, see the report of the benchmark), and the backward
    statements that do not depend on it: ``M jvp`` (by inverse dynamics: ``ID(q, 0, x) -
    ID(q, 0, 0) = M x``) equals ``dtau - dtau_dq dq - dtau_dv dv`` with the products taken by
    central differences of the local O(n) inverse dynamics (exact in v, which enters
    quadratically), and the VJP's outputs satisfy
    ``<gq, dq> + <gv, dv> = -gtau . (dtau_dq dq + dtau_dv dv)`` and the adjoint identity."""
    model = serial_chain(n)
    rng = np.random.default_rng(n)
    q = 0.3 * rng.standard_normal(n)
    v, tau = 0.1 * rng.standard_normal(n), 0.01 * rng.standard_normal(n)
    d = (rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal(n))
    jvp = db.forward_dynamics_jvp(model, q, v, tau, *d)
    fd = central_difference(model, q, v, tau, d, 1e-5)
    forward = relative_error(jvp, fd)
    assert forward <= tol_forward
    qdd = db.forward_dynamics(model, q, v, tau)
    zero = np.zeros(n)

    def m_times(x):
        return db.inverse_dynamics(model, q, zero, x) - db.inverse_dynamics(model, q, zero, zero)

    h = 1e-6
    id_q = (
        db.inverse_dynamics(model, db.integrate(model, q, h * d[0]), v, qdd)
        - db.inverse_dynamics(model, db.integrate(model, q, -h * d[0]), v, qdd)
    ) / (2 * h)
    id_v = (db.inverse_dynamics(model, q, v + d[1], qdd) - db.inverse_dynamics(model, q, v - d[1], qdd)) / 2
    rhs = d[2] - id_q - id_v
    assert relative_error(m_times(jvp), rhs) <= tol_backward
    lam = rng.standard_normal(n)
    gq, gv, gtau = db.forward_dynamics_vjp(model, q, v, tau, lam)
    lhs = gq @ d[0] + gv @ d[1]
    ref = -gtau @ (id_q + id_v)
    assert abs(lhs - ref) <= 1e-7 * (np.abs(gtau) @ (np.abs(id_q) + np.abs(id_v)))
    # and the two passes are each other's transposes: <lam, J d> = <J^T lam, d>
    both = lam @ jvp, gq @ d[0] + gv @ d[1] + gtau @ d[2]
    assert abs(both[0] - both[1]) <= tol_forward * (np.abs(lam) @ np.abs(jvp))
    return forward


def test_long_chain_matches_central_differences():
    check_long_chain(2_000, 1e-7, 1e-8)


@pytest.mark.slow
def test_100000_dof_chain_matches_central_differences():
    check_long_chain(100_000, 1e-4, 1e-6)


def test_refused_models_and_inputs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", db.PhysicsWarning)
        mimic = db.load_robot("panda", mimic=True)
    q = db.neutral_configuration(mimic)
    z = np.zeros(mimic.nv)
    with pytest.raises(
        db.InputError, match="mimic joints.*not supported yet.*forward_dynamics_derivatives gives them densely"
    ):
        db.forward_dynamics_jvp(mimic, q, z, z, dq=z)
    with pytest.raises(
        db.InputError, match="mimic joints.*not supported yet.*forward_dynamics_derivatives gives them densely"
    ):
        db.forward_dynamics_vjp(mimic, q, z, z, z)
    fourbar = db.generators.fourbar()
    z = np.zeros(fourbar.nv)
    with pytest.raises(db.InputError, match="loop closures.*not supported yet"):
        db.forward_dynamics_vjp(fourbar, db.neutral_configuration(fourbar), z, z, z)
    model = random_model(seed=1, n_links=3)
    q, v, tau, _ = random_state(model, 1)
    with pytest.raises(db.InputError, match=rf"dv must have shape \({model.nv},\)"):
        db.forward_dynamics_jvp(model, q, v, tau, dv=v[:-1])
    bad = v.copy()
    bad[1] = np.inf
    with pytest.raises(db.InputError, match=r"lam\[1\] is inf"):
        db.forward_dynamics_vjp(model, q, v, tau, bad)
    with pytest.raises(db.InputError, match="v"):
        db.forward_dynamics_jvp(model, q, bad, tau, dq=v)
    with pytest.raises(db.InputError, match="one state at a time"):
        db.forward_dynamics_jvp(model, np.array([q, q]), np.array([v, v]), np.array([tau, tau]))
    # no direction: zero
    assert np.all(db.forward_dynamics_jvp(model, q, v, tau) == 0.0)
