"""Similarity and analogies: hand-computed examples and equality with gensim's evaluators."""

import numpy as np
import pytest

from contextlens.errors import EmptyInputError, InputError
from contextlens.evaluation.lexical import (
    analogy_accuracy,
    ok_vocab,
    similarity_spearman,
    spearman,
    template_item,
)
from contextlens.vectors import EmbeddingTable


def test_spearman_hand_computed():
    assert spearman([1, 2, 3, 4], [10, 20, 40, 30]) == pytest.approx(0.8)   # 1 - 6·2/(4·15)
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    with pytest.raises(EmptyInputError):
        spearman([1], [2])


def test_ok_vocab_first_case_variant_wins():
    assert ok_vocab(["Paris", "paris", "x"]) == {"PARIS": 0, "X": 2}
    assert ok_vocab(["a", "b", "c"], restrict=2) == {"A": 0, "B": 1}


def test_template_item():
    assert template_item("bank") == (("bank",), 0)
    with pytest.raises(InputError):
        template_item("bank", "no slot")


@pytest.fixture
def random_table():
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(60)] + ["W3", "Paris", "paris"]
    return EmbeddingTable(words, rng.normal(size=(len(words), 8)), name="random")


def test_similarity_equals_gensim(random_table, tmp_path):
    rng = np.random.default_rng(1)
    lines = ["Word 1\tWord 2\tHuman (mean)"]  # a header: gensim skips it as invalid
    pairs = []
    for _ in range(40):
        a, b = (f"w{i}" for i in rng.integers(0, 60, 2))
        pairs.append((a.upper() if rng.random() < 0.3 else a, b, float(rng.integers(0, 100)) / 10))
    pairs += [("w1", "unknown", 3.0), ("PARIS", "w2", 4.0), ("w59", "w3", 1.5)]
    lines += [f"{a}\t{b}\t{s}" for a, b, s in pairs]
    path = tmp_path / "pairs.txt"
    path.write_text("\n".join(lines) + "\n")
    kv = random_table.to_gensim()
    for restrict in (300000, 50):
        _, (g_rho, _), g_oov = kv.evaluate_word_pairs(str(path), restrict_vocab=restrict)
        ours = similarity_spearman(random_table, pairs, restrict=restrict)
        assert ours["spearman"] == pytest.approx(g_rho, abs=1e-12)
        assert ours["oov"] / (ours["n"] + ours["oov"]) * 100 == pytest.approx(g_oov)
    assert similarity_spearman(random_table, pairs)["oov"] == 1  # only "unknown": PARIS is Paris


def test_analogy_equals_gensim(random_table, tmp_path):
    rng = np.random.default_rng(2)
    sections, text = [], []
    for name in ("family", "capital"):
        qs = [tuple(f"w{i}" for i in rng.integers(0, 60, 4)) for _ in range(50)]
        qs += [("w1", "w2", "zzz", "w4"), ("Paris", "w3", "w5", "W3")]
        sections.append((name, qs))
        text += [f": {name}"] + [" ".join(q) for q in qs]
    path = tmp_path / "questions.txt"
    path.write_text("\n".join(text) + "\n")
    kv = random_table.to_gensim()
    for restrict in (300000, 40):
        g_score, g_sections = kv.evaluate_word_analogies(str(path), restrict_vocab=restrict)
        ours = analogy_accuracy(random_table, sections, restrict=restrict)
        assert ours["accuracy"] == pytest.approx(g_score, abs=1e-12)
        assert ours["correct"] == len(g_sections[-1]["correct"])
        for g in g_sections[:-1]:
            assert ours["sections"][g["section"]]["correct"] == len(g["correct"])
            assert ours["sections"][g["section"]]["n"] == len(g["correct"]) + len(g["incorrect"])


def test_cosmul_equals_gensim_most_similar_cosmul(random_table):
    from gensim.models import KeyedVectors

    rng = np.random.default_rng(3)
    qs = [tuple(f"w{i}" for i in rng.choice(40, 4, replace=False)) for _ in range(200)]
    kv = KeyedVectors(random_table.dim)  # gensim's cosmul ignores restrict_vocab: give it the first 40 rows
    kv.add_vectors(random_table.keys[:40], np.asarray(random_table.vectors[:40]))
    for a, b, c, d in qs:
        want = kv.most_similar_cosmul(positive=[b, c], negative=[a], topn=1)[0][0] == d
        got = analogy_accuracy(random_table, [("s", [(a, b, c, d)])], method="3cosmul", restrict=40,
                               epsilon=1e-6)["correct"]
        assert got == int(want), (a, b, c, d)
    assert sum(kv.most_similar_cosmul(positive=[b, c], negative=[a], topn=1)[0][0] == d for a, b, c,
               d in qs) > 0


def test_analogy_hand_computed_and_cosmul():
    t = EmbeddingTable(["man", "king", "woman", "queen", "apple"],
                       [[1, 0, 0], [1, 1, 0], [0, 0, 1], [0, 1, 1], [1, -1, 1]])
    secs = [("s", [("man", "king", "woman", "queen"), ("king", "man", "queen", "woman"),
                   ("man", "king", "woman", "pear")])]
    for method in ("3cosadd", "3cosmul"):
        r = analogy_accuracy(t, secs, method=method)
        assert (r["accuracy"], r["n"], r["oov"]) == (1.0, 2, 1)
    with pytest.raises(EmptyInputError):
        analogy_accuracy(t, [("s", [("x", "y", "z", "w")])])
