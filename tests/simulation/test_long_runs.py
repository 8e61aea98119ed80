"""Issue "Reliability and security", item 3: long runs, threads and blow-ups.

* Flat memory: a 100,000-DOF chain integrated for N1 and then N2 = 8 N1 RK4 steps (the compiled
  stepper), the Python stepping loop (a callable ``tau``) on 10,000 DOF for 40 and 320 steps,
  and the adaptive RK45 path (10x more solver steps for the same saved states), each storing
  its first and last state only (``save_every``), must hold the same memory whatever the number
  of steps.  Measured after two warm-up runs (compilation, the model's work arrays, first
  imports, the allocator's free lists): the Python/NumPy allocations that
  tracemalloc sees (kept and peak), and the process RSS (/proc/self/statm) at every progress
  update of the run (after each compiled chunk), after the run and at its peak (VmHWM, where
  /proc/self/clear_refs can reset it).  Each run must also be physically sane (finite, steps
  counted, energy kept, the chain moved), so that a run that did nothing cannot pass.
* Threads: batched and single-state forward/inverse dynamics, mass matrix, inverse mass matrix,
  forward kinematics, energies and the loops' multipliers from 8 threads at once (fresh
  models, so that the threads' first calls, which build their work arrays and loop buffers,
  collide), with and without a ``Data`` per thread, must be bit-identical to the serial results
  computed beforehand, on a random tree of every joint type, two real robots (panda, talos), two
  models with loop closures and a mimic model.  The compiled kernels hold the GIL, so the
  single-state calls never overlap inside a kernel; what threads can break is Python-level
  state and the work read back after a kernel.  Three bugs found here are pinned:
  mass_matrix's first call in a thread (or on a list) normalised q twice and differed in the
  last bits; concurrent first calls on a model with loops left a process-wide "ignore
  PhysicsWarning" filter behind (Model.replace used warnings.catch_warnings, not thread-safe);
  under numba's "workqueue" threading layer two threads launching the batch kernels at once
  aborted the process (numba is gone since issue 49: the batches share out their states on the
  package's own thread pool, tested here from 8 threads).
* Blow-ups: tests/simulation/test_simulate.py::test_non_finite_state_names_time_and_joint already covers
  SimulationError naming time and joint with the partial trajectory (compiled and Python loop,
  blow-up forced by a huge torque), tests/test_bad_input.py the singular inertia (rk4, RK45).
  Not repeated; here a genuine numerical instability deep in a long run (about 4,100 steps,
  several compiled chunks, ``save_every`` > 1), checked against the linear theory of RK4, with
  the compiled and the Python stepper stopping at the same step (they did not: the Python loop
  accepted a stage with overflowing accelerations, could keep a non-finite acceleration in the
  partial trajectory and reported the stage's time instead of the step's).

No timing is asserted; the whole file takes 35-50 s on 2 cores once the kernels are cached.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
import time
import tracemalloc
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge import loops
from denoc_bridge.io.generators import chain, fourbar
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.simulation import common as simulation
from denoc_bridge.testing import random_model

ROOT = Path(__file__).resolve().parents[2]
GRIPPER = str(ROOT / "urdf" / "mimic_gripper.urdf")
MiB = 2**20
HAS_PROC = os.path.exists("/proc/self/statm")

# ----------------------------------------------------------------------------- measuring memory


def _rss() -> int:
    """Resident set size of this process, bytes (0 without /proc)."""
    if not HAS_PROC:
        return 0
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _reset_peak_rss() -> bool:
    """Reset VmHWM to the current RSS (Linux >= 4.0); False where /proc does not allow it."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak_rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


@pytest.fixture
def memory_probes(monkeypatch):
    """tracemalloc
    (started for the test unless it already runs), and the RSS sampled at every progress update
    of simulate (after each compiled chunk, every 100 steps of the Python loop, every adaptive
    step): ``probes.stats()``, the RSS in ``probes.rss[:probes.n]`` (preallocated: the samples do
    not count in tracemalloc's measures)."""
    probes = SimpleNamespace(rss=np.zeros(100_000), n=0)
    update = simulation.Run.update

    def sampled_update(self, done):
        if probes.n < probes.rss.size:
            probes.rss[probes.n] = _rss()
            probes.n += 1
        return update(self, done)

    monkeypatch.setattr(simulation.Run, "update", sampled_update)
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    yield probes
    if not tracing:
        tracemalloc.stop()


def _measured(run, probes) -> tuple:
    """(trajectory, measures) of ``run()``; the trajectory is alive while memory is read."""
    gc.collect()
    probes.n = 0
    tracemalloc.reset_peak()
    py0 = tracemalloc.get_traced_memory()[0]
    rss0 = _rss()
    peak_ok = HAS_PROC and _reset_peak_rss()
    t0 = time.perf_counter()
    traj = run()
    wall = time.perf_counter() - t0
    gc.collect()
    py1, py_peak = tracemalloc.get_traced_memory()
    rss1 = _rss()
    peak = max(_peak_rss(), rss1) if peak_ok else rss1
    rss_in_run = probes.rss[: probes.n]
    m = dict(
        wall=wall,
        rss_growth=rss1 - rss0,
        rss_peak=peak - rss0,
        py_kept=py1 - py0,
        py_peak=py_peak - py0,
        updates=probes.n,
        rss_in_run=rss_in_run.max() - rss_in_run[0] if probes.n else 0,
        peak_rss_measured=peak_ok,
    )
    return traj, m


def _report(label, steps, m):
    print(
        f"\n{label}: {steps} steps in {m['wall']:.2f} s; RSS +{m['rss_growth'] / MiB:.2f} MiB after, peak "
        f"+{m['rss_peak'] / MiB:.2f} MiB ({'VmHWM' if m['peak_rss_measured'] else 'after the run'}); "
        f"RSS from the first to the highest of {m['updates']} progress updates +{m['rss_in_run'] / MiB:.3f} MiB; "
        f"tracemalloc kept {m['py_kept'] / MiB:.4f} MiB, peak {m['py_peak'] / MiB:.4f} MiB"
    )


def _assert_flat(short, long, rss_tol, py_tol, min_updates):
    """The long run holds no more memory than the short one, and none more at its last progress
    update than at its first: nothing per step."""
    assert long["py_kept"] <= short["py_kept"] + py_tol, (
        f"tracemalloc: the long run keeps {long['py_kept'] - short['py_kept']} bytes more than the short one"
    )
    assert long["py_peak"] <= short["py_peak"] + py_tol, (
        f"tracemalloc: the long run peaks {long['py_peak'] - short['py_peak']} bytes above the short one"
    )
    if HAS_PROC:
        assert long["updates"] >= min_updates, f"only {long['updates']} progress updates in the long run"
        assert long["rss_in_run"] <= IN_RUN_TOL, (
            f"RSS grew {long['rss_in_run'] / MiB:.2f} MiB during the long run ({long['updates']} updates)"
        )
        assert long["rss_growth"] <= short["rss_growth"] + rss_tol, (
            f"RSS grew {long['rss_growth'] / MiB:.2f} MiB in the long run, {short['rss_growth'] / MiB:.2f} MiB in "
            "the short one"
        )
        assert long["rss_peak"] <= short["rss_peak"] + rss_tol, (
            f"RSS peaked {long['rss_peak'] / MiB:.2f} MiB above its start in the long run, "
            f"{short['rss_peak'] / MiB:.2f} MiB in the short one"
        )


def _assert_sane(traj, n_steps, dt, evals_per_step, q0, drift_tol):
    """The run did its steps and its physics: finite, counted, energy kept, moved."""
    assert traj.status == "completed" and traj.n_steps == n_steps
    if evals_per_step:
        assert traj.n_evaluations == evals_per_step * n_steps + 1
    assert len(traj) == 2 and traj.t[-1] == pytest.approx(n_steps * dt, rel=1e-12)
    assert np.all(np.isfinite(traj.q)) and np.all(np.isfinite(traj.v)) and np.all(np.isfinite(traj.a))
    drift = np.abs(traj.energy_drift(relative=True)).max()
    assert drift < drift_tol, f"relative energy drift {drift:.2e}"
    assert traj.kinetic_energy[-1] > 0.0 and traj.potential_energy[-1] < traj.potential_energy[0]
    assert np.abs(traj.q[-1] - q0).max() > 1e-4, "the chain did not move"


# ----------------------------------------------------------------------------- 1. flat memory

#: RSS tolerances: allocator noise (glibc arenas, Python pools).  Measured after two warm-up runs,
#: storing 2 states per run: 0.00 MiB between the short and the long run, 0.000 MiB from the first
#: to the highest progress update of a run (0.8-3.7 MiB between runs storing 5 states, from the
#: reuse of the freed trajectories).  One state vector of the 100k chain is 0.8 MB: storing every
#: step of the long run would add 600 MB, one leaked vector per step 130 MB, one per chunk (about
#: 3 steps each here) 50 MB.
RSS_TOL = 4 * MiB
IN_RUN_TOL = 2 * MiB


@pytest.fixture(scope="module")
def chain100k():
    """The planar chain of 100,000 cylinders (5 cm, 4 g), slightly bent at random, at rest."""
    model = chain(100_000, "planar")
    rng = np.random.default_rng(0)
    return model, 0.02 * rng.standard_normal(model.nq), np.zeros(model.nv)


@pytest.mark.slow
def test_100k_dof_rk4_run_keeps_flat_memory(chain100k, memory_probes):
    """N1 = 24 and N2 = 192 compiled RK4 steps of the 100,000-DOF chain, saving the first and
    the last state (``save_every`` = the number of steps; the stored trajectory is then 6.4 MB
    whatever the length of the run).  About 45 ms per step: the long run takes ~8 s in 30-80
    chunks of the stepping loop."""
    model, q0, v0 = chain100k
    dt, n1, n2 = 1e-4, 24, 192

    def run(n):
        return db.simulate(model, q0, v0, n * dt, dt=dt, method="rk4", save_every=n, progress=False)

    for _ in range(2):  # compiles; the model's work array; the energies'
        run(n1).energy_drift()  # first imports; the allocator's free lists
    short, m1 = _measured(lambda: run(n1), memory_probes)
    _assert_sane(short, n1, dt, 4, q0, 1e-6)
    del short
    long, m2 = _measured(lambda: run(n2), memory_probes)
    _report("100k-DOF rk4, short", n1, m1)
    _report("100k-DOF rk4, long", n2, m2)
    _assert_sane(long, n2, dt, 4, q0, 1e-6)
    assert long.kinetic_energy[-1] > 1.0  # 20 ms of falling: ~7 J
    _assert_flat(m1, m2, RSS_TOL, py_tol=256 * 1024, min_updates=3)  # a third of one 0.8 MB vector


@pytest.mark.slow
def test_python_stepping_loop_keeps_flat_memory(memory_probes):
    """A callable tau makes simulate step from Python (one compiled forward dynamics per stage,
    new arrays each call): 40 and 320 steps of a 10,000-DOF chain."""
    model = chain(10_000, "planar")
    rng = np.random.default_rng(1)
    q0, v0 = 0.02 * rng.standard_normal(model.nq), np.zeros(model.nv)
    dt, n1, n2 = 1e-4, 40, 320
    calls = {"n": 0}

    def weak_spring(t, q, v):  # a controller: a fresh array per call
        calls["n"] += 1
        return -1e-4 * q

    def run(n):
        return db.simulate(model, q0, v0, n * dt, dt=dt, tau=weak_spring, save_every=n, progress=False)

    for _ in range(2):
        run(n1).energy_drift()
    short, m1 = _measured(lambda: run(n1), memory_probes)
    _assert_sane(short, n1, dt, 4, q0, 1e-6)
    del short
    calls["n"] = 0
    long, m2 = _measured(lambda: run(n2), memory_probes)
    _report("10k-DOF Python loop, short", n1, m1)
    _report("10k-DOF Python loop, long", n2, m2)
    assert calls["n"] == 4 * n2 + 1, "the controller was not called at every stage"
    _assert_sane(long, n2, dt, 4, q0, 1e-6)
    _assert_flat(m1, m2, RSS_TOL, py_tol=64 * 1024, min_updates=4)  # one 10k vector is 80 kB


@pytest.mark.slow
def test_adaptive_path_keeps_flat_memory(memory_probes):
    """RK45 on a 1,000-DOF chain with springs: rtol 1e-4 and 1e-9 take ~60 and ~650 solver steps
    for the same 2 saved states; memory must not follow the number of steps."""
    model = chain(1000, "planar", stiffness=0.5)
    rng = np.random.default_rng(2)
    q0, v0 = 0.02 * rng.standard_normal(model.nq), np.zeros(model.nv)

    def run(rtol):
        return db.simulate(model, q0, v0, 0.02, dt=0.02, method="RK45", rtol=rtol, atol=1e-9 * rtol, progress=False)

    for _ in range(2):
        run(1e-4).energy_drift()
    loose, m1 = _measured(lambda: run(1e-4), memory_probes)
    n_loose = loose.n_steps
    del loose
    tight, m2 = _measured(lambda: run(1e-9), memory_probes)
    _report("1k-DOF RK45, rtol 1e-4", n_loose, m1)
    _report("1k-DOF RK45, rtol 1e-9", tight.n_steps, m2)
    assert tight.n_steps >= 5 * n_loose, (tight.n_steps, n_loose)
    assert tight.status == "completed" and len(tight) == 2 and np.all(np.isfinite(tight.q))
    assert np.abs(tight.energy_drift(relative=True)).max() < 1e-6
    assert np.abs(tight.q[-1] - q0).max() > 1e-4
    _assert_flat(m1, m2, RSS_TOL, py_tol=64 * 1024, min_updates=100)


# ----------------------------------------------------------------------------- 2. threads

THREADS = 8


def _looped_tree():
    """A branched tree of 1- to 3-DOF joints with a spherical cut to the world, closed at q_ref."""
    types = [JointType.REVOLUTE, JointType.PRISMATIC, JointType.SPHERICAL, JointType.UNIVERSAL, JointType.CONTINUOUS]
    model = random_model(8, 12, branching=0.3, joint_types=types)
    q_ref = db.random_configuration(model, np.random.default_rng(8))
    R, p = db.forward_kinematics(model, q_ref)
    tip, k = np.array([0.0, 0.1, 0.0]), model.n_links - 3
    model.add_loop_closure("cut", "spherical", model.link_names[k], "world", xyz1=tip, xyz2=p[k] + R[k] @ tip)
    return model, q_ref


def _models() -> dict:
    """Fresh models (no thread has called them yet)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", db.PhysicsWarning)
        panda, talos = db.load_robot("panda"), db.load_robot("talos")
    looped, q_ref = _looped_tree()
    return {
        "every joint type": (random_model(11, 40, branching=0.4, n_roots=2, floating_base=True, massless=0.3), None),
        "panda": (panda, None),
        "talos": (talos, None),
        "fourbar (loop)": (fourbar(), None),
        "spherical cut (loop)": (looped, q_ref),
        "mimic gripper": (db.load_urdf(GRIPPER, mimic=True), None),
    }


def _states(model, q_ref, seed, B=12):
    """B states of the model (on its loops: closed, with consistent accelerations)."""
    rng = np.random.default_rng(seed)
    if model.loops:
        if q_ref is None:  # the four-bar: t2, -t2, t2 close it
            t2, w2 = rng.uniform(-1.2, 1.2, B), rng.normal(size=B)
            Q = np.column_stack([rng.normal(size=B), t2, -t2, t2])
            V = np.column_stack([rng.normal(size=B), w2, -w2, w2])
        else:
            near = [db.integrate(model, q_ref, 0.05 * rng.normal(size=model.nv)) for _ in range(B)]
            Q = np.array([loops.project_configuration(model, q) for q in near])
            V = np.array([loops.project_velocity(model, q, rng.normal(size=model.nv)) for q in Q])
        T = rng.normal(size=(B, model.nv))
        return Q, V, T, db.forward_dynamics(model, Q, V, T), rng.normal(size=(B, model.n_links, 6))
    Q = np.array([db.random_configuration(model, rng) for _ in range(B)])
    return (
        Q,
        rng.normal(size=(B, model.nv)),
        rng.normal(size=(B, model.nv)),
        rng.normal(size=(B, model.nv)),
        rng.normal(size=(B, model.n_links, 6)),
    )


def _operations(model, states, data):
    """(key, thunk) of every call: batches, single states (with ``data`` or the thread's own
    buffers), external wrenches (the converting path), and the calls that read their work array
    from Python after the kernel returned (forward kinematics and the inverse GIM copy the
    geometry out of it; the loops' multipliers are read from the thread's loop buffers): those
    would see another thread's numbers if the buffers were shared.  Closed-chain inverse
    dynamics (a dense solve per state) on two states only."""
    Q, V, T, A, F = states
    ops = [
        (("fd batch",), lambda: db.forward_dynamics(model, Q, V, T)),
        (("energies batch",), lambda: np.stack(db.energies(model, Q, V))),
    ]
    n_id = 2 if model.loops else len(Q)
    ops.append((("id batch",), lambda: db.inverse_dynamics(model, Q[:n_id], V[:n_id], A[:n_id])))
    for b in range(len(Q)):
        q, v, tau, a, f = Q[b], V[b], T[b], A[b], F[b]
        ops += [
            (("fd", b), lambda q=q, v=v, tau=tau: db.forward_dynamics(model, q, v, tau, data=data)),
            (("mass matrix", b), lambda q=q: db.mass_matrix(model, q, data=data)),
            (("fd f_ext", b), lambda q=q, v=v, tau=tau, f=f: db.forward_dynamics(model, q, v, tau, f, data=data)),
            (
                ("placements", b),
                lambda q=q: np.concatenate([x.ravel() for x in db.forward_kinematics(model, q, data=data)]),
            ),
            (("inverse mass matrix", b), lambda q=q: db.inverse_mass_matrix(model, q, data=data)),
        ]
        if model.loops:
            ops.append(
                (
                    ("fd and multipliers", b),
                    lambda q=q, v=v, tau=tau: np.concatenate(
                        loops.constrained_forward_dynamics(model, q, v, tau, return_forces=True)
                    ),
                )
            )
        if b < n_id:
            ops.append((("id", b), lambda q=q, v=v, a=a: db.inverse_dynamics(model, q, v, a, data=data)))
            if not model.loops:
                ops.append(
                    (("id f_ext", b), lambda q=q, v=v, a=a, f=f: db.inverse_dynamics(model, q, v, a, f, data=data))
                )
    return ops


@pytest.mark.parametrize(
    "name", ["every joint type", "panda", "talos", "fourbar (loop)", "spherical cut (loop)", "mimic gripper"]
)
def test_threads_give_the_serial_results_bit_for_bit(name):
    """8 threads, each its own states (seeded), many repetitions in a shuffled order, every other
    repetition with the thread's own Data; half the threads with their batch thread count set to 1
    (another chunking of the batches).  Every result must equal the serial one exactly: each
    state runs the same compiled arithmetic on its own work array, whatever runs beside it."""
    model, q_ref = _models()[name]
    tree = model.tree if isinstance(model, db.MimicModel) else model
    states = [_states(model, q_ref, 100 + i) for i in range(THREADS)]
    expected = []
    for i in range(THREADS):  # serial, in the main thread
        expected.append({key: np.array(op()) for key, op in _operations(model, states[i], None)})
    reps = 3 if model.loops else 12
    start = threading.Barrier(THREADS)

    def worker(i):
        if i % 2:
            db.set_num_threads(1)  # per calling thread
        rng = np.random.default_rng(1000 + i)
        data = db.Data(tree)
        mismatches, calls = [], 0
        start.wait(timeout=120)  # first calls at the same time
        for rep in range(reps):
            ops = _operations(model, states[i], data if rep % 2 else None)
            for j in rng.permutation(len(ops)):
                key, op = ops[j]
                out = op()
                calls += 1
                if not (out.dtype == expected[i][key].dtype and np.array_equal(out, expected[i][key])):
                    mismatches.append((rep, key))
        return calls, mismatches

    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(worker, range(THREADS)))
    for i, (calls, mismatches) in enumerate(results):
        assert calls == reps * len(expected[i]), f"thread {i} made {calls} calls"
        assert not mismatches, f"thread {i}: results differ from the serial ones at {mismatches[:5]}"


def test_the_first_call_of_a_thread_gives_the_same_bits():
    """A thread's first call has no work array yet and takes the converting path (as lists and
    other dtypes do).  mass_matrix normalised the quaternions and (cos, sin) pairs there before
    the kernel normalised them again, which changed the last bits (in 318 of 400 random states of
    this tree): the threads above saw it whenever their first call was a mass matrix."""
    model = random_model(11, 40, branching=0.4, n_roots=2, floating_base=True, massless=0.3)
    rng = np.random.default_rng(104)
    states = [
        (db.random_configuration(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)) for _ in range(12)
    ]
    calls = {
        "mass matrix": lambda q, v, x: db.mass_matrix(model, q),
        "forward dynamics": lambda q, v, x: db.forward_dynamics(model, q, v, x),
        "inverse dynamics": lambda q, v, x: db.inverse_dynamics(model, q, v, x),
    }
    warm = {(name, b): f(*s) for name, f in calls.items() for b, s in enumerate(states)}
    for (name, b), expected in warm.items():
        with ThreadPoolExecutor(1) as pool:  # a new thread: its first call
            first = pool.submit(calls[name], *states[b]).result()
        assert np.array_equal(first, expected), f"{name}, state {b}: the first call of a thread differs"
        q, v, x = states[b]
        assert np.array_equal(calls[name](list(q), list(v), list(x)), expected), f"{name}, state {b}: a list differs"


def test_concurrent_first_calls_leave_the_warning_filters_alone():
    """The first call on a model with loops (and on a mimic model's forward dynamics) builds its
    gravity-free twin with Model.replace, which used warnings.catch_warnings(): not thread-safe,
    8 threads at once left a process-wide "ignore PhysicsWarning" filter behind in 10-50 % of the
    trials (nearly all with a short thread switch interval)."""
    before = list(warnings.filters)
    q, v, tau = np.array([0.1, 0.3, -0.3, 0.3]), np.array([0.2, 0.5, -0.5, 0.5]), np.ones(4)
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often: the race shows
    try:
        _first_calls_in_threads(before, q, v, tau)
    finally:
        sys.setswitchinterval(switch)


def _first_calls_in_threads(before, q, v, tau):
    for trial in range(60):
        models = [fourbar(), db.load_urdf(GRIPPER, mimic=True)]
        qm, vm = db.neutral_configuration(models[1]), np.zeros(models[1].nv)
        start = threading.Barrier(THREADS)

        def first_calls(_):
            start.wait(timeout=60)
            return db.forward_dynamics(models[0], q, v, tau), db.forward_dynamics(models[1], qm, vm, vm + 1.0)

        with ThreadPoolExecutor(THREADS) as pool:
            out = list(pool.map(first_calls, range(THREADS)))
        assert all(np.array_equal(o[0], out[0][0]) and np.array_equal(o[1], out[0][1]) for o in out)
        assert list(warnings.filters) == before, f"trial {trial}: the warning filters changed: {warnings.filters[:2]}"


# ----------------------------------------------------------------------------- 3. blow-ups


def _two_dampers(d_stable, d_unstable):
    """Two independent wheels on vertical axes (inertia 0.01 kg m^2 each, centre of mass on the
    axis: no gravity torque), each with a joint damper: I a = -d v exactly, a linear system."""
    eye = np.eye(3)
    return db.Model(
        name="two_dampers",
        link_names=["wheel_a", "wheel_b"],
        joint_names=["axle_a", "axle_b"],
        parent=[-1, -1],
        joint_type=[JointType.REVOLUTE] * 2,
        joint_axis=[[0, 0, 1]] * 2,
        joint_rotation=[eye, eye],
        joint_translation=[[0, 0, 0], [1, 0, 0]],
        mass=[1.0, 1.0],
        com=[[0, 0, 0]] * 2,
        inertia=[0.01 * eye] * 2,
        damping=[d_stable, d_unstable],
    )


def _rk4_factor(z):
    """RK4's amplification of dv/dt = lambda v over one step, z = lambda dt."""
    return 1 + z + z**2 / 2 + z**3 / 6 + z**4 / 24


@pytest.mark.parametrize("stepper", ["compiled", "python loop"])
def test_an_instability_deep_in_a_long_run_stops_with_the_partial_trajectory(stepper):
    """A damper too stiff for the step: lambda dt = -2.9 is outside RK4's stability interval
    (-2.785, 0), each step multiplies the velocity of axle_b by R(-2.9) = 1.187, and after about
    4,100 steps (several compiled chunks) its acceleration overflows.  The error names the time
    and axle_b (axle_a, lambda dt = -1, decays); the partial trajectory follows the linear theory
    step for step, is finite, and is what a run stopped at its last saved time computes."""
    dt, stride, t_final = 1e-3, 100, 10.0
    model = _two_dampers(10.0, 29.0)  # lambda dt = -1 and -2.9
    q0, v0 = np.zeros(2), np.ones(2)
    tau = None if stepper == "compiled" else (lambda t, q, v: np.zeros(2))
    with pytest.raises(db.SimulationError) as info:
        db.simulate(model, q0, v0, t_final, dt, tau=tau, save_every=stride, progress=False)
    err, traj = info.value, info.value.trajectory
    n = traj.n_steps  # steps done before the failing one
    assert err.joint == "axle_b" and "joint 'axle_b'" in str(err)
    assert f"t = {n * dt:.6g} s" in str(err) and err.time == pytest.approx(n * dt, abs=1e-12)
    # overflow: |a| = lambda |v| beyond 1.8e308 within the failing step, v_n = R^n
    R = _rk4_factor(-2.9)
    n_overflow = np.log(np.finfo(float).max / 2900.0) / np.log(R)
    assert n_overflow - 15 < n < n_overflow + 2, (n, n_overflow)
    assert traj.status == "failed" and len(traj) == n // stride + 1
    np.testing.assert_allclose(traj.t, np.arange(len(traj)) * stride * dt, rtol=0, atol=1e-12)
    assert np.all(np.isfinite(traj.q)) and np.all(np.isfinite(traj.v)) and np.all(np.isfinite(traj.a)), (
        "the partial trajectory must hold valid states only"
    )
    k = np.arange(len(traj)) * stride
    np.testing.assert_allclose(traj.v[:, 1], R**k, rtol=1e-9)  # the linear theory, exactly
    np.testing.assert_allclose(traj.v[:, 0], _rk4_factor(-1.0) ** k, rtol=1e-9, atol=1e-300)  # to underflow
    assert traj.v[-1, 1] > 1e290
    again = db.simulate(model, q0, v0, traj.t[-1], dt, tau=tau, save_every=stride, progress=False)
    assert again.status == "completed" and len(again) == len(traj)
    assert np.array_equal(again.q, traj.q) and np.array_equal(again.v, traj.v)


def test_both_steppers_stop_at_the_same_step():
    """The compiled stepper and the Python loop take the same steps: same failing step, joint,
    time, and the same partial trajectory to round-off (the Python loop used to take one more
    stage or step).  On chains of revolute joints the compiled stepper ends and begins stages
    in one sweep (core/stage_sweep.pxi), whose fused multiply-adds differ from the plain passes'."""
    model = _two_dampers(10.0, 29.0)
    runs = []
    for tau in (None, lambda t, q, v: np.zeros(2)):
        with pytest.raises(db.SimulationError) as info:
            db.simulate(model, np.zeros(2), np.ones(2), 10.0, 1e-3, tau=tau, save_every=7, progress=False)
        runs.append(info.value)
    (a, b) = runs
    assert (a.time, a.joint, a.trajectory.n_steps) == (b.time, b.joint, b.trajectory.n_steps)
    for name in ("q", "v", "a"):
        x, y = getattr(a.trajectory, name), getattr(b.trajectory, name)
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-300, err_msg=name)
