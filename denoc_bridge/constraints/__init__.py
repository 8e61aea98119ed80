"""Holonomic constraints on a tree: URDF ``<mimic>`` couplings and loop closures (cut joints),
solved on top of the tree algorithms of :mod:`denoc_bridge.algorithms`."""
