"""MuJoCo's layouts and ours (denoc_bridge.io.mujoco_layout): round trips both ways, and the
conversions against MuJoCo's own integration, energies and power."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.errors import InputError, ModelError
from denoc_bridge.io import mujoco_layout as mjl
from denoc_bridge.io.mjcf import loads_mjcf
from tests.io.mjcf_samples import FREE, JOINTS


@pytest.fixture(scope="module", params=[FREE, JOINTS], ids=["free", "joints"])
def pair(request):
    return loads_mjcf(request.param), mujoco.MjModel.from_xml_string(request.param)


def _state(model, rng):
    return db.random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv)


def test_round_trips_both_ways(pair) -> None:
    model, m = pair
    rng = np.random.default_rng(0)
    for _ in range(5):
        q, v, a = _state(model, rng)
        qpos = mjl.q_to_mujoco_qpos(model, q)
        np.testing.assert_allclose(mjl.mujoco_qpos_to_q(model, qpos), q, atol=1e-15)
        np.testing.assert_allclose(mjl.q_to_mujoco_qpos(model, mjl.mujoco_qpos_to_q(model, qpos)), qpos, atol=1e-15)
        qvel = mjl.v_to_mujoco_qvel(model, q, v)
        np.testing.assert_allclose(mjl.mujoco_qvel_to_v(model, q, qvel), v, atol=1e-14)
        np.testing.assert_allclose(
            mjl.v_to_mujoco_qvel(model, q, mjl.mujoco_qvel_to_v(model, q, qvel)), qvel, atol=1e-14
        )
        qacc = mjl.a_to_mujoco_qacc(model, q, v, a)
        np.testing.assert_allclose(mjl.mujoco_qacc_to_a(model, q, v, qacc), a, atol=1e-13)
        np.testing.assert_allclose(
            mjl.a_to_mujoco_qacc(model, q, v, mjl.mujoco_qacc_to_a(model, q, v, qacc)), qacc, atol=1e-13
        )
        f = mjl.tau_to_mujoco_force(model, q, a)
        np.testing.assert_allclose(mjl.mujoco_force_to_tau(model, q, f), a, atol=1e-14)
        np.testing.assert_allclose(
            mjl.tau_to_mujoco_force(model, q, mjl.mujoco_force_to_tau(model, q, f)), f, atol=1e-14
        )


def test_quaternions_change_order() -> None:
    model = loads_mjcf(FREE)
    q = mjl.mujoco_qpos_to_q(model, np.r_[1, 2, 3, 0.5, 0.5, 0.5, 0.5, 0.1, 0.2, 0.6, 0.8, 0, 0])
    np.testing.assert_array_equal(q[:7], [1, 2, 3, 0.5, 0.5, 0.5, 0.5])
    q = mjl.mujoco_qpos_to_q(model, np.r_[1, 2, 3, 0.1, 0.2, 0.3, 0.4, 0.1, 0.2, 0.6, 0.0, 0.0, 0.8])
    np.testing.assert_array_equal(q[3:7], [0.2, 0.3, 0.4, 0.1])  # (w, x, y, z) -> (x, y, z, w)
    np.testing.assert_array_equal(q[9:13], [0.0, 0.0, 0.8, 0.6])  # the ball joint too


def test_velocities_integrate_as_mujoco_s(pair) -> None:
    """MuJoCo's mj_integratePos of qvel and our integrate of the converted v reach the same pose
    to first order (MuJoCo moves a free body's origin in a straight line, Pinocchio's integrate
    along a screw: they part at O(h^2))."""
    model, m = pair
    rng = np.random.default_rng(1)
    for _ in range(3):
        q, v, _ = _state(model, rng)
        qpos = mjl.q_to_mujoco_qpos(model, q)
        h = 1e-6
        mujoco.mj_integratePos(m, qpos, mjl.v_to_mujoco_qvel(model, q, v), h)
        np.testing.assert_allclose(mjl.mujoco_qpos_to_q(model, qpos), db.integrate(model, q, h * v), atol=1e-11)
        # a velocity left in MuJoCo's world frame is seen (the check can fail)
        qpos = mjl.q_to_mujoco_qpos(model, q)
        mujoco.mj_integratePos(m, qpos, v, h)
        if model.floating_base:
            assert np.abs(mjl.mujoco_qpos_to_q(model, qpos) - db.integrate(model, q, h * v)).max() > 1e-8


def test_energy_and_power_are_the_same(pair) -> None:
    model, m = pair
    rng = np.random.default_rng(2)
    for _ in range(3):
        q, v, tau = _state(model, rng)
        M = db.mass_matrix(model, q)
        M_mj = mjl.mass_matrix_to_mujoco(model, q, M)
        qvel = mjl.v_to_mujoco_qvel(model, q, v)
        assert qvel @ M_mj @ qvel == pytest.approx(v @ M @ v, rel=1e-13)
        assert mjl.tau_to_mujoco_force(model, q, tau) @ qvel == pytest.approx(tau @ v, rel=1e-12, abs=1e-13)


def test_mujoco_s_acceleration_is_the_derivative_of_its_velocity() -> None:
    """qacc converts to a: integrating both by a small step gives the same velocity to O(h^2)."""
    model = loads_mjcf(FREE)
    rng = np.random.default_rng(3)
    q, v, a = _state(model, rng)
    h = 1e-6
    qacc = mjl.a_to_mujoco_qacc(model, q, v, a)
    q1 = db.integrate(model, q, h * v + 0.5 * h * h * a)
    v1 = v + h * a
    lhs = mjl.v_to_mujoco_qvel(model, q1, v1)
    rhs = mjl.v_to_mujoco_qvel(model, q, v) + h * qacc
    np.testing.assert_allclose(lhs, rhs, atol=1e-10)


def test_bad_input_is_named() -> None:
    model = loads_mjcf(FREE)
    with pytest.raises(InputError, match=r"qpos must have shape \(13,\)"):
        mjl.mujoco_qpos_to_q(model, np.zeros(12))
    with pytest.raises(ModelError, match="continuous, which has no MuJoCo counterpart"):
        mjl.q_to_mujoco_qpos([db.JointType.CONTINUOUS], np.array([1.0, 0.0]))
