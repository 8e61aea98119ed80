"""The compiled matrix-free derivatives (core/directional.pyx): the sweeps of the tangent RNEA and
of its adjoint against Pinocchio's RNEA derivatives (``pin.computeRNEADerivatives``, an
independent implementation) and, where Pinocchio is no reference (universal joints), against
central differences of the inverse dynamics on the manifold; and the entries' boundary: every
array is checked before compiled code indexes it (a TypeError naming a wrong type, dtype or
layout; status -2, nothing computed, for a length or a table that does not fit; -1 for an
invalid value; -3 for a finite input whose result is not; k + 1 for a singular articulated
inertia of link k)."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pinocchio as pin
import pytest
from conftest import pin_fext, random_state

import denoc_bridge as db
from denoc_bridge.algorithms import directional as adir
from denoc_bridge.core import directional as cdir
from denoc_bridge.core import layout as T
from denoc_bridge.testing import random_model
from denoc_bridge.validation import relative_error
from tests.core.models import MASSLESS_TIP

JT = db.JointType
#: Pinocchio 4.1's RNEA derivatives are wrong for its universal joint (tests/algorithms/test_derivatives.py)
PIN_TYPES = tuple(t for t in JT if t != JT.UNIVERSAL)


def robot(name: str) -> db.Model:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", db.PhysicsWarning)
        return db.load_robot(name)


def one_body() -> db.Model:
    """A single free-flying body: its six columns exercise every product of the link terms
    (M x, the Coriolis matrix C and C^T) in all directions."""
    return random_model(seed=5, n_links=1, joint_types=(JT.FREEFLYER,))


def sweeps(model, q, v, tau, fext, dq, dv, mu):
    """(qdd, dtau_dq dq + dtau_dv dv, dtau_dq^T mu, dtau_dv^T mu) from the compiled sweeps."""
    q, v, tau, fe = adir._state(model, q, v, tau, fext)
    work, buf = adir._buffers(model)
    nv = model.nv
    qdd, jvp, gq, gv = (np.full(nv, np.nan) for _ in range(4))
    status = cdir.tangent_sweeps_state(model._kt, work, buf, q, v, tau, fe, dq, dv, mu, qdd, jvp, gq, gv)
    assert status == 0
    return qdd, jvp, gq, gv


def pinocchio_rnea_derivatives(model, q, v, a, fext):
    pm = db.to_pinocchio(model)
    pd = pm.createData()
    if fext is None:
        pin.computeRNEADerivatives(pm, pd, q, v, a)
    else:
        pin.computeRNEADerivatives(pm, pd, q, v, a, pin_fext(fext))
    return pd.dtau_dq.copy(), pd.dtau_dv.copy()


def check_sweeps_against_pinocchio(model, seed, with_fext):
    q, v, tau, fext = random_state(model, seed)
    fext = fext if with_fext else None
    rng = np.random.default_rng(100 + seed)
    dq, dv, mu = (rng.standard_normal(model.nv) for _ in range(3))
    qdd, jvp, gq, gv = sweeps(model, q, v, tau, fext, dq, dv, mu)
    dtau_dq, dtau_dv = pinocchio_rnea_derivatives(model, q, v, qdd, fext)
    errors = {
        "jvp": relative_error(jvp, dtau_dq @ dq + dtau_dv @ dv),
        "gq": relative_error(gq, dtau_dq.T @ mu),
        "gv": relative_error(gv, dtau_dv.T @ mu),
    }
    bad = {k: e for k, e in errors.items() if not e <= 1e-12}
    assert not bad, f"{model.name} (seed {seed}): {bad}"


@pytest.mark.parametrize("seed", range(8))
def test_sweeps_match_pinocchio_on_random_trees(seed):
    model = random_model(
        seed=300 + seed,
        n_links=9,
        branching=0.5,
        n_roots=1 + seed % 2,
        joint_types=PIN_TYPES,
        floating_base=bool(seed % 2),
        massless=0.3 if seed % 4 == 0 else 0.0,
    )
    check_sweeps_against_pinocchio(model, seed, with_fext=seed % 3 != 0)


@pytest.mark.parametrize("jtype", PIN_TYPES)
def test_sweeps_match_pinocchio_on_each_joint_type(jtype):
    model = random_model(seed=int(jtype) + 400, n_links=5, branching=0.4, joint_types=(jtype,))
    check_sweeps_against_pinocchio(model, int(jtype), with_fext=True)


@pytest.mark.parametrize("name", ["panda", "talos", "solo12"])
def test_sweeps_match_pinocchio_on_robots(name):
    check_sweeps_against_pinocchio(robot(name), 1, with_fext=True)
    check_sweeps_against_pinocchio(robot(name), 2, with_fext=False)


@pytest.mark.parametrize("seed", range(4))
def test_link_terms_on_one_free_body(seed):
    """One body, six columns: D = M P + C Q, Y = M U and Z = C^T U (the link terms) are all the
    derivatives there are; Pinocchio's in every direction."""
    check_sweeps_against_pinocchio(one_body(), seed, with_fext=bool(seed % 2))


def central_rnea(model, q, v, a, fext, dq, dv, h=1e-3):
    """dtau_dq dq + dtau_dv dv by fourth-order central differences of the inverse dynamics on the
    manifold (``db.integrate``): exact in v up to round-off (tau is quadratic in v)."""

    def tau(s):
        return db.inverse_dynamics(model, db.integrate(model, q, s * dq), v + s * dv, a, fext)

    return (8 * (tau(h) - tau(-h)) - (tau(2 * h) - tau(-2 * h))) / (12 * h)


@pytest.mark.parametrize("seed", range(4))
def test_universal_joints_match_central_differences(seed):
    """Pinocchio's universal-joint derivatives are not a reference: the tangent RNEA against
    central differences of the inverse dynamics, the adjoint by <mu, J d> = <J^T mu, d> on unit
    directions (every row of J^T mu)."""
    model = random_model(seed=500 + seed, n_links=6, branching=0.4, joint_types=(JT.UNIVERSAL, JT.REVOLUTE))
    q, v, tau, fext = random_state(model, seed)
    rng = np.random.default_rng(seed)
    dq, dv, mu = (rng.standard_normal(model.nv) for _ in range(3))
    qdd, jvp, gq, gv = sweeps(model, q, v, tau, fext, dq, dv, mu)
    assert relative_error(jvp, central_rnea(model, q, v, qdd, fext, dq, dv)) <= 1e-9
    eye, zero = np.eye(model.nv), np.zeros(model.nv)
    rows_q = np.array([sweeps(model, q, v, tau, fext, e, zero, mu)[1] @ mu for e in eye])
    rows_v = np.array([sweeps(model, q, v, tau, fext, zero, e, mu)[1] @ mu for e in eye])
    assert relative_error(gq, rows_q) <= 1e-12
    assert relative_error(gv, rows_v) <= 1e-12


FUSED_MODELS = {
    "tree of every joint type": lambda: random_model(seed=11, n_links=14, branching=0.4, floating_base=True),
    "universal joints": lambda: random_model(seed=12, n_links=8, branching=0.3, joint_types=(JT.UNIVERSAL,)),
    "chain past the prefetch size": lambda: db.generators.chain(T.PREFETCH_LINKS + 500),
}


@pytest.mark.parametrize("name", list(FUSED_MODELS))
def test_the_fused_solves_equal_the_sweeps_and_a_dense_solve(name):
    """The entries run the solves inside the sweeps (the forward dynamics' accelerations in the
    forward sweep, the JVP's step 1 in its backward sweep, the VJP's step 2 in its forward sweep);
    ``tangent_sweeps_state`` runs the same sweeps without them (``dtau`` NULL, ``mu`` given).  The
    two agree through a dense M: out = M^-1 (dtau - jvp), gtau = M^-1 lam and (gq, gv) = -(the
    sweeps' adjoint at mu = gtau); on trees of modules, multi-DOF joints, external wrenches and a
    chain whose passes prefetch."""
    model = FUSED_MODELS[name]()
    jv, vj = arguments(model, "jvp", 3), arguments(model, "vjp", 3)
    assert call("jvp", jv) == 0 and call("vjp", vj) == 0
    q, v, tau, fext = random_state(model, 3)
    M = db.mass_matrix(model, q)
    qdd, r, _, _ = sweeps(model, q, v, tau, fext, jv["dq"], jv["dv"], np.zeros(model.nv))
    assert np.array_equal(jv["qdd"], qdd) and np.array_equal(vj["qdd"], qdd)
    # and the fused accelerations against the public forward dynamics (the tree's unfused passes)
    expected = db.forward_dynamics(model, q, v, tau, fext)
    assert np.abs(qdd - expected).max() <= 1e-12 * max(1.0, np.abs(expected).max())
    scale = np.linalg.norm(M, 2)
    for x, rhs in ((jv["out"], jv["dtau"] - r), (vj["gtau"], vj["lam"])):  # backward-stable solves
        assert np.linalg.norm(M @ x - rhs) <= 1e-11 * scale * np.linalg.norm(x)
    _, _, gq, gv = sweeps(model, q, v, tau, fext, jv["dq"], jv["dv"], vj["gtau"])
    assert relative_error(vj["gq"], -gq) <= 1e-13 and relative_error(vj["gv"], -gv) <= 1e-13


# ---------------------------------------------------------------------------- the boundary
ENTRIES = {
    "jvp": (cdir.forward_dynamics_jvp_state, ("dq", "dv", "dtau"), ("qdd", "out")),
    "vjp": (cdir.forward_dynamics_vjp_state, ("lam",), ("qdd", "gq", "gv", "gtau")),
    "sweeps": (cdir.tangent_sweeps_state, ("dq", "dv", "mu"), ("qdd", "jvp", "gq", "gv")),
}


def arguments(model, which, seed=0):
    """{name: array} of the entry's arguments in order, fresh copies (outputs filled with a sentinel)."""
    _, inputs, outputs = ENTRIES[which]
    q, v, tau, fext = random_state(model, seed)
    q, v, tau, fe = adir._state(model, q, v, tau, fext)
    rng = np.random.default_rng(seed)
    args = {
        "kt": model._kt.copy(),
        "work": model.thread_work().copy(),
        "buf": np.empty(cdir.buffer_size(model.n_links, model.nv)),
        "q": q.copy(),
        "v": v.copy(),
        "tau": tau.copy(),
        "fext": fe.copy(),
    }
    args.update({name: rng.standard_normal(model.nv) for name in inputs})
    args.update({name: np.full(model.nv, 7.0) for name in outputs})
    return args


def call(which, args):
    return ENTRIES[which][0](*args.values())


@pytest.fixture(scope="module")
def talos():
    return robot("talos")


@pytest.mark.parametrize("which", list(ENTRIES))
def test_the_entries_equal_the_public_calls(which, talos):
    args = arguments(talos, which)
    assert call(which, args) == 0
    q, v, tau, fext = random_state(talos, 0)
    assert np.array_equal(args["qdd"], db.forward_dynamics(talos, q, v, tau, fext))
    if which == "jvp":
        ref = db.forward_dynamics_jvp(talos, q, v, tau, args["dq"], args["dv"], args["dtau"], f_ext=fext)
        assert np.array_equal(args["out"], ref)
    elif which == "vjp":
        ref = db.forward_dynamics_vjp(talos, q, v, tau, args["lam"], f_ext=fext)
        for name, x in zip(("gq", "gv", "gtau"), ref):
            assert np.array_equal(args[name], x)


def type_errors(model, which):
    """(argument, replacement) pairs of a wrong type, dtype, dimension or layout."""
    args = arguments(model, which)
    _, inputs, outputs = ENTRIES[which]
    cases = [
        ("kt", args["kt"].astype(np.float32)),
        ("kt", args["kt"].ravel()),
        ("work", args["work"].T),
        ("buf", list(args["buf"])),
        ("fext", args["fext"].ravel()),
        ("fext", args["fext"].astype(">f8")),
    ]
    for name in ("q", "v", "tau", *inputs):
        cases += [(name, args[name].astype(np.float32)), (name, np.repeat(args[name], 2)[::2]), (name, None)]
    for name in ("work", "buf", *outputs):
        read_only = args[name].copy()
        read_only.flags.writeable = False
        cases += [(name, read_only), (name, np.zeros(args[name].shape, np.int64))]
    return cases


@pytest.mark.parametrize("which", list(ENTRIES))
def test_wrong_types_are_named(which, talos):
    for name, value in type_errors(talos, which):
        args = arguments(talos, which)
        args[name] = value
        with pytest.raises(TypeError, match=rf"^{name}: "):
            call(which, args)


@pytest.mark.parametrize("which", list(ENTRIES))
def test_read_only_inputs_and_no_wrenches_are_taken(which, talos):
    args = arguments(talos, which)
    ref = call(which, args), {k: x.copy() for k, x in args.items()}
    _, inputs, _ = ENTRIES[which]
    for name in ("kt", "q", "v", "tau", "fext", *inputs):
        args[name].flags.writeable = False
    assert call(which, args) == 0
    for name in ENTRIES[which][2]:
        assert np.array_equal(args[name], ref[1][name])
    args = arguments(talos, which)
    args["fext"] = None
    assert call(which, args) == 0
    with_zeros = arguments(talos, which)
    with_zeros["fext"] = np.zeros((0, 6))
    assert call(which, with_zeros) == 0
    for name in ENTRIES[which][2]:
        assert np.array_equal(args[name], with_zeros[name])


def table_with(model, link, column, value):
    kt = model._kt.copy()
    kt.view(np.int32)[link, column] = value
    return kt


def length_errors(model, which):
    """(case, argument, replacement) that do not fit the model: status -2."""
    args = arguments(model, which)
    _, inputs, outputs = ENTRIES[which]
    L = model.n_links
    normalised = int(np.flatnonzero(model._kt.view(np.int32)[:, T.NORM0] >= 0)[0])  # a quaternion's link
    cases = [
        ("kt-columns", "kt", np.ascontiguousarray(args["kt"][:, :-1])),
        ("work-rows", "work", args["work"][:-1]),
        ("work-columns", "work", np.zeros((args["work"].shape[0], T.W + 1))),
        ("buf-short", "buf", args["buf"][:-1]),
        ("buf-long", "buf", np.empty(args["buf"].size + 1)),
        ("fext-rows", "fext", np.zeros((L + 1, 6))),
        ("fext-columns", "fext", np.zeros((L, 3))),
        ("joint-out-of-order", "kt", table_with(model, 3, T.IDX_V, model._kt.view(np.int32)[3, T.IDX_V] + 1)),
        ("joint-type", "kt", table_with(model, 2, T.FLAGS, model._kt.view(np.int32)[2, T.FLAGS] | 15 << 8)),
        ("joint-velocities", "kt", table_with(model, 3, T.NV, 2)),
        ("quaternion-past-q", "kt", table_with(model, normalised, T.NORM0, model.nq - 2)),
        ("module-past-links", "kt", table_with(model, 0, T.MEND, L + 1)),
    ]
    for name in ("q", "v", "tau", *inputs, *outputs):
        cases += [(f"{name}-short", name, args[name][:-1]), (f"{name}-long", name, np.append(args[name], 7.0))]
    return cases


@pytest.mark.parametrize("which", list(ENTRIES))
def test_lengths_that_do_not_fit_are_refused_and_nothing_is_written(which, talos):
    outputs = ENTRIES[which][2]
    for case, name, value in length_errors(talos, which):
        args = arguments(talos, which)
        args[name] = value
        assert call(which, args) == -2, case
        for out in outputs:
            assert np.all(args[out] == 7.0), (case, out)


@pytest.mark.parametrize("which", list(ENTRIES))
def test_the_parents_are_the_modules(which, talos):
    """The sweeps take a link's parent from the modules (the last link of the parent module for a
    module's first link), as the tree's passes do: the table's PARENT column is not read."""
    ref = arguments(talos, which)
    assert call(which, ref) == 0
    args = arguments(talos, which)
    kt = args["kt"].view(np.int32)
    kt[:, T.PARENT] = 10**6  # nonsense everywhere
    assert call(which, args) == 0
    for name in ENTRIES[which][2]:
        assert np.array_equal(args[name], ref[name])


def value_errors(model, which):
    """(case, argument, replacement) with an invalid value: status -1."""
    args = arguments(model, which)
    _, inputs, _ = ENTRIES[which]

    def with_(name, i, value):
        x = args[name].copy()
        x.flat[i] = value
        return x

    i = int(model.quaternion_index[0])
    cases = [
        ("q-nan", "q", with_("q", 3, np.nan)),
        ("v-inf", "v", with_("v", model.nv - 1, -np.inf)),
        ("tau-nan", "tau", with_("tau", 0, np.nan)),
        ("fext-inf", "fext", with_("fext", 7, np.inf)),
        ("zero-quaternion", "q", with_("q", slice(i, i + 4), 0.0)),
        ("tiny-quaternion", "q", with_("q", slice(i, i + 4), 4e-13)),
    ]
    cases += [(f"{name}-nan", name, with_(name, 1, np.nan)) for name in inputs]
    return cases


@pytest.mark.parametrize("which", list(ENTRIES))
def test_invalid_values_are_refused_and_nothing_is_written(which, talos):
    for case, name, value in value_errors(talos, which):
        args = arguments(talos, which)
        args[name] = value
        assert call(which, args) == -1, case
        for out in ENTRIES[which][2]:
            assert np.all(args[out] == 7.0), (case, out)


def test_a_length_is_reported_before_a_value(talos):
    args = arguments(talos, "jvp")
    args["q"][0], args["dtau"] = np.nan, args["dtau"][:-1]
    assert call("jvp", args) == -2


@pytest.mark.parametrize("which", ["jvp", "vjp"])
def test_overflow_and_a_singular_inertia(which, talos):
    args = arguments(talos, which)
    args["v"] *= 1e200  # the accelerations overflow
    assert call(which, args) == -3
    assert not np.all(np.isfinite(args["qdd"]))
    args = arguments(talos, which)
    args[ENTRIES[which][1][0]] = np.full(talos.nv, 1e308)  # finite accelerations, the result overflows
    assert call(which, args) == -3
    assert np.all(np.isfinite(args["qdd"]))
    model = db.load_urdf(MASSLESS_TIP)
    args = arguments(model, which)
    assert call(which, args) == model.link_index("tip") + 1


def test_threads_run_the_entries_at_once():
    """The entries run without the GIL: two threads, each with its own work array and buffer,
    give the results of one thread."""
    model = db.generators.chain(3000)
    jobs = [arguments(model, which, seed) for which in ("jvp", "vjp") for seed in (1, 2)]
    serial = [arguments(model, which, seed) for which in ("jvp", "vjp") for seed in (1, 2)]
    for which, args in zip(("jvp", "jvp", "vjp", "vjp"), serial):
        assert call(which, args) == 0
    statuses = {}

    def run(j):
        statuses[j] = [call(("jvp", "jvp", "vjp", "vjp")[j], jobs[j]) for _ in range(3)]

    threads = [threading.Thread(target=run, args=(j,)) for j in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(s == [0, 0, 0] for s in statuses.values())
    for a, b in zip(jobs, serial):
        for name in a:
            assert np.array_equal(a[name], b[name]) or name in ("work", "buf"), name
