"""The benchmark chain in the three engines: denoc_bridge, Pinocchio and MuJoCo.

A spatial serial chain of n revolute joints alternating about the x and y
axes, 0.1 m apart along z, each link 1 kg at (0, 0, 0.05) with the diagonal
inertia (1e-3, 1e-3, 5e-4) about its centre of mass
(:func:`denoc_bridge.io.robots.serial_chain`).  The benchmark checks that the
three give the same accelerations before it times them.

The builders live in :mod:`denoc_bridge.benchmarking` (so that ``denoc-bridge bench``
runs from an installed package); this module re-exports them for the scripts here.
"""

from __future__ import annotations

from denoc_bridge.benchmarking import INERTIA, LENGTH, MASS, mujoco_chain, mujoco_forward, pinocchio_chain

__all__ = ["LENGTH", "MASS", "INERTIA", "pinocchio_chain", "mujoco_chain", "mujoco_forward"]
