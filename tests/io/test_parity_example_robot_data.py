"""Every example-robot-data URDF that Pinocchio loads, fixed and free-flyer: the loader
reproduces Pinocchio's model field by field, and the dynamics and their derivatives agree with
Pinocchio."""

from __future__ import annotations

import contextlib
import io
import os

import numpy as np
import pinocchio as pin
import pytest
from conftest import (
    TOL,
    assert_close,
    assert_derivatives_match_pinocchio,
    assert_solution_close,
    erd_robot_dir,
    load_quietly,
    pin_loadable_urdfs,
)

import denoc_bridge as db

CASES = pin_loadable_urdfs()
IDS = [f"{rel.split('/')[-1][:-5]}-{'floating' if fb else 'fixed'}" for rel, fb in CASES]


def _models(rel: str, floating: bool):
    path = os.path.join(erd_robot_dir(), rel)
    with contextlib.redirect_stderr(io.StringIO()):
        pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
    return load_quietly(path, floating_base=floating), pm


def test_the_parity_suite_covers_every_robot():
    urdfs = {rel for rel, _ in CASES}
    assert len(urdfs) >= 70, f"only {len(urdfs)} example-robot-data URDFs found"
    for rel in (
        "panda_description/urdf/panda.urdf",
        "talos_data/robots/talos_reduced.urdf",
        "solo_description/robots/solo12.urdf",
        "icub_description/robots/icub.urdf",
        "pr2_description/urdf/pr2.urdf",
        "romeo_description/urdf/romeo_laas_small.urdf",
    ):
        assert (rel, False) in CASES and (rel, True) in CASES, rel


@pytest.mark.parametrize("rel,floating", CASES, ids=IDS)
def test_loader_reproduces_pinocchio_model(rel, floating):
    model, pm = _models(rel, floating)
    assert model.joint_names == tuple(pm.names[1:]), "joint order differs from pin.buildModelFromUrdf"
    assert (model.nq, model.nv) == (pm.nq, pm.nv)
    for k in range(model.n_links):
        j, name = pm.joints[k + 1], model.joint_names[k]
        assert model.parent[k] == pm.parents[k + 1] - 1, f"joint '{name}': parent"
        assert (model.idx_q[k], model.idx_v[k], model.nq_joint[k], model.nv_joint[k]) == (
            j.idx_q,
            j.idx_v,
            j.nq,
            j.nv,
        ), f"joint '{name}': q/v layout"
        X, Y = pm.jointPlacements[k + 1], pm.inertias[k + 1]
        assert_close(f"joint '{name}' placement rotation", model.joint_rotation[k], X.rotation, 1e-12)
        assert np.abs(model.joint_translation[k] - X.translation).max() <= 1e-12, f"joint '{name}' placement"
        assert abs(model.mass[k] - Y.mass) <= 1e-12 * max(1.0, Y.mass), f"link of '{name}': mass"
        assert np.abs(model.com[k] - Y.lever).max() <= 1e-12, f"link of '{name}': centre of mass"
        assert np.abs(model.inertia[k] - Y.inertia).max() <= 1e-12 * max(1.0, np.abs(Y.inertia).max()), (
            f"link of '{name}': inertia"
        )
    assert np.array_equal(model.gravity, pm.gravity.linear)
    assert np.array_equal(model.damping, pm.damping), "damping"


@pytest.mark.parametrize("rel,floating", CASES, ids=IDS)
def test_dynamics_match_pinocchio(rel, floating):
    model, pm = _models(rel, floating)
    pd = pm.createData()
    rng = np.random.default_rng(20261121)
    for _ in range(3):
        q = db.random_configuration(model, rng)
        v, a = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
        fext = rng.standard_normal((model.n_links, 6))
        tau_pin = pin.rnea(pm, pd, q, v, a).copy()
        assert_close("inverse_dynamics vs pin.rnea", db.inverse_dynamics(model, q, v, a), tau_pin)
        fext_pin = [pin.Force.Zero()] + [pin.Force(f) for f in fext]
        assert_close(
            "inverse_dynamics with f_ext vs pin.rnea",
            db.inverse_dynamics(model, q, v, a, fext),
            pin.rnea(pm, pd, q, v, a, fext_pin),
        )
        M_pin = pin.crba(pm, pd, q).copy()
        M = db.mass_matrix(model, q)
        assert_close("mass_matrix vs pin.crba", M, M_pin)
        a_pin = pin.aba(pm, pd, q, v, tau_pin).copy()
        Minv_pin = pin.computeMinverse(pm, pd, q).copy()
        try:
            a_ours = db.forward_dynamics(model, q, v, tau_pin)
        except db.SingularInertiaError as exc:
            # Pinocchio divides by the same zero inertia: its results are not finite
            assert not np.all(np.isfinite(a_pin)), f"we found joint '{exc.joint}' singular, Pinocchio did not"
            with pytest.raises(db.SingularInertiaError):
                db.inverse_mass_matrix(model, q)
            return
        nle = db.nonlinear_effects(model, q, v)
        nle_pin = pin.nonLinearEffects(pm, pd, q, v).copy()
        assert_close("nonlinear_effects vs pin.nonLinearEffects", nle, nle_pin)
        assert_solution_close("forward_dynamics vs pin.aba", a_ours, a_pin, M, tau_pin - nle, M_pin, tau_pin - nle_pin)
        eye = np.eye(model.nv)
        assert_solution_close(
            "inverse_mass_matrix vs pin.computeMinverse", db.inverse_mass_matrix(model, q), Minv_pin, M, eye, M_pin, eye
        )
        assert np.all(np.isfinite(a_pin))


@pytest.mark.parametrize("rel,floating", CASES, ids=IDS)
def test_derivatives_match_pinocchio(rel, floating):
    """inverse_dynamics_derivatives and forward_dynamics_derivatives (with external wrenches)
    entry by entry against pin.computeRNEADerivatives / computeABADerivatives of the model
    Pinocchio builds from the URDF: 1e-10 relative; through M^-1 (forward derivatives, Minv) the
    suite's 1e-9 of every solve, or the conditioning-aware statement (iCub, kappa(M) = 4e7: our
    ddq_dq is 4e-10 from the exact solution of its problem, Pinocchio's 1e-10, both within
    kappa eps = 8e-9); a singular articulated inertia is refused by name where Pinocchio's
    numbers are not finite."""
    model, pm = _models(rel, floating)
    rng = np.random.default_rng(20261127)
    q = db.random_configuration(model, rng)
    v, a = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    fext = rng.standard_normal((model.n_links, 6))
    try:
        db.forward_dynamics(model, q, v, np.zeros(model.nv))
    except db.SingularInertiaError:
        pd = pm.createData()
        pin.computeABADerivatives(pm, pd, q, v, np.zeros(model.nv))
        assert not np.all(np.isfinite(pd.ddq_dq)), "we found an articulated inertia singular, Pinocchio did not"
        with pytest.raises(db.SingularInertiaError):
            db.forward_dynamics_derivatives(model, q, v, np.zeros(model.nv))
        return
    assert_derivatives_match_pinocchio(model, q, v, a, fext, pm=pm, solve_tol=TOL)
