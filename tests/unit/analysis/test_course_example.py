"""The course text's 2-D example, every number computed by hand.

bank = (0.5, 0.5), loan = (0.9, 0.1), river = (0.1, 0.9) on (finance, nature); attention
with q = k = v = the rows, bank may attend to itself, scale 1/√2:

- raw scores: bank·bank = 0.25 + 0.25 = 0.5, bank·loan = 0.45 + 0.05 = 0.5,
  bank·river = 0.05 + 0.45 = 0.5; scaled: 0.5 / √2 = 0.353553;
- equal scores, so the softmax gives 0.5 and 0.5;
- bank in "bank loan" = 0.5·(0.5, 0.5) + 0.5·(0.9, 0.1) = (0.7, 0.3); in "bank river" (0.3, 0.7);
- cosine to finance (1, 0): 0.7 / √0.58 = 0.919145, to nature 0.3 / √0.58 = 0.393919
  (mirrored in the river sentence); static bank: 0.5 / √0.5 = 0.707107 to both;
- cosine between the two banks: (0.21 + 0.21) / 0.58 = 0.724138.

The table holds float32 rows (0.9 is 0.89999998), hence the 1e-6 tolerance.
"""

from __future__ import annotations

import math

import pytest

from contextlens.analysis.toy import COURSE_VECTORS, course_example

TOL = 1e-6


@pytest.fixture(scope="module")
def example():
    return course_example()


def test_the_vectors_are_the_course_texts():
    assert COURSE_VECTORS == {"bank": (0.5, 0.5), "loan": (0.9, 0.1), "river": (0.1, 0.9)}


def test_each_step_of_banks_weights(example):
    assert example.scale == pytest.approx(1 / math.sqrt(2), abs=1e-15)
    steps = {(s.sentence, s.key): s for s in example.steps}
    assert set(steps) == {("bank loan", "bank"), ("bank loan", "loan"), ("bank river", "bank"),
                          ("bank river", "river")}
    loan = steps["bank loan", "loan"]
    assert loan.q == pytest.approx((0.5, 0.5), abs=TOL) and loan.k == pytest.approx((0.9, 0.1), abs=TOL)
    assert loan.product == pytest.approx((0.45, 0.05), abs=TOL)
    river = steps["bank river", "river"]
    assert river.product == pytest.approx((0.05, 0.45), abs=TOL)
    for step in example.steps:
        assert step.query == "bank"
        assert step.raw == pytest.approx(0.5, abs=TOL)
        assert step.scaled == pytest.approx(0.353553, abs=TOL)
        assert step.weight == pytest.approx(0.5, abs=TOL)


def test_bank_in_one_sentence_and_the_other(example):
    one, other = example.comparison["sentences"]
    assert one["sentence"] == "bank loan" and other["sentence"] == "bank river"
    assert one["contextual"] == pytest.approx([0.7, 0.3], abs=TOL)
    assert other["contextual"] == pytest.approx([0.3, 0.7], abs=TOL)
    assert one["static_cosines"] == pytest.approx({"finance": 0.707107, "nature": 0.707107}, abs=TOL)
    assert one["cosines"] == pytest.approx({"finance": 0.919145, "nature": 0.393919}, abs=TOL)
    assert other["cosines"] == pytest.approx({"finance": 0.393919, "nature": 0.919145}, abs=TOL)
    assert [w["weight"] for w in one["weights"]] == pytest.approx([0.5, 0.5], abs=TOL)
    assert example.comparison["cosine"] == pytest.approx(0.724138, abs=TOL)


def test_it_serialises_for_the_lab(example):
    d = example.as_dict()
    assert d["vectors"]["loan"] == [0.9, 0.1]
    assert d["steps"][1]["key"] == "loan" and d["steps"][1]["scaled"] == pytest.approx(0.353553, abs=TOL)
