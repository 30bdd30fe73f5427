"""GloVe: the objective by hand, learning on small corpora, the scikit-learn contract."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from contextlens.errors import DimensionError, EmptyInputError, InputError, UnknownOptionError
from contextlens.static.cooccurrence import cooccurrence_matrix
from contextlens.static.glove import GloVe

MONEY = ["money", "bank", "loan", "cash", "account", "credit"]
RIVER = ["river", "water", "boat", "fish", "shore", "stream"]


def topic_corpus(n=400, seed=0):
    rng = np.random.default_rng(seed)
    lines = []
    for k in range(n):
        words = MONEY if k % 2 else RIVER
        lines.append(" ".join(rng.choice(words, size=8)))
    return lines


def objective(model, x):
    """J / n computed by hand from the fitted parameters (x: dense counts)."""
    i, j = np.nonzero(x)
    value = x[i, j]
    f = np.where(value < model.x_max, (value / model.x_max) ** model.alpha, 1.0)
    pred = (np.einsum("nd,nd->n", model.word_vectors_[i].astype(float), model.context_vectors_[j])
            + model.word_biases_[i] + model.context_biases_[j])
    return 0.5 * float(np.sum(f * (pred - np.log(value)) ** 2)) / len(value)


def test_reported_cost_is_the_weighted_least_squares_objective():
    x = np.array([[0, 150, 2], [150, 4, 0], [2, 0, 30]], dtype=float)  # 150 >= x_max: f = 1
    after_3 = GloVe(dim=4, epochs=3, batch_size=100, seed=5).fit(x)
    after_4 = GloVe(dim=4, epochs=4, batch_size=100, seed=5).fit(x)
    # one batch holds every entry, so epoch 4's cost is J at the parameters after epoch 3
    assert after_4.loss_history_[3] == pytest.approx(objective(after_3, x), rel=1e-4)
    assert after_4.loss_history_[:3] == pytest.approx(after_3.loss_history_)


def test_initialisation_scale_and_vector_choice():
    x = np.array([[0, 5.0], [5.0, 0]])
    zero = GloVe(dim=10, epochs=1, learning_rate=1e-9).fit(x)
    for params in (zero.word_vectors_, zero.context_vectors_, zero.word_biases_):
        assert np.abs(params).max() <= 0.5 / 10  # uniform(-0.5, 0.5) / dim
    np.testing.assert_allclose(zero.vectors_, zero.word_vectors_ + zero.context_vectors_)
    word = GloVe(dim=10, epochs=1, learning_rate=1e-9, vectors="word").fit(x)
    np.testing.assert_allclose(word.vectors_, word.word_vectors_)


def test_loss_decreases_and_topics_separate():
    co = cooccurrence_matrix(topic_corpus(), window=10, weighting="harmonic")
    model = GloVe(dim=8, epochs=30, seed=1).fit(co)
    losses = model.loss_history_
    assert len(losses) == 30 and losses[-1] < 0.5 * losses[0]
    assert all(b <= a * 1.05 for a, b in zip(losses, losses[1:]))  # monotone, give or take noise
    table = model.to_table()
    for word in MONEY + RIVER:
        same = MONEY if word in MONEY else RIVER
        top = [w for w, _ in table.most_similar(word, k=5)]
        assert set(top) == set(same) - {word}, (word, top)


def test_seeded_runs_are_identical():
    co = cooccurrence_matrix(topic_corpus(60), window=5, weighting="harmonic")
    a = GloVe(dim=5, epochs=3, seed=3).fit(co)
    b = GloVe(dim=5, epochs=3, seed=3).fit(co)
    np.testing.assert_array_equal(a.vectors_, b.vectors_)
    assert a.loss_history_ == b.loss_history_


def test_scikit_learn_contract_and_tables():
    model = GloVe(dim=3, epochs=2)
    assert vars(model) == {"dim": 3, "epochs": 2, "x_max": 100.0, "alpha": 0.75,
                           "learning_rate": 0.05, "batch_size": 8192, "vectors": "sum",
                           "grad_clip": 100.0, "seed": 0}
    with pytest.raises(InputError, match="not fitted"):
        model.to_table()
    x = sp.csr_matrix(np.array([[0, 3.0], [3.0, 1]]))
    assert model.fit(x) is model
    with pytest.raises(InputError, match="keys="):
        model.to_table()
    assert model.to_table(keys=["a", "b"]).keys == ("a", "b")
    co = cooccurrence_matrix(["a b a"], window=2)
    assert GloVe(dim=2, epochs=1).fit(co).to_table().keys == tuple(co.vocab)


def test_bad_input():
    with pytest.raises(DimensionError, match="square"):
        GloVe().fit(np.ones((2, 3)))
    with pytest.raises(EmptyInputError):
        GloVe().fit(np.zeros((2, 2)))
    with pytest.raises(InputError, match="dim"):
        GloVe(dim=0).fit(np.eye(2))
    with pytest.raises(InputError, match="x_max"):
        GloVe(x_max=0).fit(np.eye(2))
    with pytest.raises(UnknownOptionError, match="sum, word"):
        GloVe(vectors="concat").fit(np.eye(2))
