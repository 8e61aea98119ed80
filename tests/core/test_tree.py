"""The compiled tree core (denoc_bridge/core/tree.pyx): forward dynamics against the numba entries
that the rest of the numba code still calls (``forward_dynamics_state`` and ``forward_dynamics_fast``),
in one process, on the same model table and work array layout (values, the work array itself,
statuses of bad inputs, and the TypeError of arguments the fast path must not take); inverse
dynamics against the explicit DeNOC matrices (algorithms/reference.py), with the statuses of the
state checks it shares with forward dynamics.

numba's inverse dynamics entries are gone (issue 48: nothing but these tests called them once the
Python layer moved to the compiled core); their values, work arrays and statuses were compared with
the compiled ones, in one process, on every model here before they went."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.algorithms import reference as ref
from denoc_bridge.core import tree
from denoc_bridge.core.layout import SCRATCH_ROWS, W
from denoc_bridge.kernels import entry
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.testing import random_model
from tests.core.models import MASSLESS_TIP

#: largest relative difference allowed, max|ours - theirs| / max(1, max|theirs|), of inverse
#: dynamics against the explicit DeNOC matrices (measured at most 5.5e-15 on every model here)
RTOL_ID = 5e-14
#: the same of forward dynamics, Cython against numba (outputs and work arrays; measured up to
#: 2e-11 on the trees of free-flyers and massless links, 1e-16 on the robots).  The two compilers
#: contract a * b + c into fused multiply-adds in different places, and the solve amplifies that
#: by the conditioning of the GIM: two gcc builds of the same Cython code, with and without
#: contraction, differ by as much (8e-12 on "type8", measured).
RTOL_FD = 1e-10


RANDOM = [
    dict(seed=s, n_links=n, branching=b, n_roots=r, floating_base=fb, massless=ml)
    for s, n, b, r, fb, ml in [
        (0, 1, 0.0, 1, False, 0.0),
        (1, 5, 0.3, 1, True, 0.0),
        (2, 12, 0.5, 2, False, 0.3),
        (3, 12, 0.8, 3, True, 0.3),
        (4, 9, 0.0, 1, True, 0.0),
        (5, 20, 0.4, 1, False, 0.0),
        (6, 30, 0.6, 2, True, 0.3),
        (7, 70, 0.1, 1, False, 0.0),  # > BLOCK links: the geometry in two blocks
    ]
]
ONE_TYPE = [(t, s) for t in JointType for s in (10, 11)]  # chains of one joint type each
ROBOTS = ["panda", "talos", "solo12"]


@cache
def model_of(name: str) -> db.Model:
    if name.startswith("random"):
        return random_model(**RANDOM[int(name[6:])])
    if name.startswith("type"):
        t, s = ONE_TYPE[int(name[4:])]
        return random_model(seed=s, n_links=8, branching=0.3, joint_types=(t,), floating_base=s % 2 == 1)
    if name == "chain100":
        return db.generators.chain(100, "spatial")
    if name == "chain_planar70":
        return db.generators.chain(70)
    return db.load_robot(name)


NAMES = [f"random{i}" for i in range(len(RANDOM))] + [f"type{i}" for i in range(len(ONE_TYPE))]
NAMES += ROBOTS + ["chain100", "chain_planar70"]


def state(model: db.Model, seed: int):
    """(q, v, x, fext) with quaternions and (cos, sin) pairs scaled away from unit norm."""
    rng = np.random.default_rng(seed)
    q = db.random_configuration(model, rng)
    for i in model.quaternion_index:
        q[i : i + 4] *= rng.uniform(0.3, 3.0)
    for i in model.circle_index:
        q[i : i + 2] *= rng.uniform(0.3, 3.0)
    return q, rng.standard_normal(model.nv), rng.standard_normal(model.nv), rng.standard_normal((model.n_links, 6))


def relative(ours, ref) -> float:
    return float(np.max(np.abs(ours - ref), initial=0.0) / max(1.0, np.max(np.abs(ref), initial=0.0)))


def oracle(fn: str):
    """The oracle of the compiled entry ``fn``'s status: numba's entry for forward dynamics;
    for inverse dynamics numba's forward entry of the same kind, whose checks (``valid_state``:
    shapes, then finite values and non-zero quaternions and pairs) and overflow test inverse
    dynamics shares (numba's deleted inverse entries gave the same statuses on every bad input
    here, compared before they went)."""
    return getattr(entry, fn.replace("inverse", "forward"))


def reference_tau(model, q, v, a, fext=None):
    """tau by the explicit DeNOC matrices (000 eq. 13, algorithms/reference.py); ``fext`` in the
    entries' order [n; f] per link, the reference takes Pinocchio's [f; n]."""
    f = None if fext is None or fext.shape[0] == 0 else np.c_[fext[:, 3:], fext[:, :3]]
    return ref.reference_inverse_dynamics(model, q, v, a, f)


def both(model, fn, *args, work=None):
    """The Cython and the numba forward entry ``fn`` on copies of one work array (filled with the
    same numbers), so that the work arrays after the call can be compared too."""
    base = np.random.default_rng(0).standard_normal(model.thread_work().shape) if work is None else work
    results = []
    for mod in (tree, entry):
        w, out = base.copy(), np.full(model.nv, np.nan)
        status = getattr(mod, fn)(model._kt, w, *args, out)
        results.append((status, out, w))
    return results


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", [0, 1])
def test_forward_entries_equal_numba(name, seed):
    model = model_of(name)
    q, v, x, fext = state(model, seed)
    calls = [
        ("forward_dynamics_fast", (q, v, x)),
        ("forward_dynamics_state", (q, v, x, fext)),
        ("forward_dynamics_state", (q, v, x, np.zeros((0, 6)))),
    ]
    for fn, args in calls:
        (sc, oc, wc), (sn, on, wn) = both(model, fn, *args)
        assert sc == sn == 0, (fn, sc, sn)
        assert relative(oc, on) <= RTOL_FD, (fn, relative(oc, on))
        # the work arrays: same layout, every region the passes write (and nothing else moved);
        # not the scratch rows, where the compiled geometry pass takes the cos/sin of a mixed
        # model's revolute joints in one block (numba's only of an all-revolute one)
        wc, wn = wc[:-SCRATCH_ROWS], wn[:-SCRATCH_ROWS]
        assert relative(wc, wn) <= RTOL_FD, (fn, np.unravel_index(np.argmax(np.abs(wc - wn)), wc.shape))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", [0, 1])
def test_inverse_entries_match_the_explicit_matrices(name, seed):
    """Both inverse entries against the explicit DeNOC matrices; the fast entry is the state entry
    without wrenches, bit for bit."""
    model = model_of(name)
    q, v, x, fext = state(model, seed)
    w = np.random.default_rng(0).standard_normal(model.thread_work().shape)
    fast, with_f, without = (np.full(model.nv, np.nan) for _ in range(3))
    assert tree.inverse_dynamics_fast(model._kt, w.copy(), q, v, x, fast) == 0
    assert tree.inverse_dynamics_state(model._kt, w.copy(), q, v, x, fext, with_f) == 0
    assert tree.inverse_dynamics_state(model._kt, w.copy(), q, v, x, np.zeros((0, 6)), without) == 0
    assert np.array_equal(fast, without)
    for out, f in ((fast, None), (with_f, fext)):
        assert relative(out, reference_tau(model, q, v, x, f)) <= RTOL_ID, (
            f is None,
            relative(out, reference_tau(model, q, v, x, f)),
        )


@pytest.mark.parametrize("name", ["random3", "panda", "chain_planar70"])
def test_empty_work_is_allocated(name):
    model = model_of(name)
    q, v, x, fext = state(model, 3)
    (sc, oc, _), (sn, on, _) = both(model, "forward_dynamics_fast", q, v, x, work=np.empty((0, W)))
    assert sc == sn == 0 and relative(oc, on) <= RTOL_FD
    given, allocated = np.empty(model.nv), np.empty(model.nv)
    assert tree.inverse_dynamics_state(model._kt, model.thread_work(), q, v, x, fext, given) == 0
    assert tree.inverse_dynamics_state(model._kt, np.empty((0, W)), q, v, x, fext, allocated) == 0
    assert np.array_equal(given, allocated)


def test_inverse_undoes_forward():
    """Independent of numba: tau -> qdd -> tau on a free-flying random tree."""
    model = model_of("random3")
    q, v, tau, fext = state(model, 5)
    qdd, tau_back = np.empty(model.nv), np.empty(model.nv)
    assert tree.forward_dynamics_state(model._kt, model.thread_work(), q, v, tau, fext, qdd) == 0
    assert tree.inverse_dynamics_state(model._kt, model.thread_work(), q, v, qdd, fext, tau_back) == 0
    assert relative(tau_back, tau) <= 1e-10


def _statuses(model, fn, *args, work=None):
    out = args[-1]
    res = []
    for kernel in (getattr(tree, fn), oracle(fn)):
        w = model.thread_work().copy() if work is None else work
        o = out.copy()
        res.append(kernel(model._kt, w, *args[:-1], o))
    return res


def bad_cases():
    """(name, model name, entry, arguments) of inputs the entries refuse with a status."""
    cases = []
    for mname in ["random1", "panda", "type8"]:  # type8: a tree of free-flyers
        m = model_of(mname)
        q, v, x, fext = state(m, 0)
        out = np.zeros(m.nv)

        def with_(arr, i, val):
            arr = arr.copy()
            arr.flat[i] = val
            return arr

        for fn in ["forward_dynamics_state", "inverse_dynamics_state"]:
            cases += [
                (f"{mname}-{fn}-nan-q", mname, fn, (with_(q, 0, np.nan), v, x, fext, out)),
                (f"{mname}-{fn}-inf-v", mname, fn, (q, with_(v, m.nv - 1, np.inf), x, fext, out)),
                (f"{mname}-{fn}-nan-x", mname, fn, (q, v, with_(x, 0, np.nan), fext, out)),
                (f"{mname}-{fn}-nan-fext", mname, fn, (q, v, x, with_(fext, 5, np.nan), out)),
                (f"{mname}-{fn}-short-q", mname, fn, (q[:-1], v, x, fext, out)),
                (f"{mname}-{fn}-long-v", mname, fn, (q, np.append(v, 0.0), x, fext, out)),
                (f"{mname}-{fn}-short-x", mname, fn, (q, v, x[:-1], fext, out)),
                (f"{mname}-{fn}-short-out", mname, fn, (q, v, x, fext, out[:-1])),
                (f"{mname}-{fn}-fext-cols", mname, fn, (q, v, x, np.zeros((m.n_links, 3)), out)),
                (f"{mname}-{fn}-fext-rows", mname, fn, (q, v, x, np.zeros((m.n_links + 1, 6)), out)),
                (f"{mname}-{fn}-overflow", mname, fn, (q, v * 1e300, x, fext, out)),
            ]
            for i in m.quaternion_index[:1]:
                cases.append(
                    (f"{mname}-{fn}-zero-quaternion", mname, fn, (with_(q, slice(i, i + 4), 0.0), v, x, fext, out))
                )
            for i in m.quaternion_index[:1]:  # below MIN_NORM = 1e-12
                cases.append(
                    (f"{mname}-{fn}-tiny-quaternion", mname, fn, (with_(q, slice(i, i + 4), 4e-13), v, x, fext, out))
                )
            for i in m.circle_index[:1]:
                cases.append((f"{mname}-{fn}-zero-pair", mname, fn, (with_(q, slice(i, i + 2), 0.0), v, x, fext, out)))
    return cases


@pytest.mark.parametrize("case", bad_cases(), ids=lambda c: c[0])
def test_statuses_of_bad_input_are_numbas(case):
    _, mname, fn, args = case
    model = model_of(mname)
    sc, sn = _statuses(model, fn, *args)
    assert sc == sn != 0, (sc, sn)
    fast = fn.replace("_state", "_fast")
    sc, sn = _statuses(model, fast, *args[:3], args[4])
    assert sc == sn, (sc, sn)


def test_wrong_work_shape_is_a_status():
    model = model_of("panda")
    q, v, x, _ = state(model, 0)
    rows = model.thread_work().shape[0]
    for work in (np.zeros((rows + 1, W)), np.zeros((rows, W - 1)), np.zeros((1, W))):
        for fn in ("forward_dynamics_fast", "inverse_dynamics_fast"):
            assert _statuses(model, fn, q, v, x, np.zeros(model.nv), work=work) == [-2, -2]


def test_singular_articulated_inertia_names_the_link():
    model = db.load_urdf(MASSLESS_TIP)
    z = np.zeros(model.nv)
    statuses = _statuses(model, "forward_dynamics_fast", z, z, z, z)
    assert statuses[0] == statuses[1] == model.link_index("tip") + 1
    assert tree.inverse_dynamics_fast(model._kt, model.thread_work(), z, z, z, z) == 0


def test_empty_model():
    model = random_model(seed=0, n_links=1)
    for mod in (tree, entry):  # a 1-link model: the smallest the package builds
        assert mod.forward_dynamics_fast(model._kt, np.empty((0, W)), *state(model, 0)[:3], np.empty(model.nv)) == 0


def _type_error_cases():
    """{case: (argument, replacement)} of the arguments (kt, work, q, v, x, out) of a fast entry."""
    model = model_of("panda")
    q, v, x, _ = state(model, 0)
    out = np.zeros(model.nv)
    ro = out.copy()
    ro.flags.writeable = False
    work_ro = model.thread_work().copy()
    work_ro.flags.writeable = False
    return {
        "float32-out": (5, out.astype(np.float32)),
        "strided-out": (5, np.zeros(2 * model.nv)[::2]),
        "read-only-out": (5, ro),
        "2d-out": (5, out[None, :]),
        "list-q": (2, list(q)),
        "int-v": (3, v.astype(np.int64)),
        "big-endian-x": (4, x.astype(">f8")),
        "strided-q": (2, np.repeat(q, 2)[::2]),
        "read-only-work": (1, work_ro),
        "1d-work": (1, np.zeros(8)),
        "float32-kt": (0, model._kt.astype(np.float32)),
        "2d-fext": (6, np.zeros(model.n_links * 6)),
    }


@pytest.mark.parametrize("case", list(_type_error_cases()))
@pytest.mark.parametrize("fn", ["forward_dynamics", "inverse_dynamics"])
def test_type_error_like_numba(case, fn):
    model = model_of("panda")
    slot, value = _type_error_cases()[case]
    q, v, x, fext = state(model, 0)
    args = [model._kt, model.thread_work(), q, v, x, np.zeros(model.nv), fext]
    args[slot] = value
    for mod in (tree, entry) if fn == "forward_dynamics" else (tree,):
        with pytest.raises(TypeError):  # the state entry: (kt, work, q, v, x, fext, out)
            getattr(mod, fn + "_state")(*args[:5], args[6], args[5])
        if slot != 6:
            with pytest.raises(TypeError):
                getattr(mod, fn + "_fast")(*args[:6])


def test_read_only_inputs_are_taken():
    """Unlike numba's signatures (which raise TypeError and make the Python layer copy), the
    compiled entries read read-only q, v, tau and kt as they are."""
    model = model_of("panda")
    q, v, x, _ = state(model, 0)
    for a in (q, v, x):
        a.flags.writeable = False
    kt = model._kt.copy()
    kt.flags.writeable = False
    out = np.zeros(model.nv)
    assert tree.forward_dynamics_fast(kt, model.thread_work(), q, v, x, out) == 0
    ref = np.zeros(model.nv)
    assert entry.forward_dynamics_fast(model._kt, model.thread_work(), q.copy(), v.copy(), x.copy(), ref) == 0
    assert relative(out, ref) <= RTOL_FD


def test_report_differences(capsys):
    """The largest relative difference per model (printed with -s; asserted in the tests above)."""
    lines = []
    for name in ["panda", "talos", "solo12", "chain100", "random3", "random6"]:
        model = model_of(name)
        q, v, x, fext = state(model, 0)
        (_, oc, _), (_, on, _) = both(model, "forward_dynamics_state", q, v, x, fext)
        tau = np.empty(model.nv)
        assert tree.inverse_dynamics_state(model._kt, model.thread_work(), q, v, x, fext, tau) == 0
        lines.append(f"{name}: {relative(oc, on):.2e} / {relative(tau, reference_tau(model, q, v, x, fext)):.2e}")
    with capsys.disabled():
        print("\nmax relative difference, forward dynamics Cython vs numba / inverse vs the explicit matrices:")
        print(", ".join(lines))
