"""Sweeps on Dask next to a plain loop: cases per second, overhead per case.

    python benchmarks/sweep.py [--cases 1000] [--quick] [--out benchmarks/results]

The cases: the 100-DOF rope of 000 §4 (:func:`denoc_bridge.io.generators.rope`) falling for
1.75 s from the horizontal (RK4, dt = 1 ms, the issue's run), each case with its own initial
angle of the first link (``q0[0]`` evenly spaced in [-0.2, 0.2]): all cases share the model,
so the sweep runs them in batches through :func:`denoc_bridge.simulate_batch`.  In one
process, on the same cases:

* **loop**: ``for case: db.simulate(rope, q0, v0, 1.75, 1e-3)``, the baseline;
* **inline**: ``db.sweep(..., scheduler="inline")``: the sweep's tasks in this process,
  without Dask (batches, rows, metrics);
* **local 1 / 2 workers**: ``db.sweep(..., workers=N)``: a Dask ``LocalCluster`` of N
  worker processes started by the sweep (its start-up is part of the time, reported apart
  as well);
* the same on 2 workers with the trajectories saved (every 25th step, uncompressed npz in
  a temporary folder).

The rows only (``save_trajectories=False``) in the other runs.  Overhead per case =
(wall time x workers - loop time) / cases: the cost of the sweep's machinery per case in
worker-seconds.  Writes ``sweep.json`` and ``sweep.md`` (the README table) to ``--out``.
``--quick`` runs 40 cases (a smoke test, not a measurement).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    n = 40 if args.quick else args.cases

    from distributed import LocalCluster

    import denoc_bridge as db
    from denoc_bridge import generators

    rope = generators.rope()
    t_final, dt = 1.75, 1e-3
    kw = {"t_final": t_final, "dt": dt}
    cases = [{"case": f"c{i:05d}", "q0[0]": x} for i, x in enumerate(np.linspace(-0.2, 0.2, n))]
    q0 = db.neutral_configuration(rope)
    v0 = np.zeros(rope.nv)
    metrics = ["energy_drift", "total_energy_end"]

    # warm-up: the first calls in this process, and one case checked
    db.simulate(rope, q0, v0, 0.01, dt, progress=False)
    db.simulate_batch(rope, np.array([q0, q0]), v0, 0.01, dt)
    results = {}

    def log(text):
        print(text, file=sys.stderr, flush=True)

    t = time.perf_counter()
    drift = []
    for c in cases:
        q = q0.copy()
        q[0] = c["q0[0]"]
        tr = db.simulate(rope, q, v0, t_final, dt, progress=False)
        drift.append(float(np.max(np.abs(tr.energy_drift(relative=True)))))
    loop = time.perf_counter() - t
    results["loop"] = {"wall": loop, "workers": 1}
    log(f"loop: {loop:.2f} s")

    t = time.perf_counter()
    res = db.sweep(rope, cases, kw, scheduler="inline", metrics=metrics, save_trajectories=False)
    results["inline"] = {"wall": time.perf_counter() - t, "workers": 1}
    assert res.column("energy_drift").tolist() == drift, "the sweep's numbers differ from the loop's"
    log(f"inline: {results['inline']['wall']:.2f} s")

    for workers in (1, 2):
        t = time.perf_counter()
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0") as lc:
            startup = time.perf_counter() - t
            from distributed import Client

            with Client(lc) as client:
                # the workers' first import and first calls, outside the timing of the sweep
                client.run(_warm_up)
                t1 = time.perf_counter()
                res = db.sweep(rope, cases, kw, client=client, metrics=metrics, save_trajectories=False)
                run = time.perf_counter() - t1
        assert res.column("energy_drift").tolist() == drift, "the sweep's numbers differ from the loop's"
        t = time.perf_counter()
        res = db.sweep(rope, cases, kw, workers=workers, metrics=metrics, save_trajectories=False)
        whole = time.perf_counter() - t
        results[f"local{workers}"] = {"wall": run, "workers": workers, "startup": startup, "whole": whole}
        log(
            f"local {workers}: {run:.2f} s in a running cluster (start-up {startup:.2f} s); "
            f"{whole:.2f} s with its own cluster"
        )

    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        res = db.sweep(rope, cases, {**kw, "save_every": 25}, workers=2, metrics=metrics, out=tmp)
        wall = time.perf_counter() - t
        size = sum(p.stat().st_size for p in Path(tmp, "cases").iterdir())
    assert all(r["status"] == "completed" for r in res)
    results["local2_saved"] = {"wall": wall, "workers": 2, "bytes": size}
    log(f"local 2 with trajectories: {wall:.2f} s, {size / 1e6:.1f} MB")

    for r in results.values():
        r["cases_per_s"] = n / r["wall"]
        r["overhead_ms"] = 1e3 * (r["wall"] * r["workers"] - loop) / n
    meta = {
        "cases": n,
        "dof": rope.nv,
        "t_final": t_final,
        "dt": dt,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "quick": args.quick,
        "max_energy_drift": max(drift),
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "sweep.json").write_text(json.dumps({"meta": meta, "results": results}, indent=1))
    md = _table(meta, results)
    (out / "sweep.md").write_text(md)
    print(md)


def _warm_up():
    """Import the package and make its first calls in a worker."""
    import denoc_bridge as db
    from denoc_bridge import generators

    rope = generators.rope()
    q0 = db.neutral_configuration(rope)
    db.simulate_batch(rope, np.array([q0, q0]), np.zeros(rope.nv), 0.01, 1e-3)


def _table(meta, results) -> str:
    names = {
        "loop": "plain loop of `simulate` (baseline)",
        "inline": '`sweep(..., scheduler="inline")` (no Dask)',
        "local1": "`sweep` on a LocalCluster, 1 worker",
        "local2": "`sweep` on a LocalCluster, 2 workers",
        "local2_saved": "2 workers, own cluster, trajectories saved",
    }
    lines = [
        f"{meta['cases']} rope simulations ({meta['dof']} DOF, {meta['t_final']} s, RK4 dt = {meta['dt']} s), "
        f"{meta['cpus']} cores:",
        "",
        "| run | wall (s) | cases/s | overhead per case (ms, worker time) |",
        "|---|---|---|---|",
    ]
    for key, r in results.items():
        lines.append(f"| {names[key]} | {r['wall']:.2f} | {r['cases_per_s']:.1f} | {r['overhead_ms']:+.2f} |")
    for w in (1, 2):
        r = results[f"local{w}"]
        lines.append("")
        lines.append(
            f"LocalCluster of {w} worker(s): start-up {r['startup']:.2f} s; the whole sweep with its own "
            f"cluster (start, run, close) {r['whole']:.2f} s."
        )
    if "bytes" in results.get("local2_saved", {}):
        lines.append(f"Trajectories saved (every 25th step): {results['local2_saved']['bytes'] / 1e6:.1f} MB.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
