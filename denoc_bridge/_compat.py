"""Module paths of 0.1, kept working after the package was laid out in layers.

``import denoc_bridge.model`` (or ``db.model``) still gives the module that now lives at
``denoc_bridge.multibody.model``, with a :class:`DeprecationWarning` that names the new path.
``denoc_bridge.loops``, ``denoc_bridge.mimic`` and ``denoc_bridge.generators`` are public names
of the package (``db.loops`` & co.) and stay without a warning.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings

#: old module path (below ``denoc_bridge.``) -> new one
MOVED = {
    "joints": "multibody.joints",
    "modules": "multibody.modules",
    "model": "multibody.model",
    "data": "multibody.data",
    "configuration": "algorithms.configuration",
    "urdf": "io.urdf",
    "pinocchio_io": "io.pinocchio_io",
    "robots": "io.robots",
    "loop_simulation": "simulation.loops",
    "mimic_simulation": "simulation.mimic",
    "trajectory": "simulation.trajectory",
    "motions": "simulation.motions",
    "plots": "viz.plots",
}
#: public submodules of the package, at their old paths without a warning
PUBLIC = {"loops": "constraints.loops", "mimic": "constraints.mimic", "generators": "io.generators"}

_ROOT = "denoc_bridge"


def resolve(name: str, stacklevel: int = 3):
    """The module that the old path ``denoc_bridge.<name>`` stands for (warning if deprecated)."""
    if name in MOVED:
        warnings.warn(
            f"denoc_bridge.{name} moved to denoc_bridge.{MOVED[name]} (the old path is deprecated)",
            DeprecationWarning,
            stacklevel=stacklevel,
        )
        return importlib.import_module(f"{_ROOT}.{MOVED[name]}")
    return importlib.import_module(f"{_ROOT}.{PUBLIC[name]}")


class _Alias(importlib.abc.Loader):
    def __init__(self, name: str):
        self.name = name

    def create_module(self, spec):
        return resolve(self.name, stacklevel=6)

    def exec_module(self, module):
        pass


class _Finder(importlib.abc.MetaPathFinder):
    """Finds ``denoc_bridge.<old name>`` (only those of :data:`MOVED` and :data:`PUBLIC`)."""

    def find_spec(self, fullname, path=None, target=None):
        root, _, name = fullname.partition(".")
        if root != _ROOT or name not in MOVED and name not in PUBLIC:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(name))


def install() -> None:
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())
