"""The version of denoc_bridge (single source: pyproject.toml reads it from here)."""

__version__ = "0.2.0.dev0"
