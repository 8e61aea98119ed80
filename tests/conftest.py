"""Shared fixtures and assertions of the test suite."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
import warnings
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from lying_clock import install as install_lying_clock

import denoc_bridge as db
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.testing import random_model
from denoc_bridge.validation import relative_error, solve_agreement

# DENOC_TEST_CLOCK=still|huge: the suite under the clock of a much faster or slower machine
install_lying_clock()

settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True, print_blob=True)
settings.register_profile("long", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("DENOC_HYPOTHESIS_PROFILE", "ci"))

TOL = 1e-9


def random_trees(max_links: int, max_roots: int = 3):
    """Hypothesis strategy: random trees of every joint type (denoc_bridge.testing.random_model)."""
    from denoc_bridge.testing import random_model

    return st.builds(
        random_model,
        seed=st.integers(0, 2**32 - 1),
        n_links=st.integers(1, max_links),
        branching=st.floats(0.0, 0.8),
        n_roots=st.integers(1, max_roots),
        floating_base=st.booleans(),
        massless=st.sampled_from([0.0, 0.3]),
    )


def random_state(model, seed):
    """(q, v, a, f_ext) drawn with a fixed seed."""
    rng = np.random.default_rng(seed)
    return (
        db.random_configuration(model, rng),
        rng.standard_normal(model.nv),
        rng.standard_normal(model.nv),
        rng.standard_normal((model.n_links, 6)),
    )


def assert_close(name: str, ours, ref, tol: float = TOL) -> None:
    """Relative error max|ours - ref| / max|ref| <= tol, with a message naming the quantity."""
    ours, ref = np.asarray(ours, dtype=float), np.asarray(ref, dtype=float)
    assert ours.shape == ref.shape, f"{name}: shape {ours.shape} != reference shape {ref.shape}"
    err = relative_error(ours, ref)
    if not err <= tol:
        i = np.unravel_index(np.argmax(np.abs(ours - ref)), ref.shape)
        raise AssertionError(f"{name}: relative error {err:.2e} > {tol:g} (worst entry {i}: {ours[i]!r} vs {ref[i]!r})")


def assert_solution_close(name: str, ours, pin_value, M, rhs, M_pin, rhs_pin, tol: float = TOL) -> None:
    """A solve with the GIM: within ``tol`` of Pinocchio's result or, where kappa(M) amplifies
    the last-bit differences of the two libraries' problems beyond ``tol``, the stricter
    three-part statement of :func:`denoc_bridge.validation.solve_agreement`."""
    passed, info = solve_agreement(ours, pin_value, M, rhs, M_pin, rhs_pin, tol)
    assert passed, f"{name}: {info}"


def pin_fext(fext):
    """Pinocchio's fext of an (n_links, 6) array (the universe joint's wrench first)."""
    import pinocchio as pin

    return [pin.Force.Zero()] + [pin.Force(f) for f in fext]


def _derivative_error(ours, ref, M, v) -> float:
    """``max|ours - ref|`` relative to ``max|ref|``, or to ``1e-3 max|M| max|v|`` (the scale of
    dtau/dv) when the derivative vanishes up to round-off (dtau/dv of a planar chain of parallel
    axes is 1e-18 on both sides: a relative error of round-off would mean nothing)."""
    floor = 1e-3 * float(np.abs(M).max(initial=0.0)) * max(1.0, float(np.abs(v).max(initial=0.0)))
    scale = max(float(np.abs(ref).max(initial=0.0)), floor)
    return float(np.abs(np.asarray(ours) - ref).max(initial=0.0) / scale) if scale > 0 else relative_error(ours, ref)


def assert_derivatives_match_pinocchio(
    model, q, v, a, fext, tol: float = 1e-10, pm=None, solve_tol: float | None = None
) -> dict:
    """``inverse_dynamics_derivatives`` and ``forward_dynamics_derivatives`` entry by entry against
    ``pin.computeRNEADerivatives`` / ``pin.computeABADerivatives`` of ``pm`` (default
    ``to_pinocchio(model)``): the RNEA derivatives within ``tol`` relative, those through ``M^-1``
    within ``solve_tol`` (default ``tol``) or the conditioning-aware statement of
    :func:`assert_solution_close`.  Returns the relative errors."""
    import pinocchio as pin

    solve_tol = tol if solve_tol is None else solve_tol
    pm = db.to_pinocchio(model) if pm is None else pm
    pd = pm.createData()
    dq, dv, M = db.inverse_dynamics_derivatives(model, q, v, a, fext)
    pin.computeRNEADerivatives(pm, pd, q, v, a, pin_fext(fext))
    M_pin = np.triu(pd.M) + np.triu(pd.M, 1).T
    errors = {
        "dtau_dq": _derivative_error(dq, pd.dtau_dq, M_pin, v),
        "dtau_dv": _derivative_error(dv, pd.dtau_dv, M_pin, v),
    }
    errors["M"] = relative_error(M, M_pin)
    bad = {k: e for k, e in errors.items() if not e <= tol}
    assert not bad, f"{model.name}: relative errors above {tol:g}: {bad}"
    tau = db.inverse_dynamics(model, q, v, a, fext)
    ddq, ddv, Minv = db.forward_dynamics_derivatives(model, q, v, tau, fext)
    pd = pm.createData()
    pin.computeABADerivatives(pm, pd, q, v, tau, pin_fext(fext))
    Minv_pin = np.triu(pd.Minv) + np.triu(pd.Minv, 1).T
    ddq_pin, ddv_pin = pd.ddq_dq.copy(), pd.ddq_dv.copy()
    # the solves' right-hand sides -dtau/dx at each library's own accelerations
    qdd, qdd_pin = db.forward_dynamics(model, q, v, tau, fext), pd.ddq.copy()
    dq, dv, M = db.inverse_dynamics_derivatives(model, q, v, qdd, fext)
    pd = pm.createData()
    pin.computeRNEADerivatives(pm, pd, q, v, qdd_pin, pin_fext(fext))
    M_pin = np.triu(pd.M) + np.triu(pd.M, 1).T
    eye = np.eye(model.nv)
    # through M^-1: within tol of Pinocchio or, where kappa(M) amplifies the last bits beyond
    # it, the conditioning-aware statement of validation.solve_agreement
    for key, ours, ref, rhs, rhs_pin in (
        ("ddq_dq", ddq, ddq_pin, -dq, -pd.dtau_dq),
        ("ddq_dv", ddv, ddv_pin, -dv, -pd.dtau_dv),
        ("Minv", Minv, Minv_pin, eye, eye),
    ):
        errors[key] = relative_error(ours, ref)
        if key == "ddq_dv" and np.abs(ref).max(initial=0.0) < 1e-3 * max(1.0, float(np.abs(v).max(initial=0.0))):
            # a vanishing dqdd/dv (dtau/dv of round-off, above): its scale, 1e-3 |v| (qdd per v, 1/s)
            errors[key] = float(np.abs(ours - ref).max(initial=0.0)) / (
                1e-3 * max(1.0, float(np.abs(v).max(initial=0.0)))
            )
            assert errors[key] <= solve_tol, f"{model.name} {key}: {errors[key]:.1e}"
            continue
        assert_solution_close(f"{model.name} {key}", ours, ref, M, rhs, M_pin, rhs_pin, solve_tol)
    return errors


@cache
def erd_robot_dir() -> str:
    from denoc_bridge.io.robots import _erd_search_dirs

    dirs = _erd_search_dirs()
    assert dirs, "example-robot-data is not installed (pip install '.[test]')"
    return dirs[0]


def _pin_loadable(path: str, floating: bool) -> bool:
    import pinocchio as pin

    try:
        with contextlib.redirect_stderr(io.StringIO()):
            if floating:
                pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
            else:
                pin.buildModelFromUrdf(path)
        return True
    except Exception:
        return False


@cache
def erd_urdfs() -> tuple:
    """Every URDF of example-robot-data, relative to its robots folder."""
    root = erd_robot_dir()
    out = []
    for d, _, files in os.walk(root):
        out += [os.path.relpath(os.path.join(d, f), root) for f in files if f.endswith(".urdf")]
    return tuple(sorted(out))


@cache
def pin_loadable_urdfs() -> tuple:
    """(relative path, floating) for every URDF of example-robot-data that Pinocchio loads."""
    root = erd_robot_dir()
    return tuple((rel, fb) for rel in erd_urdfs() for fb in (False, True) if _pin_loadable(os.path.join(root, rel), fb))


def load_quietly(source, floating_base=False):
    """load_urdf without the PhysicsWarning of real files with round-off inertias."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", db.PhysicsWarning)
        return db.load_urdf(source, floating_base=floating_base)


def load_robot_quietly(name):
    """load_robot without the PhysicsWarning of real files with round-off inertias."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", db.PhysicsWarning)
        return db.load_robot(name)


def mixed_tree(seed, model_seed=None, joint_types=None):
    """The random tree of ten links the derivative tests share: one to three roots, a floating
    base for odd seeds, massless links for every fourth (``model_seed``: the tree's own seed,
    default ``seed``; ``joint_types``: every type by default)."""
    kwargs = {} if joint_types is None else {"joint_types": joint_types}
    return random_model(
        seed=seed if model_seed is None else model_seed,
        n_links=10,
        branching=0.5,
        n_roots=1 + seed % 3,
        floating_base=bool(seed % 2),
        massless=0.3 if seed % 4 == 0 else 0.0,
        **kwargs,
    )


@pytest.fixture(scope="session")
def panda():
    return load_quietly(os.path.join(erd_robot_dir(), "panda_description/urdf/panda.urdf"))


# ----------------------------------------------------------- helpers shared by several test files
BIN = Path(sys.executable).parent / "denoc-bridge"


def denoc_bridge_cmd(*args, cwd, timeout=300):
    """Run the installed ``denoc-bridge`` console script (as a user would) in ``cwd``."""
    if not BIN.exists():
        pytest.skip(f"the denoc-bridge entry point is not installed next to {sys.executable} (pip install -e .)")
    return subprocess.run([str(BIN), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def closed_cut(model, q_ref, kind, link1, link2, tip, rpy, axis):
    """Declare a cut joint of type kind that is closed at q_ref (frame at ``tip`` of link1)."""
    R, p = db.forward_kinematics(model, q_ref)
    R1 = db.spatial.rpy_to_matrix(rpy)
    x = p[link1] + R[link1] @ tip
    Rf = R[link1] @ R1
    if link2 < 0:
        xyz2, rot2, name2 = x, Rf, "world"
    else:
        xyz2, rot2, name2 = R[link2].T @ (x - p[link2]), R[link2].T @ Rf, model.link_names[link2]
    model.add_loop_closure(
        f"cut_{kind}_{link1}",
        kind,
        model.link_names[link1],
        name2,
        xyz1=tip,
        rotation1=R1,
        xyz2=xyz2,
        rotation2=rot2,
        axis=axis,
    )


def looped_tree(seed, floating):
    """A branched tree of every joint type with a weld/spherical/revolute/prismatic cut."""
    types = [JointType.REVOLUTE, JointType.PRISMATIC, JointType.SPHERICAL, JointType.UNIVERSAL, JointType.CONTINUOUS]
    model = random_model(seed, 12, branching=0.3, joint_types=types, floating_base=floating)
    rng = np.random.default_rng(seed)
    q_ref = db.random_configuration(model, rng) if hasattr(db, "random_configuration") else None
    return model, q_ref, rng


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's chromium; skipped when missing, except under CI (then an error)."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        why = "the headless-browser test needs Debian's chromium (apt-get install -y chromium)"
        if os.environ.get("CI"):
            pytest.fail(why + "; CI is set, so this is an error (.ci/run installs it)")
        pytest.skip(why)
    return path


@pytest.fixture
def plot_titles(monkeypatch):
    """The titles of the axes of every figure :mod:`denoc_bridge.viz.plots` saves from now on (the
    figures are closed, nothing is written)."""
    from denoc_bridge.viz import plots

    titles: list[str] = []

    def keep(fig, path, **kwargs):
        titles.extend(a.get_title() for a in fig.axes)
        plots.pyplot().close(fig)
        return path

    monkeypatch.setattr(plots, "save_figure", keep)
    return titles
