"""The default names of ``denoc-bridge simulate``'s animation and plot (issue 47, item 3): after the
model, never overwriting another robot's files silently, overwriting a robot's own."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest
from conftest import denoc_bridge_cmd

from denoc_bridge.cli import main
from denoc_bridge.cli.outputs import RECORD, file_stem


def _arm(model: str, links: int = 1) -> str:
    """An MJCF arm of ``links`` capsules on hinges about y, fixed base, named ``model``."""
    body = ""
    for k in range(links, 0, -1):
        pos = "" if k == 1 else " pos='0.3 0 0'"
        body = (
            f"<body name='b{k}'{pos}><joint name='j{k}' axis='0 1 0'/>"
            f"<geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.03'/>{body}</body>"
        )
    return f"<mujoco model='{model}'><worldbody>{body}</worldbody></mujoco>"


def _robot_file(folder: Path, model: str, links: int = 1, name: str = "robot.xml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(_arm(model, links))
    return path


@pytest.fixture
def stub_writers(monkeypatch):
    """The animation and plot writers replaced by ones that write "MODEL nv=N" (so that a test can
    tell whose file it holds) and nothing heavy."""

    def export_html(model, trajectory, path, fps=30.0, color_by="module", forces=True):
        Path(path).parent.mkdir(parents=True, exist_ok=True)  # as every writer does
        Path(path).write_text(f"{model.name} nv={model.nv}")
        return Path(path)

    def plot_summary(trajectory, path):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(f"{trajectory.model.name} nv={trajectory.model.nv}")
        return Path(path)

    monkeypatch.setitem(sys.modules, "denoc_bridge.viz", types.SimpleNamespace(export_html=export_html))
    monkeypatch.setattr("denoc_bridge.cli.simulate.plot_summary", plot_summary)


def _simulate(path, *extra) -> int:
    return main(["simulate", str(path), "--duration", "0.01", "--no-validate", *extra])


def _pictures(folder: Path) -> dict:
    """{file name: content} of the .html and .png files in ``folder``."""
    return {p.name: p.read_text() for p in sorted(folder.iterdir()) if p.suffix in (".html", ".png")}


@pytest.mark.filterwarnings("ignore::denoc_bridge.PhysicsWarning")
def test_two_robot_files_of_one_name_leave_two_sets_of_pictures(tmp_path, monkeypatch, stub_writers, capsys):
    """Two robot.xml in two folders, simulated one after the other from a third, leave a set of
    pictures each, named after their models."""
    a = _robot_file(tmp_path / "collection" / "ant", "ant", 1)
    h = _robot_file(tmp_path / "collection" / "hopper", "hopper", 2)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert _simulate(a) == 0
    out = capsys.readouterr().out
    assert f"wrote plots      {(work / 'ant.png').resolve()}" in out
    assert f"wrote animation  {(work / 'ant.html').resolve()}" in out
    assert _simulate(h) == 0
    out = capsys.readouterr().out
    assert "note:" not in out and f"wrote animation  {(work / 'hopper.html').resolve()}" in out
    assert _pictures(work) == {
        "ant.html": "ant nv=1",
        "ant.png": "ant nv=1",
        "hopper.html": "hopper nv=2",
        "hopper.png": "hopper nv=2",
    }


@pytest.mark.filterwarnings("ignore::denoc_bridge.PhysicsWarning")
def test_a_same_named_model_of_another_file_does_not_overwrite(tmp_path, monkeypatch, stub_writers, capsys):
    """Two files whose models are both named "arm": the second gets arm-2.* and says why; a re-run
    of either overwrites its own files (no arm-3), whatever the order."""
    one = _robot_file(tmp_path / "one", "arm", 1)
    two = _robot_file(tmp_path / "two", "arm", 2)
    monkeypatch.chdir(tmp_path)
    assert _simulate(one) == 0
    assert "note:" not in capsys.readouterr().out
    assert _simulate(two) == 0
    out = capsys.readouterr().out
    assert (
        f"note: arm.html and arm.png in this folder are from {one.resolve()}; this run writes arm-2.html "
        "and arm-2.png (--html and --plot name them)" in out
    ), out
    assert f"wrote animation  {(tmp_path / 'arm-2.html').resolve()}" in out
    expected = {"arm.html": "arm nv=1", "arm.png": "arm nv=1", "arm-2.html": "arm nv=2", "arm-2.png": "arm nv=2"}
    assert _pictures(tmp_path) == expected
    for path in (two, one, two, one):  # each run overwrites its own files and no other's
        (tmp_path / ("arm.png" if path is one else "arm-2.png")).unlink()
        assert _simulate(path) == 0
        out = capsys.readouterr().out
        assert _pictures(tmp_path) == expected, out
    assert "arm-2" not in out  # robot one again: its plain name, no note
    record = json.loads((tmp_path / RECORD).read_text())["files"]
    assert record == {
        "arm.html": str(one.resolve()),
        "arm.png": str(one.resolve()),
        "arm-2.html": str(two.resolve()),
        "arm-2.png": str(two.resolve()),
    }
    # the second robot's pictures keep their name when the first one's are gone
    for name in ("arm.html", "arm.png"):
        (tmp_path / name).unlink()
    assert _simulate(two, "--no-html") == 0
    assert "this robot's earlier output in this folder is named arm-2" in capsys.readouterr().out
    assert _pictures(tmp_path) == {"arm-2.html": "arm nv=2", "arm-2.png": "arm nv=2"}


@pytest.mark.filterwarnings("ignore::denoc_bridge.PhysicsWarning")
def test_a_file_not_recorded_is_not_overwritten(tmp_path, monkeypatch, stub_writers, capsys):
    """A file of the default name that no run recorded (written by hand, by an older version, the
    record deleted or unreadable) stays; a named robot (gripper -> gripper4) and a file whose
    model has that name do not overwrite each other either."""
    arm = _robot_file(tmp_path / "src", "arm", 1)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "arm.png").write_text("mine")
    assert _simulate(arm) == 0
    out = capsys.readouterr().out
    assert "note: arm.png in this folder is not recorded as written from this robot; this run writes" in out
    assert _pictures(tmp_path) == {"arm.png": "mine", "arm-2.html": "arm nv=1", "arm-2.png": "arm nv=1"}
    (tmp_path / RECORD).write_text("{not json")  # unreadable: the files are nobody's
    assert _simulate(arm, "--no-plot") == 0
    assert "writes arm-3.html" in capsys.readouterr().out
    assert main(["simulate", "gripper", "--duration", "0.01", "--no-validate", "--no-plot"]) == 0
    assert (tmp_path / "gripper4.html").read_text() == "gripper4 nv=4"
    mimic = _robot_file(tmp_path / "src", "gripper4", 1, name="g.xml")
    assert _simulate(mimic, "--no-plot") == 0
    assert "note: gripper4.html in this folder is from gripper4 (built in); this run writes gripper4-2.html" in (
        capsys.readouterr().out
    )
    assert (tmp_path / "gripper4.html").read_text() == "gripper4 nv=4"


@pytest.mark.filterwarnings("ignore::denoc_bridge.PhysicsWarning")
def test_explicit_names_overwrite_and_are_recorded(tmp_path, monkeypatch, stub_writers, capsys):
    """--html and --plot write where they are told, over another robot's file as before; the record
    then gives the file to the robot that wrote it, so the first robot's next default run does
    not overwrite it."""
    one = _robot_file(tmp_path / "one", "arm", 1)
    two = _robot_file(tmp_path / "two", "arm", 2)
    monkeypatch.chdir(tmp_path)
    assert _simulate(one, "--no-plot") == 0
    assert _simulate(two, "--no-plot", "--html", "arm.html") == 0
    assert "note:" not in capsys.readouterr().out
    assert _pictures(tmp_path) == {"arm.html": "arm nv=2"}
    assert _simulate(one, "--no-plot") == 0
    assert f"arm.html in this folder is from {two.resolve()}" in capsys.readouterr().out
    assert _pictures(tmp_path) == {"arm.html": "arm nv=2", "arm-2.html": "arm nv=1"}
    # a name given in a folder without a record writes no record there
    assert _simulate(one, "--no-plot", "--html", "out/x.html") == 0
    assert (tmp_path / "out" / "x.html").is_file() and not (tmp_path / "out" / RECORD).exists()


@pytest.mark.filterwarnings("ignore::denoc_bridge.PhysicsWarning")
def test_the_names_are_sanitised(tmp_path, monkeypatch, stub_writers, capsys):
    """A model named with a path separator, spaces, shell characters and accents gives a plain file
    name in the current folder."""
    path = _robot_file(tmp_path / "src", "../Élan arm: v2 $(rm) &amp; co", 1)
    monkeypatch.chdir(tmp_path)
    assert _simulate(path) == 0
    assert _pictures(tmp_path).keys() == {"Elan_arm_v2_rm_co.html", "Elan_arm_v2_rm_co.png"}
    assert not any(p.suffix in (".html", ".png") for p in tmp_path.parent.iterdir())


@pytest.mark.parametrize(
    ("name", "stem"),
    [
        ("panda", "panda"),
        ("planar_chain6", "planar_chain6"),
        ("go2 scene", "go2_scene"),
        ("a/b\\c", "a_b_c"),
        ("../../etc/passwd", "etc_passwd"),
        ("-rf", "rf"),
        (".hidden", "hidden"),
        ("x;y|z&`w`$(v)'q\"*?<>", "x_y_z_w_v_q"),
        ("Ünïcödé", "Unicode"),
        ("机器人", "fallback"),
        ("", "fallback"),
        ("CON", "CON_"),
        ("nul.v2", "nul.v2_"),
        ("x" * 300, "x" * 100),
    ],
)
def test_file_stem(name, stem):
    assert file_stem(name, "fallback") == stem


@pytest.mark.slow
def test_two_robot_files_from_one_folder_end_to_end(tmp_path):
    """The console script, real animation and plots: two robot.xml files whose models share a name
    and one whose model is named otherwise leave three sets of pictures; a re-run overwrites its own."""
    one = _robot_file(tmp_path / "one", "arm", 1)
    two = _robot_file(tmp_path / "two", "arm", 2)
    other = _robot_file(tmp_path / "three", "leg", 1)
    work = tmp_path / "work"
    work.mkdir()
    for path in (one, two, other, two):
        r = denoc_bridge_cmd("simulate", path, "--duration", "0.02", "--no-validate", cwd=work)
        assert r.returncode == 0, r.stderr
    assert "this run writes arm-2.html and arm-2.png" in r.stdout
    assert f"wrote plots      {(work / 'arm-2.png').resolve()}" in r.stdout
    names = {p.name for p in work.iterdir() if not p.name.startswith(".")}
    html = {"arm.html", "arm-2.html", "leg.html"}
    assert names in ({"arm.png", "arm-2.png", "leg.png"} | html, {"arm.png", "arm-2.png", "leg.png"}), names
    assert (work / RECORD).is_file()
