"""``denoc-bridge validate``: every number against Pinocchio on random states (and the
Pinocchio models the other commands compare with)."""

from __future__ import annotations

import os
import re
import sys
import warnings

import numpy as np

from denoc_bridge import validation
from denoc_bridge._text import count as _count
from denoc_bridge.cli.common import EXIT_MISMATCH, VALIDATE_MAX_BYTES, checked_seed
from denoc_bridge.errors import DenocError
from denoc_bridge.io.mjcf import is_mjcf
from denoc_bridge.io.pinocchio_io import to_pinocchio
from denoc_bridge.io.robots import load_robot, resolve_robot
from denoc_bridge.multibody.constraints import describe_loops
from denoc_bridge.multibody.mimic import MimicModel


def _depth(model) -> int:
    depth = np.zeros(model.n_links, dtype=np.int64)
    for k in range(model.n_links):
        p = int(model.parent[k])
        depth[k] = 1 if p < 0 else depth[p] + 1
    return int(depth.max()) if model.n_links else 0


def _pinocchio_bytes(model) -> float:
    """About what Pinocchio's createData allocates: 64 n^3 bytes on a chain n links deep."""
    return 64.0 * model.n_links * _depth(model) ** 2


class NativeStderr:
    """Capture what C++ code (urdfdom's parser errors) writes to file descriptor 2 while Pinocchio
    builds a model, so that a refused file gives one line, not the parser's log; ``.text`` holds it."""

    def __enter__(self):
        import tempfile

        sys.stderr.flush()
        self._file = tempfile.TemporaryFile()
        try:
            self._saved = os.dup(2)
            os.dup2(self._file.fileno(), 2)
        except OSError:  # no fd 2 (embedded interpreters): nothing to capture
            self._saved = None
        self.text = ""
        return self

    def __exit__(self, *exc):
        if self._saved is not None:
            os.dup2(self._saved, 2)
            os.close(self._saved)
        self._file.seek(0)
        self.text = self._file.read().decode(errors="replace").strip()
        self._file.close()
        return False


def _first_line(text: str) -> str:
    """The first line of a message, without urdfdom's "Error:" prefix and runs of spaces."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return " ".join(re.sub(r"^Error:\s*", "", line).split())


def _pinocchio_mimic_model(src, model):
    """(Pinocchio's mimic model, where it comes from) for a MimicModel."""
    import pinocchio as pin

    root = (pin.JointModelFreeFlyer(),) if model.floating_base else ()
    build = pin.buildModelFromUrdf if src.path is not None else pin.buildModelFromXML
    try:
        with warnings.catch_warnings(), NativeStderr() as native:
            warnings.simplefilter("ignore")
            return build(src.urdf, *root, mimic=True), "pin.buildModelFromUrdf(mimic=True)"
    except Exception as exc:
        refused = _first_line(str(exc)) or _first_line(native.text) or type(exc).__name__
    try:
        return to_pinocchio(model), f"to_pinocchio (Pinocchio's URDF parser refuses this file: {refused})"
    except Exception as exc:
        raise DenocError(
            f"Pinocchio cannot build the mimic model of '{model.name}' ({refused}; to_pinocchio: "
            f"{exc}); simulate --no-validate runs without the check"
        ) from None


def pinocchio_model(src, model):
    """(Pinocchio model or None for ``to_pinocchio``, where it comes from)."""
    import pinocchio as pin

    if src.path is not None and is_mjcf(src.path):
        return to_pinocchio(model), "to_pinocchio (an MJCF file; 'denoc-bridge validate' checks it against MuJoCo)"
    if isinstance(model, MimicModel):
        return _pinocchio_mimic_model(src, model)
    if src.build is not None and not model.floating_base:
        return None, "to_pinocchio (a generated model)"
    root = pin.JointModelFreeFlyer() if model.floating_base else None
    try:
        with NativeStderr() as native:
            if src.path is None:
                pm = pin.buildModelFromXML(src.urdf, root) if root else pin.buildModelFromXML(src.urdf)
            else:
                pm = pin.buildModelFromUrdf(src.urdf, root) if root else pin.buildModelFromUrdf(src.urdf)
        return pm, "pin.buildModelFromUrdf"
    except Exception as exc:
        why = _first_line(native.text) or _first_line(str(exc))
        return to_pinocchio(model), (
            "to_pinocchio (Pinocchio's URDF parser refuses this file" + (f": {why}" if why else "") + ")"
        )


def too_big_for_pinocchio(model, limit: float) -> str:
    need = _pinocchio_bytes(model)
    if need <= limit:
        return ""
    return (
        f"Pinocchio's createData needs about 64 n^3 bytes on a chain n links deep: '{model.name}' "
        f"({model.n_links} links, {_depth(model)} deep) would take ~{need / 2**30:.3g} GB"
    )


def report_table(report) -> None:
    """The validation report as a rich table (plain text when the output is not a terminal)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 100)
    table = Table(
        title=f"{report.model_name}: nv = {report.nv}, {_count(report.samples, 'random state')}, "
        f"tolerance {report.tolerance:g}",
        box=box.SIMPLE_HEAVY,
        title_justify="left",
    )
    table.add_column("quantity")
    table.add_column(report.engine)
    table.add_column("max rel. error", justify="right")
    with_exact = report.with_exact  # ill-conditioned only
    if with_exact:
        table.add_column("vs exact", justify="right")
    table.add_column("result")
    notes = []
    for c in report.checks:
        exact = "" if c.max_error_vs_exact is None else f"{c.max_error_vs_exact:.1e}"
        result = "[green]ok[/green]" if c.passed else "[bold red]MISMATCH[/bold red]"
        mark = ""
        if c.notes:
            notes.append((c.quantity, list(dict.fromkeys(c.notes))))
            mark = f" ({len(notes)})"
        cells = (f"{c.max_error:.1e}", exact) if with_exact else (f"{c.max_error:.1e}",)
        table.add_row(c.quantity + mark, c.reference, *cells, result)
    console.print(table)
    for i, (quantity, lines) in enumerate(notes, start=1):
        for line in lines:
            console.print(f"  ({i}) {quantity}: {line}", markup=False)


def validate_command(args) -> int:

    if args.samples < 1:
        raise DenocError(f"--samples must be at least 1, got {args.samples}")
    if not args.tol > 0:
        raise DenocError(f"--tol must be positive, got {args.tol}")
    checked_seed(args.seed)
    src = resolve_robot(args.robot)
    model = load_robot(args.robot, floating_base=args.floating, mimic=args.mimic)
    if src.path is not None and is_mjcf(src.path):
        return _validate_mjcf(src.path, model, args)
    too_big = too_big_for_pinocchio(model, VALIDATE_MAX_BYTES)
    if too_big:
        raise DenocError(f"{too_big}; validate a shorter chain (the algorithms do not depend on the length)")
    pm, origin = pinocchio_model(src, model)
    report = validation.compare_with_pinocchio(model, pm, samples=args.samples, seed=args.seed, tol=args.tol)
    print(f"Pinocchio model from {origin}" + (" (the tree: loop closures cut)" if model.loops else ""))
    report_table(report)
    print("all checks passed" if report.passed else "MISMATCH")
    return 0 if report.passed else EXIT_MISMATCH


def _validate_mjcf(path: str, model, args) -> int:
    """An MJCF file: against MuJoCo (the reference for what the file means), then against
    ``pin.buildModelFromMJCF`` where Pinocchio's parser loads the file into the same layout; a
    Pinocchio that disagrees with us, who agree with MuJoCo, disagrees with MuJoCo: named, and
    not counted as a failure."""
    report = validation.compare_with_mujoco(model, samples=args.samples, seed=args.seed, tol=max(args.tol, 1e-8))
    report_table(report)
    ok = report.passed
    tree = model.tree if isinstance(model, MimicModel) else model
    held = [_count(len(model.mimic), "mimic relation")] if isinstance(model, MimicModel) else []
    if tree.loops:
        held.append(describe_loops(tree.loops))
    if held:
        print(f"(compared: the tree, without its {' and '.join(held)}, as MuJoCo with its equalities disabled)")
    pm, why = _pinocchio_from_mjcf(path, tree)
    if pm is None:
        print(f"Pinocchio: not compared ({why})")
    else:
        dyn = ("inverse_dynamics", "mass_matrix", "forward_dynamics", "inverse_mass_matrix")
        pin_report = validation.compare_with_pinocchio(
            tree, pm, samples=args.samples, seed=args.seed, tol=args.tol, quantities=dyn
        )
        if pin_report.passed or not ok:
            print("Pinocchio model from pin.buildModelFromMJCF")
            report_table(pin_report)
            ok = ok and pin_report.passed
        else:
            worst = max(pin_report.checks, key=lambda c: c.max_error)
            print(
                f"Pinocchio: pin.buildModelFromMJCF disagrees with MuJoCo's compiler ({worst.quantity} off by "
                f"{worst.max_error:.1e} relative, where denoc_bridge agrees with MuJoCo): not a reference here"
            )
    print("all checks passed" if ok else "MISMATCH")
    return 0 if ok else EXIT_MISMATCH


def _pinocchio_from_mjcf(path: str, tree) -> tuple:
    """(``pin.buildModelFromMJCF(path)``, "") when it loads with our q/v layout, else (None, why)."""
    import pinocchio as pin

    try:
        with warnings.catch_warnings(), NativeStderr() as native:
            warnings.simplefilter("ignore")
            pm = pin.buildModelFromMJCF(path)
    except Exception as exc:
        return None, "its MJCF parser refuses the file: " + (
            _first_line(str(exc)) or _first_line(native.text) or type(exc).__name__
        )
    if (pm.nq, pm.nv) != (tree.nq, tree.nv):
        return None, f"its MJCF parser gives nq = {pm.nq}, nv = {pm.nv} where MuJoCo has {tree.nq}, {tree.nv}"
    return pm, ""
