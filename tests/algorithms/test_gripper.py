"""The 4-DOF gripper of 000 §3.1: the GIM, its block factors and inverses of 002 eqs. (A.19)-(A.22)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_close

import denoc_bridge as db
from denoc_bridge.io.robots import gripper4, gripper4_urdf

Q = np.array([0.0, 0.0, 0.0, np.pi / 2])  # theta_11 = theta_12 = theta_22 = 0, theta_13 = 90 deg

# As printed in 002 (each number with its printed digits).  The (1,4) entries "1" of Dbar and
# Dbar^-1 in A.20/A.21 are misprints: both matrices are block diagonal by definition (and the
# products printed in A.22 only hold with zeros there).
I_PRINTED = np.array(
    [
        ["113.3333", "33.3333", "9.1667", "1.6667"],
        ["33.3333", "13.3333", "4.1667", "0"],
        ["9.1667", "4.1667", "1.6667", "0"],
        ["1.6667", "0", "0", "1.6667"],
    ]
)  # x 1e-4, A.19
U_PRINTED = np.array(
    [["1", "3.571", "-3.428", "1"], ["0", "1", "0", "0"], ["0", "0", "1", "0"], ["0", "0", "0", "1"]]
)  # A.20
D_PRINTED = np.array(
    [["24.047", "0", "0", "0"], ["0", "13.333", "4.166", "0"], ["0", "4.166", "1.666", "0"], ["0", "0", "0", "1.666"]]
)  # x 1e-4, A.20
UINV_PRINTED = np.array(
    [["1", "-3.5714", "3.4286", "-1"], ["0", "1", "0", "0"], ["0", "0", "1", "0"], ["0", "0", "0", "1"]]
)  # A.21
DINV_PRINTED = np.array(
    [
        ["0.0416", "0", "0", "0"],
        ["0", "0.3429", "-0.8571", "0"],
        ["0", "-0.8571", "2.7429", "0"],
        ["0", "0", "0", "0.6"],
    ]
)  # x 1e4, A.21
IINV_PRINTED = np.array(
    [
        ["0.0416", "-0.1485", "0.1426", "-0.0416"],
        ["-0.1485", "0.8733", "-1.3663", "0.1485"],
        ["0.1426", "-1.3663", "3.2317", "-0.1426"],
        ["-0.0416", "0.1485", "-0.1426", "0.6416"],
    ]
)  # x 1e4, A.22


def assert_printed(name, ours, printed, scale):
    """|ours / scale - printed| < one unit of the last printed digit (the paper rounds or truncates)."""
    for (i, j), text in np.ndenumerate(printed):
        unit = 10.0 ** -len(text.split(".")[1]) if "." in text else 1e-12
        value = ours[i, j] / scale
        assert abs(value - float(text)) < unit, f"{name}[{i + 1},{j + 1}] = {value:.6f}, printed {text}"


@pytest.fixture(scope="module")
def gripper():
    return gripper4()


def test_structure_follows_the_paper(gripper):
    assert gripper.joint_names == ("joint_1_1", "joint_1_2", "joint_2_2", "joint_1_3")
    assert [list(m.links) for m in gripper.modules] == [[0], [1, 2], [3]]
    assert [m.parent for m in gripper.modules] == [-1, 0, 0]


def test_gim_of_002_a19(gripper):
    assert_printed("I", db.mass_matrix(gripper, Q), I_PRINTED, 1e-4)


def test_block_factors_of_002_a20(gripper):
    U, D = db.udut(gripper, Q)
    assert_printed("Ubar", U, U_PRINTED, 1.0)
    assert_printed("Dbar", D, D_PRINTED, 1e-4)


def test_block_inverses_of_002_a21(gripper):
    Uinv, Dinv = db.inverse_udut(gripper, Q)
    assert_printed("Ubar^-1", Uinv, UINV_PRINTED, 1.0)
    assert_printed("Dbar^-1", Dinv, DINV_PRINTED, 1e4)


def test_inverse_gim_of_002_a22(gripper):
    Minv = db.inverse_mass_matrix(gripper, Q)
    assert_printed("I^-1", Minv, IINV_PRINTED, 1e4)
    assert_close("I^-1 I", Minv @ db.mass_matrix(gripper, Q), np.eye(4))


def test_gripper_matches_pinocchio_in_random_states(gripper):
    pm = pin.buildModelFromXML(gripper4_urdf())
    pd = pm.createData()
    rng = np.random.default_rng(0)
    for _ in range(5):
        q, v, a = rng.uniform(-np.pi, np.pi, 4), rng.standard_normal(4), rng.standard_normal(4)
        assert_close("rnea", db.inverse_dynamics(gripper, q, v, a), pin.rnea(pm, pd, q, v, a))
        assert_close("aba", db.forward_dynamics(gripper, q, v, a), pin.aba(pm, pd, q, v, a))
