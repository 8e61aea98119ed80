"""The README's Python blocks run as a user pastes them, and give the numbers it states.

The first three run in this process (in a temporary folder: they write files); the sweep
block, which starts Dask worker processes, runs as a script of its own, as a user runs it.
"""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def _block(first_line_fragment: str) -> str:
    found = [b for b in BLOCKS if first_line_fragment in b]
    assert len(found) == 1, f"README: expected one python block containing {first_line_fragment!r}, found {len(found)}"
    return found[0]


def _run(code: str, tmp_path, monkeypatch) -> dict:
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__main__"}
    exec(compile(code, str(README), "exec"), namespace)
    return namespace


def test_the_readme_has_the_blocks_this_file_runs():
    assert len(BLOCKS) == 5, f"README has {len(BLOCKS)} python blocks; give each new one a test here"


def test_load_and_compare_block(tmp_path, monkeypatch, capsys):
    ns = _run(_block('resolve_robot("talos")'), tmp_path, monkeypatch)
    q, v, a, tau = ns["q"], ns["v"], ns["a"], ns["tau"]
    ref = pin.rnea(ns["pin_model"], ns["pin_data"], q, v, a)
    assert np.abs(tau - ref).max() <= 1e-12 * np.abs(ref).max(), "README block: inverse_dynamics vs pin.rnea"
    out = capsys.readouterr().out
    assert "M1 (parent 0): ('root_joint',)" in out
    assert out.count(" ok") == 5 and "MISMATCH" not in out, out


def test_pinocchio_convention_block(tmp_path, monkeypatch, capsys):
    ns = _run(_block("import denoc_bridge.pin as dbp"), tmp_path, monkeypatch)
    model, data, q, v, tau, fext = (ns[k] for k in ("model", "data", "q", "v", "tau", "fext"))
    ref = pin.aba(model, model.createData(), q, v, tau, fext)
    assert np.abs(ns["a"] - ref).max() <= 1e-12 * np.abs(ref).max() and np.array_equal(data.ddq, ns["a"])
    assert np.array_equal(data.M, ns["M"]) and np.array_equal(ns["M"], ns["M"].T)
    assert float(capsys.readouterr().out) < 1e-11


def test_simulate_block_gives_the_readme_rope_energy(tmp_path, monkeypatch):
    ns = _run(_block("from denoc_bridge.generators import rope"), tmp_path, monkeypatch)
    traj = ns["traj"]
    assert traj.t[-1] == pytest.approx(1.75, rel=1e-12) and len(traj.t) == 1751
    drift = np.abs(traj.energy_drift(relative=True)).max()
    np.testing.assert_allclose(drift, 1.5417732e-5, rtol=1e-6, err_msg="README 'Rope energy': 1.5417732e-5")
    assert (tmp_path / "rope.npz").is_file()
    assert len(ns["frames"].t) == round(1.75 * 30) + 1


def test_closed_loops_block(tmp_path, monkeypatch):
    import denoc_bridge as db

    ns = _run(_block("from denoc_bridge.generators import fourbar"), tmp_path, monkeypatch)
    model, q, v, a, tau = ns["model"], ns["q"], ns["v"], ns["a"], ns["tau"]
    assert tau.shape == (4,), "inverse_dynamics(actuated=...) returns every joint's torque"
    err, _, _ = db.loops.loop_kinematics(model, q, v)
    assert np.abs(err).max() < 1e-12, "project_configuration closes the loop"
    # the actuated inverse dynamics reproduces the motion: forward dynamics with its torques gives a
    np.testing.assert_allclose(db.forward_dynamics(model, q, v, tau), a, rtol=0, atol=1e-10 * np.abs(a).max())
    np.testing.assert_allclose(tau[2:], 0.0, atol=1e-12, err_msg="R3, R4 are passive")
    traj = ns["traj"]
    assert traj.t[-1] == pytest.approx(10.0) and traj.constraint_error.max() < 1e-10


def _sweep_script(guarded: bool) -> str:
    code = _block("from denoc_bridge import generators, sweeps")
    if not guarded:  # what a user gets who drops the guard
        head, _, body = code.partition('if __name__ == "__main__":')
        code = head + textwrap.dedent(body.split("\n", 1)[1])
    return code


def _python(script: Path, cwd: Path):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in (str(README.parent), os.environ.get("PYTHONPATH")) if p),
    }
    return subprocess.run([sys.executable, str(script)], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_sweep_block_runs_as_a_script(tmp_path):
    script = tmp_path / "sweep_rope.py"
    script.write_text(_sweep_script(guarded=True))
    run = _python(script, tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.startswith("9 cases: 9 completed (9 run now"), run.stdout
    assert len(list((tmp_path / "sweep_rope" / "cases").glob("case*.npz"))) == 9


@pytest.mark.slow
def test_a_sweep_script_without_the_guard_gets_one_clear_error(tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text(_sweep_script(guarded=False))
    run = _python(script, tmp_path)
    assert run.returncode == 1
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("denoc_bridge.sweeps.ClusterStartError: the LocalCluster's worker processes did not start")
    assert 'if __name__ == "__main__":' in last and 'scheduler="inline"' in last
    assert not (tmp_path / "sweep_rope" / "cases").exists() or not any((tmp_path / "sweep_rope" / "cases").iterdir())
