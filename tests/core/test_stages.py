"""The compiled entries of a tree's runs stepped from Python and of its adaptive runs
(simulation/tree.py): the springs and dampers (core/run.pyx ``passive_forces``), the stop at the
joint limits after a step (``enforce_joint_limits``) and the adaptive solvers' right-hand side
(core/tree.pyx ``ode_rhs``), against their formulas: the springs ``-K (q (-) q_rest) - D v`` with
Pinocchio's difference, ``ode_rhs`` against the two entries it composes (``configuration_rate``
of core/configuration.pyx, ``forward_dynamics_state`` of core/tree.pyx, each tested against
Pinocchio and the explicit matrices in its own file), on every joint type, and the stop against
its formulas with a dense GIM; their statuses for values and lengths that do not fit, TypeError
for arrays of another kind.  (numba's ``passive_forces``, ``configuration_rate`` and
``forward_dynamics_state``, the oracles here until issue 49 deleted them, agreed to round-off.)"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import denoc_bridge as db
from denoc_bridge.core import configuration as cc
from denoc_bridge.core import load
from denoc_bridge.simulation.common import Forces
from denoc_bridge.simulation.tree import TreeSystem, limit_arrays
from tests.core.models import MASSLESS_TIP, MODELS, model_of

run, tree = load("run"), load("tree")

#: max|ours - theirs| / max(1, max|theirs|) of the velocities after a stop (1e-16 on the robots)
RTOL = 1e-13
#: of the passive forces against Pinocchio's difference (other formulas: 1.3e-13 measured on the
#: maps, tests/core/test_configuration.py)
RTOL_MAPS = 1e-12


def rel(a, b):
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b))))) if b.size else 0.0


def springs(model, seed=4):
    """Springs and dampers on every DOF about a random rest configuration."""
    nv = model.nv
    q_rest = np.ascontiguousarray(db.random_configuration(model, np.random.default_rng(seed)))
    return np.linspace(1.0, 3.0, nv), np.linspace(0.1, 0.5, nv), q_rest


def system_of(model, limits=False, passive=True):
    """The compiled form and forces of a TreeSystem (as simulate builds them) with springs on."""
    system = TreeSystem(model, Forces(model, None, None, 1, "rk4"), passive, limits)
    K, D, q_rest = springs(model)
    fc = system.forcing()._replace(K=K, D=D, q_rest=q_rest, passive=passive)
    return system.kernel_system(), fc


def state(model, seed):
    rng = np.random.default_rng(seed)
    return np.ascontiguousarray(db.random_configuration(model, rng)), rng.standard_normal(model.nv)


@pytest.mark.parametrize("name", MODELS)
def test_passive_forces_are_the_springs_and_dampers(name):
    """-K (q (-) q_rest) - D v on every joint type (the Lie groups' difference), and zero when
    the springs are off."""
    model = model_of(name)
    pm = db.to_pinocchio(model)
    for passive in (True, False):
        ks, fc = system_of(model, passive=passive)
        for seed in range(3):
            q, v = state(model, seed)
            ours = np.full(model.nv, np.nan)
            assert run.passive_forces(ks, fc, q, v, ours) == 0
            theirs = -fc.K * pin.difference(pm, fc.q_rest, q) - fc.D * v if passive else np.zeros(model.nv)
            assert rel(ours, theirs) <= RTOL_MAPS
            assert np.any(ours) == (passive and model.nv > 0)


@pytest.mark.parametrize("name", MODELS)
def test_ode_rhs_is_the_rate_and_the_forward_dynamics(name):
    """(dq/dt, a) of random states with external wrenches: the rate of every joint type's
    coordinates and the forward dynamics, and the same status."""
    model = model_of(name)
    rng = np.random.default_rng(5)
    fext = rng.standard_normal((model.n_links, 6))
    for seed in range(3):
        q, v = state(model, seed)
        tau = rng.standard_normal(model.nv)
        ours = np.full(model.nq, np.nan), np.full(model.nv, np.nan)
        theirs = np.full(model.nq, np.nan), np.full(model.nv, np.nan)
        status = tree.ode_rhs(model._kt, model.thread_work(), q, v, tau, fext, *ours)
        assert cc.configuration_rate(model._kt, q, v, theirs[0]) == 0
        work = np.empty_like(model.thread_work())
        assert status == tree.forward_dynamics_state(model._kt, work, q, v, tau, fext, theirs[1]) == 0
        assert np.array_equal(ours[0], theirs[0]) and rel(ours[1], theirs[1]) <= RTOL
        again = np.full(model.nq, np.nan), np.full(model.nv, np.nan)
        assert tree.ode_rhs(model._kt, np.zeros((0, 8)), q, v, tau, db.multibody.inputs.NO_FEXT, *again) == 0
        assert np.array_equal(again[0], ours[0])  # the rate does not depend on the wrenches


def test_ode_rhs_statuses_and_types():
    """-1 for a value that is not finite or a zero quaternion, k + 1 for a singular articulated
    inertia, -2 for a length that does not fit (nothing written), TypeError for an array of
    another kind."""
    model = model_of("talos")
    q, v = state(model, 0)
    tau, fext, work = np.zeros(model.nv), np.zeros((0, 6)), model.thread_work()

    def call(q=q, v=v, tau=tau, fext=fext, work=work, nq=model.nq, nv=model.nv):
        qdot, a = np.full(nq, 7.0), np.full(nv, 7.0)
        status = tree.ode_rhs(model._kt, work, q, v, tau, fext, qdot, a)
        return status, qdot, a

    assert call()[0] == 0
    zero_quaternion = q.copy()
    zero_quaternion[3:7] = 0.0
    nan_v = v.copy()
    nan_v[4] = np.nan
    for status, kwargs in [
        (-1, dict(q=zero_quaternion)),
        (-1, dict(v=nan_v)),
        (-2, dict(nq=model.nq + 1)),
        (-2, dict(nv=model.nv - 1)),
        (-2, dict(tau=np.zeros(model.nv + 1))),
        (-2, dict(fext=np.zeros((model.n_links - 1, 6)))),
        (-2, dict(work=np.zeros((3, 8)))),
    ]:
        got, qdot, a = call(**kwargs)
        assert got == status and np.all(qdot == 7.0) and np.all(a == 7.0), kwargs
    tip = db.load_urdf(MASSLESS_TIP)
    qt, vt = np.zeros(tip.nq), np.ones(tip.nv)
    qdot, a = np.zeros(tip.nq), np.zeros(tip.nv)
    expected = tree.forward_dynamics_state(tip._kt, tip.thread_work(), qt, vt, np.zeros(tip.nv), fext, a.copy())
    assert tree.ode_rhs(tip._kt, tip.thread_work(), qt, vt, np.zeros(tip.nv), fext, qdot, a) == expected
    assert expected == tip.link_index("tip") + 1
    frozen = np.zeros(model.nq)
    frozen.flags.writeable = False
    for kwargs, culprit in [(dict(q=list(q)), "q"), (dict(tau=tau.astype(np.float32)), "tau")]:
        with pytest.raises(TypeError, match=culprit):
            call(**kwargs)
    with pytest.raises(TypeError, match="qdot"):
        tree.ode_rhs(model._kt, work, q, v, tau, fext, frozen, np.zeros(model.nv))
    with pytest.raises(TypeError, match="a"):
        tree.ode_rhs(model._kt, work, q, v, tau, fext, np.zeros(model.nq), np.zeros(2 * model.nv)[::2])


def at_limits(model, seed):
    """A state of ``model`` (panda, talos) with some limited joints past a limit, some on one
    moving outwards, the rest inside."""
    li, lf = limit_arrays(model)
    q, v = state(model, seed)
    q[li[:, 0]] = 0.5 * (lf[:, 0] + lf[:, 1])
    rng = np.random.default_rng(seed)
    for j in rng.choice(len(li), size=min(4, len(li)), replace=False):
        side = rng.integers(2)
        q[li[j, 0]] = lf[j, side] + (rng.choice([0.0, 0.01]) if side else -rng.choice([0.0, 0.01]))
        v[li[j, 1]] = abs(v[li[j, 1]]) * (1 if side else -1)  # outwards
    return q, v


def reference_stop(model, li, lf, q, v, K, q_rest, passive):
    """The stop by its formulas (core/limits.pxi's header): q clamped to the limits, then the
    joints on a limit moving outwards stopped by v+ = v - M^-1 E (E^T M^-1 E)^-1 E^T v (dense
    M), growing the set while the impulse sets another moving outwards; the energy taken is the
    kinetic drop plus the potential energy the clamp removed.  (q+, v+, joints moved or stopped,
    energy)."""
    lo, hi = lf[:, 0], lf[:, 1]
    q2 = q.copy()
    q2[li[:, 0]] = np.clip(q[li[:, 0]], lo, hi)
    moved = int(np.sum(q2[li[:, 0]] != q[li[:, 0]]))

    def potential(x):
        V = db.energies(model, x, np.zeros(model.nv), springs=False)[1]
        return V + (0.5 * K @ db.difference(model, q_rest, x) ** 2 if passive else 0.0)

    def outwards(x, y):
        a, b = x[li[:, 0]], y[li[:, 1]]
        return ((a <= lo) & (b < 0.0)) | ((a >= hi) & (b > 0.0))

    M = db.mass_matrix(model, q2)
    active = list(np.flatnonzero(outwards(q2, v)))
    v2 = v.copy()
    while active:
        E = np.eye(model.nv)[:, li[active, 1]]
        Y = np.linalg.solve(M, E)
        v2 = v - Y @ np.linalg.solve(E.T @ Y, E.T @ v)
        new = [j for j in np.flatnonzero(outwards(q2, v2)) if j not in active]
        if not new:
            break
        active += new
    taken = 0.5 * v @ M @ v - 0.5 * v2 @ M @ v2 + potential(q) - potential(q2)
    return q2, v2, moved + len(active), taken


@pytest.mark.parametrize("name", ["panda", "talos"])
@pytest.mark.parametrize("passive", [True, False])
def test_the_stop_at_the_limits_is_its_formula(name, passive):
    """The clamp, the stopped joints, the velocities after the stop and the energy the limits
    took (less the potential energy of the clamp: gravity and the springs), against
    :func:`reference_stop` (numba's stop gave the same before it went)."""
    model = model_of(name)
    for seed in range(4):
        ks, fc = system_of(model, limits=True, passive=passive)
        li, lf = ks.lim_i, ks.lim_f
        q, v = at_limits(model, seed)
        q1, v1 = q.copy(), v.copy()
        stopped, status = run.enforce_joint_limits(ks, fc, q1, v1)
        q2, v2, n, taken = reference_stop(model, li, lf, q, v, fc.K, fc.q_rest, passive)
        assert (stopped, status) == (n, 0) and stopped > 0
        # measured: v to 2.2e-14, the energy to 4.4e-13 (a difference of potential energies)
        assert np.array_equal(q1, q2) and rel(v1, v2) <= 1e-12, rel(v1, v2)
        assert ks.lim_e[0] == pytest.approx(taken, rel=1e-11, abs=1e-12) and ks.lim_e[0] != 0.0
        assert np.all(q1[li[:, 0]] >= lf[:, 0]) and np.all(q1[li[:, 0]] <= lf[:, 1])
        assert not np.array_equal(v1, v)  # the stop acted


def test_the_stop_statuses_and_types():
    """Nothing done for lengths that do not fit (-2), nothing to do without limits, TypeError
    for an array of another kind or a read-only state."""
    model = model_of("panda")
    ks, fc = system_of(model, limits=True)
    q, v = at_limits(model, 1)
    for system, forcing, qb, vb in [
        (ks, fc, np.append(q, 0.0), v),
        (ks, fc, q, v[:-1]),
        (ks._replace(lim_i=np.array([[model.nq, 0]])), fc, q, v),
        (ks._replace(lim_s=np.zeros((3, model.nv))), fc, q, v),
        (ks, fc._replace(q_rest=np.zeros(model.nq - 1)), q, v),
        (ks._replace(work=np.zeros((3, 8))), fc, q, v),
    ]:
        q1, v1 = qb.copy(), vb.copy()
        assert run.enforce_joint_limits(system, forcing, q1, v1) == (0, -2)
        assert np.array_equal(q1, qb) and np.array_equal(v1, vb) and ks.lim_e[0] == 0.0
    free, _ = system_of(model, limits=False)
    q1, v1 = q.copy(), v.copy()
    assert run.enforce_joint_limits(free, fc, q1, v1) == (0, 0)
    assert np.array_equal(q1, q) and np.array_equal(v1, v)
    frozen = q.copy()
    frozen.flags.writeable = False
    for args, culprit in [
        ((ks, fc, frozen, v.copy()), "q"),
        ((ks, fc, q.copy(), list(v)), "v"),
        ((ks._replace(lim_i=ks.lim_i.astype(np.int32)), fc, q.copy(), v.copy()), "lim_i"),
    ]:
        with pytest.raises(TypeError, match=culprit):
            run.enforce_joint_limits(*args)
    out = np.zeros(model.nv)
    assert run.passive_forces(ks, fc, q, v, np.zeros(model.nv + 1)) == -2
    assert run.passive_forces(ks, fc._replace(D=np.zeros(model.nv - 1)), q, v, out) == -2
    assert run.passive_forces(ks, fc, q[:-1], v, out) == -2 and not np.any(out)
    assert run.passive_forces(ks, fc, frozen, v, out) == 0  # read-only inputs are fine
    with pytest.raises(TypeError, match="out"):
        run.passive_forces(ks, fc, q, v, np.zeros(model.nv, np.float32))


@pytest.mark.parametrize("name", MODELS)
def test_the_work_shape_is_the_layouts(name):
    """core/tree.pyx ``work_shape``, with which the Python layer allocates a model's work array
    (multibody/data.py), is core.layout's ``work_rows`` and the table's width."""
    from denoc_bridge.core import layout as T

    model = model_of(name)
    assert tree.work_shape(model.n_links, model.nv, model.n_modules) == (
        T.work_rows(model.n_links, model.nv, model.n_modules),
        T.W,
    )
    assert model.thread_work().shape == tree.work_shape(model.n_links, model.nv, model.n_modules)
