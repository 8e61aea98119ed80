"""The damping check before a run: the fastest rate of M^-1 D and the joint behind it, against
the dense generalized eigenproblem with Pinocchio's GIM."""

import numpy as np
import pinocchio as pin
import pytest
import scipy.linalg

import denoc_bridge as db
from denoc_bridge.simulation.stability import STABILITY_LIMIT, damping_stiffness
from denoc_bridge.testing import random_model


def dense_answer(model, q):
    """(rate, v index of the damper that dissipates most of the fastest mode, (M^-1)_kk) from
    Pinocchio's crba and scipy's generalized eigensolver."""
    pm = db.to_pinocchio(model)
    M = pin.crba(pm, pm.createData(), q).copy()
    M = np.triu(M) + np.triu(M, 1).T
    d = np.asarray(model.damping, dtype=float)
    rates, modes = scipy.linalg.eigh(np.diag(d), M)
    x = modes[:, -1]
    k = int(np.argmax(d * x**2))
    return rates[-1], k, np.linalg.inv(M)[k, k]


@pytest.mark.parametrize("seed", range(4))
def test_rate_joint_and_inertia_equal_the_dense_eigenproblem(seed):
    rng = np.random.default_rng(seed)
    model = random_model(rng, 7)
    d = rng.uniform(0.0, 2.0, model.nv) * (rng.random(model.nv) < 0.7)
    d[0] = 0.5  # some damping
    model = model.replace(damping=d)
    q = db.random_configuration(model, seed)
    rate, k, minv_kk = dense_answer(model, q)
    found = damping_stiffness(model, q)
    assert found is not None
    assert found.rate == pytest.approx(rate, rel=1e-10)
    joint = int(np.searchsorted(model.idx_v, k, side="right") - 1)
    assert found.joint == model.joint_names[joint]
    assert found.inertia == pytest.approx(1.0 / minv_kk, rel=1e-10)
    assert found.damping == d[k]
    assert found.max_dt("rk4") == pytest.approx(STABILITY_LIMIT["rk4"] / rate, rel=1e-10)


def test_panda_fingers_are_the_stiffest_dampers():
    model = db.load_robot("panda")
    q = db.random_configuration(model, 3)
    rate, k, minv_kk = dense_answer(model, q)
    found = damping_stiffness(model, q)
    assert found.rate == pytest.approx(rate, rel=1e-10)
    # the two fingers tie (d x^2 of the fastest mode equal to round-off): either may be named
    assert found.joint in ("panda_finger_joint1", "panda_finger_joint2") and found.linear
    assert found.inertia == pytest.approx(1.0 / minv_kk, rel=1e-10)


def test_no_damping_no_answer():
    model = db.load_robot("panda").replace(damping=np.zeros(9))
    assert damping_stiffness(model, db.random_configuration(model, 0)) is None
