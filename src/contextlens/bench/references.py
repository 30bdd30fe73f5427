"""Published reference numbers, with their sources, shown beside ours.

Values are in the unit the papers use: percent for accuracy and F1, Spearman × 100 for
SCWS, plain Spearman for the GloVe similarity figures.

>>> [r.system for r in references("wic")][:2]
['random baseline', 'ELMo']
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Reference", "REFERENCES", "references", "SOURCES"]

SOURCES = {
    "wic": "Pilehvar & Camacho-Collados (NAACL 2019), WiC: the Word-in-Context Dataset, Table 3 (test accuracy)",
    "lmms": "Loureiro & Jorge (ACL 2019), Language Modelling Makes Sense, Table 2 (ALL F1)",
    "lmms-repo": "LMMS repository (github.com/danlou/LMMS), MFS baseline on ALL",
    "raganato": "Raganato, Camacho-Collados & Navigli (EACL 2017), WSD: A Unified Evaluation Framework (MFS on ALL)",
    "huang": "Huang, Socher, Manning & Ng (ACL 2012), Improving Word Representations via Global Context, Table 4",
    "glove-gensim": "gensim's evaluate_word_pairs / evaluate_word_analogies on the GloVe 6B-50d vectors "
                    "(Pennington, Socher & Manning, EMNLP 2014)",
}


@dataclass(frozen=True)
class Reference:
    task: str
    split: str
    system: str
    metric: str
    value: float
    source: str


REFERENCES: tuple[Reference, ...] = (
    Reference("wic", "test", "random baseline", "accuracy", 50.0, "wic"),
    Reference("wic", "test", "ELMo", "accuracy", 57.7, "wic"),
    Reference("wic", "test", "context2vec", "accuracy", 59.3, "wic"),
    Reference("wic", "test", "BERT-large", "accuracy", 65.5, "wic"),
    Reference("wic", "test", "human (approx.)", "accuracy", 80.0, "wic"),
    Reference("wsd", "ALL", "MFS", "f1", 65.2, "lmms-repo"),
    Reference("wsd", "ALL", "MFS", "f1", 64.8, "raganato"),
    Reference("wsd", "ALL", "LMMS-1024", "f1", 73.8, "lmms"),
    Reference("wsd", "ALL", "LMMS-2048", "f1", 75.4, "lmms"),
    Reference("scws", "ratings", "single-prototype", "spearman", 58.6, "huang"),
    Reference("scws", "ratings", "multi-prototype AvgSimC", "spearman", 65.7, "huang"),
    Reference("similarity", "ws353", "GloVe 6B-50d", "spearman", 0.503, "glove-gensim"),
    Reference("similarity", "simlex999", "GloVe 6B-50d", "spearman", 0.263, "glove-gensim"),
    Reference("similarity", "men-full", "GloVe 6B-50d", "spearman", 0.657, "glove-gensim"),
    Reference("analogy", "google (top 100k words)", "GloVe 6B-50d", "accuracy", 47.0, "glove-gensim"),
)


def references(task: str | None = None) -> list[Reference]:
    """The reference numbers of one task (all when None)."""
    return [r for r in REFERENCES if task is None or r.task == task]
