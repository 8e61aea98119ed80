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
from denoc_bridge.errors import ModelError, PhysicsWarning
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


def test_the_posture_hold_holds_no_free_joint() -> None:
    """quadruped.xml's ball is a second free body: the posture hold holds neither free joint."""
    model = _load("suite/quadruped.xml", constraints=False)
    hold = db.posture_hold(model, model.rest_configuration)
    free = [k for k in range(model.n_links) if model.joint_type[k] == int(db.JointType.FREEFLYER)]
    assert [model.joint_names[k] for k in free] == ["root", "ball_root"]
    for k in free:
        assert np.all(hold.kp[model.idx_v[k] : model.idx_v[k] + 6] == 0.0)
    assert np.count_nonzero(hold.kp) == model.nv - 12


def test_quadruped_coupling_of_three_joints_is_named() -> None:
    """quadruped.xml holds each leg's three joints to a sum (a fixed tendon of three joints):
    refused by name; its tree, loaded with constraints=False, agrees with MuJoCo."""
    rel = "suite/quadruped.xml"
    with pytest.raises(ModelError, match="<tendon> equality 'coupling_front_left': tendon .* has 3 term"):
        _load(rel)
    model = _load(rel, constraints=False)
    assert model.nv == 28 and sum("is not applied (constraints=False)" in w for w in model.warnings) == 4
    report = compare_with_mujoco(model, samples=3, tol=1e-8)
    assert report.passed, report.table()
