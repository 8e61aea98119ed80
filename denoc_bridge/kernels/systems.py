# ruff: noqa: F403, F405  (the layout's names come from the compiled core's Python twin, until numba goes)
"""The compiled *systems* a run integrates: a tree, a tree with mimic relations (reduced
coordinates) and a tree with loop closures, each a named tuple of the arrays its stages read,
and the stage functions numba's runs call on them (:mod:`.run`).

The compiled core (Cython, ``denoc_bridge/core/run.pyx``) runs a :class:`TreeSystem`, a
:class:`LoopSystem` and a :class:`MimicSystem` (the tuples are its arguments); numba's stages of
those are gone (issues 48 and 49), numba runs the mimic systems with loops until they move.

One interface, specialised by numba on the system's type (``@overload``: each run compiles only
for the system it meets, and is cached).  Run as plain Python (``NUMBA_DISABLE_JIT=1``: the op
counts, the tests that compare plain Python with the compiled runs), each function calls the
implementation its overload returns for the tuple it is given, so both run the same code:

======================================  =====================================================
``applied_forces(sys, fc, q, v, n, d, tau)``  the generalized force of step ``n`` at (q, v)
``accelerations(sys, fc, q, v, tau, a)``      the (constrained) accelerations; the status
``stage(sys, fc, qs, vs, tau, a, vb, vacc, h, q1, v1)``  ``a`` at (qs, vs) and the next
                                              stage's rates ``v1 = vb + h (vacc + a)``
``begin(sys, fc, q, v, a, zeros, v1)``        before the first RK4 step
``configuration_step(sys, q, xi, out)``       ``out = q (+) xi`` on the system's manifold
``tangent_rate(sys, xi, v, out)``             the RKMK rate ``dexp_{-xi}^-1 v``
``end_step(sys, fc, q, v, s)``                after a step (a loop system's projection)
``save(sys, n, save_every, r, q, v, a, out)``  row r of the saved states
``fresh(sys)``                                the system with its own work arrays (batches)
``prepare(sys)``                              the system as the stages read it, once per run
======================================  =====================================================

``fc`` is a :class:`Forcing` (the actuation, the joints' springs and dampers, the constant
external wrenches) and ``out`` a :class:`Saves`.  The statuses are those of the forward
dynamics: 0, k + 1 (link k's articulated inertia is singular), -1 (not finite), and for
loops -3 (C M^-1 C^T singular) and -4 (the projection did not converge).

* :class:`TreeSystem`: the O(n) forward dynamics (000 §3.2), whose RK4 stages on chains of
  revolute joints fuse one stage's backward pass with the next stage's twists
  (``core/stage_sweep.pxi``); only the compiled core runs it.
* :class:`MimicSystem`: mimic relations as constraint rows ``K`` on the tree, reduced state;
  only the compiled core runs it (``denoc_bridge/core/run.pyx``: numba's mimic stages are gone,
  issue 49), the tuple is its argument.
* :class:`MimicLoopSystem`: both, as one stack of rows ``[K; C(q)]`` on the tree
  (:mod:`.mimic_loops`), reduced state, projected like a loop system.
* :class:`LoopSystem`: cut joints as constraint rows ``C(q)`` on the tree, Lagrange
  multipliers (004 eqs. 13-14), optionally projected back onto the loops after each step; only
  the compiled core runs it (``core/run.pyx`` on ``core/loops.pyx``: numba's loop stages are
  gone, issue 49), the tuple is its argument.
"""

import numpy as np
from numba import njit, types
from numba.extending import overload

from denoc_bridge.core.systems import *
from denoc_bridge.kernels import integrators as ig
from denoc_bridge.kernels import mimic as km
from denoc_bridge.kernels import mimic_loops as kml

SCRATCH_ROWS = RUN_ROWS  # numba's runs' name for it


def _is(sys, cls) -> bool:
    """Whether ``sys`` (a numba type when compiling, the tuple itself as plain Python) is a ``cls``."""
    if isinstance(sys, cls):
        return True
    return isinstance(sys, types.BaseNamedTuple) and sys.instance_class is cls


def prepare(sys):
    """The system as its stages read it (packed maps and scratch unpacked once per run)."""
    return _prepare(sys)(sys)


def applied_forces(sys, fc, q, v, n, d, tau):
    """tau_n + the springs and dampers at (q, v) into ``tau`` (a mimic system applies its
    tree's inside :func:`accelerations`)."""
    return _applied_forces(sys, fc, q, v, n, d, tau)(sys, fc, q, v, n, d, tau)


def accelerations(sys, fc, q, v, tau, a):
    """``a`` = the system's accelerations at (q, v) under tau; returns the status."""
    return _accelerations(sys, fc, q, v, tau, a)(sys, fc, q, v, tau, a)


def stage(sys, fc, qs, vs, tau, a, vb, vacc, h, q1, v1):
    """One RK4 stage: ``a`` at (qs, vs) and ``v1 = vb + h (vacc + a)`` (``q1``, the next
    stage's configuration, is known); returns the status."""
    return _stage(sys, fc, qs, vs, tau, a, vb, vacc, h, q1, v1)(sys, fc, qs, vs, tau, a, vb, vacc, h, q1, v1)


def begin(sys, fc, q, v, a, zeros, v1):
    """Before the first RK4 step of a run (a fused tree prepares its first stage)."""
    return _begin(sys, fc, q, v, a, zeros, v1)(sys, fc, q, v, a, zeros, v1)


def configuration_step(sys, q, xi, out):
    """out = q (+) xi."""
    return _configuration_step(sys, q, xi, out)(sys, q, xi, out)


def tangent_rate(sys, xi, v, out):
    """out = dexp_{-xi}^-1 v (the Runge-Kutta-Munthe-Kaas rate)."""
    return _tangent_rate(sys, xi, v, out)(sys, xi, v, out)


def end_step(sys, fc, q, v, s):
    """After a step: a loop system's projection of (q, v) onto its loops, a tree's joint limits
    (``s``: the run's scratch); returns the status."""
    return _end_step(sys, fc, q, v, s)(sys, fc, q, v, s)


def save(sys, n, save_every, r, q, v, a, out):
    """When n % save_every == 0, the state, ``a`` (and a loop system's |phi|) into row r of
    ``out``; returns the rows saved (0 or 1)."""
    return _save(sys, n, save_every, r, q, v, a, out)(sys, n, save_every, r, q, v, a, out)


def stop_energy(sys):
    """The kinetic energy a tree's joint-limit stops took so far (0 for other systems)."""
    return _stop_energy(sys)(sys)


def fresh(sys):
    """The system with work arrays of its own (one per case of a parallel batch)."""
    return _fresh(sys)(sys)


@overload(prepare, inline="always")
def _prepare(sys):
    return lambda sys: sys


@overload(applied_forces, inline="always")
def _applied_forces(sys, fc, q, v, n, d, tau):
    if _is(sys, MimicLoopSystem):

        def mimic_impl(sys, fc, q, v, n, d, tau):
            km.actuation(fc.tau_mode, fc.taus, n, tau)

        return mimic_impl

    def impl(sys, fc, q, v, n, d, tau):
        ig.applied(sys.kt.view(np.int32), q, v, fc.tau_mode, fc.taus, n, fc.K, fc.D, fc.q_rest, fc.passive, d, tau)

    return impl


@overload(accelerations, inline="always")
def _accelerations(sys, fc, q, v, tau, a):
    if _is(sys, MimicLoopSystem):
        return lambda sys, fc, q, v, tau, a: _mimic_loop_accelerations(sys, fc, q, v, tau, a)


@njit(cache=True, inline="always")
def _mimic_loop_accelerations(sys, fc, q, v, tau, a):
    return kml.accelerations(
        sys.kt, sys.work, sys.imap, sys.fmap, sys.nqf, sys.pi, sys.pf, sys.sb, sys.B, sys.rows, q, v, tau, fc.fext,
        fc.K, fc.D, fc.q_rest, fc.passive, sys.opts, a,
    )  # fmt: skip


@overload(stage, inline="always")
def _stage(sys, fc, qs, vs, tau, a, vb, vacc, h, q1, v1):
    if _is(sys, MimicLoopSystem):

        def mimic_loop_impl(sys, fc, qs, vs, tau, a, vb, vacc, h, q1, v1):
            status = _mimic_loop_accelerations(sys, fc, qs, vs, tau, a)
            return next_rates(status, vb, h, vacc, a, v1)

        return mimic_loop_impl


@njit(cache=True, inline="always", fastmath=False)
def next_rate(vb, h, vacc, a):
    """vb + h (vacc + a), rounded as written: the stage formulas of the integrators, bit for bit.
    ``fastmath=False`` is explicit because numba lets an unset callee inherit its caller's
    flags (then a fused multiply-add here, or not, by the order of compilation)."""
    return vb + h * (vacc + a)


@njit(cache=True, inline="always")
def next_rates(status, vb, h, vacc, a, v1):
    """v1 = vb + h (vacc + a) after accelerations that succeeded; returns their status."""
    if status == 0:
        for i in range(a.shape[0]):
            v1[i] = next_rate(vb[i], h, vacc[i], a[i])
    return status


@overload(begin, inline="always")
def _begin(sys, fc, q, v, a, zeros, v1):
    def impl(sys, fc, q, v, a, zeros, v1):
        pass

    return impl


@overload(configuration_step, inline="always")
def _configuration_step(sys, q, xi, out):
    if _is(sys, MimicLoopSystem):

        def mimic_loop_impl(sys, q, xi, out):
            im, fm = km.unpack(sys.imap, sys.fmap)
            km.mimic_integrate(sys.kt.view(np.int32), q, xi, im, fm, sys.nqf, sys.B, out)

        return mimic_loop_impl

    def impl(sys, q, xi, out):
        ig.step_configuration(sys.kt.view(np.int32), sys.flat, q, xi, out)

    return impl


@overload(tangent_rate, inline="always")
def _tangent_rate(sys, xi, v, out):
    if _is(sys, MimicLoopSystem):

        def mimic_loop_impl(sys, xi, v, out):
            im, fm = km.unpack(sys.imap, sys.fmap)
            km.mimic_dexpinv(sys.kt.view(np.int32), xi, v, im, fm, sys.B, out)

        return mimic_loop_impl

    def impl(sys, xi, v, out):
        ig.tangent_rate(sys.kt.view(np.int32), sys.flat, xi, v, out)

    return impl


@overload(end_step, inline="always")
def _end_step(sys, fc, q, v, s):
    if _is(sys, MimicLoopSystem):

        def mimic_loop_impl(sys, fc, q, v, s):
            if sys.opts[4] <= 0.0:
                return 0
            status, err, err0 = kml.project(
                sys.kt0, sys.work, sys.imap, sys.fmap, sys.nqf, sys.pi, sys.pf, sys.sb, sys.B, sys.rows, q, v, sys.opts
            )
            sys.drift[0] = max(sys.drift[0], err0)
            return status

        return mimic_loop_impl

    def impl(sys, fc, q, v, s):
        return 0

    return impl


@overload(save, inline="always")
def _save(sys, n, save_every, r, q, v, a, out):
    if _is(sys, MimicLoopSystem):

        def mimic_loop_impl(sys, n, save_every, r, q, v, a, out):
            if n % save_every:
                return 0
            out.Qs[r, :] = q
            out.Vs[r, :] = v
            out.As[r, :] = a
            out.Err[r] = kml.loop_error(sys.pi, sys.B, sys.imap)  # of the accelerations at (q, v)
            return 1

        return mimic_loop_impl

    def impl(sys, n, save_every, r, q, v, a, out):
        return ig.save_state(n, save_every, r, q, v, a, out.Qs, out.Vs, out.As)

    return impl


@overload(stop_energy, inline="always")
def _stop_energy(sys):
    return lambda sys: 0.0  # the stops are a tree's and a mimic system's: the compiled core's runs


@overload(fresh)
def _fresh(sys):
    if _is(sys, MimicLoopSystem):

        def mimic_loop_impl(sys):
            return MimicLoopSystem(
                sys.kt, sys.kt0, np.empty_like(sys.work), sys.imap, sys.fmap, sys.nqf, sys.pi, sys.pf,
                np.zeros_like(sys.sb), np.zeros_like(sys.B), np.zeros_like(sys.rows), sys.opts, np.zeros_like(sys.drift),
            )  # fmt: skip

        return mimic_loop_impl
