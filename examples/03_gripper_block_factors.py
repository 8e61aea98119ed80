"""The 4-DOF gripper of 000 §3.1: GIM, block UDU^T factors and analytic inverse (002 eqs. A.19-A.22).

python examples/03_gripper_block_factors.py
"""

import numpy as np

import denoc_bridge as db
from denoc_bridge.io.robots import gripper4

model = gripper4()
q = np.radians([0.0, 0.0, 0.0, 90.0])  # theta_11, theta_12, theta_22, theta_13
np.set_printoptions(precision=4, suppress=True)

I = db.mass_matrix(model, q)
Ubar, Dbar = db.udut(model, q)
Ubar_inv, Dbar_inv = db.inverse_udut(model, q)
I_inv = db.inverse_mass_matrix(model, q)

print("modules:", [list(m.links) for m in model.modules], "(M1 = 1^1; M2 = 1^2, 2^2; M3 = 1^3)")
print("I x 1e4 (002 eq. A.19)\n", I * 1e4)
print("Ubar (A.20)\n", Ubar)
print("Dbar x 1e4 (A.20)\n", Dbar * 1e4)
print("Ubar^-1 (A.21)\n", Ubar_inv)
print("Dbar^-1 x 1e-4 (A.21)\n", Dbar_inv * 1e-4)
print("I^-1 = Ubar^-T Dbar^-1 Ubar^-1, x 1e-4 (A.22)\n", I_inv * 1e-4)
print("check I^-1 I = 1: max error", float(np.abs(I_inv @ I - np.eye(4)).max()))
