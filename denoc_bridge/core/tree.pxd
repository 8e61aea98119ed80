# cython: language_level=3
"""The passes of the tree module that the other compiled modules cimport
(``from denoc_bridge.core.tree cimport energies_of_state``): the energies, and the forward
dynamics passes, the factorised solve and the fused stage sweep of the fixed-step runs
(``run.pyx``), the links' world frames and DOF columns of the contact rows (``contact.pyx``) and
of the derivatives (``derivatives.pyx``, with the state checks and the finiteness test of the
entries, and the inverse GIM from the GIM or from the articulated factors of the forward
derivatives), and the maps and accelerations of a model with mimic joints (mimic.pxi).

``ki``/``kf``: the model table's int32 and float64 views (tables.pxd), L links, nv DOFs; every
length is the model's (checked by the caller, as the entries of tree.pyx do); ``work`` the
model's work array (tables.pxd ``work_rows``); ``fext`` (L, 6) in internal order or NULL for no
wrenches.
"""

cimport numpy as cnp

from denoc_bridge.core.arrays cimport Arr

cdef void energies_of_state(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                            double* work, const double* q, const double* v, const double* K,
                            const double* q_rest, bint springs, double* d,
                            double* energies) noexcept nogil
cdef double twist_forward_recursion(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                                    const double* q, Py_ssize_t nq, const double* qd,
                                    const double* qdd, const double* fext, double* work,
                                    bint full) noexcept nogil
cdef Py_ssize_t articulated_backward_recursion(const int* ki, const double* kf, Py_ssize_t L,
                                               Py_ssize_t nv, const double* tau, double* work,
                                               bint factors) noexcept nogil
cdef void acceleration_forward_links(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                                     double* work, double* qdd, Py_ssize_t nl) noexcept nogil
cdef long forward_dynamics_passes(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                                  double* work, const double* q, Py_ssize_t nq, const double* v,
                                  const double* tau, const double* fext, double* out,
                                  bint factors) noexcept nogil
cdef void factorised_solve(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                           double* work, const double* x, double* out,
                           Py_ssize_t n) noexcept nogil
cdef void stage_sweep(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv, double* work,
                      double* a, const double* vb, const double* vacc, double h, const double* q,
                      Py_ssize_t nq, double* qd, const double* fext) noexcept nogil
cdef void first_sweep(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv, double* work,
                      const double* q, Py_ssize_t nq, const double* v, double* a,
                      const double* zeros, double* v1, const double* fext) noexcept nogil
cdef bint sweepable(const int* ki, Py_ssize_t L) noexcept nogil
cdef void world_frames(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv, double* work,
                       const double* q, Py_ssize_t nq, double* R, double* p,
                       double* Pw) noexcept nogil

cdef bint ltdl_inverse_chosen(const int* ki, Py_ssize_t L, Py_ssize_t nv, Py_ssize_t* lam) noexcept nogil
cdef bint ltdl_inverse(Py_ssize_t nv, double* A, Py_ssize_t* lam, double* u) noexcept nogil
cdef int minv_from_factors(const int* ki, const double* kf, const double* work, Py_ssize_t L,
                           Py_ssize_t nv, double* out) noexcept nogil
cdef long valid_state(const int* ki, Py_ssize_t L, const Arr* q, const Arr* v, const Arr* x,
                      const Arr* fext, const Arr* out, const Arr* work) noexcept nogil
cdef long finite_entries(const double* out, Py_ssize_t n) noexcept nogil


cdef struct MimicMaps:  # the maps of a model with mimic joints (mimic.pxi; multibody/mimic.py pack_maps)
    Py_ssize_t nq, nv, nc  # the reduced nq, nv and the number of mimic joints
    const cnp.int64_t* q_keep
    const cnp.int64_t* v_keep
    const cnp.int64_t* s_q  # the mimic joint's first coordinate
    const cnp.int64_t* m_q  # the mimicked joint's
    const cnp.int64_t* s_v  # the mimic joint's DOF
    const cnp.int64_t* m_v  # the mimicked joint's
    const cnp.int64_t* circ  # 1 for a continuous pair (cos, sin)
    const cnp.int64_t* col  # per tree DOF: the reduced DOF it follows
    const double* mult
    const double* off
    const double* scale  # per tree DOF: its factor (1 for a kept DOF, mult for a mimic one)


cdef inline void reduce_configuration(const MimicMaps* mm, const double* qf, double* qr) noexcept nogil:
    """q_r = qf[q_keep]: a tree configuration on the mimic relations reduced (expand_configuration
    undone)."""
    cdef Py_ssize_t i
    for i in range(mm.nq):
        qr[i] = qf[mm.q_keep[i]]


cdef inline void reduce_velocity(const MimicMaps* mm, const double* vf, double* vr) noexcept nogil:
    """v_r = vf[v_keep]: a tree velocity that keeps the mimic relations reduced (expand_velocity
    undone)."""
    cdef Py_ssize_t i
    for i in range(mm.nv):
        vr[i] = vf[mm.v_keep[i]]


cdef long mimic_maps(object imap, object fmap, Py_ssize_t nqf, Py_ssize_t nvf, MimicMaps* mm) except -100
cdef void expand_configuration(const MimicMaps* mm, const double* qr, double* qf) noexcept nogil
cdef void expand_velocity(const MimicMaps* mm, Py_ssize_t nvf, const double* xr,
                          double* xf) noexcept nogil
cdef void mimic_tree_forces(const MimicMaps* mm, const int* ki, Py_ssize_t L, Py_ssize_t nvf,
                            const double* qf, const double* vf, const double* tau, const double* K,
                            const double* D, const double* q_rest, bint passive, double* tp,
                            double* tf) noexcept nogil
cdef long mimic_accelerations(const MimicMaps* mm, const int* ki, const double* kf, Py_ssize_t L,
                              Py_ssize_t nqf, Py_ssize_t nvf, Py_ssize_t reach, double* work,
                              const double* qf, const double* vf, const double* tf,
                              const double* fext, double* f, double* out) noexcept nogil
