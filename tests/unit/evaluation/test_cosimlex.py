"""CoSimLex: the loader on a fixture in the published layout, the task's two scores
(computed by hand and against scipy), and the no-change baseline of a static table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr

from contextlens.datasets import DatasetMissingError, load_cosimlex, marked_spans
from contextlens.encoders.encoding_cache import EncodingCache
from contextlens.encoders.static import StaticEncoder
from contextlens.errors import FileFormatError
from contextlens.evaluation.cosimlex import (
    cosimlex_items,
    cosimlex_scores,
    harmonic_correlation,
    run_cosimlex,
    uncentered_pearson,
)
from contextlens.vectors import EmbeddingTable

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
HEADER = "word1\tword2\tcontext1\tcontext2\tsim1\tsim2"


def test_fixture_in_published_layout():
    items = load_cosimlex(FIXTURES)  # root/cosimlex/cosimlex_en.csv
    assert len(items) == 8
    ran = items[3]
    assert (ran.word1, ran.word2) == ("run", "walk")
    assert ran.context1[slice(*ran.spans1[0])] == "ran" and ran.context1[slice(*ran.spans1[1])] == "walked"
    assert "<strong>" not in ran.context1 and (ran.sim1, ran.sim2) == (6.8, 2.1)
    absent = items[2]  # word2 marked first in context 1
    assert absent.context1[slice(*absent.spans1[0])] == "absence"
    assert absent.spans1[0][0] > absent.spans1[1][0]


def write(tmp_path, *rows) -> Path:
    path = tmp_path / "cosimlex" / "cosimlex_en.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_words_found_without_form_columns(tmp_path):
    write(tmp_path, HEADER, "die\tlive\tto <strong>live</strong> is not <strong>dying</strong>\t"
                            "<strong>die</strong> or <strong>live</strong>\t2.0\t3.5")
    (it,) = load_cosimlex(tmp_path)
    assert it.context1[slice(*it.spans1[0])] == "dying" and it.context1[slice(*it.spans1[1])] == "live"


@pytest.mark.parametrize(("rows", "match"), [
    ((HEADER.replace("\tsim2", ""), "a\tb\tx\ty\t1"), "lacks sim2"),
    ((HEADER, "bank\tshore\tthe <strong>bank</strong>\t<strong>bank</strong> <strong>shore</strong>\t1\t2"),
     "line 2: context1 must mark 'bank' and 'shore'"),
    ((HEADER, "bank\tshore\t<strong>bank</strong> <strong>shore</strong>\t<strong>bank</strong> "
              "<strong>shore</strong>\thigh\t2"), "line 2: sim1 and sim2 must be numbers"),
])
def test_bad_files(tmp_path, rows, match):
    write(tmp_path, *rows)
    with pytest.raises(FileFormatError, match=match):
        load_cosimlex(tmp_path)


def test_missing_file_says_where_it_goes(tmp_path):
    with pytest.raises(DatasetMissingError, match="cosimlex/cosimlex_en.csv.*download them by hand"):
        load_cosimlex(tmp_path)


def test_marked_spans():
    text, spans = marked_spans("a <strong>b c</strong> d <strong>e</strong>")
    assert text == "a b c d e" and [text[a:b] for a, b in spans] == ["b c", "e"]


def test_scores_by_hand_and_by_scipy():
    x, y = np.array([0.5, -1.0, 0.25]), np.array([2.0, -3.0, 1.0])
    assert uncentered_pearson(x, y) == pytest.approx((1 + 3 + 0.25) / np.sqrt(1.3125 * 14))
    assert np.isnan(uncentered_pearson([0.0, 0.0, 0.0], y))
    pred, gold = np.array([0.1, 0.5, 0.3, 0.9, 0.7]), np.array([1.0, 6.0, 2.0, 9.0, 8.0])
    p, s = pearsonr(pred, gold)[0], spearmanr(pred, gold)[0]
    assert harmonic_correlation(pred, gold) == pytest.approx(2 * p * s / (p + s))
    assert np.isnan(harmonic_correlation(pred, -gold))  # negative: the organisers' scorer fails too
    p1, p2, g1, g2 = [0.2, 0.8], [0.6, 0.1], [1.0, 9.0], [5.0, 2.0]
    s1, s2 = cosimlex_scores(p1, p2, g1, g2)
    assert s1 == pytest.approx(uncentered_pearson([0.4, -0.7], [4.0, -7.0]))
    assert s2 == pytest.approx(harmonic_correlation([0.2, 0.6, 0.8, 0.1], [1.0, 5.0, 9.0, 2.0]))


def test_targets_keep_the_marked_word_whole():
    (it,) = [i for i in load_cosimlex(FIXTURES) if i.word1 == "run"]
    targets = cosimlex_items([it])
    assert [t[0][t[1]] for t in targets] == ["ran", "walked", "run", "walk"]


def test_static_table_is_the_no_change_baseline(tmp_path):
    items = load_cosimlex(FIXTURES)
    words = sorted({w for it in items for w in (it.word1, it.word2)})
    rng = np.random.default_rng(1)  # a seed whose similarities correlate positively with the ratings
    vectors = {w: rng.normal(size=8) for w in words}
    vectors["ran"], vectors["walked"] = vectors["run"], vectors["walk"]  # one row per lemma, as a lemma table
    table = EmbeddingTable(list(vectors), np.stack(list(vectors.values())))
    rows = run_cosimlex(EncodingCache(StaticEncoder(table), root=tmp_path), FIXTURES)
    assert len(rows) == 1 and rows[0]["method"] == "cosine" and rows[0]["layer"] == 0 and rows[0]["n"] == 8
    assert rows[0]["subtask1_uncentered_pearson"] is None  # the same vectors in both contexts: no change
    cos = [table.similarity(it.word1, it.word2) for it in items]
    gold = np.column_stack([[it.sim1 for it in items], [it.sim2 for it in items]]).ravel()
    want = harmonic_correlation(np.repeat(cos, 2), gold)  # the context-free similarity, in both contexts
    assert want > 0 and rows[0]["subtask2_harmonic_mean"] == pytest.approx(want, abs=1e-6)


def test_fetch_says_cosimlex_is_downloaded_by_hand(tmp_path):
    from contextlens.evaluation.fetch import DatasetFetchError, fetch

    with pytest.raises(DatasetFetchError,
                       match=r"knows no download of cosimlex: download them by hand .*11356/1308"):
        fetch("cosimlex", tmp_path)
    assert not any(tmp_path.iterdir())  # nothing written
