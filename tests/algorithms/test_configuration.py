"""integrate / difference / interpolate on the joint manifolds, against Pinocchio."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import denoc_bridge as db
from denoc_bridge.multibody.joints import limit_arrays
from denoc_bridge.testing import random_model

ALL = tuple(db.JointType)


def _same_rotation_blocks(model, a, b):
    """a and b equal, quaternions up to their sign (q and -q are one rotation)."""
    a, b = a.copy(), b.copy()
    for i0 in model.quaternion_index:
        if np.dot(a[i0 : i0 + 4], b[i0 : i0 + 4]) < 0:
            b[i0 : i0 + 4] *= -1
    return np.abs(a - b).max()


@pytest.mark.parametrize("seed", range(12))
def test_integrate_difference_interpolate_match_pinocchio(seed):
    model = random_model(seed, 8, floating_base=seed % 2 == 0, joint_types=ALL)
    pm = db.to_pinocchio(model)
    rng = np.random.default_rng(seed)
    for scale in (1e-7, 0.3, 3.0):  # small-angle series and large rotations
        q0, q1 = db.random_configuration(model, rng), db.random_configuration(model, rng)
        v = rng.standard_normal(model.nv) * scale
        assert np.abs(db.integrate(model, q0, v) - pin.integrate(pm, q0, v)).max() < 1e-13
        assert np.abs(db.difference(model, q0, q1) - pin.difference(pm, q0, q1)).max() < 1e-12
        assert np.abs(db.interpolate(model, q0, q1, 0.3) - pin.interpolate(pm, q0, q1, 0.3)).max() < 1e-12
        back = db.integrate(model, q0, db.difference(model, q0, q1))
        assert _same_rotation_blocks(model, back, q1) < 1e-12


def test_batches_and_unit_results():
    model = random_model(3, 6, floating_base=True, joint_types=ALL)
    rng = np.random.default_rng(0)
    Q = np.array([db.random_configuration(model, rng) for _ in range(5)])
    V = rng.standard_normal((5, model.nv)) * 2
    out = db.integrate(model, Q, V)
    for b in range(5):
        assert np.array_equal(out[b], db.integrate(model, Q[b], V[b]))
    for starts, size in ((model.quaternion_index, 4), (model.circle_index, 2)):
        for i0 in starts:
            assert np.allclose(np.linalg.norm(out[:, i0 : i0 + size], axis=1), 1.0, atol=1e-15)
    D = db.difference(model, Q[:-1], Q[1:])
    assert D.shape == (4, model.nv)
    mid = db.interpolate(model, Q[:-1], Q[1:], np.full(4, 0.5))
    assert np.abs(mid[2] - db.interpolate(model, Q[2], Q[3], 0.5)).max() == 0.0


def test_bad_arguments_are_named():
    model = random_model(1, 3, joint_types=(db.JointType.REVOLUTE,))
    q = db.neutral_configuration(model)
    with pytest.raises(db.InputError, match=r"v must have shape \(3,\) or \(B, 3\)"):
        db.integrate(model, q, np.zeros(4))
    with pytest.raises(db.InputError, match=rf"v\[1\] = nan is not finite \(joint '{model.joint_names[1]}'"):
        db.integrate(model, q, np.array([0.0, np.nan, 0.0]))
    with pytest.raises(db.InputError, match=r"q1\[1, 2\] = inf is not finite"):  # a batch: the state and entry
        db.difference(model, np.zeros((2, 3)), np.array([[0.0, 0.0, 0.0], [0.0, 0.0, np.inf]]))


def test_three_dimensional_batches_are_refused_by_name():
    """A (1, 2, nq) array reached the compiled kernel, whose numba TypingError named nothing."""
    model = random_model(1, 3, joint_types=(db.JointType.REVOLUTE,))
    for f in (db.integrate, db.difference):
        with pytest.raises(db.InputError, match=r"q0? must have shape \(3,\) or \(B, 3\).*got \(1, 2, 3\)"):
            f(model, np.zeros((1, 2, 3)), np.zeros((1, 2, 3)))


@pytest.mark.parametrize("scale", [3.0, 1e-9, 1e200])
def test_off_manifold_inputs_follow_the_normalisation_rule(scale):
    """integrate / difference / interpolate take scaled quaternions and (cos, sin) pairs as the
    dynamics do (README normalisation rule): 1e200 x a unit quaternion gives the unit one's
    numbers (its squared norm overflows), and so do a batch's rows."""
    model = random_model(5, 8, floating_base=True, joint_types=ALL)
    assert model.quaternion_index.size and model.circle_index.size
    rng = np.random.default_rng(7)
    q0, q1 = db.random_configuration(model, rng), db.random_configuration(model, rng)
    v = rng.standard_normal(model.nv)
    off0, off1 = q0.copy(), q1.copy()
    for starts, size in ((model.quaternion_index, 4), (model.circle_index, 2)):
        for i0 in starts:
            off0[i0 : i0 + size] *= scale
            off1[i0 : i0 + size] *= scale
    for name, got, ref in [
        ("integrate", db.integrate(model, off0, v), db.integrate(model, q0, v)),
        ("difference", db.difference(model, off0, off1), db.difference(model, q0, q1)),
        ("interpolate", db.interpolate(model, off0, off1, 0.3), db.interpolate(model, q0, q1, 0.3)),
        (
            "integrate, batch",
            db.integrate(model, np.stack([q0, off0]), np.stack([v, v]))[1],
            db.integrate(model, q0, v),
        ),
    ]:
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12, err_msg=name)


def test_zero_quaternion_and_pair_are_refused_by_name():
    model = random_model(5, 8, floating_base=True, joint_types=ALL)
    q = db.random_configuration(model, np.random.default_rng(0))
    v = np.zeros(model.nv)
    zq = q.copy()
    zq[3:7] = 0.0
    with pytest.raises(db.InputError, match=r"q\[3:7\] is a quaternion of zero norm for joint 'joint0' \(freeflyer\)"):
        db.integrate(model, zq, v)
    with pytest.raises(db.InputError, match=r"q1\[3:7\] is a quaternion of zero norm"):
        db.difference(model, q, zq)
    i0 = int(model.circle_index[0])
    zc = q.copy()
    zc[i0 : i0 + 2] = 1e-13  # below the dynamics' 1e-12 cutoff
    with pytest.raises(db.InputError, match=rf"q0\[1, {i0}:{i0 + 2}\] is a \(cos, sin\) pair of zero norm"):
        db.interpolate(model, np.stack([q, zc]), np.stack([q, q]), 0.5)
    with pytest.raises(db.InputError, match="zero norm"):
        db.inverse_dynamics(model, zc, v, v)


@pytest.mark.parametrize("name", ["pr2", "gripper"])
def test_a_mimic_models_random_configuration_keeps_every_joint_within_its_limits(name):
    """On a MimicModel a mimic joint's limits narrow the range of the joint it mimics: a random
    configuration expands to a tree configuration with every limited joint, mimic joints included,
    within its limits (it drew the mimicked joints over their own range, so that pr2's grippers
    started outside the fingers' limits and a simulation warned); the same seed, the same q."""
    model = db.load_robot(name, mimic=True)
    idx, lim = limit_arrays(model.tree)
    outside = 0
    for seed in range(60):
        qf = model.expand(db.random_configuration(model, seed))
        outside += int(np.any((qf[idx[:, 0]] < lim[:, 0] - 1e-12) | (qf[idx[:, 0]] > lim[:, 1] + 1e-12)))
    assert outside == 0
    assert np.array_equal(db.random_configuration(model, 7), db.random_configuration(model, 7))
