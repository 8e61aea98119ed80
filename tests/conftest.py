"""Shared fixtures and assertions of the test suite."""

from __future__ import annotations

import contextlib
import io
import os
import warnings
from functools import cache

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st

import denoc_bridge as db
from denoc_bridge.validation import relative_error, solve_agreement

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


@pytest.fixture(scope="session")
def panda():
    return load_quietly(os.path.join(erd_robot_dir(), "panda_description/urdf/panda.urdf"))
