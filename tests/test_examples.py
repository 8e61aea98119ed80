"""Every example runs and says what it should."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize("script,args,expect", [
    ("01_load_and_modules.py", ["panda"], "M1: 7 links, 7 DOF"),
    ("02_compare_with_pinocchio.py", ["solo12", "--floating"], "pin.computeMinverse"),
    ("03_gripper_block_factors.py", [], "24.0476"),
    ("04_large_chains_and_batches.py", ["20000"], "batch of 4096 panda states"),
    ("05_gripper_inverse_dynamics.py", ["--quick"], "max |tau - pin.rnea| / max |tau|"),
    ("06_gripper_free_fall.py", ["--quick"], "final angles agree to"),
    ("07_rope.py", ["--quick"], "pin.aba loop, same model"),
    ("08_puma560_forced_simulation.py", ["--quick"], "paper, recursive"),
    ("09_huge_chains.py", ["--quick"], "001 Table 13 analogue"),
    ("10_crossover.py", ["--quick"], "branched compiled"),
])
def test_example_runs(script, args, expect, tmp_path):
    if "--quick" in args:
        args = [*args, "--out", str(tmp_path)]
    result = subprocess.run([sys.executable, str(EXAMPLES / script), *args], capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr
    assert expect in result.stdout
    assert "Traceback" not in result.stderr
    if "--quick" in args:
        assert list(tmp_path.glob("*.png")), "the example saves its figures"
