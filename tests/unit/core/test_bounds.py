"""Every numeric option has a bound, checked by errors.check_int / check_float, and a value
out of range is one clear InputError naming the option, the bounds and what it means; the
co-occurrence window is cut to the longest sentence (same counts, no loop over a billion
offsets)."""

from __future__ import annotations

import numpy as np
import pytest

from contextlens.analysis.geometry import cross_sentence_pairs
from contextlens.analysis.senses import SenseClusterer
from contextlens.context.attention import causal_mask, check_scale, random_projections, sinusoidal_positions
from contextlens.corpus.reading import longest_sentence
from contextlens.encoders.alignment import Alignment, plan_windows
from contextlens.encoders.mixing import NeighbourAverage, SelfAttention
from contextlens.encoders.tokenized import target_text
from contextlens.errors import InputError
from contextlens.static.build import build_table
from contextlens.static.glove import GloVe
from contextlens.static.ppmi import ppmi, svd_embeddings
from contextlens.vectors import EmbeddingTable
from tests.missing import need

TABLE = EmbeddingTable(["sat", "bank", "river", "money"], np.eye(4), name="toy")
ONE_WORD = Alignment(tuple((i,) for i in range(10)), tuple((i,) for i in range(10)))


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (lambda: build_table(["a b"], "counts", window=10**9),
         "window must be a whole number from 1 to 10,000, got 1000000000; words each side; a window wider"),
        (lambda: build_table(["a b"], "word2vec", window=0),
         "window must be a whole number from 1 to 10,000, got 0"),
        (lambda: ppmi(np.eye(2), alpha=0),
         "alpha must be a finite number from 0.01 to 10, got 0; the context"),
        (lambda: ppmi(np.eye(2), shift=0.5),
         "shift must be a finite number from 1 to 1e+06, got 0.5; the k of k"),
        (lambda: svd_embeddings(np.eye(3), 2, p=float("nan")),
         "p must be a finite number from 0 to 1, got nan"),
        (lambda: GloVe(dim=10**6).fit(np.eye(2)), "dim must be a whole number from 1 to 10,000, got 1000000"),
        (lambda: GloVe(x_max=float("inf")).fit(np.eye(2)),
         "x_max must be a finite number from 1e-06 to 1e+12"),
        (lambda: SelfAttention(TABLE, window=10**9), "window must be a whole number from 0 to 1,000,000"),
        (lambda: SelfAttention(TABLE, scale=1e300),
         "scale must be a finite number from -1e+06 to 1e+06, got 1e+300"),
        (lambda: SelfAttention(TABLE, projections="random", d_head=10**6),
         "d_head must be a whole number from 1 to 4,096, got 1000000"),
        (lambda: NeighbourAverage(TABLE, alpha=2), "alpha must be a finite number from 0 to 1, got 2"),
        (lambda: causal_mask(10**9),
         "n must be a whole number from 0 to 50,000, got 1000000000; words; the mask"),
        (lambda: sinusoidal_positions(3, 10**8),
         "dim must be a whole number from 1 to 65,536, got 100000000"),
        (lambda: random_projections(4, heads=10**6), "heads must be a whole number from 1 to 4,096"),
        (lambda: check_scale(float("inf")), "scale must be a finite number from -1e+06 to 1e+06, got inf"),
        (lambda: plan_windows(ONE_WORD, 4, stride=9), "stride must be a whole number from 1 to 4, got 9"),
        (lambda: plan_windows(ONE_WORD, 0), "window capacity must be a whole number >= 1, got 0"),
        (lambda: cross_sentence_pairs([2, 2], n_pairs=10**12),
         "n_pairs must be a whole number from 1 to 10,000,000"),
        (lambda: SenseClusterer(k_max=True).fit(np.eye(4)),
         "k_max must be a whole number from 2 to 100, got True"),
        (lambda: TABLE.most_similar("bank", k=-1), "k must be a whole number >= 1, got -1"),
        (lambda: target_text(["a", "b"], 2),
         "target index must be a whole number from 0 to 1, got 2; the tokens"),
    ],
)
def test_out_of_range_is_one_clear_error(call, says):
    with pytest.raises(InputError) as info:
        call()
    assert str(info.value).startswith(says)


def test_threads_are_bounded(monkeypatch):
    need("torch")
    from contextlens.encoders.models import set_threads

    with pytest.raises(InputError,
                       match="threads must be a whole number from 1 to 1,024, got 0; torch CPU threads"):
        set_threads(0)
    monkeypatch.setenv("CONTEXTLENS_THREADS", "many")
    with pytest.raises(InputError,
                       match="CONTEXTLENS_THREADS must be a whole number from 1 to 1,024, got 'many'"):
        set_threads(None)


def test_a_window_wider_than_the_longest_sentence_is_cut_to_it_with_the_same_counts(caplog):
    caplog.set_level("INFO", logger="contextlens.static.build")
    lines = ["deposited money bank", "sat bank river by the water", "bank"]
    assert longest_sentence(lines) == 6
    for method in ("counts", "ppmi"):
        wide = build_table(lines, method, window=10_000, min_count=1, weighting="harmonic")
        exact = build_table(lines, method, window=5, min_count=1, weighting="harmonic")
        assert wide.keys == exact.keys
        np.testing.assert_array_equal(wide.vectors, exact.vectors)
    once = build_table(iter(lines), "counts", window=10_000, min_count=1)  # a one-shot iterator is read once
    np.testing.assert_array_equal(once.vectors, build_table(lines, "counts", window=5, min_count=1).vectors)
    assert "window 10000 is wider than the longest sentence (6 tokens): counting with window 5" in caplog.text
