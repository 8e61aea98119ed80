"""The forward dynamics as a JAX function differentiated by the package's analytical adjoint.

``f = forward_dynamics(model)`` gives ``f(q, v, tau) -> qdd``, a :func:`jax.custom_vjp` whose
primal is :func:`denoc_bridge.forward_dynamics` (O(n), 000 eqs. 18-23) and whose reverse-mode
step is :func:`denoc_bridge.forward_dynamics_vjp` (the O(n) matrix-free adjoint of issue 23:
``mu = M^-1 lam``, then ``-dtau_dq^T mu`` and ``-dtau_dv^T mu`` by one forward and one backward
pass).  Both run on the host through :func:`jax.pure_callback`, so ``f`` works under
:func:`jax.jit`, :func:`jax.grad`, :func:`jax.vjp`, :func:`jax.vmap` and :func:`jax.jacrev`.
No JAX tracing of the dynamics, no generic AD: the gradients are the package's own numbers.

Mimic joints and loop closures
------------------------------
On a :class:`~denoc_bridge.MimicModel` (its reduced coordinates) and on a model with loop
closures (the constrained accelerations of the Lagrange equations, exact constraint, 004 eqs.
13-14), the primal is the same :func:`denoc_bridge.forward_dynamics` and the reverse-mode step
the products ``lam^T dqdd/dx`` with the dense derivatives of
:func:`denoc_bridge.forward_dynamics_derivatives` (the implicit-function theorem on the reduced
inverse dynamics or on the Lagrange equations): O(n^2) memory and O(n^3) time a state, for the
small closed chains and grippers where these models occur.  The cotangent of q is that of the
reduced coordinates (the mimic joints follow theirs) or of the tree's q (a model with loops;
the derivative is in every direction of the tree's tangent space, not only along the
constraint manifold: the constrained accelerations are defined off it too).

The cotangent of q
------------------
The adjoint gives the gradient with respect to q in Pinocchio's tangent space (nv entries,
``pin.integrate(q, dq)``), but ``q`` has nq entries (a free-flyer's quaternion, a continuous
joint's (cos, sin)).  ``f`` treats q as what it is to JAX, a point of R^nq, and returns the
gradient of ``q -> FD(normalise(q), v, tau)`` there: the forward dynamics do not depend on the
norm of a quaternion or of a (cos, sin) pair, so that gradient exists and is orthogonal to them.
It is the tangent cotangent ``g`` pushed to R^nq by the pseudo-inverse of the configuration-rate
map ``E(q)`` (``dq/dt = E(q) v``): ``G = E (E^T E)^-1 g`` joint by joint, i.e.

* revolute, prismatic, universal, translation: ``G = g``;
* continuous (c, s): ``G = g (-s, c) / (c^2 + s^2)``;
* spherical, quaternion (x, y, z, w) of norm r, n = q / r: ``G = (2 / r) n (x) (g, 0)``
  (the quaternion product; ``dq = 1/2 q (x) (w, 0)`` is Pinocchio's local tangent);
* free-flyer: ``G_p = R(n) g_linear`` and the spherical rule on ``g_angular``;
* planar (x, y, c, s): ``G_p = R(theta) g_xy``, ``G_cs = g_w (-s, c) / (c^2 + s^2)``.

So ``jax.grad`` composes with any JAX code that produces q (a parametrisation of the
quaternion, an integration written in JAX) by the ordinary chain rule, and ``E(q)^T G = g``
gives the tangent gradient back: :func:`to_tangent` (exact, in JAX operations).  On a model
whose joints are all revolute, prismatic, universal or translation (nq == nv, q a vector
space) the two conventions coincide and ``jax.jacrev(f)`` is :func:`forward_dynamics_derivatives`.

Batches
-------
Under :func:`jax.vmap` the callbacks use ``vmap_method="expand_dims"`` (default): one host call
per batch (any number of nested batch axes), the primal through the package's batch entry
(``forward_dynamics`` on a leading axis, parallel over the batch threads), the adjoint one state
after the other in that call (the adjoint has no batch entry).  ``"sequential"`` (one host call
per state, a ``jax.lax.map``) is kept as an option; ``benchmarks/autodiff_jax.py`` measured it 9x
slower for a batch of 64 panda gradients (19 ms against 2.2 ms; a host callback costs a few
hundred microseconds on a loaded 2-core machine).

Precision
---------
float64 only: JAX's default is float32, so ``jax.config.update("jax_enable_x64", True)`` must
run first; without it (or with float32 arrays) :func:`forward_dynamics` raises
:class:`~denoc_bridge.errors.InputTypeError` naming the fix, never downcasting silently.
Shapes are checked when JAX traces ``f``; values (NaN, a singular articulated inertia) are checked
by the package inside the callback, whose error JAX re-raises as its runtime error carrying the
package's message (JAX calls exceptions in a ``pure_callback`` undefined behaviour: validate
inputs first when that matters).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

try:
    import jax
    import jax.numpy as jnp
except ImportError as exc:  # the optional extra is not installed
    raise ImportError(
        "denoc_bridge.autodiff.jax needs JAX: pip install 'denoc-bridge[autodiff]' (or pip install jax)"
    ) from exc

from denoc_bridge.algorithms.kinematics import link_velocities as _link_velocities
from denoc_bridge.dynamics import forward_dynamics as _forward_dynamics
from denoc_bridge.dynamics import forward_dynamics_derivatives as _forward_dynamics_derivatives
from denoc_bridge.dynamics import forward_dynamics_vjp as _forward_dynamics_vjp
from denoc_bridge.errors import InputError, InputTypeError
from denoc_bridge.multibody.checks import check_model
from denoc_bridge.multibody.joints import CIRCLE_OFFSET, QUATERNION_OFFSET, JointType, joint_nq, joint_nv
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.model import Model

__all__ = ["VMAP_METHODS", "forward_dynamics", "to_tangent"]

VMAP_METHODS = ("expand_dims", "sequential")
_VECTOR_SPACES = (JointType.REVOLUTE, JointType.PRISMATIC, JointType.UNIVERSAL, JointType.TRANSLATION)
_F64 = np.dtype(np.float64)


# ---------------------------------------------------------------- the joints' charts
class _Charts:
    """Where the q and v entries of each joint sit, grouped by joint type, and the two linear
    maps between a tangent cotangent g (nv) and an ambient one G (nq) at q.  Written in array
    operations of ``xp`` (numpy on the host, jax.numpy in :func:`to_tangent`): gathers by index
    arrays, products, one concatenation and one permutation, for any leading batch axes."""

    def __init__(self, model: Model | MimicModel) -> None:
        nqj, nvj = np.asarray(model.nq_joint), np.asarray(model.nv_joint)
        own = nqj > 0  # a MimicModel's mimic joints have no coordinates of their own
        jt = np.asarray(model.joint_type)[own]
        iq, iv, nqj, nvj = np.asarray(model.idx_q)[own], np.asarray(model.idx_v)[own], nqj[own], nvj[own]
        vec = np.isin(jt, [int(t) for t in _VECTOR_SPACES])
        none = [np.zeros(0, dtype=np.int64)]
        self.vec_q = np.concatenate(none + [np.arange(a, a + m) for a, m in zip(iq[vec], nqj[vec])])
        self.vec_v = np.concatenate(none + [np.arange(a, a + m) for a, m in zip(iv[vec], nvj[vec])])
        self.kinds = {t: (iq[jt == int(t)], iv[jt == int(t)]) for t in _CURVED}
        self.vector_space = bool(vec.all())
        self.nq, self.nv = model.nq, model.nv
        # the q (v) entries in the order the pieces are concatenated, and its inverse permutation
        q_order = [self.vec_q] + [(a[:, None] + np.arange(_CURVED[t][0])).ravel() for t, (a, _) in self.kinds.items()]
        v_order = [self.vec_v] + [(b[:, None] + np.arange(_CURVED[t][1])).ravel() for t, (_, b) in self.kinds.items()]
        self.q_perm = np.argsort(np.concatenate(q_order))
        self.v_perm = np.argsort(np.concatenate(v_order))

    def to_ambient(self, xp: Any, q: Any, g: Any) -> Any:
        """G (..., nq): the gradient in R^nq of the normalised-q extension, from g (..., nv)."""
        lead = np.broadcast_shapes(q.shape[:-1], g.shape[:-1])
        pieces = [xp.broadcast_to(g[..., self.vec_v], (*lead, self.vec_v.size))]
        for t, (a, b) in self.kinds.items():
            mq, mv = _CURVED[t]
            Q, g_ = q[..., a[:, None] + np.arange(mq)], g[..., b[:, None] + np.arange(mv)]
            G = _AMBIENT[t](xp, Q, g_)
            pieces.append(xp.broadcast_to(G, (*lead, a.size, mq)).reshape((*lead, a.size * mq)))
        return xp.concatenate(pieces, axis=-1)[..., self.q_perm]

    def to_tangent(self, xp: Any, q: Any, G: Any) -> Any:
        """g = E(q)^T G (..., nv): the tangent cotangent of an ambient one (exact left inverse of
        :meth:`to_ambient`)."""
        lead = np.broadcast_shapes(q.shape[:-1], G.shape[:-1])
        pieces = [xp.broadcast_to(G[..., self.vec_q], (*lead, self.vec_q.size))]
        for t, (a, b) in self.kinds.items():
            mq, mv = _CURVED[t]
            Q, G_ = q[..., a[:, None] + np.arange(mq)], G[..., a[:, None] + np.arange(mq)]
            g = _TANGENT[t](xp, Q, G_)
            pieces.append(xp.broadcast_to(g, (*lead, b.size, mv)).reshape((*lead, b.size * mv)))
        return xp.concatenate(pieces, axis=-1)[..., self.v_perm]


def _cross(xp: Any, a: Any, b: Any) -> Any:
    return xp.stack(
        [
            a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
            a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
            a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0],
        ],
        axis=-1,
    )


def _unit(xp: Any, Q: Any) -> tuple[Any, Any, Any]:
    """(u, w, r): the vector and scalar parts of Q / |Q| and |Q| (keeping the last axis)."""
    r = xp.sqrt(xp.sum(Q * Q, axis=-1, keepdims=True))
    n = Q / r
    return n[..., :3], n[..., 3:], r


def _rotate(xp: Any, u: Any, w: Any, x: Any, sign: float) -> Any:
    """R(n) x (sign +1) or R(n)^T x (sign -1) for the unit quaternion n = (u, w)."""
    ux = _cross(xp, u, x)
    return x + 2.0 * sign * w * ux + 2.0 * _cross(xp, u, ux)


def _quat_ambient(xp: Any, Q: Any, g: Any) -> Any:  # (2 / r) n (x) (g, 0)
    u, w, r = _unit(xp, Q)
    return xp.concatenate([w * g + _cross(xp, u, g), -xp.sum(u * g, axis=-1, keepdims=True)], axis=-1) * (2.0 / r)


def _quat_tangent(xp: Any, Q: Any, G: Any) -> Any:  # E^T G, E w = 1/2 Q (x) (w, 0)
    u, w = Q[..., :3], Q[..., 3:]
    Gu, Gw = G[..., :3], G[..., 3:]
    return 0.5 * (w * Gu - _cross(xp, u, Gu) - Gw * u)


def _angle_ambient(xp: Any, C: Any, g: Any) -> Any:  # g (-s, c) / (c^2 + s^2)
    c, s = C[..., 0:1], C[..., 1:2]
    return xp.concatenate([-s, c], axis=-1) * (g / (c * c + s * s))


def _angle_tangent(xp: Any, C: Any, G: Any) -> Any:  # (-s, c) . G
    return -C[..., 1:2] * G[..., 0:1] + C[..., 0:1] * G[..., 1:2]


def _rot2(xp: Any, C: Any, x: Any, sign: float) -> Any:
    r = xp.sqrt(C[..., 0:1] ** 2 + C[..., 1:2] ** 2)
    c, s = C[..., 0:1] / r, sign * C[..., 1:2] / r
    return xp.concatenate([c * x[..., 0:1] - s * x[..., 1:2], s * x[..., 0:1] + c * x[..., 1:2]], axis=-1)


_CURVED = {  # joint type: (nq, nv) of the joints whose q holds a unit quaternion or (cos, sin) pair
    t: (joint_nq(t), joint_nv(t)) for t in JointType if t in QUATERNION_OFFSET or t in CIRCLE_OFFSET
}
_AMBIENT: dict[JointType, Callable[[Any, Any, Any], Any]] = {
    JointType.CONTINUOUS: _angle_ambient,
    JointType.SPHERICAL: _quat_ambient,
    JointType.FREEFLYER: lambda xp, Q, g: xp.concatenate(
        [_rotate(xp, *_unit(xp, Q[..., 3:])[:2], g[..., :3], 1.0), _quat_ambient(xp, Q[..., 3:], g[..., 3:])], axis=-1
    ),
    JointType.PLANAR: lambda xp, Q, g: xp.concatenate(
        [_rot2(xp, Q[..., 2:], g[..., :2], 1.0), _angle_ambient(xp, Q[..., 2:], g[..., 2:])], axis=-1
    ),
}
_TANGENT: dict[JointType, Callable[[Any, Any, Any], Any]] = {
    JointType.CONTINUOUS: _angle_tangent,
    JointType.SPHERICAL: _quat_tangent,
    JointType.FREEFLYER: lambda xp, Q, G: xp.concatenate(
        [_rotate(xp, *_unit(xp, Q[..., 3:])[:2], G[..., :3], -1.0), _quat_tangent(xp, Q[..., 3:], G[..., 3:])], axis=-1
    ),
    JointType.PLANAR: lambda xp, Q, G: xp.concatenate(
        [_rot2(xp, Q[..., 2:], G[..., :2], -1.0), _angle_tangent(xp, Q[..., 2:], G[..., 2:])], axis=-1
    ),
}


# ---------------------------------------------------------------- checks
def _checked(model: object) -> Model | MimicModel:
    check_model(model)
    return model  # type: ignore[return-value]


def _is_tree(model: Model | MimicModel) -> bool:
    """Whether the matrix-free adjoint runs on ``model`` (a tree: no mimic joints, no loops)."""
    return type(model) is Model and not model.loops


def _x64_on() -> bool:
    return bool(jax.dtypes.canonicalize_dtype(np.float64) == _F64)


def _argument(
    x: Any, name: str, n: int, dim: str, model: Model | MimicModel, shape: tuple[int, ...] | None = None
) -> Any:
    """x as a float64 JAX array of shape (n,) (or ``shape``), or a named error (never a silent
    cast of floats)."""
    if not _x64_on():
        raise InputTypeError(
            "denoc_bridge.autodiff.jax computes in float64, and JAX's 64-bit mode is off (its arrays "
            'are float32): run jax.config.update("jax_enable_x64", True) at start-up, before creating arrays'
        )
    dtype = np.dtype(x.dtype) if hasattr(x, "dtype") else np.asarray(x).dtype  # a tracer has a dtype
    if dtype.kind in "biu":
        x = jnp.asarray(x, dtype=jnp.float64)  # exact: integers and booleans carry no gradient
    elif dtype != _F64:
        raise InputTypeError(
            f"{name} has dtype {dtype}; denoc_bridge.autodiff.jax takes float64 arrays "
            f"(jnp.asarray({name}, dtype=jnp.float64)), so that nothing is rounded silently"
        )
    x = jnp.asarray(x)
    shape = (n,) if shape is None else shape
    if x.shape != shape:
        raise InputError(
            f"{name} must have shape {shape} (model '{model.name}' has {dim}={n}), got shape {x.shape}; "
            "map a batch with jax.vmap"
        )
    return x


# ---------------------------------------------------------------- the wrapper
def _flat(arrays: tuple[np.ndarray, ...]) -> tuple[tuple[int, ...], list[np.ndarray]]:
    """The common leading shape of the arrays and each broadcast to it, flattened to (B, n)."""
    lead = np.broadcast_shapes(*(a.shape[:-1] for a in arrays))
    B = int(np.prod(lead))
    return lead, [
        np.ascontiguousarray(np.broadcast_to(a, (*lead, a.shape[-1])).reshape(B, a.shape[-1])) for a in arrays
    ]


def _dense_adjoint(
    model: Model | MimicModel,
    q: np.ndarray,
    v: np.ndarray,
    tau: np.ndarray,
    lam: np.ndarray,
    f_ext: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The same products on a mimic model or a model with loop closures, from the dense
    derivatives of its reduced or constrained accelerations (:func:`denoc_bridge.forward_dynamics_derivatives`)."""
    dq, dv, dtau = _forward_dynamics_derivatives(model, q, v, tau, f_ext)
    return lam @ dq, lam @ dv, lam @ dtau


def _wrench_cotangent(model: Model | MimicModel, q: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """``lam^T dqdd/df_ext``, (n_links, 6): the accelerations depend on the wrenches through the
    generalized forces ``J_k^T f_k`` only (added to tau, the tree's on a mimic model or with
    loops), so the cotangent of ``f_k`` is ``J_k mu`` with ``mu = (dqdd/dtau)^T lam`` (the
    adjoint's third output): the links' twists at the joint rates mu
    (:func:`denoc_bridge.link_velocities`, Pinocchio's order and frames)."""
    return _link_velocities(model, q, mu)


def forward_dynamics(model: Model | MimicModel, *, vmap_method: str = "expand_dims") -> Callable[..., Any]:
    """The forward dynamics of ``model`` as a differentiable JAX function ``f(q, v, tau) -> qdd``
    (``f(q, v, tau, f_ext) -> qdd`` with external wrenches).

    ``f`` is a :func:`jax.custom_vjp`: its value is :func:`denoc_bridge.forward_dynamics` and
    its reverse-mode derivative :func:`denoc_bridge.forward_dynamics_vjp` (O(n), no matrix),
    both called through :func:`jax.pure_callback`; it works under ``jax.jit``, ``jax.grad``,
    ``jax.vjp``, ``jax.vmap`` and ``jax.jacrev`` (forward mode, ``jax.jvp`` / ``jax.jacfwd``,
    is not defined for a ``custom_vjp``).  The gradient with respect to q is that of
    ``FD(normalise(q), v, tau)`` in R^nq (module docstring; :func:`to_tangent` gives the
    tangent one); on joints without a quaternion or a (cos, sin) pair it is the tangent one.

    Parameters
    ----------
    model : Model or MimicModel
        A tree (the reverse step is the O(n) matrix-free adjoint), a model with loop closures
        or a mimic model (the reverse step uses the dense derivatives; module docstring).
    vmap_method : {"expand_dims", "sequential"}
        How the host callbacks see a ``jax.vmap`` batch: ``"expand_dims"`` (default) makes one
        call per batch (the primal through the package's parallel batch entry),
        ``"sequential"`` one call per state (``jax.lax.map``; much slower: see the benchmark).

    Returns
    -------
    f : callable
        ``f(q, v, tau, f_ext=None)`` with q of shape (nq,), v and tau of shape (nv,), float64
        (JAX's 64-bit mode on), and optionally the external wrenches ``f_ext`` of shape
        (n_links, 6) (Pinocchio's convention, as for :func:`denoc_bridge.forward_dynamics`:
        linear then angular, in each link's frame); returns qdd of shape (nv,).  The gradient
        of ``f_ext`` is ``J_k mu`` per link, ``mu = (dqdd/dtau)^T lam`` (the links' twists at
        the joint rates mu, :func:`denoc_bridge.link_velocities`): O(n) on trees too.

    Raises
    ------
    InputError
        At a call for arrays of the wrong shape.  Bad values (NaN, a singular inertia) raise the package's errors from the
        callback (wrapped by JAX in its runtime error under ``jax.jit``).
    InputTypeError
        At a call when JAX's 64-bit mode is off or an argument is not float64.

    Examples
    --------
    >>> import jax
    >>> jax.config.update("jax_enable_x64", True)
    >>> f = forward_dynamics(db.load_robot("panda"))          # doctest: +SKIP
    >>> jax.grad(lambda tau: f(q, v, tau) @ f(q, v, tau))(tau)  # doctest: +SKIP
    """
    model = _checked(model)
    adjoint = _forward_dynamics_vjp if _is_tree(model) else _dense_adjoint  # O(n) on trees
    if vmap_method not in VMAP_METHODS:
        raise InputError(f"vmap_method must be one of {VMAP_METHODS}, got {vmap_method!r}")
    charts = _Charts(model)
    nq, nv, L = model.nq, model.nv, model.n_links

    def flat(arrays: tuple[Any, ...], F: tuple[Any, ...]) -> tuple[tuple[int, ...], list[np.ndarray]]:
        """The leading shape and the arrays flattened to (B, n); wrenches (..., L, 6) as (B, 6 L)."""
        wrenches = tuple(np.asarray(x).reshape((*np.shape(x)[:-2], 6 * L)) for x in F)
        return _flat((*(np.asarray(a) for a in arrays), *wrenches))

    def primal_host(q: np.ndarray, v: np.ndarray, tau: np.ndarray, *F: np.ndarray) -> np.ndarray:
        lead, (Q, V, T, *W) = flat((q, v, tau), F)
        fx = W[0].reshape(-1, L, 6) if F else None
        if lead == ():
            return _forward_dynamics(model, Q[0], V[0], T[0], None if fx is None else fx[0])
        return _forward_dynamics(model, Q, V, T, fx).reshape((*lead, nv))

    def adjoint_host(q: np.ndarray, v: np.ndarray, tau: np.ndarray, *rest: np.ndarray) -> tuple[np.ndarray, ...]:
        *F, lam = rest
        lead, (Q, V, T, Lam, *W) = flat((q, v, tau, lam), tuple(F))
        fx = W[0].reshape(-1, L, 6) if F else None
        B = Q.shape[0]
        gq, gv, gt, gf = np.empty((B, nv)), np.empty((B, nv)), np.empty((B, nv)), np.empty((B, L, 6))
        for b in range(B):
            gq[b], gv[b], gt[b] = adjoint(model, Q[b], V[b], T[b], Lam[b], None if fx is None else fx[b])
            if F:
                gf[b] = _wrench_cotangent(model, Q[b], gt[b])
        Gq = gq if charts.vector_space else charts.to_ambient(np, Q, gq)
        out = (Gq.reshape((*lead, nq)), gv.reshape((*lead, nv)), gt.reshape((*lead, nv)))
        return (*out, gf.reshape((*lead, L, 6))) if F else out

    vector = jax.ShapeDtypeStruct((nv,), jnp.float64)
    config = jax.ShapeDtypeStruct((nq,), jnp.float64)
    wrenches = jax.ShapeDtypeStruct((L, 6), jnp.float64)

    @jax.custom_vjp
    def fd(q: Any, v: Any, tau: Any) -> Any:
        return jax.pure_callback(primal_host, vector, q, v, tau, vmap_method=vmap_method)

    def fd_fwd(q: Any, v: Any, tau: Any) -> tuple[Any, tuple[Any, Any, Any]]:
        return fd(q, v, tau), (q, v, tau)

    def fd_bwd(res: tuple[Any, Any, Any], lam: Any) -> tuple[Any, Any, Any]:
        return tuple(jax.pure_callback(adjoint_host, (config, vector, vector), *res, lam, vmap_method=vmap_method))

    fd.defvjp(fd_fwd, fd_bwd)

    @jax.custom_vjp
    def fd_ext(q: Any, v: Any, tau: Any, f_ext: Any) -> Any:
        return jax.pure_callback(primal_host, vector, q, v, tau, f_ext, vmap_method=vmap_method)

    def fd_ext_fwd(q: Any, v: Any, tau: Any, f_ext: Any) -> tuple[Any, tuple[Any, Any, Any, Any]]:
        return fd_ext(q, v, tau, f_ext), (q, v, tau, f_ext)

    def fd_ext_bwd(res: tuple[Any, Any, Any, Any], lam: Any) -> tuple[Any, Any, Any, Any]:
        shapes = (config, vector, vector, wrenches)
        return tuple(jax.pure_callback(adjoint_host, shapes, *res, lam, vmap_method=vmap_method))

    fd_ext.defvjp(fd_ext_fwd, fd_ext_bwd)

    def f(q: Any, v: Any, tau: Any, f_ext: Any = None) -> Any:
        args = (
            _argument(q, "q", nq, "nq", model),
            _argument(v, "v", nv, "nv", model),
            _argument(tau, "tau", nv, "nv", model),
        )
        if f_ext is None:
            return fd(*args)
        return fd_ext(*args, _argument(f_ext, "f_ext", L, "n_links", model, (L, 6)))

    f.__doc__ = (
        f"qdd = FD(q, v, tau[, f_ext]) of '{model.name}' (nq={nq}, nv={nv}, n_links={L}); "
        "see denoc_bridge.autodiff.jax."
    )
    return f


def to_tangent(model: Model | MimicModel) -> Callable[[Any, Any], Any]:
    """``g(q, G) -> E(q)^T G``: a cotangent at q in R^nq (what ``jax.grad`` returns for q)
    as a tangent cotangent (nv entries, Pinocchio's ``pin.integrate(q, dq)`` convention, the
    rows of :func:`denoc_bridge.forward_dynamics_derivatives`).

    ``E(q)`` is the configuration-rate map (``dq/dt = E(q) v``; at a unit quaternion
    ``1/2 q (x) (w, 0)``, at a free-flyer also ``p' = R v_linear``); the map is linear in G,
    written in ``jax.numpy`` (differentiable, jittable, vmappable) and the exact left inverse of
    the ambient cotangent of :func:`forward_dynamics`.  The identity on models whose joints are
    all revolute, prismatic, universal or translation.
    """
    model = _checked(model)
    charts = _Charts(model)

    def g(q: Any, G: Any) -> Any:
        q = _argument(q, "q", model.nq, "nq", model)
        G = _argument(G, "G", model.nq, "nq", model)
        return G if charts.vector_space else charts.to_tangent(jnp, q, G)

    return jax.jit(g)  # one compiled map instead of a dispatch per array operation
