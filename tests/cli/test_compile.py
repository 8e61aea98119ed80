"""``denoc-bridge compile``: a harmless no-op since the compiled core is built at install (issue
49); it says so, exits 0, accepts the options old scripts pass, and compiles or imports nothing."""

import subprocess
import sys

from denoc_bridge.cli import main
from denoc_bridge.cli.compile import MESSAGE


def test_compile_says_there_is_nothing_to_compile(capsys):
    assert main(["compile"]) == 0
    out = capsys.readouterr()
    assert out.out.strip() == MESSAGE and "nothing to compile" in MESSAGE
    assert out.err == ""


def test_the_old_options_are_accepted_and_ignored(capsys):
    assert main(["compile", "--units", "tree,simulate", "--jobs", "1", "--no-check"]) == 0
    assert "nothing to compile" in capsys.readouterr().out


def test_compile_imports_no_jit_in_a_fresh_process():
    code = "import sys; from denoc_bridge.cli import main; main(['compile']); print('numba' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1] == "False"
