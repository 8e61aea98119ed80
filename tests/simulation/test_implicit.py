"""The implicit methods of simulate (implicit-euler, sdirk2): orders of convergence against a fine
RK4, the matrix-free Newton-Krylov path against the dense one, stiff chains far beyond RK4's
stability limit, manifolds, refusals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.algorithms.dynamics import link_forces, shifted_mass_solver
from denoc_bridge.generators import chain
from denoc_bridge.simulation import implicit
from denoc_bridge.testing import random_model

RK4 = np.poly1d([1 / 24, 1 / 6, 1 / 2, 1, 1])


def rk4_limit(model, q, v):
    """RK4's stability limit from the eigenvalues of the linearised dynamics (dense)."""
    nv = model.nv
    K, D = np.asarray(model.stiffness), np.asarray(model.damping)
    total = -K * db.difference(model, model.rest_configuration, q) - D * v
    ddq, ddv, Minv = db.forward_dynamics_derivatives(model, q, v, total)
    A = np.block([[np.zeros((nv, nv)), np.eye(nv)], [ddq - Minv * K, ddv - Minv * D]])
    h = np.inf
    for lam in np.linalg.eigvals(A):
        if lam.real > 1e-9 * abs(lam) or abs(lam) < 1e-12:
            continue
        lo, hi = 0.0, 10.0 / abs(lam)
        for _ in range(80):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if abs(RK4(mid * lam)) <= 1.0 else (lo, mid)
        h = min(h, lo)
    return h


def test_orders_of_convergence():
    model = chain(6, "planar", length=0.1, mass=0.1, damping=0.002, stiffness=0.05)
    q0, v0 = np.full(6, 0.3), np.zeros(6)
    ref = db.simulate(model, q0, v0, 0.2, 1e-5)
    for method, order in (("implicit-euler", 1), ("sdirk2", 2)):
        errors = [
            np.abs(db.simulate(model, q0, v0, 0.2, dt, method=method).q[-1] - ref.q[-1]).max()
            for dt in (1e-3, 5e-4, 2.5e-4)
        ]
        ratios = [errors[i] / errors[i + 1] for i in range(2)]
        assert all(abs(np.log2(r) - order) < 0.15 for r in ratios), (method, errors)


def test_newton_krylov_equals_dense(monkeypatch):
    model = chain(12, "planar", length=0.05, mass=0.05, damping=0.01, stiffness=0.2)
    q0, v0 = np.full(12, 0.2), np.zeros(12)
    dense = db.simulate(model, q0, v0, 0.1, 5e-3, method="sdirk2")
    assert dense.solver_stats["jacobian"] == "dense"
    monkeypatch.setattr(implicit, "DENSE_MAX_DOF", 0)
    krylov = db.simulate(model, q0, v0, 0.1, 5e-3, method="sdirk2")
    assert krylov.solver_stats["jacobian"] == "gmres" and krylov.solver_stats["linear_iterations"] > 0
    assert np.abs(krylov.q - dense.q).max() < 1e-8
    assert np.abs(krylov.v - dense.v).max() < 1e-7


def test_stiff_springs_and_dampers_far_beyond_rk4():
    model = chain(10, "planar", length=0.1, mass=0.1, stiffness=20.0, damping=0.5)
    q0, v0 = 0.3 * np.sin(np.linspace(0, np.pi, 10)), np.zeros(10)
    h = rk4_limit(model, q0, v0)
    H = 100 * h
    ref = db.simulate(model, q0, v0, 4 * H, H / 400, save_every=400)
    with pytest.raises(db.SimulationError):
        db.simulate(model, q0, v0, 100 * h, H / 50)  # RK4 at twice its limit diverges
    for method, per, tol, dissipation in (("sdirk2", 4, 2e-3, 2e-3), ("implicit-euler", 4, 3e-2, 0.3)):
        tr = db.simulate(model, q0, v0, 4 * H, H / per, method=method, save_every=per)  # 25 h_rk4
        assert np.abs(tr.q - ref.q).max() < tol
        E, E_ref = tr.total_energy, ref.total_energy
        assert abs((E[0] - E[-1]) - (E_ref[0] - E_ref[-1])) < dissipation * (E_ref[0] - E_ref[-1])
        assert np.all(np.diff(E) < 1e-12)  # L-stable, dissipative: the energy never grows


def test_free_flyer_and_spherical_joints_on_their_manifolds():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", db.PhysicsWarning)
        model = random_model(seed=3, n_links=5, branching=0.3, floating_base=True)
    rng = np.random.default_rng(3)
    q0, v0 = db.random_configuration(model, rng), 0.3 * rng.standard_normal(model.nv)
    ref = db.simulate(model, q0, v0, 0.1, 1e-4, limits=False)
    errors = []
    for dt in (2e-3, 1e-3):
        tr = db.simulate(model, q0, v0, 0.1, dt, method="sdirk2")
        errors.append(np.abs(db.difference(model, ref.q[-1], tr.q[-1])).max())
    assert errors[1] < 1e-4
    assert 3.0 < errors[0] / errors[1] < 8.0  # second order on SE(3) too (first order: 2)


def test_refused_models_and_options():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", db.PhysicsWarning)
        mimic = db.load_robot("panda", mimic=True)
    with pytest.raises(db.InputError, match="runs trees"):
        db.simulate(mimic, db.neutral_configuration(mimic), np.zeros(mimic.nv), 0.01, 1e-3, method="sdirk2")
    fourbar = db.generators.fourbar()
    with pytest.raises(db.InputError, match="has 1 loop closure"):
        db.simulate(fourbar, db.neutral_configuration(fourbar), np.zeros(fourbar.nv), 0.01, 1e-3, method="sdirk2")
    model = chain(3)
    with pytest.raises(db.InputError, match="cholesky"):
        db.simulate(model, np.zeros(3), np.zeros(3), 0.01, 1e-3, method="implicit-euler", dynamics="cholesky")
    with pytest.raises(db.InputError, match="implicit-euler"):
        db.simulate(model, np.zeros(3), np.zeros(3), 0.01, 1e-3, method="backward")


@pytest.mark.slow
def test_1000_link_damped_chain_25x_beyond_rk4():
    """A 1,000-link damped chain hanging from its pin, released tilted (nv = 1,000: Newton-Krylov
    with the JVP): RK4's limit is 4.41e-3 s (examples/15_stiff_implicit.py: the fastest damping
    rate by ARPACK); RK4 diverges at twice it, implicit Euler at 25 times it stays within 0.1 rad
    of RK4 at a quarter of it and only loses energy."""
    n = 1_000
    model = chain(n, "planar", length=1.0 / n, mass=1.0 / n, damping=1e-3 / n)
    q0 = np.zeros(n)
    q0[0] = min((np.pi / 2, -np.pi / 2), key=lambda a: db.potential_energy(model, np.r_[a, np.zeros(n - 1)]))
    q0[0] += 0.3
    v0 = np.zeros(n)
    h_rk4 = 4.41e-3
    h = 25 * h_rk4
    with pytest.raises(db.SimulationError):
        db.simulate(model, q0, v0, 100 * h_rk4, 2 * h_rk4)
    ref = db.simulate(model, q0, v0, 2 * h, h / 100, save_every=100)
    tr = db.simulate(model, q0, v0, 2 * h, h, method="implicit-euler")
    assert tr.solver_stats["jacobian"] == "gmres"
    assert np.abs(tr.q - ref.q).max() < 0.1
    E = tr.total_energy
    assert np.all(np.diff(E) < 0)


def hanging_chain(n, tilt=0.3, damping=1e-3):
    """examples/15's long chain: 1 m, 1 kg, dampers damping / n, hanging from its pin (the first
    joint at +pi/2: the chain along -z) tilted by ``tilt``."""
    model = chain(n, "planar", length=1.0 / n, mass=1.0 / n, damping=damping / n)
    q0 = np.zeros(n)
    q0[0] = np.pi / 2 + tilt
    return model, q0


def test_geometric_stiffness_is_the_hessian_of_gravity_on_a_hanging_planar_chain():
    """sum_k J_k^T X_k J_k = d^2 V / dq^2 exactly on a planar chain in tension (the Hessian of the
    potential energy: d tau / dq of inverse dynamics at rest), seen through the shifted solver:
    (M + c^2 G)^-1 M."""
    n = 12
    model, q = hanging_chain(n)
    q = q + 0.1 * np.random.default_rng(5).standard_normal(n)
    E = np.eye(n)
    hess = db.inverse_dynamics_derivatives(model, q, np.zeros(n), np.zeros(n))[0]
    assert np.abs(hess - hess.T).max() < 1e-12 * np.abs(hess).max()
    assert np.linalg.eigvalsh(hess).min() > 0  # every link in tension: no eigenvalue dropped
    c = 0.3
    solve = shifted_mass_solver(model, q, np.zeros(n), c * c * implicit.geometric_stiffness(model, q))
    M = db.mass_matrix(model, q)
    P = M @ np.linalg.inv(np.array([solve(E[i]) for i in range(n)]).T)  # P^-1 M -> P
    assert np.abs((P - M) / (c * c) - hess).max() < 1e-9 * np.abs(hess).max()


def test_shifted_mass_solver_on_a_random_tree():
    """(M + diag(armature) + sum_k J_k^T X_k J_k)^-1 M x against the dense GIM of the model whose
    link inertias carry the X_k, at tiny and unit x (linear: no gravity to cancel)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", db.PhysicsWarning)
        model = random_model(seed=11, n_links=9, branching=0.4, floating_base=True)
        rng = np.random.default_rng(11)
        A = rng.standard_normal((model.n_links, 3, 3))
        X = np.einsum("kij,klj->kil", A, A)  # symmetric positive semi-definite
        heavy = model.replace(inertia=np.asarray(model.inertia) + X)
    q = db.random_configuration(model, rng)
    arm = rng.uniform(0.0, 2.0, model.nv)
    P = db.mass_matrix(heavy, q) + np.diag(arm)
    M = db.mass_matrix(model, q)
    solve = shifted_mass_solver(model, q, arm, X)
    for scale in (1.0, 1e-12):
        x = scale * rng.standard_normal(model.nv)
        expected = np.linalg.solve(P, M @ x)
        assert np.abs(solve(x) - expected).max() < 1e-11 * np.abs(expected).max()


def test_link_forces_are_mass_times_centre_of_mass_acceleration_minus_gravity():
    model, _ = hanging_chain(5)
    rng = np.random.default_rng(2)
    q, v, a = rng.standard_normal((3, 5))
    R, _ = db.forward_kinematics(model, q)
    F = np.einsum("kij,kj->ki", R, link_forces(model, q, v, a))

    def com(t):
        Rt, pt = db.forward_kinematics(model, q + v * t + 0.5 * a * t * t)
        return pt + np.einsum("kij,kj->ki", Rt, model.com)

    t = 1e-4
    acc = (com(t) - 2 * com(0) + com(-t)) / t**2
    expected = np.asarray(model.mass)[:, None] * (acc - model.gravity)
    assert np.abs(F - expected).max() < 1e-7 * np.abs(expected).max()


def test_preconditioned_newton_krylov_equals_dense_newton_on_a_long_chain(monkeypatch):
    """200 links, 100 times RK4's limit (2.7e-3 s, by bisection as in benchmarks/implicit_large.py):
    GMRES with the geometric-stiffness preconditioner takes a handful of iterations per Newton
    step and gives the dense Newton's step; with the dampers-only preconditioner of before it
    takes tens (the tension stiffness of the hanging chain is left to GMRES)."""
    n = 200
    model, q0 = hanging_chain(n)
    v0, h = np.zeros(n), 100 * 2.7e-3
    dense = db.simulate(model, q0, v0, 2 * h, h, method="implicit-euler")
    assert dense.solver_stats["jacobian"] == "dense"
    monkeypatch.setattr(implicit, "DENSE_MAX_DOF", 0)
    krylov = db.simulate(model, q0, v0, 2 * h, h, method="implicit-euler")
    stats = krylov.solver_stats
    assert stats["jacobian"] == "gmres"
    assert np.abs(krylov.q - dense.q).max() < 1e-9
    assert np.abs(krylov.v - dense.v).max() < 1e-8
    assert stats["max_linear_iterations"] <= 8, stats
    assert stats["linear_iterations"] <= 4 * stats["newton_iterations"], stats
    monkeypatch.setattr(implicit, "PRECONDITIONER", "passive")
    passive = db.simulate(model, q0, v0, h, h, method="implicit-euler")
    assert passive.solver_stats["max_linear_iterations"] > 30, passive.solver_stats
    assert np.abs(passive.q[-1] - krylov.q[1]).max() < 1e-8


@pytest.mark.slow
def test_3000_link_damped_chain_100x_beyond_rk4_with_few_gmres_iterations():
    """3,000 links, sdirk2 at 100 times RK4's limit (2.3e-3 s, measured by bisection as in
    benchmarks/implicit_large.py; RK4 at twice it diverges): at most 8 GMRES iterations per
    Newton step, the free end within 8 cm of RK4 at a tenth of the limit after 0.92 s (four steps
    of sdirk2), and the
    energy never grows."""
    n = 3_000
    model, q0 = hanging_chain(n)
    v0, h_rk4 = np.zeros(n), 2.3e-3
    with pytest.raises(db.SimulationError):
        db.simulate(model, q0, v0, 1000 * h_rk4, 2 * h_rk4)
    T = 4 * 100 * h_rk4
    ref = db.simulate(model, q0, v0, T, h_rk4 / 10, save_every=1000)
    tr = db.simulate(model, q0, v0, T, 100 * h_rk4, method="sdirk2")
    stats = tr.solver_stats
    assert stats["jacobian"] == "gmres" and stats["max_linear_iterations"] <= 8, stats

    def tip(q):
        R, p = db.forward_kinematics(model, q)
        return p[-1] + R[-1] @ np.array([1.0 / n, 0.0, 0.0])

    assert np.linalg.norm(tip(tr.q[-1]) - tip(ref.q[-1])) < 0.08  # measured 0.057 m (implicit Euler: ~0.3 m)
    assert np.all(np.diff(tr.total_energy) < 1e-12)


def test_spatial_hanging_chain_on_the_preconditioned_path(monkeypatch):
    """A spatial chain (two revolute joints per rod, 3D swing), 100 times RK4's limit: the
    geometric stiffness holds in 3D too (a handful of GMRES iterations per Newton step, the
    dense Newton's steps); the dampers-only preconditioner needs tens."""
    n = 40
    model = chain(n, "spatial", length=1.0 / n, mass=1.0 / n, damping=1e-3 / n)
    hanging = []
    for j in (0, 1):
        for angle in (np.pi / 2, -np.pi / 2):
            q = np.zeros(model.nq)
            q[j] = angle
            hanging.append((db.potential_energy(model, q), j, q))
    q0 = min(hanging, key=lambda x: x[:2])[2]
    q0[:2] += (0.3, 0.2)
    v0, h = np.zeros(model.nv), 0.23
    dense = db.simulate(model, q0, v0, 2 * h, h, method="sdirk2")
    monkeypatch.setattr(implicit, "DENSE_MAX_DOF", 0)
    krylov = db.simulate(model, q0, v0, 2 * h, h, method="sdirk2")
    assert np.abs(krylov.q - dense.q).max() < 1e-9
    assert krylov.solver_stats["max_linear_iterations"] <= 10, krylov.solver_stats
    monkeypatch.setattr(implicit, "PRECONDITIONER", "passive")
    passive = db.simulate(model, q0, v0, h, h, method="implicit-euler")
    assert passive.solver_stats["max_linear_iterations"] > 30, passive.solver_stats


LIGHT = dict(length=0.05, mass=0.004)  # eigenvalues of M^-1 up to ~1e6: a PD is stiff for it


@pytest.mark.parametrize("krylov", [False, True])
def test_a_stiff_pd_controller_converges_as_the_same_springs_and_dampers(krylov, monkeypatch):
    """A controller ``tau = -Kp (q - q*) - Kd v`` is the model's springs and dampers: the implicit
    runs of both must agree.  The controller enters Newton's matrix by forward differences; left
    out (as before), Newton diverged at the first step on this light chain."""
    if krylov:
        monkeypatch.setattr(implicit, "DENSE_MAX_DOF", 0)
    model = chain(4, "planar", **LIGHT)
    Kp, Kd, target = np.array([2.0, 1.0, 0.5, 0.2]), np.array([0.05, 0.03, 0.02, 0.01]), np.full(4, 0.3)
    springs = model.replace(stiffness=Kp, damping=Kd, rest_configuration=target)
    q0, v0 = np.zeros(4), np.zeros(4)
    for method in ("implicit-euler", "sdirk2"):
        ref = db.simulate(springs, q0, v0, 0.2, 2e-3, method=method, progress=False)
        pd = db.simulate(model, q0, v0, 0.2, 2e-3, method=method, tau=lambda t, q, v: -Kp * (q - target) - Kd * v)
        assert pd.status == "completed" and np.abs(ref.q[-1] - target).max() < 0.05  # it got there
        assert np.abs(pd.q - ref.q).max() < 1e-8 and np.abs(pd.v - ref.v).max() < 1e-6, method
        assert pd.solver_stats["newton_iterations"] <= 1.5 * ref.solver_stats["newton_iterations"]


@pytest.mark.parametrize("krylov", [False, True])
def test_velocity_dependent_wrenches_converge_as_the_same_dampers(krylov, monkeypatch):
    """Torque pairs about the joint axes (y) on each link and its parent, ``-/+ c_k v_k``, are joint
    dampers c: the wrenches' dependence on v enters Newton's matrix through the Jacobians."""
    if krylov:
        monkeypatch.setattr(implicit, "DENSE_MAX_DOF", 0)
    model = chain(4, "planar", **LIGHT)
    c = np.array([0.05, 0.03, 0.02, 0.01])

    def wrenches(t, q, v):
        F = np.zeros((4, 6))
        F[:, 4] -= c * v
        F[:-1, 4] += c[1:] * v[1:]  # the reaction on the parent
        return F

    q0, v0 = np.full(4, 0.4), np.zeros(4)
    ref = db.simulate(model.replace(damping=c), q0, v0, 0.2, 2e-3, method="sdirk2")
    tr = db.simulate(model, q0, v0, 0.2, 2e-3, method="sdirk2", f_ext=wrenches)
    assert np.abs(tr.q - ref.q).max() < 1e-8 and np.abs(tr.v - ref.v).max() < 1e-6


def test_joint_limits_hold_with_the_implicit_methods():
    """panda falls with panda_joint4 on its limit: with the implicit methods the stops act after
    each step as with rk4, so the run follows a fine rk4 with stops, converging as dt shrinks (at
    first order: a stop ends inside a step); limits=False lets the joints pass (3.4 rad away)."""
    model = db.load_robot("panda")
    q0 = np.clip(db.neutral_configuration(model), model.lower_limit, model.upper_limit)
    v0, lo, hi = np.zeros(model.nv), model.lower_limit, model.upper_limit
    ref = db.simulate(model, q0, v0, 0.5, 1e-4, save_every=10)
    for method in ("implicit-euler", "sdirk2"):
        errors = []
        for dt in (1e-3, 5e-4):
            tr = db.simulate(model, q0, v0, 0.5, dt, method=method, save_every=round(1e-3 / dt))
            assert np.all(tr.q >= lo - 1e-12) and np.all(tr.q <= hi + 1e-12), method
            assert tr.limit_work is not None and tr.limit_work[-1] > 0.5 * ref.limit_work[-1] > 0, method
            errors.append(np.abs(tr.q - ref.q).max())
        assert errors[1] < 2e-2 and errors[0] / errors[1] > 1.6, (method, errors)
    free = db.simulate(model, q0, v0, 0.5, 1e-3, method="sdirk2", limits=False, save_every=1)
    assert np.abs(free.q - ref.q).max() > 1.0
