"""Headless Chromium for the tests that look at pages as a person would (the HTML export in
tests/viz/test_viz.py, the documentation site in tests/test_docs.py).

The ``chromium`` fixture (tests/conftest.py) finds Debian's ``chromium``; without it the tests are
skipped, except under CI (the ``CI`` environment variable, set by ``.ci/run``) where they fail.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np


def screenshot(
    chromium: str,
    html: Path | str,
    png: Path,
    virtual_ms: int,
    size=(800, 600),
    fragment: str = "",
    proxy: str = "127.0.0.1:9",
) -> np.ndarray:
    """Open ``html`` (a file, or the address of a page served on 127.0.0.1; ``#fragment``) in
    headless Chromium, with the network disabled, let ``virtual_ms`` of virtual time pass (the
    page's clock: the animation runs), screenshot; returns RGB (H, W, 3) floats in [0, 1].  Fails
    on a JavaScript error.  Every request to another host goes to ``proxy`` (by default a closed
    port: it fails); 127.0.0.1 is reached directly."""
    from PIL import Image

    address = html if isinstance(html, str) else html.resolve().as_uri()
    profile = png.parent / f".chromium-{png.stem}"
    cmd = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--enable-unsafe-swiftshader",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--disable-sync",
        "--disable-background-networking",
        "--disable-component-update",
        f"--proxy-server={proxy}",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",  # no network but this machine
        f"--user-data-dir={profile}",
        f"--window-size={size[0]},{size[1]}",
        f"--virtual-time-budget={virtual_ms}",
        f"--screenshot={png}",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
        address + (f"#{fragment}" if fragment else ""),
    ]
    if png.exists():
        png.unlink()
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    shutil.rmtree(profile, ignore_errors=True)
    console = [line for line in run.stderr.splitlines() if "CONSOLE" in line]
    errors = [line for line in console if "Uncaught" in line or "is not defined" in line]
    assert not errors, "JavaScript errors:\n" + "\n".join(errors)
    assert png.is_file(), f"chromium wrote no screenshot (exit {run.returncode}):\n{run.stderr[-2000:]}"
    return np.asarray(Image.open(png).convert("RGB"), dtype=float) / 255.0
