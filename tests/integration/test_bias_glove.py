"""WEAT on GloVe 6B-50d against the oracles: WEFE's effect sizes and statistics for the ten
tests (to 1e-6), scipy's permutation test for the p-values.

WEFE's p-values are not an oracle for ours: WEFE has no exact test (``method="exact"``
raises NotImplementedError), and its "approximate" test draws X_i and Y_i *with
replacement* from X ∪ Y (``np.random.choice`` without ``replace=False``), a bootstrap null
rather than the partitions Caliskan et al. define, and counts a strict ``>``. Its p-values
are systematically larger when the observed split is extreme (a draw can repeat the most
biased word), and at 2-3 ms per cosine call (scikit-learn's input checks) 10,000 draws of
one test take minutes. ``scipy.stats.permutation_test`` computes the permutation test as
defined: exactly when the partitions are few, else from a sample, each counted with ``≥``
— so exact p-values must be equal, sampled ones agree within Monte Carlo error.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from contextlens.bias import TESTS, association_scores, permutation_p_value, weat_caliskan, weat_table
from contextlens.bias.weat import resolve_sets
from contextlens.static.pretrained import load_vectors
from tests.missing import missing


@pytest.fixture(scope="module")
def glove():
    return load_vectors("glove-6b-50d")


@pytest.fixture(scope="module")
def wefe(glove):
    """WEFE's WEAT and a WEFE model of the same vectors."""
    # wefe 0.4.1 (the last release that does not pin numpy <= 1.26.4 and scipy < 1.13) names
    # np.float_ in a type annotation of RNSB, evaluated on import; NumPy 2 removed the alias.
    # It is lent for the import only; WEAT's code never uses it.
    lent = not hasattr(np, "float_")
    if lent:
        np.float_ = np.float64
    try:
        from wefe.metrics import WEAT
        from wefe.query import Query
        from wefe.word_embedding_model import WordEmbeddingModel
    except ImportError:
        missing("wefe is not installed (the test oracle of the dev extra): pip install -e '.[dev]'")
    finally:
        if lent:
            del np.float_
    return WEAT(), Query, WordEmbeddingModel(glove.to_gensim(), "glove-6b-50d")


def test_effect_sizes_and_statistics_equal_wefe_for_the_ten_tests(glove, wefe):
    metric, Query, model = wefe
    for name, test in TESTS.items():
        found, _ = resolve_sets(glove, test.sets)  # the same words, as GloVe's (lower-cased) keys
        query = Query([list(found.X), list(found.Y)], [list(found.A), list(found.B)])
        theirs = metric.run_query(query, model, lost_vocabulary_threshold=0.0)
        ours = weat_table(glove, test.sets, ddof=0)  # WEFE: numpy's default population std
        assert abs(ours.effect_size - theirs["effect_size"]) < 1e-6, name
        assert abs(ours.statistic - theirs["weat"]) < 1e-6, name
        # Caliskan's sample std differs only by sqrt(n / (n - 1)), n = |X| + |Y|
        n = ours.n_x + ours.n_y
        caliskan = weat_table(glove, test.sets, permutations=1)
        assert caliskan.effect_size == pytest.approx(ours.effect_size * math.sqrt((n - 1) / n), rel=1e-12)


def _scores(glove, test):
    found, _ = resolve_sets(glove, test.sets)
    rows = {key: glove.vectors[[glove.index(w) for w in getattr(found, key)]] for key in "XYAB"}
    return (association_scores(rows["X"], rows["A"], rows["B"]),
            association_scores(rows["Y"], rows["A"], rows["B"]))


def test_p_values_equal_scipys_permutation_test(glove):
    m = 20_000
    for name, test in TESTS.items():
        s_x, s_y = _scores(glove, test)
        ours = permutation_p_value(s_x, s_y, permutations=m, seed=0)
        scipy_test = stats.permutation_test(
            (s_x, s_y), lambda x, y, axis: x.sum(axis) - y.sum(axis), permutation_type="independent",
            alternative="greater", vectorized=True, n_resamples=m, random_state=1)
        if ours.exact:  # tests 6-10: every partition, on both sides
            assert len(scipy_test.null_distribution) == ours.permutations, name
            assert ours.p == pytest.approx(scipy_test.pvalue, abs=1e-12), name
        else:  # tests 1-5: two independent samples of m partitions estimate one probability
            p = max(ours.p, scipy_test.pvalue)
            assert abs(ours.p - scipy_test.pvalue) <= 4 * math.sqrt(2 * p * (1 - p) / m) + 2 / m, name
    assert [t.name for t in TESTS.values() if math.comb(2 * t.published.n, t.published.n) <= m] == [
        "career_family", "math_arts", "science_arts", "mental_physical_disease", "young_old_names"]


def test_glove_6b_lacks_only_gladiola(glove):
    rows = {r.test: r for r in weat_caliskan(glove, permutations=1)}
    assert list(rows) == list(TESTS)
    lost = {name: r.missing.as_dict() for name, r in rows.items() if r.missing_count}
    assert lost == {"flowers_insects": {"X": ["gladiola"], "Y": [], "A": [], "B": []}}
    assert (rows["flowers_insects"].n_x, rows["flowers_insects"].n_y) == (24, 25)
