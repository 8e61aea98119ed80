"""Placements of the link frames in the base frame (forward recursion)."""

from numba import njit


@njit(cache=True)
def world_placements(parent, E, r, Rw, pw):
    """Rw_k = Rw_b E_k^T and pw_k = pw_b + Rw_b r_k (base: identity)."""
    for k in range(parent.shape[0]):
        b = parent[k]
        for i in range(3):
            for j in range(3):
                if b < 0:
                    Rw[k, i, j] = E[k, j, i]
                else:
                    Rw[k, i, j] = Rw[b, i, 0] * E[k, j, 0] + Rw[b, i, 1] * E[k, j, 1] + Rw[b, i, 2] * E[k, j, 2]
            if b < 0:
                pw[k, i] = r[k, i]
            else:
                pw[k, i] = pw[b, i] + Rw[b, i, 0] * r[k, 0] + Rw[b, i, 1] * r[k, 1] + Rw[b, i, 2] * r[k, 2]


@njit(cache=True)
def subtree_sums(parent, x, out):
    """out_k = the sum of x_j over link k's subtree (k included), rows of (L, m) arrays; parents
    come before their children."""
    out[:] = x
    for k in range(parent.shape[0] - 1, -1, -1):
        b = parent[k]
        if b >= 0:
            for i in range(out.shape[1]):
                out[b, i] += out[k, i]


@njit(cache=True)
def link_twists(parent, idx_v, nv_joint, E, r, P, v, t):
    """The twists t_k = (w_k, v_k) of the links in their own frames (internal order, angular
    first) at the joint rates v: ``t_k = A_{k,b} t_b + P_k v_k`` (000 eq. 5), with
    ``A_{k,b} t_b = (E_k w_b, E_k (v_b + w_b x r_k))`` (E_k: parent to link k frame, r_k: the
    link's origin in its parent's frame; base: at rest)."""
    for k in range(parent.shape[0]):
        b = parent[k]
        w0 = w1 = w2 = u0 = u1 = u2 = 0.0
        if b >= 0:
            w0, w1, w2 = t[b, 0], t[b, 1], t[b, 2]
            u0 = t[b, 3] + w1 * r[k, 2] - w2 * r[k, 1]
            u1 = t[b, 4] + w2 * r[k, 0] - w0 * r[k, 2]
            u2 = t[b, 5] + w0 * r[k, 1] - w1 * r[k, 0]
        for i in range(3):
            t[k, i] = E[k, i, 0] * w0 + E[k, i, 1] * w1 + E[k, i, 2] * w2
            t[k, 3 + i] = E[k, i, 0] * u0 + E[k, i, 1] * u1 + E[k, i, 2] * u2
        for n in range(nv_joint[k]):
            for j in range(6):
                t[k, j] += P[idx_v[k] + n, j] * v[idx_v[k] + n]
