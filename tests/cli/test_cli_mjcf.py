"""The denoc-bridge command line on MJCF files: info and validate (MuJoCo, then Pinocchio)."""

from __future__ import annotations

import os

import gymnasium
import pytest

import denoc_bridge as db
from denoc_bridge.cli import main

ASSETS = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets")


def test_info_reads_an_mjcf_file(capsys):
    assert main(["info", os.path.join(ASSETS, "hopper.xml")]) == 0
    out = capsys.readouterr().out
    assert "nq = 6, nv = 6" in out and "torso:rootx" in out


@pytest.mark.filterwarnings("ignore::denoc_bridge.PhysicsWarning")
def test_validate_compares_with_mujoco_and_pinocchio(capsys):
    assert main(["validate", os.path.join(ASSETS, "hopper.xml"), "--samples", "2"]) == 0
    out = capsys.readouterr().out
    assert "mj_fullM" in out and "qfrc_bias" in out and "pin.buildModelFromMJCF" in out
    assert "all checks passed" in out


@pytest.mark.filterwarnings("ignore::denoc_bridge.PhysicsWarning")
def test_validate_names_a_pinocchio_parser_that_disagrees_with_mujoco(capsys):
    assert main(["validate", os.path.join(ASSETS, "swimmer.xml"), "--samples", "2"]) == 0
    out = capsys.readouterr().out
    assert "pin.buildModelFromMJCF disagrees with MuJoCo's compiler" in out and "all checks passed" in out


def test_validate_refuses_a_file_mujoco_refuses(tmp_path, capsys):
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><body><joint type='hinge'/></body></worldbody></mujoco>")
    assert main(["validate", str(bad)]) != 0
    assert "MuJoCo cannot compile" in capsys.readouterr().err


@pytest.mark.filterwarnings("ignore::denoc_bridge.PhysicsWarning")
def test_simulate_starts_an_mjcf_file_at_its_pose(tmp_path, capsys):
    """MuJoCo's qpos0: a hinge at its ref, not at zero."""
    path = tmp_path / "arm.xml"
    path.write_text(
        "<mujoco><compiler angle='radian'/><worldbody><body name='a'><joint name='j1' axis='0 1 0' ref='0.4'/>"
        "<geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.03'/></body></worldbody></mujoco>"
    )
    npz = tmp_path / "run.npz"
    args = ["simulate", str(path), "--duration", "0.05", "--no-html", "--no-plot", "--save", str(npz)]
    assert main(args) == 0
    assert "start: the file's pose (MuJoCo's qpos0)" in capsys.readouterr().out
    assert db.Trajectory.load(npz, db.load_mjcf(path)).q[0][0] == pytest.approx(0.4, abs=1e-15)
