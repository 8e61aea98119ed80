"""Saved states streamed to disk (issue 25, item 2): ``simulate(..., save_to=path)`` writes the
states as the run goes and returns a trajectory that reads the file lazily; the numbers are the
in-memory run's, bit for bit; an interrupted or failed run leaves its states so far, a killed
one the previous file; the memory of a streaming run stays at its buffer."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge import _files
from denoc_bridge.core import run as compiled_run  # a tree runs the compiled core
from denoc_bridge.io.robots import load_robot, serial_chain
from denoc_bridge.simulation import stream as st

ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(ROOT))


@pytest.fixture
def small_buffers(monkeypatch):
    """Buffers of a few rows, so that a short run writes its file in many pieces."""
    monkeypatch.setattr(st, "STREAM_CHUNK_BYTES", 3000)


def assert_same(a: db.Trajectory, b: db.Trajectory) -> None:
    for name in ("t", "q", "v", "a", "tau"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    for name in ("constraint_error", "limit_work"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert np.array_equal(x, y), name
    assert (a.status, a.method, a.dt, a.n_steps, a.n_evaluations, a.passive) == (
        b.status,
        b.method,
        b.dt,
        b.n_steps,
        b.n_evaluations,
        b.passive,
    )
    assert np.array_equal(a.total_energy, b.total_energy) and np.array_equal(a.power_in, b.power_in)
    assert np.array_equal(a.energy_drift(), b.energy_drift())


def _fourbar_start(model):
    return db.loops.project_configuration(model, np.array([0.0, 0.5, -0.5, 0.5]))


CASES = {
    "tree rk4": ("chain:4", {}),
    "tree euler, save_every 7 (not dividing the steps)": ("chain:4", {"method": "euler", "save_every": 7}),
    "tree with a constant tau and joint limits": ("panda", {"tau": np.full(9, 20.0)}),
    "mimic model": ("panda+mimic", {"tau": np.full(8, 20.0)}),
    "loop closures (projection)": ("fourbar", {}),
    "a controller tau(t, q, v) (stepped from Python)": (
        "chain:3",
        {"tau": lambda t, q, v: 0.01 * np.sin(10 * t) * np.ones(3)},
    ),
    "constant external wrenches": ("chain:3", {"f_ext": {"link2": np.array([0.0, 0.0, 0.01, 0.0, 0.002, 0.0])}}),
    "implicit method (sdirk2)": ("chain:3", {"method": "sdirk2"}),
    "implicit Euler, save_every 4, a controller": (
        "chain:3",
        {"method": "implicit-euler", "save_every": 4, "tau": lambda t, q, v: -0.05 * v},
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_streamed_run_holds_the_numbers_of_the_run_in_memory(case, tmp_path, small_buffers):
    name, kw = CASES[case]
    model = load_robot(name.split("+")[0], mimic=name.endswith("+mimic"))
    q0 = _fourbar_start(model) if model.loops else db.neutral_configuration(model)
    if "limits" in case:
        q0 = np.clip(q0, model.lower_limit, model.upper_limit)
    args = (model, q0, np.zeros(model.nv), 0.3, 1e-3)
    memory = db.simulate(*args, progress=False, **kw)
    streamed = db.simulate(*args, progress=False, save_to=tmp_path / "run", **kw)
    assert_same(memory, streamed)
    assert streamed.status == "completed" and len(streamed) > 20  # more rows than one buffer holds
    assert sorted(os.listdir(tmp_path)) == ["run.npy"]  # the suffix appended, no .part left
    assert_same(memory, db.Trajectory.load(tmp_path / "run.npy", model))
    if model.loops:
        assert streamed.constraint_drift == memory.constraint_drift
    if "implicit" in case:
        assert streamed.solver_stats == memory.solver_stats and memory.solver_stats["newton_iterations"] > 0
    if "limits" in case:
        assert streamed.limit_work is not None and streamed.limit_work[-1] > 0  # the stops acted


def test_the_file_is_a_npy_of_records_that_numpy_reads_alone(tmp_path):
    chain = serial_chain(3)
    traj = db.simulate(chain, db.neutral_configuration(chain), np.zeros(3), 0.2, 1e-3, save_to=tmp_path / "r.npy")
    rec = np.load(tmp_path / "r.npy")
    assert rec.shape == (201,) and set(rec.dtype.names) >= {"t", "q", "v", "a", "tau"}
    assert np.array_equal(rec["q"], traj.q) and np.array_equal(rec["t"], traj.t)
    lazy = np.load(tmp_path / "r.npy", mmap_mode="r")
    assert np.array_equal(lazy["v"][100], traj.v[100])
    records, meta = st.read_states(tmp_path / "r.npy")
    assert meta["joint_names"] == list(chain.joint_names) and meta["status"] == "completed"
    assert meta["rows"] == 201 and meta["save_every"] == 1 and meta["method"] == "rk4"


def test_the_trajectory_reads_the_file_lazily(tmp_path):
    chain = serial_chain(3)
    q0, v0 = db.neutral_configuration(chain), np.zeros(3)
    memory = db.simulate(chain, q0, v0, 1.0, 1e-3)
    traj = db.simulate(chain, q0, v0, 1.0, 1e-3, save_to=tmp_path / "r.npy")
    assert isinstance(traj.q.base, np.memmap) or isinstance(traj.q.base.base, np.memmap)  # mapped, not read
    assert np.array_equal(traj.q[500], memory.q[500]) and np.array_equal(traj.v[10:20], memory.v[10:20])
    sub = traj[::100]
    assert len(sub) == 11 and np.array_equal(sub.t, memory.t[::100])
    assert np.array_equal(sub.kinetic_energy, memory.kinetic_energy[::100])
    assert np.array_equal(traj.at([0.25]).q, memory.at([0.25]).q)
    assert traj.energy_scale == memory.energy_scale
    with pytest.raises(db.InputError, match="indexed with a slice"):
        traj[3]
    with pytest.raises(TypeError, match="not iterable"):
        list(traj)


def test_energies_by_blocks_equal_one_call(monkeypatch):
    chain = serial_chain(3)
    traj = db.simulate(chain, db.neutral_configuration(chain), np.full(3, 0.3), 0.5, 1e-3, tau=np.ones(3))
    whole = (traj.kinetic_energy.copy(), traj.potential_energy.copy(), traj.power_in.copy())
    monkeypatch.setattr(db.simulation.trajectory, "BLOCK", 37)
    traj._cache.clear()
    for a, b in zip(whole, (traj.kinetic_energy, traj.potential_energy, traj.power_in)):
        assert np.array_equal(a, b)


def _interrupt_on_call(monkeypatch, n_calls):
    """The compiled run's n-th chunk is interrupted (a KeyboardInterrupt, as Ctrl-C raises)."""
    real = compiled_run.rk4_run
    calls = {"n": 0}

    def interrupted(*args):
        calls["n"] += 1
        if calls["n"] == n_calls:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(compiled_run, "rk4_run", interrupted)


def test_ctrl_c_mid_stream_leaves_the_states_so_far(tmp_path, monkeypatch, small_buffers):
    chain = serial_chain(4)
    q0, v0 = db.neutral_configuration(chain), np.zeros(4)
    full = db.simulate(chain, q0, v0, 2.0, 1e-3)
    (tmp_path / "run.npy").write_bytes(b"the previous file")
    _interrupt_on_call(monkeypatch, 40)
    with pytest.warns(UserWarning, match="interrupted by the user"):
        traj = db.simulate(chain, q0, v0, 2.0, 1e-3, save_to=tmp_path / "run.npy")
    assert traj.status == "interrupted" and 0 < len(traj) < len(full)
    again = db.Trajectory.load(tmp_path / "run.npy", chain)
    assert again.status == "interrupted" and "interrupted by the user" in again.message
    n = len(again)
    assert np.array_equal(again.q, full.q[:n]) and np.array_equal(again.t, full.t[:n])  # a prefix of the run
    assert sorted(os.listdir(tmp_path)) == ["run.npy"]


def test_a_failed_run_leaves_its_states_and_attaches_them(tmp_path):
    chain = serial_chain(3)
    with pytest.raises(db.SimulationError) as info:
        db.simulate(
            chain,
            db.neutral_configuration(chain),
            np.zeros(3),
            1.0,
            1e-3,
            tau=np.full(3, 1e305),
            save_to=tmp_path / "f.npy",
        )
    traj = info.value.trajectory
    assert traj is not None and traj.status == "failed"
    again = db.Trajectory.load(tmp_path / "f.npy", chain)
    assert again.status == "failed" and np.array_equal(again.q, traj.q) and np.all(np.isfinite(again.q))


def test_an_error_before_the_end_keeps_the_previous_file(tmp_path, monkeypatch):
    chain = serial_chain(3)
    (tmp_path / "run.npy").write_bytes(b"the previous file")

    def broken(*args):
        raise RuntimeError("a bug in the run")

    monkeypatch.setattr(compiled_run, "rk4_run", broken)
    with pytest.raises(RuntimeError):
        db.simulate(chain, db.neutral_configuration(chain), np.zeros(3), 1.0, 1e-3, save_to=tmp_path / "run.npy")
    assert (tmp_path / "run.npy").read_bytes() == b"the previous file"
    assert sorted(os.listdir(tmp_path)) == ["run.npy"]


def test_what_cannot_stream_is_named(tmp_path):
    chain = serial_chain(3)
    q0, v0 = db.neutral_configuration(chain), np.zeros(3)
    with pytest.raises(db.InputError, match="save_to streams the fixed-step runs .*'RK45'"):
        db.simulate(chain, q0, v0, 0.1, 1e-3, method="RK45", save_to=tmp_path / "r.npy")
    with pytest.raises(db.InputError, match="save_to streams the fixed-step runs .*'Radau'"):
        db.simulate(chain, q0, v0, 0.1, 1e-3, method="Radau", save_to=tmp_path / "r.npy")
    with pytest.raises(db.InputError, match="the folder .*nowhere of r.npy does not exist"):
        db.simulate(chain, q0, v0, 0.1, 1e-3, save_to=tmp_path / "nowhere" / "r.npy")
    with pytest.raises(db.InputError, match="save_to must be a file path"):
        db.simulate(chain, q0, v0, 0.1, 1e-3, save_to=3)
    assert not os.listdir(tmp_path)


def test_a_run_that_cannot_fit_on_the_disk_is_refused_at_once(tmp_path, monkeypatch):
    chain = serial_chain(6)
    monkeypatch.setattr(st.shutil, "disk_usage", lambda folder: shutil._ntuple_diskusage(2 * 10**9, 10**9, 10**9))
    refusal = r"would need about 2.08 TB of disk, but 1 GB is free there; pass save_every=\d+"
    with pytest.raises(db.ResourceError, match=refusal) as info:
        db.simulate(chain, db.neutral_configuration(chain), np.zeros(6), 1e6, 1e-4, save_to=tmp_path / "r.npy")
    assert info.value.needed > info.value.available == 10**9
    assert not os.listdir(tmp_path)


def test_torn_and_foreign_files_are_named(tmp_path):
    chain = serial_chain(3)
    db.simulate(chain, db.neutral_configuration(chain), np.zeros(3), 0.1, 1e-3, save_to=tmp_path / "r.npy")
    data = (tmp_path / "r.npy").read_bytes()
    (tmp_path / "torn.npy").write_bytes(data[: len(data) - 100])
    with pytest.raises(db.InputError, match="torn or incomplete"):
        db.Trajectory.load(tmp_path / "torn.npy", chain)
    np.save(tmp_path / "plain.npy", np.zeros((3, 4)))
    with pytest.raises(db.InputError, match="a .npy array, not a trajectory streamed"):
        db.Trajectory.load(tmp_path / "plain.npy", chain)
    with pytest.raises(db.InputError, match="streamed for a model with joints"):
        db.Trajectory.load(tmp_path / "r.npy", serial_chain(4))


# ------------------------------------------------------------------------- stale .part files
def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


@pytest.mark.parametrize("writer", ["stream", "npz"])
def test_a_stale_part_of_a_killed_writer_is_removed_by_the_next_write(tmp_path, writer):
    """A writer killed before its rename leaves ``.NAME.HOST-PID-XXXXXXXX.part``: the next write of the
    same file removes it (its process is gone), and leaves the .part of a live writer, of another
    file and of another machine alone."""
    chain = serial_chain(3)
    name = "run.npy" if writer == "stream" else "run.npz"
    stale = tmp_path / f".{name}.{_files._HOST}-{_dead_pid()}-abc_12xy.part"
    stale.write_bytes(b"half a file")
    live = tmp_path / f".{name}.{_files._HOST}-{os.getppid()}-zzzzzzzz.part"  # the test runner's parent: alive
    live.write_bytes(b"another writer")
    other = tmp_path / f".other.npy.{_files._HOST}-{_dead_pid()}-abcdefgh.part"
    other.write_bytes(b"another file's")
    elsewhere = tmp_path / f".{name}.another_machine-{_dead_pid()}-abcdefgh.part"  # a shared folder
    elsewhere.write_bytes(b"another machine's writer")
    q0, v0 = db.neutral_configuration(chain), np.zeros(3)
    if writer == "stream":
        traj = db.simulate(chain, q0, v0, 0.1, 1e-3, save_to=tmp_path / name)
    else:
        traj = db.simulate(chain, q0, v0, 0.1, 1e-3)
        traj.to_npz(tmp_path / name)
    assert not stale.exists() and live.exists() and other.exists() and elsewhere.exists()
    assert len(db.Trajectory.load(tmp_path / name, chain)) == len(traj) == 101


_STREAMER = textwrap.dedent(
    """
    import sys, numpy as np, denoc_bridge as db
    from denoc_bridge.io.robots import serial_chain
    chain = serial_chain(4)
    print("running", flush=True)
    db.simulate(chain, db.neutral_configuration(chain), np.zeros(4), 1e4, 1e-3, method="euler",
                save_to=sys.argv[1], progress=False)
    """
)


def test_a_killed_streaming_run_leaves_the_previous_file_and_a_part_the_next_run_removes(tmp_path):
    chain = serial_chain(4)
    q0, v0 = db.neutral_configuration(chain), np.zeros(4)
    target = tmp_path / "run.npy"
    db.simulate(chain, q0, v0, 0.1, 1e-3, save_to=target)
    previous = target.read_bytes()
    proc = subprocess.Popen([sys.executable, "-c", _STREAMER, str(target)], env=ENV, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "running"
    parts: list[Path] = []
    for _ in range(600):  # until the run has written rows (numba's cache may load first)
        parts = list(tmp_path.glob(".run.npy.*.part"))
        if parts and parts[0].stat().st_size > 128 and np.load(parts[0], mmap_mode="r").shape[0] > 0:
            break
        proc.poll()
        assert proc.returncode is None
        time.sleep(0.1)
    proc.kill()
    proc.wait(timeout=30)
    assert target.read_bytes() == previous  # never a torn target
    (part,) = parts
    rows = np.load(part)  # the killed run's .part reads as the rows written so far
    assert rows.shape[0] > 0 and np.all(np.isfinite(rows["q"]))
    db.simulate(chain, q0, v0, 0.2, 1e-3, save_to=target)  # the next run of the same file
    assert not part.exists() and sorted(os.listdir(tmp_path)) == ["run.npy"]
    assert len(db.Trajectory.load(target, chain)) == 201


# ------------------------------------------------------------------------------ flat memory
_FLAT = textwrap.dedent(
    """
    import json, resource, sys, warnings
    import numpy as np, denoc_bridge as db
    from denoc_bridge.io.robots import serial_chain
    def status(key):
        for line in open("/proc/self/status"):
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    chain = serial_chain(6)
    q0, v0 = db.neutral_configuration(chain), np.zeros(6)
    T, margin, path = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    db.simulate(chain, q0, v0, 0.01, 1e-4, method="euler", save_to=path)  # compiled (or loaded) first
    db.simulate(chain, q0, v0, 0.01, 1e-4, method="euler")
    limit = status("VmData:") + margin  # ulimit -d: what the process may still allocate
    resource.setrlimit(resource.RLIMIT_DATA, (limit, resource.getrlimit(resource.RLIMIT_DATA)[1]))
    out = {}
    traj = db.simulate(chain, q0, v0, T, 1e-4, method="euler", save_every=1, save_to=path)
    out["streamed"] = [len(traj), traj.status, float(traj.total_energy[-1])]
    out["hwm_anon"] = status("RssAnon:")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            db.simulate(chain, q0, v0, T, 1e-4, method="euler", save_every=1)
        out["memory"] = "ran"
    except MemoryError as e:  # a ResourceError (refused) or numpy's MemoryError
        out["memory"] = type(e).__name__
    print(json.dumps(out))
    """
)


def _flat_run(duration: float, margin: int, path: Path) -> dict:
    p = subprocess.run(
        [sys.executable, "-c", _FLAT, str(duration), str(margin), str(path)],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_a_streaming_run_holds_its_buffer_only(tmp_path):
    """Under a data-segment limit (``ulimit -d``) 48 MB above what the process holds, a run of
    200,001 states (42 MB of records, and their energies) streams, and the same run in memory
    cannot; (an address-space limit would count the mapped file that the trajectory reads.)"""
    out = _flat_run(20.0, 48 * 10**6, tmp_path / "r.npy")
    assert out["streamed"][:2] == [200_001, "completed"] and np.isfinite(out["streamed"][2])
    assert out["memory"] in ("ResourceError", "MemoryError")
    assert os.path.getsize(tmp_path / "r.npy") > 200_001 * 200
