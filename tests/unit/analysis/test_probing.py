"""Probes with control tasks: the rows and labels of the SemCor tasks (on a tiny SemCor in the
published NAF layout), the probe, the control task (Hewitt & Liang 2019) and the expected
layer (Tenney et al. 2019), each against a hand-worked case, then ``probe`` end to end."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import contextlens
from contextlens.analysis.probing import (
    ProbeResult,
    control_labels,
    expected_layer,
    probe,
    probe_accuracy,
    semcor_rows,
)
from contextlens.analysis.probing.tasks import (
    lemma_of,
    polysemous_lemmas,
    read_lexnames,
    supersense_of,
    task_labels,
)
from contextlens.datasets import DatasetMissingError, load_semcor
from contextlens.encoders.static import StaticEncoder
from contextlens.errors import DimensionError, FileFormatError, InputError, UnknownOptionError
from contextlens.vectors import EmbeddingTable
from tests.tiny_semcor import LEXNAMES, tiny_docs, write_semcor


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "cache"))
    return write_semcor(tmp_path / "data", tiny_docs())


# -- rows and labels ------------------------------------------------------------------------
def test_rows_follow_the_tsv_order_and_skip_what_is_not_one_word(data):
    rows = semcor_rows(load_semcor(data))
    train, test = rows["train"], rows["test"]
    # brown1/br-a01 before br-b02 (the archive lists b02 first), sentences in order; brownv is in no split
    assert [r.word for r in train] == ["bank", "ran", "fast", "old", "river", "walked", "red", "bank", "ran",
                                       "fast", "zyzzyva", "walked", "fast", "old", "bank", "walked", "bank",
                                       "red", "river"]
    assert ({r.doc for r in train} == {"brown1/br-a01", "brown1/br-b02"}
            and {r.doc for r in test} == {"brown2/br-e01"})
    # 'Dec.' (two words to the tokenizer) and 'river_bank' (a multiword expression) are no rows
    assert [r.word for r in test] == ["river", "bank", "ran", "red", "bank", "walked", "fast", "old", "bank",
                                      "ran"]
    assert test[0].tokens == ("the", "river", "bank", "ran") and test[0].index == 1
    assert [r.pos for r in test[:4]] == ["NOUN", "NOUN", "VERB", "ADJ"]
    limited = semcor_rows(load_semcor(data), train=4, test=2)
    assert [r.word for r in limited["train"]] == ["bank", "ran", "fast", "old"] and len(limited["test"]) == 2


def test_labels_of_each_task(data):
    rows = semcor_rows(load_semcor(data))["train"]
    lexnames = read_lexnames(data)
    assert lexnames == tuple(LEXNAMES) and len(lexnames) == 45
    assert task_labels("pos", rows)[:4] == ["NOUN", "VERB", "ADV", "ADJ"]
    assert task_labels("supersense", rows, lexnames)[:4] == ["noun.group", "verb.motion", "adv.all",
                                                             "adj.all"]
    assert task_labels("sense", rows)[:2] == ["bank%1:14:00::", "run%2:38:00::"]
    assert supersense_of("bank%1:17:01::", lexnames) == "noun.object"
    assert lemma_of(rows[0]) == "bank.NOUN" and lemma_of(rows[1]) == "run.VERB"
    test = semcor_rows(load_semcor(data))["test"]
    assert polysemous_lemmas(rows, test) == ["bank.NOUN"]  # run has one sense; bank two in each split
    with pytest.raises(InputError, match="'bank%1' is not a WordNet sense key"):
        supersense_of("bank%1", lexnames)
    with pytest.raises(UnknownOptionError, match="valid values: pos, supersense, sense"):
        task_labels("ner", rows)


def test_lexnames_errors(tmp_path):
    with pytest.raises(DatasetMissingError, match="wordnet/lexnames"):
        read_lexnames(tmp_path)
    (tmp_path / "wordnet").mkdir()
    (tmp_path / "wordnet" / "lexnames").write_text("00\tadj.all\t3\n02\tadv.all\t4\n")
    with pytest.raises(FileFormatError, match="not 0..1"):
        read_lexnames(tmp_path)
    (tmp_path / "wordnet" / "lexnames").write_text("adj.all\n")
    with pytest.raises(FileFormatError, match="line 1: expected 'number name"):
        read_lexnames(tmp_path)


# -- the probe, the control task, the expected layer ------------------------------------------
def test_probe_accuracy_by_hand():
    x = np.array([[0.0, 1], [0, 2], [3, 0], [4, 0]])
    assert probe_accuracy(x, ["a", "a", "b", "b"], np.array([[0.0, 5], [5, 0], [0, 3]]), ["a", "b", "b"]) == \
        pytest.approx(2 / 3)
    # one label among the train words: that label is the answer
    assert probe_accuracy(x, ["a"] * 4, x[:2], ["a", "b"]) == 0.5
    assert probe_accuracy(x, ["a", "a", "b", "b"], x, ["a", "a", "b", "b"], kind="mlp", seed=1) == 1.0
    with pytest.raises(DimensionError):
        probe_accuracy(x, ["a", "b"], x, ["a"] * 4)
    with pytest.raises(UnknownOptionError, match="linear, mlp"):
        probe_accuracy(x, ["a"] * 4, x, ["a"] * 4, kind="svm")


def test_the_probe_is_sklearn_logistic_regression_on_train_z_scores():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(60, 4)), rng.integers(0, 3, 60).astype(str)
    tx = rng.normal(size=(30, 4)) * 3 + 1
    ty = rng.integers(0, 3, 30).astype(str)
    mean, std = x.mean(0), x.std(0)
    model = LogisticRegression(C=1.0, max_iter=1000).fit((x - mean) / std, y)
    assert probe_accuracy(x, y, tx, ty) == pytest.approx(np.mean(model.predict((tx - mean) / std) == ty))


def test_control_labels_follow_the_train_distribution_one_label_per_type():
    labels = ["N"] * 600 + ["V"] * 300 + ["A"] * 100
    types = [f"w{i}" for i in range(5000)]
    drawn = control_labels(labels, types + types[:10], np.random.default_rng(7))
    assert len(drawn) == 5000  # each type once
    share = Counter(drawn.values())
    assert abs(share["N"] / 5000 - 0.6) < 0.03 and abs(share["A"] / 5000 - 0.1) < 0.02
    # the rule as documented: types sorted, classes sorted, one rng.choice call
    classes = ["A", "N", "V"]
    expected = np.random.default_rng(7).choice(3, size=5000, p=[0.1, 0.6, 0.3])
    assert [drawn[t] for t in sorted(types)] == [classes[k] for k in expected]
    assert control_labels(labels, types, np.random.default_rng(7)) == drawn


def test_expected_layer_by_hand():
    # gains 0.2 at 1 and 0.1 at 2: (1·0.2 + 2·0.1) / 0.3
    assert expected_layer([0, 1, 2], [0.5, 0.7, 0.8]) == pytest.approx(4 / 3)
    # a decline adds no gain: the best score so far counts (S = .5, .8, .8, .9)
    assert expected_layer([0, 1, 2, 3], [0.5, 0.8, 0.6, 0.9]) == pytest.approx((1 * 0.3 + 3 * 0.1) / 0.4)
    # layer numbers, not positions: a run over layers (0, 4, 6)
    assert expected_layer([0, 4, 6], [0.1, 0.3, 0.4]) == pytest.approx((4 * 0.2 + 6 * 0.1) / 0.3)
    assert expected_layer([0], [0.9]) is None  # a static table
    assert expected_layer([0, 1], [0.9, 0.8]) is None  # nothing beats the baseline
    with pytest.raises(DimensionError):
        expected_layer([0, 1], [0.5])


# -- probe() end to end -----------------------------------------------------------------------
POS_VECTORS = {"NOUN": [1.0, 0, 0, 0], "VERB": [0, 1.0, 0, 0], "ADJ": [0, 0, 1.0, 0], "ADV": [0, 0, 0, 1.0]}
TABLE_WORDS = {"bank": "NOUN", "river": "NOUN", "ran": "VERB", "walked": "VERB", "red": "ADJ", "old": "ADJ",
               "fast": "ADV", "the": "ADV", "a": "ADV", "an": "ADV", "by": "ADV", "of": "ADV"}


@pytest.fixture
def table():
    rng = np.random.default_rng(0)
    return EmbeddingTable(list(TABLE_WORDS), [np.array(POS_VECTORS[p]) + rng.normal(scale=0.05, size=4)
                                              for p in TABLE_WORDS.values()], name="pos-toy")


def test_probe_end_to_end_on_a_static_table(data, table):
    r = probe(StaticEncoder(table), "pos", data_dir=data)
    assert isinstance(r, ProbeResult) and r.model == "pos-toy" and r.task == "pos" and r.labels == 4
    (row,) = r.rows
    assert row.layer == 0 and row.accuracy == 1.0  # the table's rows are the part of speech, plus noise
    assert (row.n_train, row.n_test, row.missing) == (18, 10, 1)  # 'zyzzyva' is not in the table
    assert row.selectivity == pytest.approx(row.accuracy - row.control_accuracy)
    assert r.expected_layer is None  # one layer
    d = r.as_dict()
    assert list(d)[:4] == ["task", "model", "rows", "expected_layer"]
    assert list(d["rows"][0]) == ["layer", "accuracy", "control_accuracy", "selectivity", "n_train", "n_test",
                                  "missing"]
    assert contextlens.probe is probe


def test_probe_sense_and_supersense(data, table):
    sense = probe(StaticEncoder(table), "sense", data_dir=data)
    # one polysemous lemma (bank); a static table gives both senses one vector: the probe answers one sense
    assert sense.lemmas == 1 and sense.labels == 2 and sense.train_rows == 4 and sense.test_rows == 3
    assert sense.rows[0].accuracy in (pytest.approx(2 / 3), pytest.approx(1 / 3))
    supersense = probe(StaticEncoder(table), "supersense", data_dir=data, seed=3)
    assert supersense.rows[0].n_train == 18 and supersense.labels == 6


def test_probe_reads_the_cache_the_second_time(data, table, monkeypatch):
    from contextlens.analysis.probing import run

    calls = []
    real = run.cached_layers
    monkeypatch.setattr(run, "cached_layers", lambda cache, *a,
                        **k: (calls.append(cache), real(cache, *a, **k))[1])
    first = probe(StaticEncoder(table), "pos", data_dir=data)
    second = probe(StaticEncoder(table), "supersense", data_dir=data)
    # one cache per call, read for the train then the test words: one shard each
    assert (calls[0].misses, calls[0].hits) == (2, 0) and (calls[2].misses, calls[2].hits) == (0, 2)
    assert first.rows[0].n_train == second.rows[0].n_train


def test_probe_reports_its_steps_as_progress_records(data, table, caplog):
    """Encoding and probing are steps of the project's one progress protocol (contextlens.progress)."""
    import logging

    with caplog.at_level(logging.INFO, logger="contextlens.progress"):
        probe(StaticEncoder(table), "pos", data_dir=data)
    ends = {r.progress.what: r.progress for r in caplog.records
            if getattr(r, "progress", None) is not None and r.progress.state == "end"}
    assert ends["the vectors of the train words (pos-toy)"].done == 18 + 1  # zyzzyva counted, then dropped
    assert ends["the vectors of the test words (pos-toy)"].total == 10
    probing = ends["probing pos (linear probe and its control)"]
    assert (probing.done, probing.total, probing.unit) == (1, 1, "layers")
    assert "cached in" in ends["the vectors of the train words (pos-toy)"].once


def test_probe_errors(data, table, tmp_path):
    with pytest.raises(UnknownOptionError, match="valid values: pos, supersense, sense"):
        probe(StaticEncoder(table), "ner", data_dir=data)
    with pytest.raises(UnknownOptionError, match="linear, mlp"):
        probe(StaticEncoder(table), "pos", data_dir=data, kind="svm")
    with pytest.raises(DatasetMissingError, match="semcor3.0_naf.tar.gz"):
        probe(StaticEncoder(table), "pos", data_dir=tmp_path / "empty")
    french = EmbeddingTable(["banque", "rivière"], [[1.0, 0], [0, 1]], name="fr")
    with pytest.raises(InputError, match="has a vector for no word"):
        probe(StaticEncoder(french), "pos", data_dir=data)


def test_probe_is_a_top_level_verb_in_the_usual_order():
    import inspect

    params = list(inspect.signature(probe).parameters.values())
    assert [p.name for p in params[:2]] == ["encoder", "task"] and "probe" in contextlens.__all__
    assert all(p.kind is p.KEYWORD_ONLY for p in params[2:])
