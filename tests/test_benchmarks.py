"""The benchmark command runs (quick mode) and its built-in checks hold."""

from __future__ import annotations

import importlib.util
import json
import os
import sys

import pytest

BENCH = os.path.join(os.path.dirname(__file__), "..", "benchmarks")


def _module(name):
    sys.path.insert(0, BENCH)
    try:
        spec = importlib.util.spec_from_file_location(name, os.path.join(BENCH, f"{name}.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(BENCH)


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    res = _module("speed").main(["--quick", "--out", str(out)])
    return res, out


def test_quick_benchmark_writes_its_results(quick):
    res, out = quick
    for name in ("speed.json", "speed.md", "scaling.png", "op_counts.json"):
        assert (out / name).stat().st_size > 0, name
    assert json.loads((out / "speed.json").read_text())["scaling"][0]["nv"] == 10
    md = (out / "speed.md").read_text()
    assert "| `forward_dynamics` on panda (9 DOF) | <= 1.0 x `pin.aba` |" in md


def test_the_three_engines_compute_the_same_chain(quick):
    """Pinocchio's aba and MuJoCo's mj_forward give our accelerations on the benchmark chain."""
    res, _ = quick
    for row in res["scaling"]:
        if "aba_rel_diff" in row:
            assert row["aba_rel_diff"] < 1e-11, row
        if "mujoco_rel_diff" in row:                             # cond(I) reaches 2e8 at 1,000 DOF
            assert row["mujoco_rel_diff"] < (1e-10 if row["nv"] <= 100 else 1e-8), row
    assert any("mujoco_rel_diff" in row for row in res["scaling"])
    for row in res["single"]:
        if row["max_rel_diff"] is not None:
            assert row["max_rel_diff"] < 1e-11, row
    assert res["batch"]["fd_rel_diff"] < 1e-11 and res["batch"]["id_rel_diff"] < 1e-12


def test_checks_beyond_pinocchio(quick):
    res, _ = quick
    d = res["dense"]
    assert d["residual_recursive"] < 1e-12 and d["rel_diff_refined"] < 1e-11
    lo, hi = res["energy"]["drift_ratios"]
    assert 12 < lo < 20 and 12 < hi < 20, "RK4 energy drift must fall 16x per halving of the step"


def test_operation_counts_are_linear_in_n(quick):
    """op_counts.py (run by the benchmark in a subprocess without the JIT) reproduces
    forward_dynamics with counting numbers and finds a n + b with whole a and b."""
    res, _ = quick
    chain = res["op_counts"]["chain"]
    for alg in ("fd", "id"):
        for kind in ("mul", "add"):
            a, b = chain[alg][kind]
            assert a == int(a) and b == int(b) and a > 50, (alg, kind, a, b)
    for alg in ("fd", "id"):
        assert res["op_counts"]["panda"][alg]["mul"] > 0
