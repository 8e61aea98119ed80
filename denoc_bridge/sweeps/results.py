"""The result of a sweep: its table of cases, columns, trajectories and summary."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from denoc_bridge._text import count as _count
from denoc_bridge._text import did_you_mean
from denoc_bridge.errors import InputError, NameLookupError
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.model import Model
from denoc_bridge.simulation.trajectory import Trajectory


class SweepResult:
    """The rows of a sweep in case order (``rows``: one dict per case), with the output folder.

    ``column(name)`` is a NumPy array of one column (NaN where a row lacks it), ``failed`` the
    rows whose status is not ``"completed"``, ``trajectory(case, model)`` loads a saved one,
    ``to_pandas()`` the table as a DataFrame (when pandas is installed).
    """

    def __init__(
        self, rows: list[dict[str, Any]], out: Path | None, wall_time: float, n_run: int, n_resumed: int
    ) -> None:
        self.rows = rows
        self.out = out
        self.wall_time = wall_time
        self.n_run = n_run
        self.n_resumed = n_resumed

    @property
    def columns(self) -> list[str]:
        cols: dict[str, None] = {}
        for r in self.rows:
            cols.update(dict.fromkeys(r))
        return list(cols)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows)

    def __repr__(self) -> str:
        return (
            f"SweepResult({_count(len(self.rows), 'case')}, {len(self.rows) - len(self.failed)} completed, "
            f"{len(self.failed)} not; out={str(self.out) if self.out else None})"
        )

    def column(self, name: str) -> np.ndarray:
        """One column of the table, one entry per case (in case order).

        Parameters
        ----------
        name : str
            A name of :attr:`columns`: an input (``"mass_scale"``, ``"q0[0]"``), ``"case"``,
            ``"status"``, ``"error"`` or a metric (``"energy_drift"``; a vector metric has one
            column per entry, ``"q_end[0]"``, ``"q_end[1]"``, ...).

        Returns
        -------
        (n_cases,) array
            float, NaN where a row lacks the column (e.g. the metrics of a case that raised);
            ``object`` when an entry is a string (names, statuses, errors).

        Raises
        ------
        NameLookupError
            No such column (with the closest names and the list); also a :class:`KeyError`.

        Examples
        --------
        >>> import denoc_bridge as db
        >>> from denoc_bridge import generators, sweeps
        >>> chain = generators.chain(3)
        >>> cases = sweeps.grid({"mass_scale": [0.5, 2.0]})
        >>> result = db.sweep(chain, cases, {"t_final": 0.05, "dt": 1e-3}, scheduler="inline", progress=False)
        >>> result.column("mass_scale"), result.column("status")
        (array([0.5, 2. ]), array(['completed', 'completed'], dtype=object))
        """
        if not isinstance(name, str) or name not in self.columns:
            raise NameLookupError(
                f"no column {name!r}{did_you_mean(str(name), self.columns)} (columns: {', '.join(self.columns)})"
            )
        values = [r.get(name, np.nan) for r in self.rows]
        return np.array(values, dtype=object if any(isinstance(v, str) for v in values) else float)

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if r.get("status") != "completed"]

    def trajectory(self, case: str, model: Model | MimicModel) -> Trajectory:
        """The saved trajectory of ``case`` (for ``model``, or the varied model of that case).

        Read from ``out/cases/CASE.npz`` by :meth:`Trajectory.load`, which checks the model by
        its joint names only: pass the model the case ran (``sweeps.vary(model, params)``) for
        its energies to be the run's.

        Parameters
        ----------
        case : str
            A case name of ``column("case")``.
        model : Model or MimicModel
            The model to attach to the trajectory.

        Returns
        -------
        Trajectory

        Raises
        ------
        InputError
            The sweep saved no files (``out=None``), or the case has no saved trajectory
            (``save_trajectories=False``, or a case that raised before simulating), or the file
            was saved for a model with other joints.
        NameLookupError
            No case of that name (with the closest names).
        InputTypeError
            ``model`` is not a denoc_bridge model.

        Examples
        --------
        >>> import tempfile
        >>> import denoc_bridge as db
        >>> from denoc_bridge import generators, sweeps
        >>> chain = generators.chain(3)
        >>> out = tempfile.mkdtemp()
        >>> result = db.sweep(chain, sweeps.grid({"mass_scale": [0.5, 2.0]}), {"t_final": 0.05, "dt": 1e-3},
        ...                   out=out, scheduler="inline", progress=False)
        >>> result.trajectory("case00001", sweeps.vary(chain, {"mass_scale": 2.0}))
        Trajectory('planar_chain3', 51 states, t = 0 .. 0.05 s, method='rk4', status='completed')
        """
        if self.out is None:
            raise InputError("this sweep saved no files (out=None)")
        names = [str(r.get("case")) for r in self.rows]
        if not isinstance(case, str) or case not in names:
            raise NameLookupError(f"no case named {case!r} in this sweep{did_you_mean(str(case), names)}")
        path = self.out / "cases" / f"{case}.npz"
        if not path.exists():
            raise InputError(
                f"no saved trajectory for case {case!r} ({path}): saved with save_trajectories=False, "
                "or the case raised before it simulated"
            )
        return Trajectory.load(path, model)

    def to_pandas(self) -> Any:  # a pandas.DataFrame (pandas is not a dependency: no annotation needs it)
        """The table as a pandas DataFrame (pandas is not a dependency of denoc_bridge)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(
                "SweepResult.to_pandas needs pandas, which denoc_bridge does not install: pip install pandas"
            ) from None

        return pd.DataFrame(self.rows, columns=self.columns)

    def summary(self) -> str:
        by: dict[Any, int] = {}
        for r in self.rows:
            by[r.get("status")] = by.get(r.get("status"), 0) + 1
        text = f"{_count(len(self.rows), 'case')}: " + ", ".join(f"{n} {s}" for s, n in sorted(by.items()))
        text += f" ({self.n_run} run now, {self.n_resumed} from an earlier run) in {self.wall_time:.2f} s"
        return text


SweepResult.__module__ = "denoc_bridge.sweeps"  # its public home
