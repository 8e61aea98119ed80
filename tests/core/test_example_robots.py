"""The compiled configuration maps, energies and kinematics on every example-robot-data URDF
that Pinocchio loads, fixed and free-flyer, against Pinocchio's own model of the file:
``pin.integrate``, ``pin.difference``, ``pin.computeKineticEnergy`` (no armature in these
files), ``pin.computePotentialEnergy`` and the placements ``oMi`` and twists ``v`` of
``pin.forwardKinematics``, through the public calls (which run the compiled entries)."""

from __future__ import annotations

import contextlib
import io
import os

import numpy as np
import pinocchio as pin
import pytest
from conftest import erd_robot_dir, load_quietly, pin_loadable_urdfs

import denoc_bridge as db

CASES = pin_loadable_urdfs()
IDS = [f"{rel.split('/')[-1][:-5]}-{'floating' if fb else 'fixed'}" for rel, fb in CASES]


def close(a, b, tol: float = 1e-12) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return bool(np.abs(a - b).max(initial=0.0) <= tol * max(1.0, np.abs(b).max(initial=0.0)))


@pytest.mark.parametrize("rel,floating", CASES, ids=IDS)
def test_compiled_kinematics_match_pinocchio(rel, floating):
    path = os.path.join(erd_robot_dir(), rel)
    with contextlib.redirect_stderr(io.StringIO()):
        pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
    model = load_quietly(path, floating_base=floating)
    pd = pm.createData()
    rng = np.random.default_rng(len(rel))
    q0, q1 = db.random_configuration(model, rng), db.random_configuration(model, rng)
    v = rng.standard_normal(model.nv)
    assert close(db.integrate(model, q0, v), pin.integrate(pm, q0, v))
    assert close(db.difference(model, q0, q1), pin.difference(pm, q0, q1), 1e-11)
    T, V = db.energies(model, q0, v)
    assert T == pytest.approx(pin.computeKineticEnergy(pm, pd, q0, v), rel=1e-12, abs=1e-12)
    assert V == pytest.approx(pin.computePotentialEnergy(pm, pd, q0), rel=1e-12, abs=1e-12)
    pin.forwardKinematics(pm, pd, q0, v)
    R, p = db.forward_kinematics(model, q0)
    twists = db.link_velocities(model, q0, v)
    for k in range(model.n_links):
        assert close(R[k], pd.oMi[k + 1].rotation) and close(p[k], pd.oMi[k + 1].translation)
        assert close(twists[k], pd.v[k + 1].vector, 1e-11)
