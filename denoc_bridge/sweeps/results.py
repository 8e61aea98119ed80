"""The result of a sweep: its table of cases, columns, trajectories and summary."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from denoc_bridge._text import count as _count
from denoc_bridge.errors import InputError
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
        if name not in self.columns:
            raise KeyError(f"no column {name!r}; columns: {', '.join(self.columns)}")
        values = [r.get(name, np.nan) for r in self.rows]
        return np.array(values, dtype=object if any(isinstance(v, str) for v in values) else float)

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if r.get("status") != "completed"]

    def trajectory(self, case: str, model: Model | MimicModel) -> Trajectory:
        """The saved trajectory of ``case`` (for ``model``, or the varied model of that case)."""

        if self.out is None:
            raise InputError("this sweep saved no files (out=None)")
        path = self.out / "cases" / f"{case}.npz"
        if not path.exists():
            raise InputError(f"no saved trajectory for case {case!r} ({path})")
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
