"""The compiled fixed-step runs of a MimicModel whose tree has loop closures (denoc_bridge/core/run.pyx
on a ``MimicLoopSystem``: the reduced state expanded to the tree's at every stage, the mimic rows
K stacked ahead of the cut joints' rows in core/loops.pyx, J = [K; C(q)], Lagrange multipliers on
the tree, and after each step the projection with the stacked rows) against the same steps taken
from Python stage by stage (``run_python`` on the Python ``MimicLoopSystem``: the readable
constraints/mimic_loops.py forward dynamics and kinetic projection, NumPy's solves): the geared
five-bar (two mimic joints, one loop) with a torque table and dampers under each stabilisation,
and the parallelogram whose mimic joint makes a loop row redundant (the independent rows) with a
constant tau, external wrenches and the tree's springs; chunked calls and a batch's cases equal
their single runs bit for bit; lengths that do not fit compute nothing.

numba's runs of these systems (kernels/run.py on kernels/mimic_loops.py), compared with the
compiled ones in one process before they went (issue 49, 150 steps each, every state, velocity,
acceleration and |phi| saved): at most 1.6e-15 apart relative to the states' scale, and the
compiled run 3.0-4.7x faster per step (median of 9 runs of 2000 steps, thread CPU time, load ~3
on 2 cores): five-bar RK4 with projection 29.1 -> 8.6 us, Euler with projection 15.2 -> 5.2 us,
RK4 Baumgarte 23.7 -> 6.9 us, Euler Baumgarte 6.0 -> 1.8 us; the parallelogram with wrenches RK4
23.8 -> 5.1 us, Euler 8.9 -> 2.0 us."""

from __future__ import annotations

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.core import load
from denoc_bridge.core.systems import RUN_ROWS, Saves
from denoc_bridge.io import generators as g
from denoc_bridge.multibody.constraints import Mimic
from denoc_bridge.simulation.common import Forces
from denoc_bridge.simulation.loops import options
from denoc_bridge.simulation.mimic_loops import MimicLoopSystem
from denoc_bridge.simulation.runners import run_python
from tests.constraints.test_mimic_loops import closed_state
from tests.core.test_run import execute as tree_execute

run = load("run")
DT = 1e-3
#: largest difference of a run's states and accelerations from the Python stages' relative to
#: max(1, |states|) (measured at most 5.6e-16 and 1.1e-15 on these runs: the two solve the same
#: rows by other algorithms)
RTOL = 1e-13
STEPPERS = {"rk4": run.rk4_run, "euler": run.euler_run}


def fivebar():
    """The geared five-bar with dampers, a closed state and a torque table of 150 steps."""
    rng = np.random.default_rng(21)
    base = g.geared_fivebar()
    model = db.MimicModel(base.tree.replace(damping=rng.uniform(0.0, 0.05, base.tree.nv)))
    q, v, _ = closed_state(model, rng)
    return model, q, v, 0.2 * rng.standard_normal((150, model.nv)), None


def parallelogram():
    """The four-bar with R4 = R2 (a redundant loop row), a constant tau and wrenches."""
    rng = np.random.default_rng(10)
    tree = g.fourbar()
    model = db.MimicModel(tree.replace(mimic=[Mimic("R4", "R2", 1.0, 0.0)], damping=np.full(tree.nv, 0.02)))
    q = db.loops.project_configuration(model, [0.1, 0.4, -0.4], independent=[0, 1])
    v = db.loops.project_velocity(model, q, rng.standard_normal(3), independent=[0, 1])
    f = np.tile([0.01, -0.02, 0.005, 0.1, 0.05, -0.2], (tree.n_links, 1))
    return model, q, v, 0.3 * rng.standard_normal(3), f


MODELS = {"fivebar": fivebar, "parallelogram": parallelogram}


def case(name, n, method="rk4", stabilization="projection", springs=False):
    """(model, Python system, Forces, q0, v0) of a run of n steps, as simulate builds them."""
    model, q0, v0, tau, fext = MODELS[name]()
    forces = Forces(model, tau, fext, n, method)
    system = MimicLoopSystem(model, forces, True, options(model, method, "recursive", stabilization, (5.0, 5.0), 1e-12))
    if springs:  # the tree's springs and dampers on every DOF, about a rest configuration off q0
        tree = model.tree
        system.K, system.D = np.linspace(0.01, 0.03, tree.nv), np.linspace(0.001, 0.005, tree.nv)
        system.q_rest = np.ascontiguousarray(model.expand(q0) + 0.05)
        system.use_passive = True
    return model, system, forces, q0, v0


def execute(stepper, ks, fc, q0, v0, n, stride=1, chunks=None):
    """tests/core/test_run.py's run of n steps in calls of ``chunks`` steps: (steps, status, rows),
    q, v, Saves (with |phi|)."""
    *run_, _, _ = tree_execute(stepper, ks, fc, q0, v0, n, stride, chunks)
    return tuple(run_)


def rel(a, b):
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


RUNS = [
    ("fivebar", "projection", False),
    ("fivebar", "baumgarte", False),
    ("fivebar", "none", False),
    ("fivebar", "projection", True),
    ("parallelogram", "projection", True),
]


@pytest.mark.parametrize("method", ["rk4", "euler"])
@pytest.mark.parametrize("name, stabilization, springs", RUNS)
def test_the_run_is_the_python_stages(name, stabilization, springs, method):
    n, stride = 150, 3
    model, system, forces, q0, v0 = case(name, n, method, stabilization, springs)
    a = execute(STEPPERS[method], system.kernel_system(), system.forcing(), q0, v0, n, stride)
    assert a[0] == (n, 0, 50)
    drift = system.drift
    _, ref_system, ref_forces, *_ = case(name, n, method, stabilization, springs)
    ref = run_python(model, q0, v0, DT, n, ref_forces, method, True, stride, False, ref_system)
    assert ref.status == "completed" and len(ref.q) == 51
    (_, _, saved), q, v, out = a
    for x, y in [(q, ref.q[-1]), (v, ref.v[-1]), (out.Qs[:50], ref.q[:50]), (out.Vs[:50], ref.v[:50])]:
        assert rel(x, y) <= RTOL, rel(x, y)
    assert rel(out.As[:50], ref.a[:50]) <= RTOL
    np.testing.assert_allclose(out.Err[:50], ref.constraint_error[:50], rtol=0, atol=1e-13)
    qf = model.expand(q)  # the mimic relations hold on the tree, the loops as the stabilisation keeps them
    np.testing.assert_allclose(model.reduce_configuration(qf), q, rtol=0, atol=1e-15)
    if stabilization == "projection":
        assert out.Err[:50].max() <= 1e-12 and 0 < drift
        np.testing.assert_allclose(drift, ref_system.drift, rtol=1e-6, atol=1e-15)
    else:
        assert drift != drift and out.Err[49] > 0  # nan: not projected


def test_the_run_keeps_the_mimic_rows():
    """Can fail: without the rows K (zeros in their place) the same run is another motion (the
    mimic joints free), far from the Python stages."""
    n = 60
    model, system, forces, q0, v0 = case("fivebar", n)
    ks, fc = system.kernel_system(), system.forcing()
    good = execute(run.rk4_run, ks, fc, q0, v0, n)
    loose = execute(run.rk4_run, ks._replace(mimic_rows=np.zeros_like(ks.mimic_rows)), fc, q0, v0, n)
    assert good[0] == loose[0] == (n, 0, n)
    assert rel(loose[3].As[: n - 1], good[3].As[: n - 1]) > 1e-3


@pytest.mark.parametrize("method", ["rk4", "euler"])
def test_chunked_calls_are_the_single_run(method):
    n = 80
    _, system, _, q0, v0 = case("fivebar", n, method)
    ks, fc = system.kernel_system(), system.forcing()
    one = execute(STEPPERS[method], ks, fc, q0, v0, n, stride=2)
    drift = float(ks.drift[0])
    ks.drift[0] = 0.0
    chunked = execute(STEPPERS[method], ks, fc, q0, v0, n, stride=2, chunks=[7, 30, 1, 42])
    assert chunked[0] == one[0] == (n, 0, 40)
    for x, y in zip(chunked[1:3], one[1:3], strict=True):
        assert np.array_equal(x, y)
    for field in Saves._fields:
        assert np.array_equal(getattr(chunked[3], field), getattr(one[3], field)), field
    assert ks.drift[0] == drift > 0


@pytest.mark.parametrize("name", ["fivebar", "parallelogram"])
def test_a_batch_is_its_single_runs(name):
    B, n, stride = 4, 50, 2
    model, system, _, q0, v0 = case(name, n)
    ks, fc = system.kernel_system(), system.forcing()
    rng = np.random.default_rng(8)
    Q = np.array([q0] * B)
    V = np.array([db.loops.project_velocity(model, q0, v0 + 0.2 * rng.standard_normal(model.nv)) for _ in range(B)])
    taus = np.ascontiguousarray(np.stack([np.resize(fc.taus, (n, model.nv)) * (1 + 0.1 * b) for b in range(B)]))
    fcb = fc._replace(tau_mode=2, taus=taus)
    rows = (n - 1) // stride + 1
    out = Saves(np.zeros((B, rows, model.nq)), np.zeros((B, rows, model.nv)), np.zeros((B, rows, model.nv)),
                np.zeros((B, rows)), np.zeros((B, 0)))  # fmt: skip
    st = [np.zeros(B, np.int64) for _ in range(3)]
    Q1, V1 = Q.copy(), V.copy()
    assert run.run_batch_chunk(ks, fcb, Q1, V1, n, DT, stride, out, *st, False, 0, B, np.zeros(1, np.int64)) == 0
    for b in range(B):
        r = execute(run.rk4_run, ks, fcb._replace(taus=np.ascontiguousarray(taus[b])), Q[b], V[b], n, stride)
        assert r[0] == (st[0][b], st[1][b], st[2][b]) == (n, 0, rows)
        assert np.array_equal(r[1], Q1[b]) and np.array_equal(r[2], V1[b])
        assert np.array_equal(r[3].Qs[:rows], out.Qs[b]) and np.array_equal(r[3].Err[:rows], out.Err[b])


def test_the_run_refuses_what_does_not_fit():
    n = 10
    model, system, _, q0, v0 = case("fivebar", n)
    ks, fc = system.kernel_system(), system.forcing()
    nq, nv, tree = model.nq, model.nv, model.tree
    bad_imap = ks.imap.copy()
    bad_imap[4] = tree.nq  # a kept coordinate outside the tree
    for change in [
        dict(imap=bad_imap),
        dict(nqf=tree.nq + 1),
        dict(mimic_rows=np.zeros((ks.mimic_rows.shape[0] + 1, tree.nv))),
        dict(mimic_rows=np.zeros((ks.mimic_rows.shape[0], tree.nv - 1))),
        dict(mimic_rows=np.full_like(ks.mimic_rows, np.nan)),
        dict(sb=np.zeros(ks.sb.size - 1)),  # sized for the loops' rows alone: too short
        dict(opts=ks.opts[:-1].copy()),
        dict(drift=np.zeros(0)),
    ]:
        bad = ks._replace(**change)
        out = Saves(np.zeros((n, nq)), np.zeros((n, nv)), np.zeros((n, nv)), np.zeros(n), np.zeros(0))
        q, v = q0.copy(), v0.copy()
        s = np.zeros((RUN_ROWS, max(nq, nv, 1)))
        assert run.rk4_run(bad, fc, q, v, 0, n, DT, 1, 0, out, s) == (0, -2, 0), change
        assert np.array_equal(q, q0) and not out.Qs.any()
    out = Saves(np.zeros((n, nq)), np.zeros((n, nv)), np.zeros((n, nv)), np.zeros(n - 1), np.zeros(0))
    s = np.zeros((RUN_ROWS, max(nq, nv, 1)))
    assert run.rk4_run(ks, fc, q0.copy(), v0.copy(), 0, n, DT, 1, 0, out, s) == (0, -2, 0)  # Err too short
    with pytest.raises(TypeError, match="mimic_rows"):
        out = Saves(np.zeros((n, nq)), np.zeros((n, nv)), np.zeros((n, nv)), np.zeros(n), np.zeros(0))
        run.rk4_run(ks._replace(mimic_rows=ks.mimic_rows.astype(np.float32)), fc, q0.copy(), v0.copy(), 0, n,
                    DT, 1, 0, out, s)  # fmt: skip
