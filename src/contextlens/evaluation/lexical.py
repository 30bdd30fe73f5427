"""Word similarity (Spearman) and analogies (3CosAdd, 3CosMul), gensim-compatible.

For a static table the numbers equal gensim's ``KeyedVectors.evaluate_word_pairs`` and
``evaluate_word_analogies`` with their defaults: words are upper-cased and looked up
among the first ``restrict`` keys (the first, most frequent, case variant wins), a pair
or question with a word outside them is skipped and counted as OOV
(``dummy4unknown=False``), 3CosAdd ranks ``cos(d, unit(b̂ − â + ĉ))`` over those keys,
skips the three question words, and an answer is right when it equals the fourth word;
every section of the file counts (gensim's "Total accuracy"). 3CosMul (Levy & Goldberg
2014) uses the same vocabulary rules with ``(1 + cos) / 2`` similarities and ε = 0.001.

>>> from contextlens.vectors import EmbeddingTable
>>> t = EmbeddingTable(["man", "king", "woman", "queen"], [[1, 0, 0], [1, 1, 0], [0, 0, 1], [0, 1, 1]])
>>> r = analogy_accuracy(t, [("s", [("man", "king", "woman", "queen"), ("man", "king", "x", "y")])])
>>> r["accuracy"], r["n"], r["oov"]
(1.0, 1, 1)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats

from ..analysis.similarity import top_k_rows
from ..encoders.base import layer_position
from ..errors import EmptyInputError, InputError, check_choice, check_int
from ..vectors import COSMUL_EPSILON

__all__ = ["ok_vocab", "similarity_spearman", "analogy_accuracy", "spearman", "GENSIM_RESTRICT"]

GENSIM_RESTRICT = 300000  # gensim's restrict_vocab default
_BATCH = 256


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rank correlation (ties get average ranks); None where it is undefined
    (one side constant), never NaN.

    >>> round(spearman([1, 2, 3, 4], [10, 20, 40, 30]), 6), spearman([1, 2, 3], [5, 5, 5])
    (0.8, None)
    """
    if len(x) < 2:
        raise EmptyInputError(f"Spearman needs at least 2 scored pairs, got {len(x)}")
    if np.ptp(np.asarray(x, dtype=np.float64)) == 0 or np.ptp(np.asarray(y, dtype=np.float64)) == 0:
        return None
    return float(stats.spearmanr(x, y)[0])


def _check_restrict(restrict: int | None) -> None:
    if restrict is not None:
        check_int("restrict", restrict, low=1, hint="the first (most frequent) keys to search")


def ok_vocab(keys: Sequence[str], restrict: int | None = GENSIM_RESTRICT) -> dict[str, int]:
    """Upper-cased key → row, over the first ``restrict`` keys; the first variant wins.

    >>> ok_vocab(["the", "The", "bank"], restrict=2)
    {'THE': 0}
    """
    keys = keys[:restrict] if restrict is not None else keys
    vocab: dict[str, int] = {}
    for i, k in enumerate(keys):
        vocab.setdefault(k.upper(), i)
    return vocab


def similarity_spearman(table, pairs: Sequence, *, restrict: int | None = GENSIM_RESTRICT) -> dict:
    """``{spearman, n, oov}`` over ``pairs`` (objects with ``word1``, ``word2``, ``score``
    or 3-tuples), gensim's ``evaluate_word_pairs`` rules; a word whose vector is all zeros
    has no cosine and counts as out of vocabulary."""
    vocab = ok_vocab(table.keys, restrict)
    vectors = np.asarray(table.vectors)
    gold, model, oov = [], [], 0
    for p in pairs:
        a, b, score = (p.word1, p.word2, p.score) if hasattr(p, "word1") else p
        ia, ib = vocab.get(a.upper()), vocab.get(b.upper())
        if ia is None or ib is None or not vectors[ia].any() or not vectors[ib].any():
            oov += 1
            continue
        va, vb = vectors[ia].astype(np.float64), vectors[ib].astype(np.float64)
        gold.append(float(score))
        model.append(float(np.dot(va / np.linalg.norm(va), vb / np.linalg.norm(vb))))
    if not gold:
        raise EmptyInputError(f"no pair has both words in {table.name!r} (all {oov} are OOV); "
                              "check the file format and the vectors")
    return {"spearman": spearman(gold, model), "n": len(gold), "oov": oov}


def analogy_accuracy(table, sections: Sequence, *, method: str = "3cosadd",
                     restrict: int | None = GENSIM_RESTRICT, epsilon: float = COSMUL_EPSILON) -> dict:
    """``{accuracy, n, oov, correct, sections: {name: {accuracy, n, correct}}}``.

    ``3cosadd`` answers as gensim's ``evaluate_word_analogies``; ``3cosmul`` as gensim's
    ``most_similar_cosmul`` with ``epsilon=1e-6`` over the first ``restrict`` words (that
    gensim method ignores its ``restrict_vocab``: it searches the whole table).

    ``sections``: objects with ``name`` and ``questions`` (4-tuples ``a b c d``: a is to b
    as c is to d), or ``(name, questions)`` pairs.
    """
    check_choice("analogy method", method, ("3cosadd", "3cosmul"))
    vocab = ok_vocab(table.keys, restrict)
    limit = len(table) if restrict is None else min(restrict, len(table))
    vectors = np.asarray(table.vectors[:limit])
    norms = np.linalg.norm(vectors, axis=1)  # (limit,)
    unit = vectors / norms[:, None]
    per_section, oov, questions = {}, 0, []
    for sec in sections:
        name, qs = (sec.name, sec.questions) if hasattr(sec, "name") else sec
        per_section.setdefault(name, {"n": 0, "correct": 0})
        for q in qs:
            words = [w.upper() for w in q]
            rows = [vocab.get(w) for w in words]
            if any(r is None for r in rows):
                oov += 1
                continue
            questions.append((name, words, rows))
    if not questions:
        raise EmptyInputError(f"no analogy question has all four words in {table.name!r} "
                              f"({oov} OOV); check the file and the vectors")
    upper = [k.upper() for k in table.keys[:limit]]
    for s in range(0, len(questions), _BATCH):
        batch = questions[s : s + _BATCH]
        a, b, c = (np.array([q[2][j] for q in batch]) for j in range(3))
        if method == "3cosadd":
            mean = (unit[b] + unit[c] - unit[a]) / 3.0  # gensim: weighted mean of unit vectors
            mean /= np.linalg.norm(mean, axis=1, keepdims=True)
            scores = (mean @ vectors.T) / norms  # (batch, limit)
        else:
            ca, cb, cc = (unit[x] @ unit.T for x in (a, b, c))
            scores = ((1 + cb) / 2) * ((1 + cc) / 2) / ((1 + ca) / 2 + epsilon)
        scores[np.arange(len(batch))[:, None], np.stack([a, b, c], 1)] = -np.inf
        top = top_k_rows(scores, min(8, scores.shape[1] - 1))  # the 8 best, best first
        for (name, words, _), cand in zip(batch, top):
            predicted = None
            for i in cand[:5]:
                predicted = upper[i]
                if predicted not in words[:3]:
                    break
            per_section[name]["n"] += 1
            per_section[name]["correct"] += int(predicted == words[3])
    n = sum(v["n"] for v in per_section.values())
    correct = sum(v["correct"] for v in per_section.values())
    for v in per_section.values():
        v["accuracy"] = v["correct"] / v["n"] if v["n"] else None
    return {"accuracy": correct / n, "n": n, "oov": oov, "correct": correct, "sections": per_section}


def template_item(word: str, template: str = "{word}") -> tuple[tuple[str, ...], int]:
    """``(tokens, index)`` of ``word`` placed in a template (one ``{word}`` token).

    >>> template_item("bank", "the {word} .")
    (('the', 'bank', '.'), 1)
    """
    tokens = template.split()
    where = [i for i, t in enumerate(tokens) if t == "{word}"]
    if len(where) != 1:
        raise InputError(f"the template {template!r} must hold '{{word}}' once, as a token of its own")
    tokens[where[0]] = word
    return tuple(tokens), where[0]


def _word_tables(cache, words: Sequence[str], template: str, task: str, progress) -> list:
    """``(layer number, EmbeddingTable)`` per layer: each word's vector in the template
    (no-vector words left out)."""
    from ..vectors import EmbeddingTable

    words = list(dict.fromkeys(words))
    vec = cache.targets(f"{task}-{key_of_template(template)}", [template_item(w, template) for w in words],
                        progress=progress)  # (words, layers, dim)
    ok = ~np.isnan(vec).any(axis=(1, 2))
    kept = [w for w, k in zip(words, ok) if k]
    if not kept:
        raise EmptyInputError(f"the encoder gave no vector for any of the {len(words)} words")
    return [(k, EmbeddingTable(kept, vec[ok, p], name=f"{task} layer {k}"))
            for p, k in enumerate(cache.layer_ids)]


def key_of_template(template: str) -> str:
    from ..encoders.encoding_cache import key_of

    return key_of(template)[:8]


def run_similarity(root, *, table=None, cache=None, names=None, restrict: int | None = GENSIM_RESTRICT,
                   template: str = "{word}", progress=None) -> list[dict]:
    """Rows ``{split: dataset, method, layer, spearman, n, oov}`` for every similarity file
    present (or ``names``): a static ``table`` (gensim rules), else the encoder of
    ``cache`` with each word alone in ``template``, per layer."""
    from .. import datasets

    _check_restrict(restrict)
    files = datasets.available_similarity(root)
    if names:
        unknown = [n for n in names if n not in datasets.SIMILARITY_FILES]
        if unknown:
            raise InputError(f"unknown similarity set(s) {unknown}; valid: "
                             f"{', '.join(datasets.SIMILARITY_FILES)}")
        for n in names:
            if n not in files:
                datasets.require(root, "similarity", datasets.SIMILARITY_FILES[n])
        files = {n: files[n] for n in names}
    if not files:
        raise EmptyInputError(f"no similarity file under {root}/similarity")
    rows = []
    for name, path in files.items():
        pairs = datasets.load_similarity(path)
        if table is not None:
            rows.append({"split": name, "method": "static", "layer": None,
                         **similarity_spearman(table, pairs, restrict=restrict)})
            continue
        tables = _word_tables(cache, [w for p in pairs for w in (p.word1, p.word2)], template,
                              f"similarity-{name}", progress)
        for k, t in tables:
            rows.append({"split": name, "method": "template", "layer": k,
                         **similarity_spearman(t, pairs, restrict=None)})
    return rows


def run_analogy(root, *, table=None, cache=None, restrict: int | None = GENSIM_RESTRICT,
                methods: Sequence[str] = ("3cosadd", "3cosmul"), template: str = "{word}",
                layers=None, progress=None) -> list[dict]:
    """Rows ``{split, method, layer, accuracy, n, oov}`` per analogy file present: a static
    ``table`` over its first ``restrict`` keys, else the encoder of ``cache`` with the
    vocabulary of the file's own words (each alone in ``template``), per layer."""
    from .. import datasets

    _check_restrict(restrict)
    rows = []
    present = {n: root / rel for n, rel in datasets.ANALOGY_FILES.items() if (root / rel).is_file()}
    if not present:
        datasets.require(root, "analogy", *datasets.ANALOGY_FILES.values())
    for name, path in present.items():
        sections = datasets.load_analogies(path)
        if table is not None:
            tables, split = [(None, table)], name
        else:
            found = _word_tables(cache, [w for s in sections for q in s.questions for w in q], template,
                                 f"analogy-{name}", progress)
            wanted = None if layers is None else {found[layer_position(cache.layer_ids, k)][0]
                                                  for k in layers}
            tables = [(k, t) for k, t in found if wanted is None or k in wanted]
            split, restrict = f"{name} (own vocabulary)", None
        for k, t in tables:
            for method in methods:
                r = analogy_accuracy(t, sections, method=method, restrict=restrict)
                rows.append({"split": split, "method": method, "layer": k, "accuracy": r["accuracy"],
                             "n": r["n"], "oov": r["oov"], "restrict": restrict})
    return rows
