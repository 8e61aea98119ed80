"""The compiled fixed-step runs of a model with mimic joints (denoc_bridge/core/run.pyx on a
``MimicSystem``: the reduced state expanded to the tree's at every stage, the Lagrange form of
mimic.pxi, the tree's Lie-group maps restricted to the kept entries, the stops with the mimic
rows kept) against the same steps taken from Python with the dense solve of the reduced GIM
(``MimicSystem`` with ``method = "dense"``: NumPy's solve of ``G^T M G``, another algorithm for
the accelerations): the gripper of 002 fixed and floating (six mimic joints), a chain of
continuous mimic joints, joint limits hit, the tree's springs and dampers, tau constant/table,
external wrenches, ``save_every > 1``; chunked calls and a batch's cases equal their single runs
bit for bit; lengths and maps that do not fit compute nothing.

numba's runs of these systems (kernels/run.py on the MimicSystem), which this file compared them
with in one process before they went, agreed to 6.4e-14 over these runs (issue 49)."""

from __future__ import annotations

import warnings
from functools import cache

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.core import load
from denoc_bridge.core import systems as kr
from denoc_bridge.core.systems import Saves
from denoc_bridge.simulation.api import start_inside_limits
from denoc_bridge.simulation.common import Forces
from denoc_bridge.simulation.mimic import MimicSystem
from denoc_bridge.simulation.runners import run_python
from tests.constraints.test_mimic import GRIPPER
from tests.core.test_mimic import CONTINUOUS
from tests.core.test_run import DT, rel
from tests.core.test_run import execute as tree_execute

run = load("run")

#: largest relative difference max|compiled - dense| / max(1, max|dense|) of a run's states and
#: stop energies (measured at most 3.6e-14 on these runs)
RTOL = 2e-13


@cache
def model_of(name: str) -> db.MimicModel:
    if name == "gripper":
        return db.load_urdf(GRIPPER, mimic=True)
    if name == "gripper-floating":
        return db.load_urdf(GRIPPER, floating_base=True, mimic=True)
    return db.load_urdf(CONTINUOUS, mimic=True)


def case(model, n, *, tau="constant", limits=False, fext=False, springs=False, seed=3, system_too=False):
    """(MimicSystem tuple, Forcing, q0, v0) of a run of n steps, as simulate builds them (with
    ``system_too``, the Python system and its Forces too)."""
    rng = np.random.default_rng(seed)
    nv, tree = model.nv, model.tree
    t = {"none": None, "constant": 0.3 * rng.standard_normal(nv), "table": 0.3 * rng.standard_normal((n, nv))}[tau]
    f = np.tile([0.01, -0.02, 0.005, 0.1, 0.05, -0.2], (tree.n_links, 1)) if fext else None
    forces = Forces(model, t, f, n, "rk4")
    system = MimicSystem(model, forces, True, limits)
    q0 = db.random_configuration(model, rng)
    if limits:
        with warnings.catch_warnings():  # "the run starts on them": a random q0 past a limit
            warnings.simplefilter("ignore")
            q0 = start_inside_limits(model, q0, system)
    v0 = (3.0 if limits else 0.5) * rng.standard_normal(nv)
    if springs:  # the tree's springs and dampers on every DOF, about a rest configuration off q0
        system.K, system.D = np.linspace(0.01, 0.03, tree.nv), np.linspace(0.001, 0.005, tree.nv)
        system.q_rest = np.ascontiguousarray(db.random_configuration(tree, np.random.default_rng(4)))
        system.use_passive = True
    if system_too:
        return system.kernel_system(), system.forcing(), q0, v0, system, forces
    return system.kernel_system(), system.forcing(), q0, v0


def execute(stepper, ks, fc, q0, v0, n, stride=1, chunks=None):
    """tests/core/test_run.py's run of n steps, with the limits' energy last."""
    *run_, _, system = tree_execute(stepper, ks, fc, q0, v0, n, stride, chunks)
    return (*run_, float(system.lim_e[0]))


STEPPERS = {"rk4": run.rk4_run, "euler": run.euler_run}
RUNS = [
    ("gripper", dict(tau="constant")),
    ("gripper", dict(tau="table", limits=True, springs=True)),
    ("gripper-floating", dict(tau="constant", fext=True, springs=True)),
    ("gripper-floating", dict(tau="table", limits=True)),
    ("continuous", dict(tau="none", springs=True)),
]


def dense_reference(model, n, opts, method, stride):
    """The run's steps from Python with the dense solve of the reduced GIM (a Trajectory)."""
    _, _, q0, v0, system, forces = case(model, n, system_too=True, **opts)
    system.method = "dense"
    return run_python(model, q0, v0, DT, n, forces, method, True, stride, False, system)


@pytest.mark.parametrize("method", ["rk4", "euler"])
@pytest.mark.parametrize("name, opts", RUNS, ids=[f"{n}-{'-'.join(f'{k}={v}' for k, v in o.items())}" for n, o in RUNS])
def test_a_mimic_run_is_the_dense_reference(name, opts, method):
    model = model_of(name)
    n = 150
    ks, fc, q0, v0 = case(model, n, **opts)
    a = execute(STEPPERS[method], ks, fc, q0, v0, n, stride=3)
    assert a[0] == (n, 0, 50)
    ref = dense_reference(model, n, opts, method, 3)
    assert ref.status == "completed" and len(ref.q) == 51
    for x, y in [(a[1], ref.q[-1]), (a[2], ref.v[-1]), (a[3].Qs[:50], ref.q[:50]), (a[3].Vs[:50], ref.v[:50])]:
        assert rel(x, y) <= RTOL, rel(x, y)
    if opts.get("limits"):  # the stops took energy, the same
        assert a[4] > 0.0 and abs(a[4] - ref.limit_work[-1]) <= RTOL * max(1.0, a[4])
        assert rel(a[3].Stops[:50], ref.limit_work[:50]) <= RTOL
    chunked = execute(STEPPERS[method], ks, fc, q0, v0, n, stride=3, chunks=[7, 50, 1, 92])
    assert chunked[0] == a[0] and np.array_equal(chunked[1], a[1]) and np.array_equal(chunked[3].Qs, a[3].Qs)


def test_a_mimic_batch_is_its_single_runs():
    model = model_of("gripper")
    B, n, stride = 4, 60, 2
    ks, fc, q0, v0 = case(model, n, tau="table", limits=True)
    rng = np.random.default_rng(8)
    Q = np.array([q0] * B)
    V = np.array([v0 + 0.2 * rng.standard_normal(model.nv) for _ in range(B)])
    taus = np.ascontiguousarray(np.stack([fc.taus * (1 + 0.1 * b) for b in range(B)]))
    fcb = fc._replace(taus=taus)
    rows = (n - 1) // stride + 1
    out = Saves(np.zeros((B, rows, model.nq)), np.zeros((B, rows, model.nv)), np.zeros((B, rows, model.nv)),
                np.zeros((B, 0)), np.zeros((B, rows + 1)))  # fmt: skip
    st = [np.zeros(B, np.int64) for _ in range(3)]
    Q1, V1 = Q.copy(), V.copy()
    assert run.run_batch_chunk(ks, fcb, Q1, V1, n, DT, stride, out, *st, False, 0, B) == 0
    for b in range(B):
        r = execute(run.rk4_run, ks, fc._replace(taus=np.ascontiguousarray(taus[b])), Q[b], V[b], n, stride)
        assert r[0] == (st[0][b], st[1][b], st[2][b]) == (n, 0, rows)
        assert np.array_equal(r[1], Q1[b]) and np.array_equal(r[2], V1[b])
        assert np.array_equal(r[3].Qs[:rows], out.Qs[b]) and np.array_equal(r[3].Stops, out.Stops[b])


def test_a_mimic_run_refuses_what_does_not_fit():
    model = model_of("gripper-floating")
    n = 10
    ks, fc, q0, v0 = case(model, n, limits=True)
    nq, nv = model.nq, model.nv
    tree = model.tree
    bad_imap = ks.imap.copy()
    bad_imap[4] = tree.nq  # a kept coordinate outside the tree
    for change in [
        dict(imap=bad_imap),
        dict(imap=ks.imap[:-1].copy()),
        dict(fmap=ks.fmap[:-1].copy()),
        dict(nqf=tree.nq + 1),
        dict(reach=tree.n_links + 1),
        dict(lim_r=np.zeros((ks.lim_r.shape[0] + 1, tree.nv))),
        dict(lim_r=np.zeros((ks.lim_r.shape[0], tree.nv - 1))),
        dict(lim_s=np.zeros((ks.lim_s.shape[0] - 2, ks.lim_s.shape[1]))),
    ]:
        bad = ks._replace(**change)
        out = Saves(np.zeros((n, nq)), np.zeros((n, nv)), np.zeros((n, nv)), np.zeros(0), np.zeros(0))
        q, v = q0.copy(), v0.copy()
        s = np.zeros((kr.RUN_ROWS, max(nq, nv, 1)))
        assert run.rk4_run(bad, fc, q, v, 0, n, DT, 1, 0, out, s) == (0, -2, 0), change
        assert np.array_equal(q, q0) and not out.Qs.any()
    for change in [dict(K=np.zeros(nv)), dict(q_rest=np.zeros(nq))]:  # the tree's lengths, not the reduced
        out = Saves(np.zeros((n, nq)), np.zeros((n, nv)), np.zeros((n, nv)), np.zeros(0), np.zeros(0))
        s = np.zeros((kr.RUN_ROWS, max(nq, nv, 1)))
        assert run.rk4_run(ks, fc._replace(**change), q0.copy(), v0.copy(), 0, n, DT, 1, 0, out, s)[1] == -2
    with pytest.raises(TypeError, match="lim_r"):
        out = Saves(np.zeros((n, nq)), np.zeros((n, nv)), np.zeros((n, nv)), np.zeros(0), np.zeros(0))
        s = np.zeros((kr.RUN_ROWS, max(nq, nv, 1)))
        run.rk4_run(ks._replace(lim_r=ks.lim_r.astype(np.float32)), fc, q0.copy(), v0.copy(), 0, n, DT, 1, 0, out, s)


def test_the_python_stages_and_the_stop_are_the_compiled_runs():
    """simulate with a Python controller (the stages from Python: mimic_forward_dynamics, the
    compiled configuration maps, enforce_joint_limits on the mimic system) gives the compiled
    run bit for bit, stops included, fixed and floating."""
    for name in ("gripper", "gripper-floating"):
        model = model_of(name)
        ks, fc, q0, v0 = case(model, 10, limits=True, seed=5)
        tau = fc.taus[0]
        compiled = db.simulate(model, q0, v0, 0.3, DT, tau=tau, progress=False)
        python = db.simulate(model, q0, v0, 0.3, DT, tau=lambda t, q, v: tau, progress=False)
        assert compiled.limit_work[-1] > 0
        assert np.array_equal(compiled.q, python.q) and np.array_equal(compiled.limit_work, python.limit_work)
