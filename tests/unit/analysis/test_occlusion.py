"""Occlusion vs attention on toy attention encoders: every effect equals the target's cosine
distance to itself re-encoded without that word; the correlations are scipy's."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from contextlens.analysis.attribution import attention_rollout
from contextlens.analysis.occlusion import cosine_distance, occlude, occlusion_vs_attention
from contextlens.encoders.mixing import NeighbourAverage, SelfAttention
from contextlens.encoders.static import StaticEncoder
from contextlens.errors import InputError
from contextlens.vectors import EmbeddingTable

rng = np.random.default_rng(0)
WORDS = ["we", "sat", "on", "the", "bank", "of", "river", ".", ","]
TABLE = EmbeddingTable(WORDS, rng.normal(size=(len(WORDS), 4)), name="toy")
TEXT = "We sat on the bank of the river."


def test_occlude_removes_the_word_and_one_space_run():
    assert occlude(TEXT, 0) == ("sat on the bank of the river.", 3)
    assert occlude(TEXT, 8) == ("We sat on the bank of the river", 1)
    assert occlude("a  b c", 1) == ("a  c", 2)  # the run after it
    with pytest.raises(InputError, match="out of range"):
        occlude(TEXT, 9)


def test_effects_are_distances_to_the_word_re_encoded_without_each_other_word():
    encoder = SelfAttention(TABLE, n_layers=2, heads=2, projections="random", seed=1)
    out = occlusion_vs_attention(encoder, TEXT, "bank")
    assert out["word"] == "bank" and out["index"] == 4
    assert [o["word"] for o in out["others"]] == ["we", "sat", "on", "the", "of", "the", "river", "."]
    full = encoder.encode([TEXT])[0]
    roll = attention_rollout(full.attention, full.special_attention)
    for n, row in enumerate(out["layers"], start=1):
        assert row["layer"] == n
        for m, other in enumerate(out["others"]):
            occluded, _ = occlude(TEXT, other["position"])
            again = encoder.encode([occluded])[0]
            moved = again.vector("bank", layer=n)
            assert row["occlusion"][m] == pytest.approx(cosine_distance(full.vector("bank", n)[None],
                                                                        moved[None])[0])
            assert row["attention"][m] == pytest.approx(full.weights("bank", layer=n)[other["position"]])
            assert row["rollout"][m] == pytest.approx(roll[n - 1, 4, other["position"]])
        assert row["spearman_attention"] == pytest.approx(
            stats.spearmanr(row["occlusion"], row["attention"])[0]
        )
        assert row["spearman_rollout"] == pytest.approx(stats.spearmanr(row["occlusion"], row["rollout"])[0])


def test_uniform_weights_have_no_correlation_and_static_has_no_attention():
    out = occlusion_vs_attention(NeighbourAverage(TABLE), "we sat on the bank", "bank")
    assert out["layers"][0]["spearman_attention"] is None  # equal weights: a constant column
    assert all(e > 0 for e in out["layers"][0]["occlusion"])
    with pytest.raises(InputError, match="no attention weights"):
        occlusion_vs_attention(StaticEncoder(TABLE), TEXT, "bank")
    with pytest.raises(InputError, match="no other word"):
        occlusion_vs_attention(SelfAttention(TABLE), "bank", "bank")


def test_a_causal_encoder_correlates_over_the_earlier_words_only():
    """Later words cannot move a causal encoder's word: their effect and attention are 0 by
    construction, and counting those ties made the correlation look perfect (issue 20)."""
    encoder = SelfAttention(TABLE, n_layers=2, heads=2, projections="random", seed=1, causal=True)
    assert encoder.causal and not NeighbourAverage(TABLE).causal and not StaticEncoder(TABLE).causal
    out = occlusion_vs_attention(encoder, TEXT, "bank")
    later = [m for m, o in enumerate(out["others"]) if o["position"] > 4]
    assert out["causal"] and out["correlated"] == [0, 1, 2, 3] and later == [4, 5, 6, 7]
    every = []
    for row in out["layers"]:
        assert all(row["occlusion"][m] == pytest.approx(0, abs=1e-12) and row["attention"][m] == 0
                   for m in later)
        effect, att = np.array(row["occlusion"]), np.array(row["attention"])
        assert row["spearman_attention"] == pytest.approx(stats.spearmanr(effect[:4], att[:4])[0])
        every.append(stats.spearmanr(effect, att)[0])  # every word: the ties of the later words inflate it
    assert [r["spearman_attention"] for r in out["layers"]] != pytest.approx(every)
    assert not occlusion_vs_attention(SelfAttention(TABLE), TEXT, "bank")["causal"]
