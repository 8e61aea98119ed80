"""Dynamics algorithms on the module graph.

* :mod:`.dynamics`: the recursive O(n) algorithms (compiled kernels), the public API;
* :mod:`.reference`: the explicit DeNOC matrices and the readable module-level
  formulation that the recursive algorithms are tested against.
"""

from .dynamics import (
    forward_dynamics,
    gravity_torques,
    inverse_dynamics,
    inverse_mass_matrix,
    inverse_udut,
    mass_matrix,
    nonlinear_effects,
    tree_forward_dynamics,
    tree_inverse_dynamics,
    udut,
)
from .kinematics import center_of_mass, energies, forward_kinematics, kinetic_energy, potential_energy

__all__ = [
    "center_of_mass",
    "energies",
    "forward_kinematics",
    "kinetic_energy",
    "potential_energy",
    "forward_dynamics",
    "gravity_torques",
    "inverse_dynamics",
    "inverse_mass_matrix",
    "inverse_udut",
    "mass_matrix",
    "nonlinear_effects",
    "tree_forward_dynamics",
    "tree_inverse_dynamics",
    "udut",
]
