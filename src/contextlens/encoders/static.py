"""StaticEncoder: look each word of a sentence up in an EmbeddingTable (layer 0 only).

>>> from contextlens.vectors import EmbeddingTable
>>> table = EmbeddingTable(["bank", "river"], [[1.0, 0.0], [0.0, 1.0]], name="toy")
>>> enc = StaticEncoder(table).encode_one("The River bank!")
>>> enc.tokens, enc.layers.shape, enc.layer_names
(['river', 'bank'], (1, 2, 2), ('static',))
>>> enc.words[0].start, enc.words[0].end  # spans point into the original text
(4, 9)
>>> sorted(enc.meta["skipped"])
['!', 'the']
>>> StaticEncoder(table).encode(["the bank", "a river"], targets={"bank"})[1].tokens  # no bank here
[]
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import InputError, UnknownWordError, check_choice
from ..text import tokenize
from ..vectors import EmbeddingTable
from .base import Encoder, Encoding
from .targets import keep_targets

__all__ = ["StaticEncoder", "OOV_POLICIES"]

log = logging.getLogger(__name__)
OOV_POLICIES = ("skip", "error")


class StaticEncoder(Encoder):
    """Encode a sentence as the table rows of its words: layers ``(1, n_words, dim)``.

    Parameters
    ----------
    table : the static vectors.
    lowercase : lower-case words before the lookup; None (default) decides once, from the
        table: lower-case when the table has no upper-case key.
    oov : what to do with a word the table lacks: ``"skip"`` (drop it, and record it
        with close keys in ``meta["skipped"]``) or ``"error"`` (raise UnknownWordError).
    """

    name = "static"

    def __init__(self, table: EmbeddingTable, lowercase: bool | None = None, oov: str = "skip"):
        if not isinstance(table, EmbeddingTable):
            raise InputError(f"table must be an EmbeddingTable, got {type(table).__name__}")
        if lowercase not in (None, True, False):
            raise InputError(f"lowercase must be None (auto), True or False, got {lowercase!r}")
        self.table = table
        self.oov = check_choice("oov policy", oov, OOV_POLICIES)
        self.lowercase_option = lowercase
        # auto: one pass over the keys, stopping at the first upper-case one
        self.lowercase = (
            not any(k != k.lower() for k in table.keys) if lowercase is None else lowercase
        )

    @property
    def dim(self) -> int:
        return self.table.dim

    @property
    def layer_ids(self) -> tuple[int, ...]:
        return (0,)

    def params(self) -> dict[str, Any]:
        return {
            "encoder": self.name, "vectors": self.table.name, "table": self.table.fingerprint(),
            "lowercase": self.lowercase,
            "lowercase_option": "auto" if self.lowercase_option is None else self.lowercase_option,
            "oov": self.oov,
        }

    def static_vectors(self, words: Sequence[str]) -> np.ndarray:
        rows = []
        for word in words:
            key = word.lower() if self.lowercase else word
            row = self.table.lookup(key)  # a fastText table composes a word it lacks
            if row is None:
                raise UnknownWordError(word, self.table.suggest(key), where=f"the table {self.table.name!r}")
            rows.append(row)
        return np.asarray(rows, dtype=np.float32).reshape(len(rows), self.dim)

    def lookup(self, text: str, *, required: bool = True) -> Encoding:
        """The table rows of the words of ``text``: layers ``(1, words, dim)``; with
        ``required``, a text none of whose words is in the table is an error."""
        words = tokenize(text, lower=self.lowercase)
        kept, rows = [], []
        skipped: dict[str, list[str]] = {}
        for word in words:
            row = self.table.lookup(word.text)  # a fastText table composes a word it lacks
            if row is not None:
                kept.append(word)
                rows.append(row)
                continue
            if self.oov == "error":
                raise UnknownWordError(
                    word.text, self.table.suggest(word.text), where=f"the table {self.table.name!r}"
                )
            if word.text not in skipped:
                skipped[word.text] = self.table.suggest(word.text)
        if not kept and required:
            shown = ", ".join(repr(w.text) for w in words[:10])
            raise InputError(
                f"none of the words of {text!r} ({shown}) is in the table {self.table.name!r}; "
                "check the language, the case (lowercase=) or the vectors you loaded"
            )
        if skipped:
            log.debug("skipped %d word(s) not in %s: %s", len(skipped), self.table.name, skipped)
        layers = np.asarray(rows, dtype=np.float32).reshape(1, len(rows), self.dim)
        meta = {
            "encoder": self.name,
            "vectors": self.table.name,
            "params": self.params(),
            "skipped": skipped,
        }
        return Encoding(text, kept, layers, None, ("static",), meta, source=self.table.name or self.name)

    def _encode_texts(self, texts: list[str], chosen: list[list[int] | None]) -> list[Encoding]:
        return [keep_targets(self.lookup(t, required=keep is None), t, keep)
                for t, keep in zip(texts, chosen)]
