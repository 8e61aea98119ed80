"""The papers' models: chains, the rope (000 §4) and the PUMA 560 (003 Table 2)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

import denoc_bridge as db
from denoc_bridge.io.generators import PUMA560_DH, chain, chain_urdf, puma560, puma560_urdf, rope, rope_urdf

URDF = Path(__file__).resolve().parents[2] / "urdf"


@pytest.mark.parametrize("name, text", [("rope.urdf", rope_urdf), ("puma560.urdf", puma560_urdf)])
def test_urdf_files_are_the_generators_output(name, text):
    assert (URDF / name).read_text() == text(), f"urdf/{name} is stale: regenerate it from the generator"


@pytest.mark.parametrize(
    "make, text",
    [
        (rope, rope_urdf),
        (puma560, puma560_urdf),
        (lambda: chain(7, "planar", damping=0.1), lambda: chain_urdf(7, damping=0.1)),
    ],
)
def test_urdf_twins_have_the_same_dynamics(make, text):
    model = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", db.PhysicsWarning)
        loaded = db.load_urdf(text())
    assert loaded.joint_names == model.joint_names and np.array_equal(loaded.damping, model.damping)
    rng = np.random.default_rng(0)
    for _ in range(3):
        q = db.random_configuration(model, rng)
        v, a = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
        tau = db.inverse_dynamics(model, q, v, a)
        assert np.abs(db.inverse_dynamics(loaded, q, v, a) - tau).max() <= 1e-12 * np.abs(tau).max()
        assert np.abs(db.mass_matrix(loaded, q) - db.mass_matrix(model, q)).max() < 1e-15


def test_the_rope_of_000():
    m = rope()
    assert (m.nv, m.n_links, m.n_modules) == (100, 100, 1)
    assert np.isclose(np.sum(m.mass), 50 * 0.004) and np.count_nonzero(m.mass) == 50
    R, p = db.forward_kinematics(m, np.zeros(m.nq))
    assert np.allclose(p[-1], [2.45, 0.0, 0.0]) and np.allclose(R[-1], np.eye(3))  # 2.5 m with the last rod
    assert [m.joint_axis[k].tolist() for k in (0, 1)] == [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    pm = db.to_pinocchio(m)
    q = np.random.default_rng(1).uniform(-0.5, 0.5, 100)
    a = db.forward_dynamics(m, q, np.ones(100), np.zeros(100))
    assert np.abs(a - pin.aba(pm, pm.createData(), q, np.ones(100), np.zeros(100))).max() < 1e-9 * np.abs(a).max()


def test_chains():
    planar, spatial = chain(10, "planar"), chain(10, "spatial", length=0.1, mass=1.0, radius=0.01)
    assert (planar.nv, spatial.nv) == (10, 20)
    I = spatial.inertia[1]  # the first cylinder
    assert np.allclose(np.diag(I), [0.5e-4, (3e-4 + 1e-2) / 12, (3e-4 + 1e-2) / 12])
    for bad, match in (
        ({"n": 0}, "n must be at least 1"),
        ({"kind": "helical"}, "kind must be 'planar'"),
        ({"mass": -1.0}, "mass must be a positive number"),
    ):
        args = {"n": 3, "kind": "planar", **bad}
        with pytest.raises(db.InputError, match=match):
            chain(args.pop("n"), args.pop("kind"), **args)
    sprung = chain(4, stiffness=2.0, damping=0.3)
    assert np.all(sprung.stiffness == 2.0) and np.all(sprung.damping == 0.3)


def test_puma560_is_the_dh_table():
    """Link frames from the DH rows of 003 Table 2: joint i + 1 at (a_i, 0, b_i), turned by alpha_i."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the intended hub inertias do not warn
        m = puma560()
    assert any("violate the triangle inequality" in w for w in m.warnings)
    rng = np.random.default_rng(2)
    q = rng.uniform(-2, 2, 6)
    T = np.eye(4)
    frames = []
    for i, (a, b, alpha, _mass, _hub) in enumerate(PUMA560_DH):
        c, s = np.cos(q[i]), np.sin(q[i])
        T = T @ np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])  # link i frame
        frames.append(T.copy())
        ca, sa = np.cos(alpha), np.sin(alpha)
        T = T @ np.array([[1, 0, 0, a], [0, ca, -sa, 0], [0, sa, ca, b], [0, 0, 0, 1.0]])  # to joint i + 1
    R, p = db.forward_kinematics(m, q)
    for i, F in enumerate(frames):
        assert np.allclose(R[i], F[:3, :3], atol=1e-14) and np.allclose(p[i], F[:3, 3], atol=1e-14)
    assert np.allclose(m.mass, [10.521, 15.7612, 8.767, 0, 0, 0])
    assert np.allclose(m.com[1], [0.432**2 / 2 / 0.581, 0.0, (0.149**2 / 2 + 0.432 * 0.149) / 0.581])
    assert [m.inertia[k][2, 2] for k in (3, 4, 5)] == [0.181, 0.0735, 0.0141]


def test_urdf_writer_elements_load_back_exactly():
    """The elements of io/urdf_writer (every generated robot's URDF) read back to the same numbers:
    the inertial frame, a prismatic joint with its limits and damping, a mimic joint."""
    from denoc_bridge.io.urdf_writer import NO_LIMIT, joint_xml, link_xml, number

    rng = np.random.default_rng(7)
    com, inertia = rng.standard_normal(3), np.diag(rng.uniform(0.1, 1.0, 3))
    axis = np.array([0.6, 0.0, 0.8])
    text = (
        '<?xml version="1.0"?>\n<robot name="written">\n  <link name="base"/>\n'
        + link_xml("a", 1.0 / 3.0, com, inertia)
        + link_xml("b", 0.7, (0.0, 0.1, 0.2), inertia)
        + link_xml("c", 0.5, (0.1, 0.0, 0.0), inertia)
        + joint_xml("slide", "base", "a", kind="prismatic", xyz=(0.1, 0.2, 0.3), axis=axis, damping=0.25)
        + joint_xml("hinge", "a", "b", rpy=(0.3, -0.2, 0.1), lower=-1.5, upper=2.5)
        + joint_xml("hinge2", "b", "c", xyz=(0.2, 0.0, 0.0), lower=-1.5, upper=2.5, mimic="hinge")
        + "</robot>\n"
    )
    assert number(1.0 / 3.0) == repr(1.0 / 3.0) and float(number(0.1)) == 0.1
    model = db.load_urdf(text)
    assert model.mass[0] == 1.0 / 3.0 and np.array_equal(model.com[0], com)
    np.testing.assert_array_equal(model.inertia[0], inertia)
    assert model.lower_limit[0] == -NO_LIMIT and model.upper_limit[0] == NO_LIMIT and model.damping[0] == 0.25
    assert (model.lower_limit[1], model.upper_limit[1]) == (-1.5, 2.5)
    np.testing.assert_allclose(model.joint_axis[0], axis, rtol=0, atol=1e-15)
    mimic = db.load_urdf(text, mimic=True)
    assert mimic.nv == 2 and mimic.tree.nv == 3
