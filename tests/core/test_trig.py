"""The branch-free cos/sin of the geometry pass (core/geometry.pxi ``cos_sin``, through the
test entry ``cos_sin_array`` of core/tree.pyx) against the C library."""

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.algorithms.reference import reference_inverse_dynamics
from denoc_bridge.core import tree
from denoc_bridge.io.robots import serial_chain

TRIG_LIMIT = tree.TRIG_RANGE


def _cos_sin_array(x, c, s):
    """cos_sin of every x into c and s; whether poly_ok takes them all."""
    status = tree.cos_sin_array(np.ascontiguousarray(x, dtype=float), c, s)
    assert status in (0, 1)
    return bool(status)


def cos_sin(x):
    c, s = np.empty(1), np.empty(1)
    _cos_sin_array(np.array([x]), c, s)
    return c[0], s[0]


def poly_ok(x):
    n = len(x)
    return _cos_sin_array(x, np.empty(n), np.empty(n))


def _ulps(ours, ref):
    """Error in units in the last place of the reference value (one ulp of 1 for values below
    that scale would hide nothing here: errors are measured against the value's own ulp)."""
    return np.abs(ours - ref) / np.spacing(np.maximum(np.abs(ref), np.finfo(float).tiny))


@pytest.mark.parametrize(
    "name, x",
    [
        ("joint range", np.random.default_rng(0).uniform(-4.0, 4.0, 200_000)),
        ("up to the limit", np.random.default_rng(1).uniform(-TRIG_LIMIT, TRIG_LIMIT, 200_000)),
        ("multiples of pi/2", np.arange(-60_000, 60_001) * (np.pi / 2)),
        ("tiny", np.concatenate([np.geomspace(1e-300, 1e-3, 2000), -np.geomspace(1e-300, 1e-3, 2000), [0.0, -0.0]])),
        (
            "quadrant boundaries",
            np.array([np.nextafter(k * np.pi / 4, sgn) for k in range(-64, 65) for sgn in (-np.inf, np.inf)]),
        ),
    ],
)
def test_cos_sin_within_one_ulp_of_the_c_library(name, x):
    c, s = np.empty_like(x), np.empty_like(x)
    _cos_sin_array(x, c, s)
    assert _ulps(c, np.cos(x)).max() <= 1.0, f"{name}: cos off by {_ulps(c, np.cos(x)).max()} ulp"
    assert _ulps(s, np.sin(x)).max() <= 1.0, f"{name}: sin off by {_ulps(s, np.sin(x)).max()} ulp"
    assert np.array_equal(np.signbit(s[x == 0]), np.signbit(x[x == 0])), "sin(-0) must be -0"


def test_poly_ok_marks_the_range_and_lengths_are_checked():
    assert tree.cos_sin_array(np.zeros(3), np.zeros(2), np.zeros(3)) == -2
    with pytest.raises(TypeError, match="x"):
        tree.cos_sin_array([0.0], np.zeros(1), np.zeros(1))
    assert poly_ok(np.array([0.0, -TRIG_LIMIT, TRIG_LIMIT]))
    assert not poly_ok(np.array([0.0, TRIG_LIMIT * 1.5]))
    assert poly_ok(np.zeros(0))


def test_angles_beyond_the_polynomial_range_use_the_c_library():
    """Angles of 1e15 rad (far beyond TRIG_LIMIT, where the two-step reduction is off by about
    1e-12): the geometry falls back to the C library, so E_k holds its cos and sin exactly,
    and the dynamics agree with the explicit-matrix reference."""
    model = serial_chain(6)
    rng = np.random.default_rng(3)
    q = 1e15 + np.round(rng.uniform(-1e3, 1e3, model.nq))
    poly = np.array([cos_sin(x) for x in q])
    assert np.abs(poly[:, 0] - np.cos(q)).max() > 1e-13, "the test needs angles where the polynomial path fails"
    E = db.algorithms.dynamics.geometry(model, q).E
    for k in range(model.n_links):  # x/y axes alternate: E = R^T
        c, s = (E[k, 1, 1], E[k, 1, 2]) if k % 2 == 0 else (E[k, 0, 0], -E[k, 0, 2])
        assert (c, s) == (np.cos(q[k]), np.sin(q[k])), f"link {k}: E_k is not built from the C library's cos/sin"
    v, a = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    tau = db.inverse_dynamics(model, q, v, a)
    ref = reference_inverse_dynamics(model, q, v, a)
    assert np.abs(tau - ref).max() <= 1e-12 * np.abs(ref).max()
    assert np.abs(db.forward_dynamics(model, q, v, tau) - a).max() <= 1e-10 * np.abs(a).max()
