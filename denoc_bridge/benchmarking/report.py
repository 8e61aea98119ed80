"""The results as the README's tables: the machine, the targets met or missed, markdown, notes."""

from __future__ import annotations

import os
import platform
import time

import numpy as np

import denoc_bridge as db


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    import pinocchio as pin

    try:
        import mujoco

        mj = mujoco.__version__
    except ImportError:
        mj = None
    memory_gb = None
    try:
        with open("/proc/meminfo") as f:
            memory_gb = round(int(next(line.split()[1] for line in f if line.startswith("MemTotal"))) / 2**20)
    except (OSError, StopIteration, ValueError):
        pass
    return dict(
        cpu=cpu,
        cores=os.cpu_count(),
        memory_gb=memory_gb,
        python=platform.python_version(),
        numpy=np.__version__,
        pinocchio=pin.__version__,
        mujoco=mj,
        denoc_bridge=db.__version__,
        date=time.strftime("%Y-%m-%d"),
    )


def fmt_us(us: float) -> str:
    if us >= 1e5:
        return f"{us / 1e3:.0f} ms"
    if us >= 1e3:
        return f"{us / 1e3:.2f} ms"
    return f"{us:.2f} us" if us < 100 else f"{us:.1f} us"


def targets(res: dict) -> list:
    """(case, target, measured, met) rows of the issue's table."""
    rows = []
    single = {(r["case"], r["algorithm"]): r for r in res["single"]}
    for case, alg, ref, limit in (
        ("panda (9 DOF)", "forward_dynamics", "pin.aba", 1.0),
        ("panda (9 DOF)", "inverse_dynamics", "pin.rnea", 1.0),
        ("100-DOF chain", "forward_dynamics", "pin.aba", 0.5),
    ):
        r = single[(case, alg)]
        rows.append(
            (
                f"`{alg}` on {case}",
                f"<= {limit} x `{ref}`",
                f"{fmt_us(r['denoc_us'])} vs {fmt_us(r['reference_us'])} = {r['ratio']:.2f} x",
                r["ratio"] <= limit,
            )
        )
    per = {r["nv"]: r for r in res["scaling"]}
    for n in (1000, 10000, 100000):
        if n in per:
            ns = per[n]["fd_ns_per_dof"]
            rows.append(
                (f"`forward_dynamics`, {n:,}-DOF chain", "<= 100 ns per DOF", f"{ns:.1f} ns per DOF", ns <= 100)
            )
    if 1000 in per and 100000 in per:
        ratio = per[100000]["fd_us"] / per[1000]["fd_us"]
        rows.append(("time(100k) / time(1k)", "80 - 120 (linear)", f"{ratio:.0f}", 80 <= ratio <= 120))
    if res.get("memory"):
        m = res["memory"]
        rows.append(
            (
                f"memory at {m['nv']:,} DOF (model + work arrays)",
                "<= 2 KB per DOF",
                f"{m['kept_bytes_per_dof']:.0f} B per DOF",
                m["kept_bytes_per_dof"] <= 2048,
            )
        )
    if res.get("batch"):
        b = res["batch"]
        for ours, pins, name, pin_name in (("fd", "aba", "forward_dynamics", "abaInParallel"),
                                           ("id", "rnea", "inverse_dynamics", "rneaInParallel")):  # fmt: skip
            rows.append(
                (
                    f"batch of {b['B']} panda states, `{name}`",
                    f"throughput >= `pin.{pin_name}` ({b.get('threads', 2)} threads)",
                    f"{b[ours + '_ms']:.2f} ms vs {b[pins + '_ms']:.2f} ms = {b[ours + '_ratio']:.2f} x",
                    b[ours + "_ratio"] <= 1.0,
                )
            )
            if ours + "_1thread_ms" in b:  # the figure a busy machine does not change
                one, theirs = b[ours + "_1thread_ms"], b[pins + "_1thread_ms"]
                rows.append(
                    (
                        f"the same on 1 thread, `{name}`",
                        f"throughput >= `pin.{pin_name}` (1 thread)",
                        f"{one:.2f} ms vs {theirs:.2f} ms = {one / theirs:.2f} x",
                        one <= theirs,
                    )
                )
    if res.get("startup"):
        s = res["startup"]["second_process"]
        rows.append(
            (
                "start-up: second process, spawn to first result",
                "< 2 s",
                f"{s['spawn_to_first_result_s']:.2f} s (import {s['import_s']:.2f} s, first call "
                f"{s['first_fd_call_s'] * 1e3:.0f} ms)",
                s["spawn_to_first_result_s"] < 2.0,
            )
        )
    return rows


def markdown(res: dict) -> str:
    m = res["machine"]
    lines = [
        f"Machine: {m['cpu']}, {m['cores']} cores, {m.get('memory_gb')} GB; Python {m['python']}, "
        f"NumPy {m['numpy']}, denoc_bridge {m['denoc_bridge']}, Pinocchio {m['pinocchio']}, MuJoCo {m['mujoco']}; "
        f"{m['date']}.",
        "",
        "| case | target | measured | met |",
        "|---|---|---|---|",
    ]
    for case, target, measured, met in targets(res):
        lines.append(f"| {case} | {target} | {measured} | {'yes' if met else '**no**'} |")
    lines += [
        "",
        "| DOF | denoc FD | denoc ID | FD ns/DOF | `pin.aba` | `pin.rnea` | MuJoCo `mj_forward` |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in res["scaling"]:
        lines.append(
            f"| {r['nv']:,} | {fmt_us(r['fd_us'])} | {fmt_us(r['id_us'])} | {r['fd_ns_per_dof']:.1f} | "
            + (fmt_us(r["aba_us"]) if "aba_us" in r else "--")
            + " | "
            + (fmt_us(r["rnea_us"]) if "rnea_us" in r else "--")
            + " | "
            + (fmt_us(r["mj_forward_us"]) if "mj_forward_us" in r else "--")
            + " |"
        )
    return "\n".join(lines) + "\n"


def notes(res: dict) -> list:
    """The lines printed after the tables: the dense check and the energy check."""
    d, e = res["dense"], res["energy"]
    busy = []
    b = res.get("batch") or {}
    if b.get("load", 0.0) > 0.5 * (res.get("machine", {}).get("cores") or 2):
        busy = [
            f"the machine was busy during the batches (load {b['load']:.1f}): each parallel region waits for a "
            "time slice of every core, so the threaded figures are slower than on an idle machine; the "
            "1-thread figures are not affected"
        ]
    return busy + [
        f"{d['nv']}-DOF forward_dynamics vs mass_matrix + dense solve: max rel diff {d['rel_diff_dense']:.1e} "
        f"(cond(I) = {d['cond']:.1e}); residual |I a - phi| / |phi|: recursive {d['residual_recursive']:.1e}, "
        f"dense {d['residual_dense']:.1e}",
        f"{e['nv']}-DOF free fall for {e['t_final']} s, RK4: max |E - E0| / T_max = "
        + ", ".join(f"{r['max_drift_over_kinetic']:.1e} (dt = {r['dt']:.0e} s)" for r in e["runs"])
        + f"; ratios {e['drift_ratios'][0]:.1f}, {e['drift_ratios'][1]:.1f} (fourth order: 16)",
    ]
