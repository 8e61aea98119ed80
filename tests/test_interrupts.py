"""Interrupted runs lose nothing (issue 25, item 4).

* Ctrl-C during ``denoc-bridge simulate`` or ``sweep`` stops with one line on stderr and no
  traceback (exit status 130); the simulation writes its partial trajectory (``--save``), the
  sweep keeps the finished cases and the same command finishes the others.
* Every writer (``Trajectory.to_npz`` / ``--save``, the HTML animation, the plots, the sweep's
  files, ``bench --out``) writes a temporary file in the target's folder and renames it onto the
  target (:func:`denoc_bridge._files.atomic_path`): a process killed while writing leaves the
  previous file or none, never a torn one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from stepping_cli import ctrl_c_while_stepping

import denoc_bridge as db
from denoc_bridge import _files
from denoc_bridge.cli import main as cli_main
from denoc_bridge.io.robots import load_robot, serial_chain
from denoc_bridge.sweeps.store import save_case, write_summary
from denoc_bridge.viz.meshcat import export_html
from denoc_bridge.viz.plots import plot_summary

ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, PYTHONPATH=str(ROOT))


def _default_sigint() -> None:
    """In the child: Ctrl-C's default action, whatever the test runner inherited (a shell that
    starts a job in the background without job control ignores SIGINT, and the children of an
    ignoring process ignore it too, so Python would install no KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _cli(*args, cwd, group=False):
    return subprocess.Popen(
        [sys.executable, "-m", "denoc_bridge.cli", *args],
        cwd=cwd,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=group,
        preexec_fn=_default_sigint,
    )


def _wait_for(path: Path, timeout: float = 120.0, count: int = 1, pattern: str = "*") -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if path.exists() and len(list(path.glob(pattern)) if path.is_dir() else [path]) >= count:
            return
        time.sleep(0.1)
    raise AssertionError(f"{path} did not appear within {timeout} s")


def _ctrl_c(proc, group=False):
    """Ctrl-C as a terminal sends it: to the process group (the sweep's workers too)."""
    if group:
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


def _one_clean_line(err: str, expected: str) -> None:
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    lines = [ln for ln in err.splitlines() if "interrupted" in ln]
    assert len(lines) == 1 and expected in lines[0], err


# ----------------------------------------------------------------------- the atomic writer
def test_an_interrupted_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "t.bin"
    target.write_bytes(b"old")
    os.chmod(target, 0o640)
    with pytest.raises(KeyboardInterrupt), _files.atomic_path(target) as tmp:
        tmp.write_bytes(b"half of the new")
        raise KeyboardInterrupt
    assert target.read_bytes() == b"old" and sorted(os.listdir(tmp_path)) == ["t.bin"]
    _files.atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"new" and (target.stat().st_mode & 0o777) == 0o640  # the mode kept
    _files.atomic_write_bytes(tmp_path / "fresh.bin", b"x")
    assert (tmp_path / "fresh.bin").stat().st_mode & 0o777 == 0o666 & ~_files._UMASK


@pytest.fixture(scope="module")
def short_run():
    chain = serial_chain(3)
    return db.simulate(chain, db.neutral_configuration(chain), np.zeros(chain.nv), 0.05, 1e-3, progress=False)


def _writers(traj, tmp_path):
    return {
        "npz": (tmp_path / "t.npz", lambda p: traj.to_npz(p)),
        "npz without suffix": (tmp_path / "u.npz", lambda p: traj.to_npz(tmp_path / "u")),
        "html": (tmp_path / "t.html", lambda p: export_html(traj.model, traj, p)),
        "png": (tmp_path / "t.png", lambda p: plot_summary(traj, p)),
        "sweep case": (
            tmp_path / "cases" / "c.json",
            lambda p: save_case(tmp_path, {"case": "c", "status": "completed"}, None),
        ),
        "sweep summary": (tmp_path / "summary.csv", lambda p: write_summary(tmp_path, _Result())),
    }


class _Result:
    columns = ["case", "status"]
    rows = [{"case": "c", "status": "completed"}]


@pytest.mark.parametrize("writer", ["npz", "npz without suffix", "html", "png", "sweep case", "sweep summary"])
def test_every_writer_is_atomic(writer, short_run, tmp_path, monkeypatch):
    """Each writer goes through a temporary file renamed at the end: interrupted before the
    rename (here os.replace raises KeyboardInterrupt), the old file is intact and no temporary
    file is left; then it writes the new file."""
    (tmp_path / "cases").mkdir()
    target, write = _writers(short_run, tmp_path)[writer]
    target.write_bytes(b"the previous file")
    real_replace = os.replace

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(_files.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write(target)
    assert target.read_bytes() == b"the previous file"
    assert not [p for p in tmp_path.rglob("*.part")], "a temporary file was left behind"
    monkeypatch.setattr(_files.os, "replace", real_replace)
    write(target)
    assert target.read_bytes() != b"the previous file" and target.stat().st_size > 0


_KILLED_WRITER = textwrap.dedent(
    """
    import os, sys, time
    import numpy as np
    import denoc_bridge as db
    from denoc_bridge.io.robots import serial_chain
    chain = serial_chain(3)
    traj = db.simulate(chain, db.neutral_configuration(chain), np.zeros(chain.nv), 2.0, 1e-4, progress=False)
    def slow_fsync(fd):  # the new file is complete, not yet renamed: say so and wait for the kill
        print("written", flush=True)
        time.sleep(60)
    if sys.argv[2] == "atomic":
        os.fsync = slow_fsync
        traj.to_npz(sys.argv[1], compress=False)
    else:  # the check's own control: a plain write, killed half-way
        data = open(sys.argv[3], "rb").read()
        with open(sys.argv[1], "wb") as f:
            f.write(data[: len(data) // 2]); f.flush()
            print("written", flush=True)
            time.sleep(60)
    """
)


def _kill_while_writing(target: Path, mode: str, source: Path | None = None) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILLED_WRITER, str(target), mode, str(source)],
        env=ENV,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "written"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def _intact(target: Path, previous: bytes) -> bool:
    return not target.exists() or target.read_bytes() == previous


@pytest.mark.slow
def test_a_writer_killed_mid_write_leaves_the_previous_file(tmp_path, short_run):
    target = tmp_path / "run.npz"
    short_run.to_npz(target)
    previous = target.read_bytes()
    _kill_while_writing(target, "atomic")
    assert _intact(target, previous), "a torn file"
    assert db.Trajectory.load(target, short_run.model).n_steps == short_run.n_steps
    # the check can fail: a plain write killed half-way leaves a torn file
    short_run.to_npz(tmp_path / "other.npz", compress=False)
    _kill_while_writing(target, "plain", tmp_path / "other.npz")
    assert not _intact(target, previous)


# ----------------------------------------------------------------------- Ctrl-C at the CLI
def test_ctrl_c_during_cli_simulate_keeps_the_partial_run(tmp_path):
    # Ctrl-C once the progress bar shows steps done, whatever the machine's speed (a fixed sleep
    # after the "simulating" line lands before the first step on a loaded machine)
    args = ["simulate", "chain:6", "--duration", "5000", "--no-validate", "--save", "run.npz", "--no-html", "--no-plot"]
    rc, out, err = ctrl_c_while_stepping(args, tmp_path, ENV)
    assert rc == 130, (out, err)
    _one_clean_line(err, "interrupted by the user at t =")
    assert "wrote trajectory" in out
    traj = db.Trajectory.load(tmp_path / "run.npz", load_robot("chain:6"))
    assert traj.status == "interrupted" and 0 < traj.t[-1] < 5000


def _sweep(tmp_path, *extra, group=False):
    return _cli(
        "sweep",
        "chain:6",
        "--grid",
        "q0[0]=0:1:24",
        "--out",
        "sw",
        "--duration",
        "40",
        "--batch-size",
        "2",
        *extra,
        cwd=tmp_path,
        group=group,
    )


@pytest.mark.slow
@pytest.mark.parametrize("where", ["--inline", "--workers=2"])
def test_ctrl_c_during_cli_sweep_keeps_finished_cases_and_the_same_command_resumes(tmp_path, where):
    group = where != "--inline"  # the terminal's Ctrl-C reaches the Dask workers too
    proc = _sweep(tmp_path, where, group=group)
    _wait_for(tmp_path / "sw" / "cases", count=4, pattern="*.json")
    rc, out, err = _ctrl_c(proc, group=group)
    assert rc == 130, (out, err)
    _one_clean_line(err, "cases are saved in sw; run the same command again")
    saved = len(list((tmp_path / "sw" / "cases").glob("*.json")))
    assert f"interrupted: {saved} of 24 cases" in err and 2 <= saved < 24
    assert not list((tmp_path / "sw").rglob("*.part"))
    again = _sweep(tmp_path, "--inline")
    out, err = again.communicate(timeout=600)
    assert again.returncode == 0, err
    assert f"24 completed ({24 - saved} run now, {saved} from an earlier run)" in out


def test_an_ignored_ctrl_c_stays_ignored(capsys):
    """Where SIGINT is ignored (nohup, a parent that asked so, a test runner's worker), a command
    installs no handler of its own: Ctrl-C stays ignored during and after it."""
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        assert cli_main(["info", "chain:3"]) == 0
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)
