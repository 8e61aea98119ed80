"""``denoc-bridge simulate``: simulate a robot, check it against Pinocchio first, write the
animation, the plots and the trajectory."""

from __future__ import annotations

import math
import re
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from denoc_bridge import validation
from denoc_bridge._text import count as _count
from denoc_bridge.cli.common import (
    EXIT_MISMATCH,
    MAX_FPS,
    SIMULATE_CHECK_MAX_BYTES,
    check_whole_steps,
    checked_output_file,
    checked_seed,
    positive_option,
)
from denoc_bridge.cli.validate import pinocchio_model, report_table, too_big_for_pinocchio
from denoc_bridge.errors import DenocError
from denoc_bridge.io.robots import load_robot, resolve_robot
from denoc_bridge.simulation.common import FIXED_STEP_METHODS, method_name
from denoc_bridge.viz.plots import plot_summary, pyplot

PLOT_FORMATS = ("png", "pdf", "svg", "jpg", "jpeg", "tif", "tiff", "webp", "eps", "ps")


def _start(model, args):
    """(q0, how it was chosen)."""
    import denoc_bridge as db

    values = args.q0 or ["neutral"]
    if len(values) == 1 and values[0] in ("neutral", "random"):
        if values[0] == "random":
            q, what = db.random_configuration(model, args.seed), f"a random configuration (--seed {args.seed})"
        elif model.loops and model.name == "fourbar" and model.nq == 4:
            q, what = np.array([0.0, 0.5, -0.5, 0.5]), "theta_2 = 0.5 rad with the loop closed"
        else:
            q = db.neutral_configuration(model)
            what = "the neutral configuration" + (
                " (horizontal)" if str(model.source or "").startswith("denoc_bridge.generators.chain") else ""
            )
    else:
        bad = next((x for x in values if not _is_float(x)), None)
        if bad is not None:
            raise DenocError(f"--q0: '{bad}' is not a number (give {model.nq} numbers, or 'neutral' or 'random')")
        q = np.array([float(x) for x in values])
        if q.shape != (model.nq,):
            raise DenocError(f"--q0 needs {model.nq} numbers for '{model.name}' (nq = {model.nq}), got {q.size}")
        what = "the given configuration"
    if model.loops:
        q = db.loops.project_configuration(model, q)
        if "closed" not in what:
            what += " projected onto the loops"
    return q, what


def _is_float(text: str) -> bool:
    """A number as written in a URDF or a CSV file (Python's float() also takes 1_0)."""
    try:
        float(text)
    except ValueError:
        return False
    return "_" not in text


def _torque(model, spec: str):
    """(tau for simulate, description)."""
    import denoc_bridge as db

    if spec in ("zero", "none", "0"):
        return None, "no torque"
    if spec in ("gravity-compensation", "gravity"):

        def tau(t, q, v):
            return db.gravity_torques(model, q)

        return tau, "gravity compensation tau = g(q)"
    path = Path(spec)
    if path.suffix.lower() not in (".npy", ".csv", ".txt"):
        raise DenocError(f"--torque must be zero, gravity-compensation or a .npy / .csv file, got '{spec}'")
    if not path.is_file():
        raise DenocError(f"--torque: no such file: {spec}")
    try:
        if path.suffix.lower() == ".npy":
            try:
                table = np.load(path, allow_pickle=False)
            except ValueError as exc:
                if "pickle" in str(exc):
                    raise ValueError("not a NumPy .npy array file") from None
                raise
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "input contained no data": said below
                table = np.loadtxt(path, delimiter=",", ndmin=2)
        if np.asarray(table).dtype.kind not in "fiu":
            raise ValueError(f"it holds {np.asarray(table).dtype} numbers, not real ones")
        table = np.asarray(table, dtype=float)
    except (OSError, ValueError, TypeError, EOFError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DenocError(f"--torque: cannot read {spec}: {reason}") from None
    if table.size == 0:
        raise DenocError(f"--torque: {spec} holds no numbers")
    nv = model.nv
    if table.ndim == 2 and table.shape[0] == 1:
        table = table[0]
    if table.ndim == 1 and table.shape == (nv,):
        what = f"the constant torque of {spec}"
    elif table.ndim == 2 and table.shape[1] == nv:
        what = f"{table.shape[0]} rows of torques from {spec} (one per step)"
    else:
        raise DenocError(
            f"--torque: {spec} holds an array of shape {table.shape}; '{model.name}' needs {nv} "
            f"torques per row (one row: constant; one row per step)"
        )
    if not np.all(np.isfinite(table)):
        raise DenocError(f"--torque: {spec} holds a value that is not finite")
    return table, what


def _stiffness_hint(model, method: str, dt: float) -> str:
    """A hint for runs that blow up or drift: joint dampers make a model stiff for explicit steps."""

    damping = float(np.max(getattr(model, "tree", model).damping)) if model.nv else 0.0
    if method not in FIXED_STEP_METHODS:
        return ""
    because = f" (its joint damping, up to {damping:g} N m s/rad in the URDF, makes it stiff)" if damping > 0 else ""
    return f"; try --dt {dt / 10:g} or the implicit --method Radau{because}"


def _out_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "robot"


def _check_against_pinocchio(src, model, seed: int) -> int:

    too_big = too_big_for_pinocchio(model, SIMULATE_CHECK_MAX_BYTES)
    if too_big:
        print(f"check against Pinocchio skipped: {too_big} (run 'denoc-bridge validate' on a shorter chain)")
        return 0
    pm, origin = pinocchio_model(src, model)
    report = validation.compare_with_pinocchio(model, pm, samples=2, seed=seed)
    worst = max(report.checks, key=lambda c: c.max_error)
    if report.passed:
        print(
            f"checked against Pinocchio ({origin}, 2 random states): all {len(report.checks)} quantities agree "
            f"to {report.tolerance:g} (largest relative difference {worst.max_error:.1e}, {worst.quantity})"
        )
        return 0
    print(f"MISMATCH against Pinocchio ({origin}):")
    report_table(report)
    print("not simulating: denoc_bridge and Pinocchio disagree on this model (--no-validate simulates anyway)")
    return EXIT_MISMATCH


def simulate_command(args) -> int:
    import denoc_bridge as db

    positive_option(args.duration, "--duration")
    positive_option(args.dt, "--dt")
    checked_seed(args.seed)
    if not (math.isfinite(args.fps) and 0 < args.fps <= MAX_FPS):
        raise DenocError(f"--fps must be a frame rate between 0 and {MAX_FPS:g} per second, got {args.fps:g}")
    for flag, no in (("html", "no_html"), ("plot", "no_plot")):
        if getattr(args, flag) and getattr(args, no):
            raise DenocError(f"--{flag} and --no-{flag} contradict each other; give one")

    method = method_name(args.method)
    check_whole_steps(args, method)
    src = resolve_robot(args.robot)
    name = _out_name(src.name)
    html = None if args.no_html else Path(args.html or f"{name}.html")
    png = None if args.no_plot else Path(args.plot or f"{name}.png")
    save = Path(args.save) if args.save else None
    if save is not None and save.suffix.lower() != ".npz" and not save.is_dir():
        save = save.with_name(save.name + ".npz")  # what numpy writes
    if png is not None and png.suffix.lower().lstrip(".") not in PLOT_FORMATS:
        raise DenocError(
            f"--plot: cannot write a plot as '{png.name}': give a file ending in "
            f"{', '.join('.' + f for f in PLOT_FORMATS[:4])}, ..."
        )
    for path, option in ((html, "--html"), (png, "--plot"), (save, "--save")):
        checked_output_file(path, option)
    export_html: Callable[..., Path] | None = None  # set when html is kept
    if html is not None:
        try:
            from denoc_bridge.viz import export_html
        except ImportError as exc:
            why = (
                f"{exc.name} is not installed"
                if getattr(exc, "name", None) not in (None, "denoc_bridge.viz")
                else "denoc_bridge.viz is not available"
            )
            if args.html:
                raise DenocError(f"--html: the animation needs denoc_bridge.viz and meshcat ({why})") from None
            print(f"denoc-bridge: note: no HTML animation ({why}; --no-html silences this)", file=sys.stderr)
            html = None
    if png is not None:
        try:
            pyplot()  # a missing matplotlib shows here, before the simulation
        except DenocError as exc:
            if args.plot:
                raise DenocError(f"--plot: {exc}") from None
            print(f"denoc-bridge: note: no plot ({exc}; --no-plot silences this)", file=sys.stderr)
            png = None
    model = load_robot(args.robot, floating_base=args.floating, mimic=args.mimic)
    base = "free-flyer base" if model.floating_base else "fixed base"
    loops = f", {_count(len(model.loops), 'loop closure')}" if model.loops else ""
    if args.mimic:
        loops += f", {_count(len(model.mimic), '<mimic> joint')} as constraints"
    print(f"{model.name}: {model.nv} DOF ({base}{loops}); {src.path or src.origin}")
    if model.loops and method not in FIXED_STEP_METHODS:
        raise DenocError(
            f"'{model.name}' has loop closures: simulate it with --method rk4 or euler (the "
            f"projection onto the loops after each step does not fit the adaptive {method})"
        )
    tau, tau_what = _torque(model, args.torque)
    q0, q0_what = _start(model, args)
    if not args.no_validate:
        status = _check_against_pinocchio(src, model, args.seed)
        if status:
            return status
    print(
        f"simulating {args.duration:g} s with {method}, dt = {args.dt:g} s; start: {q0_what}, at rest; {tau_what}",
        flush=True,
    )
    # the progress bar (rich, on stderr) when stderr is a terminal; in a log file it would only be noise
    try:
        traj = db.simulate(
            model, q0, np.zeros(model.nv), args.duration, args.dt, tau, method, progress=bool(sys.stderr.isatty())
        )
    except db.SimulationError as exc:
        text = str(exc).split("; the trajectory up to", 1)[0]  # drop the Python-API advice
        hint = "" if "singular" in text else _stiffness_hint(model, method, args.dt)
        raise DenocError(f"{text}{hint}") from None
    rate = traj.t[-1] / traj.wall_time if traj.wall_time > 0 else float("inf")
    print(
        f"{traj.status}: {traj.n_steps} steps, {len(traj)} saved states, {traj.n_evaluations} forward dynamics "
        f"in {traj.wall_time:.3g} s wall ({rate:.3g} x real time)" + (f"; {traj.message}" if traj.message else "")
    )
    if len(traj) > 1:
        drift = traj.energy_drift()
        peak = float(np.max(traj.kinetic_energy))
        if peak > 0:
            rel = np.max(np.abs(drift)) / peak
            print(
                f"energy drift: max |E - E(0) - W_in| = {np.max(np.abs(drift)):.3g} J = "
                f"{rel:.3g} of the peak kinetic energy ({peak:.4g} J)"
            )
            if rel > 1e-2:
                print(
                    f"warning: the energy balance is off by {rel:.0%}: the step is too long for this model"
                    f"{_stiffness_hint(model, method, args.dt)}"
                )
        else:
            print(f"energy drift: max |E - E(0) - W_in| = {np.max(np.abs(drift)):.3g} J (the robot did not move)")
    if traj.constraint_error is not None and len(traj.constraint_error):
        extra = (
            f"; most one step left before the projection: {traj.constraint_drift:.2g}"
            if np.isfinite(traj.constraint_drift)
            else ""
        )
        print(f"loop closure: max constraint error {np.max(traj.constraint_error):.3g} (m or rad){extra}")
    written = []
    if save is not None:
        traj.to_npz(save)
        written.append(("trajectory", save))
    if png is not None:
        written.append(("plots", plot_summary(traj, png)))
    if html is not None:
        assert export_html is not None  # html is dropped (None) when the import failed
        written.append(("animation", Path(export_html(model, traj, html, fps=args.fps, color_by="module"))))
    for what, path in written:
        print(f"wrote {what:<10} {path.resolve()}")
    if any(what == "animation" for what, _ in written):
        print("open the .html file in a browser (it needs no server and no network)")
    return 130 if traj.status == "interrupted" else 0
