"""Forward kinematics and energies (O(n))."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from denoc_bridge.algorithms.dynamics import raise_status
from denoc_bridge.core import tree as compiled
from denoc_bridge.errors import InputError
from denoc_bridge.multibody import inputs as _inputs
from denoc_bridge.multibody.checks import check_model as _check_model
from denoc_bridge.multibody.data import Data, run_chunks, work_of
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.model import Model
from denoc_bridge.spatial import internal_to_pin

__all__ = [
    "forward_kinematics",
    "link_velocities",
    "center_of_mass",
    "kinetic_energy",
    "potential_energy",
    "energies",
    "hanging_configuration",
]


#: batches of energies of fewer states run in the calling thread (more: in chunks on several
#: threads, multibody.data.run_chunks)
_SERIAL_BELOW = 65


def forward_kinematics(
    model: Model | MimicModel, q: npt.ArrayLike, *, data: Data | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Placements of the link frames in the base frame: ``(R, p)``, shapes (L, 3, 3) and (L, 3).

    Link k's frame is Pinocchio's ``data.oMi[k + 1]`` (``R[k]`` its ``rotation``, ``p[k]`` its
    ``translation``), from the compiled O(n) geometry pass and forward recursion
    (:func:`denoc_bridge.core.tree.placements_state`).  A
    :class:`~denoc_bridge.constraints.mimic.MimicModel` takes reduced q.

    Parameters
    ----------
    model : Model or MimicModel
    q : (nq,) array
        One configuration in Pinocchio's layout (no batch); quaternions and (cos, sin) pairs
        are normalised.
    data : Data, optional
        Work buffers (:class:`~denoc_bridge.Data`) for this thread; default: the model's own.

    Returns
    -------
    R : (n_links, 3, 3) array
        Orientation of each link frame in the base frame.
    p : (n_links, 3) array
        Origin of each link frame in the base frame.

    Raises
    ------
    InputTypeError
        ``model`` is not a model, ``q`` not real numbers, ``data`` not a Data.
    InputError
        A wrong shape, a non-finite entry (naming it and its joint), a zero quaternion, a
        ``data`` of another model.

    Examples
    --------
    >>> import denoc_bridge as db
    >>> panda = db.load_robot("panda")
    >>> R, p = db.forward_kinematics(panda, db.neutral_configuration(panda))
    >>> R.shape, p[panda.link_index("panda_link7")].round(4)
    ((9, 3, 3), array([0.088, 0.   , 1.033]))
    """
    _check_model(model)
    if isinstance(model, MimicModel):
        return forward_kinematics(model.tree, model.expand(q), data=data)
    q = _inputs.configuration(model, q)
    R = np.empty((model.n_links, 3, 3))
    p = np.empty((model.n_links, 3))
    status = compiled.placements_state(model._kt, work_of(model, data), q, R, p)
    if status:
        raise_status(model, status, q, np.zeros(model.nv), np.zeros(model.nv), "v")
    return R, p


def link_velocities(
    model: Model | MimicModel, q: npt.ArrayLike, v: npt.ArrayLike, *, data: Data | None = None
) -> np.ndarray:
    """The spatial velocity (twist) of every link in its own frame: Pinocchio's ``data.v``.

    The forward recursion of the twists, ``t_k = A_{k,b} t_b + P_k v_k`` (000 eq. 5; the base at
    rest), after one geometry pass: O(n), compiled (:func:`denoc_bridge.core.tree.
    twists_state`).  Row k is ``data.v[k + 1]`` of ``pin.forwardKinematics(pin_model, data, q,
    v)``: linear then angular, in link k's frame (Pinocchio's ``LOCAL``).  Linear in v: row k
    is ``J_k v`` with ``J_k`` link k's body Jacobian, so with v = mu it gives the products
    ``J_k mu`` an adjoint needs for the wrenches on the links (the JAX bridge's cotangent of
    ``f_ext``).

    Parameters
    ----------
    model : Model or MimicModel
        A MimicModel takes reduced q and v (the mimic joints follow).
    q : (nq,) or (B, nq) array
        Configuration in Pinocchio's layout; a leading batch axis gives (B, n_links, 6).
    v : (nv,) or (B, nv) array
        Joint velocities.
    data : Data, optional
        Work buffers for this thread; default: the model's own.

    Returns
    -------
    (n_links, 6) or (B, n_links, 6) array
        ``[v_linear, w_angular]`` of each link, in the link's frame.

    Raises
    ------
    InputError
        Wrong shapes or non-finite entries (naming the joint), a zero quaternion.

    Examples
    --------
    >>> import numpy as np
    >>> import denoc_bridge as db
    >>> model = db.load_robot("panda")
    >>> q, v = db.neutral_configuration(model), np.zeros(model.nv)
    >>> v[0] = 1.0                                  # the first joint turns at 1 rad/s
    >>> db.link_velocities(model, q, v)[0]          # link 1 turns about its z axis
    array([0., 0., 0., 0., 0., 1.])
    """
    _check_model(model)
    if isinstance(model, MimicModel):
        qf, vf = model.expand(q, v)
        return link_velocities(model.tree, qf, vf, data=data)
    if np.ndim(q) == 2 or np.ndim(v) == 2:
        q, v, _, _, B = _inputs.state(model, q, v, v, None, "v")
        if B is not None:
            return np.stack([link_velocities(model, q[b], v[b], data=data) for b in range(q.shape[0])])
    v = _inputs.vector(model, v, "v", "v")
    q = _inputs.configuration(model, q)
    t = np.empty((model.n_links, 6))
    status = compiled.twists_state(model._kt, work_of(model, data), q, v, t)
    if status:
        raise_status(model, status, q, v, v, "v")
    return internal_to_pin(t)


def center_of_mass(model: Model | MimicModel, q: npt.ArrayLike, *, data: Data | None = None) -> np.ndarray:
    """Centre of mass of the moving links in the base frame (``pin.centerOfMass``).

    The mass-weighted mean of the links' centres of mass, placed by :func:`forward_kinematics`;
    ``(0, 0, 0)`` for a model without mass.

    Parameters
    ----------
    model : Model or MimicModel
    q : (nq,) array
        One configuration (reduced on a MimicModel; no batch).
    data : Data, optional
        Work buffers (:class:`~denoc_bridge.Data`) for this thread; default: the model's own.

    Returns
    -------
    (3,) array
        The centre of mass, metres.

    Raises
    ------
    InputTypeError
        ``model`` is not a model, ``q`` not real numbers, ``data`` not a Data.
    InputError
        A wrong shape, a non-finite entry (naming it and its joint), a zero quaternion, a
        ``data`` of another model.

    Examples
    --------
    >>> import denoc_bridge as db
    >>> panda = db.load_robot("panda")
    >>> db.center_of_mass(panda, db.neutral_configuration(panda)).round(4)
    array([0.0256, 0.0063, 0.627 ])
    """
    _check_model(model)
    if isinstance(model, MimicModel):
        return center_of_mass(model.tree, model.expand(q), data=data)
    R, p = forward_kinematics(model, q, data=data)
    m = np.asarray(model.mass)
    if m.sum() <= 0:
        return np.zeros(3)
    c = p + np.einsum("kij,kj->ki", R, model.com)
    return (m[:, None] * c).sum(axis=0) / m.sum()


def energies(
    model: Model | MimicModel, q: npt.ArrayLike, v: npt.ArrayLike, *, springs: bool = True
) -> tuple[float, float] | tuple[np.ndarray, np.ndarray]:
    """``(T, V)``: kinetic and potential energy in one compiled O(n) forward recursion.

    ``T = 1/2 v^T I(q) v`` (armature included, :func:`kinetic_energy`) and ``V`` the
    gravitational potential plus the joint springs of the model unless ``springs=False``
    (:func:`potential_energy`), by the compiled energy pass (:func:`denoc_bridge.core.tree.
    energies_state`; a batch in chunks on several threads).  A
    :class:`~denoc_bridge.constraints.mimic.MimicModel` takes reduced q and v.

    Parameters
    ----------
    model : Model or MimicModel
    q : (nq,) or (B, nq) array
        Configuration, or a batch of B; quaternions and (cos, sin) pairs are normalised.
    v : (nv,) or (B, nv) array
        Velocity, or a batch of B.
    springs : bool
        Count the energy stored in the joint springs (``model.stiffness``) in ``V``.

    Returns
    -------
    T, V : float, or (B,) arrays for a batch
        Joules.

    Raises
    ------
    InputTypeError
        ``model`` is not a model, ``q`` or ``v`` not real numbers.
    InputError
        A wrong shape, a non-finite entry (naming it, its joint and the state of a batch), a
        zero quaternion, energies that overflow float64.

    Examples
    --------
    >>> import numpy as np
    >>> import denoc_bridge as db
    >>> panda = db.load_robot("panda")
    >>> q = db.neutral_configuration(panda)
    >>> T, V = db.energies(panda, q, np.ones(panda.nv))
    >>> round(T, 4), round(V, 4)
    (0.8171, 103.4787)
    >>> T, V = db.energies(panda, np.stack([q, q]), np.zeros((2, panda.nv)))  # a batch
    >>> T, V.round(4)
    (array([0., 0.]), array([103.4787, 103.4787]))
    """
    _check_model(model)
    if isinstance(model, MimicModel):
        qf, vf = model.expand(q, v)
        return energies(model.tree, qf, vf, springs=springs)
    q, v, _, _, B = _inputs.state(model, q, v, v, None, "v")
    has_springs = bool(springs and np.any(model.stiffness))
    K, q_rest = model.stiffness, model.rest_configuration
    if B is None:
        T, V = compiled.energies_state(
            model._kt, work_of(model, None), q, v, K, q_rest, has_springs, np.empty(model.nv)
        )
        kinetic, potential, Q, V_ = np.array([T]), np.array([V]), q[None], v[None]
    else:
        Q, V_ = q, v
        kinetic, potential = np.empty(B), np.empty(B)
        args = (model._kt, Q, V_, K, q_rest, has_springs, kinetic, potential)
        run_chunks(compiled.energies_chunk, B, *args, serial_below=_SERIAL_BELOW)
    bad = np.flatnonzero(~(np.isfinite(kinetic) & np.isfinite(potential)))
    if bad.size:  # a non-finite or zero-norm input, or an overflow
        b = int(bad[0])
        prefix = "" if B is None else f"state {b} of the batch: "
        _inputs.check_state(model, Q[b], V_[b], V_[b], "v", prefix)
        raise _inputs.overflow_error(model, prefix, q=Q[b], v=V_[b])
    if B is None:
        return float(kinetic[0]), float(potential[0])
    return kinetic, potential


def potential_energy(model: Model | MimicModel, q: npt.ArrayLike, *, data: Data | None = None) -> float | np.ndarray:
    """Potential energy: gravity ``V = -sum_k m_k g . c_k`` (``pin.computePotentialEnergy``)
    plus the joint springs ``1/2 K (q (-) q_rest)^2`` (none unless the model has stiffness).

    ``c_k`` is link k's centre of mass in the base frame and ``g`` the model's gravity, so
    ``V = 0`` at the height of the base.  Computed by :func:`energies`.

    Parameters
    ----------
    model : Model or MimicModel
    q : (nq,) or (B, nq) array
        Configuration (reduced on a MimicModel), or a batch of B.
    data : Data, optional
        Checked like the other algorithms' (a :class:`~denoc_bridge.Data` of this model), but
        not needed: the energy recursion runs without work buffers.

    Returns
    -------
    float, or (B,) array for a batch
        Joules.

    Raises
    ------
    InputTypeError
        ``model`` is not a model, ``q`` not real numbers, ``data`` not a Data.
    InputError
        A wrong shape, a non-finite entry (naming it and its joint), a zero quaternion, a
        ``data`` of another model.

    Examples
    --------
    >>> import denoc_bridge as db
    >>> panda = db.load_robot("panda")
    >>> round(db.potential_energy(panda, db.neutral_configuration(panda)), 4)
    103.4787
    """
    _check_model(model)
    if data is not None:
        work_of(model, data)  # refused when it is not a Data of this model, as elsewhere
    return energies(model, q, np.zeros(np.shape(q)[:-1] + (model.nv,)))[1]


def hanging_configuration(model: Model, tilt: float = 0.0) -> np.ndarray:
    """A chain that is straight at q = 0 (:func:`denoc_bridge.generators.chain`) hanging from its
    first joint: q = 0 but the first joint at +pi/2 or -pi/2, whichever has the lower potential
    energy (+pi/2 on a tie), then turned by ``tilt``.

    Parameters
    ----------
    model : Model
        A model whose first joint is revolute (an angle, not a continuous joint's (cos, sin))
        and perpendicular to gravity.
    tilt : float
        Angle (rad) added to the first joint: 0 hangs straight down, otherwise the chain is
        released tilted at its pin.

    Returns
    -------
    numpy.ndarray
        The configuration, shape ``(model.nq,)``.

    Raises
    ------
    InputError
        When ``model`` has no joint, its first joint is not revolute, or ``tilt`` is not finite.
    """
    _check_model(model)
    if model.nq == 0 or int(model.joint_type[0]) != int(JointType.REVOLUTE):
        first = model.joint_names[0] if model.joint_names else "(none)"
        raise InputError(f"hanging_configuration: the first joint of model '{model.name}' ({first}) must be revolute")
    if not np.isfinite(tilt):
        raise InputError(f"hanging_configuration: tilt must be finite, got {tilt!r}")
    best: tuple[float, np.ndarray] | None = None
    for sign in (1.0, -1.0):
        q = np.zeros(model.nq)
        q[0] = sign * np.pi / 2 + tilt
        energy = float(potential_energy(model, q))
        if best is None or energy < best[0]:
            best = (energy, q)
    assert best is not None
    return best[1]


def kinetic_energy(
    model: Model | MimicModel, q: npt.ArrayLike, v: npt.ArrayLike, *, data: Data | None = None
) -> float | np.ndarray:
    """``T = 1/2 sum_k t_k^T M_k t_k + 1/2 v^T diag(armature) v`` = ``1/2 v^T I(q) v``.

    Twists from the forward recursion of 000 Table 1 (O(n), compiled).  Equals ``1/2 v^T
    pin.crba v`` and Pinocchio 4.1's ``computeKineticEnergy``, armature included, except on a
    revolute joint about an arbitrary axis (``JointModelRevoluteUnaligned``), whose armature
    term Pinocchio's kinetic energy gets wrong (``tests/algorithms/test_energies.py``).

    Parameters
    ----------
    model : Model or MimicModel
    q : (nq,) or (B, nq) array
        Configuration (reduced on a MimicModel), or a batch of B.
    v : (nv,) or (B, nv) array
        Velocity, or a batch of B.
    data : Data, optional
        Checked like the other algorithms' (a :class:`~denoc_bridge.Data` of this model), but
        not needed: the energy recursion runs without work buffers.

    Returns
    -------
    float, or (B,) array for a batch
        Joules.

    Raises
    ------
    InputTypeError
        ``model`` is not a model, ``q`` or ``v`` not real numbers, ``data`` not a Data.
    InputError
        A wrong shape, a non-finite entry (naming it and its joint), a zero quaternion, a
        ``data`` of another model.

    Examples
    --------
    >>> import numpy as np
    >>> import denoc_bridge as db
    >>> panda = db.load_robot("panda")
    >>> q, v = db.neutral_configuration(panda), np.ones(panda.nv)
    >>> T = db.kinetic_energy(panda, q, v)
    >>> bool(np.isclose(T, 0.5 * v @ db.mass_matrix(panda, q) @ v, rtol=1e-12))
    True
    """
    _check_model(model)
    if data is not None:
        work_of(model, data)  # refused when it is not a Data of this model, as elsewhere
    return energies(model, q, v, springs=False)[0]
