"""denoc_bridge.viz.plots: PNG files of trajectories and of the benchmark, no windows."""

from __future__ import annotations

import dataclasses
import json
import struct
from pathlib import Path

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.io.generators import chain, fourbar
from denoc_bridge.io.robots import gripper4
from denoc_bridge.simulation.trajectory import _cumulative_integral
from denoc_bridge.testing import random_model
from denoc_bridge.viz import plots

pytest.importorskip("matplotlib")


def png_size(path) -> tuple:
    """(width, height) in pixels of a PNG file, from its IHDR chunk."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG file"
    return struct.unpack(">II", head[16:24])


def assert_png(path, size_inches, dpi=plots._DPI):
    assert path.is_file() and path.stat().st_size > 5000, path
    assert png_size(path) == (round(size_inches[0] * dpi), round(size_inches[1] * dpi))


@pytest.fixture(scope="module")
def gripper_traj():
    """The gripper falling for 0.2 s (4 DOF, no loops), with a constant torque."""
    model = gripper4()
    q0 = np.array([-np.pi / 3, 0.0, 0.0, 0.0])
    return db.simulate(model, q0, np.zeros(4), 0.2, 1e-3, tau=np.array([0.01, 0.0, 0.0, 0.0]))


@pytest.fixture(scope="module")
def fourbar_traj():
    model = fourbar()
    q0 = db.loops.project_configuration(model, [0.0, 0.5, -0.5, 0.5])
    return db.simulate(model, q0, np.zeros(4), 0.1, 1e-3)


def test_plot_joints_writes_a_png_of_the_requested_size(tmp_path, gripper_traj):
    for quantity in ("q", "v", "a", "tau"):
        out = plots.plot_joints(gripper_traj, tmp_path / f"{quantity}.png", quantity=quantity)
        assert out == tmp_path / f"{quantity}.png"
        assert_png(out, (8.0, 4.5))
    out = plots.plot_joints(gripper_traj, tmp_path / "sub" / "two.png", joints=["joint_1_1", 3], size=(5, 3), dpi=80)
    assert_png(out, (5, 3), dpi=80)


def test_plot_joints_names_its_mistakes(tmp_path, gripper_traj):
    with pytest.raises(db.InputError, match="unknown joint 'elbow' in model 'gripper4'"):
        plots.plot_joints(gripper_traj, tmp_path / "x.png", joints=["elbow"])
    with pytest.raises(db.InputError, match="joint index 7 is out of range"):
        plots.plot_joints(gripper_traj, tmp_path / "x.png", joints=[7])
    with pytest.raises(db.InputError, match="quantity must be one of q, v, a, tau"):
        plots.plot_joints(gripper_traj, tmp_path / "x.png", quantity="jerk")
    with pytest.raises(db.InputError, match="expected a denoc_bridge Trajectory"):
        plots.plot_joints(np.zeros(3), tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


def test_plot_energy_and_summary(tmp_path, gripper_traj):
    assert_png(plots.plot_energy(gripper_traj, tmp_path / "energy.png"), (8.0, 7.5))
    assert_png(plots.plot_summary(gripper_traj, tmp_path / "summary.png"), (9.0, 2.3 * 4 + 0.6))


def test_constraint_error_needs_loops(tmp_path, gripper_traj, fourbar_traj):
    with pytest.raises(db.InputError, match="'gripper4' has no constraint error: its model has no loop closures"):
        plots.plot_constraint_error(gripper_traj, tmp_path / "c.png")
    assert not (tmp_path / "c.png").exists()
    assert_png(plots.plot_constraint_error(fourbar_traj, tmp_path / "c.png"), (8.0, 4.0))
    # with loops the summary has a panel for the closure error (and none for the torques: passive)
    assert_png(plots.plot_summary(fourbar_traj, tmp_path / "summary.png"), (9.0, 2.3 * 4 + 0.6))


def test_no_window_is_opened(tmp_path, gripper_traj):
    import matplotlib
    import matplotlib.pyplot as plt

    before = len(plt.get_fignums())
    plots.plot_summary(gripper_traj, tmp_path / "s.png")
    assert matplotlib.get_backend().lower() == "agg"
    assert len(plt.get_fignums()) == before, "plot functions must close their figures"


def test_many_dof_are_thinned_and_positions_are_one_per_dof(tmp_path):
    model = chain(60)
    traj = db.simulate(model, np.zeros(60), np.zeros(60), 0.01, 1e-3)
    fig, ax = plots.pyplot().subplots()
    drawn = plots.draw_joints(ax, traj, "q")
    plots.pyplot().close(fig)
    assert len(drawn) == plots.MAX_LINES
    # the chain falls from horizontal: its base joint swings most, then the ones next to it
    ranges = np.ptp(plots.joint_positions(model, traj.q), axis=0)
    assert drawn == sorted(np.argsort(-ranges)[: plots.MAX_LINES].tolist()) and drawn[0] == 0
    # continuous, spherical, planar and free-flyer joints: one unwrapped coordinate per DOF
    lie = (db.JointType.FREEFLYER, db.JointType.SPHERICAL, db.JointType.PLANAR, db.JointType.CONTINUOUS)
    free = random_model(4, 4, floating_base=True, joint_types=lie)
    rng = np.random.default_rng(0)
    ft = db.simulate(free, db.random_configuration(free, rng), rng.standard_normal(free.nv), 0.05, 1e-3)
    pos = plots.joint_positions(free, ft.q)
    assert pos.shape == (len(ft), free.nv) and np.all(np.isfinite(pos))
    assert len(plots.dof_labels(free)) == free.nv
    # positions move with the velocities: finite differences of the continuous angles match v
    k = next(i for i in range(free.n_links) if free.joint_type[i] == db.JointType.CONTINUOUS)
    j = int(free.idx_v[k])
    rate = np.gradient(pos[:, j], ft.t)
    assert np.abs(rate[2:-2] - ft.v[2:-2, j]).max() < 1e-3 * (1 + np.abs(ft.v[:, j]).max())
    assert_png(plots.plot_summary(ft, tmp_path / "free.png"), (9.0, 2.3 * 3 + 0.6))  # passive: no torque panel


SCALING = {
    "machine": {"cpu": "test CPU", "date": "2026-01-01"},
    "scaling": [
        {"nv": 10, "fd_us": 1.0, "id_us": 0.8, "aba_us": 1.5},
        {"nv": 100, "fd_us": 8.0, "id_us": 5.0, "aba_us": 30.0, "mj_forward_us": 50.0},
        {"nv": 1000, "fd_us": 70.0, "id_us": 60.0},
    ],
}


def test_plot_scaling_from_a_dict_or_the_json_file(tmp_path):
    assert_png(plots.plot_scaling(SCALING, tmp_path / "scaling.png"), (7.0, 5.0), dpi=120)
    path = tmp_path / "speed.json"
    path.write_text(json.dumps(SCALING))
    assert_png(plots.plot_scaling(path, tmp_path / "from_file.png"), (7.0, 5.0), dpi=120)
    with pytest.raises(db.InputError, match="non-empty 'scaling' list"):
        plots.plot_scaling({"scaling": []}, tmp_path / "bad.png")
    with pytest.raises(db.InputError, match="cannot read benchmark results"):
        plots.plot_scaling(tmp_path / "missing.json", tmp_path / "bad.png")
    assert not (tmp_path / "bad.png").exists()


def _trajectory(model, t, q, tau=None):
    z = np.zeros((len(t), model.nv))
    return db.Trajectory(model, t, q, z, z, z if tau is None else tau)


def test_the_dofs_that_moved_are_plotted_a_falling_base_included(tmp_path):
    """A free-flyer falling while its joints stay put up to round-off (talos without ground):
    the plot shows the base's z, not 12 curves of 1e-15 noise."""
    model = random_model(3, 6, floating_base=True, joint_types=(db.JointType.REVOLUTE,))
    rng = np.random.default_rng(7)
    t = np.linspace(0.0, 2.0, 201)
    q = np.tile(db.neutral_configuration(model), (len(t), 1))
    q[:, 2] = -0.5 * 9.81 * t**2  # the base falls 19.6 m
    q[:, 7:] += 1e-15 * rng.standard_normal((len(t), model.nq - 7))  # the joints: round-off
    traj = _trajectory(model, t, q)
    z = int(model.idx_v[0]) + 2
    assert plots.moving_dofs(traj) == ([z], 1)
    fig, ax = plots.pyplot().subplots()
    assert plots.draw_joints(ax, traj, "q") == [z]
    assert ax.get_title(loc="right") == f"the 1 of {model.nv} DOF that moved"
    assert [x.get_text() for x in ax.get_legend().get_texts()] == [plots.dof_labels(model)[z]]
    plots.pyplot().close(fig)
    # one joint moves too, a little: both, the base's z first in the legend's order of indices
    q[:, 9] += 1e-3 * np.sin(t)
    idx, n_moved = plots.moving_dofs(_trajectory(model, t, q))
    assert idx == [z, 8] and n_moved == 2  # q[9] is the position of v[8]
    # more movers than MAX_LINES: the widest ranges win
    q[:, 7:] += np.linspace(0.0, 1.0, model.nq - 7)[None, :] * t[:, None]
    idx, n_moved = plots.moving_dofs(_trajectory(model, t, q), max_lines=3)
    assert n_moved == 1 + (model.nq - 8) and len(idx) == 3 and z in idx  # the base, 4 of the 5 joints
    assert idx[1:] == [model.nv - 2, model.nv - 1]  # the two joints with the largest slopes


def test_nothing_moved_gravity_compensation_picks_the_torques(tmp_path):
    model = gripper4()
    t = np.linspace(0.0, 1.0, 11)
    q = np.zeros((len(t), 4))
    tau = np.zeros((len(t), 4))
    tau[:, 1] = 0.3
    assert plots.moving_dofs(_trajectory(model, t, q, tau)) == ([1], 1)
    idx, n_moved = plots.moving_dofs(_trajectory(model, t, q))
    assert n_moved == 0 and idx == [0, 1, 2, 3]


def test_passive_summary_has_no_torque_panel_and_readable_legends(tmp_path, gripper_traj, monkeypatch):
    passive = db.simulate(gripper_traj.model, gripper_traj.q[0], np.zeros(4), 0.1, 1e-3)
    assert not np.any(passive.tau)
    plt = plots.pyplot()
    before = set(plt.get_fignums())
    figures = []
    original = plots.save_figure

    def keep(fig, path, **kwargs):
        figures.append([a.get_ylabel() for a in fig.axes])
        texts = [t for a in fig.axes if a.get_legend() for t in a.get_legend().get_texts()]
        assert texts and min(t.get_fontsize() for t in texts) >= 8
        return original(fig, path, **kwargs)

    monkeypatch.setattr(plots, "save_figure", keep)
    assert_png(plots.plot_summary(passive, tmp_path / "passive.png"), (9.0, 2.3 * 3 + 0.6))
    assert_png(plots.plot_summary(gripper_traj, tmp_path / "driven.png"), (9.0, 2.3 * 4 + 0.6))
    assert set(plt.get_fignums()) == before
    assert not any("torque" in label for label in figures[0])
    assert any("torque" in label for label in figures[1])


def test_energy_panel_names_what_the_joint_limit_stops_took(gripper_traj, plot_titles):
    """With stops (``limit_work``) the dotted line is E(0) + W_in - W_stops and says so, and the
    summary's title writes the balance with W_stops; without, "E(0) + work in"."""
    plt = plots.pyplot()
    n = len(gripper_traj)
    stopped = dataclasses.replace(gripper_traj, limit_work=np.linspace(0.0, 0.25, n), _cache={})
    for traj, label in ((gripper_traj, "E(0) + work in"), (stopped, "E(0) + W_in - W_stops")):
        fig, ax = plt.subplots()
        try:
            plots.draw_energy(ax, traj)
            lines = {line.get_label(): line for line in ax.get_lines()}
            assert label in lines, list(lines)
            t, y = lines[label].get_data()
            w_in = _cumulative_integral(traj.power_in, traj.t)
            expected = traj.total_energy[0] + w_in - (0.0 if traj.limit_work is None else traj.limit_work)
            assert np.allclose(y, np.interp(t, traj.t, expected), rtol=0, atol=1e-12)
        finally:
            plt.close(fig)
    titles = plot_titles
    plots.plot_summary(stopped, "unused.png")
    assert any("max |E - E(0) - W_in + W_stops|" in t for t in titles), titles


def test_positions_of_a_mimic_model_follow_its_independent_joints():
    """A MimicModel's mimic joint shares its velocity index with the next moving joint: the
    positions of the DOFs asked for are those of the joints that own them, not NaN (the position
    panel of a mimic robot's plot was empty)."""
    model = db.load_urdf(str(Path(__file__).resolve().parents[2] / "urdf" / "mimic_gripper.urdf"), mimic=True)
    rng = np.random.default_rng(2)
    q = np.array([db.random_configuration(model, rng) for _ in range(3)])
    every = plots.joint_positions(model, q)
    assert np.all(np.isfinite(every))
    for dof in range(model.nv):
        some = plots.joint_positions(model, q, [dof])
        assert np.array_equal(some[:, dof], every[:, dof]), f"DOF {dof}"
