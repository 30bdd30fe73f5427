"""LMMS on the real WordNet 3.0: the graph's arrays, and propagation over a few synsets."""

import numpy as np
import pytest

from contextlens import datasets
from contextlens.evaluation.lmms import SOURCES, propagate


@pytest.fixture(scope="module")
def graph(data_dir):
    return datasets.wordnet_graph(data_dir)


def test_graph_holds_every_sense(graph, data_dir):
    wn = datasets.wordnet(data_dir)
    assert (len(graph.keys), len(graph.synsets), len(graph.lexnames)) == (206_949, 117_659, 45)
    assert len(set(graph.keys)) == len(graph.keys)
    dog = graph.synsets.index("dog.n.01")
    assert [graph.keys[r] for r in graph.keys_of(dog)] == [lem.key()
                                                           for lem in wn.synset("dog.n.01").lemmas()]
    hyper = {graph.synsets[h] for s, h in graph.hypernyms.tolist() if s == dog}
    assert hyper == {"domestic_animal.n.01", "canine.n.02"}
    paris = graph.synsets.index("paris.n.01")
    assert {graph.synsets[h] for s, h in graph.hypernyms.tolist() if s == paris} == {"national_capital.n.01"}
    assert graph.lexnames[graph.lexname[dog]] == "noun.animal"
    # listed twice in a.n.06 (A and a): one key, both names
    a = graph.key_synset[graph.key_row["a%1:10:00::"]]
    assert graph.lemma_names[a] == "A a" and graph.definitions[a] == wn.synset("a.n.06").definition()


def test_propagation_on_real_synsets(graph):
    # only dog%1:05:00:: is "tagged": its synset-mates copy it, puppy.n.01 (hypernyms pup.n.01 and dog.n.01)
    # takes it walking up, cat.n.01 (noun.animal, not under dog.n.01) its file's mean; noun.object and the
    # verbs have no synset with an embedding, so bank%1:17:01:: (sloping land) and bank%2:38:00:: get none
    p = propagate(graph, ["dog%1:05:00::"], np.array([[1.0, 2.0]]))
    row = graph.key_row
    keys = ("dog%1:05:00::", "domestic_dog%1:05:00::", "puppy%1:05:00::", "cat%1:05:00::", "bank%1:17:01::",
            "bank%2:38:00::")
    src = {k: SOURCES[p.source[row[k]]] if p.source[row[k]] >= 0 else None for k in keys}
    assert src == {"dog%1:05:00::": "semcor", "domestic_dog%1:05:00::": "synset",
                   "puppy%1:05:00::": "hypernym",
                   "cat%1:05:00::": "lexname", "bank%1:17:01::": None, "bank%2:38:00::": None}
    got = p.vectors([row[k] for k in keys])
    np.testing.assert_allclose(got[:4], [[1.0, 2.0]] * 4)
    assert np.isnan(got[4:]).all()


def test_the_keys_a_word_needs_give_its_full_propagation(graph, data_dir):
    from contextlens.evaluation.lmms import needed_semcor_keys, tagged_keys

    tagged = tagged_keys(data_dir)  # SemCor's keys, as the parsed corpus has them
    assert len(tagged) > 30_000
    rng = np.random.default_rng(0)
    known = [k for k in tagged if k in graph.key_row]
    vectors = dict(zip(known, rng.normal(size=(len(known), 4))))
    full = propagate(graph, known, np.array([vectors[k] for k in known]))
    wn = datasets.wordnet(data_dir)
    for word in ("bank", "run", "mole"):
        rows = [graph.key_row[k] for k in datasets.word_senses(wn, word)[1]]
        needed = needed_semcor_keys(graph, tagged, rows)
        assert len(needed) < 100  # a few dozen keys, not SemCor's 35,000
        part = propagate(graph, needed, np.array([vectors[k] for k in needed]))
        np.testing.assert_array_equal(part.source[rows], full.source[rows])
        np.testing.assert_allclose(part.vectors(rows), full.vectors(rows), rtol=1e-5, atol=1e-6)
