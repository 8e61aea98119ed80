"""The model and its cut joints packed once for :mod:`denoc_bridge.kernels.loops` (per thread),
and the rows of every cut joint from the compiled kernel (the same numbers as
:func:`denoc_bridge.constraints.loop_kinematics.all_rows`, without its Python loops)."""

from __future__ import annotations

import numpy as np

from denoc_bridge.constraints.solve import gravity_free
from denoc_bridge.kernels import loop_rows as _rows
from denoc_bridge.kernels import loops as _kl
from denoc_bridge.multibody.constraints import JointCoupling

_TYPE_CODES = {
    "weld": _rows.WELD,
    "spherical": _rows.SPHERICAL,
    "revolute": _rows.REVOLUTE,
    "prismatic": _rows.PRISMATIC,
}


class _Compiled:
    """The model and its cut joints packed for :mod:`denoc_bridge.kernels.loops` (``pi``,
    ``pf``) with scratch ``sb`` and work array of the calling thread (kept in the model's
    thread-local storage, rebuilt when loops are added)."""

    def __init__(self, model):

        L, nv = model.n_links, model.nv
        self.loops = model.loops
        self.m = m = sum(lc.n_rows for lc in model.loops)
        n_terms = sum(len(lc.joints) for lc in model.loops if isinstance(lc, JointCoupling))
        nl = len(model.loops) + n_terms  # rows of the cut joints, the couplings and their terms
        pi = np.zeros((1 + L + nl, 6), dtype=np.int64)
        pf = np.zeros((1 + L + nl, 30))
        pi[0] = (L, nl, m, nv, model.nq, 0)
        pi[1 : L + 1] = np.column_stack(
            [model.parent, model.joint_type, model.idx_q, model.nq_joint, model.idx_v, model.nv_joint]
        )
        pf[1 : L + 1, :18] = np.column_stack(
            [model.joint_axis, model.joint_axis2, model.joint_rotation.reshape(L, 9), model.joint_translation]
        )
        r, t = 0, len(model.loops)  # t: the next term's row
        for l, lc in enumerate(model.loops):
            if isinstance(lc, JointCoupling):
                pi[1 + L + l] = (_rows.COUPLING, -1, -1, r, t, len(lc.joints))
                pf[1 + L + l, 0] = lc.value
                for k, c in zip(lc.joints, lc.coefficients):
                    pi[1 + L + t, :4] = (_rows.TERM, k, -1, -1)
                    pf[1 + L + t, 0] = c
                    t += 1
            else:
                pi[1 + L + l, :4] = (_TYPE_CODES[lc.type], lc.link1, lc.link2, r)
                pf[1 + L + l] = np.concatenate(
                    [lc.rotation1.ravel(), lc.translation1, lc.rotation2.ravel(), lc.translation2, lc.normals().ravel()]
                )
            r += lc.n_rows
        self.pi, self.pf = pi, pf
        self.sb = np.zeros(_kl.scratch_size(L, nv, m))
        self.C, self.lam = _kl.result_views(self.sb, L, nv, m)
        self.kt0 = gravity_free(model)._kt
        self.work = model.thread_work()


def compiled(model) -> _Compiled:
    """This thread's packed model, rebuilt when loops were added since."""
    cp = getattr(model._local, "loops", None)
    if cp is None or cp.loops is not model.loops:
        cp = model._local.loops = _Compiled(model)
    return cp


def tree_rows(model, q, v=None):
    """``(phi, C, Cdot v)`` of every cut joint of the tree ``model`` at (q, v) (all rows, copies;
    ``Cdot v`` is None without v) from the compiled rows; q and v float64, checked by the caller."""
    cp = compiled(model)
    with_bias = v is not None
    vv = np.ascontiguousarray(v, dtype=float) if with_bias else np.zeros(model.nv)
    _kl.rows(cp.pi, cp.pf, cp.sb, np.ascontiguousarray(q, dtype=float), vv, with_bias)
    phi, C, gamma = _kl.row_views(cp.sb, model.n_links, model.nv, cp.m)
    return phi.copy(), C.copy(), gamma.copy() if with_bias else None
