"""Closed loops: the four-bar of 004, spatial loops against Pinocchio's constraint dynamics,
the constraint kinematics against finite differences, and the two methods against each other."""

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge import loops
from denoc_bridge.algorithms.configuration import integrate
from denoc_bridge.errors import InputError, ModelError
from denoc_bridge.io.generators import fourbar
from denoc_bridge.multibody.constraints import LoopClosure
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.testing import pin_constraint_dynamics, random_model

S2 = np.sqrt(2.0)


def _fourbar_state(rng):
    t2, w2 = rng.uniform(-1.2, 1.2), rng.normal()
    return (np.array([rng.normal(), t2, -t2, t2]), np.array([rng.normal(), w2, -w2, w2]), rng.normal(size=4))


def test_fourbar_reproduces_004_eq_a_and_E():
    model = fourbar()
    D, N = loops.cut_joint_jacobian(model, np.zeros(4))
    DB = D @ N
    assert DB.shape == (5, 4)
    expected = np.array([[0, 0, -S2, -S2], [0, 0, -S2, -S2], [0, -S2, -S2, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    np.testing.assert_allclose(DB, expected, rtol=0, atol=1e-14, err_msg="D*B of 004 eq. (a)")
    np.testing.assert_allclose(DB, loops.loop_jacobian(model, np.zeros(4)), rtol=0, atol=1e-14)
    assert np.linalg.matrix_rank(DB) == 2
    report = loops.constraint_report(model, np.zeros(4))
    assert report[0]["rows"] == 5 and report[0]["rank"] == 2 and len(report[0]["redundant"]) == 3
    E, dep, ind = loops.velocity_transformation(model, np.zeros(4), independent=[0, 1])
    np.testing.assert_allclose(E, [[1, 0], [0, 1], [0, -1], [0, 1]], rtol=0, atol=1e-14, err_msg="E of 004")
    assert dep.tolist() == [2, 3]


def test_fourbar_structure_holds_at_other_configurations():
    model = fourbar()
    q = np.array([0.3, 0.7, -0.7, 0.7])
    C = loops.loop_jacobian(model, q)
    assert np.abs(C[:, 0]).max() == 0.0  # theta_1 moves the loop rigidly
    assert np.abs(C[3:]).max() < 1e-15  # parallel axes: no rotation rows
    assert np.linalg.matrix_rank(C) == 2
    E, _, _ = loops.velocity_transformation(model, q, independent=[0, 1])
    np.testing.assert_allclose(E, [[1, 0], [0, 1], [0, -1], [0, 1]], rtol=0, atol=1e-13)
    np.testing.assert_allclose(C @ E, 0.0, atol=1e-14)


def test_fourbar_matches_pinocchio_constraint_dynamics():
    model = fourbar()
    pin_fd = pin_constraint_dynamics(model)  # CONTACT_3D: the planar loop's motion
    rng = np.random.default_rng(7)
    for _ in range(5):
        q, v, tau = _fourbar_state(rng)
        a_pin = pin_fd(q, v, tau)
        scale = np.abs(a_pin).max()
        for method in ("lagrange", "partitioning"):
            a = loops.constrained_forward_dynamics(model, q, v, tau, method=method)
            assert np.abs(a - a_pin).max() <= 1e-9 * scale, f"{method}: {a} vs pin {a_pin}"
        assert abs(a[2] + a[1]) <= 1e-12 * scale and abs(a[3] - a[1]) <= 1e-12 * scale  # parallelogram


@pytest.mark.parametrize("kind,n_links", [("spherical", 6), ("weld", 8)])
def test_spatial_loop_matches_pinocchio(kind, n_links):
    model = random_model(3, n_links, branching=0.0, joint_types=[JointType.REVOLUTE])
    rng = np.random.default_rng(5)
    q_ref = rng.uniform(-1, 1, model.nq)
    R, p = db.forward_kinematics(model, q_ref)
    tip = np.array([0.1, 0.05, 0.2])
    model.add_loop_closure(
        "cut", kind, model.link_names[-1], "world", xyz1=tip, xyz2=p[-1] + R[-1] @ tip, rotation2=R[-1]
    )
    pin_fd = pin_constraint_dynamics(model)  # CONTACT_3D (ball) or CONTACT_6D (weld)
    for _ in range(4):
        q = loops.project_configuration(model, q_ref + 0.1 * rng.normal(size=model.nq))
        assert np.abs(loops.loop_residual(model, q)).max() <= 1e-12
        v = loops.project_velocity(model, q, rng.normal(size=model.nv))
        assert np.abs(loops.loop_jacobian(model, q) @ v).max() <= 1e-12
        tau = rng.normal(size=model.nv)
        a_pin = pin_fd(q, v, tau)
        scale = np.abs(a_pin).max()
        for method in ("lagrange", "partitioning"):
            a = loops.constrained_forward_dynamics(model, q, v, tau, method=method)
            assert np.abs(a - a_pin).max() <= 1e-9 * scale, f"{kind} {method}"


@pytest.mark.parametrize("kind", ["revolute", "prismatic", "spherical", "weld"])
def test_constraint_kinematics_against_finite_differences(kind):
    model = random_model(11, 7, branching=0.0, joint_types=[JointType.REVOLUTE, JointType.PRISMATIC])
    rng = np.random.default_rng(2)
    q0 = rng.uniform(-1, 1, model.nq)
    R, p = db.forward_kinematics(model, q0)
    model.add_loop_closure(
        "cut",
        kind,
        model.link_names[-1],
        model.link_names[1],
        xyz1=(0.1, 0.2, 0.0),
        rpy1=(0.3, -0.2, 0.5),
        rotation2=R[1].T @ R[-1] @ db.spatial.rpy_to_matrix((0.3, -0.2, 0.5)),
        xyz2=R[1].T @ (p[-1] + R[-1] @ np.array([0.1, 0.2, 0.0]) - p[1]),
        axis=(0.2, 0.9, -0.3),
    )
    assert np.abs(loops.loop_residual(model, q0)).max() <= 1e-14
    v = rng.normal(size=model.nv)
    h = 1e-5
    phi = lambda t: loops.loop_residual(model, integrate(model, q0, t * v))  # noqa: E731
    dphi = (phi(h) - phi(-h)) / (2 * h)
    C = loops.loop_jacobian(model, q0)
    np.testing.assert_allclose(C @ v, dphi, rtol=0, atol=1e-8, err_msg=f"{kind}: C v against d phi / dt")
    Cv = lambda t: loops.loop_jacobian(model, integrate(model, q0, t * v)) @ v  # noqa: E731
    bias_fd = (Cv(h) - Cv(-h)) / (2 * h)
    np.testing.assert_allclose(
        loops.loop_bias(model, q0, v),
        bias_fd,
        rtol=0,
        atol=1e-6 * max(1, np.abs(bias_fd).max()),
        err_msg=f"{kind}: Cdot qdot against finite differences",
    )


@pytest.mark.parametrize("kind", ["revolute", "prismatic"])
def test_methods_agree_and_satisfy_the_constraint(kind):
    model = random_model(4, 8, branching=0.0, joint_types=[JointType.REVOLUTE])
    rng = np.random.default_rng(9)
    q0 = rng.uniform(-1, 1, model.nq)
    R, p = db.forward_kinematics(model, q0)
    model.add_loop_closure(
        "cut", kind, model.link_names[-1], "world", xyz2=p[-1], rotation2=R[-1], axis=(0.0, 1.0, 0.0)
    )
    for _ in range(3):
        q = loops.project_configuration(model, q0 + 0.05 * rng.normal(size=model.nq))
        v = loops.project_velocity(model, q, rng.normal(size=model.nv))
        tau = rng.normal(size=model.nv)
        aL, lam = loops.constrained_forward_dynamics(model, q, v, tau, return_forces=True)
        aP = loops.constrained_forward_dynamics(model, q, v, tau, method="partitioning")
        scale = np.abs(aL).max()
        assert np.abs(aL - aP).max() <= 1e-9 * scale
        phi, C, bias = loops.loop_kinematics(model, q, v)
        assert np.abs(C @ aL + bias).max() <= 1e-10 * max(1.0, np.abs(bias).max())
        # M a = tau - h + C^T lambda with the dense GIM (004 eq. 14)
        M = db.mass_matrix(model.replace(loops=()), q)
        h = db.nonlinear_effects(model.replace(loops=()), q, v)
        Cr = C[loops.independent_rows(C)]
        np.testing.assert_allclose(M @ aL, tau - h + Cr.T @ lam, rtol=0, atol=1e-10 * np.abs(M @ aL).max())


def test_bad_loop_declarations_name_the_culprit():
    model = fourbar()
    with pytest.raises(ModelError, match="no link or frame named 'nope'"):
        model.add_loop_closure("x", "revolute", "nope", "body1")
    with pytest.raises(ModelError, match="unknown type 'hinge'"):
        model.add_loop_closure("x", "hinge", "body2", "body1")
    with pytest.raises(ModelError, match="axis"):
        model.add_loop_closure("x", "revolute", "body2", "body1", axis=(0, 0, 0))
    with pytest.raises(ModelError, match="same rigid body"):
        model.add_loop_closure("x", "weld", "body2", "body2")
    with pytest.raises(ModelError, match="'R5' is declared twice"):
        model.add_loop_closure("R5", "weld", "body2", "body3")
    with pytest.raises(InputError, match="method must be"):
        loops.constrained_forward_dynamics(model, np.zeros(4), np.zeros(4), np.zeros(4), method="qr")
    with pytest.raises(InputError, match="no loop closures"):
        loops.loop_residual(model.replace(loops=()), np.zeros(4))


def test_unclosable_loop_names_the_cut_joint():
    model = fourbar()
    model.add_loop_closure("far", "spherical", "body2", "world", xyz2=(50.0, 0.0, 0.0))
    with pytest.raises(InputError, match="cannot close loop 'far'"):
        loops.project_configuration(model, np.zeros(4))


def test_urdf_loop_joint_file_is_the_generator():
    from pathlib import Path

    from denoc_bridge.io.generators import fourbar_urdf

    path = Path(__file__).resolve().parents[2] / "urdf" / "fourbar.urdf"
    assert path.read_text() == fourbar_urdf(), "urdf/fourbar.urdf is stale: regenerate it from fourbar_urdf()"
    model = db.load_urdf(path)
    assert [lc.name for lc in model.loops] == ["R5"] and not model.warnings
    rng = np.random.default_rng(3)
    q, v, tau = _fourbar_state(rng)
    np.testing.assert_allclose(
        db.forward_dynamics(model, q, v, tau), db.forward_dynamics(fourbar(), q, v, tau), rtol=1e-12, atol=1e-12
    )


@pytest.mark.parametrize(
    "loop_xml,match",
    [
        ('<loop_joint type="weld"><link1 link="body4"/><link2 link="body1"/></loop_joint>', "has no name"),
        ('<loop_joint name="L" type="weld"><link2 link="body1"/></loop_joint>', "needs <link1"),
        (
            '<loop_joint name="L" type="weld"><link1 link="body4" xyz="1 nan 0"/><link2 link="body1"/></loop_joint>',
            "3 finite numbers",
        ),
        ('<loop_joint name="L" type="gear"><link1 link="body4"/><link2 link="body1"/></loop_joint>', "unknown type"),
        ('<loop_joint name="L" type="weld"><link1 link="ghost"/><link2 link="body1"/></loop_joint>', "'ghost'"),
    ],
)
def test_bad_loop_joint_elements(loop_xml, match):
    from denoc_bridge.errors import URDFError
    from denoc_bridge.io.generators import fourbar_urdf

    text = fourbar_urdf().replace("</robot>", loop_xml + "\n</robot>")
    with pytest.raises(URDFError, match=match):
        db.load_urdf(text)


def test_forward_dynamics_with_loops_is_constrained():
    model = fourbar()
    rng = np.random.default_rng(4)
    q, v, tau = _fourbar_state(rng)
    a = db.forward_dynamics(model, q, v, tau)
    np.testing.assert_allclose(a, loops.constrained_forward_dynamics(model, q, v, tau), rtol=0, atol=0)
    np.testing.assert_allclose(
        db.forward_dynamics(model, q, v, tau, loop_method="partitioning"), a, rtol=1e-12, atol=1e-12
    )
    assert np.abs(a - db.forward_dynamics(model.replace(loops=()), q, v, tau)).max() > 1e-3
    batch = db.forward_dynamics(model, np.stack([q, q]), np.stack([v, v]), np.stack([tau, tau]))
    np.testing.assert_array_equal(batch[1], a)


def test_batches_with_loops_take_every_form_of_f_ext():
    """A batch on a model with loops takes f_ext as the tree's batches do: shared (an (n_links, 6)
    array or a mapping) or one (n_links, 6) array per state; each row equals its single call."""
    model = fourbar()
    rng = np.random.default_rng(5)
    states = [_fourbar_state(rng) for _ in range(3)]
    Q, V, TAU = (np.stack(x) for x in zip(*states))
    F = rng.standard_normal((model.n_links, 6))
    FB = rng.standard_normal((3, model.n_links, 6))
    name = model.link_names[1]
    for label, f_batch, f_row in [
        ("shared array", F, lambda i: F),
        ("mapping", {name: F[1]}, lambda i: {name: F[1]}),
        ("per state", FB, lambda i: FB[i]),
    ]:
        acc = db.forward_dynamics(model, Q, V, TAU, f_batch)
        tau = db.inverse_dynamics(model, Q, V, acc, f_batch)
        for i in range(3):
            np.testing.assert_array_equal(acc[i], db.forward_dynamics(model, Q[i], V[i], TAU[i], f_row(i)), label)
            np.testing.assert_array_equal(tau[i], db.inverse_dynamics(model, Q[i], V[i], acc[i], f_row(i)), label)
    assert np.abs(db.forward_dynamics(model, Q, V, TAU, F) - db.forward_dynamics(model, Q, V, TAU)).max() > 1e-3
    with pytest.raises(InputError, match=rf"f_ext must have shape \({model.n_links}, 6\) or \(3, {model.n_links}, 6\)"):
        db.forward_dynamics(model, Q, V, TAU, FB[:2])


@pytest.mark.slow
def test_cli_info_lists_the_loop(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "urdf" / "fourbar.urdf"
    out = subprocess.run(
        [sys.executable, "-m", "denoc_bridge.cli", "info", str(path)], capture_output=True, text=True, check=True
    ).stdout
    assert "loop closure 'R5': revolute cut joint between 'body4' and 'body1' (5 constraint rows" in out


def test_a_loop_closure_is_checked_on_construction_and_read_only():
    """The compiled loops pack the closures once per model: an array changed in place later
    would silently not count (found by a review), so the arrays are read-only copies, checked
    when the LoopClosure is built (not only by make_loop_closure)."""
    lc = db.generators.fourbar().loops[0]
    for arr in (lc.rotation1, lc.translation1, lc.rotation2, lc.translation2, lc.axis):
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = 1.0
    good = dict(
        name="cut", type="revolute", link1=0, link2=1, rotation1=np.eye(3), translation1=np.zeros(3),
        rotation2=np.eye(3), translation2=np.zeros(3),
    )  # fmt: skip
    mine = np.zeros(3)
    assert not np.shares_memory(LoopClosure(**{**good, "translation1": mine}).translation1, mine)
    for change, match in (
        (dict(type="hinge"), r"loop closure 'cut': unknown type 'hinge'"),
        (dict(translation1=[0.0, np.nan, 0.0]), r"loop closure 'cut': translation1 must be \(3,\) finite numbers"),
        (dict(rotation2=np.ones((3, 3))), r"loop closure 'cut': rotation2 is not a rotation matrix"),
        (dict(axis=[0.0, 0.0, 2.0]), r"loop closure 'cut': axis must be a unit vector"),
    ):
        with pytest.raises(db.ModelError, match=match):
            LoopClosure(**{**good, **change})
    frame = db.load_robot("panda").frames[0]
    with pytest.raises(ValueError, match="read-only"):
        frame.translation[0] = 1.0
