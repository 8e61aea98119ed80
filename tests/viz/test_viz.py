"""denoc_bridge.viz: the scene, the static HTML export, the live viewer, and the exported
pages opened in headless Chromium as a person would (which also writes the README gallery).

The browser tests (tests/browser.py) need Debian's ``chromium``; without it they are skipped,
except under CI (the ``CI`` environment variable, set by ``.ci/run``) where they fail.
"""

from __future__ import annotations

import base64
import colorsys
import json
import re
import shutil
import subprocess
import time
import types
from pathlib import Path

import numpy as np
import pytest
from browser import screenshot

import denoc_bridge as db
from denoc_bridge import generators, viz
from denoc_bridge.errors import InputError
from denoc_bridge.io.robots import gripper4, load_robot
from denoc_bridge.testing import random_model
from denoc_bridge.viz import geometry as vg

FIGURES = Path(__file__).resolve().parents[2] / "docs" / "figures"


# ----------------------------------------------------------------------------- helpers
def decode_commands(path) -> list:
    """The meshcat commands embedded in an exported page, decoded."""
    import umsgpack

    text = Path(path).read_text(encoding="utf-8")
    found = re.search(r"var commands = (\[.*?\]);\n", text, re.S)
    assert found, "no command list in the page"
    return [umsgpack.unpackb(base64.b64decode(c)) for c in json.loads(found.group(1))]


def objects(commands) -> dict:
    """path -> lowered object of every set_object."""
    return {c["path"]: c["object"] for c in commands if c["type"] == "set_object"}


def object_color(obj) -> int:
    return obj["materials"][0]["color"]


def hex_color(rgb) -> int:
    return int(np.dot(np.round(np.asarray(rgb) * 255).astype(int), [65536, 256, 1]))


@pytest.fixture(scope="module")
def rope_trajectory():
    model = generators.rope()
    return model, db.simulate(model, np.zeros(model.nq), np.zeros(model.nv), 2.0, 1e-3)


@pytest.fixture(scope="module")
def fourbar_trajectory():
    model = generators.fourbar()
    return model, db.simulate(model, np.array([0.0, 0.5, -0.5, 0.5]), np.zeros(4), 3.0, 1e-3)


@pytest.fixture(scope="module")
def panda():
    pytest.importorskip("example_robot_data")
    model = load_robot("panda")
    q = db.neutral_configuration(model)
    q[:7], q[7:] = [0.0, -0.4, 0.0, -2.0, 0.0, 1.7, 0.8], 0.03
    return model, q


# ----------------------------------------------------------------------------- the HTML file
def test_export_is_self_contained(tmp_path, fourbar_trajectory):
    model, traj = fourbar_trajectory
    out = viz.export_html(model, traj, tmp_path / "fourbar.html")
    assert isinstance(out, Path) and out.is_file()
    text = out.read_text(encoding="utf-8")
    # nothing to fetch: no external scripts, styles or images, no http(s) address other than
    # the XHTML namespace inside three.js
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)\s*=", text, re.I)
    assert set(re.findall(r"https?://[^\s\"'<>)]+", text)) <= {"http://www.w3.org/1999/xhtml"}
    assert "new MeshCat.Viewer" in text and "handle_command_bytearray" in text
    assert "fetch(" not in text.split("var commands")[1]
    commands = decode_commands(out)
    paths = objects(commands)
    for name in model.link_names:
        assert f"/meshcat/fourbar/{name}" in paths
    assert {f"/meshcat/fourbar/loops/R5/{part}" for part in ("side1", "side2", "rod")} <= set(paths)
    assert object_color(paths["/meshcat/fourbar/loops/R5/side1"]) == hex_color(vg.LOOP_COLOR)
    # the animation: meshcat's set_animation, one clip per moving node, key frames at fps
    (anim,) = [c for c in commands if c["type"] == "set_animation"]
    assert anim["options"]["play"] is True
    n_frames = len(traj.resample(30.0))
    clips = {a["path"]: a["clip"] for a in anim["animations"]}
    assert f"/meshcat/fourbar/{model.link_names[2]}" in clips
    clip = clips[f"/meshcat/fourbar/{model.link_names[2]}"]
    assert clip["fps"] == 30.0
    tracks = {t["name"]: t for t in clip["tracks"]}
    assert set(tracks) == {".position", ".quaternion"}
    times = np.frombuffer(tracks[".position"]["times"].data, np.float32)
    assert np.array_equal(times, np.arange(n_frames))
    assert np.frombuffer(tracks[".quaternion"]["values"].data, np.float32).shape == (4 * n_frames,)
    # the key frames are the forward kinematics of the resampled trajectory
    q_last = traj.resample(30.0).q[-1]
    R, p = db.forward_kinematics(model, q_last)
    positions = np.frombuffer(tracks[".position"]["values"].data, np.float32).reshape(-1, 3)
    np.testing.assert_allclose(positions[-1], p[2], atol=1e-5)
    assert 0.8e6 < out.stat().st_size < 1.5e6  # meshcat's viewer is ~0.85 MB of it


def test_export_creates_a_missing_folder_and_names_a_file_in_the_way(tmp_path):
    model = gripper4()
    out = viz.export_html(model, np.zeros(4), tmp_path / "new" / "deeper" / "gripper.html")
    assert out.is_file() and out.read_text().startswith("<!DOCTYPE html>")
    (tmp_path / "blocker").write_text("")
    with pytest.raises(FileExistsError, match="cannot create the folder .*blocker: a file stands in the way"):
        viz.export_html(model, np.zeros(4), tmp_path / "blocker" / "gripper.html")


def test_configuration_export_has_no_animation(tmp_path):
    model = gripper4()
    out = viz.export_html(model, np.array([0.3, -0.2, 0.5, 0.1]), tmp_path / "gripper.html")
    commands = decode_commands(out)
    assert not [c for c in commands if c["type"] == "set_animation"]
    R, p = db.forward_kinematics(model, np.array([0.3, -0.2, 0.5, 0.1]))
    transforms = {c["path"]: np.array(c["matrix"]).reshape(4, 4).T for c in commands if c["type"] == "set_transform"}
    M = transforms["/meshcat/gripper4/link_2_2"]
    np.testing.assert_allclose(M[:3, :3], R[2], atol=1e-12)
    np.testing.assert_allclose(M[:3, 3], p[2], atol=1e-12)
    assert "/Cameras/default/rotated/<object>" in {c["path"] for c in commands if c["type"] == "set_property"}


def test_colours_by_module_link_or_none():
    model = gripper4()  # 3 modules: 1 + 2 + 1 links
    by = {}
    for color_by in ("module", "link", "none"):
        paths = objects(viz.scene_commands(model, None, color_by=color_by))
        by[color_by] = [object_color(paths[f"/meshcat/gripper4/{name}"]) for name in model.link_names]
    module = model.link_module
    assert by["module"] == [hex_color(vg.PALETTE[m]) for m in module]
    assert by["module"][1] == by["module"][2] and len(set(by["module"])) == 3
    assert len(set(by["link"])) == 4
    assert set(by["none"]) == {hex_color(vg.GREY)}
    with pytest.raises(InputError, match="color_by"):
        viz.scene_commands(model, None, color_by="rainbow")


def test_bad_inputs(tmp_path, rope_trajectory):
    model = gripper4()
    with pytest.raises(InputError, match="configuration of 4"):
        viz.export_html(model, np.zeros(3), tmp_path / "x.html")
    with pytest.raises(InputError, match="fps"):
        viz.export_html(model, np.zeros(4), tmp_path / "x.html", fps=0)
    with pytest.raises(db.InputTypeError, match="the configuration must hold real numbers"):
        viz.export_html(model, "abc", tmp_path / "x.html")
    with pytest.raises(InputError, match=r"the configuration holds nan at q\[2\]"):
        viz.export_html(model, [0, 0, np.nan, 0], tmp_path / "x.html")
    rope, traj = rope_trajectory
    with pytest.raises(InputError, match="nq = 4"):
        viz.export_html(model, traj, tmp_path / "x.html")
    with pytest.raises(InputError, match="Trajectory"):
        viz.play(model, np.zeros(4), viewer=object())
    assert not (tmp_path / "x.html").exists()


def test_loops_off_and_skeleton_covers_the_bars():
    model = generators.fourbar()
    assert not [p for p in objects(viz.scene_commands(model, None, loops=False)) if "/loops/" in p]
    segs = vg.segments(model)
    # body1 (the ground bar) has its child at its joint: it is drawn to twice its centre of mass
    assert any(np.allclose(b, 2 * model.com[0]) for _, b in segs[0])
    meshes, radius = vg.skeleton(model, extent=3.0)
    np.testing.assert_allclose(radius, 0.02, rtol=1e-9)  # the bars' radius, from their inertia
    assert all(len(m.faces) for m in meshes)


def test_urdf_meshes_tinted_by_module(panda):
    model, q = panda
    paths = {p: o for p, o in objects(viz.scene_commands(model, q)).items() if "/ground/" not in p}
    root = "/meshcat/panda"
    assert set(paths) == {f"{root}/panda_link0"} | {f"{root}/{name}" for name in model.link_names}
    n_vertices = sum(
        len(o["geometries"][0]["data"]["attributes"]["position"]["array"].data) // 12 for o in paths.values()
    )
    assert n_vertices > 50000  # the visual meshes, not cylinders
    colors = {name: object_color(paths[f"{root}/{name}"]) for name in model.link_names}
    assert len({colors[f"panda_link{k}"] for k in range(1, 8)}) == 1  # module 1: the arm (hand merged in link 7)
    assert len({colors["panda_link1"], colors["panda_leftfinger"], colors["panda_rightfinger"]}) == 3
    assert object_color(paths[f"{root}/panda_link0"]) == hex_color(vg.BASE_COLOR)


def test_ten_thousand_links_export_as_one_mesh_and_bounded_rods(tmp_path):
    # the work is bounded by what is built (one merged mesh, at most MAX_SEGMENTS rods) and the
    # file's size, not by a wall time that depends on the machine (the times are printed)
    model = generators.chain(10000)
    q = 0.015 * np.sin(0.01 * np.arange(model.nq))
    start = time.perf_counter()
    out = viz.export_html(model, q, tmp_path / "chain.html")
    seconds = time.perf_counter() - start
    size = out.stat().st_size
    paths = {p: o for p, o in objects(decode_commands(out)).items() if "/ground/" not in p}
    assert len(paths) == 1  # one module, one colour: one merged mesh
    (obj,) = paths.values()
    n_faces = len(obj["geometries"][0]["data"]["index"]["array"].data) // 12
    assert n_faces == 12 * 10000  # every link drawn
    print(f"\n10,000-link chain, configuration: {seconds:.2f} s, {size / 1e6:.2f} MB")
    assert size < 8e6
    traj = db.simulate(model, q, np.zeros(model.nv), 0.2, 1e-3, save_every=10)
    start = time.perf_counter()
    out = viz.export_html(model, traj, tmp_path / "chain_anim.html")
    seconds = time.perf_counter() - start
    size = out.stat().st_size
    commands = decode_commands(out)
    rods = [p for p in objects(commands) if "/rods/" in p]
    assert 2 <= len(rods) <= viz.MAX_SEGMENTS + 1
    print(
        f"10,000-link chain, {len(traj.resample(30.0))}-frame animation: {seconds:.2f} s, {size / 1e6:.2f} MB, "
        f"{len(rods)} rods"
    )
    assert size < 8e6


def test_rods_join_their_end_points():
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((50, 3)), rng.standard_normal((50, 3))
    B[0], B[1] = A[0] + [0, -2, 0], A[1] + [0, 3, 0]  # along -y and +y
    B[2] = A[2]  # zero length
    R, p, scale = vg.rod_placements(A, B)
    np.testing.assert_allclose(np.einsum("nij,nj->ni", R, scale * [0, 1, 0]) + p, B, atol=1e-12)
    np.testing.assert_allclose(np.einsum("nji,njk->nik", R, R), np.broadcast_to(np.eye(3), R.shape), atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(R), 1.0)
    quats = vg.quaternions(R)
    assert np.all(np.einsum("ij,ij->i", quats[1:], quats[:-1]) >= 0)  # continuous signs for slerp


class RecordingViewer:
    """The part of meshcat.Visualizer that viz uses, recording the commands."""

    def __init__(self):
        from meshcat.path import Path as MeshcatPath

        self.path = MeshcatPath(("meshcat", "here"))
        self.sent = []
        self.window = types.SimpleNamespace(send=lambda command: self.sent.append(command.lower()))


def test_show_and_play_send_to_a_given_viewer(fourbar_trajectory):
    model, traj = fourbar_trajectory
    viewer = RecordingViewer()
    assert viz.show(model, viewer=viewer) is viewer
    assert "/meshcat/here/fourbar/body1" in objects(viewer.sent)
    assert not [c for c in viewer.sent if c["path"].startswith("/Cameras")]  # the user's camera is left alone
    viewer.sent.clear()
    viz.play(model, traj, viewer=viewer, fps=10.0)
    (anim,) = [c for c in viewer.sent if c["type"] == "set_animation"]
    assert anim["animations"][0]["clip"]["fps"] == 10.0


def test_live_viewer_listens_on_localhost_only(fourbar_trajectory):
    model, traj = fourbar_trajectory
    viewer = viz.show(model)
    proc = viewer.window.server_proc
    try:
        assert viewer.url().startswith("http://127.0.0.1:")
        assert viewer.window.zmq_url.startswith("tcp://127.0.0.1:")
        if shutil.which("ss"):
            listening = subprocess.run(["ss", "-ltnp"], capture_output=True, text=True).stdout
            mine = [line for line in listening.splitlines() if f"pid={proc.pid}," in line]
            assert mine and all("127.0.0.1:" in line.split()[3] for line in mine)
        assert viz.play(model, traj, viewer=viewer) is viewer
        assert "set_animation" not in viewer.static_html()[:100]  # the server answers
    finally:
        proc.kill()
        proc.wait()


# ----------------------------------------------------------------------------- camera and ground
def transforms(commands) -> dict:
    return {c["path"]: np.array(c["matrix"]).reshape(4, 4).T for c in commands if c["type"] == "set_transform"}


def camera_distance(commands) -> float:
    (pos,) = [
        c["value"]
        for c in commands
        if c["type"] == "set_property" and c["path"].startswith("/Cameras/") and c["property"] == "position"
    ]
    return float(np.linalg.norm(pos))


def position_tracks(commands) -> dict:
    """path -> (N, 3) key frames of the animation's .position tracks."""
    (anim,) = [c for c in commands if c["type"] == "set_animation"]
    out = {}
    for a in anim["animations"]:
        for track in a["clip"]["tracks"]:
            if track["name"] == ".position":
                out[a["path"]] = np.frombuffer(track["values"].data, np.float32).reshape(-1, 3)
    return out


def ground_height(commands, root) -> float:
    plane = objects(commands)[f"{root}/ground/plane"]
    z = np.frombuffer(plane["geometries"][0]["data"]["attributes"]["position"]["array"].data, np.float32)[2::3]
    assert np.ptp(z) == 0
    return float(z[0])


def test_camera_frames_the_arm_when_the_fingers_fly_away(panda):
    """panda's fingers slide 8 m out of the hand (URDF limits not enforced): the camera frames
    the arm as if they had stayed, not the 8 m."""
    model, q = panda
    t = np.linspace(0.0, 2.0, 61)
    held = np.tile(q, (len(t), 1))
    held[:, 1] += 0.6 * np.sin(2 * t)  # the arm swings
    flying = held.copy()
    flying[:, 7:] = 0.03 + 2.0 * t[:, None] ** 2
    z = np.zeros((len(t), model.nv))
    framed = {}
    for name, Q in (("held", held), ("flying", flying)):
        commands = viz.scene_commands(model, db.Trajectory(model, t, Q, z, z, z), fps=30.0)
        framed[name] = -transforms(commands)["/meshcat/panda"][:3, 3], camera_distance(commands)
    (c_held, d_held), (c_fly, d_fly) = framed["held"], framed["flying"]
    assert np.linalg.norm(c_fly - c_held) < 0.05, (c_fly, c_held)  # the middle of the framed box
    assert 0.9 < d_fly / d_held < 1.1 and d_fly < 4.0, (d_fly, d_held)
    frame = vg.framing(*viz.meshcat._placements(model, flying), {}, None)
    assert frame.flown == (7, 8)  # the two fingers, framed at their start only


def test_camera_follows_a_floating_base_and_the_ground_is_under_its_feet():
    """A free-flyer falls 4.9 m in 1 s: the robot's root node is animated against the base,
    so the base stays where the camera looks; the ground is at the lowest point of the first
    pose and stays in the world (it goes by)."""
    model = random_model(5, 5, floating_base=True, joint_types=(db.JointType.REVOLUTE,))
    traj = db.simulate(model, db.neutral_configuration(model), np.zeros(model.nv), 1.0, 1e-3)
    commands = viz.scene_commands(model, traj, fps=20.0)
    root = f"/meshcat/{model.name}"
    tracks = position_tracks(commands)
    base = tracks[f"{root}/{model.link_names[0]}"]
    assert base[-1, 2] - base[0, 2] < -4.8  # it falls
    seen = tracks[root] + base  # where the base is drawn: still
    assert np.abs(seen - seen[0]).max() < 1e-4
    np.testing.assert_allclose(tracks[root][0], transforms(commands)[root][:3, 3], atol=1e-6)
    R, p = db.forward_kinematics(model, traj.q[0])
    ground = ground_height(commands, root)  # in the world, under the root node
    assert ground <= p[:, 2].min() + 1e-9
    lowest = min(p[:, 2].min(), *(p[k, 2] + (R[k] @ b)[2] for k, sk in enumerate(vg.segments(model)) for _, b in sk))
    assert abs(ground - lowest) < 1e-6
    assert {"type": "set_property", "path": "/Grid", "property": "visible", "value": False} in commands


def test_ground_of_fixed_bases(panda, rope_trajectory):
    """Under panda's base (where it is mounted: z = 0), under the lowest point of the rope's
    motion (it has no base of its own to stand on)."""
    model, q = panda
    assert abs(ground_height(viz.scene_commands(model, q), "/meshcat/panda")) < 0.01
    rope, traj = rope_trajectory
    commands = viz.scene_commands(rope, traj)
    lowest = min(float(db.forward_kinematics(rope, x)[1][:, 2].min()) for x in traj.resample(30.0).q)
    assert lowest - 0.1 < ground_height(commands, f"/meshcat/{rope.name}") < lowest


def test_page_opens_the_animation_controls_and_says_no_contact(tmp_path, fourbar_trajectory):
    model, traj = fourbar_trajectory
    text = viz.export_html(model, traj, tmp_path / "fourbar.html").read_text(encoding="utf-8")
    assert '<div id="player">' in text and "anim.play()" in text and "no contact is simulated" in text
    caption = re.search(r'<div id="caption">(.*?)</div>', text).group(1)
    assert caption.startswith("fourbar: 4 DOF, 4 links, animation; colours: 1 kinematic module<br>"), caption
    gripper = viz.export_html(gripper4(), None, tmp_path / "gripper.html").read_text(encoding="utf-8")
    assert "Play, pause" not in gripper and "no contact is simulated" in gripper
    assert 'getElementById("player").style.display = "flex"' in gripper  # shown only if there is an animation
    assert "Play, pause" in text


# ----------------------------------------------------------------------------- in a browser
def color_mask(img: np.ndarray, rgb, hue_tol: float = 14.0) -> np.ndarray:
    """Pixels of the hue of ``rgb`` (shaded: any brightness), saturated enough not to be the grey
    background, the grid or the text."""
    r, g, b = img[..., 0], img[..., 1], img[..., 2]
    mx, mn = img.max(axis=-1), img.min(axis=-1)
    delta = np.where(mx > mn, mx - mn, 1.0)
    hue = np.where(mx == r, (g - b) / delta % 6, np.where(mx == g, (b - r) / delta + 2, (r - g) / delta + 4)) * 60
    sat = np.where(mx > 0, (mx - mn) / np.where(mx > 0, mx, 1.0), 0.0)
    target = colorsys.rgb_to_hsv(*rgb)[0] * 360
    dh = np.abs((hue - target + 180) % 360 - 180)
    return (dh < hue_tol) & (sat > 0.35) & (mx > 0.12)


def without_controls(mask: np.ndarray) -> np.ndarray:
    """``mask`` without the page's play bar (bottom) and meshcat's "Open Controls" (top right)."""
    mask = mask.copy()
    mask[-60:] = False
    mask[:25, -250:] = False
    return mask


def drawn(img: np.ndarray) -> np.ndarray:
    """Pixels of any palette colour (the robot, coloured by module), outside the controls."""
    return without_controls(np.any([color_mask(img, c) for c in vg.PALETTE], axis=0))


def play_bar(img: np.ndarray) -> bool:
    """The page's play / pause bar: a dark strip at the bottom, in the middle."""
    w = img.shape[1]
    return bool((img[-45:-20, w // 2 - 150 : w // 2 + 150].max(axis=-1) < 0.35).mean() > 0.3)


@pytest.mark.slow
def test_browser_quickstart_panda_large_in_frame(tmp_path, chromium, monkeypatch):
    """The Quickstart's command as the README gives it; its panda.html opened at t = 0.3 s
    shows the arm large and in frame, with the animation controls open.  The picture and the
    plot are the README gallery's first two."""
    pytest.importorskip("example_robot_data")
    from denoc_bridge.cli.main import main

    monkeypatch.chdir(tmp_path)
    assert main(["simulate", "panda", "--duration", "2"]) == 0
    start = time.perf_counter()
    img = screenshot(chromium, tmp_path / "panda.html", tmp_path / "shot.png", 1000, size=(900, 700), fragment="t=0.3")
    print(f"\npanda: chromium screenshot in {time.perf_counter() - start:.1f} s")
    arm = without_controls(color_mask(img, vg.PALETTE[0]))
    assert arm.mean() > 0.02, "the arm (module 1) is not drawn large"
    ys, xs = np.nonzero(arm)
    assert np.ptp(ys) > 0.3 * img.shape[0], "the arm is small in the picture"
    assert 0.05 * img.shape[1] < xs.min() and xs.max() < 0.95 * img.shape[1] and ys.max() < 0.95 * img.shape[0]
    assert play_bar(img), "no play bar at the bottom of the page"
    FIGURES.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(tmp_path / "shot.png", FIGURES / "gallery_panda_modules.png")
    shutil.copyfile(tmp_path / "panda.png", FIGURES / "gallery_panda_plot.png")


@pytest.mark.slow
def test_browser_falling_talos_stays_in_frame(tmp_path, chromium):
    """talos falls 16 m in 1.8 s (no ground contact): the camera follows its base, so it is
    as large at 1.8 s as at the start, in the middle of the picture."""
    pytest.importorskip("example_robot_data")
    model = load_robot("talos")
    traj = db.simulate(model, db.neutral_configuration(model), np.zeros(model.nv), 1.8, 2e-3)
    html = viz.export_html(model, traj, tmp_path / "talos.html")
    boxes = []
    for t in (0.0, 1.8):
        img = screenshot(chromium, html, tmp_path / f"talos_{t}.png", 600, size=(900, 700), fragment=f"t={t}")
        ys, xs = np.nonzero(drawn(img))
        assert len(ys) > 0.04 * img.size / 3, f"talos is not drawn large at t = {t} s"
        assert (
            0.2 * img.shape[1] < xs.mean() < 0.8 * img.shape[1] and 0.2 * img.shape[0] < ys.mean() < 0.8 * img.shape[0]
        )
        boxes.append(np.ptp(ys))
    assert boxes[1] > 0.5 * img.shape[0] and abs(boxes[1] - boxes[0]) < 0.05 * img.shape[0], boxes


@pytest.mark.slow
def test_browser_ten_thousand_links(tmp_path, chromium):
    model = generators.chain(10000)
    html = viz.export_html(model, 0.015 * np.sin(0.01 * np.arange(model.nq)), tmp_path / "chain.html")
    start = time.perf_counter()
    img = screenshot(chromium, html, tmp_path / "chain.png", 500)
    print(f"\n10,000-link chain: chromium screenshot in {time.perf_counter() - start:.1f} s")
    assert color_mask(img, vg.PALETTE[0]).sum() > 1000, "the 10,000-link chain is not drawn"


def _animation_advances(chromium, tmp_path, name, model, traj, times_ms, gallery_t, marker=None):
    """The page plays the animation by itself: two screenshots at two virtual times show the
    robot, in different places.  The gallery picture is the page opened at #t=gallery_t
    (paused there: the same picture every run)."""
    html = viz.export_html(model, traj, tmp_path / f"{name}.html")
    start = time.perf_counter()
    shots = [screenshot(chromium, html, tmp_path / f"{name}_{t}.png", t) for t in times_ms]
    masks = [color_mask(img, vg.PALETTE[0]) for img in shots]
    for t, m in zip(times_ms, masks):
        assert m.sum() > 300, f"{name} not drawn at {t} ms of virtual time"
    if marker is not None:
        assert all(color_mask(img, marker).sum() > 10 for img in shots), f"{name}: no loop-closure marker"
    moved = (masks[0] ^ masks[1]).sum() / (masks[0] | masks[1]).sum()
    assert moved > 0.3, f"{name}: the animation does not advance ({moved:.0%} of the drawn pixels changed)"
    png = tmp_path / f"{name}_gallery.png"
    img = screenshot(chromium, html, png, 300, fragment=f"t={gallery_t}")
    print(f"\n{name}: 3 chromium screenshots in {time.perf_counter() - start:.1f} s")
    assert color_mask(img, vg.PALETTE[0]).sum() > 300
    FIGURES.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(png, FIGURES / f"gallery_{name}.png")


@pytest.mark.slow
def test_browser_rope_falls(tmp_path, chromium, rope_trajectory):
    model, traj = rope_trajectory
    _animation_advances(chromium, tmp_path, "rope", model, traj, (250, 1300), gallery_t=0.6)


@pytest.mark.slow
def test_browser_fourbar_moves(tmp_path, chromium, fourbar_trajectory):
    model, traj = fourbar_trajectory
    _animation_advances(chromium, tmp_path, "fourbar", model, traj, (100, 1300), gallery_t=0.5, marker=vg.LOOP_COLOR)


# ----------------------------------------------------------------------------- MJCF geoms
def _mjcf(rel: str):
    """(model, its mujoco.MjModel) of a file of the gymnasium wheel ("gym/...") or dm_control's."""
    import importlib.util
    import os
    import warnings

    mujoco = pytest.importorskip("mujoco")
    package, _, rest = rel.partition("/")
    if package == "gym":
        folder = os.path.join(
            importlib.util.find_spec("gymnasium").submodule_search_locations[0], "envs", "mujoco", "assets"
        )
    else:
        folder = importlib.util.find_spec("dm_control").submodule_search_locations[0]
    path = os.path.join(folder, rest)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", db.PhysicsWarning)
        return db.load_mjcf(path), mujoco.MjModel.from_xml_path(path)


@pytest.mark.parametrize(
    ("rel", "kinds"),
    [("gym/humanoid.xml", {2, 3}), ("dm_control/third_party/kinova/jaco_arm.xml", {5, 7})],
    ids=["humanoid-capsules-spheres", "jaco-meshes-cylinders"],
)
def test_mjcf_geoms_sit_where_mujoco_puts_them(rel, kinds):
    """Every drawn geom, placed through its link at random configurations, has MuJoCo's own
    world pose (geom_xmat, geom_xpos); meshes are MuJoCo's compiled vertices and faces."""
    from tests.io.mjcf_samples import random_poses

    model, m = _mjcf(rel)
    geoms = vg.mjcf_geoms(model, m)
    assert {int(m.geom_type[g]) for g, *_ in geoms} == kinds
    assert {int(m.geom_group[g]) for g, *_ in geoms} <= {0, 1, 2}
    for d, R, p in random_poses(model, m, seed=5):
        for g, link, Rg, pg, _, _ in geoms:
            Rw, pw = (R[link] @ Rg, R[link] @ pg + p[link]) if link >= 0 else (Rg, pg)
            np.testing.assert_allclose(Rw, d.geom_xmat[g].reshape(3, 3), atol=1e-12)
            np.testing.assert_allclose(pw, d.geom_xpos[g], atol=1e-12)
    for g, _, _, _, mesh, _ in geoms:
        assert mesh.faces.max() < len(mesh.vertices)
        if int(m.geom_type[g]) == 7:  # a mesh: MuJoCo's vertices
            k = int(m.geom_dataid[g])
            assert len(mesh.vertices) == m.mesh_vertnum[k] and len(mesh.faces) == m.mesh_facenum[k]
        else:  # a primitive: its extent is the geom's (a capsule's caps included)
            r, h = float(m.geom_size[g][0]), float(m.geom_size[g][1])
            extent = {2: 2 * r, 3: 2 * (r + h), 5: max(2 * r, 2 * h)}[int(m.geom_type[g])]
            assert np.ptp(mesh.vertices, axis=0).max() == pytest.approx(extent, rel=1e-6)


def test_mjcf_geoms_drawn_with_their_colours_and_hidden_groups_as_a_fallback(tmp_path):
    """The humanoid's capsules in the HTML export, one node per link, in MuJoCo's colours
    with color_by="none"; the skinned dog (its bones in group 5, its collision capsules in
    group 3, MuJoCo's viewer shows neither) draws each body's lowest group instead of nothing."""
    model, m = _mjcf("gym/humanoid.xml")
    paths = {p: o for p, o in objects(viz.scene_commands(model, color_by="none")).items() if "/ground/" not in p}
    root = f"/meshcat/{model.name}"
    bodies = [name for name in model.link_names if ":" not in name]  # not the massless links between joints
    assert len(bodies) == 11 and {f"{root}/{name}" for name in bodies} <= set(paths)
    own = {hex_color(np.round(m.mat_rgba[k][:3], 4)) for k in range(m.nmat)} | {
        hex_color(np.round(c[:3], 4)) for c in m.geom_rgba
    }
    assert {object_color(o) for o in paths.values()} <= own
    dog, dm = _mjcf("dm_control/locomotion/walkers/assets/dog_v2/dog.xml")
    geoms = vg.mjcf_geoms(dog, dm)
    drawn_bodies = {int(dm.geom_bodyid[g]) for g, *_ in geoms}
    assert drawn_bodies == {int(b) for b in dm.geom_bodyid if b > 0}  # every body with a geom (the floor: a plane)
    assert {int(dm.geom_group[g]) for g, *_ in geoms} == {1, 3}
    html = viz.export_html(dog, None, tmp_path / "dog.html")
    assert html.stat().st_size > 100_000


def test_a_contact_run_is_drawn_on_its_ground(tmp_path):
    """A box dropped from 5 cm onto a ground at z = 0.1 (contact-euler): the picture's ground
    is at 0.1, the camera follows the base horizontally only (the box falls in the picture and
    lands on the ground), and the page says where the ground is; a tilted ground is named."""
    from denoc_bridge import ContactPoint, Ground
    from denoc_bridge.io.mjcf import loads_mjcf

    xml = """<mujoco model="box"><worldbody><body name="box" pos="0 0 0.5"><freejoint/>
      <geom type="box" size="0.1 0.2 0.05" mass="2"/></body></worldbody></mujoco>"""
    model = loads_mjcf(xml)
    corners = [
        ContactPoint(0, np.array([sx * 0.1, sy * 0.2, sz * 0.05])) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)
    ]
    q0 = db.neutral_configuration(model)
    q0[2] = 0.2
    traj = db.simulate(
        model, q0, np.zeros(6), 0.6, 1e-3, method="contact-euler", contact=Ground(height=0.1), contact_points=corners
    )
    assert abs(traj.q[-1, 2] - 0.15) < 1e-9  # it landed
    commands = viz.scene_commands(model, traj, fps=20.0)
    root = f"/meshcat/{model.name}"
    assert ground_height(commands, root) == pytest.approx(0.1, abs=1e-6)  # float32 in the scene
    tracks = position_tracks(commands)
    assert np.abs(tracks[root][:, 2] - tracks[root][0, 2]).max() < 1e-6  # no vertical following
    page = viz.export_html(model, traj, tmp_path / "box.html").read_text(encoding="utf-8")
    assert "the ground is where the contact is (contact-euler)" in page and "no contact is simulated" not in page
    slope = db.simulate(
        model, q0, np.zeros(6), 0.01, 1e-3, method="contact-euler",
        contact=Ground(normal=(-0.1, 0.0, 1.0)), contact_points=corners,
    )  # fmt: skip
    assert vg.contact_ground(slope) is None
    assert "ground is tilted" in viz.export_html(model, slope, tmp_path / "s.html").read_text("utf-8")


def test_contact_marks_follow_the_force_and_vanish_while_apart():
    """Per pair: an arrow from the centre of pressure along the force, ARROW_PER_WEIGHT * size
    long per weight and cut at MAX_ARROW * size, and a dot there; both shrunk to nothing at the
    next frame's point while the pair pushes nothing; a pair that never pushes is not drawn."""
    nan = np.full(3, np.nan)
    force = np.array(
        [
            [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
            [[3.0, 0.0, 4.0], [0.0, 0.0, 0.0]],
            [[0.0, 0.0, 100.0], [0.0, 0.0, 0.0]],
        ]
    )
    point = np.array([[nan, nan], [[1.0, 2.0, 0.0], nan], [[1.5, 2.0, 0.0], nan]])
    size, weight = 0.8, 10.0
    ((pair, (R, p, scale), (at, dot)),) = vg.contact_marks(force, point, size, weight)
    assert pair == 0
    np.testing.assert_array_equal(p, [[1.0, 2.0, 0.0], [1.0, 2.0, 0.0], [1.5, 2.0, 0.0]])  # frame 0: frame 1's
    np.testing.assert_array_equal(at, p)
    assert np.all(scale[0] == 1e-9) and np.all(dot[0] == 1e-9) and np.all(dot[1:] == 1.0)
    length = vg.ARROW_PER_WEIGHT * size * 5.0 / weight
    np.testing.assert_allclose(scale[1], [1.0, length, 1.0])
    np.testing.assert_allclose(R[1] @ [0.0, 1.0, 0.0], [0.6, 0.0, 0.8], atol=1e-15)  # along the force
    np.testing.assert_allclose(scale[2], [1.0, vg.MAX_ARROW * size, 1.0])  # 100 N: cut
    assert vg.contact_marks(force[:, 1:], point[:, 1:], size, weight) == []


def test_a_contact_run_draws_its_forces(tmp_path):
    """A box resting on the ground: one arrow and one dot for the box/ground pair, at the
    centre of pressure (under the centre of mass) in every frame, the arrow straight up and as
    long as ARROW_PER_WEIGHT times the framed size (the ground carries the weight); none with
    forces=False, and the page's caption says what the arrows are."""
    from denoc_bridge import Ground
    from denoc_bridge.io.mjcf import loads_mjcf

    xml = """<mujoco model="box"><worldbody><body name="box" pos="0 0 0.5"><freejoint/>
      <geom type="box" size="0.1 0.2 0.05" mass="2"/></body></worldbody></mujoco>"""
    model = loads_mjcf(xml)
    corners = [db.ContactPoint(0, np.array([sx * 0.1, sy * 0.2, -0.05])) for sx in (-1, 1) for sy in (-1, 1)]
    q0 = db.neutral_configuration(model)
    q0[:3] = [0.3, -0.2, 0.05]
    traj = db.simulate(
        model, q0, np.zeros(6), 0.5, 1e-3, method="contact-euler", contact=Ground(), contact_points=corners
    )
    commands = viz.scene_commands(model, traj, fps=20.0)
    root = f"/meshcat/{model.name}"
    drawn = {p for p in objects(commands) if "/contact/" in p}
    assert drawn == {f"{root}/contact/box_ground/force", f"{root}/contact/box_ground/point"}
    assert objects(commands)[f"{root}/contact/box_ground/force"]["materials"][0]["depthTest"] is False
    tracks = position_tracks(commands)
    np.testing.assert_allclose(tracks[f"{root}/contact/box_ground/point"], [[0.3, -0.2, 0.0]] * 11, atol=1e-6)
    (anim,) = [c for c in commands if c["type"] == "set_animation"]
    (clip,) = [a["clip"] for a in anim["animations"] if a["path"] == f"{root}/contact/box_ground/force"]
    (values,) = [t["values"] for t in clip["tracks"] if t["name"] == ".scale"]
    scale = np.frombuffer(values.data, np.float32).reshape(-1, 3)
    R, p = viz.meshcat._placements(model, traj.resample(20.0).q)
    outline = {k: np.array([b for _, b in segs]) for k, segs in enumerate(vg.segments(model)) if segs}
    frame = vg.framing(R, p, outline, vg.followed_link(model), ground=0.0)  # what the camera frames
    # every frame, the last one too: its state has no step after it (no force saved), and the
    # picture holds the step that ended there
    assert np.isnan(traj.contact_point[-1]).all() and not traj.contact_force[-1].any()
    np.testing.assert_allclose(scale[:, 1], vg.ARROW_PER_WEIGHT * frame.size, rtol=1e-6)
    assert not [p for p in objects(viz.scene_commands(model, traj, forces=False)) if "/contact/" in p]
    with pytest.raises(InputError, match="forces must be True or False, got 'no'"):
        viz.scene_commands(model, traj, forces="no")  # a string is true: refused, not drawn
    page = viz.export_html(model, traj, tmp_path / "box.html").read_text(encoding="utf-8")
    assert "black arrows: the contact forces" in page
    bare = viz.export_html(model, traj, tmp_path / "bare.html", forces=False).read_text(encoding="utf-8")
    assert "black arrows" not in bare
