"""WEAT on a static table: find the words, drop (and report) the missing ones, run the test.

Case: GloVe 6B and other uncased tables hold ``einstein``, not ``Einstein``, while the
paper's name lists are capitalised. ``case="auto"`` (the default) takes each word as
written when the table has it and its lower-cased form otherwise; ``"exact"`` takes words
only as written; ``"lower"`` always lower-cases. Lower-casing names has a cost the numbers
carry: on an uncased table *Bill*, *Frank*, *Jack* or *Kenya* are the vectors of the common
words *bill*, *frank*, *jack*, *kenya*.

Missing words are dropped from their set and listed in the result (``missing``, per set);
a target set left with fewer than ``min_words`` (2) words, or an attribute set left empty,
refuses the test with a message. The sets
need not stay the same size: the permutation test splits X ∪ Y into sets of sizes |X| and
|Y| (Caliskan et al. instead deleted names at random until both sides matched).

>>> from contextlens.vectors import EmbeddingTable
>>> t = EmbeddingTable(["rose", "tulip", "ant", "flea", "love", "filth"],
...                    [[1, 0], [0.8, 0.6], [0, 1], [0.6, 0.8], [1, 0.1], [0.1, 1]], name="toy")
>>> sets = WordSets("toy", X=("Rose", "tulip", "lily"), Y=("ant", "flea"), A=("love",), B=("filth",))
>>> r = weat_table(t, sets)
>>> r.n_x, r.missing.X, round(r.effect_size, 3), r.p_value, r.exact
(2, ('lily',), 1.441, 0.16666666666666666, True)
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np

from ..errors import ContextLensError, InputError, check_choice
from ..vectors import EmbeddingTable
from .caliskan import TESTS, get_test
from .result import BiasResult, model_label
from .sets import SET_KEYS, WordSets, read_sets
from .stats import (
    PValue,
    association_scores,
    effect_size,
    permutation_p_value,
    weat_statistic,
)

__all__ = [
    "CASES", "MIN_WORDS", "AssociationTest", "association_test", "find_words", "resolve_sets",
    "weat_table", "weat_encoder", "weat_caliskan", "sets_for",
]

log = logging.getLogger(__name__)
CASES = ("auto", "exact", "lower")
MIN_WORDS = 2


class AssociationTest(NamedTuple):
    """WEAT on four arrays of vectors: the effect size, the statistic and the p-value.

    ``variance`` is the sample variance of s(w, A, B) over X ∪ Y (``ddof``), CEAT's
    in-sample variance; ``p`` is None when no p-value was asked for.
    """

    effect_size: float
    statistic: float
    variance: float
    p: PValue | None


def association_test(X, Y, A, B, *, ddof: int = 1, permutations: int | str | None = "default",
                     seed: int = 0) -> AssociationTest:
    """WEAT on vectors ``X`` (n_x, dim), ``Y`` (n_y, dim), ``A`` (n_a, dim), ``B`` (n_b, dim).

    ``permutations``: the partitions of the p-value (``"default"``:
    :func:`~contextlens.bias.stats.default_permutations`, 100,000 unless the sets are very
    large); None skips the p-value (CEAT's many samples need only the effect size).

    >>> r = association_test([[1, 0], [0.6, 0.8]], [[0, 1], [0.8, 0.6]], [[1, 0]], [[0, 1]])
    >>> round(r.effect_size, 4), round(r.statistic, 4), round(r.variance, 4), r.p.p
    (0.9608, 1.6, 0.6933, 0.3333333333333333)
    """
    s_x, s_y = association_scores(X, A, B), association_scores(Y, A, B)  # (n_x,), (n_y,)
    d = effect_size(s_x, s_y, ddof=ddof)
    variance = float(np.var(np.concatenate([s_x, s_y]), ddof=ddof))
    chosen = None if permutations == "default" else permutations
    p = None if permutations is None else permutation_p_value(s_x, s_y, permutations=chosen, seed=seed)
    return AssociationTest(d, weat_statistic(s_x, s_y), variance, p)


def find_words(table: EmbeddingTable, words: Iterable[str], *, case: str = "auto"
               ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(keys, missing)``: the table key of each word (in order, each key once) and the words
    the table lacks.

    >>> t = EmbeddingTable(["einstein", "NASA", "art"], [[1, 0], [0, 1], [1, 1]])
    >>> find_words(t, ["Einstein", "NASA", "Shakespeare"])
    (('einstein', 'NASA'), ('Shakespeare',))
    >>> find_words(t, ["Einstein", "NASA"], case="exact")
    (('NASA',), ('Einstein',))
    """
    check_choice("case", case, CASES)
    keys: dict[str, str] = {}
    missing: list[str] = []
    for word in words:
        candidates = {"exact": (word,), "lower": (word.lower(),), "auto": (word, word.lower())}[case]
        key = next((c for c in candidates if c in table), None)
        if key is None:
            missing.append(word)
        elif key in keys:
            log.warning("%r and %r are both %r in %s; it is used once", keys[key], word, key, table.name)
        else:
            keys[key] = word
    return tuple(keys), tuple(missing)


def _merged(table: EmbeddingTable, words: Iterable[str], case: str) -> str:
    """Which ``words`` stand for one key of ``table`` (``'; 'Bank' and 'bank' are both
    'bank'``), or ``''``: a set of 2 words can be 1 key once the case is folded.

    >>> _merged(EmbeddingTable(["bank"], [[1.0]]), ["Bank", "bank", "river"], "auto")
    "; 'Bank' and 'bank' are both 'bank'"
    """
    by_key: dict[str, list[str]] = {}
    for word in words:
        found = find_words(table, (word,), case=case)[0]
        if found:
            by_key.setdefault(found[0], []).append(word)
    return "".join(f"; {' and '.join(map(repr, ws))} are both {k!r}" for k,
                   ws in by_key.items() if len(ws) > 1)


def resolve_sets(table: EmbeddingTable, sets: WordSets, *, case: str = "auto", min_words: int = MIN_WORDS
                 ) -> tuple[WordSets, WordSets]:
    """``(found, missing)``: each set as table keys, and the words each set lost.

    A target set (X, Y) left with fewer than ``min_words`` words, an attribute set left
    empty, or X and Y (A and B) that meet once lower-cased refuse the test with a message.
    """
    found, missing = zip(*(find_words(table, getattr(sets, key), case=case) for key in SET_KEYS))
    found_sets, missing_sets = WordSets(sets.name, *found), WordSets(sets.name, *missing)
    for key, keys, lost in zip(SET_KEYS, found, missing):
        if lost:
            log.info("%s: %s loses %d word(s) not in %s: %s", sets.name, key, len(lost), table.name,
                     ", ".join(lost))
        least = min_words if key in ("X", "Y") else 1
        if len(keys) < least:
            given = len(getattr(sets, key))
            merged = _merged(table, getattr(sets, key), case)
            why = (f"{table.name} has only {len(keys)} of its {given} words (missing: "
                   f"{', '.join(lost)}{merged}); use other vectors, or case='lower' (--case lower) for an "
                   "uncased table" if lost
                   else f"its {given} words are only {len(keys)} word(s) of {table.name} ({merged[2:]}); "
                        "give more words" if merged else f"it has only {given}; give more words")
            raise InputError(f"test {sets.name!r}: set {key} needs at least {least} word(s), but {why}")
    for first, second in (("X", "Y"), ("A", "B")):
        both = sorted(set(getattr(found_sets, first)) & set(getattr(found_sets, second)))
        if both:
            raise InputError(f"test {sets.name!r}: {both[0]!r} stands for a word of both {first} and "
                             f"{second} in {table.name}; the two sets must not share words")
    return found_sets, missing_sets


def weat_table(table: EmbeddingTable, sets: WordSets, *, case: str = "auto", ddof: int = 1,
               permutations: int | None = None, seed: int = 0, min_words: int = MIN_WORDS
               ) -> BiasResult:
    """WEAT of ``sets`` on a static table (layer 0); see the module docstring for case and
    missing words, :mod:`contextlens.bias.stats` for ``ddof``, ``permutations`` (None: the
    default number, stated in the result) and ``seed``."""
    found, missing = resolve_sets(table, sets, case=case, min_words=min_words)
    X, Y, A, B = (table.vectors[[table.index(w) for w in getattr(found, key)]] for key in SET_KEYS)
    r = association_test(X, Y, A, B, ddof=ddof, permutations="default" if permutations is None
                         else permutations, seed=seed)
    return BiasResult(sets.name, "weat", table.name, 0, r.effect_size, r.p.p, None, *found.sizes, missing,
                      statistic=r.statistic, exact=r.p.exact, permutations=r.p.permutations)


def weat_encoder(encoder, sets: WordSets, **options) -> BiasResult:
    """WEAT of ``sets`` on an encoder's layer-0 rows (``encoder.static_vectors``: a
    transformer's embedding-matrix rows, pooled over each word's pieces, out of any
    sentence); a word the encoder cannot place is missing, as from a table.
    ``options`` are :func:`weat_table`'s, but words are taken as written (the encoder
    does its own casing)."""
    words = list(dict.fromkeys(w for key in SET_KEYS for w in getattr(sets, key)))
    keys, rows = [], []
    for w in words:
        try:
            rows.append(encoder.static_vectors([w])[0])  # (dim,)
        except ContextLensError as err:
            log.info("%s has no layer-0 row for %r: %s", encoder.name, w, err)
            continue
        keys.append(w)
    table = EmbeddingTable(keys, np.asarray(rows).reshape(len(keys), encoder.dim), name=model_label(encoder))
    return weat_table(table, sets, case="exact", **options)


def weat_caliskan(table: EmbeddingTable, tests: Sequence[str] | None = None, **options) -> list[BiasResult]:
    """:func:`weat_table` for Caliskan et al.'s tests by name (default: all ten, in order)."""
    chosen = [get_test(name) for name in tests] if tests else list(TESTS.values())
    return [weat_table(table, t.sets, **options) for t in chosen]


def sets_for(test: str | None = None, sets_file=None) -> list[WordSets]:
    """The word sets to run: one of Caliskan's tests by name, ``"all"`` ten, or a sets file.

    >>> [s.name for s in sets_for("weat7")]
    ['math_arts']
    >>> sets_for()
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: name a test (see `contextlens bias list`), 'all', or give a sets file (--sets FILE)
    """  # noqa: E501 (a doctest's expected output, printed whole)
    if (test is None) == (sets_file is None):
        raise InputError("name a test (see `contextlens bias list`), 'all', or give a sets file (--sets FILE)"
                         if test is None else "give either a test name or a sets file (--sets), not both")
    if sets_file is not None:
        return [read_sets(sets_file)]
    if test == "all":
        return [t.sets for t in TESTS.values()]
    return [get_test(test).sets]
