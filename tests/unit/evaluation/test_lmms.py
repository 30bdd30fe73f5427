"""LMMS in full: propagation through a WordNet-like graph, gloss sentences and their cached
embeddings, the static part, the normalised concatenation, ranking (hand-computed cases)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextlens.datasets.wordnet import WordNetGraph
from contextlens.encoders.encoding_cache import EncodingCache
from contextlens.encoders.static import StaticEncoder
from contextlens.errors import EmptyInputError, InputError
from contextlens.evaluation.lmms import (
    SOURCES,
    SenseParts,
    concat_cosines,
    gloss_embeddings,
    gloss_text,
    propagate,
    rank_senses,
    static_parts,
)
from contextlens.vectors import EmbeddingTable

# synset: (name, lexname, hypernyms, [(key, lemma name)])
SYNSETS = [
    ("entity.n.01", 0, [], [("entity%1", "entity")]),
    ("animal.n.01", 1, [0], [("animal%1", "animal"), ("beast%1", "beast")]),
    ("dog.n.01", 1, [1], [("dog%1", "dog")]),
    ("puppy.n.01", 1, [2, 4], [("puppy%1", "puppy")]),
    ("pet.n.01", 1, [], [("pet%1", "pet"), ("pet%2", "favourite")]),
    ("rock.n.01", 2, [], [("rock%1", "rock")]),
    ("stone.n.01", 2, [], [("stone%1", "stone")]),
    ("idea.n.01", 3, [], [("idea%1", "idea")]),
    ("creature.n.01", 1, [], [("creature%1", "creature")]),
]
LEXNAMES = ("noun.Tops", "noun.animal", "noun.object", "noun.cognition")
SEMCOR = {"entity%1": [1.0, 0.0, 0.0], "beast%1": [0.0, 2.0, 0.0], "pet%1": [0.0, 0.0, 4.0],
          "pet%2": [0.0, 0.0, 2.0], "stone%1": [3.0, 0.0, 0.0], "old%1:16:00::": [9.0, 9.0, 9.0]}


def make_graph(synsets=SYNSETS) -> WordNetGraph:
    keys, names, key_synset, edges = [], [], [], []
    for i, (_, _, hyper, lemmas) in enumerate(synsets):
        for k, n in lemmas:
            keys.append(k)
            names.append(n)
            key_synset.append(i)
        edges += [(i, h) for h in hyper]
    return WordNetGraph(tuple(keys), tuple(names), np.array(key_synset), tuple(s[0] for s in synsets),
                        tuple(f"the gloss of {s[0].split('.')[0]}" for s in synsets),
                        tuple(" ".join(n for _,
                                       n in s[3]) for s in synsets), np.array([s[1] for s in synsets]),
                        LEXNAMES, np.array(edges, dtype=np.int32).reshape(-1, 2))


def propagated(graph=None):
    graph = graph or make_graph()
    p = propagate(graph, list(SEMCOR), np.array(list(SEMCOR.values())))
    return graph, p, {k: (SOURCES[s] if s >= 0 else None, v.tolist())
                      for k, s, v in zip(graph.keys, p.source, p.vectors(range(len(graph.keys))))}


def test_propagation_by_hand():
    _, p, got = propagated()
    assert got["entity%1"] == ("semcor", [1.0, 0.0, 0.0])
    assert got["animal%1"] == ("synset", [0.0, 2.0, 0.0])  # its synset's tagged sense (beast%1)
    assert got["dog%1"] == ("hypernym", [0.0, 2.0, 0.0])  # animal.n.01
    # puppy: the mean of its two hypernyms, dog (itself from animal, walking up) and pet (mean of 4 and 2)
    assert got["puppy%1"] == ("hypernym", [0.0, 1.0, 1.5])
    assert got["pet%2"] == ("semcor", [0.0, 0.0, 2.0])
    assert got["rock%1"] == ("lexname", [3.0, 0.0, 0.0])  # noun.object: stone.n.01 only
    # noun.animal: the mean over its synsets with an embedding: animal, dog, puppy, pet
    assert got["creature%1"][0] == "lexname"
    assert got["creature%1"][1] == pytest.approx([0.0, (2 + 2 + 1 + 0) / 4, (0 + 0 + 1.5 + 3) / 4])
    assert got["idea%1"][0] is None and np.isnan(got["idea%1"][1]).all()  # noun.cognition has nothing
    assert p.coverage() == {"semcor": 5, "synset": 1, "hypernym": 2, "lexname": 2, "none": 1}


def test_propagation_does_not_depend_on_synset_order():
    # extend.py's single pass in WordNet's order would miss puppy -> dog -> animal when puppy comes first
    order = [3, 2, 8, 5, 7, 0, 1, 4, 6]
    moved = {s: i for i, s in enumerate(order)}
    shuffled = [(n, lex, [moved[h] for h in hyper], lemmas) for n, lex, hyper,
                lemmas in (SYNSETS[i] for i in order)]
    _, _, a = propagated()
    _, _, b = propagated(make_graph(shuffled))
    assert a.keys() == b.keys()
    for k in a:
        assert a[k][0] == b[k][0]
        np.testing.assert_allclose(a[k][1], b[k][1])


def test_propagation_needs_a_known_key():
    with pytest.raises(EmptyInputError, match="WordNet"):
        propagate(make_graph(), ["zzz%1"], np.ones((1, 3)))


def test_gloss_text_is_lmms_string():
    # LMMS_ACL19 README: earth%1:17:00:: -> "earth - Earth , earth , world , globe - <tokenized gloss>"
    assert (gloss_text("earth", ["Earth", "earth", "world", "globe"], "the 3rd planet from the sun")
            == "earth - Earth , earth , world , globe - the 3rd planet from the sun")


def test_static_parts_mean_of_words():
    t = EmbeddingTable(["bank", "holiday"], [[2.0, 0.0], [0.0, 4.0]])
    assert static_parts(t, ["bank_holiday", "BANK", "qq"]).tolist() == [[1.0, 2.0], [2.0, 0.0], [0.0, 0.0]]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_concat_cosines_equal_the_concatenation(n_parts, n, seed):
    rng = np.random.default_rng(seed)
    dims = rng.integers(1, 5, n_parts)
    query = [rng.normal(size=d) for d in dims]
    senses = [rng.normal(size=(n, d)) for d in dims]
    unit = lambda x: x / np.linalg.norm(x, axis=-1, keepdims=True)  # noqa: E731
    q = np.concatenate([unit(p) for p in query])
    s = np.hstack([unit(p) for p in senses])
    explicit = s @ q / (np.linalg.norm(s, axis=1) * np.linalg.norm(q))
    np.testing.assert_allclose(concat_cosines(query, senses), explicit, atol=1e-12)


def test_concat_cosines_checks_parts():
    with pytest.raises(InputError, match="part"):
        concat_cosines([np.ones(2)], [np.ones((1, 2)), np.ones((1, 2))])


def sense_parts_by_hand():
    return SenseParts(["bank%1", "bank%2", "bank%3"], np.arange(3),
                      np.array([[1.0, 0.0], [0.0, 1.0], [np.nan, np.nan]]), np.array([0, 3, -1]),
                      np.array([True, False, False]), gloss=np.array([[0.0, 1.0], [1.0, 1.0], [1.0, 0.0]]),
                      static=np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]]))


def test_rank_senses_steps_by_hand():
    p = sense_parts_by_hand()
    v = np.array([0.6, 0.8])
    only = rank_senses(p, v, ["bank%1", "bank%2", "bank%3"], ["propagation"])
    assert [k for k, _ in only] == ["bank%2", "bank%1"]  # bank%3 has no embedding: left out
    assert [round(c, 4) for _, c in only] == [0.8, 0.6]
    both = dict(rank_senses(p, v, ["bank%1", "bank%2"], ["propagation", "glosses"]))
    # mean of the parts' cosines: bank%1 (0.6 + 0.8) / 2, bank%2 (0.8 + 1.4 / sqrt 2) / 2
    assert both["bank%1"] == pytest.approx(0.7)
    assert both["bank%2"] == pytest.approx((0.8 + 1.4 / np.sqrt(2)) / 2)


def test_static_part_never_changes_an_answer_within_one_lemma():
    p = sense_parts_by_hand()
    rng = np.random.default_rng(3)
    for _ in range(50):
        v = rng.normal(size=2)
        s = rng.normal(size=2)
        with_static = rank_senses(p, v, p.keys, ["propagation", "glosses", "static"], lemma_static=s)
        without = rank_senses(p, v, p.keys, ["propagation", "glosses"])
        assert [k for k, _ in with_static] == [k for k, _ in without]
    with pytest.raises(InputError, match="lemma_static"):
        rank_senses(p, np.ones(2), p.keys, ["propagation", "glosses", "static"])


class CountingStatic(StaticEncoder):
    """A real StaticEncoder that counts the texts it encodes."""

    def __init__(self, table):
        super().__init__(table)
        self.texts = 0

    def encode(self, texts, *, targets=None):
        self.texts += len(texts)
        return super().encode(texts, targets=targets)


def test_gloss_embeddings_by_hand_and_cached(tmp_path, monkeypatch):
    graph = make_graph()
    table = EmbeddingTable(["dog", "gloss", "the", "of"], [[4.0, 0.0], [0.0, 4.0], [0.0, 0.0], [2.0, 2.0]])
    enc = CountingStatic(table)
    cache = EncodingCache(enc, root=tmp_path)
    row = graph.key_row["dog%1"]
    # "dog - dog - the gloss of dog": the known words dog, dog, the, gloss, of, dog; their mean
    want = (3 * np.array([4.0, 0.0]) + np.array([0.0, 0.0]) + np.array([0.0, 4.0]) + np.array([2.0, 2.0])) / 6
    got = gloss_embeddings(cache, graph, [row], [0])[0]
    np.testing.assert_allclose(got[0], want)
    assert enc.texts == 1
    gloss_embeddings(cache, graph, [row], [0])
    assert enc.texts == 1  # the part asked for is cached under its sentences
    monkeypatch.setattr("contextlens.evaluation.glosses.GLOSS_BLOCK", 4)
    every = gloss_embeddings(cache, graph, None, [0])[0]  # all of WordNet, by blocks of 4
    assert enc.texts == 1 + len(graph.keys) and every.shape == (len(graph.keys), 2)
    np.testing.assert_allclose(every[row], want)
    some = gloss_embeddings(cache, graph, [row, 0, row], [0])[0]  # read from the blocks now
    assert enc.texts == 1 + len(graph.keys)
    np.testing.assert_allclose(some, every[[row, 0, row]])


def test_wordnet_graph_is_cached_by_content(tmp_path, monkeypatch, caplog):
    import sys

    from contextlens.datasets import DATASETS, wordnet_graph

    module = sys.modules["contextlens.datasets.wordnet"]
    root = tmp_path / "data"
    for f in DATASETS["wordnet"].files:
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text(f"{f}\n")
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "cache"))
    walks = []
    monkeypatch.setattr(module, "_open", lambda directory: directory)
    monkeypatch.setattr(module, "graph_from_reader", lambda wn: walks.append(wn) or make_graph())
    module._graph.cache_clear()
    first = wordnet_graph(root)
    module._graph.cache_clear()
    again = wordnet_graph(root)  # read back from the cache
    assert len(walks) == 1
    assert again.keys == first.keys and again.definitions == first.definitions
    assert again.lemma_names == first.lemma_names and again.lexnames == LEXNAMES
    np.testing.assert_array_equal(again.hypernyms, first.hypernyms)
    copy = next((tmp_path / "cache" / "datasets").glob("wordnet-graph-*.npz"))
    copy.write_bytes(b"not an npz")
    module._graph.cache_clear()
    assert wordnet_graph(root).keys == first.keys and len(walks) == 2  # damaged: walked again
    (root / "wordnet" / "data.noun").write_text("another WordNet\n")
    module._graph.cache_clear()
    wordnet_graph(root)
    assert len(walks) == 3 and len(list((tmp_path / "cache" / "datasets").glob("wordnet-graph-*.npz"))) == 2
    module._graph.cache_clear()


def test_wic_sense_features_by_hand():
    from contextlens.evaluation.wic import SENSE_FEATURES, sense_features

    p = sense_parts_by_hand()
    x1 = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    x2 = np.array([[1.0, 0.1], [0.0, 1.0], [0.0, 1.0]])
    f = sense_features(p, x1, x2, [["bank%1", "bank%2"], ["bank%1", "bank%2"], []])
    assert SENSE_FEATURES == ("same_sense", "sense_cosine", "match1", "match2")
    # pair 0: both uses nearest bank%1 (gloss [0, 1], propagated [1, 0]); its match: (1 + 0) / 2
    assert f[0, 0] == 1.0 and f[0, 1] == pytest.approx(1.0)
    assert (f[0, 2] == pytest.approx(0.5)
            and f[0, 3] == pytest.approx((0.1 / np.hypot(1, 0.1) + 1 / np.hypot(1, 0.1)) / 2))
    # pair 1: bank%1 for [1, 0] ((0 + 1) / 2 = 0.5 vs bank%2 (1/sqrt 2 + 0) / 2), bank%2 for [0, 1]
    assert f[1, 0] == 0.0
    # cosine of bank%1 and bank%2: the mean of gloss cosine (1/sqrt 2) and propagated cosine (0)
    assert f[1, 1] == pytest.approx((1 / np.sqrt(2)) / 2)
    assert np.isnan(f[2]).all()  # no candidate sense


def test_sense_parts_read_the_needed_keys_once_per_session(tmp_path, monkeypatch):
    import contextlens.datasets as datasets
    import contextlens.evaluation.lmms as lmms
    import contextlens.evaluation.wsd as wsd

    graph = make_graph()
    passes = []

    def semcor(cache, root, views, limit, progress, only):
        passes.append(sorted(only))
        keys = [k for k in SEMCOR if k in only]
        return {v: {"keys": np.array(keys), "vectors": np.array([SEMCOR[k] for k in keys])} for v in views}

    monkeypatch.setattr(datasets, "wordnet_graph", lambda root: graph)
    monkeypatch.setattr(wsd, "semcor_sense_embeddings", semcor)
    monkeypatch.setattr(lmms, "tagged_keys", lambda root, limit: list(SEMCOR))
    enc = StaticEncoder(EmbeddingTable(["a"], [[1.0, 0.0, 0.0]]))
    cache = EncodingCache(enc, root=tmp_path)
    first = lmms.sense_parts(cache, tmp_path, ["dog%1", "rock%1"], [0], steps=("propagation",))[0]
    again = lmms.sense_parts(cache, tmp_path, ["dog%1", "rock%1"], [0], steps=("propagation",))[0]
    # dog walks up to animal (beast%1 tagged); rock takes noun.object's mean (stone%1): nothing else is read
    assert passes == [["beast%1", "stone%1"]]
    assert first.propagated.tolist() == again.propagated.tolist() == [[0.0, 2.0, 0.0], [3.0, 0.0, 0.0]]
    assert [SOURCES[s] for s in first.source] == ["hypernym", "lexname"]
    puppy = lmms.sense_parts(cache, tmp_path, ["puppy%1"], [0], steps=("propagation",))[0]
    assert passes[1] == ["beast%1", "pet%1", "pet%2"] and puppy.propagated[0].tolist() == [0.0, 1.0, 1.5]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from([k for s in SYNSETS for k, _ in s[3]]), min_size=1, max_size=8, unique=True),
       st.integers(0, 2**32 - 1))
def test_needed_keys_give_the_same_embeddings_as_all_of_semcor(tagged, seed):
    from contextlens.evaluation.lmms import needed_semcor_keys

    graph = make_graph()
    rng = np.random.default_rng(seed)
    vectors = {k: rng.normal(size=3) for k in tagged}
    full = propagate(graph, tagged, np.array([vectors[k] for k in tagged]))
    for row in range(len(graph.keys)):
        needed = needed_semcor_keys(graph, tagged, [row])
        assert set(needed) <= set(tagged)
        if not needed:
            assert full.source[row] < 0  # nothing to read: no embedding either way
            continue
        part = propagate(graph, needed, np.array([vectors[k] for k in needed]))
        assert part.source[row] == full.source[row]
        np.testing.assert_allclose(part.vectors([row]), full.vectors([row]), rtol=1e-5, atol=1e-6)


def test_published_lmms_table_per_split():
    # the LMMS_ACL19 README's table: each split's row beside ours; with a split, the others are left out
    from contextlens.evaluation.references import references

    table = {(r.split, r.system): r.value for r in references("wsd")}
    assert table[("semeval2007", "MFS")] == 55.2 and table[("semeval2007", "LMMS-2048")] == 68.1
    assert table[("semeval2013", "LMMS-1024")] == 72.7 and table[("ALL", "LMMS-2048")] == 75.4
    shown = {(r.split, r.system) for r in references("wsd", "semeval2007")}
    assert ("semeval2007", "LMMS-1024") in shown and ("ALL", "LMMS-1024") in shown
    assert not {s for s, _ in shown} - {"semeval2007", "ALL"}
