"""The denoc-bridge command line on MJCF files: info and validate (MuJoCo, then Pinocchio)."""

from __future__ import annotations

import os

import gymnasium
import numpy as np
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


def _capsule_arm(n: int, extra: str) -> str:
    """An MJCF arm of n capsules 0.3 m long on hinges j1 .. jn about y (j1 with ref 0.1 rad),
    then ``extra`` (tendons, equalities, keyframes)."""
    body = ""
    for k in range(n, 0, -1):
        ref, pos = (" ref='0.1'", "") if k == 1 else ("", " pos='0.3 0 0'")
        body = (
            f"<body name='{'abcdefgh'[k - 1]}'{pos}><joint name='j{k}' axis='0 1 0'{ref}/>"
            f"<geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.03'/>{body}</body>"
        )
    return f"<mujoco><compiler angle='radian'/><worldbody>{body}</worldbody>{extra}</mujoco>"


@pytest.mark.filterwarnings("ignore::denoc_bridge.PhysicsWarning")
def test_a_coupling_of_three_joints_from_the_command_line(tmp_path, capsys):
    """info lists a <tendon> equality of three joints as a joint coupling; simulate starts at
    the file's pose (MuJoCo's qpos0: the hinges at their ref) and keeps the coupling."""
    path = tmp_path / "finger.xml"
    path.write_text(
        _capsule_arm(
            3,
            "<tendon><fixed name='sum'><joint joint='j1' coef='1'/><joint joint='j2' coef='1'/>"
            "<joint joint='j3' coef='1'/></fixed></tendon><equality><tendon tendon1='sum'/></equality>",
        )
    )
    assert main(["info", str(path)]) == 0
    assert "joint coupling 'tendon0': 1 * j1 + 1 * j2 + 1 * j3 = 0.1 (1 constraint row)" in capsys.readouterr().out
    assert main(["validate", str(path), "--samples", "2"]) == 0
    assert "(compared: the tree, without its 1 joint coupling, as MuJoCo" in capsys.readouterr().out
    npz = tmp_path / "run.npz"
    args = ["simulate", str(path), "--duration", "0.2", "--no-html", "--no-plot", "--save", str(npz)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert (
        "1 joint coupling" in out
        and "start: the file's pose (MuJoCo's qpos0) projected onto the joint couplings" in out
    )
    traj = db.Trajectory.load(npz, db.load_mjcf(path))
    assert traj.q[0][0] == pytest.approx(0.1, abs=1e-12)  # j1 at its ref
    assert abs(traj.q[-1][0] - 0.1) > 1e-3 and np.abs(traj.q.sum(axis=1) - 0.1).max() < 1e-10


def test_a_keyframe_is_a_start_by_name(tmp_path, capsys):
    """info lists the file's pose and its keyframes; simulate --q0 KEY starts there (neutral is
    the neutral configuration, not the file's pose); a misspelt name gets the names."""
    path = tmp_path / "arm.xml"
    path.write_text(_capsule_arm(2, "<keyframe><key name='bent' qpos='0.4 -0.8'/></keyframe>"))
    assert main(["info", str(path)]) == 0
    assert "named configurations: qpos0, bent (simulate --q0 NAME starts there)" in capsys.readouterr().out
    starts = {"bent": [0.4, -0.8], "neutral": [0.0, 0.0], "qpos0": [0.1, 0.0]}
    for word, q in starts.items():
        npz = tmp_path / f"{word}.npz"
        argv = ["simulate", str(path), "--duration", "0.01", "--no-html", "--no-plot", "--q0", word, "--save", str(npz)]
        assert main(argv) == 0
        said = {"bent": "the model's configuration 'bent'", "neutral": "the neutral configuration"}
        assert said.get(word, "the file's pose (MuJoCo's qpos0)") in capsys.readouterr().out
        np.testing.assert_allclose(db.Trajectory.load(npz, db.load_mjcf(path)).q[0], q, atol=1e-15)
    assert main(["simulate", str(path), "--q0", "bnt", "--no-html", "--no-plot"]) == 2
    err = capsys.readouterr().err
    assert "--q0: 'bnt' is neither a number nor a configuration of 'arm'" in err and "did you mean bent?" in err
    assert "one of: neutral, random, qpos0, bent" in err
