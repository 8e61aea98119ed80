"""See a model in meshcat: a configuration, a trajectory as an animation, a static HTML file.

::

    import numpy as np
    import denoc_bridge as db
    from denoc_bridge import generators, viz

    model = generators.rope()
    traj = db.simulate(model, np.zeros(model.nq), np.zeros(model.nv), 2.0, 1e-3)
    viz.export_html(model, traj, "rope.html")        # opens offline in any browser
    vis = viz.play(model, traj)                       # live meshcat (local server), animation controls
    viz.show(model, traj.q[-1], color_by="link", viewer=vis)

What is drawn
-------------
* A URDF robot loaded from a file (``model.source``) with ``<visual>`` meshes or primitives:
  those, loaded by Pinocchio (``pin.buildGeomFromUrdf``, package:// paths resolved against
  example-robot-data's share folder and the folders above the URDF), tinted with the link's
  colour.
* An MJCF robot loaded from a file: its geoms as MuJoCo compiled them (spheres, capsules,
  ellipsoids, cylinders, boxes, meshes; groups 0-2, as MuJoCo's viewer shows them, else a
  body's lowest group), the same way; planes and height fields are left to the scene's ground.
* Otherwise (generated chains, the rope, the four-bar, URDFs without visuals): a cylinder
  from each joint to each child joint (to twice the centre of mass for a last link), its
  radius from the link's inertia, and a sphere at each joint
  (:mod:`denoc_bridge.viz.geometry`).
* Colours (``color_by``): ``"module"`` (default) one palette colour per kinematic module,
  ``"link"`` per link, ``"none"`` grey (the file's own colours for URDF materials and MJCF
  geoms); the fixed base
  is dark grey.
* Loop closures (``loops=True``): a red sphere at the cut joint's frame on each of the two
  links and a red rod between them (it has zero length while the loop is closed).
* Models with more than :data:`MAX_LINK_NODES` links and no meshes (a 10,000-link chain)
  are drawn without one scene node per link: a configuration as one merged mesh per colour
  (every link, exact), a trajectory as about :data:`MAX_SEGMENTS` rods (plus at most two per
  module) through every k-th joint of each module, each rod's ends following its joints.

A trajectory is resampled at ``fps`` (:meth:`Trajectory.resample`) into a meshcat animation
(three.js key frames, one clip per moving node) that starts playing when the page opens
and repeats.  The exported page has a play / pause button and a time slider at the bottom,
always visible (meshcat's own controls, with the speed and recording, are behind "Open
Controls", top right); opening ``page.html#t=1.5`` shows the animation paused at 1.5 s
instead.

Camera and ground (exported pages, and a new viewer of :func:`show` / :func:`play`; a
viewer you pass is left alone):

* The camera frames the robot itself, over the motion: the links' origins and the box of
  what is drawn on each link.  A link that moves more than ``geometry.FLY_AWAY`` (2.5) times
  the robot's size away from where it started (panda's fingers sliding out of the hand when
  joint limits are not enforced) is framed at its start only
  (:func:`denoc_bridge.viz.geometry.framing`).
* It follows a floating base: the robot's root node is animated against the base's
  displacement, so a falling talos stays in the middle of the picture and the world (the
  ground) goes by.  Meshcat's orbit controls still turn about the robot.
* The ground is a light square with a grid (meshcat's 20 m grid is hidden), a little wider
  than the robot.  For a run with ground contact (``method="contact-euler"``) it is the
  contact's ground (the highest horizontal one), and a floating base is followed horizontally
  only: the robot lands on it.  Otherwise it is a picture only (no contact is simulated: a
  falling robot, or a link that swings low, passes through it; the page's caption says so):
  for a floating base at the lowest point of the first pose (the robot stands on it at
  t = 0); for a fixed base drawn with a base of its own (a URDF base link) at the lowest
  point of that base, where it is mounted; otherwise (generated chains, the rope, the
  four-bar) just under the lowest framed point.
* The contact forces of such a run (``forces=True``, the default): per (link, ground) pair a
  black arrow from its centre of pressure (``Trajectory.contact_point``) along its force
  (``Trajectory.contact_force``), as long as the robot is big per robot weight and at most
  1.5 sizes (the peaks of an impact are cut there), and a black dot at that point, drawn
  over the robot (a foot's arrow would be inside its leg); both vanish while the pair pushes
  nothing.
"""

from __future__ import annotations

import atexit
import base64
import html
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path as _FilePath
from typing import Any

import numpy as np

from denoc_bridge._files import atomic_write_bytes
from denoc_bridge._text import count as _count
from denoc_bridge.algorithms.configuration import neutral_configuration
from denoc_bridge.algorithms.kinematics import forward_kinematics
from denoc_bridge.errors import InputError, InputTypeError
from denoc_bridge.multibody.checks import check_model as _check_model
from denoc_bridge.multibody.constraints import JointCoupling
from denoc_bridge.multibody.inputs import real_array
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.simulation.trajectory import Trajectory
from denoc_bridge.viz import geometry as vg

__all__ = ["export_html", "show", "play", "start_viewer", "scene_commands", "MAX_LINK_NODES", "MAX_SEGMENTS"]

#: Above this many links (and without meshes), links are not separate scene nodes.
MAX_LINK_NODES = 500
#: Largest number of rods of an animated model with more than MAX_LINK_NODES links.
MAX_SEGMENTS = 300
_CAMERA = "/Cameras/default"
_FOV = np.radians(75.0)  # meshcat's default perspective camera
#: The ground's plane and grid line colours.
GROUND_COLOR = (0.78, 0.80, 0.84)
GROUND_LINES = (0.45, 0.47, 0.52)


# ----------------------------------------------------------------------------- inputs
def _configurations(model, what, fps):
    """(tree model, configurations (N, nq) of the tree, the frames: the resampled Trajectory
    or None for a configuration)."""

    if isinstance(what, Trajectory):
        if len(what) == 0:
            raise InputError("the trajectory is empty")
        if what.q.shape[1] != model.nq:
            raise InputError(
                f"the trajectory has {what.q.shape[1]} configuration variables, "
                f"model '{model.name}' has nq = {model.nq}"
            )
        frames = _last_step_held(what).resample(fps)
        Q = frames.q
    else:
        Q = neutral_configuration(model) if what is None else real_array(what, "the configuration")
        if Q.shape != (model.nq,):
            raise InputError(
                f"expected a configuration of {model.nq} numbers (nq of '{model.name}') "
                f"or a Trajectory, got an array of shape {Q.shape}"
            )
        if not np.all(np.isfinite(Q)):
            i = int(np.flatnonzero(~np.isfinite(Q))[0])
            raise InputError(f"the configuration holds {Q[i]} at q[{i}] (a value that is not finite)")
        Q, frames = Q[None], None
    if isinstance(model, MimicModel):
        return model.tree, np.array([model.expand(q) for q in Q]), frames
    return model, Q, frames


def _placements(model, Q):
    """Link placements for every configuration: R (N, L, 3, 3), p (N, L, 3)."""

    R = np.empty((len(Q), model.n_links, 3, 3))
    p = np.empty((len(Q), model.n_links, 3))
    for i, q in enumerate(Q):
        R[i], p[i] = forward_kinematics(model, q)
    return R, p


def _world(R, p, link, local):
    """World positions (N, 3) of a point given in link ``link``'s frame (-1: the base)."""
    local = np.asarray(local, dtype=float)
    if link < 0:
        return np.broadcast_to(local, (R.shape[0], 3)).copy()
    return p[:, link] + R[:, link] @ local


# ----------------------------------------------------------------------------- nodes
class _Scene:
    """Meshcat commands (lowered dicts) for objects and for nodes moving over N frames."""

    def __init__(self, n_frames: int, fps: float):
        self.commands: list[dict[str, Any]] = []
        self.tracks: list[Any] = []
        self.n_frames, self.fps = n_frames, fps

    def add_object(self, path: str, mesh: vg.Mesh, rgb, opacity: float = 1.0, on_top: bool = False):
        """A mesh at ``path``; ``on_top``: drawn over what is in front of it (three.js
        ``depthTest`` off; transparent objects are drawn after the opaque ones)."""
        import meshcat.geometry as mg
        from meshcat.commands import SetObject

        extra = {"depthTest": False} if on_top else {}
        material = mg.MeshPhongMaterial(color=_hex(rgb), shininess=40, opacity=0.9 if on_top else opacity, **extra)
        self.commands.append(
            SetObject(mg.TriangularMeshGeometry(mesh.vertices, mesh.faces), material, _path(path)).lower()
        )

    def add_lines(self, path: str, ends, rgb):
        """Line segments between consecutive pairs of ``ends`` (2K, 3)."""
        import meshcat.geometry as mg
        from meshcat.commands import SetObject

        lines = mg.LineSegments(
            mg.PointsGeometry(np.asarray(ends, dtype=np.float32).T), mg.LineBasicMaterial(color=_hex(rgb))
        )
        self.commands.append(SetObject(lines, path=_path(path)).lower())

    def move(self, path: str, R, p, scale=None):
        """Node ``path`` at placements (R (N, 3, 3), p (N, 3)) and optional scale (N, 3)."""
        from meshcat.commands import SetTransform

        M = np.eye(4)
        M[:3, :3] = R[0] * (1.0 if scale is None else scale[0])
        M[:3, 3] = p[0]
        self.commands.append(SetTransform(M, _path(path)).lower())
        if self.n_frames > 1:
            self.tracks.append((path, p, vg.quaternions(R), scale))

    def property(self, path: str, key: str, value):
        from meshcat.commands import SetProperty

        self.commands.append(SetProperty(key, value, _path(path)).lower())

    def finish(self) -> list:
        """The commands, with the animation (three.js key-frame tracks as Float32Arrays, times
        in frames) last."""
        if not self.tracks:
            return self.commands
        import umsgpack

        def f32(x):
            return umsgpack.Ext(0x17, np.ascontiguousarray(x, dtype=np.float32).tobytes())

        times = f32(np.arange(self.n_frames))
        animations = []
        for path, p, quat, scale in self.tracks:
            tracks = [
                {"name": ".position", "type": "vector3", "times": times, "values": f32(p)},
                {"name": ".quaternion", "type": "quaternion", "times": times, "values": f32(quat)},
            ]
            if scale is not None:
                tracks.append({"name": ".scale", "type": "vector3", "times": times, "values": f32(scale)})
            animations.append({"path": path, "clip": {"fps": float(self.fps), "name": "default", "tracks": tracks}})
        return self.commands + [
            {
                "type": "set_animation",
                "path": "",
                "animations": animations,
                "options": {"play": True, "repetitions": float("inf")},
            }
        ]


def _hex(rgb) -> int:
    """0xRRGGBB of an RGB colour in [0, 1]."""
    return int(np.dot(np.clip(np.round(np.asarray(rgb) * 255), 0, 255).astype(int), [65536, 256, 1]))


def _path(path: str):
    from meshcat.path import Path

    return Path(tuple(e for e in path.split("/") if e))


def _node_name(name: str, used: set) -> str:
    s = "".join(ch if ch.isalnum() or ch in "_-." else "_" for ch in name) or "link"
    while s in used:
        s += "_"
    used.add(s)
    return s


# ----------------------------------------------------------------------------- the scene
def scene_commands(
    model,
    what=None,
    *,
    fps: float = 30.0,
    color_by: str = "module",
    loops: bool = True,
    prefix: str = "/meshcat",
    camera: bool = True,
    forces: bool = True,
) -> list:
    """The meshcat commands (lowered dicts, as ``meshcat.commands.*.lower()`` gives) that draw
    ``model`` at a configuration or, for a :class:`Trajectory`, animate it (see the module
    docstring).  ``prefix`` is the scene path the robot goes under; ``camera`` adds the
    camera placement that frames the whole motion and the light background; ``forces`` draws
    a run's contact forces (arrows from their centres of pressure, and dots there)."""
    _check_model(model)
    if not (np.isfinite(fps) and fps > 0):
        raise InputError(f"fps must be a positive number, got {fps}")
    for name, flag in (("loops", loops), ("forces", forces)):
        if not isinstance(flag, (bool, np.bool_)):
            raise InputTypeError(f"{name} must be True or False, got {flag!r}")
    tree, Q, frames = _configurations(model, what, fps)
    colors = vg.link_colors(tree, color_by)
    R, p = _placements(tree, Q)
    scene = _Scene(len(Q), fps)
    root = f"{prefix.rstrip('/')}/{_node_name(tree.name, set())}"
    scene.commands.append({"type": "delete", "path": root})
    extent = float(np.ptp(np.vstack([p.reshape(-1, 3), np.zeros((1, 3))]), axis=0).max()) or 1.0
    visuals = vg.model_visuals(tree)
    if visuals is not None:
        radius = np.full(tree.n_links, 0.01 * extent)
        outline = _draw_meshes(scene, root, tree, R, p, visuals, colors, color_by)
    elif tree.n_links <= MAX_LINK_NODES:
        radius = _draw_links(scene, root, tree, R, p, colors, extent)
        outline = {k: np.array([b for _, b in segs]) for k, segs in enumerate(vg.segments(tree)) if segs}
    else:
        radius = _draw_huge(scene, root, tree, R, p, colors, extent, frames is not None)
        outline = {}
    if loops and tree.loops:  # (tree: always a Model)
        _draw_loops(scene, root, tree, R, p, radius)
    frame = vg.framing(R, p, outline, vg.followed_link(tree), ground=vg.contact_ground(what))
    if forces and frames is not None and frames.contact_point is not None:
        _draw_contact(scene, root, tree, frames, frame.size)
    if camera:
        _camera(scene, root, frame)
    return scene.finish()


def _draw_meshes(scene, root, model, R, p, visuals, colors, color_by):
    """URDF visuals: one node per link and colour; returns {link: corners of its meshes' box}."""
    used, groups = {"loops", "ground", "contact"}, {}
    for link, mesh, rgb in visuals:
        c = vg.BASE_COLOR if link < 0 and color_by != "none" else (rgb if color_by == "none" else colors[link])
        groups.setdefault(link, {}).setdefault(tuple(np.round(c, 4)), []).append(mesh)
    outline = {}
    for link, by_color in sorted(groups.items()):
        name = _node_name(model.base_name if link < 0 else model.link_names[link], used)
        merged = [vg.merge(meshes) for meshes in by_color.values()]
        for j, (c, mesh) in enumerate(zip(by_color, merged)):  # one object: at the node itself
            scene.add_object(f"{root}/{name}" + (f"/visual{j}" if len(merged) > 1 else ""), mesh, c)
        v = np.vstack([m.vertices for m in merged])
        lo, hi = v.min(axis=0), v.max(axis=0)
        outline[link] = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
        if link >= 0:
            scene.move(f"{root}/{name}", R[:, link], p[:, link])
    return outline


def _draw_links(scene, root, model, R, p, colors, extent):
    """Cylinders and joint spheres, one node per link; returns the radii."""
    meshes, radius = vg.skeleton(model, extent)
    used = {"loops", "ground", "contact"}
    for k, mesh in enumerate(meshes):
        name = _node_name(model.link_names[k], used)
        if len(mesh.faces):
            scene.add_object(f"{root}/{name}", mesh, colors[k])
        scene.move(f"{root}/{name}", R[:, k], p[:, k])
    return radius


def _draw_huge(scene, root, model, R, p, colors, extent, animated):
    """Too many links for one node each: one merged mesh per colour (a configuration), or
    rods through every k-th joint (a trajectory).  Returns the radii."""
    radius = vg.radii(model, vg.segments(model), extent)
    if not animated:
        keys = [tuple(c) for c in np.round(colors, 4)]
        for j, c in enumerate(dict.fromkeys(keys)):
            ids = [k for k in range(model.n_links) if keys[k] == c]
            scene.add_object(f"{root}/merged/color{j}", vg.tubes(model, R[0], p[0], ids, radius), c)
        return radius
    n = 0
    for module, anchors in vg.anchors_polylines(model, MAX_SEGMENTS):
        links = [link for link, _ in anchors if link >= 0]
        rod = vg.unit_tube(float(np.median(radius[links])) if links else 0.01 * extent)
        ends = [_world(R, p, link, local) for link, local in anchors]
        color = colors[model.module_start[module]]
        for A, B in zip(ends[:-1], ends[1:]):
            path = f"{root}/rods/{n:05d}"
            scene.add_object(path, rod, color)
            scene.move(path, *vg.rod_placements(A, B))
            n += 1
    return radius


def _draw_loops(scene, root, model, R, p, radius):
    """A red sphere on each side of every cut joint and a red rod between them."""
    used = set()
    for lc in model.loops:
        if isinstance(lc, JointCoupling):  # a row on joint coordinates: nothing to draw
            continue
        r = float(np.mean([radius[k] for k in (lc.link1, lc.link2) if k >= 0] or [np.median(radius)]))
        base = f"{root}/loops/{_node_name(lc.name, used)}"
        ends = []
        for side, (link, local) in enumerate(((lc.link1, lc.translation1), (lc.link2, lc.translation2)), 1):
            x = _world(R, p, link, local)
            scene.add_object(f"{base}/side{side}", vg.sphere((0, 0, 0), (2.4 - 0.5 * side) * r), vg.LOOP_COLOR)
            scene.move(f"{base}/side{side}", np.broadcast_to(np.eye(3), (len(x), 3, 3)), x)
            ends.append(x)
        scene.add_object(f"{base}/rod", vg.unit_tube(0.6 * r), vg.LOOP_COLOR)
        scene.move(f"{base}/rod", *vg.rod_placements(*ends))


def _last_step_held(traj):
    """The trajectory with its last state's contact force and point those of the step that
    ended there (saved, like the accelerations, with the state a step starts from, the last
    state has none: its arrows would vanish on the animation's last frame); the trajectory
    itself without contact."""
    if len(traj) < 2 or traj.contact_force is None or traj.contact_point is None:
        return traj
    force, point = traj.contact_force.copy(), traj.contact_point.copy()
    force[-1], point[-1] = force[-2], point[-2]
    return replace(traj, contact_force=force, contact_point=point, _cache={})


def _draw_contact(scene, root, model, frames, size):
    """Each (link, ground) pair's contact force: an arrow from its centre of pressure along the
    force, as long as the robot is big per robot weight (at most 1.5 times), and a dot there,
    drawn over the robot (:func:`~denoc_bridge.viz.geometry.contact_marks`)."""
    weight = float(np.sum(model.mass) * np.linalg.norm(model.gravity))
    if not weight > 0:  # no gravity: the largest force is drawn as long as a weight would be
        weight = float(np.linalg.norm(frames.contact_force, axis=2).max()) or 1.0
    arrow, dot = vg.unit_arrow(0.01 * size), vg.sphere((0.0, 0.0, 0.0), 0.02 * size)
    used = set()
    for pair, placement, (at, scale) in vg.contact_marks(frames.contact_force, frames.contact_point, size, weight):
        base = f"{root}/contact/{_node_name(frames.contact_names[pair], used)}"
        scene.add_object(f"{base}/force", arrow, vg.CONTACT_COLOR, on_top=True)
        scene.move(f"{base}/force", *placement)
        scene.add_object(f"{base}/point", dot, vg.CONTACT_COLOR, on_top=True)
        scene.move(f"{base}/point", np.broadcast_to(np.eye(3), (len(at), 3, 3)), at, scale)


def _camera(scene, root, frame: vg.Framing):
    """Frame the robot (:func:`~denoc_bridge.viz.geometry.framing`: its links over the motion,
    parts that fly away at their start only, a floating base followed) and draw the ground.
    Meshcat's orbit controls turn about the world origin, so the robot's root node is shifted
    to put the middle of the framed box there; following a floating base, that shift is
    animated (the world moves against the base: the robot stays in frame and the ground goes
    by).  The ground (:func:`~denoc_bridge.viz.geometry.ground`, a light square with a grid,
    under the root node: it moves with the world) replaces meshcat's 20 m grid, which is hidden;
    at the contact's ground for a run with contact, else a picture only.  The camera looks from the normal of the
    plane the points span if they are nearly planar (x to the right, slightly from above), else
    from the front right, just far enough for every point to be in a 4:3 window.  Light background, no axes (both can be
    changed in meshcat's controls)."""
    from meshcat.commands import SetTransform

    points = frame.points
    if len(points) > 20000:
        points = points[np.linspace(0, len(points) - 1, 20000).astype(int)]
    x = points - frame.center
    w, V = np.linalg.eigh(x.T @ x / len(x))
    normal, z = V[:, 0], np.array([0.0, 0.0, 1.0])
    if np.sqrt(max(w[0], 0.0)) < 0.15 * np.sqrt(max(w[2], 1e-300)) and abs(normal[2]) < 0.9:
        normal = normal * (np.sign(normal @ [0.3, -1.0, 0.2]) or 1.0)
        side = np.cross(z, normal)
        view = normal + 0.3 * z + 0.25 * side / np.linalg.norm(side)
    else:
        view = np.array([1.0, 0.75, 0.55])
    view /= np.linalg.norm(view)
    right = np.cross(z, view)
    right /= np.linalg.norm(right)
    up = np.cross(view, right)
    t = np.tan(_FOV / 2)
    # the nearest distance at which every point is inside the view (4:3), and a 10% margin
    need = x @ view + np.maximum(np.abs(x @ up) / t, np.abs(x @ right) / (t * 4 / 3))
    dist = max(float(need.max()) * 1.1, 1e-3)
    if np.any(frame.follow):
        n = len(frame.follow)
        scene.move(root, np.broadcast_to(np.eye(3), (n, 3, 3)), -frame.center - frame.follow)
    else:
        shift = np.eye(4)
        shift[:3, 3] = -frame.center
        scene.commands.append(SetTransform(shift, _path(root)).lower())
    plane, lines, _, _ = vg.ground(frame)
    scene.add_object(f"{root}/ground/plane", plane, GROUND_COLOR, opacity=0.55)
    scene.add_lines(f"{root}/ground/grid", lines, GROUND_LINES)
    scene.property("/Grid", "visible", False)
    cam = _CAMERA + "/rotated/<object>"
    d = view * dist
    scene.property(cam, "position", [float(d[0]), float(d[2]), float(-d[1])])  # meshcat's y-up camera frame
    scene.property(cam, "near", float(dist / 200))
    scene.property(cam, "far", float(dist * 20 + 2 * np.ptp(frame.follow, axis=0).max()))
    scene.property("/Background", "top_color", [0.98, 0.98, 0.99])
    scene.property("/Background", "bottom_color", [0.80, 0.82, 0.86])
    scene.property("/Axes", "visible", False)


# ----------------------------------------------------------------------------- HTML
def _meshcat_js() -> str:
    import meshcat

    return (_FilePath(meshcat.__file__).parent / "viewer" / "dist" / "main.min.js").read_text(encoding="utf-8")


_PAGE = """<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
  body {{ margin: 0; }}
  #meshcat-pane {{ width: 100vw; height: 100vh; overflow: hidden; }}
  #caption {{ position: absolute; left: 8px; top: 6px; font: 13px sans-serif; color: #333;
             pointer-events: none; line-height: 1.4; max-width: calc(100vw - 270px); }}
  #caption .note {{ font-size: 12px; color: #555; }}
  #player {{ position: absolute; left: 50%; bottom: 14px; transform: translateX(-50%); display: none;
            align-items: center; gap: 10px; padding: 6px 12px; width: min(640px, 80vw);
            background: rgba(30, 30, 35, 0.82); border-radius: 6px; font: 13px sans-serif; color: #eee; }}
  #player button {{ font: 13px sans-serif; width: 64px; padding: 3px 0; cursor: pointer; }}
  #player input {{ flex: 1; accent-color: #bbb; }}
  #player span {{ min-width: 118px; text-align: right; font-variant-numeric: tabular-nums; }}
</style>
</head>
<body>
<div id="meshcat-pane"></div>
<div id="caption">{caption}<br><span class="note">{note}</span></div>
<div id="player"><button id="play">pause</button><input id="time" type="range" min="0" max="1" step="0.001" value="0"><span id="clock"></span></div>
<script>
{js}
</script>
<script>
// denoc_bridge.viz.export_html: meshcat's viewer, then the scene's msgpack commands in order.
var viewer = new MeshCat.Viewer(document.getElementById("meshcat-pane"));
var commands = {commands};
for (var i = 0; i < commands.length; i++) {{
  var text = atob(commands[i]);
  var bytes = new Uint8Array(text.length);
  for (var j = 0; j < text.length; j++) bytes[j] = text.charCodeAt(j);
  viewer.handle_command_bytearray(bytes);
}}
// page.html#t=1.5 : the animation paused at 1.5 s (the controls' play resumes it)
var start = /[#&]t=([0-9.]+)/.exec(location.hash);
if (start && viewer.animator.actions.length) {{
  viewer.animator.pause();
  viewer.animator.seek(parseFloat(start[1]));
  viewer.animator.display_progress(parseFloat(start[1]));
}}
// a play / pause button and a time slider, always visible at the bottom (meshcat's own
// controls, with the speed and recording, stay behind "Open Controls")
var anim = viewer.animator;
if (anim.actions.length) {{
  var button = document.getElementById("play"), slider = document.getElementById("time");
  var clock = document.getElementById("clock");
  document.getElementById("player").style.display = "flex";
  slider.max = anim.duration;
  button.onclick = function () {{ if (anim.playing) anim.pause(); else anim.play(); }};
  slider.oninput = function () {{
    var t = parseFloat(slider.value);
    anim.pause();
    anim.seek(t);
    anim.display_progress(t);
  }};
  (function tick() {{
    button.textContent = anim.playing ? "pause" : "play";
    if (anim.playing) slider.value = anim.time;
    clock.textContent = parseFloat(slider.value).toFixed(2) + " s / " + anim.duration.toFixed(2) + " s";
    requestAnimationFrame(tick);
  }})();
  if (start) slider.value = parseFloat(start[1]);
}}
</script>
</body>
</html>
"""


def export_html(
    model, what, path, *, fps: float = 30.0, color_by: str = "module", loops: bool = True, forces: bool = True
) -> _FilePath:
    """Write a self-contained HTML file showing ``model`` at a configuration ``what`` (nq,) or
    animating a :class:`~denoc_bridge.simulation.trajectory.Trajectory` (resampled at ``fps``; it plays on
    opening, with meshcat's controls; ``forces``: a run's contact forces drawn as arrows).  The
    file holds meshcat's viewer and the scene: it opens in a browser with no server and no
    network.  Returns the path."""
    _check_model(model)
    import umsgpack

    commands = scene_commands(model, what, fps=fps, color_by=color_by, loops=loops, forces=forces)
    packed = [base64.b64encode(umsgpack.packb(c)).decode("ascii") for c in commands]
    tree = getattr(model, "tree", model)
    animated = any(c["type"] == "set_animation" for c in commands)
    colors = {"module": f"colours: {_count(tree.n_modules, 'kinematic module')}", "link": "colours: links", "none": ""}[
        color_by
    ]
    kind = "animation" if animated else "configuration"
    caption = f"{tree.name}: {model.nv} DOF, {tree.n_links} links, {kind}" + (f"; {colors}" if colors else "")
    on_contact = vg.contact_ground(what) is not None
    if not getattr(what, "contact_grounds", ()):
        note = "the ground is a picture only: no contact is simulated"
    elif on_contact:
        note = "the ground is where the contact is (contact-euler)"
    else:
        note = "the contact's ground is tilted: the ground drawn is a picture only"
    if any(c["type"] == "set_object" and "/contact/" in c["path"] for c in commands):
        note += (
            "; black arrows: the contact forces at their centres of pressure (an arrow as long as the robot "
            "is big stands for its weight)"
        )
    if animated and vg.followed_link(tree) is not None:
        note += "; the camera follows the floating base" + (" horizontally" if on_contact else "")
    note += ". Play, pause and the time: below; speed and recording: Open Controls." if animated else "."
    note += " Drag to turn, scroll to zoom."
    page = _PAGE.format(
        title=html.escape(f"{tree.name} - denoc_bridge"),
        caption=html.escape(caption),
        note=html.escape(note),
        js=_meshcat_js(),
        commands="[\n" + ",\n".join(json.dumps(c) for c in packed) + "\n]",
    )
    out = _FilePath(path)
    atomic_write_bytes(out, page.encode("utf-8"))  # an interrupted write leaves the old page or none
    return out


# ----------------------------------------------------------------------------- live viewer
_SERVER = """
import tornado.web
_listen = tornado.web.Application.listen
def listen(self, port, address="127.0.0.1", **kwargs):
    return _listen(self, port, address="127.0.0.1", **kwargs)
tornado.web.Application.listen = listen
from meshcat.servers.zmqserver import main
main()
"""


def start_viewer():
    """A ``meshcat.Visualizer`` on a new local meshcat server that listens on 127.0.0.1 only
    (meshcat's own launcher serves its web page on every interface).  The server process is
    ``viewer.window.server_proc`` and is stopped when Python exits."""
    import meshcat

    proc = subprocess.Popen(
        [sys.executable, "-u", "-c", _SERVER], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True
    )
    atexit.register(lambda: proc.poll() is None and (proc.kill(), proc.wait()))
    urls = {}
    while len(urls) < 2:
        line = proc.stdout.readline().decode("utf-8").strip()
        if not line and proc.poll() is not None:
            raise RuntimeError(f"the meshcat server exited with status {proc.returncode}")
        key, _, value = line.partition("=")
        if key in ("zmq_url", "web_url"):
            urls[key] = value
    viewer = meshcat.Visualizer(zmq_url=urls["zmq_url"])
    viewer.window.server_proc = proc
    return viewer


class _Raw:
    """A lowered command, sent as is through ``viewer.window.send``."""

    def __init__(self, data):
        self.data = data

    def lower(self):
        return self.data


def _send(viewer, model, what, fps, color_by, loops, forces=True):
    """Draw into ``viewer``, or into a new local viewer, framed by the camera (the camera of a
    given viewer is left alone)."""
    prefix = viewer.path.lower() if viewer is not None and hasattr(viewer, "path") else "/meshcat"
    commands = scene_commands(
        model, what, fps=fps, color_by=color_by, loops=loops, prefix=prefix, camera=viewer is None, forces=forces
    )
    viewer = viewer if viewer is not None else start_viewer()
    for command in commands:
        viewer.window.send(_Raw(command))
    return viewer


def show(model, q=None, *, color_by: str = "module", viewer=None):
    """Draw ``model`` at configuration ``q`` (default: neutral) in a live meshcat viewer:
    ``viewer`` (a ``meshcat.Visualizer``), or a new local one (:func:`start_viewer`; open
    ``viewer.url()`` in a browser, or ``viewer.jupyter_cell()`` in a notebook).  Returns it."""
    _check_model(model)
    return _send(viewer, model, q, 30.0, color_by, True)


def play(model, trajectory, *, fps: float = 30.0, viewer=None, forces: bool = True):
    """Animate a :class:`~denoc_bridge.simulation.trajectory.Trajectory` at real time in a live meshcat
    viewer (resampled at ``fps``, meshcat's animation controls; ``forces``: a run's contact
    forces drawn as arrows); see :func:`show`.  Returns the viewer."""
    _check_model(model)

    if not isinstance(trajectory, Trajectory):
        raise InputError(f"play expects a Trajectory, got {type(trajectory).__name__}")
    return _send(viewer, model, trajectory, fps, "module", True, forces)
