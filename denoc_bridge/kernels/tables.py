"""Kernel tables: the model packed into one flat array, and the layout of the work buffer.

The compiled recursions receive the model as one float64 array ``kt`` with a
row per link (a link's data is contiguous in memory).  Its first ``FI``
columns hold integers: ``ki = kt.view(np.int32)`` reads them as int32
columns 0..NI-1:

* parent, joint type, q/v indices, rotation code, aligned degree of freedom
  and its sign, the q index and size of the joint's unit quaternion or
  (cos, sin) pair (NORM0 = -1 if none); row i also holds module i (first link,
  end link, parent module), row 0 the number of modules.

The float columns that follow hold the joint placement (R0, r0), axes, compact
body inertia (mass m, first moment h = m c, inertia about the link origin
I_O), armature of the joint's DOFs, inertia scale; row 0 holds gravity.

One array rather than an int and a float table: each array argument of a
compiled entry costs about 40 ns to dispatch from Python, a tenth of a panda
inverse dynamics.

Rotation codes (``ROT``) describe ``E_k`` (parent to child coordinates):
0/1/2 = a rotation about the x/y/z axis by the joint angle (a one-DOF
revolute or continuous joint about a coordinate axis with an identity
placement rotation: ``E_k`` costs a (cos, sin) pair), 3 = identity (prismatic
joint with an identity placement rotation), 4 = general (``E_k`` is computed
and stored as a 3x3 matrix).  A one-DOF joint whose axis is a coordinate axis
has ``DOF`` = the index d of P_k = +-e_d (0-2 angular, 3-5 linear) and ``SIGN``
= +-1, so that ``M P_k`` is a column of M; otherwise ``DOF`` = -1.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..spatial import link_mass_matrices

# integer columns (int32), per link, the ones every pass reads first
PARENT, JTYPE, IDX_Q, IDX_V, NV, ROT, DOF, SIGN, NQ, NORM0, NORMSZ = range(11)
# per module, stored in row i for module i (there are never more modules than links)
MFIRST, MEND, MPARENT = 11, 12, 13
NMOD = 14     # number of modules, row 0
NI = 15
INT = np.int32
FI = 8        # float columns taken by the NI int32 columns (one cache line)
# float columns: the first 16 after the integers hold what the recursions read on every link
T0 = FI + 0       # 3: placement translation r0
MASS = FI + 3     # 1
H = FI + 4        # 3: first moment m c
IO = FI + 7       # 6: inertia about the link origin (xx, xy, xz, yy, yz, zz)
ARM0 = FI + 13    # 1: armature of the joint's first DOF
SCALE = FI + 14   # 1: largest diagonal entry of the 6x6 link mass matrix
ARM = FI + 16     # 6: armature of the joint's DOFs
AXIS = FI + 22    # 3
R0 = FI + 25      # 9: placement rotation, row major
AXIS2 = FI + 34   # 3
GRAV = FI + 37    # 3: gravity, row 0
NT = FI + 40

ROT_X, ROT_Y, ROT_Z, ROT_IDENTITY, ROT_GENERAL = range(5)

_REVOLUTE_LIKE = (0, 1)  # JointType.REVOLUTE, JointType.CONTINUOUS
_PRISMATIC = 2


def build_tables(model):
    """The table ``kt`` of a model, built without a Python loop over links.  It stays writable
    (a read-only array costs 30 ns more to dispatch) but is private to the model: nothing
    writes to it after this."""
    L = model.n_links
    kt = np.zeros((L, NT), dtype=np.float64)
    kf = kt
    jt = np.asarray(model.joint_type, dtype=np.int64)
    axis = np.asarray(model.joint_axis, dtype=float).reshape(L, 3)
    ki = kt.view(INT)
    ki[:, PARENT] = model.parent
    ki[:, JTYPE] = jt
    ki[:, IDX_Q] = model.idx_q
    ki[:, IDX_V] = model.idx_v
    ki[:, NV] = model.nv_joint
    ki[:, NQ] = model.nq_joint
    unit = np.abs(axis) == 1.0
    aligned = unit.any(axis=1)
    first_unit = np.argmax(unit, axis=1)
    revolute_like = (jt == _REVOLUTE_LIKE[0]) | (jt == _REVOLUTE_LIKE[1])
    prismatic = jt == _PRISMATIC
    one_dof_aligned = aligned & (revolute_like | prismatic)
    ki[:, DOF] = np.where(one_dof_aligned, first_unit + np.where(prismatic, 3, 0), -1)
    ki[:, SIGN] = np.where(one_dof_aligned & (axis[np.arange(L), first_unit] < 0), -1, 1)
    identity = np.all(np.asarray(model.joint_rotation).reshape(L, 9) == np.eye(3).ravel(), axis=1)
    ki[:, ROT] = np.where(identity & revolute_like & aligned, first_unit,
                          np.where(identity & prismatic, ROT_IDENTITY, ROT_GENERAL))
    kf[:, R0:R0 + 9] = np.asarray(model.joint_rotation).reshape(L, 9)
    kf[:, T0:T0 + 3] = model.joint_translation
    kf[:, AXIS:AXIS + 3] = axis
    kf[:, AXIS2:AXIS2 + 3] = model.joint_axis2
    Mk = link_mass_matrices(model.mass, model.com, model.inertia)   # a temporary (L, 6, 6)
    kf[:, MASS] = model.mass
    kf[:, H:H + 3] = np.asarray(model.mass)[:, None] * np.asarray(model.com).reshape(L, 3)
    for c, (a, b) in enumerate(((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))):
        kf[:, IO + c] = Mk[:, a, b]
    dof_link = np.repeat(np.arange(L), model.nv_joint)
    dof_rank = np.arange(model.nv) - np.repeat(np.asarray(model.idx_v), model.nv_joint)
    kf[dof_link, ARM + dof_rank] = model.armature
    kf[:, ARM0] = kf[:, ARM]
    arm_max = np.zeros(L)
    np.maximum.at(arm_max, dof_link, np.asarray(model.armature))
    kf[:, SCALE] = np.maximum(np.diagonal(Mk, axis1=1, axis2=2).max(axis=1, initial=0.0), arm_max)
    S = model.n_modules
    ki[:S, MFIRST] = model.module_start
    ki[:S, MEND] = model.module_end
    ki[:S, MPARENT] = model.module_parent
    if L:
        ki[0, NMOD] = S
    ki[:, NORM0] = -1
    link_of_q = np.repeat(np.arange(L), model.nq_joint)
    for starts, size in ((model.quaternion_index, 4), (model.circle_index, 2)):
        links = link_of_q[np.asarray(starts, dtype=np.int64)]
        ki[links, NORM0] = starts
        ki[links, NORMSZ] = size
    if max(model.nq, model.nv, L) >= 2**31:
        raise ValueError("models beyond 2**31 links or DOF are not supported")
    if L:
        kf[0, GRAV:GRAV + 3] = model.gravity
    return kt


def with_gravity(kt, gravity):
    """A copy of the table with another gravity."""
    kt = kt.copy()
    if kt.shape[0]:
        kt[0, GRAV:GRAV + 3] = gravity
    return kt


# ------------------------------------------------------------------ the work array
#: The work array has W columns and one region of rows per kind of data, so that a pass
#: touches few cache lines per link: link rows [(cos, sin), r_k, w_k], general rotations E_k,
#: DOF rows [phitilde, Psi], rows of P_k, of Ihat_k and of Ihat_k^-1, and 4 rows per module
#: [articulated mass (21 entries over two rows) and inertia scale, a 6-vector, twist and rate].
W = 12
C_CS, C_R, C_W = 0, 2, 5                  # link row: (cos, sin), r_k (3), w_k (6)
H_PHIT, H_PSI = 0, 1                      # DOF row: phitilde, Psi (6)
M_MAG = 9                                 # module row 1: mass entries 12..20 in columns 0..8, then the scale


@njit(cache=True)
def regions(n_links, nv, n_modules):
    """First rows of the regions: (links, E, DOF, P, Ihat, Ihat^-1, modules, end)."""
    L = n_links
    return L * 0, L, 2 * L, 2 * L + nv, 2 * L + 2 * nv, 2 * L + 3 * nv, 2 * L + 4 * nv, 2 * L + 4 * nv + 4 * n_modules


@njit(cache=True)
def work_rows(n_links, nv, n_modules):
    """Rows of the (rows, W) work array."""
    return 2 * n_links + 4 * nv + 4 * n_modules
