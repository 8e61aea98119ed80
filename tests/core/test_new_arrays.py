"""The entries that allocate their result (``*_new``, the public calls' fast paths): the same
numbers as the entries writing into an output, a new C-contiguous float64 array on success, the
status otherwise (nothing returned half-written)."""

from __future__ import annotations

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.core import tree as compiled


@pytest.fixture(scope="module")
def state(panda):
    rng = np.random.default_rng(5)
    return db.random_configuration(panda, rng), rng.standard_normal(panda.nv), rng.standard_normal(panda.nv)


def test_new_arrays_equal_the_entries_into_an_output(panda, state):
    q, v, x = state
    work = panda.thread_work()
    for new, into, args in (
        (compiled.forward_dynamics_new, compiled.forward_dynamics_fast, (q, v, x)),
        (compiled.inverse_dynamics_new, compiled.inverse_dynamics_fast, (q, v, x)),
        (compiled.mass_matrix_new, compiled.mass_matrix_state, (q,)),
        (compiled.inverse_mass_matrix_new, compiled.inverse_mass_matrix_state, (q,)),
    ):
        res = new(panda._kt, work, *args)
        shape = (panda.nv,) if len(args) == 3 else (panda.nv, panda.nv)
        out = np.empty(shape)
        assert into(panda._kt, work, *args, out) == 0
        assert type(res) is np.ndarray and res.dtype == np.float64 and res.flags.c_contiguous
        assert res.shape == shape and np.array_equal(res, out), new.__name__


def test_a_bad_state_gives_its_status_not_an_array(panda, state):
    q, v, x = state
    work = panda.thread_work()
    bad = q.copy()
    bad[2] = np.nan
    assert compiled.forward_dynamics_new(panda._kt, work, bad, v, x) == -1
    assert compiled.inverse_dynamics_new(panda._kt, work, q, v[:-1], x) == -2
    assert compiled.mass_matrix_new(panda._kt, work, bad) == -1
    assert compiled.inverse_mass_matrix_new(panda._kt, work, q[:-1]) == -2
    assert compiled.mass_matrix_new(np.zeros((3, 5)), work, q) == -2  # not a model table
    with pytest.raises(TypeError, match="q"):
        compiled.forward_dynamics_new(panda._kt, work, q.astype(np.float32), v, x)
