"""The files of a sweep: the manifest (``sweep.json``) that identifies it, resuming, one ``.npz``
per case and the summary table."""

from __future__ import annotations

import csv
import dataclasses
import functools
import hashlib
import io
import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from denoc_bridge._files import atomic_path, atomic_write_bytes
from denoc_bridge.errors import InputError
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.model import Model
from denoc_bridge.sweeps.cases import plain

FORMAT = "denoc_bridge sweep 2"


class DifferentSweepError(InputError):
    """``out`` holds the files of another sweep: its ``sweep.json`` records another model,
    other cases, options or metrics (``differs``: what differs), so its rows are not this
    sweep's."""

    def __init__(self, out, differs):
        self.out, self.differs = Path(out), list(differs)
        super().__init__(
            f"{out} holds a different sweep (its sweep.json records {', '.join(self.differs)}); use "
            "another folder, or resume=False to run every case again"
        )


def make_manifest(model, base_state, case_list, ids, kwargs, metric_names) -> dict:
    """What identifies a sweep (``sweep.json``), as it reads back from JSON."""
    cases = [{"case": cid, **{k: describe(v) for k, v in c.items() if k != "case"}} for cid, c in zip(ids, case_list)]
    manifest = {
        "format": FORMAT,
        "model": _model_record(model),
        "base_state": None if base_state is None else [describe(x) for x in base_state],
        "cases": cases,
        "simulate_kwargs": {k: describe(v) for k, v in sorted(kwargs.items())},
        "metrics": metric_names,
    }
    return json.loads(json.dumps(manifest))


def _model_record(model) -> dict:
    """A model by its name, source and a SHA-256 of its arrays (a factory by its name)."""

    if not isinstance(model, (Model, MimicModel)):
        return {"factory": describe(model)}
    tree = model.tree if isinstance(model, MimicModel) else model
    h = hashlib.sha256(type(model).__name__.encode())
    for key in sorted(vars(tree)):
        if not key.startswith("_") and key != "warnings":  # private: caches and derived kernel tables
            _digest(h, key)
            _digest(h, getattr(tree, key))
    _digest(h, tree.gravity)
    source = None if tree.source is None else str(tree.source)
    return {"name": model.name, "type": type(model).__name__, "source": source, "sha256": h.hexdigest()}


def _digest(h, value):
    """Feed ``value`` (arrays, numbers, text, sequences, mappings, dataclasses) to the hash ``h``."""
    if isinstance(value, np.ndarray) and value.dtype.kind != "O":
        h.update(f"array {value.dtype.str} {value.shape};".encode())
        h.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, (list, tuple, np.ndarray)):
        h.update(f"sequence {len(value)};".encode())
        for x in value:
            _digest(h, x)
    elif isinstance(value, Mapping):
        h.update(f"mapping {len(value)};".encode())
        for k in sorted(value, key=str):
            _digest(h, k)
            _digest(h, value[k])
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        h.update(f"{type(value).__name__};".encode())
        for f in dataclasses.fields(value):
            _digest(h, getattr(value, f.name))
    else:
        h.update(f"{type(value).__name__} {value!r};".encode())


def _differences(old, new) -> list[str]:
    """What the recorded sweep ``old`` has that ``new`` has not (empty: the same sweep)."""
    if not isinstance(old, dict) or old.get("format") != new["format"]:
        return ["another format (another version of denoc_bridge wrote it, or it cannot be read)"]
    out = []
    for key, what in (
        ("model", "another model"),
        ("base_state", "another base_state"),
        ("cases", "other cases"),
        ("simulate_kwargs", "other options"),
        ("metrics", "other metrics"),
    ):
        before, now = old.get(key), new[key]
        if _canonical(before) == _canonical(now):
            continue
        if key == "model" and isinstance(before, dict) and before.get("name") != now.get("name"):
            what += f" ({before.get('name')!r}, not {now.get('name')!r})"
        elif key == "cases" and isinstance(before, list) and len(before) != len(now):
            what += f" ({len(before)}, not {len(now)})"
        elif key == "cases" and isinstance(before, list):
            first = next(b for b, n in zip(before, now) if _canonical(b) != _canonical(n))
            what += f" (the first that differs: {first.get('case') if isinstance(first, dict) else first!r})"
        out.append(what)
    return out


def _canonical(value) -> str:
    """``value`` (read from JSON) as text, whole numbers as floats: 1 and 1.0 give the same sweep."""

    def norm(v):
        if isinstance(v, int) and not isinstance(v, bool):
            return float(v)
        if isinstance(v, list):
            return [norm(x) for x in v]
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        return v

    return json.dumps(norm(value), sort_keys=True)


def prepare_out(out, manifest, resume) -> Path:
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"out: {out} is a file, not a folder")
    (out / "cases").mkdir(parents=True, exist_ok=True)
    path = out / "sweep.json"
    if resume and (path.exists() or any((out / "cases").glob("*.json"))):
        try:
            old = json.loads(path.read_text())
        except (OSError, ValueError):
            old = None
        differs = _differences(old, manifest)
        if differs:
            raise DifferentSweepError(out, differs)
    atomic_write(path, json.dumps(manifest, indent=1).encode())
    if not resume:
        for p in (out / "cases").glob("*.json"):
            p.unlink()
    return out


def describe(v):
    v = plain(v)
    if isinstance(v, (int, float, str, bool)) or v is None:
        return v
    if isinstance(v, functools.partial):
        return f"{describe(v.func)} (a functools.partial)"
    if callable(v):  # by name: a repr may hold an address
        named = v if hasattr(v, "__qualname__") else type(v)
        return f"callable {getattr(named, '__module__', '')}.{named.__qualname__}"
    if isinstance(v, (list, tuple)) and any(hasattr(x, "__dict__") for x in v):  # contact points
        return [describe(x) for x in v]
    if hasattr(v, "__dict__") and not isinstance(v, np.ndarray):  # a Ground, a PostureHold: by value
        return {
            "type": type(v).__name__,
            **{k: describe(x) for k, x in sorted(vars(v).items()) if not k.startswith("_")},
        }
    return np.asarray(v).tolist()


def finished_rows(out_dir, ids) -> dict:
    rows = {}
    for cid in ids:
        p = out_dir / "cases" / f"{cid}.json"
        if p.exists():
            try:
                rows[cid] = json.loads(p.read_text())
            except ValueError:  # a torn file cannot exist (atomic writes); run it again
                continue
    return rows


def save_case(out_dir, row, blob):
    if blob is not None:
        atomic_write(out_dir / "cases" / f"{row['case']}.npz", blob)
    atomic_write(out_dir / "cases" / f"{row['case']}.json", json.dumps(row, default=plain).encode())


def atomic_write(path: Path, data: bytes):
    atomic_write_bytes(path, data)


def write_summary(out_dir, result):
    cols = result.columns
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, restval="", lineterminator="\n")
    w.writeheader()
    for r in result.rows:
        w.writerow({k: repr(v) if isinstance(v, float) else v for k, v in r.items()})
    atomic_write(out_dir / "summary.csv", buf.getvalue().encode())
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return
    columns = {}
    for c in cols:
        values = [r.get(c) for r in result.rows]
        if all(isinstance(v, str) or v is None for v in values):
            columns[c] = pa.array(values, type=pa.string())
        else:
            columns[c] = pa.array(
                [float(v) if v is not None and not isinstance(v, str) else float("nan") for v in values],
                type=pa.float64(),
            )
    with atomic_path(out_dir / "summary.parquet") as tmp:
        pq.write_table(pa.table(columns), tmp)


DifferentSweepError.__module__ = "denoc_bridge.sweeps"  # its public home
