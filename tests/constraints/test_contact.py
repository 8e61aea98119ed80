"""Contact rows and the Delassus operator G = J M^-1 J^T (by the O(n) articulated solve)
against Pinocchio's computeDelassusMatrix and its joint Jacobians, on solo12 and talos feet
and on random trees of every joint type."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from conftest import random_trees
from hypothesis import given
from hypothesis import strategies as st

import denoc_bridge as db
from denoc_bridge.constraints.contact import ContactSet, contact_rows, delassus_matrix, lifted, lowest_point
from denoc_bridge.constraints.loop_kinematics import loop_jacobian
from denoc_bridge.constraints.loops import project_configuration
from denoc_bridge.errors import InputError
from denoc_bridge.io import generators
from denoc_bridge.multibody.contact import ContactPoint, Ground, contact_point
from denoc_bridge.spatial import skew

RTOL = 1e-10


def pinocchio_reference(model, q, points, ground, contacts):
    """(J, G) of the same point contacts by Pinocchio: RigidConstraintModel CONTACT_3D in the
    contact frame (t1, t2, n) at the contact point, computeDelassusMatrix; the rows from the
    LOCAL joint Jacobians shifted to the point and turned into the contact frame."""
    pm = db.to_pinocchio(model)
    pd = pm.createData()
    pin.computeJointJacobians(pm, pd, q)
    B = ground.frame()
    cms, rows = pin.StdVec_RigidConstraintModel(), []
    for i in range(contacts.m):
        cp = points[contacts.point[i]]
        Rk = pd.oMi[cp.link + 1].rotation
        p = cp.point - cp.radius * Rk.T @ ground.normal  # the contact point in the link frame
        cms.append(
            pin.RigidConstraintModel(
                pin.ContactType.CONTACT_3D, pm, cp.link + 1, pin.SE3(Rk.T @ B, p), pin.ReferenceFrame.LOCAL
            )
        )
        J6 = np.reshape(pin.getJointJacobian(pm, pd, cp.link + 1, pin.ReferenceFrame.LOCAL), (6, model.nv))
        rows.append(B.T @ Rk @ (J6[:3] - skew(p) @ J6[3:]))
    cds = pin.StdVec_RigidConstraintData([c.createData() for c in cms])
    G = pin.computeDelassusMatrix(pm, pm.createData(), q, cms, cds)
    return np.vstack(rows), G


def rel(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


def random_configuration(model, rng):
    q = db.neutral_configuration(model)
    return db.integrate(model, q, rng.uniform(-1.0, 1.0, model.nv))


@pytest.mark.parametrize("seed", [0, 1])
def test_solo12_feet_match_pinocchio(seed):
    solo = db.load_robot("solo12")
    rng = np.random.default_rng(seed)
    q = random_configuration(solo, rng)
    feet = [contact_point(solo, f, radius=0.015, margin=10.0) for f in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")]
    ground = Ground(normal=(0.1, -0.2, 1.0), height=-2.0, mu=0.7)
    G, c = delassus_matrix(solo, q, feet, ground)
    assert c.m == 4 and G.shape == (12, 12)
    J_pin, G_pin = pinocchio_reference(solo, q, feet, ground, c)
    assert rel(c.J, J_pin) < RTOL
    assert rel(G, G_pin) < RTOL
    np.testing.assert_array_equal(G, G.T)


def test_talos_soles_match_pinocchio():
    talos = db.load_robot("talos")
    rng = np.random.default_rng(3)
    q = random_configuration(talos, rng)
    corners = [(sx * 0.1, sy * 0.05, 0.0) for sx in (-1, 1) for sy in (-1, 1)]
    soles = [contact_point(talos, s, p, margin=10.0) for s in ("left_sole_link", "right_sole_link") for p in corners]
    ground = Ground(height=-3.0)
    G, c = delassus_matrix(talos, q, soles, ground)
    assert c.m == 8
    J_pin, G_pin = pinocchio_reference(talos, q, soles, ground, c)
    assert rel(c.J, J_pin) < RTOL
    assert rel(G, G_pin) < RTOL


@given(model=random_trees(10, 3), seed=st.integers(0, 2**32 - 1))
def test_random_trees_match_pinocchio(model, seed):
    rng = np.random.default_rng(seed)
    q = random_configuration(model, rng)
    links = rng.choice(model.n_links, size=min(3, model.n_links), replace=False)
    points = [ContactPoint(int(k), rng.normal(size=3), float(rng.uniform(0, 0.1)), 100.0) for k in links]
    ground = Ground(normal=rng.normal(size=3) + (0.0, 0.0, 3.0), height=-50.0)
    G, c = delassus_matrix(model, q, points, ground)
    assert c.m == len(points)
    J_pin, G_pin = pinocchio_reference(model, q, points, ground, c)
    assert rel(c.J, J_pin) < RTOL
    assert rel(G, G_pin) < RTOL


def test_active_set_distances_and_points():
    """Only the points within their margin are active; distances and points are exact."""
    solo = db.load_robot("solo12")
    q = db.neutral_configuration(solo)
    R, p = db.forward_kinematics(solo, q)
    feet = [contact_point(solo, f, radius=0.01, margin=0.005) for f in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")]
    x = np.array([p[c.link] + R[c.link] @ c.point for c in feet])
    h = x[:, 2].min() - 0.01  # the lowest sphere touches, those higher than 5 mm do not
    cs = ContactSet(solo, feet, [Ground(height=h - 0.002, name="low"), Ground(height=h + 1e-3, name="high", mu=0.2)])
    c = contact_rows(solo, q, cs)
    expected = [(i, g) for i in range(4) for g, hg in enumerate((h - 0.002, h + 1e-3)) if x[i, 2] - 0.01 - hg <= 0.005]
    assert list(zip(c.point.tolist(), c.ground.tolist())) == expected and c.m >= 2
    for j in range(c.m):
        hg = (h - 0.002, h + 1e-3)[c.ground[j]]
        assert c.distance[j] == pytest.approx(x[c.point[j], 2] - 0.01 - hg, abs=1e-14)
        np.testing.assert_allclose(c.position[j], x[c.point[j]] - (0, 0, 0.01), atol=1e-14)
        assert c.mu[j] == (0.8, 0.2)[c.ground[j]]
    # normal rows: the vertical velocity of the contact point
    v = np.random.default_rng(0).normal(size=solo.nv)
    twists = db.link_velocities(solo, q, v)
    for j in range(c.m):
        cp = feet[c.point[j]]
        k = cp.link
        s = R[k].T @ (c.position[j] - p[k])
        vel = R[k] @ (twists[k, :3] + np.cross(twists[k, 3:], s))
        assert c.J[3 * j + 2] @ v == pytest.approx(vel[2], abs=1e-12)


def test_contact_rows_name_a_bad_q():
    solo = db.load_robot("solo12")
    with pytest.raises(InputError, match="q"):
        contact_rows(solo, np.zeros(3), ["FL_FOOT"], Ground())
    panda = db.load_robot("panda", mimic=True)
    with pytest.raises(InputError, match=r"q must have shape \(8,\)"):
        contact_rows(panda, np.zeros(9), ["panda_leftfinger"], Ground())


def closed_system(M, C):
    """``P = M^-1 - M^-1 C^T (C M^-1 C^T)^-1 C M^-1`` (C's independent rows): M^-1 of the
    constrained system, dense."""
    Minv = np.linalg.inv(M)
    if C.shape[0] == 0:
        return Minv
    return Minv - Minv @ C.T @ np.linalg.pinv(C @ Minv @ C.T) @ C @ Minv


@pytest.mark.parametrize("name", ["panda", "geared_fivebar"])
def test_delassus_of_a_mimic_model_is_that_of_the_reduced_system(name):
    """A MimicModel (panda's fingers: one mimic joint; the geared five-bar: two, and a loop):
    the rows on the reduced velocities ``J_r = J G`` (Pinocchio's rows of the tree), and
    ``G = J_r P J_r^T`` with ``P`` the closed system's inverse of the reduced GIM
    ``M_r = G^T M G`` (Pinocchio's crba of the tree), its loop rows ``C G``; ``Y`` the tree's
    velocity change ``G P J_r^T``, which keeps the mimic relations."""
    if name == "panda":
        model = db.load_robot("panda", mimic=True)
        q = db.random_configuration(model, 3)
        links = ["panda_leftfinger", "panda_rightfinger", "panda_link5"]
    else:
        model = generators.geared_fivebar()
        q = project_configuration(model, generators.GEARED_FIVEBAR_Q)
        links = ["finger_left_link", "finger_right_link"]
    ground = Ground(height=-5.0)
    points = [contact_point(model, link, radius=0.01, margin=10.0) for link in links]
    G, c = delassus_matrix(model, q, points, ground)
    assert c.m == len(links) and c.J.shape == (3 * c.m, model.nv)
    tree, Gm = model.tree, model.coupling_matrix()
    qt = model.expand(q)
    Jt, _ = pinocchio_reference(tree, qt, points, ground, c)
    np.testing.assert_allclose(c.J, Jt @ Gm, atol=1e-13)
    pm = db.to_pinocchio(tree)
    M = pin.crba(pm, pm.createData(), qt)
    Mr = Gm.T @ (np.triu(M) + np.triu(M, 1).T) @ Gm
    C = loop_jacobian(model, q) if model.loops else np.zeros((0, model.nv))
    P = closed_system(Mr, C)
    Jr = Jt @ Gm
    assert rel(G, Jr @ P @ Jr.T) < RTOL
    cs = ContactSet(model, points, ground)
    r = 3 * cs.active(qt)
    cs.delassus(qt, r)
    assert rel(cs.Y[:r], (Gm @ P @ Jr.T).T) < RTOL
    assert np.abs(model.constraint_matrix() @ cs.Y[:r].T).max() < 1e-12 * np.abs(cs.Y[:r]).max()


@pytest.mark.parametrize("seed", [0, 1])
def test_delassus_of_a_model_with_loops_is_that_of_the_closed_system(seed):
    """solo12 with its front feet tied by a spherical loop closure, its hind feet on the ground:
    G = J P J^T and the velocity change M_c^-1 J^T with the closed system's
    P = M^-1 - M^-1 C^T (C M^-1 C^T)^-1 C M^-1 (C the loop's rows, M Pinocchio's crba, J
    Pinocchio's rows): the loop impulses eliminated from one Delassus of the stacked rows."""
    solo = db.load_robot("solo12")
    looped = solo.replace()
    looped.add_loop_closure("cut", "spherical", "FL_FOOT", "FR_FOOT")
    q = random_configuration(looped, np.random.default_rng(seed))
    ground = Ground(height=-2.0)
    points = [contact_point(looped, f, margin=5.0) for f in ("HL_FOOT", "HR_FOOT")]
    G, c = delassus_matrix(looped, q, points, ground)
    assert c.m == 2
    J, _ = pinocchio_reference(solo, q, points, ground, c)
    pm = db.to_pinocchio(solo)
    M = pin.crba(pm, pm.createData(), q)
    Minv = np.linalg.inv(np.triu(M) + np.triu(M, 1).T)
    C = loop_jacobian(looped, q)
    assert C.shape == (3, looped.nv)
    P = Minv - Minv @ C.T @ np.linalg.solve(C @ Minv @ C.T, C @ Minv)
    assert rel(G, J @ P @ J.T) < RTOL
    cs = ContactSet(looped, points, ground)
    cs.active(q)
    cs.delassus(q, 6)
    assert rel(cs.Y[:6], (P @ J.T).T) < RTOL
    assert np.abs(C @ cs.Y[:6].T).max() < 1e-10 * np.abs(cs.Y[:6]).max()  # the loop stays closed: C dv = 0


@pytest.mark.parametrize("name", ["solo12", "panda"])
def test_lowest_point_and_lifted(name):
    """lowest_point is the smallest signed distance to the ground z = 0 that the compiled contact
    kernel finds (points with a wide margin); lifted puts it at the drop height (panda: its
    fingers with mimic joints, q reduced)."""
    model = db.load_robot(name, mimic=name == "panda")
    links = ["FL_FOOT", "HR_FOOT", "base_link"] if name == "solo12" else ["panda_leftfinger", "panda_hand"]
    points = [contact_point(model, link, radius=0.01, margin=100.0) for link in links]
    q = db.random_configuration(model, 5)
    low = lowest_point(model, q, points)
    assert low == pytest.approx(contact_rows(model, q, points, Ground()).distance.min(), abs=1e-12)
    if model.floating_base:
        up = lifted(model, q, points, 0.25)
        assert lowest_point(model, up, points) == pytest.approx(0.25, abs=1e-12)
        np.testing.assert_array_equal(up[3:], q[3:])


@pytest.mark.parametrize("name", ["solo12", "talos"])
def test_the_broad_phase_skips_no_active_point(name):
    """The links whose bounding sphere is clear of every ground are skipped (core/contact_rows.pxi
    clear_links): on the robots' thinned collision meshes, at random configurations put at random
    depths into the ground (a tilted one too), the active contacts are those of the points one
    by one (the spheres made infinite: no link skipped), row for row; and the broad phase does
    skip links at a height where some points are active."""
    from denoc_bridge.io.collision import collision_points

    model = db.load_robot(name)
    points, _ = collision_points(model)
    grounds = [Ground(), Ground(normal=(0.2, 0.0, 1.0), height=0.05, name="slope")]
    cs, brute = ContactSet(model, points, grounds), ContactSet(model, points, grounds)
    brute.lb[:, 3] = np.inf  # every link visited
    rng = np.random.default_rng(3)
    skipped = 0
    for _ in range(12):
        q = db.random_configuration(model, rng)
        low = lowest_point(model, q, points)
        q[2] -= low + rng.uniform(0.0, 0.05)  # the lowest point 0 to 5 cm below z = 0
        m, mb = cs.active(q), brute.active(q)
        assert m == mb and m > 0
        assert np.array_equal(cs.pair[:m], brute.pair[:m]) and np.array_equal(cs.dist[:m], brute.dist[:m])
        assert np.array_equal(cs.J[: 3 * m], brute.J[: 3 * m])
        R, p = db.forward_kinematics(model, q)
        centres = p + np.einsum("kij,kj->ki", R, cs.lb[:, :3])
        skipped += int(np.sum(np.isfinite(cs.lb[:, 3]) & (centres[:, 2] - cs.lb[:, 3] > cs.lb[:, 4] + 0.3)))
    assert skipped > 0
    with pytest.raises(AssertionError):  # spheres too small skip the links with active points
        cs.lb[:, 3] = -1.0
        q = db.random_configuration(model, rng)
        q[2] -= lowest_point(model, q, points) + 0.01
        assert cs.active(q) == brute.active(q)
