"""Kinetic and potential energy from the compiled O(n) recursion."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import denoc_bridge as db
from denoc_bridge.testing import random_model


@pytest.mark.parametrize("seed", range(6))
def test_energies_match_pinocchio_and_the_gim(seed):
    model = random_model(seed, 9, floating_base=seed % 2 == 0)
    rng = np.random.default_rng(seed)
    if seed % 3 == 1:  # rotor inertias (armature) on every joint
        model = model.replace(armature=rng.uniform(0.1, 0.5, model.nv))
    pm = db.to_pinocchio(model)
    pd = pm.createData()
    q, v = db.random_configuration(model, rng), rng.standard_normal(model.nv)
    T, V = db.energies(model, q, v)
    assert T == pytest.approx(0.5 * v @ db.mass_matrix(model, q) @ v, rel=1e-13)
    assert T == pytest.approx(0.5 * v @ pin.crba(pm, pm.createData(), q) @ v, rel=1e-13)
    # Pinocchio 4.1's computeKineticEnergy gets the armature of a revolute joint about an
    # arbitrary axis (JointModelRevoluteUnaligned) wrong, so it is compared without those
    unaligned = [j for j in pm.joints[1:] if j.shortname() == "JointModelRevoluteUnaligned"]
    arm = model.armature.copy()
    for j in unaligned:
        arm[j.idx_v] = 0.0
    if seed % 3 == 1:
        assert unaligned and np.count_nonzero(arm) > 0
    model2 = model.replace(armature=arm)
    pm2 = db.to_pinocchio(model2)
    assert db.kinetic_energy(model2, q, v) == pytest.approx(
        pin.computeKineticEnergy(pm2, pm2.createData(), q, v), rel=1e-13
    )
    assert V == pytest.approx(pin.computePotentialEnergy(pm, pd, q), rel=1e-13, abs=1e-13)


def test_springs_and_batches():
    model = random_model(3, 5, joint_types=(db.JointType.REVOLUTE, db.JointType.CONTINUOUS, db.JointType.SPHERICAL))
    rng = np.random.default_rng(0)
    rest = db.random_configuration(model, rng)
    K = rng.uniform(0.5, 2.0, model.nv)
    sprung = model.replace(stiffness=K, rest_configuration=rest)
    Q = np.array([db.random_configuration(model, rng) for _ in range(7)])
    Vv = rng.standard_normal((7, model.nv))
    T, V = db.energies(sprung, Q, Vv)
    T0, V0 = db.energies(model, Q, Vv)
    d = db.difference(model, np.broadcast_to(rest, Q.shape), Q)
    assert np.array_equal(T, T0)
    assert np.abs(V - V0 - 0.5 * np.einsum("ij,j,ij->i", d, K, d)).max() < 1e-13
    assert np.array_equal(db.energies(sprung, Q, Vv, springs=False)[1], V0)
    for b in range(7):
        assert db.energies(sprung, Q[b], Vv[b]) == (T[b], V[b])


def test_kinetic_and_potential_energy_check_their_data_argument():
    """``data`` was accepted and ignored, whatever it was (a string, another model's Data);
    now it is checked as by the other algorithms (the energy recursion still needs none)."""
    model = db.load_robot("chain:3")
    q, v = np.array([0.1, -0.2, 0.3]), np.array([1.0, 0.5, -0.5])
    for f, args in ((db.kinetic_energy, (q, v)), (db.potential_energy, (q,))):
        with pytest.raises(db.InputTypeError, match="data must be a denoc_bridge.Data"):
            f(model, *args, data="data")
        with pytest.raises(db.InputError, match="data was created for a model with 4 links"):
            f(model, *args, data=db.Data(db.load_robot("chain:4")))
        assert f(model, *args, data=db.Data(model)) == f(model, *args)


def test_hanging_configuration():
    """The chain hangs from its pin on the side of lower potential energy, whichever way gravity
    points along z; ``tilt`` turns the pin; a first joint that is not revolute is named."""
    from denoc_bridge.algorithms.kinematics import hanging_configuration

    chain = db.generators.chain(5, "planar")
    q = hanging_configuration(chain)
    assert q[0] == np.pi / 2 and not q[1:].any()  # x turned about y by +pi/2: along -z, with gravity
    rest = db.potential_energy(chain, q)
    for dq in (-1e-3, 1e-3, np.pi):
        assert db.potential_energy(chain, q + np.eye(chain.nq)[0] * dq) > rest
    tilted = hanging_configuration(chain, 0.3)
    assert tilted[0] == np.pi / 2 + 0.3 and not tilted[1:].any()
    up = chain.replace(gravity=(0.0, 0.0, 9.81))
    assert hanging_configuration(up)[0] == -np.pi / 2
    with pytest.raises(db.InputError, match="T1"):
        hanging_configuration(db.generators.fourbar())
    with pytest.raises(db.InputError, match="tilt"):
        hanging_configuration(chain, float("nan"))
