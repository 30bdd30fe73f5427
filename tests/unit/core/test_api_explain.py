"""The explanations inside a layer are top-level verbs with the one argument order: the encoder,
the text(s), the word, then keyword-only options."""

from __future__ import annotations

import inspect

import pytest

import contextlens
from contextlens.analysis import faithfulness, patching, sublayers

VERBS = {
    "sublayers": (sublayers, ["text1", "text2", "word"]),
    "attributions": (faithfulness, ["text", "word"]),
    "patch": (patching, ["recipient", "donor", "word"]),
}


@pytest.mark.parametrize("name", VERBS)
def test_each_is_a_top_level_verb_in_the_one_order(name):
    module, positional = VERBS[name]
    assert getattr(contextlens, name) is getattr(module, name) and name in contextlens.__all__
    params = list(inspect.signature(getattr(module, name)).parameters.values())
    assert params[0].name == "encoder"
    assert [p.name for p in params[1:] if p.kind is p.POSITIONAL_OR_KEYWORD] == positional
    assert all(p.kind is p.KEYWORD_ONLY for p in params[1 + len(positional):])


def test_one_string_where_two_texts_belong_is_an_error():
    from contextlens.analysis.toy import COURSE_VECTORS, toy_table
    from contextlens.encoders.mixing import SelfAttention
    from contextlens.errors import InputError

    encoder = SelfAttention(toy_table(COURSE_VECTORS))
    with pytest.raises(InputError, match="give the word to follow"):
        contextlens.sublayers(encoder, "bank loan", "bank")
    with pytest.raises(InputError, match="one or two texts"):
        contextlens.sublayers(encoder, ["bank loan", "bank river"], word="bank")
