"""MimicModel's maps between the reduced and the tree's coordinates (the dynamics:
``tests/constraints/test_mimic.py``)."""

from __future__ import annotations

import numpy as np
import pytest

import denoc_bridge as db


@pytest.fixture(scope="module")
def panda():
    return db.load_robot("panda", mimic=True)  # panda_finger_joint2 mimics panda_finger_joint1


def test_reduce_forces_along_each_axis_is_g_transpose(panda):
    G = panda.coupling_matrix()
    M = np.arange(81.0).reshape(9, 9)
    assert np.array_equal(panda.reduce_forces(M, 0), G.T @ M)
    assert np.array_equal(panda.reduce_forces(M, -1), M @ G)
    assert np.array_equal(panda.reduce_forces(M, np.int64(1)), M @ G)
    assert np.array_equal(panda.reduce_forces(panda.full_forces(np.arange(8.0))), np.arange(8.0))


@pytest.mark.parametrize(
    "axis, error, message",
    [
        (2, db.InputError, r"axis 2 is out of range for tau_full with 2 dimension\(s\)"),
        (-3, db.InputError, r"axis -3 is out of range"),
        (1.0, db.InputTypeError, "axis must be an integer, got float"),
        ("0", db.InputTypeError, "axis must be an integer, got str"),
    ],
)
def test_reduce_forces_names_a_bad_axis(panda, axis, error, message):
    """An axis out of range raised a bare IndexError, a float or string axis a bare TypeError."""
    with pytest.raises(error, match=message):
        panda.reduce_forces(np.eye(9), axis)


def test_expand_and_reduce_are_inverse_on_the_mimic_relations(panda):
    q, v = db.random_configuration(panda, 3), np.linspace(-1.0, 1.0, 8)
    qf, vf = panda.expand(q, v)
    assert qf[8] == qf[7] and vf[8] == vf[7]  # multiplier 1, offset 0
    assert np.array_equal(panda.reduce_configuration(qf), q)
    assert np.array_equal(panda.reduce_velocity(vf), v)
