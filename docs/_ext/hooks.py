"""mkdocs hooks of the documentation site (mkdocs.yml ``hooks``): files that live outside ``docs/``
and that the pages show, added to the site under the name the pages use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]

#: site path -> file of the repository (written by the benchmarks, kept where they write it)
EXTRA = {
    "figures/scaling.png": ROOT / "benchmarks" / "results" / "scaling.png",
}


def on_files(files: Files, config: Any) -> Files:
    for uri, path in EXTRA.items():
        if not path.is_file():
            raise FileNotFoundError(f"the docs show {uri}, taken from {path}, which does not exist")
        files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files
