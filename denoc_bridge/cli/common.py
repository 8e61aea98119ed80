"""What the commands share: exit statuses, size limits and the checks of common options."""

from __future__ import annotations

import contextlib
import math
from pathlib import Path

from denoc_bridge._files import make_folder
from denoc_bridge.errors import DenocError
from denoc_bridge.simulation.common import FIXED_STEP_METHODS

EXIT_MISMATCH = 1


EXIT_USAGE = 2


#: Pinocchio's createData takes about 64 n^3 bytes on a chain n links deep: the checks
#: against Pinocchio refuse (validate) or skip (simulate) models above these estimates
VALIDATE_MAX_BYTES = 2 * 2**30


SIMULATE_CHECK_MAX_BYTES = 300 * 2**20


MAX_FPS = 1000.0  # frames per second of the animation (browsers draw at most 240)


def checked_seed(seed: int) -> int:
    if seed < 0:
        raise DenocError(f"--seed must be a non-negative integer, got {seed}")
    return seed


def checked_output_file(path: Path | None, option: str) -> Path | None:
    """Check, before the run, that ``path`` can be written: it is not a folder, and a file can be
    created in its folder (probed and removed again).  A missing folder is created for the probe
    and removed again: the writer creates it (:func:`denoc_bridge._files.make_folder`), so a run
    that fails leaves no empty folder behind."""
    if path is None:
        return None
    if path.is_dir():
        raise DenocError(f"{option}: {path} is a folder; give a file name")
    missing = []  # the folders the probe creates, deepest first
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    try:
        try:
            make_folder(path.parent)
        except OSError as exc:  # it names the folder and why
            raise DenocError(f"{option}: {exc.strerror or exc}") from None
        existed = path.exists()
        try:
            with open(path, "ab"):
                pass
        except OSError as exc:
            raise DenocError(f"{option}: cannot write {path}: {exc.strerror or exc}") from None
        if not existed:
            path.unlink()
    finally:
        for created in missing:
            with contextlib.suppress(OSError):
                created.rmdir()
    return path


def check_whole_steps(args, method: str) -> None:
    """Refuse a --duration that is not a whole number of --dt steps for a fixed-step method."""

    steps = args.duration / args.dt
    if method in FIXED_STEP_METHODS and abs(steps - round(steps)) > 1e-9 * max(1.0, steps):
        raise DenocError(
            f"--duration {args.duration:g} is not a whole number of steps --dt {args.dt:g} ({steps:.6g} steps)"
        )


def positive_option(value: float, option: str) -> float:
    if not (math.isfinite(value) and value > 0):
        raise DenocError(f"{option} must be a positive number of seconds, got {value:g}")
    return value


#: The Python API's option names in a ResourceError's advice, as the command line spells them.
_OPTION_WORDS = (
    ("pass save_every=", "pass --save-every "),
    ("pass save_every (", "pass --save-every ("),
    ("a shorter t_final", "a shorter --duration"),
    ("a larger dt", "a larger --dt"),
    ("a smaller batch_size", "a smaller --batch-size"),
    ("fewer workers", "fewer --workers"),
    ("save_to='run.npy'", "--stream run.npy"),
)


def option_words(text: str) -> str:
    """``text`` with the Python API's option names replaced by the command line's options."""
    for api, cli in _OPTION_WORDS:
        text = text.replace(api, cli)
    return text
