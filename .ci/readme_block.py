"""Run the README's Python block (the first ```python block after "## In Python") as a new user
would: in a fresh folder, against the installed package.  .ci/run calls it in a new venv that
holds only a wheel built by ``pip wheel``; cibuildwheel calls it as its test command.  Exits 1 if
the block raises, if it imports numba (the package has no JIT: the README's calls run on the
compiled Cython core), or if it says it compiles anything."""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import tempfile
import time
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def block() -> str:
    text = README.read_text()
    section = text.split("## In Python", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    if match is None:
        raise SystemExit(f"{README}: no ```python block after '## In Python'")
    return match.group(1)


def main() -> int:
    code = block()
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        sys.path = [p for p in sys.path if Path(p or ".").resolve() != README.parent]  # the wheel, not the clone
        err = io.StringIO()
        start = time.perf_counter()
        try:
            with contextlib.redirect_stderr(err):
                exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
        finally:
            os.chdir(here)
        wall = time.perf_counter() - start
        import denoc_bridge

        where = Path(denoc_bridge.__file__).resolve()
        if README.parent in where.parents:
            print(f"readme_block: imported the clone's package ({where}), not an installed one", file=sys.stderr)
            return 1
        if "numba" in sys.modules or "compiling" in err.getvalue().lower():
            print(f"readme_block: the block compiled kernels on first use:\n{err.getvalue()}", file=sys.stderr)
            return 1
        print(f"readme_block: the README's Python block ran in {wall:.2f} s against {where.parent}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
