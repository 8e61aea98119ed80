"""``denoc-bridge compile``: compile every kernel of every capability now, into the cache that later
processes load from (:mod:`denoc_bridge.kernels.cache`).  ``pip install`` runs it (the build step,
``_build/backend.py``); run it by hand after ``pip install --no-build-isolation`` with the step
turned off, or to see what it does.

The capabilities are *units*, each a function that calls the public API on small generated
robots with the argument kinds users pass (fixed and floating base, batches, external wrenches,
torques as a vector, a table or a controller, every simulation method, mimic joints, loops, both).
They run in ``--jobs`` processes (the cores), longest first; each process compiles what its units
need and loads what another process has cached already.  A last pass runs every unit in one fresh
process and counts what still compiles there (``--check``: it must be nothing).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path

import numpy as np
from numba.core import event

import denoc_bridge as db
from denoc_bridge.cli.parser import compile_arguments
from denoc_bridge.errors import InputError
from denoc_bridge.io import generators as g
from denoc_bridge.kernels import cache
from denoc_bridge.kernels.notice import QUIET_ENV

#: ``python -c RUN ARGS...`` runs this command (``-m`` would import this module twice: the
#: package ``denoc_bridge.cli`` imports it through ``main``)
RUN = "import sys; from denoc_bridge.cli.compile import main; sys.exit(main(sys.argv[1:]))"

_TWO_LINKS = """<robot name="two">
  <link name="base"><inertial><mass value="2"/><inertia ixx="0.02" iyy="0.03" izz="0.04" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0.1 0 0"/><mass value="1"/><inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="ball"><inertial><mass value="0.5"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="slider"><inertial><mass value="0.3"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.2"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="5"/></joint>
  <joint name="wheel" type="continuous"><parent link="arm"/><child link="ball"/><origin xyz="0.2 0 0"/><axis xyz="0 0 1"/></joint>
  <joint name="slide" type="prismatic"><parent link="base"/><child link="slider"/><origin xyz="0 0.1 0"/><axis xyz="1 0 0"/><limit lower="-0.5" upper="0.5" effort="10" velocity="5"/></joint>
</robot>"""


def _robots() -> dict[str, db.Model]:
    """A fixed-base arm (revolute joints with limits), a floating-base tree of revolute,
    continuous and prismatic joints, and a 30-DOF chain (beyond the small-tree paths)."""
    return {
        "arm": g.puma560(),
        "floating": db.load_urdf(_TWO_LINKS, floating_base=True),
        "chain": db.load_robot("chain:30"),
    }


def _state(model, seed=0):
    """A random configuration, small velocities and torques (a short run stays finite)."""
    q = db.random_configuration(model, seed)
    rng = np.random.default_rng(seed)
    scale = 0.05 if model.nv > 12 else 0.5
    return q, rng.uniform(-scale, scale, model.nv), rng.uniform(-scale, scale, model.nv) * 1e-3


def unit_tree() -> None:
    """Tree dynamics, kinematics and matrices: one state and batches, wrenches, a Data."""
    for model in _robots().values():
        q, v, tau = _state(model)
        link = model.link_names[-1]
        data = db.Data(model)
        for f_ext in (None, {link: np.ones(6)}):
            a = db.forward_dynamics(model, q, v, tau, f_ext)
            db.inverse_dynamics(model, q, v, a, f_ext)
            db.tree_forward_dynamics(model, q, v, tau, f_ext)
            db.tree_inverse_dynamics(model, q, v, a, f_ext)
        db.forward_dynamics(model, q, v, tau, data=data)
        db.inverse_dynamics(model, q, v, tau, data=data)
        Q, V, T = (np.stack([x, x]) for x in (q, v, tau))
        db.forward_dynamics(model, Q, V, T)
        db.inverse_dynamics(model, Q, V, T)
        for fn in (db.mass_matrix, db.inverse_mass_matrix, db.gravity_torques, db.potential_energy):
            fn(model, q)
            fn(model, Q)
        db.udut(model, q)
        db.inverse_udut(model, q)
        db.mass_matrix(model, q, data=data)
        db.inverse_mass_matrix(model, q, data=data)
        db.nonlinear_effects(model, q, v)
        db.nonlinear_effects(model, Q, V)
        db.forward_kinematics(model, q)
        db.link_velocities(model, q, v)
        db.link_velocities(model, Q, V)
        db.center_of_mass(model, q)
        db.energies(model, q, v)
        db.energies(model, Q, V)
        db.kinetic_energy(model, q, v)
        db.integrate(model, q, v)
        db.integrate(model, Q, V)
        db.difference(model, q, q)
        db.difference(model, Q, Q)
        db.interpolate(model, q, q, 0.5)


def unit_derivatives() -> None:
    """Analytical derivatives, the matrix-free JVP / VJP and linearize, trees."""
    for model in _robots().values():
        q, v, tau = _state(model)
        link = model.link_names[-1]
        for f_ext in (None, {link: np.ones(6)}):
            db.inverse_dynamics_derivatives(model, q, v, tau, f_ext)
            db.forward_dynamics_derivatives(model, q, v, tau, f_ext)
            db.forward_dynamics_jvp(model, q, v, tau, v, v, tau, f_ext)
            db.forward_dynamics_vjp(model, q, v, tau, v, f_ext)
        db.linearize(model, q, v, tau)


def _controller(t, q, v):
    return -1e-4 * v


def unit_simulate() -> None:
    """The compiled fixed-step runs of trees: rk4 and euler, every kind of torque, limits,
    wrenches, saved steps, a streamed run; the batch run."""
    for model in _robots().values():
        q, v, tau = _state(model)
        link = model.link_names[-1]
        n = 4
        for method in ("rk4", "euler"):
            for torque in (None, tau, np.tile(tau, (n, 1)), _controller):
                db.simulate(model, q, v, n * 1e-3, 1e-3, torque, method, progress=False)
            db.simulate(model, q, v, n * 1e-3, 1e-3, tau, method, f_ext={link: np.ones(6)}, progress=False)
            db.simulate(
                model, q, v, n * 1e-3, 1e-3, method=method, limits=False, passive=False, save_every=2, progress=False
            )
            with tempfile.TemporaryDirectory() as tmp:
                db.simulate(model, q, v, n * 1e-3, 1e-3, method=method, save_to=Path(tmp) / "run.npy", progress=False)
            Q, V = np.stack([q, q]), np.stack([v, v])
            for torque in (None, tau, np.stack([tau, tau]), np.zeros((2, n, model.nv))):
                db.simulate_batch(model, Q, V, n * 1e-3, 1e-3, torque, method)


def unit_implicit() -> None:
    """The implicit methods (Newton on the derivatives; GMRES on the 30-DOF chain) and the
    adaptive ones of scipy (forward dynamics)."""
    for model in _robots().values():
        q, v, tau = _state(model)
        for method in ("implicit-euler", "sdirk2"):
            db.simulate(model, q, v, 2e-3, 1e-3, tau, method, progress=False)
            db.simulate(model, q, v, 2e-3, 1e-3, _controller, method, progress=False)
        db.simulate(model, q, v, 2e-3, 1e-3, tau, "RK45", progress=False)


def unit_loops() -> None:
    """Loop closures (the four-bar of 004): constrained dynamics, projections, derivatives,
    every method."""
    model = g.fourbar()
    q = db.neutral_configuration(model)
    v, tau = np.zeros(model.nv), np.full(model.nv, 0.1)
    for method in ("lagrange", "partitioning"):
        a = db.forward_dynamics(model, q, v, tau, loop_method=method)
    db.inverse_dynamics(model, q, v, a)
    db.mass_matrix(model, q)
    db.forward_dynamics_derivatives(model, q, v, tau)
    db.loops.constraint_forces(model, q, v, tau)
    db.loops.project_configuration(model, q)
    db.loops.project_velocity(model, q, v)
    for method in ("rk4", "euler"):
        for torque in (None, tau, _controller):
            db.simulate(model, q, v, 4e-3, 1e-3, torque, method, progress=False)
        db.simulate(model, q, v, 4e-3, 1e-3, method=method, stabilization="baumgarte", progress=False)


def _mimic(model) -> None:
    q = db.neutral_configuration(model)
    v, tau = np.full(model.nv, 0.1), np.full(model.nv, 0.1)
    if model.loops:
        q = db.loops.project_configuration(model, q)
        v = db.loops.project_velocity(model, q, v)
    a = db.forward_dynamics(model, q, v, tau)
    db.inverse_dynamics(model, q, v, a)
    db.mass_matrix(model, q)
    db.inverse_mass_matrix(model, q)
    if not model.loops:  # derivatives of mimic joints with loops: not supported
        db.forward_dynamics_derivatives(model, q, v, tau)
        db.inverse_dynamics_derivatives(model, q, v, a)
    db.energies(model, q, v)
    for method in ("rk4", "euler"):
        for torque in (None, tau, _controller):
            db.simulate(model, q, v, 4e-3, 1e-3, torque, method, progress=False)
    if not model.loops:
        db.simulate(model, q, v, 2e-3, 1e-3, method="RK45", progress=False)
        db.simulate_batch(model, np.stack([q, q]), np.stack([v, v]), 4e-3, 1e-3)


def unit_mimic() -> None:
    """Mimic joints (the gripper) and mimic joints with loops (the geared five-bar)."""
    for model in (db.load_robot("gripper", mimic=True), g.geared_fivebar()):
        _mimic(model)


def unit_validation() -> None:
    """compare_with_pinocchio and Pinocchio's calling convention (denoc_bridge.pin); skipped where
    Pinocchio is not installed (the build step's environment has numba, numpy, scipy and the URDF
    parser only: the tree unit compiles the kernels these call)."""
    if importlib.util.find_spec("pinocchio") is None:
        return
    dpin = importlib.import_module("denoc_bridge.pin")
    compare_with_pinocchio = importlib.import_module("denoc_bridge.validation").compare_with_pinocchio
    for model in _robots().values():
        compare_with_pinocchio(model, samples=1)
        pm = db.to_pinocchio(model)
        pd = pm.createData()
        q, v, tau = _state(model)
        dpin.aba(pm, pd, q, v, tau)
        dpin.rnea(pm, pd, q, v, tau)
        dpin.crba(pm, pd, q)
        dpin.computeMinverse(pm, pd, q)
        dpin.nonLinearEffects(pm, pd, q, v)
        dpin.computeGeneralizedGravity(pm, pd, q)
    compare_with_pinocchio(db.load_robot("gripper", mimic=True), samples=1)


def unit_contact() -> None:
    """Ground contact: the contact-euler time stepper on the floating-base tree, resting on a
    point of each link and sliding, the second with the posture hold."""
    model = _robots()["floating"]
    q = db.neutral_configuration(model)
    q[2] = 0.05
    points = [db.contact_point(model, link, radius=0.02) for link in model.link_names]
    for v0 in (np.zeros(model.nv), np.r_[0.5, 0.0, 0.0, np.zeros(model.nv - 3)]):
        db.simulate(
            model,
            q,
            v0,
            5e-3,
            1e-3,
            method="contact-euler",
            contact=db.Ground(mu=0.8),
            contact_points=points,
            progress=False,
            hold=db.posture_hold(model) if v0.any() else None,
        )


#: the units, longest first.  On 2 cores (numba 0.68, kernels/inlining.py) mimic took 431 s of one
#: core while the other ran simulate, tree, loops and derivatives: 460 s in all.  Split into the
#: gripper and the five-bar it took 572 s: both halves compile the tree's kernels, and the rest
#: came after them
UNITS: dict[str, Callable[[], None]] = {
    "mimic": unit_mimic,
    "simulate": unit_simulate,
    "tree": unit_tree,
    "loops": unit_loops,
    "derivatives": unit_derivatives,
    "contact": unit_contact,
    "implicit": unit_implicit,
    "validation": unit_validation,
}


def run_unit(name: str) -> dict:
    """Run unit ``name`` in this process: its wall seconds, the kernels it compiled and the
    seconds their compilation took."""
    os.environ[QUIET_ENV] = "1"
    rec = _Recorder()
    t0 = time.perf_counter()
    with event.install_listener("numba:compile", rec), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the units' physics (limits hit, short runs) is not the point
        UNITS[name]()
    return {"unit": name, "wall": time.perf_counter() - t0, "compiled": rec.count, "compile_s": rec.seconds}


class _Recorder(event.Listener):
    """Counts the compilations and their outermost seconds."""

    def __init__(self) -> None:
        self.count, self.seconds, self.depth, self.t0 = 0, 0.0, 0, 0.0

    def on_start(self, ev):
        self.count += 1
        self.depth += 1
        if self.depth == 1:
            self.t0 = time.perf_counter()

    def on_end(self, ev):
        self.depth -= 1
        if self.depth == 0:
            self.seconds += time.perf_counter() - self.t0


def _check_pass(names: list[str]) -> list[dict]:
    """Every unit again, in one fresh process: what still compiles there."""
    out = subprocess.run(
        [sys.executable, "-c", RUN, "--in-process", "--units", ",".join(names), "--json"],
        capture_output=True,
        text=True,
        check=False,
        env=dict(os.environ, **{QUIET_ENV: "1"}),
    )
    if out.returncode:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def compile_all(names: list[str] | None = None, jobs: int | None = None, check: bool = True, say=print) -> dict:
    """Compile the units ``names`` (all by default) in ``jobs`` processes (the cores), then, with
    ``check``, run them once more in a fresh process, which must compile nothing."""
    names = list(UNITS) if names is None else names
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(names)))
    os.environ[QUIET_ENV] = "1"  # inherited by the workers
    say(f"compiling {len(names)} groups of kernels ({', '.join(names)}) in {jobs} processes into {cache.cache_dir()}")
    t0 = time.perf_counter()
    results = []
    if jobs == 1:
        for name in names:
            results.append(run_unit(name))
            say(_line(results[-1], t0))
    else:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
            for future in as_completed([pool.submit(run_unit, name) for name in names]):
                results.append(future.result())
                say(_line(results[-1], t0))
    report = {"units": results, "wall": time.perf_counter() - t0, "jobs": jobs, "cache": str(cache.cache_dir())}
    if check:
        again = _check_pass(names)
        report["check"] = again
        missed = sum(r["compiled"] for r in again)
        say(
            f"checked in a fresh process: {missed} kernels compiled again"
            + (" (none: all cached)" if not missed else "")
        )
    report["wall"] = time.perf_counter() - t0
    removed = cache.prune()
    if removed:
        say(f"removed {len(removed)} cache folders of older sources")
    say(f"done in {report['wall']:.0f} s")
    return report


def _line(r: dict, t0: float) -> str:
    return (
        f"  {r['unit']:12s} {r['compiled']:4d} kernels compiled in {r['compile_s']:6.1f} s "
        f"(unit {r['wall']:6.1f} s; {time.perf_counter() - t0:6.1f} s so far)"
    )


def compile_command(args: argparse.Namespace) -> int:
    """``denoc-bridge compile``."""
    names = _unit_names(args.units)
    if args.in_process:
        results = [run_unit(name) for name in names]
        if args.json:
            print(json.dumps(results))
        return 0
    compile_all(names, jobs=args.jobs, check=not args.no_check)
    return 0


def _unit_names(text: str | None) -> list[str]:
    if not text:
        return list(UNITS)
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in UNITS]
    if unknown:
        raise InputError(f"unknown unit(s) {', '.join(unknown)}; the units are {', '.join(UNITS)}")
    return names


def main(argv: list[str] | None = None) -> int:
    """``python -c RUN`` (the build step of ``pip install``)."""
    p = argparse.ArgumentParser(prog="denoc-bridge compile", description=__doc__.split("\n\n")[0])
    compile_arguments(p)
    try:
        return compile_command(p.parse_args(argv))
    except InputError as exc:
        print(f"denoc-bridge compile: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
