"""A run without the model's dampers and springs (``passive=False``) is balanced without them, and
``energy_drift(relative=True)`` is measured against ``Trajectory.energy_scale``."""

from __future__ import annotations

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.testing import random_model


@pytest.fixture(scope="module")
def damped():
    model = random_model(5, 3, joint_types=(db.JointType.REVOLUTE, db.JointType.PRISMATIC))
    rng = np.random.default_rng(3)
    q0, v0 = db.random_configuration(model, rng), rng.standard_normal(model.nv)
    return model.replace(damping=np.full(model.nv, 0.5), stiffness=np.full(model.nv, 3.0)), q0, v0


def test_passive_false_leaves_the_dampers_and_springs_out_of_the_balance(damped):
    model, q0, v0 = damped
    off = db.simulate(model, q0, v0, 0.5, 1e-3, passive=False)
    assert off.passive is False and not np.any(off.passive_forces())
    bare = db.simulate(model.replace(damping=np.zeros(model.nv), stiffness=np.zeros(model.nv)), q0, v0, 0.5, 1e-3)
    np.testing.assert_array_equal(off.q, bare.q)
    np.testing.assert_allclose(off.potential_energy, bare.potential_energy, rtol=0, atol=1e-12)
    np.testing.assert_allclose(off.power_in, bare.power_in, rtol=0, atol=1e-12)
    assert np.abs(off.energy_drift(relative=True)).max() < 1e-8
    on = db.simulate(model, q0, v0, 0.5, 1e-3)
    assert on.passive is True and np.abs(on.energy_drift(relative=True)).max() < 1e-8
    assert np.all(on.power_in <= 1e-12) and np.any(on.power_in < -1e-3)  # the dampers dissipate


def test_passive_survives_resampling_and_files(damped, tmp_path):
    model, q0, v0 = damped
    off = db.simulate(model, q0, v0, 0.1, 1e-3, passive=False)
    assert off.resample(fps=100).passive is False
    off.to_npz(tmp_path / "off.npz")
    back = db.Trajectory.load(tmp_path / "off.npz", model)
    assert back.passive is False
    np.testing.assert_allclose(back.energy_drift(), off.energy_drift(), rtol=0, atol=1e-14)


def test_energy_scale_is_the_largest_of_its_parts(damped):
    model, q0, v0 = damped
    tr = db.simulate(model, q0, v0, 0.5, 1e-3)
    parts = tr.energy_scales()
    assert set(parts) == {"peak kinetic energy", "potential energy variation", "work done", "floor"}
    assert tr.energy_scale == max(parts.values()) > 0
    assert parts["peak kinetic energy"] == pytest.approx(tr.kinetic_energy.max())
    np.testing.assert_allclose(tr.energy_drift(relative=True), tr.energy_drift() / tr.energy_scale)
