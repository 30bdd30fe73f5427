"""Probing classifiers with control tasks over SemCor (:func:`probe`): what each layer of an
encoder lets a simple classifier read (part of speech, supersense, word sense), how much of
that the probe itself supplies (Hewitt & Liang 2019), and where in the stack it appears
(Tenney et al. 2019). ``tasks``: the words and labels; ``probe``: the classifier, the
control task and the expected layer; ``run``: :func:`probe` itself.

Floor: as :mod:`contextlens.analysis` (``errors``, ``files``, ``progress``, ``disk_cache``,
:mod:`contextlens.encoders`, the analysis's :mod:`~contextlens.analysis.layerstack`), and lazily
:mod:`contextlens.evaluation`'s SemCor reader and encoding cache; scikit-learn's classifiers.
"""

from .probe import MLP_HIDDEN, PROBE_KINDS, control_labels, expected_layer, probe_accuracy
from .run import CACHE_TASK, ProbeLayer, ProbeResult, model_name, probe
from .tasks import PROBE_TASKS, TEST_ROWS, TRAIN_ROWS, ProbeRow, semcor_rows

__all__ = [
    "probe", "ProbeResult", "ProbeLayer", "PROBE_TASKS", "PROBE_KINDS", "MLP_HIDDEN", "TRAIN_ROWS",
    "TEST_ROWS", "ProbeRow", "semcor_rows", "probe_accuracy", "control_labels", "expected_layer",
    "model_name", "CACHE_TASK",
]
