"""The compiled tree core (denoc_bridge/core/tree.pyx): forward dynamics (``forward_dynamics_state``
and ``forward_dynamics_fast``) against the papers' three block steps on the explicit module
factors (000 eq. 23, algorithms/reference.py), inverse dynamics against the explicit DeNOC
matrices (000 eq. 13), the statuses of bad inputs (the documented codes: -1 a value, -2 a length,
-3 an overflow), and the TypeError of arguments the fast path must not take.

numba's entries are gone (issues 48 and 49); their values, work arrays and statuses were compared
with the compiled ones, in one process, on every model here before they went (forward dynamics
within 2e-11 relative on the trees of free-flyers and massless links, 1e-16 on the robots; the
same status on every bad input here)."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.algorithms import reference as ref
from denoc_bridge.core import tree
from denoc_bridge.core.layout import W
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.testing import random_model
from tests.core.models import MASSLESS_TIP

#: largest relative difference allowed, max|ours - theirs| / max(1, max|theirs|), of inverse
#: dynamics against the explicit DeNOC matrices (measured at most 5.5e-15 on every model here)
RTOL_ID = 5e-14
#: the same of forward dynamics against the explicit block steps, relative to the GIM's condition
#: number (the dense solves and the recursion round differently, amplified by the conditioning)
RTOL_FD = 1e-14


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


def reference_tau(model, q, v, a, fext=None):
    """tau by the explicit DeNOC matrices (000 eq. 13, algorithms/reference.py); ``fext`` in the
    entries' order [n; f] per link, the reference takes Pinocchio's [f; n]."""
    f = None if fext is None or fext.shape[0] == 0 else np.c_[fext[:, 3:], fext[:, :3]]
    return ref.reference_inverse_dynamics(model, q, v, a, f)


def reference_qdd(model, q, v, tau, fext=None):
    """qdd by the three block steps on the explicit module factors (000 eq. 23); ``fext`` in the
    entries' order [n; f] per link."""
    f = None if fext is None or fext.shape[0] == 0 else np.c_[fext[:, 3:], fext[:, :3]]
    return ref.reference_forward_dynamics(model, q, v, tau, f)


def forward_error(model, q, qdd, expected) -> float:
    """|qdd - expected| relative to max(1, |expected|), over the GIM's condition number."""
    return relative(qdd, expected) / np.linalg.cond(ref.reference_mass_matrix(model, q))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", [0, 1])
def test_forward_entries_match_the_explicit_block_steps(name, seed):
    model = model_of(name)
    q, v, x, fext = state(model, seed)
    calls = [
        ("forward_dynamics_fast", (q, v, x), None),
        ("forward_dynamics_state", (q, v, x, fext), fext),
        ("forward_dynamics_state", (q, v, x, np.zeros((0, 6))), None),
    ]
    for fn, args, f in calls:
        work = np.random.default_rng(0).standard_normal(model.thread_work().shape)  # whatever it held
        out = np.full(model.nv, np.nan)
        assert getattr(tree, fn)(model._kt, work, *args, out) == 0, fn
        err = forward_error(model, q, out, reference_qdd(model, q, v, x, f))
        assert err <= RTOL_FD, (fn, err)


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
    with_work, allocating = np.empty(model.nv), np.empty(model.nv)
    assert tree.forward_dynamics_fast(model._kt, model.thread_work(), q, v, x, with_work) == 0
    assert tree.forward_dynamics_fast(model._kt, np.empty((0, W)), q, v, x, allocating) == 0
    assert np.array_equal(with_work, allocating)
    given, allocated = np.empty(model.nv), np.empty(model.nv)
    assert tree.inverse_dynamics_state(model._kt, model.thread_work(), q, v, x, fext, given) == 0
    assert tree.inverse_dynamics_state(model._kt, np.empty((0, W)), q, v, x, fext, allocated) == 0
    assert np.array_equal(given, allocated)


def test_inverse_undoes_forward():
    """tau -> qdd -> tau on a free-flying random tree."""
    model = model_of("random3")
    q, v, tau, fext = state(model, 5)
    qdd, tau_back = np.empty(model.nv), np.empty(model.nv)
    assert tree.forward_dynamics_state(model._kt, model.thread_work(), q, v, tau, fext, qdd) == 0
    assert tree.inverse_dynamics_state(model._kt, model.thread_work(), q, v, qdd, fext, tau_back) == 0
    assert relative(tau_back, tau) <= 1e-10


def _status(model, fn, *args, work=None):
    w = model.thread_work().copy() if work is None else work
    return getattr(tree, fn)(model._kt, w, *args[:-1], args[-1].copy())


#: the documented status of each kind of bad input (tree.pyx): -1 a value that is not finite, a
#: zero or tiny quaternion or (cos, sin) pair; -2 a length or shape that does not fit; -3 finite
#: inputs whose result is not
EXPECTED = {"nan": -1, "inf": -1, "zero": -1, "tiny": -1, "short": -2, "long": -2, "fext": -2, "overflow": -3}


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
def test_statuses_of_bad_input(case):
    name, mname, fn, args = case
    model = model_of(mname)
    rest = name.split(fn + "-")[1]
    kind = rest.split("-")[0]
    assert _status(model, fn, *args) == EXPECTED[kind], rest
    fast = fn.replace("_state", "_fast")  # without fext: its cases are none of the fast entry's
    assert _status(model, fast, *args[:3], args[4]) == (0 if "fext" in rest else EXPECTED[kind]), rest


def test_wrong_work_shape_is_a_status():
    model = model_of("panda")
    q, v, x, _ = state(model, 0)
    rows = model.thread_work().shape[0]
    for work in (np.zeros((rows + 1, W)), np.zeros((rows, W - 1)), np.zeros((1, W))):
        for fn in ("forward_dynamics_fast", "inverse_dynamics_fast"):
            assert _status(model, fn, q, v, x, np.zeros(model.nv), work=work) == -2


def test_singular_articulated_inertia_names_the_link():
    model = db.load_urdf(MASSLESS_TIP)
    z = np.zeros(model.nv)
    assert _status(model, "forward_dynamics_fast", z, z, z, z) == model.link_index("tip") + 1
    assert tree.inverse_dynamics_fast(model._kt, model.thread_work(), z, z, z, z) == 0


def test_empty_model():
    model = random_model(seed=0, n_links=1)
    out = np.full(model.nv, np.nan)  # a 1-link model: the smallest the package builds
    assert tree.forward_dynamics_fast(model._kt, np.empty((0, W)), *state(model, 0)[:3], out) == 0
    assert np.all(np.isfinite(out))


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
def test_type_errors(case, fn):
    model = model_of("panda")
    slot, value = _type_error_cases()[case]
    q, v, x, fext = state(model, 0)
    args = [model._kt, model.thread_work(), q, v, x, np.zeros(model.nv), fext]
    args[slot] = value
    with pytest.raises(TypeError):  # the state entry: (kt, work, q, v, x, fext, out)
        getattr(tree, fn + "_state")(*args[:5], args[6], args[5])
    if slot != 6:
        with pytest.raises(TypeError):
            getattr(tree, fn + "_fast")(*args[:6])


def test_read_only_inputs_are_taken():
    """The compiled entries read read-only q, v, tau and kt as they are (numba's signatures raised
    TypeError and made the Python layer copy): the same numbers as from writeable copies."""
    model = model_of("panda")
    q, v, x, _ = state(model, 0)
    for a in (q, v, x):
        a.flags.writeable = False
    kt = model._kt.copy()
    kt.flags.writeable = False
    out = np.zeros(model.nv)
    assert tree.forward_dynamics_fast(kt, model.thread_work(), q, v, x, out) == 0
    ref = np.zeros(model.nv)
    assert tree.forward_dynamics_fast(model._kt, model.thread_work(), q.copy(), v.copy(), x.copy(), ref) == 0
    assert np.array_equal(out, ref)


def test_report_differences(capsys):
    """The largest relative difference per model (printed with -s; asserted in the tests above)."""
    lines = []
    for name in ["panda", "talos", "solo12", "chain100", "random3", "random6"]:
        model = model_of(name)
        q, v, x, fext = state(model, 0)
        qdd, tau = np.empty(model.nv), np.empty(model.nv)
        assert tree.forward_dynamics_state(model._kt, model.thread_work(), q, v, x, fext, qdd) == 0
        assert tree.inverse_dynamics_state(model._kt, model.thread_work(), q, v, x, fext, tau) == 0
        fd = forward_error(model, q, qdd, reference_qdd(model, q, v, x, fext))
        lines.append(f"{name}: {fd:.2e} / {relative(tau, reference_tau(model, q, v, x, fext)):.2e}")
    with capsys.disabled():
        print("\nmax relative difference, forward dynamics / cond(M) vs the block steps, inverse vs the matrices:")
        print(", ".join(lines))
