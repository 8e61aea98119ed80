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
])
def test_example_runs(script, args, expect):
    result = subprocess.run([sys.executable, str(EXAMPLES / script), *args], capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr
    assert expect in result.stdout
    assert "Traceback" not in result.stderr
