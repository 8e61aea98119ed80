"""The compiled *systems* a run integrates: a tree, a tree with mimic relations (reduced
coordinates), a tree with loop closures and a tree with both, each a named tuple of the arrays
its stages read, the arguments of the compiled core's runs (Cython, ``denoc_bridge/core/run.pyx``:
``rk4_run``, ``euler_run``, ``run_batch_chunk``); numba's stages of these systems are gone
(issues 48 and 49).

``fc`` is a :class:`Forcing` (the actuation, the joints' springs and dampers, the constant
external wrenches) and ``out`` a :class:`Saves`.  The statuses are those of the forward
dynamics: 0, k + 1 (link k's articulated inertia is singular), -1 (not finite), and for
loops -3 (C M^-1 C^T singular) and -4 (the projection did not converge); -2 for an array that
does not fit (nothing computed).

* :class:`TreeSystem`: the O(n) forward dynamics (000 §3.2), whose RK4 stages on chains of
  revolute joints fuse one stage's backward pass with the next stage's twists
  (``core/stage_sweep.pxi``).
* :class:`MimicSystem`: mimic relations as constraint rows ``K`` on the tree, reduced state.
* :class:`LoopSystem`: cut joints as constraint rows ``C(q)`` on the tree, Lagrange
  multipliers (004 eqs. 13-14), optionally projected back onto the loops after each step
  (``core/run.pyx`` on ``core/loops.pyx``).
* :class:`MimicLoopSystem`: both, as one stack of rows ``[K; C(q)]`` on the tree (the rows K
  ahead of the loops' in ``core/loops.pyx``), reduced state, projected like a loop system.
"""

from collections import namedtuple

# the rows of a run's scratch ``s`` (width max(nq, nv)); a failure's stage is read back from them
# (:mod:`denoc_bridge.simulation.runners`)
QS, XI, VS, TAU, D = 0, 1, 2, 3, 4  # the stage's q, its tangent step, v, tau; passive scratch
KX = 5  # rows KX .. KX + 3: the RKMK rates of the four stages
KV = 9  # rows KV .. KV + 3: the accelerations of the four stages (Euler's: row KV)
Q1, V1, VACC, ZEROS = 13, 14, 15, 16  # the next stage's state; k1 + 2 k2 + 2 k3; zeros
SCRATCH_ROWS = 17

#: the forces of a run: ``tau_mode`` (:data:`.integrators.TAU_NONE`, ``TAU_CONSTANT``,
#: ``TAU_TABLE``) and ``taus`` (one row, or one per step), the constant external wrenches
#: ``fext``, the springs ``K``, dampers ``D`` and rest configuration ``q_rest`` of the tree's
#: joints, applied when ``passive``
Forcing = namedtuple("Forcing", ["tau_mode", "taus", "fext", "K", "D", "q_rest", "passive"])
#: the saved states: rows of q, v, a, the loops' error |phi| (zero length for no loops) and the
#: energy the joint limits took so far (zero length for no limits)
Saves = namedtuple("Saves", ["Qs", "Vs", "As", "Err", "Stops"])

#: a tree: its table ``kt`` and work array; ``flat`` (every joint a vector space) and
#: ``swept`` (RK4 stages fused, :func:`.stages.sweepable`); its limited joints (:mod:`.limits`):
#: ``lim_i`` (n, 2) their q and v index, ``lim_f`` (n, 2) their lower and upper limit, the
#: scratch ``lim_s`` and ``lim_a`` (n = 0: no limits enforced); ``lim_e[0]`` the energy the limits
#: took so far
TreeSystem = namedtuple("TreeSystem", ["kt", "work", "flat", "swept", "lim_i", "lim_f", "lim_s", "lim_a", "lim_e"])
#: a tree with mimic relations (the compiled core's runs, core/run.pyx): the packed maps of
#: :func:`.mimic.pack`, the tree's nq, the links that hold every mimic DOF (``reach``);
#: ``lim_*``: its limited joints in reduced coordinates (as a tree's) and ``lim_r`` the mimic rows
#: K (nc, tree nv) the stops keep
MimicSystem = namedtuple(
    "MimicSystem", ["kt", "work", "imap", "fmap", "nqf", "reach", "lim_i", "lim_f", "lim_r", "lim_s", "lim_a", "lim_e"]
)
#: a tree with loop closures (the compiled core's runs, core/run.pyx on core/loops.pyx): its
#: table and work array, the packed cut joints and scratch of :mod:`denoc_bridge.constraints.packed`
#: (``pi``, ``pf``, ``sb``), ``opts`` = (alpha, beta, rank rtol, projection tol, project, max_iter)
#: and ``drift[0]``, the largest |phi| a step left before its projection
LoopSystem = namedtuple("LoopSystem", ["kt", "work", "pi", "pf", "sb", "opts", "drift"])

#: a MimicModel whose tree has loop closures (the compiled core's runs, core/run.pyx): the mimic
#: maps of :func:`.mimic.pack` and the tree's nq, the mimic rows K (nc, tree nv) stacked ahead of
#: the loops' rows, the tree's packed cut joints ``pi``, ``pf`` and the scratch ``sb`` sized for
#: nc + m rows (``core.loops.scratch_size``), ``opts`` and ``drift`` as for a :class:`LoopSystem`
MimicLoopSystem = namedtuple(
    "MimicLoopSystem", ["kt", "work", "imap", "fmap", "nqf", "mimic_rows", "pi", "pf", "sb", "opts", "drift"]
)
