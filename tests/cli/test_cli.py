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


@pytest.mark.parametrize(
    "argv,message",
    [
        (["info", "no_such_robot"], "unknown robot 'no_such_robot'"),
        (["info", "missing/robot.urdf"], "no such URDF file"),
        (["simulate", "nothere.xml"], "no such MJCF file: nothere.xml"),
        (["validate", "gripper", "--samples", "0"], "--samples must be at least 1"),
        (["info", "tallos"], "unknown robot 'tallos'"),
        (["validate", "pnda"], "did you mean panda?"),
        (["info", "pupa560"], "did you mean puma560?"),
        (["simulate", "gripper", "--method", "rk5"], "--method must be one of rk4, euler"),
        (["simulate", "gripper", "--method", "rk5"], "got 'rk5'; did you mean RK45 or rk4?"),
        (["sweep", "gripper", "--method", "Rk5", "--grid", "mass_scale=1", "--out", "x"], "did you mean RK45 or rk4?"),
    ],
)
def test_user_mistakes_are_one_line_and_exit_2(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_misspelled_robot_suggests_the_close_names_not_the_whole_list(capsys):
    assert main(["info", "tallos"]) == 2
    err = capsys.readouterr().err
    assert err.rstrip().endswith("did you mean talos, talos_box or talos_arm?"), err
    assert "known robots" not in err and "alex_nub_hands" not in err


def test_misspelled_command_suggests_the_command(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["simulat", "panda"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("denoc-bridge: error: no command 'simulat' (the commands: info, validate, simulate")
    assert "; did you mean simulate? (see 'denoc-bridge --help')" in err and err.count("\n") == 1


def test_sweep_without_dask_says_inline(monkeypatch, capsys):
    """Without dask.distributed the CLI names its own flag (--inline), not the Python keyword."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "distributed" else real(name, *a))
    assert main(["sweep", "gripper", "--grid", "mass_scale=1", "--out", "x"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'denoc-bridge[sweep]'" in err and "with --inline" in err and "scheduler=" not in err


def test_broken_file_is_one_line(tmp_path, capsys):
    f = tmp_path / "bad.urdf"
    f.write_text(
        "<robot name='x'><link name='a'/><joint name='j' type='hinge'><parent link='a'/>"
        "<child link='a'/></joint></robot>"
    )
    assert main(["info", str(f)]) == 2
    assert "unknown joint type 'hinge'" in capsys.readouterr().err


@pytest.mark.slow
def test_console_script_runs_in_a_subprocess():
    result = subprocess.run(
        [sys.executable, "-m", "denoc_bridge.cli", "info", "gripper"], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0 and "gripper4" in result.stdout
    result = subprocess.run([sys.executable, "-m", "denoc_bridge.cli"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "info" in result.stdout


# ------------------------------------------------------------------ the installed entry point
import dataclasses  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import struct  # noqa: E402
import types  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from conftest import denoc_bridge_cmd  # noqa: E402

import denoc_bridge as db  # noqa: E402
from denoc_bridge.cli.simulate import _energy_summary  # noqa: E402
from denoc_bridge.io.robots import gripper4  # noqa: E402

HAS_VIZ = importlib.util.find_spec("denoc_bridge.viz") is not None


def png_size(path) -> tuple:
    head = Path(path).read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG file"
    return struct.unpack(">II", head[16:24])


def assert_animation(folder, name, result):
    """The HTML animation was written (or, without denoc_bridge.viz, the run said why not)."""
    html = Path(folder) / f"{name}.html"
    if HAS_VIZ:
        assert html.is_file() and html.stat().st_size > 1000, result.stdout + result.stderr
        assert "<html" in html.read_text(errors="replace")[:2000].lower()
        assert f"wrote animation  {html.resolve()}" in result.stdout
    else:
        assert not html.exists() and "no HTML animation" in result.stderr


@pytest.mark.slow
def test_help_shows_the_commands_and_examples(tmp_path):
    r = denoc_bridge_cmd("--help", cwd=tmp_path)
    assert r.returncode == 0
    for text in (
        "info",
        "validate",
        "simulate",
        "bench",
        "examples:",
        "denoc-bridge simulate panda --duration 2",
        "chain:1000:spatial",
        "fourbar",
        "exits with status 2",
    ):
        assert text in r.stdout, text
    r = denoc_bridge_cmd("simulate", "--help", cwd=tmp_path)
    assert r.returncode == 0
    for text in (
        "--duration",
        "--dt",
        "--method",
        "--q0",
        "--torque",
        "gravity-compensation",
        "--html",
        "--plot",
        "--save",
        "--no-validate",
        "examples:",
        "chain:N[:planar|spatial]",
    ):
        assert text in r.stdout, text
    for command in ("validate", "bench", "info"):
        r = denoc_bridge_cmd(command, "--help", cwd=tmp_path)
        assert r.returncode == 0 and "examples:" in r.stdout, command


@pytest.mark.slow
def test_simulate_fourbar_writes_plot_and_animation(tmp_path):
    r = denoc_bridge_cmd("simulate", "fourbar", "--duration", "0.2", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "checked against Pinocchio" in out and "forward dynamics and kinematics agree" in out
    assert "theta_2 = 0.5 rad with the loop closed" in out
    assert "completed: 200 steps" in out and "energy drift" in out
    err = float(out.split("max constraint error ")[1].split()[0])
    assert err < 1e-10
    png = tmp_path / "fourbar.png"
    assert png_size(png) == (900, 980)  # plot_summary with the closure-error panel (passive: no torque panel)
    assert f"wrote plots      {png.resolve()}" in out
    assert_animation(tmp_path, "fourbar", r)


@pytest.mark.slow
def test_simulate_a_generated_chain(tmp_path):
    r = denoc_bridge_cmd("simulate", "chain:50", "--duration", "0.05", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "planar_chain50: 50 DOF" in r.stdout and "the neutral configuration (horizontal)" in r.stdout
    assert png_size(tmp_path / "planar_chain50.png") == (900, 750)  # passive: no torque panel
    assert_animation(tmp_path, "planar_chain50", r)


@pytest.mark.slow
def test_simulate_panda_writes_the_three_files(tmp_path):
    r = denoc_bridge_cmd("simulate", "panda", "--duration", "0.1", "--save", "panda.npz", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "pin.buildModelFromUrdf" in r.stdout and "completed: 100 steps" in r.stdout
    assert png_size(tmp_path / "panda.png")[0] == 900
    assert_animation(tmp_path, "panda", r)
    from denoc_bridge.io.robots import load_robot

    traj = db.Trajectory.load(tmp_path / "panda.npz", load_robot("panda"))
    assert len(traj) == 101 and abs(traj.t[-1] - 0.1) < 1e-12
    start = np.clip(db.neutral_configuration(traj.model), traj.model.lower_limit, traj.model.upper_limit)
    assert np.abs(traj.q[0] - start).max() == 0  # the neutral configuration moved inside the joint limits
    assert "Traceback" not in r.stderr and "━" not in r.stderr  # no progress bar noise when not on a terminal


@pytest.mark.slow
def test_gravity_compensation_holds_the_robot_still(tmp_path):
    q0 = [0, -0.5, 0, -2, 0, 1.5, 0.7, 0.01, 0.01]
    r = denoc_bridge_cmd(
        "simulate",
        "panda",
        "--duration",
        "0.1",
        "--torque",
        "gravity-compensation",
        "--q0",
        *q0,
        "--no-html",
        "--no-plot",
        "--no-validate",
        "--save",
        "g.npz",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert "gravity compensation" in r.stdout and not list(tmp_path.glob("*.png"))
    with np.load(tmp_path / "g.npz") as f:
        assert np.abs(f["q"] - np.array(q0)).max() < 1e-9


@pytest.mark.slow
def test_torque_from_a_csv_file(tmp_path):
    (tmp_path / "tau.csv").write_text("0.01, 0, 0, -0.002\n")
    r = denoc_bridge_cmd(
        "simulate",
        "gripper",
        "--duration",
        "0.05",
        "--torque",
        "tau.csv",
        "--no-html",
        "--no-plot",
        "--save",
        "t.npz",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert "the constant torque of tau.csv" in r.stdout
    with np.load(tmp_path / "t.npz") as f:
        assert np.all(f["tau"] == [0.01, 0, 0, -0.002])


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv,message",
    [
        (["simulate", "no_such_robot"], "unknown robot 'no_such_robot'"),
        (["simulate", "gripper", "--bogus"], "unrecognized arguments: --bogus"),
        (["simulate", "gripper", "--torque", "garbage.npy"], "--torque: cannot read garbage.npy: not a NumPy .npy"),
        (["simulate", "gripper", "--torque", "garbage.csv"], "--torque: cannot read garbage.csv"),
        (["simulate", "gripper", "--torque", "missing.csv"], "--torque: no such file: missing.csv"),
        (["simulate", "gripper", "--torque", "sideways"], "--torque must be zero, gravity-compensation or a .npy"),
        (["simulate", "gripper", "--torque", "gravity-compensaton"], "did you mean gravity-compensation?"),
        (["simulate", "chain:abc"], "bad chain spec 'chain:abc'"),
        (["simulate", "chain:0"], "bad chain spec 'chain:0'"),
        (["info", "chain:10:curly"], "kind 'curly' is neither 'planar' nor 'spatial'"),
        (["simulate", "gripper", "--duration", "-1"], "--duration must be a positive number of seconds, got -1"),
        (["simulate", "gripper", "--duration", "0.0015"], "is not a whole number of steps"),
        (["simulate", "gripper", "--q0", "1", "2"], "--q0 needs 4 numbers for 'gripper4'"),
        (["simulate", "gripper", "--method", "leapfrog"], "--method must be one of rk4, euler"),
        (["simulate", "fourbar", "--method", "RK45"], "'fourbar' has 1 loop closure"),
        (["simulate", "gripper", "--plot", "/dev/null/x.png"], "--plot: cannot create the folder /dev/null"),
        (["validate", "chain:1000"], "would take ~59.6 GB"),
        (["frobnicate"], "no command 'frobnicate' (the commands: info, validate, simulate"),
        (
            ["simulate", "xarm7", "--duration", "0.05"],
            "--no-passive simulates without the URDF's joint damping",
        ),  # stiff dampers
        (["simulate", "gripper", "--seed", "-1"], "--seed must be a non-negative integer, got -1"),
        (["validate", "gripper", "--seed", "-5"], "--seed must be a non-negative integer, got -5"),
        (
            ["simulate", "gripper", "--plot", "x.txt"],
            "--plot: cannot write a plot as 'x.txt': give a file ending in .png",
        ),
        (["simulate", "gripper", "--html", "/proc/x.html"], "--html: cannot write /proc/x.html"),
        (["simulate", "gripper", "--save", "."], "--save: . is a folder; give a file name"),
        (["simulate", "gripper", "--stream", "a.npy", "--save", "b.npz"], "give --save or --stream, not both"),
        (["simulate", "gripper", "--stream", "a.npy", "--method", "RK45"], "--stream streams the fixed-step methods"),
        (["simulate", "gripper", "--stream", "/proc/a.npy"], "--stream: cannot write /proc/a.npy"),
        (["simulate", "gripper", "--save-every", "0"], "--save-every must be a positive whole number of steps"),
        (
            ["simulate", "chain:6", "--duration", "1e6", "--dt", "1e-4", "--save-every", "1", "--no-validate"],
            "or stream the states to disk with --stream run.npy",
        ),
        (["simulate", "gripper", "--fps", "1e9"], "--fps must be a frame rate between 0 and 1000 per second"),
        (["simulate", "gripper", "--html", "x.html", "--no-html"], "--html and --no-html contradict each other"),
        (["simulate", "gripper", "--q0", "1_0", "0", "0", "0"], "--q0: '1_0' is not a number"),
        (["simulate", "talos", "--q0", "half_siting"], "(give 39 numbers, or one of: neutral, random, half_sitting)"),
        (["simulate", "gripper", "--q0", "up", "0", "0", "0"], "--q0: 'up' is not a number (give 4 numbers, or one"),
        (["simulate", "gripper", "--torque", "complex.npy"], "--torque: cannot read complex.npy: it holds complex128"),
        (["bench", "--out", "/proc/benchx"], "--out: cannot create the folder /proc/benchx"),
    ],
)
def test_mistakes_are_one_line_on_stderr_and_exit_2(tmp_path, argv, message):
    (tmp_path / "garbage.npy").write_text("not an array")
    (tmp_path / "garbage.csv").write_text("1, 2, x, 4\n")
    np.save(tmp_path / "complex.npy", np.ones(4) + 1j)
    r = denoc_bridge_cmd(*argv, cwd=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert message in r.stderr and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("denoc-bridge")
    assert not list(tmp_path.glob("*.png")) and not list(tmp_path.glob("*.html"))


@pytest.mark.slow
def test_save_names_the_file_it_writes(tmp_path):
    """--save without .npz writes NAME.npz (as numpy does) and says so; nothing is left behind by
    the up-front checks of the output files."""
    r = denoc_bridge_cmd(
        "simulate",
        "gripper",
        "--duration",
        "0.01",
        "--no-html",
        "--no-plot",
        "--save",
        "run",
        "--no-validate",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert f"wrote trajectory {(tmp_path / 'run.npz').resolve()}" in r.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.npz"]


def test_stream_writes_the_states_as_the_run_goes(tmp_path):
    """--stream run writes run.npy (the suffix appended) and says so; it reads back lazily with the
    numbers of the same run in memory; --save-every keeps every k-th step."""
    r = denoc_bridge_cmd(
        "simulate", "chain:3", "--duration", "0.5", "--no-html", "--no-plot", "--no-validate",
        "--stream", "run", "--save-every", "10", cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert f"wrote trajectory {(tmp_path / 'run.npy').resolve()}" in r.stdout and "51 saved states" in r.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.npy"]
    chain = db.load_robot("chain:3")
    traj = db.Trajectory.load(tmp_path / "run.npy", chain)
    memory = db.simulate(chain, db.neutral_configuration(chain), np.zeros(3), 0.5, 1e-3, save_every=10)
    assert np.array_equal(traj.q, memory.q) and np.array_equal(traj.t, memory.t)


@pytest.mark.slow
def test_pinocchio_parser_messages_do_not_leak(tmp_path):
    """urdfdom prints its refusals on file descriptor 2 from C++; validate reports the reason in
    its one line about the reference model and keeps stderr clean."""
    (tmp_path / "nolimit.urdf").write_text(
        '<robot name="r"><link name="b"/><link name="l"><inertial><mass value="1"/><inertia ixx="1" iyy="1" '
        'izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link><joint name="j1" type="revolute"><parent link="b"/>'
        '<child link="l"/><axis xyz="0 0 1"/></joint></robot>'
    )
    r = denoc_bridge_cmd("validate", "nolimit.urdf", "--samples", "1", cwd=tmp_path)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert (
        "to_pinocchio (Pinocchio's URDF parser refuses this file: Joint [j1] is of type REVOLUTE but it does "
        "not specify limits)"
    ) in r.stdout


@pytest.mark.slow
def test_validate_mismatch_exits_1_with_a_table(tmp_path):
    r = denoc_bridge_cmd("validate", "panda", "--tol", "1e-20", "--samples", "1", cwd=tmp_path)
    assert r.returncode == 1
    assert "MISMATCH" in r.stdout and "forward_dynamics" in r.stdout and "pin.computeMinverse" in r.stdout


@pytest.mark.slow
def test_warnings_are_one_line(tmp_path):
    """The PUMA's hub inertias break the triangle inequality: a one-line warning, not a source line."""
    r = denoc_bridge_cmd("info", "puma560", "--floating", cwd=tmp_path)
    assert r.returncode == 0
    assert r.stderr.startswith("denoc-bridge: warning: model 'puma560'") and r.stderr.count("\n") == 1


# ------------------------------------------------------------------ in-process: generator specs, viz, bench
@pytest.mark.parametrize(
    "spec,text",
    [
        ("rope", "nq = 100, nv = 100"),
        ("chain:3:spatial", "spatial_chain3"),
        ("chain:7", "planar_chain7"),
        ("puma560", "nq = 6, nv = 6"),
        ("fourbar", "loop closure 'R5'"),
        ("chain12", "chain12"),
    ],
)
def test_generator_specs(capsys, spec, text):
    assert main(["info", spec]) == 0
    assert text in capsys.readouterr().out


@pytest.mark.parametrize("spec", ["fourbar", "chain:5:spatial", "puma560", "rope"])
def test_validate_generator_specs(capsys, spec):
    assert main(["validate", spec, "--samples", "1"]) == 0
    out = capsys.readouterr().out
    assert "all checks passed" in out and "to_pinocchio (a generated model)" in out


def test_simulate_stops_on_a_mismatch(tmp_path, monkeypatch, capsys):
    from denoc_bridge import validation

    real = validation.compare_with_pinocchio

    def disagreeing(*args, **kwargs):
        report = real(*args, **kwargs)
        report.checks[0].passed = False  # forward_dynamics
        return report

    monkeypatch.setattr(validation, "compare_with_pinocchio", disagreeing)
    monkeypatch.chdir(tmp_path)
    assert main(["simulate", "gripper", "--duration", "0.01"]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH against Pinocchio" in out and "not simulating" in out
    assert not list(tmp_path.iterdir())
    assert main(["simulate", "gripper", "--duration", "0.01", "--no-validate", "--no-html"]) == 0


def test_simulate_hands_the_trajectory_to_viz_export_html(tmp_path, monkeypatch, capsys):
    """The CLI calls denoc_bridge.viz.export_html(model, trajectory, path, fps=30.0, color_by="module")
    (a stub here, so that this test does not depend on meshcat)."""
    calls = []

    def export_html(model, trajectory, path, fps=30.0, color_by="module", forces=True):
        calls.append((model, trajectory, path, fps, color_by))
        Path(path).parent.mkdir(parents=True, exist_ok=True)  # as every writer does
        Path(path).write_text("<html>stub</html>")
        return Path(path)

    monkeypatch.setitem(sys.modules, "denoc_bridge.viz", types.SimpleNamespace(export_html=export_html))
    monkeypatch.chdir(tmp_path)
    assert main(["simulate", "gripper", "--duration", "0.05", "--no-plot"]) == 0
    ((model, traj, path, fps, color_by),) = calls
    assert model.name == "gripper4" and isinstance(traj, db.Trajectory) and len(traj) == 51
    assert Path(path) == Path("gripper4.html") and fps == 30.0 and color_by == "module"
    assert f"wrote animation  {(tmp_path / 'gripper4.html').resolve()}" in capsys.readouterr().out
    (tmp_path / "blocker").write_text("a file where a folder is wanted")
    assert main(["simulate", "gripper", "--duration", "0.05", "--no-plot", "--html", "blocker/anim.html"]) == 2
    assert "--html: cannot create the folder blocker" in capsys.readouterr().err
    assert (
        main(["simulate", "gripper", "--duration", "0.05", "--no-plot", "--html", "out/anim.html", "--fps", "10"]) == 0
    )
    assert calls[-1][2] == Path("out/anim.html") and calls[-1][3] == 10.0


def test_simulate_without_viz(tmp_path, monkeypatch, capsys):
    """Without denoc_bridge.viz (or meshcat) the default run still writes the plot and says why there
    is no animation; asking for one with --html is a mistake (exit 2)."""
    monkeypatch.setitem(sys.modules, "denoc_bridge.viz", None)  # import raises ImportError
    monkeypatch.chdir(tmp_path)
    assert main(["simulate", "gripper", "--duration", "0.05"]) == 0
    captured = capsys.readouterr()
    assert "no HTML animation" in captured.err and (tmp_path / "gripper4.png").is_file()
    assert not (tmp_path / "gripper4.html").exists()
    assert main(["simulate", "gripper", "--duration", "0.05", "--html", "x.html"]) == 2
    assert "--html: the animation needs denoc_bridge.viz" in capsys.readouterr().err


def _canned_bench() -> dict:
    single = [
        dict(case=c, nv=n, algorithm=a, reference=r, denoc_us=d, reference_us=p, ratio=d / p, max_rel_diff=1e-15)
        for c, n, a, r, d, p in (
            ("panda (9 DOF)", 9, "forward_dynamics", "pin.aba", 2.3, 3.2),
            ("panda (9 DOF)", 9, "inverse_dynamics", "pin.rnea", 1.6, 1.6),
            ("100-DOF chain", 100, "forward_dynamics", "pin.aba", 8.4, 31.0),
        )
    ]
    scaling = [dict(nv=n, fd_us=0.07 * n, id_us=0.05 * n, fd_ns_per_dof=70.0, id_ns_per_dof=50.0) for n in (10, 1000)]
    dense = dict(
        nv=100, cond=1e5, rel_diff_dense=1e-12, rel_diff_refined=1e-14, residual_recursive=1e-15, residual_dense=1e-15
    )
    energy = dict(nv=1000, t_final=0.2, runs=[dict(max_drift_over_kinetic=1e-4, dt=8e-3)], drift_ratios=[16.0, 16.0])
    machine = dict(
        cpu="test CPU",
        cores=2,
        memory_gb=1,
        python="3",
        numpy="2",
        pinocchio="4",
        mujoco=None,
        denoc_bridge="0",
        date="today",
    )
    return dict(machine=machine, quick=True, single=single, scaling=scaling, dense=dense, energy=energy)


def test_bench_prints_the_table_and_writes_the_files(tmp_path, monkeypatch, capsys):
    from denoc_bridge import benchmarking

    seen = {}

    def run(quick=False, **kwargs):
        seen.update(quick=quick, **kwargs)
        kwargs["log"]("1. single calls")
        return _canned_bench()

    monkeypatch.setattr(benchmarking, "run", run)
    assert main(["bench", "--quick", "--out", str(tmp_path / "res")]) == 0
    captured = capsys.readouterr()
    assert seen["quick"] is True and "1. single calls" in captured.err
    out = captured.out
    assert "forward_dynamics on panda (9 DOF)" in out and "0.72 x" in out and "QUICK RUN" in out
    assert "70.0" in out and "fourth order: 16" in out
    for name in ("speed.json", "speed.md", "scaling.png"):
        assert (tmp_path / "res" / name).stat().st_size > 0
    assert json.loads((tmp_path / "res" / "speed.json").read_text())["scaling"][1]["nv"] == 1000
    assert main(["bench", "--repeats", "0"]) == 2


def test_bench_quick_gives_no_verdicts_and_no_empty_section(monkeypatch, capsys):
    """A quick run says once that it decides no target (no "met: no" without a reason), and
    each section header on stderr is followed by its figures."""
    from denoc_bridge.benchmarking import runner

    canned = _canned_bench()
    monkeypatch.setattr(runner, "example_robot_names", lambda: ["panda"])
    monkeypatch.setattr(runner, "single_calls", lambda *a: canned["single"])
    monkeypatch.setattr(runner, "scaling", lambda *a, log: [log("  n = 10: ...")] and canned["scaling"])
    monkeypatch.setattr(runner, "memory", lambda n: dict(nv=n, kept_bytes_per_dof=1457.0))
    batch = dict(B=256, fd_ms=16.1, aba_ms=8.0, id_ms=15.7, rnea_ms=8.0, fd_ratio=2.01, id_ratio=1.97, threads=2)
    batch.update(load=0.2, fd_1thread_ms=0.25, aba_1thread_ms=0.5, id_1thread_ms=0.18, rnea_1thread_ms=0.4)
    monkeypatch.setattr(runner, "batches", lambda *a: batch)
    monkeypatch.setattr(
        runner,
        "startup",
        lambda: dict(second_process=dict(spawn_to_first_result_s=1.47, import_s=1.0, first_fd_call_s=0.28)),
    )
    monkeypatch.setattr(runner, "dense_check", lambda n: canned["dense"])
    monkeypatch.setattr(runner, "energy_check", lambda *a, log: [log("  RK4 ...")] and canned["energy"])
    assert main(["bench", "--quick"]) == 0
    captured = capsys.readouterr()
    lines = [ln for ln in captured.err.splitlines() if ln.strip()]
    for i, line in enumerate(lines):
        if line[:1].isdigit():  # a section header: its figures follow
            assert i + 1 < len(lines) and lines[i + 1].startswith("  "), captured.err
    assert "1,000-DOF chain: 1457 B per DOF" in captured.err and "pin.abaInParallel 8.00 ms" in captured.err
    out = captured.out
    assert "no met/missed verdicts in a quick run" in out and "16.10 ms vs 8.00 ms = 2.01 x" in out
    assert "0.25 ms vs 0.50 ms = 0.50 x" in out
    assert "on 1 thread 0.25 ms (0.50 ms)" in captured.err and "the machine was busy" not in out
    assert " met " not in out and " no " not in out


@pytest.mark.slow
def test_bench_quick_runs_from_the_entry_point(tmp_path):
    """The real thing, from the installed command: the benchmark core lives in the package
    (denoc_bridge.benchmarking), so it needs no source checkout."""
    r = denoc_bridge_cmd("bench", "--quick", cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "forward_dynamics on panda (9 DOF)" in r.stdout and "time per call on the benchmark chain" in r.stdout
    assert "1. single calls" in r.stderr and "6. correctness beyond Pinocchio" in r.stderr


def test_simulate_without_matplotlib(tmp_path, monkeypatch, capsys):
    """Without matplotlib the default run skips the plot and says so; --plot is then a mistake."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.chdir(tmp_path)
    assert main(["simulate", "gripper", "--duration", "0.05", "--no-html"]) == 0
    assert "no plot (plots need matplotlib" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
    assert main(["simulate", "gripper", "--duration", "0.05", "--no-html", "--plot", "g.png"]) == 2
    assert "--plot: plots need matplotlib" in capsys.readouterr().err


def test_stiff_damping_names_the_implicit_method_and_it_runs(capsys):
    """allegro's joint damping (10 N m s/rad on 6e-6 kg m^2) stops rk4 at once, naming
    --method sdirk2 first; sdirk2 then simulates it at the same step, its joint limits held
    as with rk4."""
    from denoc_bridge.cli.main import main

    args = ["simulate", "allegro_right_hand", "--duration", "0.05", "--no-validate", "--no-html", "--no-plot"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "too stiff for rk4 at dt = 0.001 s" in err and "--method sdirk2 (implicit" in err, err
    assert main([*args, "--method", "sdirk2"]) == 0
    out = capsys.readouterr().out
    assert "note: the joint limits" not in out
    assert "completed: 50 steps" in out and "warning" not in out, out


def test_a_stop_that_took_nothing_measurable_is_not_reported(capsys):
    """A free-floating panda touched a limit and the stops 'took 3.63e-37 J': below 1e-9 of the
    energy scale a stop is round-off and the summary says nothing of it."""
    model = gripper4()
    traj = db.simulate(model, np.array([-np.pi / 3, 0.0, 0.0, 0.0]), np.zeros(4), 0.05, 1e-3)
    n = len(traj)
    for took, reported in ((3.6e-37, False), (0.25, True)):
        t = dataclasses.replace(traj, limit_work=np.linspace(0.0, took, n), _cache={})
        _energy_summary(t, "rk4", 1e-3)
        out = capsys.readouterr().out
        assert ("joint limits: the stops at the limits took 0.25 J" in out) is reported, out
        assert ("W_stops" in out) is reported, out


def test_a_failed_run_leaves_no_new_output_folder(tmp_path, monkeypatch, capsys):
    """The output files' folders are checked before the run and created by the writers: a run
    that fails leaves none behind; a file in the way is named before the run."""
    monkeypatch.chdir(tmp_path)
    argv = ["simulate", "chain:3", "--dt", "1", "--duration", "50", "--no-validate"]
    assert main([*argv, "--html", "new/sub/x.html", "--plot", "new2/p.png"]) == 2
    assert "simulation stopped" in capsys.readouterr().err
    assert not (tmp_path / "new").exists() and not (tmp_path / "new2").exists()
    (tmp_path / "blocker").touch()
    assert main([*argv, "--html", "blocker/sub/x.html"]) == 2
    assert "--html: cannot create the folder blocker/sub: a file stands in the way" in capsys.readouterr().err
    ok = ["simulate", "chain:3", "--duration", "0.01", "--no-validate", "--html", "a/b/x.html", "--plot", "c/p.png"]
    assert main(ok) == 0
    assert (tmp_path / "a/b/x.html").is_file() and (tmp_path / "c/p.png").is_file()
