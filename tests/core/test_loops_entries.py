"""The boundary of the compiled loops module (core/loops.pyx): every array is checked before
compiled code indexes it (a TypeError naming a wrong type, dtype or layout; status -2, nothing
computed, for a length or an index that does not fit; -1 for an invalid value), and the entries
compute what the readable versions (constraints/loop_kinematics.py, constraints/loops.py's
``reference_constrained``) say."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import closed_cut, looped_tree

import denoc_bridge as db
from denoc_bridge import loops
from denoc_bridge.constraints.loop_kinematics import all_rows
from denoc_bridge.constraints.packed import compiled, row_views
from denoc_bridge.core import loops as cl
from tests.constraints.test_joint_couplings import coupled

KINDS = ("weld", "spherical", "revolute", "prismatic")


def _looped(kind, floating=False, seed=8):
    model, q_ref, rng = looped_tree(seed, floating)
    closed_cut(
        model, q_ref, kind, model.n_links - 1, 2, np.array([0.1, -0.05, 0.2]), (0.3, -0.4, 0.2), (0.3, 0.8, -0.2)
    )
    return model, q_ref, rng


@pytest.fixture(scope="module")
def case():
    """A floating tree of every joint type with a prismatic cut and a state off the loops."""
    model, q_ref, rng = _looped("prismatic", floating=True, seed=3)
    q = db.integrate(model, q_ref, 0.05 * rng.normal(size=model.nv))
    return model, compiled(model), q, rng.normal(size=model.nv), rng.normal(size=model.nv)


def _accelerations(model, cp, q_, v_, tau_, fext=None, a=None, alpha=0.0, beta=0.0, rtol=loops.RANK_RTOL, **swap):
    """accelerations_state on the packed model, with the arguments named in ``swap`` replaced."""
    args = dict(kt=model._kt, work=cp.work, pi=cp.pi, pf=cp.pf, sb=cp.sb, q=q_, v=v_, tau=tau_)
    args["fext"] = loops.NO_FEXT if fext is None else fext
    args.update(swap)
    a = np.full(model.nv, 7.0) if a is None else a
    return cl.accelerations_state(*args.values(), alpha, beta, rtol, a), a


def _rows(model, cp, q_, v_, with_bias=True, **swap):
    """loop_rows_state on the packed model, with the arguments named in ``swap`` replaced."""
    args = dict(kt=model._kt, work=cp.work, pi=cp.pi, pf=cp.pf, sb=cp.sb, q=q_, v=v_)
    args.update(swap)
    return cl.loop_rows_state(*args.values(), with_bias)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("floating", [False, True])
def test_rows_are_the_readable_rows(kind, floating):
    """phi, C and Cdot v of every cut type against loop_kinematics.all_rows, off the loops (the
    residual, the normal components of the relative velocity not zero)."""
    model, q_ref, rng = _looped(kind, floating)
    cp = compiled(model)
    for _ in range(3):
        q = db.integrate(model, q_ref, 0.1 * rng.normal(size=model.nv))
        v = rng.normal(size=model.nv)
        assert _rows(model, cp, q, v) == 0
        for x, y in zip(row_views(cp.sb, model.n_links, model.nv, cp.m), all_rows(model, q, v, True)):
            assert np.abs(x - y).max() <= 1e-13 * max(1.0, np.abs(y).max())


def test_rows_of_couplings_are_the_readable_rows():
    model, q, v, _ = coupled()
    cp = compiled(model)
    q = db.integrate(model, q, 0.1 * np.ones(model.nv))
    assert _rows(model, cp, q, v) == 0
    for x, y in zip(row_views(cp.sb, model.n_links, model.nv, cp.m), all_rows(model, q, v, True)):
        assert np.abs(x - y).max() <= 1e-13 * max(1.0, np.abs(y).max())


@pytest.mark.parametrize("kind", KINDS)
def test_accelerations_and_multipliers_are_the_reference(kind):
    """a, lambda and the independent rows against reference_constrained (dense C, SciPy), with
    Baumgarte's terms and external wrenches, at velocities that violate the loops."""
    model, q_ref, rng = _looped(kind, True, seed=5)
    cp = compiled(model)
    q = loops.project_configuration(model, db.integrate(model, q_ref, 0.02 * rng.normal(size=model.nv)))
    v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    f_ext = rng.normal(size=(model.n_links, 6))
    fext = np.ascontiguousarray(db.multibody.inputs.external_wrenches(model, f_ext))
    (status, rank), a = _accelerations(model, cp, q, v, tau, fext, alpha=0.5, beta=3.0)
    assert status == 0
    a_ref, lam_ref, C_ref = loops.reference_constrained(model, q, v, tau, f_ext, baumgarte=(0.5, 3.0))
    assert rank == len(lam_ref)
    assert np.abs(a - a_ref).max() <= 1e-12 * np.abs(a_ref).max()
    assert np.abs(cp.lam[:rank] - lam_ref).max() <= 1e-11 * np.abs(lam_ref).max()
    np.testing.assert_allclose(cp.C[:rank], C_ref, atol=1e-13)


def test_wrong_types_are_named(case):
    model, cp, q, v, tau = case
    for name, bad in [
        ("q", dict(q=q.astype(np.float32))),
        ("q", dict(q=list(q))),
        ("v", dict(v=np.stack([v, v], axis=1)[:, 0])),
        ("tau", dict(tau=tau[::2])),
        ("pi", dict(pi=cp.pi.astype(np.int32))),
        ("pf", dict(pf=cp.pf.astype(np.float32))),
        ("kt", dict(kt=model._kt.astype(np.float32))),
        ("fext", dict(fext=np.zeros(6))),
    ]:
        with pytest.raises(TypeError, match=name):
            _accelerations(model, cp, q, v, tau, **bad)
    sb = cp.sb.copy()
    sb.flags.writeable = False
    with pytest.raises(TypeError, match="sb"):
        _rows(model, cp, q, v, sb=sb)
    a = np.zeros(model.nv)
    a.flags.writeable = False
    with pytest.raises(TypeError, match="a"):
        _accelerations(model, cp, q, v, tau, a=a)
    work = cp.work.copy()
    work.flags.writeable = False
    with pytest.raises(TypeError, match="work"):
        _rows(model, cp, q, v, work=work)


def _pi_with(cp, row, col, value):
    pi = cp.pi.copy()
    pi[row, col] = value
    return pi


def test_lengths_and_indices_are_status_minus_2_with_nothing_computed(case):
    model, cp, q, v, tau = case
    L, nl = model.n_links, cp.pi[0, 1]
    cut = 1 + L  # the cut joint's row of pi
    bad = [
        dict(q=q[:-1]),
        dict(v=v[:-1]),
        dict(tau=np.append(tau, 0.0)),
        dict(fext=np.zeros((L - 1, 6))),
        dict(fext=np.zeros((L, 5))),
        dict(work=cp.work[:-1]),
        dict(kt=model._kt[:-1]),
        dict(sb=cp.sb[:-1]),
        dict(pi=cp.pi[:-1], pf=cp.pf[:-1]),
        dict(pf=cp.pf[:-1]),
        dict(pi=_pi_with(cp, 0, 0, L + 1)),  # L
        dict(pi=_pi_with(cp, 0, 1, nl + 1)),  # nl
        dict(pi=_pi_with(cp, 0, 2, cp.m + 1)),  # m: the rows stop short
        dict(pi=_pi_with(cp, 0, 3, model.nv - 1)),  # nv
        dict(pi=_pi_with(cp, cut, 0, 9)),  # a type code
        dict(pi=_pi_with(cp, cut, 1, L)),  # a link
        dict(pi=_pi_with(cp, cut, 2, -2)),
        dict(pi=_pi_with(cp, cut, 3, 1)),  # the first row
    ]
    for swap in bad:
        (status, rank), a = _accelerations(model, cp, q, v, tau, **swap)
        assert (status, rank) == (-2, 0), swap.keys()
        assert np.all(a == 7.0)
    assert _accelerations(model, cp, q, v, tau, a=np.zeros(model.nv + 1))[0] == (-2, 0)
    assert _rows(model, cp, q[:-1], v) == -2
    assert _rows(model, cp, q, v, pi=_pi_with(cp, cut, 1, L)) == -2


def test_couplings_terms_are_checked():
    model, q, v, tau = coupled(with_cut=False)
    cp = compiled(model)
    L = model.n_links
    assert _rows(model, cp, q, v) == 0
    first = 1 + L  # the first coupling: [COUPLING, -1, -1, row, first term, terms]
    term = first + int(cp.pi[first, 4])
    for row, col, value in [(first, 4, 0), (first, 5, 99), (first, 4, -1), (term, 1, L), (term, 1, -1), (term, 0, 9)]:
        assert _rows(model, cp, q, v, pi=_pi_with(cp, row, col, value)) == -2, (row, col, value)
    pf = cp.pf.copy()
    pf[term, 0] = np.nan  # a coefficient
    assert _rows(model, cp, q, v, pf=pf) == -1


def test_invalid_values_are_status_minus_1(case):
    model, cp, q, v, tau = case
    nan_q, zero_quaternion = q.copy(), q.copy()
    nan_q[0] = np.nan
    zero_quaternion[3:7] = 0.0  # the free flyer's quaternion
    pf = cp.pf.copy()
    pf[1 + model.n_links, 5] = np.inf  # the cut joint's frame on link 1
    for swap in [dict(q=nan_q), dict(q=zero_quaternion), dict(v=v * np.nan), dict(tau=tau * np.inf), dict(pf=pf)]:
        (status, rank), a = _accelerations(model, cp, q, v, tau, **swap)
        assert status == -1, swap.keys()
        assert np.all(a == 7.0)
    fext = np.zeros((model.n_links, 6))
    fext[2, 1] = np.nan
    assert _accelerations(model, cp, q, v, tau, fext)[0][0] == -1
    for opts in [dict(alpha=-1.0), dict(beta=np.nan), dict(rtol=1.0), dict(rtol=-1e-3)]:
        assert _accelerations(model, cp, q, v, tau, **opts)[0][0] == -1, opts
    assert _rows(model, cp, nan_q, v) == -1
    assert _rows(model, cp, q, v * np.nan) == -1
    assert _rows(model, cp, q, v * np.nan, with_bias=False) == 0  # v is not read


def test_redundant_rows_are_dropped():
    """The same link welded twice (two frames, both closed): 12 rows of the rank of one weld, the
    duplicate rows dropped, the accelerations those of one weld."""
    model, q_ref, rng = _looped("weld", seed=8)
    one = model.replace(loops=tuple(model.loops))
    k = model.n_links - 1
    R, p = db.forward_kinematics(model, q_ref)
    x = R[2].T @ (p[k] + R[k] @ np.array([0.2, 0.1, 0.0]) - p[2])
    model.add_loop_closure(
        "again", "weld", model.link_names[k], model.link_names[2], xyz1=(0.2, 0.1, 0.0), xyz2=x, rotation2=R[2].T @ R[k]
    )
    v, tau = loops.project_velocity(model, q_ref, rng.normal(size=model.nv)), rng.normal(size=model.nv)
    (status, rank_one), a_one = _accelerations(one, compiled(one), q_ref, v, tau)
    cp = compiled(model)
    (status, rank), a = _accelerations(model, cp, q_ref, v, tau)
    assert status == 0 and rank == rank_one and cp.m == 12
    assert np.abs(a - a_one).max() <= 1e-10 * np.abs(a_one).max()


def _project(model, cp, q, v, rtol=loops.RANK_RTOL, tol=1e-12, max_iter=20, qn=None, **swap):
    """project_state on the packed model, with the arguments named in ``swap`` replaced."""
    args = dict(kt=model._kt, work=cp.work, pi=cp.pi, pf=cp.pf, sb=cp.sb, q=q, v=v)
    args.update(swap)
    return cl.project_state(*args.values(), rtol, tol, max_iter, np.empty(model.nq) if qn is None else qn)


@pytest.mark.parametrize("kind", ["spherical", "revolute", "prismatic"])
def test_projection_steps_are_the_kinetic_energy_metrics(kind):
    """One Gauss-Newton step of the positions (max_iter = 1: status -4 after it) is
    q (+) -M^-1 C^T (C M^-1 C^T)^-1 phi, and the velocity projection v - M^-1 C^T (C M^-1 C^T)^-1 C v,
    with the dense M of db.mass_matrix and the readable rows (C of full rank here)."""
    model, q_ref, rng = _looped(kind, True, seed=3)
    cp = compiled(model)
    q0, v0 = db.integrate(model, q_ref, 0.02 * rng.normal(size=model.nv)), rng.normal(size=model.nv)
    phi, C, _ = loops.loop_kinematics(model, q0, v0)
    assert np.linalg.matrix_rank(C) == len(C)
    Minv_Ct = np.linalg.solve(db.mass_matrix(model, q0), C.T)
    q_one = db.integrate(model, q0, -Minv_Ct @ np.linalg.solve(C @ Minv_Ct, phi))
    q, v = q0.copy(), v0.copy()
    status, err, err0 = _project(model, cp, q, v, max_iter=1)
    assert status == -4 and err0 == pytest.approx(np.abs(phi).max(), rel=1e-12) and err < 0.1 * err0
    np.testing.assert_allclose(q, q_one, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(v, v0)  # not reached
    q, v = q0.copy(), v0.copy()
    status, err, err0 = _project(model, cp, q, v)
    assert status == 0 and err <= 1e-12 and np.abs(loops.loop_residual(model, q)).max() <= 1e-12
    C = loops.loop_jacobian(model, q)
    Minv_Ct = np.linalg.solve(db.mass_matrix(model, q), C.T)
    v_ref = v0 - Minv_Ct @ np.linalg.solve(C @ Minv_Ct, C @ v0)
    assert np.abs(v - v_ref).max() <= 1e-12 * np.abs(v0).max()
    assert np.abs(C @ v).max() <= 1e-12 * np.abs(v0).max()


def test_projection_refuses_what_does_not_fit(case):
    model, cp, q, v, tau = case
    for name, bad in [("q", dict(q=q.astype(np.float32))), ("v", dict(v=list(v))), ("qn", dict(qn=np.empty(3, int)))]:
        with pytest.raises(TypeError, match=name):
            _project(model, cp, q.copy(), v.copy(), **bad)
    ro = v.copy()
    ro.flags.writeable = False
    with pytest.raises(TypeError, match="v"):
        _project(model, cp, q.copy(), ro)
    for swap in [dict(q=q[:-1].copy()), dict(v=np.append(v, 0.0)), dict(qn=np.empty(model.nq - 1)), dict(sb=cp.sb[1:])]:
        qq, vv = swap.get("q", q.copy()), swap.get("v", v.copy())
        before = qq.copy(), vv.copy()
        assert _project(model, cp, qq, vv, **{k: x for k, x in swap.items() if k not in "qv"}) == (-2, 0.0, 0.0)
        np.testing.assert_array_equal(qq, before[0])
        np.testing.assert_array_equal(vv, before[1])
    nan = q.copy()
    nan[1] = np.nan
    assert _project(model, cp, nan, v.copy())[0] == -1
    assert _project(model, cp, q.copy(), v * np.nan)[0] == -1
    for opts in [dict(tol=-1.0), dict(tol=np.inf), dict(max_iter=-1), dict(rtol=1.0)]:
        assert _project(model, cp, q.copy(), v.copy(), **opts)[0] == -1, opts
    status, err, err0 = _project(model, cp, q.copy(), v.copy(), max_iter=0)  # off the loops: no step allowed
    assert status == -4 and err == err0 > 1e-3


def test_the_rotation_log_is_scipys_at_every_angle():
    """The readable so(3) logarithm of the weld and revolute rows (loop_kinematics._log3, the
    formula of loop_rows.pxi's log3) against scipy's rotation vectors, from 0 to pi; within 1e-6
    of pi on the symmetric part, not theta / (2 sin theta) times the skew part's rounding."""
    from scipy.spatial.transform import Rotation

    from denoc_bridge.constraints.loop_kinematics import _log3

    rng = np.random.default_rng(0)
    angles = list(rng.uniform(0.0, np.pi, 300)) + [0.0, 1e-9, 1e-7, 1e-5, np.pi / 2, np.pi - 1e-3]
    for th in angles + [np.pi - 1e-6, np.pi - 1e-9, np.pi - 1e-13, np.pi]:
        n = rng.normal(size=3)
        n /= np.linalg.norm(n)
        R = Rotation.from_rotvec(th * n).as_matrix()
        x, ref = _log3(R), Rotation.from_matrix(R).as_rotvec()
        if np.pi - th < 1e-6 and x @ ref < 0.0:  # at pi, -pi n is pi n: the sign is a choice
            ref = -ref
        assert np.abs(x - ref).max() <= 2e-15, th
    R = Rotation.from_rotvec((np.pi - 3e-6) * np.array([0.0, 0.0, 1.0])).as_matrix()
    R[0, 2] += 1e-17  # a rounding off the plane stays a rounding
    assert np.abs(_log3(R)[:2]).max() < 1e-16


def test_a_revolute_cut_near_half_a_turn_is_closed_to_the_rounding():
    """The four-bar at relative rotations 1.6e-5 from pi (where a run's projection once stalled
    at |phi| 7e-12, the log amplifying the rotations' rounding): its rows equal the readable ones
    and the projection closes it to 1e-14."""
    from denoc_bridge.io.generators import fourbar

    model = fourbar()
    cp = compiled(model)
    q0 = np.array([-0.47949244872684094, 3.1416016168051293, -3.1416016168051306, 3.1416016168051404])
    v = np.zeros(model.nv)
    assert _rows(model, cp, q0, v) == 0
    for x, y in zip(row_views(cp.sb, model.n_links, model.nv, cp.m), all_rows(model, q0, v, True)):
        assert np.abs(x - y).max() <= 1e-13 * max(1.0, np.abs(y).max())
    assert np.abs(loops.loop_residual(model, q0)).max() < 1e-13
    q = q0.copy()
    status, err, err0 = _project(model, cp, q, v, tol=1e-14)
    assert status == 0 and err <= 1e-14
