"""Tests written against surviving mutants: each one fails on a small, plausible bug that the
rest of the suite let through (the mutant is named in the test's docstring)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close

import denoc_bridge as db
from denoc_bridge.core import run as compiled_run
from denoc_bridge.io.generators import chain
from denoc_bridge.io.robots import gripper4
from denoc_bridge.testing import pin_rk4, random_inertia, random_model

J = db.JointType


# ----------------------------------------------------------------------------- the stage sweep of RK4
def _flipped(model, every=2):
    """The model with every ``every``-th joint axis reversed (still a coordinate axis)."""
    axes = np.array(model.joint_axis, dtype=float)
    axes[::every] *= -1.0
    return model.replace(joint_axis=axes)


@pytest.mark.parametrize("name", ["spatial_chain", "gripper"])
def test_stage_sweep_on_axes_pointing_backwards(name):
    """Mutant: core/stage_sweep.pxi takes the sine of E_k without the sign of the joint axis
    (``s = sb`` for ``sg * sb``).  The sweep is used only for revolute joints about coordinate
    axes; every such model of the suite has its axes along +x, +y, +z.  With reversed axes the
    compiled RK4 must still be the classical RK4 around pin.aba."""
    model = _flipped(chain(6, "spatial") if name == "spatial_chain" else gripper4())
    assert compiled_run.tree_flags(model._kt)[1] and np.any(np.array(model.joint_axis) < 0)  # swept
    rng = np.random.default_rng(3)
    q0, v0 = 0.4 * rng.standard_normal(model.nq), rng.standard_normal(model.nv)
    tau = (1e-5 if name == "spatial_chain" else 0.01) * rng.standard_normal(model.nv)  # the chain weighs 24 g
    tr = db.simulate(model, q0, v0, 0.1, 1e-3, tau=tau, progress=False)
    q, v = pin_rk4(db.to_pinocchio(model), q0, v0, 1e-3, 100, tau=tau)
    assert_close("q after 100 RK4 steps", tr.q[-1], q, 1e-11)
    assert_close("v after 100 RK4 steps", tr.v[-1], v, 1e-11)


# ----------------------------------------------------------------------------- small-angle series
SMALL = (9.0e-5, 3.0e-5, 1.0e-6)  # rotation angles below the 1e-4 switch to the Taylor series


def _one_joint(jtype):
    return random_model(0, 1, joint_types=(jtype,))


@pytest.mark.parametrize("jtype", [J.SPHERICAL, J.FREEFLYER], ids=lambda j: j.label)
def test_integrate_small_rotations_against_the_closed_form(jtype):
    """Mutant (found in numba's kernels, now core/joint_configuration.pxi): quat_exp uses sin(t/2)/t = 1/2 + t^2/48 (sign of the
    series term).  Below t = 1e-4 the error is t^2/24 relative, 4e-14 absolute: under the
    1e-13 of the Pinocchio comparison.  From the identity, exp(w) is (sin(t/2)/t w, cos(t/2))
    exactly, with no cancellation in numpy: the vector part to 1e-13 relative."""
    model = _one_joint(jtype)
    o = 0 if jtype == J.SPHERICAL else 3
    q0 = db.neutral_configuration(model)
    rng = np.random.default_rng(1)
    for t in SMALL:
        w = rng.standard_normal(3)
        w *= t / np.linalg.norm(w)
        v = np.zeros(model.nv)
        v[o : o + 3] = w
        q1 = db.integrate(model, q0, v)
        assert_close(f"vector part of exp(w), |w| = {t:g}", q1[o : o + 3], np.sin(t / 2) / t * w, 1e-13)
        assert abs(q1[o + 3] - np.cos(t / 2)) <= 1e-16


def test_planar_integrate_and_difference_small_rotations_against_the_closed_form():
    """Mutants (found in numba's kernels, now core/joint_configuration.pxi): the Taylor branch (|w| < 1e-4) of the planar joint's
    exp (sin w / w = 1 + w^2/6) and log ((1 - cos w) / w = w/2 + w^3/24).  Both errors are a
    few 1e-13 of the displacement or less: within the Pinocchio comparison's tolerances.  Here
    each component is checked against the closed form (1 - cos w) / w = 2 sin^2(w/2) / w
    (no cancellation), 1e-13 relative per component: the component along cw is 4.5e-5 of the
    other, so a relative error of w^2/12 in cw shows."""
    model = _one_joint(J.PLANAR)
    q0 = db.neutral_configuration(model)  # [0, 0, 1, 0]
    for w in SMALL:
        sw, cw = np.sin(w) / w, 2.0 * np.sin(w / 2) ** 2 / w
        q1 = db.integrate(model, q0, np.array([0.0, 1.0, w]))  # translation V(w) (0, 1) = (-cw, sw)
        assert_close(f"x of exp, w = {w:g}", q1[0], -cw, 1e-13)
        assert_close(f"y of exp, w = {w:g}", q1[1], sw, 1e-13)
        d = db.difference(model, q0, np.array([0.0, 1.0, np.cos(w), np.sin(w)]))  # V(w)^-1 (0, 1)
        det = sw * sw + cw * cw
        assert_close(f"vx of log, w = {w:g}", d[0], cw / det, 1e-13)
        assert_close(f"vy of log, w = {w:g}", d[1], sw / det, 1e-13)
        assert_close(f"wz of log, w = {w:g}", d[2], w, 1e-13)


# ----------------------------------------------------------------------------- singular articulated inertias
def _massless_hub(children, seed):
    """Link 0: massless, revolute about z at the base; its children sit on that axis, moved by
    ``children`` joints (a revolute one about the same axis, turned about it by a random
    angle): whatever link 0 does, its children can undo, so its articulated inertia is zero
    and only round-off is left of it."""
    rng = np.random.default_rng(seed)
    n = 1 + len(children)
    turns = rng.uniform(0.0, 2 * np.pi, len(children))
    R0 = [np.eye(3)] + [
        np.array([[np.cos(t), -np.sin(t), 0.0], [np.sin(t), np.cos(t), 0.0], [0.0, 0.0, 1.0]]) for t in turns
    ]
    mass = [0.0] + [float(rng.uniform(0.5, 2.0)) for _ in children]
    return db.Model(
        name="hub",
        link_names=[f"l{k}" for k in range(n)],
        joint_names=[f"j{k}" for k in range(n)],
        parent=[-1] + [0] * len(children),
        joint_type=[J.REVOLUTE, *children],
        joint_axis=[np.array([0.0, 0.0, 1.0])] * n,
        joint_rotation=R0,
        joint_translation=[np.zeros(3)] + [np.array([0.0, 0.0, rng.uniform(0.1, 0.5)]) for _ in children],
        mass=mass,
        com=[np.zeros(3)] + [0.1 * rng.standard_normal(3) for _ in children],
        inertia=[np.zeros((3, 3))] + [random_inertia(rng, m) for m in mass[1:]],
    )


@pytest.mark.parametrize(
    "children",
    [(J.REVOLUTE,), (J.SPHERICAL, J.SPHERICAL), (J.REVOLUTE, J.SPHERICAL)],
    ids=["coaxial revolute", "two balls", "revolute and ball"],
)
def test_a_massless_link_above_free_bodies_is_singular(children):
    """Mutants (found in numba's kernels, now core/forward_dynamics.pxi): the scales of the singular-pivot test: the
    cancellation that a child's projection leaves in its parent's pivot (``scale = x*x*inv`` in
    to_parent set to 0), and the scale a child module hands to its parent module (``M_MAG``
    not updated).  Either way the parent's pivot, round-off of a zero, passed for an inertia and
    forward dynamics returned numbers (0, or tens of rad/s^2) instead of refusing the state."""
    for seed in range(5):
        model = _massless_hub(children, seed)
        rng = np.random.default_rng(seed)
        q, v = db.random_configuration(model, rng), rng.standard_normal(model.nv)
        with pytest.raises(db.SingularInertiaError) as info:
            db.forward_dynamics(model, q, v, np.zeros(model.nv))
        assert info.value.joint == "j0"


# ----------------------------------------------------------------------------- fixed-step runs
def _rk4_held(model, q, v, dt, taus):
    """Classical RK4 on vector-space joints around db.forward_dynamics, tau_n held over step n."""
    for tau in taus:
        k1 = db.forward_dynamics(model, q, v, tau)
        k2 = db.forward_dynamics(model, q + dt / 2 * v, v + dt / 2 * k1, tau)
        k3 = db.forward_dynamics(model, q + dt / 2 * (v + dt / 2 * k1), v + dt / 2 * k2, tau)
        k4 = db.forward_dynamics(model, q + dt * (v + dt / 2 * k2), v + dt * k3, tau)
        q, v = (
            q + dt / 6 * (v + 2 * (v + dt / 2 * k1) + 2 * (v + dt / 2 * k2) + (v + dt * k3)),
            v + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4),
        )
    return q, v


@pytest.mark.parametrize("name", ["gripper", "random_tree"])
def test_a_torque_table_is_held_over_each_step(name):
    """Mutant (found in numba's kernels, now core/integrators.pxi): evaluates stage 4 of step n with row n + 1 of the torque
    table (the end of the step).  The suite's tables are constant or only compared with
    themselves; here every row differs and the run is checked against RK4 with tau_n held."""
    model = gripper4() if name == "gripper" else random_model(4, 5, joint_types=(J.REVOLUTE, J.PRISMATIC))
    rng = np.random.default_rng(5)
    q0, v0 = 0.3 * rng.standard_normal(model.nq), rng.standard_normal(model.nv)
    taus = rng.standard_normal((20, model.nv)) * (0.05 if name == "gripper" else 1.0)
    tr = db.simulate(model, q0, v0, 0.02, 1e-3, tau=taus, progress=False)
    q, v = _rk4_held(model, q0, v0, 1e-3, taus)
    assert_close("q after 20 steps", tr.q[-1], q, 1e-12)
    assert_close("v after 20 steps", tr.v[-1], v, 1e-12)
    assert np.array_equal(tr.tau[:-1], taus)


# ----------------------------------------------------------------------------- motions and trajectories
def test_cycloidal_motion_values():
    """Mutant: motions.py's acceleration without its factor 2 pi / T.  The motion is used only
    by examples that compare torques at the same (q, v, a) with pin.rnea.  000 eq. (15) at
    t = 0, T/4, T/2, T: q, v and a in closed form."""
    q0, q1, T = np.array([0.2, -1.0]), np.array([1.4, 0.5]), 0.8
    d = q1 - q0
    expected = {
        0.0: (q0, 0 * d, 0 * d),
        T / 4: (q0 + d * (0.25 - 1 / (2 * np.pi)), d / T, 2 * np.pi * d / T**2),
        T / 2: (q0 + d / 2, 2 * d / T, 0 * d),
        T: (q1, 0 * d, 0 * d),
    }
    q, v, a = db.cycloidal_motion(q0, q1, T, list(expected))
    for n, (t, (qe, ve, ae)) in enumerate(expected.items()):
        np.testing.assert_allclose(q[n], qe, rtol=1e-14, atol=1e-14, err_msg=f"q at t = {t}")
        np.testing.assert_allclose(v[n], ve, rtol=1e-14, atol=1e-14 * np.abs(d).max() / T, err_msg=f"v at t = {t}")
        np.testing.assert_allclose(a[n], ae, rtol=1e-14, atol=1e-14 * np.abs(d).max() / T**2, err_msg=f"a at t = {t}")


def test_feedforward_torques_make_a_sprung_damped_model_follow_the_motion():
    """Mutants: motions.py's trajectory_torques with the dampers' or the springs' torque of
    the wrong sign (and the acceleration above).  The documented property: simulate with
    these torques follows the motion, here on a model whose every joint has a spring and a
    damper, to RK4's error."""
    model = random_model(4, 4, joint_types=(J.REVOLUTE, J.PRISMATIC))
    rng = np.random.default_rng(4)
    model = model.replace(
        damping=rng.uniform(0.5, 2.0, 4),
        stiffness=rng.uniform(1.0, 5.0, 4),
        rest_configuration=rng.uniform(-0.5, 0.5, 4),
    )
    qa, qb, T = rng.uniform(-0.5, 0.5, 4), rng.uniform(-0.5, 0.5, 4), 0.25

    def motion(t):
        return db.cycloidal_motion(qa, qb, T, t)

    tr = db.simulate(model, qa, np.zeros(4), T, 5e-4, tau=db.feedforward(model, motion), progress=False)
    q, v, _ = db.cycloidal_motion(qa, qb, T, tr.t)
    assert_close("q along the motion", tr.q, q, 1e-9)
    assert_close("v along the motion", tr.v, v, 1e-9)


def test_trajectory_at_interpolates_v_a_and_tau_from_the_earlier_state():
    """Mutant: trajectory.py's Trajectory.at interpolating v, a and tau from the later saved
    state (x[j] + u (x[i] - x[j])): equal at the midpoint, the only instant the suite asks
    for between saved states (and then for q only)."""
    model = gripper4()
    tr = db.simulate(
        model, np.array([0.3, -0.2, 0.1, 0.0]), np.zeros(4), 0.01, 1e-3, tau=np.full(4, 0.01), progress=False
    )
    u = 0.3
    mid = tr.at([tr.t[4] + u * (tr.t[5] - tr.t[4])])
    for name in ("v", "a", "tau"):
        x = getattr(tr, name)
        assert_close(name, getattr(mid, name)[0], x[4] + u * (x[5] - x[4]), 1e-14)
    assert_close("q", mid.q[0], db.interpolate(model, tr.q[4], tr.q[5], u), 1e-14)


def test_energy_balance_over_two_saved_states():
    """Mutant: trajectory.py's work of the input power over two saved states without the 1/2
    of the trapezoid rule (energy_drift's rule for fewer than three samples).  One saved step
    under a constant torque: the drift is E(dt) - E(0) - (P(0) + P(dt)) dt / 2."""
    model = gripper4()
    tr = db.simulate(
        model,
        np.array([0.3, -0.2, 0.1, 0.0]),
        np.array([1.0, 0.5, -0.5, 0.2]),
        1e-3,
        1e-3,
        tau=np.array([0.05, -0.02, 0.03, 0.01]),
        progress=False,
    )
    assert len(tr) == 2
    E, P = tr.total_energy, tr.power_in
    work = 0.5 * (P[0] + P[1]) * (tr.t[1] - tr.t[0])
    assert abs(tr.energy_drift()[1] - (E[1] - E[0] - work)) <= 1e-12 * abs(work)
    assert abs(tr.energy_drift()[1]) <= 1e-3 * abs(work)  # and that is the quadrature's error, (w dt)^2


@pytest.mark.parametrize("jtype", [J.PLANAR, J.FREEFLYER, J.SPHERICAL, J.CONTINUOUS], ids=lambda j: j.label)
def test_adaptive_methods_on_each_lie_group_joint(jtype):
    """Mutant (found in numba's kernels, now core/joint_configuration.pxi): the rate of a planar joint's (cos, sin) pair with the
    wrong sign (d cos / dt = +sin w), used only by the adaptive methods; the suite's adaptive
    runs on Lie-group joints have no planar joint.  A tree of that joint type under gravity:
    DOP853 at 1e-12 against RK4 at a 50x smaller step."""
    model = random_model(6, 3, joint_types=(jtype, J.REVOLUTE))
    assert jtype in model.joint_type
    rng = np.random.default_rng(6)
    q0, v0 = db.random_configuration(model, rng), rng.standard_normal(model.nv)
    ref = db.simulate(model, q0, v0, 0.2, 1e-4, progress=False)
    tr = db.simulate(model, q0, v0, 0.2, 5e-3, method="DOP853", rtol=1e-12, atol=1e-12, progress=False)
    assert np.abs(db.difference(model, ref.q[-1], tr.q[-1])).max() <= 1e-9
    assert_close("v", tr.v[-1], ref.v[-1], 1e-9)


@pytest.mark.parametrize("jtype, seed", [(J.PLANAR, 2), (J.SPHERICAL, 3)], ids=["planar", "spherical"])
def test_rkmk_keeps_fourth_order_on_planar_and_spherical_joints(jtype, seed):
    """Mutants (found in numba's kernels, now core/joint_configuration.pxi): the dexp^-1 of a planar or spherical joint with a bracket
    dropped or of the wrong sign: RKMK falls to third order or below.  The suite's order test
    draws a tree with a free-flyer and no planar joint.  A tree of these joints, no gravity: the
    error against DOP853 falls 16x per halving of the step."""
    model = random_model(seed, 3, joint_types=(jtype,)).replace(gravity=(0.0, 0.0, 0.0))
    rng = np.random.default_rng(0)
    q0, v0 = db.random_configuration(model, rng), rng.standard_normal(model.nv) * 2
    ref = db.simulate(model, q0, v0, 1.0, 0.01, method="DOP853", rtol=1e-13, atol=1e-13, progress=False)
    errors = [
        np.abs(db.difference(model, ref.q[-1], db.simulate(model, q0, v0, 1.0, dt, progress=False).q[-1])).max()
        for dt in (0.01, 0.005)
    ]
    assert 12.0 < errors[0] / errors[1] < 20.0, errors


# ----------------------------------------------------------------------------- loop closures
@pytest.mark.parametrize("kind", ["weld", "spherical", "revolute", "prismatic"])
@pytest.mark.parametrize("floating", [False, True])
def test_compiled_constrained_dynamics_at_velocities_that_violate_the_loops(kind, floating):
    """Mutant (found in numba's kernels, now core/loop_rows.pxi): the prismatic cut bias with 1 bdot.ddot instead of 2 (Cdot qdot of
    the two normal rows).  The suite compares the compiled path with the reference at
    projected velocities (C v = 0), where that term vanishes (the mutant's accelerations differ
    by 1e-13).  At a velocity that violates the loops (a state between projections) the
    relative velocity has normal components: compiled and reference agree to 1e-11."""
    from conftest import closed_cut as _closed
    from conftest import looped_tree as _looped_tree

    from denoc_bridge import loops

    model, q_ref, rng = _looped_tree(3 if floating else 8, floating)
    _closed(model, q_ref, kind, model.n_links - 1, 2, np.array([0.1, -0.05, 0.2]), (0.3, -0.4, 0.2), (0.3, 0.8, -0.2))
    for _ in range(3):
        q = loops.project_configuration(model, db.integrate(model, q_ref, 0.02 * rng.normal(size=model.nv)))
        v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
        assert np.abs(loops.loop_jacobian(model, q) @ v).max() > 1e-2
        a_ref = loops.reference_constrained(model, q, v, tau)[0]
        a = loops.constrained_forward_dynamics(model, q, v, tau)
        assert np.abs(a - a_ref).max() <= 1e-11 * np.abs(a_ref).max(), f"{kind}: compiled vs reference"
