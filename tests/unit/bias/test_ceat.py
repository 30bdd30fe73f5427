"""CEAT over sampled contexts: every draw is a WEAT of some choice of contexts, the draws are
combined by DerSimonian–Laird, missing words are reported, the store is read in one place."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from contextlens.bias import (
    WordSets,
    association_test,
    ceat,
    ceat_samples,
    contexts_from_store,
    random_effects,
)
from contextlens.errors import InputError

SETS = WordSets("toy", X=("x1", "x2"), Y=("y1", "y2"), A=("a",), B=("b",))


def _contexts(seed: int, per_word: int, shift: float = 0.0):
    """Random 3-d contexts; X words lean towards A's direction by ``shift``, Y words towards B's."""
    rng = np.random.default_rng(seed)
    lean = {"x": np.array([shift, 0, 0]), "y": np.array([0, shift, 0]), "a": np.array([1.0, 0, 0]),
            "b": np.array([0, 1.0, 0])}
    return {w: rng.normal(0, 0.5, (per_word, 3)) + lean[w[0]] for key in "XYAB" for w in getattr(SETS, key)}


def test_every_draw_is_the_weat_of_one_choice_of_contexts():
    ctx = _contexts(0, per_word=2)
    words = [w for key in "XYAB" for w in getattr(SETS, key)]
    possible = set()
    for choice in itertools.product(range(2), repeat=len(words)):  # all 2^6 choices of contexts
        pick = dict(zip(words, choice))
        X, Y, A, B = ([ctx[w][pick[w]] for w in getattr(SETS, key)] for key in "XYAB")
        r = association_test(X, Y, A, B, permutations=None)
        possible.add((round(r.effect_size, 9), round(r.variance, 9)))
    effects, variances = ceat_samples(ctx, SETS, samples=300, seed=1)
    drawn = {(round(e, 9), round(v, 9)) for e, v in zip(effects, variances)}
    assert drawn <= possible
    assert len(drawn) > 30  # the draws do vary the contexts


def test_the_batched_draws_are_the_draws_one_at_a_time():
    sets = WordSets("toy", X=("x1", "x2", "x3"), Y=("y1", "y2"), A=("a1", "a2"), B=("b1",))
    rng = np.random.default_rng(7)
    ctx = {w: rng.normal(size=(int(rng.integers(1, 6)), 4)) for key in "XYAB" for w in getattr(sets, key)}
    draws = np.random.default_rng(11)  # one context per word, X, Y, A, B in order, draw after draw
    expected = []
    for _ in range(1203):  # more than two chunks of draws
        X, Y, A, B = ([ctx[w][draws.integers(len(ctx[w]))] for w in getattr(sets, key)] for key in "XYAB")
        r = association_test(X, Y, A, B, permutations=None)
        expected.append((r.effect_size, r.variance))
    effects, variances = ceat_samples(ctx, sets, samples=1203, seed=11)
    np.testing.assert_allclose(effects, [e for e, _ in expected], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(variances, [v for _, v in expected], rtol=1e-12, atol=1e-12)


def test_ceat_combines_its_draws_by_dersimonian_laird():
    ctx = _contexts(2, per_word=5, shift=1.0)
    effects, variances = ceat_samples(ctx, SETS, samples=500, seed=3)
    combined = random_effects(effects, variances)
    r = ceat(ctx, SETS, model="toy", layer=4, samples=500, seed=3)
    assert (r.effect_size, r.ci, r.p_value, r.q, r.tau2, r.i2) == (
        combined.effect, combined.ci, combined.p_value, combined.q, combined.tau2, combined.i2)
    assert (r.measure, r.model, r.layer, r.samples) == ("ceat", "toy", 4, 500)
    assert r.effect_size > 0 and r.ci[0] > 0  # X leans to A and Y to B in every context
    assert effects.min() <= r.effect_size <= effects.max()


def test_words_without_contexts_are_missing_and_too_few_refuse():
    ctx = _contexts(5, per_word=3)
    sets = WordSets("toy", X=("x1", "x2", "x9"), Y=("y1", "y2"), A=("a",), B=("b",))
    ctx["x9"] = np.empty((0, 3))
    r = ceat(ctx, sets, model="toy", layer=0, samples=10)
    assert r.missing.as_dict() == {"X": ["x9"], "Y": [], "A": [], "B": []} and r.n_x == 2
    del ctx["x2"]
    with pytest.raises(InputError, match="set X needs at least 2 word\\(s\\) with contexts.*x2, x9"):
        ceat(ctx, sets, model="toy", layer=0, samples=10)
    with pytest.raises(InputError, match="samples must be at least 2"):
        ceat_samples(_contexts(5, 3), SETS, samples=1)


class _Store:
    """Stands in for UsageStore.vectors_of: (rows, (usages, dim) vectors) of a word at a layer."""

    def __init__(self, vectors):
        self.vectors, self.calls = vectors, []

    def vectors_of(self, word, layer=None, limit=None):
        self.calls.append((word, layer, limit))
        v = self.vectors.get(word, np.empty((0, 2), np.float32))
        return [{} for _ in v], v


def test_contexts_come_from_the_store_once_per_word():
    store = _Store({"bank": np.ones((3, 2), np.float32)})
    out = contexts_from_store(store, ["bank", "river", "bank"], layer=6, limit=100)
    assert list(out) == ["bank"] and out["bank"].shape == (3, 2)
    assert store.calls == [("bank", 6, 100), ("river", 6, 100)]
