"""Contextual neighbours on a toy table: the usage of *bank* beside river words lists river
words, beside money words money words; a model's reference table is built once, cached on
disk (one file per layer, built whole, checked by content, least recently used going past
the bound) and reused; one over a static table is never written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from contextlens import EmbeddingTable, make_encoder
from contextlens.analysis.neighbours import contextual_neighbours, nearest, reference_table
from contextlens.build_marker import check_marker
from contextlens.encoders.base import Encoder
from contextlens.errors import InputError

WORDS = ["river", "water", "shore", "money", "loan", "cash", "bank", "the", "my"]
TABLE = EmbeddingTable(WORDS, [[3, 0.2], [2, 0.1], [2.5, 0.3], [0.2, 3], [0.1, 2], [0.3, 2.5], [1, 1],
                               [1, 1.1], [1.1, 1]], name="toy")


@pytest.mark.parametrize("include_self", [True, False])
def test_bank_lists_river_words_by_the_river_and_money_words_by_the_loan(tmp_path, include_self):
    enc = make_encoder("attention", vectors=TABLE, include_self=include_self)
    river = contextual_neighbours(enc, "the river bank water", "bank", k=3, words=WORDS, root=tmp_path)
    loan = contextual_neighbours(enc, "my money bank loan", "bank", k=3, words=WORDS, root=tmp_path)
    assert {n["word"] for n in river["neighbours"]} == {"river", "water", "shore"}
    assert {n["word"] for n in loan["neighbours"]} == {"money", "loan", "cash"}
    assert river["word"] == "bank" and river["layer"] == 1 and river["layer_name"] == "attention 1"
    # a word alone may attend to itself: its own row; else it has nothing to mix and the table row stands in
    assert river["reference"].endswith("words alone" if include_self else "table rows")


def test_neighbours_are_the_centred_cosines_computed_directly(tmp_path):
    enc = make_encoder("attention", vectors=TABLE, include_self=True)
    r = contextual_neighbours(enc, "the river bank water", "bank", k=8, words=WORDS, root=tmp_path)
    ref = enc.encode(WORDS)  # each word alone
    rows = np.stack([e.layers[1, 0] for e in ref]).astype(np.float64)  # (words, dim)
    usage = enc.encode(["the river bank water"])[0].layers[1, 2].astype(np.float64)  # (dim,)
    mean = rows.mean(0)
    cos = (rows - mean) @ (usage - mean) / np.linalg.norm(rows - mean, axis=1) / np.linalg.norm(usage - mean)
    expected = sorted(((w, c) for w, c in zip(WORDS, cos) if w != "bank"), key=lambda x: -x[1])
    assert [n["word"] for n in r["neighbours"]] == [w for w, _ in expected]
    np.testing.assert_allclose([n["cosine"] for n in r["neighbours"]], [c for _, c in expected], atol=1e-6)


def test_contrast_ranks_by_the_usage_cosine_minus_lambda_times_the_words_own(tmp_path):
    # the definition computed by hand: centred cosines to the usage u and to the word's own reference row t
    enc = make_encoder("attention", vectors=TABLE, include_self=True)
    r = contextual_neighbours(enc, "the river bank water", "bank", k=8, words=WORDS, root=tmp_path,
                              contrast=0.5)
    rows = np.stack([e.layers[1, 0] for e in enc.encode(WORDS)]).astype(np.float64)  # (words, dim), alone
    usage = enc.encode(["the river bank water"])[0].layers[1, 2].astype(np.float64)  # (dim,)
    c = rows - rows.mean(0)
    unit = c / np.linalg.norm(c, axis=1, keepdims=True)
    u = unit @ ((usage - rows.mean(0)) / np.linalg.norm(usage - rows.mean(0)))  # (words,)
    t = unit @ unit[WORDS.index("bank")]  # (words,)
    expected = sorted(((w, su - 0.5 * st, su, st) for w, su, st in zip(WORDS, u, t) if w != "bank"),
                      key=lambda x: -x[1])
    assert r["contrast"] == 0.5 and [n["word"] for n in r["neighbours"]] == [e[0] for e in expected]
    for n, (_, score, cos, own) in zip(r["neighbours"], expected):
        assert (n["score"], n["cosine"], n["own_cosine"]) == pytest.approx((score, cos, own), abs=1e-6)
    plain = contextual_neighbours(enc, "the river bank water", "bank", k=8, words=WORDS, root=tmp_path)
    assert plain["contrast"] == 0.0 and set(plain["neighbours"][0]) == {"word", "cosine"}


def test_contrast_needs_the_word_in_the_reference_and_a_lambda_in_0_1(tmp_path):
    enc = make_encoder("attention", vectors=TABLE, include_self=True)
    without = EmbeddingTable(["river", "money", "loan"], TABLE.vectors[[0, 3, 4]], name="no bank")
    with pytest.raises(InputError, match="'bank' in the reference table \\(no bank\\)"):
        contextual_neighbours(enc, "the river bank", "bank", reference=without, contrast=0.5)
    with pytest.raises(InputError, match="contrast"):
        contextual_neighbours(enc, "the river bank", "bank", words=WORDS, root=tmp_path, contrast=1.5)


class ModelLike(Encoder):
    """A toy encoder that names a model in its ``params()``, as a transformer does (its
    reference is worth a place on disk); it encodes with ``inner``."""

    def __init__(self, inner, model: str = "toy-model", batch_size: int = 8):
        self.inner, self.model, self.batch_size, self.name = inner, model, batch_size, "model-like"
        self.calls = 0

    dim = property(lambda self: self.inner.dim)
    layer_ids = property(lambda self: self.inner.layer_ids)

    def params(self):
        return {**self.inner.params(), "encoder": "model-like", "model": self.model,
                "batch_size": self.batch_size}

    def static_vectors(self, words):
        return self.inner.static_vectors(words)

    def _encode_texts(self, texts, chosen):
        self.calls += 1
        return self.inner._encode_texts(texts, chosen)


def files(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob("*") if p.is_file() and not p.name.startswith("."))


def test_a_models_reference_is_cached_per_layer_and_reused(tmp_path):
    enc = ModelLike(make_encoder("attention", vectors=TABLE, include_self=True))
    first = reference_table(enc, 1, WORDS, root=tmp_path)
    assert files(tmp_path) == ["identity.json", "layer0.npz", "layer1.npz"]  # every layer at once
    (folder,) = [p for p in tmp_path.iterdir() if not p.name.startswith(".")]
    assert check_marker(folder) is None  # built whole, with checksums; no temporary folder left
    np.testing.assert_array_equal(reference_table(enc, 0, WORDS, root=tmp_path).vectors, TABLE.vectors[
        [TABLE.key_to_index[w] for w in first.keys]])  # layer 0 of a word alone is its table row
    calls = enc.calls
    other_batch = ModelLike(enc.inner, batch_size=64)  # a setting that cannot change a word alone
    again = reference_table(other_batch, -1, WORDS, root=tmp_path)
    assert enc.calls == calls and other_batch.calls == 0  # read, not encoded again
    assert again.keys == first.keys
    np.testing.assert_array_equal(again.vectors, first.vectors)


def test_a_damaged_cache_file_is_rebuilt(tmp_path):
    enc = ModelLike(make_encoder("attention", vectors=TABLE, include_self=True))
    first = reference_table(enc, 1, WORDS, root=tmp_path)
    (path,) = tmp_path.rglob("layer1.npz")
    data = path.read_bytes()
    path.write_bytes(data[:100] + bytes(255 - b for b in data[100:200]) + data[200:])  # same size
    np.testing.assert_array_equal(reference_table(enc, 1, WORDS, root=tmp_path).vectors, first.vectors)
    assert path.read_bytes() == data


@pytest.mark.parametrize("method, options", [("average", "alpha"), ("attention", "scale")])
def test_a_reference_over_a_static_table_is_never_written(tmp_path, monkeypatch, method, options):
    """The lab's growth scenario: twenty alphas (or scales) used to leave twenty reference
    tables on disk. Over a table the reference is computed in memory; with averaging it is
    the table's rows whatever alpha is."""
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path))
    rows = None
    for i in range(20):
        enc = make_encoder(method, vectors=TABLE, **{options: 0.05 * i}, **(
            {"include_self": True} if method == "attention" else {}))
        got = contextual_neighbours(enc, "the river bank water", "bank", k=3, words=WORDS)
        assert len(got["neighbours"]) == 3
        table = reference_table(enc, 1, WORDS)
        rows = table.vectors if rows is None else rows
        np.testing.assert_array_equal(table.vectors, rows)  # a word alone: the same whatever the setting
    assert files(tmp_path) == []


def test_twenty_models_references_stay_within_the_bound(tmp_path, monkeypatch):
    inner = make_encoder("attention", vectors=TABLE, include_self=True)
    reference_table(ModelLike(inner, model="m0"), 1, WORDS, root=tmp_path)
    one = sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file())
    monkeypatch.setenv("CONTEXTLENS_CACHE_LIMIT_NEIGHBOURS", str(3 * one))
    for i in range(1, 20):
        reference_table(ModelLike(inner, model=f"m{i}"), 1, WORDS, root=tmp_path)
        kept = [p for p in tmp_path.iterdir() if p.is_dir() and not p.name.startswith(".")]
        assert len(kept) <= 3 and sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file()) <= 3 * one
    newest = ModelLike(inner, model="m19")
    reference_table(newest, 1, WORDS, root=tmp_path)
    assert newest.calls == 0  # the most recent ones stayed


def test_bad_input_says_what_to_do(tmp_path):
    enc = make_encoder("attention", vectors=TABLE, include_self=True)
    with pytest.raises(InputError, match="dim 3"):
        contextual_neighbours(enc, "the river bank", "bank",
                              reference=EmbeddingTable(["a"], [[1.0, 2.0, 3.0]]))
    with pytest.raises(InputError, match="k"):
        contextual_neighbours(enc, "the river bank", "bank", k=0, words=WORDS, root=tmp_path)
    with pytest.raises(InputError, match="loan"):
        contextual_neighbours(enc, "the river bank", "loan", words=WORDS, root=tmp_path)


def test_nearest_leaves_the_word_itself_out_in_any_case():
    t = EmbeddingTable(["Bank", "river", "money"], [[1.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    found = nearest(t, np.array([1.0, 0.9]), 2, center=False, exclude=["bank"])
    assert [w for w, _ in found] == ["river", "money"]
    assert found[0][1] == pytest.approx(1.0 / np.hypot(1.0, 0.9))


def test_a_causal_encoder_reads_each_reference_word_after_a_line_break(tmp_path):
    """A causal model's first piece is its attention sink (SmolLM2 gave every word alone there
    almost one vector from layer 2 on): its reference words come after a line break, under
    another cache key than the same encoder's words alone."""
    from contextlens.analysis.neighbours import CAUSAL_PREFIX, _key
    from contextlens.encoders.mixing import SelfAttention

    class Seen(SelfAttention):
        texts: list = []

        def encode(self, texts, **kwargs):
            Seen.texts = Seen.texts + list(texts)
            return super().encode(texts, **kwargs)

    causal, plain = Seen(TABLE, causal=True), Seen(TABLE)
    table = reference_table(causal, 1, ["river", "money"], root=tmp_path / "c")
    assert CAUSAL_PREFIX == "\n" and {"\nriver", "\nmoney"} <= set(Seen.texts)
    assert table.name.endswith("words alone after a line break") and list(table.keys) == ["river", "money"]
    Seen.texts = []
    assert reference_table(plain, 1, ["river", "money"], root=tmp_path / "p").name.endswith("words alone")
    assert {"river", "money"} <= set(Seen.texts) and not any(t.startswith("\n") for t in Seen.texts)

    class Same:  # the same params, causal or not (a transformer's params do not name it): another key
        layer_ids, params = (0, 1), staticmethod(lambda: {"model": "m"})

    class CausalSame(Same):
        causal = True

    Same.causal = False
    assert _key(Same(), ["river"]) != _key(CausalSame(), ["river"])
