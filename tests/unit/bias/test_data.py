"""Caliskan et al.'s ten tests as data, sets files with clear errors, the random-effects
combination checked against a direct computation."""

from __future__ import annotations

import json
import math

import pytest

from contextlens.bias import TESTS, get_test, random_effects, read_sets
from contextlens.errors import FileFormatError, InputError, TextDecodingError, UnknownOptionError


def test_the_ten_tests_have_the_papers_sizes_and_no_overlaps():
    assert [t.number for t in TESTS.values()] == list(range(1, 11))
    for t in TESTS.values():
        n_x, n_y, n_a, n_b = t.sets.sizes
        assert n_x == n_y == t.published.n, t.name  # Table 1's "N" is words per target set
        assert n_a == n_b, t.name
        for key in "XYAB":
            words = getattr(t.sets, key)
            assert len(set(words)) == len(words), (t.name, key)
        assert not set(t.sets.X) & set(t.sets.Y) and not set(t.sets.A) & set(t.sets.B), t.name


def test_the_lists_follow_the_supplement_not_later_copies():
    # tests 3-4 swap agony and prison for bomb and evil; 9 has short-term; 10 has Billy
    assert {"bomb", "evil"} <= set(get_test("weat3").sets.B) and "prison" not in get_test("weat4").sets.B
    assert "agony" in get_test("weat1").sets.B and "bomb" not in get_test("weat1").sets.B
    assert "short-term" in get_test("weat9").sets.A and "Billy" in get_test("weat10").sets.X
    # the italic names are out: Sara and Amber (test 3), Jay and Latonya (tests 4-5)
    assert not {"Sara", "Amber"} & set(get_test("weat3").sets.X)
    assert "Jay" not in get_test("weat5").sets.X and "Latonya" not in get_test("weat4").sets.Y


def test_published_figures_and_names():
    assert [(t.published.d, t.published.p) for t in TESTS.values()] == [
        (1.50, 1e-7), (1.53, 1e-7), (1.41, 1e-8), (1.50, 1e-4), (1.28, 1e-3),
        (1.81, 1e-3), (1.06, 0.018), (1.24, 1e-2), (1.38, 1e-2), (1.21, 1e-2)]
    assert get_test("weat7") is get_test("math_arts")
    with pytest.raises(UnknownOptionError, match="did you mean 'math_arts'"):
        get_test("maths_arts")


def _write(tmp_path, text, name="mine.json"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_sets_file_round_trip_and_default_name(tmp_path):
    body = {"X": ["he", "him"], "Y": ["she", "her"], "A": ["doctor"], "B": ["nurse"]}
    sets = read_sets(_write(tmp_path, json.dumps(body)))
    assert sets.name == "mine" and sets.as_dict() == body
    assert read_sets(_write(tmp_path, json.dumps({**body, "name": "jobs"}))).name == "jobs"


@pytest.mark.parametrize("body, message", [
    ('{"X": ["a"], "Y": ["b"],\n "A": ["c"] "B": ["d"]}',
     r"mine.json, line 2: not valid JSON: Expecting ','"),
    ('["X"]', "expected a JSON object"),
    ('{"X": ["a"], "Y": ["b"], "A": ["c"]}', 'missing "B"'),
    ('{"X": ["a"], "Y": ["b"], "A": ["c"], "B": ["d"], "C": []}', "unknown key 'C'"),
    ('{"X": "a", "Y": ["b"], "A": ["c"], "B": ["d"]}', '"X" must be a non-empty list of words'),
    ('{"X": ["a", 3], "Y": ["b"], "A": ["c"], "B": ["d"]}', r'"X"\[1\] is 3'),
    ('{"X": ["a", "a"], "Y": ["b"], "A": ["c"], "B": ["d"]}', "lists 'a' twice"),
    ('{"X": ["a"], "Y": ["a"], "A": ["c"], "B": ["d"]}', "'a' is in both X and Y"),
    ('{"X": ["a"], "Y": ["b"], "A": ["c"], "B": ["d"], "name": 7}', '"name" must be a non-empty string'),
])
def test_bad_sets_files_say_what_is_wrong(tmp_path, body, message):
    with pytest.raises(FileFormatError, match=message):
        read_sets(_write(tmp_path, body))


def test_missing_and_undecodable_sets_files(tmp_path):
    with pytest.raises(InputError, match="no such sets file"):
        read_sets(tmp_path / "nope.json")
    path = tmp_path / "latin.json"
    path.write_bytes('{"X": ["café"]}'.encode("latin-1"))
    with pytest.raises(TextDecodingError, match="latin.json: not valid UTF-8 at byte offset 11"):
        read_sets(path)


def _direct_dersimonian_laird(es, v):
    """The textbook recipe, written out with plain loops (DerSimonian & Laird 1986)."""
    w = [1 / x for x in v]
    fixed = sum(wi * e for wi, e in zip(w, es)) / sum(w)
    q = sum(wi * (e - fixed) ** 2 for wi, e in zip(w, es))
    df = len(es) - 1
    tau2 = max(0.0, (q - df) / (sum(w) - sum(wi * wi for wi in w) / sum(w)))
    w_star = [1 / (x + tau2) for x in v]
    ces = sum(wi * e for wi, e in zip(w_star, es)) / sum(w_star)
    return ces, math.sqrt(1 / sum(w_star)), q, tau2


def test_random_effects_matches_a_direct_computation():
    es = [0.9, 1.4, 0.2, 1.1, 0.65, 1.8]
    v = [0.04, 0.09, 0.05, 0.02, 0.12, 0.07]
    ces, se, q, tau2 = _direct_dersimonian_laird(es, v)
    r = random_effects(es, v)
    assert tau2 > 0  # these effects spread more than their variances explain
    assert (r.effect, r.se, r.q, r.tau2, r.df) == (
        pytest.approx(ces, rel=1e-12), pytest.approx(se, rel=1e-12), pytest.approx(q, rel=1e-12),
        pytest.approx(tau2, rel=1e-12), 5)
    assert r.ci == (pytest.approx(ces - 1.959963985 * se), pytest.approx(ces + 1.959963985 * se))
    assert r.i2 == pytest.approx((q - 5) / q)
    assert r.z == pytest.approx(ces / se)
    assert r.p_value == pytest.approx(0.5 * math.erfc(r.z / math.sqrt(2)))  # one-sided P(Z >= z)


def test_random_effects_without_heterogeneity_is_the_fixed_effect_mean():
    r = random_effects([1.0, 1.2, 0.8], [0.5, 0.5, 0.5])  # Q = 0.16 < df = 2
    assert r.tau2 == 0.0 and r.i2 == 0.0
    assert r.effect == pytest.approx(1.0) and r.se == pytest.approx(math.sqrt(0.5 / 3))


@pytest.mark.parametrize("es, v, message", [
    ([1.0], [0.1], "at least 2 samples"),
    ([1.0, 2.0], [0.1], "1-D of one length"),
    ([1.0, 2.0], [0.1, 0.0], "every variance must be > 0"),
    ([1.0, float("nan")], [0.1, 0.1], "finite"),
])
def test_random_effects_bad_input(es, v, message):
    with pytest.raises(InputError, match=message):
        random_effects(es, v)
