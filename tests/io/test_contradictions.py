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
    outcome, result, caught = our_outcome(case.doc, mimic=case.mimic, strict=case.strict)
    if case.ours in ("loads", "warns"):
        assert outcome == case.ours, f"expected the document to {case.ours}, got {outcome}: {result}"
        if outcome == "warns":  # a PhysicsWarning naming the joint or link, also in model.warnings
            physics = [str(w.message) for w in caught if issubclass(w.category, db.PhysicsWarning)]
            named = r"(mimic joint|joint|link) '(j\d|a)'"
            assert any(re.search(named, m) for m in physics), physics
            tree = result.tree if isinstance(result, db.MimicModel) else result
            assert any(re.search(named, n) for n in tree.warnings), tree.warnings
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


def _pin_model(doc, mimic=False):
    outcome, pm = pin_outcome(doc, mimic=mimic)
    assert outcome == "loads", pm
    return pm


def _same_dynamics_as_pinocchio(model, pm, seed=3):
    import pinocchio as pin

    rng = np.random.default_rng(seed)
    q = db.random_configuration(model, rng)
    v, tau = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    a = db.forward_dynamics(model, q, v, tau)
    ref = pin.aba(pm, pm.createData(), q, v, tau)
    np.testing.assert_allclose(a, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("jtype", ["revolute", "prismatic"])
def test_limit_lower_above_upper_loads_as_no_limit_with_a_warning(jtype):
    """Robot collections write <limit lower="1" upper="-1"> for "no limit" (their simulator reads
    lower > upper so); Pinocchio loads it.  Here: a PhysicsWarning naming the joint, and no limit
    anywhere: lower_limit/upper_limit, random_configuration, the joint stops of a simulation."""
    doc = two_joints('<limit lower="0.5" upper="0.25" effort="1" velocity="1"/>', jtype=jtype)
    with pytest.warns(
        db.PhysicsWarning, match=r"joint 'j1' <limit>: lower=\"0.5\" is above upper=\"0.25\": the limit is ignored"
    ):
        model = db.load_urdf(doc)
    assert (model.lower_limit[0], model.upper_limit[0]) == (-np.inf, np.inf)
    assert (model.lower_limit[1], model.upper_limit[1]) == (-1.0, 1.0)  # the other joint keeps its limit
    assert any("joint 'j1' <limit>" in w and "ignored" in w for w in model.warnings)
    q = np.array([db.random_configuration(model, seed)[0] for seed in range(200)])
    assert q.min() < 0.0 and q.max() > 0.6  # drawn from the unlimited range, not [0.25, 0.5]
    _same_dynamics_as_pinocchio(model, _pin_model(doc))
    # no joint stop acts: a push through +-1 goes on as in the model without any limit
    free = model.replace(lower_limit=[-np.inf, -1.0], upper_limit=[np.inf, 1.0])
    q0, v0 = np.zeros(2), np.array([4.0, 0.0])
    pushed = db.simulate(model, q0, v0, 1.0, 1e-3, progress=False)
    assert pushed.limit_work is None or pushed.limit_work[-1] == 0.0
    assert np.array_equal(pushed.q, db.simulate(free, q0, v0, 1.0, 1e-3, progress=False).q)
    assert pushed.q[:, 0].max() > 0.6 and pushed.q[:, 0].min() < 0.2


def test_contradicting_values_pinocchio_loads_are_ignored_as_pinocchio_reads_them():
    """A NaN or infinite number in an <inertial>: Pinocchio drops the <inertial> (in its origin or
    mass) or the rotational inertia (in the inertia); a negative damping: kept by Pinocchio, whose
    dynamics ignore damping, and 0 here.  Each loads with a PhysicsWarning naming it, with
    Pinocchio's masses and accelerations."""
    inertial = '<inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>'
    shifted = (
        '<inertial><origin xyz="0.1 0.2 0.3"/><mass value="2"/>'
        '<inertia ixx="1" iyy="2" izz="3" ixy="0.1" ixz="0" iyz="0"/></inertial>'
    )
    j2 = '<child link="b"/><axis xyz="0 0 1"/>'
    base = (
        two_joints()
        .replace(inertial, shifted, 1)
        .replace(j2, '<child link="b"/><origin xyz="0.3 0 0"/><axis xyz="0 1 0"/>')
    )
    for bad, message in (
        (
            base.replace('value="2"', 'value="nan"'),
            r"link 'a' <inertial> <mass>.*not finite: the <inertial> is ignored",
        ),
        (
            base.replace('xyz="0.1 0.2 0.3"', 'xyz="0.1 inf 0.3"'),
            r"link 'a' <inertial> <origin>.*the <inertial> is ignored",
        ),
        (base.replace('iyy="2"', 'iyy="-inf"'), r"link 'a' <inertial> <inertia>.*the rotational inertia is ignored"),
        (
            base.replace("</joint>", '<dynamics damping="-2"/></joint>', 1),
            r"joint 'j1' <dynamics>: damping=\"-2.0\" is negative",
        ),
    ):
        with pytest.warns(db.PhysicsWarning, match=message):
            model = db.load_urdf(bad)
        pm = _pin_model(bad)
        assert np.allclose(model.mass, [pm.inertias[k].mass for k in (1, 2)])
        _same_dynamics_as_pinocchio(model, pm)
        with pytest.raises(db.ModelError if "dynamics" in message else db.URDFModelError):
            if "dynamics" in message:
                db.Model.replace(model, damping=[-2.0, 0.0])  # the API still refuses it
            else:
                db.load_urdf(bad, strict=True)  # strict refuses what it would ignore
    assert model.damping[0] == 0.0


def test_a_mimic_on_a_planar_joint_is_ignored_as_in_pinocchio():
    doc = two_joints('<limit lower="-1" upper="1" effort="1" velocity="1"/><mimic joint="j2"/>', jtype="planar")
    with pytest.warns(db.PhysicsWarning, match=r"joint 'j1' \(planar\): its <mimic> is ignored"):
        model = db.load_urdf(doc, mimic=True)
    pm = _pin_model(doc, mimic=True)
    assert (model.nq, model.nv) == (pm.nq, pm.nv) == (5, 4) and not model.tree.mimic
