"""The build backend of ``pip install``: setuptools', plus one step that compiles the numba kernels.

setuptools builds the package and compiles its Cython core (``setup.py``: the extension modules
of ``denoc_bridge/core``; in place, next to their sources, for ``pip install -e .``).  The numba
kernels not yet ported to the core are compiled afterwards: this backend asks for the package's
own dependencies in the build environment too (numba and what the kernels' warm-up imports), and
after setuptools has built the wheel (or the editable wheel of ``pip install -e .``) it runs
``denoc_bridge.cli.compile.main`` on the built package (the unpacked wheel, or the clone for an
editable install), on every core: the kernels land in the user's cache folder keyed on the kernel
sources' content (``denoc_bridge.kernels.cache``), where the installed package, an editable
install and the clone's tests find them.  ``pip install -v`` shows what both steps compile and how
long they take.

Set ``DENOC_BRIDGE_PRECOMPILE=0`` to skip the numba step (``python -m build`` for a wheel meant for
other machines, for example); those kernels then compile on first use, and say so on stderr.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 (the PEP 517 hooks this backend does not change)

ROOT = Path(__file__).resolve().parents[1]
ENV = "DENOC_BRIDGE_PRECOMPILE"


#: what the compile step imports: the kernels (numba, numpy), the constraints (scipy) and the URDF
#: parser of the generated robots; not Pinocchio, matplotlib or meshcat (a smaller build environment)
BUILD_DEPENDENCIES = ("numba", "numpy", "scipy", "urdf-parser-py")


def _dependencies() -> list[str]:
    """The :data:`BUILD_DEPENDENCIES` as ``[project] dependencies`` of pyproject.toml pins them
    (single source; no tomllib on Python 3.10)."""
    text = (ROOT / "pyproject.toml").read_text()
    block = re.search(r"^dependencies\s*=\s*\[(.*?)^\]", text, re.S | re.M)
    specs = re.findall(r'"([^"]+)"', block.group(1)) if block else []
    return [s for s in specs if re.split(r"[<>=!~;\[ ]", s, maxsplit=1)[0].strip().lower() in BUILD_DEPENDENCIES]


def _wanted() -> bool:
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "no", "false", "off")


def get_requires_for_build_wheel(config_settings=None):
    extra = _dependencies() if _wanted() else []
    return _setuptools.get_requires_for_build_wheel(config_settings) + extra


def get_requires_for_build_editable(config_settings=None):
    extra = _dependencies() if _wanted() else []
    return _setuptools.get_requires_for_build_editable(config_settings) + extra


def _precompile(where: Path) -> None:
    """Compile the numba kernels by importing the package from ``where``: the clone's root after an
    editable build (the Cython core was built in place), the unpacked wheel after a wheel build
    (the root holds no compiled core then)."""
    if not _wanted():
        print(f"denoc_bridge: {ENV}=0, the kernels are not compiled now (they compile on first use)", file=sys.stderr)
        return
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(where), os.environ.get("PYTHONPATH", "")]))
    t0 = time.perf_counter()
    print(
        "denoc_bridge: compiling the numba kernels of every capability on every core, once...",
        file=sys.stderr,
        flush=True,
    )
    run = "import sys; from denoc_bridge.cli.compile import main; sys.exit(main(sys.argv[1:]))"
    out = subprocess.run([sys.executable, "-c", run], env=env, cwd=where, check=False)
    wall = time.perf_counter() - t0
    if out.returncode:
        # the package works without the step (its kernels compile on first use): never fail an install for it
        print(
            f"denoc_bridge: the kernels' compilation failed after {wall:.0f} s (exit {out.returncode}); "
            "they will compile on first use",
            file=sys.stderr,
        )


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)
    with tempfile.TemporaryDirectory(prefix="denoc-bridge-wheel-") as unpacked:
        with zipfile.ZipFile(Path(wheel_directory) / name) as wheel:
            wheel.extractall(unpacked)
        _precompile(Path(unpacked))
    return name


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    name = _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
    _precompile(ROOT)
    return name
