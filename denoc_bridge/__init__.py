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

from . import generators, loops, mimic, sweeps
from ._version import __version__
from .algorithms import (
    center_of_mass,
    energies,
    forward_dynamics,
    forward_kinematics,
    gravity_torques,
    inverse_dynamics,
    inverse_mass_matrix,
    inverse_udut,
    kinetic_energy,
    mass_matrix,
    nonlinear_effects,
    potential_energy,
    tree_forward_dynamics,
    tree_inverse_dynamics,
    udut,
)
from .algorithms.reference import denoc_matrices, uncoupled_newton_euler
from .configuration import difference, integrate, interpolate, neutral_configuration, random_configuration
from .data import Data
from .errors import (
    DenocError,
    InputError,
    InputTypeError,
    ModelError,
    PhysicsWarning,
    RobotNotFoundError,
    SimulationError,
    SingularInertiaError,
    URDFError,
)
from .joints import JointType
from .mimic import MimicModel
from .model import Model
from .modules import Module
from .motions import cycloidal_motion, feedforward, trajectory_torques
from .pinocchio_io import from_pinocchio, to_pinocchio
from .robots import load_robot
from .simulation import simulate, simulate_batch
from .sweeps import SweepResult, sweep
from .trajectory import Trajectory
from .urdf import load_urdf

__all__ = [
    "__version__",
    "load_robot",
    "Data",
    "DenocError",
    "InputError",
    "InputTypeError",
    "JointType",
    "MimicModel",
    "Model",
    "ModelError",
    "Module",
    "PhysicsWarning",
    "RobotNotFoundError",
    "SimulationError",
    "SingularInertiaError",
    "Trajectory",
    "URDFError",
    "center_of_mass",
    "cycloidal_motion",
    "denoc_matrices",
    "energies",
    "feedforward",
    "difference",
    "forward_dynamics",
    "forward_kinematics",
    "from_pinocchio",
    "gravity_torques",
    "integrate",
    "interpolate",
    "inverse_dynamics",
    "inverse_mass_matrix",
    "inverse_udut",
    "kinetic_energy",
    "load_urdf",
    "mass_matrix",
    "neutral_configuration",
    "nonlinear_effects",
    "potential_energy",
    "random_configuration",
    "simulate",
    "simulate_batch",
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
