"""The ``denoc-bridge`` command line.

Examples::

    denoc-bridge simulate panda --duration 2          # validate, simulate, write panda.html and panda.png
    denoc-bridge simulate fourbar --duration 5 --plot fourbar.png --save fourbar.npz
    denoc-bridge simulate chain:1000:spatial --duration 0.5 --no-html
    denoc-bridge simulate puma560 --torque gravity-compensation --q0 0 0.5 -0.5 0 0 0
    denoc-bridge simulate robot.urdf --torque tau.csv --method RK45
    denoc-bridge simulate pr2 --mimic --duration 0.5  # <mimic> joints as constraints
    denoc-bridge info panda                           # DOF and kinematic-module tree
    denoc-bridge info talos --fixed
    denoc-bridge info path/to/robot.urdf --floating
    denoc-bridge info pr2 --mimic                     # <mimic> joints as constraints (reduced nq, nv)
    denoc-bridge validate solo12 --samples 5          # compare with Pinocchio, exit 1 on mismatch
    denoc-bridge validate pr2 --mimic                 # against pin.buildModelFromUrdf(path, mimic=True)
    denoc-bridge info gripper                         # the 4-DOF gripper of the papers (000 §3.1)
    denoc-bridge bench --quick                        # the speed table (a 10-second smoke run)
    denoc-bridge sweep rope --grid mass_scale=0.5,1,2 --grid "q0[0]=-0.5:0.5:5" --out sweep_rope
    denoc-bridge sweep panda --cases cases.csv --out runs --scheduler tcp://10.0.0.5:8786

ROBOT is a URDF file, an example-robot-data name (panda, talos, solo12, icub, ...) or a
generator spec: rope (000 §4, 100 DOF), chain:N[:planar|spatial] (N cylinders, e.g.
chain:1000:spatial), gripper (000 §3.1), puma560 (003), fourbar (004, a closed loop).

A user mistake (unknown robot, malformed file, bad option) prints one line on
stderr and exits with status 2; it never prints a traceback.  A mismatch with
Pinocchio exits with status 1.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np

from . import __version__
from ._text import count as _count
from .errors import DenocError
from .joints import AXIAL, JointType

EXIT_MISMATCH = 1
EXIT_USAGE = 2
#: Pinocchio's createData takes about 64 n^3 bytes on a chain n links deep: the checks
#: against Pinocchio refuse (validate) or skip (simulate) models above these estimates
VALIDATE_MAX_BYTES = 2 * 2**30
SIMULATE_CHECK_MAX_BYTES = 300 * 2**20
MAX_FPS = 1000.0  # frames per second of the animation (browsers draw at most 240)
ROBOT_HELP = (
    "a URDF file, an example-robot-data name (panda, talos, solo12, ...) or a generator spec: "
    "rope, chain:N[:planar|spatial] (e.g. chain:1000:spatial), gripper, puma560, fourbar"
)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit 2) instead of the usage block."""

    def error(self, message):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _robot_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("robot", metavar="ROBOT", help=ROBOT_HELP)
    base = p.add_mutually_exclusive_group()
    base.add_argument(
        "--floating",
        dest="floating",
        action="store_true",
        default=None,
        help="attach the root link with a free-flyer joint",
    )
    base.add_argument(
        "--fixed",
        dest="floating",
        action="store_false",
        help="fixed base (default for files and generators; example-robot-data robots use their usual base)",
    )


def _examples(*commands) -> str:
    lines = [
        line
        for line in __doc__.split("Examples::", 1)[1].split("ROBOT is", 1)[0].splitlines()
        if any(line.strip().startswith(f"denoc-bridge {c}") for c in commands)
    ]
    return "examples:\n" + "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="denoc-bridge",
        description=textwrap.fill(
            "DeNOC recursive dynamics on kinematic modules, checked against Pinocchio: "
            "load a robot, validate it against Pinocchio, simulate it, write an HTML "
            "animation and plots.",
            90,
        ),
        epilog="examples:\n" + __doc__.split("Examples::", 1)[1].strip("\n").rstrip(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"denoc-bridge {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    raw = argparse.RawDescriptionHelpFormatter

    def wrap(text):
        return textwrap.fill(text, 90)

    info = sub.add_parser(
        "info",
        help="print the DOF and the kinematic-module tree of a robot",
        description="Print the DOF and the kinematic-module tree of a robot.",
        epilog=_examples("info"),
        formatter_class=raw,
    )
    _robot_arguments(info)
    info.add_argument(
        "--mimic",
        action="store_true",
        help="<mimic> joints as constraints, as pin.buildModelFromUrdf(path, mimic=True)",
    )

    val = sub.add_parser(
        "validate",
        help="compare inverse/forward dynamics, GIM and inverse GIM with Pinocchio",
        description=wrap(
            "Compare denoc_bridge with Pinocchio on random states (inverse dynamics, "
            "GIM, forward dynamics, inverse GIM, forward kinematics) and print a "
            "table; exit 1 on a mismatch."
        ),
        epilog=_examples("validate"),
        formatter_class=raw,
    )
    _robot_arguments(val)
    val.add_argument(
        "--mimic",
        action="store_true",
        help="<mimic> joints as constraints, against pin.buildModelFromUrdf(path, mimic=True)",
    )
    val.add_argument("--samples", type=int, default=3, help="number of random states (default 3)")
    val.add_argument("--tol", type=float, default=1e-9, help="relative tolerance (default 1e-9)")
    val.add_argument("--seed", type=int, default=0, help="random seed (default 0)")

    sim = sub.add_parser(
        "simulate",
        help="validate, simulate, and write an HTML animation and a plot",
        description=wrap(
            "Load ROBOT, check it against Pinocchio (2 random states), simulate it with a progress "
            "bar, print a summary, and write ROBOTNAME.html (animation) and ROBOTNAME.png (plots) "
            "into the current folder unless told otherwise.  Start: the neutral configuration (the "
            "four-bar: a closed, tilted one; chains and the rope: horizontal), at rest."
        ),
        epilog=_examples("simulate"),
        formatter_class=raw,
    )
    _robot_arguments(sim)
    sim.add_argument(
        "--mimic",
        action="store_true",
        help="<mimic> joints as constraints (reduced coordinates, as pin.buildModelFromUrdf(path, mimic=True))",
    )
    sim.add_argument("--duration", type=float, default=2.0, metavar="S", help="simulated seconds (default 2)")
    sim.add_argument(
        "--dt",
        type=float,
        default=1e-3,
        metavar="DT",
        help="time step (fixed-step methods) or interval of the saved states (adaptive ones); default 0.001",
    )
    sim.add_argument(
        "--method",
        default="rk4",
        metavar="METHOD",
        help="rk4 (default), euler, or scipy's RK45, DOP853, Radau, BDF, LSODA",
    )
    sim.add_argument(
        "--q0", nargs="+", metavar="Q", help="start configuration: nq numbers, or 'neutral' (default) or 'random'"
    )
    sim.add_argument(
        "--torque",
        default="zero",
        metavar="TAU",
        help="zero (default), gravity-compensation (tau = g(q)), or a .npy / .csv file with one row "
        "of nv torques (constant) or one row per step",
    )
    sim.add_argument("--html", metavar="OUT.html", help="animation file (default ROBOTNAME.html)")
    sim.add_argument("--plot", metavar="OUT.png", help="plot file (default ROBOTNAME.png)")
    sim.add_argument("--save", metavar="OUT.npz", help="also save the trajectory (Trajectory.to_npz)")
    sim.add_argument("--no-html", action="store_true", help="do not write the HTML animation")
    sim.add_argument("--no-plot", action="store_true", help="do not write the plot")
    sim.add_argument("--no-validate", action="store_true", help="skip the check against Pinocchio")
    sim.add_argument("--fps", type=float, default=30.0, help="frame rate of the animation (default 30)")
    sim.add_argument("--seed", type=int, default=0, help="random seed of --q0 random and of the check (default 0)")

    bench = sub.add_parser(
        "bench",
        help="run the speed benchmark and print its table",
        description=wrap(
            "The speed benchmark of the README (denoc_bridge next to Pinocchio and MuJoCo): "
            "about 2 minutes, --quick about 10 seconds (a smoke run, not a measurement).  Progress "
            "goes to stderr, the tables to stdout."
        ),
        epilog=_examples("bench"),
        formatter_class=raw,
    )
    bench.add_argument("--quick", action="store_true", help="small sizes only (a smoke run)")
    bench.add_argument("--repeats", type=int, default=None, help="repeats per timing (default 9, quick 3)")
    bench.add_argument("--out", metavar="DIR", help="also write speed.json, speed.md and scaling.png there")

    sw = sub.add_parser(
        "sweep",
        help="run many simulations (a CSV of cases or a grid) on a Dask cluster",
        description=wrap(
            "One simulation per case, on a Dask LocalCluster of --workers processes (default) or on "
            "the cluster at --scheduler; each finished case is saved in DIR/cases (CASE.npz: the "
            "trajectory, CASE.json: its row), the table in DIR/summary.csv (and summary.parquet with "
            "pyarrow).  Run it again with the same DIR to finish a sweep that was interrupted.  Case "
            "columns: q0[i], v0[i], tau[i] (or q0.JOINT, ...), t_final, dt, method, and the model "
            "parameters mass_scale, mass.LINK, length_scale, length_scale.LINK, damping, "
            "damping.JOINT, stiffness, stiffness.JOINT, gravity_scale (see denoc_bridge.sweeps)."
        ),
        epilog=_examples("sweep"),
        formatter_class=raw,
    )
    _robot_arguments(sw)
    cases = sw.add_mutually_exclusive_group(required=True)
    cases.add_argument("--cases", metavar="CASES.csv", help="one case per row (header: the case columns)")
    cases.add_argument(
        "--grid",
        action="append",
        metavar="NAME=VALUES",
        help="a grid axis: NAME=v1,v2,... or NAME=start:stop:count (repeat for a full factorial design)",
    )
    sw.add_argument("--out", metavar="DIR", required=True, help="output folder (created; reused to resume)")
    sw.add_argument("--duration", type=float, default=1.0, metavar="S", help="simulated seconds (default 1)")
    sw.add_argument("--dt", type=float, default=1e-3, metavar="DT", help="time step (default 0.001)")
    sw.add_argument("--method", default="rk4", metavar="METHOD", help="rk4 (default), euler, RK45, ...")
    sw.add_argument("--save-every", type=int, default=None, metavar="K", help="keep every K-th step")
    sw.add_argument(
        "--metrics",
        default=",".join(("t_end", "wall_time", "energy_drift", "total_energy_end")),
        help="summary columns, comma-separated (default %(default)s; also kinetic_energy_end, "
        "potential_energy_end, max_abs_v, n_steps, q_end, v_end)",
    )
    where = sw.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDR", help="run on the Dask cluster at ADDR (tcp://HOST:PORT)")
    where.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="worker processes of the local cluster (default: the number of cores)",
    )
    where.add_argument("--inline", action="store_true", help="run in this process, without Dask")
    sw.add_argument("--batch-size", type=int, default=16, metavar="N", help="cases per task (default 16)")
    sw.add_argument("--no-trajectories", action="store_true", help="save the rows only, not the trajectories")
    sw.add_argument(
        "--restart",
        action="store_true",
        help="run every case again (default: resume; a DIR holding a different sweep is refused)",
    )
    return parser


def _fmt_axis(model, k: int) -> str:
    jt = JointType(model.joint_type[k])
    if jt not in AXIAL:
        return ""
    a = model.joint_axis[k]
    return "(" + ", ".join(f"{x:+.3f}" for x in a) + ")"


def module_tree(model, notes=None) -> str:
    """The kinematic-module tree as text (used by ``denoc-bridge info``); ``notes`` maps joint
    names to a remark printed after the joint."""
    notes = notes or {}
    lines = [f"base '{model.base_name}'" + (" (world; the root link floats)" if model.floating_base else "")]
    width = max([len(n) for n in model.joint_names] + [5])

    def emit(i: int, prefix: str, last: bool) -> None:
        mod = model.modules[i]
        branch = "└── " if last else "├── "
        lines.append(
            f"{prefix}{branch}M{i + 1}: {mod.n_links} link{'s' if mod.n_links != 1 else ''}, "
            f"{mod.nv} DOF  (v[{mod.v_start}:{mod.v_start + mod.nv}])"
        )
        inner = prefix + ("    " if last else "│   ")
        bar = "│   " if mod.children else "    "
        for k in mod.links:
            jt = JointType(model.joint_type[k])
            note = notes.get(model.joint_names[k], "")
            lines.append(
                f"{inner}{bar}{model.joint_names[k]:<{width}}  {jt.label:<11} {_fmt_axis(model, k):<26}"
                f"-> {model.link_names[k]}" + (f"  ({note})" if note else "")
            )
        for n, c in enumerate(mod.children):
            emit(c, inner, n == len(mod.children) - 1)

    roots = [i for i in range(model.n_modules) if model.module_parent[i] < 0]
    for n, i in enumerate(roots):
        emit(i, "", n == len(roots) - 1)
    return "\n".join(lines)


def _info(args) -> int:
    from .loops import body_name
    from .robots import load_robot, resolve_robot

    src = resolve_robot(args.robot)
    model = load_robot(args.robot, floating_base=args.floating, mimic=args.mimic)
    print(f"{model.name}: {src.path} ({src.origin})" if src.path else f"{model.name}: {src.origin}")
    base = "free-flyer base" if model.floating_base else f"fixed base '{model.base_name}'"
    print(
        f"  {base}; {model.n_links} moving links; nq = {model.nq}, nv = {model.nv}; "
        f"total mass {model.total_mass:.4g} kg; gravity {tuple(float(g) for g in model.gravity)}"
    )
    print(
        f"  {model.n_modules} kinematic module{'s' if model.n_modules != 1 else ''} "
        "(maximal serial chains of links; 000 §1)"
    )
    notes = {}
    if args.mimic:
        tree = model.tree
        print(
            f"  {_count(len(model.mimic), '<mimic> joint')} as constraints q_s = multiplier q_m + offset "
            f"(as pin.buildModelFromUrdf(path, mimic=True)); the tree without them: nq = {tree.nq}, nv = {tree.nv}"
        )
        for r in model.mimic:
            notes[r.joint] = f"mimic: {r.multiplier:g} * {r.mimicked} {'+' if r.offset >= 0 else '-'} {abs(r.offset):g}"
    elif model.mimic:
        print(
            f"  {_count(len(model.mimic), '<mimic> joint')}, treated as independent joints "
            "(as pin.buildModelFromUrdf; --mimic makes them constraints)"
        )
    for lc in model.loops:
        print(
            f"  loop closure '{lc.name}': {lc.type} cut joint between '{body_name(model, lc.link1)}' and "
            f"'{body_name(model, lc.link2)}' ({lc.n_rows} constraint rows; 004 §2.3)"
        )
    if model.warnings:
        print(f"  {_count(len(model.warnings), 'loader note')}, e.g. {model.warnings[0]}")
    print()
    if args.mimic:
        print("module tree of the links (v ranges of the tree, mimic joints included):")
    print(module_tree(model.tree if args.mimic else model, notes))
    return 0


def _depth(model) -> int:
    depth = np.zeros(model.n_links, dtype=np.int64)
    for k in range(model.n_links):
        p = int(model.parent[k])
        depth[k] = 1 if p < 0 else depth[p] + 1
    return int(depth.max()) if model.n_links else 0


def _pinocchio_bytes(model) -> float:
    """About what Pinocchio's createData allocates: 64 n^3 bytes on a chain n links deep."""
    return 64.0 * model.n_links * _depth(model) ** 2


class _NativeStderr:
    """Capture what C++ code (urdfdom's parser errors) writes to file descriptor 2 while Pinocchio
    builds a model, so that a refused file gives one line, not the parser's log; ``.text`` holds it."""

    def __enter__(self):
        import tempfile

        sys.stderr.flush()
        self._file = tempfile.TemporaryFile()
        try:
            self._saved = os.dup(2)
            os.dup2(self._file.fileno(), 2)
        except OSError:  # no fd 2 (embedded interpreters): nothing to capture
            self._saved = None
        self.text = ""
        return self

    def __exit__(self, *exc):
        if self._saved is not None:
            os.dup2(self._saved, 2)
            os.close(self._saved)
        self._file.seek(0)
        self.text = self._file.read().decode(errors="replace").strip()
        self._file.close()
        return False


def _first_line(text: str) -> str:
    """The first line of a message, without urdfdom's "Error:" prefix and runs of spaces."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return " ".join(re.sub(r"^Error:\s*", "", line).split())


def _pinocchio_mimic_model(src, model):
    """(Pinocchio's mimic model, where it comes from) for a MimicModel."""
    import pinocchio as pin

    from .pinocchio_io import to_pinocchio

    root = (pin.JointModelFreeFlyer(),) if model.floating_base else ()
    build = pin.buildModelFromUrdf if src.path is not None else pin.buildModelFromXML
    try:
        with warnings.catch_warnings(), _NativeStderr() as native:
            warnings.simplefilter("ignore")
            return build(src.urdf, *root, mimic=True), "pin.buildModelFromUrdf(mimic=True)"
    except Exception as exc:
        refused = _first_line(str(exc)) or _first_line(native.text) or type(exc).__name__
    try:
        return to_pinocchio(model), f"to_pinocchio (Pinocchio's URDF parser refuses this file: {refused})"
    except Exception as exc:
        raise DenocError(
            f"Pinocchio cannot build the mimic model of '{model.name}' ({refused}; to_pinocchio: "
            f"{exc}); simulate --no-validate runs without the check"
        ) from None


def _pinocchio_model(src, model):
    """(Pinocchio model or None for ``to_pinocchio``, where it comes from)."""
    import pinocchio as pin

    from .mimic import MimicModel

    if isinstance(model, MimicModel):
        return _pinocchio_mimic_model(src, model)
    if src.build is not None and not model.floating_base:
        return None, "to_pinocchio (a generated model)"
    root = pin.JointModelFreeFlyer() if model.floating_base else None
    try:
        with _NativeStderr() as native:
            if src.path is None:
                pm = pin.buildModelFromXML(src.urdf, root) if root else pin.buildModelFromXML(src.urdf)
            else:
                pm = pin.buildModelFromUrdf(src.urdf, root) if root else pin.buildModelFromUrdf(src.urdf)
        return pm, "pin.buildModelFromUrdf"
    except Exception as exc:
        from .pinocchio_io import to_pinocchio

        why = _first_line(native.text) or _first_line(str(exc))
        return to_pinocchio(model), (
            "to_pinocchio (Pinocchio's URDF parser refuses this file" + (f": {why}" if why else "") + ")"
        )


def _too_big_for_pinocchio(model, limit: float) -> str:
    need = _pinocchio_bytes(model)
    if need <= limit:
        return ""
    return (
        f"Pinocchio's createData needs about 64 n^3 bytes on a chain n links deep: '{model.name}' "
        f"({model.n_links} links, {_depth(model)} deep) would take ~{need / 2**30:.3g} GB"
    )


def _report_table(report) -> None:
    """The validation report as a rich table (plain text when the output is not a terminal)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 100)
    table = Table(
        title=f"{report.model_name}: nv = {report.nv}, {_count(report.samples, 'random state')}, "
        f"tolerance {report.tolerance:g}",
        box=box.SIMPLE_HEAVY,
        title_justify="left",
    )
    table.add_column("quantity")
    table.add_column("Pinocchio")
    table.add_column("max rel. error", justify="right")
    table.add_column("vs exact", justify="right")
    table.add_column("result")
    notes = []
    for c in report.checks:
        exact = "" if c.max_error_vs_exact is None else f"{c.max_error_vs_exact:.1e}"
        result = "[green]ok[/green]" if c.passed else "[bold red]MISMATCH[/bold red]"
        mark = ""
        if c.notes:
            notes.append((c.quantity, list(dict.fromkeys(c.notes))))
            mark = f" ({len(notes)})"
        table.add_row(c.quantity + mark, c.reference, f"{c.max_error:.1e}", exact, result)
    console.print(table)
    for i, (quantity, lines) in enumerate(notes, start=1):
        for line in lines:
            console.print(f"  ({i}) {quantity}: {line}", markup=False)


def _validate(args) -> int:
    from .robots import load_robot, resolve_robot
    from .validation import compare_with_pinocchio

    if args.samples < 1:
        raise DenocError(f"--samples must be at least 1, got {args.samples}")
    if not args.tol > 0:
        raise DenocError(f"--tol must be positive, got {args.tol}")
    _seed(args.seed)
    src = resolve_robot(args.robot)
    model = load_robot(args.robot, floating_base=args.floating, mimic=args.mimic)
    too_big = _too_big_for_pinocchio(model, VALIDATE_MAX_BYTES)
    if too_big:
        raise DenocError(f"{too_big}; validate a shorter chain (the algorithms do not depend on the length)")
    pm, origin = _pinocchio_model(src, model)
    report = compare_with_pinocchio(model, pm, samples=args.samples, seed=args.seed, tol=args.tol)
    print(f"Pinocchio model from {origin}" + (" (the tree: loop closures cut)" if model.loops else ""))
    _report_table(report)
    print("all checks passed" if report.passed else "MISMATCH")
    return 0 if report.passed else EXIT_MISMATCH


# ------------------------------------------------------------------ simulate
def _seed(seed: int) -> int:
    if seed < 0:
        raise DenocError(f"--seed must be a non-negative integer, got {seed}")
    return seed


_PLOT_FORMATS = ("png", "pdf", "svg", "jpg", "jpeg", "tif", "tiff", "webp", "eps", "ps")


def _output_file(path: Path | None, option: str) -> Path | None:
    """Check, before the run, that ``path`` can be written: its folder exists, it is not a
    folder, and a file can be created there (probed and removed again)."""
    if path is None:
        return None
    if path.is_dir():
        raise DenocError(f"{option}: {path} is a folder; give a file name")
    if path.parent != Path("") and not path.parent.is_dir():
        raise DenocError(f"{option}: no such folder: {path.parent}")
    existed = path.exists()
    try:
        with open(path, "ab"):
            pass
    except OSError as exc:
        raise DenocError(f"{option}: cannot write {path}: {exc.strerror or exc}") from None
    if not existed:
        path.unlink()
    return path


def _whole_steps(args, method: str) -> None:
    """Refuse a --duration that is not a whole number of --dt steps for a fixed-step method."""
    from .simulation import FIXED_STEP_METHODS

    steps = args.duration / args.dt
    if method in FIXED_STEP_METHODS and abs(steps - round(steps)) > 1e-9 * max(1.0, steps):
        raise DenocError(
            f"--duration {args.duration:g} is not a whole number of steps --dt {args.dt:g} ({steps:.6g} steps)"
        )


def _positive(value: float, option: str) -> float:
    if not (math.isfinite(value) and value > 0):
        raise DenocError(f"{option} must be a positive number of seconds, got {value:g}")
    return value


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
    from .simulation import FIXED_STEP_METHODS

    damping = float(np.max(getattr(model, "tree", model).damping)) if model.nv else 0.0
    if method not in FIXED_STEP_METHODS:
        return ""
    because = f" (its joint damping, up to {damping:g} N m s/rad in the URDF, makes it stiff)" if damping > 0 else ""
    return f"; try --dt {dt / 10:g} or the implicit --method Radau{because}"


def _out_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "robot"


def _check_against_pinocchio(src, model, seed: int) -> int:
    from .validation import compare_with_pinocchio

    too_big = _too_big_for_pinocchio(model, SIMULATE_CHECK_MAX_BYTES)
    if too_big:
        print(f"check against Pinocchio skipped: {too_big} (run 'denoc-bridge validate' on a shorter chain)")
        return 0
    pm, origin = _pinocchio_model(src, model)
    report = compare_with_pinocchio(model, pm, samples=2, seed=seed)
    worst = max(report.checks, key=lambda c: c.max_error)
    if report.passed:
        print(
            f"checked against Pinocchio ({origin}, 2 random states): all {len(report.checks)} quantities agree "
            f"to {report.tolerance:g} (largest relative difference {worst.max_error:.1e}, {worst.quantity})"
        )
        return 0
    print(f"MISMATCH against Pinocchio ({origin}):")
    _report_table(report)
    print("not simulating: denoc_bridge and Pinocchio disagree on this model (--no-validate simulates anyway)")
    return EXIT_MISMATCH


def _simulate(args) -> int:
    import denoc_bridge as db

    from .robots import load_robot, resolve_robot

    _positive(args.duration, "--duration")
    _positive(args.dt, "--dt")
    _seed(args.seed)
    if not (math.isfinite(args.fps) and 0 < args.fps <= MAX_FPS):
        raise DenocError(f"--fps must be a frame rate between 0 and {MAX_FPS:g} per second, got {args.fps:g}")
    for flag, no in (("html", "no_html"), ("plot", "no_plot")):
        if getattr(args, flag) and getattr(args, no):
            raise DenocError(f"--{flag} and --no-{flag} contradict each other; give one")
    from .simulation import FIXED_STEP_METHODS, _method_name

    method = _method_name(args.method)
    _whole_steps(args, method)
    src = resolve_robot(args.robot)
    name = _out_name(src.name)
    html = None if args.no_html else Path(args.html or f"{name}.html")
    png = None if args.no_plot else Path(args.plot or f"{name}.png")
    save = Path(args.save) if args.save else None
    if save is not None and save.suffix.lower() != ".npz" and not save.is_dir():
        save = save.with_name(save.name + ".npz")  # what numpy writes
    if png is not None and png.suffix.lower().lstrip(".") not in _PLOT_FORMATS:
        raise DenocError(
            f"--plot: cannot write a plot as '{png.name}': give a file ending in "
            f"{', '.join('.' + f for f in _PLOT_FORMATS[:4])}, ..."
        )
    for path, option in ((html, "--html"), (png, "--plot"), (save, "--save")):
        _output_file(path, option)
    export_html = None
    if html is not None:
        try:
            from .viz import export_html
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
        from .plots import pyplot

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
        from .plots import plot_summary

        written.append(("plots", plot_summary(traj, png)))
    if html is not None:
        written.append(("animation", Path(export_html(model, traj, html, fps=args.fps, color_by="module"))))
    for what, path in written:
        print(f"wrote {what:<10} {path.resolve()}")
    if any(what == "animation" for what, _ in written):
        print("open the .html file in a browser (it needs no server and no network)")
    return 130 if traj.status == "interrupted" else 0


# ------------------------------------------------------------------ bench
def _bench(args) -> int:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    from . import benchmarking

    if args.repeats is not None and args.repeats < 1:
        raise DenocError(f"--repeats must be at least 1, got {args.repeats}")
    if args.out and os.path.exists(args.out) and not os.path.isdir(args.out):
        raise DenocError(f"--out: {args.out} is a file, not a folder")
    if args.out:  # before the run, not after two minutes of it
        try:
            os.makedirs(args.out, exist_ok=True)
            _output_file(Path(args.out) / "speed.json", "--out")
        except OSError as exc:
            raise DenocError(f"--out: cannot create {args.out}: {exc.strerror or exc}") from None

    def log(line):
        print(line, file=sys.stderr, flush=True)

    res = benchmarking.run(args.quick, repeats=args.repeats, log=log)
    console = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 130)
    m = res["machine"]
    table = Table(
        title=f"{'QUICK RUN (small sizes, not a measurement): ' if args.quick else ''}"
        f"{m['cpu']}, {m['cores']} cores; Python {m['python']}, NumPy {m['numpy']}, numba "
        f"{m['numba']}, Pinocchio {m['pinocchio']}, MuJoCo {m['mujoco']}; {m['date']}",
        box=box.SIMPLE_HEAVY,
        title_justify="left",
    )
    for col in ("case", "target", "measured", "met"):
        table.add_column(col)
    for case, target, measured, met in benchmarking.targets(res):
        table.add_row(
            case.replace("`", ""),
            target.replace("`", ""),
            measured,
            "[green]yes[/green]" if met else "[bold red]no[/bold red]",
        )
    console.print(table)
    scale = Table(title="time per call on the benchmark chain", box=box.SIMPLE_HEAVY, title_justify="left")
    for col in ("DOF", "denoc FD", "denoc ID", "FD ns/DOF", "pin.aba", "pin.rnea", "MuJoCo mj_forward"):
        scale.add_column(col, justify="right")
    fmt = benchmarking._fmt_us
    for r in res["scaling"]:
        scale.add_row(
            f"{r['nv']:,}",
            fmt(r["fd_us"]),
            fmt(r["id_us"]),
            f"{r['fd_ns_per_dof']:.1f}",
            *(fmt(r[k]) if k in r else "--" for k in ("aba_us", "rnea_us", "mj_forward_us")),
        )
    console.print(scale)
    for line in benchmarking.notes(res):
        console.print(line, markup=False)
    if args.out:
        import json

        from .plots import plot_scaling

        with open(os.path.join(args.out, "speed.json"), "w") as f:
            json.dump(res, f, indent=1)
        with open(os.path.join(args.out, "speed.md"), "w") as f:
            f.write(benchmarking.markdown(res))
        plot_scaling(res, os.path.join(args.out, "scaling.png"))
        print(f"wrote {os.path.abspath(args.out)}/speed.json, speed.md, scaling.png")
    return 0


# ------------------------------------------------------------------ sweep
def _grid_axis(text: str):
    """(name, values) of --grid NAME=v1,v2 or NAME=start:stop:count."""
    name, sep, values = text.partition("=")
    name = name.strip()
    if not sep or not name or not values.strip():
        raise DenocError(f"--grid {text!r}: expected NAME=v1,v2,... or NAME=start:stop:count")
    try:
        if ":" in values:
            start, stop, count = values.split(":")
            n = int(count)
            if n < 1:
                raise ValueError
            return name, np.linspace(float(start), float(stop), n)
        return name, [float(x) for x in values.split(",")]
    except ValueError:
        raise DenocError(
            f"--grid {text!r}: the values must be numbers (v1,v2,...) or start:stop:count with a positive whole count"
        ) from None


def _sweep(args) -> int:
    import denoc_bridge as db

    from .robots import load_robot
    from .simulation import ADAPTIVE_METHODS, FIXED_STEP_METHODS, _method_name
    from .sweeps import DifferentSweepError, _scheduler_problem, grid, read_cases

    _positive(args.duration, "--duration")
    _positive(args.dt, "--dt")
    try:
        method = _method_name(args.method)
    except DenocError:
        raise DenocError(
            f"--method must be one of {', '.join(FIXED_STEP_METHODS + ADAPTIVE_METHODS)}, got {args.method!r}"
        ) from None
    if args.save_every is not None and args.save_every < 1:
        raise DenocError(f"--save-every must be at least 1, got {args.save_every}")
    if args.workers is not None and args.workers < 1:
        raise DenocError(f"--workers must be at least 1, got {args.workers}")
    if args.batch_size < 1:
        raise DenocError(f"--batch-size must be at least 1, got {args.batch_size}")
    if args.scheduler and _scheduler_problem(args.scheduler):
        raise DenocError(
            f"--scheduler {args.scheduler!r} is not a Dask scheduler address (tcp://HOST:PORT): "
            f"{_scheduler_problem(args.scheduler)}"
        )
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise DenocError(f"--out: {args.out} is a file, not a folder")
    if args.cases:
        cases = read_cases(args.cases)
        what = f"{len(cases)} case{'s' if len(cases) != 1 else ''} from {args.cases}"
    else:
        axes = {}
        for text in args.grid:
            name, values = _grid_axis(text)
            if name in axes:
                raise DenocError(f"--grid {name} is given twice (one --grid per case column)")
            axes[name] = values
        cases = grid(axes)
        what = (
            f"{len(cases)} case{'s' if len(cases) != 1 else ''} (grid "
            + " x ".join(f"{k}: {len(v)}" for k, v in axes.items())
            + ")"
        )
    if any(not {"t_final", "dt", "method"} & set(c) for c in cases):  # cases run with these options
        _whole_steps(args, method)
        if args.save_every is not None and method not in FIXED_STEP_METHODS:
            raise DenocError(f"--save-every is for --method rk4 or euler; {method} saves every --dt")
    model = load_robot(args.robot, floating_base=args.floating)
    where = (
        "this process"
        if args.inline
        else f"the Dask cluster at {args.scheduler}"
        if args.scheduler
        else f"a local Dask cluster of {args.workers or os.cpu_count()} worker processes"
    )
    print(
        f"{model.name}: {model.nv} DOF; {what}; {args.duration:g} s each with {args.method}, dt = {args.dt:g} s; "
        f"on {where}",
        flush=True,
    )
    kwargs = {"t_final": args.duration, "dt": args.dt, "method": args.method}
    if args.save_every is not None:
        kwargs["save_every"] = args.save_every
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    try:
        res = db.sweep(
            model,
            cases,
            kwargs,
            out=args.out,
            metrics=metrics,
            batch_size=args.batch_size,
            scheduler="inline" if args.inline else args.scheduler,
            workers=args.workers,
            resume=not args.restart,
            save_trajectories=not args.no_trajectories,
            progress=bool(sys.stderr.isatty()),
        )
    except DifferentSweepError as exc:
        raise DenocError(
            f"--out {args.out} holds a different sweep (its sweep.json records "
            f"{', '.join(exc.differs)}); use another --out folder, or --restart to run every case "
            "again"
        ) from None
    print(res.summary())
    _sweep_table(res, metrics)
    for row in res.failed[:10]:
        print(f"  {row['case']}: {row['status']}: {row['error']}")
    if len(res.failed) > 10:
        print(f"  ... and {len(res.failed) - 10} more (see the status and error columns)")
    out = Path(args.out)
    print(
        f"wrote {(out / 'summary.csv').resolve()}"
        + (" (and summary.parquet)" if (out / "summary.parquet").exists() else "")
    )
    return 1 if res.failed else 0


def _sweep_table(res, metrics) -> None:
    """min / median / max of each scalar metric over the completed cases."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    done = [r for r in res.rows if r.get("status") == "completed"]
    table = Table(box=box.SIMPLE, title=None)
    for col in ("metric", "min", "median", "max"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    shown = 0
    for name in metrics:
        values = [r[name] for r in done if isinstance(r.get(name), (int, float))]
        if values:
            table.add_row(name, *(f"{x:.4g}" for x in (np.min(values), np.median(values), np.max(values))))
            shown += 1
    if shown:
        Console(width=100).print(table)


def _show_warning(message, category, filename, lineno, file=None, line=None):
    text = " ".join(str(message).split())
    print(f"denoc-bridge: warning: {text}", file=sys.stderr)


def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    np.set_printoptions(precision=4, suppress=True)
    command = {"info": _info, "validate": _validate, "simulate": _simulate, "bench": _bench, "sweep": _sweep}[
        args.command
    ]
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning  # one line per warning, no source line
        try:
            return command(args)
        except BrokenPipeError:  # output piped into e.g. `head`
            sys.stdout = open(os.devnull, "w")
            return 0
        except (DenocError, OSError) as exc:
            text = " ".join(str(exc).split()) or type(exc).__name__
            print(f"denoc-bridge: error: {text}", file=sys.stderr)
            return EXIT_USAGE
        except KeyboardInterrupt:
            print("denoc-bridge: interrupted", file=sys.stderr)
            return 130


if __name__ == "__main__":
    sys.exit(main())
