"""WiC (Word-in-Context): does the target word mean the same in two sentences?

Features are the cosines between the target's vectors in the two sentences, one per
layer. Two classifiers, fitted on train (optionally train + dev):

- :class:`ThresholdClassifier`: "same" when one layer's cosine >= a threshold, the
  threshold that maximises train accuracy;
- a logistic regression over the cosines of every layer (``features="cosines"``), plus
  ``|u − v|`` and ``u ⊙ v`` of the best layer (``features="full"``), or plus the senses
  LMMS picks for the two uses (``features="senses"``, :func:`sense_features`; Loureiro &
  Jorge's WiC entry, SemDeep-5 2019: ``wic/train_wic.py`` of github.com/danlou/LMMS).
  ``features="senses"`` also reports ``senses-agree``, LMMS's simplest WiC answer, fitted
  on nothing: "same" when both uses get the same sense (``wic/eval_wic_compare.py``).

A pair whose target has no vector (OOV in a static table) gets cosine NaN: the threshold
classifier answers "different" for it and the regression sees the train mean; the rows
count them under ``oov``.

>>> clf = ThresholdClassifier().fit(np.array([0.1, 0.4, 0.6, 0.9]), np.array([0, 0, 1, 1]))
>>> clf.threshold_, clf.predict(np.array([0.5, 0.55])).tolist()
(0.5, [True, True])
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from ..encoders.base import layer_position
from ..errors import EmptyInputError, InputError, check_choice, check_int

__all__ = ["ThresholdClassifier", "pair_cosines", "wic_features", "run_wic", "WIC_FEATURES", "sense_features",
           "SENSE_FEATURES"]

log = logging.getLogger(__name__)
WIC_FEATURES = ("cosines", "full", "senses")
#: the columns of :func:`sense_features`
SENSE_FEATURES = ("same_sense", "sense_cosine", "match1", "match2")
SENSE_STEPS = ("propagation", "glosses")  # LMMS-2048, the sense embeddings of LMMS's WiC entry
_WIC_POS = {"N": "NOUN", "V": "VERB"}


def pair_cosines(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``(n, layers)`` cosines of ``(n, layers, dim)`` pairs (NaN where a vector is missing or zero).

    >>> pair_cosines(np.array([[[1.0, 0.0]]]), np.array([[[1.0, 1.0]]])).round(4).tolist()
    [[0.7071]]
    """
    num = (u * v).sum(axis=-1)
    den = np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


class ThresholdClassifier:
    """Predict True when the score is >= ``threshold_``, fitted to maximise accuracy.

    Candidate thresholds are the midpoints between consecutive distinct train scores (and
    one below the lowest, one above the highest); ties go to the lowest threshold.
    NaN scores are predicted False.
    """

    def __init__(self):
        pass

    def fit(self, scores: np.ndarray, labels: np.ndarray) -> ThresholdClassifier:
        s = np.asarray(scores, dtype=np.float64)
        y = np.asarray(labels, dtype=bool)
        ok = ~np.isnan(s)
        s, y = s[ok], y[ok]
        if s.size == 0:
            raise EmptyInputError("no training score to fit a threshold on (all are missing)")
        values = np.unique(s)
        cands = np.concatenate([[values[0] - 1.0], (values[:-1] + values[1:]) / 2, [values[-1] + 1.0]])
        order = np.argsort(s)
        ss, yy = s[order], y[order]
        # predicting True for scores >= t: correct = negatives below t + positives at or above t
        below = np.searchsorted(ss, cands, side="left")
        neg_below = np.concatenate([[0], np.cumsum(~yy)])[below]
        pos_above = yy.sum() - np.concatenate([[0], np.cumsum(yy)])[below]
        acc = (neg_below + pos_above) / len(ss)
        best = int(np.argmax(acc))
        self.threshold_ = float(cands[best])
        self.train_accuracy_ = float(acc[best])
        return self

    def predict(self, scores: np.ndarray) -> np.ndarray:
        s = np.asarray(scores, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            return np.where(np.isnan(s), False, s >= self.threshold_)


def wic_features(cos: np.ndarray, u: np.ndarray, v: np.ndarray, layer: int, features: str,
                 fill: np.ndarray) -> np.ndarray:
    """``(n, f)``: every layer's cosine (NaN → ``fill``), plus ``|u − v|`` and ``u ⊙ v``
    of ``layer`` for ``features="full"``."""
    check_choice("features", features, WIC_FEATURES)
    x = np.where(np.isnan(cos), fill[None, :], cos)
    if features == "full":
        a, b = np.nan_to_num(u[:, layer]), np.nan_to_num(v[:, layer])
        x = np.hstack([x, np.abs(a - b), a * b])
    return x


def _vectors(cache, root, split: str, progress) -> tuple:
    from .. import datasets

    items = datasets.load_wic(root, split)
    if not items:
        raise EmptyInputError(f"the WiC {split} split is empty")
    targets = [(it.tokens1, it.index1) for it in items] + [(it.tokens2, it.index2) for it in items]
    vec = cache.targets(f"wic-{split}", targets, progress=progress)  # (2n, layers, dim)
    n = len(items)
    labels = [it.label for it in items]
    return vec[:n], vec[n:], labels, items


def sense_features(parts, x1: np.ndarray, x2: np.ndarray, candidates: Sequence[Sequence[str]]) -> np.ndarray:
    """``(n, 4)``: per pair, the columns of :data:`SENSE_FEATURES`, from the LMMS sense
    embeddings ``parts`` (:class:`~contextlens.evaluation.lmms.SenseParts`, propagation and
    glosses) and the two uses' vectors ``x1``, ``x2`` ``(n, dim)`` at the parts' view:
    whether the senses picked for the two uses (1-NN over the word's ``candidates``) are
    the same, the cosine between those two senses' embeddings, and each use's cosine with
    its own sense (``train_wic.py``'s s2, s3, s4). A pair without candidates is NaN.

    >>> from contextlens.evaluation.lmms import SenseParts
    >>> p = SenseParts(["run%1", "run%2"], np.arange(2), np.array([[1.0, 0.0], [0.0, 1.0]]), np.zeros(2, int),
    ...                np.ones(2, bool), gloss=np.array([[1.0, 0.0], [0.0, 1.0]]))
    >>> sense_features(p, np.array([[1.0, 0.0]]), np.array([[0.0, 2.0]]),
    ...                [["run%1", "run%2"]]).round(6).tolist()
    [[0.0, 0.0, 1.0, 1.0]]
    """
    from .lmms import concat_cosines, rank_senses

    out = np.full((len(x1), len(SENSE_FEATURES)), np.nan)
    for i, cands in enumerate(candidates):
        r1 = rank_senses(parts, x1[i], cands, SENSE_STEPS)
        r2 = rank_senses(parts, x2[i], cands, SENSE_STEPS)
        if not r1 or not r2:
            continue
        (k1, m1), (k2, m2) = r1[0], r2[0]
        a, b = parts.index[k1], parts.index[k2]
        sides = parts.parts(SENSE_STEPS)
        out[i] = (float(k1 == k2), float(concat_cosines([p[a] for p in sides], [p[[b]] for p in sides])[0]),
                  m1, m2)
    return out


def _wic_candidates(wn, items) -> list[list[str]]:
    """Each pair's candidate senses: the WordNet senses of its word (or its base form) as its POS."""
    from .. import datasets

    out, memo = [], {}
    for it in items:
        key = (it.word, it.pos)
        if key not in memo:
            pos = _WIC_POS.get(it.pos)
            keys = []
            if pos is not None:
                name = it.word if wn.lemmas(it.word, pos=datasets.WORDNET_POS[pos]) else wn.morphy(
                    it.word.lower(), datasets.WORDNET_POS[pos])
                keys = datasets.candidate_keys(wn, name, pos) if name else []
            memo[key] = keys
        out.append(memo[key])
    return out


def run_wic(
    cache, root, *, split: str = "dev", layer: int | None = None, features: str = "cosines",
    train_on: Sequence[str] = ("train",), progress=None, seed: int = 0, sense_view=-1,
    semcor_limit: int | None = None,
) -> list[dict]:
    """Rows ``{split, method, layer, accuracy, n, oov}``: the threshold classifier at
    ``layer`` (default: the layer with the best train accuracy) and the logistic
    regression, on the train split(s) and on ``split``; plus the per-layer sweep
    (``method="threshold-sweep"``: threshold fitted on train, accuracy on ``split``).
    ``progress(done, total)`` while encoding, ``progress(stage, done, total)`` for the
    stages of the sense embeddings. With ``features="senses"``, the senses come from LMMS sense
    embeddings (propagation and glosses) at layer ``sense_view`` (a layer number, or ``"last4"``;
    SemCor's first ``semcor_limit`` sentences only, when given), and the rows of ``senses-agree``
    are added."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    check_choice("features", features, WIC_FEATURES)
    check_int("seed", seed, low=0, high=2**32 - 1)
    if split in train_on:
        raise InputError(f"the evaluation split {split!r} is also a training split; evaluate on another one")
    data = {s: _vectors(cache, root, s, progress) for s in (*train_on, split)}
    extra = _senses(cache, root, data, sense_view, semcor_limit, progress) if features == "senses" else None
    if any(lab is None for lab in data[split][2]):
        raise InputError(f"wic/{split} has no gold labels ({split}.gold.txt is missing); "
                         "evaluate on dev, or add the gold file")
    cos = {s: pair_cosines(u, v) for s, (u, v, _, _) in data.items()}  # (n, layers)
    y = {s: np.array(lab, dtype=bool) for s, (_, _, lab, _) in data.items()}
    train_x = np.vstack([cos[s] for s in train_on])
    train_y = np.concatenate([y[s] for s in train_on])
    ids = cache.layer_ids  # the layer number of each column
    fits = [ThresholdClassifier().fit(train_x[:, k], train_y) for k in range(len(ids))]
    best = int(np.argmax([f.train_accuracy_ for f in fits])) if layer is None else layer_position(ids, layer)
    train_name = "+".join(train_on)
    rows = []
    for k, clf in enumerate(fits):
        acc = float((clf.predict(cos[split][:, k]) == y[split]).mean())
        rows.append({"split": split, "method": "threshold-sweep", "layer": ids[k], "accuracy": acc,
                     "n": len(y[split]), "oov": int(np.isnan(cos[split][:, k]).sum()),
                     "threshold": clf.threshold_, "train_accuracy": clf.train_accuracy_})
    if extra is not None:  # the sense features join the cosines, NaN filled like them
        cos = {s: np.hstack([cos[s], extra[s]]) for s in cos}
        train_x = np.vstack([cos[s] for s in train_on])
    fill = np.nanmean(train_x, axis=0)
    fill = np.where(np.isnan(fill), 0.0, fill)
    u_tr = np.vstack([data[s][0] for s in train_on])
    v_tr = np.vstack([data[s][1] for s in train_on])
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000, random_state=seed))
    model.fit(wic_features(train_x, u_tr, v_tr, best, features, fill), train_y)
    for name, x, u, v, labels in ((train_name, train_x, u_tr, v_tr, train_y),
                                  (split, cos[split], data[split][0], data[split][1], y[split])):
        oov = int(np.isnan(x[:, best]).sum())
        rows.append({"split": name, "method": "threshold", "layer": ids[best], "n": len(labels), "oov": oov,
                     "accuracy": float((fits[best].predict(x[:, best]) == labels).mean()),
                     "threshold": fits[best].threshold_})
        pred = model.predict(wic_features(x, u, v, best, features, fill))
        rows.append({"split": name, "method": f"logreg-{features}", "layer": None, "n": len(labels),
                     "oov": oov, "accuracy": float((pred == labels).mean())})
        if extra is not None:
            same = x[:, len(ids)]  # SENSE_FEATURES[0]; NaN (no candidate sense): "different"
            rows.append({"split": name, "method": "senses-agree", "layer": extra["layer"], "n": len(labels),
                         "oov": int(np.isnan(same).sum()),
                         "accuracy": float(((same == 1.0) == labels).mean())})
    return rows


def _senses(cache, root, data: dict, sense_view, semcor_limit, progress) -> dict:
    """``{split: (n, 4) sense features}`` and ``layer`` (the number of the view used)."""
    from .. import datasets
    from .lmms import sense_parts
    from .wsd import parse_view, view_vectors

    view = parse_view(sense_view)
    view = view if view == "last4" else layer_position(cache.layer_ids, view)
    wn = datasets.wordnet(root)
    cands = {s: _wic_candidates(wn, items) for s, (_, _, _, items) in data.items()}
    union = list(dict.fromkeys(k for c in cands.values() for keys in c for k in keys))
    if not union:
        raise InputError("no WiC word has a WordNet sense; check the WordNet folder of the data directory")
    parts = sense_parts(cache, root, union, [view], steps=SENSE_STEPS, semcor_limit=semcor_limit,
                        progress=progress)[view]
    out = {s: sense_features(parts, view_vectors(u, view), view_vectors(v, view), cands[s])
           for s, (u, v, _, _) in data.items()}
    return {**out, "layer": view if view == "last4" else cache.layer_ids[view]}
