"""The one-call GIM and inverse GIM (the compiled core's gim*.pxi): preallocated outputs, batches
bit for bit, parity with the explicit DeNOC matrices on random trees of every joint type, and the
entries' choice between the LTDL of the GIM and the recursion (through the entries' ``way`` hook:
1 the LTDL only, 2 the recursion only)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import denoc_bridge as db
from denoc_bridge.algorithms import reference as ref
from denoc_bridge.core import tree as compiled
from denoc_bridge.io.robots import serial_chain
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


LTDL, RECURSION, LTDL_REFUSED = 1, 2, -4  # the entries' ways, and the LTDL's refusal


def _factors_both_ways(model, q, module_level, inverse):
    """(A, B) of the sparse block LTDL of the GIM and of the recursion on the articulated masses."""
    nv, q = model.nv, np.asarray(q, dtype=float)
    A, B, A2, B2 = (np.empty((nv, nv)) for _ in range(4))
    ltdl = compiled.block_factors_state(model._kt, model.thread_work(), q, A, B, module_level, inverse, LTDL)
    if compiled.block_factors_state(model._kt, model.thread_work(), q, A2, B2, module_level, inverse, RECURSION):
        return None  # a singular articulated inertia
    assert ltdl == 0, "the LTDL refused a GIM whose articulated inertias are regular"
    return A, B, A2, B2


@given(random_trees(12), st.integers(0, 2**31 - 1))
def test_ltdl_of_the_gim_gives_the_factors_of_the_recursion(model, seed):
    q = db.random_configuration(model, np.random.default_rng(seed))
    for module_level in (True, False):
        for inverse in (False, True):
            both = _factors_both_ways(model, q, module_level, inverse)
            if both is None:
                return
            A, B, A2, B2 = both
            what = f"{'U^-1, D^-1' if inverse else 'U, D'} at {'module' if module_level else 'link'} level"
            assert_close(f"{what}: U", A, A2, 1e-9)
            bound = max(1e-9, 100 * np.linalg.cond(B2) * np.finfo(float).eps)
            assert_close(f"{what}: D", B, B2, bound)
            assert np.array_equal(B, B.T)


@pytest.mark.parametrize("name,ltdl", [("panda", True), ("solo12", True), ("talos", False)])
def test_block_factors_take_the_faster_way_per_model(name, ltdl):
    """The entry's choice (LTDL_MAX_WORK of core/gim_entry.pxi): panda and solo12 by the LTDL of the GIM, talos by
    the recursion; the public factors are those of either way."""
    model = db.load_robot(name)
    q = db.random_configuration(model, np.random.default_rng(5))
    for module_level in (True, False):
        assert compiled.factors_take_ltdl(model._kt, module_level) == ltdl
        level = "module" if module_level else "link"
        A, B, A2, B2 = _factors_both_ways(model, q, module_level, False)
        U, D = db.udut(model, q, level=level)
        assert np.array_equal(U, A if ltdl else A2) and np.array_equal(D, B if ltdl else B2)
        assert_close(f"U D U^T ({level})", U @ D @ U.T, db.mass_matrix(model, q), 1e-12)
        A, B, A2, B2 = _factors_both_ways(model, q, module_level, True)
        Uinv, Dinv = db.inverse_udut(model, q, level=level)
        assert np.array_equal(Uinv, A if ltdl else A2) and np.array_equal(Dinv, B if ltdl else B2)
        assert_close(f"U^-T D^-1 U^-1 ({level})", Uinv.T @ Dinv @ Uinv, db.inverse_mass_matrix(model, q), 1e-10)


def _minv_both_ways(model, q):
    """(I, I^-1 by the LTDL of the GIM and Takahashi's recurrence, I^-1 by the recursion on the
    articulated masses, whether the entry takes the LTDL), or None for a singular articulated
    inertia."""
    nv, q = model.nv, np.asarray(q, dtype=float)
    M = db.mass_matrix(model, q)
    A, R = np.empty((nv, nv)), np.empty((nv, nv))
    status = compiled.inverse_mass_matrix_state(model._kt, model.thread_work(), q, A, LTDL)
    assert status in (0, LTDL_REFUSED)
    if compiled.inverse_mass_matrix_state(model._kt, model.thread_work(), q, R, RECURSION):
        return None  # a singular articulated inertia
    ok = status == 0
    assert ok or np.linalg.cond(M) > 1e9, "the LTDL refused a well-conditioned GIM"
    return M, A, R, ok and compiled.inverse_takes_ltdl(model._kt)


@given(random_trees(12), st.integers(0, 2**31 - 1))
def test_ltdl_inverse_matches_the_recursion_and_a_dense_inverse(model, seed):
    q = db.random_configuration(model, np.random.default_rng(seed))
    both = _minv_both_ways(model, q)
    if both is None:
        return
    M, A, R, ltdl = both
    assert np.array_equal(A, A.T)
    bound = max(1e-11, 10 * np.linalg.cond(M) * np.finfo(float).eps)
    assert_close("I^-1: LTDL vs numpy.linalg.inv(I)", A, np.linalg.inv(M), bound)
    assert_close("I^-1: LTDL vs the recursion", A, R, bound)
    assert_close("I I^-1 (LTDL)", M @ A, np.eye(model.nv), bound)
    assert np.array_equal(db.inverse_mass_matrix(model, q), A if ltdl else R)


@pytest.mark.parametrize("name,ltdl", [("panda", True), ("solo12", True), ("talos", True), ("chain30", False)])
def test_inverse_takes_the_faster_way_per_model(name, ltdl):
    """The entry's choice (MINV_LTDL_WORK_PER_ENTRY of core/gim_entry.pxi): the LTDL of the GIM on the robots, the
    recursion on a 30-DOF chain; the public inverse is that of either way, bit for bit."""
    model = serial_chain(30) if name == "chain30" else db.load_robot(name)
    q = db.random_configuration(model, np.random.default_rng(6))
    M, A, R, chosen = _minv_both_ways(model, q)
    assert chosen == ltdl
    assert np.array_equal(db.inverse_mass_matrix(model, q), A if ltdl else R)
    assert_close("LTDL vs recursion", A, R, 1e-12)


def test_a_pivot_below_the_ltdl_threshold_hands_over_to_the_recursion():
    """Panda with fingers of 1e-9 of their mass: the finger pivots are 1e-11 of the GIM's largest
    diagonal entry, below MINV_PIVOT_RTOL (core/gim_ltdl.pxi), so the LTDL refuses and the entry returns the
    recursion's inverse (bit for bit), a regular one."""
    panda = db.load_robot("panda")
    mass, inertia = np.array(panda.mass, dtype=float), np.array(panda.inertia, dtype=float)
    fingers = [panda.link_names.index(n) for n in ("panda_leftfinger", "panda_rightfinger")]
    mass[fingers] *= 1e-9
    inertia[fingers] *= 1e-9
    model = panda.replace(mass=mass, inertia=inertia)
    q = db.random_configuration(model, np.random.default_rng(7))
    nv = model.nv
    M = db.mass_matrix(model, q)
    A, R = np.empty((nv, nv)), np.empty((nv, nv))
    assert compiled.inverse_takes_ltdl(model._kt)
    assert compiled.inverse_mass_matrix_state(model._kt, model.thread_work(), q, A, LTDL) == LTDL_REFUSED
    assert compiled.inverse_mass_matrix_state(model._kt, model.thread_work(), q, R, RECURSION) == 0
    Minv = db.inverse_mass_matrix(model, q)
    assert np.array_equal(Minv, R)
    assert_close("I I^-1", M @ Minv, np.eye(nv), 1e-12)
