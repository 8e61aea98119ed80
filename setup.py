"""The compiled core: the Cython extension modules of ``denoc_bridge/core``, built by setuptools.

``pip install .`` compiles them into the wheel; ``pip install -e .`` compiles them in place, next
to their sources, so that ``python -m pytest`` run from the clone's root imports a compiled
package.  After editing a ``.pyx``/``.pxi``/``.pxd``, ``python setup.py build_ext --inplace``
rebuilds what changed (``denoc_bridge.core`` refuses to import an extension older than its
sources).  ``pip install -v`` shows the compiler's command lines.

Environment (read at build time):

* ``DENOC_BRIDGE_PORTABLE=1``: compile for any CPU of the architecture (what a wheel meant for
  other machines must be: ``DENOC_BRIDGE_PORTABLE=1 pip wheel . -w dist``).  The default is a
  build for the CPU it is built on (``-march=native``), as ``pip install .`` from a clone builds
  and runs on the same machine: on a 100-link chain the portable build's forward dynamics took
  1.27x the time of the native one (no FMA, no AVX on the x86-64 baseline).
* ``DENOC_BRIDGE_SANITIZE=1``: the debug build of the tests (bounds checks on,
  ``-O1 -g -fsanitize=address,undefined``); docs/development.md says how to run it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
CORE = "denoc_bridge/core"


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "yes", "true", "on")


SANITIZE = _flag("DENOC_BRIDGE_SANITIZE")
PORTABLE = _flag("DENOC_BRIDGE_PORTABLE")

#: the kernels index raw pointers and memoryviews whose lengths the entries checked once, at the
#: boundary (design: shared/design/compiled-core.md, "Memory safety"); the sanitizer build checks
#: them all again
DIRECTIVES = {
    "language_level": 3,
    "boundscheck": SANITIZE,
    "wraparound": False,
    "initializedcheck": SANITIZE,
    "cdivision": True,
    "embedsignature": True,
}

if sys.platform == "win32":
    COMPILE, LINK = ["/O2"], []
elif SANITIZE:
    SAN = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined"]
    COMPILE, LINK = ["-O1", "-g", *SAN], SAN
else:
    # -O2 cost 20-45 % on long chains; FMA contraction (gcc's default) is kept: the tests'
    # tolerances hold with and without it, and -ffp-contract=off cost up to 10 % (measured).
    # -g0 drops the debug information that Python's own CFLAGS ask for (-g): the same machine
    # code, tree's rebuild after an edit 19.1 -> 12-13 s and its module 1.7 MB -> 0.35 MB
    # (measured; the sanitizer build keeps -g)
    COMPILE, LINK = ["-O3", "-g0", "-fno-math-errno", "-fno-trapping-math"], []
    if not PORTABLE:
        COMPILE.append("-march=native")


#: flags of one module on top of COMPILE: the runs round their stage and step formulas as written
#: (no fused multiply-adds), as numba compiled the integrators they replaced
MODULE_FLAGS = {"run": ["-ffp-contract=off"]} if sys.platform != "win32" else {}


def extensions() -> list[Extension]:
    """One extension module per ``denoc_bridge/core/*.pyx`` (each includes its passes' ``.pxi``)."""
    return [
        Extension(
            f"denoc_bridge.core.{path.stem}",
            [str(path.relative_to(ROOT))],
            include_dirs=[np.get_include()],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")],
            extra_compile_args=COMPILE + MODULE_FLAGS.get(path.stem, []),
            extra_link_args=LINK,
        )
        for path in sorted((ROOT / CORE).glob("*.pyx"))
    ]


#: the flavour of the last build (portable, native or sanitize): a change rebuilds everything, since
#: neither cythonize nor build_ext sees that the directives or the flags changed
FLAVOUR = "sanitize" if SANITIZE else "portable" if PORTABLE else "native"
STAMP = ROOT / "build" / "core-flavour"
CHANGED = not STAMP.is_file() or STAMP.read_text().strip() != FLAVOUR


class ParallelBuildExt(build_ext):
    """build_ext compiling the extension modules on every core (setuptools' ``--parallel``),
    everything again when the build's flavour changed."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1
        self.force = self.force or CHANGED

    def run(self) -> None:
        super().run()
        STAMP.parent.mkdir(exist_ok=True)
        STAMP.write_text(FLAVOUR + "\n")


setup(
    ext_modules=cythonize(
        extensions(),
        compiler_directives=DIRECTIVES,
        nthreads=os.cpu_count() or 1,
        quiet=False,
        force=CHANGED,
    ),
    cmdclass={"build_ext": ParallelBuildExt},
)
