"""Simulation of trees, mimic models and closed loops: fixed-step compiled runs and adaptive
methods, trajectories and their energies, prescribed motions."""

from denoc_bridge.simulation.api import simulate, simulate_batch
from denoc_bridge.simulation.common import ADAPTIVE_METHODS, FIXED_STEP_METHODS

__all__ = ["simulate", "simulate_batch", "FIXED_STEP_METHODS", "ADAPTIVE_METHODS"]
