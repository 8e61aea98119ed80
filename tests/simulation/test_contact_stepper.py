"""Ground contact in the simulator (method "contact-euler"): physics that can fail. A box at
rest, a box sliding to a stop, a box on a slope sticking or sliding, a ball that stays, and the
kinetic energy the contact takes (never gives)."""

from __future__ import annotations

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.errors import InputError, SimulationError
from denoc_bridge.io.collision import collision_points
from denoc_bridge.multibody.contact import Ground, contact_point
from denoc_bridge.simulation.contact import simulate_contact

G0 = 9.81
MASS, A, B, C = 2.0, 0.2, 0.3, 0.1  # kg, box edges (m)
BOX = f"""<robot name="box"><link name="box"><inertial><mass value="{MASS}"/>
<inertia ixx="{MASS * (B * B + C * C) / 12}" iyy="{MASS * (A * A + C * C) / 12}" izz="{MASS * (A * A + B * B) / 12}"
 ixy="0" ixz="0" iyz="0"/></inertial>
<collision><geometry><box size="{A} {B} {C}"/></geometry></collision></link></robot>"""
BALL = """<robot name="ball"><link name="ball"><inertial><mass value="1"/>
<inertia ixx="0.004" iyy="0.004" izz="0.004" ixy="0" ixz="0" iyz="0"/></inertial>
<collision><geometry><sphere radius="0.1"/></geometry></collision></link></robot>"""


@pytest.fixture(scope="module")
def box():
    model = db.load_urdf(BOX, floating_base=True)
    points, _ = collision_points(model, BOX)
    return model, points


def at_height(model, z, rotation=None):
    q = db.neutral_configuration(model)
    q[2] = z
    if rotation is not None:  # (x, y, z, w)
        q[3:7] = rotation
    return q


def test_box_at_rest_for_10_s(box):
    model, points = box
    traj = simulate_contact(model, at_height(model, C / 2), np.zeros(6), 10.0, 1e-3, Ground(mu=0.5), points)
    assert len(traj) == 10_001
    assert np.abs(traj.q[:, :3] - [0.0, 0.0, C / 2]).max() < 1e-6
    normal = traj.contact_force[:-1, :, 2].sum(axis=1)  # the force of each step (the last state has none)
    np.testing.assert_allclose(normal, MASS * G0, rtol=1e-9)
    # no net friction at rest (the four corners' problem is indeterminate: friction forces that
    # cancel between corners are one of its solutions; the saved force is their resultant)
    assert np.abs(traj.contact_force[:-1, :, :2].sum(axis=1)).max() < 1e-9
    assert traj.contact_names == ("box/ground",) and traj.contact_force.shape == (10_001, 1, 3)
    # the force acts at the centre of pressure: under the centre of mass, on the ground
    np.testing.assert_allclose(traj.contact_point[:-1, 0], np.broadcast_to([0.0, 0.0, 0.0], (10_000, 3)), atol=1e-9)
    assert np.isnan(traj.contact_point[-1]).all()  # the last state has no step after it


def test_the_centre_of_pressure_of_a_box_pushed_sideways(box):
    """A box at rest, pushed sideways at the height of its centre by P below the friction
    limit: the centre of pressure moves downwind by P h / (m g) (moments about the centre of
    mass), and the friction force is -P."""
    model, points = box
    q0 = at_height(model, C / 2)
    q0[:2] = [0.4, -0.3]
    push = 0.3 * MASS * G0  # mu = 0.5: it sticks
    tau = np.zeros(6)
    tau[0] = push  # a force along x at the base's origin (the centre of mass), world frame
    traj = simulate_contact(model, q0, np.zeros(6), 0.5, 1e-3, Ground(mu=0.5), points, tau=tau)
    assert np.abs(traj.q[:, :3] - q0[:3]).max() < 1e-6
    np.testing.assert_allclose(traj.contact_force[-2, 0], [-push, 0.0, MASS * G0], atol=1e-8)
    x_cop = 0.4 + push * (C / 2) / (MASS * G0)
    np.testing.assert_allclose(traj.contact_point[-2, 0], [x_cop, -0.3, 0.0], atol=1e-9)


@pytest.mark.parametrize("v0, mu", [(2.0, 0.5), (1.0, 0.3)])
def test_box_sliding_stops_after_v0_squared_over_2_mu_g(box, v0, mu):
    model, points = box
    v = np.zeros(6)
    v[0] = v0
    traj = simulate_contact(model, at_height(model, C / 2), v, 1.5 * v0 / (mu * G0), 1e-3, Ground(mu=mu), points)
    distance = traj.q[-1, 0]
    assert distance == pytest.approx(v0**2 / (2 * mu * G0), rel=0.01)
    stop = traj.t[np.argmax(np.abs(traj.v[:, 0]) < 1e-9)]
    assert stop == pytest.approx(v0 / (mu * G0), rel=0.01)
    assert np.abs(traj.v[-1]).max() < 1e-9 and abs(traj.q[-1, 2] - C / 2) < 1e-6


def slope_start(model, theta):
    """The box resting flat on a slope of angle theta rising along +x (its centre C/2 above)."""
    n = np.array([-np.sin(theta), 0.0, np.cos(theta)])
    q = at_height(model, 0.0, (0.0, np.sin(-theta / 2), 0.0, np.cos(-theta / 2)))  # about y by -theta
    q[:3] = C / 2 * n
    return q, Ground(normal=n, mu=0.5)


def test_box_on_a_slope_sticks_when_tan_theta_below_mu(box):
    model, points = box
    theta = np.arctan(0.5) - 0.05
    q0, slope = slope_start(model, theta)
    traj = simulate_contact(model, q0, np.zeros(6), 2.0, 1e-3, slope, points)
    assert np.abs(traj.q[:, :3] - q0[:3]).max() < 1e-6
    total = traj.contact_force[-2].sum(axis=0)  # the ground carries the weight
    np.testing.assert_allclose(total, [0.0, 0.0, MASS * G0], atol=1e-8)


def test_box_on_a_slope_slides_at_g_sin_minus_mu_cos(box):
    model, points = box
    theta = np.arctan(0.5) + 0.2
    q0, slope = slope_start(model, theta)
    T = 1.0
    traj = simulate_contact(model, q0, np.zeros(6), T, 1e-3, slope, points)
    down = np.array([-np.cos(theta), 0.0, -np.sin(theta)])  # down the slope
    s = (traj.q[:, :3] - q0[:3]) @ down
    a = G0 * (np.sin(theta) - 0.5 * np.cos(theta))
    assert s[-1] == pytest.approx(0.5 * a * T**2, rel=0.01)
    n = slope.normal
    assert np.abs((traj.q[:, :3] - q0[:3]) @ n).max() < 1e-6  # on the surface all along


def test_ball_dropped_with_restitution_0_stays():
    model = db.load_urdf(BALL, floating_base=True)
    points, _ = collision_points(model, BALL)
    traj = simulate_contact(model, at_height(model, 0.4), np.zeros(6), 1.0, 1e-3, Ground(), points)
    landed = traj.t > 0.3  # it falls 0.3 m in 0.247 s
    assert np.abs(traj.q[landed, 2] - 0.1).max() < 1e-6
    assert np.abs(traj.v[landed]).max() < 1e-9
    flying = traj.t[:-1] < 0.2
    assert np.isnan(traj.contact_point[:-1][flying]).all() and not np.abs(traj.contact_force[:-1][flying]).any()
    np.testing.assert_allclose(traj.contact_point[:-1][traj.t[:-1] > 0.3, 0], np.zeros((699, 3)), atol=1e-9)


def test_restitution_gives_back_that_fraction_of_the_approach_speed():
    model = db.load_urdf(BALL, floating_base=True)
    points, _ = collision_points(model, BALL)
    traj = simulate_contact(model, at_height(model, 0.4), np.zeros(6), 0.3, 1e-3, Ground(restitution=0.5), points)
    vz = traj.v[:, 2]
    k = int(np.argmax(vz > 0))  # the first step going up
    assert vz[k] == pytest.approx(-0.5 * vz[k - 1], rel=0.02)


def test_contact_never_gives_energy(box):
    """A spinning box dropped on a rough ground: the work of the contact forces is never
    positive, step by step, and nothing goes through the ground."""
    model, points = box
    rng = np.random.default_rng(0)
    quat = rng.normal(size=4)
    q0 = at_height(model, 0.2, quat / np.linalg.norm(quat))
    v0 = np.array([0.5, -0.3, -1.0, 3.0, -2.0, 1.0])
    traj = simulate_contact(model, q0, v0, 1.0, 1e-3, Ground(mu=0.6), points)
    steps = np.diff(traj.contact_work)
    assert steps.min() < -1e-3  # the contact acted
    assert steps.max() <= 1e-12 * MASS * G0
    corners = np.array([p.point for p in points])
    # nothing goes through: every box corner stays above the ground (within 1e-6 m)
    for qk in traj.q[::10]:
        R, p = db.forward_kinematics(model, qk)
        assert (p[0] + corners @ R[0].T)[:, 2].min() > -1e-6


def test_the_work_of_contact_is_force_times_displacement():
    """A spinning ball thrown on a rough ground (one contact point): each step's contact work is
    the saved force times the displacement dt v+ of the contact point (its velocity from the
    ball's twist, not from the contact rows)."""
    model = db.load_urdf(BALL, floating_base=True)
    points, _ = collision_points(model, BALL)
    v0 = np.array([1.0, 0.5, -1.0, 20.0, 0.0, 0.0])  # spinning about x: its lowest point slips
    traj = simulate_contact(model, at_height(model, 0.15), v0, 0.3, 1e-3, Ground(mu=0.3), points)
    steps = np.diff(traj.contact_work)
    acting = np.flatnonzero(steps < -1e-6)
    assert acting.size > 10 and steps.max() <= 1e-12
    for k in acting[:20]:
        R, p = db.forward_kinematics(model, traj.q[k])
        twist = db.link_velocities(model, traj.q[k], traj.v[k + 1])[0]  # the rows are taken at q_k
        s = R[0].T @ np.array([0.0, 0.0, -0.1])  # the lowest point of the sphere, in the ball's frame
        velocity = R[0] @ (twist[:3] + np.cross(twist[3:], s))
        assert steps[k] == pytest.approx(1e-3 * traj.contact_force[k, 0] @ velocity, rel=1e-9, abs=1e-13)


def test_energy_balance_with_the_work_of_contact(box):
    """At rest the contact does no work and the balance closes exactly; a box sliding to a stop:
    the friction's work is the kinetic energy it had (to the explicit step's first-order error)."""
    model, points = box
    rest = simulate_contact(model, at_height(model, C / 2), np.zeros(6), 1.0, 1e-3, Ground(mu=0.5), points)
    assert np.abs(rest.contact_work).max() < 1e-12 and np.abs(rest.energy_drift()).max() < 1e-12
    v = np.zeros(6)
    v[0] = 2.0
    slide = simulate_contact(model, at_height(model, C / 2), v, 0.6, 1e-3, Ground(mu=0.5), points)
    assert slide.contact_work[-1] == pytest.approx(-0.5 * MASS * 4.0, rel=0.01)
    assert abs(slide.energy_drift(relative=True)[-1]) < 0.01


def test_simulate_routes_contact_and_refuses_other_methods(box):
    model, points = box
    q0 = at_height(model, C / 2)
    traj = db.simulate(
        model, q0, np.zeros(6), 0.01, 1e-3, method="contact-euler", contact=Ground(), contact_points=points
    )
    assert traj.method == "contact-euler" and traj.contact_force.shape == (11, 1, 3)
    with pytest.raises(InputError, match=r"method 'rk4' \(simulate's default\) does not simulate ground contact"):
        db.simulate(model, q0, np.zeros(6), 0.01, 1e-3, contact=Ground())  # no method given
    with pytest.raises(InputError, match="method 'euler' does not simulate ground contact"):
        db.simulate(model, q0, np.zeros(6), 0.01, 1e-3, method="euler", contact=Ground())
    with pytest.raises(InputError, match="contact must be a Ground or a list of Grounds, got the string 'ground'"):
        db.simulate(model, q0, np.zeros(6), 0.01, 1e-3, method="contact-euler", contact="ground")
    with pytest.raises(InputError, match="needs the ground"):
        db.simulate(model, q0, np.zeros(6), 0.01, 1e-3, method="contact-euler")
    # solo12's <collision> meshes give contact points (their convex hulls): it simulates without
    # contact_points
    solo = db.load_robot("solo12")
    q = db.neutral_configuration(solo)
    q[2] = 0.4
    db.simulate(solo, q, np.zeros(solo.nv), 0.002, method="contact-euler", contact=Ground())
    with pytest.raises(InputError, match=r"tau\(t, q, v\) must return 6"):
        simulate_contact(model, q0, np.zeros(6), 0.01, 1e-3, Ground(), points[:2], tau=lambda t, q, v: np.zeros(2))


def test_contact_point_by_name_in_simulate():
    solo = db.load_robot("solo12")
    feet = [contact_point(solo, f, radius=0.0175) for f in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")]
    traj = db.simulate(
        solo,
        db.neutral_configuration(solo),
        np.zeros(solo.nv),
        0.005,
        method="contact-euler",
        contact=Ground(height=-0.5),
        contact_points=feet,
    )
    assert np.all(traj.contact_force == 0.0)  # high above the ground: free fall
    assert traj.v[-1, 2] == pytest.approx(-G0 * 0.005, rel=1e-9)


def test_solo12_dropped_from_30_cm_stands_with_a_posture_hold():
    """solo12's feet 0.3 m above the ground, a joint PD holding its standing posture (Kp = 20
    N m/rad, Kd = 0.5 N m s/rad): it lands and stands, its base steady, the feet on the ground
    and the ground carrying its weight."""
    example_robot_data = pytest.importorskip("example_robot_data")
    solo = db.load_robot("solo12")
    q_ref = example_robot_data.load("solo12").q0.copy()
    feet = [contact_point(solo, f) for f in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")]

    def lowest_foot(q):
        R, p = db.forward_kinematics(solo, q)
        return min((p[c.link] + R[c.link] @ c.point)[2] for c in feet)

    q0 = q_ref.copy()
    q0[2] += 0.3 - lowest_foot(q_ref)

    def hold(t, q, v):
        tau = np.zeros(solo.nv)
        tau[6:] = 20.0 * (q_ref[7:] - q[7:]) - 0.5 * v[6:]
        return tau

    traj = simulate_contact(solo, q0, np.zeros(solo.nv), 1.5, 1e-3, Ground(mu=0.9), feet, hold)
    z = traj.q[traj.t > 1.0, 2]
    assert z.max() - z.min() < 1e-6  # the base steady over the last 0.5 s
    assert min(lowest_foot(q) for q in traj.q[::10]) > -1e-6  # penetration below 1 um
    weight = solo.total_mass * G0
    assert traj.contact_force[-2, :, 2].sum() == pytest.approx(weight, rel=1e-6)
    assert np.diff(traj.contact_work).max() <= 1e-12


@pytest.mark.parametrize("save_every", [1, 7])
def test_ctrl_c_returns_the_states_up_to_there(box, save_every):
    """A Ctrl-C in the middle of a run (here raised by the controller at t = 0.05 s, step 51)
    ends it with status "interrupted" and the states saved until then, as the other methods."""
    model, points = box

    def interrupt_at_50_ms(t, q, v):
        if t >= 0.05 - 1e-12:
            raise KeyboardInterrupt
        return np.zeros(model.nv)

    q0 = at_height(model, 0.2)
    traj = db.simulate(
        model, q0, np.zeros(6), 1.0, 1e-3, interrupt_at_50_ms, method="contact-euler",
        contact=Ground(), contact_points=points, save_every=save_every,
    )  # fmt: skip
    assert traj.status == "interrupted" and traj.message == "interrupted by the user at t = 0.05 s"
    assert traj.n_steps == 50 and len(traj) == 50 // save_every + 1
    np.testing.assert_allclose(traj.t, save_every * 1e-3 * np.arange(len(traj)), atol=1e-15)
    full = db.simulate(
        model, q0, np.zeros(6), 0.05, 1e-3, method="contact-euler", contact=Ground(), contact_points=points,
        save_every=save_every,
    )  # fmt: skip
    np.testing.assert_array_equal(traj.q, full.q[: len(traj)])  # the same states as a run that stopped there
    assert traj.contact_force.shape[0] == traj.contact_work.shape[0] == len(traj)


def test_flat_box_dropped_from_30_cm_lands_and_rests(box):
    """Flat on its four bottom corners, 0.3 m above the ground: PGS alone crawled past 10,000
    sweeps on the resting steps after the impact (the impulses of an indeterminate problem
    drift); the all-sticking fallback settles them.  It rests at C / 2, the ground carrying its
    weight to 1e-9, the contact's work never positive."""
    model, points = box
    traj = simulate_contact(model, at_height(model, C / 2 + 0.3), np.zeros(6), 0.8, 1e-3, Ground(), points)
    landed = traj.t > 0.4
    assert np.abs(traj.q[landed, :3] - [0.0, 0.0, C / 2]).max() < 1e-6
    assert np.abs(traj.v[landed]).max() < 1e-9
    np.testing.assert_allclose(traj.contact_force[landed][:-1, 0, 2], MASS * G0, rtol=1e-9)
    assert np.diff(traj.contact_work).max() <= 1e-12


def test_a_contact_run_saves_and_loads_with_its_contact(box, tmp_path):
    """to_npz / load keep the contact forces, the work, the pairs' names and the grounds (the
    pictures draw the ground from them); a run without contact loads without them."""
    model, points = box
    cellar = Ground(normal=(-0.2, 0.0, 1.0), height=-1.0, mu=0.6, restitution=0.1, name="cellar")  # never reached
    traj = db.simulate(
        model, at_height(model, 0.4), np.zeros(6), 0.5, 1e-3, method="contact-euler",
        contact=[Ground(), cellar], contact_points=points,
    )  # fmt: skip
    assert np.abs(traj.contact_force).max() > 0
    traj.to_npz(tmp_path / "run.npz")
    again = db.Trajectory.load(tmp_path / "run.npz", model)
    np.testing.assert_array_equal(again.contact_force, traj.contact_force)
    np.testing.assert_array_equal(again.contact_work, traj.contact_work)
    np.testing.assert_array_equal(again.contact_point, traj.contact_point)  # NaN where apart, there too
    assert again.contact_names == traj.contact_names and len(again.contact_grounds) == 2
    for g, h in zip(again.contact_grounds, traj.contact_grounds):
        assert (g.name, g.mu, g.restitution) == (h.name, h.mu, h.restitution) and g.offset == pytest.approx(h.offset)
        np.testing.assert_allclose(g.normal, h.normal, atol=1e-15)  # normalised again: to the last bit
    assert again.energy_drift().max() == traj.energy_drift().max()  # the contact's work counted again
    free = db.simulate(model, at_height(model, 0.2), np.zeros(6), 0.01, 1e-3, progress=False)
    free.to_npz(tmp_path / "free.npz")
    loaded = db.Trajectory.load(tmp_path / "free.npz", model)
    assert loaded.contact_force is None and loaded.contact_grounds == () and loaded.contact_names == ()
    assert loaded.contact_point is None


def test_slices_and_resampling_keep_the_contact(box):
    """traj[a:b] and traj.at / resample (the animation's frames) carry the contact fields: the
    forces and the work linear between saved states, a point linear where the pair pushes at
    both, else the nearer state's; the energy balance of a resampled run still counts the work
    of the contact."""
    model, points = box
    traj = simulate_contact(model, at_height(model, 0.1), np.zeros(6), 0.3, 1e-3, Ground(), points)
    part = traj[100:200]
    np.testing.assert_array_equal(part.contact_point, traj.contact_point[100:200])
    np.testing.assert_array_equal(part.contact_force, traj.contact_force[100:200])
    k = int(np.flatnonzero(np.isfinite(traj.contact_point[:-1, 0, 0]))[0])  # the first step in contact
    mid = traj.at([traj.t[k - 1] + 0.25e-3, traj.t[k - 1] + 0.75e-3, traj.t[k + 20] + 0.5e-3, traj.t[k + 20]])
    assert np.isnan(mid.contact_point[0]).all()  # nearer to the state before the contact
    np.testing.assert_array_equal(mid.contact_point[1], traj.contact_point[k])  # nearer to the first in contact
    np.testing.assert_allclose(
        mid.contact_point[2], 0.5 * (traj.contact_point[k + 20] + traj.contact_point[k + 21]), atol=1e-15
    )
    np.testing.assert_allclose(
        mid.contact_force[2], 0.5 * (traj.contact_force[k + 20] + traj.contact_force[k + 21]), rtol=1e-12
    )
    np.testing.assert_array_equal(mid.contact_work[3], traj.contact_work[k + 20])
    assert mid.contact_names == traj.contact_names and mid.contact_grounds == traj.contact_grounds
    frames = traj.resample(100.0)
    np.testing.assert_allclose(frames.energy_drift(), traj.energy_drift()[::10], atol=1e-9)


def test_a_blow_up_is_a_simulation_error(box):
    model, points = box

    def violent(t, q, v):  # a damper far too stiff for an explicit step of 1 ms
        return -1e6 * v

    with pytest.raises(SimulationError, match="left the finite numbers"):
        simulate_contact(model, at_height(model, 0.2), np.ones(6), 1.0, 1e-3, Ground(), points, violent)


def test_a_batch_of_contact_runs_is_each_run_alone(box):
    """simulate_batch with contact: the cases (three drop heights, one sideways push) through the
    contact stepper one after another, each the same numbers as simulate alone."""
    model, points = box
    Q0 = np.array([at_height(model, C / 2 + h) for h in (0.0, 0.05, 0.2)])
    V0 = np.zeros((3, 6))
    V0[1, 0] = 1.0
    kw = {"method": "contact-euler", "contact": Ground(mu=0.5), "contact_points": points}
    batch = db.simulate_batch(model, Q0, V0, 0.3, 1e-3, **kw)
    assert len(batch) == 3
    for b in range(3):
        alone = db.simulate(model, Q0[b], V0[b], 0.3, 1e-3, **kw)
        np.testing.assert_array_equal(batch[b].q, alone.q)
        np.testing.assert_array_equal(batch[b].contact_force, alone.contact_force)
    with pytest.raises(InputError, match="not a table per step"):
        db.simulate_batch(model, Q0, V0, 0.01, 1e-3, tau=np.zeros((3, 10, 6)), **kw)
    with pytest.raises(InputError, match="does not simulate ground contact"):
        db.simulate_batch(model, Q0, V0, 0.01, 1e-3, contact=Ground(), contact_points=points)


def test_a_sweep_of_contact_runs(box, tmp_path):
    """db.sweep with the contact options in simulate_kwargs (inline: this process): each case the
    run simulate gives alone; the options are saved by value, so the same sweep resumes."""
    model, points = box
    kw = {"t_final": 0.25, "dt": 1e-3, "method": "contact-euler", "contact": Ground(mu=0.5), "contact_points": points}
    cases = [{"q0[2]": C / 2 + h} for h in (0.0, 0.1)]
    res = db.sweep(model, cases, kw, scheduler="inline", progress=False, out=tmp_path / "s")
    assert [r["status"] for r in res.rows] == ["completed", "completed"]
    again = db.sweep(
        model, cases, dict(kw, contact=Ground(mu=0.5)), scheduler="inline", progress=False, out=tmp_path / "s"
    )
    assert again.n_run == 0 and again.n_resumed == 2
    for r, h in zip(res.rows, (0.0, 0.1)):
        alone = db.simulate(model, at_height(model, C / 2 + h), np.zeros(6), **kw)
        assert r["t_end"] == pytest.approx(0.25) and r["total_energy_end"] == pytest.approx(
            float(alone.total_energy[-1]), rel=1e-12, abs=1e-12
        )


def test_a_start_inside_the_ground_is_warned_about(box):
    """A start that puts contact points more than START_DEPTH into a ground (a forgotten lift:
    the first step's correction moves the robot out, a jump no force explains) warns, naming
    the link, the depth and the ground; a start on the ground or within the depth does not."""
    import warnings

    from denoc_bridge.simulation import contact as contact_simulation

    model, points = box
    with pytest.warns(UserWarning, match=r"q0 puts a contact point of link 'box' 0\.03 m into the ground 'ground' "):
        simulate_contact(model, at_height(model, C / 2 - 0.03), np.zeros(6), 0.002, 1e-3, Ground(), points)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        simulate_contact(model, at_height(model, C / 2), np.zeros(6), 0.002, 1e-3, Ground(), points)
        depth = 0.5 * contact_simulation.START_DEPTH
        simulate_contact(model, at_height(model, C / 2 - depth), np.zeros(6), 0.002, 1e-3, Ground(), points)


@pytest.fixture(scope="module")
def talos_limp():
    """talos on its soles' eight corners, dropped 2 cm with no hold: its legs fold onto their
    joint limits (the knees, the hips) while the soles are on the ground."""
    example_robot_data = pytest.importorskip("example_robot_data")
    from denoc_bridge.constraints.contact import lifted

    model = db.load_robot("talos")
    q_ref = example_robot_data.load("talos").q0.copy()
    soles = ("left_sole_link", "right_sole_link")
    points = [contact_point(model, s, (x, y, 0.0)) for s in soles for x in (-0.1, 0.13) for y in (-0.065, 0.065)]
    return model, points, lifted(model, q_ref, points, 0.02)


def test_a_robot_on_the_ground_keeps_its_joint_limits(talos_limp):
    """With the limits (the default) every limited joint stays inside its range to round-off
    while the robot collapses on the ground; the limits' impulses only take energy (W_stops
    grows) and the balance closes to the step's first order; without them the joints go far
    past (so that this test can fail)."""
    from denoc_bridge.multibody.joints import limit_arrays

    model, points, q0 = talos_limp
    li, lf = limit_arrays(model)
    kept = simulate_contact(model, q0, np.zeros(model.nv), 0.4, 1e-3, Ground(mu=0.9), points)
    passed = simulate_contact(model, q0, np.zeros(model.nv), 0.4, 1e-3, Ground(mu=0.9), points, limits=False)

    def worst(tr):
        q = tr.q[:, li[:, 0]]
        return float(np.maximum(lf[:, 0] - q, q - lf[:, 1]).max())

    assert worst(kept) <= 1e-9 and worst(passed) > 0.5
    assert np.all(np.diff(kept.limit_work) >= -1e-9) and kept.limit_work[-1] > 10.0  # it hit them hard
    assert passed.limit_work is None
    drift = np.abs(kept.energy_drift()).max()
    assert drift <= 1e-2 * max(kept.energy_scales().values()), drift
    assert "W_stops" in kept.balance_text()
    assert np.abs(kept.contact_force).max() > 100.0  # it was on the ground all along


def test_a_start_outside_the_limits_starts_on_them(talos_limp):
    model, points, q0 = talos_limp
    from denoc_bridge.multibody.joints import limit_arrays

    li, lf = limit_arrays(model)
    q = q0.copy()
    q[li[3, 0]] = lf[3, 1] + 0.2  # the left knee past its upper limit
    knee = model.joint_names[int(np.flatnonzero(np.asarray(model.idx_q) == li[3, 0])[0])]
    with pytest.warns(UserWarning, match=knee) as caught:
        tr = simulate_contact(model, q, np.zeros(model.nv), 2e-3, 1e-3, Ground(mu=0.9), points)
    assert tr.q[0, li[3, 0]] == lf[3, 1]
    assert caught[0].filename == __file__  # the warning names the user's call, not the package's
    with pytest.warns(UserWarning, match=knee) as caught:  # the same through db.simulate
        db.simulate(
            model,
            q,
            np.zeros(model.nv),
            2e-3,
            1e-3,
            method="contact-euler",
            contact=Ground(mu=0.9),
            contact_points=points,
        )
    assert caught[0].filename == __file__
