"""Every example runs and says what it should."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow  # every test runs an example script in a subprocess

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize(
    "script,args,expect",
    [
        ("01_load_and_modules.py", ["panda"], "M1: 7 links, 7 DOF"),
        ("02_compare_with_pinocchio.py", ["solo12", "--floating"], "pin.computeMinverse"),
        ("03_gripper_block_factors.py", [], "24.0476"),
        ("04_large_chains_and_batches.py", ["20000"], "batch of 4096 panda states"),
        ("05_gripper_inverse_dynamics.py", ["--quick"], "max |tau - pin.rnea| / max |tau|"),
        ("06_gripper_free_fall.py", ["--quick"], "final angles agree to"),
        ("07_rope.py", ["--quick"], "pin.aba loop, same model"),
        ("08_puma560_forced_simulation.py", ["--quick"], "paper, recursive"),
        ("09_huge_chains.py", ["--quick"], "001 Table 13 analogue"),
        ("10_crossover.py", ["--quick"], "branched batches"),
    ],
)
def test_example_runs(script, args, expect, tmp_path):
    if "--quick" in args:
        args = [*args, "--out", str(tmp_path)]
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args], capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr
    assert expect in result.stdout
    assert "Traceback" not in result.stderr
    if "--quick" in args:
        assert list(tmp_path.glob("*.png")), "the example saves its figures"


# ----------------------------------------------------------------------------- closed loops (issue 5)

NUMBER = r"([-+]?\d+(?:\.\d*)?(?:e[-+]?\d+)?)"


def _run_quick(script, tmp_path):
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / script), "--quick", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert list(tmp_path.glob("*.png")), "the example saves its figures"
    return result.stdout


def _number(text, before):
    import re

    match = re.search(re.escape(before) + r"\s*" + NUMBER, text)
    assert match, f"'{before}' not in the output:\n{text}"
    return float(match.group(1))


def test_fourbar_example_reproduces_004(tmp_path):
    out = _run_quick("11_fourbar.py", tmp_path)
    assert "5 rows, rank 2, redundant rows [1, 3, 4]" in out
    assert _number(out, "max |D*B - eq. (a)| =") < 1e-14
    assert _number(out, "max |D*B - loop_jacobian| =") < 1e-14
    assert "E with theta_1, theta_2 independent (004 eq. 23): [[1.0, 0.0], [0.0, 1.0], [0.0, -1.0], [0.0, 1.0]]" in out
    for method in ("lagrange", "partitioning", "lagrange vs partitioning"):
        assert _number(out, f"{method}") < 1e-12, method  # against pin.constraintDynamics
    assert _number(out, "max loop-closure error") < 1e-10
    assert 1e-12 < _number(out, "(per-step drift)") < 1e-7
    assert _number(out, "max |E - E0| / max T =") < 1e-4  # rounding-dependent at the flat positions (the example)
    assert _number(out, "through the flat positions (+-90 deg)") >= 2
    assert _number(out, "|theta_4 - theta_2| =") < 1e-8
    assert _number(out, "pin.constraintDynamics to") < 1e-12  # RK4 around Pinocchio, 0.2 s


def test_spatial_loop_example_matches_pinocchio(tmp_path):
    out = _run_quick("12_spatial_loop.py", tmp_path)
    assert "'S4' spherical between coupler and rocker: 3 rows" in out
    assert _number(out, "max |a - a_pin| / max |a_pin|: lagrange") < 1e-11
    assert _number(out, ", partitioning") < 1e-11
    # the forward error of a backward-stable solve is bounded by cond(KKT) * eps; the printed
    # cond (1.5e4 here) sets the scale, and a tenth of it still catches a lost digit
    # (measured: 1.5e-13 between the methods, 1.4e-13 to the dense KKT; Pinocchio's own 7.6e-14)
    bound = 0.1 * _number(out, "LU; cond") * np.finfo(float).eps
    assert _number(out, "lagrange vs partitioning") < bound
    assert _number(out, "|C a + Cdot v|") < 1e-11
    assert _number(out, "both methods within") < bound
    assert _number(out, "max loop-closure error") < 1e-10
    assert _number(out, "| |quaternion| - 1 | =") < 1e-14
    energy, fine = _number(out, "max |E - E0| / max T ="), _number(out, "at dt = 1 ms,")
    assert energy < 1e-6 and 10 < energy / fine < 25  # RK4's fourth order
    assert _number(out, "stays below") < 1e-6  # the coupler's spin is conserved


def test_hanging_chain_example_is_a_catenary(tmp_path):
    out = _run_quick("13_hanging_chain.py", tmp_path)
    import re

    rows = re.findall(
        r"n = (\d+): cut joint 'hold' 5 rows, rank 2;.*?max loop-closure error "
        + NUMBER
        + r" m\s+joints from the continuous catenary: max "
        + NUMBER
        + r" m; from the exact "
        r"equilibrium of \d+ rods: "
        + NUMBER
        + r" m; .*?\|g - C\^T lambda\| / \|g\| = "
        + NUMBER
        + r"; at the rods' equilibrium from the statics: max \|a\| = "
        + NUMBER,
        out,
        re.S,
    )
    assert [int(r[0]) for r in rows] == [10, 20], out
    for n, closure, catenary, rods, balance, a_eq in ((int(r[0]), *map(float, r[1:])) for r in rows):
        assert closure < 1e-10
        assert rods < 1e-6  # at rest in the rods' exact equilibrium
        assert 1e-1 / n**2 < catenary < 0.5 / n**2  # O(1/n^2) from the continuous catenary
        assert balance < 1e-6  # g(q) = C^T lambda at rest
        assert a_eq < 1e-10  # the statics' equilibrium is one of the constrained dynamics
    assert 3.8 < _number(out, "n -> 2n: divided by") < 4.3


def test_cartpole_lqr_example_stabilises(tmp_path):
    out = _run_quick("14_cartpole_lqr.py", tmp_path)
    assert (tmp_path / "cartpole_lqr.png").stat().st_size > 10_000
    assert _number(out, "max |A - central differences| / max |A| =") < 1e-8
    assert _number(out, "max Re(closed-loop eigenvalue) =") < -1.0
    assert _number(out, "final max |x| =") < 1e-3  # the closed loop settles upright
    assert _number(out, "max |pole angle| =") > 1.0  # the open loop falls
    assert _number(out, "max |x_lin - x_sim| =") < 0.1  # the linear model predicts the response


# ----------------------------------------------------------------------------- implicit methods (issue 23)


def test_stiff_implicit_example_beyond_rk4(tmp_path):
    out = _run_quick("15_stiff_implicit.py", tmp_path)
    import re

    assert out.count("diverged") == 3, out  # RK4 at twice its limit, in each case
    rows = re.findall(r"\| (implicit-euler|sdirk2) \| (\d+) \| \d+ \| " + NUMBER + r" \| [^|]+ \| " + NUMBER, out)
    assert len(rows) == 2 * (3 + 3 + 1), out
    for method, factor, err, dissipation in rows:
        if method == "sdirk2" and int(factor) <= 25:
            assert float(err) < 5e-3 and float(dissipation) < 1e-2, out  # dissipation / peak KE
        assert float(err) < 0.5, out  # stable at 100 h_rk4, whatever the method's order


def test_identify_masses_example_recovers_the_masses(tmp_path):
    out = _run_quick("16_identify_masses.py", tmp_path)
    assert _number(out, "max relative difference") < 1e-6, out  # adjoint gradient vs central differences
    assert _number(out, "masses recovered to") < 1e-8, out
