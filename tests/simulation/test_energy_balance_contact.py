"""The energy balance of a ground run counts every work the run records (issue 47): the contact
forces' work over the steps' displacements and the impacts' (an impulse works on the mean of the
velocities before and after it), so that a landing with restitution 0 closes the balance to the
stepper's accuracy instead of reading as a 100 % error."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.io.collision import collision_points
from denoc_bridge.multibody.contact import Ground
from denoc_bridge.simulation.contact import simulate_contact
from denoc_bridge.viz import plots

MASS, A, B, C = 2.0, 0.2, 0.3, 0.1  # kg, box edges (m)
BOX = f"""<robot name="box"><link name="box"><inertial><mass value="{MASS}"/>
<inertia ixx="{MASS * (B * B + C * C) / 12}" iyy="{MASS * (A * A + C * C) / 12}" izz="{MASS * (A * A + B * B) / 12}"
 ixy="0" ixz="0" iyz="0"/></inertial>
<collision><geometry><box size="{A} {B} {C}"/></geometry></collision></link></robot>"""
DROP = 0.2  # m: the box falls from its face 0.2 m above the ground and lands flat


@pytest.fixture(scope="module")
def landing():
    model = db.load_urdf(BOX, floating_base=True)
    points, _ = collision_points(model, BOX)
    q0 = db.neutral_configuration(model)
    q0[2] = C / 2 + DROP
    kw = dict(contact=Ground(mu=0.8), contact_points=points)
    compiled = simulate_contact(model, q0, np.zeros(6), 0.5, 1e-3, **kw)
    python = simulate_contact(model, q0, np.zeros(6), 0.5, 1e-3, compiled=False, **kw)
    return compiled, python


def test_a_plastic_landing_balances_with_the_impacts_work(landing):
    """The box lands flat: all the kinetic energy it had at impact, m g h, is taken by the
    contact, half of it by the impact (lambda . J v+ = 0 there), half as the forces' work over the
    step that closes the gap: without the impacts' work the balance is off by half the scale.  With
    it, the balance closes to the first-order step's accuracy (4.9e-3 of the scale at 1 ms, 1.2e-3
    at 0.25 ms: it converges) and exactly at rest afterwards."""
    traj, _ = landing
    scale = traj.energy_scale
    mgh = MASS * 9.81 * DROP
    assert scale == pytest.approx(mgh, rel=1e-3)
    assert traj.contact_work[-1] + traj.impact_work[-1] == pytest.approx(-mgh, rel=1e-9)
    assert -traj.impact_work[-1] > 0.5 * mgh
    drift = traj.energy_drift(relative=True)
    assert np.abs(drift).max() < 5e-3 and abs(drift[-1]) < 1e-12
    fine = simulate_contact(traj.model, traj.q[0], np.zeros(6), 0.5, 2.5e-4, Ground(mu=0.8), _points(traj.model))
    assert np.abs(fine.energy_drift(relative=True)).max() < 0.3 * np.abs(drift).max()
    without = dataclasses.replace(traj, impact_work=None, _cache={})
    assert np.abs(without.energy_drift(relative=True)).max() > 0.5  # the old balance: the impact missing
    assert traj.balance_text() == "E - E(0) - W_in - W_contact"
    assert traj.balance_parts() == "W_contact: contact forces and impacts"


def test_the_impacts_work_is_the_python_steps(landing):
    """The compiled run and the Python step each add -1/2 lambda . J (v+ - v) up from the step's
    impulses: the two agree to round-off, and a run that saves every k-th step has the same
    sums at its saved states (the steps between are counted)."""
    compiled, python = landing
    np.testing.assert_allclose(compiled.impact_work, python.impact_work, rtol=0, atol=1e-9 * compiled.energy_scale)
    assert np.diff(compiled.impact_work).max() <= 1e-12  # an impact never gives energy
    model = compiled.model
    strided = simulate_contact(
        model, compiled.q[0], np.zeros(6), 0.5, 1e-3, Ground(mu=0.8), _points(model), save_every=5
    )
    np.testing.assert_allclose(
        strided.impact_work, compiled.impact_work[::5], rtol=0, atol=1e-9 * compiled.energy_scale
    )
    assert strided.impact_work[-1] < -1.0 and strided.balance_parts() == "W_contact: contact forces and impacts"


def _points(model):
    return collision_points(model, BOX)[0]


def test_slices_files_and_frames_keep_the_impacts_work(landing, tmp_path):
    traj, _ = landing
    traj.to_npz(tmp_path / "run.npz")
    again = db.Trajectory.load(tmp_path / "run.npz", traj.model)
    np.testing.assert_array_equal(again.impact_work, traj.impact_work)
    np.testing.assert_array_equal(traj[100:200].impact_work, traj.impact_work[100:200])
    frames = traj.resample(100.0)
    np.testing.assert_allclose(frames.energy_drift(), traj.energy_drift()[::10], atol=1e-9)


def test_the_plots_read_the_one_balance(landing, plot_titles):
    """The energy panel's dotted line is E(0) + W with the contacts' work (impacts included) and
    says so; the summary's title and the drift panel write the same balance, small."""
    traj, _ = landing
    plt = plots.pyplot()
    fig, ax = plt.subplots()
    try:
        plots.draw_energy(ax, traj)
        lines = {line.get_label(): line for line in ax.get_lines()}
        assert "E(0) + W_in + W_contact" in lines, list(lines)
        t, y = lines["E(0) + W_in + W_contact"].get_data()
        expected = traj.total_energy - traj.energy_drift()
        np.testing.assert_allclose(y, np.interp(t, traj.t, expected), rtol=0, atol=1e-12)
        # the total ends on it, not m g h above: what the landing took is in it
        assert abs(y[-1] - traj.total_energy[-1]) < 1e-12 * traj.energy_scale
    finally:
        plt.close(fig)
    titles = plot_titles
    plots.plot_summary(traj, "unused.png")
    plots.plot_energy(traj, "unused.png")
    summary = next(t for t in titles if t.startswith("energy balance: max |E - E(0) - W_in - W_contact| = "))
    assert float(summary.split("= ")[1].split(" of")[0]) < 5e-3
    assert summary.endswith("(W_contact: contact forces and impacts)")
    drift = next(t for t in titles if t.startswith("max |drift|"))
    assert "of the energy scale\nW_contact: contact forces and impacts" in drift
