"""The senses of *bank* in the shipped corpora, as the README builds its index (minilm, last
layer, ``--words bank,spring --match lemma``): the river-side sense, 32 of the 326 usages
(a tenth), comes out as its own sense. Each usage's sense was labelled by hand in
``benchmarks/bank_senses.tsv``; with the previous defaults (average linkage on raw cosine, k
by silhouette) 322 usages, river and money alike, made one cluster and 4 "banking on" the other."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tests.missing import missing, need, need_model

need("lancedb")
need("torch")
need("transformers")

from contextlens.analysis.senses import SenseClusterer  # noqa: E402
from contextlens.index import build_index, induce_senses, open_store  # noqa: E402

pytestmark = pytest.mark.data
LABELS = Path(__file__).resolve().parents[2] / "benchmarks" / "bank_senses.tsv"


def gold_senses() -> dict[tuple[str, int, int], str]:
    """``(file name, sentence number, start) → sense`` of every usage of bank."""
    out = {}
    for line in LABELS.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            name, number, start, _form, sense, _sentence = line.split("\t", 5)
            out[(name, int(number), int(start))] = sense
    return out


@pytest.fixture(scope="module")
def index(tmp_path_factory, data_dir):
    need_model("minilm")
    from contextlens.datasets.wordnet import wordnet

    corpora = data_dir / "corpora"
    if not (corpora / "brown_plain.txt").is_file() or not (data_dir / "wordnet").is_dir():
        missing(f"{corpora} and {data_dir / 'wordnet'} are needed")
    db = tmp_path_factory.mktemp("bank") / "usages.lance"
    build_index(corpora, db, ["bank", "spring"], match="lemma", wordnet=wordnet(data_dir), model="minilm")
    return db


def river_cluster(clusters: list[list[str]]) -> tuple[int, int]:
    """(river usages, all usages) of the cluster holding the most river usages."""
    best = max(clusters, key=lambda c: c.count("river"))
    return best.count("river"), len(best)


def test_the_river_bank_is_its_own_sense(index):
    gold = gold_senses()
    out = induce_senses(index, "bank")
    assert out["n_usages"] == len(gold) == 326 and out["n_clustered"] == 326
    clusters = [[gold[(os.path.basename(m["doc"]), m["sentence_no"], m["start"])] for m in s["members"]]
                for s in out["senses"]]
    river, size = river_cluster(clusters)
    assert river >= 20 and river / size > 0.5, [Counter(c).most_common() for c in clusters]  # 22 of 37 here
    assert Counter(clusters[0]).most_common(1)[0][0] == "finance"  # the largest sense is the money one


def test_the_previous_defaults_swallow_it(index):
    store = open_store(index)
    rows, x = store.vectors_of("bank")
    gold = gold_senses()
    senses = np.array([gold[(os.path.basename(r["doc"]), r["sentence_no"], r["start"])] for r in rows])
    old = SenseClusterer(method="average", centre=False).fit(x).labels_
    river, size = river_cluster([senses[old == c].tolist() for c in set(old.tolist())])
    assert size > 300 and river / size < 0.1  # river and money in one cluster
