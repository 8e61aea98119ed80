"""Kinematic modules: the decomposition of a tree of links into maximal serial chains.

000 §1 (Fig. 1) and 002 §A.1-A.2: a module ``M_i`` is a set of serially
connected links ``1^i .. eta^i``.  A module ends at a link with zero or several
children, and every child of a branching link starts a new module; a link
attached to the base starts a module whose parent is the base ``M_0``.

Links are numbered depth first (parent before child, a chain's links
consecutive), so each module is a contiguous range of link indices and the
parent module of ``M_i`` has a smaller index than ``M_i``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["Module", "decompose_into_modules"]


@dataclass(frozen=True)
class Module:
    """One kinematic module (a read-only view built from the model's arrays).

    Attributes
    ----------
    index : int
        Module number ``i`` (0-based; the papers number from 1).
    parent : int
        Index of the parent module ``beta``, or -1 when the module emanates from
        the base ``M_0``.
    links : range
        Indices of the module's links ``1^i .. eta^i`` in the model.
    link_names, joint_names : tuple of str
        Names of those links and of the joints that move them.
    children : tuple of int
        Indices of the modules that emanate from the module's last link.
    v_start, nv : int
        The module's degrees of freedom are ``v[v_start : v_start + nv]``.
    """

    index: int
    parent: int
    links: range
    link_names: tuple
    joint_names: tuple
    children: tuple
    v_start: int
    nv: int

    @property
    def n_links(self) -> int:
        """Number of links ``eta^i`` of the module."""
        return len(self.links)

    @property
    def v_slice(self) -> slice:
        return slice(self.v_start, self.v_start + self.nv)


def decompose_into_modules(parent: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Split links numbered depth first into modules.

    Parameters
    ----------
    parent : (n_links,) int array
        ``parent[k]`` is the parent link of link k, -1 for the base; ``parent[k] < k``.

    Returns
    -------
    module_start, module_end, module_parent, link_module : int arrays
        Module i holds links ``module_start[i] .. module_end[i] - 1``; its parent
        module is ``module_parent[i]`` (-1 for the base); ``link_module[k]`` is
        the module of link k.
    """
    parent = np.asarray(parent, dtype=np.int64)
    n = parent.shape[0]
    n_children = np.zeros(n, dtype=np.int64)
    for k in range(n):
        if parent[k] >= 0:
            n_children[parent[k]] += 1
    starts = [k for k in range(n) if parent[k] < 0 or n_children[parent[k]] != 1]
    module_start = np.array(starts, dtype=np.int64)
    module_end = np.array(starts[1:] + [n] if n else [], dtype=np.int64)
    link_module = np.empty(n, dtype=np.int64)
    for i, (a, b) in enumerate(zip(module_start, module_end)):
        link_module[a:b] = i
    module_parent = np.array([link_module[parent[a]] if parent[a] >= 0 else -1 for a in module_start], dtype=np.int64)
    # every module is a serial chain: link k + 1 of a module is the child of link k
    for a, b in zip(module_start, module_end):
        for k in range(a + 1, b):
            if parent[k] != k - 1:
                raise ValueError(f"links are not numbered depth first (link {k} in module starting at {a})")
    return module_start, module_end, module_parent, link_module
