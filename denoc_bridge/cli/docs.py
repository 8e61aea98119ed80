"""``denoc-bridge docs``: build the documentation site and serve or open it.

The site's sources (``mkdocs.yml``, ``docs/``, the README's neighbours) live in the repository, not
in the installed package, so the command works from a clone: the one this package was imported
from (an editable install, or ``PYTHONPATH``), else the current folder.  It runs ``mkdocs build
--strict`` (a broken link, a missing reference or a docstring the API reference cannot parse fails
the build) into ``--output`` (default ``site/`` in the clone), then ``--serve`` serves that folder
on 127.0.0.1 until Ctrl-C and ``--open`` also opens it in the web browser.  mkdocs-material and
mkdocstrings come with the ``docs`` extra; without them the command says so in one line.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import subprocess
import sys
import threading
import time
import webbrowser
from pathlib import Path

from denoc_bridge.errors import DenocError

#: the modules the build needs, and the package that brings each (all in the ``docs`` extra)
REQUIRED = {"mkdocs": "mkdocs", "material": "mkdocs-material", "mkdocstrings_handlers.python": "mkdocstrings-python"}

INSTALL_HINT = 'pip install ".[docs]" in the clone (or pip install mkdocs-material mkdocstrings-python)'


def find_root(cwd: Path | None = None) -> Path:
    """The clone whose ``mkdocs.yml`` builds the site: the one this package was imported from,
    else the current folder; :class:`DenocError` saying what to do when neither is a clone."""
    here = Path(__file__).resolve().parents[2]  # the folder holding the package (a clone's root)
    for root in (here, (cwd or Path.cwd()).resolve()):
        if (root / "mkdocs.yml").is_file() and (root / "docs").is_dir():
            return root
    raise DenocError(
        "denoc-bridge docs builds the site from a clone of the repository (its mkdocs.yml and docs/), "
        f"and neither {here} (where denoc_bridge is installed) nor the current folder is one: "
        "run it in the clone, or install the clone with pip install -e ."
    )


def missing_packages() -> list[str]:
    """The packages of the ``docs`` extra that are not installed."""
    missing = []
    for module, package in REQUIRED.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:  # the parent package of a dotted name is missing
            found = False
        if not found:
            missing.append(package)
    return missing


def build_site(output: Path, root: Path) -> tuple[Path, float]:
    """``mkdocs build --strict`` of ``root``'s site into ``output``; returns the path of its
    ``index.html`` and the seconds it took.  A failed build raises :class:`DenocError` with
    mkdocs' warnings."""
    missing = missing_packages()
    if missing:
        raise DenocError(f"the documentation needs {', '.join(missing)} (the docs extra): {INSTALL_HINT}")
    output = output.resolve()
    if output.exists() and not output.is_dir():
        raise DenocError(f"--output: {output} is a file; give a folder")
    if output == root or output in root.parents or output == root / "docs":
        raise DenocError(f"--output: {output} would overwrite the sources; give a folder of its own")
    if output.is_dir() and any(output.iterdir()) and not (output / "index.html").is_file():
        # mkdocs empties the folder first: only a new, an empty or an earlier site's folder
        raise DenocError(f"--output: {output} holds other files (the build empties it first); give a new folder")
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "--clean"]
    cmd += ["--config-file", str(root / "mkdocs.yml"), "--site-dir", str(output)]
    path = os.pathsep.join(filter(None, (str(root), os.environ.get("PYTHONPATH"))))
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": path}
    start = time.perf_counter()
    run = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    index = output / "index.html"
    if run.returncode != 0 or not index.is_file():
        problems = [line for line in run.stderr.splitlines() if line.startswith(("WARNING", "ERROR"))]
        shown = "; ".join(problems[:5]) or run.stderr.strip()[-2000:] or f"mkdocs exited with status {run.returncode}"
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise DenocError(f"the documentation did not build (mkdocs build --strict): {shown}{more}")
    return index, seconds


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # the base class names it format
        pass


def start_server(folder: Path, port: int = 8000) -> tuple[http.server.ThreadingHTTPServer, str]:
    """Serve ``folder`` on 127.0.0.1 (``port`` 0: any free port) from a daemon thread; returns the
    server (``shutdown()`` stops it) and its address."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        reason = exc.strerror or exc
        raise DenocError(f"--port {port}: cannot listen on 127.0.0.1:{port} ({reason}); try another port") from None
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def docs_command(args) -> int:
    root = find_root()
    output = Path(args.output) if args.output else root / "site"
    print(f"building the documentation site (mkdocs build --strict) from {root} into {output} ...", flush=True)
    index, seconds = build_site(output, root)
    pages = sum(1 for _ in index.parent.rglob("*.html"))
    print(f"built {pages} pages in {seconds:.1f} s: {index}")
    if not (args.serve or args.open):
        print("open it in a browser (search needs --serve), or: denoc-bridge docs --open")
        return 0
    server, url = start_server(index.parent, args.port)
    print(f"serving {url} (Ctrl-C stops)", flush=True)
    if args.open and not webbrowser.open(url):
        print(f"no web browser found here: open {url} yourself")
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("stopped")
        return 0
    finally:
        server.shutdown()
