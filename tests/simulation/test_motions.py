"""Prescribed motions: cycloidal_motion's arguments and its rest outside [0, T], feedforward's
``motion`` (the values of 000 eq. 15: tests/test_mutation_gaps.py)."""

from __future__ import annotations

import numpy as np
import pytest

import denoc_bridge as db


@pytest.mark.parametrize(
    "args, error, message",
    [
        ((None, 1.0, 1.0, 0.5), db.InputTypeError, "q_start is None"),  # was silently NaN
        (("a", 1.0, 1.0, 0.5), db.InputTypeError, "q_start must hold real numbers"),  # was ValueError
        ((0.0, np.nan, 1.0, 0.5), db.InputError, "q_end must hold finite numbers"),  # was silently NaN
        ((0.0, 1.0, "x", 0.5), db.InputTypeError, "T must hold real numbers"),  # was TypeError
        ((0.0, 1.0, np.inf, 0.5), db.InputError, "T must hold finite numbers"),  # was silently NaN
        ((0.0, 1.0, [1.0, 2.0], 0.5), db.InputError, r"T must be a positive number, got \[1.0, 2.0\]"),
        ((0.0, 1.0, 0.0, 0.5), db.InputError, "T must be a positive number"),
        ((0.0, 1.0, 1.0, np.nan), db.InputError, "t must hold finite numbers"),  # was silently NaN
        ((0.0, 1.0, 1.0, np.zeros((3, 2))), db.InputError, r"t must be .* 1-D array of times, got shape \(3, 2\)"),
        ((np.zeros((2, 2)), np.ones((2, 2)), 1.0, 0.5), db.InputError, "numbers or 1-D arrays of one shape"),
        (([0.0, 0.0], [1.0], 1.0, 0.5), db.InputError, r"one shape, got \(2,\) and \(1,\)"),
    ],
)
def test_cycloidal_motion_names_bad_arguments(args, error, message):
    with pytest.raises(error, match=message):
        db.cycloidal_motion(*args)


def test_cycloidal_motion_rests_before_zero_and_after_T():
    """Past T the formula kept going (q = 2 at t = 2T for a motion from 0 to 1, with v > 0 in
    between): a simulation longer than T drove the joints beyond q_end.  The motion rests at
    q_start before 0 and at q_end after T (v = a = 0), continuous with eq. (15) at the ends."""
    q0, q1, T = np.array([0.2, -1.0]), np.array([1.4, 0.5]), 0.8
    q, v, a = db.cycloidal_motion(q0, q1, T, [-1.0, 0.0, 0.5 * T, T, 1.5 * T, 2.0 * T])
    assert np.array_equal(q[[0, 1]], [q0, q0]) and np.array_equal(q[[3, 4, 5]], [q1, q1, q1])
    assert not np.any(v[[0, 1, 3, 4, 5]]) and not np.any(a[[0, 1, 3, 4, 5]])
    np.testing.assert_allclose(q[2], (q0 + q1) / 2, rtol=1e-15)
    qs, vs, as_ = db.cycloidal_motion(q0, q1, T, 2.0 * T)  # a scalar t: (n,) arrays
    assert qs.shape == (2,) and np.array_equal(qs, q1) and not vs.any() and not as_.any()
    eps = 1e-7
    near = db.cycloidal_motion(q0, q1, T, [T - eps])[0][0]
    assert np.abs(near - q1).max() < 1e-12  # the rest continues the curve: C2 at T


def test_feedforward_names_a_motion_that_is_not_callable_or_returns_other_values():
    """A non-callable motion was accepted and failed mid-simulation with "'int' object is not
    callable"; a motion returning two arrays failed with a bare ValueError while unpacking."""
    model = db.load_robot("chain:2")
    with pytest.raises(db.InputTypeError, match=r"motion must be a callable motion\(t\) -> \(q, v, a\), got int"):
        db.feedforward(model, 3)
    tau = db.feedforward(model, lambda t: (np.zeros(2), np.zeros(2)))
    with pytest.raises(
        db.InputError, match=r"motion\(t\) must return the desired \(q, v, a\), got a tuple of length 2"
    ):
        tau(0.0, np.zeros(2), np.zeros(2))
    stacked = db.feedforward(model, lambda t: np.stack(db.cycloidal_motion([0.0, 0.0], [1.0, 1.0], 1.0, t)))
    expected = db.trajectory_torques(model, [0.5], *(x[None] for x in db.cycloidal_motion([0, 0], [1, 1], 1.0, 0.5)))
    assert np.array_equal(stacked(0.5, np.zeros(2), np.zeros(2)), expected[0])  # any three rows do
