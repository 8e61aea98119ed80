"""The ``denoc-bridge`` command line (:func:`main`; one module per command)."""

from denoc_bridge.cli.info import module_tree
from denoc_bridge.cli.main import main

__all__ = ["main", "module_tree"]
