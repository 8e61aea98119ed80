"""Plots of a :class:`~denoc_bridge.simulation.trajectory.Trajectory` and of the benchmark, as PNG files.

Matplotlib with its ``Agg`` backend: every function writes a file and opens no window
(it works without a display), and returns the :class:`pathlib.Path` it wrote::

    from denoc_bridge.viz import plots
    plots.plot_joints(traj, "angles.png")                 # q against time, one line per DOF
    plots.plot_joints(traj, "torques.png", quantity="tau", joints=["panda_joint1", "panda_joint2"])
    plots.plot_energy(traj, "energy.png")                 # kinetic, potential, total; power in; drift
    plots.plot_constraint_error(traj, "closure.png")      # models with loop closures
    plots.plot_summary(traj, "summary.png")               # what `denoc-bridge simulate --plot` writes
    plots.plot_scaling(json.load(open("speed.json")), "scaling.png")   # benchmarks/speed.py

A figure is ``size`` inches at ``dpi`` dots per inch: the PNG is ``size[0] * dpi`` by
``size[1] * dpi`` pixels.  The ``draw_*`` functions draw the same panels on a matplotlib
``Axes`` of your own figure; :func:`pyplot` and :func:`save_figure` are the backend
selection and the saving that the examples share.

Positions (``quantity="q"``) are one coordinate per degree of freedom, the layout of v:
the angle or displacement of revolute, prismatic and universal joints, the unwrapped angle
of continuous joints (from their (cos, sin) pair), x, y and the angle of planar joints, and
for free-flyer and spherical joints the position and the rotation vector of the quaternion.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from denoc_bridge._files import atomic_path
from denoc_bridge.errors import DenocError, InputError
from denoc_bridge.multibody.joints import JointType

__all__ = [
    "plot_joints",
    "plot_energy",
    "plot_constraint_error",
    "plot_summary",
    "plot_scaling",
    "draw_joints",
    "draw_energy",
    "draw_power",
    "draw_energy_drift",
    "draw_constraint_error",
    "draw_scaling",
    "joint_positions",
    "dof_labels",
    "moving_dofs",
    "pyplot",
    "save_figure",
    "QUANTITIES",
]

#: quantity -> (what, unit) of :func:`plot_joints`
QUANTITIES = {
    "q": ("position", "rad or m"),
    "v": ("velocity", "rad/s or m/s"),
    "a": ("acceleration", "rad/s² or m/s²"),
    "tau": ("actuation torque / force", "N m or N"),
}
#: ``joints=None`` plots at most this many DOF: those that moved most (:func:`moving_dofs`)
MAX_LINES = 12
#: a DOF whose range is below this fraction of the largest one (or below :data:`STILL`) did not move
MOVED_FRACTION = 1e-6
#: ranges below this (rad, m, or their rates) are round-off: the DOF did not move
STILL = 1e-12
#: above this many instants, the lines are drawn through every k-th one (the figure cannot show more)
MAX_POINTS = 4000
_DPI = 100


# ------------------------------------------------------------------ matplotlib
def pyplot():
    """``matplotlib.pyplot`` with the ``Agg`` backend (files, no windows); a one-line
    :class:`~denoc_bridge.errors.DenocError` if matplotlib is not installed."""
    try:
        import matplotlib
    except ImportError:
        raise DenocError(
            "plots need matplotlib, which is not installed (pip install matplotlib, "
            "or pip install 'denoc-bridge[examples]')"
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path, *, dpi: float = _DPI, close: bool = True) -> Path:
    """Lay out ``fig``, write it to ``path`` (folders created; the format from the suffix,
    PNG by default) and close it; returns the path."""
    path = Path(path)
    try:
        fig.tight_layout()
    except Exception:
        pass
    with atomic_path(path) as tmp:  # an interrupted write leaves the old picture or none
        fig.savefig(tmp, dpi=dpi, format=path.suffix[1:].lower() if path.suffix else "png")
    if close:
        pyplot().close(fig)
    return path


def _figure(size, rows=1, **kwargs):
    plt = pyplot()
    return plt.subplots(rows, 1, figsize=tuple(size), squeeze=False, **kwargs)


def _check_trajectory(traj) -> None:
    if not hasattr(traj, "t") or not hasattr(traj, "model"):
        raise InputError(f"expected a denoc_bridge Trajectory, got {type(traj).__name__}")
    if len(traj.t) == 0:
        raise InputError("the trajectory is empty: nothing to plot")


def _stride(traj) -> slice:
    return slice(None, None, max(1, int(np.ceil(len(traj.t) / MAX_POINTS))))


# ------------------------------------------------------------------ coordinates and labels
def dof_labels(model) -> list:
    """One label per velocity coordinate: the joint name, with a suffix for multi-DOF joints."""
    labels = []
    suffixes = {
        JointType.FREEFLYER: ("x", "y", "z", "rx", "ry", "rz"),
        JointType.PLANAR: ("x", "y", "angle"),
        JointType.SPHERICAL: ("rx", "ry", "rz"),
        JointType.TRANSLATION: ("x", "y", "z"),
    }
    for k, name in enumerate(model.joint_names):
        n = int(model.nv_joint[k])
        if n == 1:
            labels.append(name)
        else:
            sfx = suffixes.get(JointType(model.joint_type[k]), tuple(str(i) for i in range(n)))
            labels.extend(f"{name}.{s}" for s in sfx)
    return labels


def joint_positions(model, q, dofs=None) -> np.ndarray:
    """(N, nv) position coordinates of the configurations ``q`` (N, nq), see the module
    docstring; with ``dofs`` (velocity indices) only those columns are computed (the others NaN)."""
    from scipy.spatial.transform import Rotation

    q = np.atleast_2d(np.asarray(q, dtype=float))
    out = np.full((q.shape[0], model.nv), np.nan)
    links: Iterable[int]
    if dofs is None:
        links = range(model.n_links)
    else:
        # the joints that own velocities: a MimicModel's mimic joint shares its idx_v with the next
        # moving joint, and would take that joint's DOF
        moving = np.flatnonzero(np.asarray(model.nv_joint) > 0)
        owner = moving[np.searchsorted(np.asarray(model.idx_v)[moving], np.asarray(dofs, dtype=int), side="right") - 1]
        links = sorted(set(owner.tolist()))
    for k in links:
        jt = JointType(model.joint_type[k])
        i, n, j, m = int(model.idx_q[k]), int(model.nq_joint[k]), int(model.idx_v[k]), int(model.nv_joint[k])
        if m == 0:  # a fixed joint, or a MimicModel's mimic joint (its coordinates follow another's)
            continue
        x = q[:, i : i + n]
        if jt == JointType.CONTINUOUS:
            out[:, j] = np.unwrap(np.arctan2(x[:, 1], x[:, 0]))
        elif jt == JointType.PLANAR:
            out[:, j : j + 2] = x[:, :2]
            out[:, j + 2] = np.unwrap(np.arctan2(x[:, 3], x[:, 2]))
        elif jt in (JointType.FREEFLYER, JointType.SPHERICAL):
            quat = x[:, -4:]
            rv = Rotation.from_quat(quat / np.linalg.norm(quat, axis=1, keepdims=True)).as_rotvec()
            if jt == JointType.FREEFLYER:
                out[:, j : j + 3] = x[:, :3]
            out[:, j + m - 3 : j + m] = rv
        else:
            out[:, j : j + m] = x
    return out


def _ranges(traj, quantity: str) -> np.ndarray:
    """Per DOF: how much ``quantity`` moved (positions and velocities: their range over the
    trajectory; accelerations and torques: their largest magnitude)."""
    x = _quantity(traj, quantity)
    x = np.where(np.isfinite(x), x, np.nan)
    with np.errstate(invalid="ignore"):
        if quantity in ("q", "v"):
            r = np.nanmax(x, axis=0) - np.nanmin(x, axis=0)
        else:
            r = np.nanmax(np.abs(x), axis=0)
    return np.nan_to_num(r, nan=0.0)


def moving_dofs(traj, quantity: str = "q", max_lines: int = MAX_LINES) -> tuple[list, int]:
    """The DOF to plot when none are asked for: (velocity indices, in order, how many DOF moved).

    The DOF whose ``quantity`` moved most (the range of positions or velocities, the largest
    magnitude of accelerations or torques; a floating base's x, y, z included), at most
    ``max_lines``, leaving out those that did not move (a range under ``MOVED_FRACTION`` of the
    largest, or under ``STILL``: round-off).  When no position moved, the DOF with the largest
    torques; when nothing moved at all, ``max_lines`` DOF spread evenly over the model."""
    nv = traj.model.nv
    order: list = []
    for what in (quantity, "tau") if quantity == "q" else (quantity,):
        r = _ranges(traj, what)
        moved = np.flatnonzero(r > max(MOVED_FRACTION * float(r.max(initial=0.0)), STILL))
        if len(moved):
            order = sorted(moved.tolist(), key=lambda i: -r[i])
            break
    if not order:
        spread = np.linspace(0, nv - 1, min(nv, max_lines)).round().astype(int)
        return sorted(set(spread.tolist())), 0
    return sorted(order[:max_lines]), len(order)


def _select(model, joints) -> list:
    """Velocity indices of ``joints``: joint names (all DOF of the joint) or velocity indices."""
    nv = model.nv
    if isinstance(joints, (str, int, np.integer)):
        joints = [joints]
    out = []
    for j in joints:
        if isinstance(j, (int, np.integer)) and not isinstance(j, bool):
            if not -nv <= int(j) < nv:
                raise InputError(f"joint index {j} is out of range: model '{model.name}' has nv = {nv}")
            out.append(int(j) % nv)
        elif isinstance(j, str):
            if j not in model.joint_names:
                close = [n for n in model.joint_names if j.lower() in n.lower()][:5]
                hint = f"; did you mean {', '.join(close)}?" if close else ""
                raise InputError(f"unknown joint '{j}' in model '{model.name}'{hint}")
            k = model.joint_names.index(j)
            out.extend(range(int(model.idx_v[k]), int(model.idx_v[k] + model.nv_joint[k])))
        else:
            raise InputError(f"joints must be joint names or velocity indices, got {j!r}")
    if not out:
        raise InputError("joints is empty: nothing to plot")
    return list(dict.fromkeys(out))


def _quantity(traj, quantity: str, dofs=None) -> np.ndarray:
    if quantity not in QUANTITIES:
        raise InputError(f"quantity must be one of {', '.join(QUANTITIES)}, got {quantity!r}")
    if quantity == "q":
        return joint_positions(traj.model, traj.q, dofs)
    return np.asarray(getattr(traj, quantity))


# ------------------------------------------------------------------ panels
def draw_joints(ax, traj, quantity: str = "q", joints=None, *, legend: bool = True, note: bool = True) -> list:
    """Draw ``quantity`` (q, v, a or tau) of the selected DOF against time on ``ax``: ``joints``
    None (the DOF that moved most, :func:`moving_dofs`), joint names or velocity indices.  The
    legend goes to the right of the panel; ``note`` says above it which DOF are drawn when
    not all are.  Returns the velocity indices drawn."""
    _check_trajectory(traj)
    nv = traj.model.nv
    if nv == 0 and not joints:  # a robot of fixed joints only: nothing moves
        what, unit = QUANTITIES[quantity]
        ax.set_ylabel(f"{what} [{unit}]", fontsize=9)
        ax.set_xlabel("t [s]")
        if note:
            ax.set_title(f"'{traj.model.name}' has no degrees of freedom", fontsize=9, loc="right")
        return []
    if joints is None:
        idx, n_moved = moving_dofs(traj, quantity)
    else:
        idx, n_moved = _select(traj.model, joints), -1
    data = _quantity(traj, quantity, idx)
    labels = dof_labels(traj.model)
    s = _stride(traj)
    for i in idx:
        ax.plot(traj.t[s], data[s, i], lw=1.2, label=labels[i])
    what, unit = QUANTITIES[quantity]
    ax.set_ylabel(f"{what} [{unit}]", fontsize=9)
    ax.set_xlabel("t [s]")
    ax.grid(alpha=0.3)
    if legend and idx:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, handlelength=1.5)
    if note and len(idx) < nv:
        if n_moved < 0:
            text = f"{len(idx)} of {nv} DOF"
        elif n_moved == 0:
            text = f"{len(idx)} of {nv} DOF (none moved)"
        elif n_moved <= len(idx):
            text = f"the {len(idx)} of {nv} DOF that moved"
        else:
            text = f"{len(idx)} of {nv} DOF: those that moved most ({n_moved} moved)"
        ax.set_title(text, fontsize=9, loc="right")
    return idx


def draw_energy(ax, traj) -> None:
    """Kinetic, potential and total energy, and ``E(0) + W``: what the total should be, with
    ``W`` every work the run records (:meth:`Trajectory.energy_drift`): ``W_in`` (actuation,
    the posture hold, joint damping, external wrenches), less ``W_stops`` (what joint-limit stops
    took), plus ``W_contact`` (the ground contact's forces and impacts); the legend says which."""
    _check_trajectory(traj)
    s = _stride(traj)
    T, V, E = traj.kinetic_energy, traj.potential_energy, traj.total_energy
    ax.plot(traj.t[s], T[s], label="kinetic")
    ax.plot(traj.t[s], V[s], label="potential")
    ax.plot(traj.t[s], E[s], "k", lw=1.4, label="total")
    balance = E - traj.energy_drift()
    if traj.balance_parts():  # some work was done
        ax.plot(traj.t[s], balance[s], "k:", lw=1.2, label=_work_label(traj))
    ax.set_ylabel("energy [J]", fontsize=9)
    ax.set_xlabel("t [s]")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, handlelength=1.5)


def _work_label(traj) -> str:
    """``E(0) + W``, its terms those of the balance (:meth:`Trajectory.balance_text`):
    ``"E(0) + W_in - W_stops + W_contact"``; ``"E(0) + work in"`` when ``W_in`` is all."""
    terms = _balance_text(traj)[len("E - E(0)") :]  # " - W_in + W_stops - W_contact"
    if terms == " - W_in":
        return "E(0) + work in"
    return "E(0)" + " ".join({"-": "+", "+": "-"}.get(word, word) for word in terms.split(" "))


def _balance_text(traj) -> str:
    """The balance as the trajectory writes it (:meth:`Trajectory.balance_text`)."""
    return traj.balance_text()


def _relative(traj, drift: np.ndarray) -> str:
    """``max |drift|`` as a fraction of the energy scale, or why there is none."""
    scale = traj.energy_scale
    if not scale > 0:
        return "no energy at play (no motion, no work, no mass)"
    return f"{float(np.max(np.abs(drift))) / scale:.2e} of the energy scale"


def draw_power(ax, traj) -> None:
    """Power of the non-conservative forces (actuation, damping, external wrenches)."""
    _check_trajectory(traj)
    s = _stride(traj)
    ax.plot(traj.t[s], traj.power_in[s], color="C3")
    ax.set_ylabel("power in [W]")
    ax.set_xlabel("t [s]")
    ax.grid(alpha=0.3)


def draw_energy_drift(ax, traj) -> None:
    """``E(t) - E(0) - W(t)`` (:meth:`Trajectory.energy_drift`): the energy the integration
    created or lost; the title says what ``W`` includes."""
    _check_trajectory(traj)
    s = _stride(traj)
    drift = traj.energy_drift()
    ax.plot(traj.t[s], drift[s], color="C4")
    parts = traj.balance_parts()
    ax.set_title(
        f"max |drift| = {np.max(np.abs(drift)):.2e} J = {_relative(traj, drift)}" + (f"\n{parts}" if parts else ""),
        fontsize=8,
    )
    ax.set_ylabel(f"{_balance_text(traj)} [J]", fontsize=8)
    ax.set_xlabel("t [s]")
    ax.grid(alpha=0.3)


def draw_constraint_error(ax, traj) -> None:
    """The largest loop-closure error of each saved state (log scale)."""
    _check_trajectory(traj)
    err = getattr(traj, "constraint_error", None)
    if err is None or len(err) == 0:
        raise InputError(
            f"the trajectory of '{traj.model.name}' has no constraint error: its model has no loop "
            "closures (only simulations of models with loops record one)"
        )
    s = _stride(traj)
    ax.semilogy(traj.t[s], np.maximum(np.asarray(err)[s], 1e-18), color="C2", label="after each step")
    drift = getattr(traj, "constraint_drift", float("nan"))
    if np.isfinite(drift):
        ax.axhline(max(drift, 1e-18), color="C3", ls="--", lw=0.9, label=f"most one step left: {drift:.1e}")
        ax.legend(fontsize=8)
    ax.set_ylabel("closure error [m or rad]", fontsize=8)
    ax.set_xlabel("t [s]")
    ax.grid(alpha=0.3, which="both")


def _title(traj) -> str:
    status = "" if traj.status == "completed" else f", {traj.status}"
    method = f", {traj.method}" if traj.method else ""
    dt = f" dt = {traj.dt:g} s" if np.isfinite(traj.dt) else ""
    return f"{traj.model.name}: {traj.model.nv} DOF, t = {traj.t[0]:g} .. {traj.t[-1]:g} s{method}{dt}{status}"


# ------------------------------------------------------------------ files
def plot_joints(traj, path, quantity: str = "q", joints=None, *, size=(8.0, 4.5), dpi: float = _DPI) -> Path:
    """One line per DOF of ``quantity`` ("q", "v", "a" or "tau") against time.  ``joints``:
    None (the DOF that moved most, at most ``MAX_LINES``: :func:`moving_dofs`), joint names
    (all DOF of each) or velocity indices."""
    _check_trajectory(traj)
    if quantity not in QUANTITIES:
        raise InputError(f"quantity must be one of {', '.join(QUANTITIES)}, got {quantity!r}")
    if joints is not None:
        _select(traj.model, joints)
    fig, ax = _figure(size)
    draw_joints(ax[0, 0], traj, quantity, joints)
    fig.suptitle(_title(traj), fontsize=9)
    return save_figure(fig, path, dpi=dpi)


def plot_energy(traj, path, *, size=(8.0, 7.5), dpi: float = _DPI) -> Path:
    """Three panels: kinetic, potential and total energy (with ``E(0) + W_in``); the power of
    the non-conservative forces (``power_in``); and the energy balance ``energy_drift``."""
    _check_trajectory(traj)
    fig, ax = _figure(size, rows=3, sharex=True)
    draw_energy(ax[0, 0], traj)
    draw_power(ax[1, 0], traj)
    draw_energy_drift(ax[2, 0], traj)
    for a in ax[:2, 0]:
        a.set_xlabel("")
    fig.suptitle(_title(traj), fontsize=9)
    return save_figure(fig, path, dpi=dpi)


def plot_constraint_error(traj, path, *, size=(8.0, 4.0), dpi: float = _DPI) -> Path:
    """The loop-closure error against time; an :class:`~denoc_bridge.errors.InputError` if
    the trajectory has none (a model without loop closures)."""
    _check_trajectory(traj)
    err = getattr(traj, "constraint_error", None)
    if err is None or len(err) == 0:
        raise InputError(
            f"the trajectory of '{traj.model.name}' has no constraint error: its model has no loop "
            "closures (only simulations of models with loops record one)"
        )
    fig, ax = _figure(size)
    draw_constraint_error(ax[0, 0], traj)
    fig.suptitle(_title(traj), fontsize=9)
    return save_figure(fig, path, dpi=dpi)


def plot_summary(traj, path, *, size=None, dpi: float = _DPI) -> Path:
    """One figure: positions and velocities of the DOF that moved most (:func:`moving_dofs`
    on the positions, a floating base's x, y, z included; the same DOF and colours in every
    panel), the actuation (omitted when there is none: a passive motion, said in the title),
    energy (and the energy balance), and the loop-closure error when the trajectory has one.
    ``size`` defaults to 9 inches wide and 2.3 inches per panel (plus 0.6 for the title)."""
    _check_trajectory(traj)
    loops = getattr(traj, "constraint_error", None) is not None and len(traj.constraint_error) > 0
    actuated = bool(np.any(traj.tau))
    rows = 3 + actuated + loops
    size = (9.0, 2.3 * rows + 0.6) if size is None else size
    fig, ax = _figure(size, rows=rows, sharex=True)
    idx = draw_joints(ax[0, 0], traj, "q")
    draw_joints(ax[1, 0], traj, "v", idx, legend=False, note=False)
    row = 2
    if actuated:
        draw_joints(ax[row, 0], traj, "tau", idx, legend=False, note=False)
        row += 1
    draw_energy(ax[row, 0], traj)
    parts = traj.balance_parts()
    ax[row, 0].set_title(
        f"energy balance: max |{_balance_text(traj)}| = {_relative(traj, traj.energy_drift())}"
        + (f"\n({parts})" if parts else ""),
        fontsize=9,
    )
    if loops:
        draw_constraint_error(ax[row + 1, 0], traj)
    for a in ax[:-1, 0]:
        a.set_xlabel("")
    fig.suptitle(_title(traj) + ("" if actuated else ", no actuation (passive motion)"), fontsize=10)
    return save_figure(fig, path, dpi=dpi)


# ------------------------------------------------------------------ benchmark
_SCALING_SERIES = (
    ("fd_us", "denoc_bridge forward_dynamics", "o-"),
    ("id_us", "denoc_bridge inverse_dynamics", "s-"),
    ("aba_us", "Pinocchio aba (createData needs ~64 n^3 bytes)", "^--"),
    ("mj_forward_us", "MuJoCo mj_forward (MjSpec chain, at most ~1,000 bodies deep)", "v:"),
)


def _results(results) -> dict:
    if isinstance(results, (str, Path)):
        import json

        try:
            with open(results) as f:
                return json.load(f)
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read benchmark results {results}: {exc}") from None
    if not isinstance(results, dict) or not results.get("scaling"):
        raise InputError(
            "benchmark results must be the dict (or speed.json) of benchmarks/speed.py with a non-empty 'scaling' list"
        )
    return results


def draw_scaling(ax, results) -> None:
    """Time per call against DOF (log-log) of the benchmark's ``scaling`` rows."""
    rows = _results(results)["scaling"]
    for key, label, style in _SCALING_SERIES:
        pts = [(r["nv"], r[key]) for r in rows if key in r]
        if pts:
            x, y = zip(*pts)
            ax.loglog(x, y, style, label=label)
    n = np.array([rows[0]["nv"], rows[-1]["nv"]], dtype=float)
    ax.loglog(n, 100e-3 * n, "k-", lw=0.6, alpha=0.5, label="100 ns per DOF")
    ax.set_xlabel("degrees of freedom (serial chain, revolute joints alternating x / y)")
    ax.set_ylabel("time per call from Python [us]")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)


def plot_scaling(results, path, *, size=(7.0, 5.0), dpi: float = 120) -> Path:
    """The benchmark scaling plot: ``results`` is the dict that ``benchmarks/speed.py`` (or
    ``denoc-bridge bench``, :func:`denoc_bridge.benchmarking.run`) returns and writes to
    ``speed.json``, or the path of that file."""
    results = _results(results)
    fig, ax = _figure(size)
    draw_scaling(ax[0, 0], results)
    m = results.get("machine") or {}
    if m:
        ax[0, 0].set_title(f"Time per call, {m.get('cpu', '?')}, {m.get('date', '')}", fontsize=9)
    return save_figure(fig, path, dpi=dpi)
