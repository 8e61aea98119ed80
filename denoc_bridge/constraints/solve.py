"""What every constraint kind solves the same way: ``M^-1 C^T`` columns by the O(n) forward
dynamics of the tree (000 Table 3), the rank of the rows, and the partition into dependent and
independent coordinates with its velocity transformation (004 eqs. 16-25)."""

from __future__ import annotations

import numpy as np
import scipy.linalg

from denoc_bridge.algorithms.dynamics import (
    tree_forward_dynamics,
)
from denoc_bridge.errors import InputError

RANK_RTOL = 1e-9  # relative to the largest singular value


def independent_rows(C, rtol: float = RANK_RTOL) -> np.ndarray:
    """Indices of a maximal set of independent rows of C (QR with column pivoting of C^T),
    in increasing order; the others are redundant (004 §2.3)."""
    C = np.asarray(C, dtype=float)
    if C.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    _, Rf, piv = scipy.linalg.qr(C.T, mode="economic", pivoting=True)
    d = np.abs(np.diag(Rf))
    scale = d[0] if d.size and d[0] > 0 else 1.0
    rank = int(np.sum(d > rtol * max(scale, 1e-300))) if d[0] > 0 else 0
    return np.sort(piv[:rank])


def gravity_free(model):
    """The model without gravity (cached on it; the tree and inertias of a model never change,
    its gravity does not matter here): forward dynamics at v = 0 is then M^-1 tau."""
    twin = model.__dict__.get("gravity_free")
    if twin is None:
        twin = model.replace(gravity=(0.0, 0.0, 0.0))
        model._gravity_free = twin
    return twin


def minv_columns(model, q, X) -> np.ndarray:
    """M^-1 X (nv x m) by the O(n) forward dynamics, one right-hand side per column: forward
    dynamics at v = 0 without gravity is M^-1 tau (000 Table 3)."""

    m = X.shape[1]
    if m == 0:
        return np.zeros((model.nv, 0))
    Q = np.broadcast_to(q, (m, model.nq))
    return tree_forward_dynamics(
        gravity_free(model), np.ascontiguousarray(Q), np.zeros((m, model.nv)), np.ascontiguousarray(X.T)
    ).T


def partition(C, rtol: float = RANK_RTOL, independent=None):
    """(rows, dependent, independent): independent constraint rows, and a split of the
    coordinates with C[rows][:, dependent] invertible.  The dependent coordinates are chosen
    by a pivoted QR of C, preferring the joints listed last (those nearest the cut) on ties;
    ``independent`` (indices into v) imposes the independent ones."""
    C = np.asarray(C, dtype=float)
    rows = independent_rows(C, rtol)
    Cr = C[rows]
    nv = C.shape[1]
    if independent is not None:
        ind = np.sort(np.asarray(independent, dtype=np.int64))
        dep = np.setdiff1d(np.arange(nv), ind)
        if dep.size != rows.size or (
            dep.size and abs(np.linalg.det(Cr[:, dep])) <= rtol * np.abs(Cr).max() ** dep.size
        ):
            raise InputError(
                f"the coordinates {ind.tolist()} cannot be the independent ones: the constraint "
                f"Jacobian has rank {rows.size}, and the other {dep.size} columns must be invertible"
            )
        return rows, dep, ind
    if rows.size == 0:
        return rows, np.zeros(0, dtype=np.int64), np.arange(nv)
    _, _, piv = scipy.linalg.qr(Cr[:, ::-1], mode="economic", pivoting=True)
    dep = np.sort(nv - 1 - piv[: rows.size])
    return rows, dep, np.setdiff1d(np.arange(nv), dep)


def transformation(C, nv, independent=None, rhs=None):
    """(rows, dependent, independent, E, Edot qdot_i) of 004 eqs. 23 and 25 for the independent
    rows of C; ``rhs`` is the right-hand side of ``C qddot = rhs`` (None: no Edot qdot_i)."""
    rows, dep, ind = partition(C, independent=independent)
    Cr = C[rows]
    E = np.zeros((nv, ind.size))
    E[ind, np.arange(ind.size)] = 1.0
    Edqd = np.zeros(nv)
    if dep.size:
        # one LU solve (LAPACK gesv) for both; numpy's: scipy 1.17's lu_solve with several
        # right-hand sides takes ~8 ms on a 2 x 2 system with its multithreaded OpenBLAS (measured)
        b = Cr[:, ind] if rhs is None else np.column_stack([Cr[:, ind], rhs[rows]])
        x = np.linalg.solve(Cr[:, dep], b)
        E[dep] = -x[:, : ind.size]  # E = [1; -C_d^-1 C_i]    (23)
        if rhs is not None:
            Edqd[dep] = x[:, ind.size]  # Edot qdot_i             (25)
    return rows, dep, ind, E, Edqd
