"""Many simulations at once: parameter sweeps on one machine or on a Dask cluster.

:func:`sweep` (:mod:`.api`) runs the cases (:mod:`.cases`: grids, case files, ``vary``) as tasks
(:mod:`.execution`), keeps their files (:mod:`.store`) and returns a :class:`SweepResult`
(:mod:`.results`) with the summary numbers of :mod:`.metrics`.
"""

from denoc_bridge.sweeps.api import sweep
from denoc_bridge.sweeps.cases import grid, read_cases, vary
from denoc_bridge.sweeps.execution import ClusterStartError
from denoc_bridge.sweeps.metrics import DEFAULT_METRICS, METRICS, TIMING_COLUMNS
from denoc_bridge.sweeps.results import SweepResult
from denoc_bridge.sweeps.store import DifferentSweepError

__all__ = [
    "sweep",
    "grid",
    "read_cases",
    "vary",
    "SweepResult",
    "DifferentSweepError",
    "ClusterStartError",
    "METRICS",
    "DEFAULT_METRICS",
    "TIMING_COLUMNS",
]
