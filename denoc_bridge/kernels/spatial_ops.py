"""Small fixed-size spatial operations used inside the recursions.

All operate in place on preallocated arrays (no allocation inside the loops).
Convention of :mod:`denoc_bridge.spatial`: 6-vectors are [angular; linear] and
``A_{k,b} = [[E, 0], [-E rx, E]]`` is given by its rotation ``E`` (parent to
child coordinates) and offset ``r`` (child origin relative to the parent
origin, parent coordinates).
"""

from numba import njit


@njit(cache=True, inline="always")
def cross(a, b, out):
    x = a[1] * b[2] - a[2] * b[1]
    y = a[2] * b[0] - a[0] * b[2]
    z = a[0] * b[1] - a[1] * b[0]
    out[0] = x
    out[1] = y
    out[2] = z


@njit(cache=True, inline="always")
def mat3_vec(E, x, out):
    """out = E x (out must not alias x)."""
    for i in range(3):
        out[i] = E[i, 0] * x[0] + E[i, 1] * x[1] + E[i, 2] * x[2]


@njit(cache=True, inline="always")
def mat3t_vec(E, x, out):
    """out = E^T x (out must not alias x)."""
    for i in range(3):
        out[i] = E[0, i] * x[0] + E[1, i] * x[1] + E[2, i] * x[2]


@njit(cache=True)
def apply_A(E, r, x, out, tmp):
    """out = A_{k,b} x = [E x_w; E (x_v + x_w x r)]  (000 eq. 7b in link frames).

    ``tmp`` is a 3-vector of scratch; ``out`` must not alias ``x``.
    """
    mat3_vec(E, x[0:3], out[0:3])
    cross(x[0:3], r, tmp)
    tmp[0] += x[3]
    tmp[1] += x[4]
    tmp[2] += x[5]
    mat3_vec(E, tmp, out[3:6])


@njit(cache=True)
def apply_At(E, r, y, out, tmp):
    """out = A_{k,b}^T y = [E^T y_n + r x (E^T y_f); E^T y_f]  (wrench to the parent).

    ``tmp`` is a 3-vector of scratch; ``out`` must not alias ``y``.
    """
    mat3t_vec(E, y[3:6], out[3:6])
    mat3t_vec(E, y[0:3], out[0:3])
    cross(r, out[3:6], tmp)
    out[0] += tmp[0]
    out[1] += tmp[1]
    out[2] += tmp[2]
