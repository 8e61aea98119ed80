"""Before / after a change, in one process: this checkout's denoc_bridge against the package of
another commit, on the paths whose speed a refactor must keep (issue 20: within 5 %).

    python benchmarks/commits_ab.py 7bf2604            # the commit before the layered layout
    python benchmarks/commits_ab.py HEAD~3 --repeats 31 --only panda
    python benchmarks/commits_ab.py self --only simulate   # the noise floor: identical code

The other commit's ``denoc_bridge/`` is taken with ``git archive`` into a temporary folder and
renamed ``denoc_bridge_<rev>`` (every ``denoc_bridge`` in its sources rewritten), so both
packages load side by side (the copy holds the sources only: this script does not build the
other commit's compiled core, ``denoc_bridge/core``).  Timings
are medians of interleaved repeats (old, new, new, old, old, new, ...: each side first as
often) of batches of calls from Python through the public API, each batch at least 20 ms.
The ratio new/old is what to read; the machine's load moves both sides alike.  ``self``
times this checkout against itself: the ratio identical code reads, to weigh the others by.
"""

from __future__ import annotations

import argparse
import importlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import denoc_bridge as new  # noqa: E402


def load_commit(rev: str):
    """The package of commit ``rev`` as a module ``denoc_bridge_<rev>``."""
    sha = subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, capture_output=True, text=True, check=True)
    name = f"denoc_bridge_{sha.stdout.strip()}"
    cache = Path(tempfile.gettempdir()) / "denoc_bridge_commits"
    target = cache / name
    if not target.exists():
        tmp = Path(tempfile.mkdtemp())
        archive = subprocess.run(["git", "archive", rev, "denoc_bridge"], cwd=ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive.stdout, check=True)
        for path in (tmp / "denoc_bridge").rglob("*.py"):
            path.write_text(re.sub(r"\bdenoc_bridge\b", name, path.read_text()))
        cache.mkdir(exist_ok=True)
        shutil.move(str(tmp / "denoc_bridge"), str(target))
    sys.path.insert(0, str(cache))
    return importlib.import_module(name)


#: the clock of the timings: wall (perf_counter) or this thread's CPU time (--clock cpu: less moved
#: by other processes on a busy machine; the kernels run in this thread)
CLOCK = time.perf_counter


def per_call(fn, min_time: float = 0.02) -> float:
    n = 1
    while True:
        t0 = CLOCK()
        for _ in range(n):
            fn()
        dt = CLOCK() - t0
        if dt > min_time:
            return dt / n
        n *= 2


def state(db, model, seed: int = 0):
    rng = np.random.default_rng(seed)
    return db.random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv)


def call(name: str, fn: str, mimic: bool = False):
    def make(db):
        m = db.load_robot(name, mimic=True) if mimic else db.load_robot(name)
        q, v, x = state(db, m)
        f = getattr(db, fn)
        return (lambda: f(m, q, v, x)) if fn not in ("mass_matrix", "inverse_mass_matrix") else (lambda: f(m, q))

    return make


def fourbar_fd(db):
    m = db.generators.fourbar()
    q = db.loops.project_configuration(m, [0.0, 0.6, -0.6, 0.6])
    v = db.loops.project_velocity(m, q, [0.1, 1.0, 0, 0])
    tau = np.array([0.0, 0.5, 0.0, 0.0])
    return lambda: db.forward_dynamics(m, q, v, tau)


def simulation(kind: str):
    def make(db):
        if kind == "rope":
            m = db.generators.rope()
            q0, t = np.zeros(m.nq), 1.75
        elif kind == "fourbar":
            m = db.generators.fourbar()
            q0, t = db.loops.project_configuration(m, [0.0, 0.6, -0.6, 0.6]), 1.0
        elif kind == "fivebar":
            m = db.generators.geared_fivebar()
            q0, t = db.neutral_configuration(m), 0.5
        else:
            m = db.load_robot("pr2", mimic=True)
            q0, t = db.neutral_configuration(m), 0.2
        v0 = np.zeros(m.nv)
        return lambda: db.simulate(m, q0, v0, t, 1e-3, progress=False)

    return make


CASES = [
    ("forward_dynamics panda", call("panda", "forward_dynamics")),
    ("forward_dynamics talos (free-flyer)", call("talos", "forward_dynamics")),
    ("forward_dynamics solo12 (free-flyer)", call("solo12", "forward_dynamics")),
    ("inverse_dynamics panda", call("panda", "inverse_dynamics")),
    ("mass_matrix panda", call("panda", "mass_matrix")),
    ("inverse_mass_matrix panda", call("panda", "inverse_mass_matrix")),
    ("forward_dynamics_derivatives panda", call("panda", "forward_dynamics_derivatives")),
    ("inverse_dynamics_derivatives talos", call("talos", "inverse_dynamics_derivatives")),
    ("forward_dynamics pr2 (mimic)", call("pr2", "forward_dynamics", mimic=True)),
    ("forward_dynamics panda (mimic fingers)", call("panda", "forward_dynamics", mimic=True)),
    ("forward_dynamics four-bar (loop, lagrange)", fourbar_fd),
    ("simulate rope 1.75 s rk4 dt 1 ms", simulation("rope")),
    ("simulate four-bar 1 s rk4 dt 1 ms", simulation("fourbar")),
    ("simulate pr2 mimic 0.2 s rk4 dt 1 ms", simulation("pr2")),
    ("simulate geared five-bar (mimic + loop) 0.5 s rk4 dt 1 ms", simulation("fivebar")),
]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rev", help="the commit to compare with (e.g. 7bf2604, HEAD~1); 'self': this checkout")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--only", nargs="*", default=[], help="cases whose label contains one of these words")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="wall time or this thread's CPU time")
    args = parser.parse_args(argv)
    global CLOCK
    CLOCK = time.thread_time if args.clock == "cpu" else time.perf_counter
    old = new if args.rev == "self" else load_commit(args.rev)  # self: the ratio identical code reads
    print(f"new: {ROOT} ({new.__version__}); old: {args.rev} ({old.__name__}); medians of {args.repeats} repeats")
    for label, make in CASES:
        if args.only and not any(w in label for w in args.only):
            continue
        fo, fn = make(old), make(new)
        fo(), fn()
        to, tn = [], []
        for i in range(args.repeats):  # old first, then new first: no side gains from its place
            if i % 2:
                tn.append(per_call(fn))
                to.append(per_call(fo))
            else:
                to.append(per_call(fo))
                tn.append(per_call(fn))
        mo, mn = statistics.median(to), statistics.median(tn)
        print(f"{label:44s} old {mo * 1e6:10.2f} us  new {mn * 1e6:10.2f} us  new/old {mn / mo:6.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
