"""Robots by name: example-robot-data robots, files, and the papers' models.

``load_robot(spec)`` accepts

* a path to a ``.urdf`` file, or to an MJCF ``.xml`` file (:func:`~denoc_bridge.load_mjcf`,
  through MuJoCo's compiler);
* an example-robot-data name (``panda``, ``talos``, ``solo12``, ...), resolved
  through ``example_robot_data.robots_loader.ROBOTS`` (the
  example-robot-data-loaders package) without building its Pinocchio model;
* ``gripper`` (alias ``gripper4``): the 4-DOF gripper of 000 §3.1;
* a generator spec (:mod:`denoc_bridge.generators`): ``rope`` (the 100-DOF rope of 000
  §4), ``chain:N[:planar|spatial]`` (N cylinders, planar by default; e.g.
  ``chain:1000:spatial``), ``puma560`` (003 Table 2), ``fourbar`` (004 Fig. 4, a closed
  loop);
* ``chainN`` (e.g. ``chain100``): the spatial serial chain of :func:`serial_chain`
  with N revolute joints, the benchmark chain.

A file of that name in the current folder wins over a name.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, overload

import numpy as np

from denoc_bridge._text import did_you_mean
from denoc_bridge.errors import InputError, InputTypeError, RobotNotFoundError
from denoc_bridge.io import generators as g
from denoc_bridge.io.mjcf import is_mjcf, load_mjcf
from denoc_bridge.io.srdf import srdf_reference_configurations
from denoc_bridge.io.urdf import load_urdf
from denoc_bridge.io.urdf_writer import joint_xml, link_xml
from denoc_bridge.multibody.checks import is_pinocchio_object
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.model import Model

__all__ = [
    "RobotSource",
    "resolve_robot",
    "load_robot",
    "example_robot_names",
    "gripper4_urdf",
    "gripper4",
    "serial_chain",
    "GENERATOR_SPECS",
    "parse_chain_spec",
]

#: the generator specs that ROBOT accepts besides files and example-robot-data names
GENERATOR_SPECS = ("rope", "chain:N[:planar|spatial]", "gripper", "puma560", "fourbar")
#: the names a misspelled robot is compared with besides example-robot-data's
GENERATOR_NAMES = ("rope", "chain", "gripper", "puma560", "fourbar")


class RobotSource:
    """Where a robot comes from: its URDF (a file path, or the XML text of a built-in
    robot, then ``path`` is None) and its usual base.

    ``urdf`` of a generated robot is written on first use (a 100,000-link chain is 100 MB of
    XML); ``build``, when set, builds the fixed-base model directly from arrays (the
    generators of :mod:`denoc_bridge.generators`), without the URDF.  ``srdf``, when set, is the
    robot's SRDF file (example-robot-data), whose group states :func:`load_robot` adds to
    ``model.reference_configurations``.
    """

    __slots__ = ("name", "_urdf", "floating_base", "origin", "path", "build", "srdf")

    def __init__(
        self,
        name: str,
        urdf: str | Callable[[], str],
        floating_base: bool,
        origin: str,
        path: str | None,
        build: Callable[[], Model] | None = None,
        srdf: str | None = None,
    ) -> None:
        self.name, self._urdf, self.floating_base = name, urdf, bool(floating_base)
        self.origin, self.path, self.build, self.srdf = origin, path, build, srdf

    @property
    def urdf(self) -> str:
        """The file path, or the URDF text of a built-in or generated robot."""
        if callable(self._urdf):
            self._urdf = self._urdf()
        return self._urdf

    def __repr__(self) -> str:
        return (
            f"RobotSource(name={self.name!r}, origin={self.origin!r}, path={self.path!r}, "
            f"floating_base={self.floating_base})"
        )

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, RobotSource)
            and (self.name, self.origin, self.path, self.floating_base)
            == (other.name, other.origin, other.path, other.floating_base)
            and self.urdf == other.urdf
        )

    __hash__ = None  # type: ignore[assignment]  # unhashable (mutable, compared by content), as intended


def _erd_loaders() -> dict[str, Any] | None:
    try:
        from example_robot_data.robots_loader import ROBOTS
    except ImportError:
        return None
    return ROBOTS


def _erd_search_dirs() -> list[str]:
    dirs: list[str] = []
    try:
        from example_robot_data.path import EXAMPLE_ROBOT_DATA_MODEL_DIR

        dirs.append(EXAMPLE_ROBOT_DATA_MODEL_DIR)
    except ImportError:
        pass
    for p in [sys.prefix, *sys.path]:
        for rel in (
            "cmeel.prefix/share/example-robot-data/robots",
            "../../../share/example-robot-data/robots",
            "share/example-robot-data/robots",
        ):
            dirs.append(os.path.join(p, rel))
    return [d for d in dict.fromkeys(os.path.normpath(d) for d in dirs) if os.path.isdir(d)]


def example_robot_names() -> list[str]:
    """Names of the example-robot-data robots that have a URDF (empty if it is not installed)."""
    loaders = _erd_loaders() or {}
    return sorted(n for n, cls in loaders.items() if getattr(cls, "urdf_filename", ""))


def _from_example_robot_data(name: str) -> RobotSource | None:
    loaders = _erd_loaders()
    if loaders is None or name not in loaders:
        return None
    cls = loaders[name]
    if not getattr(cls, "urdf_filename", ""):
        raise RobotNotFoundError(f"example-robot-data robot '{name}' has no URDF (it is described in SDF)")
    rel = os.path.join(cls.path, cls.urdf_subpath, cls.urdf_filename)
    srdf = os.path.join(cls.path, getattr(cls, "srdf_subpath", ""), getattr(cls, "srdf_filename", "") or "")
    for d in _erd_search_dirs():
        candidate = os.path.join(d, rel)
        if os.path.isfile(candidate):
            states = os.path.join(d, srdf)  # its group states: the robot's reference configurations
            return RobotSource(
                name,
                candidate,
                bool(getattr(cls, "free_flyer", False)),
                "example-robot-data",
                candidate,
                srdf=states if states.endswith(".srdf") and os.path.isfile(states) else None,
            )
    raise RobotNotFoundError(f"example-robot-data robot '{name}': file {rel} not found")


_CHAIN_USAGE = "chain:N[:planar|spatial] with N a whole number of links >= 1, e.g. chain:1000:spatial"


def parse_chain_spec(spec: str) -> tuple:
    """``(n, kind)`` of a ``chain:N[:planar|spatial]`` spec; a malformed one raises
    :class:`~denoc_bridge.errors.RobotNotFoundError` saying what is wrong."""
    parts = str(spec).split(":")
    if parts[0] != "chain" or len(parts) not in (2, 3):
        raise RobotNotFoundError(f"bad chain spec '{spec}': expected {_CHAIN_USAGE}")
    n_text = parts[1].replace("_", "").replace(",", "")
    if not n_text.isdigit() or int(n_text) < 1:
        raise RobotNotFoundError(
            f"bad chain spec '{spec}': N = '{parts[1]}' is not a whole number >= 1 (expected {_CHAIN_USAGE})"
        )
    kind = parts[2] if len(parts) == 3 else "planar"
    if kind not in ("planar", "spatial"):
        raise RobotNotFoundError(
            f"bad chain spec '{spec}': kind '{kind}' is neither 'planar' nor 'spatial' (expected {_CHAIN_USAGE})"
        )
    return int(n_text), kind


def _generated(spec: str) -> RobotSource | None:
    """The robots of :mod:`denoc_bridge.generators` by spec (None if ``spec`` is not one)."""

    if spec in ("gripper", "gripper4"):
        return RobotSource("gripper4", gripper4_urdf, False, "the gripper of 000 §3.1, built in", None)
    if spec == "rope":
        return RobotSource("rope", g.rope_urdf, False, "the rope of 000 §4 (generators.rope), built in", None, g.rope)
    if spec in ("puma560", "puma"):
        return RobotSource(
            "puma560",
            g.puma560_urdf,
            False,
            "the PUMA 560 of 003 Table 2 (generators.puma560), built in",
            None,
            g.puma560,
        )
    if spec == "fourbar":
        return RobotSource(
            "fourbar",
            g.fourbar_urdf,
            False,
            "the four-bar of 004 Fig. 4 (generators.fourbar), built in",
            None,
            g.fourbar,
        )
    if spec == "chain" or spec.startswith("chain:"):
        n, kind = parse_chain_spec(spec)
        return RobotSource(
            f"{kind}_chain{n}",
            lambda: g.chain_urdf(n, kind),
            False,
            f"a {kind} chain of {n} cylinders (generators.chain({n}, '{kind}')), built in",
            None,
            lambda: g.chain(n, kind),
        )
    if spec.startswith("chain") and spec[5:].isdigit():
        n = int(spec[5:])
        if n < 1:
            raise RobotNotFoundError(f"bad chain spec '{spec}': the benchmark chain chainN needs N >= 1")
        return RobotSource(
            f"chain{n}",
            lambda: _serial_chain_urdf(n),
            False,
            f"the benchmark chain of {n} revolute joints (robots.serial_chain({n})), built in",
            None,
            lambda: serial_chain(n),
        )
    return None


def _known_specs() -> str:
    return "a URDF file, an example-robot-data name or one of " + ", ".join(GENERATOR_SPECS)


def resolve_robot(spec: str | os.PathLike[str]) -> RobotSource:
    """Find a robot given as a path, an example-robot-data name or a generator spec (see the
    module docstring).  An unknown name or a malformed spec raises
    :class:`~denoc_bridge.errors.RobotNotFoundError` with a one-line explanation."""
    if not isinstance(spec, (str, os.PathLike)):
        hint = ""
        if is_pinocchio_object(spec):
            hint = ": convert a Pinocchio model with db.from_pinocchio(pin_model)"
        elif type(spec).__name__ in ("Model", "MimicModel"):
            hint = ": it is already a model"
        raise InputTypeError(
            f"the robot must be a URDF path, an example-robot-data name or a generator spec, got "
            f"{type(spec).__name__}{hint}"
        )
    spec = os.fspath(spec)
    if not spec.strip():
        raise RobotNotFoundError(
            "the robot is empty: give a URDF file, an example-robot-data name or a generator "
            "spec (rope, chain:N, gripper, puma560, fourbar)"
        )
    if os.path.isfile(spec):
        return RobotSource(Path(spec).stem, spec, False, "file", spec)
    if os.path.isdir(spec):
        raise RobotNotFoundError(f"'{spec}' is a folder, not a URDF file")
    found = _generated(spec)
    if found is not None:
        return found
    found = _from_example_robot_data(spec)
    if found is not None:
        return found
    if spec.lower().endswith((".xml", ".mjcf")):
        raise RobotNotFoundError(f"no such MJCF file: {spec}")
    if spec.endswith(".urdf") or os.sep in spec:
        raise RobotNotFoundError(f"no such URDF file: {spec}")
    names = example_robot_names()
    if not names:
        hint = "example-robot-data is not installed (pip install 'denoc-bridge[robots]')"
    else:
        close = did_you_mean(spec, [*names, *GENERATOR_NAMES])
        hint = close[2:] if close else f"known robots: {', '.join(names)}"
    raise RobotNotFoundError(f"unknown robot '{spec}': expected {_known_specs()}; {hint}")


@overload
def load_robot(
    spec: str | os.PathLike[str], floating_base: bool | None = None, *, mimic: Literal[False] = False
) -> Model: ...
@overload
def load_robot(
    spec: str | os.PathLike[str], floating_base: bool | None = None, *, mimic: Literal[True]
) -> MimicModel: ...
@overload
def load_robot(
    spec: str | os.PathLike[str], floating_base: bool | None = None, *, mimic: bool
) -> Model | MimicModel: ...
def load_robot(
    spec: str | os.PathLike[str], floating_base: bool | None = None, *, mimic: bool = False
) -> Model | MimicModel:
    """Load a robot by path or name (see the module docstring).

    ``floating_base=None`` uses the robot's usual base: a free-flyer for the
    example-robot-data robots that have one (as their Pinocchio loaders do),
    fixed otherwise (an MJCF file has a free joint or not).  ``mimic=True``: ``<mimic>`` joints
    (MJCF: ``<joint>`` equalities) as constraints (a
    :class:`~denoc_bridge.constraints.mimic.MimicModel`, see :func:`~denoc_bridge.io.urdf.load_urdf`).

    Parameters
    ----------
    spec : str or path
        A URDF or MJCF (``.xml``) file, the name of an example-robot-data robot (``"panda"``, ``"talos"``,
        ``"solo12"``, ...), or a generated one: ``"rope"``, ``"chain:N[:planar|spatial]"``,
        ``"gripper"``, ``"puma560"``, ``"fourbar"``.
    floating_base : bool, optional
        A free-flyer root joint (True), a fixed base (False), or the robot's usual base (None).
    mimic : bool
        The ``<mimic>`` joints as constraints: a :class:`~denoc_bridge.MimicModel`.

    Returns
    -------
    Model or MimicModel

    Raises
    ------
    RobotNotFoundError
        No such file or robot name (with the closest names).
    URDFError
        A malformed URDF (naming the element).
    """
    src = resolve_robot(spec)
    if src.path is not None and is_mjcf(src.path):
        if floating_base is not None:
            raise InputError(
                f"robot '{spec}': an MJCF file says itself whether its base floats (a free joint); "
                "floating_base must be None"
            )
        # as for a URDF: the <joint> equalities are recorded in model.mimic, applied with mimic=True
        mj_model = load_mjcf(src.path)
        tree = mj_model.tree if isinstance(mj_model, MimicModel) else mj_model
        return MimicModel(tree) if mimic else tree
    fb = src.floating_base if floating_base is None else bool(floating_base)
    if src.build is not None and not fb:
        model = src.build()
        if mimic:
            return MimicModel(model)
        return model
    if src.build is not None and src.name.startswith("chain") and src.name[5:].isdigit():
        raise InputError(f"robot '{spec}': the benchmark chain has a fixed base")
    loaded = load_urdf(src.urdf, floating_base=fb, mimic=mimic)
    if src.srdf is None:
        return loaded
    tree = loaded.tree if isinstance(loaded, MimicModel) else loaded
    tree = tree.replace(reference_configurations=srdf_reference_configurations(tree, src.srdf))
    return MimicModel(tree) if isinstance(loaded, MimicModel) else tree


# ------------------------------------------------------------------ the papers' gripper
def _rod(name: str, length: float, mass: float) -> str:
    """A slender rod along x from the joint: inertia m l^2 / 12 about its centre (y and z)."""
    i = mass * length**2 / 12.0
    return (
        f'  <link name="{name}">\n'
        f"    <inertial>\n"
        f'      <origin xyz="{length / 2!r} 0 0" rpy="0 0 0"/>\n'
        f'      <mass value="{mass!r}"/>\n'
        f'      <inertia ixx="0" ixy="0" ixz="0" iyy="{i!r}" iyz="0" izz="{i!r}"/>\n'
        f"    </inertial>\n"
        f"    <visual>\n"
        f'      <origin xyz="{length / 2!r} 0 0" rpy="0 1.5707963267948966 0"/>\n'
        f'      <geometry><cylinder radius="0.004" length="{length!r}"/></geometry>\n'
        f"    </visual>\n"
        f"  </link>\n"
    )


def _revolute(name: str, parent: str, child: str, x: float) -> str:
    return (
        f'  <joint name="{name}" type="revolute">\n'
        f'    <parent link="{parent}"/>\n'
        f'    <child link="{child}"/>\n'
        f'    <origin xyz="{x!r} 0 0" rpy="0 0 0"/>\n'
        f'    <axis xyz="0 0 1"/>\n'
        f'    <limit lower="-3.14159" upper="3.14159" effort="10" velocity="10"/>\n'
        f"  </joint>\n"
    )


def gripper4_urdf() -> str:
    """URDF text of the 4-DOF planar gripper of 000 §3.1 (also ``urdf/gripper4.urdf``).

    Three modules: M1 = link 1^1 (0.1 m, 0.4 kg); M2 = links 1^2, 2^2 (0.05 m,
    0.2 kg each) attached at the distal end of 1^1; M3 = link 1^3 (0.05 m,
    0.2 kg) attached 0.05 m from joint 1^1 (the attachment points that the
    published GIM of 002 eq. A.19 implies).  Slender rods along x, revolute
    joints about z; joint names sort so that q = (theta_11, theta_12, theta_22, theta_13).
    """
    parts = [
        '<?xml version="1.0"?>\n',
        "<!-- 4-DOF tree-type gripper of Shah, Saha, Dutt (000 §3.1; GIM in 002 eq. A.19).\n",
        "     Generated by denoc_bridge.io.robots.gripper4_urdf(); do not edit by hand. -->\n",
        '<robot name="gripper4">\n',
        '  <link name="base"/>\n',
        _rod("link_1_1", 0.1, 0.4),
        _rod("link_1_2", 0.05, 0.2),
        _rod("link_2_2", 0.05, 0.2),
        _rod("link_1_3", 0.05, 0.2),
        _revolute("joint_1_1", "base", "link_1_1", 0.0),
        _revolute("joint_1_2", "link_1_1", "link_1_2", 0.1),
        _revolute("joint_2_2", "link_1_2", "link_2_2", 0.05),
        _revolute("joint_1_3", "link_1_1", "link_1_3", 0.05),
        "</robot>\n",
    ]
    return "".join(parts)


def gripper4() -> Model:
    """The 4-DOF gripper of 000 §3.1 as a model (fixed base)."""
    return load_urdf(gripper4_urdf())


# ------------------------------------------------------------------ the benchmark chain
def serial_chain(
    n: int,
    *,
    length: float = 0.1,
    mass: float = 1.0,
    inertia: tuple[float, float, float] = (1e-3, 1e-3, 5e-4),
    axes: str = "xy",
) -> Model:
    """A spatial serial chain of ``n`` revolute joints (fixed base), built from arrays.

    Joint k turns about the x axis for even k and the y axis for odd k
    (``axes="xy"``; any string of 'x', 'y', 'z' repeats), link k's origin is
    ``length`` above link k-1's along z (joint 0 at the base origin), and each
    link has ``mass`` at (0, 0, length / 2) with the diagonal ``inertia`` about
    its centre of mass.  Built without any per-link Python object, so that
    100,000 links take well under a second (a ``pinocchio.Model`` of that size
    cannot be built here); ``to_pinocchio(serial_chain(n))`` and the benchmark's
    ``pinocchio.Model`` chain are the same chain.
    """
    n = int(n)
    if n < 1:
        raise InputError(f"serial_chain: n must be at least 1, got {n}")
    if not axes or any(a not in "xyz" for a in axes):
        raise InputError(f"serial_chain: axes must be a string of 'x', 'y', 'z', got {axes!r}")
    unit = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}
    axis = np.array([unit[axes[k % len(axes)]] for k in range(len(axes))])[np.arange(n) % len(axes)]
    translation = np.zeros((n, 3))
    translation[1:, 2] = length
    width = len(str(n - 1))
    return Model(
        name=f"chain{n}",
        link_names=[f"link{k:0{width}d}" for k in range(n)],
        joint_names=[f"joint{k:0{width}d}" for k in range(n)],
        parent=np.arange(n) - 1,
        joint_type=np.full(n, int(JointType.REVOLUTE)),
        joint_axis=axis,
        joint_rotation=np.broadcast_to(np.eye(3), (n, 3, 3)),
        joint_translation=translation,
        mass=np.full(n, float(mass)),
        com=np.broadcast_to([0.0, 0.0, length / 2], (n, 3)),
        inertia=np.broadcast_to(np.diag(np.asarray(inertia, dtype=float)), (n, 3, 3)),
        lower_limit=np.full(n, -np.pi),
        upper_limit=np.full(n, np.pi),
        source="denoc_bridge.io.robots.serial_chain",
    )


def _serial_chain_urdf(n: int) -> str:
    """URDF text of ``serial_chain(n)`` with its default parameters."""

    model = serial_chain(n)
    parts = ['<?xml version="1.0"?>\n', f'<robot name="{model.name}">\n', '  <link name="base"/>\n']
    parent = "base"
    for k in range(n):
        parts.append(link_xml(model.link_names[k], float(model.mass[k]), model.com[k], model.inertia[k]))
        parts.append(
            joint_xml(
                model.joint_names[k],
                parent,
                model.link_names[k],
                xyz=model.joint_translation[k],
                axis=model.joint_axis[k],
            )
        )
        parent = model.link_names[k]
    parts.append("</robot>\n")
    return "".join(parts)
