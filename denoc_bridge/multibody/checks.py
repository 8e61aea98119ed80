"""Is this a denoc_bridge model?  The one test every public function makes of its ``model``
argument, and the message that says how to get a model from what was given instead."""

from __future__ import annotations

import os

from denoc_bridge.errors import InputTypeError

__all__ = ["ModelKind", "check_model", "is_pinocchio_object", "not_a_model"]


class ModelKind:
    """Base of every model kind (:class:`~denoc_bridge.Model`, :class:`~denoc_bridge.MimicModel`):
    what :func:`check_model` accepts."""

    __slots__ = ()


def check_model(model, name: str = "model") -> None:
    """Refuse anything but a denoc_bridge model (a :class:`Model` or a :class:`MimicModel`)."""
    if not isinstance(model, ModelKind):
        raise not_a_model(model, name)


def is_pinocchio_object(x) -> bool:
    """True for an instance of a Pinocchio class (a ``pinocchio.Model``, ``Data``, ...)."""
    return type(x).__module__.split(".")[0] == "pinocchio"


def not_a_model(model, name: str = "model") -> InputTypeError:
    """The error for a ``model`` argument that is not a denoc_bridge model, with how to get one:
    a Pinocchio model is converted by ``from_pinocchio``, a robot name or path is loaded."""
    kind = type(model)
    if is_pinocchio_object(model):
        got = f"a pinocchio.{kind.__name__}: convert it once with db.from_pinocchio(pin_model)"
    elif isinstance(model, (str, os.PathLike)):
        got = (
            f"{os.fspath(model)!r}: load it once with db.load_robot({os.fspath(model)!r}) (a robot name, "
            "generator or URDF path) or db.load_urdf(path)"
        )
    else:
        got = kind.__name__ if model is not None else "None"
    return InputTypeError(
        f"{name} must be a denoc_bridge Model (from db.load_urdf, db.load_robot, db.from_pinocchio "
        f"or denoc_bridge.io.generators), got {got}"
    )
