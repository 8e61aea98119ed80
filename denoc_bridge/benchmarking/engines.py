"""The benchmark chain in the three engines: denoc_bridge (:func:`denoc_bridge.io.robots.serial_chain`),
Pinocchio's and MuJoCo's own APIs."""

from __future__ import annotations

import numpy as np

LENGTH = 0.1  # m, between joints


MASS = 1.0  # kg per link


INERTIA = (1e-3, 1e-3, 5e-4)  # kg m^2 about the centre of mass


def pinocchio_chain(n: int):
    """The chain built with Pinocchio's own API (as a Pinocchio user would)."""
    import pinocchio as pin

    pm = pin.Model()
    parent = 0
    for k in range(n):
        jm = pin.JointModelRX() if k % 2 == 0 else pin.JointModelRY()
        placement = pin.SE3(np.eye(3), np.array([0.0, 0.0, LENGTH if k else 0.0]))
        parent = pm.addJoint(parent, jm, placement, f"joint{k:0{len(str(n - 1))}d}")
        pm.appendBodyToJoint(
            parent, pin.Inertia(MASS, np.array([0.0, 0.0, LENGTH / 2]), np.diag(INERTIA)), pin.SE3.Identity()
        )
    return pm


def mujoco_chain(n: int):
    """(MjModel, MjData) of the chain built with ``mujoco.MjSpec`` (MJCF text cannot nest
    thousands of bodies).  No geoms, so no contacts; gravity (0, 0, -9.81)."""
    import mujoco

    spec = mujoco.MjSpec()
    spec.option.gravity = [0.0, 0.0, -9.81]
    body = spec.worldbody
    for k in range(n):
        body = body.add_body(name=f"link{k}", pos=[0.0, 0.0, LENGTH if k else 0.0])
        body.mass = MASS
        body.ipos = [0.0, 0.0, LENGTH / 2]
        body.inertia = list(INERTIA)
        body.explicitinertial = True
        body.add_joint(
            name=f"joint{k}", type=mujoco.mjtJoint.mjJNT_HINGE, axis=[1.0, 0.0, 0.0] if k % 2 == 0 else [0.0, 1.0, 0.0]
        )
    model = spec.compile()
    return model, mujoco.MjData(model)


def mujoco_forward(model, data, q, v, tau) -> np.ndarray:
    """MuJoCo's joint accelerations for (q, v, tau) (``mj_forward``, ``qfrc_applied = tau``)."""
    import mujoco

    data.qpos[:] = q
    data.qvel[:] = v
    data.qfrc_applied[:] = tau
    mujoco.mj_forward(model, data)
    return data.qacc.copy()


def has_mujoco() -> bool:
    try:
        import mujoco  # noqa: F401
    except ImportError:
        return False
    return True
