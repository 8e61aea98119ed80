"""The denoc-bridge command line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from denoc_bridge.cli import main


def test_info_panda_prints_dof_and_module_tree(capsys):
    assert main(["info", "panda"]) == 0
    out = capsys.readouterr().out
    assert "nq = 9, nv = 9" in out and "3 kinematic modules" in out
    assert "M1: 7 links, 7 DOF" in out and "M2: 1 link, 1 DOF" in out and "M3: 1 link, 1 DOF" in out
    assert "panda_finger_joint2" in out


def test_info_talos_floating_and_gripper(capsys):
    assert main(["info", "talos", "--floating"]) == 0
    out = capsys.readouterr().out
    assert "free-flyer base" in out and "root_joint" in out
    assert main(["info", "gripper"]) == 0
    out = capsys.readouterr().out
    assert "M2: 2 links, 2 DOF" in out and "joint_2_2" in out


def test_validate_passes_on_solo12(capsys):
    assert main(["validate", "solo12", "--samples", "2"]) == 0
    out = capsys.readouterr().out
    assert "all checks passed" in out and "pin.computeMinverse" in out


@pytest.mark.parametrize("argv,message", [
    (["info", "no_such_robot"], "unknown robot 'no_such_robot'"),
    (["info", "missing/robot.urdf"], "no such URDF file"),
    (["validate", "gripper", "--samples", "0"], "--samples must be at least 1"),
])
def test_user_mistakes_are_one_line_and_exit_2(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_broken_file_is_one_line(tmp_path, capsys):
    f = tmp_path / "bad.urdf"
    f.write_text("<robot name='x'><link name='a'/><joint name='j' type='hinge'><parent link='a'/>"
                 "<child link='a'/></joint></robot>")
    assert main(["info", str(f)]) == 2
    assert "unknown joint type 'hinge'" in capsys.readouterr().err


def test_console_script_runs_in_a_subprocess():
    result = subprocess.run([sys.executable, "-m", "denoc_bridge.cli", "info", "gripper"], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0 and "gripper4" in result.stdout
    result = subprocess.run([sys.executable, "-m", "denoc_bridge.cli"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "info" in result.stdout
