"""Sentence vectors equal the model's own sentence-transformers pipeline (mean pooling over
the pieces, special tokens included, then normalisation), loaded from the packaged folder."""

from __future__ import annotations

import numpy as np
import pytest

from tests.missing import need, need_model

need("torch")
need("transformers")

from contextlens.encoders import models  # noqa: E402
from contextlens.encoders.transformer import TransformerEncoder  # noqa: E402

SENTENCES = ["The bank approved my loan.", "We sat on the bank of the river.",
             "A well-known café didn't sell 1,200 cups in 2024 — naïve Zoë's antidisestablishmentarianism.",
             "Hi"]


def check(name: str) -> None:
    st = need("sentence_transformers")
    need_model(name)
    reference = st.SentenceTransformer(str(models.resolve(name)), device="cpu").encode(SENTENCES)  # (4, dim)
    encoder = TransformerEncoder(name, layers=-1, attention=False)
    ours = np.stack([e.sentence_vector("mean") for e in encoder.encode(SENTENCES)])
    np.testing.assert_allclose(ours, reference, atol=1e-5)
    # the same with only some words kept: the sentence is still every piece
    kept = encoder.encode(SENTENCES, targets={"bank"})
    np.testing.assert_allclose(kept[0].sentence_vector("mean"), reference[0], atol=1e-5)


def test_minilm_sentence_vectors_are_sentence_transformers():
    check("minilm")


@pytest.mark.slow
def test_mpnet_sentence_vectors_are_sentence_transformers():
    check("mpnet")
