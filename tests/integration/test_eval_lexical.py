"""Similarity and analogies on the shared data with GloVe 6B-50d: equal to gensim's evaluators."""

import pytest

from contextlens import datasets
from contextlens.encoders.registry import resolve_vectors
from contextlens.evaluation.lexical import analogy_accuracy, similarity_spearman


@pytest.fixture(scope="module")
def glove():
    table = resolve_vectors("glove-6b-50d")
    return table, table.to_gensim()


@pytest.mark.parametrize("name", ["ws353", "rg65", "men-dev"])
def test_similarity_equals_gensim(glove, data_dir, tmp_path, name):
    table, kv = glove
    path = data_dir / datasets.SIMILARITY_FILES[name]
    ours = similarity_spearman(table, datasets.load_similarity(path))
    _, (rho, _), oov = kv.evaluate_word_pairs(str(datasets.gensim_pairs_file(path, tmp_path)))
    assert ours["spearman"] == pytest.approx(rho, abs=1e-12)
    assert oov == pytest.approx(100 * ours["oov"] / (ours["n"] + ours["oov"]))
    if name == "ws353":
        assert round(ours["spearman"], 3) == 0.503  # the shared data README's figure


def test_analogy_sections_equal_gensim(glove, data_dir, tmp_path):
    table, kv = glove
    sections = datasets.load_analogies(data_dir / datasets.ANALOGY_FILES["google"])
    small = [sections[0], sections[9]]  # capital-common-countries, gram4-superlative
    path = tmp_path / "questions.txt"
    path.write_text("".join(f": {s.name}\n" + "".join(" ".join(q) + "\n" for q in s.questions)
                            for s in small))
    score, g_sections = kv.evaluate_word_analogies(str(path), restrict_vocab=20000)
    ours = analogy_accuracy(table, small, restrict=20000)
    assert ours["accuracy"] == pytest.approx(score, abs=1e-12)
    assert ours["correct"] == len(g_sections[-1]["correct"])


@pytest.mark.slow
def test_google_analogies_readme_figure(glove, data_dir):
    sections = datasets.load_analogies(data_dir / datasets.ANALOGY_FILES["google"])
    add = analogy_accuracy(glove[0], sections, method="3cosadd", restrict=100000)
    assert round(100 * add["accuracy"], 1) == 47.0
    assert add["n"] + add["oov"] == 19544
