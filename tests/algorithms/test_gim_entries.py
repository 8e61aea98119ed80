"""The one-call GIM and inverse GIM (kernels/gim.py): preallocated outputs, batches bit for bit,
parity with the explicit DeNOC matrices on random trees of every joint type."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import denoc_bridge as db
from denoc_bridge.algorithms import reference as ref
from denoc_bridge.io.robots import serial_chain
from denoc_bridge.kernels import entry, gim, gim_factors, gim_ltdl
from denoc_bridge.kernels import tables as T
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


def _factors_both_ways(model, q, module_level, inverse):
    """(A, B) of the sparse block LTDL of the GIM and of the recursion on the articulated masses."""
    ki, nv = model._kt.view(T.INT), model.nv
    A, B = db.mass_matrix(model, q), np.empty((nv, nv))
    ok = gim_ltdl.block_ltdl(ki, nv, module_level, inverse, A, B)
    work = entry._work(ki, np.empty((0, T.W)), nv)
    A2, B2 = np.empty((nv, nv)), np.empty((nv, nv))
    singular = entry.articulated_factors(ki, model._kt, np.asarray(q, dtype=float), nv, work)
    if singular:
        return None
    gim_factors.block_factors(ki, model._kt, work, nv, module_level, inverse, A2, B2)
    assert ok, "the LTDL refused a GIM whose articulated inertias are regular"
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
    """The entry's choice (entry.LTDL_MAX_WORK): panda and solo12 by the LTDL of the GIM, talos by
    the recursion; the public factors are those of either way."""
    model = db.load_robot(name)
    ki = model._kt.view(T.INT)
    q = db.random_configuration(model, np.random.default_rng(5))
    for module_level in (True, False):
        assert (gim_ltdl.ltdl_work(ki, model.nv, module_level) <= entry.LTDL_MAX_WORK) == ltdl
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
    ki, nv = model._kt.view(T.INT), model.nv
    q = np.asarray(q, dtype=float)
    M = db.mass_matrix(model, q)
    A = M.copy()
    lam, depth, u = np.empty(nv, dtype=np.int64), np.empty(nv, dtype=np.int64), np.empty(nv)
    gim_ltdl.dof_parents(ki, lam)
    ok = gim_ltdl.ltdl_minv(nv, A, lam, u)
    work = entry._work(ki, np.empty((0, T.W)), nv)
    if entry.articulated_factors(ki, model._kt, q, nv, work):
        return None
    R = np.empty((nv, nv))
    gim.minv_from_factors(ki, model._kt, work, nv, R)
    assert ok or np.linalg.cond(M) > 1e9, "the LTDL refused a well-conditioned GIM"
    ltdl = ok and gim_ltdl.minv_work(lam, depth, nv) <= entry.MINV_LTDL_WORK_PER_ENTRY * nv * nv
    return M, A, R, ltdl


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
    """The entry's choice (entry.MINV_LTDL_WORK_PER_ENTRY): the LTDL of the GIM on the robots, the
    recursion on a 30-DOF chain; the public inverse is that of either way, bit for bit."""
    model = serial_chain(30) if name == "chain30" else db.load_robot(name)
    q = db.random_configuration(model, np.random.default_rng(6))
    M, A, R, chosen = _minv_both_ways(model, q)
    assert chosen == ltdl
    assert np.array_equal(db.inverse_mass_matrix(model, q), A if ltdl else R)
    assert_close("LTDL vs recursion", A, R, 1e-12)


def test_a_pivot_below_the_ltdl_threshold_hands_over_to_the_recursion():
    """Panda with fingers of 1e-9 of their mass: the finger pivots are 1e-11 of the GIM's largest
    diagonal entry, below gim_ltdl.MINV_PIVOT_RTOL, so the LTDL refuses and the entry returns the
    recursion's inverse (bit for bit), a regular one."""
    panda = db.load_robot("panda")
    mass, inertia = np.array(panda.mass, dtype=float), np.array(panda.inertia, dtype=float)
    fingers = [panda.link_names.index(n) for n in ("panda_leftfinger", "panda_rightfinger")]
    mass[fingers] *= 1e-9
    inertia[fingers] *= 1e-9
    model = panda.replace(mass=mass, inertia=inertia)
    q = db.random_configuration(model, np.random.default_rng(7))
    ki, nv = model._kt.view(T.INT), model.nv
    M = db.mass_matrix(model, q)
    A, lam = M.copy(), np.empty(nv, dtype=np.int64)
    gim_ltdl.dof_parents(ki, lam)
    assert not gim_ltdl.ltdl_minv(nv, A, lam, np.empty(nv))
    work = entry._work(ki, np.empty((0, T.W)), nv)
    assert entry.articulated_factors(ki, model._kt, q, nv, work) == 0
    R = np.empty((nv, nv))
    gim.minv_from_factors(ki, model._kt, work, nv, R)
    Minv = db.inverse_mass_matrix(model, q)
    assert np.array_equal(Minv, R)
    assert_close("I I^-1", M @ Minv, np.eye(nv), 1e-12)
