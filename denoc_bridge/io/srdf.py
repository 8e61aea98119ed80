"""Named configurations from an SRDF file's ``<group_state>`` elements, as Pinocchio reads them.

``pin.loadReferenceConfigurations(model, path)`` (Pinocchio's ``parsers/srdf``): each group
state starts from the neutral configuration and sets the joints it names; a joint the model
lacks is skipped; a continuous joint takes one angle (stored as its cosine and sine) or, as
Pinocchio asks of one whose axis is not x, y or z, its cosine and sine; any other joint takes its
``nq`` numbers; the first state of a name is kept.  Where Pinocchio prints "Could not
read joint config" and keeps the neutral value, this reader raises an error naming the state
and the joint.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import numpy as np

from denoc_bridge.errors import InputError, InputTypeError
from denoc_bridge.multibody.checks import check_model
from denoc_bridge.multibody.joints import JointType, neutral_q
from denoc_bridge.multibody.model import Model

__all__ = ["srdf_reference_configurations"]


def srdf_reference_configurations(model: Model, path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """The model's reference configurations with the group states of the SRDF file at ``path``
    added (see the module docstring); ``load_robot`` adds them to the example-robot-data
    robots (talos's ``"half_sitting"``, solo12's ``"standing"``), and
    ``model.replace(reference_configurations=srdf_reference_configurations(model, path))``
    to any model.

    Raises
    ------
    InputTypeError
        ``model`` is not a Model, or ``path`` not a path.
    InputError
        No such file, malformed XML, or a state whose joint value is not the joint's number of
        values (naming the state and the joint).
    """
    check_model(model)
    if not isinstance(model, Model):
        raise InputTypeError("srdf_reference_configurations takes a Model (of a MimicModel: its .tree)")
    if not isinstance(path, (str, os.PathLike)):
        raise InputTypeError(f"the SRDF file must be a path, got {type(path).__name__}")
    where = os.fspath(path)
    if not os.path.isfile(where):
        raise InputError(f"no such SRDF file: {where}")
    try:
        root = ET.parse(where).getroot()
    except ET.ParseError as exc:
        raise InputError(f"SRDF file {where}: {exc}") from None
    refs = dict(model.reference_configurations)
    joint = {name: k for k, name in enumerate(model.joint_names)}
    for state in root.iter("group_state"):
        name = state.get("name", "")
        if name in refs or not name:
            continue  # as Pinocchio: the first state of a name is kept
        q = neutral_q(model.joint_type)
        for element in state.iter("joint"):
            k = joint.get(element.get("name", ""))
            if k is not None:
                _set_joint(model, q, k, element.get("value", ""), f"SRDF file {where}, group state '{name}'")
        refs[name] = q
    return refs


def _set_joint(model: Model, q: np.ndarray, k: int, text: str, where: str) -> None:
    """Joint k's values from an SRDF ``value`` attribute into q (a continuous joint's angle as
    its cosine and sine)."""
    try:
        values = [float(x) for x in text.split()]
    except ValueError:
        values = []
    i, nq = int(model.idx_q[k]), int(model.nq_joint[k])
    continuous = model.joint_type[k] == JointType.CONTINUOUS
    if not np.all(np.isfinite(values)):
        values = []
    if continuous and len(values) == 1:
        q[i : i + 2] = np.cos(values[0]), np.sin(values[0])
    elif len(values) == nq:
        q[i : i + nq] = values
    else:
        wanted = "one angle (or its cosine and sine)" if continuous else f"{nq} number{'s' if nq > 1 else ''}"
        raise InputError(f"{where}: joint '{model.joint_names[k]}' takes {wanted}, got {text!r}")
