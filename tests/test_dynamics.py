"""Batches along a leading axis, the fast path's fall-back for other array types, and threads."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.testing import random_model


@pytest.fixture(scope="module")
def model():
    return random_model(21, 9, floating_base=True, branching=0.4)


def _states(model, B, seed=0):
    rng = np.random.default_rng(seed)
    Q = np.array([db.random_configuration(model, rng) for _ in range(B)])
    return Q, rng.standard_normal((B, model.nv)), rng.standard_normal((B, model.nv))


@pytest.mark.parametrize("func", ["forward_dynamics", "inverse_dynamics"])
def test_a_batch_equals_the_calls_state_by_state(model, func):
    """Same kernel per state, so the batch is bitwise the loop (37 states: uneven chunks)."""
    f = getattr(db, func)
    Q, V, X = _states(model, 37)
    batch = f(model, Q, V, X)
    assert batch.shape == (37, model.nv)
    for b in range(37):
        assert np.array_equal(batch[b], f(model, Q[b], V[b], X[b])), f"state {b} of the batch differs"


def test_batch_with_external_wrenches(model):
    Q, V, X = _states(model, 5, seed=1)
    rng = np.random.default_rng(2)
    W = rng.standard_normal((5, model.n_links, 6))
    batch = db.inverse_dynamics(model, Q, V, X, W)
    for b in range(5):
        assert np.array_equal(batch[b], db.inverse_dynamics(model, Q[b], V[b], X[b], W[b]))
    shared = db.forward_dynamics(model, Q, V, X, W[0])  # one wrench set for every state
    for b in range(5):
        assert np.array_equal(shared[b], db.forward_dynamics(model, Q[b], V[b], X[b], W[0]))
    by_name = db.forward_dynamics(model, Q, V, X, {model.link_names[2]: W[0, 2]})
    one = np.zeros((model.n_links, 6))
    one[2] = W[0, 2]
    assert np.array_equal(by_name[4], db.forward_dynamics(model, Q[4], V[4], X[4], one))


def test_batch_of_nonlinear_effects_and_gravity(model):
    Q, V, _ = _states(model, 4, seed=3)
    nle = db.nonlinear_effects(model, Q, V)
    g = db.gravity_torques(model, Q)
    for b in range(4):
        assert np.array_equal(nle[b], db.nonlinear_effects(model, Q[b], V[b]))
        assert np.array_equal(g[b], db.gravity_torques(model, Q[b]))


def test_batch_errors_name_the_state(model):
    Q, V, X = _states(model, 6, seed=4)
    V[3, model.idx_v[2]] = np.nan
    with pytest.raises(
        db.InputError,
        match=rf"state 3 of the batch: v\[{model.idx_v[2]}\] = nan is not finite "
        rf"\(joint '{model.joint_names[2]}'",
    ):
        db.forward_dynamics(model, Q, V, X)
    with pytest.raises(db.InputError, match=rf"v must have shape \(6, {model.nv}\) for a batch of 6 states"):
        db.inverse_dynamics(model, Q, V[:5], X)
    with pytest.raises(db.InputError, match=r"f_ext must have shape"):
        db.inverse_dynamics(model, Q, V, X, np.zeros((5, model.n_links, 6)))
    with pytest.raises(
        db.InputError,
        match=rf"q must have shape \(6, {model.nq}\) for a batch of 6 states "
        rf"\(model '{model.name}' has nq={model.nq}\), got \(6, {model.nq - 1}\)$",
    ):
        db.forward_dynamics(model, Q[:, 1:], V, X)


@pytest.mark.parametrize(
    "fn",
    [db.forward_dynamics, db.inverse_dynamics, db.forward_dynamics_derivatives, db.inverse_dynamics_derivatives],
)
def test_a_batch_names_the_wrench_that_is_not_finite(model, fn):
    """As a single call does: the entry of f_ext in Pinocchio's layout and its link (the batch's
    wrenches are checked in the kernel, and the Python layer finds the culprit afterwards)."""
    Q, V, X = _states(model, 9, seed=6)
    F = np.zeros((9, model.n_links, 6))
    F[4, 1, 5] = np.inf
    with pytest.raises(
        db.InputError,
        match=rf"^state 4 of the batch: f_ext\[1, 5\] = inf is not finite \(link '{model.link_names[1]}'\)$",
    ):
        fn(model, Q, V, X, F)
    with pytest.raises(db.InputError, match=rf"^f_ext\[1, 5\] = inf is not finite \(link '{model.link_names[1]}'\)$"):
        fn(model, Q[4], V[4], X[4], F[4])


def test_batch_singular_inertia_names_state_and_joint():
    xml = """<robot name="r"><link name="w"/>
      <link name="arm"><inertial><mass value="1"/><origin xyz="0.5 0 0"/>
        <inertia ixx="0.01" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <link name="sensor"/>
      <joint name="shoulder" type="revolute"><parent link="w"/><child link="arm"/><axis xyz="0 0 1"/>
        <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
      <joint name="spin" type="revolute"><parent link="arm"/><child link="sensor"/><axis xyz="1 0 0"/>
        <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
    </robot>"""
    m = db.load_urdf(xml)
    with pytest.raises(
        db.SingularInertiaError,
        match=r"state 0 of the batch: the articulated inertia of joint "
        r"'spin'",
    ) as info:
        db.forward_dynamics(m, np.zeros((2, 2)), np.zeros((2, 2)), np.zeros((2, 2)))
    assert info.value.joint == "spin"


@pytest.mark.parametrize("kind", ["list", "float32", "int", "strided", "fortran rows", "read-only"])
def test_other_array_types_give_the_same_result(model, kind):
    """Anything but C-contiguous float64 vectors leaves the fast path and is converted first."""
    Q, V, X = _states(model, 2, seed=5)
    q, v, x = Q[0], V[0], X[0]
    if kind == "float32":
        v, x = v.astype(np.float32), x.astype(np.float32)
        expected = db.forward_dynamics(model, q, v.astype(float), x.astype(float))
    elif kind == "int":
        v, x = np.round(v * 3).astype(int), np.round(x * 3).astype(int)
        expected = db.forward_dynamics(model, q, v.astype(float), x.astype(float))
    else:
        expected = db.forward_dynamics(model, q, v, x)
        if kind == "list":
            q, v, x = list(q), list(v), list(x)
        elif kind == "strided":
            q, v, x = (np.repeat(a, 2)[::2] for a in (q, v, x))
        elif kind == "fortran rows":
            q, v, x = (np.asfortranarray(np.stack([a, a]))[0] for a in (q, v, x))
        else:
            for a in (q, v, x):
                a.flags.writeable = False
    assert np.array_equal(db.forward_dynamics(model, q, v, x), expected)
    assert np.array_equal(
        db.inverse_dynamics(model, q, v, x),
        db.inverse_dynamics(model, *(np.asarray(a, dtype=float) for a in (q, v, x))),
    )


def test_threads_share_a_model_safely(model):
    """Each thread gets its own work array: concurrent calls equal the sequential results."""
    Q, V, X = _states(model, 8, seed=6)
    expected = [db.forward_dynamics(model, Q[b], V[b], X[b]) for b in range(8)]
    results = [[None] * 8 for _ in range(2)]

    def run(t):
        for _ in range(50):
            for b in range(8):
                results[t][b] = db.forward_dynamics(model, Q[b], V[b], X[b])

    threads = [threading.Thread(target=run, args=(t,)) for t in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for t in range(2):
        for b in range(8):
            assert np.array_equal(results[t][b], expected[b]), f"thread {t}, state {b}"


def test_results_are_fresh_arrays(model):
    Q, V, X = _states(model, 1, seed=7)
    a1 = db.forward_dynamics(model, Q[0], V[0], X[0])
    a2 = db.forward_dynamics(model, Q[0], V[0], X[0])
    assert a1 is not a2 and not np.shares_memory(a1, a2)
    a1[:] = 0.0
    assert np.array_equal(a2, db.forward_dynamics(model, Q[0], V[0], X[0]))
