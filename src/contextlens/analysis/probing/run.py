"""``probe(encoder, task)``: what every layer of an encoder lets a probe read, against a control task.

For each layer the encoder gives (a static table: layer 0 only), one probe is fitted on
the train words' vectors and scored on the test words (:mod:`.tasks` defines the words and
labels, :mod:`.probe` the probe, the control task and the expected layer); a second,
identical probe learns the control task. A word the encoder has no vector for (a static
table lacking the lower-cased word) is dropped from both and counted in ``missing``.

Vectors come from the evaluation cache (:func:`~contextlens.analysis.layerstack.cached_layers`,
task ``probes-semcor``): the three tasks share the same words, so a second task, a rerun or
another probe never encodes again. Encoding and probing are progress steps
(:mod:`contextlens.progress`): the command line draws them, ``-v`` logs them.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...bounds import check_stack
from ...encoders.base import Encoder
from ...errors import InputError, check_choice, check_int
from ...progress import step
from ..layerstack import cached_layers
from .probe import PROBE_KINDS, control_labels, expected_layer, probe_accuracy
from .tasks import (
    PROBE_TASKS,
    TEST_ROWS,
    TRAIN_ROWS,
    ProbeRow,
    lemma_of,
    polysemous_lemmas,
    read_lexnames,
    semcor_rows,
    task_labels,
)

__all__ = ["probe", "ProbeLayer", "ProbeResult", "CACHE_TASK", "model_name"]

log = logging.getLogger(__name__)
CACHE_TASK = "probes-semcor"
#: bytes a number of one layer's words the probe makes beside the stack: the float64
#: features, z-scored in place (:func:`.probe.probe_accuracy`), and while the scaler is
#: fitted its float64 deviations and its NaN mask (scikit-learn's ``_incremental_mean_and_var``)
PROBE_WORK = 18


@dataclass(frozen=True)
class ProbeLayer:
    """One layer's probe: accuracy on the task and on its control, selectivity (their
    difference), the words used (``n_train``, ``n_test``) and the words without a vector
    (``missing``, train and test together)."""

    layer: int
    accuracy: float
    control_accuracy: float
    selectivity: float
    n_train: int
    n_test: int
    missing: int

    def as_dict(self) -> dict[str, Any]:
        return {"layer": self.layer, "accuracy": self.accuracy, "control_accuracy": self.control_accuracy,
                "selectivity": self.selectivity, "n_train": self.n_train, "n_test": self.n_test,
                "missing": self.missing}


@dataclass(frozen=True)
class ProbeResult:
    """A probe of every layer: ``rows`` (one :class:`ProbeLayer` per layer, bottom up) and
    the ``expected_layer`` of the task accuracy (Tenney et al. 2019; None for a single layer).
    ``labels``: how many labels the task has among the train words (``sense``: summed over
    its ``lemmas``); ``train_rows`` / ``test_rows``: the task's words before any is dropped."""

    task: str
    model: str
    rows: tuple[ProbeLayer, ...]
    expected_layer: float | None
    probe: str
    seed: int
    labels: int
    train_rows: int
    test_rows: int
    lemmas: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """``{"task", "model", "rows": [{layer, accuracy, control_accuracy, selectivity,
        n_train, n_test, missing}], "expected_layer"}``, then how it was made."""
        return {"task": self.task, "model": self.model, "rows": [r.as_dict() for r in self.rows],
                "expected_layer": self.expected_layer, "probe": self.probe, "seed": self.seed,
                "labels": self.labels, "train_rows": self.train_rows,
                "test_rows": self.test_rows, "lemmas": self.lemmas}


def model_name(encoder: Encoder) -> str:
    """What results call an encoder: its model (``minilm``; a random-weights twin says so in
    its name), else its table (``glove-6b-50d``) and, when it mixes the table's rows, how
    (``attention over glove-6b-50d``: two encoders over one table are not one model), else
    its kind.

    >>> from contextlens.analysis.toy import COURSE_VECTORS, toy_table
    >>> from contextlens.encoders.mixing import SelfAttention
    >>> from contextlens.encoders.static import StaticEncoder
    >>> table = toy_table(COURSE_VECTORS)
    >>> model_name(StaticEncoder(table)), model_name(SelfAttention(table))
    ('toy plane', 'attention over toy plane')
    """
    params = encoder.params()
    if params.get("model"):
        return str(params["model"])
    if params.get("vectors"):
        kind = params.get("encoder", encoder.name)
        return str(params["vectors"]) if kind == "static" else f"{kind} over {params['vectors']}"
    return str(encoder.name)


def _split_probe(x_train, x_test, y_train, y_test, c_train, c_test, kind,
                 seed) -> tuple[float, float, int, int]:
    """Task and control accuracy of one layer over the words that have a vector."""
    keep_train = ~np.isnan(x_train).any(axis=1)
    keep_test = ~np.isnan(x_test).any(axis=1)
    xtr = x_train if keep_train.all() else x_train[keep_train]  # a copy only when words are dropped
    xte = x_test if keep_test.all() else x_test[keep_test]
    if len(xtr) == 0 or len(xte) == 0:
        raise InputError("the encoder has a vector for none of the train or test words; check the vectors "
                         "(language, case)")
    acc = probe_accuracy(xtr, y_train[keep_train], xte, y_test[keep_test], kind=kind, seed=seed)
    control = probe_accuracy(xtr, c_train[keep_train], xte, c_test[keep_test], kind=kind, seed=seed)
    return acc, control, int(keep_train.sum()), int(keep_test.sum())


def _sense_probe(x_train, x_test, groups, kind, seed) -> tuple[float, float, int, int, int]:
    """Macro accuracy (task, control) over the lemmas: each lemma's own probe on its words."""
    accs, controls, n_train, n_test = [], [], 0, 0
    for g in groups:
        xtr, xte = x_train[g["train"]], x_test[g["test"]]
        keep_train, keep_test = ~np.isnan(xtr).any(axis=1), ~np.isnan(xte).any(axis=1)
        if not keep_train.any() or not keep_test.any():
            continue  # the encoder knows none of this lemma's train (or test) words
        xtr, xte = xtr[keep_train], xte[keep_test]
        accs.append(probe_accuracy(xtr, g["y_train"][keep_train], xte, g["y_test"][keep_test], kind=kind,
                                   seed=seed))
        controls.append(probe_accuracy(xtr, g["c_train"][keep_train], xte, g["c_test"][keep_test], kind=kind,
                                       seed=seed))
        n_train += int(keep_train.sum())
        n_test += int(keep_test.sum())
    if not accs:
        raise InputError("the encoder has a vector for no lemma's words; check the vectors (language, case)")
    return float(np.mean(accs)), float(np.mean(controls)), n_train, n_test, len(accs)


def _type(row: ProbeRow) -> str:
    """A word type of the control task: the lower-cased word."""
    return row.word.lower()


def _sense_groups(train: list[ProbeRow], test: list[ProbeRow], seed: int) -> list[dict]:
    """Per polysemous lemma: its rows' positions in each split, labels and control labels
    (one generator for every lemma, lemmas in sorted order)."""
    lemmas = polysemous_lemmas(train, test)
    rng = np.random.default_rng(seed)
    where: dict[str, dict[str, list[int]]] = {lemma: {"train": [], "test": []} for lemma in lemmas}
    for split, rows in (("train", train), ("test", test)):
        for i, r in enumerate(rows):
            lemma = lemma_of(r)
            if lemma in where:
                where[lemma][split].append(i)
    groups = []
    for lemma in lemmas:
        tr, te = where[lemma]["train"], where[lemma]["test"]
        y_train = [train[i].key for i in tr]
        control = control_labels(y_train, [_type(train[i]) for i in tr] + [_type(test[i]) for i in te], rng)
        groups.append({"lemma": lemma, "train": np.array(tr), "test": np.array(te),
                       "y_train": np.array(y_train), "y_test": np.array([test[i].key for i in te]),
                       "c_train": np.array([control[_type(train[i])] for i in tr]),
                       "c_test": np.array([control[_type(test[i])] for i in te])})
    return groups


def probe(
    encoder: Encoder, task: str, *, data_dir=None, kind: str = "linear", seed: int = 0,
    train_rows: int = TRAIN_ROWS, test_rows: int = TEST_ROWS, use_cache: bool = True, cache_root=None,
) -> ProbeResult:
    """Probe every layer of ``encoder`` for ``task`` (``pos``, ``supersense`` or ``sense``)
    over SemCor in ``data_dir`` (default: ``CONTEXTLENS_DATA``); ``kind``: ``linear`` or
    ``mlp``; ``seed``: the control task's draws (and the MLP's initialisation); ``train_rows``,
    ``test_rows``: how many words of each split (every layer of each is held at once:
    :func:`contextlens.bounds.check_stack` refuses more than it allows before encoding)."""
    from ...datasets import load_semcor, resolve_data_dir
    from ...encoders.encoding_cache import EncodingCache

    check_choice("probe task", task, PROBE_TASKS)
    check_choice("probe", kind, PROBE_KINDS)
    check_int("seed", seed, low=0, high=2**32 - 1)
    root = resolve_data_dir(data_dir)
    lexnames = read_lexnames(root) if task == "supersense" else None
    t0 = time.perf_counter()
    split = semcor_rows(load_semcor(root), train=train_rows, test=test_rows)
    train, test = split["train"], split["test"]
    log.info("SemCor rows read in %.1f s: %d train, %d test", time.perf_counter() - t0, len(train), len(test))
    cache = EncodingCache(encoder, root=cache_root, enabled=use_cache)
    check_stack([cache], len(train) + len(test), what="the probe's train and test words", work=PROBE_WORK,
                todo="probe fewer words: train_rows= and test_rows= (probe --train-words N --test-words N)")
    t0 = time.perf_counter()
    name = model_name(encoder)
    x_train = cached_layers(cache, CACHE_TASK, [(r.tokens, r.index) for r in train],
                            what=f"the vectors of the train words ({name})")
    x_test = cached_layers(cache, CACHE_TASK, [(r.tokens, r.index) for r in test],
                           what=f"the vectors of the test words ({name})")
    log.info("vectors of %d words in %.1f s (cache: %d shards read, %d encoded)", len(train) + len(test),
             time.perf_counter() - t0, cache.hits, cache.misses)
    layer_ids = list(cache.layer_ids)
    if task == "sense":
        groups = _sense_groups(train, test, seed)
        if not groups:
            raise InputError("no lemma has two senses in both the train and the test words; give more rows")
        in_task = np.concatenate([np.concatenate([g["train"] for g in groups]),
                                  len(train) + np.concatenate([g["test"] for g in groups])])
        n_labels = sum(len(set(g["y_train"])) for g in groups)
        sizes = (sum(len(g["train"]) for g in groups), sum(len(g["test"]) for g in groups))
    else:
        y_train = np.array(task_labels(task, train, lexnames))
        y_test = np.array(task_labels(task, test, lexnames))
        control = control_labels(list(y_train), [_type(r) for r in (*train, *test)],
                                 np.random.default_rng(seed))
        c_train = np.array([control[_type(r)] for r in train])
        c_test = np.array([control[_type(r)] for r in test])
        in_task = np.arange(len(train) + len(test))
        n_labels, sizes = len(set(y_train)), (len(train), len(test))
    rows, lemmas = [], None
    t0 = time.perf_counter()
    with step(f"probing {task} ({kind} probe and its control)", total=len(layer_ids), unit="layers") as s:
        for k, layer in enumerate(layer_ids):
            xtr, xte = x_train[k], x_test[k]  # views of the stack, in the cache's precision
            lacking = np.concatenate([np.isnan(xtr).any(axis=1), np.isnan(xte).any(axis=1)])
            missing = int(lacking[in_task].sum())
            if task == "sense":
                acc, control_acc, n_tr, n_te, lemmas = _sense_probe(xtr, xte, groups, kind, seed)
            else:
                acc, control_acc, n_tr, n_te = _split_probe(xtr, xte, y_train, y_test, c_train, c_test, kind,
                                                            seed)
            rows.append(ProbeLayer(int(layer), acc, control_acc, acc - control_acc, n_tr, n_te, missing))
            log.info("%s layer %d: accuracy %.3f, control %.3f", task, layer, acc, control_acc)
            s.advance()
    log.info("%d layers probed in %.1f s", len(layer_ids), time.perf_counter() - t0)
    return ProbeResult(task, name, tuple(rows),
                       expected_layer([r.layer for r in rows], [r.accuracy for r in rows]), kind, seed,
                       n_labels, *sizes, lemmas)
