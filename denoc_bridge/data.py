"""Preallocated work buffers of the recursive algorithms.

A :class:`Data` belongs to one model (same number of links and DOF).  Its
arrays are scratch space: the algorithms overwrite them and return their
results as new arrays, so no result depends on which function ran before.
Pass the same ``Data`` to repeated calls to avoid re-allocating the buffers.
"""

from __future__ import annotations

import numpy as np

from .errors import InputError

__all__ = ["Data"]


class Data:
    """Work buffers for a :class:`~denoc_bridge.model.Model` (see the module docstring)."""

    def __init__(self, model):
        L, nv, s = model.n_links, model.nv, model.n_modules
        self.n_links, self.nv, self.n_modules = L, nv, s
        # joint kinematics: A_{k,b} = (E_k, r_k), rows of P_k
        self.E = np.zeros((L, 3, 3))
        self.r = np.zeros((L, 3))
        self.P = np.zeros((nv, 6))
        # inverse dynamics: twists, twist rates, wrenches (000 Table 1)
        self.t = np.zeros((L, 6))
        self.tdot = np.zeros((L, 6))
        self.w = np.zeros((L, 6))
        # composite / articulated module masses and the factors of the GIM
        self.Mhat = np.zeros((L, 6, 6))
        self.PsiHat = np.zeros((nv, 6))
        self.Psi = np.zeros((nv, 6))
        self.Ihat = np.zeros((nv, 6))
        self.IhatInv = np.zeros((nv, 6))
        # block reverse Gaussian elimination (000 Table 3)
        self.phi = np.zeros(nv)
        self.phihat = np.zeros(nv)
        self.phitilde = np.zeros(nv)
        self.eta = np.zeros((L, 6))
        self.mu = np.zeros((L, 6))
        self.zeros_nv = np.zeros(nv)
        # small scratch
        self.RJ = np.zeros((3, 3))
        self.pJ = np.zeros(3)
        self.tmpR = np.zeros((3, 3))

    def check(self, model) -> "Data":
        if (self.n_links, self.nv, self.n_modules) != (model.n_links, model.nv, model.n_modules):
            raise InputError(
                f"data was created for a model with {self.n_links} links and nv={self.nv}, "
                f"not for '{model.name}' ({model.n_links} links, nv={model.nv})"
            )
        return self
