"""Analytical derivatives of inverse and forward dynamics: entry by entry against
pin.computeRNEADerivatives / pin.computeABADerivatives, central differences on the manifold
where Pinocchio's numbers are not a reference (universal joints), and identities."""

from __future__ import annotations

import warnings

import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_derivatives_match_pinocchio as check_against_pinocchio
from conftest import assert_solution_close, load_robot_quietly, mixed_tree, random_state

import denoc_bridge as db
from denoc_bridge.testing import random_model
from denoc_bridge.validation import relative_error

JT = db.JointType
TIGHT = 1e-10
# Pinocchio 4.1's RNEA derivatives are wrong for JointModelUniversal (they assume that every
# column of the joint turns with every other, but its first axis is fixed in the parent: 1.6
# relative error against central differences): universal joints are checked by differences.
PIN_TYPES = tuple(t for t in JT if t != JT.UNIVERSAL)
SEEDS = range(12)


def rel(ours, ref) -> float:
    assert np.shape(ours) == np.shape(ref)
    return relative_error(ours, ref)


@pytest.mark.parametrize("name", ["panda", "talos", "solo12"])
def test_robots_match_pinocchio(name):
    model = load_robot_quietly(name)
    for seed in range(3):
        q, v, a, fext = random_state(model, seed)
        check_against_pinocchio(model, q, v, a, fext)
        check_against_pinocchio(model, q, v, a, np.zeros_like(fext))


@pytest.mark.parametrize("seed", SEEDS)
def test_random_trees_match_pinocchio(seed):
    model = mixed_tree(seed, joint_types=PIN_TYPES)
    q, v, a, fext = random_state(model, seed)
    check_against_pinocchio(model, q, v, a, fext)


@pytest.mark.parametrize("jtype", list(JT))
def test_each_joint_type_matches_pinocchio(jtype):
    if jtype == JT.UNIVERSAL:
        pytest.skip("Pinocchio's universal-joint derivatives are not a reference (see test_universal_*)")
    model = random_model(seed=int(jtype) + 100, n_links=6, branching=0.4, joint_types=(jtype,))
    q, v, a, fext = random_state(model, int(jtype))
    check_against_pinocchio(model, q, v, a, fext)


def central_differences(model, q, v, a, fext, h=1e-6):
    pm = db.to_pinocchio(model)
    nv = model.nv
    dq, dv = np.empty((nv, nv)), np.empty((nv, nv))
    for j in range(nv):
        e = np.zeros(nv)
        e[j] = h
        tp = db.inverse_dynamics(model, pin.integrate(pm, q, e), v, a, fext)
        tm = db.inverse_dynamics(model, pin.integrate(pm, q, -e), v, a, fext)
        dq[:, j] = (tp - tm) / (2 * h)
        dv[:, j] = (db.inverse_dynamics(model, q, v + e, a, fext) - db.inverse_dynamics(model, q, v - e, a, fext)) / (
            2 * h
        )
    return dq, dv


@pytest.mark.parametrize("seed", range(4))
def test_universal_joints_match_central_differences(seed):
    types = (JT.UNIVERSAL,) if seed < 2 else tuple(JT)
    model = random_model(seed=seed, n_links=7, branching=0.4, joint_types=types, floating_base=seed == 3)
    q, v, a, fext = random_state(model, seed)
    dq, dv, M = db.inverse_dynamics_derivatives(model, q, v, a, fext)
    fdq, fdv = central_differences(model, q, v, a, fext)
    assert rel(dq, fdq) <= 1e-7
    assert rel(dv, fdv) <= 1e-7
    assert rel(M, db.mass_matrix(model, q)) <= 1e-13


@pytest.mark.parametrize("seed", range(3))
def test_identities(seed):
    model = random_model(seed=seed, n_links=9, branching=0.5, n_roots=2, floating_base=True)
    q, v, tau, fext = random_state(model, seed)
    ddq, ddv, Minv = db.forward_dynamics_derivatives(model, q, v, tau, fext)
    qdd = db.forward_dynamics(model, q, v, tau, fext)
    dq, dv, M = db.inverse_dynamics_derivatives(model, q, v, qdd, fext)
    eye = np.eye(model.nv)
    assert rel(Minv @ M, eye) <= 1e-10  # dqdd_dtau @ M == I
    assert rel(M, db.mass_matrix(model, q)) <= 1e-14
    assert rel(M @ ddq, -dq) <= 1e-10  # the implicit-function theorem
    assert rel(M @ ddv, -dv) <= 1e-10
    Minv_recursive = db.inverse_mass_matrix(model, q)  # 002 eqs. A.13-A.22
    assert_solution_close("Minv", Minv, Minv_recursive, M, eye, M, eye, 1e-10)
    # no external wrenches: the default
    dq0, _, _ = db.inverse_dynamics_derivatives(model, q, v, qdd)
    assert rel(dq0, db.inverse_dynamics_derivatives(model, q, v, qdd, np.zeros_like(fext))[0]) == 0.0


def test_batches_equal_states():
    model = random_model(seed=5, n_links=6, branching=0.5, floating_base=True)
    states = [random_state(model, s) for s in range(3)]
    Q, V, X, F = (np.array([s[i] for s in states]) for i in range(4))
    for fn in (db.inverse_dynamics_derivatives, db.forward_dynamics_derivatives):
        for fext in (F, None):
            batch = fn(model, Q, V, X, fext)
            for b in range(3):
                one = fn(model, Q[b], V[b], X[b], None if fext is None else F[b])
                for x, y in zip(batch, one):
                    assert x.shape == (3, model.nv, model.nv)
                    np.testing.assert_array_equal(x[b], y)
    for fn in (db.inverse_dynamics_derivatives, db.forward_dynamics_derivatives):  # checked path
        for x, y in zip(fn(model, *(list(z) for z in states[0][:3])), fn(model, *states[0][:3])):
            np.testing.assert_array_equal(x, y)


def test_refused_models_and_inputs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", db.PhysicsWarning)
        mimic = db.load_robot("panda", mimic=True)
    q = db.neutral_configuration(mimic)
    z = np.zeros(mimic.nv)
    for fn in (db.inverse_dynamics_derivatives, db.forward_dynamics_derivatives):  # reduced coordinates
        assert all(x.shape == (mimic.nv, mimic.nv) and np.isfinite(x).all() for x in fn(mimic, q, z, z))
        with pytest.raises(db.InputError, match="must have shape"):
            fn(mimic, q, z, z[:-1])
    fourbar = db.generators.fourbar()
    q = db.neutral_configuration(fourbar)
    z = np.zeros(fourbar.nv)
    with pytest.raises(db.InputError, match="loop closures.*not supported yet"):
        db.inverse_dynamics_derivatives(fourbar, q, z, z)
    assert all(x.shape == (4, 4) for x in db.forward_dynamics_derivatives(fourbar, q, z, z))  # constrained
    model = random_model(seed=1, n_links=3)
    q, v, a, _ = random_state(model, 1)
    with pytest.raises(db.InputError, match="a must have shape"):
        db.inverse_dynamics_derivatives(model, q, v, a[:-1])
    bad = v.copy()
    bad[0] = np.nan
    with pytest.raises(db.InputError):
        db.forward_dynamics_derivatives(model, q, bad, a)
