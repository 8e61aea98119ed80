# ruff: noqa: F403  (the layout's names come from the compiled core's Python twin, until numba goes)
"""numba's accessors of the model table and the work array (the layout itself, the table's
construction and the regions are :mod:`denoc_bridge.core.layout`, the compiled core's Python
twin); they serve the numba kernels that remain until issue 49 removes them."""

from __future__ import annotations

from numba import njit

from denoc_bridge.core import layout as _layout
from denoc_bridge.core.layout import *
from denoc_bridge.core.layout import FLAGS, IO, MASS, H


@njit(cache=True, inline="always")
def rot_code(ki, k):
    """Rotation code of E_k (0-4, see the module docstring)."""
    return ki[k, FLAGS] & 7


@njit(cache=True, inline="always")
def dof_index(ki, k):
    """d such that P_k = +-e_d, or -1 for a joint without an aligned axis."""
    return ((ki[k, FLAGS] >> 3) & 7) - 1


@njit(cache=True, inline="always")
def dof_sign(ki, k):
    """The sign of P_k = +-e_d (1 or -1)."""
    return 1 - 2 * ((ki[k, FLAGS] >> 6) & 1)


@njit(cache=True, inline="always")
def joint_type(ki, k):
    """Joint type code of :class:`denoc_bridge.multibody.joints.JointType`."""
    return (ki[k, FLAGS] >> 8) & 15


@njit(cache=True, inline="always")
def inertia10(kf, k):
    """The 10 inertia parameters of link k about its origin in its axes: m, h = m c, I_O
    (xx xy xz yy yz zz), 000 eq. 2b."""
    return (
        kf[k, MASS],
        kf[k, H],
        kf[k, H + 1],
        kf[k, H + 2],
        kf[k, IO],
        kf[k, IO + 1],
        kf[k, IO + 2],
        kf[k, IO + 3],
        kf[k, IO + 4],
        kf[k, IO + 5],
    )


@njit(cache=True, inline="always")
def massless(ki, k):
    """True for a link without mass and inertia (FLAGS bit 15): its wrench is zero."""
    return (ki[k, FLAGS] >> 15) & 1 == 1


@njit(cache=True, inline="always")
def offset_code(ki, k):
    """Zero pattern of r0 (R_ZERO, R_X, R_Y, R_Z: only that component, R_GENERAL)."""
    return (ki[k, FLAGS] >> 12) & 7


@njit(cache=True, inline="always")
def dof_row(L, v):
    """Row of DOF v in the DOF region (phitilde, Psi): rows 3 L .. 3 L + nv."""
    return 3 * L + v


@njit(cache=True, inline="always")
def p_row(L, nv, v):
    """Row of DOF v in the P region (the motion vector P_k of joints without an aligned axis)."""
    return 3 * L + nv + v


@njit(cache=True, inline="always")
def ihat_row(L, nv, v):
    """Row of DOF v in the Ihat region (the articulated inertia of its joint, 001 (A.4))."""
    return 3 * L + 2 * nv + v


@njit(cache=True, inline="always")
def ihatinv_row(L, nv, v):
    """Row of DOF v in the Ihat^-1 region."""
    return 3 * L + 3 * nv + v


regions = njit(cache=True)(_layout.regions)
work_rows = njit(cache=True)(_layout.work_rows)
