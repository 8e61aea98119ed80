"""MJCF equality constraints: <connect>/<weld> as loop closures, <joint> as mimic couplings,
<tendon> as mimic or joint couplings; each checked against MuJoCo's own constraint residual
(efc_pos)."""

from __future__ import annotations

import warnings

import mujoco
import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.constraints.loop_kinematics import loop_residual
from denoc_bridge.errors import ModelError, PhysicsWarning
from denoc_bridge.io import mujoco_layout as mjl
from denoc_bridge.io.mjcf import loads_mjcf
from denoc_bridge.multibody.constraints import JointCoupling
from tests.io.mjcf_samples import FOURBAR

#: two arms hanging from the world; their tips joined by a weld, a site connect and a joint coupling
TWO_ARMS = """
<mujoco model="two_arms">
  <worldbody>
    <body name="a1" pos="0 0 1" euler="0.1 0.2 0">
      <joint name="ja1" type="ball"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
      <body name="a2" pos="0.3 0 0">
        <joint name="ja2" type="hinge" axis="0 1 0" ref="0.2"/>
        <joint name="ja3" type="slide" axis="1 0 0"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
        <site name="sa" pos="0.3 0 0.01" euler="0.3 0 0"/>
      </body>
    </body>
    <body name="b1" pos="0.7 0.1 1" euler="0 0.4 0.1">
      <joint name="jb1" type="hinge" axis="0 1 0" ref="-0.1"/>
      <geom type="capsule" fromto="0 0 0 -0.2 0 0" size="0.02"/>
      <body name="b2" pos="-0.2 0 0">
        <joint name="jb2" type="hinge" axis="0 0 1"/>
        <geom type="capsule" fromto="0 0 0 -0.2 0 0" size="0.02"/>
        <site name="sb" pos="-0.2 0.05 0"/>
      </body>
    </body>
  </worldbody>
  <equality>
    {equality}
  </equality>
</mujoco>
"""


def _efc_pos(m: mujoco.MjModel, qpos: np.ndarray) -> np.ndarray:
    """MuJoCo's equality residuals at qpos (only equalities are active)."""
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_LIMIT)
    d = mujoco.MjData(m)
    d.qpos[:] = qpos
    mujoco.mj_forward(m, d)
    return d.efc_pos[: d.nefc].copy()


@pytest.mark.parametrize(
    "equality",
    [
        '<weld name="w" body1="a2" body2="b2" anchor="0.1 0.02 0"/>',
        '<connect name="c" body1="a2" body2="b2" anchor="0.25 0 0.01"/>',
        '<connect name="cs" site1="sa" site2="sb"/>',
        '<weld name="ws" site1="sa" site2="sb"/>',
    ],
    ids=["weld", "connect", "connect-sites", "weld-sites"],
)
def test_loop_closures_close_where_mujoco_s_do(equality: str) -> None:
    xml = TWO_ARMS.format(equality=equality)
    model, m = loads_mjcf(xml), mujoco.MjModel.from_xml_string(xml)
    (lc,) = model.loops
    assert lc.type == ("weld" if "weld" in equality else "spherical")
    rng = np.random.default_rng(0)
    q0 = mjl.mujoco_qpos_to_q(model, m.qpos0)
    for _ in range(3):
        q = db.loops.project_configuration(model, db.integrate(model, q0, 0.3 * rng.standard_normal(model.nv)))
        assert np.abs(loop_residual(model, q)).max() < 1e-12
        assert np.abs(_efc_pos(m, mjl.q_to_mujoco_qpos(model, q))).max() < 1e-10
        # and a configuration that violates ours violates MuJoCo's (the check can fail)
        q_off = db.integrate(model, q, 0.05 * rng.standard_normal(model.nv))
        assert np.abs(_efc_pos(m, mjl.q_to_mujoco_qpos(model, q_off))).max() > 1e-4


def test_a_loop_within_one_link_is_refused_by_name() -> None:
    """A jointless body is part of its parent's link: connecting the two constrains nothing."""
    xml = FOURBAR.replace(
        '<geom type="capsule" fromto="0 0 0 0.5 0 0.3" size="0.01"/>',
        '<geom type="capsule" fromto="0 0 0 0.5 0 0.3" size="0.01"/><body name="tip" pos="0.5 0 0.3"/>',
    ).replace('body2="rocker" anchor="0.5 0 0.3"', 'body2="tip" anchor="0.5 0 0.3"')
    with pytest.raises(ModelError, match="'close': both bodies move with the same link"):
        loads_mjcf(xml)


def _coupling_holds_where_mujoco_s_does(model, m, joint: str, seed: int, residual_off: float) -> None:
    """MuJoCo's equality residual is 0 (to 1e-12) at 3 random configurations the mimic model
    expands, and ``residual_off`` once ``joint`` is moved 0.1 off the last of them."""
    rng = np.random.default_rng(seed)
    for _ in range(3):
        q_full = model.expand(db.random_configuration(model, rng))
        assert np.abs(_efc_pos(m, mjl.q_to_mujoco_qpos(model.tree, q_full))).max() < 1e-12
    q_full[model.tree.idx_q[model.tree.joint_index(joint)]] += 0.1
    assert np.abs(_efc_pos(m, mjl.q_to_mujoco_qpos(model.tree, q_full))).max() == pytest.approx(residual_off)


def test_joint_equality_is_a_mimic_coupling() -> None:
    xml = TWO_ARMS.format(equality='<joint name="couple" joint1="jb1" joint2="ja2" polycoef="0.3 -1.5 0 0 0"/>')
    model, m = loads_mjcf(xml), mujoco.MjModel.from_xml_string(xml)
    assert isinstance(model, db.MimicModel)
    (r,) = model.mimic
    assert (r.joint, r.mimicked, r.multiplier) == ("jb1", "ja2", -1.5)
    _coupling_holds_where_mujoco_s_does(model, m, "jb1", seed=1, residual_off=0.1)


@pytest.mark.parametrize(
    ("equality", "match"),
    [
        ('<joint name="nl" joint1="jb1" joint2="ja2" polycoef="0 1 0.5 0 0"/>', "'nl': a nonlinear polycoef"),
        ('<joint name="fix" joint1="jb1"/>', "'fix': fixes joint 'jb1'"),
    ],
)
def test_unsupported_equalities_are_refused_by_name(equality: str, match: str) -> None:
    with pytest.raises(ModelError, match=match):
        loads_mjcf(TWO_ARMS.format(equality=equality))


def _with_tendons(equality: str, tendons: str) -> str:
    return TWO_ARMS.format(equality=equality).replace("</worldbody>", f"</worldbody><tendon>{tendons}</tendon>")


#: a fixed tendon over a hinge of one arm and the slide of the other (dm_control's gripper coupling)
COUPLING = '<fixed name="t"><joint joint="jb1" coef="-0.5"/><joint joint="ja3" coef="2"/></fixed>'


def test_tendon_equality_of_two_joints_is_a_mimic_coupling() -> None:
    """MuJoCo holds -0.5 (jb1 - jb1_0) + 2 (ja3 - ja3_0) = 0.05: the mimic's configurations
    have no residual, and moving the mimic joint off it gives MuJoCo's residual back."""
    xml = _with_tendons('<tendon name="te" tendon1="t" polycoef="0.05 0 0 0 0"/>', COUPLING)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the tendon is the coupling: no "not modelled" note
        model, m = loads_mjcf(xml), mujoco.MjModel.from_xml_string(xml)
    assert isinstance(model, db.MimicModel) and model.warnings == ()
    (r,) = model.mimic
    assert (r.joint, r.mimicked, r.multiplier) == ("jb1", "ja3", 4.0)
    assert r.offset == pytest.approx(np.radians(-0.1) - 0.1)  # jb1_0 = ref (degrees), (2 * 0 + 0.05) / -0.5
    _coupling_holds_where_mujoco_s_does(model, m, "jb1", seed=2, residual_off=0.05)


@pytest.mark.parametrize(
    "tendon",
    [
        '<fixed name="t"><joint joint="jb1" coef="1.5"/></fixed>',
        '<fixed name="t"><joint joint="jb1" coef="1"/><joint joint="jb2" coef="-2"/>'
        '<joint joint="ja2" coef="0.5"/></fixed>',
    ],
    ids=["one-term", "three-terms"],
)
def test_tendon_equality_of_one_or_three_joints_is_a_joint_coupling(tendon: str) -> None:
    """MuJoCo holds sum c_k (q_k - q_k0) = c0: one coupling row whose residual is MuJoCo's
    equality residual at any configuration, zero where our projection puts the state."""
    xml = _with_tendons('<tendon name="te" tendon1="t" polycoef="0.05 0 0 0 0"/>', tendon)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the tendon is the coupling: no "not modelled" note
        model, m = loads_mjcf(xml), mujoco.MjModel.from_xml_string(xml)
    (lc,) = model.loops
    assert isinstance(lc, JointCoupling) and lc.name == "te" and not isinstance(model, db.MimicModel)
    rng = np.random.default_rng(4)
    for _ in range(3):
        q = db.random_configuration(model, rng)
        phi = loop_residual(model, q)
        np.testing.assert_allclose(phi, _efc_pos(m, mjl.q_to_mujoco_qpos(model, q)), rtol=0, atol=1e-13)
        assert abs(phi[0]) > 1e-3  # off the coupling: the check can fail
        q = db.loops.project_configuration(model, q)
        assert np.abs(_efc_pos(m, mjl.q_to_mujoco_qpos(model, q))).max() < 1e-12


@pytest.mark.parametrize(
    ("equality", "tendons", "match"),
    [
        ('<tendon name="te" tendon1="t" tendon2="u"/>', COUPLING + COUPLING.replace('"t"', '"u"'), "two tendons"),
        (
            '<tendon name="te" tendon1="t"/>',
            '<spatial name="t"><site site="sa"/><site site="sb"/></spatial>',
            "tendon 't' is not a fixed tendon",
        ),
    ],
    ids=["two-tendons", "spatial"],
)
def test_other_tendon_equalities_are_refused_by_name(equality: str, tendons: str, match: str) -> None:
    xml = _with_tendons(equality, tendons)
    with pytest.raises(ModelError, match=f"<tendon> equality 'te'.*{match}"):
        loads_mjcf(xml)
    with pytest.warns(PhysicsWarning):
        model = loads_mjcf(xml, constraints=False)  # the tree alone: named, not refused
    assert any("<tendon> equality 'te' is not applied" in note for note in model.warnings), model.warnings
    assert model.mimic == () and not isinstance(model, db.MimicModel)


def test_inactive_and_unapplied_equalities_are_named() -> None:
    xml = TWO_ARMS.format(equality='<connect name="off" body1="a2" body2="b2" anchor="0 0 0" active="false"/>')
    with pytest.warns(PhysicsWarning, match="'off' is inactive"):
        model = loads_mjcf(xml)
    assert model.loops == ()
    with pytest.warns(PhysicsWarning, match="'c' is not applied"):
        model = loads_mjcf(FOURBAR.replace('name="close"', 'name="c"'), constraints=False)
    assert model.loops == ()


def test_fourbar_simulates_with_its_loop_closed() -> None:
    model, m = loads_mjcf(FOURBAR), mujoco.MjModel.from_xml_string(FOURBAR)
    assert [lc.name for lc in model.loops] == ["close"] and model.n_links == 3
    q0 = np.zeros(3)
    assert np.abs(loop_residual(model, q0)).max() < 1e-15
    tr = db.simulate(model, q0, np.zeros(3), 1.0, 1e-3)
    assert tr.status == "completed"
    assert tr.constraint_error.max() < 1e-10
    assert np.ptp(tr.q[:, 0]) > 0.1  # it moved
    # the two ends meet in MuJoCo's kinematics too
    d = mujoco.MjData(m)
    for q in tr.q[:: len(tr.q) // 10]:
        d.qpos[:] = q
        mujoco.mj_kinematics(m, d)
        end_coupler = d.xmat[2].reshape(3, 3) @ [0.5, 0, 0.3] + d.xpos[2]
        end_rocker = d.xmat[3].reshape(3, 3) @ [0.1, 0, 0.3] + d.xpos[3]
        assert np.abs(end_coupler - end_rocker).max() < 1e-10


# ------------------------------------------------------------------ chains of <joint> equalities
def _link(name: str, pos: str, joint: str, axis: str = "1 0 0", extra: str = "", inner: str = "") -> str:
    return (
        f'<body name="{name}" pos="{pos}"><joint name="{joint}" axis="{axis}" {extra}/>'
        f'<geom type="capsule" fromto="0 0 0 0.01 0.03 0.04" size="0.006"/>{inner}</body>'
    )


_LEFT_FINGER = _link("left_inner_finger", "0.01 0.03 0.04", "left_inner_finger_joint")
_RIGHT_FINGER = _link("right_inner_finger", "0.01 -0.03 0.04", "right_inner_finger_joint", "-1 0 0")
_LEFT = _link("left_outer_knuckle", "0 0.03 0.05", "finger_joint", inner=_LEFT_FINGER)
_LEFT += _link("left_inner_knuckle", "0 0.012 0.06", "left_inner_knuckle_joint")
_RIGHT = _link("right_outer_knuckle", "0 -0.03 0.05", "right_outer_knuckle_joint", "-1 0 0", inner=_RIGHT_FINGER)
_RIGHT += _link("right_inner_knuckle", "0 -0.012 0.06", "right_inner_knuckle_joint", "-1 0 0")

#: a Robotiq-2F-85-like finger set: the inner finger follows the driver ``finger_joint`` and the
#: other four finger joints follow the inner finger (a chain of depth 2, one follower declared
#: before the relation of the joint it follows)
ROBOTIQ_LIKE = f"""
<mujoco model="robotiq_like">
  <compiler angle="radian"/>
  <option gravity="0.4 -0.3 -9.81"/>
  <worldbody>
    <body name="base" pos="0 0 0.5" euler="0.2 0.1 0">
      <geom type="box" size="0.03 0.03 0.02"/>
      {_LEFT}
      {_RIGHT}
    </body>
  </worldbody>
  <equality>
    <joint name="e_lik" joint1="left_inner_knuckle_joint" joint2="left_inner_finger_joint" polycoef="0 -1 0 0 0"/>
    <joint name="e_lif" joint1="left_inner_finger_joint" joint2="finger_joint" polycoef="0 -1 0 0 0"/>
    <joint name="e_rok" joint1="right_outer_knuckle_joint" joint2="left_inner_finger_joint" polycoef="0 -1 0 0 0"/>
    <joint name="e_rik" joint1="right_inner_knuckle_joint" joint2="left_inner_finger_joint" polycoef="0 -1 0 0 0"/>
    <joint name="e_rif" joint1="right_inner_finger_joint" joint2="left_inner_finger_joint" polycoef="0 1 0 0 0"/>
  </equality>
</mujoco>
"""

_ARM = ""
for _name, _joint, _axis, _extra in reversed(
    [
        ("l0", "j0", "0 1 0", ""),
        ("la", "j_a", "0.3 1 0", 'ref="0.2"'),
        ("lb", "j_b", "1 0 0.2", 'type="slide" ref="0.05"'),
        ("lc", "j_c", "0 0 1", ""),
        ("ld", "j_d", "1 1 0", 'ref="-0.3"'),
    ]
):
    _ARM = _link(_name, "0 0 1" if _name == "l0" else "0.01 0.03 0.04", _joint, _axis, _extra, _ARM)

#: a 3-deep chain j_a -> j_b -> j_c -> j_d (non-unit multipliers, offsets, a slide joint, refs),
#: the root j_d the most distal joint (the mimicked joints come after their mimics), and a free
#: hinge j0 at the root
CHAIN3 = f"""
<mujoco model="chain3">
  <compiler angle="radian"/>
  <worldbody>
    {_ARM}
  </worldbody>
  <equality>
    <joint name="e_a" joint1="j_a" joint2="j_b" polycoef="0.1 1.5 0 0 0"/>
    <joint name="e_b" joint1="j_b" joint2="j_c" polycoef="-0.02 0.4 0 0 0"/>
    <joint name="e_c" joint1="j_c" joint2="j_d" polycoef="0.3 -2 0 0 0"/>
  </equality>
</mujoco>
"""


def _held(m: mujoco.MjModel, root_value: float, joint: int) -> float:
    """The value of MuJoCo joint ``joint`` when the root of its chain of <joint> equalities is at
    ``root_value``: each equality ``q1 - q1_0 = c0 + c1 (q2 - q2_0)`` applied from the root down."""
    for e in range(m.neq):
        if int(m.eq_obj1id[e]) == joint:
            j2, (c0, c1) = int(m.eq_obj2id[e]), m.eq_data[e][:2]
            q10, q20 = m.qpos0[m.jnt_qposadr[joint]], m.qpos0[m.jnt_qposadr[j2]]
            return q10 + c0 + c1 * (_held(m, root_value, j2) - q20)
    return root_value


def _hard_qacc(m: mujoco.MjModel, d: mujoco.MjData) -> tuple[np.ndarray, np.ndarray]:
    """(MuJoCo's qacc rebuilt from its own pieces with its regularisation R, the same with R = 0):
    the minimiser of MuJoCo's quadratic cost for equality rows, ``qacc = qacc_smooth - M^-1 J^T
    (J M^-1 J^T + R)^-1 (J qacc_smooth - aref)``; with R = 0 it is the exact (hard) constraint."""
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    J = d.efc_J[: d.nefc * m.nv].reshape(d.nefc, m.nv)
    MinvJt = np.linalg.solve(M, J.T)
    rhs = J @ d.qacc_smooth - d.efc_aref[: d.nefc]
    A = J @ MinvJt
    soft = d.qacc_smooth - MinvJt @ np.linalg.solve(A + np.diag(d.efc_R[: d.nefc]), rhs)
    hard = d.qacc_smooth - MinvJt @ np.linalg.solve(A, rhs)
    return soft, hard


@pytest.mark.parametrize("xml", [ROBOTIQ_LIKE, CHAIN3], ids=["robotiq-like", "chain3"])
def test_chained_joint_equalities_are_composed_and_match_mujoco(xml: str) -> None:
    """Chains of <joint> equalities load as one relation of each joint to the root of its chain;
    MuJoCo's residual is zero at our configurations, and our forward dynamics is MuJoCo's
    constrained qacc without its softness: MuJoCo's qacc is rebuilt from its own M, J, R, aref
    and qacc_smooth (to 1e-10), the same with R = 0 is ours (to 1e-10), and MuJoCo's own qacc
    comes towards ours as its impedance d goes to 1 (R ~ (1 - d) / d)."""
    model, m = loads_mjcf(xml), mujoco.MjModel.from_xml_string(xml)
    assert isinstance(model, db.MimicModel) and model.nv == m.nv - m.neq
    tree = model.tree
    assert not {r.mimicked for r in model.mimic} & {r.joint for r in model.mimic}  # each to a root
    assert [r.joint for r in model.mimic] == [r.joint for r in tree.mimic]  # declared order
    assert any(a.mimicked != b.mimicked for a, b in zip(model.mimic, tree.mimic))  # there is a chain
    rng = np.random.default_rng(7)
    for r in model.mimic:  # the composed relations, against the chains applied equality by equality
        j = tree.joint_index(r.joint)
        for x in rng.uniform(-1, 1, 2):
            assert r.multiplier * x + r.offset == pytest.approx(_held(m, x, j), rel=0, abs=1e-15), r
    if xml is CHAIN3:
        ra, rb, rc = model.mimic
        assert (ra.mimicked, rb.mimicked, rc.mimicked) == ("j_d", "j_d", "j_d")
        assert ra.multiplier == pytest.approx(1.5 * 0.4 * -2.0, rel=1e-15) and ra.offset != 0.0
    _coupling_holds_where_mujoco_s_does(model, m, model.mimic[0].joint, seed=5, residual_off=0.1)
    # constrained dynamics: our reduced forward dynamics against MuJoCo's
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_LIMIT)
    m.opt.jacobian = int(mujoco.mjtJacobian.mjJAC_DENSE)
    m.opt.tolerance, m.opt.iterations = 1e-15, 200
    d = mujoco.MjData(m)
    worst = {"rebuilt": 0.0, "hard": 0.0, "d=0.99": 0.0, "d=0.9999": 0.0}
    for _ in range(4):
        q, v, tau = db.random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv)
        a = db.forward_dynamics(model, q, v, tau)
        qf, vf, af = model.expand(q, v, a)
        ours = mjl.a_to_mujoco_qacc(tree, qf, vf, af)
        d.qpos[:] = mjl.q_to_mujoco_qpos(tree, qf)
        d.qvel[:] = mjl.v_to_mujoco_qvel(tree, qf, vf)
        d.qfrc_applied[:] = mjl.tau_to_mujoco_force(tree, qf, model.full_forces(tau))
        scale = np.abs(ours).max()
        for dmax in (0.99, 0.9999):  # 0.9999: MuJoCo's hardest impedance
            m.eq_solimp[:] = (dmax, dmax, 0.001, 0.5, 2.0)
            mujoco.mj_forward(m, d)
            assert d.nefc == m.neq and np.abs(d.efc_pos[: d.nefc]).max() < 1e-12  # on the constraint
            assert np.abs(d.efc_vel[: d.nefc]).max() < 1e-12
            worst[f"d={dmax}"] = max(worst[f"d={dmax}"], np.abs(d.qacc - ours).max() / scale)
        soft, hard = _hard_qacc(m, d)
        worst["rebuilt"] = max(worst["rebuilt"], np.abs(soft - d.qacc).max() / scale)
        worst["hard"] = max(worst["hard"], np.abs(ours - hard).max() / scale)
    assert worst["rebuilt"] < 1e-10, worst  # MuJoCo's qacc is that formula with its R
    assert worst["hard"] < 1e-10, worst  # and ours is its R = 0 limit
    assert worst["d=0.9999"] < 2e-2 * worst["d=0.99"], worst  # MuJoCo's own qacc tends to ours


def test_a_cycle_of_joint_equalities_is_refused_naming_its_joints() -> None:
    """j_a follows j_b, which is in the cycle j_b -> j_c -> j_d -> j_b: named, not looped over."""
    xml = CHAIN3.replace("</equality>", '<joint name="e_d" joint1="j_d" joint2="j_b" polycoef="0 1 0 0 0"/></equality>')
    with pytest.raises(ModelError, match=r"form a cycle \('j_b' -> 'j_c' -> 'j_d' -> 'j_b'\)"):
        loads_mjcf(xml)
    with pytest.warns(PhysicsWarning, match="not applied"):
        model = loads_mjcf(xml, constraints=False)  # the tree alone loads
    assert not isinstance(model, db.MimicModel)
