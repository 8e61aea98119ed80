"""The arguments of the compiled runs (``run.pyx``): the systems a run integrates, its forces and
its saved rows, as named tuples of arrays (the entries fill one C struct per run from them), and
the rows of a run's scratch that the Python layer reads back after a failure.

* :class:`TreeSystem`: a tree, the O(n) forward dynamics (000 §3.2);
* :class:`MimicSystem`: mimic relations as constraint rows ``K`` on the tree, reduced state;
* :class:`LoopSystem`: cut joints as constraint rows ``C(q)`` on the tree, Lagrange multipliers
  (004 eqs. 13-14), optionally projected back onto the loops after each step;
* :class:`MimicLoopSystem`: both, as one stack of rows ``[K; C(q)]`` on the tree.

``integrators.pxi``'s enums are the twins of the constants below (tests/core/test_layout.py).
"""

from __future__ import annotations

from collections import namedtuple

#: the actuation of a run (:attr:`Forcing.tau_mode`): none, one constant vector, a row per step
TAU_NONE, TAU_CONSTANT, TAU_TABLE = 0, 1, 2

# the rows of a run's scratch ``s`` (width max(nq, nv)); a failure's stage is read back from them
# (:mod:`denoc_bridge.simulation.runners`)
QS, XI, VS, TAU, D = 0, 1, 2, 3, 4  # the stage's q, its tangent step, v, tau; passive scratch
KX = 5  # rows KX .. KX + 3: the RKMK rates of the four stages
KV = 9  # rows KV .. KV + 3: the accelerations of the four stages (Euler's: row KV)
Q1, V1, VACC, ZEROS = 13, 14, 15, 16  # the next stage's state; k1 + 2 k2 + 2 k3; zeros
RUN_ROWS = 17  # rows of the scratch

#: the forces of a run: ``tau_mode`` (:data:`TAU_NONE`, :data:`TAU_CONSTANT`, :data:`TAU_TABLE`)
#: and ``taus`` (one row, or one per step), the constant external wrenches ``fext``, the springs
#: ``K``, dampers ``D`` and rest configuration ``q_rest`` of the tree's joints, applied when
#: ``passive``
Forcing = namedtuple("Forcing", ["tau_mode", "taus", "fext", "K", "D", "q_rest", "passive"])
#: the saved states: rows of q, v, a, the loops' error |phi| (zero length for no loops) and the
#: energy the joint limits took so far (zero length for no limits)
Saves = namedtuple("Saves", ["Qs", "Vs", "As", "Err", "Stops"])

#: a tree: its table ``kt`` and work array; ``flat`` (every joint a vector space) and
#: ``swept`` (RK4 stages fused, ``core/stage_sweep.pxi``); its limited joints (``limits.pxi``):
#: ``lim_i`` (n, 2) their q and v index, ``lim_f`` (n, 2) their lower and upper limit, the
#: scratch ``lim_s`` and ``lim_a`` (n = 0: no limits enforced); ``lim_e[0]`` the energy the limits
#: took so far
TreeSystem = namedtuple("TreeSystem", ["kt", "work", "flat", "swept", "lim_i", "lim_f", "lim_s", "lim_a", "lim_e"])
#: a tree with mimic relations: the packed maps of :func:`denoc_bridge.multibody.mimic.pack_maps`,
#: the tree's nq, the links that hold every mimic DOF (``reach``); ``lim_*``: its limited joints in
#: reduced coordinates (as a tree's) and ``lim_r`` the mimic rows K (nc, tree nv) the stops keep
MimicSystem = namedtuple(
    "MimicSystem", ["kt", "work", "imap", "fmap", "nqf", "reach", "lim_i", "lim_f", "lim_r", "lim_s", "lim_a", "lim_e"]
)
#: a tree with loop closures (``core/loops.pyx``): its table and work array, the packed cut joints
#: and scratch of :mod:`denoc_bridge.constraints.packed` (``pi``, ``pf``, ``sb``), ``opts`` =
#: (alpha, beta, rank rtol, projection tol, project, max_iter) and ``drift[0]``, the largest |phi|
#: a step left before its projection
LoopSystem = namedtuple("LoopSystem", ["kt", "work", "pi", "pf", "sb", "opts", "drift"])
#: a MimicModel whose tree has loop closures: the mimic maps and the tree's nq, the mimic rows K
#: (nc, tree nv) stacked ahead of the loops' rows (``core/loops.pyx``), the tree's packed cut joints
#: ``pi``, ``pf`` and a scratch ``sb`` sized for nc + m rows (``core.loops.scratch_size``),
#: ``opts`` and ``drift`` as for a :class:`LoopSystem`
MimicLoopSystem = namedtuple(
    "MimicLoopSystem", ["kt", "work", "imap", "fmap", "nqf", "mimic_rows", "pi", "pf", "sb", "opts", "drift"]
)
