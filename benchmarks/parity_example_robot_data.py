"""Parity of denoc_bridge with Pinocchio on every example-robot-data URDF that Pinocchio loads.

    python benchmarks/parity_example_robot_data.py [--samples 3] [--out benchmarks/results/parity.json]

For each URDF, fixed base and free-flyer: the largest relative errors of
inverse dynamics, GIM, forward dynamics and inverse GIM over random states
(see denoc_bridge.validation), and a summary over all robots.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import warnings

import numpy as np
import pinocchio as pin

import denoc_bridge as db
from denoc_bridge.io.robots import _erd_search_dirs
from denoc_bridge.validation import QUANTITIES, compare_with_pinocchio


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "parity.json"))
    args = parser.parse_args()
    root = _erd_search_dirs()[0]
    rows = []
    for d, _, files in sorted(os.walk(root)):
        for f in sorted(files):
            if not f.endswith(".urdf"):
                continue
            path = os.path.join(d, f)
            for floating in (False, True):
                try:
                    with contextlib.redirect_stderr(io.StringIO()):
                        pm = (
                            pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
                            if floating
                            else pin.buildModelFromUrdf(path)
                        )
                except Exception:
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", db.PhysicsWarning)
                    model = db.load_urdf(path, floating_base=floating)
                rep = compare_with_pinocchio(model, pm, samples=args.samples)
                row = dict(
                    urdf=os.path.relpath(path, root),
                    floating=floating,
                    nv=model.nv,
                    passed=rep.passed,
                    **{c.quantity: c.max_error for c in rep.checks},
                    exact={c.quantity: c.max_error_vs_exact for c in rep.checks if c.max_error_vs_exact},
                    notes=sorted({n for c in rep.checks for n in c.notes}),
                )
                rows.append(row)
    quantities = list(QUANTITIES)
    print(
        f"{len(rows)} models ({len({r['urdf'] for r in rows})} URDFs x fixed/floating), "
        f"{sum(r['passed'] for r in rows)} passed"
    )
    for qn in quantities:
        errs = [r[qn] for r in rows]
        print(f"  {qn:<22} median {np.median(errs):.1e}   max {max(errs):.1e}")
    for r in rows:
        if r["exact"] or r["notes"]:
            print(f"  {r['urdf']} ({'floating' if r['floating'] else 'fixed'}): {r['notes'][0]}")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(rows, fh, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
