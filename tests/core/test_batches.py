"""The compiled batch chunks (dynamics_chunk, matrix_chunk): the lengths of their arrays are
checked before anything is indexed, a strided or read-only output is refused, and a chunk
computes exactly its states."""

from __future__ import annotations

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.core import tree as compiled

NO_FEXT = np.zeros((0, 0, 6))


@pytest.fixture(scope="module")
def states(panda):
    rng = np.random.default_rng(11)
    Q = np.array([db.random_configuration(panda, rng) for _ in range(5)])
    return Q, rng.standard_normal((5, panda.nv)), rng.standard_normal((5, panda.nv))


def test_a_chunk_computes_its_states_only(panda, states):
    Q, V, X = states
    out, status = np.full((5, panda.nv), -7.0), np.full(5, 99, dtype=np.int64)
    assert compiled.dynamics_chunk(panda._kt, Q, V, X, NO_FEXT, out, status, False, 1, 3) == 0
    assert status.tolist() == [99, 0, 0, 99, 99] and np.all(out[[0, 3, 4]] == -7.0)
    for b in (1, 2):
        assert np.array_equal(out[b], db.forward_dynamics(panda, Q[b], V[b], X[b]))
    M, status = np.full((5, panda.nv, panda.nv), -7.0), np.full(5, 99, dtype=np.int64)
    assert compiled.matrix_chunk(panda._kt, Q, M, status, False, 4, 5) == 0
    assert status.tolist() == [99, 99, 99, 99, 0] and np.array_equal(M[4], db.mass_matrix(panda, Q[4]))


@pytest.mark.parametrize(
    "change",
    ["V rows", "OUT rows", "status length", "FEXT links", "start past stop", "stop past B"],
)
def test_lengths_that_do_not_fit_compute_nothing(panda, states, change):
    Q, V, X = states
    out, status, fext = np.full((5, panda.nv), -7.0), np.full(5, 99, dtype=np.int64), NO_FEXT
    start, stop = 0, 5
    if change == "V rows":
        V = V[:4].copy()
    elif change == "OUT rows":
        out = np.full((4, panda.nv), -7.0)
    elif change == "status length":
        status = np.full(6, 99, dtype=np.int64)
    elif change == "FEXT links":
        fext = np.zeros((5, panda.n_links + 1, 6))
    elif change == "start past stop":
        start = 3
        stop = 2
    else:
        stop = 6
    assert compiled.dynamics_chunk(panda._kt, Q, V, X, fext, out, status, False, start, stop) == -2
    assert np.all(out == -7.0) and np.all(status == 99)


@pytest.mark.parametrize("array", ["Q", "V", "X", "OUT"])
def test_rows_of_the_wrong_length_are_each_states_status(panda, states, array):
    """Rows that do not fit the model: every state's status is -2 (the Python layer names the
    culprit) and nothing is written."""
    Q, V, X = states
    out, status = np.full((5, panda.nv), -7.0), np.full(5, 99, dtype=np.int64)
    longer = {"Q": Q.shape, "V": V.shape, "X": X.shape, "OUT": out.shape}[array]
    arrays = {"Q": Q, "V": V, "X": X, "OUT": out}
    arrays[array] = np.full((longer[0], longer[1] + 1), -7.0 if array == "OUT" else 0.0)
    assert (
        compiled.dynamics_chunk(
            panda._kt, arrays["Q"], arrays["V"], arrays["X"], NO_FEXT, arrays["OUT"], status, False, 0, 5
        )
        == 0
    )
    assert np.all(status == -2) and np.all(arrays["OUT"] == -7.0)


def test_outputs_that_cannot_be_written_in_place_are_refused(panda, states):
    Q, V, X = states
    status = np.zeros(5, dtype=np.int64)
    strided = np.zeros((5, panda.nv, 2 * panda.nv))[:, :, ::2]
    with pytest.raises(TypeError, match="OUT"):
        compiled.matrix_chunk(panda._kt, Q, strided, status, False, 0, 5)
    frozen = np.zeros((5, panda.nv))
    frozen.flags.writeable = False
    with pytest.raises(TypeError, match="OUT"):
        compiled.dynamics_chunk(panda._kt, Q, V, X, NO_FEXT, frozen, status, False, 0, 5)
    for bad in (status.astype(np.int32), status.astype(">i8")):  # another type, another byte order
        with pytest.raises(TypeError, match="status"):
            compiled.dynamics_chunk(panda._kt, Q, V, X, NO_FEXT, np.zeros((5, panda.nv)), bad, False, 0, 5)


@pytest.mark.parametrize("inverse", [False, True])
def test_wrenches_are_read_in_place(panda, states, inverse):
    """dynamics_chunk reads FEXT (B, L, 6) itself: a strided FEXT is refused (it once took the
    pointer of FEXT.reshape(...), a copy freed at once: a heap-use-after-free under the sanitizer
    build), a C-contiguous one gives each state's call bit for bit."""
    Q, V, X = states
    fext = np.random.default_rng(12).standard_normal((5, panda.n_links, 6))  # > 1 KiB: ASan sees a misuse
    status = np.zeros(5, dtype=np.int64)
    for strided in (np.asfortranarray(fext), np.repeat(fext, 2, axis=2)[:, :, ::2]):
        with pytest.raises(TypeError, match="FEXT"):
            compiled.dynamics_chunk(panda._kt, Q, V, X, strided, np.zeros((5, panda.nv)), status, inverse, 0, 5)
    out = np.full((5, panda.nv), -7.0)
    assert compiled.dynamics_chunk(panda._kt, Q, V, X, fext, out, status, inverse, 0, 5) == 0
    assert not status.any()
    state = compiled.inverse_dynamics_state if inverse else compiled.forward_dynamics_state
    for b in range(5):
        one = np.empty(panda.nv)
        assert state(panda._kt, panda.thread_work(), Q[b], V[b], X[b], fext[b], one) == 0
        assert np.array_equal(out[b], one)
