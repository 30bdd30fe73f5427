"""CoarseWSD-20: per ambiguous noun, classify the sense class of each usage.

Two classifiers on the target's vector at one layer, fitted per word: 1-nearest-neighbour
over the class centroids (cosine; :class:`CentroidClassifier`) and a logistic-regression
probe. ``split="test"`` trains on train and scores test; ``split="cv"`` is stratified
5-fold cross-validation on train (the test files are held out in the shared data).
Scores per word and overall (the mean over words): accuracy and macro-F1.

>>> clf = CentroidClassifier().fit(np.array([[1.0, 0], [0.9, 0.1], [0, 1.0]]), np.array(["a", "a", "b"]))
>>> clf.predict(np.array([[0.2, 0.8], [1.0, 0.2]])).tolist()
['b', 'a']
"""

from __future__ import annotations

import logging

import numpy as np

from ..encoders.base import layer_number
from ..errors import EmptyInputError, InputError, check_choice, check_int

__all__ = ["CentroidClassifier", "run_coarsewsd", "COARSE_EVAL_SPLITS"]

log = logging.getLogger(__name__)
COARSE_EVAL_SPLITS = ("cv", "test")


class CentroidClassifier:
    """Nearest class centroid by cosine (centroids of unit-normalised vectors)."""

    def __init__(self):
        pass

    def fit(self, x: np.ndarray, y: np.ndarray) -> CentroidClassifier:
        x = _unit(np.asarray(x, dtype=np.float64))
        y = np.asarray(y)
        self.classes_ = np.unique(y)
        self.centroids_ = _unit(np.stack([x[y == c].mean(axis=0) for c in self.classes_]))  # (classes, dim)
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        sims = _unit(np.asarray(x, dtype=np.float64)) @ self.centroids_.T  # (n, classes)
        return self.classes_[np.argmax(sims, axis=1)]


def _unit(x: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(n > 0, n, 1.0)


def _scores(y_true, y_pred) -> dict:
    from sklearn.metrics import f1_score

    return {"accuracy": float(np.mean(np.asarray(y_true) == np.asarray(y_pred))),
            "macro_f1": float(f1_score(y_true, y_pred, average="macro", zero_division=0))}


def _probe(seed: int):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000, random_state=seed))


def _subsample(items: list, limit: int | None, seed: int, floor: int = 5) -> list:
    """At most about ``limit`` items, stratified by label (all when None or fewer); every
    class keeps at least ``floor`` items (or all it has), so cross-validation can run."""
    if limit is None or len(items) <= limit:
        return items
    from sklearn.model_selection import train_test_split

    idx = np.arange(len(items))
    labels = [it.label for it in items]
    try:
        keep, rest = train_test_split(idx, train_size=limit, stratify=labels, random_state=seed)
    except ValueError:  # a class too small to stratify
        keep, rest = train_test_split(idx, train_size=limit, random_state=seed)
    keep = list(keep)
    for label in set(labels):
        have = sum(1 for i in keep if labels[i] == label)
        extra = [i for i in rest if labels[i] == label][: max(0, floor - have)]
        keep += extra
    return [items[i] for i in sorted(keep)]


def _word_vectors(cache, root, word: str, split: str, layer, progress, limit=None, seed=0):
    from .. import datasets

    items = _subsample(datasets.load_coarsewsd(root, word, split), limit, seed)
    if not items:
        raise EmptyInputError(f"CoarseWSD-20 {word}/{split} is empty")
    if any(it.label is None for it in items):
        raise InputError(f"coarsewsd20/{word}/{split}.gold.txt is missing: no labels to score against")
    vec = cache.targets(f"coarsewsd-{word}-{split}", [(it.tokens, it.index) for it in items],
                        layers=[layer], progress=progress)[:, 0]  # (n, dim)
    labels = np.array([str(it.label) for it in items])
    ok = ~np.isnan(vec).any(axis=1)
    return vec[ok], labels[ok], int((~ok).sum())


def run_coarsewsd(cache, root, *, split: str = "cv", layer: int = -1, words=None, folds: int = 5,
                  seed: int = 0, max_per_word: int | None = None, progress=None) -> list[dict]:
    """Rows ``{split, method, layer, word, accuracy, macro_f1, n, oov}`` per word and
    ``word="ALL"`` (mean over words) for ``1nn-centroid`` and ``logreg``.
    ``max_per_word`` caps each word's train items (a stratified sample: a quicker figure)."""
    from sklearn.model_selection import StratifiedKFold

    from .. import datasets

    check_choice("CoarseWSD-20 split", split, COARSE_EVAL_SPLITS)
    check_int("folds", folds, low=2, high=100, hint="cross-validation folds")
    check_int("seed", seed, low=0, high=2**32 - 1)
    if max_per_word is not None:
        check_int("max_per_word", max_per_word, low=10, hint="train items per word (at least 5 per class)")
    words = list(words) if words else datasets.coarsewsd_words(root)
    if not words:
        raise EmptyInputError("no CoarseWSD-20 word folder found")
    layer = layer_number(cache.layer_ids, layer)  # -1 → the last layer's number
    rows = []
    for word in words:
        x, y, oov = _word_vectors(cache, root, word, "train", layer, progress, max_per_word, seed)
        preds = {"1nn-centroid": np.empty(len(y), dtype=object), "logreg": np.empty(len(y), dtype=object)}
        if split == "test":
            xt, yt, oov = _word_vectors(cache, root, word, "test", layer, progress)
            truth = yt
            preds = {"1nn-centroid": CentroidClassifier().fit(x, y).predict(xt),
                     "logreg": _probe(seed).fit(x, y).predict(xt)}
        else:
            truth = y
            smallest = min(np.unique(y, return_counts=True)[1])
            k = min(folds, smallest)
            if k < 2:
                raise InputError(f"CoarseWSD-20 {word}: a class has {smallest} example(s); cross-validation "
                                 "needs 2")
            for tr, te in StratifiedKFold(k, shuffle=True, random_state=seed).split(x, y):
                preds["1nn-centroid"][te] = CentroidClassifier().fit(x[tr], y[tr]).predict(x[te])
                if len(np.unique(y[tr])) > 1:
                    preds["logreg"][te] = _probe(seed).fit(x[tr], y[tr]).predict(x[te])
                else:
                    preds["logreg"][te] = y[tr][0]
        for method, pred in preds.items():
            rows.append({"split": split, "method": method, "layer": layer, "word": word, "n": len(truth),
                         "oov": oov, **_scores(truth, pred.astype(str))})
    for method in ("1nn-centroid", "logreg"):
        mine = [r for r in rows if r["method"] == method]
        rows.append({"split": split, "method": method, "layer": layer, "word": "ALL",
                     "n": sum(r["n"] for r in mine), "oov": sum(r["oov"] for r in mine),
                     "accuracy": float(np.mean([r["accuracy"] for r in mine])),
                     "macro_f1": float(np.mean([r["macro_f1"] for r in mine]))})
    return rows
