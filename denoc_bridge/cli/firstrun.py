"""A fresh install's first run: the command runs at once as plain Python while numba compiles
its kernels in the background.

numba compiles a kernel on its first call (about 100 s of CPU for ``simulate panda``'s kernels
on this project's 2-core machines) and keeps it in its on-disk cache, from which later runs load
it in milliseconds.  The kernels are also ordinary Python functions: run with
``NUMBA_DISABLE_JIT=1`` they execute the same code, about 200x slower, which for the Quickstart
(9 DOF, 8,001 forward dynamics) is about 10 s, a tenth of the compilation.

So, when a command's kernels have not been compiled yet (no *ready stamp* for it, below),
:func:`main <denoc_bridge.cli.main.main>` asks :func:`first_run` what to do and, for a run that
plain Python finishes in well under the compilation time,

1. starts the same command in the background, niced, with a short duration and its files in a
   temporary folder (:func:`background_main`): numba compiles and caches exactly the kernels the
   command needs, and the background run writes the ready stamp when it succeeds;
2. replaces itself (``exec``) by the same command with ``NUMBA_DISABLE_JIT=1``, which says so
   in one line and in its timing figures.

A ready stamp is an empty file in numba's cache folder for the kernels, named after the command's
*kernel key* (the command, the integration method, the torque mode, mimic joints and loop
closures: what selects the compiled code) and a fingerprint of the installed package (its
version, numba's and Python's, and every source file's size and modification time, the stamp
numba's own cache keys on).  Any compiled run that succeeds writes it, so a user who waits for
the compilation (``DENOC_BRIDGE_KERNELS=compiled``) leaves the same stamp.  A background
compilation that fails unexpectedly leaves a ``.failed`` stamp instead: the next run then compiles
in the foreground, where the error shows (a user's mistake, which the plain-Python run names,
leaves no stamp: the next run tries again).

``DENOC_BRIDGE_KERNELS`` chooses: ``auto`` (the default, as above), ``compiled`` (always compile
in the foreground, the behaviour before this module) or ``interpreted`` (always plain Python,
no background compilation).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import numba
from numba.core.caching import FunctionCache

from denoc_bridge._version import __version__
from denoc_bridge.cli.common import FIRST_RUN_ENV
from denoc_bridge.cli.simulate import simulate_command, torque_input
from denoc_bridge.cli.validate import validate_command
from denoc_bridge.errors import DenocError
from denoc_bridge.io.robots import load_robot
from denoc_bridge.kernels.compiling import jit_enabled
from denoc_bridge.kernels.run import rk4_run
from denoc_bridge.simulation.common import FIXED_STEP_METHODS, method_name

#: the environment variable that chooses how kernels run (see the module docstring)
MODE_ENV = "DENOC_BRIDGE_KERNELS"
MODES = ("auto", "compiled", "interpreted")
#: set in the background compilation's environment: the kernel key it compiles
BACKGROUND_ENV = "DENOC_BRIDGE_BACKGROUND"
#: plain Python's cost per DOF and forward dynamics (simulate panda: 9.4 s for 8,001 x 9 DOF,
#: measured on this project's 2-core machine), used to estimate a run before choosing it
PYTHON_SECONDS_PER_DOF_EVALUATION = 130e-6
#: plain Python's cost per DOF relative to a tree's: mimic relations (dense reduced-coordinate
#: solves per evaluation; simulate pr2 --mimic: 211 s) and loop closures (fourbar: 15 s), measured
PYTHON_COST_MIMIC = 8.0
PYTHON_COST_LOOPS = 4.0
#: a first run goes plain Python only when its estimate is below this (the compilation it
#: replaces takes about 100 s)
PYTHON_BUDGET_SECONDS = 60.0
#: the background run simulates this many steps (enough to reach every stage of a step)
BACKGROUND_STEPS = 20
PREFIX = "denoc-bridge-kernels"
#: a background compilation older than this is taken for dead
LOCK_SECONDS = 1800.0
#: the background process's program (``-c``: ``-m`` would import this module twice)
BACKGROUND_ENTRY = (
    "import os, sys\n"
    "try:\n    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))  # only what the foreground leaves\n"
    "except (AttributeError, OSError):\n    os.nice(19)\n"
    "from denoc_bridge.cli.firstrun import background_main\n"
    "sys.exit(background_main(sys.argv[1:]))"
)


def mode() -> str:
    """The value of ``DENOC_BRIDGE_KERNELS`` (``auto`` when unset)."""
    value = os.environ.get(MODE_ENV, "auto").strip().lower() or "auto"
    if value not in MODES:
        raise DenocError(f"{MODE_ENV}={os.environ[MODE_ENV]!r} is not one of {', '.join(MODES)}")
    return value


def interpreted() -> bool:
    """Whether this process runs the kernels as plain Python (``NUMBA_DISABLE_JIT=1``)."""
    return not jit_enabled()


@dataclass(frozen=True)
class FirstRun:
    """What :func:`first_run` decided for a command whose kernels are not compiled yet."""

    key: str  # the command's kernel key
    folder: Path  # numba's cache folder for the kernels: the stamps and the log
    seconds: float  # the plain-Python run's estimated duration


def kernel_key(args: argparse.Namespace) -> tuple[str, float] | None:
    """The kernel key of a command and the estimated seconds of its plain-Python run, or None for
    a command that does not run plain Python (bench and sweep time or scale the compiled kernels;
    the adaptive and implicit methods are not written as kernels; a command whose robot does not
    load reports that itself)."""
    if args.command not in ("simulate", "validate"):
        return None
    try:
        with warnings.catch_warnings():  # the command itself shows the model's warnings
            warnings.simplefilter("ignore")
            model = load_robot(args.robot, floating_base=args.floating, mimic=args.mimic)
    except (DenocError, OSError, ValueError):
        return None
    kind = ("-mimic" if args.mimic else "") + ("-loops" if model.loops else "")
    if args.command == "validate":
        return f"validate{kind}", 0.0
    try:
        method = method_name(args.method)
    except DenocError:
        return None
    if method not in FIXED_STEP_METHODS or not (args.dt > 0 and args.duration > 0):
        return None
    if not math.isfinite(args.duration / args.dt):
        return None
    try:  # a bad torque file is the command's to name, before any background compilation
        torque_input(model, args.torque)
    except DenocError:
        return None
    torque = "none" if args.torque is None else ("table" if Path(args.torque).suffix else args.torque.lower())
    evaluations = (4 if method == "rk4" else 1) * args.duration / args.dt
    cost = PYTHON_SECONDS_PER_DOF_EVALUATION * (PYTHON_COST_MIMIC if args.mimic else 1.0)
    cost *= PYTHON_COST_LOOPS if model.loops else 1.0
    return f"simulate-{method}-{torque}{kind}", cost * model.nv * evaluations


@functools.cache
def fingerprint() -> str:
    """The installed package's fingerprint (version, numba, Python, the sources' size and
    modification time: what numba's cache keys on); computed once per process."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256(f"{__version__} {numba.__version__} {sys.version} {platform.machine()}".encode())
    for path in sorted(root.rglob("*.py")):
        st = path.stat()
        h.update(f"{path.relative_to(root)} {st.st_size} {st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def cache_folder() -> Path | None:
    """numba's cache folder for the kernels (the one it writes, e.g. ``__pycache__`` beside the
    sources or ``NUMBA_CACHE_DIR``), when it can be written; else None."""
    try:
        folder = Path(FunctionCache(rk4_run.py_func).cache_path)
        folder.mkdir(parents=True, exist_ok=True)
    except (OSError, RuntimeError, AttributeError):
        return None
    return folder if os.access(folder, os.W_OK) else None


def _stamp(folder: Path, key: str, suffix: str) -> Path:
    return folder / f"{PREFIX}-{fingerprint()}-{key}.{suffix}"


def mark_ready(key: str) -> None:
    """Record that the kernels of ``key`` are compiled (after a compiled run that succeeded)."""
    folder = cache_folder()
    if folder is None:
        return
    with contextlib.suppress(OSError):
        _stamp(folder, key, "ready").touch()
        _stamp(folder, key, "failed").unlink(missing_ok=True)


def plan(args: argparse.Namespace) -> tuple[str, float] | None:
    """The kernel key and plain-Python estimate of ``args`` (:func:`kernel_key`), worked out once
    per command for :func:`first_run` and :func:`remember`; None in a plain-Python or background
    process, which neither decides nor stamps."""
    if interpreted() or os.environ.get(BACKGROUND_ENV):
        return None
    return kernel_key(args)


def remember(planned: tuple[str, float] | None) -> None:
    """After a compiled run of the command ``planned`` (:func:`plan`) that succeeded: its kernels
    are compiled (the ready stamp, when missing)."""
    folder = cache_folder() if planned is not None else None
    if planned is not None and folder is not None and not _stamp(folder, planned[0], "ready").exists():
        mark_ready(planned[0])


def first_run(planned: tuple[str, float] | None) -> FirstRun | None:
    """For the command ``planned`` (:func:`plan`) whose kernels have not been compiled (and
    ``DENOC_BRIDGE_KERNELS=auto``), what its first run runs as plain Python; None: run as usual
    (compiled, compiling what is missing in the foreground)."""
    if mode() != "auto" or planned is None:
        return None
    folder = cache_folder()
    if folder is None:
        return None
    key, seconds = planned
    if seconds > PYTHON_BUDGET_SECONDS:
        return None
    if _stamp(folder, key, "ready").exists() or _stamp(folder, key, "failed").exists():
        return None
    return FirstRun(key, folder, seconds)


def _running(lock: Path) -> bool:
    """Whether the background compilation whose pid ``lock`` holds is still alive (a lock older
    than :data:`LOCK_SECONDS` is stale whatever its pid: the pid may have been reused)."""
    try:
        if time.time() - lock.stat().st_mtime > LOCK_SECONDS:
            return False
        pid = int(lock.read_text().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return False
    return True


def start_background(run: FirstRun, args: argparse.Namespace) -> Path | None:
    """Start the background compilation of ``run``'s kernels; returns its log file, or None when
    another background compilation is running (this command's kernels then compile on a later
    run).  The robot and torque files are passed as absolute paths (the background runs in a
    temporary folder)."""
    log = _stamp(run.folder, run.key, "log")
    lock = _stamp(run.folder, "any", "compiling")
    if _running(lock):
        return None
    payload = dict(vars(args))
    for name in ("robot", "torque"):
        value = payload.get(name)
        if isinstance(value, str) and os.path.exists(value):
            payload[name] = os.path.abspath(value)
    env = dict(os.environ, **{MODE_ENV: "compiled", BACKGROUND_ENV: run.key})
    env.pop("NUMBA_DISABLE_JIT", None)
    env.pop(FIRST_RUN_ENV, None)
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", BACKGROUND_ENTRY, json.dumps(payload)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=tempfile.gettempdir(),
            start_new_session=True,  # survives this process and the terminal's Ctrl-C
        )
    lock.write_text(str(proc.pid))
    return log


def run_interpreted(run: FirstRun | None, args: argparse.Namespace, argv: list[str]) -> NoReturn:
    """Start the background compilation of ``run`` (None: none), say so, and replace this process
    by the same command as plain Python (does not return)."""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", **{MODE_ENV: "interpreted"})
    if run is None:  # DENOC_BRIDGE_KERNELS=interpreted
        _exec(argv, env)
    log = start_background(run, args)
    where = (
        f"numba compiles this command's kernels in the background (a few minutes on 2 cores, once; log {log})"
        if log is not None
        else "numba is compiling another command's kernels in the background (this command's compile on a later run)"
    )
    print(
        f"first run: {where}. Meanwhile this run executes them as plain Python: the same code, results equal to "
        f"round-off, slower (about {max(run.seconds, 1.0):.0f} s on an idle machine). Later runs use the "
        "compiled kernels.",
        file=sys.stderr,
        flush=True,
    )
    env[FIRST_RUN_ENV] = "1"
    _exec(argv, env)


def run_compiled(exc: BaseException, argv: list[str]) -> NoReturn:
    """Replace this plain-Python run by the same command with compiled kernels (compiling in the
    foreground), after Python's math raised ``exc`` where compiled code returns inf or nan (e.g.
    ``math.exp`` of a diverging state); does not return."""
    print(
        f"denoc-bridge: note: the plain-Python run stopped on {type(exc).__name__} ({exc}), where the compiled "
        "kernels return inf or nan; running the command again with the compiled kernels (compiling them now)",
        file=sys.stderr,
        flush=True,
    )
    env = dict(os.environ, **{MODE_ENV: "compiled"})
    env.pop("NUMBA_DISABLE_JIT", None)
    _exec(argv, env)


def _exec(argv: list[str], env: dict[str, str]) -> NoReturn:
    """Replace this process by ``denoc-bridge argv`` in the environment ``env``."""
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, "-m", "denoc_bridge.cli", *argv], env)


def background_main(argv: list[str]) -> int:
    """The background compilation: the command of ``argv[0]`` (its arguments as JSON) for
    :data:`BACKGROUND_STEPS` steps, files in a temporary folder; writes the ready stamp on
    success, the failed stamp otherwise."""
    key = os.environ[BACKGROUND_ENV]
    folder = cache_folder()
    args = argparse.Namespace(**json.loads(argv[0]))
    outcome: str | None = "failed"  # an unexpected error: the next run compiles in the foreground
    try:
        with tempfile.TemporaryDirectory(prefix="denoc-bridge-compile-") as tmp:
            if args.command == "simulate":
                args.duration = min(args.duration, BACKGROUND_STEPS * args.dt)
                args.html = None if args.no_html else str(Path(tmp, "run.html"))
                args.plot = None if args.no_plot else str(Path(tmp, "run.png"))
                args.save = args.stream = args.save_every = None
                status = simulate_command(args)
            else:
                status = validate_command(args)
        outcome = "ready" if status in (0, 1) else "failed"  # 1: a mismatch (compiled all the same)
    except (DenocError, OSError):  # a mistake the plain-Python run names: try again next run
        outcome = None
        raise
    finally:
        if folder is not None:
            with contextlib.suppress(OSError):
                if outcome == "ready":
                    mark_ready(key)
                    _stamp(folder, key, "log").unlink(missing_ok=True)
                elif outcome == "failed":
                    _stamp(folder, key, "failed").touch()
                _stamp(folder, "any", "compiling").unlink(missing_ok=True)
    return 0
