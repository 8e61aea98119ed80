"""``denoc-bridge bench``: speed against Pinocchio (and MuJoCo), side by side in one process."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from denoc_bridge import benchmarking
from denoc_bridge._files import atomic_write_bytes
from denoc_bridge.cli.common import checked_output_file
from denoc_bridge.errors import DenocError
from denoc_bridge.viz.plots import plot_scaling


def bench_command(args) -> int:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    if args.repeats is not None and args.repeats < 1:
        raise DenocError(f"--repeats must be at least 1, got {args.repeats}")
    if args.out and os.path.exists(args.out) and not os.path.isdir(args.out):
        raise DenocError(f"--out: {args.out} is a file, not a folder")
    if args.out:  # before the run, not after two minutes of it (the writers create the folder)
        checked_output_file(Path(args.out) / "speed.json", "--out")

    def log(line):
        print(line, file=sys.stderr, flush=True)

    res = benchmarking.run(args.quick, repeats=args.repeats, log=log)
    console = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 130)
    m = res["machine"]
    table = Table(
        title=f"{'QUICK RUN (small sizes, not a measurement): ' if args.quick else ''}"
        f"{m['cpu']}, {m['cores']} cores; Python {m['python']}, NumPy {m['numpy']}, "
        f"denoc_bridge {m['denoc_bridge']}, Pinocchio {m['pinocchio']}, MuJoCo {m['mujoco']}; {m['date']}",
        box=box.SIMPLE_HEAVY,
        title_justify="left",
    )
    # a quick run's small sizes and few repeats cannot decide a target: no verdicts, said once
    for col in ("case", "target", "measured") if args.quick else ("case", "target", "measured", "met"):
        table.add_column(col)
    for case, target, measured, met in benchmarking.targets(res):
        verdict = () if args.quick else ("[green]yes[/green]" if met else "[bold red]no[/bold red]",)
        table.add_row(case.replace("`", ""), target.replace("`", ""), measured, *verdict)
    console.print(table)
    if args.quick:
        console.print("no met/missed verdicts in a quick run (too small to decide); `denoc-bridge bench` gives them")
    scale = Table(title="time per call on the benchmark chain", box=box.SIMPLE_HEAVY, title_justify="left")
    for col in ("DOF", "denoc FD", "denoc ID", "FD ns/DOF", "pin.aba", "pin.rnea", "MuJoCo mj_forward"):
        scale.add_column(col, justify="right")
    fmt = benchmarking.fmt_us
    for r in res["scaling"]:
        scale.add_row(
            f"{r['nv']:,}",
            fmt(r["fd_us"]),
            fmt(r["id_us"]),
            f"{r['fd_ns_per_dof']:.1f}",
            *(fmt(r[k]) if k in r else "--" for k in ("aba_us", "rnea_us", "mj_forward_us")),
        )
    console.print(scale)
    for line in benchmarking.notes(res):
        console.print(line, markup=False)
    if args.out:  # each file atomically: an interrupted bench leaves the previous files or none
        atomic_write_bytes(os.path.join(args.out, "speed.json"), json.dumps(res, indent=1).encode())
        atomic_write_bytes(os.path.join(args.out, "speed.md"), benchmarking.markdown(res).encode())
        plot_scaling(res, os.path.join(args.out, "scaling.png"))
        print(f"wrote {os.path.abspath(args.out)}/speed.json, speed.md, scaling.png")
    return 0
