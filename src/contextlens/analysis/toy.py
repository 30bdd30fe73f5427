"""The toy lab's plane: 2-D vectors for *bank* and a few neighbours, on finance/nature axes.

Dimension 0 is "finance", dimension 1 is "nature". A toy sentence is *bank* plus the
neighbours the user picked; its contextual vector comes from the library's own encoders
(:class:`~contextlens.encoders.mixing.NeighbourAverage` or
:class:`~contextlens.encoders.mixing.SelfAttention`) over a 2-D table, so every number the
web page shows (it recomputes them in JavaScript with the same formulas) can be checked
against this module. The axis words ``finance`` = (1, 0) and ``nature`` = (0, 1) are rows
of the table, used as probes.

>>> r = toy_bank(["money", "river"], method="average")
>>> r["words"], [round(w["weight"], 2) for w in r["weights"]]
(['bank', 'money', 'river'], [0.0, 0.5, 0.5])
>>> [round(x, 3) for x in r["contextual"]]
[0.475, 0.6]
>>> pair = toy_compare([["loan"], ["river"]], method="attention", include_self=True)
>>> round(pair["cosine"], 3)
0.75

The course text's own 2-D example (:func:`course_example`) puts bank at (0.5, 0.5), loan
at (0.9, 0.1) and river at (0.1, 0.9), and follows one weight by hand:

>>> ex = course_example()
>>> step = ex.steps[1]                       # bank (query) and loan (key), in "bank loan"
>>> step.query, step.key, round(step.raw, 4), round(step.scaled, 4), round(step.weight, 4)
('bank', 'loan', 0.5, 0.3536, 0.5)
>>> [round(x, 3) for x in ex.comparison["sentences"][0]["contextual"]], round(ex.comparison["cosine"], 3)
([0.7, 0.3], 0.724)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..encoders.registry import make_encoder
from ..errors import InputError, UnknownWordError, check_choice
from ..vectors import EmbeddingTable, cosine
from .incontext import contextualize

__all__ = ["TOY_VECTORS", "TOY_AXES", "TOY_METHODS", "TARGET", "toy_table", "toy_bank", "toy_compare",
           "COURSE_VECTORS", "COURSE_NEIGHBOURS", "CourseStep", "CourseExample", "course_example"]

TARGET = "bank"
#: word -> (finance, nature): the starting positions on the plane.
TOY_VECTORS: dict[str, tuple[float, float]] = {
    "bank": (0.6, 0.55),
    "loan": (0.95, 0.1),
    "money": (0.85, 0.25),
    "river": (0.1, 0.95),
    "water": (0.2, 0.8),
    "sat": (0.3, 0.25),
}
#: the axis words (probes): unit vectors along each dimension.
TOY_AXES: dict[str, tuple[float, float]] = {"finance": (1.0, 0.0), "nature": (0.0, 1.0)}
TOY_METHODS = ("average", "attention")
#: The course text's 2-D example: bank halfway, loan on the finance side, river on the nature side.
COURSE_VECTORS: dict[str, tuple[float, float]] = {"bank": (0.5, 0.5), "loan": (0.9, 0.1), "river": (0.1, 0.9)}
COURSE_NEIGHBOURS = (("loan",), ("river",))  # its two sentences: "bank loan" and "bank river"
MAX_COORD = 10.0  # a dragged vector stays within this box: the plane the page draws


def _point(word: str, value) -> tuple[float, float]:
    try:
        x, y = (float(v) for v in value)
    except (TypeError, ValueError):
        raise InputError(f"the vector of {word!r} must be two numbers [finance, nature], "
                         f"got {value!r}") from None
    if not all(math.isfinite(v) and abs(v) <= MAX_COORD for v in (x, y)):
        raise InputError(f"the vector of {word!r} must have finite coordinates within ±{MAX_COORD}, got "
                         f"{value!r}")
    return x, y


def toy_table(vectors: Mapping[str, Sequence[float]] | None = None) -> EmbeddingTable:
    """The 2-D table: :data:`TOY_VECTORS` with ``vectors`` (moved words) replacing rows,
    plus the axis words. Only the toy words can be moved.

    >>> toy_table({"river": [0.0, 2.0]}).vector("river").tolist()
    [0.0, 2.0]
    """
    moved = dict(vectors or {})
    unknown = [w for w in moved if w not in TOY_VECTORS]
    if unknown:
        raise UnknownWordError(unknown[0], where=f"the toy plane (its words: {', '.join(TOY_VECTORS)})")
    rows = {w: _point(w, moved.get(w, v)) for w, v in TOY_VECTORS.items()}
    keys = list(rows) + list(TOY_AXES)
    return EmbeddingTable(keys, np.array([*rows.values(), *TOY_AXES.values()], dtype=np.float64),
                          name="toy plane")


def _encoder(table: EmbeddingTable, method: str, alpha: float, include_self: bool, scale: float | None):
    check_choice("toy method", method, TOY_METHODS)
    if method == "average":
        return make_encoder("average", vectors=table, alpha=alpha)
    return make_encoder("attention", vectors=table, include_self=include_self, scale=scale)


def _neighbours(neighbours: Sequence[str]) -> list[str]:
    words = list(neighbours)
    bad = [w for w in words if w not in TOY_VECTORS or w == TARGET]
    if bad:
        choices = ", ".join(w for w in TOY_VECTORS if w != TARGET)
        raise UnknownWordError(bad[0], where=f"the toy neighbours (choose from {choices})")
    if len(set(words)) != len(words):
        raise InputError(f"each neighbour may be picked once, got {words}")
    return words


def toy_bank(
    neighbours: Sequence[str], *, vectors: Mapping[str, Sequence[float]] | None = None,
    method: str = "average", alpha: float = 0.0, include_self: bool = True, scale: float | None = None,
) -> dict[str, Any]:
    """*bank*'s contextual vector in the toy sentence ``bank + neighbours``.

    ``method`` is ``average`` (``alpha``: the weight bank keeps of itself) or ``attention``
    (``include_self``; ``scale`` multiplies the dot products, None = 1/√2). Returns
    ``{sentence, words, weights: [{word, position, weight}], static [x, y], contextual
    [x, y], static_cosines {finance, nature}, cosines {finance, nature}}``.
    """
    words = [TARGET] + _neighbours(neighbours)
    table = toy_table(vectors)
    encoder = _encoder(table, method, alpha, include_self, scale)
    r = contextualize(encoder, " ".join(words), TARGET, probes=list(TOY_AXES))
    enc_vec = encoder.encode([r["sentence"]])[0].layers[:, 0]  # (2, 2): static, contextual
    return {
        "sentence": r["sentence"], "words": r["words"], "method": method, "weights": r["weights"],
        "static": [float(v) for v in enc_vec[0]], "contextual": [float(v) for v in enc_vec[-1]],
        "static_cosines": {p["probe"]: p["static_cosine"] for p in r["probes"]},
        "cosines": {p["probe"]: p["contextual_cosine"] for p in r["probes"]},
    }


def toy_compare(
    selections: Sequence[Sequence[str]], *, vectors: Mapping[str, Sequence[float]] | None = None,
    method: str = "average", alpha: float = 0.0, include_self: bool = True, scale: float | None = None,
) -> dict[str, Any]:
    """:func:`toy_bank` for two neighbour selections, and the cosine between the two banks.

    Returns ``{sentences: [two toy_bank dicts], cosine, vectors: {word: [x, y]}}``.
    """
    if len(selections) != 2:
        raise InputError(f"the toy lab compares exactly 2 sentences, got {len(selections)}")
    rows = [toy_bank(s, vectors=vectors, method=method, alpha=alpha, include_self=include_self, scale=scale)
            for s in selections]
    table = toy_table(vectors)
    return {
        "sentences": rows,
        "cosine": cosine(np.array(rows[0]["contextual"]), np.array(rows[1]["contextual"])),
        "vectors": {w: table.vector(w).tolist() for w in TOY_VECTORS},
    }


@dataclass(frozen=True)
class CourseStep:
    """The arithmetic of one weight: ``query`` attends to ``key`` in ``sentence``."""

    sentence: str
    query: str
    key: str
    q: tuple[float, ...]
    k: tuple[float, ...]
    product: tuple[float, ...]  # q∘k, elementwise
    raw: float  # q·k
    scaled: float  # q·k / √d
    weight: float  # the softmax over the sentence's keys


@dataclass(frozen=True)
class CourseExample:
    """The course text's worked figures (:func:`course_example`)."""

    vectors: dict[str, tuple[float, float]]
    scale: float
    steps: tuple[CourseStep, ...]
    comparison: dict[str, Any]  # toy_compare of the two sentences: weights, vectors, cosines to the axes

    def as_dict(self) -> dict[str, Any]:
        return {"vectors": {w: list(v) for w, v in self.vectors.items()}, "scale": self.scale,
                "steps": [vars(s) for s in self.steps], "comparison": self.comparison}


def course_example() -> CourseExample:
    """The course text's 2-D example, computed by the library's encoders: bank, loan and
    river at :data:`COURSE_VECTORS`; attention (bank may attend to itself, scale 1/√2) in
    "bank loan" and in "bank river". ``steps`` follows bank's weights step by step (raw
    dot product, scaled, softmax: :meth:`~contextlens.encoders.qk.AttentionParts.scores`);
    ``comparison`` is :func:`toy_compare` of the two sentences (weights, bank's vectors,
    its cosines to the finance and nature axes, and the cosine between the two banks).
    """
    comparison = toy_compare(COURSE_NEIGHBOURS, vectors=COURSE_VECTORS, method="attention", include_self=True)
    encoder = _encoder(toy_table(COURSE_VECTORS), "attention", 0.0, True, None)
    steps = []
    for neighbours in COURSE_NEIGHBOURS:
        parts = encoder.attention_parts(" ".join((TARGET, *neighbours)), layers=[1])[0]
        raw, scaled = parts.raw_scores()[0], parts.scores()[0]  # (words, words)
        i = parts.token_of(TARGET)
        for j, key in enumerate(parts.tokens):
            q, k = parts.queries[0, i], parts.keys[0, j]
            steps.append(CourseStep(parts.text, TARGET, key, tuple(map(float, q)), tuple(map(float, k)),
                                    tuple(map(float, q * k)), float(raw[i, j]), float(scaled[i, j]),
                                    float(parts.weights[0, i, j])))
    return CourseExample(dict(COURSE_VECTORS), float(parts.scale), tuple(steps), comparison)
