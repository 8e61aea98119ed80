"""A model whose URDF ``<mimic>`` relations are joint-space constraints: the tree, the coupling
``q_full = G q_r + offset``, ``v_full = G v_r`` and the maps between the reduced and the tree's
coordinates (see :mod:`denoc_bridge.constraints.mimic` for the dynamics)."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, final, overload

import numpy as np
import numpy.typing as npt

from denoc_bridge._text import count
from denoc_bridge.errors import InputError, InputTypeError, ModelError
from denoc_bridge.multibody.checks import ModelKind
from denoc_bridge.multibody.constraints import Mimic
from denoc_bridge.multibody.inputs import real_array
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.multibody.joints import limit_arrays as tree_limit_arrays
from denoc_bridge.multibody.model import Model, NamedConfigurations

__all__ = ["MimicModel", "TreeOnlyError", "mimic_problems"]


_ONE_DOF = (JointType.REVOLUTE, JointType.PRISMATIC, JointType.CONTINUOUS)

# tree attributes with the same meaning on a MimicModel (links, names, inertias, modules)
_SHARED = frozenset(
    (
        "name",
        "source",
        "base_name",
        "floating_base",
        "link_names",
        "joint_names",
        "n_links",
        "frames",
        "warnings",
        "modules",
        "n_modules",
        "mass",
        "com",
        "inertia",
        "total_mass",
        "link_index",
        "joint_index",
        "joint_label",
        "parent",
        "joint_type",
        "module_start",
        "module_end",
        "module_parent",
        "link_module",
    )
)


class TreeOnlyError(AttributeError, ModelError):
    """A tree-layout attribute asked of a MimicModel (an AttributeError, so hasattr works)."""


def pack_maps(*maps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(imap, fmap): the maps in two flat arrays, ``imap = [nq_r, nv_r, nc, nv_tree, q_keep,
    v_keep, s_q, m_q, s_v, m_v, circ, col]`` (int64), ``fmap = [mult, off, scale]`` (two
    arguments for the compiled entries: a tuple of arrays costs about 0.1 us per array to
    dispatch)."""
    q_keep, v_keep, s_q, m_q, s_v, m_v, circ, col, mult, off, scale = maps
    head = np.array([len(q_keep), len(v_keep), len(s_v), len(col)], dtype=np.int64)
    imap = np.concatenate([head, q_keep, v_keep, s_q, m_q, s_v, m_v, circ, col]).astype(np.int64)
    return np.ascontiguousarray(imap), np.ascontiguousarray(np.concatenate([mult, off, scale]), dtype=np.float64)


@final  # the dynamics dispatch on type(model) is Model / MimicModel: no subclasses
class MimicModel(ModelKind):
    """A tree :class:`~denoc_bridge.multibody.model.Model` whose ``model.mimic`` relations are
    joint-space constraints: q, v, a and tau in Pinocchio's mimic layout (see the module
    docstring), ``nq``/``nv`` those of ``pin.buildModelFromUrdf(path, mimic=True)``.

    ``tree`` is the model with the mimic joints independent (``load_urdf(path)``); names,
    links, inertias, modules and ``gravity`` are shared with it.  ``tree.mimic`` holds the
    relations as declared; ``mimic`` holds them as applied: a chain (a mimics b, which mimics
    c, ...) is composed into one relation to its root, ``q_a = (m_ab m_bc) q_c + (m_ab o_bc +
    o_ab)`` at any depth, and a cycle is a :class:`~denoc_bridge.errors.ModelError` naming its
    joints.  ``idx_q``, ``idx_v``,
    ``nq_joint``, ``nv_joint`` (per joint), ``lower_limit`` and ``upper_limit`` are in the
    reduced layout (a mimic joint has nq = nv = 0 and its mimicked joint's indices, as in
    Pinocchio).  :func:`denoc_bridge.inverse_dynamics`, ``mass_matrix``,
    ``forward_dynamics``, ``inverse_mass_matrix``, ``nonlinear_effects``,
    ``gravity_torques``, the configuration functions, ``forward_kinematics``, ``energies``
    and ``simulate`` (:mod:`denoc_bridge.simulation.mimic`) accept it; other functions take
    ``model.tree`` and :meth:`expand`.

    The tree may carry loop closures (``<loop_joint>``): the mimic rows and the loop rows are
    then solved together on the tree (:mod:`denoc_bridge.constraints.mimic_loops`).
    """

    # set in __init__ (with setattr), reduced layout
    idx_q: np.ndarray
    idx_v: np.ndarray
    nq_joint: np.ndarray
    nv_joint: np.ndarray
    lower_limit: np.ndarray
    upper_limit: np.ndarray

    def __init__(self, tree: Model) -> None:
        if not isinstance(tree, Model):
            raise ModelError(f"MimicModel needs a denoc_bridge Model, got {type(tree).__name__}")
        self.tree = tree
        _check_relations(tree, tree.mimic)
        self.mimic = composed_relations(tree.mimic)
        index = {n: k for k, n in enumerate(tree.joint_names)}
        slaves = np.array([index[r.joint] for r in self.mimic], dtype=np.int64)
        masters = np.array([index[r.mimicked] for r in self.mimic], dtype=np.int64)
        jt, iq, iv = tree.joint_type, tree.idx_q, tree.idx_v
        is_slave = np.zeros(tree.n_links, dtype=bool)
        is_slave[slaves] = True
        self._q_keep = np.concatenate(
            [np.arange(iq[k], iq[k] + tree.nq_joint[k]) for k in range(tree.n_links) if not is_slave[k]]
            + [np.zeros(0, np.int64)]
        ).astype(np.int64)
        self._v_keep = np.concatenate(
            [np.arange(iv[k], iv[k] + tree.nv_joint[k]) for k in range(tree.n_links) if not is_slave[k]]
            + [np.zeros(0, np.int64)]
        ).astype(np.int64)
        self.nq, self.nv = int(self._q_keep.size), int(self._v_keep.size)
        col = np.full(tree.nv, -1, dtype=np.int64)  # reduced DOF that each tree DOF follows
        col[self._v_keep] = np.arange(self.nv)
        qcol = np.full(tree.nq, -1, dtype=np.int64)
        qcol[self._q_keep] = np.arange(self.nq)
        self._s_v, self._m_v = iv[slaves], iv[masters]  # v index of each mimic / mimicked DOF
        self._s_q, self._m_q = iq[slaves], iq[masters]
        self._mult = np.array([r.multiplier for r in self.mimic], dtype=float)
        self._off = np.array([r.offset for r in self.mimic], dtype=float)
        circ = jt[slaves] == int(JointType.CONTINUOUS)
        self._circ = circ.astype(np.int64)
        self._q_maps = tuple((self._s_q[w], self._m_q[w], self._mult[w], self._off[w]) for w in (~circ, circ))
        col[self._s_v] = col[self._m_v]
        self._col = col
        self._Gs = np.zeros((self.nv, len(self.mimic)))  # G^T restricted to the mimic rows
        self._Gs[col[self._s_v], np.arange(len(self.mimic))] = self._mult
        self._scale = np.ones(tree.nv)
        self._scale[self._s_v] = self._mult
        idx_q, idx_v = qcol[iq].copy(), col[iv].copy()  # a mimic joint points at its mimicked joint
        idx_q[slaves] = qcol[iq[masters]]
        nqj, nvj = tree.nq_joint.copy(), tree.nv_joint.copy()
        nqj[slaves] = nvj[slaves] = 0
        for name, value in (
            ("idx_q", idx_q),
            ("idx_v", idx_v),
            ("nq_joint", nqj),
            ("nv_joint", nvj),
            ("lower_limit", tree.lower_limit[self._q_keep]),
            ("upper_limit", tree.upper_limit[self._q_keep]),
        ):
            value = np.array(value)
            value.setflags(write=False)
            setattr(self, name, value)
        self._references = {key: self.reduce_configuration(q) for key, q in tree.reference_configurations.items()}
        for q in self._references.values():
            q.setflags(write=False)

    @property
    def loops(self) -> tuple:
        """The tree's loop closures (``tree.add_loop_closure``): with them the model is a tree with
        two kinds of holonomic constraint, the mimic rows K and the loop rows C(q)
        (:mod:`denoc_bridge.constraints.mimic_loops`)."""
        return self.tree.loops

    @property
    def gravity(self) -> np.ndarray:
        """The tree's gravity (settable)."""
        return self.tree.gravity

    @gravity.setter
    def gravity(self, value: npt.ArrayLike) -> None:
        self.tree.gravity = value

    @property
    def reference_configurations(self) -> NamedConfigurations:
        """The tree's reference configurations, reduced (the mimic joints' entries dropped)."""
        return NamedConfigurations(self._references, self.tree.name)

    @property
    def n_constraints(self) -> int:
        """Number of mimic relations (constraint rows)."""
        return len(self.mimic)

    def __getattr__(self, name: str) -> Any:  # only for attributes not found otherwise
        d = self.__dict__
        if name.startswith("__") or "nv" not in d:  # dunder lookups, unpickling
            raise AttributeError(name)
        if name in _SHARED:
            return getattr(d["tree"], name)
        raise TreeOnlyError(
            f"'{name}' of model '{d['tree'].name}': this MimicModel works in reduced coordinates "
            f"(nq={d['nq']}, nv={d['nv']}); functions that need the tree layout take model.tree "
            "with model.expand(q, v, a) (mimic joints as independent joints)"
        )

    def __repr__(self) -> str:
        joints = count(self.n_constraints, "mimic joint")
        return (
            f"MimicModel('{self.tree.name}', nq={self.nq}, nv={self.nv}, {joints}; "
            f"tree nq={self.tree.nq}, nv={self.tree.nv})"
        )

    # --------------------------------------------------------------- coordinates
    def coupling_matrix(self) -> np.ndarray:
        """Dense G (tree nv x nv): ``v_full = G v_r``."""
        G = np.zeros((self.tree.nv, self.nv))
        G[np.arange(self.tree.nv), self._col] = self._scale
        return G

    def constraint_matrix(self) -> np.ndarray:
        """Dense K (n_constraints x tree nv): ``K v_full = 0`` (rows ``e_s - multiplier e_m``), ``K G = 0``."""
        K = np.zeros((self.n_constraints, self.tree.nv))
        r = np.arange(self.n_constraints)
        K[r, self._s_v] = 1.0
        K[r, self._m_v] = -self._mult
        return K

    def _reduced(self, x: npt.ArrayLike, name: str, n: int, what: str = "v") -> np.ndarray:
        """A reduced vector (or batch) as float64, shape and finiteness checked; a vector of the
        tree's full size is named as such, a non-finite entry with its joint."""
        if not (type(x) is np.ndarray and x.dtype == np.float64):
            x = real_array(x, name)
        if x.ndim not in (1, 2) or x.shape[-1] != n:
            full = self.tree.nq if what == "q" else self.tree.nv
            hint = ""
            if x.ndim in (1, 2) and x.shape[-1] == full:
                how = "reduce_configuration" if what == "q" else "reduce_forces" if name == "tau" else "reduce_velocity"
                hint = f"; that is the tree's size (mimic joints included): model.{how}({name}) gives the reduced one"
            raise InputError(
                f"{name} must have shape ({n},) or (B, {n}) (model '{self.tree.name}' with mimic "
                f"joints as constraints has n{what}={n}), got shape {x.shape}{hint}"
            )
        if not np.isfinite(x).all():
            i = tuple(int(j) for j in np.argwhere(~np.isfinite(x))[0])
            keep = self._q_keep if what == "q" else self._v_keep
            starts = self.tree.idx_q if what == "q" else self.tree.idx_v
            k = int(np.searchsorted(starts, keep[i[-1]], side="right") - 1)
            raise InputError(
                f"{name}[{', '.join(map(str, i))}] = {x[i]} is not finite (joint {self.tree.joint_label(k)})"
            )
        return x

    def _tree_sized(self, x: npt.ArrayLike, name: str, n: int, axis: int = -1) -> np.ndarray:
        """A tree-sized array (``n`` entries along ``axis``) as float64, or an InputError."""
        x = real_array(x, name)
        axis = _axis(axis, x.ndim, name)
        if x.ndim == 0 or x.shape[axis] != n:
            raise InputError(
                f"{name} must have the tree's size {n} along axis {axis} (model '{self.tree.name}' with its "
                f"mimic joints), got shape {x.shape}"
            )
        return x

    @overload
    def expand(self, q: npt.ArrayLike, v: None = None, a: None = None) -> np.ndarray: ...
    @overload
    def expand(self, q: npt.ArrayLike, v: npt.ArrayLike, a: None = None) -> tuple[np.ndarray, np.ndarray]: ...
    @overload
    def expand(
        self, q: npt.ArrayLike, v: npt.ArrayLike, a: npt.ArrayLike
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...
    @overload
    def expand(self, q: npt.ArrayLike, v: None, a: npt.ArrayLike) -> tuple[np.ndarray, None, np.ndarray]: ...
    def expand(
        self, q: npt.ArrayLike, v: npt.ArrayLike | None = None, a: npt.ArrayLike | None = None
    ) -> np.ndarray | tuple[np.ndarray | None, ...]:
        """The tree's state from reduced coordinates (the mimic joints' entries filled in).

        ``q_full = G q_r + offset`` (on the angle for continuous joints), ``v_full = G v_r``,
        ``a_full = G a_r``: each mimic joint follows its mimicked joint.  What the functions that
        need the tree layout take (with ``model.tree``).

        Parameters
        ----------
        q : (nq,) or (B, nq) array
            Reduced configuration (``model.nq`` entries), or a batch.
        v : (nv,) or (B, nv) array, optional
            Reduced velocity, the same batch as ``q``.
        a : (nv,) or (B, nv) array, optional
            Reduced acceleration, the same batch as ``q``.

        Returns
        -------
        q_full : (tree.nq,) or (B, tree.nq) array
            When ``v`` and ``a`` are None.
        (q_full, v_full) : tuple of arrays
            When ``v`` is given and ``a`` is None.
        (q_full, v_full, a_full) : tuple of arrays
            When ``a`` is given (``v_full`` is None if ``v`` is).

        Raises
        ------
        InputTypeError
            An argument that is not an array of real numbers.
        InputError
            A wrong shape (the tree's size is named as such), a non-finite entry (naming the
            entry and its joint), ``v`` or ``a`` not of ``q``'s batch.

        Examples
        --------
        >>> import numpy as np
        >>> import denoc_bridge as db
        >>> model = db.load_robot("panda", mimic=True)  # finger 2 mimics finger 1
        >>> model.nq, model.tree.nq
        (8, 9)
        >>> q_full, v_full = model.expand(np.full(8, 0.02), np.ones(8))
        >>> q_full[-2:], v_full[-2:]
        (array([0.02, 0.02]), array([1., 1.]))
        """
        q = self._reduced(q, "q", self.nq, "q")
        qf = np.empty(q.shape[:-1] + (self.tree.nq,))
        qf[..., self._q_keep] = q
        (ls, lm, lk, lo), (cs, cm, ck, co) = self._q_maps
        qf[..., ls] = lk * qf[..., lm] + lo
        if cs.size:  # continuous: angle = atan2(sin, cos)
            angle = ck * np.arctan2(qf[..., cm + 1], qf[..., cm]) + co
            qf[..., cs], qf[..., cs + 1] = np.cos(angle), np.sin(angle)
        out: list[np.ndarray | None] = [qf]
        for x, name in ((v, "v"), (a, "a")):
            if x is None:
                out.append(None)
                continue
            xr = self._reduced(x, name, self.nv)
            if xr.ndim != q.ndim or xr.shape[:-1] != q.shape[:-1]:
                raise InputError(f"{name} has shape {xr.shape}, q has shape {q.shape}: one state or the same batch")
            out.append(self._full(xr))
        if v is None and a is None:
            return qf
        return tuple(out) if a is not None else tuple(out[:2])

    def _full(self, x: np.ndarray) -> np.ndarray:
        """``G x`` for a reduced velocity, acceleration or step (unchecked)."""
        return x[..., self._col] * self._scale

    def reduce_configuration(self, q_full: npt.ArrayLike) -> np.ndarray:
        """The reduced q of a tree configuration: the mimic joints' entries dropped.

        The inverse of :meth:`expand` on configurations that satisfy the mimic relations;
        on others, the mimic joints' values are dropped unchecked.  Values pass through
        unchanged (a pure selection: not normalised, not checked for finiteness).

        Parameters
        ----------
        q_full : (..., tree.nq) array
            A configuration of ``model.tree``, or a batch of them (any leading axes).

        Returns
        -------
        q : (..., nq) array

        Raises
        ------
        InputTypeError
            ``q_full`` is not an array of real numbers.
        InputError
            Its last axis is not the tree's ``nq``.

        Examples
        --------
        >>> import numpy as np
        >>> import denoc_bridge as db
        >>> model = db.load_robot("panda", mimic=True)
        >>> model.reduce_configuration(np.arange(9.0))
        array([0., 1., 2., 3., 4., 5., 6., 7.])
        """
        return self._tree_sized(q_full, "q_full", self.tree.nq)[..., self._q_keep]

    def reduce_velocity(self, v_full: npt.ArrayLike) -> np.ndarray:
        """The reduced v (or a) of a tree velocity: the mimic joints' DOFs dropped.

        The inverse of ``G``  (:meth:`expand`) on velocities that satisfy the mimic relations
        (``K v_full = 0``); values pass through unchanged (a pure selection).

        Parameters
        ----------
        v_full : (..., tree.nv) array
            A velocity or acceleration of ``model.tree``, or a batch (any leading axes).

        Returns
        -------
        v : (..., nv) array

        Raises
        ------
        InputTypeError
            ``v_full`` is not an array of real numbers.
        InputError
            Its last axis is not the tree's ``nv``.

        Examples
        --------
        >>> import numpy as np
        >>> import denoc_bridge as db
        >>> model = db.load_robot("panda", mimic=True)
        >>> model.reduce_velocity(np.arange(9.0))
        array([0., 1., 2., 3., 4., 5., 6., 7.])
        """
        return self._tree_sized(v_full, "v_full", self.tree.nv)[..., self._v_keep]

    def reduce_forces(self, tau_full: npt.ArrayLike, axis: int = -1) -> np.ndarray:
        """``G^T tau_full``: generalized forces of the tree as forces on the reduced coordinates.

        A mimic joint's force adds, times its multiplier, to its mimicked joint's (the virtual
        work ``tau_full . G v_r`` is kept).  Along ``axis``, so that ``G^T M G`` is
        ``reduce_forces(reduce_forces(M, 0), 1)``.  Values pass through unchanged (not checked
        for finiteness).

        Parameters
        ----------
        tau_full : array with ``tree.nv`` entries along ``axis``
            Forces of ``model.tree`` (a vector, a batch, or a matrix such as the tree's GIM).
        axis : int
            The axis of the tree's DOFs (negative values count from the end).

        Returns
        -------
        tau : array
            ``tau_full`` with ``axis`` reduced to ``nv`` entries.

        Raises
        ------
        InputTypeError
            ``tau_full`` is not an array of real numbers, ``axis`` not an integer.
        InputError
            ``axis`` is out of range, or ``tau_full`` does not have the tree's ``nv`` entries
            along it.

        Examples
        --------
        >>> import numpy as np
        >>> import denoc_bridge as db
        >>> model = db.load_robot("panda", mimic=True)
        >>> model.reduce_forces(np.arange(9.0))  # finger 2's force acts on finger 1
        array([ 0.,  1.,  2.,  3.,  4.,  5.,  6., 15.])
        >>> q_full = model.expand(np.zeros(8))
        >>> model.reduce_forces(model.reduce_forces(db.mass_matrix(model.tree, q_full), 0), 1).shape
        (8, 8)
        """
        x = self._tree_sized(tau_full, "tau_full", self.tree.nv, axis)
        last = axis in (-1, x.ndim - 1)
        if not last:
            x = np.moveaxis(x, axis, -1)
        out = x[..., self._v_keep] + x[..., self._s_v] @ self._Gs.T
        return out if last else np.moveaxis(out, -1, axis)

    def full_forces(self, tau: npt.ArrayLike) -> np.ndarray:
        """Tree forces ``tau_full`` with ``G^T tau_full = tau``: tau on the independent DOFs, zero
        on the mimic joints' ones.

        A right inverse of :meth:`reduce_forces`: ``reduce_forces(full_forces(tau)) == tau``.

        Parameters
        ----------
        tau : (nv,) or (B, nv) array
            Forces on the reduced coordinates, or a batch.

        Returns
        -------
        tau_full : (tree.nv,) or (B, tree.nv) array

        Raises
        ------
        InputTypeError
            ``tau`` is not an array of real numbers.
        InputError
            A wrong shape (the tree's size is named as such), a non-finite entry (naming the
            entry and its joint).

        Examples
        --------
        >>> import numpy as np
        >>> import denoc_bridge as db
        >>> model = db.load_robot("panda", mimic=True)
        >>> model.full_forces(np.arange(8.0))
        array([0., 1., 2., 3., 4., 5., 6., 7., 0.])
        """
        tau_r = self._reduced(tau, "tau", self.nv)
        out = np.zeros(tau_r.shape[:-1] + (self.tree.nv,))
        out[..., self._v_keep] = tau_r
        return out

    def _kernel_maps(self) -> tuple[np.ndarray, np.ndarray, int]:
        """(imap, fmap, reach) of the compiled core (``core/mimic.pxi``, built once): the maps between
        the reduced and the tree's coordinates packed by :func:`pack_maps`,
        and the number of links that hold every mimic and mimicked DOF."""
        maps = self.__dict__.get("_maps")
        if maps is None:
            imap, fmap = pack_maps(
                self._q_keep,
                self._v_keep,
                self._s_q,
                self._m_q,
                self._s_v,
                self._m_v,
                self._circ,
                self._col,
                self._mult,
                self._off,
                self._scale,
            )
            dofs = np.concatenate([self._s_v, self._m_v])
            reach = int(self.tree.idx_v.searchsorted(dofs.max(), side="right")) if dofs.size else 0
            maps = self._maps = (imap, fmap, reach)
        return maps


def _axis(axis: object, ndim: int, name: str) -> int:
    """``axis`` of the array ``name`` (``ndim`` dimensions) as an integer in range, or an error naming it."""
    try:
        k = operator.index(axis)  # type: ignore[arg-type]
    except TypeError:
        raise InputTypeError(f"axis must be an integer, got {type(axis).__name__}") from None
    if not -max(ndim, 1) <= k < max(ndim, 1):
        raise InputError(f"axis {k} is out of range for {name} with {ndim} dimension(s)")
    return k


def _mimic_cycle(joint: str, by_slave: dict[str, Mimic]) -> list[str]:
    """The mimic cycle that the chain from ``joint`` (mimic -> mimicked -> ...) runs into, as
    ``[j, ..., j]`` (``joint`` itself need not be on it), or [] when the chain ends at a joint
    that mimics no other."""
    path, j = [joint], by_slave[joint].mimicked
    while j in by_slave and j not in path:
        path.append(j)
        j = by_slave[j].mimicked
    return path[path.index(j) :] + [j] if j in path else []


def composed_relations(relations: Sequence[Mimic]) -> tuple[Mimic, ...]:
    """Each relation of ``relations`` as one relation to the root of its chain (the joint at the
    end of mimic -> mimicked -> ... that mimics no other), in the same order.

    ``q_a = m_ab q_b + o_ab`` and ``q_b = m_bc q_c + o_bc`` give
    ``q_a = (m_ab m_bc) q_c + (m_ab o_bc + o_ab)``, at any depth; a relation whose mimicked
    joint mimics no other is returned as it is.  The relations must have passed
    :func:`_check_relations` (no cycle, each joint declared once)."""
    by_slave = {r.joint: r for r in relations}
    out = []
    for r in relations:
        multiplier, offset, root = r.multiplier, r.offset, r.mimicked
        while root in by_slave:
            up = by_slave[root]
            multiplier, offset, root = multiplier * up.multiplier, multiplier * up.offset + offset, up.mimicked
        out.append(r if root == r.mimicked else Mimic(r.joint, root, multiplier, offset))
    return tuple(out)


def mimic_problems(tree: Model) -> list[str]:
    """What :class:`MimicModel` would refuse in each of ``tree.mimic``'s relations (one message
    naming the joint per bad relation), for a loader that keeps the relations as records only
    (``load_urdf(path)`` without ``mimic=True``, like ``pin.buildModelFromUrdf(path)``)."""
    problems = []
    for r in tree.mimic:
        try:
            _check_relations(tree, [r])
        except ModelError as exc:
            problems.append(str(exc))
    return problems


def _check_relations(tree: Model, relations: Sequence[Mimic]) -> tuple[np.ndarray, np.ndarray]:
    """(mimic links, mimicked links) of the relations; ModelError naming the joint on a bad one."""
    index = {n: k for k, n in enumerate(tree.joint_names)}
    fixed = {f.name for f in tree.frames if f.kind == "fixed_joint"}
    slaves: list[int] = []
    masters: list[int] = []
    seen: dict[str, bool] = {}
    by_slave = {r.joint: r for r in tree.mimic}
    for r in relations:
        where = f"mimic joint '{r.joint}'"
        if r.joint not in index:
            raise ModelError(f"{where}: no such moving joint in model '{tree.name}'")
        if r.joint in seen:
            raise ModelError(f"{where}: declared twice")
        if not (np.isfinite(r.multiplier) and np.isfinite(r.offset)):
            raise ModelError(f"{where}: multiplier and offset must be finite")
        if r.mimicked == r.joint:
            raise ModelError(f"{where}: mimics itself")
        if r.mimicked not in index:
            kind = "a fixed joint" if r.mimicked in fixed else "not a joint of the model"
            raise ModelError(f"{where}: the mimicked joint '{r.mimicked}' is {kind}")
        if r.mimicked in by_slave:  # a chain: composed to its root (composed_relations), unless it loops
            cycle = _mimic_cycle(r.joint, by_slave)
            if cycle:
                through = "" if cycle[0] == r.joint else f" (its chain runs into it through '{r.mimicked}')"
                raise ModelError(
                    f"{where}: the mimic relations form a cycle ({' -> '.join(repr(j) for j in cycle)}){through}: "
                    "no joint of the cycle is free to move the others"
                )
        s, m = index[r.joint], index[r.mimicked]
        for k, role in ((s, "mimic"), (m, "mimicked")):
            if JointType(tree.joint_type[k]) not in _ONE_DOF:
                raise ModelError(
                    f"{where}: the {role} joint {tree.joint_label(k)} is not revolute, continuous or "
                    "prismatic (mimic relations are between one-DOF joints)"
                )
        if (tree.joint_type[s] == JointType.CONTINUOUS) != (tree.joint_type[m] == JointType.CONTINUOUS):
            raise ModelError(
                f"{where}: {tree.joint_label(s)} and the mimicked {tree.joint_label(m)} must both be "
                "continuous or both bounded (Pinocchio refuses the mix: different configuration sizes)"
            )
        seen[r.joint] = True
        slaves.append(s)
        masters.append(m)
    return np.array(slaves, dtype=np.int64), np.array(masters, dtype=np.int64)


def limit_arrays(model: MimicModel) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The reduced coordinates whose position limits a simulation enforces: each independent
    revolute or prismatic joint with limits (those of :func:`denoc_bridge.multibody.joints.limit_arrays`), its range
    narrowed by the limits of the (non-continuous) joints that mimic it: ``lower <= multiplier
    q_m + offset <= upper`` is an interval of q_m.  Returns ((n, 2) reduced q and v indices,
    (n, 2) limits, the name of each joint).  A range that the
    limits leave empty is a :class:`ModelError` naming the joints."""
    tree = model.tree
    qcol = {int(iq): r for r, iq in enumerate(model._q_keep)}
    vcol = {int(iv): r for r, iv in enumerate(model._v_keep)}
    mimic_of = {int(model._s_q[j]): j for j in range(model.n_constraints) if not model._circ[j]}
    name_of = {int(tree.idx_q[k]): tree.joint_names[k] for k in range(tree.n_links)}
    ranges: dict[int, list] = {}  # reduced q index -> [lower, upper, reduced v index, names]
    t_i, t_f = tree_limit_arrays(tree)
    for (iq, iv), (lo, hi) in zip(t_i.tolist(), t_f.tolist()):
        if iq in qcol:
            rq, rv = qcol[iq], vcol[iv]
        elif iq in mimic_of and int(model._m_q[mimic_of[iq]]) in qcol and model._mult[mimic_of[iq]] != 0.0:
            j = mimic_of[iq]
            mult, off = float(model._mult[j]), float(model._off[j])
            lo, hi = sorted(
                ((lo - off) / mult + 0.0, (hi - off) / mult + 0.0)
            )  # lower <= mult q_m + off <= upper (+0.0: no -0)
            rq, rv = qcol[int(model._m_q[j])], vcol[int(model._m_v[j])]
        else:
            continue
        r = ranges.setdefault(rq, [-np.inf, np.inf, rv, []])
        r[0], r[1] = max(r[0], lo), min(r[1], hi)
        r[3].append(name_of[iq])
        if r[0] > r[1]:
            raise ModelError(
                f"model '{tree.name}': the joint limits of {' and '.join(repr(n) for n in r[3])} leave no "
                "position (a mimic joint's limits act on the joint it mimics through its multiplier and "
                "offset); fix the <limit> elements, or simulate with limits=False"
            )
    rows = sorted(ranges.items())
    idx = np.array([[rq, r[2]] for rq, r in rows], dtype=np.int64).reshape(-1, 2)
    lim = np.array([r[:2] for _, r in rows], dtype=float).reshape(-1, 2)
    return idx, lim, [name_of[int(model._q_keep[rq])] for rq, _ in rows]
