"""denoc_bridge: DeNOC recursive dynamics on kinematic modules, for the Pinocchio ecosystem.

Load a robot, look at its kinematic modules, run the papers' algorithms and
compare them with Pinocchio::

    import denoc_bridge as db
    model = db.load_urdf("panda.urdf")
    tau = db.inverse_dynamics(model, q, v, a)      # == pin.rnea
    M = db.mass_matrix(model, q)                   # == pin.crba
    a = db.forward_dynamics(model, q, v, tau)      # == pin.aba
    Minv = db.inverse_mass_matrix(model, q)        # == pin.computeMinverse
    U, D = db.udut(model, q)                       # module-level block factors (002)
"""

import types as _types

from denoc_bridge import _compat, sweeps
from denoc_bridge._version import __version__
from denoc_bridge.algorithms.configuration import (
    difference,
    integrate,
    interpolate,
    neutral_configuration,
    random_configuration,
)
from denoc_bridge.algorithms.dynamics import inverse_udut, tree_forward_dynamics, tree_inverse_dynamics, udut
from denoc_bridge.algorithms.kinematics import (
    center_of_mass,
    energies,
    forward_kinematics,
    kinetic_energy,
    link_velocities,
    potential_energy,
)
from denoc_bridge.algorithms.reference import denoc_matrices, uncoupled_newton_euler
from denoc_bridge.constraints import loops, mimic
from denoc_bridge.dynamics import (
    forward_dynamics,
    forward_dynamics_derivatives,
    forward_dynamics_jvp,
    forward_dynamics_vjp,
    gravity_torques,
    inverse_dynamics,
    inverse_dynamics_derivatives,
    inverse_mass_matrix,
    mass_matrix,
    nonlinear_effects,
)
from denoc_bridge.errors import (
    DenocError,
    InputError,
    InputTypeError,
    ModelError,
    NameLookupError,
    PhysicsWarning,
    ResourceError,
    RobotNotFoundError,
    SimulationError,
    SingularInertiaError,
    URDFError,
    URDFFileNotFoundError,
    URDFModelError,
)
from denoc_bridge.io import generators
from denoc_bridge.io.collision import collision_points
from denoc_bridge.io.mjcf import load_mjcf
from denoc_bridge.io.pinocchio_io import from_pinocchio, to_pinocchio
from denoc_bridge.io.robots import load_robot
from denoc_bridge.io.srdf import srdf_reference_configurations
from denoc_bridge.io.urdf import load_urdf
from denoc_bridge.linearization import linearize
from denoc_bridge.multibody.contact import ContactPoint, Ground, contact_point
from denoc_bridge.multibody.data import Data, get_num_threads, set_num_threads
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.model import Model
from denoc_bridge.multibody.modules import Module
from denoc_bridge.simulation import simulate, simulate_batch
from denoc_bridge.simulation.hold import PostureHold, posture_hold
from denoc_bridge.simulation.motions import cycloidal_motion, feedforward, trajectory_torques
from denoc_bridge.simulation.trajectory import Trajectory
from denoc_bridge.sweeps import SweepResult, sweep

__all__ = [
    "__version__",
    "load_robot",
    "Data",
    "DenocError",
    "InputError",
    "InputTypeError",
    "NameLookupError",
    "JointType",
    "MimicModel",
    "Model",
    "ModelError",
    "Module",
    "PhysicsWarning",
    "ResourceError",
    "RobotNotFoundError",
    "SimulationError",
    "SingularInertiaError",
    "Trajectory",
    "URDFError",
    "URDFFileNotFoundError",
    "URDFModelError",
    "center_of_mass",
    "cycloidal_motion",
    "denoc_matrices",
    "energies",
    "feedforward",
    "difference",
    "forward_dynamics",
    "forward_dynamics_derivatives",
    "forward_dynamics_jvp",
    "forward_dynamics_vjp",
    "forward_kinematics",
    "from_pinocchio",
    "get_num_threads",
    "gravity_torques",
    "integrate",
    "interpolate",
    "inverse_dynamics",
    "inverse_dynamics_derivatives",
    "inverse_mass_matrix",
    "inverse_udut",
    "kinetic_energy",
    "linearize",
    "link_velocities",
    "load_mjcf",
    "load_urdf",
    "mass_matrix",
    "neutral_configuration",
    "nonlinear_effects",
    "potential_energy",
    "random_configuration",
    "set_num_threads",
    "simulate",
    "simulate_batch",
    "srdf_reference_configurations",
    "Ground",
    "ContactPoint",
    "contact_point",
    "PostureHold",
    "posture_hold",
    "collision_points",
    "sweep",
    "SweepResult",
    "to_pinocchio",
    "trajectory_torques",
    "tree_forward_dynamics",
    "tree_inverse_dynamics",
    "udut",
    "uncoupled_newton_euler",
    "generators",
    "loops",
    "mimic",
    "sweeps",
]


_compat.install()


def __getattr__(name: str) -> _types.ModuleType:
    """``db.pin`` (Pinocchio's calling convention, imported on first use: it imports Pinocchio), and
    ``db.model`` & co.: the module paths of 0.1 (deprecated; see :mod:`denoc_bridge._compat`)."""
    if name == "pin":
        import importlib

        return importlib.import_module("denoc_bridge.pin")
    if name in _compat.MOVED:
        return _compat.resolve(name)
    raise AttributeError(f"module 'denoc_bridge' has no attribute {name!r}")
