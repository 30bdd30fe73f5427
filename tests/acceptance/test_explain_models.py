"""The explanations inside a layer on the packaged models: the feed-forward rows are ``compare``'s
layers, the issue's figures on MiniLM come back (raw attention's Spearman with occlusion 0.80 at
layer 1 and 0.13 at layer 4, rollout 0.87-0.92 from layer 2 on), patching the layer's output at the last layer
gives the donor's word, and SmolLM2 (causal) scores only the words before the word and says what
it expects next."""

from __future__ import annotations

import pytest

from tests.missing import need, need_model

need("torch")
need("transformers")

from contextlens import attributions, compare, make_encoder, patch, sublayers  # noqa: E402

RIVER = "We sat on the bank of the river and watched the boats."
MONEY = "She deposited the money at the bank."


@pytest.fixture(scope="module")
def minilm():
    need_model("minilm")
    return make_encoder(model="minilm")


def test_minilm_blocks_and_the_issue_s_figures(minilm):
    r = sublayers(minilm, RIVER, MONEY, "bank")
    c = compare(minilm, RIVER, MONEY, "bank")
    ffn = [x["cosine"] for x in r["rows"] if x["after"] == "ffn"]
    assert ffn == pytest.approx(c["cosine_by_layer"][1:], abs=1e-4)
    a = attributions(minilm, RIVER, "bank", methods="raw,rollout")
    raw = [x["spearman"]["raw"] for x in a["layers"]]
    rollout = [x["spearman"]["rollout"] for x in a["layers"]]
    assert round(raw[0], 2) == 0.80 and round(raw[3], 2) == 0.13
    assert round(rollout[0], 2) == 0.80  # one layer: the ranking of raw attention
    assert all(0.87 <= round(v, 2) <= 0.92 for v in rollout[1:])
    p = patch(minilm, RIVER, MONEY, "bank")
    assert p["rows"][-1]["cosine_to_donor"] == pytest.approx(1.0, abs=1e-5)
    assert p["rows"][0]["cosine_to_recipient"] > p["rows"][0]["cosine_to_donor"]  # early: the context wins


@pytest.mark.slow
def test_mpnet_blocks(tmp_path):
    need_model("mpnet")
    mpnet = make_encoder(model="mpnet")
    r = sublayers(mpnet, RIVER, MONEY, "bank")
    c = compare(mpnet, RIVER, MONEY, "bank")
    assert len(r["rows"]) == 24
    ffn = [x["cosine"] for x in r["rows"] if x["after"] == "ffn"]
    assert ffn == pytest.approx(c["cosine_by_layer"][1:], abs=1e-4)


@pytest.mark.slow
def test_smollm2_attributions_and_patch():
    need_model("smollm2")
    smollm2 = make_encoder(model="smollm2")
    a = attributions(smollm2, "The capital of France is Paris.", "is", methods="raw,norm")
    assert [c["word"] for c in a["context"]] == ["The", "capital", "of", "France"]
    assert a["next_word"]["piece"] == "ĠParis" and len(a["next_word"]["drop"]) == 4
    p = patch(smollm2, "We sat on the bank of the", "She deposited money at the bank of the", "bank", k=5)
    assert len(p["rows"]) == 30 and [w["word"] for w in p["predictions"]["recipient"]][0] == "river"
    assert p["rows"][-1]["cosine_to_donor"] == pytest.approx(1.0, abs=1e-4)
