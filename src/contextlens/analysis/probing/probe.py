"""Probes, control tasks and the expected layer: small pure functions over arrays.

- :func:`probe_accuracy`: a classifier fitted on a layer's vectors of the train words,
  scored on the test words. The features are z-scored with the train words' mean and
  standard deviation (scikit-learn's ``StandardScaler``), then fed to
  ``LogisticRegression(C=1.0, max_iter=1000)`` (``kind="linear"``) or to a one-hidden-layer
  ``MLPClassifier`` (``kind="mlp"``: :data:`MLP_HIDDEN` ReLU units, Adam, L2 1e-4, seeded).
  The fit runs on one BLAS thread: its matrices are small, and on a shared CPU the threads
  wait for each other (GloVe's 30,000 train words, 4 labels: 1.0 s on one thread, 85 s on
  two, with the load at 12 on 2 cores).
- :func:`control_labels`: the control task of Hewitt & Liang (2019, "Designing and
  Interpreting Probes with Control Tasks", EMNLP): every word *type* gets one label, drawn
  once from the empirical distribution of the task's labels over the train words; each word
  then carries its type's label. A probe that scores well on it memorises word identity,
  so **selectivity** = task accuracy − control accuracy says how much of the accuracy the
  representation, not the probe, supplies.
- :func:`expected_layer`: Tenney, Das & Pavlick (2019, "BERT Rediscovers the Classical NLP
  Pipeline", ACL), §3: with Δ(ℓ) = S(ℓ) − S(ℓ−1) the gain in score when layer ℓ joins
  layers 0..ℓ−1, ``E[ℓ] = Σ_ℓ ℓ·Δ(ℓ) / Σ_ℓ Δ(ℓ)`` over ℓ = 1..L, the centre of gravity of the
  gains. Their S(ℓ) is a probe over a learned mix of layers 0..ℓ (cumulative scoring), which
  never loses by adding a layer; here each layer has its own probe, and S(ℓ) is the best
  score among layers 0..ℓ, what a mix that puts all its weight on the best layer so far
  reaches (a lower bound of theirs), so Δ(ℓ) ≥ 0 too. The raw differences of per-layer
  scores are not used: a decline at the top makes their sum nearly 0 and the ratio
  meaningless (minilm, pos: 0.896 at layer 0, 0.948 at 3, 0.900 at 6 give −44.9).

>>> round(expected_layer([0, 1, 2], [0.5, 0.7, 0.8]), 4)  # (1·0.2 + 2·0.1) / 0.3
1.3333
>>> expected_layer([0, 1, 2], [0.5, 0.8, 0.7])  # S = 0.5, 0.8, 0.8: all the gain is at layer 1
1.0
>>> import numpy as np
>>> labels = control_labels(["N", "N", "N", "V"], ["the", "a", "bank"], np.random.default_rng(0))
>>> sorted(labels), set(labels.values()) <= {"N", "V"}
(['a', 'bank', 'the'], True)
"""

from __future__ import annotations

import logging
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from ...errors import DimensionError, EmptyInputError, check_choice

__all__ = ["PROBE_KINDS", "MLP_HIDDEN", "probe_accuracy", "control_labels", "expected_layer"]

log = logging.getLogger(__name__)
PROBE_KINDS = ("linear", "mlp")
MLP_HIDDEN = 256


def _classifier(kind: str, seed: int):
    if kind == "linear":
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(C=1.0, max_iter=1000)
    from sklearn.neural_network import MLPClassifier

    return MLPClassifier(hidden_layer_sizes=(MLP_HIDDEN,), alpha=1e-4, max_iter=200, random_state=seed)


def probe_accuracy(train_x: np.ndarray, train_y: Sequence, test_x: np.ndarray, test_y: Sequence, *,
                   kind: str = "linear", seed: int = 0) -> float:
    """Accuracy on ``(test_x, test_y)`` of a probe fitted on ``(train_x, train_y)``
    (``(n, dim)`` features; see the module docstring). Train words of a single label give a
    probe that answers that label.

    >>> x = np.array([[0.0, 1], [0, 2], [3, 0], [4, 0]])
    >>> probe_accuracy(x, ["a", "a", "b", "b"], np.array([[0.0, 5], [5, 0]]), ["a", "b"])
    1.0
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.preprocessing import StandardScaler
    from threadpoolctl import threadpool_limits

    check_choice("probe", kind, PROBE_KINDS)
    # own float64 copies, z-scored in place below: the features of a layer are held once
    train_x, test_x = np.array(train_x, dtype=np.float64), np.array(test_x, dtype=np.float64)
    train_y, test_y = np.asarray(train_y), np.asarray(test_y)
    if train_x.ndim != 2 or test_x.ndim != 2 or train_x.shape[1] != test_x.shape[1] \
            or len(train_x) != len(train_y) or len(test_x) != len(test_y):
        raise DimensionError(f"need (n, dim) features with one label each, got train {train_x.shape} with "
                             f"{len(train_y)} labels and test {test_x.shape} with {len(test_y)}")
    if len(train_x) == 0 or len(test_x) == 0:
        raise EmptyInputError("a probe needs at least one train word and one test word")
    classes = np.unique(train_y)
    if len(classes) == 1:
        return float(np.mean(test_y == classes[0]))
    scaler = StandardScaler(copy=False).fit(train_x)
    model = _classifier(kind, seed)
    with warnings.catch_warnings(record=True) as caught, threadpool_limits(limits=1):
        warnings.simplefilter("always", ConvergenceWarning)
        model.fit(scaler.transform(train_x), train_y)
        predicted = model.predict(scaler.transform(test_x))
    if any(issubclass(w.category, ConvergenceWarning) for w in caught):
        log.warning("the %s probe did not converge on %d words (%d labels); its accuracy is a lower bound",
                    kind, len(train_x), len(classes))
    return float(np.mean(predicted == test_y))


def control_labels(train_labels: Sequence[str], types: Iterable[str],
                   rng: np.random.Generator) -> dict[str, str]:
    """``{type: label}`` for each distinct type of ``types``, taken in sorted order, each a
    label drawn by ``rng.choice`` from the labels of ``train_labels`` (sorted) with their
    frequencies in it as probabilities: one draw per type, all in one call."""
    counts = Counter(train_labels)
    if not counts:
        raise EmptyInputError("the control task needs train labels to draw from")
    classes = sorted(counts)
    p = np.array([counts[c] for c in classes], dtype=np.float64) / sum(counts.values())
    order = sorted(set(types))
    draws = rng.choice(len(classes), size=len(order), p=p)
    return {t: classes[d] for t, d in zip(order, draws)}


def expected_layer(layers: Sequence[int], scores: Sequence[float]) -> float | None:
    """Tenney et al.'s expected layer of per-layer ``scores`` at layer numbers ``layers``
    (ascending; the first is the baseline ℓ = 0, usually the static row), with S(ℓ) the best
    score up to ℓ (see the module docstring). None when there is no layer above the baseline
    or no layer beats it (nothing to locate)."""
    layers = np.asarray(layers, dtype=np.float64)
    scores = np.asarray(scores, dtype=np.float64)
    if layers.shape != scores.shape or layers.ndim != 1:
        raise DimensionError(f"need one score per layer, got {layers.shape} layers and {scores.shape} scores")
    if len(layers) < 2:
        return None
    gains = np.diff(np.maximum.accumulate(scores))  # Δ(ℓ) = S(ℓ) − S(ℓ−1) >= 0
    total = gains.sum()
    if not np.isfinite(total) or total <= 0:
        return None
    return float((layers[1:] * gains).sum() / total)
