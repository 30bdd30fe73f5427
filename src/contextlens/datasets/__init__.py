"""Loaders for the standard evaluation datasets, in their original published layouts.

Every loader takes the data directory ``root`` first (see :func:`resolve_data_dir`) and
reads the files where the published dataset puts them; a missing file raises
:class:`DatasetMissingError` (which files, where, and how to get them), a malformed one
:class:`~contextlens.errors.FileFormatError` (file, line, what was expected), an empty
one :class:`~contextlens.errors.EmptyInputError`.

Floor 2 (ARCHITECTURE.md): imports only ``errors``, ``files``, ``text`` and ``disk_cache`` of
contextlens (nltk's WordNet reader lazily); every task of :mod:`contextlens.evaluation`, the probes
and the index read through it.

============  ===========================================================
family        loaders
============  ===========================================================
registry      DATASETS, resolve_data_dir, dataset_status, require
WiC           load_wic, load_wic_tsv
SCWS          load_scws
WSD           load_wsd_eval, load_semcor, wordnet, wordnet_graph, candidate_keys, ...
CoarseWSD-20  coarsewsd_words, load_coarsewsd
CoSimLex      load_cosimlex
similarity    load_similarity, SIMILARITY_FILES, gensim_pairs_file
analogies     load_analogies, ANALOGY_FILES
============  ===========================================================
"""

from .analogy import ANALOGY_FILES, AnalogySection, load_analogies
from .coarse import COARSE_SPLITS, CoarseItem, coarse_classes, coarsewsd_words, load_coarsewsd
from .cosimlex import COSIMLEX_FILE, CosimlexItem, load_cosimlex, marked_spans
from .registry import (
    COARSE_WORDS,
    DATASETS,
    WSD_EVAL_NAMES,
    DatasetMissingError,
    DatasetSpec,
    Source,
    dataset_status,
    how_to_get,
    require,
    resolve_data_dir,
)
from .scws import ScwsItem, context_tokens, load_scws
from .semcor import SEMCOR_ARCHIVE, load_semcor, universal_tag
from .similarity import (
    SIMILARITY_FILES,
    SimilarityPair,
    available_similarity,
    gensim_pairs_file,
    load_similarity,
)
from .wic import WIC_SPLITS, WicItem, WicTsvItem, load_wic, load_wic_tsv
from .wordnet import (
    WORDNET_POS,
    WordNetGraph,
    candidate_keys,
    key_synset,
    most_frequent_key,
    unknown_keys,
    word_senses,
    wordnet,
    wordnet_graph,
)
from .wsd import WSD_POS, WsdInstance, WsdSentence, load_gold_keys, load_wsd_eval

__all__ = [
    "ANALOGY_FILES", "AnalogySection", "load_analogies",
    "COSIMLEX_FILE", "CosimlexItem", "load_cosimlex", "marked_spans",
    "COARSE_SPLITS", "CoarseItem", "coarse_classes", "coarsewsd_words", "load_coarsewsd",
    "COARSE_WORDS", "DATASETS", "WSD_EVAL_NAMES", "DatasetMissingError", "DatasetSpec", "Source",
    "dataset_status", "how_to_get", "require", "resolve_data_dir",
    "ScwsItem", "context_tokens", "load_scws",
    "SEMCOR_ARCHIVE", "load_semcor", "universal_tag",
    "SIMILARITY_FILES", "SimilarityPair", "available_similarity", "gensim_pairs_file", "load_similarity",
    "WIC_SPLITS", "WicItem", "WicTsvItem", "load_wic", "load_wic_tsv",
    "WORDNET_POS", "candidate_keys", "key_synset", "most_frequent_key", "unknown_keys", "wordnet",
    "WordNetGraph", "wordnet_graph", "word_senses",
    "WSD_POS", "WsdInstance", "WsdSentence", "load_gold_keys", "load_wsd_eval",
]
