"""``denoc-bridge info``: a robot's kinematic modules, joints, mimic relations and loops."""

from __future__ import annotations

from denoc_bridge._text import count as _count
from denoc_bridge.constraints.loops import body_name
from denoc_bridge.io.robots import load_robot, resolve_robot
from denoc_bridge.multibody.constraints import JointCoupling
from denoc_bridge.multibody.joints import AXIAL, JointType


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


def info_command(args) -> int:

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
        if isinstance(lc, JointCoupling):
            terms = " + ".join(f"{c:g} * {model.joint_names[k]}" for k, c in zip(lc.joints, lc.coefficients))
            print(f"  joint coupling '{lc.name}': {terms} = {lc.value:g} (1 constraint row)")
            continue
        print(
            f"  loop closure '{lc.name}': {lc.type} cut joint between '{body_name(model, lc.link1)}' and "
            f"'{body_name(model, lc.link2)}' ({lc.n_rows} constraint rows; 004 §2.3)"
        )
    if model.reference_configurations:
        names = ", ".join(model.reference_configurations)
        print(f"  named configurations: {names} (simulate --q0 NAME starts there)")
    if model.warnings:
        print(f"  {_count(len(model.warnings), 'loader note')}, e.g. {model.warnings[0]}")
    print()
    if args.mimic:
        print("module tree of the links (v ranges of the tree, mimic joints included):")
    print(module_tree(model.tree if args.mimic else model, notes))
    return 0
