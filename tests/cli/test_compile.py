"""``denoc-bridge compile``: its units, and a unit name it does not know."""

import subprocess
import sys

from denoc_bridge.cli import compile as cli_compile
from denoc_bridge.cli import main


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "denoc_bridge.cli", "compile", *args],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def test_the_units_cover_every_capability_longest_first():
    assert list(cli_compile.UNITS)[0] == "mimic"  # the longest first
    assert set(cli_compile.UNITS) == {
        "mimic", "simulate", "tree", "loops", "derivatives", "contact", "implicit", "validation",
    }  # fmt: skip


def test_an_unknown_unit_is_named_with_the_units_there_are(capsys):
    assert main(["compile", "--units", "tree,mimics", "--jobs", "1"]) == 2  # refused before any compiling
    err = capsys.readouterr().err
    assert "mimics" in err and "derivatives" in err
    assert "Traceback" not in err


def test_some_units_in_one_process():
    run = _cli("--units", "implicit,validation", "--jobs", "1", "--no-check")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert any(line.strip().startswith("implicit") for line in lines)
    assert any(line.strip().startswith("validation") for line in lines)
