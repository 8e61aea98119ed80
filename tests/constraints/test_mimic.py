"""URDF <mimic> joints as joint-space constraints: load_urdf(path, mimic=True) against
pin.buildModelFromUrdf(path, mimic=True) (rnea, crba), forward dynamics against the reduced
equations (Pinocchio 4.1's aba refuses mimic models), errors, and the unchanged default."""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_close, erd_robot_dir

import denoc_bridge as db
from denoc_bridge.cli import main
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.simulation.mimic import run_stages
from denoc_bridge.testing import pin_mimic_rk4
from denoc_bridge.validation import relative_error

GRIPPER = str(Path(__file__).resolve().parents[2] / "urdf" / "mimic_gripper.urdf")
TIGHT = 1e-12


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore", db.PhysicsWarning)
        return fn(*args, **kwargs)


def pin_mimic(source, floating=False, xml=False):
    build = pin.buildModelFromXML if xml else pin.buildModelFromUrdf
    if floating:
        return quiet(build, source, pin.JointModelFreeFlyer(), mimic=True)
    return quiet(build, source, mimic=True)


def pin_forces(model, f_ext):
    return [pin.Force.Zero()] + [pin.Force(f[:3], f[3:]) for f in f_ext]


def states(model, seed, n=4):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        yield (
            db.random_configuration(model, rng),
            rng.standard_normal(model.nv),
            rng.standard_normal(model.nv),
            rng.standard_normal((model.n_links, 6)),
        )


def L(name, mass=0.3):
    return (
        f'<link name="{name}"><inertial><origin xyz="0.05 0.01 0.02" rpy="0.1 0 0"/><mass value="{mass}"/>'
        f'<inertia ixx="2e-3" ixy="1e-4" ixz="0" iyy="3e-3" iyz="0" izz="4e-3"/></inertial></link>'
    )


def J(name, parent, child, jtype="revolute", mimic=None, axis="0 0 1"):
    lim = '<limit lower="-2" upper="2" effort="1" velocity="1"/>' if jtype in ("revolute", "prismatic") else ""
    ax = f'<axis xyz="{axis}"/>' if jtype in ("revolute", "prismatic", "continuous") else ""
    mim = f'<mimic joint="{mimic[0]}" multiplier="{mimic[1]}" offset="{mimic[2]}"/>' if mimic else ""
    return (
        f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/><child link="{child}"/>'
        f'<origin xyz="0.1 0 0.05" rpy="0 0.2 0.1"/>{ax}{lim}{mim}</joint>'
    )


def R(*parts):
    return '<robot name="r"><link name="w"/>' + "".join(parts) + "</robot>"


# ------------------------------------------------------------------ layout and coordinates
def test_layout_neutral_limits_and_joint_indices_are_pinocchios():
    mm, pm = db.load_urdf(GRIPPER, mimic=True), pin_mimic(GRIPPER)
    assert isinstance(mm, db.MimicModel) and (mm.nq, mm.nv) == (pm.nq, pm.nv) == (5, 4)
    assert (mm.tree.nq, mm.tree.nv) == (12, 10) and mm.n_constraints == 6
    assert mm.joint_names == tuple(pm.names[1:])
    for k in range(mm.n_links):
        j = pm.joints[k + 1]
        assert (mm.idx_q[k], mm.idx_v[k], mm.nq_joint[k], mm.nv_joint[k]) == (j.idx_q, j.idx_v, j.nq, j.nv)
        if j.shortname() == "JointModelMimic":
            r = {m.joint: m for m in mm.mimic}[mm.joint_names[k]]
            assert (j.extract().scaling, j.extract().offset) == (r.multiplier, r.offset)
    assert np.array_equal(db.neutral_configuration(mm), pin.neutral(pm))
    bounded = np.isfinite(mm.lower_limit)
    assert np.array_equal(mm.lower_limit[bounded], pm.lowerPositionLimit[bounded])


def test_expand_satisfies_the_relations_and_the_coupling_matrix():
    mm = db.load_urdf(GRIPPER, mimic=True)
    tree, G, K = mm.tree, mm.coupling_matrix(), mm.constraint_matrix()
    assert G.shape == (10, 4) and K.shape == (6, 10) and np.abs(K @ G).max() == 0.0
    q, v, a, _ = next(states(mm, 0))
    qf, vf, af = mm.expand(q, v, a)
    assert np.array_equal(vf, G @ v) and np.array_equal(af, G @ a)
    angle = {}
    for k in range(tree.n_links):
        i = tree.idx_q[k]
        angle[tree.joint_names[k]] = np.arctan2(qf[i + 1], qf[i]) if tree.nq_joint[k] == 2 else qf[i]
    for r in mm.mimic:
        expected = r.multiplier * angle[r.mimicked] + r.offset
        assert abs(np.angle(np.exp(1j * (angle[r.joint] - expected)))) < 1e-14, r
    assert np.array_equal(mm.reduce_configuration(qf), q) and np.array_equal(mm.reduce_velocity(vf), v)
    assert np.allclose(mm.reduce_forces(np.arange(10.0)), G.T @ np.arange(10.0), rtol=0, atol=1e-15)
    assert mm.expand(q).shape == (12,) and len(mm.expand(q, v)) == 2


def test_integrate_difference_random_match_pinocchio():
    mm, pm = db.load_urdf(GRIPPER, mimic=True), pin_mimic(GRIPPER)
    for q, v, _, _ in states(mm, 1):
        assert_close("integrate", db.integrate(mm, q, v), pin.integrate(pm, q, v), TIGHT)
        q1 = db.integrate(mm, q, v)
        assert_close("difference", db.difference(mm, q, q1), pin.difference(pm, q, q1), 1e-11)
        assert np.all((q[:3] >= mm.lower_limit[:3]) & (q[:3] <= mm.upper_limit[:3]))


# ------------------------------------------------------------------ dynamics against Pinocchio
@pytest.mark.parametrize("floating", [False, True])
def test_rnea_and_crba_match_pinocchio_mimic_model(floating):
    mm, pm = db.load_urdf(GRIPPER, floating_base=floating, mimic=True), pin_mimic(GRIPPER, floating)
    pd = pm.createData()
    for q, v, a, f in states(mm, 2):
        assert_close("rnea", db.inverse_dynamics(mm, q, v, a), pin.rnea(pm, pd, q, v, a), TIGHT)
        assert_close(
            "rnea fext", db.inverse_dynamics(mm, q, v, a, f), pin.rnea(pm, pd, q, v, a, pin_forces(mm, f)), TIGHT
        )
        assert_close("crba", db.mass_matrix(mm, q), pin.crba(pm, pd, q), TIGHT)
        assert_close("nle", db.nonlinear_effects(mm, q, v), pin.nonLinearEffects(pm, pd, q, v), TIGHT)
        assert_close("gravity", db.gravity_torques(mm, q), pin.computeGeneralizedGravity(pm, pd, q), TIGHT)
        G = mm.coupling_matrix()
        assert_close("G^T M G", db.mass_matrix(mm, q), G.T @ db.mass_matrix(mm.tree, mm.expand(q)) @ G, TIGHT)


@pytest.mark.parametrize("floating", [False, True])
def test_forward_dynamics_solves_the_reduced_equations(floating):
    mm, pm = db.load_urdf(GRIPPER, floating_base=floating, mimic=True), pin_mimic(GRIPPER, floating)
    pd = pm.createData()
    with pytest.raises(Exception, match="Mimic"):
        pin.aba(pm, pd, pin.neutral(pm), np.zeros(pm.nv), np.zeros(pm.nv))
    for q, v, a, f in states(mm, 3):
        tau = db.inverse_dynamics(mm, q, v, a, f)
        M, h = pin.crba(pm, pd, q), pin.rnea(pm, pd, q, v, np.zeros(mm.nv), pin_forces(mm, f))
        for method in ("lagrange", "dense"):
            acc = db.mimic.forward_dynamics(mm, q, v, tau, f, method=method)
            assert relative_error(M @ acc + h, tau) <= TIGHT, method  # Pinocchio's M_r a + h_r = tau
            assert_close(f"{method}: FD(ID(a))", acc, a, 1e-10)
            assert_close(f"{method}: solve(crba, tau - h)", acc, np.linalg.solve(M, tau - h), 1e-10)
        assert_close("ID(FD(tau))", db.inverse_dynamics(mm, q, v, db.forward_dynamics(mm, q, v, tau, f), f), tau, TIGHT)
        Minv = db.inverse_mass_matrix(mm, q)
        assert_close("inverse GIM", Minv, np.linalg.inv(M), 1e-10)
        assert relative_error(Minv @ M, np.eye(mm.nv)) <= 1e-12


def test_batches_equal_single_states():
    mm = db.load_urdf(GRIPPER, floating_base=True, mimic=True)
    Q, V, A, _ = (np.array(x) for x in zip(*states(mm, 4, n=5)))
    tau = db.inverse_dynamics(mm, Q, V, A)
    assert tau.shape == (5, mm.nv)
    acc = db.forward_dynamics(mm, Q, V, tau)
    dense = db.mimic.forward_dynamics(mm, Q, V, tau, method="dense")
    for b in range(5):
        assert_close("ID batch", tau[b], db.inverse_dynamics(mm, Q[b], V[b], A[b]), TIGHT)
        assert_close("FD batch", acc[b], db.forward_dynamics(mm, Q[b], V[b], tau[b]), TIGHT)
        assert_close("FD dense batch", dense[b], acc[b], 1e-10)


def test_energies_and_kinematics_use_the_expanded_state():
    mm = db.load_urdf(GRIPPER, mimic=True)
    q, v, _, _ = next(states(mm, 5))
    T, V = db.energies(mm, q, v)
    assert abs(T - 0.5 * v @ db.mass_matrix(mm, q) @ v) <= 1e-14 * abs(T)
    assert V == db.energies(mm.tree, *mm.expand(q, v))[1]
    R, p = db.forward_kinematics(mm, q)
    assert np.array_equal(p, db.forward_kinematics(mm.tree, mm.expand(q))[1])


def test_massless_mimic_leaf_falls_back_to_the_dense_solve():
    xml = R(L("a"), L("b", 0.0), J("j1", "w", "a", "revolute"), J("j2", "a", "b", mimic=("j1", 2.0, 0.1)))
    xml = xml.replace(
        '<mass value="0.0"/><inertia ixx="2e-3" ixy="1e-4" ixz="0" iyy="3e-3" iyz="0" izz="4e-3"/>',
        '<mass value="0.0"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/>',
    )
    mm, pm = db.load_urdf(xml, mimic=True), pin_mimic(xml, xml=True)
    pd = pm.createData()
    q, v = np.array([0.3]), np.array([-0.7])
    with pytest.raises(db.SingularInertiaError):
        db.forward_dynamics(mm.tree, *mm.expand(q, v), np.zeros(2))
    acc = db.forward_dynamics(mm, q, v, np.array([0.2]))
    assert_close("FD", acc, np.linalg.solve(pin.crba(pm, pd, q), 0.2 - pin.nonLinearEffects(pm, pd, q, v)), 1e-12)


# ------------------------------------------------------------------ example-robot-data
@pytest.mark.parametrize(
    "rel, floating",
    [
        ("panda_description/urdf/panda.urdf", False),
        ("baxter_description/urdf/baxter.urdf", False),
        ("pr2_description/urdf/pr2.urdf", True),
        ("tiago_pro_description/robots/tiago_pro.urdf", True),
    ],
)
def test_example_robot_data_robots_match_pinocchio(rel, floating):
    path = os.path.join(erd_robot_dir(), rel)
    mm, pm = quiet(db.load_urdf, path, floating_base=floating, mimic=True), pin_mimic(path, floating)
    assert (mm.nq, mm.nv) == (pm.nq, pm.nv) and mm.n_constraints > 0
    pd = pm.createData()
    for q, v, a, _ in states(mm, 6, n=3):
        tau = db.inverse_dynamics(mm, q, v, a)
        assert_close("rnea", tau, pin.rnea(pm, pd, q, v, a), TIGHT)
        M = db.mass_matrix(mm, q)
        assert_close("crba", M, pin.crba(pm, pd, q), TIGHT)
        acc = db.forward_dynamics(mm, q, v, tau)
        assert relative_error(pin.crba(pm, pd, q) @ acc + pin.nonLinearEffects(pm, pd, q, v), tau) <= TIGHT
        assert_close("FD(ID(a))", acc, a, 1e-9)


def test_robots_pinocchio_refuses_for_joint_order_load_here():
    """romeo.urdf and talos_full_v2.urdf name mimicked joints that Pinocchio's parser meets after
    their mimic joints; checked against G^T (Pinocchio's tree model) G."""
    for rel in ("romeo_description/urdf/romeo.urdf", "talos_data/robots/talos_full_v2.urdf"):
        path = os.path.join(erd_robot_dir(), rel)
        with pytest.raises(ValueError, match="not in the kinematic tree"):
            pin_mimic(path, True)
        mm = quiet(db.load_urdf, path, floating_base=True, mimic=True)
        pf = quiet(pin.buildModelFromUrdf, path, pin.JointModelFreeFlyer())
        pd, G = pf.createData(), mm.coupling_matrix()
        for q, v, a, _ in states(mm, 7, n=2):
            qf, vf, af = mm.expand(q, v, a)
            assert_close("G^T rnea", db.inverse_dynamics(mm, q, v, a), G.T @ pin.rnea(pf, pd, qf, vf, af), TIGHT)
            M = G.T @ pin.crba(pf, pd, qf) @ G
            assert_close("G^T crba G", db.mass_matrix(mm, q), M, TIGHT)
            if "romeo" in rel:  # its hands are massless: the reduced GIM is singular
                with pytest.raises(db.SingularInertiaError, match="LHand"):
                    db.forward_dynamics(mm, q, v, a)
                continue
            tau = db.inverse_dynamics(mm, q, v, a)
            acc = db.forward_dynamics(mm, q, v, tau)
            assert relative_error(M @ acc + G.T @ pin.nonLinearEffects(pf, pd, qf, vf), tau) <= TIGHT


@pytest.mark.parametrize(
    "case, joints",
    [
        # a mimic joint whose link has two child joints: Pinocchio 4.1's crba leaves out the
        # coupling of the mimicked joint j1 with one of them (0.44 here, on a fresh Data)
        (
            "two children below a mimic joint",
            lambda: [
                J("j1", "w", "a"),
                J("j2", "w", "b", mimic=("j1", -1.5, 0.1)),
                J("j3", "b", "c"),
                J("j4", "b", "d"),
            ],
        ),
        # a joint below a mimic joint that is a child of its mimicked joint: a second crba with
        # the same Data adds onto the off-diagonal (the first call is right)
        (
            "a joint below a mimic child of its master",
            lambda: [J("j1", "w", "a"), J("j2", "a", "b", mimic=("j1", -1.0, 0.0)), J("j3", "b", "c")],
        ),
    ],
)
def test_validate_takes_the_mimic_gim_from_pinocchios_rnea(case, joints, tmp_path, capsys):
    """``validate --mimic`` compares the GIM with the columns of Pinocchio's rnea (and forward
    dynamics and the inverse GIM with it), not with its crba: on these trees Pinocchio 4.1's
    crba of the mimic model is wrong, and ours equals ``G^T crba_tree G`` and the rnea columns."""
    from denoc_bridge.validation import compare_with_pinocchio, pin_mimic_mass_matrix

    text = R(*(L(n) for n in "abcd"[: len(joints())]), *joints())
    mm, pm = db.load_urdf(text, mimic=True), pin_mimic(text, xml=True)
    pt = quiet(pin.buildModelFromXML, text)
    G = mm.coupling_matrix()
    for q, _, _, _ in states(mm, 11, n=3):
        M_tree = pin.crba(pt, pt.createData(), mm.expand(q))
        assert_close(f"{case}: G^T crba_tree G", db.mass_matrix(mm, q), G.T @ M_tree @ G, TIGHT)
        assert_close(f"{case}: rnea columns", pin_mimic_mass_matrix(pm, q), G.T @ M_tree @ G, TIGHT)
    report = compare_with_pinocchio(mm, pm, samples=3, seed=4)
    assert report.passed, report.table()
    path = tmp_path / "mimic_tree.urdf"
    path.write_text(text)
    assert main(["validate", str(path), "--mimic", "--samples", "3"]) == 0, capsys.readouterr().out
    assert "all checks passed" in capsys.readouterr().out


def test_to_pinocchio_builds_the_mimic_model():
    mm, ref = db.load_urdf(GRIPPER, floating_base=True, mimic=True), pin_mimic(GRIPPER, True)
    pm = db.to_pinocchio(mm)
    assert (pm.nq, pm.nv) == (ref.nq, ref.nv) and list(pm.names) == list(ref.names)
    pd, rd = pm.createData(), ref.createData()
    for q, v, a, _ in states(mm, 8, n=2):
        assert_close("rnea", pin.rnea(pm, pd, q, v, a), pin.rnea(ref, rd, q, v, a), TIGHT)
        assert_close("crba", pin.crba(pm, pd, q), pin.crba(ref, rd, q), TIGHT)
    with pytest.raises(db.ModelError, match="mimic joint"):
        db.from_pinocchio(ref)
    late = R(L("a"), L("b"), J("j1", "w", "a", mimic=("j2", 2.0, 0.0)), J("j2", "a", "b"))
    with pytest.raises(db.ModelError, match="comes before its mimicked joint 'j2'"):
        db.to_pinocchio(db.load_urdf(late, mimic=True))


# ------------------------------------------------------------------ defaults and errors
def test_default_is_unchanged_mimic_joints_independent():
    model, pm = db.load_urdf(GRIPPER), quiet(pin.buildModelFromUrdf, GRIPPER)
    assert type(model) is db.Model and (model.nq, model.nv) == (pm.nq, pm.nv) == (12, 10)
    assert len(model.mimic) == 6 and db.mimic.MimicModel(model).nv == 4
    pd = pm.createData()
    q, v, a, _ = next(states(model, 9))
    assert_close("rnea", db.inverse_dynamics(model, q, v, a), pin.rnea(pm, pd, q, v, a), TIGHT)
    assert_close("aba", db.forward_dynamics(model, q, v, a), pin.aba(pm, pd, q, v, a), 1e-10)


def test_multiplier_zero_stays_zero_and_defaults_are_one_and_zero():
    xml = R(
        L("a"),
        L("b"),
        L("c"),
        J("j1", "w", "a"),
        J("j2", "a", "b", mimic=("j1", 0.0, 0.5)),
        J("j3", "a", "c").replace("</joint>", '<mimic joint="j1"/></joint>'),
    )
    mm, pm = db.load_urdf(xml, mimic=True), pin_mimic(xml, xml=True)
    assert [(r.multiplier, r.offset) for r in mm.mimic] == [(0.0, 0.5), (1.0, 0.0)]
    assert [(pm.joints[i].extract().scaling, pm.joints[i].extract().offset) for i in (2, 3)] == [(0.0, 0.5), (1.0, 0.0)]
    pd, q, v, a = pm.createData(), np.array([0.4]), np.array([1.3]), np.array([-0.2])
    assert_close("rnea", db.inverse_dynamics(mm, q, v, a), pin.rnea(pm, pd, q, v, a), TIGHT)


@pytest.mark.parametrize(
    "parts, joint, message, pin_refuses",
    [
        ((J("j1", "w", "a"), J("j2", "a", "b", mimic=("nope", 2, 0))), "j2", "'nope' is not a joint", True),
        ((J("j1", "w", "a"), J("j2", "a", "b", mimic=("j2", 2, 0))), "j2", "mimics itself", True),
        ((J("j1", "w", "a", "fixed"), J("j2", "a", "b", mimic=("j1", 2, 0))), "j2", "'j1' is a fixed joint", True),
        (
            (J("j1", "w", "a"), J("j2", "a", "b", mimic=("j1", 2, 0)), J("j3", "b", "c", "continuous", ("j2", 3, 0))),
            "j3",
            "both be continuous",  # a chain keeps the rule link by link
            True,
        ),
        ((J("j1", "w", "a", "continuous"), J("j2", "a", "b", mimic=("j1", 2, 0))), "j2", "both be continuous", True),
        (
            (J("j1", "w", "a", "floating"), J("j2", "a", "b", mimic=("j1", 2, 0))),
            "j2",
            "not revolute, continuous",
            True,
        ),
    ],
)
def test_bad_mimic_declarations_name_the_joint(parts, joint, message, pin_refuses):
    xml = R(*[L(n) for n in "abc" if f'child link="{n}"' in "".join(parts)], *parts)
    with pytest.raises(db.URDFError, match=f"mimic joint '{joint}'.*{message}"):
        quiet(db.load_urdf, xml, mimic=True)
    quiet(db.load_urdf, xml)  # without mimic=True: independent joints
    if pin_refuses:
        with pytest.raises(ValueError):
            pin_mimic(xml, xml=True)


#: a chain j4 -> j3 -> j2 -> j1 (a prismatic link in it), a branch j5 -> j2, j6 independent;
#: the link of the mimic joint j2 carries two child joints
CHAIN = R(
    *(L(n) for n in "abcdef"),
    J("j1", "w", "a"),
    J("j2", "a", "b", mimic=("j1", 2.0, 0.1)),
    J("j3", "b", "c", "prismatic", ("j2", -1.5, 0.2), axis="1 0 0"),
    J("j4", "c", "d", mimic=("j3", 0.5, -0.3)),
    J("j5", "b", "e", mimic=("j2", -0.7, 0.05)),
    J("j6", "a", "f", axis="0 1 0"),
)
#: the same relations, each written to the root of its chain
COMPOSED = {"j2": (2.0, 0.1), "j3": (-3.0, 0.05), "j4": (-1.5, -0.275), "j5": (-1.4, -0.02)}


def _flat(xml, relations):
    for joint, (mult, off) in relations.items():
        start = xml.index(f'<joint name="{joint}"')
        end = xml.index("</joint>", start)
        body = xml[start:end]
        mim = body[body.index("<mimic") :]
        xml = xml[:start] + body.replace(mim, f'<mimic joint="j1" multiplier="{mult!r}" offset="{off!r}"/>') + xml[end:]
    return xml


def test_mimic_chains_are_composed_to_their_root_and_match_pinocchio():
    """A chain of <mimic> relations is one relation to its root. Pinocchio 4.1 refuses the
    chained file; it loads the same relations written to the root, and our model of the chain
    equals its mimic model of that file (rnea; the GIM from its rnea columns) and
    G^T (its tree model) G, and forward dynamics solves the reduced equations."""
    mm = db.load_urdf(CHAIN, mimic=True)
    assert [r.joint for r in mm.tree.mimic] == [r.joint for r in mm.mimic] == list(COMPOSED)
    assert [r.mimicked for r in mm.tree.mimic] == ["j1", "j2", "j3", "j2"]  # as declared
    for r in mm.mimic:
        assert r.mimicked == "j1" and (r.multiplier, r.offset) == pytest.approx(COMPOSED[r.joint], rel=1e-14)
    assert (mm.nq, mm.nv, mm.n_constraints) == (2, 2, 4)
    with pytest.raises(ValueError, match="different sizes"):
        pin_mimic(CHAIN, xml=True)
    flat = _flat(CHAIN, COMPOSED)
    pm, pf, ours_flat = pin_mimic(flat, xml=True), pin.buildModelFromXML(CHAIN), db.load_urdf(flat, mimic=True)
    pmd, pfd, G = pm.createData(), pf.createData(), mm.coupling_matrix()
    from denoc_bridge.validation import pin_mimic_mass_matrix

    for q, v, a, f in states(mm, 12):
        qf, vf, af = mm.expand(q, v, a)
        angle = {n: qf[mm.tree.idx_q[k]] for k, n in enumerate(mm.tree.joint_names)}
        for r in mm.tree.mimic:  # each declared link of the chains holds
            assert abs(angle[r.joint] - (r.multiplier * angle[r.mimicked] + r.offset)) < 1e-15, r
        tau = db.inverse_dynamics(mm, q, v, a)
        assert_close("rnea", tau, pin.rnea(pm, pmd, q, v, a), TIGHT)
        assert_close(
            "rnea fext", db.inverse_dynamics(mm, q, v, a, f), pin.rnea(pm, pmd, q, v, a, pin_forces(mm, f)), TIGHT
        )
        assert_close("G^T rnea", tau, G.T @ pin.rnea(pf, pfd, qf, vf, af), TIGHT)
        M = db.mass_matrix(mm, q)
        assert_close("GIM (rnea columns)", M, pin_mimic_mass_matrix(pm, q), TIGHT)
        assert_close("G^T crba G", M, G.T @ pin.crba(pf, pfd, qf) @ G, TIGHT)
        acc = db.forward_dynamics(mm, q, v, tau)
        # the Lagrange solve on the tree: up to 1.2e-12 here (cond(G^T M G) up to 3e4)
        assert relative_error(M @ acc + G.T @ pin.nonLinearEffects(pf, pfd, qf, vf), tau) <= 1e-11
        assert_close("FD(ID(a))", acc, a, 1e-10)
        assert_close("flat expand", ours_flat.expand(q), qf, 1e-15)
        # two Lagrange solves of the same constraints stacked otherwise (the chains, the flat
        # relations): round-off times cond(G^T M G), up to 3e4 here (measured up to 2.3e-13)
        assert_close("flat forward dynamics", db.forward_dynamics(ours_flat, q, v, tau), acc, 1e-12)
    assert_close("to_pinocchio", pin.rnea(db.to_pinocchio(mm), pmd, q, v, a), tau, TIGHT)


def test_a_chain_of_continuous_joints_composes_on_the_angle():
    xml = R(
        *(L(n) for n in "abc"),
        J("c1", "w", "a", "continuous"),
        J("c2", "a", "b", "continuous", ("c1", 2.0, 0.3)),
        J("c3", "b", "c", "continuous", ("c2", -1.0, 0.5)),
    )
    mm = db.load_urdf(xml, mimic=True)
    assert [(r.mimicked, r.multiplier, r.offset) for r in mm.mimic] == [("c1", 2.0, 0.3), ("c1", -2.0, 0.2)]
    for theta in (0.4, 2.9, -3.1):  # 2.9 and -3.1: c2's angle wraps past pi
        qf = mm.expand([np.cos(theta), np.sin(theta)])
        c3 = np.arctan2(qf[5], qf[4])
        assert abs(np.angle(np.exp(1j * (c3 - (-2.0 * theta + 0.2))))) < 1e-14


@pytest.mark.parametrize(
    "relations, cycle",
    [
        ({"j1": ("j2", 1), "j2": ("j3", 2), "j3": ("j1", 0.5)}, "'j1' -> 'j2' -> 'j3' -> 'j1'"),
        ({"j1": ("j2", 1), "j2": ("j3", 2), "j3": ("j2", 0.5)}, "'j2' -> 'j3' -> 'j2'"),  # j1 runs into it
    ],
    ids=["three", "lead-in"],
)
def test_a_mimic_cycle_is_refused_naming_its_joints(relations, cycle):
    joints = [
        J(f"j{i}", "w" if i == 1 else "abc"[i - 2], "abc"[i - 1], mimic=(*relations[f"j{i}"], 0.0)) for i in (1, 2, 3)
    ]
    xml = R(*(L(n) for n in "abc"), *joints)
    with pytest.raises(db.URDFModelError, match=rf"mimic joint 'j1': the mimic relations form a cycle \({cycle}\)"):
        db.load_urdf(xml, mimic=True)
    with pytest.warns(db.PhysicsWarning, match="form a cycle"):
        db.load_urdf(xml)  # kept as records


def test_a_planar_mimic_joint_loads_with_a_warning_as_in_pinocchio():
    # Pinocchio loads it (issue 35: what Pinocchio loads, loads); the relation is ignored, named
    xml = R(L("a"), L("b"), J("j1", "w", "a"), J("j2", "a", "b", "planar", mimic=("j1", 2, 0)))
    with pytest.warns(db.PhysicsWarning, match="j2"):
        db.load_urdf(xml, mimic=True)


def test_mimicked_joint_later_in_the_order_is_accepted_here():
    xml = R(L("a"), L("b"), L("c"), J("j1", "w", "a"), J("ja", "a", "b", mimic=("jz", -1.5, 0.2)), J("jz", "a", "c"))
    with pytest.raises(ValueError, match="not in the kinematic tree"):
        pin_mimic(xml, xml=True)
    mm = db.load_urdf(xml, mimic=True)
    pf = pin.buildModelFromXML(xml)
    pd, G = pf.createData(), mm.coupling_matrix()
    for q, v, a, _ in states(mm, 10, n=2):
        qf, vf, af = mm.expand(q, v, a)
        assert_close("rnea", db.inverse_dynamics(mm, q, v, a), G.T @ pin.rnea(pf, pd, qf, vf, af), TIGHT)


def test_tree_only_functions_say_what_to_do_and_the_model_pickles():
    mm = db.load_urdf(GRIPPER, mimic=True)
    q = db.neutral_configuration(mm)
    with pytest.raises(db.ModelError, match="model.tree"):
        db.udut(mm, q)
    assert not hasattr(mm, "_kt") and mm.link_names == mm.tree.link_names
    with pytest.raises(db.InputError, match=r"shape \(4,\)"):
        db.inverse_dynamics(mm, q, np.zeros(10), np.zeros(4))
    with pytest.raises(db.InputError, match="not finite"):
        db.forward_dynamics(mm, q, np.full(4, np.nan), np.zeros(4))
    mm.gravity = (0.0, 0.0, -1.62)
    assert np.array_equal(mm.tree.gravity, [0.0, 0.0, -1.62])
    again = pickle.loads(pickle.dumps(mm))
    assert_close(
        "pickled",
        db.inverse_dynamics(again, q, np.ones(4), np.ones(4)),
        db.inverse_dynamics(mm, q, np.ones(4), np.ones(4)),
        0.0,
    )


def test_cli_info_reports_mimic_constraints(capsys):
    assert main(["info", GRIPPER, "--mimic"]) == 0
    out = capsys.readouterr().out
    assert "nq = 5, nv = 4" in out and "6 <mimic> joints as constraints" in out
    assert "mimic: -1 * b_finger_l + 0.1" in out
    assert main(["info", GRIPPER]) == 0
    out = capsys.readouterr().out
    assert "nq = 12, nv = 10" in out and "treated as independent joints" in out


# ------------------------------------------------------------------ simulation
def _pin_mimic_rk4(pm, q, v, dt, steps, tau_fn, fext, damping_r):
    return pin_mimic_rk4(pm, q, v, dt, steps, tau_fn, fext, damping_r)


@pytest.mark.parametrize("dynamics", ["recursive", "cholesky"])
def test_simulate_a_mimic_model_is_rk4_on_pinocchios_mimic_model(dynamics):
    """simulate(MimicModel) with a controller, external wrenches and the tree's joint dampers
    (mimic joints' too, through their multipliers) against a Python RK4 loop on
    pin.buildModelFromUrdf(mimic=True); both dynamics paths (O(n) Lagrange form and the dense
    G^T M G Cholesky)."""
    rng = np.random.default_rng(41)
    tree = db.load_urdf(GRIPPER).replace(damping=rng.uniform(0.0, 0.02, 10))
    mm, pm = db.MimicModel(tree), pin_mimic(GRIPPER)
    G = mm.coupling_matrix()
    q0 = db.random_configuration(mm, rng)
    v0 = rng.standard_normal(mm.nv)
    fext = 0.1 * rng.standard_normal((mm.n_links, 6))
    gains = rng.uniform(1e-4, 1e-3, mm.nv)  # explicit RK4: gains / inertia * dt < 2.8

    def tau(t, q, v):
        return -gains * v + 0.05 * np.sin(3 * t)

    traj = db.simulate(mm, q0, v0, 0.2, 1e-3, tau=tau, f_ext=fext, dynamics=dynamics, limits=False)
    q_ref, v_ref = _pin_mimic_rk4(pm, q0.copy(), v0.copy(), 1e-3, 200, tau, fext, G.T @ np.diag(tree.damping) @ G)
    assert traj.status == "completed" and traj.q.shape == (201, mm.nq) and traj.n_evaluations == 4 * 200 + 1
    assert_close("q(0.2 s)", traj.q[-1], q_ref, 1e-11)
    assert_close("v(0.2 s)", traj.v[-1], v_ref, 1e-10)
    a_end = db.forward_dynamics(mm, traj.q[-1], traj.v[-1], traj.tau[-1] + traj.passive_forces()[-1], fext)
    assert_close("saved a", traj.a[-1], a_end, 1e-12)
    assert_close("passive forces", traj.passive_forces()[-1], -G.T @ (tree.damping * (G @ traj.v[-1])), 1e-14)
    # the work of the controller, the dampers and the wrenches accounts for the energy change:
    # what is left is RK4's error, which falls about 10x per halving of the step here
    change = np.abs(traj.total_energy - traj.total_energy[0]).max()
    half = db.simulate(mm, q0, v0, 0.2, 5e-4, tau=tau, f_ext=fext, dynamics=dynamics, limits=False)
    drift, drift_half = (np.abs(x.energy_drift()).max() for x in (traj, half))
    assert drift_half < drift / 8 and drift_half < 1e-6 * change, (drift, drift_half, change)


def test_simulate_a_floating_mimic_model_conserves_energy_at_fourth_order():
    """Free-flyer base, springs on every joint (mimic joints' included: their potential is the
    tree's at the expanded state), passive: RK4 on the reduced manifold keeps the quaternion
    unit, conserves energy with a fourth-order drift, and the scipy methods agree."""
    rng = np.random.default_rng(7)
    tree = db.load_urdf(GRIPPER, floating_base=True)
    # no springs on the free flyer nor on the continuous rollers (a spring on a wrapping angle
    # has a kink in its potential at +-pi, which RK4 does not integrate at fourth order)
    free = np.repeat(
        (tree.joint_type == int(JointType.CONTINUOUS)) | (tree.joint_type == int(JointType.FREEFLYER)), tree.nv_joint
    )
    tree = tree.replace(stiffness=np.where(free, 0.0, rng.uniform(0.05, 0.2, tree.nv)))
    mm = db.MimicModel(tree)
    q0, v0 = db.random_configuration(mm, rng), 0.5 * rng.standard_normal(mm.nv)
    coarse, fine = (db.simulate(mm, q0, v0, 0.4, dt, limits=False) for dt in (2e-3, 1e-3))
    ratio = np.abs(coarse.energy_drift()).max() / np.abs(fine.energy_drift()).max()
    assert 12 < ratio < 20, ratio
    assert np.abs(fine.energy_drift(relative=True)).max() < 1e-8
    assert np.all(np.abs(np.linalg.norm(fine.q[:, 3:7], axis=1) - 1) < 1e-14)
    adaptive = db.simulate(mm, q0, v0, 0.4, 2e-3, method="DOP853", rtol=1e-12, atol=1e-12)
    assert_close("DOP853 vs RK4 q(0.4 s)", adaptive.q[-1], fine.q[-1], 1e-8)
    assert np.all(np.isfinite(adaptive.a)) and np.abs(adaptive.energy_drift(relative=True)).max() < 1e-9


def test_simulate_a_mimic_model_reports_bad_input_and_failure_by_name():
    mm = db.load_urdf(GRIPPER, mimic=True)
    q0 = db.neutral_configuration(mm)
    with pytest.raises(db.InputError, match=r"q0 must have shape \(5,\)"):
        db.simulate(mm, np.zeros(12), np.zeros(4), 0.1)
    with pytest.raises(db.InputError, match="v0"):
        db.simulate(mm, q0, np.zeros(10), 0.1)
    with pytest.raises(db.InputError, match="f_ext names 'nowhere'"):
        db.simulate(mm, q0, np.zeros(4), 0.1, f_ext={"nowhere": np.ones(6)})
    with pytest.raises(db.SimulationError, match="t = 0.0[0-9]* s") as err:
        db.simulate(mm, q0, np.zeros(4), 0.1, tau=lambda t, q, v: np.full(4, 1e300 if t > 0.005 else 0.0))
    with pytest.raises(db.InputError, match=r"q0\[1\]\[2\] = nan is not finite \(joint 'f_jaw_1' \(prismatic\)\)"):
        db.simulate_batch(mm, [q0, np.where(np.arange(5) == 2, np.nan, q0)], np.zeros(4), 0.1)
    partial = err.value.trajectory
    assert partial.status == "failed" and 4 <= len(partial) <= 7 and partial.q.shape[1] == mm.nq


def test_cli_validate_and_simulate_a_mimic_model(tmp_path, capsys, monkeypatch):
    """--mimic on validate (against pin.buildModelFromUrdf(mimic=True); forward dynamics and the
    inverse GIM against the GIM from Pinocchio's rnea, as its aba refuses mimic models) and on simulate; a
    wrong mimic forward dynamics is caught (exit 1)."""
    assert main(["validate", GRIPPER, "--mimic", "--samples", "2"]) == 0
    out = capsys.readouterr().out
    assert "pin.buildModelFromUrdf(mimic=True)" in out and "nv = 4" in out and "all checks passed" in out
    assert "pin.rnea columns" in out and "inv(M_pin)" in out and "solve(M_pin, tau -" in out
    npz = tmp_path / "g.npz"
    assert (
        main(
            [
                "simulate",
                GRIPPER,
                "--mimic",
                "--duration",
                "0.2",
                "--no-html",
                "--plot",
                str(tmp_path / "g.png"),
                "--save",
                str(npz),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "4 DOF (fixed base, 6 <mimic> joints as constraints)" in out
    assert (
        "checked against Pinocchio (pin.buildModelFromUrdf(mimic=True), 2 random states): forward dynamics and kinematics agree"
        in out
    )
    assert "completed: 200 steps" in out and (tmp_path / "g.png").stat().st_size > 0
    mm = db.load_urdf(GRIPPER, mimic=True)
    traj = db.Trajectory.load(npz, mm)
    assert traj.q.shape == (201, 5)
    assert_close("saved run", traj.q[-1], db.simulate(mm, traj.q[0], np.zeros(4), 0.2, 1e-3).q[-1], 0.0)
    real = db.mimic.forward_dynamics
    monkeypatch.setattr(db.mimic, "forward_dynamics", lambda *a, **k: real(*a, **k) * (1 + 1e-7))
    assert main(["validate", GRIPPER, "--mimic", "--samples", "1"]) == 1
    assert "MISMATCH" in capsys.readouterr().out


def _compiled_only(monkeypatch):
    from denoc_bridge.simulation import api as simulation

    def refuse(*args, **kwargs):
        raise AssertionError("the compiled mimic run fell back to the Python stages")

    monkeypatch.setattr(simulation, "run_python", refuse)


@pytest.mark.parametrize("floating, method", [(False, "rk4"), (True, "rk4"), (False, "euler")])
def test_compiled_mimic_run_equals_the_python_stages(floating, method, monkeypatch):
    """simulate(MimicModel) with constant tau, a torque table or constant wrenches, springs and
    dampers on the tree's joints (mimic joints' included) runs compiled (core/run.pyx) and
    equals the Python stages around mimic.forward_dynamics, state by state; the gripper has a
    continuous mimic joint (the (cos, sin) expansion)."""
    rng = np.random.default_rng(23)
    tree = db.load_urdf(GRIPPER, floating_base=floating)
    circle = np.repeat(tree.joint_type == int(JointType.CONTINUOUS), tree.nv_joint)
    tree = tree.replace(
        damping=rng.uniform(0.0, 0.02, tree.nv), stiffness=np.where(circle, 0.0, rng.uniform(0.0, 0.1, tree.nv))
    )
    mm = db.MimicModel(tree)
    q0, v0 = db.random_configuration(mm, rng), rng.standard_normal(mm.nv)
    table = 0.01 * rng.standard_normal((300, mm.nv))
    fext = 0.1 * rng.standard_normal((mm.n_links, 6))
    cases = [dict(tau=table[0]), dict(tau=table), dict(f_ext=fext)]
    for case in cases:
        ref = run_stages(mm, q0, v0, 0.3, 1e-3, method=method, **case)
        with monkeypatch.context() as m:
            _compiled_only(m)
            traj = db.simulate(mm, q0, v0, 0.3, 1e-3, method=method, limits=False, **case)
        name = f"{method}, {'floating, ' if floating else ''}{list(case)[0]} {np.shape(list(case.values())[0])}"
        assert traj.status == "completed" and traj.q.shape == ref.q.shape == (301, mm.nq), name
        assert traj.n_evaluations == ref.n_evaluations, name
        for field in ("q", "v", "a", "tau"):
            assert_close(f"{name}: {field}", getattr(traj, field), getattr(ref, field), 1e-12)
    quat = traj.q[:, 3:7] if floating else np.ones((1, 4)) / 2
    assert np.all(np.abs(np.linalg.norm(quat, axis=1) - 1) < 1e-14)
    rollers = traj.q[:, [i for i in range(mm.nq) if i not in mm.idx_q[mm.nq_joint == 1]]]
    assert rollers.size and np.all(
        np.abs(
            np.linalg.norm(
                mm.expand(traj.q)[:, mm.tree.idx_q[mm.tree.joint_type == int(JointType.CONTINUOUS)][:, None] + [0, 1]],
                axis=2,
            )
            - 1
        )
        < 1e-14
    )


def test_compiled_mimic_run_keeps_the_dense_fallback_and_names_failures():
    """A tree with a massless leaf moved only by a mimic joint has a singular articulated inertia
    alone: simulate takes the Python stages with the dense solve, as forward_dynamics does.  A
    compiled run whose state overflows stops with the time, the joint and the partial run."""
    xml = R(L("a"), L("b", 0.0), J("j1", "w", "a", "revolute"), J("j2", "a", "b", mimic=("j1", 2.0, 0.1)))
    xml = xml.replace(
        '<mass value="0.0"/><inertia ixx="2e-3" ixy="1e-4" ixz="0" iyy="3e-3" iyz="0" izz="4e-3"/>',
        '<mass value="0.0"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/>',
    )
    mm, pm = db.load_urdf(xml, mimic=True), pin_mimic(xml, xml=True)
    traj = db.simulate(mm, np.array([0.3]), np.array([-0.7]), 0.05, 1e-3, tau=np.array([0.2]))
    ref = _pin_mimic_rk4(
        pm,
        np.array([0.3]),
        np.array([-0.7]),
        1e-3,
        50,
        lambda t, q, v: np.array([0.2]),
        np.zeros((pm.njoints - 1, 6)),
        np.zeros((1, 1)),
    )
    assert_close("q(0.05 s), massless mimic leaf", traj.q[-1], ref[0], 1e-12)
    gripper = db.load_urdf(GRIPPER, mimic=True)
    table = np.zeros((100, 4))
    table[10:] = 1e300  # from step 10 on
    with pytest.raises(db.SimulationError, match=r"t = 0\.01 s: the state is no longer finite \(a\[") as err:
        db.simulate(gripper, db.neutral_configuration(gripper), np.zeros(4), 0.1, tau=table)
    partial = err.value.trajectory
    assert partial.status == "failed" and partial.q.shape == (11, gripper.nq) and np.all(np.isfinite(partial.q))
    assert err.value.joint in gripper.joint_names and err.value.time == 0.01


def test_compiled_mimic_run_without_relations_is_the_trees_run():
    """A MimicModel with no relations: the compiled mimic run is the tree's RK4 (no constraint
    rows, no correction)."""
    tree = db.load_urdf(GRIPPER).replace(mimic=())
    mm = db.MimicModel(tree)
    rng = np.random.default_rng(3)
    q0, v0 = db.random_configuration(tree, rng), rng.standard_normal(tree.nv)
    # (the tree's joint limits are not enforced on mimic models: compare with the tree's run without them)
    ours, ref = db.simulate(mm, q0, v0, 0.2, 1e-3, limits=False), db.simulate(tree, q0, v0, 0.2, 1e-3, limits=False)
    assert mm.n_constraints == 0
    for field in ("q", "v", "a"):
        assert_close(f"no relations: {field}", getattr(ours, field), getattr(ref, field), 1e-13)


def test_simulate_batch_of_a_mimic_model_equals_simulate_case_by_case():
    """simulate_batch on a MimicModel: one compiled parallel call, each case's numbers those of
    simulate alone (bit for bit: the same kernel); a case that fails is rerun alone and named;
    a tree singular on its own is rerun alone through the dense Python stages."""
    rng = np.random.default_rng(5)
    tree = db.load_urdf(GRIPPER, floating_base=True)
    tree = tree.replace(damping=rng.uniform(0.0, 0.02, tree.nv))
    mm = db.MimicModel(tree)
    B = 4
    Q0 = np.array([db.random_configuration(mm, rng) for _ in range(B)])
    V0 = rng.standard_normal((B, mm.nv))
    taus = 0.01 * rng.standard_normal((B, 100, mm.nv))
    for method in ("rk4", "euler"):
        batch = db.simulate_batch(mm, Q0, V0, 0.1, 1e-3, tau=taus, method=method)
        for b in range(B):
            alone = db.simulate(mm, Q0[b], V0[b], 0.1, 1e-3, tau=taus[b], method=method)
            for field in ("q", "v", "a", "tau"):
                assert np.array_equal(getattr(batch[b], field), getattr(alone, field)), (method, b, field)
            assert batch[b].status == "completed" and batch[b].model is mm
    taus[2, 30:] = 1e300  # case 2 overflows at step 30
    out = db.simulate_batch(mm, Q0, V0, 0.1, 1e-3, tau=taus, errors="return")
    assert isinstance(out[2], db.SimulationError) and out[2].time == 0.03, out[2]
    assert all(isinstance(out[b], db.Trajectory) for b in (0, 1, 3))
    xml = R(L("a"), L("b", 0.0), J("j1", "w", "a", "revolute"), J("j2", "a", "b", mimic=("j1", 2.0, 0.1)))
    xml = xml.replace(
        '<mass value="0.0"/><inertia ixx="2e-3" ixy="1e-4" ixz="0" iyy="3e-3" iyz="0" izz="4e-3"/>',
        '<mass value="0.0"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/>',
    )
    leaf = db.load_urdf(xml, mimic=True)
    batch = db.simulate_batch(leaf, np.array([[0.3], [-0.2]]), np.zeros(1), 0.05, 1e-3)
    for b, q0 in enumerate((0.3, -0.2)):
        assert_close(f"massless leaf, case {b}", batch[b].q, db.simulate(leaf, [q0], [0.0], 0.05, 1e-3).q, 0.0)


def test_sweep_over_a_mimic_model_batches_its_cases(tmp_path):
    """db.sweep takes a MimicModel: model parameters vary its tree (relations kept), states by
    reduced index or by joint name, in batches through simulate_batch; a mimic joint's name as
    a state entry is refused by name before any case runs; each row equals simulate of that case alone."""
    mm = db.load_urdf(GRIPPER, mimic=True)
    cases = [
        {"case": "a"},
        {"case": "b", "q0[1]": 0.4},
        {"case": "c", "v0.b_finger_l": 1.0},
        {"case": "d", "damping.c_finger_r": 0.02, "mass_scale": 2.0},
    ]
    with pytest.raises(db.InputError, match="case 'e': v0.c_finger_r: joint 'c_finger_r' is a mimic joint"):
        db.sweep(
            mm,
            cases + [{"case": "e", "v0.c_finger_r": 1.0}],
            {"t_final": 0.05, "dt": 1e-3},
            out=tmp_path / "refused",
            scheduler="inline",
        )
    assert not (tmp_path / "refused").exists()
    res = db.sweep(mm, cases, {"t_final": 0.05, "dt": 1e-3}, out=tmp_path, scheduler="inline", metrics=["q_end"])
    assert [r["status"] for r in res] == ["completed"] * 4
    varied = db.sweeps.vary(mm, {"damping.c_finger_r": 0.02, "mass_scale": 2.0})
    assert isinstance(varied, db.MimicModel) and varied.n_constraints == mm.n_constraints
    assert varied.tree.damping[mm.tree.idx_v[mm.tree.joint_names.index("c_finger_r")]] == 0.02
    q0 = db.neutral_configuration(mm)
    qb = q0.copy()
    qb[1] = 0.4
    vc = np.zeros(mm.nv)
    vc[mm.idx_v[mm.joint_names.index("b_finger_l")]] = 1.0
    for row, (model, q, v) in zip(
        res.rows, [(mm, q0, np.zeros(4)), (mm, qb, np.zeros(4)), (mm, q0, vc), (varied, q0, np.zeros(4))]
    ):
        ref = db.simulate(model, q, v, 0.05, 1e-3)
        assert [row[f"q_end[{i}]"] for i in range(mm.nq)] == ref.q[-1].tolist(), row["case"]
        assert np.array_equal(res.trajectory(row["case"], model).q, ref.q), row["case"]


@pytest.mark.parametrize("floating", [False, True])
def test_compiled_single_state_entries_equal_pinocchio_and_the_checked_path(floating):
    """One state as float64 vectors, no wrenches: inverse dynamics, the GIM and forward dynamics
    run one compiled entry each (core/mimic.pxi); they equal Pinocchio's mimic model (rnea,
    crba, solve(crba, tau - nle)) and the checked Python path (lists take it); an unnormalised
    quaternion or (cos, sin) pair is normalised; bad values are named by the checked path."""
    mm, pm = db.load_urdf(GRIPPER, floating_base=floating, mimic=True), pin_mimic(GRIPPER, floating)
    pd = pm.createData()
    for q, v, a, _ in states(mm, 11):
        tau, M = db.inverse_dynamics(mm, q, v, a), db.mass_matrix(mm, q)
        acc = db.forward_dynamics(mm, q, v, tau)
        assert_close("entry: rnea", tau, pin.rnea(pm, pd, q, v, a), TIGHT)
        assert_close("entry: crba", M, pin.crba(pm, pd, q), TIGHT)
        assert_close("entry: FD(ID(a))", acc, a, 1e-10)
        assert_close(
            "entry: FD vs solve(crba, tau - nle)",
            acc,
            np.linalg.solve(pin.crba(pm, pd, q), tau - pin.nonLinearEffects(pm, pd, q, v)),
            1e-10,
        )
        assert_close("entry vs checked path: ID", tau, db.inverse_dynamics(mm, list(q), list(v), list(a)), TIGHT)
        assert_close("entry vs checked path: M", M, db.mass_matrix(mm, list(q)), TIGHT)
        assert_close("entry vs checked path: FD", acc, db.forward_dynamics(mm, list(q), list(v), list(tau)), 1e-12)
        scaled = q.copy()
        scaled[mm.nq - 2 :] *= 3.0  # the roller's (cos, sin) pair
        if floating:
            scaled[3:7] *= 0.5  # the base quaternion
        assert_close("entry: unnormalised q", db.forward_dynamics(mm, scaled, v, tau), acc, 1e-12)
        assert_close("entry: unnormalised q, M", db.mass_matrix(mm, scaled), M, TIGHT)
    data = db.Data(mm.tree)
    assert_close("entry with a Data of the tree", db.inverse_dynamics(mm, q, v, a, data=data), tau, 0.0)
    mm.gravity = (0.0, 1.0, -3.0)  # a new table for the tree
    pm.gravity = pin.Motion(np.array([0.0, 1.0, -3.0]), np.zeros(3))
    assert_close("entry after a change of gravity", db.inverse_dynamics(mm, q, v, a), pin.rnea(pm, pd, q, v, a), TIGHT)
    assert_close(
        "entry after a change of gravity: FD",
        db.forward_dynamics(mm, q, v, tau),
        np.linalg.solve(pin.crba(pm, pd, q), tau - pin.nonLinearEffects(pm, pd, q, v)),
        1e-10,
    )
    bad = v.copy()
    bad[1] = np.nan
    with pytest.raises(db.InputError, match=r"v\[1\] = nan is not finite \(joint '[^']+' \(\w+\)\)"):
        db.forward_dynamics(mm, q, bad, tau)
    with pytest.raises(db.InputError, match=r"shape"):
        db.inverse_dynamics(mm, q, v[:-1], a)


@pytest.mark.parametrize("springs", [False, True])
def test_trajectory_torques_and_feedforward_on_a_mimic_model(springs):
    """trajectory_torques on a MimicModel (used to raise TreeOnlyError for model.damping, even
    without dampers): G^T of the tree's torques at the expanded states, the tree's springs and
    dampers subtracted; feedforward with them makes simulate follow the motion."""
    rng = np.random.default_rng(8)
    tree = db.load_urdf(GRIPPER)
    if springs:
        circle = np.repeat(tree.joint_type == int(JointType.CONTINUOUS), tree.nv_joint)
        tree = tree.replace(
            damping=rng.uniform(0.005, 0.02, tree.nv), stiffness=np.where(circle, 0.0, rng.uniform(0.01, 0.1, tree.nv))
        )
    mm = db.MimicModel(tree)
    qa, T = db.random_configuration(mm, rng), 0.3
    d = db.difference(mm, qa, db.random_configuration(mm, rng))

    def motion(t):  # 000 eq. (15) along d (a continuous joint: nq > nv)
        s, sd, sdd = (x[..., 0] for x in db.cycloidal_motion(0.0, 1.0, T, t))
        return (
            db.integrate(mm, np.broadcast_to(qa, np.shape(s) + qa.shape), np.multiply.outer(s, d)),
            np.multiply.outer(sd, d),
            np.multiply.outer(sdd, d),
        )

    t = np.linspace(0.0, T, 7)
    q, v, a = motion(t)
    tau = db.trajectory_torques(mm, t, q, v, a)
    qf, vf, af = mm.expand(q, v, a)
    assert_close("G^T (tree torques)", tau, mm.reduce_forces(db.trajectory_torques(tree, t, qf, vf, af)), 1e-12)
    unforced = db.trajectory_torques(mm, t, q, v, a, passive=False)
    assert_close("without the passive forces", unforced, db.inverse_dynamics(mm, q, v, a), 1e-14)
    assert np.abs(tau - unforced).max() > (1e-4 if springs else -1.0)
    errors = []  # what is left is RK4's: 16x less per halving
    for dt in (5e-4, 2.5e-4):
        traj = db.simulate(mm, qa, np.zeros(mm.nv), T, dt, tau=db.feedforward(mm, motion), progress=False, limits=False)
        qd, vd, _ = motion(traj.t)
        errors.append((np.abs(db.difference(mm, qd, traj.q)).max(), np.abs(traj.v - vd).max() / np.abs(vd).max()))
    (q1, v1), (q2, v2) = errors
    assert 12.0 < q1 / q2 < 20.0 and 12.0 < v1 / v2 < 20.0, errors
    assert q2 < 1e-10 * np.abs(d).max() and v2 < 1e-8, (errors, np.abs(d).max())  # of the motion's amplitude
