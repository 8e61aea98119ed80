"""Property tests on random trees of every joint type: agreement with Pinocchio and
identities between the algorithms."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
from conftest import assert_close, assert_solution_close, random_state, random_trees
from hypothesis import given
from hypothesis import strategies as st

import denoc_bridge as db
from denoc_bridge.testing import random_model

trees = random_trees(12, 3)
one_dof_trees = st.builds(
    random_model,
    seed=st.integers(0, 2**32 - 1),
    n_links=st.integers(1, 9),
    branching=st.floats(0.0, 0.8),
    joint_types=st.just((db.JointType.REVOLUTE, db.JointType.PRISMATIC)),
)


@given(model=trees, seed=st.integers(0, 2**32 - 1))
def test_random_trees_match_pinocchio(model, seed):
    pm = db.to_pinocchio(model)
    pd = pm.createData()
    q, v, a, fext = random_state(model, seed)
    fext_pin = [pin.Force.Zero()] + [pin.Force(f) for f in fext]
    tau = pin.rnea(pm, pd, q, v, a, fext_pin).copy()
    assert_close("inverse_dynamics", db.inverse_dynamics(model, q, v, a, fext), tau)
    M, M_pin = db.mass_matrix(model, q), pin.crba(pm, pd, q).copy()
    assert_close("mass_matrix", M, M_pin)
    bias = db.nonlinear_effects(model, q, v, fext)  # C v + g - J^T f_ext
    bias_pin = pin.rnea(pm, pd, q, v, np.zeros(model.nv), fext_pin).copy()
    assert_close("bias", bias, bias_pin)
    assert_solution_close(
        "forward_dynamics",
        db.forward_dynamics(model, q, v, tau, fext),
        pin.aba(pm, pd, q, v, tau, fext_pin).copy(),
        M,
        tau - bias,
        M_pin,
        tau - bias_pin,
    )
    eye = np.eye(model.nv)
    assert_solution_close(
        "inverse_mass_matrix",
        db.inverse_mass_matrix(model, q),
        pin.computeMinverse(pm, pd, q).copy(),
        M,
        eye,
        M_pin,
        eye,
    )


@given(model=trees, seed=st.integers(0, 2**32 - 1))
def test_forward_dynamics_undoes_inverse_dynamics(model, seed):
    q, v, a, fext = random_state(model, seed)
    tau = db.inverse_dynamics(model, q, v, a, fext)
    M = db.mass_matrix(model, q)
    a_back = db.forward_dynamics(model, q, v, tau, fext)
    # conditioning-free statement: the acceleration error maps to forces at round-off level
    assert np.abs(M @ (a_back - a)).max() <= 1e-9 * max(1.0, np.abs(tau).max(), np.abs(M @ a).max())


@given(model=trees, seed=st.integers(0, 2**32 - 1))
def test_factors_and_inverse_are_consistent(model, seed):
    q = random_state(model, seed)[0]
    M = db.mass_matrix(model, q)
    assert np.array_equal(M, M.T), "GIM not exactly symmetric"
    for level in ("module", "link"):
        U, D = db.udut(model, q, level=level)
        assert_close(f"U D U^T ({level})", U @ D @ U.T, M)
        assert np.allclose(np.diag(U), 1.0) and np.all(np.tril(U, -1) == 0), f"U not unit upper ({level})"
        Uinv, Dinv = db.inverse_udut(model, q, level=level)
        assert_close(f"U U^-1 ({level})", U @ Uinv, np.eye(model.nv))
        # D^-1 comes from the inverted articulated inertias: forward error bound kappa(D) eps
        bound = max(1e-9, 100 * np.linalg.cond(D) * np.finfo(float).eps)
        assert_close(f"D D^-1 ({level})", D @ Dinv, np.eye(model.nv), tol=bound)
    Minv = db.inverse_mass_matrix(model, q)
    assert np.array_equal(Minv, Minv.T), "inverse GIM not exactly symmetric"
    U, D = db.udut(model, q)
    for mod in model.modules:  # Dbar is block diagonal by module
        s = mod.v_slice
        off = D.copy()
        off[s, s] = 0.0
        assert np.all(off[s, :] == 0.0), f"Dbar has entries outside module M{mod.index + 1}'s block"


@given(model=trees, seed=st.integers(0, 2**32 - 1))
def test_mass_matrix_columns_are_inverse_dynamics(model, seed):
    q, v, _, _ = random_state(model, seed)
    M = db.mass_matrix(model, q)
    base = db.inverse_dynamics(model, q, v, np.zeros(model.nv))
    cols = np.array([db.inverse_dynamics(model, q, v, e) - base for e in np.eye(model.nv)]).T.reshape(M.shape)
    assert np.abs(cols - M).max() <= 1e-9 * max(1.0, np.abs(M).max(), np.abs(base).max())
    assert_close("nonlinear_effects", db.nonlinear_effects(model, q, v), base)
    assert_close(
        "gravity_torques",
        db.gravity_torques(model, q),
        db.inverse_dynamics(model, q, np.zeros(model.nv), np.zeros(model.nv)),
    )


@given(model=one_dof_trees, seed=st.integers(0, 2**32 - 1))
def test_gravity_is_the_gradient_of_the_potential_energy(model, seed):
    q = random_state(model, seed)[0]
    h = 1e-6
    grad = np.array(
        [
            (db.potential_energy(model, q + h * e) - db.potential_energy(model, q - h * e)) / (2 * h)
            for e in np.eye(model.nq)
        ]
    )
    g = db.gravity_torques(model, q)
    assert np.abs(grad - g).max() <= 1e-6 * max(1.0, np.abs(g).max())  # central differences: O(h^2)


@given(model=one_dof_trees, seed=st.integers(0, 2**32 - 1))
def test_mdot_minus_2c_is_skew_and_energy_rate(model, seed):
    """v^T (Mdot - 2 C) v = 0: with C v = nle - g, 1/2 v^T Mdot v = v^T C v (power balance)."""
    q, v, _, _ = random_state(model, seed)
    h = 1e-6
    Mdot = (db.mass_matrix(model, q + h * v) - db.mass_matrix(model, q - h * v)) / (2 * h)
    Cv = db.nonlinear_effects(model, q, v) - db.gravity_torques(model, q)
    lhs, rhs = 0.5 * v @ Mdot @ v, v @ Cv
    assert abs(lhs - rhs) <= 1e-6 * max(1.0, abs(rhs), np.abs(Mdot).max() * (v @ v))
    # and the kinetic energy is 1/2 v^T M v
    assert abs(db.kinetic_energy(model, q, v) - 0.5 * v @ db.mass_matrix(model, q) @ v) <= 1e-12 * max(
        1.0, abs(db.kinetic_energy(model, q, v))
    )


@given(model=trees, seed=st.integers(0, 2**32 - 1))
def test_kinematics_and_energies_match_pinocchio(model, seed):
    pm = db.to_pinocchio(model)
    pd = pm.createData()
    q, v, _, _ = random_state(model, seed)
    pin.forwardKinematics(pm, pd, q, v)
    R, p = db.forward_kinematics(model, q)
    for k in range(model.n_links):
        assert_close(f"rotation of link {k}", R[k], pd.oMi[k + 1].rotation, 1e-12)
        assert np.abs(p[k] - pd.oMi[k + 1].translation).max() <= 1e-12 * max(1.0, np.abs(p[k]).max())
    assert_close("kinetic energy", db.kinetic_energy(model, q, v), pin.computeKineticEnergy(pm, pd, q, v))
    assert abs(db.potential_energy(model, q) - pin.computePotentialEnergy(pm, pd, q)) <= 1e-12 * max(
        1.0, abs(pin.computePotentialEnergy(pm, pd, q))
    )
    if model.mass.sum() > 0:
        assert_close("centre of mass", db.center_of_mass(model, q), pin.centerOfMass(pm, pd, q), 1e-12)


def test_armature_enters_like_in_pinocchio():
    model = random_model(7, 6, floating_base=True)
    rng = np.random.default_rng(2)
    armature = np.abs(rng.standard_normal(model.nv))
    model = db.Model(**{**_fields(model), "armature": armature})
    pm = db.to_pinocchio(model)
    pd = pm.createData()
    q, v, a, _ = random_state(model, 5)
    assert_close("rnea with armature", db.inverse_dynamics(model, q, v, a), pin.rnea(pm, pd, q, v, a))
    assert_close("crba with armature", db.mass_matrix(model, q), pin.crba(pm, pd, q))
    assert_close("aba with armature", db.forward_dynamics(model, q, v, a), pin.aba(pm, pd, q, v, a))
    assert_close("Minv with armature", db.inverse_mass_matrix(model, q), pin.computeMinverse(pm, pd, q))


def test_gravity_is_settable():
    model = random_model(3, 5)
    q, v, a, _ = random_state(model, 1)
    tau0 = db.inverse_dynamics(model, q, v, a)
    model.gravity = (0.0, 0.0, 0.0)
    pm = db.to_pinocchio(model)
    assert_close("rnea without gravity", db.inverse_dynamics(model, q, v, a), pin.rnea(pm, pm.createData(), q, v, a))
    assert np.abs(db.inverse_dynamics(model, q, v, a) - tau0).max() > 1e-3


def _fields(model):
    return dict(
        name=model.name,
        link_names=model.link_names,
        joint_names=model.joint_names,
        parent=model.parent,
        joint_type=model.joint_type,
        joint_axis=model.joint_axis,
        joint_axis2=model.joint_axis2,
        joint_rotation=model.joint_rotation,
        joint_translation=model.joint_translation,
        mass=model.mass,
        com=model.com,
        inertia=model.inertia,
        floating_base=model.floating_base,
    )
