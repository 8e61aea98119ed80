"""Derivatives of the reduced dynamics of mimic joints (Pinocchio refuses them): central
differences on the manifold (db.integrate in the reduced coordinates), Pinocchio's mimic crba,
and the identities of the implicit-function theorem."""

from __future__ import annotations

import contextlib
import io
import os
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from conftest import erd_robot_dir

import denoc_bridge as db

GRIPPER = str(Path(__file__).resolve().parents[2] / "urdf" / "mimic_gripper.urdf")
# central differences: along q with h = 1e-5 (truncation and round-off ~1e-9 relative); along v
# and tau (or a) with h = 1e-3, where the dynamics is quadratic (linear), so that central
# differences are exact but for round-off
FD_TOL = 1e-7


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore", db.PhysicsWarning)
        return fn(*args, **kwargs)


def central(f, model, q, v, x, hq=1e-5, hv=1e-3):
    """Central differences of f(q, v, x) along integrate(q, dq), v and x: three (n_out, nv) arrays."""
    nv = model.nv
    out = []
    for which in range(3):
        cols = []
        h = hq if which == 0 else hv
        for j in range(nv):
            e = np.zeros(nv)
            e[j] = h
            if which == 0:
                plus, minus = f(db.integrate(model, q, e), v, x), f(db.integrate(model, q, -e), v, x)
            elif which == 1:
                plus, minus = f(q, v + e, x), f(q, v - e, x)
            else:
                plus, minus = f(q, v, x + e), f(q, v, x - e)
            cols.append((plus - minus) / (2 * h))
        out.append(np.column_stack(cols))
    return out


def rel(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


def state(model, seed):
    rng = np.random.default_rng(seed)
    return db.random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv)


MODELS = {
    "gripper": lambda: db.load_urdf(GRIPPER, mimic=True),
    "gripper-floating": lambda: db.load_urdf(GRIPPER, floating_base=True, mimic=True),
    "pr2": lambda: quiet(
        db.load_urdf, os.path.join(erd_robot_dir(), "pr2_description/urdf/pr2.urdf"), floating_base=True, mimic=True
    ),
}


@pytest.mark.parametrize("name", ["gripper", "gripper-floating", "pr2"])
def test_mimic_derivatives_against_central_differences(name):
    model = MODELS[name]()
    assert isinstance(model, db.MimicModel) and model.n_constraints > 0
    q, v, x = state(model, 3)
    ddq, ddv, Minv = db.forward_dynamics_derivatives(model, q, v, x)
    fd = central(lambda q, v, t: db.forward_dynamics(model, q, v, t), model, q, v, x)
    errors = {"dqdd_dq": rel(ddq, fd[0]), "dqdd_dv": rel(ddv, fd[1]), "dqdd_dtau": rel(Minv, fd[2])}
    assert max(errors.values()) < FD_TOL, errors
    dq, dv, M = db.inverse_dynamics_derivatives(model, q, v, x)
    fd = central(lambda q, v, a: db.inverse_dynamics(model, q, v, a), model, q, v, x)
    errors = {"dtau_dq": rel(dq, fd[0]), "dtau_dv": rel(dv, fd[1]), "M": rel(M, fd[2])}
    assert max(errors.values()) < FD_TOL, errors


@pytest.mark.parametrize("name", ["gripper-floating", "pr2"])
def test_mimic_derivatives_identities(name):
    model = MODELS[name]()
    q, v, tau = state(model, 4)
    ddq, ddv, Minv = db.forward_dynamics_derivatives(model, q, v, tau)
    a = db.forward_dynamics(model, q, v, tau)
    dq, dv, M = db.inverse_dynamics_derivatives(model, q, v, a)
    Mr = db.mass_matrix(model, q)
    eye = np.eye(model.nv)
    assert np.abs(M - Mr).max() <= 1e-12 * np.abs(Mr).max()
    assert np.abs(Minv @ Mr - eye).max() < 1e-9
    assert rel(Minv, db.inverse_mass_matrix(model, q)) < 1e-9
    # implicit-function theorem: dtau/dx at (q, v, FD) = -M dqdd/dx
    assert rel(-Mr @ ddq, dq) < 1e-10 and rel(-Mr @ ddv, dv) < 1e-10


def test_mimic_mass_matrix_derivative_equals_pinocchio_crba():
    model = MODELS["gripper-floating"]()
    pm = quiet(pin.buildModelFromUrdf, GRIPPER, pin.JointModelFreeFlyer(), mimic=True)
    q, v, a = state(model, 5)
    M = db.inverse_dynamics_derivatives(model, q, v, a)[2]
    assert rel(M, pin.crba(pm, pm.createData(), q)) < 1e-12


def test_mimic_derivatives_batch_equals_states():
    model = MODELS["gripper-floating"]()
    rng = np.random.default_rng(6)
    Q = np.array([db.random_configuration(model, rng) for _ in range(3)])
    V, T = rng.standard_normal((3, model.nv)), rng.standard_normal((3, model.nv))
    batch = db.forward_dynamics_derivatives(model, Q, V, T)
    # the batch's reduced accelerations (db.mimic.forward_dynamics of the batch) differ from the
    # states' by a few ulps (1.5e-11 of 5e3), which dqdd/dq's dependence on qdd amplifies to
    # 1e-12 of its scale (7.6e-13 with numba's derivatives, 1.0e-12 with the compiled ones)
    for b in range(3):
        for X, x in zip(batch, db.forward_dynamics_derivatives(model, Q[b], V[b], T[b])):
            assert np.abs(X[b] - x).max() <= 1e-11 * np.abs(x).max()


def test_linearize_mimic_model():
    model = MODELS["gripper-floating"]()
    q, v, tau = state(model, 7)
    A, B = db.linearize(model, q, v, tau)
    ddq, ddv, Minv = db.forward_dynamics_derivatives(model, q, v, tau)
    nv = model.nv
    assert np.array_equal(A[nv:, :nv], ddq) and np.array_equal(B[nv:], Minv)
    assert np.abs(A[:6, :6]).max() > 0  # the free-flyer's -1/2 ad_v, in the reduced layout
