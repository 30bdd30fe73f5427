"""Static tables built from the Brown corpus learn what they should (about 30 s)."""

from __future__ import annotations

import pytest

from contextlens.static.build import build_table
from contextlens.static.cooccurrence import cooccurrence_matrix
from contextlens.static.glove import GloVe

pytestmark = pytest.mark.data


def overlap(table, word, expected, k=10):
    return len({w for w, _ in table.most_similar(word, k=k)} & set(expected))


def test_brown_counts_match_the_plain_loop_totals(brown):
    co = cooccurrence_matrix(brown, window=5)
    # the course text's dict-of-dicts loop over the same file gives 3,344,163 distinct
    # (word, context) pairs adding up to 9,915,660 (see benchmarks/cooccurrence.py)
    assert co.n_sentences == 57_340 and co.n_tokens == 1_161_192
    assert co.counts.nnz == 3_344_163 and int(co.counts.sum()) == 9_915_660
    assert co.vocab[:3] == ["the", ",", "."]
    assert (co.counts != co.counts.T).nnz == 0


def test_glove_on_brown_learns_days_numbers_and_family(brown):
    co = cooccurrence_matrix(brown, window=10, weighting="harmonic", lower=True, min_count=5,
                             max_vocab=3000)
    model = GloVe(dim=50, epochs=10, learning_rate=0.1, seed=0).fit(co)
    assert model.loss_history_[-1] < 0.5 * model.loss_history_[0]
    table = model.to_table()
    assert overlap(table, "monday", ["tuesday", "wednesday", "friday", "saturday", "sunday"]) >= 3
    assert overlap(table, "three", ["two", "four", "five", "six", "eight"]) >= 3
    assert overlap(table, "mother", ["father", "wife", "husband", "son"], k=5) >= 2
    assert "girl" in {w for w, _ in table.most_similar("boy", k=5)}


def test_ppmi_svd_on_brown_through_build_table(brown):
    seen = []
    table = build_table(brown, "ppmi-svd", dim=100, lower=True, max_vocab=5000,
                        progress=seen.append)
    assert len(table) == 5000 and table.dim == 100 and table.name == "ppmi-svd:brown_plain.txt"
    assert seen[-1] == 57_340
    assert overlap(table, "monday", ["tuesday", "wednesday", "friday", "saturday", "sunday"], k=5) >= 3
    assert overlap(table, "mother", ["father", "wife", "husband", "son", "daughter"], k=5) >= 3
