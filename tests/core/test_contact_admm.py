"""The compiled ADMM fallback of the contact solver (denoc_bridge/core/contact_admm.pxd, through
``contact.admm_state``, which ``constraints.contact_admm.admm`` calls) against the NumPy version it
was written from line for line (``contact_admm.admm_reference``): the random problems of
tests/constraints/test_contact_solver.py, the talos landing that stalls PGS, the icub folding
where ADMM stalls (it stops after ``STALL`` iterations without progress), warm starts outside
the cones, iteration budgets shorter than a check; and its boundary: every bad argument named.
The comparisons with Pinocchio's solvers are in test_contact_solver.py, which runs the compiled
one since ``admm`` is it.

Measured (2026-12-07): the same iterations everywhere; the impulses to 7e-16 relative on the
random problems (unique: G positive definite) and 1.5e-11 on the talos landing (G of rank 12
in 120 rows, 2795 iterations); on the icub folding (rank 12 in 48 rows, 3160 iterations) the
velocities G lam + g to 2e-12 of |g| and the impulses to 5e-8 (they drift along G's null space,
where the round-off of the two eigendecompositions differs and nothing pulls them back)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from denoc_bridge.constraints import contact_admm
from denoc_bridge.constraints.contact_admm import admm, admm_reference, cone_residuals, project_cones
from denoc_bridge.core import load
from denoc_bridge.errors import InputError
from tests.constraints.test_contact_solver import random_problem

contact = load("contact")
DATA = Path(__file__).parents[1] / "constraints" / "data"

#: relative agreement of the impulses where they are unique, and on the talos landing (measured:
#: 7e-16 and 1.5e-11)
AGREE = 1e-9
#: relative agreement of the tolerances met, residuals of about tol: their own round-off is a
#: larger part of them (measured: 2e-3 at 1e-12 on the random problems, 3e-7 at 1e-8 on talos)
MET_AT_1E_12, MET_AT_1E_8 = 1e-2, 1e-5
#: of the best tolerance met where ADMM stalls (icub folding, 2.7e-8): its complementarity depends
#: on the impulses' drift along G's null space (measured: 7e-5)
MET_STALLED = 1e-3


def load_problem(name):
    d = np.load(DATA / f"{name}.npz")
    return d["G"], d["g"], d["mu"]


def compare(G, g, mu, lam0, tol, max_iter):
    """(compiled, reference) answers of one problem, the compiled one through the entry."""
    return contact.admm_state(G, g, mu, lam0, tol, max_iter), admm_reference(G, g, mu, lam0, tol, max_iter)


def relative(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


def test_the_constants_are_the_numpy_version_s():
    assert contact.admm_constants() == {
        "TAU": contact_admm.TAU,
        "ETA": contact_admm.ETA,
        "RATIO": contact_admm.RATIO,
        "CHECK_EVERY": contact_admm.CHECK_EVERY,
        "STALL": contact_admm.STALL,
    }


@pytest.mark.parametrize("seed", range(12))
def test_random_problems_equal_the_numpy_version(seed):
    G, g, mu, m = random_problem(seed)
    (lam, k, met), (ref, k_ref, met_ref) = compare(G, g, mu, np.zeros(3 * m), 1e-12, 100_000)
    assert k == k_ref and 0 < k < 100_000 and met <= 1e-12
    assert relative(lam, ref) <= AGREE
    assert met == pytest.approx(met_ref, rel=MET_AT_1E_12)


def test_a_warm_start_outside_the_cones_equals_the_numpy_version():
    """Projected onto the cones first, as the NumPy version does; a start that is not the answer."""
    G, g, mu, m = random_problem(3)
    lam0 = np.tile([5.0, -2.0, -1.0], m) + np.arange(3 * m) * 0.1
    (lam, k, met), (ref, k_ref, met_ref) = compare(G, g, mu, lam0, 1e-12, 100_000)
    assert k == k_ref and met <= 1e-12
    assert relative(lam, ref) <= AGREE


def test_the_talos_landing_equals_the_numpy_version():
    """40 contacts on two soles, G of rank 12 in 120 rows: thousands of iterations to 1e-8."""
    G, g, mu = load_problem("talos_landing_contact")
    lam0 = np.zeros(len(g))
    (lam, k, met), (ref, k_ref, met_ref) = compare(G, g, mu, lam0, 1e-8, 50_000)
    assert k == k_ref and k > 1000 and met <= 1e-8
    assert relative(lam, ref) <= AGREE
    assert met == pytest.approx(met_ref, rel=MET_AT_1E_8)
    np.testing.assert_array_equal(lam0, 0.0)  # the warm start is not written


def test_a_stalling_problem_stops_where_the_numpy_version_does():
    """icub folding (16 contacts, G of rank 12 in 48 rows): neither version halves its best
    tolerance in STALL iterations short of 1e-8, so both stop at the same iteration, far below
    the budget, with the same best answer: the same velocities and tolerance met; the impulses
    drift along G's null space (not unique), so they agree less closely."""
    G, g, mu = load_problem("icub_folding_contact")
    (lam, k, met), (ref, k_ref, met_ref) = compare(G, g, mu, np.zeros(len(g)), 1e-8, 50_000)
    assert k == k_ref and k < 50_000 and 1e-8 < met
    assert met == pytest.approx(met_ref, rel=MET_STALLED)
    assert np.abs((G @ lam + g) - (G @ ref + g)).max() <= AGREE * np.abs(g).max()
    assert relative(lam, ref) <= 1e-6
    opening, comp = cone_residuals(G, g, mu, lam)
    assert opening <= met * np.abs(g).max()


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("kind", ["not symmetric", "indefinite"])
def test_problems_off_the_assumptions_equal_the_numpy_version(seed, kind):
    """G not symmetric (its symmetric part decomposed, G itself in the checks) or with a negative
    eigenvalue (clamped to 0): ADMM stalls on both, the compiled one where the NumPy version does,
    with the same best answer."""
    G, g, mu, m = random_problem(seed)
    if kind == "not symmetric":
        S = np.random.default_rng(seed + 100).normal(size=G.shape)
        G = G + 1e-2 * np.abs(G).max() * (S - S.T)
    else:
        w = np.linalg.eigvalsh(G)
        G = G - (w[0] + 1e-3 * w[-1]) * np.eye(3 * m)
    (lam, k, met), (ref, k_ref, met_ref) = compare(G, g, mu, np.zeros(3 * m), 1e-12, 20_000)
    assert k == k_ref < 20_000 and met > 1e-12
    assert relative(lam, ref) <= AGREE
    assert met == pytest.approx(met_ref, rel=1e-9)


@pytest.mark.parametrize("max_iter", [-3, 0, 1, 4, 5, 7])
def test_budgets_shorter_than_a_check_or_between_two(max_iter):
    """Fewer iterations than CHECK_EVERY: no check, the projected warm start and inf, as the NumPy
    version returns; 5 and 7: one check, its answer."""
    G, g, mu, m = random_problem(1)
    lam0 = np.tile([1.0, 1.0, 0.5], m)
    (lam, k, met), (ref, k_ref, met_ref) = compare(G, g, mu, lam0, 1e-12, max_iter)
    assert k == k_ref == max(max_iter, 0)
    if max_iter < contact_admm.CHECK_EVERY:
        assert met == met_ref == np.inf
        np.testing.assert_array_equal(lam, project_cones(lam0, mu))
    else:
        assert met == pytest.approx(met_ref, rel=1e-9) and np.isfinite(met)
        assert relative(lam, ref) <= AGREE


def test_no_contacts():
    lam, k, met = contact.admm_state(np.zeros((0, 0)), np.zeros(0), np.zeros(0), np.zeros(0), 1e-12, 100)
    assert lam.shape == (0,) and k == 0 and met == 0.0


def test_admm_is_the_compiled_solver():
    """constraints.contact_admm.admm answers what the compiled entry answers, bit for bit (and
    converts array-likes: lists, Fortran order)."""
    G, g, mu = load_problem("talos_landing_contact")
    lam0 = np.zeros(len(g))
    lam, k, met = admm(np.asfortranarray(G), list(g), list(mu), lam0, 1e-8, 50_000)
    direct = contact.admm_state(G, g, mu, lam0, 1e-8, 50_000)
    np.testing.assert_array_equal(lam, direct[0])
    assert (k, met) == direct[1:] and isinstance(k, int) and isinstance(met, float)


GOOD = (np.eye(3), np.array([0.1, 0.2, -1.0]), np.array([0.5]), np.zeros(3), 1e-12, 100)


def bad(i, value):
    args = list(GOOD)
    args[i] = value
    return args


@pytest.mark.parametrize(
    "args, error, words",
    [
        (bad(0, [[1.0, 0, 0], [0, 1, 0], [0, 0, 1]]), TypeError, "G: expected a numpy.ndarray"),
        (bad(0, np.eye(3, dtype=np.int64)), TypeError, "G: expected a 2-D"),
        (bad(0, np.eye(6)[::2, ::2]), TypeError, "G: expected a 2-D C-contiguous"),
        (bad(0, np.ones(9)), TypeError, "G: expected a 2-D"),
        (bad(0, np.eye(6)), InputError, "G must be 3m x 3m = 3 x 3"),
        (bad(0, np.eye(3)[:, :2].copy()), InputError, "G must be 3m x 3m"),
        (bad(0, np.diag([1.0, np.inf, 1.0])), InputError, "G has non-finite"),
        (bad(1, np.zeros(6)), InputError, "g must have 3m = 3 entries, got 6"),
        (bad(1, np.zeros((3, 1))), TypeError, "g: expected a 1-D"),
        (bad(1, np.array([0.0, np.nan, 0.0])), InputError, "g has non-finite"),
        (bad(2, np.array([0.5, 0.5])), InputError, "G must be 3m x 3m = 6 x 6"),
        (bad(2, np.array([-0.5])), InputError, r"mu must be >= 0, got -0.5 \(contact 0\)"),
        (bad(2, np.array([np.nan])), InputError, "mu has non-finite"),
        (bad(2, np.array([1], dtype=np.int64)), TypeError, "mu: expected a 1-D"),
        (bad(3, np.zeros(4)), InputError, "lam must have 3m = 3 entries, got 4"),
        (bad(3, np.array([0.0, 0.0, np.inf])), InputError, "lam has non-finite"),
        (bad(3, None), TypeError, "lam: expected a numpy.ndarray, got NoneType"),
        (bad(4, None), TypeError, "tol must be a real number"),
        (bad(5, 1.5), TypeError, "max_iter must be an integer"),
        (bad(5, 2**70), TypeError, "max_iter must be an integer"),
    ],
)
def test_bad_arguments_are_named(args, error, words):
    with pytest.raises(error, match=words):
        contact.admm_state(*args)


def test_the_good_arguments_of_the_bad_argument_tests_are_solved():
    """The base case of test_bad_arguments_are_named is accepted (so that each refusal there is
    its one bad argument's): one sticking contact, G = I."""
    lam, k, met = contact.admm_state(*GOOD)
    np.testing.assert_allclose(lam, [-0.1, -0.2, 1.0], atol=1e-12)
    assert met <= 1e-12


def test_read_only_inputs_are_accepted():
    G, g, mu, m = random_problem(2)
    arrays = [G.copy(), g.copy(), mu.copy(), np.zeros(3 * m)]
    for a in arrays:
        a.flags.writeable = False
    lam, k, met = contact.admm_state(*arrays, 1e-12, 100_000)
    ref = admm_reference(G, g, mu, np.zeros(3 * m), 1e-12, 100_000)
    assert k == ref[1] and relative(lam, ref[0]) <= AGREE


def test_admm_passes_the_entry_s_refusals_on():
    """constraints.contact_admm.admm converts array-likes only: what the entry refuses, it refuses,
    naming the argument."""
    G, g, mu, lam0, tol, _ = GOOD
    with pytest.raises(TypeError, match="max_iter must be an integer"):
        admm(G, g, mu, lam0, tol, 2.5)
    with pytest.raises(TypeError, match="mu: expected a 1-D"):
        admm(G, g, [[0.5]], lam0, tol, 100)
    with pytest.raises(InputError, match="lam has non-finite"):
        admm(G, g, mu, [0.0, np.nan, 0.0], tol, 100)
