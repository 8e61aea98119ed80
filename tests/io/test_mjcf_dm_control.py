"""A second, held-out MJCF collection: the models shipped in the dm_control wheel (its control
suite, its locomotion walkers and its third-party robots), read as files through MuJoCo's
compiler and checked against MuJoCo.

The list is fixed, so that a model missing from a future wheel fails here instead of
disappearing; the files left out are not models on their own (includes, templates that
dm_control's Python fills in, scenes that MuJoCo refuses or whose meshes are not shipped).
"""

from __future__ import annotations

import importlib.util
import os
import warnings

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge import loops
from denoc_bridge.constraints.contact import lifted
from denoc_bridge.errors import PhysicsWarning
from denoc_bridge.io.collision import collision_points
from denoc_bridge.io.mujoco_layout import mujoco_qpos_to_q, q_to_mujoco_qpos
from denoc_bridge.multibody.constraints import JointCoupling
from denoc_bridge.validation import compare_with_mujoco

_SPEC = importlib.util.find_spec("dm_control")
assert _SPEC is not None and _SPEC.submodule_search_locations, "dm_control (a test dependency) is not installed"
ROOT = _SPEC.submodule_search_locations[0]

#: (file below dm_control/, nv): every MuJoCo model of the wheel that compiles on its own
MODELS = [
    ("suite/acrobot.xml", 2),
    ("suite/ball_in_cup.xml", 4),
    ("suite/cartpole.xml", 2),
    ("suite/cheetah.xml", 9),
    ("suite/dog.xml", 85),
    ("suite/finger.xml", 3),  # <flag gravity="disable">
    ("suite/fish.xml", 13),  # gravity disabled, fluid forces named
    ("suite/hopper.xml", 7),
    ("suite/humanoid.xml", 27),
    ("suite/humanoid_CMU.xml", 62),
    ("suite/manipulator.xml", 13),  # a <tendon> equality: the fingers' mimic coupling
    ("suite/pendulum.xml", 1),
    ("suite/quadruped.xml", 28),  # four <tendon> equalities of three joints: joint couplings
    ("suite/point_mass.xml", 2),
    ("suite/reacher.xml", 2),
    ("suite/stacker.xml", 19),  # the same coupling
    ("suite/swimmer.xml", 3),
    ("suite/walker.xml", 9),
    ("locomotion/soccer/assets/boxhead/boxhead.xml", 5),
    ("locomotion/walkers/assets/build_fruitfly/assets/drosophila_fused.xml", 132),
    ("locomotion/walkers/assets/dog_v2/dog.xml", 79),
    ("locomotion/walkers/assets/fruitfly_v2/fruitfly.xml", 108),
    ("locomotion/walkers/assets/humanoid_CMU_V2019.xml", 56),
    ("locomotion/walkers/assets/humanoid_CMU_V2020.xml", 56),
    ("locomotion/walkers/assets/jumping_ball/jumping_ball_with_head.xml", 5),
    ("locomotion/walkers/assets/rodent.xml", 67),
    ("third_party/ant/ant.xml", 8),
    ("third_party/kinova/jaco_arm.xml", 6),
    ("third_party/kinova/jaco_hand.xml", 3),
]


def _load(rel: str, **kwargs) -> db.Model:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PhysicsWarning)  # tendons, fluid forces: named, not modelled
        return db.load_mjcf(os.path.join(ROOT, rel), **kwargs)


@pytest.mark.parametrize(("rel", "nv"), MODELS, ids=[os.path.basename(r) for r, _ in MODELS])
def test_dm_control_models_agree_with_mujoco(rel: str, nv: int) -> None:
    model = _load(rel)
    assert model.nv == nv
    report = compare_with_mujoco(model, samples=3, tol=1e-8)
    assert report.passed, report.table()


def test_quadruped_couplings_of_three_joints_against_mujoco() -> None:
    """quadruped.xml holds each leg's three joints to a sum (a fixed tendon of three joints held
    at its length): four joint couplings on the loop layer, whose residual and row are MuJoCo's
    tendon length (minus its length at qpos0) and tendon Jacobian; a simulation keeps them."""
    import mujoco

    path = os.path.join(ROOT, "suite/quadruped.xml")
    model = _load("suite/quadruped.xml")
    couplings = [lc for lc in model.loops if isinstance(lc, JointCoupling)]
    assert model.nv == 28 and len(couplings) == len(model.loops) == 4
    assert [lc.name for lc in couplings] == [
        f"coupling_{leg}" for leg in ("front_left", "front_right", "back_right", "back_left")
    ]
    report = compare_with_mujoco(model, samples=3, tol=1e-8)
    assert report.passed, report.table()
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    tendon = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_TENDON, lc.name) for lc in couplings]
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = db.random_configuration(model, rng)
        d.qpos[:] = q_to_mujoco_qpos(model, q)
        mujoco.mj_forward(m, d)
        phi, C, _ = loops.loop_kinematics(model, q, np.zeros(model.nv))
        np.testing.assert_allclose(phi, d.ten_length[tendon] - m.tendon_length0[tendon], rtol=0, atol=1e-13)
        J = np.zeros((len(tendon), m.nv))  # MuJoCo's sparse rows; hinge columns: the same in both layouts
        for i, t in enumerate(tendon):
            at = range(m.ten_J_rowadr[t], m.ten_J_rowadr[t] + m.ten_J_rownnz[t])
            J[i, m.ten_J_colind[at]] = d.ten_J[at]
        np.testing.assert_allclose(C, J, rtol=0, atol=1e-15)
    q0 = loops.project_configuration(model, mujoco_qpos_to_q(model, m.qpos0))
    assert np.abs(loops.loop_residual(model, q0)).max() < 1e-14  # MuJoCo's qpos0 holds them
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PhysicsWarning)
        tau = np.concatenate([np.zeros(6), rng.normal(size=model.nv - 6)])  # the legs' joints driven
        traj = db.simulate(model, q0, np.zeros(model.nv), 0.05, dt=1e-3, tau=tau)
    assert np.abs([loops.loop_residual(model, x) for x in traj.q]).max() < 1e-10
    legs = traj.q[-1][model.idx_q[list(couplings[0].joints)]] - q0[model.idx_q[list(couplings[0].joints)]]
    assert np.abs(legs).max() > 1e-4 and abs(legs.sum()) < 1e-10  # the joints move, their sum does not


def test_the_posture_hold_holds_no_free_joint() -> None:
    """quadruped.xml's ball is a second free body: the posture hold holds neither free joint."""
    model = _load("suite/quadruped.xml", constraints=False)
    hold = db.posture_hold(model, model.rest_configuration)
    free = [k for k in range(model.n_links) if model.joint_type[k] == int(db.JointType.FREEFLYER)]
    assert [model.joint_names[k] for k in free] == ["root", "ball_root"]
    for k in free:
        assert np.all(hold.kp[model.idx_v[k] : model.idx_v[k] + 6] == 0.0)
    assert np.count_nonzero(hold.kp) == model.nv - 12


def test_quadruped_stands_on_the_ground_with_its_couplings() -> None:
    """Dropped from 0.1 m at the file's pose with the posture hold: it lands and stands (the
    ground carries its weight), the couplings hold to 1e-10 through the impacts."""
    model = _load("suite/quadruped.xml")
    points = collision_points(model)[0]
    q0 = loops.project_configuration(model, model.reference_configurations["qpos0"])
    robot = [c for c in points if model.link_names[c.link] != "ball"]
    q0 = lifted(model, q0, robot, 0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # none: the robot starts above the ground (its ball has no points here)
        traj = db.simulate(
            model,
            q0,
            np.zeros(model.nv),
            0.4,
            1e-3,
            method="contact-euler",
            contact=db.Ground(),
            contact_points=robot,
            hold=db.posture_hold(model, q0),
        )
    assert traj.status == "completed"
    assert np.abs([loops.loop_residual(model, x) for x in traj.q]).max() < 1e-10
    weight = model.total_mass * 9.81
    robot_mass = model.total_mass - model.mass[model.joint_names.index("ball_root")]
    carried = np.nansum(traj.contact_force[-2][:, 2])
    assert carried == pytest.approx(robot_mass * 9.81, rel=0.02), (carried, weight)


def test_quadruped_without_its_couplings() -> None:
    """constraints=False lists the four equalities instead of applying them."""
    model = _load("suite/quadruped.xml", constraints=False)
    assert model.nv == 28 and not model.loops
    assert sum("is not applied (constraints=False)" in w for w in model.warnings) == 4
