"""Frictional ground contact on the constraint layer: the rows of the active contacts and the
Delassus operator.

A contact between a robot point and a ground is three rows on the tree's velocities, the
velocity of the contact point in the contact frame ``(t1, t2, n)`` (the tangents first, the
normal last, as Pinocchio's ``PointContactConstraintModel`` with a ``CoulombFrictionCone``):
``J v = [v_t1, v_t2, v_n]``.  Unlike a loop or a mimic row it may only push: its impulse lies
in the Coulomb cone ``|lambda_t| <= mu lambda_n`` and the normal velocity may open.  The
Delassus operator ``G = J M^-1 J^T`` (004 eq. 14's ``C M^-1 C^T`` for these rows) takes the
``M^-1 J^T`` columns from the O(n) factorised solve of 000 Table 3 (compiled:
``denoc_bridge/core/contact.pyx``): one factorisation per state, O(n) per row.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from denoc_bridge.algorithms.dynamics import singular_error
from denoc_bridge.algorithms.kinematics import forward_kinematics
from denoc_bridge.constraints.contact_admm import achieved, admm
from denoc_bridge.constraints.loop_kinematics import loop_jacobian
from denoc_bridge.constraints.solve import gravity_free, independent_rows
from denoc_bridge.core import OVERFLOW, sized
from denoc_bridge.core import contact as _cc
from denoc_bridge.errors import InputError
from denoc_bridge.multibody import inputs as _inputs
from denoc_bridge.multibody.checks import check_model as _check_model
from denoc_bridge.multibody.contact import ContactPoint, Ground, grounds_of, points_of
from denoc_bridge.multibody.joints import limit_arrays
from denoc_bridge.multibody.mimic import MimicModel

ADMM_BUDGET = 5  # ADMM may take this many times max_iter iterations
#: a joint limit is an active row from this distance on (rad or m): the rows' gap term lets the
#: joint approach at up to the distance per step, so an early row costs nothing but its solve
LIMIT_MARGIN = 1e-2
#: the tolerance ADMM answers to where PGS stalls (relative to the free velocities, as ``tol``):
#: MuJoCo's default solver tolerance is 1e-8, Pinocchio's ADMM's 1e-6 (absolute)
FALLBACK_TOL = 1e-8
#: where ADMM stalls short of ``fallback_tol`` (measured: icub collapsing, 16 contacts, G of rank
#: 12, ADMM's best 2.5e-8 relative; Pinocchio's ADMM stalls there too, short of 1e-10 absolute),
#: its best answer is taken if it meets this, Pinocchio's ADMM's default tolerance
LAST_RESORT_TOL = 1e-6

__all__ = [
    "ContactSet",
    "Contacts",
    "ContactSolution",
    "contact_rows",
    "delassus_matrix",
    "lifted",
    "lowest_point",
    "solve_contact",
]


@dataclass(frozen=True)
class Contacts:
    """The active contacts at one configuration (m of them): ``J`` (3m, nv) rows (t1, t2, n per
    contact), ``distance`` (m,) signed distances (negative: penetration), ``position`` (m, 3)
    world contact points, ``point`` and ``ground`` (m,) indices into the ContactSet's points
    and grounds, ``mu`` (m,) friction coefficients, ``restitution`` (m,)."""

    J: np.ndarray
    distance: np.ndarray
    position: np.ndarray
    point: np.ndarray
    ground: np.ndarray
    mu: np.ndarray
    restitution: np.ndarray

    @property
    def m(self) -> int:
        return int(self.distance.shape[0])


def link_bounds(n_links: int, cl: np.ndarray, cp: np.ndarray, crad: np.ndarray, cmar: np.ndarray) -> np.ndarray:
    """``lb`` (L, 5): per link the bounding sphere of its contact points in the link frame (the
    centre of their bounding box, the largest distance from it plus the point's sphere radius)
    and the largest margin; radius -inf for a link without points.  The compiled rows skip the
    points of a link whose sphere is farther than that margin from every ground (the broad
    phase)."""
    lb = np.zeros((n_links, 5))
    lb[:, 3] = -np.inf
    if cl.shape[0] == 0:
        return lb
    lo, hi = np.full((n_links, 3), np.inf), np.full((n_links, 3), -np.inf)
    np.minimum.at(lo, cl, cp)
    np.maximum.at(hi, cl, cp)
    has = np.zeros(n_links, dtype=bool)
    has[cl] = True
    c = 0.5 * (lo[has] + hi[has])
    lb[has, :3] = c
    centre = np.zeros((n_links, 3))
    centre[has] = c
    radius, margin = np.full(n_links, -np.inf), np.full(n_links, -np.inf)
    np.maximum.at(radius, cl, np.linalg.norm(cp - centre[cl], axis=1) + crad)
    np.maximum.at(margin, cl, cmar)
    lb[has, 3], lb[has, 4] = radius[has], margin[has]
    return lb


class ContactSet:
    """The contact points of a tree model and the grounds, packed once for the compiled kernels
    (``denoc_bridge/core/contact.pyx``), with this object's scratch (one per thread).

    Parameters
    ----------
    model : Model
        A tree, a tree with loop closures, or a MimicModel: the loops' and the mimic couplings'
        rows enter the Delassus operator as bilateral constraints (:meth:`delassus`).
    points : iterable of ContactPoint or link names
    grounds : Ground or iterable of Ground
    limits : bool
        The tree's joint position limits (revolute and prismatic joints with finite limits,
        :func:`denoc_bridge.simulation.tree.limit_arrays`) as one-sided rows beside the contacts:
        a joint within :data:`LIMIT_MARGIN` of a limit is one more active "contact", listed after
        the points', whose normal row is its rate away from the limit (tangent rows zero, no
        friction, no restitution), ``pair`` (n + j, side) with side 0 the lower limit, 1 the upper.
    """

    def __init__(
        self,
        model: Any,
        points: Iterable[ContactPoint | str],
        grounds: Ground | Sequence[Ground],
        limits: bool = False,
    ):
        _check_model(model)
        self.model = model
        #: the tree whose coordinates the rows, ``q`` and ``Y`` are in (a MimicModel's ``tree``)
        self.tree = tree = model.tree if isinstance(model, MimicModel) else model
        self.points = points_of(tree, points)
        self.grounds = grounds_of(grounds)
        L, nv = tree.n_links, tree.nv
        self.cl = np.array([c.link for c in self.points], dtype=np.int64)
        self.cp = np.array([c.point for c in self.points], dtype=float).reshape(-1, 3)
        self.crad = np.array([c.radius for c in self.points], dtype=float)
        self.cmar = np.array([c.margin for c in self.points], dtype=float)
        self.lb = link_bounds(L, self.cl, self.cp, self.crad, self.cmar)  # the broad phase's spheres
        self.gB = np.array([g.frame() for g in self.grounds], dtype=float).reshape(-1, 3, 3)
        self.goff = np.array([g.offset for g in self.grounds], dtype=float)
        self.gmu = np.array([g.mu for g in self.grounds], dtype=float)
        self.grest = np.array([g.restitution for g in self.grounds], dtype=float)
        self.li: np.ndarray
        self.lf: np.ndarray
        self.li, self.lf = limit_arrays(tree) if limits else (np.zeros((0, 2), dtype=np.int64), np.zeros((0, 2)))
        #: the warm start's rows: each (point, ground) pair, then each limited joint's two sides
        self.n_pairs = len(self.points) * len(self.grounds) + 2 * self.li.shape[0]
        self.m_max = self.n_pairs
        self.J = np.zeros((3 * self.m_max, nv))
        self.Y = np.zeros((3 * self.m_max, nv))
        self.dist = np.zeros(self.m_max)
        self.pos = np.zeros((self.m_max, 3))
        self.pair = np.zeros((self.m_max, 2), dtype=np.int64)
        self.kt0 = gravity_free(tree)._kt
        self.work = tree.thread_work()

    @property
    def packed(self) -> tuple[Any, ...]:
        """The points, grounds and joint limits as the compiled kernels take them."""
        grounds = (self.gB, self.goff, self.gmu, self.grest)
        return (self.cl, self.cp, self.crad, self.cmar, self.lb, *grounds, self.li, self.lf, LIMIT_MARGIN)

    def pair_ids(self, m: int) -> np.ndarray:
        """The warm start's row of each of the m active contacts (core/contact_rows.pxi pair_id)."""
        point, other = self.pair[:m, 0], self.pair[:m, 1]
        n, ng = len(self.points), len(self.grounds)
        return np.where(point < n, point * ng + other, n * ng + 2 * (point - n) + other)

    def limit_rows(self, m: int) -> np.ndarray:
        """Which of the m active contacts are joint limits."""
        return self.pair[:m, 0] >= len(self.points)

    def friction(self, m: int) -> tuple[np.ndarray, np.ndarray]:
        """(mu, restitution) of the m active contacts: the grounds', zero at a joint limit."""
        on, mu, restitution = ~self.limit_rows(m), np.zeros(m), np.zeros(m)
        mu[on], restitution[on] = self.gmu[self.pair[:m, 1][on]], self.grest[self.pair[:m, 1][on]]
        return mu, restitution

    @property
    def buffers(self) -> tuple[np.ndarray, ...]:
        """The rows of the active contacts, as the compiled kernels fill them."""
        return (self.J, self.Y, self.dist, self.pos, self.pair)

    def raise_margins(self, minimum: float) -> None:
        """Every point's margin at least ``minimum`` (m), the broad phase's spheres with them."""
        self.cmar[:] = np.maximum(self.cmar, minimum)
        self.lb[:, 4] = np.maximum(self.lb[:, 4], minimum)  # the spheres' margins (their radii stay)

    def active(self, q: np.ndarray) -> int:
        """The number of active contacts at q (float64, checked), their rows in ``self.J``."""
        m = sized(_cc.contact_rows_state(self.kt0, self.work, q, self.packed, self.buffers), "contact_rows_state")
        if m == -1:
            raise InputError("q: not a configuration of the model (a value that is not finite, or a zero quaternion)")
        return int(m)

    def contacts(self, q: np.ndarray) -> Contacts:
        """The active contacts at the tree's q (copies); the rows on the model's velocities
        (``J G`` on a MimicModel's reduced ones)."""
        m = self.active(q)
        g = self.pair[:m, 1].copy()
        J = self.J[: 3 * m] @ self.model.coupling_matrix() if self.tree is not self.model else self.J[: 3 * m].copy()
        return Contacts(
            J,
            self.dist[:m].copy(),
            self.pos[:m].copy(),
            self.pair[:m, 0].copy(),
            g,
            self.gmu[g],
            self.grest[g],
        )

    def delassus(self, q: np.ndarray, r: int) -> np.ndarray:
        """``G = J M^-1 J^T`` of the first r rows of ``self.J`` (a view of this set's buffer),
        ``self.Y[:r]`` then holds ``(M^-1 J^T)^T``.  On a model with loop closures or mimic
        joints, ``M^-1`` is that of the constrained system (:meth:`_constrained`).  ``q``, the rows
        and ``Y`` are the tree's (``model.expand(q)`` of a MimicModel)."""
        if self.model.loops or self.tree is not self.model:
            return self._constrained(q, r)
        G = np.empty((r, r))
        self._delassus(q, self.J, r, self.Y, G)
        return G

    def _delassus(self, q: np.ndarray, rows: np.ndarray, r: int, Y: np.ndarray, G: np.ndarray) -> None:
        """G = rows[:r] M^-1 rows[:r]^T and Y[:r] = (M^-1 rows[:r]^T)^T, compiled."""
        status = sized(_cc.delassus_state(self.kt0, self.work, q, rows, r, Y, G), "delassus_state")
        if status > 0:
            raise singular_error(self.tree, int(status) - 1)
        if status == -1:
            raise InputError("q: not a configuration of the model (a value that is not finite, or a zero quaternion)")
        if status == OVERFLOW:
            raise InputError("the Delassus operator is not finite at q (an inertia or a contact row too large)")

    def _constrained(self, q: np.ndarray, r: int) -> np.ndarray:
        """The Delassus operator of the contact rows J with the holonomic constraints' independent
        rows C (the mimic rows K of a MimicModel, the loop closures' rows) as bilateral
        constraints on the same layer: one ``S M^-1 S^T`` of the stacked rows ``S = [C; J]``
        (004 eq. 14's ``C M^-1 C^T``, the same O(n) solve per row), then the bilateral impulses
        eliminated, since they keep ``C dv = 0``: ``mu = -G_CC^-1 G_CJ lambda``, so
        ``G = G_JJ - G_JC G_CC^-1 G_CJ`` and ``dv = (Y_J - X^T Y_C)^T lambda``, X = G_CC^-1 G_CJ."""
        tree = self.tree
        rows = [self.model.constraint_matrix()] if tree is not self.model else []
        if tree.loops:
            rows.append(loop_jacobian(tree, q))
        C = np.vstack(rows)
        C = C[independent_rows(C)]
        k, nv = C.shape[0], tree.nv
        S = np.vstack([C, self.J[:r]])
        GS, YS = np.zeros((k + r, k + r)), np.zeros((k + r, nv))
        self._delassus(q, S, k + r, YS, GS)
        X = np.linalg.solve(GS[:k, :k], GS[:k, k:])
        G = GS[k:, k:] - GS[k:, :k] @ X
        self.Y[:r] = YS[k:] - X.T @ YS[:k]
        return 0.5 * (G + G.T)


def _set(model: Any, points: Any, grounds: Any) -> ContactSet:
    return points if isinstance(points, ContactSet) else ContactSet(model, points, grounds)


def contact_rows(model: Any, q: Any, points: Any, grounds: Any = None) -> Contacts:
    """The active contacts of ``points`` (ContactPoints, link names, or a :class:`ContactSet`)
    against ``grounds`` at q: their rows ``J`` (3 per contact: t1, t2, n), distances, points.

    Examples
    --------
    >>> import numpy as np
    >>> import denoc_bridge as db
    >>> from denoc_bridge.constraints.contact import contact_rows
    >>> from denoc_bridge.multibody.contact import Ground, contact_point
    >>> solo = db.load_robot("solo12")
    >>> q = db.neutral_configuration(solo)
    >>> feet = [contact_point(solo, f, margin=1.0) for f in ("FL_FOOT", "FR_FOOT")]
    >>> c = contact_rows(solo, q, feet, Ground(height=-0.5))
    >>> c.m, c.J.shape
    (2, (6, 18))
    """
    cs = _set(model, points, grounds)
    return cs.contacts(_tree_configuration(cs, q))


def delassus_matrix(model: Any, q: Any, points: Any, grounds: Any = None) -> tuple[np.ndarray, Contacts]:
    """``(G, contacts)``: the Delassus operator ``G = J M^-1 J^T`` (3m x 3m) of the active
    contacts at q and the contacts, through the O(n) articulated solve (one factorisation,
    O(n) per row); equal to Pinocchio's ``computeDelassusMatrix`` on the same point contacts."""
    cs = _set(model, points, grounds)
    qq = _tree_configuration(cs, q)
    c = cs.contacts(qq)
    return cs.delassus(qq, 3 * c.m).copy(), c


def _tree_configuration(cs: ContactSet, q: Any) -> np.ndarray:
    """q (the model's: reduced on a MimicModel) checked, as the tree's float64 configuration."""
    qq = _inputs.vector(cs.model, q, "q", "q")
    if cs.tree is not cs.model:
        qq = cs.model.expand(qq)
    return np.ascontiguousarray(qq, dtype=float)


@dataclass(frozen=True)
class ContactSolution:
    """The impulses ``lam`` (3m: t1, t2, n per contact) of a contact problem, the velocities
    ``sigma = G lam + g`` they produce, the sweeps taken (PGS's, plus ADMM's iterations where it
    answered), whether the solver converged, how the answer was found (``"pgs"``;
    ``"sticking"``: the all-sticking solution; ``"admm"``: see :func:`solve_contact`), and the
    tolerance it meets (``tol``, or ``fallback_tol`` for ADMM's)."""

    lam: np.ndarray
    sigma: np.ndarray
    sweeps: int
    converged: bool
    method: str = "pgs"
    tolerance: float = 0.0


def solve_contact(
    G: Any,
    g: Any,
    mu: Any,
    lam0: Any = None,
    *,
    tol: float = 1e-12,
    max_iter: int = 10_000,
    fallback_tol: float = FALLBACK_TOL,
    pgs_stopped: Any = None,
) -> ContactSolution:
    """Solve the frictional contact problem on the Delassus operator ``G`` (3m x 3m), free
    velocity ``g`` (3m) and friction coefficients ``mu`` (m), warm-started from ``lam0``: the
    impulses in the Coulomb cones with Signorini's condition and maximal dissipation
    (projected Gauss-Seidel, compiled: ``denoc_bridge/core/contact_solver.pxi``).  The same
    problem as Pinocchio's ``ADMMConstraintSolver`` / ``PGSConstraintSolver`` with
    ``CoulombFrictionCone`` sets and ``solve_ncp``.

    Where PGS does not reach ``tol`` in ``max_iter`` sweeps (an indeterminate problem, many
    contacts on one flat sole, where it cycles a few digits short), two answers are tried from
    where it stopped: the all-sticking impulses, when they lie in the cones (one dense solve), then
    ADMM (:mod:`denoc_bridge.constraints.contact_admm`) to ``max(tol, fallback_tol)`` in at most
    ``ADMM_BUDGET * max_iter`` iterations: measured on a talos landing (40 contacts on two soles,
    rank 12 of 120), ADMM (ours and Pinocchio's alike) reaches 1e-8 in hundreds to thousands of
    iterations and 1e-10 only in tens of thousands.  Where ADMM stalls short of that, its best
    answer is taken if it meets :data:`LAST_RESORT_TOL` (1e-6); else PGS goes on from where it
    stopped, ``ADMM_BUDGET * max_iter`` sweeps more, and its answer is taken if it meets that.
    ``method`` says which one answered and ``tolerance`` what its answer meets.
    ``pgs_stopped``: the caller ran this PGS already (from ``lam0``, ``max_iter`` sweeps, as the
    compiled contact run does) and it stalled there; the fallbacks start from it at once.

    Raises
    ------
    InputError
        Shapes that do not agree, non-finite numbers, a negative mu or G not square.
    """
    Ga = np.ascontiguousarray(G, dtype=float)
    ga = np.ascontiguousarray(g, dtype=float).ravel()
    mua = np.ascontiguousarray(mu, dtype=float).ravel()
    m = mua.shape[0]
    if Ga.shape != (3 * m, 3 * m) or ga.shape != (3 * m,):
        raise InputError(
            f"solve_contact: G must be (3m, 3m) and g (3m,) for m = {m} friction coefficients, "
            f"got G {Ga.shape} and g {ga.shape}"
        )
    for name, a in (("G", Ga), ("g", ga), ("mu", mua)):
        if not np.all(np.isfinite(a)):
            raise InputError(f"solve_contact: {name} has non-finite entries")
    if np.any(mua < 0):
        raise InputError(f"solve_contact: mu must be >= 0, got {mua.min()}")
    lam = np.zeros(3 * m) if lam0 is None else np.array(lam0, dtype=float).ravel()
    if lam.shape != (3 * m,) or not np.all(np.isfinite(lam)):
        raise InputError(f"solve_contact: lam0 must be 3m = {3 * m} finite numbers")
    sigma = np.zeros(3 * m)
    if pgs_stopped is None:
        sweeps, _ = _cc.pgs_state(Ga, ga, mua, m, lam, sigma, float(tol), int(max_iter))  # shapes checked above
    else:  # stalled where the caller's PGS stopped
        lam = np.array(pgs_stopped, dtype=float).ravel()
        if lam.shape != (3 * m,) or not np.all(np.isfinite(lam)):
            raise InputError(f"solve_contact: pgs_stopped must be 3m = {3 * m} finite numbers")
        sigma, sweeps = Ga @ lam + ga, int(max_iter) + 1
    if sweeps > max_iter:  # PGS crawls on indeterminate problems (a flat box landing on 4 corners)
        sticking = _all_sticking(Ga, ga, mua, float(tol))
        if sticking is not None:
            return ContactSolution(sticking, Ga @ sticking + ga, int(max_iter), True, "sticking", float(tol))
        loose = max(float(tol), float(fallback_tol))
        y, iterations, met = admm(Ga, ga, mua, lam, loose, ADMM_BUDGET * int(max_iter))
        if met <= max(loose, LAST_RESORT_TOL):
            return ContactSolution(y, Ga @ y + ga, int(max_iter) + iterations, True, "admm", max(met, float(tol)))
        # PGS again from where it stopped, for longer: measured on 96 contacts of a folding solo12,
        # ADMM (ours and Pinocchio's alike) stalls at 0.18 where PGS crawls to 3e-7 in 50,000 sweeps
        more_lam, more_sigma = lam.copy(), np.zeros(3 * m)
        more, _ = _cc.pgs_state(
            Ga, ga, mua, m, more_lam, more_sigma, 0.1 * LAST_RESORT_TOL, ADMM_BUDGET * int(max_iter)
        )
        met = max(achieved(Ga, ga, mua, more_lam))
        if met <= LAST_RESORT_TOL:
            sweeps_all = int(max_iter) + iterations + int(min(more, ADMM_BUDGET * int(max_iter)))
            return ContactSolution(more_lam, more_sigma, sweeps_all, True, "pgs", max(met, float(tol)))
    return ContactSolution(lam, sigma, int(min(sweeps, max_iter)), bool(sweeps <= max_iter), "pgs", float(tol))


def _all_sticking(G: np.ndarray, g: np.ndarray, mu: np.ndarray, tol: float) -> np.ndarray | None:
    """The minimum-norm impulses that stop every contact, ``G lam = -g`` (least squares), when they
    solve the contact problem: inside every cone (then Signorini and maximal dissipation hold
    with sigma = 0); None otherwise.  The velocities (sigma) an indeterminate problem's solutions
    share are unique; this is one of its impulses, found in one dense solve."""
    lam = np.linalg.lstsq(G, -g, rcond=None)[0]
    scale = max(float(np.abs(g).max()), 1e-300)
    if np.abs(G @ lam + g).max() > max(tol, 1e-10) * scale:  # g not in G's range (to round-off): not all can stick
        return None
    slack = 1e-10 * max(float(np.abs(lam).max()), 1e-300)  # round-off of the dense solve
    ln, lt = lam[2::3], np.hypot(lam[0::3], lam[1::3])
    if ln.min() < -slack or np.max(lt - mu * ln) > slack:
        return None
    return lam


def lowest_point(model: Any, q: Any, points: Iterable[ContactPoint | str]) -> float:
    """The height (world z) of the lowest of the contact ``points`` at q: the bottoms of their
    spheres (a MimicModel's q reduced)."""
    tree = model.tree if isinstance(model, MimicModel) else model
    qt = model.expand(q) if tree is not model else q
    R, p = forward_kinematics(tree, qt)
    return min(float((p[c.link] + R[c.link] @ c.point)[2]) - c.radius for c in points_of(tree, points))


def lifted(model: Any, q: Any, points: Iterable[ContactPoint | str], drop: float) -> np.ndarray:
    """q of a floating-base model moved up or down so that the lowest of ``points`` is ``drop``
    above z = 0 (a robot to drop onto a ground)."""
    q = np.array(q, dtype=float)
    q[2] += drop - lowest_point(model, q, points)
    return q
