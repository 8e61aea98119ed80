"""Closed-loop forward dynamics of denoc_bridge next to ``pin.constraintDynamics``.

    python benchmarks/closed_loops.py [--quick] [--profile] [--out benchmarks/results]

On the same systems and states, in one process (timings: medians, or with ``--stat min``
minima, of interleaved repeats, each repeat a batch of calls from Python, as in
:mod:`speed`):

* ours: ``db.forward_dynamics(model, q, v, tau)`` on a model with loop closures (the
  compiled Lagrange path of :mod:`denoc_bridge.constraints.loops`: open-tree forward dynamics,
  ``M^-1 C^T`` by one solve with its factors per independent constraint row,
  ``C M^-1 C^T`` by Cholesky);
* Pinocchio: ``pin.constraintDynamics(pm, pd, q, v, tau, cms, cds,
  pin.ProximalSettings(1e-14, 1e-10, 200))`` after ``pin.initConstraintDynamics``, one
  ``RigidConstraintModel`` per cut joint (``CONTACT_3D`` for a spherical cut and for the
  planar four-bar's revolute cut, ``CONTACT_6D`` for a weld), ``ReferenceFrame.LOCAL``;
  timed twice: with ``cms``, ``cds`` given as Python lists (as in the tests; Pinocchio
  then converts them to ``std::vector`` on every call, which copies the constraint data)
  and as ``pin.StdVec_RigidConstraintModel`` / ``StdVec_RigidConstraintData`` (no
  conversion: Pinocchio's fastest call from Python, the one the ratio refers to).

The systems: the four-bar of 004 (:func:`denoc_bridge.io.generators.fourbar`); the
benchmark chain (:func:`denoc_bridge.io.robots.serial_chain`) of 7 links whose tip is held
to the world by a ball joint, of 8 links with the tip welded, of 100 links (30 with
``--quick``) pinned at the base and welded at the tip; example-robot-data's solo12
standing on its four point feet (ball joints) and talos with both soles welded to the
ground (free-flyer bases, at the robots' reference configurations ``q0``).  The states
are random, closed by Newton-Raphson (``loops.project_configuration``,
``project_velocity``); before timing, the accelerations of the two libraries are
compared on every state (max. relative difference ``max |a - a_pin| / max |a_pin|``),
and ``C a + Cdot v = 0`` is checked on ours.  Our forward dynamics of the open tree (the
loops removed) and ``pin.aba`` are timed alongside, for scale.

``--profile`` splits our time: the Python layers above the compiled entry, the cost of
calling it with its 13 arguments and checking them (the same call with an output one entry too
long: it returns -2 after every check, nothing computed) and the compiled code itself.  It reaches into private names of :mod:`denoc_bridge.constraints.loops`; if they change,
the profile records the error instead of failing.

Writes ``loops.json`` and ``loops.md`` (the table of the README) to ``--out``.
``--quick`` runs a smaller chain and short timings (a smoke test, not a measurement).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import denoc_bridge as db  # noqa: E402
from denoc_bridge import loops  # noqa: E402
from denoc_bridge.benchmarking import fmt_us as _fmt_us  # noqa: E402  (the helpers of the speed benchmark)
from denoc_bridge.benchmarking import machine  # noqa: E402
from denoc_bridge.benchmarking import relative_difference as _rel  # noqa: E402
from denoc_bridge.io.robots import load_robot, serial_chain  # noqa: E402

SETTINGS = (1e-14, 1e-10, 200)  # ProximalSettings(accuracy, mu, max_iter)
from denoc_bridge.testing import PIN_CONTACT as PIN_KIND  # noqa: E402

# ------------------------------------------------------------------ timing


def interleaved(fns: dict, repeats: int, min_time: float, stat: str = "median") -> dict:
    """Seconds per call of each function, as :func:`speed.interleaved` (the functions take turns
    in every repeat, a batch of calls each): the median of the repeats, or with ``stat="min"``
    their minimum (on a shared machine the other processes only ever add time)."""
    calls = {}
    for name, fn in fns.items():
        fn()  # warm up (the first call allocates the work arrays)
        t0 = time.perf_counter()
        fn()
        calls[name] = max(1, int(min_time / max(time.perf_counter() - t0, 1e-9)))
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(calls[name]):
                fn()
            times[name].append((time.perf_counter() - t0) / calls[name])
    reduce = min if stat == "min" else statistics.median
    return {name: reduce(ts) for name, ts in times.items()}


# ------------------------------------------------------------------ the systems


def _close_at(model, q_ref, kind, link, xyz=(0.0, 0.0, 0.0)):
    """Hold the point ``xyz`` of ``link`` (a link or frame name; the joint frame parallel to
    it) to the world by a cut joint of type ``kind``, closed at ``q_ref``."""
    if link in model.link_names:
        k, R0, p0 = model.link_names.index(link), np.eye(3), np.zeros(3)
    else:
        frame = next(f for f in model.frames if f.name == link)
        k, R0, p0 = frame.link, np.asarray(frame.rotation, float), np.asarray(frame.translation, float)
    R, p = db.forward_kinematics(model, q_ref)
    Rl, pl = R[k] @ R0, p[k] + R[k] @ p0  # the link or frame in the world
    model.add_loop_closure(
        f"{kind}_{link}", kind, link, "world", xyz1=xyz, xyz2=pl + Rl @ np.asarray(xyz, float), rotation2=Rl
    )


def fourbar_case():
    from denoc_bridge.io.generators import fourbar

    return "four-bar of 004 (revolute cut)", fourbar(), np.array([0.0, 0.6, -0.6, 0.6])


def chain_case(n: int, kind: str, seed: int):
    model = serial_chain(n)
    q_ref = np.random.default_rng(seed).uniform(-1.0, 1.0, n)
    _close_at(model, q_ref, kind, model.link_names[-1], xyz=(0.0, 0.0, 0.1))
    what = {"spherical": "tip on a ball joint", "weld": "tip welded"}[kind]
    return f"{n}-link chain, {what}", model, q_ref


def _reference_configuration(name, model):
    """example-robot-data's reference configuration of the robot (its q0), in our layout."""
    import example_robot_data

    robot = example_robot_data.load(name)
    names = [robot.model.names[j] for j in range(1, robot.model.njoints)]
    if names != list(model.joint_names) or robot.model.nq != model.nq:
        raise RuntimeError(f"{name}: example-robot-data's Pinocchio model has another joint layout than ours")
    return np.array(robot.q0, dtype=float)


def robot_case(name: str, kind: str, feet):
    model = load_robot(name)
    q_ref = _reference_configuration(name, model)
    for foot in feet:
        _close_at(model, q_ref, kind, foot)
    what = {"spherical": "point feet on ball joints", "weld": "soles welded"}[kind]
    return f"{name} ({len(feet)} {what})", model, q_ref


def systems(quick: bool) -> list:
    """(label, model with its loop closures, configuration where the loops are closed)."""
    return [
        fourbar_case(),
        chain_case(7, "spherical", 1),
        chain_case(8, "weld", 2),
        chain_case(30 if quick else 100, "weld", 3),
        robot_case("solo12", "spherical", ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")),
        robot_case("talos", "weld", ("left_sole_link", "right_sole_link")),
    ]


def states(model, q_ref, n: int, seed: int) -> list:
    """n random states with the loops closed: q near q_ref (Newton-Raphson), v with C v = 0."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        q = loops.project_configuration(model, db.integrate(model, q_ref, 0.05 * rng.standard_normal(model.nv)))
        v = loops.project_velocity(model, q, rng.standard_normal(model.nv))
        out.append((q, v, rng.standard_normal(model.nv)))
    return out


def pinocchio_constraints(model, pm):
    """One RigidConstraintModel per cut joint, and their datas (Python lists)."""
    from denoc_bridge.testing import pin_constraint_models

    return pin_constraint_models(model, pm)


def _std_vectors(cms, cds):
    import pinocchio as pin

    vm, vd = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    for cm, cd in zip(cms, cds):
        vm.append(cm)
        vd.append(cd)
    return vm, vd


# ------------------------------------------------------------------ the rows


def profile(model, q, v, tau, repeats: int, min_time: float, stat: str = "median") -> dict:
    """Our time split into the Python layers, the call of the compiled entry with its checks, and its code."""
    try:
        from denoc_bridge.core import loops as cl

        cp = loops.compiled(model)
        fext, a, longer = loops.NO_FEXT, np.empty(model.nv), np.empty(model.nv + 1)
        args = (model._kt, cp.work, cp.pi, cp.pf, cp.sb, q, v, tau, fext, 0.0, 0.0, loops.RANK_RTOL)
        t = interleaved(
            {
                "api": lambda: db.forward_dynamics(model, q, v, tau),
                "loops": lambda: loops.constrained_forward_dynamics(model, q, v, tau),
                "entry": lambda: cl.accelerations_state(*args, a),
                "noop": lambda: cl.accelerations_state(*args, longer),  # -2 after the checks
            },
            repeats,
            min_time,
            stat,
        )
    except Exception as exc:  # private names changed: say so, go on
        return dict(error=f"{type(exc).__name__}: {exc}")
    return dict(
        api_us=t["api"] * 1e6,
        python_layers_us=(t["api"] - t["entry"]) * 1e6,
        of_which_forward_dynamics_to_loops_us=(t["api"] - t["loops"]) * 1e6,
        entry_from_python_us=t["entry"] * 1e6,
        dispatch_us=t["noop"] * 1e6,
        compiled_us=(t["entry"] - t["noop"]) * 1e6,
    )


def compare(
    label, model, q_ref, n_states: int, repeats: int, min_time: float, with_profile: bool = False, stat: str = "median"
) -> dict:
    import pinocchio as pin

    pm = db.to_pinocchio(model)
    pd = pm.createData()
    cms, cds = pinocchio_constraints(model, pm)
    pin.initConstraintDynamics(pm, pd, cms, cds)
    vms, vds = _std_vectors(cms, cds)
    settings = pin.ProximalSettings(*SETTINGS)
    tree = model.replace(loops=())
    sts = states(model, q_ref, n_states, seed=model.nv)
    rel, residual, iters = 0.0, 0.0, 0
    for q, v, tau in sts:
        a = db.forward_dynamics(model, q, v, tau)
        a_pin = pin.constraintDynamics(pm, pd, q, v, tau, vms, vds, settings).copy()
        iters = max(iters, settings.iter)
        rel = max(rel, _rel(a, a_pin), _rel(a, pin.constraintDynamics(pm, pd, q, v, tau, cms, cds, settings)))
        phi, C, cdqd = loops.loop_kinematics(model, q, v)
        residual = max(residual, float(np.abs(C @ a + cdqd).max() / max(np.abs(C).max() * np.abs(a).max(), 1e-300)))
    q, v, tau = sts[0]
    t = interleaved(
        {
            "ours": lambda: db.forward_dynamics(model, q, v, tau),
            "pin": lambda: pin.constraintDynamics(pm, pd, q, v, tau, vms, vds, settings),
            "pin_lists": lambda: pin.constraintDynamics(pm, pd, q, v, tau, cms, cds, settings),
            "tree": lambda: db.forward_dynamics(tree, q, v, tau),
            "aba": lambda: pin.aba(pm, pd, q, v, tau),
        },
        repeats,
        min_time,
        stat,
    )
    C = loops.loop_jacobian(model, q)
    row = dict(
        case=label,
        nv=model.nv,
        n_loops=len(model.loops),
        cuts=", ".join(f"{lc.type} ({PIN_KIND[lc.type]})" for lc in model.loops),
        rows=int(C.shape[0]),
        rank=int(loops.independent_rows(C).size),
        denoc_us=t["ours"] * 1e6,
        pin_us=t["pin"] * 1e6,
        ratio=t["ours"] / t["pin"],
        pin_lists_us=t["pin_lists"] * 1e6,
        ratio_lists=t["ours"] / t["pin_lists"],
        max_rel_diff=rel,
        constraint_residual=residual,
        pin_iterations=iters,
        tree_fd_us=t["tree"] * 1e6,
        aba_us=t["aba"] * 1e6,
    )
    print(
        f"  {label:<38} nv {row['nv']:>3}  rank {row['rank']:>2}/{row['rows']:<2}  "
        f"ours {row['denoc_us']:7.2f} us   pin {row['pin_us']:7.2f} us ({row['pin_lists_us']:7.2f} with lists)"
        f"   ratio {row['ratio']:.2f} ({row['ratio_lists']:.2f})   rel. diff {rel:.1e}   "
        f"(open tree {row['tree_fd_us']:.2f} us, aba {row['aba_us']:.2f} us)",
        flush=True,
    )
    if with_profile:
        row["profile"] = p = profile(model, q, v, tau, repeats, min_time, stat)
        if "error" in p:
            print(f"    profile unavailable: {p['error']}", flush=True)
        else:
            print(
                f"    profile: Python layers {p['python_layers_us']:.2f} us (forward_dynamics -> loops "
                f"{p['of_which_forward_dynamics_to_loops_us']:.2f}), call and checks {p['dispatch_us']:.2f} us, "
                f"compiled {p['compiled_us']:.2f} us",
                flush=True,
            )
    return row


def run(
    quick: bool, repeats: int, min_time: float, n_states: int = None, with_profile: bool = False, stat: str = "median"
) -> list:
    """The rows of every system (see the module docstring)."""
    n_states = n_states or (2 if quick else 5)
    return [
        compare(label, model, q_ref, n_states, repeats, min_time, with_profile, stat)
        for label, model, q_ref in systems(quick)
    ]


def table(rows: list) -> str:
    """The markdown table of the rows."""
    lines = [
        "| system | DOF | constraint rows (rank) | `db.forward_dynamics` | `pin.constraintDynamics` | ratio "
        "| with lists: pin / ratio | max. rel. diff. | open tree: ours / `pin.aba` |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['case']} | {r['nv']} | {r['rows']} ({r['rank']}) | {_fmt_us(r['denoc_us'])} | "
            f"{_fmt_us(r['pin_us'])} | {r['ratio']:.2f} x | {_fmt_us(r['pin_lists_us'])} / "
            f"{r['ratio_lists']:.2f} x | {r['max_rel_diff']:.1e} | "
            f"{_fmt_us(r['tree_fd_us'])} / {_fmt_us(r['aba_us'])} |"
        )
    return "\n".join(lines) + "\n"


def profile_table(rows: list) -> str:
    lines = [
        "| system | `db.forward_dynamics` | Python layers | call and checks (13 arguments) | compiled |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        p = r.get("profile", {})
        if "api_us" in p:
            lines.append(
                f"| {r['case']} | {_fmt_us(p['api_us'])} | {_fmt_us(p['python_layers_us'])} | "
                f"{_fmt_us(p['dispatch_us'])} | {_fmt_us(p['compiled_us'])} |"
            )
    return "\n".join(lines) + "\n" if len(lines) > 2 else ""


def markdown(res: dict) -> str:
    m = res["machine"]
    md = (
        f"Machine: {m['cpu']}, {m['cores']} cores; Python {m['python']}, NumPy {m['numpy']}, denoc_bridge "
        f"{m['denoc_bridge']}, Pinocchio {m['pinocchio']}; {m['date']}; {res.get('stat', 'median')} of "
        f"{res.get('repeats')} interleaved repeats.\n\n" + table(res["rows"])
    )
    prof = profile_table(res["rows"])
    return md + ("\n" + prof if prof else "")


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller chain, short timings (smoke test)")
    parser.add_argument("--profile", action="store_true", help="split our time (Python, dispatch, compiled)")
    parser.add_argument("--out", default=os.path.join(HERE, "results"), help="output directory")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--states", type=int, default=None, help="random states compared per system")
    parser.add_argument(
        "--stat",
        choices=("median", "min"),
        default="median",
        help="of the repeats (min on a busy machine: other processes only add time)",
    )
    args = parser.parse_args(argv)
    quick = args.quick
    repeats = args.repeats or (3 if quick else 9)
    min_time = 0.005 if quick else 0.05
    os.makedirs(args.out, exist_ok=True)
    res = dict(
        machine=machine(),
        quick=quick,
        stat=args.stat,
        repeats=repeats,
        settings=dict(zip(("accuracy", "mu", "max_iter"), SETTINGS)),
    )
    print("closed-loop forward dynamics: db.forward_dynamics vs pin.constraintDynamics", flush=True)
    res["rows"] = run(quick, repeats, min_time, args.states, args.profile, args.stat)
    with open(os.path.join(args.out, "loops.json"), "w") as f:
        json.dump(res, f, indent=1)
    md = markdown(res)
    with open(os.path.join(args.out, "loops.md"), "w") as f:
        f.write(md)
    print()
    print(md)
    print(f"wrote {args.out}/loops.json, loops.md")
    return res


if __name__ == "__main__":
    main()
