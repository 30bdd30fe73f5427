"""The geometry of contextual vectors, layer by layer, as the papers define it.

Ethayarajh (2019, "How Contextual are Contextualized Word Representations?", EMNLP), §3:

- **self-similarity** of a word: mean cosine between its vectors in *different* sentences
  (1 for static vectors; lower when context changes it more);
- **intra-sentence similarity**: mean cosine between each word of a sentence and the
  sentence's mean vector, averaged over sentences (sentences of one word are left out:
  they are trivially 1);
- **maximum explainable variance** (MEV) of a word: ``σ₁² / Σᵢ σᵢ²``, with σᵢ the singular
  values of its occurrence matrix (one row per occurrence, not centred, as the paper
  defines it; the author's released code centres it, sklearn's PCA): the share of the
  variance of its vectors that one static vector could explain;
- **anisotropy**: mean cosine between the vectors of random word pairs from different
  sentences, the baseline any two vectors reach; a seeded sample of ``n_pairs`` pairs
  (every cross-sentence pair when there are no more than that). The same pairs are used at
  every layer. **Adjusted** values are raw − baseline: anisotropy for the two similarities,
  and for MEV the MEV of the words of those random pairs taken together (the paper's
  "uniformly randomly sampled" representations).

Timkey & van Schijndel (2021, "All Bark and No Bite: Rogue Dimensions in Transformer
Language Models Obscure Representational Quality", EMNLP), §3:

- each dimension's **contribution** to the expected cosine: ``CC(i) = E[xᵢ·yᵢ / (‖x‖‖y‖)]``
  over the same random pairs, so ``Σᵢ CC(i)`` is the anisotropy; its **share** is
  ``CC(i) / Σⱼ CC(j)`` (None when the expected cosine is not positive, as after
  standardization, where it is about 0); the **rogue dimensions** of a layer are the ones
  with the largest contributions;
- **standardization** (``standardize=True``): every dimension z-scored over all the word
  vectors of the layer (mean 0, variance 1) before every measure is computed.

>>> import numpy as np
>>> x = np.array([[1.0, 0], [0, 1], [1, 1]])
>>> round(self_similarity(x, [0, 0, 1]), 4)  # pairs (0, 2) and (1, 2) only
0.7071
>>> round(intra_sentence_similarity([np.array([[1.0, 0], [0, 1]])]), 4)
0.7071
>>> max_explainable_variance(np.array([[2.0, 0], [2, 0]])), max_explainable_variance(np.eye(2))
(1.0, 0.5)
>>> dimension_contributions(np.array([[3.0, 4], [3, -4]]),
...                         np.array([[0, 1]])).round(4).tolist()  # 9/25, -16/25
[0.36, -0.64]
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..bounds import PAIR_BLOCK, check_encoding
from ..encoders.base import Encoder
from ..encoders.targets import check_texts
from ..errors import DimensionError, EmptyInputError, InputError, ZeroVectorError, ask, check_bool, check_int
from .usages import every_word

__all__ = [
    "self_similarity", "intra_sentence_similarity", "cross_sentence_pairs", "mean_pair_cosine",
    "max_explainable_variance", "dimension_contributions", "standardize_dimensions", "geometry",
]

log = logging.getLogger(__name__)
MAX_PAIRS = 10_000_000  # anisotropy pairs: two indices and a cosine each
MAX_ROGUE = 10_000


def _unit(x: np.ndarray, what: str) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    if np.any(norms == 0):
        raise ZeroVectorError(f"{what} has a zero vector; its cosine is undefined")
    return x / norms


def self_similarity(vectors: np.ndarray, sentence_ids: Sequence[int]) -> float:
    """Mean cosine over pairs of ``(n, dim)`` vectors that come from different sentences.

    Computed in O(n·dim), without listing the pairs: with unit vectors ``u``, the sum over
    cross-sentence pairs is ``(|Σ u|² − Σ_s |Σ_{i in s} u_i|²) / 2``.
    """
    unit = _unit(vectors, "self_similarity")  # (n, dim)
    ids = np.asarray(sentence_ids)
    if unit.ndim != 2 or ids.shape != (len(unit),):
        raise DimensionError(f"need (n, dim) vectors and n sentence ids, got {unit.shape} and {ids.shape}")
    _, group = np.unique(ids, return_inverse=True)
    per_sentence = np.zeros((group.max() + 1, unit.shape[1]))  # (sentences, dim)
    np.add.at(per_sentence, group, unit)
    sizes = np.bincount(group)
    n_pairs = (len(unit) ** 2 - int((sizes ** 2).sum())) / 2
    if n_pairs == 0:
        raise InputError("self-similarity needs usages from at least 2 different sentences")
    total = unit.sum(axis=0)
    return float((total @ total - np.einsum("sd,sd->", per_sentence, per_sentence)) / 2 / n_pairs)


def intra_sentence_similarity(sentences: Sequence[np.ndarray]) -> float:
    """Mean over sentences (each ``(n_words, dim)``, 2 words or more) of the mean cosine
    between each word and the sentence's mean vector."""
    per_sentence = []
    for s in sentences:
        s = np.asarray(s, dtype=np.float64)  # (words, dim)
        if len(s) < 2:
            continue
        centre = _unit(s.mean(axis=0), "a sentence's mean vector")  # (dim,)
        per_sentence.append(float((_unit(s, "a sentence") @ centre).mean()))
    if not per_sentence:
        raise InputError("intra-sentence similarity needs a sentence of at least 2 words")
    return float(np.mean(per_sentence))


def cross_sentence_pairs(sizes: Sequence[int], n_pairs: int = 1000, seed: int = 0) -> np.ndarray:
    """``(m, 2)`` flat word indices of pairs from different sentences (sentence ``s`` holds
    ``sizes[s]`` words, numbered on from the previous ones): all of them if there are no
    more than ``n_pairs``, else ``n_pairs`` drawn uniformly (seeded, with replacement).

    >>> cross_sentence_pairs([2, 1]).tolist()
    [[0, 2], [1, 2]]
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    check_int("n_pairs", n_pairs, low=1, high=MAX_PAIRS, hint="random word pairs for the anisotropy baseline")
    check_int("seed", seed, low=0, high=2**32 - 1)
    sent = np.repeat(np.arange(len(sizes)), sizes)  # (words,) sentence of each word
    total = (int(sizes.sum()) ** 2 - int((sizes ** 2).sum())) // 2
    if total == 0:
        raise InputError("anisotropy needs words from at least 2 different sentences")
    if total <= n_pairs:
        i, j = np.triu_indices(len(sent), k=1)
        keep = sent[i] != sent[j]
        return np.stack([i[keep], j[keep]], axis=1)
    rng = np.random.default_rng(seed)
    chosen: list[np.ndarray] = []
    have = 0
    while have < n_pairs:
        draw = rng.integers(0, len(sent), size=(2 * (n_pairs - have) + 16, 2))
        draw = draw[sent[draw[:, 0]] != sent[draw[:, 1]]]
        chosen.append(draw)
        have += len(draw)
    return np.concatenate(chosen)[:n_pairs]


def mean_pair_cosine(x: np.ndarray, pairs: np.ndarray) -> float:
    """Mean cosine between rows ``x[a]`` and ``x[b]`` over the ``(m, 2)`` index ``pairs``, a
    block of :data:`~contextlens.bounds.PAIR_BLOCK` numbers at a time (10 million pairs of
    768-number rows gathered at once would take 120 GB).

    >>> round(mean_pair_cosine(np.array([[1.0, 0], [0, 2], [3, 3]]), np.array([[0, 1], [0, 2]])), 4)
    0.3536
    """
    unit = _unit(x, "anisotropy")  # (words, dim)
    total = 0.0
    step = max(1, PAIR_BLOCK // unit.shape[1])
    for start in range(0, len(pairs), step):
        block = pairs[start : start + step]  # (step, 2)
        total += float(np.einsum("pd,pd->", unit[block[:, 0]], unit[block[:, 1]]))
    return total / len(pairs)


def max_explainable_variance(vectors: np.ndarray) -> float:
    """Ethayarajh's MEV of ``(n, dim)`` vectors: ``σ₁² / Σᵢ σᵢ²`` of the matrix as it is (not
    centred); 1 when every row is a multiple of one vector."""
    x = np.asarray(vectors, dtype=np.float64)
    if x.ndim != 2 or len(x) == 0:
        raise DimensionError(f"MEV needs (n, dim) vectors, got shape {x.shape}")
    s = np.linalg.svd(x, compute_uv=False)
    total = float((s ** 2).sum())
    if total == 0:
        raise ZeroVectorError("MEV of zero vectors is undefined")
    return float(s[0] ** 2 / total)


def dimension_contributions(x: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """``(dim,)``: each dimension's mean contribution ``xᵢ·yᵢ / (‖x‖‖y‖)`` to the cosine of
    the ``(m, 2)`` index ``pairs`` of rows of ``x``; they sum to :func:`mean_pair_cosine`."""
    unit = _unit(x, "anisotropy")  # (words, dim)
    return (unit[pairs[:, 0]] * unit[pairs[:, 1]]).mean(axis=0)


def standardize_dimensions(x: np.ndarray) -> np.ndarray:
    """``(n, dim)`` z-scores of each dimension over the rows (a constant dimension becomes 0).

    >>> standardize_dimensions(np.array([[1.0, 5], [3, 5]])).tolist()
    [[-1.0, 0.0], [1.0, 0.0]]
    """
    x = np.asarray(x, dtype=np.float64)
    centred = x - x.mean(axis=0)
    std = x.std(axis=0)
    return np.divide(centred, std, out=np.zeros_like(centred), where=std > 0)


def _rogue(contributions: np.ndarray, k: int) -> list[dict[str, Any]]:
    """The ``k`` dimensions of largest contribution, with their share of the sum (None when
    the sum, the expected cosine, is not positive: there is no share of it to take).

    >>> [(d["dimension"], round(d["share"], 3)) for d in _rogue(np.array([0.1, 0.6, -0.2]), 2)]
    [(1, 1.2), (0, 0.2)]
    >>> _rogue(np.array([0.1, -0.2]), 1)[0]["share"] is None
    True
    """
    total = float(contributions.sum())
    top = np.argsort(-contributions, kind="stable")[:k]
    return [{"dimension": int(i), "contribution": float(contributions[i]),
             "share": float(contributions[i] / total) if total > 0 else None} for i in top]


def _choose_words(tokens: list[list[str]], words: Sequence[str] | None, min_count: int) -> list[str]:
    counts: dict[str, int] = defaultdict(int)
    for toks in tokens:
        for w in set(toks):
            counts[w] += 1
    if words is not None:
        words = list(dict.fromkeys(w.lower() for w in words))
        few = [f"{w!r} ({counts.get(w, 0)})" for w in words if counts.get(w, 0) < 2]
        if few:
            raise InputError(f"self-similarity needs each word in at least 2 sentences; these are in fewer: "
                             f"{', '.join(few)}")
        return words
    chosen = sorted((w for w, c in counts.items() if c >= max(2, min_count)
                     and any(ch.isalnum() for ch in w)),
                    key=lambda w: (-counts[w], w))
    if not chosen:
        raise InputError(f"no word occurs in {max(2, min_count)} or more sentences; give more sentences "
                         f"or name the words ({ask('words')})")
    return chosen


def geometry(
    encoder: Encoder, sentences: Sequence[str], words: str | Sequence[str] | None = None, *,
    min_count: int = 2, n_pairs: int = 1000, seed: int = 0, standardize: bool = False, n_rogue: int = 3,
) -> dict[str, Any]:
    """Self-similarity, intra-sentence similarity, MEV, anisotropy and the rogue dimensions
    at every layer (see the module docstring).

    ``words``: the word, or words, whose self-similarity and MEV to measure (default: every
    word, not punctuation, found in at least ``min_count`` sentences); ``standardize``:
    z-score every dimension of a layer first; ``n_rogue``: how many top dimensions to list.
    Returns ``{layer_names, n_sentences, words: [{word, sentences, occurrences}],
    anisotropy_pairs, anisotropy_exact, standardized, layers: [{layer, name, anisotropy,
    intra_sentence, intra_sentence_adjusted, self_similarity, self_similarity_adjusted,
    mev, mev_adjusted (means over the words), mev_baseline, rogue: [{dimension,
    contribution, share}], per_word: {word: {raw, adjusted, mev, mev_adjusted}}}], encoder}``.
    """
    sentences = check_texts(sentences)
    if isinstance(words, str):
        words = [words]
    if len(sentences) < 2:
        raise EmptyInputError(f"geometry needs at least 2 sentences, got {len(sentences)}")
    check_int("min_count", min_count, low=1, hint="sentences a word must be found in")
    check_int("n_pairs", n_pairs, low=1, high=MAX_PAIRS, hint="random word pairs for the anisotropy baseline")
    check_int("n_rogue", n_rogue, low=1, high=MAX_ROGUE, hint="how many rogue dimensions to list per layer")
    standardize = check_bool("standardize", standardize)
    check_encoding(encoder, sentences,
                   todo="give fewer or shorter sentences (geometry keeps every word's vectors)")
    encodings = encoder.encode(sentences, targets=every_word(sentences))  # vectors only
    tokens = [[t.lower() for t in e.tokens] for e in encodings]
    chosen = _choose_words(tokens, words, min_count)
    where: dict[str, list[tuple[int, int]]] = {w: [] for w in chosen}  # word: [(sentence, index)]
    for s, toks in enumerate(tokens):
        for i, t in enumerate(toks):
            if t in where:
                where[t].append((s, i))
    sizes = [len(t) for t in tokens]
    pairs = cross_sentence_pairs(sizes, n_pairs, seed)  # (m, 2)
    exact = (sum(sizes) ** 2 - sum(n * n for n in sizes)) // 2 <= n_pairs  # every pair was used
    n_stack = encodings[0].layers.shape[0]
    if any(e.layers.shape[0] != n_stack for e in encodings):
        raise InputError("the encodings have different numbers of layers; use one encoder")
    sampled = np.unique(pairs)  # the words of the random pairs: the MEV baseline
    starts = np.cumsum([0, *sizes])
    layers = []
    for position, layer in enumerate(encodings[0].layer_ids):
        flat = np.concatenate([e.layers[position] for e in encodings]).astype(np.float64)  # (words, dim)
        if standardize:
            flat = standardize_dimensions(flat)
        per_sentence = [flat[a:b] for a, b in zip(starts[:-1], starts[1:])]  # each (words, dim)
        contributions = dimension_contributions(flat, pairs)  # (dim,)
        base = float(contributions.sum())  # = mean_pair_cosine(flat, pairs)
        mev_base = max_explainable_variance(flat[sampled])
        intra = intra_sentence_similarity(per_sentence)
        per_word = {}
        for w, occ in where.items():
            vectors = np.stack([per_sentence[s][i] for s, i in occ])
            raw = self_similarity(vectors, [s for s, _ in occ])
            mev = max_explainable_variance(vectors)
            per_word[w] = {"raw": raw, "adjusted": raw - base, "mev": mev, "mev_adjusted": mev - mev_base}
        mean_self = float(np.mean([v["raw"] for v in per_word.values()]))
        mean_mev = float(np.mean([v["mev"] for v in per_word.values()]))
        layers.append({
            "layer": layer, "name": encodings[0].layer_names[position], "anisotropy": base,
            "intra_sentence": intra, "intra_sentence_adjusted": intra - base,
            "self_similarity": mean_self, "self_similarity_adjusted": mean_self - base,
            "mev": mean_mev, "mev_adjusted": mean_mev - mev_base, "mev_baseline": mev_base,
            "rogue": _rogue(contributions, n_rogue), "per_word": per_word,
        })
        log.info("layer %d: anisotropy %.3f, self-sim %.3f, intra %.3f, MEV %.3f", layer, base, mean_self,
                 intra, mean_mev)
    return {
        "layer_names": list(encodings[0].layer_names), "layer_ids": list(encodings[0].layer_ids),
        "n_sentences": len(sentences),
        "words": [{"word": w, "sentences": len({s for s, _ in occ}), "occurrences": len(occ)}
                  for w, occ in where.items()],
        "anisotropy_pairs": len(pairs), "anisotropy_exact": bool(exact), "standardized": standardize,
        "layers": layers,
        "encoder": encodings[0].describe(),
    }
