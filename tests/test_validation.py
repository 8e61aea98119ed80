"""compare_with_pinocchio detects mismatches (and passes on agreement)."""

from __future__ import annotations

import numpy as np

import denoc_bridge as db
from denoc_bridge.testing import random_model
from denoc_bridge.validation import compare_with_pinocchio, exact_solve


def test_agreement_passes_and_a_wrong_model_fails():
    model = random_model(4, 6, floating_base=True)
    report = compare_with_pinocchio(model, samples=2)
    assert report.passed, report.table()
    pm = db.to_pinocchio(model)
    pm.inertias[3] = pm.inertias[3].__class__(pm.inertias[3].mass * 1.001, pm.inertias[3].lever,
                                              pm.inertias[3].inertia)
    bad = compare_with_pinocchio(model, pm, samples=2)
    assert not bad.passed
    failed = {c.quantity for c in bad.checks if not c.passed}
    assert {"inverse_dynamics", "mass_matrix", "forward_dynamics", "inverse_mass_matrix"} <= failed
    assert "MISMATCH" in bad.table()


def test_exact_solve_beats_plain_solve_on_an_ill_conditioned_system():
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.standard_normal((8, 8)))
    M = Q @ np.diag(np.logspace(0, -11, 8)) @ Q.T
    x = rng.standard_normal(8)
    b = M @ x
    exact = exact_solve(M, b)
    assert np.abs(M.astype(np.longdouble) @ exact - b).max() <= np.abs(M @ np.linalg.solve(M, b) - b).max()


def test_solve_agreement_on_an_ill_conditioned_system_accepts_no_worse_than_pinocchio():
    from denoc_bridge.validation import solve_agreement

    rng = np.random.default_rng(3)
    Q, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    M = Q @ np.diag(np.logspace(0, -9, 6)) @ Q.T                # kappa = 1e9
    rhs = rng.standard_normal(6)
    exact = exact_solve(M, rhs)
    d = Q[:, -1] / np.abs(Q[:, -1]).max()                       # the badly conditioned direction
    scale = np.abs(exact).max()
    pin_value = exact + 1e-8 * scale * d                        # Pinocchio 1e-8 from the exact solution
    ok, info = solve_agreement(exact + 2e-9 * scale * d, pin_value, M, rhs, M, rhs, 1e-9)
    assert info["error"] > 1e-9 and info["ours_vs_exact"] > 1e-9 and ok, info      # ours closer than Pinocchio
    ok, info = solve_agreement(exact + 3e-8 * scale * d, pin_value, M, rhs, M, rhs, 1e-9)
    assert info["ours_vs_exact"] > info["pin_vs_exact"] and not ok, info            # ours further: mismatch
