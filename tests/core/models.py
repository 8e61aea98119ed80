"""The models the tests of the compiled core run on: random trees of every joint type, chains
of one joint type, three robots (by name, built once)."""

from __future__ import annotations

from functools import cache

import denoc_bridge as db
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.testing import random_model

#: a link whose only child is massless: its prismatic joint moves no inertia
MASSLESS_TIP = """<robot name="r">
  <link name="w"/>
  <link name="arm"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/>
  </inertial></link>
  <link name="tip"/>
  <joint name="shoulder" type="revolute"><parent link="w"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="wrist" type="prismatic"><parent link="arm"/><child link="tip"/><origin xyz="0 0 0.5"/>
    <axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""

RANDOM = [
    dict(seed=s, n_links=n, branching=b, n_roots=r, floating_base=fb)
    for s, n, b, r, fb in [
        (0, 1, 0.0, 1, False),
        (1, 5, 0.3, 1, True),
        (2, 12, 0.5, 2, False),
        (3, 12, 0.8, 3, True),
        (4, 9, 0.0, 1, True),
        (5, 20, 0.4, 1, False),
        (6, 30, 0.6, 2, True),
        (7, 70, 0.1, 1, False),
    ]
]
ONE_TYPE = [f"type{int(t)}-{s}" for t in JointType for s in (10, 11)]  # chains of one joint type
ROBOTS = ["panda", "talos", "solo12"]
MODELS = [f"random{i}" for i in range(len(RANDOM))] + ONE_TYPE + ROBOTS


@cache
def model_of(name: str) -> db.Model:
    if name.startswith("random"):
        return random_model(**RANDOM[int(name[6:])])
    if name.startswith("type"):
        t, s = name[4:].split("-")
        return random_model(int(s), 6, branching=0.3, joint_types=(JointType(int(t)),))
    return db.load_robot(name)
