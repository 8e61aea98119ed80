"""The speed benchmark of denoc_bridge next to Pinocchio and MuJoCo (the README's Speed table).

``run(quick)`` measures, in this process unless stated (all timings: medians of
interleaved repeats, each repeat a batch of calls from Python through the public API):

1. single calls: ``forward_dynamics`` / ``pin.aba``, ``inverse_dynamics`` / ``pin.rnea`` and
   ``mass_matrix`` / ``pin.crba`` on panda (example-robot-data) and on the 100-DOF benchmark
   chain built as a ``pinocchio.Model`` and passed through ``from_pinocchio``;
2. scaling on the benchmark chain (:func:`denoc_bridge.io.robots.serial_chain`) from 10 to
   100,000 DOF: denoc_bridge forward and inverse dynamics, ``pin.aba`` up to ``pin_max``
   links (its ``createData`` needs ~64 n^3 bytes), MuJoCo ``mj_forward`` (if installed) while
   a call takes less than ``mujoco_budget`` seconds; the engines' accelerations are compared
   first;
3. memory of the model and its work arrays at 100,000 DOF (tracemalloc);
4. batches of 4096 panda states against ``pin.abaInParallel`` / ``pin.rneaInParallel``
   with 2 threads;
5. start-up: the first call of a second Python process (kernels from the disk cache);
6. correctness beyond Pinocchio: 1,000-DOF forward dynamics against ``mass_matrix`` plus a
   dense solve, and energy conservation of a 100,000-DOF chain in free fall (RK4, three
   step sizes).

``quick=True`` runs small sizes only (a smoke test of about 10 s, not a measurement).
:func:`targets` and :func:`markdown` turn the results into the README's tables,
:func:`denoc_bridge.viz.plots.plot_scaling` into the scaling plot.  ``benchmarks/speed.py``
(in a source checkout) adds the operation counts and writes the files;
``denoc-bridge bench`` prints the tables.

The benchmark chain: n revolute joints alternating about the x and y axes, 0.1 m apart
along z, each link 1 kg at (0, 0, 0.05) with the diagonal inertia (1e-3, 1e-3, 5e-4)
about its centre of mass; :func:`pinocchio_chain` and :func:`mujoco_chain` build the same
chain with Pinocchio's and MuJoCo's own APIs.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
import tracemalloc

import numpy as np

import denoc_bridge as db
from denoc_bridge.errors import DenocError
from denoc_bridge.io.robots import example_robot_names, load_robot, serial_chain
from denoc_bridge.validation import exact_solve

__all__ = [
    "LENGTH",
    "MASS",
    "INERTIA",
    "run",
    "targets",
    "markdown",
    "notes",
    "interleaved",
    "machine",
    "pinocchio_chain",
    "mujoco_chain",
    "mujoco_forward",
    "single_calls",
    "scaling",
    "memory",
    "batches",
    "startup",
    "dense_check",
    "energy_check",
]

# ------------------------------------------------------------------ the chain in the three engines

LENGTH, MASS, INERTIA = 0.1, 1.0, (1e-3, 1e-3, 5e-4)


def pinocchio_chain(n: int):
    """The chain built with Pinocchio's own API (as a Pinocchio user would)."""
    import pinocchio as pin

    pm = pin.Model()
    parent = 0
    for k in range(n):
        jm = pin.JointModelRX() if k % 2 == 0 else pin.JointModelRY()
        placement = pin.SE3(np.eye(3), np.array([0.0, 0.0, LENGTH if k else 0.0]))
        parent = pm.addJoint(parent, jm, placement, f"joint{k:0{len(str(n - 1))}d}")
        pm.appendBodyToJoint(
            parent, pin.Inertia(MASS, np.array([0.0, 0.0, LENGTH / 2]), np.diag(INERTIA)), pin.SE3.Identity()
        )
    return pm


def mujoco_chain(n: int):
    """(MjModel, MjData) of the chain built with ``mujoco.MjSpec`` (MJCF text cannot nest
    thousands of bodies).  No geoms, so no contacts; gravity (0, 0, -9.81)."""
    import mujoco

    spec = mujoco.MjSpec()
    spec.option.gravity = [0.0, 0.0, -9.81]
    body = spec.worldbody
    for k in range(n):
        body = body.add_body(name=f"link{k}", pos=[0.0, 0.0, LENGTH if k else 0.0])
        body.mass = MASS
        body.ipos = [0.0, 0.0, LENGTH / 2]
        body.inertia = list(INERTIA)
        body.explicitinertial = True
        body.add_joint(
            name=f"joint{k}", type=mujoco.mjtJoint.mjJNT_HINGE, axis=[1.0, 0.0, 0.0] if k % 2 == 0 else [0.0, 1.0, 0.0]
        )
    model = spec.compile()
    return model, mujoco.MjData(model)


def mujoco_forward(model, data, q, v, tau) -> np.ndarray:
    """MuJoCo's joint accelerations for (q, v, tau) (``mj_forward``, ``qfrc_applied = tau``)."""
    import mujoco

    data.qpos[:] = q
    data.qvel[:] = v
    data.qfrc_applied[:] = tau
    mujoco.mj_forward(model, data)
    return data.qacc.copy()


# ------------------------------------------------------------------ timing


def _per_call(fn, calls: int) -> float:
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def interleaved(fns: dict, repeats: int, min_time: float) -> dict:
    """Median seconds per call of each function; the functions take turns in every repeat so
    that drifts of the machine hit all of them alike."""
    calls = {}
    for name, fn in fns.items():
        fn()  # warm up (compiles on a cold cache)
        t = _per_call(fn, 1)
        calls[name] = max(1, int(min_time / max(t, 1e-9)))
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            times[name].append(_per_call(fn, calls[name]))
    return {name: statistics.median(ts) for name, ts in times.items()}


def _state(model, seed: int = 0):
    rng = np.random.default_rng(seed)
    return db.random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv)


def _rel(a, b) -> float:
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / max(np.abs(np.asarray(b)).max(), 1e-300))


# ------------------------------------------------------------------ 1. single calls


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
            ("fd", "aba", "forward_dynamics", "pin.aba", _rel(a_ours, a_pin)),
            ("id", "rnea", "inverse_dynamics", "pin.rnea", _rel(t_ours, t_pin)),
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


# ------------------------------------------------------------------ 2. scaling


def scaling(sizes, repeats: int, min_time: float, pin_max: int, mujoco_budget: float, log=print) -> list:
    import pinocchio as pin

    rows = []
    mujoco_on = _has_mujoco()
    for n in sizes:
        model = serial_chain(n)
        q, v, tau = _state(model, seed=n)
        a = db.forward_dynamics(model, q, v, tau)
        fns = {"fd": lambda: db.forward_dynamics(model, q, v, tau), "id": lambda: db.inverse_dynamics(model, q, v, tau)}
        row = dict(nv=n)
        if n <= pin_max:
            pm = db.to_pinocchio(model)
            pd = pm.createData()
            row["aba_rel_diff"] = _rel(a, pin.aba(pm, pd, q, v, tau))
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
                row["mujoco_rel_diff"] = _rel(a, mujoco_forward(mm, md, q, v, tau))
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


# ------------------------------------------------------------------ 3. memory


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


# ------------------------------------------------------------------ 4. batches


def batches(B: int, repeats: int, min_time: float) -> dict:
    import numba
    import pinocchio as pin

    model = load_robot("panda")
    pm = db.to_pinocchio(model)
    pool = pin.ModelPool(pm, 2)
    rng = np.random.default_rng(1)
    Q = np.array([db.random_configuration(model, rng) for _ in range(B)])
    V, TAU = rng.standard_normal((B, model.nv)), rng.standard_normal((B, model.nv))
    diff_fd = _rel(db.forward_dynamics(model, Q, V, TAU), pin.abaInParallel(2, pool, Q.T, V.T, TAU.T).T)
    diff_id = _rel(db.inverse_dynamics(model, Q, V, TAU), pin.rneaInParallel(2, pool, Q.T, V.T, TAU.T).T)
    t = interleaved(
        {
            "fd": lambda: db.forward_dynamics(model, Q, V, TAU),
            "aba": lambda: pin.abaInParallel(2, pool, Q.T, V.T, TAU.T),
            "id": lambda: db.inverse_dynamics(model, Q, V, TAU),
            "rnea": lambda: pin.rneaInParallel(2, pool, Q.T, V.T, TAU.T),
        },
        repeats,
        min_time,
    )
    return dict(
        B=B,
        threads=numba.get_num_threads(),
        fd_ms=t["fd"] * 1e3,
        aba_ms=t["aba"] * 1e3,
        id_ms=t["id"] * 1e3,
        rnea_ms=t["rnea"] * 1e3,
        fd_ratio=t["fd"] / t["aba"],
        id_ratio=t["id"] / t["rnea"],
        fd_rel_diff=diff_fd,
        id_rel_diff=diff_id,
    )


# ------------------------------------------------------------------ 5. start-up

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


# ------------------------------------------------------------------ 6. correctness beyond Pinocchio


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
        rel_diff_dense=_rel(a, a_dense),
        rel_diff_refined=_rel(a, a_refined),
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


# ------------------------------------------------------------------ report


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    import numba
    import pinocchio as pin

    try:
        import mujoco

        mj = mujoco.__version__
    except ImportError:
        mj = None
    memory_gb = None
    try:
        with open("/proc/meminfo") as f:
            memory_gb = round(int(next(line.split()[1] for line in f if line.startswith("MemTotal"))) / 2**20)
    except (OSError, StopIteration, ValueError):
        pass
    return dict(
        cpu=cpu,
        cores=os.cpu_count(),
        memory_gb=memory_gb,
        python=platform.python_version(),
        numpy=np.__version__,
        numba=numba.__version__,
        pinocchio=pin.__version__,
        mujoco=mj,
        denoc_bridge=db.__version__,
        date=time.strftime("%Y-%m-%d"),
    )


def _fmt_us(us: float) -> str:
    if us >= 1e5:
        return f"{us / 1e3:.0f} ms"
    if us >= 1e3:
        return f"{us / 1e3:.2f} ms"
    return f"{us:.2f} us" if us < 100 else f"{us:.1f} us"


def targets(res: dict) -> list:
    """(case, target, measured, met) rows of the issue's table."""
    rows = []
    single = {(r["case"], r["algorithm"]): r for r in res["single"]}
    for case, alg, ref, limit in (
        ("panda (9 DOF)", "forward_dynamics", "pin.aba", 1.0),
        ("panda (9 DOF)", "inverse_dynamics", "pin.rnea", 1.0),
        ("100-DOF chain", "forward_dynamics", "pin.aba", 0.5),
    ):
        r = single[(case, alg)]
        rows.append(
            (
                f"`{alg}` on {case}",
                f"<= {limit} x `{ref}`",
                f"{_fmt_us(r['denoc_us'])} vs {_fmt_us(r['reference_us'])} = {r['ratio']:.2f} x",
                r["ratio"] <= limit,
            )
        )
    per = {r["nv"]: r for r in res["scaling"]}
    for n in (1000, 10000, 100000):
        if n in per:
            ns = per[n]["fd_ns_per_dof"]
            rows.append(
                (f"`forward_dynamics`, {n:,}-DOF chain", "<= 100 ns per DOF", f"{ns:.1f} ns per DOF", ns <= 100)
            )
    if 1000 in per and 100000 in per:
        ratio = per[100000]["fd_us"] / per[1000]["fd_us"]
        rows.append(("time(100k) / time(1k)", "80 - 120 (linear)", f"{ratio:.0f}", 80 <= ratio <= 120))
    if res.get("memory"):
        m = res["memory"]
        rows.append(
            (
                f"memory at {m['nv']:,} DOF (model + work arrays)",
                "<= 2 KB per DOF",
                f"{m['kept_bytes_per_dof']:.0f} B per DOF",
                m["kept_bytes_per_dof"] <= 2048,
            )
        )
    if res.get("batch"):
        b = res["batch"]
        rows.append(
            (
                f"batch of {b['B']} panda states, `forward_dynamics`",
                "throughput >= `pin.abaInParallel` (2 threads)",
                f"{b['fd_ms']:.2f} ms vs {b['aba_ms']:.2f} ms = {b['fd_ratio']:.2f} x",
                b["fd_ratio"] <= 1.0,
            )
        )
        rows.append(
            (
                f"batch of {b['B']} panda states, `inverse_dynamics`",
                "throughput >= `pin.rneaInParallel` (2 threads)",
                f"{b['id_ms']:.2f} ms vs {b['rnea_ms']:.2f} ms = {b['id_ratio']:.2f} x",
                b["id_ratio"] <= 1.0,
            )
        )
    if res.get("startup"):
        s = res["startup"]["second_process"]
        rows.append(
            (
                "start-up: second process, spawn to first result",
                "< 2 s",
                f"{s['spawn_to_first_result_s']:.2f} s (import {s['import_s']:.2f} s, first call "
                f"{s['first_fd_call_s'] * 1e3:.0f} ms)",
                s["spawn_to_first_result_s"] < 2.0,
            )
        )
    return rows


def markdown(res: dict) -> str:
    m = res["machine"]
    lines = [
        f"Machine: {m['cpu']}, {m['cores']} cores, {m.get('memory_gb')} GB; Python {m['python']}, "
        f"NumPy {m['numpy']}, numba "
        f"{m['numba']}, Pinocchio {m['pinocchio']}, MuJoCo {m['mujoco']}; {m['date']}.",
        "",
        "| case | target | measured | met |",
        "|---|---|---|---|",
    ]
    for case, target, measured, met in targets(res):
        lines.append(f"| {case} | {target} | {measured} | {'yes' if met else '**no**'} |")
    lines += [
        "",
        "| DOF | denoc FD | denoc ID | FD ns/DOF | `pin.aba` | `pin.rnea` | MuJoCo `mj_forward` |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in res["scaling"]:
        lines.append(
            f"| {r['nv']:,} | {_fmt_us(r['fd_us'])} | {_fmt_us(r['id_us'])} | {r['fd_ns_per_dof']:.1f} | "
            + (_fmt_us(r["aba_us"]) if "aba_us" in r else "--")
            + " | "
            + (_fmt_us(r["rnea_us"]) if "rnea_us" in r else "--")
            + " | "
            + (_fmt_us(r["mj_forward_us"]) if "mj_forward_us" in r else "--")
            + " |"
        )
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ the whole run


def _has_mujoco() -> bool:
    try:
        import mujoco  # noqa: F401
    except ImportError:
        return False
    return True


def run(
    quick: bool = False, *, repeats: int | None = None, pin_max: int = 300, mujoco_budget: float = 0.05, log=print
) -> dict:
    """Sections 1-6 of the module docstring; returns the results (JSON-serialisable).
    ``log`` receives one line per step (default ``print``)."""
    if "panda" not in example_robot_names():
        raise DenocError(
            "the benchmark times panda, which comes with example-robot-data: "
            "pip install 'denoc-bridge[bench]' (or '[robots]')"
        )
    repeats = repeats or (3 if quick else 9)
    if repeats < 1:
        raise DenocError(f"repeats must be at least 1, got {repeats}")
    min_time = 0.005 if quick else 0.05
    sizes = [10, 100, 1000] if quick else [10, 30, 100, 300, 1000, 3000, 10000, 30000, 100000]
    big = 1000 if quick else 100000
    res = dict(machine=machine(), quick=quick)
    if not _has_mujoco():
        log("(MuJoCo is not installed: its column stays empty; pip install mujoco)")
    log("1. single calls")
    res["single"] = single_calls(repeats, min_time)
    for r in res["single"]:
        log(
            f"  {r['case']:<14} {r['algorithm']:<17} {r['denoc_us']:9.2f} us   {r['reference']:<9}"
            f" {r['reference_us']:9.2f} us   ratio {r['ratio']:.2f}"
        )
    log("2. scaling")
    res["scaling"] = scaling(sizes, repeats, min_time, min(pin_max, 100) if quick else pin_max, mujoco_budget, log=log)
    log("3. memory")
    res["memory"] = memory(big)
    log("4. batches")
    res["batch"] = batches(256 if quick else 4096, repeats, min_time)
    log("5. start-up")
    res["startup"] = startup()
    log("6. correctness beyond Pinocchio")
    res["dense"] = dense_check(100 if quick else 1000)
    res["energy"] = energy_check(big, 0.2, 25, log=log)
    return res


def notes(res: dict) -> list:
    """The lines printed after the tables: the dense check and the energy check."""
    d, e = res["dense"], res["energy"]
    return [
        f"{d['nv']}-DOF forward_dynamics vs mass_matrix + dense solve: max rel diff {d['rel_diff_dense']:.1e} "
        f"(cond(I) = {d['cond']:.1e}); residual |I a - phi| / |phi|: recursive {d['residual_recursive']:.1e}, "
        f"dense {d['residual_dense']:.1e}",
        f"{e['nv']}-DOF free fall for {e['t_final']} s, RK4: max |E - E0| / T_max = "
        + ", ".join(f"{r['max_drift_over_kinetic']:.1e} (dt = {r['dt']:.0e} s)" for r in e["runs"])
        + f"; ratios {e['drift_ratios'][0]:.1f}, {e['drift_ratios'][1]:.1f} (fourth order: 16)",
    ]
