"""``denoc-bridge simulate``: simulate a robot, check it against Pinocchio first, write the
animation, the plots and the trajectory."""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from denoc_bridge import validation
from denoc_bridge._text import count as _count
from denoc_bridge._text import did_you_mean
from denoc_bridge.algorithms.configuration import neutral_configuration, random_configuration
from denoc_bridge.cli import ground, outputs
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
from denoc_bridge.constraints.loops import project_configuration
from denoc_bridge.dynamics import gravity_torques
from denoc_bridge.errors import DenocError, SimulationError, SingularInertiaError
from denoc_bridge.io.robots import load_robot, resolve_robot
from denoc_bridge.multibody.constraints import LoopClosure, describe_loops
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.simulation import simulate
from denoc_bridge.simulation.common import FIXED_STEP_METHODS, IMPLICIT_METHODS, method_name
from denoc_bridge.simulation.mimic import limit_arrays as mimic_limit_arrays
from denoc_bridge.simulation.stability import STABILITY_LIMIT, damping_stiffness
from denoc_bridge.simulation.tree import clamp_to_limits, limit_arrays
from denoc_bridge.viz.plots import plot_summary, pyplot

PLOT_FORMATS = ("png", "pdf", "svg", "jpg", "jpeg", "tif", "tiff", "webp", "eps", "ps")


def _start(model, args):
    """(q0, how it was chosen)."""
    refs = model.reference_configurations
    values = args.q0 or (["qpos0"] if "qpos0" in refs else ["neutral"])
    if len(values) == 1 and not _is_float(values[0]):
        word = values[0]
        if word == "random":
            q, what = random_configuration(model, args.seed), f"a random configuration (--seed {args.seed})"
        elif word == "neutral" and model.loops and model.name == "fourbar" and model.nq == 4:
            q, what = np.array([0.0, 0.5, -0.5, 0.5]), "theta_2 = 0.5 rad with the loop closed"
        elif word == "neutral":
            q = neutral_configuration(model)
            what = "the neutral configuration" + (
                " (horizontal)" if str(model.source or "").startswith("denoc_bridge.generators.chain") else ""
            )
        elif word in refs:
            q = np.array(refs[word])
            what = "the file's pose (MuJoCo's qpos0)" if word == "qpos0" else f"the model's configuration '{word}'"
        else:
            names = ["neutral", "random", *refs]
            raise DenocError(
                f"--q0: '{word}' is neither a number nor a configuration of '{model.name}' (give {model.nq} "
                f"numbers, or one of: {', '.join(names)}){did_you_mean(word, names)}"
            )
    else:
        bad = next((x for x in values if not _is_float(x)), None)
        if bad is not None:
            raise DenocError(f"--q0: '{bad}' is not a number (give {model.nq} numbers, or one configuration name)")
        q = np.array([float(x) for x in values])
        if q.shape != (model.nq,):
            raise DenocError(f"--q0 needs {model.nq} numbers for '{model.name}' (nq = {model.nq}), got {q.size}")
        what = "the given configuration"
    if model.loops:
        q = project_configuration(model, q)
        if "closed" not in what:
            cuts = any(isinstance(lc, LoopClosure) for lc in model.loops)
            what += " projected onto the " + ("loops" if cuts else "joint couplings")
    elif getattr(args, "limits", False) and _start_method(args) in FIXED_STEP_METHODS + IMPLICIT_METHODS:
        q, what = _inside_limits(model, q, what)
    return q, what


def _start_method(args) -> str:
    """The method for the start's limits: rk4 when none is given, and for the contact stepper (a
    start inside the limits is the sensible one there too)."""
    if args.method is None or ground.contact_method(args):
        return "rk4"
    return method_name(args.method)


def _inside_limits(model, q, what):
    """q with the limited joints outside their limits put on them (the run would start there
    anyway, with a warning), and the description saying so."""
    if isinstance(model, MimicModel):  # a mimic joint's limits act on the joint it mimics
        q, moved = clamp_to_limits(model, q, *mimic_limit_arrays(model))
    else:
        q, moved = clamp_to_limits(model, q, *limit_arrays(model))
    if moved:
        joints = ", ".join(f"{name} = {new:.4g}" for name, _, new in moved)
        what += f" with {joints} (on {'its limit' if len(moved) == 1 else 'their limits'})"
    return q, what


def _is_float(text: str) -> bool:
    """A number as written in a URDF or a CSV file (Python's float() also takes 1_0)."""
    try:
        float(text)
    except ValueError:
        return False
    return "_" not in text


def torque_input(model, spec: str):
    """(tau for simulate, description) of ``--torque``; a DenocError naming a bad value or file."""
    if spec in ("zero", "none", "0"):
        return None, "no torque"
    if spec in ("gravity-compensation", "gravity"):

        def tau(t, q, v):
            return gravity_torques(model, q)

        return tau, "gravity compensation tau = g(q)"
    path = Path(spec)
    if path.suffix.lower() not in (".npy", ".csv", ".txt"):
        hint = did_you_mean(spec, ("zero", "gravity-compensation"))
        raise DenocError(f"--torque must be zero, gravity-compensation or a .npy / .csv file, got '{spec}'{hint}")
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


#: a --dt suggested to keep the damping must not need more steps than this (RK4 compiled: ~20 s on allegro)
MAX_SUGGESTED_STEPS = 2_000_000

#: the adaptive explicit methods are refused when the damping would hold them to more steps than this
MAX_ADAPTIVE_STEPS = 1_000_000

#: the rotor inertia that --armature is advised with for a joint that moves no inertia
ARMATURE_HINT = 1e-4


def _nice_dt(max_dt: float, duration: float) -> float | None:
    """The longest 1, 2 or 5 x 10^k step below 0.9 max_dt that divides ``duration`` (None: none)."""
    if not (math.isfinite(max_dt) and max_dt > 0):
        return None
    for k in range(int(math.floor(math.log10(0.9 * max_dt))), -13, -1):
        for m in (5, 2, 1):
            dt = m * 10.0**k
            steps = duration / dt
            if dt <= 0.9 * max_dt and abs(steps - round(steps)) <= 1e-9 * max(1.0, steps):
                return float(f"{dt:.0e}")
    return None


def _damping_text(model, stiff, method: str, dt: float, where: str = "") -> str:
    """Why the joint dampers make ``model`` stiff (``where``: for which method and step), with the
    joint named."""
    unit_d, unit_i = ("N s/m", "kg") if stiff.linear else ("N m s/rad", "kg m^2")
    limit = stiff.max_dt(method)
    stable = f"; {method} is stable only for dt < {limit:.2g} s" if math.isfinite(limit) and where else ""
    return (
        f"the joint damping of '{model.name}' is too stiff{where}: joint "
        f"'{stiff.joint}' (link '{stiff.link}', {stiff.mass:.3g} kg) has damping d = {stiff.damping:g} "
        f"{unit_d} on an effective inertia I = {stiff.inertia:.3g} {unit_i}, a time constant I/d = "
        f"{stiff.inertia / stiff.damping:.2g} s (fastest damped motion: {stiff.time_constant:.2g} s){stable}"
    )


def _damping_remedy(model, stiff, method: str, duration: float) -> str:
    """The options that help: an implicit method (a tree), --no-passive, and a --dt that keeps the
    damping when one is practical."""
    text = ""
    if not isinstance(model, MimicModel) and not model.loops:
        text = "; --method sdirk2 (implicit, Newton with the analytical derivatives) keeps the damping at this step"
    text += "; --no-passive simulates without the URDF's joint damping (and springs)"
    dt = _nice_dt(stiff.max_dt(method), duration) if method in FIXED_STEP_METHODS else None
    if dt is not None and duration / dt <= MAX_SUGGESTED_STEPS:
        text += f", or --dt {dt:g} keeps it ({round(duration / dt):,} steps)"
    return text


def _check_damping(model, q0, method: str, dt: float, duration: float) -> None:
    """Stop at once when the joint dampers make an explicit method blow up (fixed step) or crawl
    (adaptive), naming the joint, the time constant and the options that help."""
    if method not in STABILITY_LIMIT:
        return
    stiff = damping_stiffness(model, q0)
    if stiff is None:
        return
    limit = stiff.max_dt(method)
    if method in FIXED_STEP_METHODS:
        if dt <= limit:
            return
        where = f" for {method} at dt = {dt:g} s"
        raise DenocError(
            _damping_text(model, stiff, method, dt, where) + _damping_remedy(model, stiff, method, duration)
        )
    steps = duration / limit
    if steps > MAX_ADAPTIVE_STEPS:
        raise DenocError(
            _damping_text(model, stiff, method, dt, f" for {method}")
            + f": it would take about {steps:.1g} steps; --no-passive simulates without the URDF's joint "
            "damping (and springs)"
        )


def _failure_hint(model, q0, method: str, dt: float, duration: float, passive: bool, text: str) -> str:
    """What to try after a run that stopped: a joint that moves no inertia wants a rotor inertia;
    a run the joint dampers made stiff (--no-passive); the contact solver, a shorter step; else a
    shorter step or an implicit method."""
    if "contact solver did not converge" in text:
        return f"; try --dt {dt / 10:g} (a robot that folds up, --no-hold, rests on many contacts)"
    if "singular" in text and "(freeflyer)" in text:  # --armature adds nothing on a free-flyer
        return "; a floating base needs a mass: give its link a mass and inertia in the URDF (or MJCF)"
    if "singular" in text:
        return (
            f"; --armature {ARMATURE_HINT:g} gives every joint a rotor inertia of {ARMATURE_HINT:g} kg m^2 "
            "(or give that link a mass and inertia in the URDF)"
        )
    stiff = damping_stiffness(model, q0) if passive else None
    if stiff is not None and stiff.rate * dt > STABILITY_LIMIT["rk4"]:
        return "; " + _damping_text(model, stiff, method, dt) + _damping_remedy(model, stiff, method, duration)
    if method not in FIXED_STEP_METHODS:
        return ""
    implicit = "sdirk2" if not isinstance(model, MimicModel) and not model.loops else "Radau"
    return f"; try --dt {dt / 10:g} or the implicit --method {implicit}"


def _with_armature(model, armature: float):
    """``model`` with ``armature`` added on every degree of freedom but a free-flyer's."""
    tree = model.tree if isinstance(model, MimicModel) else model
    extra = np.full(tree.nv, armature)
    if tree.floating_base:
        extra[: tree.nv_joint[0]] = 0.0
    tree = tree.replace(armature=np.asarray(tree.armature) + extra)
    return MimicModel(tree) if isinstance(model, MimicModel) else tree


def _passive_what(model, args) -> str:
    """What the simulating line says about the joint dampers, springs and the added armature."""
    tree = getattr(model, "tree", model)
    springs = [x for x, a in (("damping", tree.damping), ("springs", tree.stiffness)) if np.any(a)]
    text = ""
    if springs and args.passive:
        verb, them = ("act", "them") if len(springs) > 1 else ("acts", "it")
        text = f"; the joint {' and '.join(springs)} {verb} (--no-passive drops {them})"
    elif springs:
        text = f"; without the joint {' and '.join(springs)} (--no-passive)"
    if args.armature > 0:
        text += f"; rotor inertia {args.armature:g} added on each joint (--armature)"
    return text


def _energy_summary(traj, method: str, dt: float) -> None:
    """The energy balance against its scale (:attr:`Trajectory.energy_scale`: the peak kinetic
    energy, the potential energy's variation, the work done, or a floor for a robot that hardly
    moves), and a warning when it is off by more than 1 % of that scale (5 % when joint-limit
    stops happened: a stop inside a step makes the balance first order in dt, measured on panda:
    1.1 % at dt 1e-3, 0.2 % at 2.5e-4)."""
    drift = float(np.max(np.abs(traj.energy_drift())))
    scales = traj.energy_scales()
    # a stop that took nothing measurable (a round-off touch, 1e-37 J) is not reported (the balance's rule)
    stops = "W_stops" in traj.balance_text()
    if stops:
        print(
            f"joint limits: the stops at the limits took {traj.limit_work[-1]:.3g} J "
            "(a plastic impact each; --no-limits lets the joints pass their limits)"
        )
    what, scale = max(scales.items(), key=lambda kv: kv[1])
    balance, parts = traj.balance_text(), traj.balance_parts()
    parts = f"; {parts}" if parts else ""
    if scale <= 0:  # no motion, no work, no mass: no energy at play
        print(f"energy drift: max |{balance}| = {drift:.3g} J (the robot did not move and no work was done)")
        return
    rel = drift / scale
    if what == "floor":
        name = "floor 1e-6 m g L"
        print(
            f"energy drift: max |{balance}| = {drift:.3g} J (the robot hardly moved: peak kinetic "
            f"energy {scales['peak kinetic energy']:.2g} J; {rel:.2g} of 1e-6 m g L = {scale:.3g} J){parts}"
        )
    else:
        name = what
        print(f"energy drift: max |{balance}| = {drift:.3g} J = {rel:.3g} of the {name} ({scale:.4g} J){parts}")
    if rel <= (5e-2 if stops else 1e-2):
        return
    if stops:
        print(
            f"warning: the energy balance is off by {rel:.0%} of the {name}: the joint-limit stops end inside "
            f"steps (a stop's error is first order in dt); try --dt {dt / 10:g}, or --no-limits"
        )
    else:
        if method in FIXED_STEP_METHODS:
            why = f"the step is too long for this motion; try --dt {dt / 10:g}"
        elif method == ground.METHOD:
            why = f"the contact time stepper is first order in dt; try --dt {dt / 10:g}"
        else:
            why = f"{method} lost accuracy on this motion; try --method rk4 with a short --dt"

        print(f"warning: the energy balance is off by {rel:.0%} of the {name}: {why}")


#: a trajectory with more states is plotted a state in k (the plots draw at most a few thousand
#: points per curve anyway; the energies and the balance of the summary line use every state)
MAX_PLOTTED_STATES = 200_000


def _for_plots(traj):
    """``traj``, or every k-th state of it when it has more than :data:`MAX_PLOTTED_STATES`
    (a run streamed to disk: the plots then read a fraction of the file)."""
    k = -(-len(traj) // MAX_PLOTTED_STATES)
    return traj if k <= 1 else traj[::k]


def _check_against_pinocchio(src, model, seed: int) -> int:

    too_big = too_big_for_pinocchio(model, SIMULATE_CHECK_MAX_BYTES)
    if too_big:
        print(f"check against Pinocchio skipped: {too_big} (run 'denoc-bridge validate' on a shorter chain)")
        return 0
    pm, origin = pinocchio_model(src, model)
    report = validation.compare_with_pinocchio(
        model, pm, samples=2, seed=seed, quantities=("forward_dynamics", "forward_kinematics")
    )
    worst = max(report.checks, key=lambda c: c.max_error)
    if report.passed:
        print(
            f"checked against Pinocchio ({origin}, 2 random states): forward dynamics and kinematics agree "
            f"to {report.tolerance:g} (largest relative difference {worst.max_error:.1e}, {worst.quantity}; "
            "'denoc-bridge validate' checks every quantity)"
        )
        return 0
    print(f"MISMATCH against Pinocchio ({origin}):")
    report_table(report)
    print("not simulating: denoc_bridge and Pinocchio disagree on this model (--no-validate simulates anyway)")
    return EXIT_MISMATCH


def simulate_command(args) -> int:
    positive_option(args.duration, "--duration")
    positive_option(args.dt, "--dt")
    checked_seed(args.seed)
    if not (math.isfinite(args.armature) and args.armature >= 0):
        raise DenocError(f"--armature must be a rotor inertia >= 0 (kg m^2), got {args.armature:g}")
    if not (math.isfinite(args.fps) and 0 < args.fps <= MAX_FPS):
        raise DenocError(f"--fps must be a frame rate between 0 and {MAX_FPS:g} per second, got {args.fps:g}")
    for flag, no in (("html", "no_html"), ("plot", "no_plot")):
        if getattr(args, flag) and getattr(args, no):
            raise DenocError(f"--{flag} and --no-{flag} contradict each other; give one")
    if args.no_forces and args.no_html:
        raise DenocError("--no-forces leaves the contact forces out of the animation, and --no-html writes none")

    contact_method = ground.contact_method(args)
    if args.ground is False and contact_method:
        raise DenocError(f"--method {args.method} is the contact time stepper: it needs the ground (no --no-ground)")
    try:
        method = method_name("rk4" if args.method is None or contact_method else args.method)
    except DenocError as exc:
        raise DenocError(f"--{exc}") from None
    check_whole_steps(args, method)
    src = resolve_robot(args.robot)
    # the files named by --html / --plot; the default names are chosen once the model is loaded
    want_html, want_png = not args.no_html, not args.no_plot
    html = Path(args.html) if args.html else None
    png = Path(args.plot) if args.plot else None
    save = Path(args.save) if args.save else None
    if save is not None and save.suffix.lower() != ".npz" and not save.is_dir():
        save = save.with_name(save.name + ".npz")  # what numpy writes
    stream = Path(args.stream) if args.stream else None
    if stream is not None:
        if save is not None:
            raise DenocError("--stream writes the trajectory as the run goes; give --save or --stream, not both")
        if method not in FIXED_STEP_METHODS + IMPLICIT_METHODS:
            raise DenocError(
                f"--stream streams the fixed-step methods (rk4, euler, implicit-euler, sdirk2), not --method {method}"
            )
        if stream.suffix.lower() != ".npy" and not stream.is_dir():
            stream = stream.with_name(stream.name + ".npy")  # what simulate(save_to=) writes
    if args.save_every is not None and args.save_every < 1:
        raise DenocError(f"--save-every must be a positive whole number of steps, got {args.save_every}")
    if args.save_every is not None and method not in FIXED_STEP_METHODS + IMPLICIT_METHODS:
        raise DenocError(f"--save-every is for the fixed-step methods; --method {method} saves every --dt")
    if png is not None and png.suffix.lower().lstrip(".") not in PLOT_FORMATS:
        raise DenocError(
            f"--plot: cannot write a plot as '{png.name}': give a file ending in "
            f"{', '.join('.' + f for f in PLOT_FORMATS[:4])}, ..."
        )
    for path, option in ((html, "--html"), (png, "--plot"), (save, "--save"), (stream, "--stream")):
        checked_output_file(path, option)
    export_html: Callable[..., Path] | None = None  # set when html is kept
    if want_html:
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
            want_html = False
    if want_png:
        try:
            pyplot()  # a missing matplotlib shows here, before the simulation
        except DenocError as exc:
            if args.plot:
                raise DenocError(f"--plot: {exc}") from None
            print(f"denoc-bridge: note: no plot ({exc}; --no-plot silences this)", file=sys.stderr)
            want_png = False
    model = load_robot(args.robot, floating_base=args.floating, mimic=args.mimic)
    with_ground = ground.wants_ground(args, model)
    sampling = ground.mesh_sampling(args)
    points = ground.contact_candidates(model, ground.by_default(args), sampling) if with_ground else None
    with_ground = points is not None
    ground.check_options(args, model, with_ground)
    if with_ground:
        method = ground.METHOD
    base = "free-flyer base" if model.floating_base else "fixed base"
    loops = f", {describe_loops(model.loops)}" if model.loops else ""
    if args.mimic:
        loops += f", {_count(len(model.mimic), '<mimic> joint')} as constraints"
    print(f"{model.name}: {model.nv} DOF ({base}{loops}); {src.path or src.origin}")
    key = outputs.source_key(src)
    defaults: list[Path] = []  # the outputs named by default, after the model
    if (want_html and html is None) or (want_png and png is None):
        named = model.name if src.origin == "file" else src.name  # a file's: <robot name> / <mujoco model>
        stem, why = outputs.default_base(Path("."), outputs.file_stem(named, Path(src.path or "robot").stem), key)
        if want_html and html is None:
            html = Path(f"{stem}.html")
            checked_output_file(html, "--html")
            defaults.append(html)
        if want_png and png is None:
            png = Path(f"{stem}.png")
            checked_output_file(png, "--plot")
            defaults.append(png)
        if why:
            print(f"note: {why}; this run writes {' and '.join(map(str, defaults))} (--html and --plot name them)")
    if model.loops and method not in FIXED_STEP_METHODS and not with_ground:
        raise DenocError(
            f"'{model.name}' has {describe_loops(model.loops)}: simulate it with --method rk4 or euler (the "
            f"projection onto the loops after each step does not fit the adaptive {method})"
        )
    tau, tau_what = torque_input(model, args.torque)
    q0, q0_what = _start(model, args)
    contact: dict[str, Any] = {}
    if points is not None:
        lift = bool(model.floating_base) and not (args.q0 and _is_float(args.q0[0]))  # not numbers: lifted
        q0, contact, drop = ground.ground_run(args, model, q0, points, lift)
        if drop is not None:
            q0_what += f", its lowest point {drop:g} m above the ground"
        frequency, hold, floor = ground.hold_frequency(args), contact["hold"], contact["contact"]
        if hold is not None:
            tau_what = "no torque but the hold's" if tau is None else f"{tau_what} and the hold's"
        print(
            f"ground: z = 0, friction {floor.mu:g}, {_count(len(points), 'contact point')} from the "
            "collision shapes"
            + (f"; posture hold at {frequency:g} Hz (--no-hold: none)" if hold is not None else "; no posture hold")
        )
    if args.limits and method not in FIXED_STEP_METHODS + IMPLICIT_METHODS + ("contact-euler",) and not model.loops:
        print(
            f"note: the joint limits hold with the fixed-step and contact methods only; {method} lets the joints "
            "pass them"
        )
    sim_model = _with_armature(model, args.armature) if args.armature > 0 else model
    if args.passive:
        _check_damping(sim_model, q0, method, args.dt, args.duration)
    if not args.no_validate:
        status = _check_against_pinocchio(src, model, args.seed)
        if status:
            return status
    passive = _passive_what(model, args)
    print(
        f"simulating {args.duration:g} s with {method}, dt = {args.dt:g} s; start: {q0_what}, at rest; "
        f"{tau_what}{passive}",
        flush=True,
    )
    # the progress bar (rich, on stderr) when stderr is a terminal; in a log file it would only be noise
    try:
        traj = simulate(
            sim_model,
            q0,
            np.zeros(model.nv),
            args.duration,
            args.dt,
            tau,
            method,
            passive=args.passive,
            **(
                {**contact, "limits": args.limits}
                if contact
                else {
                    "progress": bool(sys.stderr.isatty()),
                    "limits": args.limits,
                    "save_to": stream,
                }
            ),
            save_every=args.save_every,
        )
    except (SimulationError, SingularInertiaError) as exc:  # the contact stepper checks no start
        # drop the Python-API advice
        text = str(exc).split("; the trajectory up to", 1)[0].replace("; raise max_sweeps or lower dt", "")
        hint = _failure_hint(sim_model, q0, method, args.dt, args.duration, args.passive, text)
        raise DenocError(f"{text}{hint}") from None
    if len(traj) == 0:  # Ctrl-C before the first step
        print("interrupted before the first step: nothing simulated, nothing written", file=sys.stderr)
        return 130
    # the time simulated: the steps' (the saved states may stop short of it: --save-every)
    fixed = method in FIXED_STEP_METHODS + IMPLICIT_METHODS + (ground.METHOD,) and np.isfinite(traj.dt)
    simulated = traj.n_steps * traj.dt if fixed else traj.t[-1] - traj.t[0]
    rate = simulated / traj.wall_time if traj.wall_time > 0 else float("inf")
    saved = "1 saved state" if len(traj) == 1 else f"{len(traj)} saved states"
    print(
        f"{traj.status}: {traj.n_steps} steps, {saved}, {traj.n_evaluations} forward dynamics "
        f"in {traj.wall_time:.3g} s wall ({rate:.3g} x real time)" + (f"; {traj.message}" if traj.message else "")
    )
    if len(traj) > 1:
        if with_ground:
            ground.contact_summary(traj, model)
        _energy_summary(traj, method, args.dt)
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
    if stream is not None:
        written.insert(0, ("trajectory", stream))
    pictures: list[Path] = []
    if want_png and png is not None:
        written.append(("plots", plot_summary(_for_plots(traj) if stream else traj, png)))
        pictures.append(png)
    if want_html and html is not None:
        assert export_html is not None  # want_html is dropped when the import failed
        animation = export_html(model, traj, html, fps=args.fps, color_by="module", forces=not args.no_forces)
        written.append(("animation", Path(animation)))
        pictures.append(html)
    for what, path in written:
        print(f"wrote {what:<10} {path.resolve()}")
    unrecorded = outputs.record_written(pictures, key, defaults)
    if unrecorded:
        print(f"denoc-bridge: note: {unrecorded}", file=sys.stderr)
    if any(what == "animation" for what, _ in written):
        print("open the .html file in a browser (it needs no server and no network)")
    return 130 if traj.status == "interrupted" else 0
