"""The compiled derivatives (denoc_bridge/core/derivatives.pyx): the entries against Pinocchio's
``computeRNEADerivatives`` and ``computeABADerivatives`` field by field (those through M^-1 within
the conditioning-aware statement of validation.solve_agreement), against central differences of
the compiled dynamics on the manifold where Pinocchio is no reference (universal joints), the
two ways of the forward derivatives against each other, the batch's chunks against the single
states bit for bit, and the entries' answers to bad input (a TypeError naming the argument, then
the status: -2 lengths, -1 values, -3 a result that is not finite, k + 1 a singular articulated
inertia)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_solution_close

import denoc_bridge as db
from denoc_bridge.algorithms.derivatives import derivative_work
from denoc_bridge.core import derivatives as cd
from denoc_bridge.core import layout as T
from denoc_bridge.multibody import inputs
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.testing import random_model
from tests.core.models import MODELS, model_of

#: max|ours - Pinocchio's| / max|Pinocchio's| of dtau/dq, dtau/dv and M (measured at most 4.3e-15
#: on every model here, with and without external wrenches)
RTOL_PIN = 1e-13
#: the forward derivatives and qdd against Pinocchio's: within this, or where kappa(M) amplifies
#: the last bits of the two libraries' problems beyond it, solve_agreement's statement (its
#: default: the right-hand sides -dtau/dx are taken at each library's own qdd, which differ by
#: kappa eps, 1.7e-10 on a tree of kappa 1.9e6 here)
RTOL_SOLVE = 1e-9
W = T.W
CHOSEN, LTDL, RECURSION = 0, 1, 2  # the forward entry's ``way`` hook
#: random trees of every joint type but the universal one (Pinocchio's derivatives of universal
#: joints are wrong: tested against central differences below)
PIN_TYPES = tuple(t for t in JointType if t != JointType.UNIVERSAL)
PIN_TREES = [
    dict(seed=s, n_links=n, branching=b, n_roots=r, floating_base=fb, joint_types=PIN_TYPES, massless=ml)
    for s, n, b, r, fb, ml in [(20, 9, 0.5, 2, True, 0.0), (21, 14, 0.6, 3, False, 0.3), (22, 25, 0.3, 1, True, 0.0)]
]
PIN_MODELS = MODELS + [f"pin{i}" for i in range(len(PIN_TREES))] + ["chain100"]


def model_or_tree(name):
    if name == "chain100":  # past the LTDL's work count: the recursion's way
        return db.load_robot("chain:100")
    return random_model(**PIN_TREES[int(name[3:])]) if name.startswith("pin") else model_of(name)


def pin_fext(fext):
    return [pin.Force.Zero()] + [pin.Force(f) for f in fext]


def case(model, seed):
    """(q, v, x, fext in Pinocchio's layout [f; n], fext in the entries' order [n; f])."""
    rng = np.random.default_rng(seed)
    q = db.random_configuration(model, rng)
    v, x, f = rng.standard_normal(model.nv), rng.standard_normal(model.nv), rng.standard_normal((model.n_links, 6))
    return q, v, x, f, inputs.external_wrenches(model, f)


def compiled_id(model, q, v, a, fext=None, work=None):
    nv = model.nv
    out = [np.full((nv, nv), np.nan) for _ in range(3)]
    w = derivative_work(model) if work is None else work
    status = cd.inverse_dynamics_derivatives_state(model._kt, w, q, v, a, fext, *out)
    return status, out


def compiled_fd(model, q, v, tau, fext=None, work=None, way=CHOSEN):
    nv = model.nv
    out = [np.full((nv, nv), np.nan) for _ in range(3)]
    qdd = np.full(nv, np.nan)
    w = derivative_work(model) if work is None else work
    status = cd.forward_dynamics_derivatives_state(model._kt, w, q, v, tau, fext, qdd, *out, way)
    return status, qdd, out


def relative(ours, ref):
    return float(np.abs(ours - ref).max(initial=0.0) / max(np.abs(ref).max(initial=0.0), 1e-300))


def universal(model):
    return bool((model.joint_type == int(JointType.UNIVERSAL)).any())


def full(upper):
    return np.triu(upper) + np.triu(upper, 1).T


@pytest.mark.parametrize("name", PIN_MODELS)
@pytest.mark.parametrize("seed", [0, 1])
def test_inverse_derivatives_equal_pinocchio(name, seed):
    """dtau/dq (tangent space), dtau/dv and M of the state entry, every entry written (no nan
    left), against pin.computeRNEADerivatives with and without external wrenches."""
    model = model_or_tree(name)
    if universal(model):
        pytest.skip("Pinocchio 4.1's universal-joint derivatives are wrong (test_universal_*)")
    q, v, a, f_pin, fext = case(model, seed)
    pm = db.to_pinocchio(model)
    for wrenches in (None, fext):
        status, (dq, dv, M) = compiled_id(model, q, v, a, wrenches)
        assert status == 0
        pd = pm.createData()
        pin.computeRNEADerivatives(pm, pd, q, v, a, *([] if wrenches is None else [pin_fext(f_pin)]))
        Mp = full(pd.M)
        for key, ours, ref in (("dq", dq, pd.dtau_dq), ("dv", dv, pd.dtau_dv), ("M", M, Mp)):
            assert not np.isnan(ours).any()
            scale = max(np.abs(ref).max(), 1e-3 * np.abs(Mp).max())  # dv of parallel axes: round-off
            assert np.abs(ours - ref).max() <= RTOL_PIN * scale, (key, np.abs(ours - ref).max() / scale)


@pytest.mark.parametrize("name", PIN_MODELS)
@pytest.mark.parametrize("way", [CHOSEN, LTDL, RECURSION])
def test_forward_derivatives_equal_pinocchio(name, way):
    """qdd, dqdd/dq, dqdd/dv and M^-1 of the state entry, every way, against
    pin.computeABADerivatives with external wrenches: within RTOL_SOLVE, or solve_agreement's
    statement (the right-hand sides -dtau/dx at each library's own accelerations)."""
    model = model_or_tree(name)
    if universal(model):
        pytest.skip("Pinocchio 4.1's universal-joint derivatives are wrong (test_universal_*)")
    q, v, tau, f_pin, fext = case(model, 7)
    status, qdd, (ddq, ddv, Minv) = compiled_fd(model, q, v, tau, fext, way=way)
    assert status == 0 and not any(np.isnan(x).any() for x in (qdd, ddq, ddv, Minv))
    pm = db.to_pinocchio(model)
    pd = pm.createData()
    pin.computeABADerivatives(pm, pd, q, v, tau, pin_fext(f_pin))
    ref = [pd.ddq.copy(), pd.ddq_dq.copy(), pd.ddq_dv.copy(), full(pd.Minv)]
    pin.computeRNEADerivatives(pm, pd, q, v, ref[0], pin_fext(f_pin))
    _, (dq, dv, M) = compiled_id(model, q, v, qdd, fext)
    Mp, eye = full(pd.M), np.eye(model.nv)
    for key, ours, theirs, rhs, rhs_pin in (
        ("qdd", qdd, ref[0], tau - (M @ qdd - (M @ qdd)), tau - (Mp @ ref[0] - Mp @ ref[0])),
        ("ddq_dq", ddq, ref[1], -dq, -pd.dtau_dq),
        ("ddq_dv", ddv, ref[2], -dv, -pd.dtau_dv),
        ("Minv", Minv, ref[3], eye, eye),
    ):
        if key == "qdd":  # a solve of its own right-hand side: forward errors by kappa
            kappa = np.linalg.cond(Mp)
            assert relative(ours, theirs) <= max(RTOL_SOLVE, 10 * np.sqrt(model.nv) * kappa * 2.2e-16), key
            continue
        assert_solution_close(f"{name} {key}", ours, theirs, M, rhs, Mp, rhs_pin, RTOL_SOLVE)


def related(model):
    """related[r, c]: DOFs r and c on one supporting chain (one's link an ancestor of, or, the
    other's), from the model's parents."""
    link = np.repeat(np.arange(model.n_links), [int(n) for n in model._kt.view(np.int32)[:, T.NV]])
    out = np.zeros((model.nv, model.nv), dtype=bool)
    for c in range(model.nv):
        j = link[c]
        while j >= 0:
            out[c, link == j] = out[link == j, c] = True
            j = model.parent[j]
    return out


@pytest.mark.parametrize("name", ["random3", "random6", "talos", "solo12"])
def test_entries_of_dofs_on_no_common_chain_are_zero(name):
    """The entries of DOFs on no common supporting chain are exactly zero in the inverse
    derivatives (the sweeps' zeros after each subtree and the transposed triangles), every entry
    written over the nan the results start as (the related ones' values: Pinocchio's, in
    test_inverse_derivatives_equal_pinocchio); the forward derivatives fill them (M^-1 couples
    every pair)."""
    model = model_of(name)
    unrelated = ~related(model)
    assert unrelated.any()  # these trees branch
    q, v, x, _, fext = case(model, 10)
    status, ids = compiled_id(model, q, v, x, fext)
    assert status == 0 and all((m[unrelated] == 0.0).all() and not np.isnan(m).any() for m in ids)
    _, _, fds = compiled_fd(model, q, v, x, fext)
    assert (fds[0][unrelated] != 0.0).any() and (fds[2][unrelated] != 0.0).any()


def central_differences(model, q, v, x, fext, forward, h=1e-6):
    """d/dq and d/dv of the compiled inverse (or forward) dynamics by central differences on the
    manifold (Pinocchio's integrate)."""
    pm = db.to_pinocchio(model)
    nv = model.nv
    f = db.forward_dynamics if forward else db.inverse_dynamics
    dq, dv = np.empty((nv, nv)), np.empty((nv, nv))
    for j in range(nv):
        e = np.zeros(nv)
        e[j] = h
        y = [f(model, pin.integrate(pm, q, s * e), v, x, fext) for s in (1, -1)]
        dq[:, j] = (y[0] - y[1]) / (2 * h)
        y = [f(model, q, v + s * e, x, fext) for s in (1, -1)]
        dv[:, j] = (y[0] - y[1]) / (2 * h)
    return dq, dv


@pytest.mark.parametrize("seed", range(3))
def test_universal_joints_equal_central_differences(seed):
    types = (JointType.UNIVERSAL,) if seed < 2 else tuple(JointType)
    model = random_model(seed=seed, n_links=7, branching=0.4, joint_types=types, floating_base=seed == 2)
    q, v, x, f_pin, fext = case(model, seed)
    status, (dq, dv, M) = compiled_id(model, q, v, x, fext)
    assert status == 0
    fdq, fdv = central_differences(model, q, v, x, f_pin, forward=False)
    assert relative(dq, fdq) <= 1e-7 and relative(dv, fdv) <= 1e-7
    assert relative(M, db.mass_matrix(model, q)) <= 1e-13
    for way in (CHOSEN, RECURSION):
        status, qdd, (ddq, ddv, Minv) = compiled_fd(model, q, v, x, fext, way=way)
        assert status == 0
        fdq, fdv = central_differences(model, q, v, x, f_pin, forward=True)
        assert relative(ddq, fdq) <= 1e-6 and relative(ddv, fdv) <= 1e-6
        assert relative(M @ Minv, np.eye(model.nv)) <= 1e-10


@pytest.mark.parametrize("name", ["panda", "talos", "solo12", "random6", "type4-11", "type5-10"])
def test_the_two_ways_agree(name):
    """The GIM's LTDL with the passes at a = 0 and the acceleration pass, and the recursion with
    the passes at qdd, give the same derivatives (type5: universal joints, whose second column
    reads its node's rate in the acceleration pass): mapped back by M, within first-order perturbation theory (a backward-stable
    inverse leaves a residual of a few kappa eps; 1e-12 where M is well conditioned)."""
    model = model_of(name)
    q, v, tau, _, fext = case(model, 8)
    (s1, qdd1, (dq1, dv1, Mi1)), (s2, qdd2, (dq2, dv2, Mi2)) = (
        compiled_fd(model, q, v, tau, fext, way=way) for way in (LTDL, RECURSION)
    )
    assert s1 == s2 == 0
    _, (dq, dv, M) = compiled_id(model, q, v, qdd2, fext)
    allowed = 1e-12 + 10 * np.sqrt(model.nv) * np.linalg.cond(M) * np.finfo(float).eps
    for a, b, ref in ((dq1, dq2, dq), (dv1, dv2, dv)):
        assert np.abs(M @ (a - b)).max() <= allowed * np.abs(ref).max()
    assert np.abs(M @ (Mi1 - Mi2)).max() <= allowed
    assert np.abs(M @ (qdd1 - qdd2)).max() <= allowed * np.abs(tau).max()


def _panda_fingers(mass):
    """Panda with the fingers' masses and inertias set to ``mass`` (0: singular)."""
    panda = db.load_robot("panda")
    m, inertia = np.array(panda.mass, dtype=float), np.array(panda.inertia, dtype=float)
    fingers = [panda.link_names.index(n) for n in ("panda_leftfinger", "panda_rightfinger")]
    m[fingers] = mass
    inertia[fingers] = 0.0
    return panda.replace(mass=m, inertia=inertia), fingers


def test_a_pivot_the_ltdl_refuses_takes_the_recursion():
    """Fingers of 1e-11 kg: the LTDL's pivot is below its tolerance, the articulated pass's is
    not, so the chosen way takes the recursion for M^-1 and qdd and keeps the passes at a = 0
    (then the acceleration pass): the recursion's numbers; massless fingers are named."""
    model, fingers = _panda_fingers(1e-11)
    q, v, tau, _, _ = case(model, 9)
    (s1, qdd1, got), (s2, qdd2, ref) = (compiled_fd(model, q, v, tau, way=way) for way in (CHOSEN, RECURSION))
    assert s1 == s2 == 0 and np.array_equal(qdd1, qdd2) and np.array_equal(got[2], ref[2])
    for a, b in zip(got[:2], ref[:2]):
        assert relative(a, b) <= 1e-12
    singular, _ = _panda_fingers(0.0)
    for way in (CHOSEN, LTDL, RECURSION):
        status, _, _ = compiled_fd(singular, q, v, tau, way=way)
        assert status - 1 in fingers


@pytest.mark.parametrize("name", ["random3", "panda", "talos", "chain100"])
def test_new_and_empty_work_equal_the_state_entries(name):
    """The fast paths' entries (results allocated, no wrenches) and entries given an empty work
    array (allocated inside) give the state entries' numbers bit for bit."""
    model = model_or_tree(name)
    q, v, x, _, _ = case(model, 3)
    status, ref = compiled_id(model, q, v, x)
    assert status == 0
    new = cd.inverse_dynamics_derivatives_new(model._kt, derivative_work(model), q, v, x)
    _, empty = compiled_id(model, q, v, x, None, np.empty((0, W)))
    _, no_wrench = compiled_id(model, q, v, x, np.zeros((0, 6)))
    for got in (new, empty, no_wrench):
        assert all(np.array_equal(a, b) for a, b in zip(got, ref))
    status, _, ref = compiled_fd(model, q, v, x)
    assert status == 0
    new = cd.forward_dynamics_derivatives_new(model._kt, derivative_work(model), q, v, x)
    _, _, empty = compiled_fd(model, q, v, x, None, np.empty((0, W)))
    for got in (new, empty):
        assert all(np.array_equal(a, b) for a, b in zip(got, ref))


def batch(model, B, seed):
    rng = np.random.default_rng(seed)
    Q = np.array([db.random_configuration(model, rng) for _ in range(B)])
    V, X = rng.standard_normal((B, model.nv)), rng.standard_normal((B, model.nv))
    F = np.array([inputs.external_wrenches(model, rng.standard_normal((model.n_links, 6))) for _ in range(B)])
    return Q, V, X, F


def run_chunk(model, forward, Q, V, X, F, start, stop):
    B, nv = Q.shape[0], model.nv
    outs = [np.full((B, nv, nv), np.nan) for _ in range(3)]
    qdd = np.full((B, nv), np.nan)
    status = np.full(B, 99, dtype=np.int64)
    if forward:
        ret = cd.forward_dynamics_derivatives_chunk(model._kt, Q, V, X, F, qdd, *outs, status, start, stop)
    else:
        ret = cd.inverse_dynamics_derivatives_chunk(model._kt, Q, V, X, F, *outs, status, start, stop)
    return ret, status, qdd, outs


@pytest.mark.parametrize("forward", [False, True])
@pytest.mark.parametrize("with_wrenches", [False, True])
def test_a_chunk_equals_its_states(forward, with_wrenches):
    model = model_of("talos")
    Q, V, X, F = batch(model, 5, 0)
    F = F if with_wrenches else np.zeros((0, 0, 6))
    ret, status, qdd, outs = run_chunk(model, forward, Q, V, X, F, 1, 4)
    assert ret == 0 and list(status) == [99, 0, 0, 0, 99]
    for b in range(5):
        if b in (0, 4):  # outside the chunk: untouched
            assert all(np.isnan(x[b]).all() for x in outs)
            continue
        f = F[b] if with_wrenches else None
        if forward:
            s, qdd_b, one = compiled_fd(model, Q[b], V[b], X[b], f)
            assert np.array_equal(qdd[b], qdd_b)
        else:
            s, one = compiled_id(model, Q[b], V[b], X[b], f)
        assert s == 0 and all(np.array_equal(x[b], y) for x, y in zip(outs, one))


@pytest.mark.parametrize("forward", [False, True])
def test_a_chunk_gives_each_bad_state_its_status(forward):
    model = model_of("random1")  # a free-flyer: a zero quaternion is a bad value
    Q, V, X, F = batch(model, 4, 1)
    Q[1, 3:7] = 0.0
    V[2, 0] = np.inf
    ret, status, _, _ = run_chunk(model, forward, Q, V, X, F, 0, 4)
    assert ret == 0 and list(status) == [0, -1, -1, 0]
    singular, fingers = _panda_fingers(0.0)
    Q, V, X, F = batch(singular, 2, 2)
    ret, status, _, _ = run_chunk(singular, forward, Q, V, X, F, 0, 2)
    assert ret == 0 and (list(status) == [0, 0] if not forward else all(s - 1 in fingers for s in status))


@pytest.mark.parametrize("forward", [False, True])
@pytest.mark.parametrize(
    "change", ["V rows", "X rows", "QDD rows", "F links", "out rows", "out columns", "status", "range", "table"]
)
def test_a_chunk_whose_lengths_do_not_fit_computes_nothing(forward, change):
    model = model_of("panda")
    Q, V, X, F = batch(model, 3, 2)
    kt, nv = model._kt, model.nv
    outs = [np.full((3, nv, nv), np.nan) for _ in range(3)]
    qdd = np.full((3, nv), np.nan)
    status = np.full(3, 99, dtype=np.int64)
    start, stop = 0, 3
    if change == "V rows":
        V = V[:2].copy()
    elif change == "X rows":
        X = np.vstack([X, X[:1]])
    elif change == "QDD rows":
        qdd = np.full((2, nv), np.nan)
    elif change == "F links":
        F = F[:, 1:].copy()
    elif change == "out rows":
        outs[1] = outs[1][:2].copy()
    elif change == "out columns":
        outs[2] = np.full((3, nv, nv + 1), np.nan)
    elif change == "status":
        status = np.full(4, 99, dtype=np.int64)
    elif change == "range":
        stop = 4
    else:
        kt = kt[:, :-1].copy()
    if forward:
        ret = cd.forward_dynamics_derivatives_chunk(kt, Q, V, X, F, qdd, *outs, status, start, stop)
    else:
        if change == "QDD rows":
            return  # the inverse chunk takes no accelerations
        ret = cd.inverse_dynamics_derivatives_chunk(kt, Q, V, X, F, *outs, status, start, stop)
    assert ret == -2
    assert all(np.isnan(x).all() for x in outs) and np.isnan(qdd).all() and (status == 99).all()


@pytest.mark.parametrize("forward", [False, True])
def test_chunk_type_errors_name_the_argument(forward):
    model = model_of("panda")
    Q, V, X, F = batch(model, 2, 3)
    nv = model.nv
    outs = [np.zeros((2, nv, nv)) for _ in range(3)]
    status = np.zeros(2, dtype=np.int64)
    if forward:
        args = [model._kt, Q, V, X, F, np.zeros((2, nv)), *outs, status, 0, 2]
        names = ["kt", "Q", "V", "TAU", "FEXT", "QDD", "DQ", "DV", "MINV", "status"]
        entry = cd.forward_dynamics_derivatives_chunk
    else:
        args = [model._kt, Q, V, X, F, *outs, status, 0, 2]
        names = ["kt", "Q", "V", "A", "FEXT", "DQ", "DV", "MM", "status"]
        entry = cd.inverse_dynamics_derivatives_chunk
    for i, name in enumerate(names):
        bad = list(args)
        bad[i] = args[i].astype(np.float32) if name != "status" else status.astype(np.int32)
        with pytest.raises(TypeError, match=name):
            entry(*bad)


def bad_state_cases():
    """(name, the entry's arguments changed, expected status) of one state."""
    model = model_of("random1")  # a free-flyer
    q, v, x, _, fext = case(model, 4)
    nv, L = model.nv, model.n_links
    zero_quat = q.copy()
    zero_quat[3:7] = 0.0
    return [
        ("q short", dict(q=q[:-1]), -2),
        ("v long", dict(v=np.r_[v, 0.0]), -2),
        ("x short", dict(x=x[:-1]), -2),
        ("fext links", dict(fext=fext[:-1]), -2),
        ("fext columns", dict(fext=np.zeros((L, 5))), -2),
        ("first result shape", dict(d0=np.empty((nv, nv - 1))), -2),
        ("third result shape", dict(d2=np.empty((nv + 1, nv + 1))), -2),
        ("work rows", dict(work=np.empty((3, W))), -2),
        ("tree's work array", dict(work=model.thread_work()), -2),
        ("work columns", dict(work=np.empty((derivative_work(model).shape[0], W + 1))), -2),
        ("table columns", dict(kt=model._kt[:, :-1].copy()), -2),
        ("q nan", dict(q=np.r_[np.nan, q[1:]]), -1),
        ("v inf", dict(v=np.r_[v[:-1], np.inf]), -1),
        ("x nan", dict(x=np.r_[np.nan, x[1:]]), -1),
        ("fext nan", dict(fext=np.where(np.arange(L * 6).reshape(L, 6) == 3, np.nan, fext)), -1),
        ("zero quaternion", dict(q=zero_quat), -1),
        ("overflow", dict(v=np.full(nv, 1e200)), -3),
    ]


@pytest.mark.parametrize("forward", [False, True])
@pytest.mark.parametrize("name, change, expected", bad_state_cases(), ids=[c[0] for c in bad_state_cases()])
def test_bad_states_get_their_status(forward, name, change, expected):
    model = model_of("random1")
    q, v, x, _, fext = case(model, 4)
    nv = model.nv
    args = dict(kt=model._kt, work=derivative_work(model), q=q, v=v, x=x, fext=fext)
    if forward:
        args["qdd"] = np.full(nv, np.nan)
    args |= {f"d{i}": np.full((nv, nv), np.nan) for i in range(3)}
    args |= change
    entry = cd.forward_dynamics_derivatives_state if forward else cd.inverse_dynamics_derivatives_state
    assert entry(*args.values()) == expected
    if forward and name == "work rows":  # lengths and values first: the qdd too
        bad = dict(args, qdd=np.empty(nv + 1), work=derivative_work(model))
        assert entry(*bad.values()) == -2


def test_a_table_not_numbered_depth_first_is_refused():
    """The row sweeps need every subtree's DOFs in one range: a table whose links come breadth
    first (0 <- 1 <- 3 and 0 <- 2, numbered 0 1 2 3) is -2, nothing written; numbered depth
    first (0 1 3 2, link 2 the child of link 1) it is taken."""
    model = random_model(seed=2, n_links=4, branching=0.0, joint_types=(JointType.REVOLUTE,))
    q, v, a, _, _ = case(model, 0)
    nv = model.nv
    for parents, expected in (([-1, 0, 0, 1], -2), ([-1, 0, 1, 0], 0)):
        kt = model._kt.copy()
        kt.view(T.INT)[:, T.PARENT] = parents
        out = [np.full((nv, nv), np.nan) for _ in range(3)]
        assert cd.inverse_dynamics_derivatives_state(kt, np.empty((0, W)), q, v, a, None, *out) == expected
        assert all(np.isnan(x).all() if expected else not np.isnan(x).any() for x in out)
        out = [np.full((nv, nv), np.nan) for _ in range(3)]
        assert (
            cd.forward_dynamics_derivatives_state(kt, np.empty((0, W)), q, v, a, None, np.empty(nv), *out) == expected
        )


ID_NAMES = ["kt", "work", "q", "v", "a", "fext", "dtau_dq", "dtau_dv", "M"]
FD_NAMES = ["kt", "work", "q", "v", "tau", "fext", "qdd", "dqdd_dq", "dqdd_dv", "Minv"]
WRITTEN = {"work", "qdd", "dtau_dq", "dtau_dv", "M", "dqdd_dq", "dqdd_dv", "Minv"}


@pytest.mark.parametrize(
    "forward, i, name", [(False, i, n) for i, n in enumerate(ID_NAMES)] + [(True, i, n) for i, n in enumerate(FD_NAMES)]
)
def test_type_errors_name_the_argument(forward, i, name):
    model = model_of("panda")
    q, v, x, _, fext = case(model, 5)
    nv = model.nv
    args = [model._kt, derivative_work(model), q, v, x, fext] + ([np.zeros(nv)] if forward else [])
    args += [np.zeros((nv, nv)) for _ in range(3)]
    entry = cd.forward_dynamics_derivatives_state if forward else cd.inverse_dynamics_derivatives_state
    strided = np.stack([args[i], args[i]], axis=-1)[..., 0]  # every other number of a buffer
    assert not strided.flags.c_contiguous
    for bad in (args[i].astype(np.float32), strided, args[i].tolist()):
        changed = list(args)
        changed[i] = bad
        with pytest.raises(TypeError, match=name):
            entry(*changed)
    if name in WRITTEN:  # read-only arrays are refused where the entry writes
        changed = list(args)
        changed[i] = args[i].copy()
        changed[i].flags.writeable = False
        with pytest.raises(TypeError, match=name):
            entry(*changed)


def test_read_only_inputs_are_taken():
    model = model_of("solo12")
    q, v, x, _, fext = case(model, 6)
    ro = []
    for y in (q, v, x, fext):
        y = y.copy()
        y.flags.writeable = False
        ro.append(y)
    status, got = compiled_id(model, *ro)
    assert status == 0 and all(np.array_equal(a, b) for a, b in zip(got, compiled_id(model, q, v, x, fext)[1]))
    status, qdd, got = compiled_fd(model, *ro)
    _, qdd_ref, ref = compiled_fd(model, q, v, x, fext)
    assert status == 0 and np.array_equal(qdd, qdd_ref) and all(np.array_equal(a, b) for a, b in zip(got, ref))
