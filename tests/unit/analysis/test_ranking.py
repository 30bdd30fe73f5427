"""Static vs contextual ranking of word pairs, with numbers worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from contextlens.analysis.ranking import count_inversions, rank_descending, rank_pairs, read_pairs
from contextlens.encoders.base import Encoder, Encoding
from contextlens.encoders.static import StaticEncoder
from contextlens.encoders.targets import keep_targets
from contextlens.errors import EmptyInputError, FileFormatError, InputError, TargetNotFoundError
from contextlens.text import tokenize
from contextlens.vectors import EmbeddingTable


class DictEncoder(Encoder):
    """Each known word gets a fixed static and contextual vector; unknown words are dropped."""

    name = "dict"
    dim, layer_ids = 2, (0, 1)
    VECTORS = {  # word: (static, contextual)
        "the": ([1, 1], [1, 1]),
        "a": ([1, 0], [1, 0]), "b": ([1, 0], [0, 1]),
        "x": ([0, 1], [1, 1]), "y": ([1, 1], [1, 0]),
    }

    def params(self):
        return {"encoder": self.name}

    def static_vectors(self, words):
        return np.array([self.VECTORS[w][0] for w in words], dtype=float)

    def _encode_texts(self, texts, chosen):
        out = []
        for text, keep in zip(texts, chosen):
            words = [w for w in tokenize(text) if w.text in self.VECTORS]
            layers = np.array([[self.VECTORS[w.text][k] for w in words] for k in (0, 1)], dtype=float)
            layers = layers.reshape(2, len(words), 2)
            enc = Encoding(text, words, layers, layer_names=("static", "context"), meta={"encoder": "dict"})
            out.append(keep_targets(enc, text, keep))
        return out


# P1 (a, b): static 1, contextual 0; P2 (a, x): 0 and 1/√2; P3 (a, y): 1/√2 and 1
PAIRS = [("a", "b", 0.0), ("a", "x", 5.0), ("a", "y", 10.0)]


def test_count_inversions_and_ranks_by_hand():
    assert count_inversions([1, 2, 3], [3, 2, 1]) == 3
    assert count_inversions([1, 2, 3], [1, 2, 3]) == 0
    assert count_inversions([1, 1, 2], [2, 1, 3]) == 0  # a tie is not an inversion
    assert rank_descending([0.2, 0.9, 0.2]).tolist() == [2.5, 1.0, 2.5]


def test_rank_pairs_by_hand():
    r = rank_pairs(DictEncoder(), PAIRS, template="the {word}", top=1)
    assert r["layer_name"] == "context" and r["n_pairs"] == 3
    assert [p["static"] for p in r["pairs"]] == pytest.approx([1, 0, 2 ** -0.5])
    assert [p["contextual"] for p in r["pairs"]] == pytest.approx([0, 2 ** -0.5, 1])
    assert [p["static_rank"] for p in r["pairs"]] == [1, 3, 2]
    assert [p["contextual_rank"] for p in r["pairs"]] == [3, 2, 1]
    assert [p["shift"] for p in r["pairs"]] == [-2, 1, 1]
    # d = (-2, 1, 1): rho = 1 - 6·6 / (3·8) = -0.5; tau = (1 concordant - 2 discordant) / 3
    assert r["spearman"] == pytest.approx(-0.5)
    assert r["kendall_tau"] == pytest.approx(-1 / 3)
    assert (r["inversions"], r["comparisons"]) == (2, 3)
    assert [(m["word1"], m["word2"]) for m in r["moved"]] == [("a", "b")]
    # gold orders the pairs as the contextual cosines do
    assert r["gold"]["contextual_spearman"] == pytest.approx(1.0)
    assert r["gold"]["static_spearman"] == pytest.approx(-0.5)


def test_static_layer_against_itself():
    r = rank_pairs(DictEncoder(), [p[:2] for p in PAIRS], template="the {word}", layer=0)
    assert r["spearman"] == pytest.approx(1.0) and r["inversions"] == 0 and r["gold"] is None
    assert r["moved"] == []  # no pair changed rank


def test_template_word_is_found_by_position():
    # for the word 'a', 'a the a' has it twice: the template's slot picks one (no ambiguity error)
    r = rank_pairs(DictEncoder(), PAIRS, template="a the {word}")
    assert r["pairs"][0]["contextual"] == pytest.approx(0.0)


def test_missing_words():
    pairs = [("a", "b"), ("a", "zebra"), ("a", "x")]
    with pytest.raises(TargetNotFoundError, match="'zebra' has no vector in its template sentence"):
        rank_pairs(DictEncoder(), pairs, template="the {word}")
    r = rank_pairs(DictEncoder(), pairs, template="the {word}", missing="skip")
    assert r["n_pairs"] == 2 and [(s["word1"], s["word2"]) for s in r["skipped"]] == [("a", "zebra")]
    table = EmbeddingTable(["a", "b", "the"], np.eye(3))
    with pytest.raises(TargetNotFoundError, match="'zebra' is in the sentence but not in"):
        rank_pairs(StaticEncoder(table), [("a", "b"), ("a", "zebra")])


def test_bad_arguments():
    with pytest.raises(InputError, match="exactly once"):
        rank_pairs(DictEncoder(), PAIRS, template="no slot here")
    with pytest.raises(InputError, match="at least 2 word pairs"):
        rank_pairs(DictEncoder(), PAIRS[:1], template="the {word}")
    with pytest.raises(InputError, match="layer 2 is not available"):
        rank_pairs(DictEncoder(), PAIRS, template="the {word}", layer=2)


def test_read_pairs(tmp_path):
    p = tmp_path / "pairs.txt"
    p.write_text("# simlex-style\nold new 1.58\n\nsmart\tintelligent 9.2\n")
    assert read_pairs(p) == [("old", "new", 1.58), ("smart", "intelligent", 9.2)]
    p.write_text("old new\nsmart intelligent\n")
    assert read_pairs(p) == [("old", "new", None), ("smart", "intelligent", None)]
    p.write_text("old new 1\nsmart intelligent\n")
    with pytest.raises(FileFormatError, match=r"pairs.txt, line 2: some lines have a score"):
        read_pairs(p)
    p.write_text("old new high\n")
    with pytest.raises(FileFormatError, match=r"line 1: the score 'high' is not a number"):
        read_pairs(p)
    p.write_text("old\n")
    with pytest.raises(FileFormatError, match="got 1 fields"):
        read_pairs(p)
    p.write_text("# nothing\n")
    with pytest.raises(EmptyInputError):
        read_pairs(p)
