"""CoSimLex (SemEval-2020 Task 3, Graded Word Similarity in Context), English.

Each pair of words is rated in two contexts. A method predicts the pair's similarity in
each context; the task's scorer (the organisers' evaluation kit) then gives

- **subtask 1**: the *uncentered* Pearson correlation (no mean taken off) between the
  predicted change ``sim(context 2) − sim(context 1)`` and the annotators' change
  ``sim2 − sim1`` (:func:`uncentered_pearson`);
- **subtask 2**: the harmonic mean of Pearson's and Spearman's correlations between the
  predicted and the annotated similarities, both contexts of every pair pooled (2n
  values; :func:`harmonic_correlation`).

Methods: ``cosine``, the cosine of the two words' vectors in the context, at each layer
(a static table is read at the pair's words as the file lists them, not at their forms in
the contexts, *ran* for *run*: both contexts give the same vectors, the *no-change*
baseline, whose subtask-1 correlation is undefined, reported None); ``cosine-last4``, the cosine of
the mean of the last four layers; and, with ``senses=True``, ``cosine+senses``: the mean
of that cosine and the cosine between the LMMS senses picked for the two words (the
LMMS-SP entry's recipe, ``evaluation/eval_gwcs.py`` of github.com/danlou/LMMS).

>>> round(uncentered_pearson([1.0, -2.0], [2.0, -3.0]), 4), round(harmonic_correlation([1, 2, 3],
...                                                                             [2, 4, 7]), 4)
(0.9923, 0.9967)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import EmptyInputError
from ..text import tokenize
from .wic import pair_cosines

__all__ = ["uncentered_pearson", "harmonic_correlation", "cosimlex_items", "cosimlex_scores", "run_cosimlex"]


def uncentered_pearson(x, y) -> float:
    """``Σxy / sqrt(Σx² Σy²)``; NaN when either side is all zeros (no change predicted).

    >>> uncentered_pearson([0.0, 0.0], [1.0, -1.0])
    nan
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    den = np.sqrt((x * x).sum() * (y * y).sum())
    return float((x * y).sum() / den) if den > 0 else float("nan")


def harmonic_correlation(pred, gold) -> float:
    """The harmonic mean of Pearson's and Spearman's correlations of ``pred`` with
    ``gold``; 0 when either is 0, NaN when either is negative or undefined (the
    organisers' scorer, Python's ``statistics.harmonic_mean``, refuses negative values)."""
    from scipy.stats import pearsonr, spearmanr

    pred, gold = np.asarray(pred, dtype=np.float64), np.asarray(gold, dtype=np.float64)
    if np.ptp(pred) == 0 or np.ptp(gold) == 0:
        return float("nan")
    p, s = float(pearsonr(pred, gold)[0]), float(spearmanr(pred, gold)[0])
    if min(p, s) < 0 or np.isnan(p) or np.isnan(s):
        return float("nan")
    return 0.0 if min(p, s) == 0 else 2 * p * s / (p + s)


def cosimlex_scores(pred1: Sequence[float], pred2: Sequence[float], gold1: Sequence[float],
                    gold2: Sequence[float]) -> tuple[float, float]:
    """``(subtask 1, subtask 2)`` of predicted similarities in context 1 and 2 of each pair.

    >>> s1, s2 = cosimlex_scores([0.9, 0.2, 0.5], [0.1, 0.6, 0.5], [8.0, 2.0, 5.0], [1.0, 7.0, 5.5])
    >>> round(s1, 4), round(s2, 4)
    (0.9861, 0.9793)
    """
    p1, p2 = np.asarray(pred1, dtype=np.float64), np.asarray(pred2, dtype=np.float64)
    g1, g2 = np.asarray(gold1, dtype=np.float64), np.asarray(gold2, dtype=np.float64)
    return (uncentered_pearson(p2 - p1, g2 - g1),
            harmonic_correlation(np.column_stack([p1, p2]).ravel(), np.column_stack([g1, g2]).ravel()))


def _target(text: str, span: tuple[int, int]) -> tuple[tuple[str, ...], int]:
    """``(tokens, index)`` of a marked word: the text's words around it, the word whole."""
    a, b = span
    before = [w.text for w in tokenize(text[:a])]
    after = [w.text for w in tokenize(text[b:])]
    return (*before, text[a:b], *after), len(before)


def cosimlex_items(items, *, words: bool = False) -> list[tuple[tuple[str, ...], int]]:
    """The ``4n`` targets of ``n`` pairs: word1 in context 1, word2 in context 1, word1 in
    context 2, word2 in context 2 (each block of ``n`` in pair order); ``words=True``: the
    pair's words as the file lists them in place of their forms in the contexts (for a
    static table, so that both contexts give the same rows).

    >>> from contextlens.datasets.cosimlex import CosimlexItem
    >>> it = CosimlexItem("run", "walk", "they ran and walked", "run or walk", ((5, 8), (13, 19)),
    ...                   ((0, 3), (7, 11)), 6.8, 2.1)
    >>> [t[i] for t, i in cosimlex_items([it])], [t[i] for t, i in cosimlex_items([it], words=True)]
    (['ran', 'walked', 'run', 'walk'], ['run', 'walk', 'run', 'walk'])
    """
    out = []
    for context, spans, k in (("context1", "spans1", 0), ("context1", "spans1", 1), ("context2", "spans2", 0),
                              ("context2", "spans2", 1)):
        for it in items:
            tokens, i = _target(getattr(it, context), getattr(it, spans)[k])
            out.append(((*tokens[:i], (it.word1, it.word2)[k], *tokens[i + 1:]), i) if words else (tokens, i))
    return out


def _row(method, layer, s1: float, s2: float, n: int) -> dict:
    clean = [None if np.isnan(v) else v for v in (s1, s2)]
    return {"split": "cosimlex", "method": method, "layer": layer, "subtask1_uncentered_pearson": clean[0],
            "subtask2_harmonic_mean": clean[1], "n": n}


def run_cosimlex(cache, root, *, path=None, progress=None, senses: bool = False, sense_view=-1,
                 semcor_limit: int | None = None) -> list[dict]:
    """Rows ``{split: "cosimlex", method, layer, subtask1_uncentered_pearson,
    subtask2_harmonic_mean, n}`` (``n``: the pairs scored) from ``root/cosimlex/
    cosimlex_en.csv`` or ``path``; see the module docstring for the methods."""
    from .. import datasets
    from .wsd import view_vectors

    items = datasets.load_cosimlex(root, path)
    n = len(items)
    static = cache.encoder.params().get("encoder") == "static"  # a table lookup: the no-change baseline
    vec = cache.targets(f"cosimlex-{n}", cosimlex_items(items, words=static),
                        progress=progress)  # (4n, layers, dim)
    w1c1, w2c1, w1c2, w2c2 = (vec[i * n:(i + 1) * n] for i in range(4))
    gold1, gold2 = [it.sim1 for it in items], [it.sim2 for it in items]
    cos1, cos2 = pair_cosines(w1c1, w2c1), pair_cosines(w1c2, w2c2)  # (n, layers)
    ok = ~(np.isnan(cos1) | np.isnan(cos2)).any(axis=1)
    if not ok.any():
        raise EmptyInputError("no CoSimLex pair has a vector for both words in both contexts; check the "
                              "vectors")
    g1, g2 = np.asarray(gold1)[ok], np.asarray(gold2)[ok]
    rows = [_row("cosine", layer, *cosimlex_scores(cos1[ok, k], cos2[ok, k], g1, g2), int(ok.sum()))
            for k, layer in enumerate(cache.layer_ids)]
    if len(cache.layer_ids) > 1:
        last4 = [pair_cosines(view_vectors(a, "last4"), view_vectors(b, "last4")) for a, b in ((w1c1, w2c1),
                                                                                             (w1c2, w2c2))]
        rows.append(_row("cosine-last4", "last4", *cosimlex_scores(last4[0][ok], last4[1][ok], g1, g2),
                         int(ok.sum())))
    if senses:
        rows.append(_senses_row(cache, root, items, (w1c1, w2c1, w1c2, w2c2), ok, sense_view, semcor_limit,
                                progress))
    return rows


def _senses_row(cache, root, items, vectors, ok, sense_view, semcor_limit, progress) -> dict:
    """``cosine+senses`` at ``sense_view``: the mean of the words' cosine and their senses' cosine."""
    from .. import datasets
    from ..encoders.base import layer_position
    from .lmms import concat_cosines, rank_senses, sense_parts
    from .wsd import parse_view, view_vectors

    view = parse_view(sense_view)
    view = view if view == "last4" else layer_position(cache.layer_ids, view)
    wn = datasets.wordnet(root)
    cands = {w: datasets.word_senses(wn, w)[1] for it in items for w in (it.word1, it.word2)}
    union = list(dict.fromkeys(k for keys in cands.values() for k in keys))
    steps = ("propagation", "glosses")
    parts = sense_parts(cache, root, union, [view], steps=steps, semcor_limit=semcor_limit,
                        progress=progress)[view]
    sides = parts.parts(steps)
    x = [view_vectors(v, view) for v in vectors]  # word1/word2 in context 1, word1/word2 in context 2
    sims = np.full((len(items), 2), np.nan)
    for i, it in enumerate(items):
        for c in (0, 1):
            u, v = x[2 * c][i], x[2 * c + 1][i]
            word_cos = float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))
            r1 = rank_senses(parts, u, cands[it.word1], steps)
            r2 = rank_senses(parts, v, cands[it.word2], steps)
            if not r1 or not r2:
                sims[i, c] = word_cos  # a word WordNet lacks: its cosine alone
                continue
            a, b = parts.index[r1[0][0]], parts.index[r2[0][0]]
            sense_cos = float(concat_cosines([p[a] for p in sides], [p[[b]] for p in sides])[0])
            sims[i, c] = (word_cos + sense_cos) / 2
    g1 = np.array([it.sim1 for it in items])[ok]
    g2 = np.array([it.sim2 for it in items])[ok]
    layer = view if view == "last4" else cache.layer_ids[view]
    return _row("cosine+senses", layer, *cosimlex_scores(sims[ok, 0], sims[ok, 1], g1, g2), int(ok.sum()))
