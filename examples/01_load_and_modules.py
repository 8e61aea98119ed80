"""Load a robot, print its kinematic modules, and run the DeNOC dynamics.

python examples/01_load_and_modules.py [ROBOT]     (default: panda)
"""

import sys

import numpy as np

import denoc_bridge as db
from denoc_bridge.cli import module_tree
from denoc_bridge.io.robots import load_robot

robot = sys.argv[1] if len(sys.argv) > 1 else "panda"
model = load_robot(robot)
print(model)
print(module_tree(model))

rng = np.random.default_rng(0)
q = db.random_configuration(model, rng)
v = rng.standard_normal(model.nv)
a = rng.standard_normal(model.nv)

tau = db.inverse_dynamics(model, q, v, a)  # 000 Table 1
M = db.mass_matrix(model, q)  # 000 eqs. 16-17
a_back = db.forward_dynamics(model, q, v, tau)  # 000 Table 3 (O(n))
Ubar, Dbar = db.udut(model, q)  # module-level block factors (002)
print("tau =", np.round(tau, 4))
print("forward dynamics recovers a: max |a - FD(ID(a))| =", float(np.abs(a_back - a).max()))
print("I = Ubar Dbar Ubar^T: max error =", float(np.abs(Ubar @ Dbar @ Ubar.T - M).max()))
