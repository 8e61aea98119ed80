"""The implicit methods of simulate (implicit-euler, sdirk2): orders of convergence against a fine
RK4, the matrix-free Newton-Krylov path against the dense one, stiff chains far beyond RK4's
stability limit, manifolds, refusals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import denoc_bridge as db
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
    with pytest.raises(db.InputError, match="loop closures"):
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
