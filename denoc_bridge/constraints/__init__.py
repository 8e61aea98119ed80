"""Holonomic constraints on a tree: URDF ``<mimic>`` couplings and loop closures (cut joints),
solved on top of the tree algorithms of :mod:`denoc_bridge.algorithms`.

Each kind is a set of rows on the tree's velocities (``J(q) v = 0``, ``J a = gamma``): ``mimic``
(constant rows K), ``loops`` (rows C(q) of the cut joints), ``mimic_loops`` (both stacked, on a
MimicModel whose tree has loops); ``solve`` is what they share (the Lagrange solve of stacked
rows, the rank, the partition, the Newton closure, the actuator torques)."""
