"""compare_with_pinocchio detects mismatches (and passes on agreement)."""

from __future__ import annotations

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge import validation
from denoc_bridge.errors import InputError
from denoc_bridge.testing import random_model
from denoc_bridge.validation import compare_with_pinocchio, exact_solve


def test_agreement_passes_and_a_wrong_model_fails():
    model = random_model(4, 6, floating_base=True)
    report = compare_with_pinocchio(model, samples=2)
    assert report.passed, report.table()
    pm = db.to_pinocchio(model)
    pm.inertias[3] = pm.inertias[3].__class__(pm.inertias[3].mass * 1.001, pm.inertias[3].lever, pm.inertias[3].inertia)
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
    M = Q @ np.diag(np.logspace(0, -9, 6)) @ Q.T  # kappa = 1e9
    rhs = rng.standard_normal(6)
    exact = exact_solve(M, rhs)
    d = Q[:, -1] / np.abs(Q[:, -1]).max()  # the badly conditioned direction
    scale = np.abs(exact).max()
    pin_value = exact + 1e-8 * scale * d  # Pinocchio 1e-8 from the exact solution
    ok, info = solve_agreement(exact + 2e-9 * scale * d, pin_value, M, rhs, M, rhs, 1e-9)
    assert info["error"] > 1e-9 and info["ours_vs_exact"] > 1e-9 and ok, info  # ours closer than Pinocchio
    ok, info = solve_agreement(exact + 3e-8 * scale * d, pin_value, M, rhs, M, rhs, 1e-9)
    assert info["ours_vs_exact"] > info["pin_vs_exact"] and not ok, info  # ours further: mismatch


def test_relative_error_sees_non_finite_values():
    from denoc_bridge.validation import relative_error

    assert relative_error([1.0, np.nan], [1.0, 2.0]) == np.inf  # ours NaN
    assert relative_error([1.0, 2.0], [np.nan, 2.0]) == np.inf  # the reference NaN
    assert relative_error([np.nan], [np.nan]) == np.inf  # NaN agrees with nothing
    assert relative_error([1.0, np.inf], [1.0, 2.0]) == np.inf
    assert relative_error([1.0, -np.inf], [1.0, np.inf]) == np.inf
    assert relative_error([1.5, np.inf], [1.0, np.inf]) == 0.5  # a shared inf: the rest decides
    assert relative_error([np.inf], [np.inf]) == 0.0
    assert max(0.0, relative_error([np.nan], [0.0])) == np.inf  # max() keeps it (max(0, nan) == 0)


def test_solve_agreement_fails_on_non_finite_and_singular_problems_without_raising():
    from denoc_bridge.validation import solve_agreement

    M, rhs = np.diag([2.0, 1.0]), np.array([1.0, 1.0])
    ok, info = solve_agreement(np.array([0.5, np.nan]), np.array([0.5, 1.0]), M, rhs, M, rhs, 1e-9)
    assert not ok and info["reason"] == "non-finite values" and info["error"] == np.inf, info
    bad = np.diag([2.0, np.nan])
    ok, info = solve_agreement(np.array([0.5, 1.0]), np.array([0.5, 2.0]), bad, rhs, M, rhs, 1e-9)
    assert not ok and info["reason"] == "non-finite values", info
    S = np.array([[1.0, 1.0], [1.0, 1.0]])  # singular: no exact solution
    ok, info = solve_agreement(np.array([0.5, 0.5]), np.array([1.0, 0.0]), S, rhs, S, rhs, 1e-9)
    assert not ok and info["kappa"] == np.inf and "singular" in info["reason"], info


def test_a_nan_from_pinocchio_is_a_mismatch_not_a_pass(monkeypatch):
    import pinocchio as pin

    model = random_model(3, 11)
    real_aba, real_crba = pin.aba, pin.crba

    def nan_aba(*args):
        out = np.array(real_aba(*args))
        out[-1] = np.nan
        return out

    def nan_crba(*args):
        out = np.array(real_crba(*args))
        out[0, 0] = np.nan
        return out

    monkeypatch.setattr(pin, "aba", nan_aba)
    report = compare_with_pinocchio(model, samples=1)
    fd = next(c for c in report.checks if c.quantity == "forward_dynamics")
    assert not fd.passed and fd.max_error == np.inf and not report.passed, report.table()
    assert "non-finite values: denoc_bridge finite, Pinocchio NOT finite" in report.table()
    monkeypatch.setattr(pin, "aba", real_aba)
    monkeypatch.setattr(pin, "crba", nan_crba)
    report = compare_with_pinocchio(model, samples=1)
    failed = {c.quantity: c.max_error for c in report.checks if not c.passed}
    assert failed == {"mass_matrix": np.inf}, report.table()  # aba and computeMinverse agree still


def test_quantities_picks_the_checks_and_refuses_unknown_names():
    model = db.load_robot("panda")
    report = compare_with_pinocchio(model, samples=1, quantities=("forward_dynamics", "forward_kinematics"))
    assert [c.quantity for c in report.checks] == ["forward_dynamics", "forward_kinematics"]
    assert report.passed
    with pytest.raises(InputError, match="'mass_matrixx'"):
        compare_with_pinocchio(model, samples=1, quantities=("mass_matrixx",))
    with pytest.raises(InputError, match="none"):
        compare_with_pinocchio(model, samples=1, quantities=())


def test_forward_dynamics_check_forms_no_gim_when_the_solutions_agree(monkeypatch):
    # simulate's check compiles only what the simulation uses: the GIM and the bias forces of
    # the conditioning fallback are asked for only when the two solutions differ
    def refuse(*args, **kwargs):
        raise AssertionError("the GIM was formed")

    monkeypatch.setattr(validation, "mass_matrix", refuse)
    monkeypatch.setattr(validation, "nonlinear_effects", refuse)
    report = compare_with_pinocchio(db.load_robot("panda"), samples=2, quantities=("forward_dynamics",))
    assert report.passed and report.checks[0].max_error < 1e-12


def test_an_ill_conditioned_solve_still_gets_the_conditioning_fallback(monkeypatch):
    # with a tolerance below the round-off, the fallback runs and forms both GIMs
    calls = []
    monkeypatch.setattr(validation, "mass_matrix", lambda m, q: calls.append(q) or db.mass_matrix(m, q))
    compare_with_pinocchio(db.load_robot("panda"), samples=1, tol=1e-18, quantities=("forward_dynamics",))
    assert len(calls) == 1


def test_the_vs_exact_column_shows_only_when_a_check_has_it(capsys):
    """ "vs exact" (ours against the exact solution of an ill-conditioned problem) is a column of
    the table, and of the command line's, only when a check filled it."""
    from denoc_bridge.cli.validate import report_table

    plain = validation.ValidationReport("m", 2, 1, 1e-9, [validation.Check("mass_matrix", "pin.crba", 1e-16)])
    assert "vs exact" not in plain.table()
    report_table(plain)
    assert "vs exact" not in capsys.readouterr().out
    hard = validation.Check("forward_dynamics", "pin.aba", 3e-8, max_error_vs_exact=2e-10)
    ill = validation.ValidationReport("m", 2, 1, 1e-9, [plain.checks[0], hard])
    table = ill.table()
    assert "vs exact" in table and "2.0e-10" in table.splitlines()[-1]
    report_table(ill)
    out = capsys.readouterr().out
    assert "vs exact" in out and "2.0e-10" in out
