"""One shape for results, one way to JSON.

A result class (a prediction, a WEAT row, a packed array...) is a :class:`Result`: it has
``as_dict()``, its JSON data. Analyses that return plain dicts need nothing more. Every
place that sends a result out as JSON (the CLI's ``--json``, a view's data, the lab's API)
goes through :func:`jsonable`, the one converter: numpy values become Python numbers and
lists, NaN and infinities become null (JSON has no such numbers: an undefined value is
null), dataclasses and results become dicts, paths become strings.

Nothing heavy is imported here (no numpy): the CLI imports it at start.

>>> import numpy as np
>>> jsonable({"cosine": np.float32(0.5), "spread": float("nan"), "rows": np.array([[1, 2]])})
{'cosine': 0.5, 'spread': None, 'rows': [[1, 2]]}
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Mapping
from pathlib import PurePath
from typing import Any, Protocol, runtime_checkable

__all__ = ["Result", "jsonable"]


@runtime_checkable
class Result(Protocol):
    """A result object: ``as_dict()`` gives its JSON data (a dict of plain values, or of
    values :func:`jsonable` converts)."""

    def as_dict(self) -> dict[str, Any]: ...


def _key(k: Any) -> str:
    """A mapping's key as JSON writes it: ``1 -> "1"``, ``True -> "true"``, others as text.

    >>> _key("bank"), _key(3), _key(1.5), _key(True), _key(None)
    ('bank', '3', '1.5', 'true', 'null')
    """
    if isinstance(k, str):
        return k
    if isinstance(k, bool) or k is None:
        return {True: "true", False: "false", None: "null"}[k]
    return str(k)


def jsonable(obj: Any, *, hide: Collection[str] = ()) -> Any:
    """``obj`` as JSON-ready Python values (see the module's docstring); ``hide``: keys left
    out of every mapping, at any depth (the lab hides an encoder's ``path`` on the server).

    >>> jsonable({"a": float("nan"), "b": (1.5, float("inf")), "c": [None, "x"], 2: PurePath("f.txt")})
    {'a': None, 'b': [1.5, None], 'c': [None, 'x'], '2': 'f.txt'}
    >>> jsonable({"encoder": {"model": "minilm", "path": "/srv/minilm"}}, hide={"path"})
    {'encoder': {'model': 'minilm'}}
    >>> jsonable(object())
    Traceback (most recent call last):
    ...
    TypeError: not JSON serialisable: object
    """
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, str | int | bool) or obj is None:
        return obj
    if isinstance(obj, Result):  # before tuples: a NamedTuple result has its own shape
        return jsonable(obj.as_dict(), hide=hide)
    if isinstance(obj, Mapping):
        return {_key(k): jsonable(v, hide=hide) for k, v in obj.items() if k not in hide}
    if isinstance(obj, list | tuple):
        return [jsonable(v, hide=hide) for v in obj]
    if type(obj).__module__ == "numpy" and hasattr(obj, "tolist"):  # arrays and numpy scalars
        return jsonable(obj.tolist(), hide=hide)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: jsonable(getattr(obj, f.name), hide=hide) for f in dataclasses.fields(obj)
                if f.name not in hide}
    if isinstance(obj, PurePath):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")
