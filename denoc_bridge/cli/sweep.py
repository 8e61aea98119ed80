"""``denoc-bridge sweep``: many simulations of one robot, on this machine or a Dask cluster."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np

from denoc_bridge.algorithms.configuration import neutral_configuration
from denoc_bridge.cli import ground
from denoc_bridge.cli.common import check_whole_steps, positive_option
from denoc_bridge.errors import DenocError
from denoc_bridge.io.robots import load_robot
from denoc_bridge.simulation.common import FIXED_STEP_METHODS, method_name
from denoc_bridge.sweeps import DifferentSweepError, grid, read_cases, sweep
from denoc_bridge.sweeps.execution import scheduler_problem


def _grid_axis(text: str):
    """(name, values) of --grid NAME=v1,v2 or NAME=start:stop:count."""
    name, sep, values = text.partition("=")
    name = name.strip()
    if not sep or not name or not values.strip():
        raise DenocError(f"--grid {text!r}: expected NAME=v1,v2,... or NAME=start:stop:count")
    try:
        if ":" in values:
            start, stop, count = values.split(":")
            n = int(count)
            if n < 1:
                raise ValueError
            return name, np.linspace(float(start), float(stop), n)
        return name, [float(x) for x in values.split(",")]
    except ValueError:
        raise DenocError(
            f"--grid {text!r}: the values must be numbers (v1,v2,...) or start:stop:count with a positive whole count"
        ) from None


def sweep_command(args) -> int:
    positive_option(args.duration, "--duration")
    positive_option(args.dt, "--dt")
    with_ground = bool(args.ground)
    try:
        if with_ground and (args.method is None or args.method.lower() == ground.METHOD):
            method = ground.METHOD  # the contact time stepper (another method: check_options names it)
        else:
            method = method_name(args.method or "rk4")
    except DenocError as exc:
        raise DenocError(f"--{exc}") from None
    if args.save_every is not None and args.save_every < 1:
        raise DenocError(f"--save-every must be at least 1, got {args.save_every}")
    if args.workers is not None and args.workers < 1:
        raise DenocError(f"--workers must be at least 1, got {args.workers}")
    if args.batch_size < 1:
        raise DenocError(f"--batch-size must be at least 1, got {args.batch_size}")
    if args.scheduler and scheduler_problem(args.scheduler):
        raise DenocError(
            f"--scheduler {args.scheduler!r} is not a Dask scheduler address (tcp://HOST:PORT): "
            f"{scheduler_problem(args.scheduler)}"
        )
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise DenocError(f"--out: {args.out} is a file, not a folder")
    if args.cases:
        cases = read_cases(args.cases)
        what = f"{len(cases)} case{'s' if len(cases) != 1 else ''} from {args.cases}"
    else:
        axes = {}
        for text in args.grid:
            name, values = _grid_axis(text)
            if name in axes:
                raise DenocError(f"--grid {name} is given twice (one --grid per case column)")
            axes[name] = values
        cases = grid(axes)
        what = (
            f"{len(cases)} case{'s' if len(cases) != 1 else ''} (grid "
            + " x ".join(f"{k}: {len(v)}" for k, v in axes.items())
            + ")"
        )
    if any(not {"t_final", "dt", "method"} & set(c) for c in cases):  # cases run with these options
        check_whole_steps(args, method)
        if args.save_every is not None and method not in (*FIXED_STEP_METHODS, ground.METHOD):
            raise DenocError(f"--save-every is for --method rk4 or euler; {method} saves every --dt")
    if not args.inline and not args.scheduler and importlib.util.find_spec("distributed") is None:
        raise DenocError(
            "sweeps on Dask need dask.distributed: pip install 'denoc-bridge[sweep]', or run the cases "
            "in this process with --inline"
        )
    model = load_robot(args.robot, floating_base=args.floating)
    ground.check_options(args, model, with_ground)
    where = (
        "this process"
        if args.inline
        else f"the Dask cluster at {args.scheduler}"
        if args.scheduler
        else f"a local Dask cluster of {args.workers or os.cpu_count()} worker processes"
    )
    print(
        f"{model.name}: {model.nv} DOF; {what}; {args.duration:g} s each with {method}, dt = {args.dt:g} s; on {where}",
        flush=True,
    )
    contact, base_state = ground_of_sweep(args, model) if with_ground else ({}, None)
    kwargs = {"t_final": args.duration, "dt": args.dt, "method": method, **contact}
    if args.save_every is not None:
        kwargs["save_every"] = args.save_every
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    try:
        res = sweep(
            model,
            cases,
            kwargs,
            out=args.out,
            metrics=metrics,
            batch_size=args.batch_size,
            scheduler="inline" if args.inline else args.scheduler,
            workers=args.workers,
            base_state=base_state,
            resume=not args.restart,
            save_trajectories=not args.no_trajectories,
            progress=bool(sys.stderr.isatty()),
        )
    except KeyboardInterrupt:
        saved = len(list((Path(args.out) / "cases").glob("*.json")))
        print(
            f"denoc-bridge: interrupted: {saved} of {len(cases)} cases are saved in {args.out}; run the same "
            "command again to finish the others",
            file=sys.stderr,
        )
        return 130
    except DifferentSweepError as exc:
        raise DenocError(
            f"--out {args.out} holds a different sweep (its sweep.json records "
            f"{', '.join(exc.differs)}); use another --out folder, or --restart to run every case "
            "again"
        ) from None
    print(res.summary())
    _sweep_table(res, metrics)
    for row in res.failed[:10]:
        print(f"  {row['case']}: {row['status']}: {row['error']}")
    if len(res.failed) > 10:
        print(f"  ... and {len(res.failed) - 10} more (see the status and error columns)")
    out = Path(args.out)
    print(
        f"wrote {(out / 'summary.csv').resolve()}"
        + (" (and summary.parquet)" if (out / "summary.parquet").exists() else "")
    )
    return 1 if res.failed else 0


def ground_of_sweep(args, model) -> tuple[dict, tuple | None]:
    """(the contact options of every case, the base state) of ``sweep --ground``, as ``simulate``
    builds them: the contact candidates of the robot's collision shapes (the meshes thinned as
    --mesh-tolerance, --mesh-points, --full-hull say), the ground (--mu), the posture hold of the
    neutral configuration (--hold, --no-hold) and, for a floating base, that configuration lifted
    so that its lowest point is --drop above the ground (default 0.3 m); the cases' q0 and v0
    columns change that state.  Says what it built on stdout."""
    points = ground.contact_candidates(model, False, ground.mesh_sampling(args))
    if points is None:  # not by default: a robot without shapes raised already
        raise DenocError(f"--ground: '{model.name}' has no collision shapes to touch the ground with")
    q0, contact, drop = ground.ground_run(args, model, neutral_configuration(model), points, bool(model.floating_base))
    frequency = ground.hold_frequency(args)
    print(
        f"ground: z = 0, friction {contact['contact'].mu:g}, {len(points)} contact points from the collision "
        "shapes"
        + (f"; dropped from {drop:g} m" if drop is not None else "")
        + (f"; posture hold at {frequency:g} Hz" if contact["hold"] is not None else "; no posture hold"),
        flush=True,
    )
    return contact, (q0, np.zeros(model.nv), None)


def _sweep_table(res, metrics) -> None:
    """min / median / max of each scalar metric over the completed cases."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    done = [r for r in res.rows if r.get("status") == "completed"]
    table = Table(box=box.SIMPLE, title=None)
    for col in ("metric", "min", "median", "max"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    shown = 0
    for name in metrics:
        values = [r[name] for r in done if isinstance(r.get(name), (int, float))]
        if values:
            table.add_row(name, *(f"{x:.4g}" for x in (np.min(values), np.median(values), np.max(values))))
            shown += 1
    if shown:
        Console(width=100).print(table)
