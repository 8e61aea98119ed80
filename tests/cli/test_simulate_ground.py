"""``denoc-bridge simulate`` with the ground (issue 37): on by default for a floating-base robot,
``--hold`` makes a legged robot stand, ``--drop`` and ``--mu``; the options that do not go with
it are named; the dampers are implicit in the contact stepper (icub runs with its damping)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.cli.main import main
from denoc_bridge.simulation.trajectory import _cumulative_integral

FAST = ["--no-html", "--no-plot", "--no-validate"]


def _one_line_error(err: str) -> str:
    lines = [x for x in err.splitlines() if x.startswith("denoc-bridge: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_solo12_dropped_with_hold_stands_and_the_ground_carries_its_weight(tmp_path, capsys):
    out_file = tmp_path / "solo.npz"
    args = ["simulate", "solo12", "--duration", "1.5", "--save", str(out_file), *FAST]  # the hold: by default
    assert main(args) == 0
    out = capsys.readouterr().out
    assert re.search(
        r"ground: z = 0, friction 0\.8, \d+ contact points from the collision shapes; posture hold at 5 Hz", out
    )
    assert "simulating 1.5 s with contact-euler" in out and "its lowest point 0.3 m above the ground" in out
    m = re.search(r"the ground, which carries (\S+) N \((\S+)% of the weight", out)
    assert m is not None and float(m.group(2)) == pytest.approx(100.0, abs=0.05), out
    # the energy balance counts the contacts' work, the impacts' included (issue 47): it closes to
    # the stepper's accuracy, and what the contacts took is what the drop gave (m g h, 7.37 J)
    m = re.search(r"energy drift: max \|E - E\(0\) - W_in - W_contact\| = (\S+) J = (\S+) of the", out)
    assert m is not None and float(m.group(2)) < 5e-3, out
    assert "; W_in: actuation with the posture hold; W_contact: contact forces and impacts" in out
    m = re.search(r"energy: the contacts took (\S+) J \(the impacts, restitution 0: (\S+) J;", out)
    assert m is not None and float(m.group(1)) == pytest.approx(7.37, abs=0.01), out
    traj = db.Trajectory.load(out_file, db.load_robot("solo12"))
    # the stepper never makes energy: without the impacts' share the balance is never positive
    E = traj.total_energy
    w_in = _cumulative_integral(traj.power_in, traj.t)
    assert np.max(E - E[0] - w_in - traj.contact_work) <= 0.0
    assert traj.method == "contact-euler" and traj.contact_force is not None
    z = traj.q[traj.t > 1.0, 2]
    assert z.max() - z.min() < 1e-6  # standing
    assert np.abs(traj.q[-1, 7:]).max() < 5e-3  # the start posture (neutral) held


def test_drop_and_mu(tmp_path, capsys):
    args = ["simulate", "solo12", "--drop", "0.05", "--mu", "0.3", "--hold", "2", "--duration", "0.2", *FAST]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "friction 0.3" in out and "posture hold at 2 Hz" in out and "0.05 m above the ground" in out
    assert main(["simulate", "solo12", "--no-hold", "--duration", "0.2", *FAST]) == 0
    assert "; no posture hold" in capsys.readouterr().out


def test_icub_runs_with_its_stiff_damping_on_the_ground(capsys):
    """icub's neck damping (1 N m s/rad on 1e-17 kg m^2) stops rk4 at once; in the contact stepper
    the dampers are implicit: it completes, damping on."""
    assert main(["simulate", "icub", "--duration", "0.05", *FAST]) == 0
    out = capsys.readouterr().out
    assert "completed: 50 steps" in out and "the joint damping acts" in out


@pytest.mark.parametrize(
    "args, words",
    [
        (
            ["solo12", "--method", "rk4"],
            "--method rk4 does not simulate ground contact (on by default for a floating-base",
        ),
        (
            ["solo12", "--ground", "--method", "euler"],
            "--method euler does not simulate ground contact: leave --method out",
        ),
        (["solo12", "--no-ground", "--hold"], "--hold goes with the ground (--ground), and --no-ground was given"),
        (["solo12", "--hold", "--no-hold"], "--hold and --no-hold contradict each other"),
        (["panda", "--drop", "0.1"], "--drop goes with the ground (--ground), and 'panda' has a fixed base"),
        (
            ["panda", "--ground", "--drop", "0.1"],
            "--drop lifts a floating base onto the ground, and 'panda' has a fixed",
        ),
        (["panda", "--mu", "0.5"], "--mu is the ground's friction coefficient"),
        (["solo12", "--no-forces"], "--no-forces leaves the contact forces out of the animation, and --no-html"),
        (["solo12", "--hold", "-2"], "--hold must be a number >= 0, got -2"),
        (["solo12", "--stream", "run.npy"], "--stream is not available with the ground yet"),
        (["solo12", "--no-passive"], "--no-passive is not available with the ground yet"),
        (["solo12", "--no-ground", "--method", "contact-euler"], "is the contact time stepper: it needs the ground"),
        (["fourbar", "--ground"], "'fourbar' has no collision shapes to touch the ground with"),
        (["chain:3", "--ground"], "has no collision shapes to touch the ground with"),
        (["solo12", "--mesh-tolerance", "-0.001"], "--mesh-tolerance must be a distance >= 0 (m), got -0.001"),
        (["solo12", "--mesh-points", "0"], "--mesh-points must be a whole number >= 1, got 0"),
        (["solo12", "--full-hull", "--mesh-points", "8"], "--full-hull keeps every vertex of each mesh's hull"),
        (["panda", "--full-hull"], "--full-hull chooses the contact points of collision meshes: it goes with the"),
    ],
)
def test_options_that_do_not_go_with_the_ground_are_named(args, words, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["simulate", *args, "--duration", "0.1", *FAST]) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert words in line, line


def test_the_animation_draws_the_contact_forces_unless_no_forces(tmp_path, capsys):
    """The HTML of a run with the ground draws its contact forces (the caption says what the
    arrows are); --no-forces leaves them out."""
    for extra, arrows in (([], True), (["--no-forces"], False)):
        html = tmp_path / f"solo{len(extra)}.html"
        args = ["simulate", "solo12", "--drop", "0", "--duration", "0.05", "--html", str(html), *extra]
        assert main([*args, "--no-plot", "--no-validate"]) == 0
        page = html.read_text(encoding="utf-8")
        assert ("black arrows: the contact forces" in page) is arrows and "the ground is where the contact is" in page
    capsys.readouterr()
    args = ["simulate", "panda", "--no-forces", "--duration", "0.01", "--html", str(tmp_path / "p.html")]
    assert main([*args, "--no-plot", "--no-validate"]) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert "--no-forces goes with the ground (--ground), and 'panda' has a fixed base" in line, line


def test_no_ground_keeps_the_free_fall(capsys):
    assert main(["simulate", "solo12", "--no-ground", "--duration", "0.1", *FAST]) == 0
    out = capsys.readouterr().out
    assert "with rk4" in out and "ground" not in out.split("simulating")[0]


def test_a_floating_robot_without_collision_shapes_falls_freely_by_default(capsys):
    """The ground is on by default for a floating base; a robot with nothing to touch it with
    (alexander: no <collision> shapes) is simulated without it, as a note says; asked for, the
    ground is an error that says what to do."""
    assert main(["simulate", "alexander", "--duration", "0.05", *FAST]) == 0
    captured = capsys.readouterr()
    assert "'Alexander' has no collision shapes to touch the ground with: simulated without the ground" in captured.err
    assert "with rk4" in captured.out
    assert main(["simulate", "alexander", "--ground", "--duration", "0.05", *FAST]) == 2
    assert "--no-ground simulates it without" in _one_line_error(capsys.readouterr().err)


def test_mesh_options_choose_the_candidates(capsys):
    """By default a collision mesh gives a sparse subset of its hull's vertices (solo12: 778 of
    7,888 points); --full-hull keeps them all, --mesh-points caps each of its 17 meshes."""
    counts = {}
    for extra in ([], ["--full-hull"], ["--mesh-points", "8"], ["--mesh-tolerance", "0.005"]):
        assert main(["simulate", "solo12", "--duration", "0.01", *extra, *FAST]) == 0
        found = re.search(r"friction 0\.8, (\d+) contact points from the collision shapes", capsys.readouterr().out)
        assert found is not None
        counts[" ".join(extra)] = int(found.group(1))
    assert counts["--full-hull"] == 7888 and counts["--mesh-points 8"] == 17 * 8
    assert counts["--mesh-tolerance 0.005"] < counts[""] < 1000
