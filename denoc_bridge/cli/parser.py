"""The ``denoc-bridge`` command line: the argument parser of every command (help texts, examples,
choices).

Examples::

    denoc-bridge simulate panda --duration 2          # validate, simulate, write panda.html and panda.png
    denoc-bridge simulate fourbar --duration 5 --plot fourbar.png --save fourbar.npz
    denoc-bridge simulate chain:1000:spatial --duration 0.5 --no-html
    denoc-bridge simulate puma560 --torque gravity-compensation --q0 0 0.5 -0.5 0 0 0
    denoc-bridge simulate robot.urdf --torque tau.csv --method RK45
    denoc-bridge simulate pr2 --mimic --duration 0.5  # <mimic> joints as constraints
    denoc-bridge simulate icub --no-ground --no-passive   # free fall without the URDF's joint damping
    denoc-bridge simulate chain:6 --duration 3600 --stream run.npy --no-html   # an hour, states on disk
    denoc-bridge simulate solo12                      # dropped on the ground from 0.3 m, it stands (--hold)
    denoc-bridge simulate talos --drop 0.1 --mu 0.5 --hold 3
    denoc-bridge simulate solo12 --no-hold            # it lands and folds up
    denoc-bridge simulate solo12 --no-ground          # no contact: it falls for ever
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
    denoc-bridge sweep solo12 --ground --grid mass_scale=0.8,1.2 --out landing --inline
    denoc-bridge docs --open                          # build the documentation site and open it
    denoc-bridge docs --output /tmp/site              # build it into a folder (mkdocs build --strict)

ROBOT is a URDF file, an example-robot-data name (panda, talos, solo12, icub, ...) or a
generator spec: rope (000 §4, 100 DOF), chain:N[:planar|spatial] (N cylinders, e.g.
chain:1000:spatial), gripper (000 §3.1), puma560 (003), fourbar (004, a closed loop).

A user mistake (unknown robot, malformed file, bad option) prints one line on
stderr and exits with status 2; it never prints a traceback.  A mismatch with
Pinocchio exits with status 1.
"""

from __future__ import annotations

import argparse
import re
import textwrap

from denoc_bridge import __version__
from denoc_bridge._text import did_you_mean
from denoc_bridge.cli.common import EXIT_USAGE

ROBOT_HELP = (
    "a URDF file, an example-robot-data name (panda, talos, solo12, ...) or a generator spec: "
    "rope, chain:N[:planar|spatial] (e.g. chain:1000:spatial), gripper, puma560, fourbar"
)


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit 2) instead of the usage block."""

    def error(self, message):
        bad = re.match(r"argument (\S+): invalid choice: '([^']*)' \(choose from (.*)\)$", message)
        if bad:
            what, word, choices = bad.group(1), bad.group(2), re.findall(r"'([^']*)'", bad.group(3))
            hint = did_you_mean(word, choices)
            if what == "COMMAND":
                message = f"no command '{word}' (the commands: {', '.join(choices)}){hint}"
            else:
                message += hint
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def ground_arguments(p, ground_help: str) -> None:
    """The ground's options, the same for ``simulate`` and ``sweep`` (``--ground`` explained by
    ``ground_help``)."""
    p.add_argument(
        "--ground",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=ground_help,
    )
    p.add_argument(
        "--drop",
        type=float,
        default=None,
        metavar="H",
        help="with the ground: start with the robot's lowest collision point H m above it (default 0.3)",
    )
    p.add_argument(
        "--hold",
        type=float,
        nargs="?",
        const=5.0,
        default=None,
        metavar="HZ",
        help="with the ground (on by default there): a joint PD holding the start posture, implicit in the "
        "step, natural frequency HZ (default 5) and critically damped, gains Kp = (2 pi HZ)^2 m L^2, "
        "Kd = 2 (2 pi HZ) m L^2 (m: the robot's mass, L: its extent); a legged robot dropped onto the "
        "ground then stands",
    )
    p.add_argument(
        "--no-hold", action="store_true", help="with the ground: no posture hold (the robot folds up on landing)"
    )
    p.add_argument(
        "--mu", type=float, default=None, metavar="MU", help="the ground's friction coefficient (default 0.8)"
    )
    p.add_argument(
        "--mesh-tolerance",
        type=float,
        default=None,
        metavar="M",
        help="with the ground: a collision mesh touches it with a sparse subset of its convex hull's "
        "vertices whose hull is within M m of the whole hull in every direction (default 0.001)",
    )
    p.add_argument(
        "--mesh-points",
        type=int,
        default=None,
        metavar="K",
        help="with the ground: at most K contact points per collision mesh (default: as many as "
        "--mesh-tolerance needs)",
    )
    p.add_argument(
        "--full-hull",
        action="store_true",
        help="with the ground: every vertex of each collision mesh's convex hull a contact point "
        "(many more points, slower: talos 11,593 instead of 4,141)",
    )


def robot_arguments(p: argparse.ArgumentParser) -> None:
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


def help_examples(*commands) -> str:
    lines = [
        line
        for line in __doc__.split("Examples::", 1)[1].split("ROBOT is", 1)[0].splitlines()
        if any(line.strip().startswith(f"denoc-bridge {c}") for c in commands)
    ]
    return "examples:\n" + "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
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
        epilog=help_examples("info"),
        formatter_class=raw,
    )
    robot_arguments(info)
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
        epilog=help_examples("validate"),
        formatter_class=raw,
    )
    robot_arguments(val)
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
            "bar, print a summary, and write MODEL.html (animation) and MODEL.png (plots) "
            "into the current folder unless told otherwise: MODEL the robot's name (panda, "
            "planar_chain6; a file's <robot name> or <mujoco model>); when another robot's files "
            "hold that name there, MODEL-2, MODEL-3, ... (a run overwrites only its own robot's "
            "files; .denoc-bridge-outputs.json records which robot wrote which).  Start: the neutral configuration (the "
            "four-bar: a closed, tilted one; chains and the rope: horizontal; an MJCF file: the pose it "
            "gives, MuJoCo's qpos0), at rest.  A floating-base "
            "robot falls onto the ground z = 0 (--ground, on by default for it), from 0.3 m (--drop), "
            "and a posture hold (--hold, on by default there) keeps it standing."
        ),
        epilog=help_examples("simulate"),
        formatter_class=raw,
    )
    robot_arguments(sim)
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
        default=None,
        metavar="METHOD",
        help="rk4 (default without the ground), euler, implicit-euler, sdirk2, or scipy's RK45, DOP853, "
        "Radau, BDF, LSODA; with the ground: contact-euler (the contact time stepper, the only one)",
    )
    ground_arguments(
        sim,
        "the ground z = 0 under the robot, touched by its <collision> shapes (MJCF: its geoms) with "
        "friction: on by default for a floating-base robot (--no-ground: none, it falls for ever), off "
        "for a fixed base",
    )
    sim.add_argument(
        "--q0",
        nargs="+",
        metavar="Q",
        help="start configuration: nq numbers, 'neutral' (the default; an MJCF file's default is its pose, "
        "'qpos0'), 'random', or a configuration the model names (an MJCF <key>, an SRDF group state such "
        "as talos's 'half_sitting'; `denoc-bridge info ROBOT` lists them)",
    )
    sim.add_argument(
        "--torque",
        default="zero",
        metavar="TAU",
        help="zero (default), gravity-compensation (tau = g(q)), or a .npy / .csv file with one row "
        "of nv torques (constant) or one row per step",
    )
    sim.add_argument(
        "--passive",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the model's joint damping (URDF <dynamics damping>) and springs act (default); "
        "--no-passive simulates without them, as simulate(..., passive=False).  URDF friction "
        "is never applied",
    )
    sim.add_argument(
        "--limits",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the URDF's joint position limits hold (default; the fixed-step methods on a robot without "
        "loops; with --mimic a mimic joint's limits act on the joint it mimics): a joint that "
        "reaches a limit stops there (a plastic impact); "
        "--no-limits lets the joints pass them, as simulate(..., limits=False)",
    )
    sim.add_argument(
        "--armature",
        type=float,
        default=0.0,
        metavar="A",
        help="rotor inertia added to every joint but a free-flyer (kg m^2; kg on prismatic "
        "joints), as Pinocchio's model.armature: lets a joint that moves a massless link "
        "move (default 0)",
    )
    sim.add_argument("--html", metavar="OUT.html", help="animation file (default MODEL.html, see above)")
    sim.add_argument("--plot", metavar="OUT.png", help="plot file (default MODEL.png, see above)")
    sim.add_argument("--save", metavar="OUT.npz", help="also save the trajectory (Trajectory.to_npz)")
    sim.add_argument(
        "--stream",
        metavar="OUT.npy",
        help="write the saved states to OUT.npy as the run goes, in flat memory, for runs too long to "
        "hold in memory (rk4, euler; read back with Trajectory.load); instead of --save",
    )
    sim.add_argument(
        "--save-every",
        type=int,
        default=None,
        metavar="K",
        help="keep every K-th step (rk4, euler, implicit methods); default every step (with --stream), or "
        "every step that fits in memory",
    )
    sim.add_argument("--no-html", action="store_true", help="do not write the HTML animation")
    sim.add_argument(
        "--no-forces",
        action="store_true",
        help="with the ground: the animation without its contact forces (black arrows from each foot's "
        "centre of pressure, as long as the robot is big per robot weight)",
    )
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
        epilog=help_examples("bench"),
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
        epilog=help_examples("sweep"),
        formatter_class=raw,
    )
    robot_arguments(sw)
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
    sw.add_argument(
        "--method",
        default=None,
        metavar="METHOD",
        help="rk4 (default), euler, RK45, ...; with --ground: contact-euler (the default and the only one)",
    )
    ground_arguments(
        sw,
        "every case on the ground z = 0, touched by the robot's <collision> shapes (MJCF: its geoms) "
        "with friction, a floating base dropped onto it from --drop (off unless given)",
    )
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

    docs = sub.add_parser(
        "docs",
        help="build the documentation site (mkdocs, strict) and serve or open it",
        description=wrap(
            "Build the documentation site of a clone of the repository with mkdocs build --strict "
            '(the docs extra: pip install ".[docs]"), then serve it on 127.0.0.1 (--serve) and open '
            "it in the web browser (--open).  The pages also open from the file system, without search."
        ),
        epilog=help_examples("docs"),
        formatter_class=raw,
    )
    docs.add_argument("--output", metavar="DIR", help="folder of the site (default: site/ in the clone)")
    docs.add_argument("--serve", action="store_true", help="serve the site on 127.0.0.1 until Ctrl-C")
    docs.add_argument("--open", action="store_true", help="serve the site and open it in the web browser")
    docs.add_argument(
        "--port", type=int, default=8000, help="port of --serve / --open (default 8000; 0: any free port)"
    )
    comp = sub.add_parser(
        "compile",
        help="does nothing: the compiled core is built at install (kept for old scripts)",
        description=wrap(
            "Does nothing and exits 0: the compiled core (Cython) is built with the package when it is "
            "installed, and nothing compiles after install any more.  Kept so that scripts that ran it "
            "after an install keep working; a later release removes it.  Its old options are accepted "
            "and ignored."
        ),
        formatter_class=raw,
    )
    # the options of the numba releases, accepted and ignored (old scripts pass them)
    comp.add_argument("--jobs", type=int, default=None, help=argparse.SUPPRESS)
    comp.add_argument("--units", default=None, help=argparse.SUPPRESS)
    comp.add_argument("--no-check", action="store_true", help=argparse.SUPPRESS)
    return parser
