# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False
"""Matrix-free derivatives of the forward dynamics of a tree in O(n), compiled: the directional
derivative (JVP) and the adjoint (VJP), each one forward and one backward recursion of
6-vectors (no 6x6 composite, no n x n array).

With ``qdd = FD(q, v, tau)`` and the implicit-function theorem on ``ID(q, v, FD) = tau``,

    dqdd = M^-1 (dtau - dtau_dq dq - dtau_dv dv)                               (JVP)
    mu = M^-1 lam,  (dqdd_dq^T lam, dqdd_dv^T lam, dqdd_dtau^T lam)
        = (-dtau_dq^T mu, -dtau_dv^T mu, mu)                                   (VJP, M = M^T)

where ``dtau_dq`` and ``dtau_dv`` are the derivatives of inverse dynamics (RNEA, 000 eqs. 1-2b)
at (q, v, qdd), q perturbed in Pinocchio's tangent space.  The solves ``M^-1 x`` reuse the
articulated factors of the forward dynamics of the same call (000 Table 3): the tree's
``twist_forward_recursion`` and ``articulated_backward_recursion`` (tree.pxd).  Every
link's quantities are in its own frame (as Pinocchio's ``computeRNEADerivatives`` in local
frames): motions pass from parent to child by ``A_{k,b}`` and forces back by ``A_{k,b}^T`` (000
eqs. 4-5, the coded rotations E_k and offsets r_k that the forward dynamics left in the work
array), the link inertia is the table's 10 parameters and the joint axes S the rows of P_k, so
no rotation matrix is formed.  For the column ``c`` of joint k (``S_c``; the twist ``t_l`` and
rate ``a_l`` of the frame the column moves against, the parent's or a universal joint's node;
``t_n`` the twist after it)

    beta_c = S_c x t_l,   alpha_c = S_c x a_l - beta_c x t_l,   w_c = (t_l + t_n) x S_c

are the derivatives of the link twist and rate in the column's tangent direction (Carpentier &
Mansard 2018).  The tangent (forward-mode) RNEA carries, per link, the tangents P_k of its rate
and Q_k of its twist, and that of its wrench ``F_k = I_k a_k + t_k x* I_k t_k`` (``C_k`` the
link's Coriolis matrix, ``h_k = I_k t_k``)

    P_k = P_p + sum_c (w_c dv_c - alpha_c dq_c),   Q_k = Q_p + sum_c (S_c dv_c - beta_c dq_c)
    D_k = I_k P_k + C_k Q_k = I_k (P_k + Q_k x t_k) + Q_k x* h_k + t_k x* (I_k Q_k)

and the backward force sweep sums them with the rotation of the subtrees' wrenches by the joints
below (``s_k = sum_c S_c dq_c``, ``Fc`` the composite wrench; a universal joint's first row also
takes ``S_0^T (S_1 x* Fc_k) dq_1``)

    (dtau_dq dq + dtau_dv dv)_r = S_r^T E_j,   E_p += A^T (E_k + s_k x* Fc_k),   Fc_p += A^T Fc_k

The adjoint swaps the sums (``U_l = U_p``, or ``U_p + S_0 mu_0`` for the second column of a
universal joint; Yc, Zc, Fc the subtree sums of Y, Z, F):

    U_k = U_p + sum_c S_c mu_c,   Y_k = I_k U_k,   Z_k = C_k^T U_k                    (forward)
    (dtau_dq^T mu)_c = U_l . (S_c x* Fc_k) - Yc_k . alpha_c - Zc_k . beta_c
    (dtau_dv^T mu)_c = Zc_k . S_c + Yc_k . w_c                                       (backward)

So a JVP is the factorised forward dynamics, a forward and a backward sweep of 6-vectors and one
solve; a VJP one solve and the two transposed sweeps.  Passes that run in the same direction
share one loop over the links (substitution.pxi's per-link steps of 000 Table 3): the forward
dynamics' step 2 (qdd, and its forward vector mu_k = a_k - a_k(qdd = 0), so that the link
wrench is ``F_k = w_k + I_k mu_k`` from the twist pass's w_k) runs in the forward sweep, the
JVP's solve its step 1 in the tangent backward sweep and its step 2 after it (the tree's
``acceleration_forward_links``), the VJP's solve its step 1 before the adjoint forward sweep
and its step 2 in it (the solve's forward vector is U).  Five passes over the links for each
(the forward dynamics alone: three; before the fusion seven).  The sweeps run module by module (000's
kinematic modules, serial chains): along a module the recursions' vectors stay in registers,
and only a module's last link hands its vectors to the child modules (the buffer's rows).

One extension module built from ``directional_terms.pxi`` (the 6-vector algebra, the link's
inertia and Coriolis terms, the joint columns and rates), ``tangent.pxi`` (the tangent RNEA's
two sweeps), ``adjoint.pxi`` (the adjoint's two sweeps) and ``directional_entry.pxi`` (the
entries called from Python, which check every array); the spatial operators A_{k,b} and
A_{k,b}^T are ``spatial.pxi``'s (the tree module's, included here too), the forward dynamics
passes and the factorised solve ``tree``'s (tree.pxd).

Entries (denoc_bridge/algorithms/directional.py calls them):
``buffer_size(L, nv)``, ``forward_dynamics_jvp_state(kt, work, buf, q, v, tau, fext, dq, dv,
dtau, qdd, out)``, ``forward_dynamics_vjp_state(kt, work, buf, q, v, tau, fext, lam, qdd, gq,
gv, gtau)`` and ``tangent_sweeps_state(kt, work, buf, q, v, tau, fext, dq, dv, mu, qdd, jvp, gq,
gv)`` (the sweeps alone, for tests: ``dtau_dq dq + dtau_dv dv``, ``dtau_dq^T mu``,
``dtau_dv^T mu`` at (q, v, FD(q, v, tau))).  Each runs without the GIL and returns 0 = done,
-1 = a value is invalid (not finite, a zero quaternion or (cos, sin) pair), -2 = a length is
wrong (the table's joints, modules or parents, ``work`` or ``buf`` not of the model's size), -3 =
the inputs are finite but a result is not, k + 1 = the articulated inertia of link k is
singular; TypeError for an argument that is not a C-contiguous aligned float64 array of the
expected dimensions (writeable for ``work``, ``buf`` and the outputs), naming it.
"""

cimport numpy as cnp
from libc.math cimport sqrt

from denoc_bridge.core.compiler cimport prefetch
from denoc_bridge.core.arrays cimport JOINT_NQ, JOINT_NV, Arr, all_finite, model_nq, model_nv, modules_fit
from denoc_bridge.core.arrays cimport take as inline_take
from denoc_bridge.core.tables cimport *
from denoc_bridge.core.tree cimport (acceleration_forward_links, articulated_backward_recursion, finite_entries,
                                     twist_forward_recursion)
from denoc_bridge.core.vectors cimport cross3, psi_dot

cnp.import_array()

# Every inline function of this module is inlined always under gcc and clang (compiler.pxd):
# the sweeps' 6-vectors stay in registers only when no helper is left as a call.

include "spatial.pxi"
include "directional_terms.pxi"
include "substitution.pxi"
include "tangent.pxi"
include "adjoint.pxi"
include "directional_entry.pxi"

#: doubles of the buffer ``buf`` per link and per DOF (``buffer_size``)
PER_LINK, PER_DOF = BUF_PER_LINK, BUF_PER_DOF
