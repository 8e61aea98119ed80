"""A sweep metric for the test of a sweep that loses a Dask worker (tests/sweeps/test_sweeps.py).

The workers unpickle it by reference: they import this module from the test folder, which
pytest put on ``sys.path`` and which Dask's spawned worker processes inherit."""

from __future__ import annotations

import os
import signal


class KillWorkerOnce:
    """A sweep metric that kills the process it runs in (SIGKILL, as a crash or the OOM killer
    would) the ``after``-th time it is called across all processes, once; otherwise returns 0.

    For the test of a sweep that loses a Dask worker mid-run (tests/sweeps/test_sweeps.py): the
    calls are counted with files in ``folder`` (exclusive creation), so exactly one process
    dies, whatever the scheduling.
    """

    __name__ = "kill_worker_once"

    def __init__(self, folder: str | os.PathLike[str], after: int = 3) -> None:
        self.folder = str(folder)
        self.after = int(after)

    def __call__(self, trajectory: object) -> float:
        for i in range(1, 1 << 20):
            try:
                fd = os.open(os.path.join(self.folder, f"call{i}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                continue
            os.close(fd)
            if i == self.after:
                os.kill(os.getpid(), signal.SIGKILL)
            return 0.0
        return 0.0
