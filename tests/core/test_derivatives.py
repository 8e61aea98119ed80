"""The compiled derivatives (denoc_bridge/core/derivatives.pyx): the entries against Pinocchio's
``computeRNEADerivatives`` field by field, against central differences of the compiled inverse
dynamics on the manifold where Pinocchio is no reference (universal joints), the batch's chunks
against the single states bit for bit, and the entries' answers to bad input (a TypeError naming
the argument, then the status: -2 lengths, -1 values, -3 a result that is not finite)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import denoc_bridge as db
from denoc_bridge.core import derivatives as cd
from denoc_bridge.kernels import tables as T
from denoc_bridge.multibody import inputs
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.testing import random_model
from tests.core.models import MODELS, model_of

#: max|ours - Pinocchio's| / max|Pinocchio's| of dtau/dq, dtau/dv and M (measured at most 4.3e-15
#: on every model here, with and without external wrenches)
RTOL_PIN = 1e-13
W = T.W
#: random trees of every joint type but the universal one (Pinocchio's derivatives of universal
#: joints are wrong: tested against central differences below)
PIN_TYPES = tuple(t for t in JointType if t != JointType.UNIVERSAL)
PIN_TREES = [
    dict(seed=s, n_links=n, branching=b, n_roots=r, floating_base=fb, joint_types=PIN_TYPES, massless=ml)
    for s, n, b, r, fb, ml in [(20, 9, 0.5, 2, True, 0.0), (21, 14, 0.6, 3, False, 0.3), (22, 25, 0.3, 1, True, 0.0)]
]


def model_or_tree(name):
    return random_model(**PIN_TREES[int(name[3:])]) if name.startswith("pin") else model_of(name)


def pin_fext(fext):
    return [pin.Force.Zero()] + [pin.Force(f) for f in fext]


def case(model, seed):
    """(q, v, a, fext in Pinocchio's layout [f; n], fext in the entries' order [n; f])."""
    rng = np.random.default_rng(seed)
    q = db.random_configuration(model, rng)
    v, a, f = rng.standard_normal(model.nv), rng.standard_normal(model.nv), rng.standard_normal((model.n_links, 6))
    return q, v, a, f, inputs.external_wrenches(model, f)


def compiled_id(model, q, v, a, fext=None, work=None):
    nv = model.nv
    out = [np.full((nv, nv), np.nan) for _ in range(3)]
    w = model.thread_work() if work is None else work
    status = cd.inverse_dynamics_derivatives_state(model._kt, w, q, v, a, fext, *out)
    return status, out


def relative(ours, ref):
    return float(np.abs(ours - ref).max(initial=0.0) / max(np.abs(ref).max(initial=0.0), 1e-300))


def universal(model):
    return bool((model.joint_type == int(JointType.UNIVERSAL)).any())


@pytest.mark.parametrize("name", MODELS + [f"pin{i}" for i in range(len(PIN_TREES))])
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
        if wrenches is None:
            pin.computeRNEADerivatives(pm, pd, q, v, a)
        else:
            pin.computeRNEADerivatives(pm, pd, q, v, a, pin_fext(f_pin))
        Mp = np.triu(pd.M) + np.triu(pd.M, 1).T
        for key, ours, ref in (("dq", dq, pd.dtau_dq), ("dv", dv, pd.dtau_dv), ("M", M, Mp)):
            assert not np.isnan(ours).any()
            scale = max(np.abs(ref).max(), 1e-3 * np.abs(Mp).max())  # dv of parallel axes: round-off
            assert np.abs(ours - ref).max() <= RTOL_PIN * scale, (key, np.abs(ours - ref).max() / scale)


def central_differences(model, q, v, a, fext, h=1e-6):
    """dtau/dq and dtau/dv by central differences of the compiled inverse dynamics on the
    manifold (Pinocchio's integrate)."""
    pm = db.to_pinocchio(model)
    nv = model.nv
    dq, dv = np.empty((nv, nv)), np.empty((nv, nv))
    for j in range(nv):
        e = np.zeros(nv)
        e[j] = h
        tau = [db.inverse_dynamics(model, pin.integrate(pm, q, s * e), v, a, fext) for s in (1, -1)]
        dq[:, j] = (tau[0] - tau[1]) / (2 * h)
        tau = [db.inverse_dynamics(model, q, v + s * e, a, fext) for s in (1, -1)]
        dv[:, j] = (tau[0] - tau[1]) / (2 * h)
    return dq, dv


@pytest.mark.parametrize("seed", range(3))
def test_universal_joints_equal_central_differences(seed):
    types = (JointType.UNIVERSAL,) if seed < 2 else tuple(JointType)
    model = random_model(seed=seed, n_links=7, branching=0.4, joint_types=types, floating_base=seed == 2)
    q, v, a, f_pin, fext = case(model, seed)
    status, (dq, dv, M) = compiled_id(model, q, v, a, fext)
    assert status == 0
    fdq, fdv = central_differences(model, q, v, a, f_pin)
    assert relative(dq, fdq) <= 1e-7 and relative(dv, fdv) <= 1e-7
    assert relative(M, db.mass_matrix(model, q)) <= 1e-13


@pytest.mark.parametrize("name", ["random3", "panda", "talos"])
def test_new_and_empty_work_equal_the_state_entry(name):
    """The fast path's entry (results allocated, no wrenches) and an entry given an empty work
    array (allocated inside) give the state entry's numbers bit for bit."""
    model = model_of(name)
    q, v, a, _, _ = case(model, 3)
    status, ref = compiled_id(model, q, v, a)
    assert status == 0
    new = cd.inverse_dynamics_derivatives_new(model._kt, model.thread_work(), q, v, a)
    assert type(new) is tuple
    _, empty = compiled_id(model, q, v, a, None, np.empty((0, W)))
    _, no_wrench = compiled_id(model, q, v, a, np.zeros((0, 6)))
    for x, y, z, r in zip(new, empty, no_wrench, ref):
        assert np.array_equal(x, r) and np.array_equal(y, r) and np.array_equal(z, r)


def batch(model, B, seed):
    rng = np.random.default_rng(seed)
    Q = np.array([db.random_configuration(model, rng) for _ in range(B)])
    V, A = rng.standard_normal((B, model.nv)), rng.standard_normal((B, model.nv))
    F = np.array([inputs.external_wrenches(model, rng.standard_normal((model.n_links, 6))) for _ in range(B)])
    return Q, V, A, F


def run_chunk(model, Q, V, A, F, start, stop, outs=None):
    B, nv = Q.shape[0], model.nv
    outs = [np.full((B, nv, nv), np.nan) for _ in range(3)] if outs is None else outs
    status = np.full(B, 99, dtype=np.int64)
    ret = cd.inverse_dynamics_derivatives_chunk(model._kt, Q, V, A, F, *outs, status, start, stop)
    return ret, status, outs


@pytest.mark.parametrize("with_wrenches", [False, True])
def test_a_chunk_equals_its_states(with_wrenches):
    model = model_of("talos")
    Q, V, A, F = batch(model, 5, 0)
    F = F if with_wrenches else np.zeros((0, 0, 6))
    ret, status, outs = run_chunk(model, Q, V, A, F, 1, 4)
    assert ret == 0 and list(status) == [99, 0, 0, 0, 99]
    for b in range(5):
        if b in (0, 4):  # outside the chunk: untouched
            assert all(np.isnan(x[b]).all() for x in outs)
            continue
        s, one = compiled_id(model, Q[b], V[b], A[b], F[b] if with_wrenches else None)
        assert s == 0 and all(np.array_equal(x[b], y) for x, y in zip(outs, one))


def test_a_chunk_gives_each_bad_state_its_status():
    model = model_of("random1")  # a free-flyer: a zero quaternion is a bad value
    Q, V, A, F = batch(model, 4, 1)
    Q[1, 3:7] = 0.0
    V[2, 0] = np.inf
    ret, status, _ = run_chunk(model, Q, V, A, F, 0, 4)
    assert ret == 0 and list(status) == [0, -1, -1, 0]


@pytest.mark.parametrize(
    "change",
    ["V rows", "A rows", "F links", "out rows", "out columns", "status", "range", "table"],
)
def test_a_chunk_whose_lengths_do_not_fit_computes_nothing(change):
    model = model_of("panda")
    Q, V, A, F = batch(model, 3, 2)
    kt = model._kt
    nv = model.nv
    outs = [np.full((3, nv, nv), np.nan) for _ in range(3)]
    status = np.full(3, 99, dtype=np.int64)
    start, stop = 0, 3
    if change == "V rows":
        V = V[:2].copy()
    elif change == "A rows":
        A = np.vstack([A, A[:1]])
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
    assert cd.inverse_dynamics_derivatives_chunk(kt, Q, V, A, F, *outs, status, start, stop) == -2
    assert all(np.isnan(x).all() for x in outs) and (status == 99).all()


def test_chunk_type_errors_name_the_argument():
    model = model_of("panda")
    Q, V, A, F = batch(model, 2, 3)
    nv = model.nv
    outs = [np.empty((2, nv, nv)) for _ in range(3)]
    status = np.zeros(2, dtype=np.int64)
    args = [model._kt, Q, V, A, F, *outs, status, 0, 2]
    names = ["kt", "Q", "V", "A", "FEXT", "DQ", "DV", "MM", "status"]
    for i, name in enumerate(names):
        bad = list(args)
        bad[i] = args[i].astype(np.float32) if name != "status" else status.astype(np.int32)
        with pytest.raises(TypeError, match=name):
            cd.inverse_dynamics_derivatives_chunk(*bad)


def bad_state_cases():
    """(name, the entry's arguments changed, expected status) of one state."""
    model = model_of("random1")  # a free-flyer and a continuous joint, maybe
    q, v, a, _, fext = case(model, 4)
    nv, L = model.nv, model.n_links
    zero_quat = q.copy()
    zero_quat[3:7] = 0.0
    huge = np.full(nv, 1e200)
    return [
        ("q short", dict(q=q[:-1]), -2),
        ("v long", dict(v=np.r_[v, 0.0]), -2),
        ("a short", dict(a=a[:-1]), -2),
        ("fext links", dict(fext=fext[:-1]), -2),
        ("fext columns", dict(fext=np.zeros((L, 5))), -2),
        ("dtau_dq shape", dict(dq=np.empty((nv, nv - 1))), -2),
        ("M shape", dict(M=np.empty((nv + 1, nv + 1))), -2),
        ("work rows", dict(work=np.empty((3, W))), -2),
        ("work columns", dict(work=np.empty((model.thread_work().shape[0], W + 1))), -2),
        ("table columns", dict(kt=model._kt[:, :-1].copy()), -2),
        ("q nan", dict(q=np.r_[np.nan, q[1:]]), -1),
        ("v inf", dict(v=np.r_[v[:-1], np.inf]), -1),
        ("a nan", dict(a=np.r_[np.nan, a[1:]]), -1),
        ("fext nan", dict(fext=np.where(np.arange(L * 6).reshape(L, 6) == 3, np.nan, fext)), -1),
        ("zero quaternion", dict(q=zero_quat), -1),
        ("overflow", dict(v=huge), -3),
    ]


@pytest.mark.parametrize("name, change, expected", bad_state_cases(), ids=[c[0] for c in bad_state_cases()])
def test_bad_states_get_their_status(name, change, expected):
    model = model_of("random1")
    q, v, a, _, fext = case(model, 4)
    nv = model.nv
    args = dict(kt=model._kt, work=model.thread_work(), q=q, v=v, a=a, fext=fext)
    args |= {k: np.full((nv, nv), np.nan) for k in ("dq", "dv", "M")}
    args |= change
    status = cd.inverse_dynamics_derivatives_state(*args.values())
    assert status == expected


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


@pytest.mark.parametrize("i, name", list(enumerate(["kt", "work", "q", "v", "a", "fext", "dtau_dq", "dtau_dv", "M"])))
def test_type_errors_name_the_argument(i, name):
    model = model_of("panda")
    q, v, a, _, fext = case(model, 5)
    nv = model.nv
    args = [model._kt, model.thread_work(), q, v, a, fext, *(np.zeros((nv, nv)) for _ in range(3))]
    strided = np.stack([args[i], args[i]], axis=-1)[..., 0]  # every other number of a buffer
    assert not strided.flags.c_contiguous
    for bad in (args[i].astype(np.float32), strided, args[i].tolist()):
        changed = list(args)
        changed[i] = bad
        with pytest.raises(TypeError, match=name):
            cd.inverse_dynamics_derivatives_state(*changed)
    if i in (1, 6, 7, 8):  # the arrays written: read-only ones are refused
        changed = list(args)
        changed[i] = args[i].copy()
        changed[i].flags.writeable = False
        with pytest.raises(TypeError, match=name):
            cd.inverse_dynamics_derivatives_state(*changed)


def test_read_only_inputs_are_taken():
    model = model_of("solo12")
    q, v, a, _, fext = case(model, 6)
    ro = []
    for x in (q, v, a, fext):
        x = x.copy()
        x.flags.writeable = False
        ro.append(x)
    status, got = compiled_id(model, *ro)
    assert status == 0
    _, ref = compiled_id(model, q, v, a, fext)
    assert all(np.array_equal(x, y) for x, y in zip(got, ref))
