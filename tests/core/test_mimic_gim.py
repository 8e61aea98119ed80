"""The compiled inverse GIM of a model with mimic joints (denoc_bridge/core/mimic_gim.pxi,
``mimic_inverse_mass_matrix``; it replaced numba's kernels/gim_mimic.py, matched to 3.1e-15 and
bit for bit on panda and baxter) against the inverse of the reduced GIM ``G^T M G`` (a dense
solve of db.mass_matrix, itself checked against Pinocchio's crba of the mimic model in
tests/constraints/test_mimic.py); the statuses of maps, lengths and values that do not fit
(nothing read out of bounds) and the TypeError of arrays of another kind."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from conftest import erd_robot_dir

import denoc_bridge as db
from denoc_bridge.constraints.mimic import _entry
from denoc_bridge.core import tree as cy
from tests.constraints.test_mimic import GRIPPER, J, L, R

#: a chain of continuous mimic joints: (cos, sin) pairs expanded from atan2 of the mimicked pair
CONTINUOUS = R(
    L("a"), L("b"), L("c"),
    J("j1", "w", "a", "continuous"),
    J("j2", "a", "b", "continuous", mimic=("j1", -1.5, 0.2)),
    J("j3", "b", "c", "continuous", mimic=("j2", 0.5, 0.0), axis="1 0 0"),
)  # fmt: skip
ROBOTS = {
    "panda": ("panda_description/urdf/panda.urdf", False),
    "pr2": ("pr2_description/urdf/pr2.urdf", True),
}


def model_of(name: str) -> db.MimicModel:
    if name == "gripper":
        return db.load_urdf(GRIPPER, mimic=True)
    if name == "gripper-floating":
        return db.load_urdf(GRIPPER, floating_base=True, mimic=True)
    if name == "continuous":
        return db.load_urdf(CONTINUOUS, mimic=True)
    rel, floating = ROBOTS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return db.load_urdf(os.path.join(erd_robot_dir(), rel), floating_base=floating, mimic=True)


def call(mm: db.MimicModel, q: np.ndarray, **change) -> tuple[int, np.ndarray]:
    kt, work, im, fm, nqf, _ = _entry(mm, None)
    args = dict(kt=kt, work=work, imap=im, fmap=fm, nqf=nqf, qr=q, out=np.full((mm.nv, mm.nv), 7.0))
    args.update(change)
    status = cy.mimic_inverse_mass_matrix(*args.values())
    return status, args["out"]


@pytest.mark.parametrize("name", ["gripper", "gripper-floating", "continuous", "panda", "pr2"])
def test_it_inverts_the_reduced_gim(name):
    mm = model_of(name)
    assert mm.n_constraints > 0
    rng = np.random.default_rng(3)
    for _ in range(4):
        q = db.random_configuration(mm, rng)
        status, got = call(mm, q)
        want = np.linalg.inv(db.mass_matrix(mm, q))
        assert status == 0
        assert np.abs(got - want).max() <= 1e-11 * np.abs(want).max()
        assert np.array_equal(got, got.T)
        assert np.array_equal(db.inverse_mass_matrix(mm, q), got)  # the public call takes it
        _, without_work = call(mm, q, work=np.zeros((0, 8)))  # an empty work: its own
        assert np.array_equal(without_work, got)


def test_maps_lengths_and_values_that_do_not_fit_get_a_status():
    mm = model_of("gripper-floating")
    kt, work, im, fm, nqf, _ = _entry(mm, None)
    q = db.random_configuration(mm, np.random.default_rng(0))
    nq, nv, nc = im[0], im[1], im[2]
    o = 4 + nq + nv  # s_q, m_q, s_v, m_v, circ, col
    bad_maps = []
    for at, value in [(0, nq + 1), (2, -1), (3, im[3] + 1), (4, nqf), (4 + nq, mm.tree.nv), (o, nqf),
                      (o + nc, -1), (o + 2 * nc, mm.tree.nv), (o + 3 * nc, -3)]:  # fmt: skip
        changed = im.copy()
        changed[at] = value
        bad_maps.append(changed)
    for changed in [*bad_maps, im[:-1].copy()]:
        status, out = call(mm, q, imap=changed)
        assert status == -2 and np.all(out == 7.0), changed
    for change in [dict(fmap=fm[:-1].copy()), dict(nqf=nqf + 1), dict(qr=q[:-1].copy()),
                   dict(out=np.zeros((mm.nv, mm.nv + 1))), dict(work=np.zeros((3, 8))), dict(kt=kt[:, :-2].copy())]:  # fmt: skip
        status, _ = call(mm, q, **change)
        assert status == -2, change
    nan, zero_quaternion = q.copy(), q.copy()
    nan[5] = np.nan
    zero_quaternion[3:7] = 0.0
    for bad in (nan, zero_quaternion):
        assert call(mm, bad)[0] == -1


def test_dependent_mimic_rows_are_refused():
    """Two equal mimic rows: K M^-1 K^T is singular, -4 (the Python layer then solves densely)."""
    mm = model_of("gripper")
    kt, work, im, fm, nqf, _ = _entry(mm, None)
    nq, nv, nc = im[0], im[1], im[2]
    o = 4 + nq + nv
    im2, fm2 = im.copy(), fm.copy()
    for block in range(5):  # s_q, m_q, s_v, m_v, circ: row 1 := row 0
        im2[o + block * nc + 1] = im2[o + block * nc]
    fm2[1], fm2[nc + 1] = fm2[0], fm2[nc]
    q = db.random_configuration(mm, np.random.default_rng(1))
    assert call(mm, q, imap=im2, fmap=fm2)[0] == -4


def test_arrays_of_another_kind_raise_type_errors():
    mm = model_of("gripper")
    kt, work, im, fm, nqf, _ = _entry(mm, None)
    q = db.random_configuration(mm, np.random.default_rng(0))
    frozen = np.zeros((mm.nv, mm.nv))
    frozen.flags.writeable = False
    for change, culprit in [(dict(imap=im.astype(np.int32)), "imap"), (dict(fmap=list(fm)), "fmap"),
                            (dict(qr=q.astype(np.float32)), "qr"), (dict(out=frozen), "out")]:  # fmt: skip
        with pytest.raises(TypeError, match=culprit):
            call(mm, q, **change)
