"""Contextual neighbours leave the word's own forms out (unless --keep-forms); a distilled
reference table is read at the usage's layer."""

from __future__ import annotations

import pytest

from contextlens import EmbeddingTable, make_encoder
from contextlens.analysis.neighbours import contextual_neighbours, is_form, reference_at_layer
from contextlens.errors import InputError

WORDS = ["river", "water", "banks", "banking", "banker", "shore", "money", "bank", "the"]
TABLE = EmbeddingTable(WORDS, [[3, 0.2], [2, 0.1], [1.2, 1.0], [1.1, 1.2], [1.0, 1.1], [2.5, 0.3], [0.2, 3],
                               [1, 1], [1, 1.1]], name="toy")


@pytest.mark.parametrize(("word", "other", "form"), [
    ("bank", "banks", True), ("bank", "Banking", True), ("bankers", "bank", True), ("bank", "banco", False),
    ("bank", "bankrupt", False), ("run", "running", True), ("study", "studied", True), ("box", "boxes", True),
    ("car", "cares", False), ("bake", "baker", True), ("play", "playa", False), ("river", "rivers", True),
])
def test_is_form(word, other, form):
    assert is_form(word, other) is form


def test_forms_are_left_out_unless_kept(tmp_path):
    enc = make_encoder("attention", vectors=TABLE, include_self=True)
    default = contextual_neighbours(enc, "the river bank water", "bank", k=4, words=WORDS, root=tmp_path)
    kept = contextual_neighbours(enc, "the river bank water", "bank", k=4, words=WORDS, root=tmp_path,
                                 keep_forms=True)
    assert not {"banks", "banking", "banker"} & {n["word"] for n in default["neighbours"]}
    assert len(default["neighbours"]) == 4
    with_forms = [n["word"] for n in kept["neighbours"]]
    assert {"banks", "banking", "banker"} & set(with_forms)
    # what was left out is named: the forms that ranked above the last word listed
    assert {w for w in with_forms if is_form("bank", w)} <= set(default["forms_left_out"])
    assert set(default["forms_left_out"]) <= {"banks", "banking", "banker"}
    assert kept["forms_left_out"] == []


def test_reference_at_layer_picks_the_layer_file(tmp_path):
    for k in (3, 6):
        EmbeddingTable(["a", "b"], [[1.0, 0.0], [0.0, float(k)]],
                       name=f"minilm layer {k} mean (distilled)").save(
            tmp_path / f"t.layer{k}.npz")
    assert reference_at_layer(tmp_path / "t.npz", 6).vectors[1, 1] == 6.0
    assert reference_at_layer(tmp_path / "t.layer3.npz", 3).vectors[1, 1] == 3.0
    with pytest.raises(InputError, match="no reference table of layer 4 .*t.layer3.npz, t.layer6.npz"):
        reference_at_layer(tmp_path / "t.npz", 4)
    with pytest.raises(InputError, match="distilled at layer 3, the usage is read at layer 6"):
        reference_at_layer(tmp_path / "t.layer3.npz", 6)
    plain = tmp_path / "plain.npz"
    EmbeddingTable(["a"], [[1.0, 2.0]], name="my table").save(plain)
    assert reference_at_layer(plain, 6).name == "my table"  # not a distilled table: nothing to check
