"""One numbering: a message that names an item of the list the user gave (a sentence, a pair, a
text) names it by its index in that list, from 0, as the JSON, the lab and the views do (issue 20
item 10: the library said "sentence 2 ('…') lacks 'bank'" of the list's [1]).

Each case gives a list, the call that fails on one of its items and that item's index; the
message must name it so, and quote it when it quotes text.
"""

from __future__ import annotations

import re

import pytest

from contextlens.analysis.explore import explore
from contextlens.analysis.layers import layer_divergence, usage_divergence
from contextlens.analysis.senses import senses
from contextlens.analysis.usages import check_pairs, usage_labels
from contextlens.cli.options import sentence_pairs
from contextlens.encoders.mixing import NeighbourAverage
from contextlens.encoders.static import StaticEncoder
from contextlens.errors import ContextLensError, numbered
from contextlens.vectors import EmbeddingTable

TABLE = EmbeddingTable(["bank", "money", "river"], [[1, 1], [1, 0], [0, 1]], name="toy")
NAMED = re.compile(r"\b(sentence|pair|text) (\d+)(?: \('(.*?)'\))?")
LONG = " ".join(["bank river money"] * 2000)  # 6,000 words: over the pairwise weights' bound
THIRD_MISSING = ["money bank", "river bank", "money river", "bank money"]
SECOND_TWICE = ["money bank", "bank river bank", "river bank"]

CASES = {  # name: (the list given, the call, the index of the item at fault)
    "explore, a sentence lacking the word": (
        THIRD_MISSING, lambda s: explore(StaticEncoder(TABLE), s, "bank"), 2),
    "senses, a sentence lacking the word": (
        THIRD_MISSING, lambda s: senses(StaticEncoder(TABLE), s, "bank"), 2),
    "usage_divergence, the word twice": (SECOND_TWICE,
                                         lambda s: usage_divergence(StaticEncoder(TABLE), s, "bank"), 1),
    "explore, the word twice": (SECOND_TWICE, lambda s: explore(StaticEncoder(TABLE), s, "bank"), 1),
    "encode, an empty sentence": (["money bank", "river", " "], lambda s: StaticEncoder(TABLE).encode(s), 2),
    "encode, a number for a sentence": (["money bank", 7], lambda s: StaticEncoder(TABLE).encode(s), 1),
    "encode, a text too long to weigh": (["money bank", "river bank", LONG],
                                         lambda s: NeighbourAverage(TABLE).encode(s), 2),
    "layer_divergence, a pair lacking the word": (
        [("money bank", "bank river"), ("bank", "river money")],
        lambda p: layer_divergence(StaticEncoder(TABLE), p, "bank"), 1),
    "layer_divergence, a pair of three": (
        [("money bank", "bank river"), ("bank", "bank", "bank")],
        lambda p: layer_divergence(StaticEncoder(TABLE), p, "bank"), 1),
    "check_pairs, a string for a pair": ([("money bank", "bank river"), "bank river"], check_pairs, 1),
    "layers on the command line, a pair of one": (
        ["a bank", "the bank", "--pair", "one bank"], sentence_pairs, 1),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_message_numbers_the_item_at_fault_by_its_index_in_the_list(case):
    given, call, at_fault = CASES[case]
    with pytest.raises(ContextLensError) as err:
        call(given)
    named = NAMED.findall(str(err.value))
    assert named, str(err.value)
    what, index, quoted = named[0]
    assert int(index) == at_fault, str(err.value)
    if what == "sentence" or what == "text":
        item = given[at_fault]
        assert not quoted or item.startswith(quoted.rstrip("…")), (quoted, item)
    if what == "pair" and "sentence '" in str(err.value):  # the pair's sentence lacking the word
        assert re.search(r"sentence '(.*?)'", str(err.value)).group(1) in given[at_fault]


def test_the_one_phrasing_of_a_numbered_item():
    assert numbered("sentence", 0, "A bank lent it.") == "sentence 0 ('A bank lent it.')"
    assert numbered("sentence", 12, "x" * 80) == f"sentence 12 ('{'x' * 59}…')"
    assert numbered("pair", 3) == "pair 3"


def test_usage_labels_name_the_sentence_and_the_occurrence_only_where_needed():
    assert usage_labels([0, 2, 3]) == ["S0", "S2", "S3"]
    assert usage_labels([1, 1, 4], [0, 2, 0]) == ["S1 #0", "S1 #2", "S4"]
    with pytest.raises(ContextLensError, match="2 occurrences for 3 usages"):
        usage_labels([1, 1, 4], [0, 2])
