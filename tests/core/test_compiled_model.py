"""The compiled model (``CompiledTree`` of denoc_bridge/core/compiled_model.pxi, ``model._core``):
the table taken once, the work array of its owner thread, the same numbers as the entries that
take the table and a work array per call, the same statuses and TypeErrors, None on another
thread; rebuilt with the model's gravity and after pickling."""

from __future__ import annotations

import pickle
import threading

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.core import tree
from denoc_bridge.testing import random_model

ROBOTS = ["panda", "talos", "solo12"]


def _models():
    yield from ((name, db.load_robot(name)) for name in ROBOTS)
    for seed in (3, 6):
        yield f"random{seed}", random_model(seed=seed, n_links=14, branching=0.5, n_roots=2, floating_base=True)


MODELS = list(_models())


def _state(model, seed=0):
    rng = np.random.default_rng(seed)
    return db.random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv)


def _fresh(model):
    """A copy of the model whose compiled form no thread has called yet."""
    return pickle.loads(pickle.dumps(model))


@pytest.mark.parametrize(("name", "model"), MODELS, ids=[n for n, _ in MODELS])
def test_the_compiled_model_gives_the_entries_numbers_bit_for_bit(name, model):
    q, v, x = _state(model)
    core, kt, work = model._core, model._kt, model.thread_work()
    pairs = [
        (core.forward_dynamics(q, v, x), tree.forward_dynamics_new(kt, work, q, v, x)),
        (core.inverse_dynamics(q, v, x), tree.inverse_dynamics_new(kt, work, q, v, x)),
        (core.mass_matrix(q), tree.mass_matrix_new(kt, work, q)),
        (core.inverse_mass_matrix(q), tree.inverse_mass_matrix_new(kt, work, q)),
    ]
    for ours, entry in pairs:
        assert type(ours) is np.ndarray and ours.flags.c_contiguous
        np.testing.assert_array_equal(ours, entry)


def test_an_output_array_is_written_and_returned():
    model = db.load_robot("panda")
    q, v, tau = _state(model, 1)
    out, M = np.full(model.nv, np.nan), np.full((model.nv, model.nv), np.nan)
    assert model._core.forward_dynamics(q, v, tau, out) is out
    np.testing.assert_array_equal(out, db.forward_dynamics(model, q, v, tau, data=db.Data(model)))
    assert model._core.mass_matrix(q, M) is M
    np.testing.assert_array_equal(M, db.mass_matrix(model, q, data=db.Data(model)))


def test_the_statuses_and_type_errors_are_the_entries():
    model = db.load_robot("panda")
    core, kt, work = model._core, model._kt, model.thread_work()
    q, v, tau = _state(model, 2)
    bad_q = q.copy()
    bad_q[3] = np.nan
    assert core.forward_dynamics(bad_q, v, tau) == tree.forward_dynamics_new(kt, work, bad_q, v, tau) == -1
    assert core.forward_dynamics(q[:-1], v, tau) == -2
    assert core.inverse_dynamics(q, v, tau[:-1]) == -2
    assert core.forward_dynamics(q, v, tau, np.empty(model.nv + 1)) == -2
    assert core.mass_matrix(q, np.empty((model.nv, model.nv + 1))) == -2
    assert core.mass_matrix(bad_q) == -1
    assert core.inverse_mass_matrix(q[:-1]) == -2
    with pytest.raises(TypeError, match="q: expected a 1-D"):
        core.forward_dynamics(q.astype(np.float32), v, tau)
    with pytest.raises(TypeError, match="tau: expected a numpy.ndarray"):
        core.forward_dynamics(q, v, list(tau))
    with pytest.raises(TypeError, match="out: expected a 2-D"):
        core.mass_matrix(q, np.empty(model.nv))
    ro = np.empty(model.nv)
    ro.flags.writeable = False
    with pytest.raises(TypeError, match="writeable"):
        core.forward_dynamics(q, v, tau, ro)
    with pytest.raises(ValueError, match="not a model table"):
        tree.CompiledTree(np.zeros((3, 5)))


def test_another_thread_gets_none_and_the_public_call_still_answers():
    model = _fresh(db.load_robot("talos"))
    q, v, tau = _state(model, 3)
    owner: dict[str, object] = {}

    def first_caller():
        owner["a"] = model._core.forward_dynamics(q, v, tau)

    t = threading.Thread(target=first_caller)
    t.start()
    t.join()
    assert type(owner["a"]) is np.ndarray
    assert model._core.forward_dynamics(q, v, tau) is None  # this thread does not own the work
    assert model._core.mass_matrix(q) is None
    np.testing.assert_array_equal(db.forward_dynamics(model, q, v, tau), owner["a"])
    M = db.mass_matrix(model, q)
    np.testing.assert_allclose(M, db.mass_matrix(model, q, data=db.Data(model)), rtol=0, atol=0)


def test_the_public_calls_from_many_threads_agree_with_one_thread():
    model = _fresh(db.load_robot("panda"))
    states = [_state(model, s) for s in range(8)]
    expected = [db.forward_dynamics(model, *s, data=db.Data(model)) for s in states]
    got: dict[int, list[np.ndarray]] = {}

    def run(i):
        got[i] = [db.forward_dynamics(model, *s) for s in states for _ in range(50)][::50]

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(4):
        for a, b in zip(got[i], expected):
            np.testing.assert_array_equal(a, b)


def test_a_new_gravity_gives_a_new_compiled_model():
    model = db.load_robot("panda").replace()
    q, v, tau = _state(model, 4)
    before = db.forward_dynamics(model, q, v, tau)
    model.gravity = [0.0, 0.0, -1.62]
    after = db.forward_dynamics(model, q, v, tau)
    assert not np.allclose(before, after)
    np.testing.assert_array_equal(after, db.forward_dynamics(model, q, v, tau, data=db.Data(model)))
    assert model._core.table is model._kt


def test_a_pickled_model_has_its_compiled_model():
    model = _fresh(db.load_robot("solo12"))
    q, v, tau = _state(model, 5)
    assert model._core.table is model._kt
    np.testing.assert_array_equal(
        model._core.forward_dynamics(q, v, tau), db.forward_dynamics(model, q, v, tau, data=db.Data(model))
    )
