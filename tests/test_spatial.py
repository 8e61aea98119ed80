"""The spatial helpers against Pinocchio's conventions."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from denoc_bridge import spatial


def test_rpy_and_quaternion_conventions_match_pinocchio():
    rng = np.random.default_rng(0)
    for _ in range(20):
        rpy = rng.uniform(-3, 3, 3)
        assert np.abs(spatial.rpy_to_matrix(rpy) - pin.rpy.rpyToMatrix(*rpy)).max() < 1e-14
        xyzw = rng.standard_normal(4)
        xyzw /= np.linalg.norm(xyzw)
        quat = pin.Quaternion(xyzw[3], *xyzw[:3])
        assert np.abs(spatial.quaternion_to_matrix(xyzw) - quat.toRotationMatrix()).max() < 1e-14
        axis = rng.standard_normal(3)
        axis /= np.linalg.norm(axis)
        assert np.abs(spatial.axis_angle_to_matrix(axis, 0.7) - pin.exp3(0.7 * axis)).max() < 1e-14


def test_twist_propagation_is_pinocchios_action_with_swapped_halves():
    rng = np.random.default_rng(1)
    M = pin.SE3.Random()  # child frame placed in the parent frame
    E, r = M.rotation.T, M.translation
    A = spatial.twist_propagation(E, r)
    x = rng.standard_normal(6)  # internal [w; v] of the parent
    child_pin = M.actInv(pin.Motion(spatial.internal_to_pin(x))).vector
    assert np.abs(A @ x - spatial.pin_to_internal(child_pin)).max() < 1e-13
    assert np.array_equal(spatial.skew([1, 2, 3]) @ [4, 5, 6], np.cross([1, 2, 3], [4, 5, 6]))


def test_link_mass_matrix_is_pinocchios_spatial_inertia():
    Y = pin.Inertia.Random()
    M = spatial.link_mass_matrix(Y.mass, Y.lever, Y.inertia)
    P = np.block([[np.zeros((3, 3)), np.eye(3)], [np.eye(3), np.zeros((3, 3))]])
    assert np.abs(M - P @ Y.matrix() @ P).max() < 1e-13
