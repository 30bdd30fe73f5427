"""Bias audits on static and contextual vectors: WEAT (Caliskan et al. 2017), SEAT (May et al.
2019) and CEAT (Guo & Caliskan 2021).

Floor 8 (ARCHITECTURE.md): imports :mod:`contextlens.index` (CEAT's contexts from a usage
index), :mod:`contextlens.encoders`, ``datasets`` (the data folder) and the floors below, with
numpy and SciPy; never views, plots, cli or web.

>>> from contextlens.bias import get_test, weat_table
>>> get_test("career_family").description
'male names vs female names, career vs family'
"""

from .caliskan import SOURCE, TESTS, CaliskanTest, Published, all_names, get_test
from .ceat import DEFAULT_SAMPLES, ceat, ceat_by_layer, ceat_samples, contexts_from_store
from .contexts import (
    DEFAULT_PER_WORD,
    ceat_contexts,
    contexts_from_corpus,
    contexts_from_index,
    pick_sentences,
)
from .meta import RandomEffects, random_effects
from .result import MEASURES, BiasResult
from .seat import TEMPLATES_SOURCE, seat, seat_sentences, sentences_for
from .sets import SET_KEYS, WordSets, parse_sets, read_sets
from .stats import DEFAULT_PERMUTATIONS, PValue, association_scores, effect_size, permutation_p_value
from .weat import (
    CASES,
    AssociationTest,
    association_test,
    find_words,
    sets_for,
    weat_caliskan,
    weat_encoder,
    weat_table,
)

__all__ = [
    "DEFAULT_SAMPLES", "ceat", "ceat_by_layer", "ceat_samples", "contexts_from_store",
    "DEFAULT_PER_WORD", "ceat_contexts", "contexts_from_corpus", "contexts_from_index", "pick_sentences",
    "TEMPLATES_SOURCE", "seat", "seat_sentences", "sentences_for",
    "SOURCE", "TESTS", "CaliskanTest", "Published", "all_names", "get_test",
    "RandomEffects", "random_effects",
    "MEASURES", "BiasResult",
    "SET_KEYS", "WordSets", "parse_sets", "read_sets",
    "DEFAULT_PERMUTATIONS", "PValue", "association_scores", "effect_size", "permutation_p_value",
    "CASES", "AssociationTest", "association_test", "find_words", "sets_for", "weat_caliskan", "weat_encoder",
    "weat_table",
]
