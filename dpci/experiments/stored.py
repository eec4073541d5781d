"""The finished states of bootstrap runs and sweeps as bytes, for :class:`dpci.ledger.results.ResultStore`.

A state is a frozen dataclass of arrays, frames, plain values and dicts of plain values. It is written
as one ``.npz`` archive (no pickle: a database row is never code to run): arrays as they are, bit for
bit; a frame column by column (numeric columns as arrays, others as JSON); the rest as JSON (Python's
floats round-trip exactly through their ``repr``).
"""

from __future__ import annotations

import dataclasses
import io
import json
from typing import Any

import numpy as np

from .progress import CoverageProgress, VariabilityProgress
from .repeat import RepeatProgress
from .sweeps import SweepProgress

KINDS = {cls.__name__: cls for cls in (VariabilityProgress, CoverageProgress, SweepProgress, RepeatProgress)}


def _plain(value):
    """``value`` with numpy scalars and tuples turned into what JSON writes and reads back alike."""
    if isinstance(value, dict):
        return {"__dict__": [[_plain(k), _plain(v)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return {"__tuple__" if isinstance(value, tuple) else "__list__": [_plain(v) for v in value]}
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot store a {type(value).__name__}")


def _unplain(value):
    if isinstance(value, dict):
        if "__dict__" in value:
            return {_unplain(k): _unplain(v) for k, v in value["__dict__"]}
        if "__tuple__" in value:
            return tuple(_unplain(v) for v in value["__tuple__"])
        return [_unplain(v) for v in value["__list__"]]
    return value


def encode(state, warnings=()) -> bytes:
    """``state`` (one of :data:`KINDS`) as bytes, with the ``warnings`` its run gave (texts); TypeError for
    anything else."""
    import pandas as pd

    name = type(state).__name__
    if KINDS.get(name) is not type(state):
        raise TypeError(f"cannot store a {name}")
    arrays: dict[str, Any] = {}  # (Any: numpy types savez_compressed's keywords as its options)
    fields: dict[str, object] = {}
    for field in dataclasses.fields(state):
        value = getattr(state, field.name)
        if isinstance(value, np.ndarray):
            if value.dtype == object:
                raise TypeError(f"cannot store the object array {field.name}")
            arrays[f"a/{field.name}"] = value
        elif isinstance(value, pd.DataFrame):
            columns = []
            for i, column in enumerate(value.columns):
                data = value[column].to_numpy()
                if data.dtype.kind in "biuf":
                    arrays[f"f/{field.name}/{i}"] = data
                    columns.append([_plain(column), None])
                else:
                    columns.append([_plain(column), [_plain(v) for v in data.tolist()]])
            fields[field.name] = {"__frame__": columns, "index": len(value)}
        else:
            fields[field.name] = _plain(value)
    out = io.BytesIO()
    text = json.dumps({"kind": name, "fields": fields, "warnings": [str(w) for w in warnings]})
    meta = np.frombuffer(text.encode(), dtype=np.uint8)
    np.savez_compressed(out, __meta__=meta, **arrays)
    return out.getvalue()


def decode(payload: bytes):
    """The state :func:`encode` wrote (its warnings: :func:`decode_warnings`)."""
    import pandas as pd

    with np.load(io.BytesIO(payload), allow_pickle=False) as archive:
        meta = json.loads(archive["__meta__"].tobytes().decode())
        values = {}
        for name, value in meta["fields"].items():
            if isinstance(value, dict) and "__frame__" in value:
                data = {}
                for i, (column, cells) in enumerate(value["__frame__"]):
                    column = _unplain(column)
                    data[column] = archive[f"f/{name}/{i}"] if cells is None else [_unplain(c) for c in cells]
                values[name] = pd.DataFrame(data, index=range(value["index"]))
            else:
                values[name] = _unplain(value)
        for key in archive.files:
            if key.startswith("a/"):
                values[key[2:]] = archive[key]
    return KINDS[meta["kind"]](**values)


def decode_warnings(payload: bytes) -> list[str]:
    """The warnings :func:`encode` wrote with a state."""
    with np.load(io.BytesIO(payload), allow_pickle=False) as archive:
        return list(json.loads(archive["__meta__"].tobytes().decode()).get("warnings", []))
