"""WEAT by hand on a 2-D table, the permutation p-value (exact, sampled, scipy), case and
missing words."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from contextlens.bias import (
    WordSets,
    association_scores,
    effect_size,
    find_words,
    permutation_p_value,
    weat_table,
)
from contextlens.errors import InputError, UnknownOptionError, ZeroVectorError
from contextlens.vectors import EmbeddingTable

# Unit vectors (3-4-5 triangles) so every cosine is a product of 0, ±0.6, ±0.8 and 1.
TOY = EmbeddingTable(
    ["x1", "x2", "y1", "y2", "a1", "a2", "b1", "b2"],
    [[1, 0], [0.6, 0.8], [0, 1], [0.8, 0.6], [1, 0], [0.6, 0.8], [0, 1], [-0.6, 0.8]],
    name="toy",
)
SETS = WordSets("toy", X=("x1", "x2"), Y=("y1", "y2"), A=("a1", "a2"), B=("b1", "b2"))


def test_weat_on_a_2d_table_by_hand():
    # s(w) = mean(cos(w, a1), cos(w, a2)) - mean(cos(w, b1), cos(w, b2)):
    #   x1 = (1, 0):     mean(1, .6)  - mean(0, -.6)  =  .8  - (-.3) =  1.10
    #   x2 = (.6, .8):   mean(.6, 1)  - mean(.8, .28) =  .8  -   .54 =   .26
    #   y1 = (0, 1):     mean(0, .8)  - mean(1, .8)   =  .4  -   .9  =  -.50
    #   y2 = (.8, .6):   mean(.8, .96) - mean(.6, 0)  =  .88 -   .3  =   .58
    r = weat_table(TOY, SETS)
    s = [1.10, 0.26, -0.50, 0.58]
    # statistic: (1.10 + .26) - (-.50 + .58) = 1.28
    assert r.statistic == pytest.approx(1.28, abs=1e-6)
    # effect size: (mean .68 - mean .04) / std(s); deviations from .36: .74 -.10 -.86 .22,
    # squares sum to 1.3456; ddof=1: sqrt(1.3456 / 3) = .669726...
    assert r.effect_size == pytest.approx(0.64 / math.sqrt(1.3456 / 3), abs=1e-6)
    assert r.effect_size == pytest.approx(0.955614, abs=1e-6)
    # ddof=0 (WEFE): sqrt(1.3456 / 4) = .58 exactly
    assert weat_table(TOY, SETS, ddof=0).effect_size == pytest.approx(0.64 / 0.58, abs=1e-6)
    # p: the 6 ways to pick 2 of the 4 scores sum to 1.36 (X), .60, 1.68, -.24, .84, .08;
    # 1.36 and 1.68 are >= 1.36, so p = 2/6, from all 6 partitions
    assert (r.p_value, r.exact, r.permutations) == (pytest.approx(1 / 3), True, 6)
    assert np.std(s, ddof=1) == pytest.approx(math.sqrt(1.3456 / 3))
    assert (r.test, r.measure, r.model, r.layer, r.ci) == ("toy", "weat", "toy", 0, None)
    assert (r.n_x, r.n_y, r.n_a, r.n_b, r.missing_count) == (2, 2, 2, 2, 0)


def test_association_scores_are_mean_cosine_differences():
    s = association_scores([[2.0, 0.0], [0.0, 3.0]], [[1.0, 0.0]], [[1.0, 1.0]])
    # (2, 0): cos with (1, 0) = 1, with (1, 1) = 1/√2; (0, 3): 0 and 1/√2
    np.testing.assert_allclose(s, [1 - 1 / math.sqrt(2), -1 / math.sqrt(2)])
    with pytest.raises(ZeroVectorError, match="rows \\[0\\]"):
        association_scores([[0.0, 0.0]], [[1.0, 0.0]], [[0.0, 1.0]])


def test_effect_size_needs_spread_and_a_valid_ddof():
    with pytest.raises(InputError, match="same association score"):
        effect_size([0.2, 0.2], [0.2])
    with pytest.raises(InputError, match="ddof must be 0"):
        effect_size([0.3], [0.1], ddof=2)
    with pytest.raises(InputError, match="s_y must be a non-empty 1-D array"):
        effect_size([0.3], [], ddof=1)


def _scores(seed: int, n_x: int, n_y: int, shift: float):
    rng = np.random.default_rng(seed)
    return rng.normal(shift, 1, n_x), rng.normal(0, 1, n_y)


@pytest.mark.parametrize("seed, n_x, n_y, shift", [(0, 7, 7, 0.8), (1, 6, 8, 0.3), (2, 5, 5, 0.0)])
def test_exact_p_value_equals_scipy_and_the_sample_agrees(seed, n_x, n_y, shift):
    s_x, s_y = _scores(seed, n_x, n_y, shift)
    exact = permutation_p_value(s_x, s_y)
    assert exact.exact and exact.permutations == math.comb(n_x + n_y, n_x)
    oracle = stats.permutation_test(
        (s_x, s_y), lambda x, y, axis: x.sum(axis) - y.sum(axis), permutation_type="independent",
        alternative="greater", vectorized=True, n_resamples=10**6)
    assert exact.p == pytest.approx(oracle.pvalue, abs=1e-12)
    m = 50_000
    sampled = permutation_p_value(s_x, s_y, permutations=m, seed=seed, method="sampled")
    assert not sampled.exact and sampled.permutations == m
    # a Monte Carlo estimate of the same probability: within 4 standard errors (+ the +1 of (k+1)/(m+1))
    assert abs(sampled.p - exact.p) <= 4 * math.sqrt(exact.p * (1 - exact.p) / m) + 1 / m


def test_sampled_p_value_is_seeded_and_never_zero():
    s_x, s_y = _scores(3, 20, 20, 3.0)  # C(40, 20) partitions: sampled
    a = permutation_p_value(s_x, s_y, permutations=2000, seed=5)
    assert a == permutation_p_value(s_x, s_y, permutations=2000, seed=5)
    assert a.p == pytest.approx(1 / 2001)  # no random partition beats a 3-sigma shift: the floor
    with pytest.raises(InputError, match="permutations must be a whole number >= 1"):
        permutation_p_value(s_x, s_y, permutations=0)


def test_ties_with_the_observed_partition_count():
    # every partition has the same sum: p = 1 (the observed one and all its ties)
    assert permutation_p_value([1.0, 1.0], [1.0, 1.0]).p == 1.0


def test_case_auto_falls_back_to_lower_case_and_missing_words_are_listed():
    sets = WordSets("cased", X=("X1", "x2", "x3"), Y=("y1", "Y2"), A=("a1", "a2"), B=("b1", "b2", "zz"))
    r = weat_table(TOY, sets)
    assert (r.n_x, r.n_y, r.n_b) == (2, 2, 2)
    assert r.missing.as_dict() == {"X": ["x3"], "Y": [], "A": [], "B": ["zz"]}
    assert r.missing_count == 2
    assert r.effect_size == pytest.approx(weat_table(TOY, SETS).effect_size)
    with pytest.raises(InputError,
                       match="set X needs at least 2 word\\(s\\), but toy has only 1 of its 3 words "
                             "\\(missing: X1, x3\\)"):
        weat_table(TOY, sets, case="exact")
    assert find_words(TOY, ["X1", "x1"], case="lower") == (("x1",), ())
    with pytest.raises(UnknownOptionError, match="valid values: auto, exact, lower"):
        find_words(TOY, ["x1"], case="upper")


def test_sets_that_meet_once_lower_cased_are_refused():
    sets = WordSets("clash", X=("x1", "x2"), Y=("X1", "y1"), A=("a1",), B=("b1",))
    with pytest.raises(InputError, match="'x1' stands for a word of both X and Y"):
        weat_table(TOY, sets)


def test_too_small_sets_are_refused_with_the_missing_words():
    sets = WordSets("small", X=("x1", "nope"), Y=("y1", "y2"), A=("a1",), B=("b1",))
    with pytest.raises(InputError, match="set X needs at least 2 word.*missing: nope"):
        weat_table(TOY, sets)
    assert weat_table(TOY, sets, min_words=1).n_x == 1
