"""Joint data that contradicts itself (issue 25, item 3): each case raises a ModelError naming
the joint, or, where real robots carry it (a <mimic> of a missing joint in
example-robot-data's alex_psyonic_hands.urdf), loads with a PhysicsWarning naming it; and
Pinocchio 4.1 does what the case records (the reliability table's third column)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import load_quietly
from hostile_cases import CONTRADICTIONS, our_outcome, pin_outcome, two_joints

import denoc_bridge as db


@pytest.mark.parametrize("case", CONTRADICTIONS, ids=[c.name for c in CONTRADICTIONS])
def test_contradiction_is_named(case):
    outcome, result, caught = our_outcome(case.doc, mimic=case.mimic)
    if case.ours in ("loads", "warns"):
        assert outcome == case.ours, f"expected the document to {case.ours}, got {outcome}: {result}"
        if outcome == "warns":
            joint = re.search(r"<mimic joint=\"(\w+)\"", case.doc)
            assert any("mimic joint 'j" in str(w.message) for w in caught), [str(w.message) for w in caught]
            assert joint and any(joint.group(1) in n for n in result.warnings)
    else:
        assert outcome == "refuses", f"loaded a model that contradicts itself ({case.name})"
        assert isinstance(result, case.exc) and isinstance(result, db.DenocError), type(result)
        assert re.search(case.ours, str(result)), str(result)
    assert pin_outcome(case.doc, mimic=case.mimic)[0] == case.pin, "Pinocchio 4.1's behaviour changed"


def test_model_refuses_crossed_or_nan_limits_by_joint(panda):
    lo, hi = np.array(panda.lower_limit), np.array(panda.upper_limit)
    lo[3], hi[3] = 0.5, -0.5
    with pytest.raises(db.ModelError, match=r"joint 'panda_joint4': the position limit \[0.5, -0.5\] has its lower"):
        panda.replace(lower_limit=lo, upper_limit=hi)
    lo[3], hi[3] = np.nan, 1.0
    with pytest.raises(db.ModelError, match=r"joint 'panda_joint4'.*is NaN"):
        panda.replace(lower_limit=lo, upper_limit=hi)
    friction = np.zeros(panda.nv)
    friction[8] = -0.1
    with pytest.raises(db.ModelError, match=r"friction .*joint 'panda_finger_joint2'.* negative"):
        panda.replace(friction=friction)


def test_real_robot_with_mimic_of_missing_joint_loads_and_says_so():
    """alex_psyonic_hands.urdf mimics joints 'index_q1', ... that it does not have (Pinocchio
    loads it; with mimic=True both refuse)."""
    from conftest import erd_robot_dir

    path = f"{erd_robot_dir()}/alex_description/urdf/alex_psyonic_hands.urdf"
    with pytest.warns(db.PhysicsWarning, match=r"8 <mimic> relation\(s\).*mimicked joint '\w+_q1' is not a joint"):
        model = db.load_urdf(path)
    assert sum("is not a joint of the model" in w for w in model.warnings) == 8
    assert load_quietly(path).nv == model.nv
    with pytest.raises(db.ModelError, match=r"mimic joint 'Left_index_q2': the mimicked joint 'index_q1'"):
        db.load_urdf(path, mimic=True)


def test_limits_lower_equal_upper_stay_no_limit():
    model = db.load_urdf(two_joints('<limit effort="1" velocity="1"/>'))
    assert model.lower_limit[0] == model.upper_limit[0] == 0.0
