"""The denoc-bridge command line on MJCF files: info and validate (MuJoCo, then Pinocchio)."""

from __future__ import annotations

import os

import gymnasium
import pytest

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
