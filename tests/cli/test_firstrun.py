"""A command line's first run: plain Python while numba compiles in the background
(denoc_bridge.cli.firstrun), and plain Python running the same code as the compiled kernels."""

from __future__ import annotations

import importlib
import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numba
import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.cli import firstrun
from denoc_bridge.cli.parser import build_parser
from denoc_bridge.errors import DenocError
from denoc_bridge.io import generators as g
from denoc_bridge.io.robots import load_robot

ROOT = Path(__file__).resolve().parents[2]


def parse(*argv: str):
    return build_parser().parse_args(list(argv))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """numba's cache folder (for the stamps) in tmp_path, and the auto mode."""
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "numba"))
    monkeypatch.setenv(firstrun.MODE_ENV, "auto")
    monkeypatch.delenv(firstrun.BACKGROUND_ENV, raising=False)
    folder = firstrun.cache_folder()
    assert folder is not None and folder.is_relative_to(tmp_path)
    return folder


@pytest.mark.parametrize(
    ("argv", "key"),
    [
        (("simulate", "panda"), "simulate-rk4-zero"),
        (("simulate", "panda", "--method", "Euler"), "simulate-euler-zero"),
        (("simulate", "puma560", "--torque", "gravity-compensation"), "simulate-rk4-gravity-compensation"),
        (("simulate", "pr2", "--mimic"), "simulate-rk4-zero-mimic"),
        (("simulate", "fourbar"), "simulate-rk4-zero-loops"),
        (("validate", "panda"), "validate"),
        (("validate", "fourbar"), "validate-loops"),
        (("simulate", "panda", "--method", "rk45"), None),  # not written as kernels
        (("simulate", "panda", "--method", "implicit-euler"), None),
        (("simulate", "tallos"), None),  # the command itself names the mistake
        (("simulate", "panda", "--duration", "-1"), None),
        (("bench", "--quick"), None),  # timings of plain Python would mean nothing
        (("info", "panda"), None),
    ],
)
def test_kernel_key(argv, key):
    planned = firstrun.kernel_key(parse(*argv))
    assert (planned[0] if planned else None) == key


def test_estimate_is_per_dof_and_evaluation():
    key, seconds = firstrun.kernel_key(parse("simulate", "panda", "--duration", "2", "--dt", "1e-3"))
    assert seconds == pytest.approx(firstrun.PYTHON_SECONDS_PER_DOF_EVALUATION * 9 * 4 * 2000)
    _, euler = firstrun.kernel_key(parse("simulate", "panda", "--duration", "2", "--method", "euler"))
    assert euler == pytest.approx(seconds / 4)


def test_first_run_decides_from_the_stamps(cache):
    args = parse("simulate", "panda", "--duration", "0.5")
    run = firstrun.first_run(firstrun.plan(args))
    assert run is not None and run.key == "simulate-rk4-zero" and run.folder == cache
    firstrun.mark_ready(run.key)  # what a compiled run that succeeded leaves
    assert firstrun.first_run(firstrun.plan(args)) is None
    assert firstrun.first_run(firstrun.plan(parse("simulate", "panda", "--method", "euler"))) is not None  # another key
    ready = next(cache.glob("*.ready"))
    ready.unlink()
    ready.with_suffix(".failed").touch()  # a background compilation that failed: compile in front
    assert firstrun.first_run(firstrun.plan(args)) is None
    firstrun.mark_ready(run.key)
    assert not list(cache.glob("*.failed"))


def test_first_run_declines_long_runs_and_other_modes(cache, monkeypatch):
    assert firstrun.first_run(firstrun.plan(parse("simulate", "panda", "--duration", "100"))) is None  # over budget
    assert firstrun.first_run(firstrun.plan(parse("simulate", "panda", "--duration", "1"))) is not None
    monkeypatch.setenv(firstrun.MODE_ENV, "compiled")
    assert firstrun.first_run(firstrun.plan(parse("simulate", "panda", "--duration", "1"))) is None
    monkeypatch.setenv(firstrun.MODE_ENV, "fast")
    with pytest.raises(DenocError, match="DENOC_BRIDGE_KERNELS='fast' is not one of auto, compiled, interpreted"):
        firstrun.first_run(firstrun.plan(parse("simulate", "panda")))


def test_remember_stamps_a_compiled_run(cache, monkeypatch):
    monkeypatch.setenv(firstrun.MODE_ENV, "compiled")
    args = parse("validate", "panda")
    firstrun.remember(firstrun.plan(args))
    assert [p.name.rsplit("-", 1)[-1] for p in cache.glob("*.ready")] == ["validate.ready"]
    monkeypatch.setenv(firstrun.MODE_ENV, "auto")
    assert firstrun.first_run(firstrun.plan(args)) is None


def test_a_compiled_run_plans_once_and_stamps(cache, monkeypatch):
    """main works out the kernel key once per command (it loads the robot) for both the decision
    and the ready stamp; the fingerprint is computed once per process."""
    cli_main = importlib.import_module("denoc_bridge.cli.main")
    firstrun.mark_ready("validate")  # compiled before: the auto mode runs it compiled
    calls = []
    key = firstrun.kernel_key
    monkeypatch.setattr(firstrun, "kernel_key", lambda args: calls.append(args.command) or key(args))
    monkeypatch.setattr(cli_main, "validate_command", lambda args: 0)
    assert cli_main.main(["validate", "panda"]) == 0
    assert calls == ["validate"]
    assert firstrun.fingerprint.cache_info().currsize == 1


def test_a_stale_lock_is_not_running(tmp_path):
    lock = tmp_path / "x.compiling"
    lock.write_text(str(os.getpid()))
    assert firstrun._running(lock)
    old = time.time() - firstrun.LOCK_SECONDS - 10
    os.utime(lock, (old, old))
    assert not firstrun._running(lock)  # the pid may have been reused
    lock.write_text("999999999")
    assert not firstrun._running(lock)


def test_background_run_stamps_and_writes_nothing_here(cache, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    args = parse("simulate", "panda", "--duration", "3", "--save", "run.npz")
    key = firstrun.kernel_key(args)[0]
    monkeypatch.setenv(firstrun.BACKGROUND_ENV, key)
    assert firstrun.background_main([json.dumps(vars(args))]) == 0
    assert [p.suffix for p in cache.glob(f"*-{key}.*")] == [".ready"]
    assert not list(tmp_path.glob("panda*")) and not (tmp_path / "run.npz").exists()
    # a user's mistake (named by the plain-Python run) leaves no stamp: the next run tries again
    bad = parse("simulate", "panda", "--duration", "1", "--armature", "-1")
    monkeypatch.setenv(firstrun.BACKGROUND_ENV, "simulate-bad")
    with pytest.raises(DenocError, match="--armature"):
        firstrun.background_main([json.dumps(vars(bad))])
    assert not list(cache.glob("*-simulate-bad.*"))
    # an unexpected failure leaves the failed stamp: the next run compiles in the foreground
    monkeypatch.setattr(firstrun, "simulate_command", lambda args: 1 / 0)
    monkeypatch.setenv(firstrun.BACKGROUND_ENV, key)
    with pytest.raises(ZeroDivisionError):
        firstrun.background_main([json.dumps(vars(args))])
    assert list(cache.glob(f"*-{key}.failed"))


def test_a_first_run_goes_plain_python_and_compiles_in_the_background(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), PYTHONPATH=str(ROOT))
    env[firstrun.MODE_ENV] = "auto"
    cmd = [sys.executable, "-m", "denoc_bridge.cli", "simulate", "panda", "--duration", "0.05", "--no-html"]
    result = subprocess.run(cmd + ["--no-plot"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    locks = list((tmp_path / "numba").rglob("*.compiling"))
    pid = int(locks[0].read_text()) if locks else None
    try:
        assert result.returncode == 0, result.stderr
        assert "first run: numba compiles this command's kernels in the background" in result.stderr
        assert "the kernels ran as plain Python" in result.stdout
        assert "compiling" not in result.stderr.replace("numba compiles", "")  # no foreground compile
        assert pid is not None
        os.kill(pid, 0)  # the background compilation is running, in a session of its own
        assert os.getsid(pid) == pid
    finally:
        if pid is not None:
            try:
                os.killpg(pid, signal.SIGTERM)
            except ProcessLookupError:  # it finished or failed already
                pass


MODELS = {
    "panda": lambda: load_robot("panda"),
    "talos": lambda: load_robot("talos"),
    "pr2-mimic": lambda: load_robot("pr2", mimic=True),
    "fourbar": g.fourbar,
    "fivebar-mimic-loops": g.geared_fivebar,
}

PLAIN_RUNS = textwrap.dedent(
    """
    import sys
    import numpy as np
    import denoc_bridge as db
    from tests.cli.test_firstrun import MODELS, start

    out = {}
    for name in sys.argv[2:]:
        m = MODELS[name]()
        q0, v0 = start(m)
        traj = db.simulate(m, q0, v0, 0.02, 1e-3, method="rk4", passive=True)
        out[name] = np.concatenate([traj.q.ravel(), traj.v.ravel(), traj.a.ravel()])
    np.savez(sys.argv[1], **out)
    """
)


def start(m):
    """A moving start (random velocities); loop models on their loops."""
    rng = np.random.default_rng(7)
    q0 = db.neutral_configuration(m)
    if isinstance(m, db.MimicModel) and m.loops:  # the geared five-bar
        q0 = db.loops.project_configuration(m, g.GEARED_FIVEBAR_Q)
    elif m.loops:
        q0 = db.loops.project_configuration(m, q0 + 0.1)
    v0 = rng.standard_normal(m.nv)
    return q0, (db.loops.project_velocity(m, q0, v0) if m.loops else v0)


@pytest.mark.parametrize(
    "names",
    [("panda",), pytest.param(("talos", "pr2-mimic", "fourbar", "fivebar-mimic-loops"), marks=pytest.mark.slow)],
    ids=["tree", "mimic-loops"],
)
def test_plain_python_runs_the_same_code_as_the_compiled_kernels(tmp_path, names):
    """Every compiled system (tree, mimic, loops, mimic with loops) through the plain-Python
    dispatch of kernels.systems, against the compiled run: equal to round-off (the tree in the
    quick tier, the others marked slow: a plain-Python subprocess each)."""
    script = tmp_path / "runs.py"
    script.write_text(PLAIN_RUNS)
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", PYTHONPATH=str(ROOT))
    subprocess.run([sys.executable, str(script), str(tmp_path / "plain.npz"), *names], check=True, env=env, timeout=600)
    plain = np.load(tmp_path / "plain.npz")
    assert sorted(plain.files) == sorted(names)
    for name in names:
        m = MODELS[name]()
        q0, v0 = start(m)
        traj = db.simulate(m, q0, v0, 0.02, 1e-3, method="rk4", passive=True)
        ref = np.concatenate([traj.q.ravel(), traj.v.ravel(), traj.a.ravel()])
        assert np.abs(plain[name] - ref).max() <= 1e-12 * max(1.0, np.abs(ref).max()), name
        assert np.abs(traj.v[-1] - traj.v[0]).max() > 1e-3, name  # the systems moved


def test_python_math_errors_rerun_with_the_compiled_kernels(monkeypatch, capsys):
    """Python's math raises (math.exp overflow, math.cos(inf)) where compiled code gives inf or nan:
    a plain-Python run then runs again compiled; a compiled run's error is not caught."""
    cli_main = importlib.import_module("denoc_bridge.cli.main")  # the package exports main()
    calls = []

    def rerun(exc, argv):
        calls.append((type(exc), argv))
        raise SystemExit(0)

    monkeypatch.setattr(firstrun, "run_compiled", rerun)
    monkeypatch.setattr(cli_main, "simulate_command", lambda args: math.exp(1e4))
    monkeypatch.setattr(firstrun, "interpreted", lambda: True)
    with pytest.raises(SystemExit):
        cli_main.main(["simulate", "panda"])
    assert calls == [(OverflowError, ["simulate", "panda"])]
    monkeypatch.setattr(firstrun, "interpreted", lambda: False)
    with pytest.raises(OverflowError):
        cli_main.main(["simulate", "panda"])


def test_kernel_key_is_silent_and_prices_mimic_and_loops(recwarn):
    """The plan loads the model without its warnings (the command shows them once); mimic and loop
    models cost more per DOF in plain Python (pr2 --mimic for 2 s compiles instead)."""
    firstrun.kernel_key(parse("simulate", "icub"))
    assert not recwarn.list
    per = firstrun.PYTHON_SECONDS_PER_DOF_EVALUATION * 8000
    pr2 = load_robot("pr2", mimic=True)
    _, mimic = firstrun.kernel_key(parse("simulate", "pr2", "--mimic"))
    assert mimic == pytest.approx(per * firstrun.PYTHON_COST_MIMIC * pr2.nv) and mimic > firstrun.PYTHON_BUDGET_SECONDS
    _, loops = firstrun.kernel_key(parse("simulate", "fourbar"))
    assert loops == pytest.approx(per * firstrun.PYTHON_COST_LOOPS * g.fourbar().nv)


class _FakePopen:
    calls: list = []

    def __init__(self, argv, **kwargs):
        _FakePopen.calls.append((argv, kwargs))
        self.pid = os.getpid()  # alive: the lock then says a compilation runs


def test_background_gets_absolute_paths_and_one_runs_at_once(cache, monkeypatch, tmp_path):
    """Relative robot and torque files reach the background (which runs in a temporary folder) as
    absolute paths; while one background compilation runs, no second one starts and the message
    says so."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tau.csv").write_text(",".join(["0"] * 9))
    monkeypatch.setattr(firstrun.subprocess, "Popen", _FakePopen)
    _FakePopen.calls.clear()
    args = parse("simulate", "panda", "--torque", "tau.csv", "--duration", "0.5")
    run = firstrun.first_run(firstrun.plan(args))
    log = firstrun.start_background(run, args)
    assert log is not None and len(_FakePopen.calls) == 1
    argv, kwargs = _FakePopen.calls[0]
    payload = json.loads(argv[-1])
    assert payload["torque"] == str(tmp_path / "tau.csv") and payload["robot"] == "panda"
    assert kwargs["start_new_session"] and kwargs["env"][firstrun.MODE_ENV] == "compiled"
    assert "SCHED_IDLE" in argv[2]
    assert firstrun.start_background(run, args) is None and len(_FakePopen.calls) == 1  # the lock holds


def test_the_timing_note_says_why_the_kernels_ran_as_python(monkeypatch):
    from denoc_bridge.cli import common

    monkeypatch.setattr(common, "jit_enabled", lambda: True)
    assert common.kernels_note() == ""
    monkeypatch.setattr(common, "jit_enabled", lambda: False)
    monkeypatch.setenv(common.FIRST_RUN_ENV, "1")
    assert "while numba compiles them" in common.kernels_note()
    monkeypatch.delenv(common.FIRST_RUN_ENV)
    assert common.kernels_note() == "; the kernels ran as plain Python (DENOC_BRIDGE_KERNELS=interpreted)"


class _Empty:
    """What simulate returns when Ctrl-C lands before the first step."""

    t = np.zeros(0)
    wall_time = 0.0

    def __len__(self):
        return 0


def test_ctrl_c_before_the_first_step_is_one_line(monkeypatch, tmp_path, capsys):
    cli_main = importlib.import_module("denoc_bridge.cli.main")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(importlib.import_module("denoc_bridge.cli.simulate"), "simulate", lambda *a, **k: _Empty())
    assert cli_main.main(["simulate", "gripper", "--duration", "0.01", "--no-validate"]) == 130
    err = capsys.readouterr().err
    assert "interrupted before the first step: nothing simulated, nothing written" in err
    assert "Traceback" not in err and not list(tmp_path.iterdir())


def test_a_bad_torque_file_starts_no_first_run(cache, tmp_path, monkeypatch):
    """The command names a torque file of the wrong width itself; no background compilation is
    started for it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tau.csv").write_text("0,0,0,0,0")
    assert firstrun.kernel_key(parse("simulate", "panda", "--torque", "tau.csv")) is None
    (tmp_path / "tau.csv").write_text(",".join(["0.5"] * 9))
    assert firstrun.kernel_key(parse("simulate", "panda", "--torque", "tau.csv"))[0] == "simulate-rk4-table"
