"""Preallocated work buffers of the recursions.

A :class:`Data` belongs to one model (same numbers of links, DOF and
modules).  Its arrays are scratch space: the algorithms overwrite them and
return their results as new arrays, so no result depends on which function ran
before.  Pass the same ``Data`` to repeated calls to reuse the buffers; without
one, each thread uses its own buffers per model (``Model.thread_work``), so
calls from several threads at once are safe.
"""

from __future__ import annotations

import numpy as np

from .errors import InputError
from .kernels import tables as T

__all__ = ["Data"]


class Data:
    """Work buffers for a :class:`~denoc_bridge.model.Model` (see the module docstring).

    ``work`` is the (rows, W) work array of :mod:`denoc_bridge.kernels.tables`
    (regions of rows per link, per DOF and per kinematic module).
    """

    def __init__(self, model):
        self.n_links, self.nq, self.nv, self.n_modules = model.n_links, model.nq, model.nv, model.n_modules
        self.work = T.aligned_empty((T.work_rows(self.n_links, self.nv, self.n_modules), T.W))

    def check(self, model) -> "Data":
        if (self.n_links, self.nq, self.nv, self.n_modules) != (model.n_links, model.nq, model.nv, model.n_modules):
            raise InputError(
                f"data was created for a model with {self.n_links} links and nv={self.nv}, "
                f"not for '{model.name}' ({model.n_links} links, nv={model.nv})"
            )
        return self

