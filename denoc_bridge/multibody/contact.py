"""Descriptions of frictional ground contact: the grounds (:class:`Ground`, half-spaces with a
Coulomb friction coefficient) and the points of a robot that may touch them
(:class:`ContactPoint`: a point, or a sphere, on a link).

These are data, validated on construction and naming the link or argument at fault:
:mod:`denoc_bridge.constraints.contact` turns them into the contact rows (normal and two
tangents per active contact) and the Delassus operator, and solves the impulses.  Contact is
a constraint that may only push (a unilateral row on the tree's velocities); body-body
contact is out of scope: only robot points against grounds.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from denoc_bridge.errors import InputTypeError, ModelError
from denoc_bridge.multibody.checks import check_model as _check_model
from denoc_bridge.multibody.constraints import _Links, _placement, frozen_array

__all__ = ["Ground", "ContactPoint", "contact_point", "grounds_of", "tangent_basis"]


def _real(value: Any, what: str, low: float = -math.inf, high: float = math.inf, low_open: bool = False) -> float:
    """``value`` as a finite float in [low, high] (or (low, high]), else a ModelError naming ``what``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ModelError(f"{what} must be a real number, got {value!r}")
    x = float(value)
    if not math.isfinite(x) or x < low or x > high or (low_open and x == low):
        bound = f"{'(' if low_open else '['}{low:g}, {high:g}]"
        raise ModelError(f"{what} must be a finite number in {bound}, got {value!r}")
    return x


def tangent_basis(n: np.ndarray) -> np.ndarray:
    """(t1, t2, n) as the columns of a rotation: two unit tangents of the unit normal ``n``,
    chosen the same way every time (t1 in the plane of n and the first world axis least
    aligned with it, t2 = n x t1)."""
    e = np.zeros(3)
    e[int(np.argmin(np.abs(n)))] = 1.0
    t1 = e - (e @ n) * n
    t1 /= np.linalg.norm(t1)
    return np.column_stack([t1, np.cross(n, t1), n])


@dataclass(frozen=True, eq=False)
class Ground:
    """A ground: the half-space ``normal . x <= offset`` is solid, its surface the plane
    ``normal . x = offset`` (world frame).

    Parameters
    ----------
    height : float
        The plane's offset along its normal (``z = height`` for the default normal); used when
        ``point`` is not given.
    normal : 3 numbers
        The outward normal (normalised here; must not be zero).  A slope of angle theta rising
        along +x has normal ``(-sin theta, 0, cos theta)``.
    mu : float
        Coulomb friction coefficient, >= 0 (0: frictionless).
    restitution : float
        Newton restitution coefficient in [0, 1]; 0 (default): a contact that closes stays closed.
    point : 3 numbers, optional
        A point of the plane (instead of ``height``).
    name : str
        Used in messages and in the saved contact forces.

    Examples
    --------
    >>> import numpy as np
    >>> from denoc_bridge.multibody.contact import Ground
    >>> Ground(mu=0.5).offset, Ground(point=(0, 0, 0.2), normal=(0, 0, 2)).normal.tolist()
    (0.0, [0.0, 0.0, 1.0])
    """

    height: float = 0.0
    normal: Any = (0.0, 0.0, 1.0)
    mu: float = 0.8
    restitution: float = 0.0
    point: Any = None
    name: str = "ground"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ModelError(f"a ground's name must be a non-empty string, got {self.name!r}")
        label = f"ground '{self.name}'"
        n = frozen_array(self.normal, (3,), f"{label}: normal")
        length = float(np.linalg.norm(n))
        if not length > 1e-12:
            raise ModelError(f"{label}: normal must not be zero, got {n.tolist()}")
        n = n / length
        n.setflags(write=False)
        object.__setattr__(self, "normal", n)
        object.__setattr__(self, "mu", _real(self.mu, f"{label}: mu (friction coefficient)", 0.0))
        object.__setattr__(self, "restitution", _real(self.restitution, f"{label}: restitution", 0.0, 1.0))
        if self.point is not None:
            if self.height != 0.0:
                raise ModelError(f"{label}: give either height or point, not both")
            p = frozen_array(self.point, (3,), f"{label}: point")
            object.__setattr__(self, "point", p)
            object.__setattr__(self, "height", float(n @ p))
        else:
            object.__setattr__(self, "height", _real(self.height, f"{label}: height"))

    @property
    def offset(self) -> float:
        """``normal . x`` on the plane."""
        return float(self.height)

    def frame(self) -> np.ndarray:
        """The contact frame of this ground: columns (t1, t2, normal), world coordinates."""
        if "_frame" not in self.__dict__:  # the ground is frozen: its frame is computed once
            object.__setattr__(self, "_frame", tangent_basis(self.normal))
        return self.__dict__["_frame"].copy()

    def distance(self, x: npt.ArrayLike) -> np.ndarray:
        """Signed distance of world points x (..., 3) above the plane (negative: inside)."""
        return np.asarray(x, dtype=float) @ self.normal - self.offset


def grounds_of(contact: Any) -> tuple[Ground, ...]:
    """A tuple of grounds from one :class:`Ground` or an iterable of them (at least one; the
    names distinct), else an error naming the culprit."""
    items = (contact,) if isinstance(contact, Ground) else contact
    if isinstance(contact, (str, bytes)):
        raise InputTypeError(
            f"contact must be a Ground or a list of Grounds, got the string {contact!r}: contact=Ground() "
            "is the ground z = 0"
        )
    try:
        out = tuple(items)
    except TypeError:
        raise InputTypeError(f"contact must be a Ground or a list of Grounds, got {contact!r}") from None
    if not out:
        raise InputTypeError("contact: the list of grounds is empty")
    for i, g in enumerate(out):
        if not isinstance(g, Ground):
            raise InputTypeError(f"contact[{i}] must be a Ground, got {g!r}")
    names = [g.name for g in out]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise ModelError(f"two grounds are named '{dup}': give each its own name")
    return out


@dataclass(frozen=True, eq=False)
class ContactPoint:
    """A point of a robot that may touch the ground: ``point`` in the frame of model link
    ``link``, the centre of a sphere of ``radius`` (0: the point itself).  A contact is active
    when the sphere is within ``margin`` of a ground (its distance <= margin).  Build it by
    link name with :func:`contact_point`, or from a URDF's ``<collision>`` shapes with
    :func:`denoc_bridge.io.collision.collision_points`."""

    link: int
    point: Any
    radius: float = 0.0
    margin: float = 0.0
    name: str = ""

    def __post_init__(self) -> None:
        label = f"contact point '{self.name}'" if self.name else "a contact point"
        if isinstance(self.link, (bool, np.bool_)) or not isinstance(self.link, (int, np.integer)) or self.link < 0:
            raise ModelError(f"{label}: link must be a model link index >= 0 (the fixed base never moves)")
        object.__setattr__(self, "link", int(self.link))
        object.__setattr__(self, "point", frozen_array(self.point, (3,), f"{label}: point"))
        object.__setattr__(self, "radius", _real(self.radius, f"{label}: radius", 0.0))
        object.__setattr__(self, "margin", _real(self.margin, f"{label}: margin", 0.0))


def contact_point(
    model: _Links,
    link: str,
    point: npt.ArrayLike = (0.0, 0.0, 0.0),
    *,
    radius: float = 0.0,
    margin: float = 0.0,
    name: str | None = None,
) -> ContactPoint:
    """A :class:`ContactPoint` at ``point`` in the frame of the link (or URDF frame, e.g. a link
    merged by a fixed joint) named ``link``; errors name the link and the argument.

    Examples
    --------
    >>> import denoc_bridge as db
    >>> from denoc_bridge.multibody.contact import contact_point
    >>> solo = db.load_robot("solo12")
    >>> c = contact_point(solo, "FL_FOOT", radius=0.0)
    >>> solo.link_names[c.link]
    'FL_LOWER_LEG'
    """
    _check_model(model)
    if not isinstance(link, str):
        raise InputTypeError(f"contact point: link must be a link or frame name, got {link!r}")
    label = f"contact point on '{link}'"
    body, R, p = _placement(model, link, point, None, None, label)
    if body < 0:
        raise ModelError(f"{label}: '{link}' is fixed to the base of '{model.name}' and never moves")
    return ContactPoint(body, p, radius, margin, name if name is not None else link)


def points_of(model: _Links, points: Iterable[Any]) -> tuple[ContactPoint, ...]:
    """A tuple of contact points of ``model`` from ContactPoints (checked against the model's
    links), or link names (the link frame's origin)."""
    n_links = len(model.link_names)
    out = []
    for i, c in enumerate(points):
        if isinstance(c, str):
            c = contact_point(model, c)
        if not isinstance(c, ContactPoint):
            raise InputTypeError(f"contact_points[{i}] must be a ContactPoint or a link name, got {c!r}")
        if c.link >= n_links:
            raise ModelError(f"contact point '{c.name}': link {c.link} is not a link of '{model.name}'")
        out.append(c)
    if not out:
        raise ModelError(f"'{model.name}' has no contact points: nothing can touch the ground")
    return tuple(out)
