"""WiC: the threshold classifier and pair cosines, hand-computed."""

import numpy as np
import pytest

from contextlens.errors import EmptyInputError
from contextlens.evaluation.wic import ThresholdClassifier, pair_cosines, wic_features


def test_threshold_maximises_train_accuracy():
    scores = np.array([0.1, 0.3, 0.35, 0.5, 0.8, 0.9])
    labels = np.array([0, 0, 1, 0, 1, 1])
    clf = ThresholdClassifier().fit(scores, labels)
    # thresholds 0.2 → 4/6, 0.325 → 5/6, 0.425 → 4/6, 0.65 → 5/6: the first best wins
    assert clf.threshold_ == pytest.approx(0.325)
    assert clf.train_accuracy_ == pytest.approx(5 / 6)
    assert clf.predict(np.array([0.3, 0.33, np.nan])).tolist() == [False, True, False]


def test_threshold_all_one_class_and_nan():
    clf = ThresholdClassifier().fit(np.array([0.2, np.nan, 0.4]), np.array([1, 0, 1]))
    assert clf.train_accuracy_ == 1.0 and clf.threshold_ < 0.2
    with pytest.raises(EmptyInputError):
        ThresholdClassifier().fit(np.array([np.nan]), np.array([1]))


def test_pair_cosines_and_features():
    u = np.array([[[1.0, 0.0], [0.0, 0.0]]])
    v = np.array([[[0.0, 2.0], [1.0, 1.0]]])
    cos = pair_cosines(u, v)
    assert cos[0, 0] == 0.0 and np.isnan(cos[0, 1])
    x = wic_features(cos, u, v, 0, "full", fill=np.array([0.0, 0.5]))
    assert x.tolist() == [[0.0, 0.5, 1.0, 2.0, 0.0, 0.0]]
