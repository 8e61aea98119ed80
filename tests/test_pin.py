"""denoc_bridge.pin: Pinocchio's calling convention against Pinocchio's own functions, the fields of
``data`` it writes, the conversion cache and bad input."""

from __future__ import annotations

import contextlib
import gc
import io
import os
import subprocess
import sys
import threading
import warnings

import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_close, assert_solution_close, erd_robot_dir, pin_loadable_urdfs

import denoc_bridge as db
import denoc_bridge.pin as dbp

CASES = pin_loadable_urdfs()
IDS = [f"{rel.split('/')[-1][:-5]}-{'floating' if fb else 'fixed'}" for rel, fb in CASES]
PANDA = "panda_description/urdf/panda.urdf"
TALOS = "talos_data/robots/talos_reduced.urdf"
SOLO12 = "solo_description/robots/solo12.urdf"
FIELDS = {
    "aba": "ddq",
    "rnea": "tau",
    "crba": "M",
    "computeMinverse": "Minv",
    "nonLinearEffects": "nle",
    "computeGeneralizedGravity": "g",
}


def _pin_model(rel: str, floating: bool = False):
    path = os.path.join(erd_robot_dir(), rel)
    with contextlib.redirect_stderr(io.StringIO()):
        return pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)


def _convert(pm):
    """The cached conversion, without the PhysicsWarning of real files with round-off inertias."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", db.PhysicsWarning)
        return dbp.denoc_model(pm)


def _state(pm, seed: int):
    rng = np.random.default_rng(seed)
    q = db.random_configuration(_convert(pm), rng)
    v, x = rng.standard_normal(pm.nv), rng.standard_normal(pm.nv)
    fext = pin.StdVec_Force()
    for _ in range(pm.njoints):
        fext.append(pin.Force(rng.standard_normal(6)))
    return q, v, x, fext


def _check_against_pinocchio(pm, seed: int) -> None:
    """Every function of denoc_bridge.pin against Pinocchio's on one random state: the returned
    values, the field of data each writes, and that the returned array is not that field."""
    data, ref = pm.createData(), pm.createData()
    q, v, a, fext = _state(pm, seed)

    def both(name, *args):
        ours = getattr(dbp, name)(pm, data, *args)
        theirs = getattr(pin, name)(pm, ref, *args).copy()
        field = FIELDS[name]
        assert np.array_equal(getattr(data, field), ours), f"{name}: data.{field} differs from the returned value"
        assert not np.shares_memory(ours, getattr(data, field)), f"{name}: returned data.{field} itself"
        return ours, theirs

    tau, tau_pin = both("rnea", q, v, a)
    assert_close("rnea vs pin.rnea", tau, tau_pin)
    assert_close("rnea(fext) vs pin.rnea(fext)", *both("rnea", q, v, a, fext))
    assert_close("rnea(fext as a list) vs pin.rnea(fext)", *both("rnea", q, v, a, list(fext)))
    M, M_pin = both("crba", q)
    assert_close("crba vs pin.crba", M, M_pin)
    assert np.array_equal(M, M.T), "crba: the whole matrix, symmetric (as Pinocchio 4.1)"
    nle, nle_pin = both("nonLinearEffects", q, v)
    assert_close("nonLinearEffects vs pin.nonLinearEffects", nle, nle_pin)
    assert_close("computeGeneralizedGravity vs pin", *both("computeGeneralizedGravity", q))
    a_pin = pin.aba(pm, ref, q, v, tau_pin).copy()
    if not np.all(np.isfinite(a_pin)):  # a singular articulated inertia: Pinocchio divides by zero
        with pytest.raises(db.SingularInertiaError):
            dbp.aba(pm, data, q, v, tau_pin)
        with pytest.raises(db.SingularInertiaError):
            dbp.computeMinverse(pm, data, q)
        return
    a_ours, _ = both("aba", q, v, tau_pin)
    assert_solution_close("aba vs pin.aba", a_ours, a_pin, M, tau_pin - nle, M_pin, tau_pin - nle_pin)
    a_f, a_f_pin = both("aba", q, v, tau_pin, fext)
    zero = np.zeros(pm.nv)
    h_f, h_f_pin = dbp.rnea(pm, data, q, v, zero, fext), pin.rnea(pm, ref, q, v, zero, fext).copy()
    assert_solution_close("aba(fext) vs pin.aba(fext)", a_f, a_f_pin, M, tau_pin - h_f, M_pin, tau_pin - h_f_pin)
    Minv, Minv_pin = both("computeMinverse", q)
    eye = np.eye(pm.nv)
    assert_solution_close("computeMinverse vs pin.computeMinverse", Minv, Minv_pin, M, eye, M_pin, eye)
    assert np.abs(Minv - Minv.T).max(initial=0) <= 1e-12 * np.abs(Minv).max(initial=0), "computeMinverse: symmetric"


@pytest.mark.parametrize(
    "rel,floating", [(PANDA, False), (TALOS, True), (SOLO12, True)], ids=["panda", "talos", "solo12"]
)
def test_matches_pinocchio(rel, floating):
    pm = _pin_model(rel, floating)
    for seed in (1, 2):
        _check_against_pinocchio(pm, seed)


@pytest.mark.parametrize("rel,floating", CASES, ids=IDS)  # 150 models in ~3 s: not slow
def test_matches_pinocchio_on_every_example_robot(rel, floating):
    _check_against_pinocchio(_pin_model(rel, floating), 3)


def test_pinocchio_fills_both_triangles():
    """The behaviour matched (Pinocchio 4.1): crba and computeMinverse fill the whole matrix, and
    data.M is a writable view on Pinocchio's memory that an assignment copies into."""
    pm = _pin_model(PANDA)
    d = pm.createData()
    q = pin.neutral(pm)
    M = pin.crba(pm, d, q)
    assert np.array_equal(np.tril(d.M, -1), np.tril(M, -1)) and np.abs(np.tril(M, -1)).max() > 0
    Minv = pin.computeMinverse(pm, d, q)
    assert np.abs(np.tril(Minv, -1)).max() > 0
    view = d.M
    ours = dbp.crba(pm, d, q)
    assert np.array_equal(view, ours), "an array taken earlier from data.M sees the values"
    assert not np.shares_memory(pin.crba(pm, d, q), d.M), "Pinocchio returns a copy, so do we"


def test_every_pinocchio_robot_is_covered():
    urdfs = {rel for rel, _ in CASES}
    assert len(urdfs) >= 70 and all((rel, True) in CASES for rel in (PANDA, TALOS, SOLO12))


# ------------------------------------------------------------------------------------ the cache
@pytest.fixture
def panda_pm():
    dbp.clear_cache()
    yield _pin_model(PANDA)
    dbp.clear_cache()


def _counting(monkeypatch):
    calls = []
    convert = dbp.from_pinocchio

    def counted(pm, **kw):
        calls.append(pm)
        return convert(pm, **kw)

    monkeypatch.setattr(dbp, "from_pinocchio", counted)
    return calls


def test_second_call_hits_the_cache(panda_pm, monkeypatch):
    calls = _counting(monkeypatch)
    d = panda_pm.createData()
    q, v, tau, _ = _state(panda_pm, 0)
    assert len(calls) == 1  # _state converted it
    first = dbp.aba(panda_pm, d, q, v, tau)

    def no_checks(*args):
        raise AssertionError("the checked path ran on a cache hit")

    monkeypatch.setattr(dbp, "_checked", no_checks)
    for name, args in (("aba", (v, tau)), ("rnea", (v, tau)), ("crba", ()), ("nonLinearEffects", (v,))):
        getattr(dbp, name)(panda_pm, d, q, *args)
    dbp.computeGeneralizedGravity(panda_pm, d, q)
    dbp.computeMinverse(panda_pm, d, q)
    assert np.array_equal(dbp.aba(panda_pm, d, q, v, tau), first)
    assert len(calls) == 1 and dbp.denoc_model(panda_pm) is dbp.denoc_model(panda_pm)
    assert np.all(dbp._cache[id(panda_pm)].zeros == 0), "nonLinearEffects/g wrote into their zero vector"


def test_another_model_is_converted_again(panda_pm, monkeypatch):
    calls = _counting(monkeypatch)
    other = panda_pm.copy()
    q, v, tau, _ = _state(panda_pm, 0)
    dbp.aba(panda_pm, panda_pm.createData(), q, v, tau)
    dbp.aba(other, other.createData(), q, v, tau)
    assert calls == [panda_pm, other] and dbp.denoc_model(other) is not dbp.denoc_model(panda_pm)


def test_entries_go_with_their_model_and_data(panda_pm):
    pm = panda_pm.copy()
    d = pm.createData()
    q, v, tau, _ = _state(pm, 0)
    dbp.aba(pm, d, q, v, tau)
    entry = dbp._cache[id(pm)]
    assert id(d) in entry.datas
    del d
    gc.collect()
    assert not entry.datas
    key = id(pm)
    del pm
    gc.collect()
    assert key not in dbp._cache


def test_gravity_change_is_followed(panda_pm):
    d, ref = panda_pm.createData(), panda_pm.createData()
    q, v, tau, _ = _state(panda_pm, 0)
    dbp.aba(panda_pm, d, q, v, tau)
    panda_pm.gravity = pin.Motion(np.array([0.5, 0.0, -1.62]), np.zeros(3))
    assert_close("aba on the moon", dbp.aba(panda_pm, d, q, v, tau), pin.aba(panda_pm, ref, q, v, tau))
    panda_pm.gravity.linear[:] = (0.0, 0.0, -3.7)
    assert_close(
        "g on mars", dbp.computeGeneralizedGravity(panda_pm, d, q), pin.computeGeneralizedGravity(panda_pm, ref, q)
    )
    assert np.array_equal(dbp.denoc_model(panda_pm).gravity, (0.0, 0.0, -3.7))


def test_added_joint_is_converted_again(panda_pm):
    q, v, tau, _ = _state(panda_pm, 0)
    dbp.aba(panda_pm, panda_pm.createData(), q, v, tau)
    j = panda_pm.addJoint(panda_pm.njoints - 1, pin.JointModelRY(), pin.SE3(np.eye(3), np.array([0, 0, 0.1])), "extra")
    panda_pm.appendBodyToJoint(
        j, pin.Inertia(0.3, np.array([0, 0, 0.05]), np.diag([1e-3, 1e-3, 2e-3])), pin.SE3.Identity()
    )
    d, ref = panda_pm.createData(), panda_pm.createData()
    q2, v2, tau2 = np.append(q, 0.3), np.append(v, 1.0), np.append(tau, 0.1)
    assert_close("aba after addJoint", dbp.aba(panda_pm, d, q2, v2, tau2), pin.aba(panda_pm, ref, q2, v2, tau2))
    assert dbp.denoc_model(panda_pm).nv == 10


def test_inertia_edit_needs_refresh(panda_pm):
    d, ref = panda_pm.createData(), panda_pm.createData()
    q, v, tau, _ = _state(panda_pm, 0)
    before = dbp.aba(panda_pm, d, q, v, tau)
    panda_pm.inertias[3].mass = 5.0
    assert np.array_equal(dbp.aba(panda_pm, d, q, v, tau), before), "documented: not detected"
    dbp.refresh(panda_pm)
    assert_close("aba after refresh", dbp.aba(panda_pm, d, q, v, tau), pin.aba(panda_pm, ref, q, v, tau))
    dbp.clear_cache()
    assert not dbp._cache


def test_a_new_thread_gets_its_own_work(panda_pm):
    d = panda_pm.createData()
    q, v, tau, _ = _state(panda_pm, 0)
    expected = dbp.aba(panda_pm, d, q, v, tau)
    out = []
    t = threading.Thread(target=lambda: out.append(dbp.aba(panda_pm, panda_pm.createData(), q, v, tau)))
    t.start()
    t.join()
    assert np.array_equal(out[0], expected)


def test_db_pin_is_imported_on_first_use():
    code = "import sys, denoc_bridge as db; assert 'denoc_bridge.pin' not in sys.modules; db.pin.aba; print('ok')"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.stdout.strip() == "ok", run.stderr


# ------------------------------------------------------------------------------------ bad input
@pytest.fixture(scope="module")
def panda_args():
    pm = _pin_model(PANDA)
    q, v, tau, fext = _state(pm, 0)
    return pm, pm.createData(), q, v, tau, fext


@pytest.mark.parametrize(
    "which,value,error,match",
    [
        (2, np.zeros(3), db.InputError, r"q must have shape \(9,\) \(model.nq = 9\), got shape \(3,\)"),
        (3, np.zeros(8), db.InputError, r"v must have shape \(9,\)"),
        (4, np.zeros(10), db.InputError, r"tau must have shape \(9,\)"),
        (2, np.zeros((2, 9)), db.InputError, r"q must have shape \(9,\).*one state per call"),
        (4, ["x"] * 9, db.InputTypeError, "tau must hold real numbers"),
        (2, np.full(9, np.nan), db.InputError, r"q\[0\] = nan is not finite"),
        (1, None, db.InputTypeError, "data must be a pinocchio.Data"),
        (1, pin.buildSampleModelHumanoid().createData(), db.InputError, "data does not belong to model 'panda'"),
        (0, "panda", db.InputTypeError, "model must be a pinocchio.Model, got str"),
    ],
)
def test_bad_argument_is_named(panda_args, which, value, error, match):
    args = list(panda_args[:5])
    args[which] = value
    with pytest.raises(error, match=match):
        dbp.aba(*args)


def test_a_denoc_bridge_model_is_pointed_to_its_api(panda_args):
    pm, d, q, *_ = panda_args
    with pytest.raises(db.InputTypeError, match="it is a denoc_bridge model; call db.forward_dynamics"):
        dbp.crba(_convert(pm), d, q)


def test_bad_fext_is_named(panda_args):
    pm, d, q, v, tau, fext = panda_args
    forces = list(fext)
    with pytest.raises(db.InputError, match=r"fext must hold model.njoints = 10 pinocchio.Force .*got 9"):
        dbp.aba(pm, d, q, v, tau, forces[1:])
    with pytest.raises(db.InputTypeError, match="fext\\[3\\] must be a pinocchio.Force, got str"):
        dbp.rnea(pm, d, q, v, tau, forces[:3] + ["f"] + forces[4:])
    with pytest.raises(db.InputTypeError, match="fext must be a list or pinocchio.StdVec_Force"):
        dbp.aba(pm, d, q, v, tau, 3.0)
    forces[2] = pin.Force(np.array([0, 0, np.inf, 0, 0, 0]))
    with pytest.raises(db.InputError, match="fext\\[2\\] \\(joint 'panda_joint2'\\) is not finite"):
        dbp.aba(pm, d, q, v, tau, forces)
    forces[2], forces[0] = pin.Force.Zero(), pin.Force(np.full(6, np.nan))  # the universe's: ignored, as Pinocchio
    assert np.all(np.isfinite(dbp.aba(pm, d, q, v, tau, forces)))


def test_mimic_model_is_refused():
    path = os.path.join(erd_robot_dir(), PANDA)
    with contextlib.redirect_stderr(io.StringIO()):
        pm = pin.buildModelFromUrdf(path, mimic=True)
    with pytest.raises(db.ModelError, match="mimic joint"):
        dbp.crba(pm, pm.createData(), pin.neutral(pm))


def test_fext_as_an_array_of_rows(panda_args):
    pm, d, q, v, tau, fext = panda_args
    rows = np.array([f.vector for f in fext])
    assert np.array_equal(dbp.aba(pm, d, q, v, tau, rows), dbp.aba(pm, d, q, v, tau, fext))
    assert np.array_equal(dbp.rnea(pm, d, q, v, tau, rows), dbp.rnea(pm, d, q, v, tau, fext))


def test_a_bad_edit_after_the_first_call_is_never_ignored(panda_pm):
    d = panda_pm.createData()
    q, v, tau, _ = _state(panda_pm, 0)
    dbp.aba(panda_pm, d, q, v, tau)
    panda_pm.gravity.linear[:] = (0.0, 0.0, np.nan)
    for _ in range(2):  # the second call does not take the fast path with the old gravity
        with pytest.raises(db.ModelError, match="gravity must be 3 finite numbers"):
            dbp.aba(panda_pm, d, q, v, tau)
    panda_pm.gravity.linear[:] = (0.0, 0.0, -9.81)
    panda_pm.addJoint(panda_pm.njoints - 1, pin.JointModelSphericalZYX(), pin.SE3.Identity(), "zyx")
    for _ in range(2):
        with pytest.raises(db.ModelError, match="joint 'zyx' is a JointModelSphericalZYX"):
            dbp.crba(panda_pm, panda_pm.createData(), np.zeros(panda_pm.nq))
    assert id(panda_pm) not in dbp._cache
