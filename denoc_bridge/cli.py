"""The ``denoc-bridge`` command line.

Examples::

    denoc-bridge info panda                 # DOF and kinematic-module tree
    denoc-bridge info talos --fixed
    denoc-bridge info path/to/robot.urdf --floating
    denoc-bridge info pr2 --mimic           # <mimic> joints as constraints (reduced nq, nv)
    denoc-bridge validate solo12 --samples 5 # compare with Pinocchio, exit 1 on mismatch
    denoc-bridge info gripper               # the 4-DOF gripper of the papers (000 §3.1)

A user mistake (unknown robot, malformed file, bad option) prints one line on
stderr and exits with status 2; it never prints a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from . import __version__
from .errors import DenocError
from .joints import AXIAL, JointType

EXIT_MISMATCH = 1
EXIT_USAGE = 2


def _robot_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("robot", metavar="ROBOT",
                   help="a URDF file, an example-robot-data name (panda, talos, solo12, ...) or 'gripper'")
    base = p.add_mutually_exclusive_group()
    base.add_argument("--floating", dest="floating", action="store_true", default=None,
                      help="attach the root link with a free-flyer joint")
    base.add_argument("--fixed", dest="floating", action="store_false",
                      help="fixed base (default for files; example-robot-data robots use their usual base)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="denoc-bridge",
        description="DeNOC recursive dynamics on kinematic modules, checked against Pinocchio.",
        epilog="examples:" + __doc__.split("Examples::", 1)[1].split("A user mistake", 1)[0].rstrip(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"denoc-bridge {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    info = sub.add_parser("info", help="print the DOF and the kinematic-module tree of a robot",
                          description="Print the DOF and the kinematic-module tree of a robot.")
    _robot_arguments(info)
    info.add_argument("--mimic", action="store_true",
                      help="<mimic> joints as constraints, as pin.buildModelFromUrdf(path, mimic=True)")
    val = sub.add_parser("validate", help="compare inverse/forward dynamics, GIM and inverse GIM with Pinocchio",
                         description="Compare denoc_bridge with Pinocchio on random states; exit 1 on mismatch.")
    _robot_arguments(val)
    val.add_argument("--samples", type=int, default=3, help="number of random states (default 3)")
    val.add_argument("--tol", type=float, default=1e-9, help="relative tolerance (default 1e-9)")
    val.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
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
        lines.append(f"{prefix}{branch}M{i + 1}: {mod.n_links} link{'s' if mod.n_links != 1 else ''}, "
                     f"{mod.nv} DOF  (v[{mod.v_start}:{mod.v_start + mod.nv}])")
        inner = prefix + ("    " if last else "│   ")
        bar = "│   " if mod.children else "    "
        for k in mod.links:
            jt = JointType(model.joint_type[k])
            note = notes.get(model.joint_names[k], "")
            lines.append(f"{inner}{bar}{model.joint_names[k]:<{width}}  {jt.label:<11} {_fmt_axis(model, k):<26}"
                         f"-> {model.link_names[k]}" + (f"  ({note})" if note else ""))
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
    print(f"  {base}; {model.n_links} moving links; nq = {model.nq}, nv = {model.nv}; "
          f"total mass {model.total_mass:.4g} kg; gravity {tuple(float(g) for g in model.gravity)}")
    print(f"  {model.n_modules} kinematic module{'s' if model.n_modules != 1 else ''} "
          "(maximal serial chains of links; 000 §1)")
    notes = {}
    if args.mimic:
        tree = model.tree
        print(f"  {len(model.mimic)} <mimic> joint(s) as constraints q_s = multiplier q_m + offset "
              f"(as pin.buildModelFromUrdf(path, mimic=True)); the tree without them: nq = {tree.nq}, nv = {tree.nv}")
        for r in model.mimic:
            notes[r.joint] = f"mimic: {r.multiplier:g} * {r.mimicked} {'+' if r.offset >= 0 else '-'} {abs(r.offset):g}"
    elif model.mimic:
        print(f"  {len(model.mimic)} <mimic> joint(s), treated as independent joints (as pin.buildModelFromUrdf; "
              "--mimic makes them constraints)")
    for lc in model.loops:
        print(f"  loop closure '{lc.name}': {lc.type} cut joint between '{body_name(model, lc.link1)}' and "
              f"'{body_name(model, lc.link2)}' ({lc.n_rows} constraint rows; 004 §2.3)")
    if model.warnings:
        print(f"  {len(model.warnings)} loader note(s), e.g. {model.warnings[0]}")
    print()
    if args.mimic:
        print("module tree of the links (v ranges of the tree, mimic joints included):")
    print(module_tree(model.tree if args.mimic else model, notes))
    return 0


def _validate(args) -> int:
    import pinocchio as pin

    from .robots import load_robot, resolve_robot
    from .validation import compare_with_pinocchio

    if args.samples < 1:
        raise DenocError(f"--samples must be at least 1, got {args.samples}")
    if not args.tol > 0:
        raise DenocError(f"--tol must be positive, got {args.tol}")
    src = resolve_robot(args.robot)
    model = load_robot(args.robot, floating_base=args.floating)
    root = pin.JointModelFreeFlyer() if model.floating_base else None
    try:
        if src.path is None:
            pm = pin.buildModelFromXML(src.urdf, root) if root else pin.buildModelFromXML(src.urdf)
        else:
            pm = pin.buildModelFromUrdf(src.urdf, root) if root else pin.buildModelFromUrdf(src.urdf)
        origin = "pin.buildModelFromUrdf"
    except Exception:
        from .pinocchio_io import to_pinocchio

        pm, origin = to_pinocchio(model), "to_pinocchio (Pinocchio's URDF parser refuses this file)"
    report = compare_with_pinocchio(model, pm, samples=args.samples, seed=args.seed, tol=args.tol)
    print(f"Pinocchio model from {origin}")
    print(report.table())
    print("all checks passed" if report.passed else "MISMATCH")
    return 0 if report.passed else EXIT_MISMATCH


def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    np.set_printoptions(precision=4, suppress=True)
    try:
        return {"info": _info, "validate": _validate}[args.command](args)
    except BrokenPipeError:  # output piped into e.g. `head`
        sys.stdout = open(os.devnull, "w")
        return 0
    except (DenocError, OSError) as exc:
        print(f"denoc-bridge: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("denoc-bridge: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
