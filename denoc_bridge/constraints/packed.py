"""The model and its cut joints packed once for the compiled loops (:mod:`denoc_bridge.core`'s
``loops`` module, and the runs of loop systems in ``core/run.pyx``; per thread), and the rows of every cut joint from the compiled entry (the same numbers as
:func:`denoc_bridge.constraints.loop_kinematics.all_rows`, without its Python loops)."""

from __future__ import annotations

import numpy as np

from denoc_bridge.core import loops as _core
from denoc_bridge.core import sized
from denoc_bridge.errors import InputError
from denoc_bridge.multibody.constraints import JointCoupling

_CODES = _core.CUT_CODES
#: the columns of ``pi`` (int64) and ``pf`` (float64): a link's or a cut joint's row
PI_COLUMNS, PF_COLUMNS = 6, 30


def result_views(sb: np.ndarray, L: int, nv: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """(C rows, lambda) views of the scratch: the independent rows of C and the multipliers
    that the constrained accelerations left there (first ``rank`` of each)."""
    at = _core.ds_start(L, nv) + 2 * m + 2 * m * nv  # after phi, C, gamma, Q
    return sb[at : at + m * nv].reshape((m, nv)), sb[at + 2 * m * nv + m * m : at + 2 * m * nv + m * m + m]


def row_views(sb: np.ndarray, L: int, nv: int, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(phi, C, gamma) views of the scratch as the rows' entry leaves them."""
    at = _core.ds_start(L, nv)
    return sb[at : at + m], sb[at + m : at + m + m * nv].reshape((m, nv)), sb[at + m + m * nv : at + 2 * m + m * nv]


class _Compiled:
    """The model and its cut joints packed for the compiled loops (``pi``, ``pf``: the layout is
    in ``core/loops_entry.pxi``) with scratch ``sb`` and work array of the calling
    thread (kept in the model's thread-local storage, rebuilt when loops are added)."""

    def __init__(self, model):

        L, nv = model.n_links, model.nv
        self.loops = model.loops
        self.m = m = sum(lc.n_rows for lc in model.loops)
        n_terms = sum(len(lc.joints) for lc in model.loops if isinstance(lc, JointCoupling))
        nl = len(model.loops) + n_terms  # rows of the cut joints, the couplings and their terms
        pi = np.zeros((1 + L + nl, PI_COLUMNS), dtype=np.int64)
        pf = np.zeros((1 + L + nl, PF_COLUMNS))
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
                pi[1 + L + l] = (_CODES["coupling"], -1, -1, r, t, len(lc.joints))
                pf[1 + L + l, 0] = lc.value
                for k, c in zip(lc.joints, lc.coefficients):
                    pi[1 + L + t, :4] = (_CODES["term"], k, -1, -1)
                    pf[1 + L + t, 0] = c
                    t += 1
            else:
                pi[1 + L + l, :4] = (_CODES[lc.type], lc.link1, lc.link2, r)
                pf[1 + L + l] = np.concatenate(
                    [lc.rotation1.ravel(), lc.translation1, lc.rotation2.ravel(), lc.translation2, lc.normals().ravel()]
                )
            r += lc.n_rows
        self.pi, self.pf = pi, pf
        self.sb = np.zeros(_core.scratch_size(L, nv, m))
        self.C, self.lam = result_views(self.sb, L, nv, m)
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
    status = _core.loop_rows_state(
        model._kt, cp.work, cp.pi, cp.pf, cp.sb, np.ascontiguousarray(q, dtype=float), vv, with_bias
    )
    if sized(status, "loop_rows_state"):
        raise InputError("the loop rows are not finite at this state: q and v must be finite")
    phi, C, gamma = row_views(cp.sb, model.n_links, model.nv, cp.m)
    return phi.copy(), C.copy(), gamma.copy() if with_bias else None
