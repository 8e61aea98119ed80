"""Sweeps (denoc_bridge.sweeps): cases, model parameters, files and resume, failing cases,
Dask execution (LocalCluster, a scheduler address, a worker killed mid-sweep), and
simulate_batch, which runs the cases of one model in one compiled call."""

import csv
import json
import os
import re
import sys

import numpy as np
import pytest
from sweep_workers import KillWorkerOnce

import denoc_bridge as db
from denoc_bridge import generators, sweeps
from denoc_bridge.testing import random_model

distributed = pytest.importorskip("distributed")

KW = {"t_final": 0.1, "dt": 1e-3}


@pytest.fixture(scope="module")
def rope():
    return generators.rope(n=20)


def _serial(model, q0, v0, kw=KW, tau=None):
    kw = dict(kw)
    t = kw.pop("t_final")
    return db.simulate(model, q0, v0, t, tau=tau, progress=False, **kw)


def _same_rows(a, b):
    assert [r["case"] for r in a] == [r["case"] for r in b]
    for ra, rb in zip(a, b):
        assert set(ra) == set(rb), ra["case"]
        for k in ra:
            if k in sweeps.TIMING_COLUMNS:
                continue
            assert ra[k] == rb[k] or (ra[k] != ra[k] and rb[k] != rb[k]), (
                f"case {ra['case']}, column {k}: {ra[k]!r} != {rb[k]!r}"
            )


# ------------------------------------------------------------------ simulate_batch
@pytest.mark.parametrize("method", ["rk4", "euler"])
def test_simulate_batch_is_simulate_case_by_case(method):
    model = random_model(3, n_links=7)
    rng = np.random.default_rng(4)
    B = 5
    q0 = np.array([db.random_configuration(model, rng) for _ in range(B)])
    v0 = 0.3 * rng.standard_normal((B, model.nv))
    tau = 0.05 * rng.standard_normal((B, model.nv))
    got = db.simulate_batch(model, q0, v0, 0.05, 1e-3, tau=tau, method=method, save_every=3)
    for b in range(B):
        ref = db.simulate(model, q0[b], v0[b], 0.05, 1e-3, tau=tau[b], method=method, save_every=3, progress=False)
        for name in ("t", "q", "v", "a", "tau"):
            assert np.array_equal(getattr(got[b], name), getattr(ref, name)), f"case {b}: {name}"
        assert (got[b].n_steps, got[b].n_evaluations, got[b].status) == (ref.n_steps, ref.n_evaluations, ref.status)


def test_simulate_batch_tables_and_shared_state(rope):
    rng = np.random.default_rng(0)
    taus = 1e-3 * rng.standard_normal((3, 40, rope.nv))
    q0 = db.neutral_configuration(rope)
    got = db.simulate_batch(rope, q0, np.zeros(rope.nv), 0.04, 1e-3, tau=taus)
    assert len(got) == 3
    for b in range(3):
        ref = db.simulate(rope, q0, np.zeros(rope.nv), 0.04, 1e-3, tau=taus[b], progress=False)
        assert np.array_equal(got[b].q, ref.q) and np.array_equal(got[b].tau, ref.tau)
    assert not np.array_equal(got[0].q, got[1].q)


def test_simulate_batch_failing_case_is_that_of_simulate(rope):
    v0 = np.zeros((3, rope.nv))
    v0[1, 4] = 1e155  # case 1 blows up at once
    q0 = db.neutral_configuration(rope)
    out = db.simulate_batch(rope, q0, v0, 0.02, 1e-3, errors="return")
    assert isinstance(out[1], db.SimulationError) and isinstance(out[0], db.Trajectory)
    with pytest.raises(db.SimulationError) as exc:
        db.simulate(rope, q0, v0[1], 0.02, 1e-3, progress=False)
    assert str(out[1]) == str(exc.value) and out[1].joint == exc.value.joint
    with pytest.raises(db.SimulationError, match=r"t = 0 s"):
        db.simulate_batch(rope, q0, v0, 0.02, 1e-3)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"method": "RK45"}, "fixed-step"),
        ({"tau": np.zeros((2, 3))}, r"tau must be None"),
        ({"errors": "ignore"}, "errors must be"),
    ],
)
def test_simulate_batch_bad_arguments(rope, kwargs, match):
    with pytest.raises(db.InputError, match=match):
        db.simulate_batch(rope, db.neutral_configuration(rope), np.zeros((2, rope.nv)), 0.01, 1e-3, **kwargs)


def test_simulate_batch_names_the_bad_row(rope):
    q0 = np.tile(db.neutral_configuration(rope), (3, 1))
    q0[2, 5] = np.nan
    with pytest.raises(db.InputError, match=r"q0\[2\]\[5\] = nan is not finite \(joint"):
        db.simulate_batch(rope, q0, np.zeros(rope.nv), 0.01, 1e-3)


# ------------------------------------------------------------------ cases and parameters
def test_grid_and_csv(tmp_path):
    g = sweeps.grid({"mass_scale": [0.5, 2.0], "v0[0]": np.linspace(0, 1, 3)})
    assert g == [
        {"mass_scale": 0.5, "v0[0]": 0.0},
        {"mass_scale": 0.5, "v0[0]": 0.5},
        {"mass_scale": 0.5, "v0[0]": 1.0},
        {"mass_scale": 2.0, "v0[0]": 0.0},
        {"mass_scale": 2.0, "v0[0]": 0.5},
        {"mass_scale": 2.0, "v0[0]": 1.0},
    ]
    p = tmp_path / "cases.csv"
    p.write_text("case,mass_scale,q0[1],method\na,1.5,0.25,rk4\nb,,-0.5,euler\n")
    assert sweeps.read_cases(p) == [
        {"case": "a", "mass_scale": 1.5, "q0[1]": 0.25, "method": "rk4"},
        {"case": "b", "q0[1]": -0.5, "method": "euler"},
    ]
    p.write_text("case,mass_scale\na,heavy\n")
    with pytest.raises(db.InputError, match=r"line 2, column 'mass_scale': 'heavy' is not a number"):
        sweeps.read_cases(p)


def test_vary_matches_a_model_built_with_the_parameters():
    base = generators.chain(6, kind="planar", length=0.5, mass=2.0, radius=0.02)
    ref = generators.chain(6, kind="planar", length=0.75, mass=3.0, radius=0.03)  # every length x 1.5
    got = sweeps.vary(base, {"mass_scale": 1.5, "length_scale": 1.5})
    rng = np.random.default_rng(0)
    q, v, a = db.random_configuration(base, rng), rng.standard_normal(6), rng.standard_normal(6)
    np.testing.assert_allclose(db.inverse_dynamics(got, q, v, a), db.inverse_dynamics(ref, q, v, a), rtol=1e-12)
    one = sweeps.vary(
        base, {f"mass.{base.link_names[2]}": 5.0, f"damping.{base.joint_names[1]}": 0.3, "gravity_scale": 0.5}
    )
    assert one.mass[2] == 5.0 and np.allclose(one.inertia[2], base.inertia[2] * 2.5)
    assert one.damping.tolist() == [0, 0.3, 0, 0, 0, 0] and np.allclose(one.gravity, 0.5 * base.gravity)
    short = sweeps.vary(base, {f"length_scale.{base.link_names[2]}": 0.5})
    assert np.allclose(short.joint_translation[3], 0.5 * base.joint_translation[3])
    assert np.allclose(short.joint_translation[2], base.joint_translation[2])


@pytest.mark.parametrize(
    "params, match",
    [
        ({"mass.nope": 1.0}, "has no link 'nope'"),
        ({"damping.nope": 1.0}, "has no joint 'nope'"),
        ({"mass_scale": -1.0}, "must be positive"),
        ({"length_scale": "long"}, "is not a number"),
        ({"colour": 1.0}, "unknown model parameter 'colour'"),
    ],
)
def test_vary_refuses_bad_parameters(params, match):
    with pytest.raises(db.InputError, match=match):
        sweeps.vary(generators.chain(3), params)


# ------------------------------------------------------------------ the sweep, inline
def test_inline_sweep_rows_files_and_resume(rope, tmp_path):
    names = rope.joint_names
    cases = [
        {"case": "a"},
        {"case": "b", "q0[0]": 0.4},
        {"case": "c", f"v0.{names[3]}": 1.0, "mass_scale": 2.0},
        {"case": "d", "q0[0]": 0.4, "tau[0]": 0.01},
    ]
    res = db.sweep(rope, cases, KW, out=tmp_path, scheduler="inline", metrics=["energy_drift", "q_end"])
    assert [r["status"] for r in res] == ["completed"] * 4
    q0 = db.neutral_configuration(rope)
    v = np.zeros(rope.nv)
    v[3] = 1.0
    q4 = q0.copy()
    q4[0] = 0.4
    tau = np.zeros(rope.nv)
    tau[0] = 0.01
    refs = [
        _serial(rope, q0, np.zeros(rope.nv)),
        _serial(rope, q4, np.zeros(rope.nv)),
        _serial(sweeps.vary(rope, {"mass_scale": 2.0}), q0, v),
        _serial(rope, q4, np.zeros(rope.nv), tau=tau),
    ]
    for row, ref in zip(res.rows, refs):
        assert [row[f"q_end[{i}]"] for i in range(rope.nq)] == ref.q[-1].tolist(), row["case"]
        assert row["energy_drift"] == float(np.max(np.abs(ref.energy_drift(relative=True))))
        saved = res.trajectory(row["case"], rope)
        assert np.array_equal(saved.q, ref.q) and np.array_equal(saved.tau, ref.tau)
    assert res.column("energy_drift").max() < 1e-6
    table = (tmp_path / "summary.csv").read_text().splitlines()
    assert table[0].startswith("case,") and len(table) == 5
    # resume: the saved rows are read back, nothing runs again
    (tmp_path / "cases" / "b.json").unlink()
    again = db.sweep(rope, cases, KW, out=tmp_path, scheduler="inline", metrics=["energy_drift", "q_end"])
    assert (again.n_run, again.n_resumed) == (1, 3)
    _same_rows(res.rows, again.rows)
    with pytest.raises(db.InputError, match="holds a different sweep"):
        db.sweep(rope, cases[:2], KW, out=tmp_path, scheduler="inline")


def test_failed_case_keeps_its_partial_trajectory_and_the_sweep_goes_on(rope, tmp_path):
    cases = [{"case": "ok"}, {"case": "boom", "v0[2]": 1e155}]
    res = db.sweep(rope, cases, KW, out=tmp_path, scheduler="inline")
    assert [r["status"] for r in res] == ["completed", "failed"]
    assert "simulation stopped at t = 0 s" in res.rows[1]["error"] and "joint" in res.rows[1]["error"]
    assert len(res.trajectory("boom", rope)) == 0 or res.trajectory("boom", rope).t[-1] == 0.0


def test_factory_sweep():
    def factory(n_links, mass):
        return generators.chain(int(n_links), kind="planar", mass=mass)

    cases = sweeps.grid({"n_links": [3, 5], "mass": [1.0, 2.0]})
    res = db.sweep(factory, cases, KW, scheduler="inline", metrics=["total_energy_end"])
    assert [r["status"] for r in res] == ["completed"] * 4
    for row, case in zip(res.rows, cases):
        m = factory(**case)
        ref = _serial(m, db.neutral_configuration(m), np.zeros(m.nv))
        assert row["total_energy_end"] == float(ref.total_energy[-1])
    bad = db.sweep(factory, [{"n_links": 3, "mass": -1.0}], KW, scheduler="inline")
    assert bad.rows[0]["status"] == "error" and "mass" in bad.rows[0]["error"]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"simulate_kwargs": {"dt": 1e-3}}, "t_final is required"),
        ({"simulate_kwargs": {"t_final": 0.1, "colour": 1}}, "unknown option"),
        ({"cases": [{"case": "a"}, {"case": "a"}]}, "appears twice"),
        ({"cases": [{"case": "a/b"}]}, "identifier 'a/b'"),
        ({"metrics": ["speed"]}, "unknown metric 'speed'"),
        ({"batch_size": 0}, "batch_size must be"),
    ],
)
def test_sweep_bad_arguments(rope, kwargs, match):
    args = {"cases": [{}], "simulate_kwargs": KW, "scheduler": "inline", **kwargs}
    with pytest.raises(db.InputError, match=match):
        db.sweep(rope, **args)


@pytest.mark.parametrize(
    "cases, match",
    [
        (None, r"cases must be a list of mappings .* got NoneType"),
        ({"mass_scale": 1}, r"cases: a mapping is read as columns .* column 'mass_scale' is int 1"),
        ([{"mass_scale": 1}, 2], r"cases\[1\] must be a mapping of column names to values, got int"),
    ],
)
def test_sweep_cases_of_a_wrong_kind(cases, match):
    with pytest.raises(db.InputError, match=match):
        db.sweep(generators.chain(3), cases, KW, scheduler="inline")


def _chain_sweep(tmp_path, cases, kw=KW, model=None, **kwargs):
    return db.sweep(model or generators.chain(3), cases, kw, out=tmp_path / "out", scheduler="inline", **kwargs)


@pytest.mark.parametrize(
    "cases, kw, match",
    [
        ([{}], {**KW, "method": "foo"}, r"^simulate_kwargs: method must be one of rk4, .*, got 'foo'$"),
        ([{}], {**KW, "save_every": 0}, r"^simulate_kwargs: save_every must be a positive integer, got 0$"),
        ([{}], {**KW, "save_every": -1}, r"^simulate_kwargs: save_every must be a positive integer, got -1$"),
        ([{}], {**KW, "method": "RK45", "save_every": 2}, r"^simulate_kwargs: save_every is for the fixed-step"),
        ([{}], {"t_final": 0.0105, "dt": 1e-3}, r"^simulate_kwargs: t_final = 0.0105 is not a whole number of steps"),
        ([{}, {"case": "x", "dt": 3e-3}], KW, r"^case 'x': t_final = 0.1 is not a whole number of steps dt = 0.003$"),
        (
            [{"case": "x", "method": "euler", "save_every": 2.5}],
            KW,
            r"^case 'x': save_every must be a positive integer",
        ),
        ([{"foo": 1.0}], KW, r"^case 'case00000': unknown model parameter 'foo'"),
        (
            [{"mass_scale": 1.0}, {"mass_scale": -1.0}],
            KW,
            r"^case 'case00001': model parameter mass_scale = -1.0 must "
            r"be positive$",
        ),
        ([{"q0": [np.nan, 0, 0]}], KW, r"^case 'case00000': q0\[0\] = nan is not finite"),
        ([{"q0": [0.0, 0.0]}], KW, r"^case 'case00000': q0 must have shape \(3,\)"),
        ([{"v0[3]": 1.0}], KW, r"^case 'case00000': v0\[3\]: index 3 is out of range"),
        ([{"tau.nope": 1.0}], KW, r"^case 'case00000': tau.nope: 'planar_chain3' has no joint 'nope'"),
        (
            [{"tau[0]": 1.0}],
            {**KW, "tau": lambda t, q, v: np.zeros(3)},
            r"^case 'case00000': column 'tau\[0\]' would "
            r"be ignored: simulate_kwargs\['tau'\] is a",
        ),
    ],
)
def test_sweep_refuses_bad_input_before_running(tmp_path, cases, kw, match):
    """A user mistake in the options or a case column raises before any case runs (no folder
    written), not as "error" rows."""
    with pytest.raises(db.InputError, match=match):
        _chain_sweep(tmp_path, cases, kw)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "case, columns",
    [
        ({"q0": [0.1, 0.0, 0.0], "q0[0]": 0.5}, "columns 'q0' and 'q0[0]' both give q0[0]"),
        ({"q0.joint1": 0.1, "q0[1]": 0.2}, "columns 'q0.joint1' and 'q0[1]' both give q0[1]"),
        ({"v0[2]": 0.1, "v0[02]": 0.2}, "columns 'v0[2]' and 'v0[02]' both give v0[2]"),
    ],
)
def test_two_columns_for_one_entry_are_refused(tmp_path, case, columns):
    with pytest.raises(db.InputError, match=re.escape(f"case 'case00001': {columns}")):
        _chain_sweep(tmp_path, [{}, case])


def test_duplicated_csv_column_is_refused(tmp_path):
    p = tmp_path / "cases.csv"
    p.write_text("case,q0[0],mass_scale,q0[0]\na,0.1,1,0.2\n")
    with pytest.raises(db.InputError, match=r"column 'q0\[0\]' appears twice in the header \(columns 2 and 4\)"):
        sweeps.read_cases(p)


def test_physical_failures_stay_rows(tmp_path):
    """What goes wrong in the dynamics (a singular articulated inertia, a divergence) is a
    "failed" row of that case; the other cases run."""
    res = _chain_sweep(tmp_path, [{"mass.link2": 0.0}, {"v0[0]": 1e200}, {"mass_scale": 2.0}])
    assert [r["status"] for r in res] == ["failed", "failed", "completed"]
    assert "articulated inertia of joint 'joint2' is singular" in res.rows[0]["error"]
    assert "no longer finite" in res.rows[1]["error"]


def test_resume_refuses_another_sweep_in_the_same_folder(tmp_path):
    """sweep.json records the model, the cases' values, the base state and the options: a
    folder holding another sweep is refused, not read back as this one's rows."""
    chain3 = generators.chain(3)
    first = _chain_sweep(tmp_path, sweeps.grid({"mass_scale": [1, 2]}), model=chain3)
    same = _chain_sweep(tmp_path, sweeps.grid({"mass_scale": [1.0, 2.0]}), model=generators.chain(3))
    assert (same.n_run, same.n_resumed) == (0, 2)
    _same_rows(first.rows, same.rows)
    saved = (tmp_path / "out" / "sweep.json").read_text()
    for cases, model, kwargs, differs in [
        (sweeps.grid({"mass_scale": [5, 10]}), chain3, {}, "other cases (the first that differs: 'case00000')"),
        (sweeps.grid({"mass_scale": [1, 2, 3]}), chain3, {}, "other cases (2, not 3)"),
        (sweeps.grid({"mass_scale": [1, 2]}), generators.chain(3, mass=2.0), {}, "another model"),
        (
            sweeps.grid({"mass_scale": [1, 2]}),
            generators.chain(4),
            {},
            "another model ('planar_chain3', not 'planar_chain4')",
        ),
        (
            sweeps.grid({"mass_scale": [1, 2]}),
            chain3,
            {"base_state": ([0.1, 0, 0], np.zeros(3), None)},
            "another base_state",
        ),
    ]:
        with pytest.raises(sweeps.DifferentSweepError) as exc:
            _chain_sweep(tmp_path, cases, model=model, **kwargs)
        assert exc.value.differs == [differs]
        assert f"records {differs}); use another folder, or resume=False" in str(exc.value)
        assert (tmp_path / "out" / "sweep.json").read_text() == saved
    again = _chain_sweep(tmp_path, sweeps.grid({"mass_scale": [5, 10]}), model=chain3, resume=False)
    assert (again.n_run, again.n_resumed) == (2, 0)
    assert again.column("total_energy_end").tolist() != first.column("total_energy_end").tolist()


def test_out_that_is_a_file_and_bad_scheduler_address(tmp_path):
    (tmp_path / "c1.csv").write_text("x\n")
    with pytest.raises(db.InputError, match=r"^out: .*c1.csv is a file, not a folder$"):
        db.sweep(generators.chain(3), [{}], KW, out=tmp_path / "c1.csv", scheduler="inline")
    with pytest.raises(
        db.InputError,
        match=r"^scheduler 'bogus' is not a Dask scheduler address \(tcp://HOST:PORT\): "
        r"missing port number",
    ):
        db.sweep(generators.chain(3), [{}], KW, scheduler="bogus")


def test_summary_counts_and_to_pandas_without_pandas(monkeypatch):
    res = db.sweep(generators.chain(3), [{}], KW, scheduler="inline")
    assert res.summary().startswith("1 case: 1 completed (1 run now, 0 from an earlier run) in ")
    assert repr(res).startswith("SweepResult(1 case, 1 completed, 0 not;")
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if pandas were not installed
    with pytest.raises(ImportError, match=r"^SweepResult.to_pandas needs pandas, .*: pip install pandas$"):
        res.to_pandas()


# ------------------------------------------------------------------ on Dask
@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as c:
        yield c


def _rope_cases(n):
    return [{"case": f"c{i:02d}", "q0[0]": 0.05 * i, "v0[3]": 0.1 * (i % 3)} for i in range(n)]


@pytest.mark.slow
def test_scheduler_address_and_client_run_the_same_sweep(rope, cluster, tmp_path):
    from distributed import Client

    cases = _rope_cases(6)
    inline = db.sweep(rope, cases, KW, scheduler="inline", batch_size=2)
    by_address = db.sweep(rope, cases, KW, scheduler=cluster.scheduler_address, batch_size=2, out=tmp_path / "a")
    with Client(cluster) as client:
        by_client = db.sweep(rope, cases, KW, client=client, batch_size=4, out=tmp_path / "b")
    _same_rows(inline.rows, by_address.rows)
    _same_rows(inline.rows, by_client.rows)
    for c in cases:
        assert np.array_equal(by_address.trajectory(c["case"], rope).q, by_client.trajectory(c["case"], rope).q)


@pytest.mark.slow
def test_local_cluster_default(rope, tmp_path):
    cases = _rope_cases(4)
    res = db.sweep(rope, cases, KW, workers=2, out=tmp_path)
    _same_rows(db.sweep(rope, cases, KW, scheduler="inline").rows, res.rows)
    assert json.loads((tmp_path / "sweep.json").read_text())["cases"] == cases


@pytest.mark.slow
def test_killed_worker_loses_no_result(rope, cluster, tmp_path):
    """A worker dies (SIGKILL) in the middle of a case: Dask runs its task again elsewhere, and
    the result is complete and identical to a serial run."""
    from distributed import Client

    marks = tmp_path / "calls"
    marks.mkdir()
    cases = _rope_cases(16)
    kw = {"t_final": 0.2, "dt": 1e-3}
    with Client(cluster) as client:
        pids = set(client.run(os.getpid).values())
        res = db.sweep(
            rope,
            cases,
            kw,
            client=client,
            batch_size=2,
            out=tmp_path / "out",
            metrics={
                "energy_drift": sweeps.METRICS["energy_drift"],
                "q_end": sweeps.METRICS["q_end"],
                "kill": KillWorkerOnce(marks, after=5),
            },
        )
        client.wait_for_workers(2, timeout=60)
        after = set(client.run(os.getpid).values())
    assert len(pids - after) == 1, "exactly one worker process should have died and been replaced"
    assert [r["status"] for r in res] == ["completed"] * 16
    assert len(list(marks.iterdir())) >= 17  # 16 cases + the one killed mid-case
    q0 = db.neutral_configuration(rope)
    for row, case in zip(res.rows, cases):
        q, v = q0.copy(), np.zeros(rope.nv)
        q[0], v[3] = case["q0[0]"], case["v0[3]"]
        ref = _serial(rope, q, v, kw)
        assert [row[f"q_end[{i}]"] for i in range(rope.nq)] == ref.q[-1].tolist()
        assert row["energy_drift"] == float(np.max(np.abs(ref.energy_drift(relative=True))))
        assert np.array_equal(res.trajectory(row["case"], rope).q, ref.q)
    files = sorted(p.name for p in (tmp_path / "out" / "cases").iterdir())
    assert files == sorted([f"{c['case']}.json" for c in cases] + [f"{c['case']}.npz" for c in cases])


# ------------------------------------------------------------------ the command line
@pytest.mark.slow
def test_cli_sweep_grid_resume_and_cases_file(tmp_path):
    from conftest import denoc_bridge_cmd

    args = [
        "sweep",
        "chain:8",
        "--grid",
        "mass_scale=0.5,2",
        "--grid",
        "q0[0]=-0.5:0.5:3",
        "--duration",
        "0.05",
        "--out",
        tmp_path / "out",
        "--workers",
        "2",
        "--metrics",
        "energy_drift,q_end",
    ]
    r = denoc_bridge_cmd(*args, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "6 cases (grid mass_scale: 2 x q0[0]: 3)" in r.stdout and "6 cases: 6 completed (6 run now" in r.stdout
    assert "energy_drift" in r.stdout and "summary.csv" in r.stdout
    lines = (tmp_path / "out" / "summary.csv").read_text().splitlines()
    assert len(lines) == 7 and lines[0].startswith("case,mass_scale,q0[0],status,error,energy_drift,q_end[0]")
    model = generators.chain(8)
    row = lines[5].split(",")  # mass_scale 2, q0[0] = 0
    q0 = db.neutral_configuration(model)
    ref = db.simulate(sweeps.vary(model, {"mass_scale": 2.0}), q0, np.zeros(8), 0.05, progress=False)
    assert [float(x) for x in row[6:14]] == ref.q[-1].tolist()
    again = denoc_bridge_cmd(*args, cwd=tmp_path)
    assert again.returncode == 0 and "(0 run now, 6 from an earlier run)" in again.stdout
    (tmp_path / "cases.csv").write_text("case,v0[1],method\nslow,0.1,rk4\nfast,2.0,euler\n")
    r = denoc_bridge_cmd(
        "sweep", "chain:8", "--cases", "cases.csv", "--duration", "0.05", "--out", "out2", "--inline", cwd=tmp_path
    )
    assert r.returncode == 0 and "2 cases: 2 completed" in r.stdout, r.stdout + r.stderr
    assert sorted(p.name for p in (tmp_path / "out2" / "cases").iterdir()) == [
        "fast.json",
        "fast.npz",
        "slow.json",
        "slow.npz",
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv, message",
    [
        (["sweep", "chain:4", "--out", "o"], "one of the arguments --cases --grid is required"),
        (["sweep", "chain:4", "--grid", "mass_scale", "--out", "o"], "expected NAME=v1,v2"),
        (["sweep", "chain:4", "--grid", "mass_scale=a,b", "--out", "o"], "the values must be numbers"),
        (
            ["sweep", "chain:4", "--grid", "mass_scale=1", "--out", "o", "--metrics", "speed", "--inline"],
            "unknown metric 'speed'",
        ),
        (["sweep", "chain:4", "--cases", "missing.csv", "--out", "o"], "cases file missing.csv"),
        (["sweep", "chain:4", "--grid", "colour=1", "--out", "o", "--inline"], "unknown model parameter 'colour'"),
        (
            ["sweep", "chain:4", "--grid", "mass_scale=1", "--out", "o", "--workers", "0"],
            "--workers must be at least 1",
        ),
    ],
)
def test_cli_sweep_mistakes(tmp_path, argv, message):
    from conftest import denoc_bridge_cmd

    r = denoc_bridge_cmd(*argv, cwd=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert message in r.stderr and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr


_CLI = ["sweep", "chain:3", "--out", "o", "--duration", "0.01", "--inline"]


@pytest.mark.parametrize(
    "extra, message",
    [
        (
            ["--grid", "q0[0]=0.1", "--method", "foo"],
            "--method must be one of rk4, euler, implicit-euler, sdirk2, RK45, DOP853, Radau, BDF, LSODA, got 'foo'",
        ),
        (["--grid", "q0[0]=0.1", "--save-every", "-1"], "--save-every must be at least 1, got -1"),
        (["--grid", "q0[0]=0.1", "--save-every", "0"], "--save-every must be at least 1, got 0"),
        (["--grid", "q0[0]=0.1", "--method", "RK45", "--save-every", "2"], "--save-every is for --method rk4 or euler"),
        (
            ["--grid", "q0[0]=0.1", "--duration", "0.0105"],
            "--duration 0.0105 is not a whole number of steps --dt 0.001",
        ),
        (["--grid", "foo=1,2"], "case 'case00000': unknown model parameter 'foo'"),
        (["--grid", "mass_scale=-1,1"], "case 'case00000': model parameter mass_scale = -1.0 must be positive"),
        (["--grid", "q0.joint1=0.1", "--grid", "q0.joint1=0.2"], "--grid q0.joint1 is given twice"),
        (["--grid", "q0.joint1=0.1", "--grid", "q0[1]=0.2"], "columns 'q0.joint1' and 'q0[1]' both give q0[1]"),
        (["--cases", "dup.csv"], "cases file dup.csv: column 'q0[0]' appears twice in the header (columns 1 and 2)"),
        (["--grid", "q0[0]=0.1", "--out", "c1.csv"], "--out: c1.csv is a file, not a folder"),
        (["--grid", "q0[0]=0.1", "--ground"], "has no collision shapes to touch the ground with"),
        (["--grid", "q0[0]=0.1", "--drop", "0.1"], "--drop goes with the ground (--ground)"),
        (["--grid", "q0[0]=0.1", "--mu", "0.5"], "--mu is the ground's friction coefficient"),
        (["--grid", "q0[0]=0.1", "--full-hull"], "--full-hull chooses the contact points of collision meshes"),
    ],
)
def test_cli_sweep_mistakes_exit_2_before_running(tmp_path, monkeypatch, capsys, extra, message):
    from denoc_bridge.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "dup.csv").write_text("q0[0],q0[0]\n0.1,0.2\n")
    (tmp_path / "c1.csv").write_text("x\n")
    assert main(_CLI + extra) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err, err
    assert not (tmp_path / "o").exists()


def test_cli_sweep_scheduler_address(tmp_path, capsys):
    from denoc_bridge.cli import main

    argv = ["sweep", "chain:3", "--grid", "q0[0]=0.1", "--out", str(tmp_path / "o"), "--scheduler", "bogus"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == (
        "denoc-bridge: error: --scheduler 'bogus' is not a Dask scheduler address (tcp://HOST:PORT): "
        "missing port number in address 'bogus'\n"
    )


def test_cli_sweep_refuses_another_sweep_and_names_restart(tmp_path, monkeypatch, capsys):
    from denoc_bridge.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(_CLI + ["--grid", "mass_scale=0.5,1"]) == 0
    assert "2 cases: 2 completed (2 run now, 0 from an earlier run)" in capsys.readouterr().out
    assert main(_CLI + ["--grid", "mass_scale=0.5,1"]) == 0
    assert "(0 run now, 2 from an earlier run)" in capsys.readouterr().out
    for robot, grid, differs in (
        ("chain:3", "mass_scale=0.7,1", "other cases (the first that differs: 'case00000')"),
        ("chain:4", "mass_scale=0.5,1", "another model ('planar_chain3', not 'planar_chain4')"),
    ):
        assert main(["sweep", robot] + _CLI[2:] + ["--grid", grid]) == 2
        err = capsys.readouterr().err
        assert err == (
            f"denoc-bridge: error: --out o holds a different sweep (its sweep.json records {differs}); "
            "use another --out folder, or --restart to run every case again\n"
        )
    assert main(_CLI + ["--grid", "mass_scale=0.7", "--restart"]) == 0
    assert "1 case: 1 completed (1 run now, 0 from an earlier run)" in capsys.readouterr().out


def test_result_column_and_trajectory_name_an_unknown_name(rope, tmp_path):
    """``column`` raised a bare KeyError; ``trajectory`` of a misspelt case said only that no file
    was there (and built a path from whatever it was given)."""
    res = db.sweep(rope, [{"case": "light", "mass_scale": 0.5}], KW, out=tmp_path, scheduler="inline")
    with pytest.raises(db.NameLookupError, match=r"no column 'energy_drft'; did you mean energy_drift\?"):
        res.column("energy_drft")
    with pytest.raises(KeyError):  # still a KeyError
        res.column("nope")
    with pytest.raises(db.NameLookupError, match=r"no case named 'lihgt' in this sweep; did you mean light\?"):
        res.trajectory("lihgt", rope)
    with pytest.raises(db.NameLookupError, match="no case named '../sweep'"):
        res.trajectory("../sweep", rope)
    assert res.trajectory("light", rope).t[-1] == res.column("t_end")[0]
    bare = db.sweep(rope, [{"case": "light"}], KW, out=tmp_path / "b", scheduler="inline", save_trajectories=False)
    with pytest.raises(db.InputError, match="no saved trajectory for case 'light'.*save_trajectories=False"):
        bare.trajectory("light", rope)


@pytest.mark.slow
def test_cli_sweep_on_the_ground(tmp_path, monkeypatch, capsys):
    """``sweep ROBOT --ground``: every case dropped onto the ground as ``simulate`` drops it (the
    thinned collision meshes, the posture hold, contact-euler); solo12 of two masses lands and
    stands (its base held above the ground, the energy balance closed), each case the simulation
    of its model with those options, bit for bit; --method rk4 with the ground is named."""
    import argparse

    from denoc_bridge.cli import main
    from denoc_bridge.cli.sweep import ground_of_sweep

    monkeypatch.chdir(tmp_path)
    argv = ["sweep", "solo12", "--ground", "--grid", "mass_scale=0.8,1.2", "--duration", "0.6", "--inline"]
    assert main(argv + ["--out", "o", "--metrics", "energy_drift,q_end"]) == 0
    out = capsys.readouterr().out
    assert "with contact-euler" in out and "778 contact points" in out and "2 cases: 2 completed" in out
    rows = list(csv.DictReader((tmp_path / "o" / "summary.csv").open()))
    solo = db.load_robot("solo12")
    opts = argparse.Namespace(drop=None, hold=None, no_hold=False, mu=None, mesh_tolerance=None, mesh_points=None,
                              full_hull=False)  # fmt: skip
    contact, (q0, v0, _) = ground_of_sweep(opts, solo)
    for row in rows:
        assert row["status"] == "completed" and abs(float(row["energy_drift"])) < 0.01
        assert 0.2 < float(row["q_end[2]"]) < 0.4  # standing on its legs, not through the ground
        model = sweeps.vary(solo, {"mass_scale": float(row["mass_scale"])})
        ref = db.simulate(model, q0, v0, 0.6, 1e-3, method="contact-euler", progress=False, **contact)
        assert [float(row[f"q_end[{i}]"]) for i in range(solo.nq)] == ref.q[-1].tolist()
    capsys.readouterr()
    assert main(argv + ["--out", "o2", "--method", "rk4"]) == 2
    assert "--method rk4 does not simulate ground contact" in capsys.readouterr().err
