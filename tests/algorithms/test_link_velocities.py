"""Link twists (``db.link_velocities``) against Pinocchio's ``data.v``, the Jacobians and the
kinetic energy."""

from __future__ import annotations

import warnings

import numpy as np
import pinocchio as pin
import pytest

import denoc_bridge as db
from denoc_bridge.testing import random_model


def pin_velocities(model, q, v):
    pm = db.to_pinocchio(model)
    pd = pm.createData()
    pin.forwardKinematics(pm, pd, q, v)
    return np.array([pd.v[k].vector for k in range(1, pm.njoints)])


@pytest.mark.parametrize("seed", range(8))
def test_random_trees_of_every_joint_type_match_pinocchio(seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", db.PhysicsWarning)
        model = random_model(seed, 12, floating_base=seed % 2 == 0, n_roots=1 + seed % 3)
    rng = np.random.default_rng(seed)
    q, v = db.random_configuration(model, rng), rng.standard_normal(model.nv)
    t = db.link_velocities(model, q, v)
    ref = pin_velocities(model, q, v)
    assert t.shape == (model.n_links, 6)
    assert np.abs(t - ref).max() <= 1e-13 * max(1.0, np.abs(ref).max())
    # the body Jacobians: pin's LOCAL joint Jacobian of link k times v
    pm = db.to_pinocchio(model)
    pd = pm.createData()
    pin.computeJointJacobians(pm, pd, q)
    for k in range(model.n_links):
        J = pin.getJointJacobian(pm, pd, k + 1, pin.ReferenceFrame.LOCAL)
        assert np.abs(J @ v - t[k]).max() <= 1e-13 * max(1.0, np.abs(t[k]).max())


@pytest.mark.parametrize("name", ["panda", "solo12", "talos"])
def test_robots_and_the_kinetic_energy(name):
    model = db.load_robot(name)
    rng = np.random.default_rng(7)
    q, v = db.random_configuration(model, rng), rng.standard_normal(model.nv)
    t = db.link_velocities(model, q, v)
    assert np.abs(t - pin_velocities(model, q, v)).max() < 1e-12
    # T = 1/2 sum_k t_k^T M_k t_k (no armature on these models)
    T = 0.0
    for k in range(model.n_links):
        c, m, I = model.com[k], model.mass[k], model.inertia[k]
        w, u = t[k, 3:], t[k, :3]
        vc = u + np.cross(w, c)  # the centre of mass's velocity
        T += 0.5 * (m * vc @ vc + w @ I @ w)
    assert T == pytest.approx(db.kinetic_energy(model, q, v), rel=1e-12)


def test_mimic_batches_and_bad_input():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", db.PhysicsWarning)
        mimic = db.load_robot("panda", mimic=True)
    rng = np.random.default_rng(2)
    q, v = db.random_configuration(mimic, rng), rng.standard_normal(mimic.nv)
    qf, vf = mimic.expand(q, v)
    assert np.array_equal(db.link_velocities(mimic, q, v), db.link_velocities(mimic.tree, qf, vf))
    model = db.load_robot("solo12")
    Q = np.stack([db.random_configuration(model, rng) for _ in range(3)])
    V = rng.standard_normal((3, model.nv))
    batch = db.link_velocities(model, Q, V)
    assert batch.shape == (3, model.n_links, 6)
    assert all(np.array_equal(batch[b], db.link_velocities(model, Q[b], V[b])) for b in range(3))
    with pytest.raises(db.InputError, match="v"):
        db.link_velocities(model, Q[0], V[0, :5])
    bad = V[0].copy()
    bad[8] = np.nan
    with pytest.raises(db.InputError, match="FL_KFE"):
        db.link_velocities(model, Q[0], bad)
