"""Robots in and out: URDF files, Pinocchio models, example-robot-data names and the papers'
robots generated as URDF."""
