"""Hand-written MJCF models for the MJCF tests: each joint type, multi-joint bodies, armature;
and :func:`random_poses`, MuJoCo's kinematics next to ours at random configurations."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import mujoco
import numpy as np

import denoc_bridge as db
from denoc_bridge.io import mujoco_layout as mjl


def random_poses(model: Any, m: mujoco.MjModel, seed: int, count: int = 3) -> Iterator[tuple[Any, Any, Any]]:
    """``(d, R, p)`` at ``count`` random configurations of ``model``: MuJoCo's data after
    ``mj_kinematics`` at the same configuration, and our link placements."""
    d = mujoco.MjData(m)
    rng = np.random.default_rng(seed)
    for _ in range(count):
        q = db.random_configuration(model, rng)
        d.qpos[:] = mjl.q_to_mujoco_qpos(model, q)
        mujoco.mj_kinematics(m, d)
        R, p = db.forward_kinematics(model, q)
        yield d, R, p


#: every joint type, off-centre anchors, refs, a jointless child body, armature, damping, springs
JOINTS = """
<mujoco model="joints">
  <compiler angle="radian"/>
  <option gravity="0.3 -0.2 -9.7"/>
  <worldbody>
    <body name="base" pos="0.1 0.2 1.0" euler="0.3 -0.2 0.1">
      <joint name="hinge1" type="hinge" axis="0.2 1 0.3" pos="0.05 -0.02 0.1" ref="0.4" armature="0.05"
             damping="0.3" stiffness="2" springref="0.7" limited="true" range="-1 2" frictionloss="0.1"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0.1" size="0.05"/>
      <body name="slider" pos="0.4 0 0.1" quat="0.9 0.1 -0.3 0.2">
        <joint name="slide1" type="slide" axis="1 0.5 0" ref="0.2" armature="0.2" stiffness="5" springref="0.1"/>
        <geom type="box" size="0.1 0.05 0.02" pos="0.1 0 0" euler="0.2 0.1 0"/>
        <body name="welded" pos="0.2 0.1 0" euler="0 0.5 0">
          <geom type="ellipsoid" size="0.05 0.08 0.03" pos="0.05 0 0" mass="0.7"/>
          <body name="ball_body" pos="0.1 0 0">
            <joint name="ball1" type="ball" pos="0.02 0.01 -0.03" armature="0.01" damping="0.2" stiffness="1.5"/>
            <geom type="cylinder" fromto="0 0 0 0 0.3 0.1" size="0.04"/>
          </body>
        </body>
      </body>
      <body name="multi" pos="0 0.3 0" euler="0.1 0.2 0.3">
        <joint name="mx" type="hinge" axis="1 0 0" pos="0 0 0.05" ref="-0.3"/>
        <joint name="my" type="slide" axis="0 1 0.2" ref="0.1"/>
        <joint name="mz" type="hinge" axis="0 0.3 1" pos="0.02 0 0"/>
        <geom type="sphere" size="0.07" pos="0.1 0.02 0"/>
        <site name="tip" pos="0.2 0 0"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

#: a free-floating body with a limb: free joint, hinge, a body with two joints
FREE = """
<mujoco model="free">
  <worldbody>
    <body name="torso" pos="0.3 -0.1 1.2" euler="10 20 30">
      <freejoint name="root"/>
      <geom type="box" size="0.2 0.1 0.05"/>
      <body name="arm" pos="0.2 0 0">
        <joint name="shoulder_x" type="hinge" axis="1 0 0" armature="0.02"/>
        <joint name="shoulder_y" type="hinge" axis="0 1 0" pos="0.01 0 0"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
        <body name="hand" pos="0.3 0 0">
          <joint name="wrist" type="ball"/>
          <geom type="sphere" size="0.04" pos="0.05 0 0"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

#: a planar four-bar: crank, coupler and rocker, closed by a <connect> of the coupler's end
#: to the rocker's end (all hinges about y)
FOURBAR = """
<mujoco model="fourbar">
  <option gravity="0 0 -9.81"/>
  <worldbody>
    <body name="crank" pos="0 0 0">
      <joint name="j1" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.01"/>
      <body name="coupler" pos="0.2 0 0">
        <joint name="j2" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.5 0 0.3" size="0.01"/>
      </body>
    </body>
    <body name="rocker" pos="0.6 0 0">
      <joint name="j3" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.1 0 0.3" size="0.01"/>
    </body>
  </worldbody>
  <equality>
    <connect name="close" body1="coupler" body2="rocker" anchor="0.5 0 0.3"/>
  </equality>
</mujoco>
"""
