"""The one-call GIM and inverse GIM (kernels/gim.py): preallocated outputs, batches bit for bit,
parity with the explicit DeNOC matrices on random trees of every joint type."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import denoc_bridge as db
from denoc_bridge.algorithms import reference as ref
from tests.conftest import assert_close, random_trees


@given(random_trees(12), st.integers(0, 2**31 - 1))
def test_gim_and_inverse_match_the_explicit_matrices(model, seed):
    q = db.random_configuration(model, np.random.default_rng(seed))
    M = db.mass_matrix(model, q)
    assert_close("GIM vs N^T M N", M, ref.reference_mass_matrix(model, q), 1e-12)
    assert np.array_equal(M, M.T)
    try:
        Minv = db.inverse_mass_matrix(model, q)
    except db.SingularInertiaError:
        return
    assert np.array_equal(Minv, Minv.T)
    assert_close("I^-1 vs the explicit U^-T D^-1 U^-1", Minv, ref.reference_inverse_mass_matrix(model, q), 1e-9)


@pytest.mark.parametrize("fn", [db.mass_matrix, db.inverse_mass_matrix])
def test_batches_are_the_single_calls_bit_for_bit(panda, fn):
    rng = np.random.default_rng(3)
    Q = np.array([db.random_configuration(panda, rng) for _ in range(37)])
    batch = fn(panda, Q)
    assert batch.shape == (37, panda.nv, panda.nv)
    for b in range(len(Q)):
        assert np.array_equal(batch[b], fn(panda, Q[b]))
    out = np.empty_like(batch)
    assert fn(panda, Q, out=out) is out and np.array_equal(out, batch)
    assert np.array_equal(fn(panda, Q.tolist()), batch)


@pytest.mark.parametrize("fn", [db.mass_matrix, db.inverse_mass_matrix])
def test_out_is_filled_and_returned(panda, fn):
    q = db.random_configuration(panda, np.random.default_rng(4))
    out = np.full((panda.nv, panda.nv), np.nan)
    assert fn(panda, q, out=out) is out
    assert np.array_equal(out, fn(panda, q))
    assert np.array_equal(fn(panda, list(q), out=out), fn(panda, q))
    for bad in (
        np.empty((panda.nv, panda.nv), dtype=np.float32),
        np.empty((panda.nv, panda.nv + 1)),
        np.empty((panda.nv, 2 * panda.nv))[:, ::2],
    ):
        with pytest.raises(db.InputError, match="out must be"):
            fn(panda, q, out=bad)


def test_a_bad_state_of_a_batch_is_named(panda):
    Q = np.array([db.neutral_configuration(panda)] * 3)
    Q[1, 2] = np.nan
    with pytest.raises(db.InputError, match="state 1 of the batch"):
        db.inverse_mass_matrix(panda, Q)
