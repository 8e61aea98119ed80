"""Forward dynamics and the GIM of MJCF robots, side by side with MuJoCo's own calls.

    python benchmarks/mujoco_speed.py [--quick] [--repeats 15] [--out benchmarks/results]

Both libraries get the same compiled ``mujoco.MjModel``: ours through
``denoc_bridge.io.mjcf.from_mujoco`` (MuJoCo's masses, inertias and armature), MuJoCo's as it
is.  Robots: the gymnasium humanoid (23 DOF, free base), dm_control's CMU humanoid (62 DOF,
free base) and serial chains of 100 and 1,000 hinges (``mujoco.MjSpec``, as
``benchmarks/speed.py`` builds them).  Per robot, at one random state, microseconds per call
from Python (median of ``--repeats`` interleaved batches, each at least 20 ms):

* forward dynamics: ``db.forward_dynamics(model, q, v, tau)`` against ``mj_forward`` with
  contacts, constraints, passive forces, actuation and sensors disabled (what a user calls),
  and against the smallest sequence of MuJoCo calls that gives ``qacc`` (``mj_kinematics``,
  ``mj_comPos``, ``mj_crb``, ``mj_factorM``, ``mj_rne``, ``mj_solveM``: six calls from Python);
* the GIM: ``db.mass_matrix(model, q)`` against ``mj_kinematics``, ``mj_comPos``, ``mj_crb``
  and ``mj_fullM`` (the dense matrix).

The results are checked before they are timed: ``qacc`` and the dense GIM agree with MuJoCo's
(layouts converted by :mod:`denoc_bridge.io.mujoco_layout`), relative differences in the table.
Writes ``mujoco_speed.json`` and ``mujoco_speed.md`` to ``--out``.  ``--quick``: the two
humanoids and a 30-DOF chain, 3 repeats of 2 ms (a smoke test, not a measurement).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import warnings
from pathlib import Path

import mujoco
import numpy as np

import denoc_bridge as db
from denoc_bridge.benchmarking.engines import mujoco_chain
from denoc_bridge.benchmarking.report import fmt_us, machine
from denoc_bridge.benchmarking.suites import interleaved, relative_difference
from denoc_bridge.errors import PhysicsWarning
from denoc_bridge.io import mujoco_layout as mjl
from denoc_bridge.io.mjcf import from_mujoco

ROOT = Path(__file__).resolve().parents[1]
OFF = (
    mujoco.mjtDisableBit.mjDSBL_CONTACT
    | mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    | mujoco.mjtDisableBit.mjDSBL_SPRING
    | mujoco.mjtDisableBit.mjDSBL_DAMPER
    | mujoco.mjtDisableBit.mjDSBL_ACTUATION
    | mujoco.mjtDisableBit.mjDSBL_SENSOR
)


def _package_file(package: str, *parts: str) -> str:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"benchmarks/mujoco_speed.py needs {package} (pip install '.[test]')")
    return os.path.join(spec.submodule_search_locations[0], *parts)


def robots(quick: bool) -> list[tuple[str, mujoco.MjModel]]:
    files = [
        ("humanoid (gymnasium)", _package_file("gymnasium", "envs", "mujoco", "assets", "humanoid.xml")),
        ("humanoid_CMU (dm_control)", _package_file("dm_control", "suite", "humanoid_CMU.xml")),
    ]
    out = [(name, mujoco.MjModel.from_xml_path(path)) for name, path in files]
    for n in (30,) if quick else (100, 1000):
        out.append((f"chain of {n:,} hinges", mujoco_chain(n)[0]))
    return out


def case(name: str, m: mujoco.MjModel, repeats: int, min_time: float) -> dict:
    m.opt.disableflags |= int(OFF)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PhysicsWarning)  # tendons etc.: not part of FD or the GIM
        model = from_mujoco(m, constraints=False)
    rng = np.random.default_rng(7)
    q = db.random_configuration(model, rng)
    v, tau = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = mjl.q_to_mujoco_qpos(model, q), mjl.v_to_mujoco_qvel(model, q, v)
    d.qfrc_applied[:] = mjl.tau_to_mujoco_force(model, q, tau)
    dense = np.zeros((m.nv, m.nv))
    rhs = np.zeros((1, m.nv))
    qacc = np.zeros((1, m.nv))

    def mj_fd() -> None:
        mujoco.mj_forward(m, d)

    def mj_fd_calls() -> None:
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        mujoco.mj_crb(m, d)
        mujoco.mj_factorM(m, d)
        mujoco.mj_rne(m, d, 0, d.qfrc_bias)
        np.subtract(d.qfrc_applied, d.qfrc_bias, out=rhs[0])
        mujoco.mj_solveM(m, d, qacc, rhs)

    def mj_gim() -> None:
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        mujoco.mj_crb(m, d)
        mujoco.mj_fullM(m, d, dense)

    mj_fd()
    a_ref = d.qacc.copy()
    mj_fd_calls()
    a_calls = qacc[0].copy()
    mj_gim()
    a = mjl.a_to_mujoco_qacc(model, q, v, db.forward_dynamics(model, q, v, tau))
    M = mjl.mass_matrix_to_mujoco(model, q, db.mass_matrix(model, q))
    t = interleaved(
        {
            "fd": lambda: db.forward_dynamics(model, q, v, tau),
            "mj_forward": mj_fd,
            "mj_fd_calls": mj_fd_calls,
            "gim": lambda: db.mass_matrix(model, q),
            "mj_gim": mj_gim,
        },
        repeats,
        min_time,
    )
    us = {k: 1e6 * x for k, x in t.items()}
    return {
        "robot": name,
        "nv": int(m.nv),
        "us": us,
        "fd_vs_mj_forward": us["fd"] / us["mj_forward"],
        "fd_vs_mj_calls": us["fd"] / us["mj_fd_calls"],
        "gim_vs_mj": us["gim"] / us["mj_gim"],
        "qacc_difference": relative_difference(a, a_ref),
        "qacc_calls_difference": relative_difference(a_calls, a_ref),
        "gim_difference": relative_difference(M, dense),
    }


def _ratio(x: float) -> str:
    return f"{x:.2f} x" if x >= 0.1 else f"{x:.2g} x"


def markdown(res: dict) -> str:
    mach = res["machine"]
    lines = [
        f"Machine: {mach.get('cpu', '?')}; MuJoCo {mujoco.__version__}; {res['repeats']} interleaved repeats, "
        f"median microseconds per call from Python. Same `MjModel` on both sides; ratios are ours / MuJoCo's.",
        "",
        "| robot | nv | `forward_dynamics` | `mj_forward` | ratio | MuJoCo's 6 calls | ratio | qacc rel. diff. |"
        " `mass_matrix` | `mj_crb` + `mj_fullM` | ratio | GIM rel. diff. |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in res["rows"]:
        u = r["us"]
        lines.append(
            f"| {r['robot']} | {r['nv']} | {fmt_us(u['fd'])} | {fmt_us(u['mj_forward'])} | {_ratio(r['fd_vs_mj_forward'])}"
            f" | {fmt_us(u['mj_fd_calls'])} | {_ratio(r['fd_vs_mj_calls'])} | {r['qacc_difference']:.1e}"
            f" | {fmt_us(u['gim'])} | {fmt_us(u['mj_gim'])} | {_ratio(r['gim_vs_mj'])} | {r['gim_difference']:.1e} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke test: small cases, few repeats")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    args = parser.parse_args(argv)
    repeats, min_time = (3, 0.002) if args.quick else (args.repeats, 0.02)
    rows = []
    for name, m in robots(args.quick):
        rows.append(case(name, m, repeats, min_time))
        print(markdown({"machine": machine(), "repeats": repeats, "rows": rows[-1:]}).splitlines()[-1], flush=True)
    res = {"machine": machine(), "repeats": repeats, "quick": args.quick, "rows": rows}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "mujoco_speed.json").write_text(json.dumps(res, indent=1))
    (out / "mujoco_speed.md").write_text(markdown(res))
    return res


if __name__ == "__main__":
    main(sys.argv[1:])
