"""Exceptions raised by denoc_bridge.

Every exception names the offending joint, link, element or argument.  All of
them derive from :class:`DenocError`, so ``except denoc_bridge.DenocError``
catches every user-facing failure; each also derives from the matching builtin
(``ValueError``, ``TypeError``, ``LookupError``) so generic handlers still work.
"""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

import numpy as np


class DenocError(Exception):
    """Base class of every error raised on purpose by denoc_bridge."""


class URDFError(DenocError, ValueError):
    """A URDF document cannot be turned into a model (names the element)."""


class ModelError(DenocError, ValueError):
    """A model is structurally invalid or uses an unsupported feature."""


class URDFModelError(URDFError, ModelError):
    """A URDF document describes a model that contradicts itself (a limit, ``<dynamics>`` or
    ``<mimic>`` value no robot can have); both a :class:`URDFError` and a :class:`ModelError`."""


class InputError(DenocError, ValueError):
    """An argument of an algorithm has a wrong shape or non-finite values."""


class NameLookupError(InputError, KeyError):
    """A link, joint or frame name that the model does not have (also a :class:`KeyError`)."""

    __str__ = BaseException.__str__  # the message as written, not KeyError's quoted repr


class InputTypeError(InputError, TypeError):
    """An argument of an algorithm has a wrong type or dtype."""


class ResourceError(InputError, MemoryError):
    """A request needs more memory than this process can get (refused before allocating).

    Attributes
    ----------
    needed, available : int
        The bytes the request would allocate, and the bytes available (the smallest of the
        machine's available memory, ``ulimit -v`` and a container's limit).
    """

    def __init__(self, message: str, needed: int = 0, available: int = 0) -> None:
        super().__init__(message)
        self.needed = needed
        self.available = available


class SingularInertiaError(DenocError, np.linalg.LinAlgError):
    """The articulated inertia seen by a joint is singular (e.g. a massless leaf).

    Attributes
    ----------
    joint : str
        Name of the joint whose articulated inertia ``I_hat`` (001 eq. A.4)
        is not positive definite.
    link : str
        Name of the link moved by that joint.
    """

    def __init__(self, message: str, joint: str = "", link: str = ""):
        super().__init__(message)
        self.joint = joint
        self.link = link


class RobotNotFoundError(DenocError, LookupError):
    """A robot name is neither a file nor a known example-robot-data robot."""


class URDFFileNotFoundError(DenocError, FileNotFoundError):
    """A URDF path names no file; the message names the path and suggests a close file name in
    that folder, or :func:`~denoc_bridge.load_robot` for an example-robot-data name.  Also a
    :class:`FileNotFoundError`, so ``except FileNotFoundError`` still catches it."""


class PhysicsWarning(UserWarning):
    """A model was accepted although some of its inertias are not physical.

    Pinocchio accepts such files; denoc_bridge loads them too (use
    ``load_urdf(..., strict=True)`` to refuse them) and lists each problem in
    ``model.warnings``.
    """


class SimulationError(DenocError, ArithmeticError):
    """A simulation stopped because its state became invalid (not finite, or an articulated
    inertia singular).

    Attributes
    ----------
    time : float
        Simulated time of the step that failed.
    joint : str
        The joint whose coordinate, velocity or acceleration went bad first ('' if unknown).
    trajectory : Trajectory
        What was computed up to the last valid state.
    """

    def __init__(
        self,
        message: str,
        time: float = float("nan"),
        joint: str = "",
        trajectory: Any = None,  # a Trajectory (denoc_bridge.simulation: a layer above this module)
    ) -> None:
        super().__init__(message)
        self.time = time
        self.joint = joint
        self.trajectory = trajectory


def outside_level() -> int:
    """The ``stacklevel`` for a ``warnings.warn`` in the function that calls this one that names
    the first frame outside the package: the user's call, however deep inside the package the
    warning is raised (``simulate`` -> the contact run -> its start check, say)."""
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and str(frame.f_globals.get("__name__", "")).split(".")[0] == "denoc_bridge":
        frame = frame.f_back
        level += 1
    return level
