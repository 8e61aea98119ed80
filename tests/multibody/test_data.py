"""Data: the work buffers and the check that they fit a model."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.cli import main as cli_main
from denoc_bridge.core import sized
from denoc_bridge.multibody import data as data_module
from denoc_bridge.multibody.data import run_chunks


def test_check_refuses_what_is_not_a_model_by_name():
    """``data.check(None)`` raised AttributeError ('NoneType' object has no attribute 'n_links')."""
    data = db.Data(db.load_robot("chain:3"))
    for bad in (None, "chain:3", 3):
        with pytest.raises(db.InputTypeError, match="model must be a denoc_bridge Model"):
            data.check(bad)


def test_check_names_both_sizes_for_another_model():
    data = db.Data(db.load_robot("chain:3"))
    with pytest.raises(db.InputError, match=r"3 links and nv=3, not for 'planar_chain4' \(4 links, nv=4\)"):
        data.check(db.load_robot("chain:4"))


def test_a_data_of_a_mimic_model_holds_its_trees_buffers():
    """``db.Data(mimic_model)`` was sized by the reduced nq/nv, so that every function given it
    refused it ('data was created for a model with 9 links and nv=8, not for 'panda' (9 links,
    nv=9)'): the recursions run on the tree.  Now it is the tree's Data, and the results equal
    those without a data."""
    mm = db.load_robot("panda", mimic=True)
    data = db.Data(mm)
    assert (data.nq, data.nv) == (mm.tree.nq, mm.tree.nv)
    assert data.check(mm) is data and data.check(mm.tree) is data
    q, v = db.random_configuration(mm, 1), np.linspace(-1.0, 1.0, mm.nv)
    R, p = db.forward_kinematics(mm, q, data=data)
    R0, p0 = db.forward_kinematics(mm, q)
    assert np.array_equal(R, R0) and np.array_equal(p, p0)
    tau = np.linspace(0.5, -0.5, mm.nv)
    assert np.array_equal(db.forward_dynamics(mm, q, v, tau, data=data), db.forward_dynamics(mm, q, v, tau))
    with pytest.raises(db.InputError, match="data was created for a model with 9 links and nv=9"):
        data.check(db.load_robot("chain:3"))


def test_a_status_of_arrays_the_caller_sized():
    """-2 from an entry whose arrays the caller sized is the caller's defect (RuntimeError naming
    the entry); 0 and the statuses of values (-1, -3, k + 1) are returned for a named error."""
    for status in (0, -1, -3, 4):
        assert sized(status, "x") == status
    with pytest.raises(RuntimeError, match="the compiled energies refused the lengths"):
        sized(-2, "the compiled energies")


@pytest.mark.parametrize("n", [1, 5, 64, 65, 200])
def test_run_chunks_covers_every_item_once_and_raises_a_refusal(n, monkeypatch):
    """The chunks cover 0:n once each; below ``serial_below`` in one call on this thread; a
    chunk's -2 is raised, and a status that a chunk kernel never returns too."""
    monkeypatch.setattr(data_module, "batch_threads", lambda: 3)
    seen, threads = np.zeros(n, int), set()

    def kernel(tag, start, stop):
        seen[start:stop] += 1
        threads.add(threading.get_ident())
        return 0

    run_chunks(kernel, n, "tag", serial_below=65)
    assert np.all(seen == 1)
    assert (threads == {threading.get_ident()}) == (n < 65 or n == 1)
    for status, match in [(-2, "refused the lengths"), (7, "returned the status 7")]:
        with pytest.raises(RuntimeError, match=match):
            run_chunks(lambda start, stop, s=status: s if start == 0 else 0, n)


def test_the_batch_threads_are_set_per_calling_thread(monkeypatch):
    """set_num_threads / get_num_threads (numba's were per calling thread too): the default is
    DENOC_BRIDGE_NUM_THREADS or the CPUs this process may use; a batch's results do not depend on
    its thread count; bad counts are named."""
    monkeypatch.delenv(data_module.THREADS_ENV, raising=False)
    monkeypatch.setattr(data_module._threads, "n", None, raising=False)  # whatever this thread set before
    default = db.get_num_threads()
    assert default >= 1
    most = data_module.max_threads()
    monkeypatch.setenv(data_module.THREADS_ENV, str(most))
    assert db.get_num_threads() == most
    model = db.load_robot("panda")
    rng = np.random.default_rng(4)
    Q = np.array([db.random_configuration(model, rng) for _ in range(300)])
    V, X = rng.standard_normal((2, 300, model.nv))
    many = db.forward_dynamics(model, Q, V, X)
    seen = []
    worker = threading.Thread(target=lambda: (db.set_num_threads(1), seen.append(db.get_num_threads())))
    worker.start()
    worker.join()
    assert seen == [1] and db.get_num_threads() == most  # the other thread's setting stays its own
    db.set_num_threads(1)
    try:
        assert db.get_num_threads() == 1
        assert np.array_equal(db.forward_dynamics(model, Q, V, X), many)
    finally:
        data_module._threads.n = None
    for bad, error, match in [
        (0, db.InputError, "from 1 to the"),
        (most + 1, db.InputError, f"from 1 to the {most} CPUs"),
        (2.0, db.InputTypeError, "must be an int"),
    ]:
        with pytest.raises(error, match=match):
            db.set_num_threads(bad)
    db.set_num_threads(most)  # the machine's CPUs: taken
    data_module._threads.n = None
    for text, match in [("many", "not a whole number"), ("0", "1 to"), (str(most + 1), "1 to")]:
        monkeypatch.setenv(data_module.THREADS_ENV, text)
        with pytest.raises(db.InputError, match=f"DENOC_BRIDGE_NUM_THREADS='{text}'.*{match}"):
            db.get_num_threads()


def test_the_command_line_names_a_bad_thread_count_before_it_runs(monkeypatch, capsys):
    """DENOC_BRIDGE_NUM_THREADS is checked before the command: one line, exit 2, nothing run (it
    was read at the first batch call, after the simulation)."""
    monkeypatch.setenv(data_module.THREADS_ENV, "abc")
    assert cli_main(["simulate", "chain:3", "--duration", "0.01", "--no-html", "--no-plot"]) == 2
    out = capsys.readouterr()
    assert out.err.strip() == "denoc-bridge: error: DENOC_BRIDGE_NUM_THREADS='abc' is not a whole number of threads"
    assert "completed" not in out.out
