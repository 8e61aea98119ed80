"""Random models for tests and property-based testing (used by the test suite).

``random_model(seed, ...)`` builds a random tree of links with every joint
type, arbitrary axes, placements, masses and inertias; together with
:func:`denoc_bridge.to_pinocchio` it gives a reference Pinocchio model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from denoc_bridge.io.pinocchio_io import to_pinocchio
from denoc_bridge.multibody.constraints import LoopClosure
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.multibody.model import Model
from denoc_bridge.spatial import quaternion_to_matrix

__all__ = [
    "random_model",
    "random_rotation",
    "random_inertia",
    "pin_rk4",
    "pin_constraint_models",
    "pin_constraint_dynamics",
]

ALL_JOINT_TYPES = tuple(JointType)


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    """A uniformly distributed rotation matrix."""
    quat = rng.standard_normal(4)
    return quaternion_to_matrix(quat / np.linalg.norm(quat))


def random_inertia(rng: np.random.Generator, mass: float) -> np.ndarray:
    """Rotational inertia about the COM of a solid box of random size (satisfies the triangle inequality)."""
    a, b, c = rng.uniform(0.02, 0.5, 3)
    principal = mass / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    R = random_rotation(rng)
    inertia: np.ndarray = R @ np.diag(principal) @ R.T
    return inertia


def _unit(rng: np.random.Generator) -> np.ndarray:
    if rng.random() < 0.3:
        e = np.zeros(3)
        e[rng.integers(3)] = rng.choice([-1.0, 1.0])
        return e
    e = rng.standard_normal(3)
    unit: np.ndarray = e / np.linalg.norm(e)
    return unit


def _depth_first(parent: Sequence[int]) -> list[int]:
    """Order of the links, depth first, children in index order."""
    n = len(parent)
    children: list[list[int]] = [[] for _ in range(n)]
    roots: list[int] = []
    for k, p in enumerate(parent):
        (roots if p < 0 else children[p]).append(k)
    order: list[int] = []
    stack = list(reversed(roots))
    while stack:
        k = stack.pop()
        order.append(k)
        stack.extend(reversed(children[k]))
    return order


def random_model(
    seed: int | np.random.SeedSequence | None = None,
    n_links: int = 8,
    *,
    branching: float = 0.35,
    n_roots: int = 1,
    joint_types: Sequence[JointType | int] = ALL_JOINT_TYPES,
    floating_base: bool = False,
    massless: float = 0.0,
    name: str = "random",
) -> Model:
    """A random tree of ``n_links`` links, numbered depth first.

    Parameters
    ----------
    branching : probability that a link is attached to a random earlier link
        instead of the previous one (0 gives a serial chain).
    n_roots : number of links attached directly to the base.
    joint_types : joint types to draw from (uniformly).
    floating_base : make link 0 a free-flyer attached to the base.
    massless : probability that a non-leaf link moved by a one-DOF joint has zero mass
        and inertia (like the middle link of a universal joint); only where the GIM stays
        regular (children with mass, moved by 1-DOF, universal or spherical joints).
    """
    rng = np.random.default_rng(seed)
    raw_parent: list[int] = []
    for k in range(n_links):
        if k < n_roots:
            raw_parent.append(-1 if not floating_base or k == 0 else 0)
        elif rng.random() < branching:
            raw_parent.append(int(rng.integers(0, k)))
        else:
            raw_parent.append(k - 1)
    order = _depth_first(raw_parent)
    new_index = {old: new for new, old in enumerate(order)}
    parent = [(-1 if raw_parent[old] < 0 else new_index[raw_parent[old]]) for old in order]
    has_child = np.zeros(n_links, dtype=bool)
    for p in parent:
        if p >= 0:
            has_child[p] = True
    jtypes = [int(JointType(t)) for t in joint_types]
    types = [
        int(JointType.FREEFLYER) if (floating_base and k == 0) else jtypes[rng.integers(len(jtypes))]
        for k in range(n_links)
    ]
    # a massless link keeps the GIM regular when each child has mass and its joint leaves the
    # parent's motion some inertia: 1-DOF, universal or spherical child joints, no massless child
    keeps_inertia = (
        int(JointType.REVOLUTE),
        int(JointType.CONTINUOUS),
        int(JointType.PRISMATIC),
        int(JointType.UNIVERSAL),
        int(JointType.SPHERICAL),
    )
    children = [[c for c in range(n_links) if parent[c] == k] for k in range(n_links)]
    massless_link = [False] * n_links
    for k in range(n_links):
        massless_link[k] = (
            has_child[k]
            and types[k] in (JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PRISMATIC)
            and all(types[c] in keeps_inertia for c in children[k])
            and not (parent[k] >= 0 and massless_link[parent[k]])
            and rng.random() < massless
        )
    axes: list[np.ndarray] = []
    axes2: list[np.ndarray] = []
    R0: list[np.ndarray] = []
    r0: list[np.ndarray] = []
    mass: list[float] = []
    com: list[np.ndarray] = []
    inertia: list[np.ndarray] = []
    for k in range(n_links):
        a1 = _unit(rng)
        a2 = np.cross(a1, _unit(rng))
        while np.linalg.norm(a2) < 0.1:
            a2 = np.cross(a1, _unit(rng))
        axes.append(a1)
        axes2.append(a2 / np.linalg.norm(a2))
        R0.append(random_rotation(rng))
        r0.append(0.3 * rng.standard_normal(3))
        m = 0.0 if massless_link[k] else float(np.exp(rng.uniform(np.log(0.1), np.log(10))))
        mass.append(m)
        com.append(0.1 * rng.standard_normal(3) if m > 0 else np.zeros(3))
        inertia.append(random_inertia(rng, m) if m > 0 else np.zeros((3, 3)))
    return Model(
        name=name,
        link_names=[f"link{k}" for k in range(n_links)],
        joint_names=[f"joint{k}" for k in range(n_links)],
        parent=parent,
        joint_type=types,
        joint_axis=axes,
        joint_axis2=axes2,
        joint_rotation=R0,
        joint_translation=r0,
        mass=mass,
        com=com,
        inertia=inertia,
        floating_base=floating_base,
    )


def pin_rk4(
    pm: Any,
    q: np.ndarray,
    v: np.ndarray,
    dt: float,
    steps: int,
    tau: np.ndarray | None = None,
    each_step: Callable[[Any, np.ndarray, np.ndarray], object] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The plain Python RK4 loop around ``pin.aba`` that the tests and examples compare with
    (q and v in a vector space: revolute and prismatic joints); ``each_step(data, q, v)`` is
    called after every step.  Returns the final (q, v)."""
    import pinocchio as pin

    pd = pm.createData()
    tau = np.zeros(pm.nv) if tau is None else tau
    for _ in range(steps):
        k1v = pin.aba(pm, pd, q, v, tau)
        k2v = pin.aba(pm, pd, q + dt / 2 * v, v + dt / 2 * k1v, tau)
        k3v = pin.aba(pm, pd, q + dt / 2 * (v + dt / 2 * k1v), v + dt / 2 * k2v, tau)
        k4v = pin.aba(pm, pd, q + dt * (v + dt / 2 * k2v), v + dt * k3v, tau)
        q, v = (
            q + dt / 6 * (v + 2 * (v + dt / 2 * k1v) + 2 * (v + dt / 2 * k2v) + (v + dt * k3v)),
            v + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v),
        )
        if each_step is not None:
            each_step(pd, q, v)
    return q, v


def pin_mimic_rk4(
    pm: Any,
    q: np.ndarray,
    v: np.ndarray,
    dt: float,
    steps: int,
    tau_fn: Callable[[float, np.ndarray, np.ndarray], np.ndarray] | None = None,
    fext: np.ndarray | None = None,
    damping: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Classical RK4 on a Pinocchio mimic model (``pin.buildModelFromUrdf(path, mimic=True)``):
    ``a = crba^-1 (tau_fn(t, q, v) - rnea(q, v, 0, fext) - damping v)`` (Pinocchio 4.1's
    ``aba`` refuses mimic models), q stepped with ``pin.integrate``.  Pinocchio 4.1's ``crba``
    of a mimic model is wrong on some trees (:func:`denoc_bridge.validation.pin_mimic_mass_matrix`);
    the gripper and pr2 this is used on are not among them (their ``crba`` equals the ``rnea``
    columns, also on a reused ``Data``).  On revolute, prismatic and
    continuous joints this is ``simulate``'s Runge-Kutta-Munthe-Kaas step; on free flyers and
    spherical joints it lacks the dexp^-1 correction of the stage rates (equal only while they
    do not rotate).
    ``fext``: (njoints - 1, 6) wrenches per joint; ``damping``: an nv x nv matrix (the tree's
    dampers as ``G^T D G``).  Returns the final (q, v)."""
    import pinocchio as pin

    pd = pm.createData()
    zero = np.zeros(pm.nv)
    forces = [pin.Force.Zero()] + [
        pin.Force(f[:3], f[3:]) for f in (fext if fext is not None else np.zeros((pm.njoints - 1, 6)))
    ]
    damping = np.zeros((pm.nv, pm.nv)) if damping is None else damping

    def acc(t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        M = pin.crba(pm, pd, q)
        M = np.triu(M) + np.triu(M, 1).T
        tau = zero if tau_fn is None else tau_fn(t, q, v)
        return np.linalg.solve(M, tau - pin.rnea(pm, pd, q, v, zero, forces) - damping @ v)

    for n in range(steps):
        t = n * dt
        kv1 = acc(t, q, v)
        kx = [v, v + dt / 2 * kv1]
        kv2 = acc(t + dt / 2, pin.integrate(pm, q, dt / 2 * kx[0]), kx[1])
        kx.append(v + dt / 2 * kv2)
        kv3 = acc(t + dt / 2, pin.integrate(pm, q, dt / 2 * kx[1]), kx[2])
        kx.append(v + dt * kv3)
        kv4 = acc(t + dt, pin.integrate(pm, q, dt * kx[2]), kx[3])
        q = pin.integrate(pm, q, dt / 6 * (kx[0] + 2 * kx[1] + 2 * kx[2] + kx[3]))
        v = v + dt / 6 * (kv1 + 2 * kv2 + 2 * kv3 + kv4)
    return q, v


#: Pinocchio's constraint for each cut-joint type: a ball joint is its 3D contact, a weld its 6D
#: contact; a revolute cut of a planar loop with parallel axes moves as a 3D contact (the two
#: rotation rows are redundant there).  Pinocchio 4.1 has no prismatic one.
PIN_CONTACT = {"spherical": "CONTACT_3D", "revolute": "CONTACT_3D", "weld": "CONTACT_6D"}


def pin_constraint_models(model: Model, pm: Any) -> tuple[list[Any], list[Any]]:
    """One ``pin.RigidConstraintModel`` per cut joint of ``model`` (on ``pm``, its Pinocchio
    twin from :func:`denoc_bridge.to_pinocchio`), and their datas, as Python lists."""
    import pinocchio as pin

    cms = []
    for lc in model.loops:
        if not isinstance(lc, LoopClosure) or lc.type not in PIN_CONTACT:
            raise ValueError(f"cut joint '{lc.name}' ({lc.type}) has no Pinocchio counterpart")
        cms.append(
            pin.RigidConstraintModel(
                getattr(pin.ContactType, PIN_CONTACT[lc.type]),
                pm,
                lc.link1 + 1,
                pin.SE3(lc.rotation1, lc.translation1),
                lc.link2 + 1,
                pin.SE3(lc.rotation2, lc.translation2),
                pin.ReferenceFrame.LOCAL,
            )
        )
    return cms, [cm.createData() for cm in cms]


def pin_constraint_dynamics(
    model: Model, pm: Any = None, *, accuracy: float = 1e-14, mu: float = 1e-10, max_iter: int = 200
) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """``f(q, v, tau)``: the accelerations of ``pin.constraintDynamics`` for the model's cut
    joints (after ``pin.initConstraintDynamics``), a copy per call; the reference of the
    closed-loop tests, examples and benchmark."""
    import pinocchio as pin

    pm = to_pinocchio(model) if pm is None else pm
    pd = pm.createData()
    cms, cds = pin_constraint_models(model, pm)
    pin.initConstraintDynamics(pm, pd, cms, cds)
    settings = pin.ProximalSettings(accuracy, mu, max_iter)
    return lambda q, v, tau: pin.constraintDynamics(pm, pd, q, v, tau, cms, cds, settings).copy()
