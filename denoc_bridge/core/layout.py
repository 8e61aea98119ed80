"""The model packed into one flat array for the compiled core, and the layout of its work array:
the Python twin of ``tables.pxd`` (tests/core/test_layout.py checks that they agree).

The compiled recursions receive the model as one float64 array ``kt``, a row
of ``NT`` columns (384 bytes, six cache lines) per link, rows aligned to
64 bytes.  Everything the O(n) passes read for a one-DOF joint sits in the
first two cache lines of the row (``HOT`` columns): at 100,000 links the
passes stream the tables from memory, and the number of cache lines per link
sets their speed.

Integer entries live in an int32 view: ``ki = kt.view(np.int32)`` has twice
the columns, and its int32 column ``j`` lies in float column ``j // 2``.

* hot ints (float column 0-1): IDX_V, IDX_Q, FLAGS, NV, where FLAGS packs
  the rotation code (bits 0-2), the aligned degree of freedom + 1 (bits 3-5),
  its sign (bit 6: 1 for -1), the joint type (bits 8-11), the offset code
  (bits 12-14: r0 zero, along x, y or z only, or general) and whether the link is
  massless (bit 15): read by ``tables.pxd``'s accessors;
* hot floats (float columns 2-15): joint placement translation r0, compact
  body inertia (mass m, first moment h = m c, inertia about the link origin
  I_O), armature of the joint's first DOF;
* cold floats: inertia scale, armatures of all DOFs, axes, placement
  rotation R0; row 0 holds gravity;
* cold ints: parent, q size, the q index and size of the joint's unit
  quaternion or (cos, sin) pair (NORM0 = -1 if none); row i also holds module
  i (first link, end link, parent module), row 0 the number of modules and the
  end of the links with a NORM0 (NORMEND: the configuration checks read no
  cold line past it).

One array rather than an int and a float table: each array argument of a
compiled entry costs about 40 ns to dispatch from Python, a tenth of a panda
inverse dynamics.

Rotation codes describe ``E_k`` (parent to child coordinates):
0/1/2 = a rotation about the x/y/z axis by the joint angle (a one-DOF
revolute or continuous joint about a coordinate axis with an identity
placement rotation: ``E_k`` costs a (cos, sin) pair and ``r_k = r0``),
3 = identity (prismatic joint with an identity placement rotation),
4 = general (``E_k`` is computed and stored as a 3x3 matrix).  For codes 3
and 4 the geometry pass stores ``E_k`` and ``r_k`` in the link's pair of
geometry rows of the work array.  A one-DOF joint whose axis is a coordinate
axis has the index d of ``P_k = +-e_d`` (0-2 angular, 3-5 linear) and its
sign, so that ``M P_k`` is a column of M; otherwise d = -1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from denoc_bridge.spatial import link_mass_matrices

INT = np.int32
# int32 columns of ki = kt.view(INT)
IDX_V, IDX_Q, FLAGS, NV = 0, 1, 2, 3  # hot: float column 0-1
PARENT, NQ, NORM0, NORMSZ = 84, 85, 86, 87  # cold: float columns 42-43
MFIRST, MEND, MPARENT, NMOD = 88, 89, 90, 91  # per module (row i), number of modules (row 0)
NORMEND = 92  # row 0: 1 + the last link with a NORM0 (0 for none): the value checks stop there
# float columns
T0 = 2  # 3: placement translation r0 (r_k for rotation codes 0-2)
MASS = 5  # 1
H = 6  # 3: first moment m c
IO = 9  # 6: inertia about the link origin (xx, xy, xz, yy, yz, zz)
ARM0 = 15  # 1: armature of the joint's first DOF
HOT = 16  # the first HOT columns (128 bytes) are all a one-DOF joint needs
SCALE = 16  # 1: largest diagonal entry of the 6x6 link mass matrix and of the armatures
ARM = 17  # 6: armature of the joint's DOFs
AXIS = 23  # 3
R0 = 26  # 9: placement rotation, row major
AXIS2 = 35  # 3
GRAV = 38  # 3: gravity, row 0
NT = 48

ROT_X, ROT_Y, ROT_Z, ROT_IDENTITY, ROT_GENERAL = range(5)
#: offset codes (FLAGS bits 12-14): the zero pattern of r0 for the rotation codes 0-2
R_ZERO, R_X, R_Y, R_Z, R_GENERAL = range(5)
ALIGN = 64  # bytes: rows of the table and of the work array start on cache lines
#: a pivot of an articulated inertia counts as zero when it is not larger than this times the
#: inertias it is computed from (``forward_dynamics.pxi``'s ``DB_SINGULAR_RTOL``)
SINGULAR_RTOL = 1e-12
#: links ahead of the one being processed (the passes' software prefetch: past the caches, chains
#: of 10^5 links, the hardware prefetchers alone leave them 20-40 % slower)
AHEAD = 8
#: the passes prefetch only for models with more links than this (smaller ones stay in the
#: caches, where the extra instructions cost about 2 ns per link and pass)
PREFETCH_LINKS = 2048

#: a joint axis is a coordinate axis +-e_d (P_k = +-e_d, the passes' cheaper paths) when one
#: component is +-1 and the others are at most this (4 ulps of 1): the kernels drop them
AXIS_ROUNDING = 2.0**-50

#: joint type codes (FLAGS bits 8-11; :class:`denoc_bridge.multibody.joints.JointType`)
REVOLUTE, CONTINUOUS, PRISMATIC, SPHERICAL, FREEFLYER, UNIVERSAL, PLANAR, TRANSLATION = range(8)
_REVOLUTE_LIKE = (REVOLUTE, CONTINUOUS)
_PRISMATIC = PRISMATIC


def aligned_empty(shape: int | tuple[int, ...]) -> np.ndarray:
    """A C-contiguous float64 array of zeros whose first byte sits on a cache line."""
    n = int(np.prod(shape))
    pad = ALIGN // 8
    buf = np.zeros(n + pad)
    off = (-buf.__array_interface__["data"][0] % ALIGN) // 8
    return buf[off : off + n].reshape(shape)


def build_tables(model: Any) -> np.ndarray:
    """The table ``kt`` of a model, built without a Python loop over links.  It stays writable
    (a read-only array costs 30 ns more to dispatch) but is private to the model: nothing
    writes to it after this."""
    L = model.n_links
    if max(model.nq, model.nv, L) >= 2**31:
        raise ValueError("models beyond 2**31 links or DOF are not supported")
    kt = aligned_empty((L, NT))
    kf = kt
    ki = kt.view(INT)
    jt = np.asarray(model.joint_type, dtype=np.int64)
    axis = np.asarray(model.joint_axis, dtype=float).reshape(L, 3)
    ki[:, PARENT] = model.parent
    ki[:, IDX_Q] = model.idx_q
    ki[:, IDX_V] = model.idx_v
    ki[:, NV] = model.nv_joint
    ki[:, NQ] = model.nq_joint
    unit = np.abs(axis) == 1.0
    # +-e_d to rounding: the other components at most AXIS_ROUNDING, as cos(pi/2) = 6e-17 of a
    # URDF's rpy (dropping them errs at the rounding level); (0, 1e-8, 1) is a general axis
    aligned = unit.any(axis=1) & ((np.abs(axis) > AXIS_ROUNDING).sum(axis=1) == 1)
    first_unit = np.argmax(unit, axis=1)
    revolute_like = (jt == _REVOLUTE_LIKE[0]) | (jt == _REVOLUTE_LIKE[1])
    prismatic = jt == _PRISMATIC
    one_dof_aligned = aligned & (revolute_like | prismatic)
    dof = np.where(one_dof_aligned, first_unit + np.where(prismatic, 3, 0), -1)
    negative = one_dof_aligned & (axis[np.arange(L), first_unit] < 0)
    identity = np.all(np.asarray(model.joint_rotation).reshape(L, 9) == np.eye(3).ravel(), axis=1)
    rot = np.where(
        identity & revolute_like & aligned, first_unit, np.where(identity & prismatic, ROT_IDENTITY, ROT_GENERAL)
    )
    t0 = np.asarray(model.joint_translation, dtype=float).reshape(L, 3)
    nonzero = t0 != 0.0
    single = nonzero.sum(axis=1) == 1
    rcode = np.where(~nonzero.any(axis=1), R_ZERO, np.where(single, 1 + np.argmax(nonzero, axis=1), R_GENERAL))
    no_mass = (np.asarray(model.mass) == 0.0) & np.all(np.asarray(model.inertia).reshape(L, 9) == 0.0, axis=1)
    ki[:, FLAGS] = (
        rot
        | ((dof + 1) << 3)
        | (negative.astype(np.int64) << 6)
        | (jt << 8)
        | (rcode << 12)
        | (no_mass.astype(np.int64) << 15)
    )
    kf[:, R0 : R0 + 9] = np.asarray(model.joint_rotation).reshape(L, 9)
    kf[:, T0 : T0 + 3] = model.joint_translation
    kf[:, AXIS : AXIS + 3] = axis
    kf[:, AXIS2 : AXIS2 + 3] = model.joint_axis2
    Mk = link_mass_matrices(model.mass, model.com, model.inertia)  # a temporary (L, 6, 6)
    kf[:, MASS] = model.mass
    kf[:, H : H + 3] = np.asarray(model.mass)[:, None] * np.asarray(model.com).reshape(L, 3)
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
        if L and len(links):
            ki[0, NORMEND] = max(ki[0, NORMEND], links.max() + 1)
    if L:
        kf[0, GRAV : GRAV + 3] = model.gravity
    return kt


def shifted_table(
    kt: np.ndarray, dof_link: np.ndarray, dof_rank: np.ndarray, armature: np.ndarray, inertia: np.ndarray
) -> np.ndarray:
    """A copy of the table with ``armature`` (nv) added to the joints' armatures and ``inertia``
    ((L, 6): xx, xy, xz, yy, yz, zz in the link frame) added to the links' rotational inertias.
    A pure rotational inertia is the same about the link origin and the centre of mass; masses
    and first moments, hence the gravity torques, are unchanged."""
    out = aligned_empty(kt.shape)
    out[:] = kt
    out[dof_link, ARM + dof_rank] += armature
    out[:, ARM0] = out[:, ARM]
    out[:, IO : IO + 6] += inertia
    diagonal = np.maximum(np.maximum(out[:, IO], out[:, IO + 3]), out[:, IO + 5])
    out[:, SCALE] = np.maximum(np.maximum(out[:, SCALE], diagonal), out[:, ARM : ARM + 6].max(axis=1))
    return out


def with_gravity(kt: np.ndarray, gravity: Any) -> np.ndarray:
    """A copy of the table with another gravity."""
    out = aligned_empty(kt.shape)
    out[:] = kt
    if out.shape[0]:
        out[0, GRAV : GRAV + 3] = gravity
    return out


# ------------------------------------------------------------------ the work array
#: The work array has W = 8 columns (64-byte rows, aligned) and one region of rows per kind
#: of data, so that a pass touches as few cache lines per link as possible:
#:   link rows      L      [(cos, sin), w_k (6)]
#:   geometry rows  2 L    two rows per link: E_k (9 entries, row major: 8 in the first row,
#:                         the ninth in column 0 of the second) and r_k (columns 1-3 of the
#:                         second); for rotation codes 3-4 (all links after a full pass)
#:   DOF rows       nv     [phitilde, Psi (6)]
#:   P rows         nv     P_k (6) for joints without an aligned axis (all after a full pass)
#:   Ihat rows      nv     rows of Ihat_k (z_k entries), then Ihat_k^-1 rows
#:   module rows    6 S    articulated mass (21 entries over the first three rows) and its
#:                         scale (row 2, column 5), a 6-vector (row 3), twist (row 4) and
#:                         twist rate (row 5); the energy pass keeps W_k and p_k of the last
#:                         link in the first two rows instead (laid out as E_k and r_k in
#:                         the geometry rows)
#:   scratch rows   32     blocks of 64 contiguous numbers for the geometry pass (angles,
#:                         cosines, sines).
#: Rows are indexed in two dimensions everywhere: compiled code indexing a flat view of the
#: same memory ran several times slower.
W = 8
C_CS, C_W = 0, 2  # link row: (cos, sin), w_k (6)
G_R = 1  # second geometry row: E_k[8], r_k (3)
H_PHIT, H_PSI = 0, 1  # DOF row: phitilde, Psi (6)
MOD_ROWS = 6  # rows per module
SCRATCH_ROWS = 32  # 4 x 64 numbers
BLOCK = 64  # links per block of the geometry pass
M_MAG, M_VEC, M_TWIST, M_RATE = 5, 3, 4, 5  # scale: column of row 2; vector, twist, rate: rows
M_FRAME = 0  # energy pass: W_k (8 entries, the ninth in column 0 of the next row), p_k (next row, from G_R)


def regions(n_links: int, nv: int, n_modules: int) -> tuple[int, ...]:
    """First rows of the regions: (links, geometry, DOF, P, Ihat, Ihat^-1, modules, scratch)."""
    L = n_links
    return (
        0,
        L,
        3 * L,
        3 * L + nv,
        3 * L + 2 * nv,
        3 * L + 3 * nv,
        3 * L + 4 * nv,
        3 * L + 4 * nv + MOD_ROWS * n_modules,
    )


def work_rows(n_links: int, nv: int, n_modules: int) -> int:
    """Rows of the (rows, W) work array."""
    return 3 * n_links + 4 * nv + MOD_ROWS * n_modules + SCRATCH_ROWS
