"""The measurements: single calls, scaling, memory, batches, start-up, and correctness beyond
Pinocchio's reach (timings are medians of interleaved repeats, in this process)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc

import numpy as np

import denoc_bridge as db
from denoc_bridge.benchmarking.engines import has_mujoco, mujoco_chain, mujoco_forward, pinocchio_chain
from denoc_bridge.io.robots import load_robot, serial_chain
from denoc_bridge.validation import exact_solve


def _per_call(fn, calls: int) -> float:
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


#: the most calls of one function in one repeat of :func:`interleaved`, whatever the clock says
#: (a clock that returns the same time twice once asked for min_time / 1e-9 calls: hours)
MAX_CALLS = 100_000


def calls_for(min_time: float, seconds_per_call: float) -> int:
    """Calls of a function that take about ``min_time`` at ``seconds_per_call``: between 1 and
    :data:`MAX_CALLS` (0, negative or NaN measured time: the most; a huge one: 1)."""
    if not seconds_per_call > 0:
        return MAX_CALLS
    return max(1, int(min(min_time / seconds_per_call, MAX_CALLS)))


def interleaved(fns: dict, repeats: int, min_time: float) -> dict:
    """Median seconds per call of each function; the functions take turns in every repeat so
    that drifts of the machine hit all of them alike."""
    calls = {}
    for name, fn in fns.items():
        fn()  # warm up (compiles on a cold cache)
        calls[name] = calls_for(min_time, _per_call(fn, 1))
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            times[name].append(_per_call(fn, calls[name]))
    return {name: statistics.median(ts) for name, ts in times.items()}


def _state(model, seed: int = 0):
    rng = np.random.default_rng(seed)
    return db.random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv)


def relative_difference(a, b) -> float:
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / max(np.abs(np.asarray(b)).max(), 1e-300))


def single_calls(repeats: int, min_time: float) -> list:
    import pinocchio as pin

    cases = []
    panda = load_robot("panda")
    cases.append(("panda (9 DOF)", panda, db.to_pinocchio(panda)))
    pm100 = pinocchio_chain(100)
    cases.append(("100-DOF chain", db.from_pinocchio(pm100), pm100))
    rows = []
    for label, model, pm in cases:
        pd = pm.createData()
        q, v, tau = _state(model)
        a_ours, a_pin = db.forward_dynamics(model, q, v, tau), pin.aba(pm, pd, q, v, tau)
        t_ours, t_pin = db.inverse_dynamics(model, q, v, tau), pin.rnea(pm, pd, q, v, tau)
        t = interleaved(
            {
                "fd": lambda: db.forward_dynamics(model, q, v, tau),
                "aba": lambda: pin.aba(pm, pd, q, v, tau),
                "id": lambda: db.inverse_dynamics(model, q, v, tau),
                "rnea": lambda: pin.rnea(pm, pd, q, v, tau),
                "crba_ours": lambda: db.mass_matrix(model, q),
                "crba": lambda: pin.crba(pm, pd, q),
            },
            repeats,
            min_time,
        )
        for ours, theirs, name, pin_name, err in (
            ("fd", "aba", "forward_dynamics", "pin.aba", relative_difference(a_ours, a_pin)),
            ("id", "rnea", "inverse_dynamics", "pin.rnea", relative_difference(t_ours, t_pin)),
            ("crba_ours", "crba", "mass_matrix", "pin.crba", None),
        ):
            rows.append(
                dict(
                    case=label,
                    nv=model.nv,
                    algorithm=name,
                    reference=pin_name,
                    denoc_us=t[ours] * 1e6,
                    reference_us=t[theirs] * 1e6,
                    ratio=t[ours] / t[theirs],
                    max_rel_diff=err,
                )
            )
    return rows


def scaling(sizes, repeats: int, min_time: float, pin_max: int, mujoco_budget: float, log=print) -> list:
    import pinocchio as pin

    rows = []
    mujoco_on = has_mujoco()
    for n in sizes:
        model = serial_chain(n)
        q, v, tau = _state(model, seed=n)
        a = db.forward_dynamics(model, q, v, tau)
        fns = {"fd": lambda: db.forward_dynamics(model, q, v, tau), "id": lambda: db.inverse_dynamics(model, q, v, tau)}
        row = dict(nv=n)
        if n <= pin_max:
            pm = db.to_pinocchio(model)
            pd = pm.createData()
            row["aba_rel_diff"] = relative_difference(a, pin.aba(pm, pd, q, v, tau))
            fns["aba"] = lambda: pin.aba(pm, pd, q, v, tau)
            fns["rnea"] = lambda: pin.rnea(pm, pd, q, v, tau)
        if mujoco_on:
            import mujoco

            try:
                mm, md = mujoco_chain(n)
            except ValueError as exc:  # MuJoCo limits the depth of the body tree
                row["mujoco_error"] = str(exc).splitlines()[0]
                mujoco_on = False
            else:
                row["mujoco_rel_diff"] = relative_difference(a, mujoco_forward(mm, md, q, v, tau))
                fns["mj_forward"] = lambda: mujoco.mj_forward(mm, md)
        t = interleaved(fns, repeats, min_time)
        for key, value in t.items():
            row[f"{key}_us"] = value * 1e6
        row["fd_ns_per_dof"] = t["fd"] / n * 1e9
        row["id_ns_per_dof"] = t["id"] / n * 1e9
        rows.append(row)
        if mujoco_on and t["mj_forward"] > mujoco_budget:
            mujoco_on = False  # MuJoCo grows faster than n: stop here
        log(
            f"  n = {n:>6}: fd {t['fd'] * 1e6:11.1f} us ({row['fd_ns_per_dof']:6.1f} ns/DOF)   "
            f"id {t['id'] * 1e6:11.1f} us"
            + (f"   pin.aba {t['aba'] * 1e6:9.1f} us" if "aba" in t else "")
            + (f"   mj_forward {t['mj_forward'] * 1e6:11.1f} us" if "mj_forward" in t else "")
            + (f"   MuJoCo: {row['mujoco_error']}" if "mujoco_error" in row else "")
        )
    return rows


def memory(n: int) -> dict:
    """Bytes per DOF that building the model and running forward and inverse dynamics keep
    allocated (model, its tables, the work array; kernels compiled beforehand)."""
    warm = serial_chain(10)
    q, v, tau = _state(warm)
    db.forward_dynamics(warm, q, v, tau), db.inverse_dynamics(warm, q, v, tau)
    tracemalloc.start()
    model = serial_chain(n)
    built, build_peak = tracemalloc.get_traced_memory()
    q, v, tau = np.zeros(n), np.zeros(n), np.zeros(n)
    tracemalloc.reset_peak()
    db.forward_dynamics(model, q, v, tau)
    db.inverse_dynamics(model, q, v, tau)
    kept, call_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    arrays = sum(a.nbytes for a in vars(model).values() if isinstance(a, np.ndarray))
    work = model.thread_work().nbytes
    return dict(
        nv=n,
        kept_bytes_per_dof=kept / n,
        build_peak_bytes_per_dof=build_peak / n,
        call_peak_bytes_per_dof=call_peak / n,
        model_arrays_bytes_per_dof=arrays / n,
        work_bytes_per_dof=work / n,
        state_vectors_bytes_per_dof=4 * 8,
    )


def batches(B: int, repeats: int, min_time: float) -> dict:
    import pinocchio as pin

    model = load_robot("panda")
    pm = db.to_pinocchio(model)
    pool = pin.ModelPool(pm, 2)
    rng = np.random.default_rng(1)
    Q = np.array([db.random_configuration(model, rng) for _ in range(B)])
    V, TAU = rng.standard_normal((B, model.nv)), rng.standard_normal((B, model.nv))
    diff_fd = relative_difference(db.forward_dynamics(model, Q, V, TAU), pin.abaInParallel(2, pool, Q.T, V.T, TAU.T).T)
    diff_id = relative_difference(db.inverse_dynamics(model, Q, V, TAU), pin.rneaInParallel(2, pool, Q.T, V.T, TAU.T).T)
    threads = db.get_num_threads()

    def timed(n: int) -> dict:
        """Both engines on ``n`` threads each (the batch threads and Pinocchio's pool)."""
        db.set_num_threads(n)
        try:
            return interleaved(
                {
                    "fd": lambda: db.forward_dynamics(model, Q, V, TAU),
                    "aba": lambda: pin.abaInParallel(n, pool, Q.T, V.T, TAU.T),
                    "id": lambda: db.inverse_dynamics(model, Q, V, TAU),
                    "rnea": lambda: pin.rneaInParallel(n, pool, Q.T, V.T, TAU.T),
                },
                repeats,
                min_time,
            )
        finally:
            db.set_num_threads(threads)

    # one thread first: its figures do not depend on the other processes of a busy machine, which
    # make every parallel region wait for a time slice of each core (milliseconds on 2 cores)
    load = os.getloadavg()[0]
    one, t = timed(1), timed(min(threads, 2))
    return dict(
        B=B,
        threads=min(threads, 2),
        load=load,
        fd_ms=t["fd"] * 1e3,
        aba_ms=t["aba"] * 1e3,
        id_ms=t["id"] * 1e3,
        rnea_ms=t["rnea"] * 1e3,
        fd_ratio=t["fd"] / t["aba"],
        id_ratio=t["id"] / t["rnea"],
        fd_1thread_ms=one["fd"] * 1e3,
        aba_1thread_ms=one["aba"] * 1e3,
        id_1thread_ms=one["id"] * 1e3,
        rnea_1thread_ms=one["rnea"] * 1e3,
        fd_rel_diff=diff_fd,
        id_rel_diff=diff_id,
    )


_STARTUP = r"""
import json, sys, time
t0 = time.time()
import numpy as np
import denoc_bridge as db
from denoc_bridge.io.robots import load_robot
t1 = time.time()
model = load_robot("panda")
q, v, tau = np.zeros(model.nq), np.zeros(model.nv), np.ones(model.nv)
t2 = time.time()
db.forward_dynamics(model, q, v, tau)
t3 = time.time()
db.inverse_dynamics(model, q, v, tau)
t4 = time.time()
print(json.dumps(dict(spawned=float(sys.argv[1]), started=t0, imported=t1, loaded=t2, first_fd=t3, first_id=t4)))
"""


def startup() -> dict:
    """Two fresh processes one after the other; the second finds the kernels in the disk cache."""
    runs = []
    for _ in range(2):
        spawned = time.time()
        out = subprocess.run(
            [sys.executable, "-c", _STARTUP, repr(spawned)], capture_output=True, text=True, check=True
        )
        done = time.time()
        r = json.loads(out.stdout.strip().splitlines()[-1])
        runs.append(
            dict(
                process_s=done - spawned,
                import_s=r["imported"] - r["started"],
                load_panda_s=r["loaded"] - r["imported"],
                first_fd_call_s=r["first_fd"] - r["loaded"],
                first_id_call_s=r["first_id"] - r["first_fd"],
                spawn_to_first_result_s=r["first_fd"] - r["spawned"],
            )
        )
    return dict(first_process=runs[0], second_process=runs[1])


def dense_check(n: int) -> dict:
    """forward_dynamics against the dense solve of I(q) a = tau - C v - g with I from mass_matrix."""
    model = serial_chain(n)
    q, v, tau = _state(model, seed=7)
    a = db.forward_dynamics(model, q, v, tau)
    I = db.mass_matrix(model, q)
    phi = tau - db.nonlinear_effects(model, q, v)
    a_dense = np.linalg.solve(I, phi)
    a_refined = exact_solve(I, phi)
    return dict(
        nv=n,
        cond=float(np.linalg.cond(I)),
        rel_diff_dense=relative_difference(a, a_dense),
        rel_diff_refined=relative_difference(a, a_refined),
        residual_recursive=float(np.linalg.norm(I @ a - phi) / np.linalg.norm(phi)),
        residual_dense=float(np.linalg.norm(I @ a_dense - phi) / np.linalg.norm(phi)),
    )


def _energy(model, q, v) -> tuple:
    return db.kinetic_energy(model, q, v), db.potential_energy(model, q)


def _rk4(model, q, v, dt, steps, tau):
    def f(q, v):
        return v, db.forward_dynamics(model, q, v, tau)

    kin, pot = [], []
    for _ in range(steps):
        k1q, k1v = f(q, v)
        k2q, k2v = f(q + 0.5 * dt * k1q, v + 0.5 * dt * k1v)
        k3q, k3v = f(q + 0.5 * dt * k2q, v + 0.5 * dt * k2v)
        k4q, k4v = f(q + dt * k3q, v + dt * k3v)
        q = q + dt / 6 * (k1q + 2 * k2q + 2 * k3q + k4q)
        v = v + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
        T, V = _energy(model, q, v)
        kin.append(T)
        pot.append(V)
    return np.array(kin), np.array(pot)


def energy_check(n: int, t_final: float, steps: int, log=print) -> dict:
    """Free fall of the n-DOF chain from rest (random joint angles in +-0.5 rad), no torque:
    the total energy T + V is constant, so its drift is the integrator's error alone.  RK4 at
    three step sizes: the drift must fall ~16x per halving (fourth order), which it can only
    do if forward_dynamics is the exact derivative of this Hamiltonian system."""
    model = serial_chain(n)
    rng = np.random.default_rng(11)
    q0, v0 = rng.uniform(-0.5, 0.5, n), np.zeros(n)
    T0, V0 = _energy(model, q0, v0)
    out = dict(nv=n, t_final=t_final, initial_potential=V0, runs=[])
    for m in (steps, 2 * steps, 4 * steps):
        t = time.perf_counter()
        kin, pot = _rk4(model, q0, v0, t_final / m, m, np.zeros(n))
        wall = time.perf_counter() - t
        drift = np.abs(kin + pot - (T0 + V0))
        out["runs"].append(
            dict(
                steps=m,
                dt=t_final / m,
                wall_s=wall,
                fd_calls=4 * m,
                final_kinetic=float(kin[-1]),
                potential_drop=float(V0 - pot[-1]),
                max_abs_drift=float(drift.max()),
                max_drift_over_kinetic=float(drift.max() / kin.max()),
            )
        )
        log(f"  RK4 {m} steps of {t_final / m:.1e} s: |dE| / T_max = {drift.max() / kin.max():.2e} ({wall:.1f} s)")
    d = [r["max_abs_drift"] for r in out["runs"]]
    out["drift_ratios"] = [d[0] / d[1], d[1] / d[2]]
    return out
