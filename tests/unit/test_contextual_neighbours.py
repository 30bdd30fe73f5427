"""Contextual neighbours on a toy table: the usage of *bank* beside river words lists river
words, beside money words money words; the reference table is built once per encoder and
layer, cached on disk (one file per layer, nothing half-written) and reused."""

from __future__ import annotations

import numpy as np
import pytest

from contextlens import EmbeddingTable, make_encoder
from contextlens.analysis.neighbours import contextual_neighbours, nearest, reference_table
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


def test_the_reference_table_is_cached_per_layer_and_reused(tmp_path, monkeypatch):
    enc = make_encoder("attention", vectors=TABLE, include_self=True)
    first = reference_table(enc, 1, WORDS, root=tmp_path)
    files = sorted(p.name for p in tmp_path.rglob("*") if p.is_file())
    assert files == ["identity.json", "layer0.npz", "layer1.npz"]  # every layer at once, no temp file left
    np.testing.assert_array_equal(reference_table(enc, 0, WORDS, root=tmp_path).vectors, TABLE.vectors[
        [TABLE.key_to_index[w] for w in first.keys]])  # layer 0 of a word alone is its table row

    def no_encoding(*args, **kwargs):
        raise AssertionError("the cached table should be read, not rebuilt")

    monkeypatch.setattr(enc, "encode", no_encoding)
    again = reference_table(enc, -1, WORDS, root=tmp_path)
    assert again.keys == first.keys
    np.testing.assert_array_equal(again.vectors, first.vectors)


def test_a_damaged_cache_file_is_rebuilt(tmp_path):
    enc = make_encoder("attention", vectors=TABLE, include_self=True)
    first = reference_table(enc, 1, WORDS, root=tmp_path)
    (path,) = tmp_path.rglob("layer1.npz")
    path.write_bytes(b"not an npz")
    np.testing.assert_array_equal(reference_table(enc, 1, WORDS, root=tmp_path).vectors, first.vectors)


def test_bad_input_says_what_to_do(tmp_path):
    enc = make_encoder("attention", vectors=TABLE, include_self=True)
    with pytest.raises(InputError, match="dim 3"):
        contextual_neighbours(enc, "the river bank", "bank", reference=EmbeddingTable(["a"], [[1.0, 2.0, 3.0]]))
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
