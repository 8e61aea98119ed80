"""The compiled fixed-step runs of a tree (denoc_bridge/core/run.pyx) against the same steps taken
from Python (simulation.runners.run_python on the tree's TreeSystem: its own RK4 and Euler
loop, the accelerations of each stage one call of the compiled forward dynamics, which
tests/core/test_tree.py and the parity tests check against Pinocchio): panda (flat joints),
talos (a free-flyer: the Lie-group steps), a 100-link revolute chain (the fused stage sweep),
joint limits hit (the stops and their energy row), springs and dampers, tau none/constant/table,
external wrenches, ``save_every > 1``, chunked calls, failures, and batches.

The states agree to RTOL (measured: bit for bit); a compiled run cut into chunks equals the same
run in one call bit for bit, and a batch equals its single runs bit for bit.  numba's tree runs (kernels/run.py on
a TreeSystem), which this file compared them with before they went (issue 48), agreed to
6e-16."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.core import load
from denoc_bridge.core import systems as kr
from denoc_bridge.core.systems import Saves
from denoc_bridge.simulation.common import Forces
from denoc_bridge.simulation.runners import run_python
from denoc_bridge.simulation.tree import TreeSystem
from tests.core.models import MASSLESS_TIP

run = load("run")

#: largest relative difference max|compiled - Python| / max(1, max|Python|) of a run's states
#: and stop energies (measured: equal bit for bit on every run here, the fused sweep of the chain
#: included; the tolerance leaves room for a compiler that contracts the sweep's a * b + c
#: otherwise than the plain passes')
RTOL = 1e-13
#: of the stops' energy, a difference of potential energies (panda's: about 10 J) before and
#: after a clamp: the same absolute round-off is a larger part of it (2e-13 measured in the
#: sanitizer build, -O1 without fused multiply-adds)
RTOL_STOPS = 1e-12
DT = 1e-3


@cache
def model_of(name: str) -> db.Model:
    if name == "chain100":
        return db.generators.chain(100)
    if name == "massless":
        return db.load_urdf(MASSLESS_TIP)
    return db.load_robot(name)


def start(model, seed=0, speed=0.5):
    rng = np.random.default_rng(seed)
    return db.neutral_configuration(model), speed * rng.standard_normal(model.nv)


def case(model, n, *, tau="none", limits=False, passive=True, fext=False, springs=False, python=False):
    """The TreeSystem and Forcing of a run of n steps (the Python layer's, as simulate builds
    them), with fresh work and limit arrays; with ``python``, the Python system and its Forces."""
    nv = model.nv
    rng = np.random.default_rng(3)
    scale = 1e-4 if model.n_links > 50 else 1.0  # the rope's links weigh 4 g
    t = {"none": None, "constant": rng.standard_normal(nv), "table": rng.standard_normal((n, nv))}[tau]
    t = None if t is None else scale * t
    f = scale * np.tile([0.1, -0.2, 0.05, 1.0, 0.5, -2.0], (model.n_links, 1)) if fext else None
    forces = Forces(model, t, f, n, "rk4")
    forces.passive = passive
    system = TreeSystem(model, forces, passive, limits)
    if springs:  # springs and dampers on every DOF, about a rest configuration off q0
        system.K, system.D = scale * np.linspace(1.0, 3.0, nv), scale * np.linspace(0.1, 0.5, nv)
        system.q_rest = np.ascontiguousarray(db.random_configuration(model, np.random.default_rng(4)))
        system.use_passive = True
    if python:
        return system, forces
    ks = system.kernel_system()
    ks = ks._replace(work=np.empty_like(ks.work))
    return ks, system.forcing()


def python_run(model, n, opts, method, q0, v0, stride):
    """The same run's steps from Python (a Trajectory)."""
    system, forces = case(model, n, python=True, **opts)
    return run_python(model, q0, v0, DT, n, forces, method, True, stride, False, system)


def fresh(ks):
    """The system with a work array of its own (and a tree's or a mimic system's limits' scratch)."""
    ks = ks._replace(work=np.empty_like(ks.work))
    if hasattr(ks, "lim_s"):
        ks = ks._replace(lim_s=np.zeros_like(ks.lim_s), lim_a=np.zeros_like(ks.lim_a), lim_e=np.zeros(1))
    return ks


def execute(stepper, ks, fc, q0, v0, n, stride=1, chunks=None):
    """The run of n steps in calls of ``chunks`` steps: (steps, status, rows), q, v, Saves, s, and
    the system the run used (its limits' energy in ``lim_e``); a system with loops saves |phi|."""
    ks = fresh(ks)
    nq, nv = q0.shape[0], v0.shape[0]
    rows = (n - 1) // stride + 2
    stops = rows if hasattr(ks, "lim_i") and ks.lim_i.shape[0] else 0
    errors = rows if hasattr(ks, "pi") else 0
    out = Saves(np.zeros((rows, nq)), np.zeros((rows, nv)), np.zeros((rows, nv)), np.zeros(errors), np.zeros(stops))
    s = np.zeros((kr.RUN_ROWS, max(nq, nv, 1)))
    q, v = q0.copy(), v0.copy()
    step, saved, status = 0, 0, 0
    for c in chunks or [n]:
        done, status, k = stepper(ks, fc, q, v, step, c, DT, stride, saved, out, s)
        step += done
        saved += k
        if status:
            break
    return (step, status, saved), q, v, out, s, ks


def rel(a, b):
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b))))) if b.size else 0.0


def assert_same_as_python(a, ref, rtol=RTOL):
    """The compiled run ``a`` (execute's) against a Trajectory of the same run from Python."""
    (steps, status, saved), q, v, out = a[:4]
    assert ref.status == "completed" and len(ref.q) == saved + 1
    for x, y in [(q, ref.q[-1]), (v, ref.v[-1]), (out.Qs[:saved], ref.q[:saved]), (out.Vs[:saved], ref.v[:saved])]:
        assert rel(x, y) <= rtol, rel(x, y)
    if out.Stops.size:
        assert rel(out.Stops[: saved + 1], ref.limit_work) <= RTOL_STOPS


STEPPERS = {"rk4": run.rk4_run, "euler": run.euler_run}
RUNS = [
    ("panda", dict(tau="none")),
    ("panda", dict(tau="constant", springs=True)),
    ("panda", dict(tau="table", limits=True)),
    ("talos", dict(tau="constant", fext=True)),
    ("talos", dict(tau="table", limits=True, springs=True)),
    ("chain100", dict(tau="none", fext=True)),
    ("chain100", dict(tau="table", springs=True)),
]


@pytest.mark.parametrize("method", ["rk4", "euler"])
@pytest.mark.parametrize("name, opts", RUNS, ids=[f"{n}-{'-'.join(f'{k}={v}' for k, v in o.items())}" for n, o in RUNS])
def test_a_run_is_the_python_stages(name, opts, method):
    model = model_of(name)
    n = 120
    q0, v0 = start(model, speed=2.0 if opts.get("limits") else 0.5)
    ks, fc = case(model, n, **opts)
    a = execute(STEPPERS[method], ks, fc, q0, v0, n, stride=3)
    assert a[0] == (n, 0, 40)
    assert_same_as_python(a, python_run(model, n, opts, method, q0, v0, 3))
    if opts.get("limits"):  # the stops took energy, and the last row holds it
        assert a[3].Stops[40] != 0.0


@pytest.mark.parametrize("method", ["rk4", "euler"])
@pytest.mark.parametrize("name", ["talos", "chain100"])
def test_chunks_change_nothing(name, method):
    model = model_of(name)
    n = 90
    q0, v0 = start(model)
    ks, fc = case(model, n, tau="table", limits=name == "talos")
    ours = STEPPERS[method]
    whole = execute(ours, ks, fc, q0, v0, n, stride=4)
    cut = execute(ours, ks, fc, q0, v0, n, stride=4, chunks=[1, 6, 40, 0, 43])
    assert whole[0] == cut[0] == (n, 0, 23)
    for x, y in zip(whole[1:4], cut[1:4]):
        assert all(np.array_equal(a, b) for a, b in zip(x, y)) if isinstance(x, tuple) else np.array_equal(x, y)


def test_limits_stop_the_joints_and_account_their_energy():
    model = model_of("panda")
    q0, v0 = start(model, speed=4.0)
    ks, fc = case(model, 300, limits=True)
    lo, hi = ks.lim_f[:, 0], ks.lim_f[:, 1]
    q0[ks.lim_i[:, 0]] = np.clip(q0[ks.lim_i[:, 0]], lo, hi)
    a = execute(run.rk4_run, ks, fc, q0, v0, 300)
    qs = a[3].Qs[: a[0][2], ks.lim_i[:, 0]]
    assert np.all(qs >= lo) and np.all(qs <= hi) and np.any((qs == lo) | (qs == hi))
    assert a[3].Stops[a[0][2]] > 0.0 and a[3].Stops[a[0][2]] == a[5].lim_e[0]  # the last row: the final energy


def test_failures_keep_the_state_before_the_failing_step():
    """A state that leaves the finite numbers (a huge torque at step 37): status -1 at step 36 or
    37 (numba's runs stopped at the same step), the state and rows of the run of the steps before
    it, the failing stage's torque in the scratch; a singular articulated inertia at the first
    step: its link, nothing saved."""
    model = model_of("panda")
    n = 60
    q0, v0 = start(model)
    ks, fc = case(model, n, tau="table")
    taus = fc.taus.copy()
    taus[37, 2] = 1e308
    fc = fc._replace(taus=taus)
    for stepper in STEPPERS.values():
        a = execute(stepper, ks, fc, q0, v0, n, stride=2)
        done = a[0][0]
        assert a[0][1] == -1 and done in (36, 37), a[0]
        before = execute(stepper, ks, fc, q0, v0, done, stride=2)
        assert before[0] == (done, 0, a[0][2])
        assert np.array_equal(a[1], before[1]) and np.array_equal(a[2], before[2])
        assert np.array_equal(a[3].Qs[: a[0][2]], before[3].Qs[: a[0][2]])
        assert a[4][kr.TAU][2] == 1e308
    tip = model_of("massless")  # a link whose articulated inertia is zero: a massless tip on a prismatic joint
    ks, fc = case(tip, 10)
    q0, v0 = start(tip)
    for stepper in STEPPERS.values():
        assert execute(stepper, ks, fc, q0, v0, 10)[0] == (0, tip.link_index("tip") + 1, 0)


def test_wrong_lengths_compute_nothing_and_wrong_types_raise():
    model = model_of("panda")
    q0, v0 = start(model)
    ks, fc = case(model, 10, tau="table")
    s = np.zeros((kr.RUN_ROWS, model.nv))
    out = Saves(np.zeros((11, model.nq)), np.zeros((11, model.nv)), np.zeros((11, model.nv)), np.zeros(0), np.zeros(0))
    assert run.rk4_run(ks, fc, q0.copy(), v0.copy(), 0, 10, DT, 1, 0, out, s) == (10, 0, 10)
    bad = [
        (ks, fc, 0, 20, 1, 0, out),  # the table has 10 rows
        (ks, fc, 0, 10, 1, 2, out),  # 10 rows saved from row 2 of 11
        (ks, fc, 0, 10, 0, 0, out),  # save_every 0
        (ks._replace(work=np.zeros((3, 8))), fc, 0, 10, 1, 0, out),
        (ks._replace(lim_i=np.array([[model.nq, 0]])), fc, 0, 10, 1, 0, out),
        (ks, fc._replace(K=np.zeros(model.nv + 1)), 0, 10, 1, 0, out),
        (ks, fc._replace(fext=np.zeros((model.n_links - 1, 6))), 0, 10, 1, 0, out),
        (ks, fc._replace(tau_mode=7), 0, 10, 1, 0, out),
        (ks, fc, 0, 10, 1, 0, out._replace(Vs=np.zeros((11, model.nv + 1)))),
    ]
    for system, forcing, step0, n, every, save0, o in bad:
        q = q0.copy()
        assert run.rk4_run(system, forcing, q, v0.copy(), step0, n, DT, every, save0, o, s) == (0, -2, 0)
        assert np.array_equal(q, q0)
    with pytest.raises(TypeError, match="q"):
        run.rk4_run(ks, fc, list(q0), v0.copy(), 0, 10, DT, 1, 0, out, s)
    with pytest.raises(TypeError, match="lim_i"):
        run.euler_run(ks._replace(lim_i=ks.lim_i.astype(np.int32)), fc, q0.copy(), v0.copy(), 0, 10, DT, 1, 0, out, s)
    with pytest.raises(TypeError, match="Qs"):
        run.rk4_run(ks, fc, q0.copy(), v0.copy(), 0, 10, DT, 1, 0, out._replace(Qs=out.Qs[:, ::-1]), s)
    with pytest.raises(TypeError, match="v"):
        frozen = v0.copy()
        frozen.flags.writeable = False
        run.rk4_run(ks, fc, q0.copy(), frozen, 0, 10, DT, 1, 0, out, s)


def batch_arrays(model, B, n, stride, limits, tau_table):
    rng = np.random.default_rng(5)
    Q = np.array([db.random_configuration(model, rng) for _ in range(B)])
    V = rng.standard_normal((B, model.nv)) * (3.0 if limits else 0.5)
    if limits:  # inside the limits
        forces = Forces(model, None, None, n, "rk4")
        system = TreeSystem(model, forces, True, True)
        Q[:, system.lim_i[:, 0]] = np.clip(Q[:, system.lim_i[:, 0]], system.lim_f[:, 0], system.lim_f[:, 1])
    taus = rng.standard_normal((B, n if tau_table else 1, model.nv)) * (1e-4 if model.n_links > 50 else 1.0)
    ks, fc = case(model, n, tau="table" if tau_table else "constant", limits=limits)
    fc = fc._replace(taus=taus)
    n_saves = (n - 1) // stride + 1
    stops = n_saves + 1 if limits else 0
    out = Saves(
        np.zeros((B, n_saves, model.nq)),
        np.zeros((B, n_saves, model.nv)),
        np.zeros((B, n_saves, model.nv)),
        np.zeros((B, 0)),
        np.zeros((B, stops)),
    )
    return ks, fc, Q, V, out


@pytest.mark.parametrize("euler", [False, True])
@pytest.mark.parametrize(
    "name, limits, table", [("panda", True, True), ("talos", False, False), ("chain100", False, True)]
)
def test_a_batch_is_its_single_runs(name, limits, table, euler):
    model = model_of(name)
    B, n, stride = 5, 40, 3
    ks, fc, Q, V, out = batch_arrays(model, B, n, stride, limits, table)
    if table:  # case 3 leaves the finite numbers at step 17
        fc.taus[3, 17, 0] = 1e308
    ours = [np.zeros(B, np.int64) for _ in range(3)]
    Q1, V1, out1 = Q.copy(), V.copy(), Saves(*(x.copy() for x in out))
    assert run.run_batch_chunk(ks, fc, Q1, V1, n, DT, stride, out1, *ours, euler, 0, 2) == 0
    assert run.run_batch_chunk(ks, fc, Q1, V1, n, DT, stride, out1, *ours, euler, 2, B) == 0
    if table:  # numba's batch stopped case 3 at the same step
        assert ours[1][3] == -1 and ours[0][3] in (16, 17)
    assert all(ours[1][b] == 0 and ours[0][b] == n for b in range(B) if not (table and b == 3))
    stepper = run.euler_run if euler else run.rk4_run
    for b in range(B):  # each case is its single run, bit for bit
        fb = fc._replace(taus=np.ascontiguousarray(fc.taus[b]))
        r = execute(stepper, ks, fb, Q[b], V[b], n, stride)
        assert r[0] == (ours[0][b], ours[1][b], ours[2][b])
        k = ours[2][b]
        assert np.array_equal(r[1], Q1[b]) and np.array_equal(r[2], V1[b])
        assert np.array_equal(r[3].Qs[:k], out1.Qs[b, :k]) and np.array_equal(r[3].As[:k], out1.As[b, :k])
        if limits:
            assert np.array_equal(r[3].Stops[: k + 1], out1.Stops[b, : k + 1])


def test_a_batch_chunk_refuses_lengths_that_do_not_fit():
    model = model_of("panda")
    ks, fc, Q, V, out = batch_arrays(model, 3, 10, 1, False, True)
    st = [np.zeros(3, np.int64) for _ in range(3)]
    assert run.run_batch_chunk(ks, fc, Q, V[:2].copy(), 10, DT, 1, out, *st, False, 0, 3) == -2
    assert run.run_batch_chunk(ks, fc, Q, V, 11, DT, 1, out, *st, False, 0, 3) == -2  # 10 rows of tau
    assert run.run_batch_chunk(ks, fc, Q, V, 10, DT, 1, out, *st, False, 0, 4) == -2
    assert run.run_batch_chunk(ks, fc._replace(taus=fc.taus[:2].copy()), Q, V, 10, DT, 1, out, *st, False, 0, 3) == -2
    assert np.all(out.Qs == 0.0) and not any(np.any(x) for x in st)


def test_threads_claiming_cases_run_each_once():
    """Two threads that claim the cases of a batch from one counter (simulate_batch's
    ``run_claimed``) compute what one call over the whole batch computes."""
    from concurrent.futures import ThreadPoolExecutor

    model = model_of("panda")
    B, n = 9, 25
    ks, fc, Q, V, out = batch_arrays(model, B, n, 2, True, True)
    whole = [np.zeros(B, np.int64) for _ in range(3)]
    Q1, V1, out1 = Q.copy(), V.copy(), Saves(*(x.copy() for x in out))
    assert run.run_batch_chunk(ks, fc, Q1, V1, n, DT, 2, out1, *whole, False, 0, B) == 0
    claimed = [np.full(B, -5, np.int64) for _ in range(3)]
    counter = np.zeros(1, np.int64)
    with ThreadPoolExecutor(2) as pool:
        jobs = [
            pool.submit(run.run_batch_chunk, ks, fc, Q, V, n, DT, 2, out, *claimed, False, 0, B, counter)
            for _ in range(2)
        ]
        assert [j.result() for j in jobs] == [0, 0]
    assert counter[0] == B + 2  # each thread's last claim found no case left
    assert all(np.array_equal(x, y) for x, y in zip(whole, claimed))
    assert np.array_equal(Q, Q1) and np.array_equal(out.Qs, out1.Qs) and np.array_equal(out.Stops, out1.Stops)


def test_tree_flags():
    """(flat, swept) of the compiled core, the paths a run takes: flat when every joint is a
    vector space (revolute, prismatic, universal, translation; numba's tree_flags agreed on every
    joint type before it went), swept when every joint is a one-DOF revolute joint about a
    coordinate axis (chains, ropes); a table that is no model's gives (False, False)."""
    from denoc_bridge.multibody.joints import JointType
    from denoc_bridge.testing import random_model

    vector_space = {JointType.REVOLUTE, JointType.PRISMATIC, JointType.UNIVERSAL, JointType.TRANSLATION}
    models = [model_of(n) for n in ("panda", "talos", "chain100")] + [
        random_model(seed=s, n_links=6, joint_types=(t,), floating_base=s % 2 == 1) for t in JointType for s in (1, 2)
    ]
    for m in models:
        types = {JointType(int(t)) for t in m.joint_type}
        flat, swept = run.tree_flags(m._kt)
        assert flat == (types <= vector_space), (m.name, types)
        if swept:
            assert types == {JointType.REVOLUTE} and m.nv == m.n_links
    assert run.tree_flags(model_of("chain100")._kt) == (True, True)
    assert run.tree_flags(model_of("panda")._kt) == (True, False)  # its fingers are prismatic
    assert run.tree_flags(model_of("talos")._kt) == (False, False)
    bad = model_of("panda")._kt.copy()
    bad.view(np.int32)[0, 1] = 5  # its first joint's q index
    assert run.tree_flags(bad) == (False, False)
