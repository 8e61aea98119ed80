# cython: language_level=3
"""The layout of the model table ``kt`` and of the work array, mirrored in
denoc_bridge/core/layout.py (its docstring describes them; the names are the same;
tests/core/test_layout.py checks the twins).

kt: float64 rows of NT columns per link (kf); ki: the int32 view of the same rows, NI = 2 NT
ints per row, int column j in float column j // 2.  work: rows of W doubles, one region of
rows per kind of data (see work_rows).  The passes take the row of link k once,
``f = kf + k * NT`` and ``i = ki + k * NI``, and read ``f[MASS]``, ``i[IDX_V]``.
"""

cdef enum:
    NT = 48  # float columns of a table row
    NI = 96  # int32 columns of a table row
    # int32 columns of ki
    IDX_V = 0
    IDX_Q = 1
    FLAGS = 2
    NV = 3  # hot: float column 0-1
    PARENT = 84
    NQ = 85
    NORM0 = 86
    NORMSZ = 87  # cold: float columns 42-43
    MFIRST = 88
    MEND = 89
    MPARENT = 90
    NMOD = 91  # per module (row i), number of modules (row 0)
    NORMEND = 92  # row 0: 1 + the last link with a NORM0 (0 for none)
    # float columns
    T0 = 2  # 3: placement translation r0
    MASS = 5  # 1
    H = 6  # 3: first moment m c
    IO = 9  # 6: inertia about the link origin (xx, xy, xz, yy, yz, zz)
    ARM0 = 15  # 1: armature of the joint's first DOF
    HOT = 16
    SCALE = 16  # 1: largest diagonal entry of the link mass matrix and of the armatures
    ARM = 17  # 6: armatures of the joint's DOFs
    AXIS = 23  # 3
    R0 = 26  # 9: placement rotation, row major
    AXIS2 = 35  # 3
    GRAV = 38  # 3: gravity, row 0

cdef enum:  # rotation codes of E_k (FLAGS bits 0-2)
    ROT_X = 0
    ROT_Y = 1
    ROT_Z = 2
    ROT_IDENTITY = 3
    ROT_GENERAL = 4

cdef enum:  # offset codes (FLAGS bits 12-14): the zero pattern of r0
    R_ZERO = 0
    R_X = 1
    R_Y = 2
    R_Z = 3
    R_GENERAL = 4

cdef enum:  # joint types (denoc_bridge.multibody.joints.JointType)
    REVOLUTE = 0
    CONTINUOUS = 1
    PRISMATIC = 2
    SPHERICAL = 3
    FREEFLYER = 4
    UNIVERSAL = 5
    PLANAR = 6
    TRANSLATION = 7

cdef enum:  # the work array
    W = 8  # columns
    C_CS = 0  # link row: (cos, sin)
    C_W = 2  # link row: w_k (6)
    G_R = 1  # second geometry row: E_k[8], r_k (3)
    H_PHIT = 0  # DOF row: phitilde
    H_PSI = 1  # DOF row: Psi (6)
    MOD_ROWS = 6  # rows per module
    SCRATCH_ROWS = 32  # 4 x 64 numbers
    BLOCK = 64  # links per block of the geometry pass
    M_MAG = 5  # module rows: scale, column of row 2
    M_VEC = 3  # 6-vector row
    M_TWIST = 4  # twist row
    M_RATE = 5  # twist rate row
    AHEAD = 8  # links ahead of the one being processed (prefetch)
    PREFETCH_LINKS = 2048  # the passes prefetch only for models with more links than this


# ----------------------------------------------------------------- FLAGS of a link's int row
cdef inline int rot_code(const int* i) noexcept nogil:
    """Rotation code of E_k (0-4)."""
    return i[FLAGS] & 7


cdef inline int dof_index(const int* i) noexcept nogil:
    """d such that P_k = +-e_d, or -1 for a joint without an aligned axis."""
    return ((i[FLAGS] >> 3) & 7) - 1


cdef inline int dof_sign(const int* i) noexcept nogil:
    """The sign of P_k = +-e_d (1 or -1)."""
    return 1 - 2 * ((i[FLAGS] >> 6) & 1)


cdef inline int joint_type(const int* i) noexcept nogil:
    """Joint type code (REVOLUTE ... TRANSLATION)."""
    return (i[FLAGS] >> 8) & 15


cdef inline int offset_code(const int* i) noexcept nogil:
    """Zero pattern of r0 (R_ZERO, R_X, R_Y, R_Z: only that component, R_GENERAL)."""
    return (i[FLAGS] >> 12) & 7


cdef inline bint massless(const int* i) noexcept nogil:
    """True for a link without mass and inertia (FLAGS bit 15): its wrench is zero."""
    return (i[FLAGS] >> 15) & 1 == 1


# ----------------------------------------------------------------- rows of the work array
cdef inline Py_ssize_t geometry_row(Py_ssize_t L, Py_ssize_t k) noexcept nogil:
    """First of the two geometry rows of link k (E_k: 9 doubles from its start; r_k: columns
    G_R.. of the second row)."""
    return L + 2 * k


cdef inline Py_ssize_t dof_row(Py_ssize_t L, Py_ssize_t v) noexcept nogil:
    """Row of DOF v in the DOF region (phitilde, Psi)."""
    return 3 * L + v


cdef inline Py_ssize_t p_row(Py_ssize_t L, Py_ssize_t nv, Py_ssize_t v) noexcept nogil:
    """Row of DOF v in the P region (P_k of joints without an aligned axis)."""
    return 3 * L + nv + v


cdef inline Py_ssize_t ihat_row(Py_ssize_t L, Py_ssize_t nv, Py_ssize_t v) noexcept nogil:
    """Row of DOF v in the Ihat region (001 (A.4))."""
    return 3 * L + 2 * nv + v


cdef inline Py_ssize_t ihatinv_row(Py_ssize_t L, Py_ssize_t nv, Py_ssize_t v) noexcept nogil:
    """Row of DOF v in the Ihat^-1 region."""
    return 3 * L + 3 * nv + v


cdef inline Py_ssize_t module_row(Py_ssize_t L, Py_ssize_t nv, Py_ssize_t m) noexcept nogil:
    """First of the MOD_ROWS rows of module m: the articulated mass (21 doubles from its start,
    its scale at row 2, column M_MAG), a 6-vector (row M_VEC), twist (M_TWIST), rate (M_RATE)."""
    return 3 * L + 4 * nv + MOD_ROWS * m


cdef inline Py_ssize_t work_rows(Py_ssize_t L, Py_ssize_t nv, Py_ssize_t S) noexcept nogil:
    """Rows of the (rows, W) work array: links, geometry, DOF, P, Ihat, Ihat^-1, modules, scratch."""
    return 3 * L + 4 * nv + MOD_ROWS * S + SCRATCH_ROWS


cdef inline Py_ssize_t n_modules(const int* ki, Py_ssize_t L) noexcept nogil:
    """The number of modules (row 0), 0 for an empty model."""
    return ki[NMOD] if L > 0 else 0
