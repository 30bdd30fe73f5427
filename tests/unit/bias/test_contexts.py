"""CEAT's contexts encoded from a corpus are cached on disk (kind ``ceat``), keyed by what
determines them: a second run reads them and gives the same numbers to the last digit; any
change of encoder, corpus, words, sample size or seed is a miss (issue 23 §2)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from contextlens.bias import WordSets, ceat_by_layer
from contextlens.bias import contexts as contexts_module
from contextlens.bias.contexts import CACHE, cached_contexts, contexts_from_corpus
from contextlens.disk_cache import KINDS, DiskCache
from contextlens.encoders.mixing import SelfAttention
from contextlens.vectors import EmbeddingTable

WORDS = ["rose", "tulip", "ant", "flea", "love", "peace", "filth", "grief"]
SETS = WordSets("tiny", X=("rose", "tulip"), Y=("ant", "flea"), A=("love", "peace"), B=("filth", "grief"))
TABLE = EmbeddingTable([*WORDS, "the", "is", "a", "of"],
                       np.random.default_rng(0).normal(size=(12, 6)).astype(np.float32))


def _corpus(path, seed=0, n=80):
    rng = np.random.default_rng(seed)
    fill = ["the", "is", "a", "of"]
    lines = []
    for i in range(n):
        words = list(rng.choice(fill, size=int(rng.integers(2, 7))))
        words.insert(int(rng.integers(0, len(words) + 1)), WORDS[i % len(WORDS)])
        lines.append(" ".join(words))
    path.write_text("\n".join(lines) + "\n")
    return path


class Counting(SelfAttention):
    """A self-attention encoder that counts the texts it encodes."""

    encoded = 0

    def encode(self, texts, *, targets=None):
        Counting.encoded += len(texts)
        return super().encode(texts, targets=targets)


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        a[k].keys() == b[k].keys() and all(np.array_equal(a[k][w], b[k][w]) and a[k][w].dtype == b[k][w].dtype
                                           for w in a[k]) for k in a)


def test_a_second_run_reads_the_cache_and_gives_the_same_numbers_to_the_last_digit(tmp_path):
    corpus, root = _corpus(tmp_path / "corpus.txt"), tmp_path / "cache"
    encoder = Counting(TABLE, include_self=True, n_layers=2)
    Counting.encoded = 0
    cold = cached_contexts(encoder, corpus, WORDS, per_word=6, seed=3, root=root)
    assert Counting.encoded == 6 * len(WORDS)
    warm = cached_contexts(encoder, corpus, WORDS, per_word=6, seed=3, root=root)
    assert Counting.encoded == 6 * len(WORDS)  # nothing encoded again
    assert _same(cold, warm) and sorted(cold) == [0, 1, 2]
    # what it stands for: the contexts encoded without a cache
    direct = contexts_from_corpus(encoder, corpus.read_text().splitlines(), WORDS, per_word=6, seed=3)
    assert _same(cold, direct)
    rows = [[r.as_dict() for r in ceat_by_layer(c, SETS, model="toy", samples=500, seed=1)]
            for c in (cold, warm)]
    assert json.dumps(rows[0]) == json.dumps(rows[1])  # every digit
    entries = DiskCache(CACHE, root).entries()
    assert len(entries) == 1 and json.loads((entries[0].path / "contexts.json").read_text())["per_word"] == 6


@pytest.mark.parametrize("change", ["per_word", "seed", "word order", "corpus", "encoder", "layers"])
def test_what_determines_the_contexts_keys_them(tmp_path, change):
    corpus, root = _corpus(tmp_path / "corpus.txt"), tmp_path / "cache"
    settings = {"encoder": Counting(TABLE, include_self=True, n_layers=2), "source": corpus, "words": WORDS,
                "per_word": 6, "seed": 3, "root": root}
    first = cached_contexts(**settings)
    if change == "corpus":
        _corpus(corpus, seed=1)  # the same file name, other sentences
    elif change == "encoder":
        other = EmbeddingTable(TABLE.keys, TABLE.vectors * 2)
        settings["encoder"] = Counting(other, include_self=True, n_layers=2)
    elif change == "layers":
        settings["encoder"] = Counting(TABLE, include_self=True, n_layers=1)
    elif change == "word order":
        settings["words"] = WORDS[::-1]  # each word's sample is drawn in turn from one generator
    else:
        settings[change] += 1
    Counting.encoded = 0
    again = cached_contexts(**settings)
    assert Counting.encoded > 0 and len(DiskCache(CACHE, root).entries()) == 2
    assert not _same(first, again)


def test_lines_in_memory_are_encoded_every_time_and_nothing_is_written(tmp_path):
    lines = _corpus(tmp_path / "corpus.txt").read_text().splitlines()
    encoder, root = Counting(TABLE, include_self=True), tmp_path / "cache"
    Counting.encoded = 0
    for _ in range(2):
        cached_contexts(encoder, lines, WORDS, per_word=4, root=root)
    assert Counting.encoded == 2 * 4 * len(WORDS) and DiskCache(CACHE, root).entries() == []


def test_a_damaged_entry_is_encoded_again(tmp_path):
    corpus, root = _corpus(tmp_path / "corpus.txt"), tmp_path / "cache"
    encoder = Counting(TABLE, include_self=True)
    first = cached_contexts(encoder, corpus, WORDS, per_word=5, root=root)
    entry = DiskCache(CACHE, root).entries()[0].path
    (entry / "vectors.npy").write_bytes(b"garbage")  # the marker's checksum no longer matches
    Counting.encoded = 0
    assert _same(cached_contexts(encoder, corpus, WORDS, per_word=5, root=root), first)
    assert Counting.encoded == 5 * len(WORDS)


def test_cache_info_lists_the_kind():
    assert CACHE in KINDS and "CEAT" in KINDS[CACHE].what
    assert contexts_module.CACHE_VERSION >= 1
