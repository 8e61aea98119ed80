"""Ctrl-C at any moment of a command, imports included (issue 35, item 3): the console script
``denoc-bridge`` is the thin :mod:`denoc_bridge_cli`, whose import imports nothing heavy, and
which imports the command line with a SIGINT handler that says one line and ends the process.
SIGINT 0.05, 0.2, 0.5 and 1 s after the script starts: exit status 130, one line, no traceback
(the compiled core is built at install: nothing compiles in the command, issue 49).  ("After the script starts": once Python runs
the script's first line; before that Python itself is starting, its interpreter and its
``site`` module, which no script can reach.)"""

from __future__ import annotations

import importlib
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
DELAYS = (0.05, 0.2, 0.5, 1.0)
QUIET = ["--no-validate", "--no-html", "--no-plot"]
# a 5000 s run that warns of nothing whichever moment the Ctrl-C reaches (every 1000th step kept)
SIMULATE = ["simulate", "chain:6", "--duration", "5000", "--save-every", "1000", *QUIET]


def _entry_point() -> tuple[str, str]:
    """(module, function) of the ``denoc-bridge`` console script in pyproject.toml."""
    text = (ROOT / "pyproject.toml").read_text()
    found = re.search(r'^denoc-bridge = "([\w.]+):(\w+)"$', text, re.MULTILINE)
    assert found, "no denoc-bridge script in pyproject.toml"
    return found.group(1), found.group(2)


def _script(marker: bool = True) -> str:
    """The console script pip writes for the entry point of pyproject.toml, with a first line
    that writes "R" on stdout (the moment the script starts) when ``marker``."""
    module, function = _entry_point()
    return "\n".join(
        [
            "import os, re, sys",
            "os.write(1, b'R')" if marker else "",
            f"from {module} import {function}",
            "if __name__ == '__main__':",
            "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])",
            f"    sys.exit({function}())",
        ]
    )


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # whatever the test runner inherited


def _ctrl_c_after(delay: float, args: list[str], env: dict, cwd: Path) -> tuple[int, str, str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _script(), *args],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_default_sigint,
    )
    assert proc.stdout is not None and proc.stdout.read(1) == b"R"
    try:
        proc.wait(timeout=delay)  # the delay, unless the command ends before
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    return proc.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def _one_line_and_130(rc: int, out: str, err: str) -> None:
    """Exit status 130 and one line on stderr, the interruption's, with no traceback."""
    assert rc == 130, (rc, out, err)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    said = [ln for ln in err.splitlines() if "interrupted" in ln]
    assert len(said) == 1 and said[0].startswith("denoc-bridge: "), err
    others = [ln for ln in err.splitlines() if ln not in said]
    assert not others, err


def test_the_console_script_imports_nothing_heavy():
    module, function = _entry_point()
    assert (module, function) == ("denoc_bridge_cli", "main")
    code = f"import sys, {module}; print(sorted({{m.split('.')[0] for m in sys.modules}} & {{'numpy', 'numba', 'denoc_bridge', 'scipy', 'rich'}}))"
    out = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out


@pytest.mark.parametrize("delay", DELAYS)
def test_ctrl_c_at_any_moment(delay, tmp_path):
    _one_line_and_130(*_ctrl_c_after(delay, SIMULATE, ENV, tmp_path))


@pytest.mark.slow
def test_ctrl_c_after_the_command_ended_says_one_line_and_130(tmp_path):
    """A Ctrl-C once the command has written its output (Python shutting down): the output is
    kept, one line, 130."""
    module, function = _entry_point()
    code = (
        f"import os, signal, sys\nfrom {module} import {function}\nstatus = {function}(['info', 'chain:3'])\n"
        "os.kill(os.getpid(), signal.SIGINT)\nimport time; time.sleep(30)\nsys.exit(status)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=ENV, cwd=tmp_path, capture_output=True, text=True, preexec_fn=_default_sigint
    )
    _one_line_and_130(proc.returncode, proc.stdout, proc.stderr)
    assert "planar_chain3" in proc.stdout


def test_an_interrupt_inside_the_command_is_said_once_by_the_entry(monkeypatch, capsys):
    """The command line raises KeyboardInterrupt (as Ctrl-C during its imports or its parser):
    the entry says one line and returns 130, and restores nothing it should not."""
    import denoc_bridge_cli

    cli_main = importlib.import_module("denoc_bridge.cli.main")  # (the attribute is the function)

    def interrupted(argv=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_main, "main", interrupted)
    monkeypatch.setattr(denoc_bridge_cli, "_said", [False])
    before = signal.getsignal(signal.SIGINT)
    try:
        assert denoc_bridge_cli.main(["info", "panda"]) == 130
        assert capsys.readouterr().err == "denoc-bridge: interrupted\n"
        monkeypatch.setattr(denoc_bridge_cli, "_said", [False])
        monkeypatch.setattr(cli_main, "main", lambda argv=None: 130)  # the command said its own line
        assert denoc_bridge_cli.main(["simulate", "panda"]) == 130
        assert denoc_bridge_cli._said[0] and capsys.readouterr().err == ""  # no second line at exit
        monkeypatch.setattr(cli_main, "main", lambda argv=None: 0)
        assert denoc_bridge_cli.main(["info", "panda"]) == 0 and not denoc_bridge_cli._said[0]
    finally:
        signal.signal(signal.SIGINT, before)


def test_an_error_raised_while_a_library_handles_a_ctrl_c_is_an_interruption(monkeypatch, capsys):
    # a Ctrl-C inside a library (numba's compiler, once) surfaced as a RuntimeError it raised while handling
    # it ("no compiled object yet for <Library ...>"): one line and 130, not a traceback
    cli_main = importlib.import_module("denoc_bridge.cli.main")  # the module (the package exports main)

    def interrupted_inside_numba(args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise RuntimeError("no compiled object yet for <Library 'valid_configuration'>") from None

    def plain_bug(args):
        raise RuntimeError("a bug")

    monkeypatch.setattr(cli_main, "info_command", interrupted_inside_numba)
    assert cli_main.main(["info", "panda"]) == 130
    assert capsys.readouterr().err.strip().startswith("denoc-bridge: interrupted")
    monkeypatch.setattr(cli_main, "info_command", plain_bug)
    with pytest.raises(RuntimeError, match="a bug"):
        cli_main.main(["info", "panda"])


_SWALLOWING_IMPORT = """
import importlib.abc, importlib.util, os, signal, sys, time, traceback

class Swallowing(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    # an extension module's import that catches whatever is raised inside it, prints its
    # traceback and goes on: what numpy's and numba's imports did under load
    def find_spec(self, name, path, target=None):
        return importlib.util.spec_from_loader(name, self) if name == "denoc_bridge.cli.main" else None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except BaseException:
            traceback.print_exc()
        module.main = lambda argv=None: print("the command ran") or 0

sys.meta_path.insert(0, Swallowing())
from denoc_bridge_cli import main
sys.exit(main(["simulate", "chain:6"]))
"""


def test_a_ctrl_c_inside_an_import_that_swallows_errors_ends_the_command(tmp_path):
    """Under load, a Ctrl-C during the imports once landed inside an extension module's import,
    which dropped the KeyboardInterrupt and went on (the command then simulated its 5000 s to
    the end and exited 0), and once inside one that printed its traceback.  During the imports
    the entry raises nothing: it says its line and ends the process.  Here the command line's
    import prints and drops whatever is raised inside it."""
    proc = subprocess.run(
        [sys.executable, "-c", _SWALLOWING_IMPORT],
        env=ENV,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        preexec_fn=_default_sigint,
        timeout=120,
    )
    _one_line_and_130(proc.returncode, proc.stdout, proc.stderr)
    assert "the command ran" not in proc.stdout
