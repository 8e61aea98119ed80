"""The explicit DeNOC matrices (000 eqs. 9-13) and the module-level block formulas
(000 eqs. 16-23, 002 eqs. A.13-A.22) reproduce the recursive kernels."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close, random_state, random_trees
from hypothesis import given
from hypothesis import strategies as st

import denoc_bridge as db
from denoc_bridge.algorithms import reference as ref
from denoc_bridge.testing import random_model

small_trees = random_trees(8, 2)


@given(model=small_trees, seed=st.integers(0, 2**32 - 1))
def test_denoc_matrices_reproduce_the_recursions(model, seed):
    q, v, a, fext = random_state(model, seed)
    N_l, N_d = db.denoc_matrices(model, q)
    L = model.n_links
    assert N_l.shape == (6 * L, 6 * L) and N_d.shape == (6 * L, model.nv)
    ne = ref.uncoupled_newton_euler(model, q, v, a, fext)
    assert_close("t = N_l N_d qdot (eq. 9)", N_l @ N_d @ v, ne.t)
    I = N_d.T @ N_l.T @ ne.M @ N_l @ N_d
    assert_close("I = N_d^T N_l^T M N_l N_d (eq. 13)", I, db.mass_matrix(model, q))
    assert_close("tau = N_d^T N_l^T w (eq. 11)", N_d.T @ N_l.T @ ne.w, db.inverse_dynamics(model, q, v, a, fext))


@given(model=small_trees, seed=st.integers(0, 2**32 - 1))
def test_structure_of_the_module_level_denoc_matrices(model, seed):
    q = random_state(model, seed)[0]
    N_l, N_d = db.denoc_matrices(model, q)
    mods = model.modules
    rows = [slice(6 * m.links.start, 6 * m.links.stop) for m in mods]
    for i, mi in enumerate(mods):
        assert np.array_equal(N_l[rows[i], rows[i]], np.eye(6 * mi.n_links)), "diagonal blocks 1^i"
        # N_d is block diagonal: N^i only couples module i's rows with module i's DOFs
        outside = np.ones(model.nv, dtype=bool)
        outside[mi.v_slice] = False
        assert np.all(N_d[rows[i]][:, outside] == 0), f"N_d couples M{i + 1} with other modules"
        for j, mj in enumerate(mods):
            block = N_l[rows[j], rows[i]]
            ancestor = False
            k = mj.parent
            while k >= 0:
                ancestor |= k == i
                k = mods[k].parent
            if ancestor:  # A^{j,i}: only the column block of the last link of M_i (000 eq. 7a)
                assert np.all(block[:, :-6] == 0) and np.any(block[:, -6:] != 0)
            elif i != j:
                assert np.all(block == 0), f"A^{{{j + 1},{i + 1}}} must vanish: M{j + 1} is not in gamma_{i + 1}"


@given(model=small_trees, seed=st.integers(0, 2**32 - 1))
def test_module_block_factors_match_the_recursions(model, seed):
    q, v, a, fext = random_state(model, seed)
    U, D = ref.module_factors(model, q)
    Uk, Dk = db.udut(model, q)
    assert_close("Ubar (000 eq. 18)", Uk, U)
    assert_close("Dbar (000 eq. 18)", Dk, D)
    Uinv, Dinv = ref.module_factors_inverse(model, q)
    Uik, Dik = db.inverse_udut(model, q)
    assert_close("Ubar^-1 (002 eqs. A.13-A.18)", Uik, Uinv)
    assert_close("Dbar^-1", Dik, Dinv)
    assert_close(
        "I^-1 = Ubar^-T Dbar^-1 Ubar^-1 (002 eq. A.22)",
        db.inverse_mass_matrix(model, q),
        ref.reference_inverse_mass_matrix(model, q),
    )
    tau = db.inverse_dynamics(model, q, v, a, fext)
    assert_close(
        "forward dynamics by the three block solves (000 eq. 23)",
        ref.reference_forward_dynamics(model, q, v, tau, fext),
        db.forward_dynamics(model, q, v, tau, fext),
    )
    assert_close("reference inverse dynamics", ref.reference_inverse_dynamics(model, q, v, a, fext), tau)
    assert_close("reference GIM", ref.reference_mass_matrix(model, q), db.mass_matrix(model, q))


def test_ndot_of_the_explicit_formulation_is_the_time_derivative_of_n():
    """Ndot, used for tdot in uncoupled_newton_euler, against a finite difference along the motion."""
    model = random_model(11, 6, joint_types=(db.JointType.REVOLUTE, db.JointType.PRISMATIC, db.JointType.UNIVERSAL))
    q, v, _, _ = random_state(model, 4)
    h = 1e-6
    Np = ref.uncoupled_newton_euler(model, q + h * v).N
    Nm = ref.uncoupled_newton_euler(model, q - h * v).N
    Ndot = ref.uncoupled_newton_euler(model, q, v).Ndot
    assert np.abs((Np - Nm) / (2 * h) - Ndot).max() <= 1e-7 * max(1.0, np.abs(Ndot).max())


def test_explicit_matrices_refuse_large_models():
    model = random_model(0, 30, branching=0.0, joint_types=(db.JointType.REVOLUTE,))
    with pytest.raises(db.InputError, match="180 x 180 dense matrices"):
        db.denoc_matrices(model, db.neutral_configuration(model), max_links=20)
    N_l, N_d = db.denoc_matrices(model, db.neutral_configuration(model))
    assert N_l.shape == (180, 180)


def test_the_explicit_matrices_name_a_mimic_model_and_a_bad_max_links():
    """A MimicModel failed inside with "'quaternion_index' of model 'panda'" (or a shape error
    about its reduced q); max_links="a" or None raised a bare TypeError."""
    mm = db.load_robot("panda", mimic=True)
    for f in (db.denoc_matrices, db.uncoupled_newton_euler):
        with pytest.raises(db.InputTypeError, match=rf"{f.__name__} takes a tree Model.*model.tree"):
            f(mm, np.zeros(mm.tree.nq))
    model = db.load_robot("chain:3")
    for bad in ("a", None, 2.5):
        with pytest.raises(db.InputTypeError, match="max_links must be an integer"):
            db.denoc_matrices(model, np.zeros(3), max_links=bad)
    with pytest.raises(db.InputError, match="max_links must be >= 0"):
        db.uncoupled_newton_euler(model, np.zeros(3), max_links=-1)
    with pytest.raises(db.InputError, match=r"3 links > max_links=2"):
        db.denoc_matrices(model, np.zeros(3), max_links=np.int64(2))
