"""The rows a corpus pass hands from step to step, typed once.

A pass reads :class:`~contextlens.corpus.targets.Sentence` s, keeps those holding target
usages as :class:`PlannedSentence` s (cheap: no model), and a runner encodes them into an
:class:`EncodedChunk`: one :class:`UsageRow` per usage and, per layer, their vectors. The
usage index stores exactly these rows (its column names are :class:`UsageRow`'s fields);
distillation pools the vectors by ``row.word``.

>>> row = UsageRow("3060f1fefc5c12c1", "bank", "Bank", "d.txt", 0, 4, 8, "The Bank by the bank.")
>>> chunk = EncodedChunk([row], {6: np.zeros((1, 3), np.float32)})
>>> EncodedChunk.concat([chunk, EncodedChunk.empty([6], 3), chunk], [6], 3).vectors[6].shape
(2, 3)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ..corpus.targets import Occurrence

__all__ = ["UsageRow", "ROW_COLUMNS", "PACKED", "pack_row", "unpack_row", "PlannedSentence",
           "EncodedChunk"]


class UsageRow(NamedTuple):
    """One usage as stored: every column of the index's ``usages`` table but the chunk and
    the vectors. Its field names are the column names (the schema is made from them)."""

    usage_id: str
    word: str
    form: str
    doc: str
    sentence_no: int
    start: int
    end: int
    sentence: str


ROW_COLUMNS = list(UsageRow._fields)
PACKED = "row"  # the index's column that holds each usage row again, packed (pack_row)


def pack_row(row) -> str:
    """A :class:`UsageRow` as the index's ``row`` column holds it (a JSON list).

    >>> r = UsageRow("u1", "bank", "banks", "d.txt", 3, 4, 9, "the banks of it")
    >>> pack_row(r)
    '["u1","bank","banks","d.txt",3,4,9,"the banks of it"]'
    >>> unpack_row(pack_row(r)) == r._asdict()
    True
    """
    return json.dumps(list(row), ensure_ascii=False, separators=(",", ":"))


def unpack_row(packed: str) -> dict[str, Any]:
    """The usage row (a dict of :data:`ROW_COLUMNS`) a ``row`` value holds."""
    return dict(zip(ROW_COLUMNS, json.loads(packed)))


class PlannedSentence(NamedTuple):
    """A sentence of the corpus that holds targets, with its usages in text order."""

    doc: str
    number: int
    text: str
    usages: tuple[Occurrence, ...]


class EncodedChunk(NamedTuple):
    """The encoded usages of a chunk: ``rows[i]`` is usage ``i``, ``vectors[layer][i]`` its
    vector at that layer (``(n_usages, dim)`` float32 per layer)."""

    rows: list[UsageRow]
    vectors: dict[int, np.ndarray]

    @classmethod
    def empty(cls, layers: Sequence[int], dim: int) -> EncodedChunk:
        return cls([], {k: np.zeros((0, dim), np.float32) for k in layers})

    @classmethod
    def concat(cls, parts: Sequence[EncodedChunk], layers: Sequence[int], dim: int) -> EncodedChunk:
        """The parts one after the other (the batches a runner returned, in order)."""
        if not parts:
            return cls.empty(layers, dim)
        return cls([r for p in parts for r in p.rows],
                   {k: np.concatenate([p.vectors[k] for p in parts]) for k in layers})
