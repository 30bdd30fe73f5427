"""SEAT's sentence vectors are the packaged models' own: mean pooling over every piece, as
their sentence-transformers pipeline computes it (loaded from the packaged folder)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.missing import need, need_model

need("torch")
st = need("sentence_transformers")

from contextlens.bias import get_test, seat_sentences  # noqa: E402
from contextlens.encoders import models  # noqa: E402
from contextlens.encoders.registry import make_encoder  # noqa: E402

SENTENCES = [*seat_sentences(get_test("career_family").sets).X[:6], "The bank approved my loan.",
             "A well-known café didn't sell 1,200 cups — naïve Zoë's antidisestablishmentarianism."]


def check(name: str) -> None:
    need_model(name)
    reference = st.SentenceTransformer(str(models.resolve(name)), device="cpu").encode(
        SENTENCES, normalize_embeddings=True)  # (texts, dim)
    ours = make_encoder(model=name, attention=False).sentence_vectors(SENTENCES)[-1]  # last layer
    np.testing.assert_allclose(ours / np.linalg.norm(ours, axis=1, keepdims=True), reference, atol=1e-5)


def test_minilm_sentence_vectors_are_sentence_transformers():
    check("minilm")


@pytest.mark.slow
def test_mpnet_sentence_vectors_are_sentence_transformers():
    check("mpnet")
