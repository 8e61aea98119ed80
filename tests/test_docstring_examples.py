"""The ``Examples`` of the public API's docstrings run as written (doctest), so that the API
reference (mkdocstrings renders the docstrings) shows outputs a user gets.

``mkdocs build`` does not run them and ``tests/test_docs.py`` runs the pages' fenced blocks
only; pytest is not run with ``--doctest-modules`` (``SweepResult`` also declares its public
home ``denoc_bridge.sweeps``, where doctest's module finder would not look).  The objects are
listed here; each example imports what it uses.
"""

from __future__ import annotations

import doctest

import pytest

import denoc_bridge as db
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.sweeps import SweepResult

DOCUMENTED = [
    db.Data.check,
    MimicModel.expand,
    MimicModel.reduce_configuration,
    MimicModel.reduce_velocity,
    MimicModel.reduce_forces,
    MimicModel.full_forces,
    db.Model.add_loop_closure,
    db.Model.replace,
    db.Model.link_index,
    db.Model.joint_index,
    db.Model.joint_label,
    db.Trajectory.energy_drift,
    db.Trajectory.at,
    db.Trajectory.resample,
    db.Trajectory.to_npz,
    db.center_of_mass,
    db.energies,
    db.forward_kinematics,
    db.link_velocities,
    db.kinetic_energy,
    db.potential_energy,
    db.cycloidal_motion,
    db.feedforward,
    db.trajectory_torques,
    db.difference,
    db.integrate,
    db.interpolate,
    db.neutral_configuration,
    db.random_configuration,
    db.from_pinocchio,
    db.to_pinocchio,
    db.denoc_matrices,
    db.uncoupled_newton_euler,
    db.Ground,
    db.contact_point,
    SweepResult.column,
    SweepResult.trajectory,
]

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _examples(obj) -> doctest.DocTest:
    found = doctest.DocTestFinder(recurse=False).find(obj, obj.__qualname__, globs={})
    assert len(found) == 1 and found[0].examples, f"{obj.__qualname__}: no Examples in its docstring"
    return found[0]


@pytest.mark.parametrize("obj", DOCUMENTED, ids=lambda o: o.__qualname__)
def test_docstring_examples_run_as_written(obj, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    test = _examples(obj)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test, out=lambda text: print(text, end=""))  # pytest shows the report on failure
    assert runner.failures == 0, f"{runner.failures} of {runner.tries} examples of {obj.__qualname__} failed"


def test_the_list_names_public_objects_only():
    """Each object of the list is a public name of the package (what the API reference documents)."""
    for obj in DOCUMENTED:
        owner = obj.__qualname__.split(".")[0]
        assert getattr(db, owner, None) is not None or getattr(db.sweeps, owner, None) is not None, owner
