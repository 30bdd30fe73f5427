"""LanguageModel on tiny random-weight models built from configs (no download): a BERT with
a masked-LM head (minilm's WordPiece tokenizer) and a Llama causal LM (a byte-level BPE
trained here). Every probability is checked against a direct softmax of the model's logits."""

from __future__ import annotations

import numpy as np
import pytest

from tests.missing import need

torch = need("torch")
transformers = need("transformers")

from contextlens.encoders.lm import LanguageModel, NoLMHeadError  # noqa: E402
from contextlens.encoders.wordprob import next_word  # noqa: E402
from contextlens.errors import InputError  # noqa: E402
from tests.integration.tiny_models import tiny_lms  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_lms(tmp_path_factory.mktemp("tiny-lm"))


@pytest.fixture(scope="module")
def mlm(tiny):
    return LanguageModel(str(tiny / "mlm"))


@pytest.fixture(scope="module", params=["torch", "onnx"])
def causal(tiny, request):
    if request.param == "onnx":
        LanguageModel(str(tiny / "causal"), engine="onnx")  # the first run exports it and keeps its head
    lm = LanguageModel(str(tiny / "causal"), engine=request.param)
    assert (lm._onnx is not None) == (request.param == "onnx")
    assert (lm._hf is None) == (request.param == "onnx")  # the second needs no torch
    return lm


def softmax_at(lm: LanguageModel, ids: list[int], position: int) -> np.ndarray:
    with torch.no_grad():
        logits = lm.hf_model(input_ids=torch.tensor([ids])).logits[0, position]
    return torch.softmax(logits.double(), -1).numpy()


def test_fill_mask_is_the_first_piece_softmax(mlm):
    text = "We sat on the [MASK] of the river."
    result = mlm.predict(text, k=5)
    assert result.kind == "masked" and result.position == 4 and "first piece" in result.rule
    ids = mlm.tokenizer(text.replace("[MASK]", mlm.tokenizer.mask_token))["input_ids"]
    probs = softmax_at(mlm, ids, ids.index(mlm.tokenizer.mask_token_id))
    vocab = mlm.tokenizer.get_vocab()
    words = [p.word for p in result.predictions]
    assert len(words) == 5 and len(set(words)) == 5
    for p in result.predictions:
        assert p.pieces == (p.word,) and not p.word.startswith("##")
        assert p.probability == pytest.approx(probs[vocab[p.word]], rel=1e-9)
    # nothing better was left out: every whole-word piece outside the list is below the last one
    listed = {vocab[w] for w in words}
    tokens = mlm.tokenizer.convert_ids_to_tokens(list(range(len(probs))))
    others = [probs[i] for i, t in enumerate(tokens) if i not in listed and t.isalpha() and t.islower()]
    assert max(others) <= result.predictions[-1].probability
    assert [p.probability for p in result.predictions] == sorted((p.probability for p in result.predictions),
                                                                  reverse=True)


def test_fill_mask_needs_exactly_one_mask(mlm):
    with pytest.raises(InputError, match="exactly one"):
        mlm.predict("no mask here")
    with pytest.raises(InputError, match="holds 2"):
        mlm.predict("[MASK] and [MASK]")


def test_a_model_without_head_says_what_to_use(tiny):
    with pytest.raises(NoLMHeadError, match="no masked-LM head .*smollm2"):
        LanguageModel(str(tiny / "headless"))


def whole_word_probability(lm: LanguageModel, context: str, added: str) -> float:
    """The causal rule computed directly: softmax along the word's pieces, times the mass of
    every piece that leaves the word as it is (checked piece by piece with tokenize)."""
    ids = lm.tokenizer(context)["input_ids"]
    pieces = lm.tokenizer(added, add_special_tokens=False)["input_ids"]
    prob = 1.0
    for j, piece in enumerate(pieces):
        prob *= softmax_at(lm, ids + pieces[:j], -1)[piece]
    after = softmax_at(lm, ids + pieces, -1)
    word = next_word(context, added)[1]
    special = set(lm.tokenizer.all_special_ids)
    end = 0.0
    for i in range(len(lm.tokenizer)):
        text = lm.tokenizer.decode(pieces + [i])[len(lm.tokenizer.decode(pieces)):]
        if i in special or next_word(context, added + text) == ("complete", word):
            end += after[i]
    return prob * end


def test_next_word_is_the_product_along_the_pieces_times_the_end(causal):
    context = "I deposited money at the"
    result = causal.predict(context, k=4, max_expansions=48)
    assert result.kind == "causal" and result.position == 5
    assert len(result.predictions) == 4
    for p in result.predictions:
        added = "".join(p.pieces)
        assert next_word(context, added) == ("open", p.word)
        # (paths go through the model in padded batches: float32 rounding differs in the 7th digit)
        assert p.probability == pytest.approx(whole_word_probability(causal, context, added), rel=1e-5)
    assert [p.probability for p in result.predictions] == sorted((p.probability for p in result.predictions),
                                                                  reverse=True)


def test_logit_lens_last_layer_is_the_models_own_distribution(causal):
    text = "We sat on the river bank and watched"
    probs = causal.lens_probabilities(text)  # (layers + 1, vocab)
    assert probs.shape == (4, len(causal.tokenizer))
    ids = causal.tokenizer(text)["input_ids"]
    # the lens unembeds only the row it reads: a float32 product over one row rounds in the
    # 7th digit unlike one over the whole sequence, so the model's numbers to float32 precision
    np.testing.assert_allclose(probs[-1], softmax_at(causal, ids, -1), rtol=1e-5, atol=1e-12)
    assert not np.allclose(probs[1], probs[-1])  # an earlier layer reads something else
    np.testing.assert_allclose(probs.sum(-1), 1.0)
    # the lens at an earlier word reads only the text up to it
    early = causal.lens_probabilities(text, position=3)
    np.testing.assert_allclose(early, causal.lens_probabilities("We sat on the"), atol=1e-12)


def test_logit_lens_tracks_a_word_layer_by_layer(causal):
    text = "I deposited money at the"
    best = next(p for p in causal.predict(text, k=5).predictions if p.word.isalpha())
    lens = causal.lens(text, track=[best.word], k=3)
    assert [layer.layer for layer in lens.layers] == [0, 1, 2, 3] and lens.word == "the"
    last = lens.layers[-1]
    assert last.tracked[0].probability == pytest.approx(best.probability, rel=1e-5)
    probs = causal.lens_probabilities(text)
    assert last.tracked[0].pieces == best.pieces
    first = causal.tokenizer("".join(best.pieces), add_special_tokens=False)["input_ids"][0]
    for layer, row in zip(lens.layers, probs):
        assert layer.tracked[0].rank == 1 + int((row > row[first]).sum())
    as_json = lens.as_dict()
    assert as_json["layers"][0]["layer_name"] == "embedding output"
    assert set(as_json["layers"][1]["tracked"][0]) == {"word", "pieces", "probability", "rank"}


def test_the_lens_needs_a_causal_model(mlm):
    with pytest.raises(InputError, match="causal"):
        mlm.lens("We sat on the bank")
