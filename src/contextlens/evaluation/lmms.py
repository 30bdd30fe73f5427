"""LMMS in full (Loureiro & Jorge, ACL 2019): an embedding for every WordNet sense, and
1-NN disambiguation over them.

The recipe, as the authors' code does it (github.com/danlou/LMMS, branch LMMS_ACL19:
``train.py``, ``extend.py``, ``emb_glosses.py``, ``emb_lemmas.py``, ``concat.py``,
``eval_nn.py``):

1. **SemCor**: a sense key's embedding is the mean of its tagged occurrences' vectors
   (:func:`~contextlens.evaluation.wsd.sense_embeddings`). LMMS sums BERT's last four layers;
   our ``"last4"`` view is their mean, the same direction (every later step normalises).
2. **Propagation** (:func:`propagate`), so every sense has one: a sense SemCor never
   tagged takes its synset's embedding (the mean of the synset's tagged senses); else its
   hypernyms' (the mean over its hypernym synsets, each its own embedding or, walking up,
   its hypernyms'); else its lexicographer file's (the mean of the embeddings of that
   file's synsets that have one). Differences from ``extend.py``, which makes one pass over
   the senses in WordNet's order: a hypernym whose own embedding comes from *its*
   hypernyms counts wherever it comes in that order (the walk up is resolved fully, so the
   result does not depend on the order), and instance hypernyms count as hypernyms (as the
   authors' later ``scripts/extend_sensekeys.py`` does).
3. **Glosses** (:mod:`contextlens.evaluation.glosses`): each sense's sentence
   ``"<its lemma> - <the synset's lemmas, ' , '-joined> - <definition>"`` encoded by the
   same model, the vector being the mean over every word of the sentence at the same layer
   view (bert-as-service's ``REDUCE_MEAN`` in ``emb_glosses.py``: lemma tokens and
   definition tokens alike). One sentence per sense key: 206,949 for WordNet 3.0 (on
   117,659 synsets).
4. **Static**: the sense's lemma's static vector (LMMS-2348: fastText crawl-300d-2M-subword;
   here GloVe 6B-50d by default, a multiword lemma being the mean of its words' rows).
5. **Combination** (``concat.py``): each part L2-normalised, then concatenated: LMMS-2048
   is ``[gloss, propagated]``, LMMS-2348 ``[static, gloss, propagated]``. The query
   (``eval_nn.py``) is the usage's contextual vector, normalised, repeated once per
   contextual part, after the static vector of the instance's lemma; the answer is the
   candidate (the lemma's senses of the POS) of highest cosine (:func:`concat_cosines`).
   As every candidate shares the query's lemma, the static part adds the same amount to
   every candidate's cosine numerator: under the lemma and POS restriction it never
   changes an answer (it matters when matching against all senses).

The published table (``README.md`` of LMMS_ACL19; BERT-large-cased, ALL F1):
MFS 65.2, LMMS-1024 (SemCor + propagation) 73.8, LMMS-2048 (+ glosses) 75.4.

>>> concat_cosines([np.array([1.0, 0.0]), np.array([0.0, 2.0])],
...                [np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[0.0, 1.0], [0.0, 1.0]])]).round(3).tolist()
[1.0, 0.5]
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import EmptyInputError, InputError, check_choice
from .glosses import GLOSS_BLOCK, gloss_embeddings, gloss_text

__all__ = ["SOURCES", "STEPS", "Propagation", "propagate", "needed_semcor_keys", "gloss_text",
           "gloss_embeddings", "static_parts", "concat_cosines", "SenseParts", "sense_parts", "rank_senses",
           "DEFAULT_STATIC", "GLOSS_BLOCK", "tagged_keys"]

log = logging.getLogger(__name__)
SOURCES = ("semcor", "synset", "hypernym", "lexname")  # where a sense's propagated embedding comes from
STEPS = ("propagation", "glosses", "static")  # the parts of a sense embedding, in the order they are added
DEFAULT_STATIC = "glove-6b-50d"


# -- propagation ------------------------------------------------------------------------------
@dataclass
class Propagation:
    """Every sense's propagated embedding, kept factored (``(senses, dim)`` for all of
    WordNet would be 636 MB for mpnet): a sense's embedding is its own SemCor row
    (``source == "semcor"``), or ``weights[synset] @ base`` (synset, hypernym), or
    ``lexname_vectors[lexname]``; ``base`` (b, dim) holds the synsets SemCor tags.
    """

    source: np.ndarray  # (k,) int8: index into SOURCES, -1 for none
    semcor_row: np.ndarray  # (k,) int32: the sense's row of ``semcor``, -1 for none
    semcor: np.ndarray  # (m, dim)
    base: np.ndarray  # (b, dim): the mean SemCor embedding of each tagged synset
    weights: object  # scipy.sparse CSR (synsets, b): each synset's embedding as a mix of base rows
    lexname_vectors: np.ndarray  # (lexnames, dim)
    key_synset: np.ndarray  # (k,)
    key_lexname: np.ndarray  # (k,)
    semcor_counts: np.ndarray | None = None  # (m,) occurrences of each SemCor sense, where known
    base_synsets: np.ndarray | None = None  # (b,) the synset of each base row
    lexname_weights: object = None  # scipy.sparse CSR (lexnames, b)

    def counts(self, rows: Sequence[int]) -> np.ndarray:
        """``(len(rows),)``: how often SemCor tags each of these senses (0: never)."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.zeros(len(rows), dtype=np.int64)
        if self.semcor_counts is not None:
            tagged = self.semcor_row[rows] >= 0
            out[tagged] = self.semcor_counts[self.semcor_row[rows[tagged]]]
        return out

    def vectors(self, rows: Sequence[int]) -> np.ndarray:
        """``(len(rows), dim)`` float32: the propagated embeddings of these sense rows (a
        sense with none is a row of NaN)."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.full((len(rows), self.semcor.shape[1]), np.nan, dtype=np.float32)
        src = self.source[rows]
        own = src == SOURCES.index("semcor")
        out[own] = self.semcor[self.semcor_row[rows[own]]]
        mixed = (src == SOURCES.index("synset")) | (src == SOURCES.index("hypernym"))
        if mixed.any():
            out[mixed] = self.weights[self.key_synset[rows[mixed]]] @ self.base
        lex = src == SOURCES.index("lexname")
        if lex.any():
            out[lex] = self.lexname_vectors[self.key_lexname[rows[lex]]]
        return out

    def coverage(self, rows: Sequence[int] | None = None) -> dict[str, int]:
        """How many senses (of ``rows``, default all) got their embedding from each source."""
        src = self.source if rows is None else self.source[np.asarray(rows, dtype=np.int64)]
        counts = {name: int((src == i).sum()) for i, name in enumerate(SOURCES)}
        return {**counts, "none": int((src < 0).sum())}


def propagate(graph, semcor_keys: Sequence[str], semcor_vectors: np.ndarray,
              semcor_counts: Sequence[int] | None = None) -> Propagation:
    """Propagate SemCor sense embeddings to every sense of ``graph`` (a
    :class:`~contextlens.datasets.wordnet.WordNetGraph`), as the module docstring says.

    ``semcor_keys`` (m,) with ``semcor_vectors`` (m, dim): the SemCor embeddings (and
    ``semcor_counts``, their occurrences, kept for :meth:`Propagation.counts`); keys the
    graph lacks (SemCor's WordNet 1.6 keys) are left out.

    A WordNet of four synsets: *animal* (tagged sense ``animal%1``), *dog* under it (key
    ``dog%1``, untagged), *cur* under *dog* (untagged) and *rock*, alone in another
    lexicographer file with its untagged key:

    >>> from contextlens.datasets.wordnet import WordNetGraph
    >>> g = WordNetGraph(("animal%1", "beast%1", "dog%1", "cur%1", "rock%1"),
    ...                  ("animal", "beast", "dog", "cur", "rock"), np.array([0, 0, 1, 2, 3]),
    ...                  ("animal.n.01", "dog.n.01", "cur.n.01", "rock.n.01"),
    ...                  ("a living thing", "a pet", "a bad dog", "a stone"),
    ...                  ("animal beast", "dog", "cur", "rock"), np.array([0, 0, 0, 1]),
    ...                  ("noun.animal", "noun.object"), np.array([[1, 0], [2, 1]]))
    >>> p = propagate(g, ["animal%1"], np.array([[2.0, 0.0]]))
    >>> [SOURCES[i] if i >= 0 else None for i in p.source], p.vectors([1, 3]).tolist()
    (['semcor', 'synset', 'hypernym', 'hypernym', None], [[2.0, 0.0], [2.0, 0.0]])

    *rock*'s file has no synset with an embedding, so it gets none; with a tagged sense
    there, it would take that file's mean.
    """
    from scipy import sparse

    semcor_vectors = np.asarray(semcor_vectors, dtype=np.float32)
    n_keys, n_syn = len(graph.keys), len(graph.synsets)
    row = graph.key_row
    semcor_row = np.full(n_keys, -1, dtype=np.int32)
    for i, k in enumerate(semcor_keys):
        r = row.get(k)
        if r is not None:
            semcor_row[r] = i
    tagged = np.flatnonzero(semcor_row >= 0)
    if tagged.size == 0:
        raise EmptyInputError("none of the SemCor sense keys is a key of this WordNet; they cannot be "
                              "propagated (a WordNet other than 3.0?)")
    # step 1: the synsets SemCor tags, each the mean of its tagged senses (the "base" rows)
    syn_of_tagged = graph.key_synset[tagged]
    base_syn = np.unique(syn_of_tagged)
    base_of = np.full(n_syn, -1, dtype=np.int64)
    base_of[base_syn] = np.arange(len(base_syn))
    base = np.zeros((len(base_syn), semcor_vectors.shape[1]), dtype=np.float64)
    np.add.at(base, base_of[syn_of_tagged], semcor_vectors[semcor_row[tagged]])
    base /= np.bincount(base_of[syn_of_tagged], minlength=len(base_syn))[:, None]
    # step 2: every other synset walks up its hypernyms (a memo over the DAG)
    hyper: list[list[int]] = [[] for _ in range(n_syn)]
    for s, h in graph.hypernyms.tolist():
        hyper[s].append(h)
    mix: list[dict[int, float] | None] = [None] * n_syn
    done = np.zeros(n_syn, dtype=bool)
    for s in base_syn.tolist():
        mix[s], done[s] = {int(base_of[s]): 1.0}, True
    for start in range(n_syn):
        if done[start]:
            continue
        stack = [start]
        while stack:  # depth-first, hypernyms before the synset (no recursion limit to meet)
            s = stack[-1]
            todo = [h for h in hyper[s] if not done[h]]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            if done[s]:
                continue
            parts = [mix[h] for h in hyper[s] if mix[h] is not None]
            if parts:
                acc: dict[int, float] = {}
                for part in parts:
                    for b, w in part.items():
                        acc[b] = acc.get(b, 0.0) + w / len(parts)
                mix[s] = acc
            done[s] = True
    rows_, cols, vals = [], [], []
    for s, m in enumerate(mix):
        if m:
            rows_ += [s] * len(m)
            cols += list(m)
            vals += list(m.values())
    weights = sparse.csr_matrix((vals, (rows_, cols)), shape=(n_syn, len(base_syn)))
    # step 3: each lexicographer file's mean over its synsets that have an embedding
    has = np.array([m is not None for m in mix])
    n_lex = len(graph.lexnames)
    member = sparse.csr_matrix((np.ones(int(has.sum())), (graph.lexname[has].astype(np.int64),
                                                          np.flatnonzero(has))),
                               shape=(n_lex, n_syn))
    sizes = np.asarray(member.sum(axis=1)).ravel()
    lexname_weights = sparse.diags(np.where(sizes > 0, 1.0 / np.maximum(sizes, 1), 0.0)) @ member @ weights
    lexname_vectors = np.asarray(lexname_weights @ base, dtype=np.float32).reshape(n_lex, -1)
    key_lexname = graph.lexname[graph.key_synset].astype(np.int64)
    source = np.full(n_keys, -1, dtype=np.int8)
    source[(sizes[key_lexname] > 0)] = SOURCES.index("lexname")
    source[has[graph.key_synset]] = SOURCES.index("hypernym")
    source[base_of[graph.key_synset] >= 0] = SOURCES.index("synset")
    source[tagged] = SOURCES.index("semcor")
    log.info("propagated %d SemCor senses to %d of %d WordNet senses", tagged.size, int((source >= 0).sum()),
             n_keys)
    return Propagation(source, semcor_row, semcor_vectors, base.astype(np.float32), weights, lexname_vectors,
                       graph.key_synset.astype(np.int64), key_lexname,
                       None if semcor_counts is None else np.asarray(semcor_counts, dtype=np.int64),
                       base_syn, sparse.csr_matrix(lexname_weights))


def needed_semcor_keys(graph, tagged: Sequence[str], rows: Sequence[int]) -> list[str]:
    """The SemCor keys whose embeddings the propagated embeddings of the sense ``rows`` read,
    given ``tagged``, the keys SemCor tags (no vector needed to know them): each row's own
    key when tagged, else every tagged key of the synsets its synset or hypernym walk
    stops at, or, for a lexicographer-file fallback, of every synset that file's mean
    reads. Propagating these keys' embeddings alone gives ``rows`` exactly the embeddings
    a propagation of all of SemCor gives them (the walk stops at the same synsets and the
    file means are over the same synsets), so a few words' senses need a SemCor pass over
    the sentences holding these keys only.

    >>> from contextlens.datasets.wordnet import WordNetGraph
    >>> g = WordNetGraph(("animal%1", "dog%1", "oak%1", "tree%1"), ("animal", "dog", "oak", "tree"),
    ...                  np.array([0, 1, 2, 3]), ("animal.n.01", "dog.n.01", "oak.n.01", "tree.n.01"),
    ...                  ("", "", "", ""), ("animal", "dog", "oak", "tree"), np.array([0, 0, 1, 1]),
    ...                  ("noun.animal", "noun.plant"), np.array([[1, 0], [2, 3]]))
    >>> needed_semcor_keys(g, ["animal%1", "tree%1"], [1])  # dog walks up to animal; the tree is not read
    ['animal%1']
    """
    known = [k for k in dict.fromkeys(tagged) if k in graph.key_row]
    if not known:
        return []
    prop = _structure(graph, tuple(known))
    cols: set[int] = set()
    own: set[str] = set()
    for r in np.asarray(rows, dtype=np.int64).tolist():
        src = prop.source[r]
        if src == SOURCES.index("semcor"):
            own.add(graph.keys[r])
        elif src in (SOURCES.index("synset"), SOURCES.index("hypernym")):
            cols.update(prop.weights[int(graph.key_synset[r])].indices.tolist())
        elif src == SOURCES.index("lexname"):
            cols.update(prop.lexname_weights[int(prop.key_lexname[r])].indices.tolist())
    synsets = set(prop.base_synsets[sorted(cols)].tolist())
    return sorted(own | {k for k in known if int(graph.key_synset[graph.key_row[k]]) in synsets})


_structures: dict = {}


def _structure(graph, known: tuple[str, ...]) -> Propagation:
    """The propagation of ``known`` with empty vectors (what reads what), the last one kept:
    5 s for all of SemCor's keys, asked again for every word of a session."""
    key = (graph.digest, hash(known), len(known))
    if key not in _structures:
        _structures.clear()
        _structures[key] = propagate(graph, known, np.zeros((len(known), 1), dtype=np.float32))
    return _structures[key]


# -- static part ----------------------------------------------------------------------------------
def static_parts(table, lemmas: Sequence[str]) -> np.ndarray:
    """``(len(lemmas), dim)``: each lemma's static vector in ``table`` (an EmbeddingTable),
    lower-cased, a multiword lemma (``_`` or spaces) the mean of its words' rows; zeros
    for a lemma none of whose words the table has.

    >>> from contextlens.vectors import EmbeddingTable
    >>> t = EmbeddingTable(["bank", "holiday"], [[1.0, 0.0], [0.0, 1.0]])
    >>> static_parts(t, ["Bank", "bank_holiday", "zzz"]).tolist()
    [[1.0, 0.0], [0.5, 0.5], [0.0, 0.0]]
    """
    out = np.zeros((len(lemmas), table.dim), dtype=np.float32)
    index = table.key_to_index
    for i, lemma in enumerate(lemmas):
        rows = [index[w] for w in lemma.lower().replace("_", " ").split() if w in index]
        if rows:
            out[i] = np.asarray(table.vectors[rows], dtype=np.float32).mean(axis=0)
    return out


# -- combination and matching -------------------------------------------------------------------
def _unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    return np.divide(x, norm, out=np.zeros_like(x), where=norm > 0)


def concat_cosines(query: Sequence[np.ndarray], senses: Sequence[np.ndarray]) -> np.ndarray:
    """``(n,)``: the cosine between the query and each sense, both the concatenation of
    their parts each L2-normalised first (``concat.py`` of LMMS; a zero part stays zero).

    ``query``: one ``(dim_p,)`` per part; ``senses``: one ``(n, dim_p)`` per part. With
    every part non-zero this is the mean of the parts' cosines.

    >>> concat_cosines([np.array([1.0, 1.0])], [np.array([[2.0, 2.0], [1.0, 0.0]])]).round(4).tolist()
    [1.0, 0.7071]
    """
    if len(query) != len(senses) or not query:
        raise InputError(f"the query has {len(query)} part(s) and the senses {len(senses)}; give one of each "
                         "per part")
    q = [_unit(p) for p in query]
    s = [_unit(p) for p in senses]
    num = sum(si @ qi for qi, si in zip(q, s))  # (n,)
    q_norm = np.sqrt(sum(float(qi @ qi) for qi in q))
    s_norm = np.sqrt(sum((si * si).sum(axis=1) for si in s))
    den = q_norm * s_norm
    return np.divide(num, den, out=np.full(len(num), -np.inf), where=den > 0)


@dataclass
class SenseParts:
    """The parts of the LMMS embeddings of some senses (rows of a WordNetGraph), at one view."""

    keys: list[str]
    rows: np.ndarray  # (n,) rows of the graph
    propagated: np.ndarray  # (n, dim); NaN rows for senses with none
    source: np.ndarray  # (n,) int8 into SOURCES
    # (n,) how often SemCor tags each sense (0: never; the plain 1-NN has the others)
    semcor_count: np.ndarray
    gloss: np.ndarray | None = None  # (n, dim)
    static: np.ndarray | None = None  # (n, static dim)
    index: dict[str, int] = field(default_factory=dict)

    def __post_init__(self):
        self.index = {k: i for i, k in enumerate(self.keys)}

    def parts(self, steps: Sequence[str]) -> list[np.ndarray]:
        """The sense-side parts of ``steps`` (propagation, + glosses, + static), in LMMS's
        order: static, gloss, propagated."""
        for s in steps:
            check_choice("LMMS step", s, STEPS)
        out = []
        if "static" in steps:
            out.append(self.static)
        if "glosses" in steps:
            out.append(self.gloss)
        out.append(np.nan_to_num(self.propagated))
        if any(p is None for p in out):
            raise InputError(f"these sense embeddings were built without {', '.join(steps)}; build them with "
                             "it")
        return out


def rank_senses(parts: SenseParts, vector: np.ndarray, candidates: Sequence[str], steps: Sequence[str], *,
                lemma_static: np.ndarray | None = None) -> list[tuple[str, float]]:
    """``[(key, cosine)]`` of ``candidates`` best first, the query being ``vector`` (the
    usage's contextual vector at the parts' view) composed as LMMS does for ``steps``;
    ``lemma_static``: the static vector of the usage's lemma (with the ``static`` step).
    Candidates without an embedding are left out.

    >>> p = SenseParts(["a%1", "a%2"], np.array([0, 1]), np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([0, 0]),
    ...                np.array([True, True]), gloss=np.array([[0.0, 1.0], [0.0, 1.0]]))
    >>> [(k, round(c, 3)) for k, c in rank_senses(p, np.array([1.0, 0.2]), ["a%1", "a%2"], ["glosses"])]
    [('a%1', 0.588), ('a%2', 0.196)]
    """
    rows = [parts.index[k] for k in candidates if k in parts.index and parts.source[parts.index[k]] >= 0]
    if not rows or np.isnan(vector).any():
        return []
    sense_side = [p[rows] for p in parts.parts(steps)]
    contextual = len(sense_side) - ("static" in steps)
    query = ([lemma_static] if "static" in steps else []) + [vector] * contextual
    if "static" in steps and lemma_static is None:
        raise InputError("the static step needs the static vector of the usage's lemma (lemma_static)")
    cos = concat_cosines(query, sense_side)
    order = np.argsort(-cos, kind="stable")
    return [(parts.keys[rows[i]], float(cos[i])) for i in order]


def sense_parts(cache, root, keys: Sequence[str] | None, views: Sequence, *, steps: Sequence[str] = STEPS,
                static=DEFAULT_STATIC, semcor_limit: int | None = None,
                progress: Callable[[str, int, int | None], None] | None = None) -> dict:
    """``{view: SenseParts}``: the LMMS parts of ``keys`` (None: every WordNet sense) for
    the encoder of ``cache``, at each layer view (an index of the encoder's layer stack,
    or ``"last4"``).

    The SemCor pass (one pass gives every view; cached) covers the sentences holding the
    keys the propagation to ``keys`` reads (:func:`needed_semcor_keys`; a cached pass over
    all of SemCor serves too), or all of SemCor for every sense; the glosses are encoded
    for ``keys`` only (cached per sense). ``static``: the table of the static step (a
    name, a file or an EmbeddingTable). ``progress(stage, done, total)``.
    """
    from .. import datasets

    for s in steps:
        check_choice("LMMS step", s, STEPS)
    views = list(dict.fromkeys(views))
    graph = datasets.wordnet_graph(root)
    if keys is None:
        rows = np.arange(len(graph.keys))
    else:
        unknown = [k for k in keys if k not in graph.key_row]
        if unknown:
            raise InputError(f"{len(unknown)} sense key(s) are not in this WordNet (e.g. {unknown[:3]})")
        rows = np.array([graph.key_row[k] for k in keys], dtype=np.int64)
    only = None if keys is None else needed_semcor_keys(graph, tagged_keys(root, semcor_limit), rows)
    props = _propagations(cache, root, graph, views, semcor_limit, only, progress)
    glosses = gloss_embeddings(cache, graph, rows, views, progress=progress and (
        lambda k, n: progress("glosses", k, n))) if "glosses" in steps else {}
    static_rows = (static_parts(_static_table(static), [graph.keys[r].split("%")[0] for r in rows.tolist()])
                   if "static" in steps else None)
    out = {}
    for v in views:
        prop = props[v]
        out[v] = SenseParts([graph.keys[r] for r in rows.tolist()], rows, prop.vectors(rows),
                            prop.source[rows], prop.counts(rows), gloss=glosses.get(v), static=static_rows)
    return out


_memo: dict = {}  # the last propagations: (cache key, root, view, semcor limit, keys read) -> Propagation
_MEMO_SIZE = 2


def tagged_keys(root, semcor_limit: int | None = None) -> list[str]:
    """The sense keys SemCor tags (in its first ``semcor_limit`` sentences), in order; read
    from the parsed corpus, nothing encoded (kept per data folder)."""
    from pathlib import Path

    return list(_tagged(str(Path(root).resolve()), semcor_limit))


@functools.lru_cache(maxsize=4)
def _tagged(root: str, semcor_limit: int | None) -> tuple[str, ...]:
    from .. import datasets

    keys: dict[str, None] = {}
    for i, sent in enumerate(datasets.load_semcor(root)):
        if semcor_limit is not None and i >= semcor_limit:
            break
        for inst in sent.instances:
            keys.update(dict.fromkeys(inst.keys))
    return tuple(keys)


def _propagations(cache, root, graph, views, semcor_limit, only, progress) -> dict:
    """``{view: Propagation}`` from the cached SemCor pass over the sentences holding
    ``only`` (None: all; made when missing), the last :data:`_MEMO_SIZE` kept in memory: a
    session asking for many words' senses (the lab, a benchmark) propagates once per set
    of keys read (5 s for all of SemCor with mpnet)."""
    from pathlib import Path

    from ..encoders.encoding_cache import key_of
    from .wsd import semcor_sense_embeddings

    reads = "all" if only is None else key_of(sorted(only))
    key = {v: (cache.key, str(Path(root).resolve()), str(v), semcor_limit, graph.digest,
               reads) for v in views}
    missing = [v for v in views if key[v] not in _memo]
    if missing:
        if only is not None and not only:
            raise EmptyInputError("SemCor tags none of the senses these senses' embeddings would come from; "
                                  "they have no embedding")
        tables = semcor_sense_embeddings(cache, root, missing, semcor_limit,
                                         progress and (lambda k: progress("SemCor sentences", k, None)), only)
        for v in missing:
            start = time.perf_counter()
            _memo[key[v]] = propagate(graph, tables[v]["keys"].tolist(), tables[v]["vectors"],
                                      tables[v].get("counts"))
            log.info("propagation through WordNet: %.2f s", time.perf_counter() - start)
    out = {v: _memo.pop(key[v]) for v in views}
    _memo.update((key[v], out[v]) for v in views)  # most recent last
    while len(_memo) > max(_MEMO_SIZE, len(views)):
        del _memo[next(iter(_memo))]
    return out


def _static_table(static):
    from ..encoders.registry import resolve_vectors

    return resolve_vectors(static)
