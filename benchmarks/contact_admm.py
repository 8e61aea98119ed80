"""The ADMM fallback of the contact solver, NumPy (``contact_admm.admm_reference``) against
compiled (``contact_admm.admm``: ``denoc_bridge/core/contact_admm.pxd``), in one process, on the
problems of the tests (tests/constraints/data: the talos landing, 120 rows; the icub folding
where ADMM stalls, 48 rows; the solo12 folding, 288 rows) and on a random one of 12 rows.

    python benchmarks/contact_admm.py [--repeats 5]

Per problem: the iterations of both (equal), the wall time per call (the median of ``--repeats``
interleaved calls, cold start from zero impulses, the tolerance 1e-8 of the fallback), the ratio,
and the largest difference of the impulses relative to the largest impulse.  Prints a table.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from denoc_bridge.constraints.contact_admm import admm, admm_reference

DATA = Path(__file__).resolve().parents[1] / "tests" / "constraints" / "data"


def problems() -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    out = []
    for name in ("talos_landing_contact", "icub_folding_contact", "solo12_folding_contact"):
        d = np.load(DATA / f"{name}.npz")
        G = d["G"] if "G" in d else d["F"] @ d["F"].T  # solo12's is saved as its factor
        out.append((name.replace("_contact", ""), G, d["g"], d["mu"]))
    rng = np.random.default_rng(3)
    A = rng.normal(size=(12, 16))
    out.append(("random, 4 contacts", A @ A.T + 0.01 * np.eye(12), rng.normal(size=12), rng.uniform(0.1, 1.5, 4)))
    return out


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    rows = []
    print("| problem | rows | iterations (NumPy, compiled) | NumPy ms | compiled ms | ratio | impulses, rel. diff |")
    print("|---|---|---|---|---|---|---|")
    for name, G, g, mu in problems():
        lam0, times, answers = np.zeros(len(g)), {"numpy": [], "compiled": []}, {}
        for _ in range(args.repeats):
            for key, solve in (("numpy", admm_reference), ("compiled", admm)):
                t0 = time.perf_counter()
                answers[key] = solve(G, g, mu, lam0, 1e-8, 50_000)
                times[key].append(time.perf_counter() - t0)
        ref, ours = answers["numpy"], answers["compiled"]
        t_np, t_c = (statistics.median(times[k]) * 1e3 for k in ("numpy", "compiled"))
        diff = float(np.abs(ours[0] - ref[0]).max() / max(np.abs(ref[0]).max(), 1e-300))
        rows.append(
            dict(problem=name, rows=len(g), iterations=(ref[1], ours[1]), numpy_ms=t_np, compiled_ms=t_c, diff=diff)
        )
        print(f"| {name} | {len(g)} | {ref[1]}, {ours[1]} | {t_np:.2f} | {t_c:.3f} | {t_np / t_c:.1f}x | {diff:.1e} |")
    return rows


if __name__ == "__main__":
    main()
