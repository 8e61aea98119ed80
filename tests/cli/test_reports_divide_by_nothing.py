"""Reports that divide by a weight, an energy scale, a duration or a count, when there is none
(issue 47): zero gravity, a robot without mass, a run that saves one state, a robot without
degrees of freedom.  Each runs to the end, exit 0, and says what it means; no NaN, no inf, no
traceback."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.cli.main import main
from denoc_bridge.viz import plots

FAST = ["--no-html", "--no-plot", "--no-validate"]


def quadruped(gravity: str) -> str:
    """An MJCF quadruped on a free joint: a box torso, four legs of a hip and a knee (hinges
    about y), capsule thighs and shins, sphere feet."""
    legs = ""
    for leg, (x, y) in {"fl": (0.2, 0.1), "fr": (0.2, -0.1), "hl": (-0.2, 0.1), "hr": (-0.2, -0.1)}.items():
        legs += (
            f"<body name='{leg}_thigh' pos='{x} {y} 0'><joint name='{leg}_hip' axis='0 1 0'/>"
            "<geom type='capsule' fromto='0 0 0 0 0 -0.15' size='0.02' mass='0.3'/>"
            f"<body name='{leg}_shin' pos='0 0 -0.15'><joint name='{leg}_knee' axis='0 1 0'/>"
            "<geom type='capsule' fromto='0 0 0 0 0 -0.15' size='0.015' mass='0.2'/>"
            "<geom type='sphere' pos='0 0 -0.15' size='0.02' mass='0.05'/></body></body>"
        )
    return (
        f"<mujoco model='quad'><compiler angle='radian'/><option gravity='{gravity}'/><worldbody>"
        "<body name='torso' pos='0 0 0.5'><freejoint name='root'/>"
        f"<geom type='box' size='0.25 0.12 0.04' mass='4'/>{legs}</body></worldbody></mujoco>"
    )


#: a fixed-base robot whose links have no mass (their joints' rotor inertia moves them), with a
#: collision shape to touch the ground with
MASSLESS = """<robot name="ghost">
  <link name="base"><collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link>
  <link name="leg"><inertial><mass value="0"/><inertia ixx="0" iyy="0" izz="0" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 -0.1"/><geometry><sphere radius="0.03"/></geometry></collision></link>
  <joint name="hip" type="revolute"><parent link="base"/><child link="leg"/><origin xyz="0 0 -0.05"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""

#: a robot of fixed joints only: no degree of freedom
RIGID = """<robot name="rigid">
  <link name="base"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tip"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="weld" type="fixed"><parent link="base"/><child link="tip"/><origin xyz="0 0 0.2"/></joint>
</robot>"""


def _clean(out: str, err: str) -> None:
    assert "Traceback" not in err and "error" not in err, err
    assert not re.search(r"\bnan\b|\binf\b", out, re.IGNORECASE), out


def test_a_floating_quadruped_without_gravity_on_the_ground(tmp_path, capsys):
    """Zero weight: the ground's line says what it carries and that there is no weight to
    compare it with (it divided by the weight: ZeroDivisionError)."""
    path = tmp_path / "quad.xml"
    path.write_text(quadruped("0 0 0"))
    html = tmp_path / "quad0.html"
    assert main(["simulate", str(path), "--duration", "0.3", "--drop", "0", "--no-plot", "--no-validate",
                 "--html", str(html)]) == 0  # fmt: skip
    out, err = capsys.readouterr()
    _clean(out, err)
    assert "simulating 0.3 s with contact-euler" in out and html.stat().st_size > 0
    assert re.search(r"contact: at the end 0 of \d+ links touch the ground, which carries 0 N \(there is no "
                     r"gravity: the robot has no weight to compare it with\)", out), out  # fmt: skip
    assert "energy: the contacts took 0 J" in out
    # with gravity, the same robot's line compares with its weight (6.2 kg)
    path.write_text(quadruped("0 0 -9.81"))
    assert main(["simulate", str(path), "--duration", "1", *FAST]) == 0
    out, err = capsys.readouterr()
    _clean(out, err)
    m = re.search(r"which carries (\S+) N \((\S+)% of the weight, (\S+) N\)", out)
    assert m is not None and float(m.group(2)) == pytest.approx(100.0, abs=0.05), out
    assert float(m.group(3)) == pytest.approx(6.2 * 9.81, rel=1e-3)


def test_a_robot_without_mass_on_the_ground(tmp_path, capsys):
    """Zero weight and zero energy scale: a fixed-base robot whose links have no mass, on the
    ground (its rotor inertia moves it): nothing to weigh, nothing to measure the energy against;
    a floating base without mass gets one line that names the base and what to do."""
    path = tmp_path / "ghost.urdf"
    path.write_text(MASSLESS)
    assert main(["simulate", str(path), "--ground", "--armature", "0.01", "--duration", "0.1", *FAST]) == 0
    out, err = capsys.readouterr()
    _clean(out, err.replace("warning: q0 puts", ""))
    assert "('ghost' has no mass: the robot has no weight to compare it with)" in out
    assert "energy drift: max |E - E(0) - W_in - W_contact| = 0 J (the robot did not move and no work was done)" in out
    assert main(["simulate", str(path), "--floating", "--armature", "0.01", "--duration", "0.1", *FAST]) == 2
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "joint 'root_joint' (freeflyer) is singular" in err
    assert err.rstrip().endswith("a floating base needs a mass: give its link a mass and inertia in the URDF (or MJCF)")


def test_the_plots_of_a_run_without_energy_at_play(tmp_path, plot_titles):
    """Zero energy scale: the balance's titles say there is no energy at play (they read
    "nan of the energy scale"); the relative drift is 0, not the drift in J."""
    model = db.load_urdf(MASSLESS)
    model = model.replace(armature=np.full(model.nv, 0.01))
    traj = db.simulate(model, [0.3], [0.0], 0.05, 1e-3, progress=False)
    assert traj.energy_scale == 0.0 and traj.energy_scales()["floor"] == 0.0
    np.testing.assert_array_equal(traj.energy_drift(relative=True), np.zeros(len(traj)))
    titles = plot_titles
    plots.plot_summary(traj, tmp_path / "summary.png")
    plots.plot_energy(traj, tmp_path / "energy.png")
    balance = [t for t in titles if "drift" in t or "balance" in t]
    assert len(balance) == 2 and not any("nan" in t for t in titles), titles
    assert all("no energy at play (no motion, no work, no mass)" in t for t in balance), balance


def test_a_run_that_saves_one_state(tmp_path, capsys):
    """One saved state (5 steps, --save-every 10): the rate against real time is the steps'
    time (it divided the saved span, 0 s, and said "0 x real time"), the plots are written."""
    path = tmp_path / "quad.xml"
    path.write_text(quadruped("0 0 -9.81"))
    args = ["simulate", str(path), "--duration", "0.005", "--save-every", "10", "--no-html", "--no-validate"]
    assert main([*args, "--plot", str(tmp_path / "one.png")]) == 0
    out, err = capsys.readouterr()
    _clean(out, err)
    m = re.search(r"completed: 5 steps, 1 saved state, 5 forward dynamics in (\S+) s wall \((\S+) x real time", out)
    assert m is not None, out
    assert float(m.group(2)) == pytest.approx(0.005 / float(m.group(1)), rel=0.01)
    assert (tmp_path / "one.png").stat().st_size > 0


def test_a_robot_without_degrees_of_freedom(tmp_path, capsys):
    """Zero count: a robot of fixed joints only simulates, plots and animates (the plot had no
    joints to draw, "joints is empty", and the animation's framing no point to frame)."""
    path = tmp_path / "rigid.urdf"
    path.write_text(RIGID)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no "mean of empty slice" on the way
        code = main(["simulate", str(path), "--duration", "0.01", "--no-validate", "--plot", str(tmp_path / "r.png"),
                     "--html", str(tmp_path / "r.html")])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    _clean(out, err)
    assert "rigid: 0 DOF (fixed base)" in out and "completed: 10 steps, 11 saved states" in out
    assert (tmp_path / "r.png").stat().st_size > 0 and (tmp_path / "r.html").stat().st_size > 0


def test_a_batch_of_no_cases_is_named():
    """Zero count in a batch: its error said "must have shapes (0, 2) ..., got (0, 2)"."""
    model = db.load_robot("chain:2")
    with pytest.raises(db.InputError, match=r"^q0 \(or v0, tau\) holds no case: a batch needs at least one"):
        db.simulate_batch(model, np.zeros((0, 2)), np.zeros((0, 2)), 0.01, 1e-3)


def test_the_force_arrows_need_a_weight():
    """Zero weight in the pictures' geometry: the arrows' length per weight is refused by name
    (it gave arrows of infinite length, cut to the longest); the animation passes the largest
    force in a weightless run (tested with the zero-gravity quadruped's HTML above)."""
    from denoc_bridge.viz import geometry as vg

    force, point = np.ones((3, 1, 3)), np.zeros((3, 1, 3))
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(db.InputError, match=r"^weight must be a force > 0 \(N\)"):
            vg.contact_marks(force, point, 1.0, bad)
    assert len(vg.contact_marks(force, point, 1.0, 10.0)) == 1
