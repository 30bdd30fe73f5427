"""Attributions beside occlusion on tiny random-weight models (a BERT with minilm's WordPiece, a
Llama causal LM with a byte-level BPE) and a toy attention encoder: each method's word-level
score is rebuilt here from its definition, each Spearman is scipy's, and a causal model scores
only the words before the word, with the next-piece log-probability drop computed by hand."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from tests.missing import need

torch = need("torch")
need("transformers")

from contextlens.analysis.attribution import attention_rollout  # noqa: E402
from contextlens.analysis.faithfulness import METHODS, attributions, word_scores  # noqa: E402
from contextlens.analysis.flow import attention_flow  # noqa: E402
from contextlens.analysis.occlusion import occlude, occlusion_vs_attention  # noqa: E402
from contextlens.analysis.toy import COURSE_VECTORS, toy_table  # noqa: E402
from contextlens.encoders import blocks  # noqa: E402
from contextlens.encoders.gradients import gradient_scores  # noqa: E402
from contextlens.encoders.mixing import SelfAttention  # noqa: E402
from contextlens.encoders.transformer import TransformerEncoder  # noqa: E402
from contextlens.errors import InputError  # noqa: E402
from tests.integration.tiny_models import tiny_lms, tiny_model  # noqa: E402

TEXT = "We sat on the river bank and watched the water flow past."


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return TransformerEncoder(str(tiny_model(tmp_path_factory.mktemp("fb"), "bert", layers=3, init=0.2)))


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return TransformerEncoder(str(tiny_lms(tmp_path_factory.mktemp("fl")) / "causal"), engine="torch")


def test_every_score_is_its_definition_and_every_spearman_scipy_s(bert):
    r = attributions(bert, TEXT, "bank", steps=8)
    assert r["methods"] == list(METHODS) and not r["unavailable"] and r["causal"] is False
    full = bert.encode([TEXT])[0]
    i = full.find("bank")
    others = [j for j in range(len(full.words)) if j != i]
    assert [c["position"] for c in r["context"]] == others and r["index"] == i
    occ = occlusion_vs_attention(bert, TEXT, "bank")
    roll = attention_rollout(full.attention, full.special_attention)
    flow = attention_flow(full.attention, i, full.special_attention)
    model = blocks.internals(bert)
    pieces = blocks.read_pieces(model, TEXT)
    groups = [pieces.word_pieces[w] for w in pieces.kept]
    vectors, _ = blocks.norm_contributions(model, pieces, groups[i])
    grads = gradient_scores(model, pieces, groups[i], steps=8)
    for n, x in enumerate(r["layers"]):
        s = x["scores"]
        np.testing.assert_allclose(x["occlusion"], occ["layers"][n]["occlusion"], atol=1e-6)
        np.testing.assert_allclose(s["raw"], full.attention[n, :, i][:, others].mean(0), atol=1e-6)
        np.testing.assert_allclose(s["rollout"], roll[n, i, others], atol=1e-6)
        np.testing.assert_allclose(s["flow"], flow[n, others], atol=1e-6)
        context = [groups[j] for j in others]
        np.testing.assert_allclose(s["norm"], word_scores(vectors[n].mean(0), context), rtol=1e-5)
        np.testing.assert_allclose(s["ig"], word_scores(grads.integrated[n], context), rtol=1e-4)
        assert 0 <= min(s["value-zeroing"]) and sum(s["value-zeroing"]) <= 1 + 1e-9
        for m in METHODS:
            want = stats.spearmanr(x["occlusion"], s[m])[0]
            assert x["spearman"][m] == pytest.approx(want)
    assert [c["layer"] for c in r["ig_completeness"]] == [1, 2, 3]


def test_value_zeroing_is_normalised_over_every_word_and_the_special_tokens(bert):
    r = attributions(bert, TEXT, "bank", methods="value-zeroing")
    model = blocks.internals(bert)
    pieces = blocks.read_pieces(model, TEXT)
    groups = [pieces.word_pieces[w] for w in pieces.kept] + [pieces.special]
    zeroed = blocks.value_zeroing(model, pieces, groups)
    cap = blocks.capture(model, pieces)
    i = r["index"]
    mine = list(groups[i])
    for n, x in enumerate(r["layers"]):
        word = cap.ffn[n][mine].mean(0)
        dist = [1 - np.dot(z[mine].mean(0), word) / np.linalg.norm(z[mine].mean(0)) / np.linalg.norm(word)
                for z in zeroed[n]]
        share = np.array(dist) / np.sum(dist)
        np.testing.assert_allclose(x["scores"]["value-zeroing"], share[[c["position"] for c in r["context"]]],
                                   atol=1e-5)


def test_a_causal_model_scores_the_words_before_and_the_next_piece_drop(llama):
    r = attributions(llama, TEXT, "watched", methods="raw,norm,grad-input")
    before = ["We", "sat", "on", "the", "river", "bank", "and"]
    assert r["causal"] and [c["word"] for c in r["context"]] == before
    nw = r["next_word"]
    model = blocks.internals(llama, head=True)
    prefix = TEXT[: TEXT.index("watched") + len("watched")]

    def log_probs(text):
        ids = model.tokenizer(text)["input_ids"]
        with torch.inference_mode():
            logits = model.lm.hf_model(input_ids=torch.tensor([ids])).logits[0, -1].double()
        return torch.log_softmax(logits, -1).numpy()

    full = log_probs(prefix)
    best = int(np.argmax(full))
    assert nw["piece"] == model.tokenizer.convert_ids_to_tokens([best])[0]
    assert nw["log_probability"] == pytest.approx(full[best])
    for p, drop in enumerate(nw["drop"]):  # word p of the prefix left out
        assert drop == pytest.approx(full[best] - log_probs(occlude(prefix, p)[0])[best], abs=1e-6)
    for x in r["layers"]:
        want = stats.spearmanr(nw["drop"], x["scores"]["raw"])[0]
        assert x["next_word_spearman"]["raw"] == pytest.approx(want)
        assert len(x["scores"]["norm"]) == 7
    with pytest.raises(InputError, match="no word before it"):
        attributions(llama, TEXT, "We", methods="raw")


def test_a_toy_encoder_has_the_attention_methods_only():
    enc = SelfAttention(toy_table(COURSE_VECTORS), n_layers=2)
    r = attributions(enc, "money bank loan river", "bank")
    assert r["methods"] == ["raw", "rollout", "flow"]
    assert set(r["unavailable"]) == {"norm", "value-zeroing", "grad-input", "ig"}
    with pytest.raises(InputError, match="norm reads a transformer's modules"):
        attributions(enc, "money bank loan river", "bank", methods="norm")


def test_bounds(bert):
    with pytest.raises(InputError, match="at most 64"):
        attributions(bert, " ".join(["bank"] * 65), "bank", methods="raw", occurrence=0)
    with pytest.raises(InputError, match="steps must be a whole number from 1 to 256"):
        attributions(bert, TEXT, "bank", methods="ig", steps=0)
    partial = TransformerEncoder(bert.params()["path"], layers=[1, 3])
    with pytest.raises(InputError, match="make it with every layer"):
        attributions(partial, TEXT, "bank", methods="norm")
