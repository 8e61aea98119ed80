"""The whole benchmark run (:func:`run`): the suites of :mod:`.suites` in order, with the machine's
description, into one dict of results."""

from __future__ import annotations

from typing import Any

from denoc_bridge.benchmarking.engines import has_mujoco
from denoc_bridge.benchmarking.report import machine
from denoc_bridge.benchmarking.suites import batches, dense_check, energy_check, memory, scaling, single_calls, startup
from denoc_bridge.errors import DenocError
from denoc_bridge.io.robots import example_robot_names


def run(
    quick: bool = False, *, repeats: int | None = None, pin_max: int = 300, mujoco_budget: float = 0.05, log=print
) -> dict:
    """Sections 1-6 of the module docstring; returns the results (JSON-serialisable).
    ``log`` receives one line per step (default ``print``)."""
    if "panda" not in example_robot_names():
        raise DenocError(
            "the benchmark times panda, which comes with example-robot-data: "
            "pip install 'denoc-bridge[bench]' (or '[robots]')"
        )
    repeats = repeats or (3 if quick else 9)
    if repeats < 1:
        raise DenocError(f"repeats must be at least 1, got {repeats}")
    min_time = 0.005 if quick else 0.05
    sizes = [10, 100, 1000] if quick else [10, 30, 100, 300, 1000, 3000, 10000, 30000, 100000]
    big = 1000 if quick else 100000
    res: dict[str, Any] = dict(machine=machine(), quick=quick)
    if not has_mujoco():
        log("(MuJoCo is not installed: its column stays empty; pip install mujoco)")
    log("1. single calls")
    res["single"] = single_calls(repeats, min_time)
    for r in res["single"]:
        log(
            f"  {r['case']:<14} {r['algorithm']:<17} {r['denoc_us']:9.2f} us   {r['reference']:<9}"
            f" {r['reference_us']:9.2f} us   ratio {r['ratio']:.2f}"
        )
    log("2. scaling")
    res["scaling"] = scaling(sizes, repeats, min_time, min(pin_max, 100) if quick else pin_max, mujoco_budget, log=log)
    log("3. memory")  # each section's header is followed by its figures (no empty header)
    res["memory"] = m = memory(big)
    log(f"  {m['nv']:,}-DOF chain: {m['kept_bytes_per_dof']:.0f} B per DOF (model + work arrays)")
    log("4. batches")
    res["batch"] = b = batches(256 if quick else 4096, repeats, min_time)
    log(
        f"  {b['B']} panda states: forward_dynamics {b['fd_ms']:.2f} ms (pin.abaInParallel {b['aba_ms']:.2f} ms),"
        f" inverse_dynamics {b['id_ms']:.2f} ms (pin.rneaInParallel {b['rnea_ms']:.2f} ms) on {b['threads']} threads;"
        f" on 1 thread {b['fd_1thread_ms']:.2f} ms ({b['aba_1thread_ms']:.2f} ms), {b['id_1thread_ms']:.2f} ms"
        f" ({b['rnea_1thread_ms']:.2f} ms)"
    )
    log("5. start-up")
    res["startup"] = st = startup()
    log(f"  second process, spawn to first result: {st['second_process']['spawn_to_first_result_s']:.2f} s")
    log("6. correctness beyond Pinocchio")
    res["dense"] = dense_check(100 if quick else 1000)
    res["energy"] = energy_check(big, 0.2, 25, log=log)
    return res
