"""CoarseWSD-20's nearest-centroid classifier and the references table."""

import numpy as np

from contextlens.evaluation.coarsewsd import CentroidClassifier
from contextlens.evaluation.references import SOURCES, references


def test_centroid_classifier_uses_cosine():
    x = np.array([[1.0, 0.0], [3.0, 0.2], [0.0, 1.0], [0.1, 5.0]])
    y = np.array(["fruit", "fruit", "company", "company"])
    clf = CentroidClassifier().fit(x, y)
    assert clf.classes_.tolist() == ["company", "fruit"]
    # long vectors do not pull: only the direction counts
    assert clf.predict(np.array([[10.0, 9.0], [1.0, 1.2]])).tolist() == ["fruit", "company"]


def test_references_have_sources():
    assert {r.system: r.value for r in references("wic")}["BERT-large"] == 65.5
    assert all(r.source in SOURCES for r in references())
    assert {r.value for r in references("wsd") if r.system == "MFS" and r.split == "ALL"} == {65.2, 64.8}
