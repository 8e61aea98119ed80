"""The compiled core: Cython kernels, compiled when the package is built (``setup.py``).

One extension module per group of recursion passes (``configuration``: the joints' configuration
maps; ``tree``: geometry, inverse and forward dynamics, the GIM, its inverse and block factors,
the energies of a tree, single states and batches; ``run``: the fixed-step runs; ``contact``:
the contact rows, the Delassus operator, PGS and the contact run; ``directional``: the
matrix-free derivatives of forward dynamics; ``derivatives``: the analytical derivatives of the
dynamics; ``loops``: the rows of the cut joints of closed loops, the constrained accelerations and
the projection), each a ``.pyx`` that includes one ``.pxi``
per pass and a ``.pxd`` declaring what the other modules cimport; ``tables.pxd`` is the layout
of the model table and of the work array they share with the Python layer
(:mod:`denoc_bridge.core.layout`), ``arrays.pxd`` the boundary checks of every entry,
``vectors.pxd`` the small vector helpers both modules use.  The kernels take the model's table and state arrays only,
check every length and dtype at the boundary, and return a status that the Python layer turns
into a named error.

In a source checkout (an editable install, the clone's tests) the extension modules sit next to
their sources; :func:`load` refuses one that is older than them, with the command that rebuilds
it, rather than running stale machine code.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from types import ModuleType

from denoc_bridge.errors import DenocError

HERE = Path(__file__).resolve().parent

#: the status of an entry whose inputs are finite but whose result is not (too large for float64);
#: the others: 0 done, -1 an invalid value, -2 a wrong length, k + 1 a singular articulated
#: inertia of link k
OVERFLOW = -3
REBUILD = "python setup.py build_ext --inplace"


#: the status of an entry handed arrays whose lengths do not fit the table or one another
WRONG_LENGTH = -2


def sized(status: int, what: str) -> int:
    """``status`` of a compiled entry whose arrays its caller sized: -2 (lengths that do not fit)
    is then the caller's defect, raised as the RuntimeError it is, naming ``what`` refused them;
    any other status is returned for the caller to turn into a named error."""
    if status == WRONG_LENGTH:
        raise RuntimeError(f"{what} refused the lengths of its arrays (status -2): a defect of its caller")
    return status


class BuildError(DenocError, ImportError):
    """The compiled core is missing or older than its sources (a checkout that was not rebuilt)."""


_INCLUDE = re.compile(r'^\s*include\s+"([^"]+)"', re.M)
_CIMPORT = re.compile(r"^\s*(?:from\s+denoc_bridge\.core\.(\w+)\s+cimport|cimport\s+denoc_bridge\.core\.(\w+))", re.M)


def sources(stem: str) -> list[Path]:
    """The files the extension module ``stem`` is compiled from: its ``.pyx``, the ``.pxi`` it
    includes and the ``.pxd`` of this folder it cimports, followed through includes."""
    found: list[Path] = []
    todo = [HERE / f"{stem}.pyx"]
    while todo:
        path = todo.pop()
        if path in found or not path.is_file():
            continue
        found.append(path)
        text = path.read_text()
        todo += [HERE / name for name in _INCLUDE.findall(text)]
        todo += [HERE / f"{a or b}.pxd" for a, b in _CIMPORT.findall(text)]
    return found


def _newest_source(stem: str) -> tuple[float, Path | None]:
    """The newest of :func:`sources` in a source checkout (``setup.py`` two folders up); 0 and
    None in an installed copy, whose files' times say nothing of the build."""
    if not (HERE.parents[1] / "setup.py").is_file():
        return 0.0, None
    found = [(p.stat().st_mtime, p) for p in sources(stem)]
    return max(found) if found else (0.0, None)


def load(stem: str) -> ModuleType:
    """Import the extension module ``denoc_bridge.core.<stem>``, checked against its sources."""
    try:
        module = importlib.import_module(f"{__name__}.{stem}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{stem}":
            raise
        raise BuildError(
            f"denoc_bridge's compiled core ({__name__}.{stem}) is not built: in a clone, install it with "
            f"`pip install -e .` (a C compiler is needed) or rebuild it with `{REBUILD}`"
        ) from None
    built = Path(module.__file__ or "")
    newest, source = _newest_source(stem)
    if source is not None and built.is_file() and built.stat().st_mtime < newest:
        raise BuildError(
            f"denoc_bridge's compiled core is older than its source {source.name}: rebuild it with `{REBUILD}` "
            "(or `pip install -e .`) in the clone's root"
        )
    return module


#: the configuration maps of every joint type (``configuration.pyx``; ``tree`` cimports them)
configuration = load("configuration")
#: the tree's geometry, dynamics, GIM family and energies (``tree.pyx``)
tree = load("tree")
#: the fixed-step runs of a tree (``run.pyx``)
run = load("run")
#: ground contact: rows, Delassus operator, PGS, the contact-euler run (``contact.pyx``)
contact = load("contact")
#: the matrix-free derivatives of forward dynamics, JVP and VJP (``directional.pyx``)
directional = load("directional")
#: the analytical derivatives of the dynamics of a tree (``derivatives.pyx``)
derivatives = load("derivatives")
#: closed loops: the cut joints' rows, the constrained accelerations (``loops.pyx``)
loops = load("loops")
