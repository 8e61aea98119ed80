"""ADMM on the frictional contact problem: the solver :func:`.contact.solve_contact` turns to
where projected Gauss-Seidel stalls (many contacts on one flat sole: the impulses are not unique
and PGS cycles a few digits short of the tolerance).

The problem is the one ``core/contact_solver.pxi`` (PGS) states (``sigma = G lambda + g``,
lambda in the Coulomb cones K, Signorini, maximal dissipation), written with De Saxce's
correction ``s(sigma) = (0, 0, mu |sigma_t|)`` per contact as a cone complementarity problem:

    lambda in K,   sigma + s(sigma) in K*,   lambda . (sigma + s(sigma)) = 0.

The iteration is the ADMM of Pinocchio's ``ADMMConstraintSolver`` (Carpentier et al., "From
compliant to rigid contact simulation: a unified and efficient approach", RSS 2024): with the
s fixed at each iteration the problem is the convex QP ``min 1/2 x^T G x + (g + s)^T x`` over
``x = y in K``, split into

    y+ = P_K(x - z / (tau rho))                                     (impulses in the cones)
    (G + (tau rho + eta) I) x+ = tau rho y+ + eta x + z - g - s(z)   (eta: the proximal weight)
    z+ = z - tau rho (x+ - y+)                                      (z: the velocity sigma + s)

and rho balanced between the primal residual ``|x - y|`` and the dual one ``rho |x+ - x|``
(each relative to its scale, OSQP's rule: rho *= sqrt(primal / dual) when one is ten times the
other).  G is decomposed once (``G = Q diag(w) Q^T``, LAPACK): any rho then costs two
products with Q, no new factorisation.  The answer ``y`` is accepted when the velocities it gives
open no contact (``sigma_n >= 0``), each contact's complementarity ``lambda_i . (sigma + s)_i`` and
the split ``|x - y| max(w)`` are below ``tol`` in the units of ``|g|`` (and ``|g| |lambda|``).
Where it stalls short of that, it returns its best answer and the tolerance that one meets.

:func:`admm` runs the compiled iteration (``denoc_bridge/core/contact_admm.pxd``, through
``denoc_bridge.core.contact.admm_state``): :func:`admm_reference`, the NumPy version kept as its
readable oracle, line for line, to round-off (``tests/core/test_contact_admm.py``).
"""

from __future__ import annotations

import numpy as np

from denoc_bridge.core import contact as _compiled  # admm_state: the compiled ADMM (core/contact_admm.pxd)

__all__ = ["admm", "admm_reference", "achieved", "project_cones", "desaxce", "cone_residuals"]

# the constants of both versions (core/contact_admm.pxd holds the compiled one's; tests compare them)
TAU = 0.5  # the step on rho (Pinocchio's default)
ETA = 1e-6  # the proximal weight, relative to the largest eigenvalue of G
RATIO = 10.0  # rho is rebalanced when one residual is this many times the other
CHECK_EVERY = 5  # iterations between two checks of the contact conditions (a product with G each)
STALL = 3000  # iterations without halving the best tolerance met: ADMM stops there


def project_cones(x: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """The Euclidean projection of each contact's (t1, t2, n) onto its cone ``|t| <= mu n``."""
    y = x.reshape(-1, 3).copy()
    t, n = np.hypot(y[:, 0], y[:, 1]), y[:, 2]
    polar = mu * t <= -n  # in the polar cone: onto the apex
    side = ~(t <= mu * n) & ~polar  # outside both: onto the cone's side
    alpha = (mu[side] * t[side] + n[side]) / (1.0 + mu[side] ** 2)  # the new normal component
    scale = mu[side] * alpha / np.where(t[side] > 0.0, t[side], 1.0)
    y[side, 0] *= scale
    y[side, 1] *= scale
    y[side, 2] = alpha
    y[polar] = 0.0
    return y.ravel()


def desaxce(v: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """De Saxce's correction ``s(v) = (0, 0, mu |v_t|)`` per contact."""
    s = np.zeros_like(v)
    V = v.reshape(-1, 3)
    s[2::3] = mu * np.hypot(V[:, 0], V[:, 1])
    return s


def cone_residuals(G: np.ndarray, g: np.ndarray, mu: np.ndarray, lam: np.ndarray) -> tuple[float, float]:
    """(the largest closing normal velocity ``max(-sigma_n, 0)``, the largest per-contact
    complementarity ``|lambda_i . (sigma + s(sigma))_i|``) of impulses ``lam`` in the cones."""
    sigma = G @ lam + g
    S, Lm = sigma.reshape(-1, 3), lam.reshape(-1, 3)
    shifted = S[:, 2] + mu * np.hypot(S[:, 0], S[:, 1])
    comp = np.abs(Lm[:, 0] * S[:, 0] + Lm[:, 1] * S[:, 1] + Lm[:, 2] * shifted)
    return float(max(np.max(-S[:, 2], initial=0.0), 0.0)), float(np.max(comp, initial=0.0))


def achieved(G: np.ndarray, g: np.ndarray, mu: np.ndarray, lam: np.ndarray, split: float = 0.0) -> tuple[float, float]:
    """The tolerances impulses ``lam`` (in the cones) meet, in the units of ``tol``: (the larger of
    the closing normal velocity and the split ``|x - y| max(w)``, over ``|g|``; the
    complementarity over ``|g| |lambda|``)."""
    v_scale = max(float(np.abs(g).max(initial=0.0)), 1e-300)
    opening, comp = cone_residuals(G, g, mu, lam)
    return max(opening, split) / v_scale, comp / (v_scale * max(float(np.abs(lam).max(initial=0.0)), 1e-300))


def admm(
    G: np.ndarray, g: np.ndarray, mu: np.ndarray, lam0: np.ndarray, tol: float, max_iter: int
) -> tuple[np.ndarray, int, float]:
    """(impulses in the cones, iterations, the tolerance they meet) of the contact problem, from
    ``lam0`` (G symmetric positive semi-definite 3m x 3m, g 3m, mu m >= 0, all finite).  It stops
    at ``tol``, after ``max_iter`` iterations, or when :data:`STALL` iterations have not halved
    the best tolerance met so far (the best answer is returned); the tolerance met is inf when
    no check was reached (``max_iter`` < :data:`CHECK_EVERY`).  Compiled, without the GIL: the
    same iteration as :func:`admm_reference` (to round-off).

    Raises
    ------
    TypeError
        An array of the wrong number of dimensions, a ``tol`` that is not a real number or a
        ``max_iter`` that is not an integer (naming the argument).
    InputError
        Shapes that do not agree, non-finite numbers or a negative mu (naming the argument).
    numpy.linalg.LinAlgError
        The eigendecomposition of G did not converge."""
    lam, iterations, met = _compiled.admm_state(
        np.ascontiguousarray(G, dtype=float),
        np.ascontiguousarray(g, dtype=float),
        np.ascontiguousarray(mu, dtype=float),
        np.ascontiguousarray(lam0, dtype=float),
        tol,
        max_iter,
    )
    return lam, int(iterations), float(met)


def admm_reference(
    G: np.ndarray, g: np.ndarray, mu: np.ndarray, lam0: np.ndarray, tol: float, max_iter: int
) -> tuple[np.ndarray, int, float]:
    """:func:`admm` in NumPy, the readable oracle the compiled one is tested against: (impulses in
    the cones, iterations, the tolerance they meet) of the contact problem, from ``lam0``
    (checked by the caller: G symmetric positive semi-definite 3m x 3m, g 3m, mu m, all finite,
    m >= 1).  It stops at ``tol``, after ``max_iter`` iterations, or when :data:`STALL`
    iterations have not halved the best tolerance met so far (the best answer is returned)."""
    w, Q = np.linalg.eigh(0.5 * (G + G.T))
    w = np.maximum(w, 0.0)
    big = max(float(w[-1]), 1e-300)
    eta = ETA * big
    rho = np.sqrt(big * eta)  # between the largest eigenvalue and the proximal weight
    v_scale = max(float(np.abs(g).max(initial=0.0)), 1e-300)
    y = project_cones(np.asarray(lam0, dtype=float), mu)
    x = y.copy()
    z = G @ y + g
    z += desaxce(z, mu)
    best, best_y, best_k, k = np.inf, y, 0, 0
    for k in range(1, max_iter + 1):
        step = TAU * rho
        y = project_cones(x - z / step, mu)
        b = step * y + eta * x + z - g - desaxce(z, mu)
        x_old, x = x, Q @ ((Q.T @ b) / (w + step + eta))
        z = z - step * (x - y)
        primal = float(np.abs(x - y).max())
        dual = max(eta, step) * float(np.abs(x - x_old).max())
        if k % CHECK_EVERY == 0:
            met = max(achieved(G, g, mu, y, primal * big))
            if met < best:
                if met <= 0.5 * best:
                    best_k = k
                best, best_y = met, y
            if best <= tol:
                return best_y, k, best
            if k - best_k > STALL:
                break
        p_rel = primal / max(float(np.abs(x).max()), float(np.abs(y).max()), 1e-300)
        d_rel = dual / max(float(np.abs(z).max()), v_scale)
        if p_rel > RATIO * d_rel or d_rel > RATIO * p_rel:
            rho = min(max(rho * np.sqrt(p_rel / max(d_rel, 1e-300)), 1e-6 * big), 1e6 * big)
    return best_y, k, best
