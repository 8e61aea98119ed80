"""The compiled runs of a tree with loop closures (core/run.pyx on a LoopSystem, core/loops.pyx's
accelerations and projection): the run's boundary (TypeError naming a wrong array, -2 with
nothing computed for what does not fit), its steps against the same steps taken from Python
stage by stage, and its saved rows against the readable residual."""

from __future__ import annotations

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge import loops
from denoc_bridge.core import run as core_run
from denoc_bridge.core.systems import Saves
from denoc_bridge.io.generators import fourbar
from denoc_bridge.simulation.api import system_of
from denoc_bridge.simulation.common import Forces
from denoc_bridge.simulation.loops import options

DT = 1e-3


def case(model, n, stabilization="projection", tau=None):
    forces = Forces(model, tau, None, n, "rk4")
    opts = options(model, "rk4", "recursive", stabilization, (5.0, 10.0), 1e-12)
    system = system_of(model, forces, False, opts)
    return system, system.kernel_system(), system.forcing()


def run(ks, fc, q0, v0, n, euler=False, **swap):
    """(steps, status, rows), q, v, Saves of a run of n steps."""
    nq, nv = q0.shape[0], v0.shape[0]
    out = Saves(np.zeros((n + 1, nq)), np.zeros((n + 1, nv)), np.zeros((n + 1, nv)), np.zeros(n + 1), np.zeros(0))
    out = out._replace(**{k: x for k, x in swap.items() if k in out._fields})
    ks = ks._replace(**{k: x for k, x in swap.items() if k in ks._fields})
    q, v = q0.copy(), v0.copy()
    s = np.zeros((17, max(nq, nv, 1)))
    stepper = core_run.euler_run if euler else core_run.rk4_run
    return stepper(ks, fc, q, v, 0, n, DT, 1, 0, out, s), q, v, out


@pytest.fixture(scope="module")
def fb():
    model = fourbar()
    q0 = loops.project_configuration(model, np.array([0.2, 2.0, -2.0, 2.0]))
    return model, q0, np.zeros(4)


@pytest.mark.parametrize("stabilization", ["projection", "baumgarte", "none"])
@pytest.mark.parametrize("euler", [False, True])
def test_the_run_is_its_steps_from_python(fb, stabilization, euler):
    """The compiled run against simulate's Python stages (a controller): the same kernels
    composed in Python, to the rounding; the saved |phi| is the readable residual's."""
    model, q0, v0 = fb
    tau = np.array([0.5, 0.3, 0.0, 0.0])
    method = "euler" if euler else "rk4"
    kw = dict(method=method, stabilization=stabilization, baumgarte=(5.0, 10.0))
    compiled = db.simulate(model, q0, v0, 0.2, DT, tau=tau, **kw)
    python = db.simulate(model, q0, v0, 0.2, DT, tau=lambda t, q, v: tau, **kw)
    np.testing.assert_allclose(python.q, compiled.q, rtol=0, atol=1e-13)
    np.testing.assert_allclose(python.v, compiled.v, rtol=0, atol=1e-11)
    residual = np.array([np.abs(loops.loop_residual(model, q)).max() for q in compiled.q])
    np.testing.assert_allclose(compiled.constraint_error, residual, rtol=0, atol=1e-14)
    if stabilization == "projection":
        assert compiled.constraint_drift == pytest.approx(python.constraint_drift, rel=1e-6)
        assert compiled.constraint_error.max() < 1e-12


def test_the_run_refuses_what_does_not_fit(fb):
    model, q0, v0 = fb
    system, ks, fc = case(model, 5)
    assert run(ks, fc, q0, v0, 5)[0] == (5, 0, 5)
    for name, swap in [
        ("pi", dict(pi=ks.pi.astype(np.int32))),
        ("sb", dict(sb=ks.sb.astype(np.float32))),
        ("opts", dict(opts=list(ks.opts))),
        ("drift", dict(drift=np.zeros(1, np.float32))),
        ("Err", dict(Err=np.zeros(6, np.float32))),
    ]:
        with pytest.raises(TypeError, match=name):
            run(ks, fc, q0, v0, 5, **swap)
    bad_opts = []
    for i, value in [(0, -1.0), (1, np.nan), (2, 1.0), (3, -1e-12), (5, -1.0), (5, 1e10)]:
        o = ks.opts.copy()
        o[i] = value
        bad_opts.append(dict(opts=o))
    pi = ks.pi.copy()
    pi[1 + model.n_links, 1] = model.n_links  # a cut joint's link
    for swap in [
        dict(opts=ks.opts[:5].copy()),
        dict(drift=np.zeros(0)),
        dict(Err=np.zeros(3)),  # fewer rows than the run saves
        dict(sb=ks.sb[:-1].copy()),
        dict(pi=pi),
        *bad_opts,
    ]:
        (done, status, rows), q, v, out = run(ks, fc, q0, v0, 5, **swap)
        assert (done, status, rows) == (0, -2, 0), swap.keys()
        np.testing.assert_array_equal(q, q0)
        assert not out.Qs.any()


def test_a_batch_of_loop_systems_is_its_single_runs(fb):
    """simulate_batch refuses models with loops; the compiled batch runs their systems (each
    thread on a scratch of its own) with the numbers of the single runs, |phi| rows included."""
    model, q0, v0 = fb
    B, n = 3, 20
    system, ks, _ = case(model, n)
    taus = np.ascontiguousarray([np.full((n, model.nv), 0.1 * (b + 1)) for b in range(B)])
    fc = system.forcing(taus)
    out = Saves(*(np.zeros((B, n, 4)) for _ in range(3)), np.zeros((B, n)), np.zeros((B, 0)))
    Q, V = np.tile(q0, (B, 1)), np.tile(v0, (B, 1))
    done, status, saved = (np.zeros(B, dtype=np.int64) for _ in range(3))
    assert core_run.run_batch_chunk(ks, fc, Q, V, n, DT, 1, out, done, status, saved, False, 0, B) == 0
    for b in range(B):
        (steps, st, rows), q, v, one = run(ks, fc._replace(taus=np.ascontiguousarray(taus[b])), q0, v0, n)
        assert (steps, st, rows) == (done[b], status[b], saved[b]) == (n, 0, n)
        assert np.array_equal(q, Q[b]) and np.array_equal(v, V[b])
        assert np.array_equal(one.Qs[:n], out.Qs[b]) and np.array_equal(one.Err[:n], out.Err[b])
    bad = out._replace(Err=np.zeros((B - 1, n)))  # |phi| rows for fewer cases: nothing computed
    assert core_run.run_batch_chunk(ks, fc, Q, V, n, DT, 1, bad, done, status, saved, False, 0, B) == -2


def test_a_failed_projection_stops_the_run_with_minus_4(fb):
    """A projection allowed no Gauss-Newton step (max_iter 0, tol 0): status -4 after the first
    step, the state that step left kept, its |phi| (the readable residual's) in ``drift``."""
    model, q0, v0 = fb
    system, ks, fc = case(model, 5)
    o = ks.opts.copy()
    o[3], o[5] = 0.0, 0.0  # tol 0, no iteration
    (done, status, rows), q, v, out = run(ks, fc, q0, np.ones(4), 5, opts=o)
    assert (done, status, rows) == (1, -4, 1)
    assert ks.drift[0] == pytest.approx(np.abs(loops.loop_residual(model, q)).max(), rel=1e-9, abs=1e-15)
    assert ks.drift[0] > 1e-9
