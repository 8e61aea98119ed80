"""URDF ``<mimic>`` joints as joint-space constraints (``load_urdf(path, mimic=True)``).

A mimic joint s follows its mimicked joint m: ``q_s = multiplier q_m + offset``.  The
relation is a linear constraint in joint space: with ``q_r``, ``v_r`` the coordinates
of the independent joints (the tree's q and v with the mimic joints' entries deleted),

    q_full = G q_r + offset,    v_full = G v_r,    a_full = G a_r,

with G the (nv_full x nv_r) coupling matrix (one non-zero per row: 1 for an
independent DOF, the multiplier for a mimic DOF, in the column of its mimicked DOF).
The power balance ``tau_r . v_r = tau_full . v_full`` gives the reduced dynamics on
the open tree's O(n) algorithms:

    M_r = G^T M(q_full) G,      tau_r = G^T ID_full(q_full, G v_r, G a_r),

and forward dynamics ``M_r a_r = tau_r - G^T h_full``.  Without forming M, each relation
is treated as a constraint row ``K a_full = 0`` of the full model (``K G = 0``; row
``e_s - multiplier e_m``), in Lagrange-multiplier form (as :mod:`denoc_bridge.loops`):

    a = a0 + M^-1 K^T lambda,   (K M^-1 K^T) lambda = -K a0,   a_r = a[independent],

with ``a0`` the open-tree forward dynamics for ``tau_full = G^+T tau_r`` (tau_r on the
independent DOFs) and ``M^-1 K^T`` from the same O(n) recursion, one right-hand side per
mimic joint.  Then ``G^T M a = G^T (tau_full - h)`` since ``G^T K^T = 0``: the reduced
equations hold exactly.  The inverse GIM follows as ``M_r^-1 = P[i, i]`` with
``P = M^-1 - M^-1 K^T (K M^-1 K^T)^-1 K M^-1 = G M_r^-1 G^T``.

Pinocchio 4.1 (verified here)
-----------------------------
* ``pin.buildModelFromUrdf(path, mimic=True)`` (also ``buildModelFromXML`` and with a
  root joint) keeps every joint, in the same order and with the same names as without
  ``mimic``; each mimic joint becomes a ``JointModelMimic`` (``scaling`` = multiplier,
  ``offset``) with nq = nv = 0 whose ``idx_q``/``idx_v`` are those of the mimicked
  joint.  ``model.nq``/``nv`` count the independent joints only: q and v are the tree's
  with the mimic entries deleted (``nvExtended`` is the tree's nv).
* ``rnea`` returns nv_r torques (= G^T tau_full), ``crba`` the nv_r x nv_r matrix
  G^T M G, ``nonLinearEffects``, ``integrate``, ``neutral`` (mimic offsets do not
  appear: zeros, (1, 0) pairs) and ``randomConfiguration`` work in that layout; ``aba``
  and ``computeMinverse`` raise "This algorithm does not support Joint Mimic type".
* Refused ("The parent joint of the mimic joint is not in the kinematic tree"): an unknown
  or fixed mimicked joint, a mimic of itself, and a mimicked joint that comes *later* in
  Pinocchio's depth-first order (siblings sorted by name), e.g. example-robot-data's
  ``romeo.urdf`` and ``talos_full_v2.urdf``.  Refused ("configuration spaces have different
  sizes"): chains (the mimicked joint is itself a mimic) and continuous/bounded mixes.
  A continuous joint may mimic a continuous one: ``angle_s = multiplier angle_m + offset``
  with ``angle = atan2(sin, cos)``.  ``<mimic>`` on fixed, planar and floating joints is
  ignored.  The multiplier defaults to 1 and the offset to 0.

Here: the same relations and layout; a mimicked joint may come anywhere in the tree
(only :func:`denoc_bridge.to_pinocchio` needs it first), and a ``<mimic>`` on a planar or
floating joint is refused (:class:`~denoc_bridge.errors.ModelError`) instead of ignored.
"""

from __future__ import annotations

import numpy as np

from ._text import count
from .errors import InputError, ModelError, SingularInertiaError
from .joints import JointType
from .kernels import mimic as _km
from .model import Model

__all__ = ["MimicModel", "inverse_dynamics", "mass_matrix", "forward_dynamics", "inverse_mass_matrix"]

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


class MimicModel:
    """A tree :class:`~denoc_bridge.model.Model` whose ``model.mimic`` relations are
    joint-space constraints: q, v, a and tau in Pinocchio's mimic layout (see the module
    docstring), ``nq``/``nv`` those of ``pin.buildModelFromUrdf(path, mimic=True)``.

    ``tree`` is the model with the mimic joints independent (``load_urdf(path)``); names,
    links, inertias, modules and ``gravity`` are shared with it.  ``idx_q``, ``idx_v``,
    ``nq_joint``, ``nv_joint`` (per joint), ``lower_limit`` and ``upper_limit`` are in the
    reduced layout (a mimic joint has nq = nv = 0 and its mimicked joint's indices, as in
    Pinocchio).  :func:`denoc_bridge.inverse_dynamics`, ``mass_matrix``,
    ``forward_dynamics``, ``inverse_mass_matrix``, ``nonlinear_effects``,
    ``gravity_torques``, the configuration functions, ``forward_kinematics``, ``energies``
    and ``simulate`` (:mod:`denoc_bridge.mimic_simulation`) accept it; other functions take
    ``model.tree`` and :meth:`expand`.
    """

    def __init__(self, tree: Model):
        if not isinstance(tree, Model):
            raise ModelError(f"MimicModel needs a denoc_bridge Model, got {type(tree).__name__}")
        if tree.loops:
            raise ModelError(f"model '{tree.name}': mimic joints and loop closures together are not supported")
        self.tree = tree
        self.mimic = tuple(tree.mimic)
        slaves, masters = _check_relations(tree, self.mimic)
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
        self._tree0 = None  # gravity-free twin, for M^-1 columns

    loops = ()

    @property
    def gravity(self) -> np.ndarray:
        """The tree's gravity (settable)."""
        return self.tree.gravity

    @gravity.setter
    def gravity(self, value):
        self.tree.gravity = value

    @property
    def n_constraints(self) -> int:
        """Number of mimic relations (constraint rows)."""
        return len(self.mimic)

    def __getattr__(self, name):  # only for attributes not found otherwise
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

    def _reduced(self, x, name, n, what="v"):
        """A reduced vector (or batch) as float64, shape and finiteness checked."""
        if not (type(x) is np.ndarray and x.dtype == np.float64):
            from .algorithms._inputs import real_array

            x = real_array(x, name)
        if x.ndim not in (1, 2) or x.shape[-1] != n:
            raise InputError(
                f"{name} must have shape ({n},) or (B, {n}) (model '{self.tree.name}' with mimic "
                f"joints as constraints has n{what}={n}), got shape {x.shape}"
            )
        if not np.isfinite(x).all():
            i = tuple(int(j) for j in np.argwhere(~np.isfinite(x))[0])
            raise InputError(f"{name}[{', '.join(map(str, i))}] = {x[i]} is not finite")
        return x

    def expand(self, q, v=None, a=None):
        """The tree's state from reduced coordinates: ``q_full`` alone, ``(q_full, v_full)`` when
        ``a`` is None, else ``(q_full, v_full, a_full)``; ``q_full = G q_r + offset`` (angles for
        continuous joints), ``v_full = G v_r``, ``a_full = G a_r``.  A leading batch axis is allowed."""
        q = self._reduced(q, "q", self.nq, "q")
        qf = np.empty(q.shape[:-1] + (self.tree.nq,))
        qf[..., self._q_keep] = q
        (ls, lm, lk, lo), (cs, cm, ck, co) = self._q_maps
        qf[..., ls] = lk * qf[..., lm] + lo
        if cs.size:  # continuous: angle = atan2(sin, cos)
            angle = ck * np.arctan2(qf[..., cm + 1], qf[..., cm]) + co
            qf[..., cs], qf[..., cs + 1] = np.cos(angle), np.sin(angle)
        out = [qf]
        for x, name in ((v, "v"), (a, "a")):
            if x is None:
                out.append(None)
                continue
            x = self._reduced(x, name, self.nv)
            if x.ndim != q.ndim or x.shape[:-1] != q.shape[:-1]:
                raise InputError(f"{name} has shape {x.shape}, q has shape {q.shape}: one state or the same batch")
            out.append(self._full(x))
        if v is None and a is None:
            return qf
        return tuple(out) if a is not None else tuple(out[:2])

    def _full(self, x) -> np.ndarray:
        """``G x`` for a reduced velocity, acceleration or step (unchecked)."""
        return x[..., self._col] * self._scale

    def reduce_configuration(self, q_full) -> np.ndarray:
        """The reduced q of a tree configuration (the mimic joints' entries dropped)."""
        return np.asarray(q_full, dtype=float)[..., self._q_keep]

    def reduce_velocity(self, v_full) -> np.ndarray:
        """The reduced v (or a) of a tree velocity (the mimic DOFs dropped)."""
        return np.asarray(v_full, dtype=float)[..., self._v_keep]

    def reduce_forces(self, tau_full, axis: int = -1) -> np.ndarray:
        """``G^T tau_full``: generalized forces of the tree as forces on the reduced coordinates
        (along ``axis``; ``G^T M G`` is ``reduce_forces(reduce_forces(M, 0), 1)``)."""
        x = np.asarray(tau_full, dtype=float)
        last = axis in (-1, x.ndim - 1)
        if not last:
            x = np.moveaxis(x, axis, -1)
        out = x[..., self._v_keep] + x[..., self._s_v] @ self._Gs.T
        return out if last else np.moveaxis(out, -1, axis)

    def full_forces(self, tau) -> np.ndarray:
        """``tau_full`` with ``G^T tau_full = tau``: tau on the independent DOFs, zero on the mimic ones."""
        tau = self._reduced(tau, "tau", self.nv)
        out = np.zeros(tau.shape[:-1] + (self.tree.nv,))
        out[..., self._v_keep] = tau
        return out

    def _kernel_maps(self):
        """(imap, fmap, reach) of :mod:`denoc_bridge.kernels.mimic` (built once): the maps between
        the reduced and the tree's coordinates packed by :func:`~denoc_bridge.kernels.mimic.pack`,
        and the number of links that hold every mimic and mimicked DOF."""
        maps = self.__dict__.get("_maps")
        if maps is None:
            imap, fmap = _km.pack(
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

    def _gravity_free(self) -> Model:
        if self._tree0 is None:
            self._tree0 = self.tree.replace(gravity=(0.0, 0.0, 0.0))
        return self._tree0

    def _minv_kt(self, qf) -> np.ndarray:
        """``M^-1 K^T`` as (..., nc, nv_full) rows: forward dynamics at v = 0 without gravity is
        ``M^-1 tau`` (O(n) per row; single-state calls, cheaper than the threaded batch kernel here)."""
        from .algorithms.dynamics import forward_dynamics as fd

        tree0, K, z = self._gravity_free(), self.constraint_matrix(), np.zeros(self.tree.nv)
        if qf.ndim == 1:
            return np.array([fd(tree0, qf, z, row) for row in K])
        return np.array([[fd(tree0, q, z, row) for row in K] for q in qf])


def _check_relations(tree: Model, relations):
    """(mimic links, mimicked links) of the relations; ModelError naming the joint on a bad one."""
    index = {n: k for k, n in enumerate(tree.joint_names)}
    fixed = {f.name for f in tree.frames if f.kind == "fixed_joint"}
    slaves, masters, seen = [], [], {}
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
        if r.mimicked in by_slave:
            up = by_slave[r.mimicked]
            raise ModelError(
                f"{where}: the mimicked joint '{r.mimicked}' is itself a mimic joint (of '{up.mimicked}'); "
                f"chains are not supported (Pinocchio refuses them too): mimic '{up.mimicked}' directly with "
                f"multiplier {r.multiplier * up.multiplier!r} and offset {r.multiplier * up.offset + r.offset!r}"
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


# ----------------------------------------------------------------------------- dynamics
_NO_WRENCH, _NONE = np.zeros((0, 6)), np.zeros(0)  # the entries' "no wrenches, no springs"


def _vectors(*xs) -> bool:
    """Whether every x is a 1-D C-contiguous float64 array (the compiled single-state entries)."""
    for x in xs:
        if type(x) is not np.ndarray or x.dtype != np.float64 or x.ndim != 1 or not x.flags.c_contiguous:
            return False
    return True


def _entry(model: MimicModel, data):
    """(tree table, work, index maps, float maps, tree nq, reach) for :mod:`.kernels.mimic`."""
    imap, fmap, reach = model._kernel_maps()
    tree = model.tree  # its table changes with the gravity
    work = tree.thread_work() if data is None else data.check(tree).work
    return tree._kt, work, imap, fmap, tree.nq, reach


def inverse_dynamics(model: MimicModel, q, v, a, f_ext=None, *, data=None) -> np.ndarray:
    """``tau_r = G^T ID_full(q_full, G v, G a)``: equals ``pin.rnea`` of the mimic model.
    ``f_ext`` per link as for the tree; ``data`` is a :class:`~denoc_bridge.Data` of ``model.tree``.
    One state without ``f_ext`` runs one compiled entry (:func:`.kernels.mimic.inverse_dynamics_entry`);
    anything it refuses takes the checked path below, which names the problem."""
    if f_ext is None and _vectors(q, v, a):
        kt, work, im, fm, nqf, _ = _entry(model, data)
        out = np.empty(model.nv)
        if _km.inverse_dynamics_entry(kt, work, im, fm, nqf, q, v, a, out) == 0:
            return out
    from .algorithms.dynamics import inverse_dynamics as _id

    qf, vf, af = model.expand(q, v, a)
    return model.reduce_forces(_id(model.tree, qf, vf, af, f_ext, data=data))


def _reduced_mass(model, qf, data):
    from .algorithms.dynamics import mass_matrix as _mm

    return model.reduce_forces(model.reduce_forces(_mm(model.tree, qf, data=data), axis=0), axis=1)


def mass_matrix(model: MimicModel, q, *, data=None) -> np.ndarray:
    """``M_r = G^T M(q_full) G`` (nv x nv): equals ``pin.crba`` of the mimic model (one compiled
    entry for a float64 vector q, :func:`.kernels.mimic.mass_matrix_entry`)."""
    if _vectors(q):
        kt, work, im, fm, nqf, _ = _entry(model, data)
        out = np.empty((model.nv, model.nv))
        if _km.mass_matrix_entry(kt, work, im, fm, nqf, q, out) == 0:
            return out
    qf = model.expand(q)
    if qf.ndim != 1:
        raise InputError("mass_matrix takes one configuration, not a batch")
    return _reduced_mass(model, qf, data)


def forward_dynamics(model: MimicModel, q, v, tau, f_ext=None, *, method: str = "lagrange", data=None):
    """Reduced accelerations ``a_r`` with ``M_r a_r = tau - G^T h_full`` (h: Coriolis, centrifugal,
    gravity and external forces of the tree at ``q_full``, ``G v``).

    ``method="lagrange"`` (default): the O(n) open-tree forward dynamics plus one O(n) right-hand
    side per mimic joint (module docstring; no matrix of size nv is formed), falling back to the
    dense solve when the tree alone has a singular articulated inertia (e.g. a massless link
    moved only by a mimic joint).  ``method="dense"``: Cholesky of ``M_r`` (O(n^2) memory).
    A leading batch axis is allowed.  One state without ``f_ext`` runs one compiled entry
    (:func:`.kernels.mimic.forward_dynamics_entry`: one forward dynamics of the tree that keeps
    its articulated factors, one solve with them per mimic joint and one for the correction);
    anything it refuses takes the checked path, which names the problem or solves densely."""
    if method == "lagrange" and f_ext is None and _vectors(q, v, tau):
        kt, work, im, fm, nqf, reach = _entry(model, data)
        out = np.empty(model.nv)
        if (
            _km.forward_dynamics_entry(
                kt, work, im, fm, nqf, reach, q, v, tau, _NO_WRENCH, _NONE, _NONE, _NONE, False, out
            )
            == 0
        ):
            return out
    from .algorithms.dynamics import forward_dynamics as _fd
    from .algorithms.dynamics import nonlinear_effects

    if method not in ("lagrange", "dense"):
        raise InputError(f"method must be 'lagrange' or 'dense', got {method!r}")
    qf, vf = model.expand(q, v)
    tf = model.full_forces(tau)
    if tf.shape[:-1] != qf.shape[:-1]:
        raise InputError(f"tau has shape {np.shape(tau)}, q has shape {np.shape(q)}: one state or the same batch")
    if method == "lagrange":
        try:
            a0 = _fd(model.tree, qf, vf, tf, f_ext, data=data)  # the tree has no loops
            if model.n_constraints == 0:
                return a0[..., model._v_keep]
            W = model._minv_kt(qf)  # (..., nc, nv_full) = (M^-1 K^T)^T
        except SingularInertiaError:
            method = "dense"
        else:
            K = model.constraint_matrix()
            S = W @ K.T  # K M^-1 K^T (symmetric positive definite)
            lam = np.linalg.solve(S, -(a0 @ K.T)[..., None])[..., 0]
            return (a0 + np.einsum("...c,...cn->...n", lam, W))[..., model._v_keep]
    h = model.reduce_forces(nonlinear_effects(model.tree, qf, vf, f_ext, data=data))
    rhs = model._reduced(tau, "tau", model.nv) - h
    if rhs.ndim == 2:
        return np.array([_solve_spd(model, _reduced_mass(model, qf[i], data), rhs[i]) for i in range(len(rhs))])
    return _solve_spd(model, _reduced_mass(model, qf, data), rhs)


def _solve_spd(model, M, rhs):
    try:
        L = np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        tree = model.tree
        k = int(tree.idx_v.searchsorted(model._v_keep[int(np.argmin(np.diag(M)))], side="right") - 1)
        raise SingularInertiaError(
            f"model '{tree.name}' with mimic joints as constraints: the reduced GIM G^T M G is singular, e.g. "
            f"joint {tree.joint_label(k)} and the mimic joints that follow it move no inertia (massless links); "
            "forward dynamics and the inverse GIM are undefined",
            joint=tree.joint_names[k],
            link=tree.link_names[k],
        ) from None
    return np.linalg.solve(L.T, np.linalg.solve(L, rhs))


def inverse_mass_matrix(model: MimicModel, q, *, data=None) -> np.ndarray:
    """``M_r^-1 = (G^T M G)^-1`` as ``P[i, i]``, ``P = M^-1 - W (K W)^-1 W^T``, ``W = M^-1 K^T``
    (module docstring), from the tree's O(n^2) inverse GIM; Pinocchio 4.1's ``computeMinverse``
    refuses mimic models.  Falls back to inverting ``M_r`` when the tree's inverse is singular."""
    from .algorithms.dynamics import inverse_mass_matrix as _imm

    qf = model.expand(q)
    if qf.ndim != 1:
        raise InputError("inverse_mass_matrix takes one configuration, not a batch")
    try:
        Minv = _imm(model.tree, qf, data=data)
    except SingularInertiaError:
        return _solve_spd(model, _reduced_mass(model, qf, data), np.eye(model.nv))
    i = model._v_keep
    if model.n_constraints == 0:
        return Minv[np.ix_(i, i)]
    K = model.constraint_matrix()
    W = Minv @ K.T  # (nv_full, nc)
    P = Minv[np.ix_(i, i)] - W[i] @ np.linalg.solve(K @ W, W[i].T)
    return 0.5 * (P + P.T)
