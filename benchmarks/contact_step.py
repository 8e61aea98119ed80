"""One 1 ms contact step of a standing legged robot, side by side with a Python loop around
Pinocchio's contact pieces and with MuJoCo's ``mj_step``, in one process (issue 37, item 6).

    python benchmarks/contact_step.py [--quick] [--steps 300] [--repeats 5] [--out benchmarks/results]

Robots: solo12 on its four feet (4 contacts), talos on its soles' eight corners (8 contacts).
Each first stands: dropped from 1 cm with ``db.posture_hold`` for 0.5 s (ours), then from that
state, with the hold's torque of that state held constant, ``--steps`` steps are timed (wall,
median of ``--repeats`` interleaved runs, per step):

* **ours**: ``simulate_contact`` (method contact-euler: the tree's forward dynamics, the active
  contacts and the Delassus operator through the DeNOC recursion, PGS, the velocity update, the
  position correction; the steps in one compiled run, ``core/contact_run.pxi``), and the same
  with ``compiled=False`` (the Python step over the compiled pieces, the run's reference);
* **Pinocchio, Python loop**: per step ``forwardKinematics``, the contact frames placed,
  ``computeDelassusMatrix``, ``aba`` for the free velocity, the contact Jacobian from
  ``computeJointJacobians``, ``ADMMConstraintSolver`` (warm-started, Coulomb cones,
  ``solve_ncp``), ``aba`` of the gravity-free model for ``M^-1 J^T lambda``, ``integrate``:
  the same contacts (active within the same margin, the same gap term), the same step without
  our position correction (the robots stand: nothing penetrates);
* **MuJoCo**: ``mj_step`` on the gymnasium humanoid (23 DOF, its own contacts and solver),
  for scale.

And dm_control's quadruped.xml (28 DOF, four joint couplings of three joints: the contact run
of a model with loops, ``core/contact_loops.pxi``) as ``denoc-bridge simulate`` runs it (its
default contact candidates from the geoms, the file's pose projected onto the couplings and
dropped from 0.3 m, the posture hold at 5 Hz, mu 0.8): the 2 s run (``--duration``'s default)
per step, compiled and with the Python step, then ``--steps`` steps standing from its end,
against ``mj_step`` on the same file at the same dt in the same process (interleaved).

Before timing, one step of both from the same state is compared: the velocities after the step
agree (the largest difference relative to the step's velocity change plus ``g dt``, in the table; the impulses of talos's eight corners are not unique,
the velocities are).  Also: 10 s of solo12 standing at 1 ms (ours, feet, with the hold).
Writes ``contact_step.json`` and ``contact_step.md`` to ``--out``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import time
import warnings
from pathlib import Path

import mujoco
import numpy as np
import pinocchio as pin
from timing import interleaved  # benchmarks/ on sys.path: the interleaved repeats the scripts share

import denoc_bridge as db
from denoc_bridge.benchmarking.report import fmt_us, machine
from denoc_bridge.constraints.contact import ContactSet, lifted
from denoc_bridge.errors import PhysicsWarning
from denoc_bridge.io.collision import collision_points
from denoc_bridge.multibody.contact import Ground, contact_point
from denoc_bridge.simulation.contact import MIN_MARGIN, simulate_contact
from denoc_bridge.spatial import skew

ROOT = Path(__file__).resolve().parents[1]
DT = 1e-3
MU = 0.9


def _robot(name: str):
    """(model, contact points, reference posture)."""
    import example_robot_data

    model = db.load_robot(name)
    q_ref = example_robot_data.load(name).q0.copy()
    if name == "solo12":
        points = [contact_point(model, f) for f in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")]
    else:
        corners = [(sx * 0.1, sy * 0.05, 0.0) for sx in (-1, 1) for sy in (-1, 1)]
        points = [contact_point(model, s, p) for s in ("left_sole_link", "right_sole_link") for p in corners]
    return model, points, q_ref


def standing(model, points, q_ref):
    """(q, v, tau): the robot standing after 0.5 s with the hold, and the hold's torque there."""
    q0 = lifted(model, q_ref, points, 0.01)
    hold = db.posture_hold(model, q_ref)
    traj = simulate_contact(model, q0, np.zeros(model.nv), 0.5, DT, Ground(mu=MU), points, hold=hold)
    q, v = traj.q[-1].copy(), traj.v[-1].copy()
    return q, v, traj.tau[-2].copy()


class PinocchioLoop:
    """The contact step as a Python loop around Pinocchio's pieces (module docstring): the same
    contact candidates, active within the same margin, the same gap term in the normal rows."""

    def __init__(self, model, points):
        self.model, self.points = model, points
        self.pm = db.to_pinocchio(model)
        self.pd = self.pm.createData()
        self.pm0 = db.to_pinocchio(model)
        self.pm0.gravity.linear[:] = 0.0
        self.pd0 = self.pm0.createData()
        self.B = Ground(mu=MU).frame()
        self.solvers: dict[int, pin.ADMMConstraintSolver] = {}
        self.settings = pin.ADMMSolverSettings()
        self.settings.absolute_feasibility_tol = self.settings.absolute_complementarity_tol = 1e-10
        self.settings.relative_feasibility_tol = self.settings.relative_complementarity_tol = 1e-10
        self.settings.max_iterations = 10_000
        self.result = pin.ADMMSolverResult()
        self.lam: dict[int, np.ndarray] = {}  # the last impulses of each point: the warm start
        self.iterations: list[int] = []

    def step(self, q, v, tau):
        pm, pd, B = self.pm, self.pd, self.B
        pin.computeJointJacobians(pm, pd, q)  # the joint placements too
        rows, gaps, active = [], [], []
        rigid, cones = pin.StdVec_RigidConstraintModel(), pin.StdVec_ConstraintModel()
        for i, c in enumerate(self.points):
            M = pd.oMi[c.link + 1]
            Rk = M.rotation
            p = c.point - c.radius * Rk.T @ B[:, 2]
            d = float(B[:, 2] @ (M.translation + Rk @ p))  # above the ground z = 0
            if d > max(c.margin, MIN_MARGIN):
                continue
            active.append(i)
            gaps.append(max(d, 0.0) / DT)
            rigid.append(
                pin.RigidConstraintModel(
                    pin.ContactType.CONTACT_3D, pm, c.link + 1, pin.SE3(Rk.T @ B, p), pin.ReferenceFrame.LOCAL
                )
            )
            cone = pin.PointContactConstraintModel(pm, c.link + 1, pin.SE3.Identity())
            cone.setFriction(MU)
            cones.append(pin.ConstraintModel(cone))
            J6 = pin.getJointJacobian(pm, pd, c.link + 1, pin.ReferenceFrame.LOCAL)
            rows.append(B.T @ Rk @ (J6[:3] - skew(p) @ J6[3:]))
        v_free = v + DT * pin.aba(pm, pd, q, v, tau)
        if not active:
            return pin.integrate(pm, q, DT * v_free), v_free
        n = 3 * len(active)
        J = np.vstack(rows)
        rigid_data = pin.StdVec_RigidConstraintData([c.createData() for c in rigid])
        G = pin.computeDelassusMatrix(pm, pm.createData(), q, rigid, rigid_data)
        g = J @ v_free
        g[2::3] += gaps
        if n not in self.solvers:
            self.solvers[n] = pin.ADMMConstraintSolver(n)
        self.settings.lanczos_size = n
        self.result.impulse_guess = np.concatenate([self.lam.get(i, np.zeros(3)) for i in active])
        cone_data = pin.StdVec_ConstraintData([c.createData() for c in cones])
        self.solvers[n].solve(pin.DelassusOperatorDense(G), g, cones, cone_data, self.settings, self.result)
        self.iterations.append(self.result.iterations)
        lam = self.result.retrieveConstraintImpulses().copy()
        self.lam = {i: lam[3 * k : 3 * k + 3] for k, i in enumerate(active)}
        v_plus = v_free + pin.aba(self.pm0, self.pd0, q, np.zeros(self.model.nv), J.T @ lam)
        return pin.integrate(pm, q, DT * v_plus), v_plus

    def run(self, q, v, tau, steps):
        for _ in range(steps):
            q, v = self.step(q, v, tau)
        return q, v


def case(name: str, steps: int, repeats: int) -> dict:
    model, points, q_ref = _robot(name)
    # the joint dampers off: ours are implicit in the step, Pinocchio's aba has none
    model = model.replace(damping=np.zeros(model.nv), stiffness=np.zeros(model.nv))
    q, v, tau = standing(model, points, q_ref)
    loop = PinocchioLoop(model, points)
    ground = Ground(mu=MU)
    one = simulate_contact(model, q, v, DT, DT, ground, points, tau)
    _, v_pin = loop.step(q, v, tau)
    free = float(np.abs(one.v[1] - v).max() + DT * 9.81)  # the scale of the step's velocity change
    agree = float(np.abs(one.v[1] - v_pin).max() / free)

    def ours():
        simulate_contact(model, q, v, steps * DT, DT, ground, points, tau)

    def ours_python():
        simulate_contact(model, q, v, steps * DT, DT, ground, points, tau, compiled=False)

    def theirs():
        loop.lam = {}
        loop.run(q.copy(), v.copy(), tau, steps)

    times = interleaved((("ours", ours), ("ours_python", ours_python), ("pinocchio", theirs)), repeats, steps)
    med = {k: statistics.median(ts) for k, ts in times.items()}
    return {
        "robot": name,
        "nv": model.nv,
        "contacts": len(points),
        "ours_us": med["ours"] * 1e6,
        "ours_python_step_us": med["ours_python"] * 1e6,
        "pinocchio_loop_us": med["pinocchio"] * 1e6,
        "ratio": med["ours"] / med["pinocchio"],
        "admm_iterations_median": float(statistics.median(loop.iterations)),
        "velocity_agreement": agree,
    }


def mujoco_humanoid(steps: int, repeats: int) -> dict:
    spec = importlib.util.find_spec("gymnasium")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("benchmarks/contact_step.py needs gymnasium (pip install '.[test]')")
    path = os.path.join(spec.submodule_search_locations[0], "envs", "mujoco", "assets", "humanoid.xml")
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    m.opt.timestep = DT
    for _ in range(1000):  # onto the ground
        mujoco.mj_step(m, d)
    ncon = int(d.ncon)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(steps):
            mujoco.mj_step(m, d)
        times.append((time.perf_counter() - t0) / steps)
    return {
        "robot": "humanoid (gymnasium, MuJoCo)",
        "nv": int(m.nv),
        "contacts": ncon,
        "mj_step_us": statistics.median(times) * 1e6,
    }


def quadruped(steps: int, repeats: int, seconds: float = 2.0) -> dict:
    """dm_control's quadruped.xml through the command line's run, against ``mj_step`` (module
    docstring)."""
    spec = importlib.util.find_spec("dm_control")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("benchmarks/contact_step.py needs dm_control (pip install '.[test]')")
    path = os.path.join(spec.submodule_search_locations[0], "suite", "quadruped.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PhysicsWarning)  # the tendons: named, not modelled
        model = db.load_mjcf(path)
    points = list(collision_points(model)[0])  # the command line's default candidates
    q_hold = db.loops.project_configuration(model, model.reference_configurations["qpos0"])
    q0 = lifted(model, q_hold, points, 0.3)
    hold = db.posture_hold(model, q_hold)
    ground = Ground(mu=0.8, name="ground")

    def run(compiled: bool, q, v, duration: float):
        return simulate_contact(model, q, v, duration, DT, ground, points, hold=hold, compiled=compiled)

    drops = {True: [], False: []}
    for _ in range(max(1, repeats // 2)):  # the whole run from the drop, as the command line's
        for compiled in (True, False):
            traj = run(compiled, q0, np.zeros(model.nv), seconds)
            drops[compiled].append(traj.wall_time / traj.n_steps)
    q, v = traj.q[-1].copy(), traj.v[-1].copy()  # standing (the Python step's run, the same states)
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    m.opt.timestep = DT
    for _ in range(round(seconds / DT)):  # onto the ground
        mujoco.mj_step(m, d)
    ncon = int(d.ncon)

    def mj() -> None:
        for _ in range(steps):
            mujoco.mj_step(m, d)

    runs = (
        ("ours", lambda: run(True, q, v, steps * DT)),
        ("ours_python", lambda: run(False, q, v, steps * DT)),
        ("mj_step", mj),
    )
    times = interleaved(runs, repeats, steps)
    med = {k: statistics.median(ts) * 1e6 for k, ts in times.items()}
    return {
        "robot": "quadruped (dm_control)",
        "nv": model.nv,
        "couplings": len(model.loops),
        "candidates": len(points),
        "active_contacts": active_contacts(model, points, ground, q),
        "mujoco_contacts": ncon,
        "run_us": statistics.median(drops[True]) * 1e6,
        "run_python_step_us": statistics.median(drops[False]) * 1e6,
        "standing_us": med["ours"],
        "standing_python_step_us": med["ours_python"],
        "mj_step_us": med["mj_step"],
        "run_ratio": statistics.median(drops[True]) * 1e6 / med["mj_step"],
        "standing_ratio": med["ours"] / med["mj_step"],
    }


def active_contacts(model, points, ground, q) -> int:
    """The contacts active at q in the stepper (its margins)."""
    cs = ContactSet(model, points, ground)
    cs.raise_margins(MIN_MARGIN)
    return cs.active(np.ascontiguousarray(q))


def ten_seconds_of_solo12() -> dict:
    model, points, q_ref = _robot("solo12")
    q0 = lifted(model, q_ref, points, 0.01)
    hold = db.posture_hold(model, q_ref)
    walls = {}
    for compiled in (True, False):
        t0 = time.perf_counter()
        traj = simulate_contact(
            model, q0, np.zeros(model.nv), 10.0, DT, Ground(mu=MU), points, hold=hold, compiled=compiled
        )
        walls[compiled] = time.perf_counter() - t0
        if compiled:
            z = traj.q[traj.t > 1.0, 2]
    return {
        "wall_s": walls[True],
        "python_step_wall_s": walls[False],
        "steps": traj.n_steps,
        "base_height_range_m": float(z.max() - z.min()),
    }


def markdown(res: dict) -> str:
    lines = [
        f"Machine: {res['machine']['cpu']}, {res['machine']['cores']} cores; {res['steps']} steps of 1 ms, "
        f"median of {res['repeats']} interleaved runs, wall time per step.",
        "",
        "| robot | DOF | contacts | ours (contact-euler) | ours, Python step | Pinocchio, Python loop (ADMM) | ours / Pinocchio | ADMM iterations (median) | v+ difference |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in res["rows"]:
        lines.append(
            f"| {r['robot']} | {r['nv']} | {r['contacts']} | {fmt_us(r['ours_us'])} | {fmt_us(r['ours_python_step_us'])} | "
            f"{fmt_us(r['pinocchio_loop_us'])} | "
            f"{r['ratio']:.3f}x | {r['admm_iterations_median']:.0f} | {r['velocity_agreement']:.1e} |"
        )
    mj, qd = res["mujoco"], res["quadruped"]
    lines += [
        "",
        f"MuJoCo `mj_step`, {mj['robot']}: {mj['nv']} DOF, {mj['contacts']} contacts: {fmt_us(mj['mj_step_us'])} per step.",
        "",
        "| robot | DOF | couplings | candidates (active standing) | ours, the 2 s run | ours, Python step | ours standing | "
        "ours standing, Python step | `mj_step`, same file | run / `mj_step` | standing / `mj_step` |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        f"| {qd['robot']} | {qd['nv']} | {qd['couplings']} | {qd['candidates']} ({qd['active_contacts']}) | "
        f"{fmt_us(qd['run_us'])} | "
        f"{fmt_us(qd['run_python_step_us'])} | {fmt_us(qd['standing_us'])} | "
        f"{fmt_us(qd['standing_python_step_us'])} | {fmt_us(qd['mj_step_us'])} | {qd['run_ratio']:.2f}x | "
        f"{qd['standing_ratio']:.2f}x |",
        "",
        f"10 s of solo12 standing at 1 ms (feet, posture hold): {res['solo12_10s']['wall_s']:.2f} s wall "
        f"({res['solo12_10s']['python_step_wall_s']:.2f} s with the Python step); base height "
        f"range after 1 s {res['solo12_10s']['base_height_range_m']:.1e} m.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 20 steps, 1 repeat")
    args = parser.parse_args(argv)
    steps, repeats = (20, 1) if args.quick else (args.steps, args.repeats)
    res = {
        "machine": machine(),
        "steps": steps,
        "repeats": repeats,
        "rows": [case(name, steps, repeats) for name in ("solo12", "talos")],
        "mujoco": mujoco_humanoid(steps, repeats),
        "quadruped": quadruped(steps, repeats, 0.1 if args.quick else 2.0),
        "solo12_10s": ten_seconds_of_solo12()
        if not args.quick
        else {
            "wall_s": float("nan"),
            "python_step_wall_s": float("nan"),
            "steps": 0,
            "base_height_range_m": float("nan"),
        },
    }
    text = markdown(res)
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "contact_step.json").write_text(json.dumps(res, indent=1))
    (out / "contact_step.md").write_text(text)
    return res


if __name__ == "__main__":
    main()
