"""A frictional contact solver on the Delassus problem: projected Gauss-Seidel (PGS) over the
contacts, warm-started, on Coulomb cones.

The problem, per contact i with rows (t1, t2, n) and friction coefficient mu_i (the nonlinear
complementarity problem Pinocchio's ``ADMMConstraintSolver`` / ``PGSConstraintSolver`` solve with
``solve_ncp``)::

    sigma = G lambda + g                               (the velocities after the impulses)
    lambda_i in K_i = {|lambda_t| <= mu_i lambda_n}    (the impulse pushes, inside the cone)
    0 <= lambda_n  perp  sigma_n >= 0                  (Signorini)
    |lambda_t| < mu lambda_n  =>  sigma_t = 0           (sticking)
    |lambda_t| = mu lambda_n  =>  sigma_t = -s lambda_t, s >= 0   (sliding: maximal dissipation)

One sweep updates each contact in turn, the normal impulse by its exact one-row minimiser
``max(0, lambda_n - sigma_n / G_nn)`` and then the tangential impulse by a step along
``-sigma_t`` (scaled by the largest eigenvalue of the 2 x 2 tangential block, so that a fixed
point slides against its impulse) projected onto the disk of radius ``mu lambda_n``; ``sigma``
is kept up to date column by column.  The sweeps stop when no update of a sweep changes the
velocity of its own row by more than ``tol`` times the largest free velocity ``|g|`` (velocity
units: the impulses of an indeterminate problem, four corners of a box, need not settle to
the last digit for the velocities to), or after ``max_iter`` sweeps.
"""

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def _add_column(G, sigma, c, d, r):
    for i in range(r):
        sigma[i] += G[i, c] * d


@njit(cache=True)
def pgs(G, g, mu, m, lam, sigma, tol, max_iter):
    """Solve the contact problem of m contacts (G: 3m x 3m at least, g: 3m, mu: m) in place of
    ``lam`` (its entry values: the warm start), with ``sigma = G lam + g`` on return.  Returns
    (sweeps, the last sweep's largest velocity change); sweeps == max_iter + 1 if not converged."""
    r = 3 * m
    for i in range(r):
        s = g[i]
        for j in range(r):
            s += G[i, j] * lam[j]
        sigma[i] = s
    for i in range(m):  # a warm start outside the cones is projected first
        n, t1, t2 = 3 * i + 2, 3 * i, 3 * i + 1
        ln = max(lam[n], 0.0)
        a, b = lam[t1], lam[t2]
        norm = np.sqrt(a * a + b * b)
        if norm > mu[i] * ln:
            f = mu[i] * ln / norm
            a, b = a * f, b * f
        for c, new in ((n, ln), (t1, a), (t2, b)):
            d = new - lam[c]
            if d != 0.0:
                lam[c] = new
                _add_column(G, sigma, c, d, r)
    scale = 1e-300  # the problem's velocities
    for i in range(r):
        scale = max(scale, abs(g[i]))
    change = 0.0
    for sweep in range(1, max_iter + 1):
        change = 0.0  # the largest velocity change an update of the sweep made on its own row
        for i in range(m):
            n, t1, t2 = 3 * i + 2, 3 * i, 3 * i + 1
            if G[n, n] <= 0.0:
                continue
            ln = max(0.0, lam[n] - sigma[n] / G[n, n])  # Signorini, exactly on this row
            d = ln - lam[n]
            if d != 0.0:
                lam[n] = ln
                _add_column(G, sigma, n, d, r)
                change = max(change, abs(d) * G[n, n])
            # the tangential step: 1 / (largest eigenvalue of the 2 x 2 block)
            a11, a22, a12 = G[t1, t1], G[t2, t2], G[t1, t2]
            gamma = 0.5 * (a11 + a22) + np.sqrt(0.25 * (a11 - a22) ** 2 + a12 * a12)
            if gamma > 0.0:
                a, b = lam[t1] - sigma[t1] / gamma, lam[t2] - sigma[t2] / gamma
                norm, radius = np.sqrt(a * a + b * b), mu[i] * ln
                if norm > radius:
                    f = radius / norm
                    a, b = a * f, b * f
                d1, d2 = a - lam[t1], b - lam[t2]
                if d1 != 0.0:
                    lam[t1] = a
                    _add_column(G, sigma, t1, d1, r)
                if d2 != 0.0:
                    lam[t2] = b
                    _add_column(G, sigma, t2, d2, r)
                change = max(change, abs(d1) * a11, abs(d2) * a22)
        if change <= tol * scale:
            return sweep, change
    return max_iter + 1, change


@njit(cache=True)
def ncp_residual(G, g, mu, m, lam):
    """The largest violation of the contact conditions by lam: outside a cone, a negative
    normal velocity, Signorini's complementarity ``lambda_n sigma_n``, a sticking contact that
    slips, a sliding one whose friction does not oppose its slip (in impulse x velocity units
    where it applies)."""
    r = 3 * m
    sigma = g[:r].copy()
    for i in range(r):
        for j in range(r):
            sigma[i] += G[i, j] * lam[j]
    worst = 0.0
    for i in range(m):
        n, t1, t2 = 3 * i + 2, 3 * i, 3 * i + 1
        ln, lt = lam[n], np.sqrt(lam[t1] ** 2 + lam[t2] ** 2)
        st = np.sqrt(sigma[t1] ** 2 + sigma[t2] ** 2)
        worst = max(worst, -ln, lt - mu[i] * ln, -sigma[n], abs(ln * sigma[n]))
        # maximal dissipation: lambda_t . sigma_t = -|lambda_t| |sigma_t| (complementary slackness)
        worst = max(worst, abs(lam[t1] * sigma[t1] + lam[t2] * sigma[t2] + lt * st))
        if lt < mu[i] * ln * (1.0 - 1e-9):
            worst = max(worst, st * (mu[i] * ln - lt))
    return worst
