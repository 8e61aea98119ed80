"""``denoc-bridge compile``: kept as a harmless no-op.  The compiled core is built with the package
(``pip install`` compiles its Cython modules, or a wheel ships them), so nothing compiles after
install any more; the command says so and exits 0.  It is kept so that scripts that ran it after
an install (the numba releases asked for that) keep working; a later release removes it."""

from __future__ import annotations

import argparse

#: what ``denoc-bridge compile`` prints
MESSAGE = (
    "denoc-bridge compile: nothing to compile: the compiled core (Cython) is built with the package "
    "when it is installed, and nothing compiles after install any more.  This command does nothing "
    "and will be removed in a later release."
)


def compile_command(args: argparse.Namespace) -> int:
    """``denoc-bridge compile``: print :data:`MESSAGE`; exit status 0."""
    print(MESSAGE)
    return 0
