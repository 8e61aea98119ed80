"""Cross-validation of denoc_bridge against Pinocchio (and MuJoCo).

:func:`compare_with_pinocchio` evaluates both libraries on the same random
states and reports, per quantity, the relative error
``max|ours - pinocchio| / max|pinocchio|``:

| denoc_bridge              | Pinocchio                              |
|---------------------------|----------------------------------------|
| ``inverse_dynamics``      | ``pin.rnea`` (random q, v, a)          |
| ``mass_matrix``           | ``pin.crba``                           |
| ``forward_dynamics``      | ``pin.aba`` (tau from ``pin.rnea``)    |
| ``inverse_mass_matrix``   | ``pin.computeMinverse``                |
| ``forward_kinematics``    | ``data.oMi``                           |
| ``link_velocities``       | ``data.v`` (``pin.forwardKinematics``) |

A :class:`~denoc_bridge.constraints.mimic.MimicModel` is compared with Pinocchio's mimic model
(``pin.buildModelFromUrdf(path, mimic=True)``), whose ``aba`` and ``computeMinverse``
refuse it.  Its ``crba`` cannot be the reference either: in Pinocchio 4.1 it misses
couplings when a mimic joint's link has two or more child joints, and a second call
with the same ``Data`` adds onto the off-diagonal when a joint hangs below a mimic joint
that is a child of its own mimicked joint (:func:`pin_mimic_mass_matrix` shows both).
The GIM is therefore compared with the columns of Pinocchio's ``rnea``,
``M e_j = rnea(q, 0, e_j) - rnea(q, 0, 0)``, forward dynamics with ``solve(M, tau -
pin.nonLinearEffects)`` and the inverse GIM with ``inv(M)``.

Forward dynamics and the inverse GIM solve with ``I(q)``; when ``I`` is badly
conditioned (kappa up to 4e9 on iCub with a free-flyer), the last-bit
differences between the two libraries' ``I`` and bias forces (which agree to
1e-15) are amplified by kappa, and two correct float64 solvers then differ by
more than the tolerance.  In that case only, each library is compared with the
exact solution of its own ``I a = phi``, computed by iterative refinement with
extended-precision residuals; the check passes when both problems agree to the
tolerance, denoc_bridge is within the tolerance of its exact solution (or no further
from it than Pinocchio is from its own), and the
disagreement stays within the perturbation bound (:func:`solve_agreement`).  When an articulated inertia is
singular, the check passes if denoc_bridge raises
:class:`~denoc_bridge.errors.SingularInertiaError` and Pinocchio returns
non-finite numbers.

:func:`compare_with_mujoco` checks a model loaded from MJCF against MuJoCo itself: the GIM
against ``mj_fullM`` (armature included), the bias forces against ``qfrc_bias`` and forward
dynamics against ``qacc`` of ``mj_forward`` with contacts, limits, equality constraints,
actuation and passive forces disabled, every vector converted in
:mod:`denoc_bridge.io.mujoco_layout`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from denoc_bridge._text import count
from denoc_bridge.algorithms.configuration import random_configuration
from denoc_bridge.algorithms.kinematics import forward_kinematics, link_velocities
from denoc_bridge.dynamics import (
    forward_dynamics,
    inverse_dynamics,
    inverse_mass_matrix,
    mass_matrix,
    nonlinear_effects,
)
from denoc_bridge.errors import InputError, SingularInertiaError
from denoc_bridge.io import mujoco_layout as mjl
from denoc_bridge.io.mjcf import import_mujoco
from denoc_bridge.io.pinocchio_io import to_pinocchio
from denoc_bridge.multibody.checks import check_model as _check_model
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.model import Model

# Pinocchio ships no type stubs: its models are typed Any here

__all__ = [
    "compare_with_pinocchio",
    "compare_with_mujoco",
    "QUANTITIES",
    "ValidationReport",
    "Check",
    "relative_error",
    "exact_solve",
    "solve_agreement",
    "pin_mimic_mass_matrix",
]


def pin_mimic_mass_matrix(pm: Any, q: npt.ArrayLike) -> np.ndarray:
    """The GIM of a Pinocchio model from its ``rnea``: column j is ``rnea(q, 0, e_j) -
    rnea(q, 0, 0)`` (nv + 1 calls, each on a fresh ``Data``).

    The reference for mimic models (``pin.buildModelFromUrdf(path, mimic=True)``): Pinocchio
    4.1's ``crba`` of such a model is wrong when a mimic joint's link has two or more child
    joints (it leaves out the coupling of the mimicked joint with all but one of them), and,
    called twice with one ``Data``, when a joint hangs below a mimic joint that is a child of
    the joint it mimics; its ``rnea`` is right on both (it equals ``G^T rnea_tree``).
    """
    import pinocchio as pin

    zero = np.zeros(pm.nv)
    bias = pin.rnea(pm, pm.createData(), q, zero, zero).copy()
    M = np.empty((pm.nv, pm.nv))
    for j in range(pm.nv):
        e = np.zeros(pm.nv)
        e[j] = 1.0
        M[:, j] = pin.rnea(pm, pm.createData(), q, zero, e) - bias
    return 0.5 * (M + M.T)


def relative_error(x: npt.ArrayLike, ref: npt.ArrayLike) -> float:
    """``max|x - ref| / max|ref|`` (0 for empty arrays).

    A NaN on either side, or an infinity the other side does not share, is infinitely far:
    the result is ``inf``, so that ``error > tol`` and ``max(errors)`` both see it (a NaN
    error would compare False with everything and pass silently).
    """
    xa, ra = np.asarray(x, dtype=float), np.asarray(ref, dtype=float)
    if ra.size == 0:
        return 0.0
    finite = np.isfinite(xa) & np.isfinite(ra)
    if not finite.all():
        if not np.array_equal(xa[~finite], ra[~finite]):  # NaN != NaN; +inf == +inf
            return float("inf")
        xa, ra = xa[finite], ra[finite]
        if ra.size == 0:
            return 0.0
    scale = float(np.abs(ra).max())
    return float(np.abs(xa - ra).max() / scale) if scale > 0 else float(np.abs(xa).max())


def exact_solve(M: npt.ArrayLike, b: npt.ArrayLike, iterations: int = 6) -> np.ndarray:
    """Solution of ``M x = b`` refined with residuals in extended precision (``np.longdouble``).

    On platforms where ``longdouble`` is ``double`` this is ordinary refinement.
    """
    Mf = np.asarray(M, dtype=float)
    bf = np.asarray(b, dtype=float)
    x = np.linalg.solve(Mf, bf)
    Ml, bl = Mf.astype(np.longdouble), bf.astype(np.longdouble)
    for _ in range(iterations):
        r = (bl - Ml @ x.astype(np.longdouble)).astype(float)
        x = x + np.linalg.solve(Mf, r)
    return x


@dataclass
class Check:
    """Outcome of one quantity over all samples."""

    quantity: str
    reference: str
    max_error: float = 0.0
    max_error_vs_exact: float | None = None
    condition_number: float = 0.0
    passed: bool = True
    notes: list[str] = field(default_factory=list)


@dataclass
class ValidationReport:
    """Per-quantity results of :func:`compare_with_pinocchio` (or :func:`compare_with_mujoco`)."""

    model_name: str
    nv: int
    samples: int
    tolerance: float
    checks: list[Check]
    engine: str = "Pinocchio"

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def with_exact(self) -> bool:
        """Whether a check compared ours with the exact solution of its own ill-conditioned
        problem (the tables' "vs exact" column, shown only then)."""
        return any(c.max_error_vs_exact is not None for c in self.checks)

    def table(self) -> str:
        """A plain-text table of the checks."""
        with_exact = self.with_exact
        head = f"{'quantity':<22} {self.engine:<24} {'max rel. error':>15}" + (
            f" {'vs exact':>10}" if with_exact else ""
        )
        head += "  result"
        states = count(self.samples, "random state")
        lines = [f"{self.model_name}: nv = {self.nv}, {states}, tolerance {self.tolerance:g}", head, "-" * len(head)]
        for c in self.checks:
            exact = "" if c.max_error_vs_exact is None else f"{c.max_error_vs_exact:.1e}"
            lines.append(
                f"{c.quantity:<22} {c.reference:<24} {c.max_error:>15.1e}"
                + (f" {exact:>10}" if with_exact else "")
                + f"  {'ok' if c.passed else 'MISMATCH'}"
            )
            lines.extend(f"    {n}" for n in dict.fromkeys(c.notes))
        return "\n".join(lines)


def solve_agreement(
    ours: npt.ArrayLike,
    pin_value: npt.ArrayLike,
    M_ours: npt.ArrayLike,
    rhs_ours: npt.ArrayLike,
    M_pin: npt.ArrayLike,
    rhs_pin: npt.ArrayLike,
    tol: float = 1e-9,
) -> tuple[bool, dict[str, Any]]:
    """Do two solutions of ``I x = rhs`` agree, given the conditioning of ``I``?

    Returns ``(passed, info)``.  Within ``tol`` of each other: passed.  Otherwise the
    disagreement is accepted only if (1) the two problems agree (``M`` and ``rhs``
    within ``tol``), (2) ours is within ``tol`` of the exact solution of its own
    problem, or no further from it than Pinocchio's is from the exact solution of its
    own (a backward-stable solver's forward error grows like kappa eps: at kappa = 4e9
    that is 1e-6, and neither library is bound by 1e-9 there), and (3) the disagreement is no larger than first-order perturbation
    theory allows: ``tol + 10 sqrt(n) kappa (e_M + e_rhs + eps)`` plus Pinocchio's
    own distance to the exact solution of its problem.  Non-finite values anywhere, or an
    ``I`` singular to working precision (no exact solution to measure against), fail with
    ``info["reason"]`` saying which.
    """
    info: dict[str, Any] = dict(error=relative_error(ours, pin_value))
    if info["error"] <= tol:
        return True, info
    n = max(1, np.asarray(M_pin).shape[0])
    e_M, e_rhs = relative_error(M_ours, M_pin), relative_error(rhs_ours, rhs_pin)
    info.update(error_M=e_M, error_rhs=e_rhs)
    problems = (M_ours, rhs_ours, M_pin, rhs_pin)
    if not (np.isfinite(info["error"]) and all(np.all(np.isfinite(x)) for x in problems)):
        info.update(allowed=tol, reason="non-finite values")  # agree with nothing
        return False, info
    kappa = float(np.linalg.cond(np.asarray(M_pin)))
    try:
        exact_ours, exact_pin = exact_solve(M_ours, rhs_ours), exact_solve(M_pin, rhs_pin)
    except np.linalg.LinAlgError:  # singular to working precision
        info.update(kappa=np.inf, allowed=tol, reason="I is singular to working precision")
        return False, info
    info.update(
        kappa=kappa, ours_vs_exact=relative_error(ours, exact_ours), pin_vs_exact=relative_error(pin_value, exact_pin)
    )
    allowed = tol + 10 * np.sqrt(n) * kappa * (e_M + e_rhs + np.finfo(float).eps) + info["pin_vs_exact"]
    info["allowed"] = allowed
    accurate = info["ours_vs_exact"] <= max(tol, info["pin_vs_exact"])
    passed = e_M <= tol and e_rhs <= tol and accurate and info["error"] <= allowed
    return passed, info


def _finite_word(x: npt.ArrayLike) -> str:
    return "finite" if np.all(np.isfinite(x)) else "NOT finite"


def _solve_check(
    check: Check,
    ours: npt.ArrayLike,
    pin_value: npt.ArrayLike,
    problems: Callable[[], tuple[npt.ArrayLike, npt.ArrayLike, npt.ArrayLike, npt.ArrayLike]],
    tol: float,
) -> None:
    """Record one solution of ``I x = rhs`` against Pinocchio's; ``problems()`` gives (M_ours,
    rhs_ours, M_pin, rhs_pin), asked for only when the two solutions differ by more than
    ``tol`` (:func:`solve_agreement` then weighs the conditioning)."""
    error = relative_error(ours, pin_value)
    if error <= tol:
        check.max_error = max(check.max_error, error)
        return
    passed, info = solve_agreement(ours, pin_value, *problems(), tol)
    check.max_error = max(check.max_error, info["error"])
    if "reason" in info:
        check.notes.append(f"{info['reason']}: denoc_bridge {_finite_word(ours)}, Pinocchio {_finite_word(pin_value)}")
    elif "kappa" in info:
        check.condition_number = max(check.condition_number, info["kappa"])
        check.max_error_vs_exact = max(check.max_error_vs_exact or 0.0, info["ours_vs_exact"])
        check.notes.append(
            f"kappa(I) = {info['kappa']:.1e}: round-off of I and of the bias, amplified by kappa, separates "
            "the two libraries; each is compared with the exact solution of its own I "
            f"(denoc_bridge {info['ours_vs_exact']:.1e}, Pinocchio {info['pin_vs_exact']:.1e})"
        )
    if not passed:
        check.passed = False


#: the quantities :func:`compare_with_pinocchio` can check, by the name of the function checked
QUANTITIES = (
    "inverse_dynamics",
    "mass_matrix",
    "forward_dynamics",
    "inverse_mass_matrix",
    "forward_kinematics",
    "link_velocities",
)


def compare_with_pinocchio(
    model: Model | MimicModel,
    pin_model: Any = None,
    *,
    samples: int = 3,
    seed: int = 0,
    tol: float = 1e-9,
    quantities: Iterable[str] | None = None,
) -> ValidationReport:
    """Evaluate denoc_bridge and Pinocchio on ``samples`` random states (see the module docstring).

    ``pin_model`` defaults to :func:`denoc_bridge.to_pinocchio` of ``model``;
    pass the one built by ``pin.buildModelFromUrdf`` to check the URDF loader too.  A model
    with loop closures is compared as its tree (the cut joints removed), which is what
    ``pin.buildModelFromUrdf`` builds.  ``quantities`` (default: all of :data:`QUANTITIES`)
    picks the functions checked: ``denoc-bridge simulate`` checks ``forward_dynamics`` and
    ``forward_kinematics`` only, what a simulation and its animation use (the others' kernels
    would compile on a first run for nothing).  The GIM and the bias forces that weigh an
    ill-conditioned solve (:func:`solve_agreement`) are computed only when the solutions differ
    by more than ``tol``.
    """
    _check_model(model)
    import pinocchio as pin

    wanted = QUANTITIES if quantities is None else tuple(quantities)
    unknown = [x for x in wanted if x not in QUANTITIES]
    if unknown or not wanted:
        raise InputError(
            f"quantities must be among {', '.join(QUANTITIES)}; got {', '.join(map(repr, unknown)) or 'none'}"
        )
    if getattr(model, "loops", ()):
        model = model.replace(loops=())

    pm = to_pinocchio(model) if pin_model is None else pin_model
    pd = pm.createData()
    rng = np.random.default_rng(seed)
    mimic = isinstance(model, MimicModel)  # Pinocchio's aba and computeMinverse
    every = {  # refuse mimic models
        "tau": Check("inverse_dynamics", "pin.rnea"),
        "M": Check("mass_matrix", "pin.rnea columns" if mimic else "pin.crba"),
        "a": Check("forward_dynamics", "solve(M_pin, tau - pin.nonLinearEffects)" if mimic else "pin.aba"),
        "Minv": Check("inverse_mass_matrix", "inv(M_pin)" if mimic else "pin.computeMinverse"),
        "fk": Check("forward_kinematics", "data.oMi"),
        "lv": Check("link_velocities", "data.v"),
    }
    checks = {key: c for key, c in every.items() if c.quantity in wanted}

    def plain(key: str, ours: npt.ArrayLike, ref: npt.ArrayLike) -> None:
        e = relative_error(ours, ref)
        checks[key].max_error = max(checks[key].max_error, e)
        if e > tol:
            checks[key].passed = False
        if e == np.inf:
            checks[key].notes.append(
                f"non-finite values: denoc_bridge {_finite_word(ours)}, Pinocchio {_finite_word(ref)}"
            )

    for _ in range(samples):
        q = random_configuration(model, rng)
        v = rng.standard_normal(model.nv)
        a = rng.standard_normal(model.nv)
        tau_pin = pin.rnea(pm, pd, q, v, a).copy()  # Pinocchio returns views of its Data
        if "tau" in checks:
            plain("tau", inverse_dynamics(model, q, v, a), tau_pin)
        M_pin = pin_mimic_mass_matrix(pm, q) if mimic else pin.crba(pm, pd, q).copy()
        if "M" in checks:
            plain("M", mass_matrix(model, q), M_pin)
        if "fk" in checks or "lv" in checks:
            pin.forwardKinematics(pm, pd, q, v)  # data.oMi and data.v
        if "fk" in checks:
            R, p = forward_kinematics(model, q)
            for k in range(model.n_links):
                plain(
                    "fk",
                    np.concatenate([R[k].ravel(), p[k]]),
                    np.concatenate([pd.oMi[k + 1].rotation.ravel(), pd.oMi[k + 1].translation]),
                )
        if "lv" in checks:
            plain("lv", link_velocities(model, q, v), np.array([pd.v[k + 1].vector for k in range(model.n_links)]))
        if "a" not in checks and "Minv" not in checks:
            continue
        if mimic:
            nle = pin.nonLinearEffects(pm, pd, q, v).copy()
            try:
                a_pin, Minv_pin = np.linalg.solve(M_pin, tau_pin - nle), np.linalg.inv(M_pin)
            except np.linalg.LinAlgError:  # a singular coupled GIM (a massless link moved by a mimic joint)
                a_pin, Minv_pin = np.full(model.nv, np.nan), np.full((model.nv, model.nv), np.nan)
        else:
            a_pin = pin.aba(pm, pd, q, v, tau_pin).copy()
            Minv_pin = pin.computeMinverse(pm, pd, q).copy()
        try:
            a_ours = forward_dynamics(model, q, v, tau_pin) if "a" in checks else None
            Minv_ours = inverse_mass_matrix(model, q) if "Minv" in checks else None
        except SingularInertiaError as exc:
            for key, value in (("a", a_pin), ("Minv", Minv_pin)):
                if key not in checks:
                    continue
                finite = bool(np.all(np.isfinite(value)))
                checks[key].notes.append(
                    f"singular articulated inertia at joint '{exc.joint}': denoc_bridge raises "
                    f"SingularInertiaError, Pinocchio returns {'finite' if finite else 'non-finite'} values"
                )
                if finite:
                    checks[key].passed = False
            continue
        eye = np.eye(model.nv)

        # called within this iteration (the closures read its q, v, ...), only when the solutions differ
        def forward_problem() -> tuple[npt.ArrayLike, npt.ArrayLike, npt.ArrayLike, npt.ArrayLike]:
            nle_pin = pin.nonLinearEffects(pm, pd, q, v).copy()
            return mass_matrix(model, q), tau_pin - nonlinear_effects(model, q, v), M_pin, tau_pin - nle_pin

        def inverse_problem() -> tuple[npt.ArrayLike, npt.ArrayLike, npt.ArrayLike, npt.ArrayLike]:
            return mass_matrix(model, q), eye, M_pin, eye

        if a_ours is not None:
            _solve_check(checks["a"], a_ours, a_pin, forward_problem, tol)
        if Minv_ours is not None:
            _solve_check(checks["Minv"], Minv_ours, Minv_pin, inverse_problem, tol)
    return ValidationReport(model.name, model.nv, samples, tol, list(checks.values()))


Problem = tuple[npt.ArrayLike, npt.ArrayLike, npt.ArrayLike, npt.ArrayLike]


def _given(M: npt.ArrayLike, rhs: npt.ArrayLike, M_ref: npt.ArrayLike, rhs_ref: npt.ArrayLike) -> Callable[[], Problem]:
    """The ``problems`` argument of :func:`_solve_check` for problems already computed."""
    return lambda: (M, rhs, M_ref, rhs_ref)


def _disable_flags(mj: Any) -> int:
    """MuJoCo's flags that leave the smooth dynamics: no contacts, limits, equalities, friction
    loss, actuation, springs or dampers (passive forces)."""
    b = mj.mjtDisableBit
    flags = 0
    for name in ("CONTACT", "LIMIT", "EQUALITY", "FRICTIONLOSS", "CONSTRAINT", "ACTUATION", "SPRING", "DAMPER"):
        flags |= int(getattr(b, f"mjDSBL_{name}"))
    return flags


def compare_with_mujoco(
    model: Model | MimicModel,
    mj_model: Any = None,
    *,
    samples: int = 3,
    seed: int = 0,
    tol: float = 1e-8,
) -> ValidationReport:
    """Evaluate denoc_bridge and MuJoCo on ``samples`` random states (see the module docstring).

    ``mj_model`` (a ``mujoco.MjModel``) defaults to MuJoCo's compilation of ``model.source``
    (the MJCF file :func:`~denoc_bridge.load_mjcf` read).  Constrained models are compared
    as their trees (MuJoCo's equality constraints disabled).  The errors are relative
    (:func:`relative_error`) and measured in MuJoCo's layout:

    ==================  ==============================================================
    ``mass_matrix``     ``mj_fullM`` vs ``T^T M T``
    ``bias_forces``     ``qfrc_bias`` vs ``inverse_dynamics`` at the acceleration that
                        is MuJoCo's ``qacc = 0``
    ``forward_dynamics`` ``qacc`` vs ``forward_dynamics`` of ``qfrc_applied`` (random)
    ==================  ==============================================================

    An ill-conditioned GIM is weighed as in :func:`compare_with_pinocchio`.  MuJoCo's
    ``opt.disableflags`` is restored on return.

    Raises
    ------
    InputError
        No ``mj_model`` and the model does not come from an MJCF file, or the two models'
        ``nq``/``nv`` differ.
    ModelError
        ``mujoco`` is not installed (naming the extra), or the model has joints MuJoCo has not.
    """
    _check_model(model)
    mj = import_mujoco()
    tree = model.tree if isinstance(model, MimicModel) else model
    if tree.loops:
        tree = tree.replace(loops=())
    if mj_model is None:
        src = tree.source
        if not (isinstance(src, str) and src.lower().endswith(".xml")):
            raise InputError(f"compare_with_mujoco: model '{tree.name}' does not come from an MJCF file; pass mj_model")
        mj_model = mj.MjModel.from_xml_path(src)
    if (mj_model.nq, mj_model.nv) != (tree.nq, tree.nv):
        raise InputError(
            f"compare_with_mujoco: MuJoCo's model has nq = {mj_model.nq}, nv = {mj_model.nv}, "
            f"'{tree.name}' has nq = {tree.nq}, nv = {tree.nv}"
        )
    checks = {
        "M": Check("mass_matrix", "mj_fullM"),
        "b": Check("bias_forces", "qfrc_bias"),
        "a": Check("forward_dynamics", "qacc (mj_forward)"),
    }
    saved = int(mj_model.opt.disableflags)
    mj_model.opt.disableflags = saved | _disable_flags(mj)
    try:
        d = mj.MjData(mj_model)
        rng = np.random.default_rng(seed)
        zero = np.zeros(tree.nv)
        for _ in range(samples):
            q = random_configuration(tree, rng)
            v = rng.standard_normal(tree.nv)
            d.qpos[:] = mjl.q_to_mujoco_qpos(tree, q)
            d.qvel[:] = mjl.v_to_mujoco_qvel(tree, q, v)
            d.qfrc_applied[:] = rng.standard_normal(tree.nv)
            d.xfrc_applied[:] = 0.0
            mj.mj_forward(mj_model, d)
            M_mj = np.zeros((tree.nv, tree.nv))
            mj.mj_fullM(mj_model, d, M_mj)
            M_ours = mjl.mass_matrix_to_mujoco(tree, q, mass_matrix(tree, q))
            bias_ours = mjl.tau_to_mujoco_force(
                tree, q, inverse_dynamics(tree, q, v, mjl.mujoco_qacc_to_a(tree, q, v, zero))
            )
            bias_mj, qfrc, qacc = d.qfrc_bias.copy(), d.qfrc_applied.copy(), d.qacc.copy()
            for key, ours, ref in (("M", M_ours, M_mj), ("b", bias_ours, bias_mj)):
                e = relative_error(ours, ref)
                checks[key].max_error = max(checks[key].max_error, e)
                checks[key].passed &= e <= tol
            try:
                a = forward_dynamics(tree, q, v, mjl.mujoco_force_to_tau(tree, q, qfrc))
            except SingularInertiaError as exc:
                checks["a"].notes.append(f"singular articulated inertia at joint '{exc.joint}'")
                checks["a"].passed = False
                continue
            problem = _given(M_ours, qfrc - bias_ours, M_mj, qfrc - bias_mj)
            _solve_check(checks["a"], mjl.a_to_mujoco_qacc(tree, q, v, a), qacc, problem, tol)
    finally:
        mj_model.opt.disableflags = saved
    return ValidationReport(tree.name, tree.nv, samples, tol, list(checks.values()), engine="MuJoCo")
