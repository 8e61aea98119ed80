"""Check every number against Pinocchio, in a few lines.

python examples/02_compare_with_pinocchio.py [ROBOT] [--floating]
"""

import sys

import numpy as np
import pinocchio as pin

import denoc_bridge as db
from denoc_bridge.io.robots import resolve_robot
from denoc_bridge.validation import compare_with_pinocchio

robot = next((a for a in sys.argv[1:] if not a.startswith("--")), "talos")
floating = "--floating" in sys.argv
path = resolve_robot(robot).urdf

model = db.load_urdf(path, floating_base=floating)
pin_model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
pin_data = pin_model.createData()

# the same q, v, a go to both libraries: the layouts are Pinocchio's
q = db.random_configuration(model, 1)
v = np.ones(model.nv)
a = np.linspace(-1, 1, model.nv)
tau = db.inverse_dynamics(model, q, v, a)
print("inverse dynamics vs pin.rnea:  max |diff| =", np.abs(tau - pin.rnea(pin_model, pin_data, q, v, a)).max())
print(
    "forward dynamics vs pin.aba:   max |diff| =",
    np.abs(db.forward_dynamics(model, q, v, tau) - pin.aba(pin_model, pin_data, q, v, tau)).max(),
)

# the full comparison (rnea, crba, aba, computeMinverse, oMi) over random states
report = compare_with_pinocchio(model, pin_model, samples=3)
print(report.table())
sys.exit(0 if report.passed else 1)
