"""Every example-robot-data robot through ``denoc-bridge simulate ROBOT --duration 2``.

    python benchmarks/cli_robots.py [ROBOT ...] [--duration 2] [--timeout 600] [--jobs 1]
                                    [--out benchmarks/results/cli_robots.json] [-- EXTRA SIMULATE OPTIONS]

Each robot runs in its own process with the command's default options (``--no-html
--no-plot`` only, to save time), as a user would type it.  A robot passes when the command
completes the simulated time, or when it stops with a one-line message (no traceback) that
names a remedy (an option to pass).  The table: robot, DOF, status, wall time, message (the
last line the command printed on failure, else its energy line).  Exits 1 if a robot fails
otherwise.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time

#: options a stop message may point to as its remedy
REMEDY = re.compile(r"--(no-passive|armature|dt|method|no-validate|mimic|fixed|floating|duration)\b")


def run_one(robot: str, duration: float, timeout: float, extra: list[str]) -> dict:
    cmd = [sys.executable, "-m", "denoc_bridge.cli", "simulate", robot, "--duration", f"{duration:g}"]
    cmd += ["--no-html", "--no-plot", *extra]
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return dict(robot=robot, dof=None, status="timeout", code=None, wall=time.perf_counter() - t0, message="")
    wall = time.perf_counter() - t0
    out, err = proc.stdout, proc.stderr
    m = re.search(r"^\S+: (\d+) DOF", out, re.M)
    dof = int(m.group(1)) if m else None
    lines = [x for x in err.strip().splitlines() if x.startswith("denoc-bridge:") and "note:" not in x]
    if proc.returncode == 0 and re.search(r"^completed: ", out, re.M):
        status = "completed"
        energy = [x for x in out.splitlines() if x.startswith(("energy", "warning"))]
        message = " | ".join(energy)
    elif "Traceback" in err:
        status, message = "traceback", err.strip().splitlines()[-1]
    elif proc.returncode != 0 and lines:
        message = lines[-1]
        status = "stopped, remedy named" if REMEDY.search(message) else "stopped, no remedy"
    else:
        status, message = f"exit {proc.returncode}", (err or out).strip().splitlines()[-1:]
        message = message[0] if message else ""
    return dict(robot=robot, dof=dof, status=status, code=proc.returncode, wall=wall, message=message)


def table(rows: list[dict]) -> str:
    lines = ["| robot | DOF | status | wall (s) | message |", "|---|---:|---|---:|---|"]
    for r in rows:
        msg = r["message"].replace("|", "/")
        lines.append(
            f"| {r['robot']} | {r['dof'] if r['dof'] is not None else '-'} | {r['status']} | {r['wall']:.1f} | {msg} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    from denoc_bridge.io.robots import example_robot_names

    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1 :]
        argv = argv[: argv.index("--")]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("robots", nargs="*", help="default: every example-robot-data robot")
    parser.add_argument("--duration", type=float, default=2.0)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per robot")
    parser.add_argument("--jobs", type=int, default=1, help="robots run at once (wall times then overlap)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "cli_robots.json"))
    args = parser.parse_args(argv)
    robots = args.robots or example_robot_names()
    rows = []
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        futures = [pool.submit(run_one, r, args.duration, args.timeout, extra) for r in robots]
        for fut in futures:
            row = fut.result()
            rows.append(row)
            print(f"{row['robot']:<28} {row['status']:<22} {row['wall']:7.1f} s  {row['message'][:150]}", flush=True)
    md = table(rows)
    bad = [r for r in rows if r["status"] not in ("completed", "stopped, remedy named")]
    done = sum(r["status"] == "completed" for r in rows)
    print(
        f"\n{len(rows)} robots: {done} completed {args.duration:g} s, {len(rows) - done - len(bad)} stopped naming a remedy, {len(bad)} failed"
    )
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as fh:
            json.dump(dict(duration=args.duration, extra=extra, rows=rows), fh, indent=1)
        with open(os.path.splitext(args.out)[0] + ".md", "w") as fh:
            fh.write(md + "\n")
        print(f"wrote {args.out}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
