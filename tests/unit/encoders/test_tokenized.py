"""Target vectors from pre-tokenised items, and the on-disk cache."""

import numpy as np
import pytest

from contextlens.encoders.encoding_cache import EncodingCache
from contextlens.encoders.mixing import NeighbourAverage
from contextlens.encoders.static import StaticEncoder
from contextlens.encoders.tokenized import target_text, target_vectors
from contextlens.errors import InputError
from contextlens.vectors import EmbeddingTable

TABLE = EmbeddingTable(["the", "river", "bank", "u", "s", "money"],
                       [[1, 1], [0, 2], [2, 0], [4, 0], [0, 4], [3, 3]], name="toy")


def test_target_text_spans():
    text, (a, b) = target_text(("He", "sat", "by", "the", "bank", "."), 4)
    assert text[a:b] == "bank" and (a, b) == (14, 18)
    assert target_text(("Mr._Speaker", ","), 0) == ("Mr. Speaker ,", (0, 11))
    with pytest.raises(InputError):
        target_text(("a", "b"), 2)


def test_static_pooling_and_missing():
    items = [(("the", "bank"), 1), (("in", "U.S."), 1), (("zzz", "qqq"), 0), (("river_bank",), 0)]
    v = target_vectors(StaticEncoder(TABLE), items)
    assert v.shape == (4, 1, 2)
    assert v[0, 0].tolist() == [2, 0]
    assert v[1, 0].tolist() == [2, 2]          # "U.S." → u, ., s, . : mean of u and s (the dots are OOV)
    assert np.isnan(v[2]).all()                # no word known: NaN row
    assert v[3, 0].tolist() == [1, 1]          # river + bank


def test_mixed_layers_and_layer_choice():
    enc = NeighbourAverage(TABLE)              # layers: static, mixed (mean of the other words)
    items = [(("the", "river", "bank"), 2)]
    v = target_vectors(enc, items)
    assert v[0].tolist() == [[2, 0], [0.5, 1.5]]
    assert target_vectors(enc, items, layers=[-1])[0].tolist() == [[0.5, 1.5]]
    with pytest.raises(InputError):
        target_vectors(enc, items, layers=[2])


def test_cache_hits_and_corrupt_shard(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path))
    items = [(("the", "river", "bank"), i) for i in range(3)] + [(("money",), 0)]
    cache = EncodingCache(NeighbourAverage(TABLE))
    first = cache.targets("toy", items)
    assert (cache.hits, cache.misses) == (0, 1)
    again = EncodingCache(NeighbourAverage(TABLE))
    np.testing.assert_array_equal(again.targets("toy", items, layers=[0]), first[:, :1])
    assert (again.hits, again.misses) == (1, 0)
    shard = next((tmp_path / "encodings").rglob("*.npy"))
    shard.write_bytes(shard.read_bytes()[:-8])  # truncated
    third = EncodingCache(NeighbourAverage(TABLE))
    np.testing.assert_array_equal(third.targets("toy", items), first)
    assert third.misses == 1
    # another alpha is another encoder: a miss
    other = EncodingCache(NeighbourAverage(TABLE, alpha=0.5))
    other.targets("toy", items)
    assert other.misses == 1 and other.key != cache.key


def test_cache_named_arrays(tmp_path):
    cache = EncodingCache(StaticEncoder(TABLE), root=tmp_path)
    assert cache.load_array("semcor", "x") is None
    cache.save_array("semcor", "x", keys=np.array(["a%1", "b%2"]), vectors=np.ones((2, 3)))
    got = cache.load_array("semcor", "x")
    assert got["keys"].tolist() == ["a%1", "b%2"] and got["vectors"].shape == (2, 3)
    off = EncodingCache(StaticEncoder(TABLE), root=tmp_path, enabled=False)
    assert off.load_array("semcor", "x") is None


def test_encoders_folders_stay_within_the_bound_and_one_in_use_stays(tmp_path, monkeypatch):
    items = [(("the", "river", "bank"), 2)]
    first = EncodingCache(NeighbourAverage(TABLE, alpha=0.0), root=tmp_path)
    first.targets("toy", items)
    one = sum(p.stat().st_size for p in first.folder.rglob("*") if p.is_file())
    monkeypatch.setenv("CONTEXTLENS_CACHE_LIMIT_ENCODINGS", str(2 * one))
    keys = []
    for alpha in (0.1, 0.2, 0.3):
        cache = EncodingCache(NeighbourAverage(TABLE, alpha=alpha), root=tmp_path)
        cache.targets("toy", items)
        keys.append(cache.key)
        del cache  # released: its folder may go
    folders = {p.name for p in tmp_path.iterdir() if not p.name.startswith(".")}
    assert folders == {first.key, keys[-1]}  # the oldest is in use (its cache alive): it stays
    first_key = first.key
    del first
    last = EncodingCache(NeighbourAverage(TABLE, alpha=0.4), root=tmp_path)
    last.targets("toy", items)
    assert {p.name for p in tmp_path.iterdir() if not p.name.startswith(".")} == {keys[-1], last.key}
    assert first_key not in {p.name for p in tmp_path.iterdir()}


def test_a_models_batch_size_is_not_part_of_its_key():
    class Model(StaticEncoder):
        def __init__(self, batch_size):
            super().__init__(TABLE)
            self.batch_size = batch_size

        def params(self):
            return {**super().params(), "model": "toy", "batch_size": self.batch_size, "attention": False}

    assert EncodingCache(Model(8), enabled=False).key == EncodingCache(Model(64), enabled=False).key
    assert EncodingCache(NeighbourAverage(TABLE), enabled=False).key != EncodingCache(
        NeighbourAverage(TABLE, alpha=0.5), enabled=False).key
