"""Published reference numbers, with their sources, shown beside ours.

Values are in the unit the papers use: percent for accuracy and F1, Spearman × 100 for
SCWS, plain Spearman for the GloVe similarity figures and CoSimLex's correlations.
CoSimLex (SemEval-2020 Task 3, English): the task paper's own tables (Armendariz et al.,
SemEval 2020, pp. 36-49) were not in a source we could read, so its numbers are those
team papers state in their abstracts, each cited; a number is never written from memory.

>>> [r.system for r in references("wic")][:2]
['random baseline', 'ELMo']
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Reference", "REFERENCES", "references", "SOURCES"]

SOURCES = {
    "wic": "Pilehvar & Camacho-Collados (NAACL 2019), WiC: the Word-in-Context Dataset, Table 3 "
           "(test accuracy)",
    "lmms": "Loureiro & Jorge (ACL 2019), Language Modelling Makes Sense, Table 2 (ALL F1)",
    "lmms-repo": "LMMS repository (github.com/danlou/LMMS, branch LMMS_ACL19), README 'WSD Evaluation' table "
                 "(F1 per split of Raganato et al.'s framework; BERT-large-cased)",
    "raganato": "Raganato, Camacho-Collados & Navigli (EACL 2017), WSD: A Unified Evaluation Framework "
                "(MFS on ALL)",
    "huang": "Huang, Socher, Manning & Ng (ACL 2012), Improving Word Representations via Global Context, "
             "Table 4",
    "cosimlex-uzh": "Tang (SemEval 2020), UZH at SemEval-2020 Task 3: Combining BERT with WordNet Sense "
                    "Embeddings to Predict Graded Word Similarity Changes, abstract (the task's BERT "
                    "baseline and UZH's system; 27 annotators, i.e. the English set)",
    "cosimlex-justmasters": "Al-Khdour, Younes, Abdullah & AL-Smadi (SemEval 2020), JUSTMasters at "
                            "SemEval-2020 Task 3, abstract (English; 6th in subtask 1, best in subtask 2)",
    "glove-gensim": "gensim's evaluate_word_pairs / evaluate_word_analogies on the GloVe 6B-50d vectors "
                    "(Pennington, Socher & Manning, EMNLP 2014)",
}


# the splits of Raganato et al.'s framework (ALL apart)
WSD_SPLITS = ("senseval2", "senseval3", "semeval2007", "semeval2013", "semeval2015")


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
    *(Reference("wsd", split, system, "f1", value, "lmms-repo")
      for system, values in (("MFS", (66.8, 66.2, 55.2, 63.0, 67.8)),
                             ("LMMS-1024", (75.4, 74.0, 66.4, 72.7, 75.3)),
                             ("LMMS-2048", (76.3, 75.6, 68.1, 75.1, 77.0)))
      for split, value in zip(WSD_SPLITS, values)),
    Reference("scws", "ratings", "single-prototype", "spearman", 58.6, "huang"),
    Reference("scws", "ratings", "multi-prototype AvgSimC", "spearman", 65.7, "huang"),
    Reference("cosimlex", "en", "task baseline (BERT)", "subtask1_uncentered_pearson", 0.705, "cosimlex-uzh"),
    Reference("cosimlex", "en", "UZH (BERT + WordNet senses)", "subtask1_uncentered_pearson", 0.7645,
              "cosimlex-uzh"),
    Reference("cosimlex", "en", "JUSTMasters", "subtask1_uncentered_pearson", 0.738, "cosimlex-justmasters"),
    Reference("cosimlex", "en", "JUSTMasters", "subtask2_harmonic_mean", 0.725, "cosimlex-justmasters"),
    Reference("similarity", "ws353", "GloVe 6B-50d", "spearman", 0.503, "glove-gensim"),
    Reference("similarity", "simlex999", "GloVe 6B-50d", "spearman", 0.263, "glove-gensim"),
    Reference("similarity", "men-full", "GloVe 6B-50d", "spearman", 0.657, "glove-gensim"),
    Reference("analogy", "google (top 100k words)", "GloVe 6B-50d", "accuracy", 47.0, "glove-gensim"),
)


def references(task: str | None = None, split: str | None = None) -> list[Reference]:
    """The reference numbers of one task (all when None); with ``split``, a WSD task's
    numbers on that split and on ALL only (the framework's other splits left out).

    >>> [(r.split, r.system, r.value) for r in references("wsd", "semeval2007") if r.system != "MFS"]
    [('ALL', 'LMMS-1024', 73.8), ('ALL', 'LMMS-2048', 75.4), ('semeval2007', 'LMMS-1024', 66.4), \
('semeval2007', 'LMMS-2048', 68.1)]
    """
    out = [r for r in REFERENCES if task is None or r.task == task]
    if split is not None:
        out = [r for r in out if r.split in (split, "ALL") or r.split not in WSD_SPLITS]
    return out
