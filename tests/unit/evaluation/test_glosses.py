"""LMMS's gloss embeddings cached per sense: a request encodes only the senses no earlier
request encoded, whatever the groups they were asked in, and reads the same numbers."""

import numpy as np
import pytest

from contextlens.encoders.encoding_cache import EncodingCache
from contextlens.evaluation import glosses
from contextlens.evaluation.glosses import gloss_embeddings
from contextlens.vectors import EmbeddingTable
from tests.unit.evaluation.test_lmms import CountingStatic, make_graph

WORDS = ["dog", "gloss", "the", "of", "rock", "pet", "puppy", "animal", "idea", "stone", "entity", "beast"]


class CountingTexts(CountingStatic):
    """Counts the texts it encodes and keeps them, to say which senses were encoded."""

    def __init__(self, table):
        super().__init__(table)
        self.seen: list[str] = []

    def encode(self, texts, *, targets=None):
        self.seen += list(texts)
        return super().encode(texts, targets=targets)


@pytest.fixture
def setup(tmp_path, monkeypatch):
    monkeypatch.setattr(glosses, "GLOSS_BLOCK", 4)  # 11 senses: blocks of 4, 4 and 3
    graph = make_graph()
    rng = np.random.default_rng(0)
    table = EmbeddingTable(WORDS, rng.normal(size=(len(WORDS), 3)))
    enc = CountingTexts(table)
    return graph, enc, EncodingCache(enc, root=tmp_path / "cache")


def reference(graph, enc, rows):
    """Every asked sense encoded anew, without a cache."""
    return gloss_embeddings(EncodingCache(enc, enabled=False), graph, rows, [0])[0]


def test_a_sense_is_encoded_once_whatever_the_requests(setup):
    graph, enc, cache = setup
    row = graph.key_row
    first = gloss_embeddings(cache, graph, [row["dog%1"]], [0])[0]
    assert enc.texts == 1
    # another split's candidates: only the two senses not asked before are encoded
    asked = [row["rock%1"], row["dog%1"], row["puppy%1"], row["rock%1"]]
    second = gloss_embeddings(cache, graph, asked, [0])[0]
    assert enc.texts == 3
    np.testing.assert_array_equal(second[1], first[0])
    np.testing.assert_array_equal(second[0], second[3])
    # all of WordNet after them: the rest only, once each
    every = gloss_embeddings(cache, graph, None, [0])[0]
    assert enc.texts == len(graph.keys) and len(set(enc.seen)) == len(graph.keys)
    np.testing.assert_array_equal(every[asked], second)
    # then anything is read: nothing is encoded again
    again = gloss_embeddings(cache, graph, [5, 0, 5, 10], [0])[0]
    assert enc.texts == len(graph.keys)
    np.testing.assert_array_equal(again, every[[5, 0, 5, 10]])
    fresh = reference(graph, CountingTexts(enc.table), np.arange(len(graph.keys)))
    np.testing.assert_allclose(every, fresh, rtol=1e-6)


def test_a_new_view_encodes_only_for_the_view_lacking_them(setup):
    graph, enc, cache = setup
    gloss_embeddings(cache, graph, [0, 1, 2], [0])
    both = gloss_embeddings(cache, graph, [1, 2, 3], [0, "last4"])
    assert enc.texts == 3 + 3  # 1 and 2 for last4, 3 for both views, in one encode
    np.testing.assert_array_equal(both[0], both["last4"])  # a static encoder: layer 0 is its last four
    assert enc.texts == 6


def test_a_killed_run_keeps_its_finished_parts(setup, monkeypatch):
    graph, enc, cache = setup
    real = glosses._encode_glosses
    calls = []

    def dies_second_time(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(glosses, "_encode_glosses", dies_second_time)
    with pytest.raises(KeyboardInterrupt):
        gloss_embeddings(cache, graph, None, [0])
    assert enc.texts == 4  # the first part (GLOSS_BLOCK senses) was stored
    monkeypatch.setattr(glosses, "_encode_glosses", real)
    every = gloss_embeddings(cache, graph, None, [0])[0]
    assert enc.texts == len(graph.keys)
    np.testing.assert_allclose(every, reference(graph, CountingTexts(enc.table), None), rtol=1e-6)


def test_two_runs_adding_to_one_block_keep_both(setup):
    graph, enc, cache = setup
    other = EncodingCache(enc, root=cache.root)  # another process on the same cache
    gloss_embeddings(cache, graph, [0], [0])
    gloss_embeddings(other, graph, [2], [0])
    before = enc.texts
    got = gloss_embeddings(cache, graph, [2, 0], [0])[0]
    assert enc.texts == before
    np.testing.assert_allclose(got, reference(graph, enc, [2, 0]), rtol=1e-6)


def test_a_whole_block_cached_before_per_sense_caching_is_read(setup):
    graph, enc, cache = setup
    from contextlens.encoders.encoding_cache import key_of

    # what version 1 wrote for block 1 (senses 4..7): the whole block under this name
    name = key_of(["gloss-block", glosses.GLOSS_VERSION, "0", "float32", graph.digest, 4, 1])
    stored = np.arange(12, dtype=np.float32).reshape(4, 3)
    cache.save_array("glosses", name, vectors=stored)
    got = gloss_embeddings(cache, graph, [6, 4], [0])[0]
    assert enc.texts == 0
    np.testing.assert_array_equal(got, stored[[2, 0]])


def test_a_row_outside_wordnet_is_refused(setup):
    graph, enc, cache = setup
    from contextlens.errors import InputError

    with pytest.raises(InputError, match="sense row 11 .* 0..10"):
        gloss_embeddings(cache, graph, [3, 11], [0])
    assert enc.texts == 0


def test_progress_counts_the_senses_to_encode(setup):
    graph, enc, cache = setup
    gloss_embeddings(cache, graph, [0, 1], [0])
    seen = []
    gloss_embeddings(cache, graph, None, [0], progress=lambda done, total: seen.append((done, total)))
    assert seen[0] == (0, 9) and seen[-1] == (9, 9)  # 11 senses, 2 of them cached
    seen.clear()
    gloss_embeddings(cache, graph, [3, 0], [0], progress=lambda done, total: seen.append((done, total)))
    assert seen == []  # all cached: nothing to show
