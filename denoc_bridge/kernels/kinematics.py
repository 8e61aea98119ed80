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
