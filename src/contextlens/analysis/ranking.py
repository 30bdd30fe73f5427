"""Static vs contextual ranking of word pairs: does context reorder similarity?

Each word is encoded inside a neutral template sentence (``"A sentence with {word}."``);
its contextual vector is the chosen layer, its static vector layer 0 of the same encoder
or, given a ``static`` table (word2vec, GloVe, fastText: the course's mini-project), that
table's row (:func:`static_rows`). The pairs are
ranked by cosine both ways and the two rankings compared: Spearman's rho, Kendall's tau,
the number of inversions (pairs of pairs ordered differently), and the pairs that moved
most; with gold scores, each ranking's Spearman with gold.

>>> count_inversions([0.9, 0.5, 0.1], [0.2, 0.6, 0.1])
1
>>> rank_descending([0.9, 0.1, 0.5]).tolist()
[1.0, 3.0, 2.0]
"""

from __future__ import annotations

import logging
import math
import os
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..bounds import PAIR_BLOCK, check_encoding
from ..encoders.base import Encoder
from ..encoders.static import StaticEncoder
from ..errors import (
    AmbiguousTargetError,
    EmptyInputError,
    FileFormatError,
    InputError,
    TargetNotFoundError,
    UnknownWordError,
    ask,
    check_choice,
)
from ..vectors import EmbeddingTable, cosine
from .usages import MISSING_POLICIES, check_pairs, numbered_lines

__all__ = ["read_pairs", "rank_pairs", "count_inversions", "rank_descending", "static_rows", "static_side",
           "DEFAULT_TEMPLATE"]

log = logging.getLogger(__name__)
DEFAULT_TEMPLATE = "A sentence with {word}."
Pair = tuple[str, str, float | None]


def read_pairs(path: str | os.PathLike) -> list[Pair]:
    """``(w1, w2, score or None)`` per line of ``w1 w2 [score]`` (white-space separated;
    blank lines and ``#`` comments ignored). Either every line has a score or none."""
    pairs: list[Pair] = []
    for n, line in numbered_lines(path, "word pairs"):
        fields = line.split()
        if len(fields) not in (2, 3):
            raise FileFormatError(path, n,
                                  f"expected 'word1 word2 [score]', got {len(fields)} fields: {line!r}")
        score = None
        if len(fields) == 3:
            try:
                score = float(fields[2])
            except ValueError:
                raise FileFormatError(path, n, f"the score {fields[2]!r} is not a number") from None
            if not math.isfinite(score):
                raise FileFormatError(path, n, f"the score {fields[2]!r} is not a finite number")
        if pairs and (score is None) != (pairs[0][2] is None):
            raise FileFormatError(path, n, "some lines have a score and some do not; give a score on every "
                                  "line or on none")
        pairs.append((fields[0], fields[1], score))
    if not pairs:
        raise EmptyInputError(f"{path} holds no word pairs; write one 'word1 word2 [score]' per line")
    return pairs


def rank_descending(x: Sequence[float]) -> np.ndarray:
    """Ranks with 1 = the largest value (ties share their mean rank)."""
    from scipy import stats  # here: importing it costs every command that imports this module 0.5 s

    return stats.rankdata(-np.asarray(x, dtype=np.float64), method="average")


def count_inversions(a: Sequence[float], b: Sequence[float]) -> int:
    """Discordant pairs: ``i < j`` ordered one way by ``a`` and the other way by ``b``
    (ties in either are not inversions); compared :data:`~contextlens.bounds.PAIR_BLOCK`
    pairs at a time, so 20,000 scores need no (n, n) matrix (3.2 GB each).

    >>> count_inversions([1, 2, 3, 4], [1, 3, 2, 2])  # (3, 2) and (3, 2) again; the tie (2, 2) is not
    2
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise InputError(f"two score lists of one length are needed, got {a.shape} and {b.shape}")
    n = len(a)
    rows = max(1, PAIR_BLOCK // max(n, 1))
    total = 0
    for start in range(0, n, rows):
        i = np.arange(start, min(start + rows, n))[:, None]  # (rows, 1)
        later = np.arange(n)[None, :] > i  # (rows, n): j > i
        da = np.sign(a[i] - a[None, :])  # (rows, n)
        db = np.sign(b[i] - b[None, :])
        total += int(np.count_nonzero((da * db < 0) & later))
    return total


def _corr(fn, a, b) -> float | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant input: the correlation is undefined (nan)
        value = float(fn(a, b)[0])
    return None if math.isnan(value) else value


def static_rows(table: EmbeddingTable, words: Sequence[str]) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Each word's row in a static table (lower-cased when the table has no upper-case key;
    composed from n-grams by a fastText table), and ``{word: reason}`` for the words it lacks.

    >>> found, failed = static_rows(EmbeddingTable(["bank"], [[1.0, 0.0]], name="t"), ["Bank", "river"])
    >>> found["Bank"].tolist(), failed
    ([1.0, 0.0], {'river': "'river' is not in the table 't'"})
    """
    lookup = StaticEncoder(table)
    found, failed = {}, {}
    for w in words:
        try:
            found[w] = lookup.static_vectors([w])[0]
        except UnknownWordError as err:
            failed[w] = str(err)
    return found, failed


def static_side(table: EmbeddingTable | None, encoding) -> dict[str, Any]:
    """What a result's static side is: a table (``{source: "table", vectors}``) or the
    encoder's layer 0 (``{source: "layer 0", layer_name}``)."""
    if table is not None:
        return {"source": "table", "vectors": table.name}
    return {"source": "layer 0", "layer_name": encoding.layer_names[0]}


def _vectors(encoder: Encoder, words: list[str], template: str, layer: int, missing: str,
             static: EmbeddingTable | None = None):
    """``{word: (static, contextual)}`` and ``{word: reason}`` for the words that failed."""
    start = template.index("{word}")
    sentences = [template.replace("{word}", w, 1) for w in words]
    li = encoder.layer_position(layer)  # a layer the encoder lacks fails before any encoding
    rows, failed = static_rows(static, words) if static is not None else ({}, {})
    if failed and missing == "error":
        w = next(iter(failed))
        raise UnknownWordError(w, static.suggest(w), where=f"the static table {static.name!r} (remove the "
                               f"pair or skip such pairs: {ask('missing', 'skip')})")
    check_encoding(encoder, sentences, what="the template sentences", todo="give fewer pairs")
    encodings = encoder.encode(sentences)
    found = {}
    for w, s, enc in zip(words, sentences, encodings, strict=True):
        if w in failed:
            continue
        try:
            i = enc.find(w, span=(start, start + len(w)))
        except (TargetNotFoundError, AmbiguousTargetError) as err:
            if missing == "error":
                raise TargetNotFoundError(
                    f"{w!r} has no vector in its template sentence {s!r}: {err}; remove the pair "
                    f"or skip such pairs ({ask('missing', 'skip')})"
                ) from None
            failed[w] = str(err)
            continue
        found[w] = (rows[w] if static is not None else enc.layers[0, i], enc.layers[li, i])
    return found, failed, encodings[0]


def rank_pairs(
    encoder: Encoder, pairs: Sequence[Pair | tuple[str, str]], *, template: str = DEFAULT_TEMPLATE,
    layer: int = -1, top: int = 5, missing: str = "error", static: EmbeddingTable | None = None,
) -> dict[str, Any]:
    """Compare the static (layer 0, or the ``static`` table) and contextual (``layer``)
    rankings of word pairs.

    Returns ``{template, layer, layer_name, n_pairs, pairs: [{word1, word2, gold, static,
    contextual, static_rank, contextual_rank, shift}], spearman, kendall_tau, inversions,
    comparisons, moved (the ``top`` pairs with the largest non-zero |shift|), gold (None, or
    {static_spearman, contextual_spearman}), skipped, static_side, encoder}``. Rank 1 = most similar;
    ``shift`` = static rank − contextual rank (positive: more similar in context).
    Correlations that are undefined (constant cosines) are None.
    """
    from scipy import stats

    check_choice("missing-word policy", missing, MISSING_POLICIES)
    if template.count("{word}") != 1:
        raise InputError(f"the template must contain '{{word}}' exactly once, got {template!r}")
    pairs = [(p[0], p[1], p[2] if len(p) > 2 else None) for p in check_pairs(pairs, "words")]
    if len(pairs) < 2:
        raise InputError(f"ranking needs at least 2 word pairs, got {len(pairs)}")
    words = list(dict.fromkeys(w for p in pairs for w in p[:2]))
    found, failed, first = _vectors(encoder, words, template, layer, missing, static)
    kept = [p for p in pairs if p[0] in found and p[1] in found]
    skipped = [{"word1": a, "word2": b, "reason": failed.get(a) or failed.get(b)}
               for a, b, _ in pairs if a not in found or b not in found]
    if len(kept) < 2:
        raise InputError(f"only {len(kept)} pair(s) have vectors for both words; ranking needs at least 2")
    s = np.array([cosine(found[a][0], found[b][0]) for a, b, _ in kept])  # (pairs,)
    c = np.array([cosine(found[a][1], found[b][1]) for a, b, _ in kept])  # (pairs,)
    rs, rc = rank_descending(s), rank_descending(c)
    rows = [{"word1": a, "word2": b, "gold": g, "static": float(s[i]), "contextual": float(c[i]),
             "static_rank": float(rs[i]), "contextual_rank": float(rc[i]), "shift": float(rs[i] - rc[i])}
            for i, (a, b, g) in enumerate(kept)]
    gold = None
    if kept[0][2] is not None:
        g = np.array([p[2] for p in kept])
        gold = {"static_spearman": _corr(stats.spearmanr, s, g),
                "contextual_spearman": _corr(stats.spearmanr, c, g)}
    n = len(kept)
    result = {
        "template": template, "layer": first.layer_number(layer), "layer_name": first.layer_name(layer),
        "n_pairs": n, "pairs": rows,
        "spearman": _corr(stats.spearmanr, s, c), "kendall_tau": _corr(stats.kendalltau, s, c),
        "inversions": count_inversions(s, c), "comparisons": n * (n - 1) // 2,
        "moved": sorted((r for r in rows if r["shift"]), key=lambda r: -abs(r["shift"]))[:max(0, top)],
        "gold": gold, "skipped": skipped, "static_side": static_side(static, first),
        "encoder": first.describe(),
    }
    log.info("%d pairs: spearman %s, %d inversions", n, result["spearman"], result["inversions"])
    return result
