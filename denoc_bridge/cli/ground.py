"""``denoc-bridge simulate``'s and ``sweep``'s ground: ``--ground`` (on by default for a floating-base robot),
``--drop``, ``--hold`` and ``--mu``: the contact time stepper (method ``contact-euler``) on the
robot's ``<collision>`` shapes (or MJCF geoms), a posture hold, and a line on what the ground
carried at the end."""

from __future__ import annotations

import math
import sys

import numpy as np

from denoc_bridge.constraints.contact import lifted
from denoc_bridge.errors import DenocError, InputError
from denoc_bridge.io.collision import collision_points
from denoc_bridge.multibody.contact import ContactPoint, Ground
from denoc_bridge.simulation.contact import CONTACT_METHODS
from denoc_bridge.simulation.hold import posture_hold

METHOD = CONTACT_METHODS[0]


def wants_ground(args, model) -> bool:
    """Whether the run has the ground: ``--ground`` / ``--no-ground``, else on for a floating-base
    robot (with or without loop closures and ``--mimic``) and with ``--method contact-euler``."""
    if args.ground is None:
        return bool(model.floating_base) or contact_method(args)
    return bool(args.ground)


def contact_method(args) -> bool:
    """Whether ``--method contact-euler`` was given."""
    return args.method is not None and args.method.lower() == METHOD


def check_options(args, model, ground: bool) -> None:
    """The options that do not go with the ground (or need it), named (``simulate``'s and
    ``sweep``'s arguments: the latter has no --stream, --no-passive or --no-forces)."""
    if ground:
        if args.method is not None and not contact_method(args):
            default = " (on by default for a floating-base robot)" if args.ground is None else ""
            raise DenocError(
                f"--method {args.method} does not simulate ground contact{default}: leave --method out "
                f"(the contact time stepper, {METHOD}), or give --no-ground"
            )
        if getattr(args, "stream", None):
            raise DenocError("--stream is not available with the ground yet: give --save, or --no-ground")
        if not getattr(args, "passive", True):
            raise DenocError("--no-passive is not available with the ground yet: the joints' dampers and springs act")
        if args.hold is not None and args.no_hold:
            raise DenocError("--hold and --no-hold contradict each other; give one")
        if args.drop is not None and not model.floating_base:
            raise DenocError(f"--drop lifts a floating base onto the ground, and '{model.name}' has a fixed base")
    else:
        for flag, given in (
            ("--hold", args.hold is not None),
            ("--no-hold", args.no_hold),
            ("--drop", args.drop is not None),
            ("--no-forces", getattr(args, "no_forces", False)),
        ):
            if given:
                if args.ground is False:
                    why = "--no-ground was given"
                elif model.floating_base:
                    why = f"'{model.name}' has no collision shapes to touch it with"
                else:
                    why = f"'{model.name}' has a fixed base"
                raise DenocError(f"{flag} goes with the ground (--ground), and {why}")
        if args.mu is not None:
            raise DenocError("--mu is the ground's friction coefficient: it goes with the ground (--ground)")
        for flag, given in (
            ("--mesh-tolerance", args.mesh_tolerance is not None),
            ("--mesh-points", args.mesh_points is not None),
            ("--full-hull", args.full_hull),
        ):
            if given:
                raise DenocError(
                    f"{flag} chooses the contact points of collision meshes: it goes with the ground (--ground)"
                )
    for option, value in (("--drop", args.drop), ("--hold", args.hold), ("--mu", args.mu)):
        if value is not None and not (math.isfinite(value) and value >= 0):
            raise DenocError(f"{option} must be a number >= 0, got {value:g}")


def hold_frequency(args) -> float | None:
    """The posture hold's frequency (Hz) with the ground: ``--hold HZ``, 5 by default, None with
    ``--no-hold``."""
    if args.no_hold:
        return None
    return 5.0 if args.hold is None else float(args.hold)


def by_default(args) -> bool:
    """Whether the ground is on only by default (a floating base), not asked for."""
    return args.ground is None and not contact_method(args)


def mesh_sampling(args) -> dict:
    """``collision_points``'s mesh options from ``--full-hull``, ``--mesh-tolerance`` and
    ``--mesh-points`` (each checked, named)."""
    if args.full_hull and (args.mesh_tolerance is not None or args.mesh_points is not None):
        given = "--mesh-tolerance" if args.mesh_tolerance is not None else "--mesh-points"
        raise DenocError(f"--full-hull keeps every vertex of each mesh's hull: {given} does not go with it")
    if args.mesh_tolerance is not None and not (math.isfinite(args.mesh_tolerance) and args.mesh_tolerance >= 0):
        raise DenocError(f"--mesh-tolerance must be a distance >= 0 (m), got {args.mesh_tolerance:g}")
    if args.mesh_points is not None and args.mesh_points < 1:
        raise DenocError(f"--mesh-points must be a whole number >= 1, got {args.mesh_points}")
    out: dict = {"hull": bool(args.full_hull)}
    if args.mesh_tolerance is not None:
        out["mesh_tolerance"] = float(args.mesh_tolerance)
    if args.mesh_points is not None:
        out["mesh_points"] = int(args.mesh_points)
    return out


def contact_candidates(model, by_default: bool = False, sampling: dict | None = None) -> list[ContactPoint] | None:
    """The robot's contact points from its collision shapes (``sampling``: the mesh options of
    :func:`mesh_sampling`), or the error that says what to do; None, said on stderr, when it has
    none and the ground was on only by default (the robot is then simulated without it)."""
    source = str(model.source or "")
    if not source or source.startswith("denoc_bridge.generators"):  # a generated robot: no shapes
        points: tuple[ContactPoint, ...] = ()
    else:
        try:
            points, _ = collision_points(model, **(sampling or {}))
        except InputError as exc:
            raise DenocError(f"--ground: {exc}") from None
    if not points and by_default:
        print(
            f"denoc-bridge: note: '{model.name}' has no collision shapes to touch the ground with: simulated "
            "without the ground (--ground needs <collision> shapes or MJCF geoms)",
            file=sys.stderr,
        )
        return None
    if not points:
        raise DenocError(
            f"--ground: '{model.name}' has no collision shapes to touch the ground with (sphere, box, "
            "cylinder, capsule or mesh <collision>, or MJCF geoms); --no-ground simulates it without"
        )
    return list(points)


def ground_of(args) -> Ground:
    return Ground(mu=0.8 if args.mu is None else args.mu, name="ground")


def ground_run(args, model, q_hold: np.ndarray, points: list[ContactPoint], lift: bool):
    """(q0, the ``simulate`` options of the ground, the drop height or None): the ground (--mu),
    the posture hold of ``q_hold`` (--hold, --no-hold), and, with ``lift``, ``q_hold`` lifted so
    that the robot's lowest point is --drop (default 0.3 m) above the ground."""
    drop = (0.3 if args.drop is None else args.drop) if lift else None
    q0 = lifted(model, q_hold, points, drop) if drop is not None else q_hold
    frequency = hold_frequency(args)
    hold = posture_hold(model, q_hold, frequency=frequency) if frequency is not None else None
    return q0, {"contact": ground_of(args), "contact_points": points, "hold": hold}, drop


def contact_summary(traj, model) -> None:
    """What the contacts took (their work on the robot, :attr:`Trajectory.contact_work` and
    :attr:`Trajectory.impact_work`: a landing with restitution 0 is a plastic impact, whose
    kinetic energy is lost; friction takes more) and what the ground carried at the end (the last
    step's normal force) against the weight; a robot without weight (no gravity, or no mass) gets
    the force alone, and says why.  The energy balance is the simulate command's next line."""
    if traj.contact_force is None or len(traj) < 2:
        return
    along = 0.0 - float(traj.contact_work[-1])  # 0.0 -: no "-0 J" when nothing touched
    if traj.impact_work is not None:
        impacts = 0.0 - float(traj.impact_work[-1])
        print(
            f"energy: the contacts took {along + impacts:.4g} J (the impacts, restitution 0: {impacts:.4g} J; "
            f"friction and the forces along the motion: {along:.4g} J)"
        )
    else:
        print(
            f"energy: the contact forces took {along:.4g} J along the motion; the impacts' share is not known "
            "(the run saved every k-th step only: --save-every)"
        )
    normal = float(traj.contact_force[-2, :, 2].sum()) + 0.0  # + 0.0: no "-0"
    g = float(np.linalg.norm(model.gravity))
    weight = float(model.total_mass) * g
    touching = int(np.count_nonzero(np.linalg.norm(traj.contact_force[-2], axis=1)))
    carries = f"contact: at the end {touching} of {len(traj.contact_names)} links touch the ground, which carries {normal:.4g} N"
    if weight > 0:
        print(f"{carries} ({normal / weight:.1%} of the weight, {weight:.4g} N)")
    else:
        why = "there is no gravity" if g == 0 else f"'{model.name}' has no mass"
        print(f"{carries} ({why}: the robot has no weight to compare it with)")
