"""The frictional contact solver (PGS on Coulomb cones) against Pinocchio 4.1's
ADMMConstraintSolver and PGSConstraintSolver on the same Delassus problems, and against the
analytic answers of one contact."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

import denoc_bridge as db
from denoc_bridge.constraints.contact import FALLBACK_TOL, LAST_RESORT_TOL, delassus_matrix, solve_contact
from denoc_bridge.constraints.contact_admm import achieved, admm, cone_residuals, project_cones
from denoc_bridge.core import contact as _cc
from denoc_bridge.errors import InputError
from denoc_bridge.multibody.contact import Ground, contact_point

TOL = 1e-12  # both solvers' stopping tolerance
AGREE = 1e-8  # relative agreement of the impulses


def ncp_residual(G, g, mu, m, lam):
    """The largest violation of the contact conditions by lam (the oracle, written from the
    problem's statement in core/contact_solver.pxi): outside a cone, a negative normal velocity,
    Signorini's complementarity lambda_n sigma_n, a sticking contact that slips, a sliding one
    whose friction does not oppose its slip (in impulse x velocity units where it applies)."""
    sigma = (G @ lam + g).reshape(m, 3)
    L = lam.reshape(m, 3)
    ln, lt = L[:, 2], np.hypot(L[:, 0], L[:, 1])
    st = np.hypot(sigma[:, 0], sigma[:, 1])
    worst = [-ln, lt - mu * ln, -sigma[:, 2], np.abs(ln * sigma[:, 2])]
    # maximal dissipation: lambda_t . sigma_t = -|lambda_t| |sigma_t| (complementary slackness)
    worst.append(np.abs(L[:, 0] * sigma[:, 0] + L[:, 1] * sigma[:, 1] + lt * st))
    worst.append(np.where(lt < mu * ln * (1.0 - 1e-9), st * (mu * ln - lt), 0.0))
    return float(max(0.0, *(float(w.max(initial=0.0)) for w in worst)))


def pinocchio_impulses(G, g, mu, kind, tol=TOL):
    """Pinocchio's solution of the same problem: point contacts carrying Coulomb cones (their
    Jacobians do not enter: the solvers see only G, g and the cones)."""
    model = pin.Model()
    j = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "ff")
    model.appendBodyToJoint(j, pin.Inertia.FromBox(1.0, 1.0, 1.0, 1.0), pin.SE3.Identity())
    cms = pin.StdVec_ConstraintModel()
    for mu_i in mu:
        cm = pin.PointContactConstraintModel(model, 1, pin.SE3.Identity())
        cm.setFriction(float(mu_i))
        cms.append(pin.ConstraintModel(cm))
    cds = pin.StdVec_ConstraintData([c.createData() for c in cms])
    n = len(g)
    if kind == "admm":
        s, res, solver = pin.ADMMSolverSettings(), pin.ADMMSolverResult(), pin.ADMMConstraintSolver(n)
        s.lanczos_size = n
    else:
        s, res, solver = pin.PGSSolverSettings(), pin.PGSSolverResult(), pin.PGSConstraintSolver(n)
    s.absolute_feasibility_tol = s.absolute_complementarity_tol = tol
    s.relative_feasibility_tol = s.relative_complementarity_tol = tol
    s.max_iterations = 100_000
    converged = solver.solve(pin.DelassusOperatorDense(np.asarray(G)), np.asarray(g), cms, cds, s, res)
    return converged, res.retrieveConstraintImpulses().copy()


def assert_agrees(G, g, mu):
    """Our impulses solve the problem and equal ADMM's; and PGS's where Pinocchio's PGS finds a
    solution (it stalls, or stops early, on some sticking and frictionless problems: measured,
    its answer then violates the contact conditions, so it is no reference there).  Returns
    whether PGS was compared."""
    ours = solve_contact(G, g, mu, tol=TOL)
    assert ours.converged
    bound = 1e-10 * (1 + np.abs(g).max())
    assert ncp_residual(G, g, mu, len(mu), ours.lam) < bound
    compared_pgs = False
    for kind in ("admm", "pgs"):
        converged, lam = pinocchio_impulses(G, g, mu, kind)
        if kind == "pgs" and not (converged and ncp_residual(G, g, mu, len(mu), lam) < bound):
            continue
        assert converged, kind
        assert np.abs(ours.lam - lam).max() <= AGREE * max(np.abs(lam).max(), 1e-300), kind
        compared_pgs |= kind == "pgs"
    return compared_pgs


def random_problem(seed):
    """(G, g, mu, m): a positive definite Delassus matrix of 1-5 contacts, free velocities, cones."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 6))
    A = rng.normal(size=(3 * m, 3 * m + 4))
    return A @ A.T + 0.01 * np.eye(3 * m), rng.normal(size=3 * m), rng.uniform(0.1, 1.5, m), m


def test_random_problems_match_pinocchio():
    compared_pgs = 0
    for seed in range(12):
        G, g, mu, _ = random_problem(seed)
        compared_pgs += assert_agrees(G, g, mu)
    assert compared_pgs >= 8  # Pinocchio's PGS solved most of them too


@pytest.mark.parametrize(
    "velocity, mu",
    [
        ((0.0, 0.0, -1.0), 0.7),
        ((0.3, 0.0, -1.0), 0.7),
        ((2.0, -1.0, -0.2), 0.4),
        ((0.1, 0.2, 0.5), 0.7),
        ((1.0, 0.0, -1.0), 0.0),
    ],
)
def test_solo12_feet_problem_matches_pinocchio(velocity, mu):
    """The Delassus problem of solo12's four feet on the ground (sticking, sliding, opening)."""
    solo = db.load_robot("solo12")
    q = db.integrate(solo, db.neutral_configuration(solo), np.random.default_rng(0).uniform(-0.3, 0.3, solo.nv))
    feet = [contact_point(solo, f, margin=10.0) for f in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")]
    G, c = delassus_matrix(solo, q, feet, Ground(height=-1.0, mu=mu))
    g = np.tile(velocity, 4) + 0.05 * np.random.default_rng(1).normal(size=12)
    assert_agrees(G, g, c.mu)


def test_one_contact_analytic():
    """One contact with G = I: sticking cancels the velocity, sliding clamps to the cone with the
    friction against the slip, separating leaves it alone."""
    G, mu = np.eye(3), np.array([0.5])
    stick = solve_contact(G, np.array([0.2, -0.1, -1.0]), mu)
    np.testing.assert_allclose(stick.lam, [-0.2, 0.1, 1.0], atol=1e-14)
    np.testing.assert_allclose(stick.sigma, 0.0, atol=1e-14)
    slide = solve_contact(G, np.array([3.0, 4.0, -1.0]), mu)
    np.testing.assert_allclose(slide.lam, [-0.3, -0.4, 1.0], atol=1e-14)  # |lambda_t| = mu lambda_n
    np.testing.assert_allclose(slide.sigma, [2.7, 3.6, 0.0], atol=1e-14)  # slip continues, opposed
    free = solve_contact(G, np.array([3.0, 4.0, 0.5]), mu)
    np.testing.assert_array_equal(free.lam, 0.0)


def test_warm_start_and_limits():
    rng = np.random.default_rng(5)
    A = rng.normal(size=(12, 16))
    G, g, mu = A @ A.T + 0.01 * np.eye(12), rng.normal(size=12) - (0, 0, 1) * 4, np.full(4, 0.8)
    cold = solve_contact(G, g, mu)
    warm = solve_contact(G, g, mu, cold.lam)
    assert warm.converged and warm.sweeps < cold.sweeps
    np.testing.assert_allclose(warm.lam, cold.lam, atol=1e-10 * np.abs(cold.lam).max())
    short = solve_contact(G, g, mu, max_iter=1)
    assert not short.converged and short.sweeps == 1
    outside = solve_contact(G, g, mu, np.tile([5.0, 0.0, -1.0], 4))  # a warm start outside the cones
    np.testing.assert_allclose(outside.lam, cold.lam, atol=1e-9 * np.abs(cold.lam).max())


@pytest.mark.parametrize(
    "args, words",
    [
        ((np.eye(3), np.zeros(2), [0.5]), "g"),
        ((np.eye(2), np.zeros(3), [0.5]), "G"),
        ((np.eye(3), np.full(3, np.nan), [0.5]), "g has non-finite"),
        ((np.eye(3), np.zeros(3), [-0.5]), "mu must be >= 0"),
    ],
)
def test_bad_problems_are_refused(args, words):
    with pytest.raises(InputError, match=words):
        solve_contact(*args)


def _resting_box_problem():
    """A 2 kg box resting on its four bottom corners (0.2 x 0.3 x 0.1 m), one 1 ms step: G, g, mu.
    Indeterminate: 12 impulses for the box's 6 DOF."""
    box = db.load_urdf(
        """<robot name="box"><link name="box"><inertial><mass value="2"/>
        <inertia ixx="0.0166667" iyy="0.0083333" izz="0.0216667" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>""",
        floating_base=True,
    )
    corners = [
        db.ContactPoint(0, np.array([sx * 0.1, sy * 0.15, -0.05]), name=f"c{sx}{sy}")
        for sx in (-1, 1)
        for sy in (-1, 1)
    ]
    q = db.neutral_configuration(box)
    q[2] = 0.05
    G, contacts = delassus_matrix(box, q, corners, [Ground()])
    assert contacts.m == 4
    g = np.tile([0.0, 0.0, -9.81e-3], 4)  # the free velocity after one step of gravity
    return G, g, np.full(4, 0.8)


def test_pgs_that_crawls_falls_back_on_the_all_sticking_solution():
    """PGS cut short (one sweep) from a warm start drifted along the null space (as PGS left it
    after a flat box landed, where it crawled past 10,000 sweeps): the answer is then the
    minimum-norm sticking one: every
    corner stopped, inside its cone, carrying a quarter of the weight; the contact conditions
    hold (ncp_residual)."""
    G, g, mu = _resting_box_problem()
    drifted = np.array(
        [0.00023, 0.00347, 0.0058, 0.00122, -0.00226, 0.00401, 0.00058, 0.00236, 0.00401, -0.00203, -0.00358, 0.0058]
    )
    pgs_alone = solve_contact(G, g, mu, drifted, max_iter=1)
    assert pgs_alone.method == "sticking" and pgs_alone.converged and pgs_alone.sweeps == 1
    assert np.abs(pgs_alone.sigma).max() < 1e-12
    np.testing.assert_allclose(pgs_alone.lam[2::3], 2 * 9.81e-3 / 4, rtol=1e-9)
    assert np.abs(pgs_alone.lam[0::3]).max() < 1e-15 and np.abs(pgs_alone.lam[1::3]).max() < 1e-15
    assert ncp_residual(G, g, mu, 4, pgs_alone.lam) < 1e-12
    converged = solve_contact(G, g, mu)  # from a cold start PGS converges itself
    assert converged.method == "pgs" and converged.converged


def test_sticking_is_not_taken_where_the_box_must_slide():
    """A sideways free velocity friction cannot stop (mu = 0.1): the sticking impulses lie outside
    the cones, so a PGS cut short (one sweep) does not take them; the later fallbacks answer to
    their looser tolerance, with the sliding velocities PGS finds in full."""
    G, g, _ = _resting_box_problem()
    g = g + np.tile([1.0, 0.0, 0.0], 4)
    mu = np.full(4, 0.1)
    short = solve_contact(G, g, mu, max_iter=1)
    assert short.method != "sticking" and short.converged and 1e-12 < short.tolerance <= LAST_RESORT_TOL
    full = solve_contact(G, g, mu)  # PGS finds the sliding answer
    assert full.converged and full.method == "pgs" and full.tolerance == 1e-12
    np.testing.assert_allclose(short.sigma, full.sigma, atol=1e-6 * np.abs(g).max())


# ----------------------------------------------------------------------- ADMM, where PGS stalls
DATA = Path(__file__).parent / "data"


def test_admm_equals_pinocchio_s_admm_on_random_problems():
    """The ADMM fallback alone (constraints.contact_admm) on the random problems above: the same
    impulses as Pinocchio's ADMMConstraintSolver (unique: G is positive definite)."""
    for seed in range(8):
        G, g, mu, m = random_problem(seed)
        lam, iterations, met = admm(G, g, mu, np.zeros(3 * m), 1e-12, 100_000)
        assert met <= 1e-12 and 0 < iterations < 100_000
        assert ncp_residual(G, g, mu, m, lam) < 1e-10 * (1 + np.abs(g).max())
        ok, ref = pinocchio_impulses(G, g, mu, "admm")
        assert ok
        assert np.abs(lam - ref).max() <= 1e-8 * np.abs(ref).max()


def test_a_talos_landing_that_stalls_pgs_is_answered_by_admm():
    """The contact problem of talos's soles at a landing (40 contacts, G of rank 12 among 120
    rows, saved from a run with an explicit posture PD): PGS cycles about 5e-6 short of its
    tolerance; ADMM answers to the fallback tolerance, with the velocities Pinocchio's ADMM finds
    (the impulses are not unique; the velocities are)."""
    d = np.load(DATA / "talos_landing_contact.npz")
    G, g, mu = d["G"], d["g"], d["mu"]
    m = len(mu)
    lam, sigma = np.zeros(3 * m), np.zeros(3 * m)
    sweeps, change = _cc.pgs_state(G, g, mu, m, lam, sigma, 1e-12, 10_000)
    assert sweeps == 10_001 and change > 1e-7  # stalled, far from round-off
    sol = solve_contact(G, g, mu, tol=1e-12)
    assert sol.converged and sol.method == "admm" and 1e-12 < sol.tolerance <= FALLBACK_TOL
    opening, comp = cone_residuals(G, g, mu, sol.lam)
    scale = np.abs(g).max()
    assert opening <= FALLBACK_TOL * scale and comp <= FALLBACK_TOL * scale * np.abs(sol.lam).max()
    ok, ref = pinocchio_impulses(G, g, mu, "admm", tol=1e-10)
    assert ok
    np.testing.assert_allclose(sol.sigma, G @ ref + g, atol=1e-6 * scale)
    assert sol.lam[2::3].sum() == pytest.approx(ref[2::3].sum(), rel=1e-7)  # the total normal impulse


def test_cone_projection():
    mu = np.array([0.5, 0.5, 0.5, 0.5])
    x = np.array([0.1, 0.0, 1.0, 0.0, 0.0, -1.0, 3.0, 4.0, 1.0, 1.0, 0.0, -0.1])
    y = project_cones(x, mu).reshape(4, 3)
    np.testing.assert_array_equal(y[0], [0.1, 0.0, 1.0])  # inside: kept
    np.testing.assert_array_equal(y[1], [0.0, 0.0, 0.0])  # in the polar cone: the apex
    for k, v in ((2, x[6:9]), (3, x[9:12])):  # onto the side: on the cone, the nearest point
        assert np.hypot(y[k, 0], y[k, 1]) == pytest.approx(0.5 * y[k, 2], rel=1e-12)
        assert np.dot(v - y[k], y[k]) == pytest.approx(0.0, abs=1e-12)  # the residual is normal to it


def test_where_admm_stalls_its_best_answer_meets_the_last_resort_tolerance():
    """icub folding up under the posture hold (16 contacts, G of rank 12): PGS stalls, and ADMM
    stalls short of 1e-8 (so does Pinocchio's short of 1e-10 absolute); its best answer meets
    1e-6 (Pinocchio's ADMM's default tolerance) and is taken, saying so; the velocities are
    Pinocchio's ADMM's at that tolerance."""
    d = np.load(DATA / "icub_folding_contact.npz")
    G, g, mu = d["G"], d["g"], d["mu"]
    m = len(mu)
    lam, _, met = admm(G, g, mu, np.zeros(3 * m), FALLBACK_TOL, 50_000)
    assert FALLBACK_TOL < met <= LAST_RESORT_TOL
    sol = solve_contact(G, g, mu, tol=1e-12)
    assert sol.converged and sol.method == "admm" and FALLBACK_TOL < sol.tolerance <= LAST_RESORT_TOL
    # the tolerance the compiled ADMM measured, up to the round-off of G lam summed in another
    # order than NumPy's (measured: 2.6e-9 relative here)
    assert max(achieved(G, g, mu, sol.lam)) <= sol.tolerance * (1 + 1e-6)
    ok, ref = pinocchio_impulses(G, g, mu, "admm", tol=1e-8)
    assert ok
    np.testing.assert_allclose(sol.sigma, G @ ref + g, atol=2e-6 * np.abs(g).max())


def test_where_admm_cannot_pgs_goes_on_to_the_last_resort_tolerance():
    """solo12 folding onto 96 hull points (a soft hold): G (288 x 288, rank 17, saved as its
    factor F, G = F F^T) is a problem ADMM stalls on (ours at 0.18; Pinocchio's ADMM fails at 1e-6
    too), where PGS, continued from where it stopped, crawls below 1e-6 (Pinocchio's PGS solves it
    to 1e-6 as well).  solve_contact takes that answer and says so."""
    d = np.load(DATA / "solo12_folding_contact.npz")
    G, g, mu = d["F"] @ d["F"].T, d["g"], d["mu"]
    _, _, met = admm(G, g, mu, np.zeros(len(g)), FALLBACK_TOL, 50_000)
    assert met > LAST_RESORT_TOL
    sol = solve_contact(G, g, mu)
    assert sol.converged and sol.method == "pgs" and 1e-12 < sol.tolerance <= LAST_RESORT_TOL
    assert max(achieved(G, g, mu, sol.lam)) <= sol.tolerance
    assert sol.sweeps > 10_000  # past the first PGS's budget
