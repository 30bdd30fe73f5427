"""Contextual neighbours on minilm: *bank* by the river lists river and nature words, *bank*
approving a loan lists money words (the issue's acceptance test). The reference is 1,000
common words plus the two fixed lists, each encoded alone, so the test stays quick; the
command's default is 20,000 words."""

from __future__ import annotations

import pytest

from tests.missing import need, need_model

need("torch")
need("transformers")

from contextlens.analysis.neighbours import contextual_neighbours, reference_words  # noqa: E402
from contextlens.encoders.transformer import TransformerEncoder  # noqa: E402

NATURE = {"river", "rivers", "riverbank", "shore", "shores", "water", "waters", "stream", "streams", "lake",
          "creek",
          "tributary", "valley", "delta", "canal", "boat", "fishing", "sand", "grass", "trees", "flood",
          "flowing"}
FINANCE = {"loan", "loans", "lender", "lenders", "lending", "mortgage", "credit", "debt", "money", "cash",
           "finance",
           "financial", "teller", "account", "deposit", "borrow", "borrowing", "borrower", "citibank",
           "interest"}


@pytest.fixture(scope="module")
def neighbours(tmp_path_factory):
    need_model("minilm")
    encoder = TransformerEncoder("minilm", attention=False)
    words = reference_words(1000) + sorted(NATURE | FINANCE)
    root = tmp_path_factory.mktemp("reference")
    return lambda text: [n["word"] for n in contextual_neighbours(encoder, text, "bank", words=words,
                                                                  root=root)[
        "neighbours"]]


def test_bank_by_the_river_and_bank_with_a_loan(neighbours):
    river = neighbours("We sat on the bank of the river.")
    loan = neighbours("The bank approved my loan.")
    assert len(NATURE.intersection(river)) > len(NATURE.intersection(loan)), (river, loan)
    assert len(FINANCE.intersection(loan)) > len(FINANCE.intersection(river)), (river, loan)
    # not asked: that the river sentence has more nature than finance words. It does not (4 and 4:
    # river, riverbank, rivers, tributary; teller, account, deposit, citibank): minilm's *bank*
    # leans to money even by a river.
