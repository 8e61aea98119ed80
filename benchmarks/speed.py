"""Speed of denoc_bridge next to Pinocchio and MuJoCo, and the checks beyond Pinocchio's reach.

    python benchmarks/speed.py [--quick] [--out benchmarks/results]

Runs, in one process unless stated (all timings: medians of interleaved
repeats, each repeat a batch of calls from Python through the public API):

1. single calls: ``forward_dynamics`` / ``pin.aba`` and ``inverse_dynamics`` /
   ``pin.rnea`` on panda (example-robot-data) and on the 100-DOF chain built as
   a ``pinocchio.Model`` and passed through ``from_pinocchio``;
2. scaling on the benchmark chain (:mod:`chains`) from 10 to 100,000 DOF:
   denoc_bridge forward and inverse dynamics, ``pin.aba`` up to the size its
   ``createData`` can allocate (``--pin-max``), MuJoCo ``mj_forward`` while a
   call takes less than ``--mujoco-budget`` seconds; the three engines'
   accelerations are compared first;
3. memory of the model and its work arrays at 100,000 DOF (tracemalloc);
4. batches of 4096 panda states against ``pin.abaInParallel`` /
   ``pin.rneaInParallel`` with 2 threads;
5. start-up: the first call of a second Python process (the compiled core
   imported, nothing compiled);
6. correctness beyond Pinocchio: 1,000-DOF forward dynamics against
   ``mass_matrix`` plus a dense solve, and energy conservation of a
   100,000-DOF chain in free fall (fixed-step RK4, two step sizes).

Writes ``speed.json``, ``speed.md`` (the tables of the README) and
``scaling.png`` (log-log time per call against DOF) to ``--out``.
``--quick`` runs small sizes only (a smoke test, not a measurement).

The sections are :func:`denoc_bridge.benchmarking.run` (also ``denoc-bridge bench``, which
works from an installed package); this script writes the files.  The operation counts that a
seventh section took (``op_counts.py``, which ran numba's kernels as plain Python on counting
numbers) went with numba: the last counts are ``results/op_counts.json`` and the performance
page.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from denoc_bridge.benchmarking import (  # noqa: E402,F401  (re-exported for the other benchmark scripts)
    batches,
    dense_check,
    energy_check,
    interleaved,
    machine,
    markdown,
    memory,
    notes,
    run,
    scaling,
    single_calls,
    startup,
    targets,
)
from denoc_bridge.viz.plots import plot_scaling  # noqa: E402


def _log(line: str) -> None:
    print(line, flush=True)


def plot(res: dict, path: str) -> None:
    """The scaling plot (:func:`denoc_bridge.viz.plots.plot_scaling`)."""
    plot_scaling(res, path)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (smoke test)")
    parser.add_argument("--out", default=os.path.join(HERE, "results"), help="output directory")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument(
        "--pin-max", type=int, default=300, help="largest chain for pin.aba (createData needs ~64 n^3 bytes)"
    )
    parser.add_argument(
        "--mujoco-budget",
        type=float,
        default=0.05,
        help="stop MuJoCo after the size where a call takes longer than this (s)",
    )
    parser.add_argument(
        "--plot-only", action="store_true", help="redraw scaling.png and speed.md from the speed.json in --out"
    )
    args = parser.parse_args(argv)
    if args.plot_only:
        with open(os.path.join(args.out, "speed.json")) as f:
            res = json.load(f)
        plot(res, os.path.join(args.out, "scaling.png"))
        with open(os.path.join(args.out, "speed.md"), "w") as f:
            f.write(markdown(res))
        return res
    os.makedirs(args.out, exist_ok=True)
    res = run(args.quick, repeats=args.repeats, pin_max=args.pin_max, mujoco_budget=args.mujoco_budget, log=_log)
    with open(os.path.join(args.out, "speed.json"), "w") as f:
        json.dump(res, f, indent=1)
    md = markdown(res)
    with open(os.path.join(args.out, "speed.md"), "w") as f:
        f.write(md)
    plot(res, os.path.join(args.out, "scaling.png"))
    print()
    print(md)
    for line in notes(res):
        print(line)
    print(f"wrote {args.out}/speed.json, speed.md, scaling.png")
    return res


if __name__ == "__main__":
    main()
