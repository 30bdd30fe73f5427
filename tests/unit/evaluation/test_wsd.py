"""WSD scoring (Scorer.java's rules), 1-NN over sense embeddings, SemCor averaging."""

import numpy as np
import pytest

from contextlens.datasets import WsdInstance, WsdSentence
from contextlens.encoders.static import StaticEncoder
from contextlens.errors import EmptyInputError, InputError
from contextlens.evaluation.wsd import nearest_sense, parse_view, score_wsd, sense_embeddings, view_vectors
from contextlens.vectors import EmbeddingTable


def test_scorer_counts_like_scorer_java():
    gold = {"i1": ["a%1"], "i2": ["b%1", "b%2"], "i3": ["c%1"], "i4": ["d%1"]}
    answers = {
        "i1": ["a%1"],          # right
        "i2": ["b%2"],          # right: any gold key counts
        "i3": ["c%1", "c%9"],   # two answers, one right: 0.5 right, 0.5 wrong
        "zz": ["a%1"],          # not in the gold: ignored
    }                           # i4 unanswered: lowers recall only
    s = score_wsd(gold, answers)
    assert s["precision"] == pytest.approx(2.5 / 3)
    assert s["recall"] == pytest.approx(2.5 / 4)
    p, r = 2.5 / 3, 2.5 / 4
    assert s["f1"] == pytest.approx(2 * p * r / (p + r))
    assert (s["n"], s["answered"]) == (4, 3)


def test_scorer_zero_and_duplicates():
    assert score_wsd({"i": ["a"]}, {"i": ["b"]})["f1"] == 0.0
    assert score_wsd({"i": ["a"]}, {})["precision"] == 0.0
    # the same answer twice is one answer (Java reads answers into a set)
    assert score_wsd({"i": ["a"]}, {"i": ["a", "a"]})["precision"] == 1.0
    with pytest.raises(EmptyInputError):
        score_wsd({}, {"i": ["a"]})


def test_nearest_sense_picks_highest_cosine_among_seen():
    emb = {"k1": np.array([1.0, 0.0]), "k2": np.array([1.0, 1.0]), "k3": np.array([0.0, 1.0])}
    assert nearest_sense(np.array([3.0, 1.0]), ["k1", "k2"], emb) == "k1"      # cos 0.949 vs 0.894
    assert nearest_sense(np.array([1.0, 1.2]), ["k1", "k2", "k3"], emb) == "k2"
    assert nearest_sense(np.array([1.0, 1.0]), ["k9"], emb) is None
    assert nearest_sense(np.array([np.nan, 1.0]), ["k1"], emb) is None


def test_views():
    v = np.arange(2 * 6 * 1, dtype=float).reshape(2, 6, 1)
    assert view_vectors(v, "last4")[:, 0].tolist() == [3.5, 9.5]
    assert view_vectors(v, -1)[:, 0].tolist() == [5.0, 11.0]
    with pytest.raises(InputError):
        view_vectors(v, 6)
    with pytest.raises(InputError):
        parse_view("first2")


def test_sense_embeddings_average_each_key():
    table = EmbeddingTable(["bank", "river", "money"], [[1, 0], [0, 1], [2, 2]])
    inst = lambda i, idx, keys: WsdInstance(f"t{i}", "bank", "NOUN", idx, keys)  # noqa: E731
    sents = [
        WsdSentence("s1", ("river", "bank"), ("river", "bank"), ("NOUN", "NOUN"),
                    (inst(1, 0, ("river%1",)), inst(2, 1, ("bank%1", "bank%2")))),
        WsdSentence("s2", ("money", "zzz"), ("money", "zzz"), ("NOUN", "NOUN"),
                    (inst(3, 0, ("bank%1",)), inst(4, 1, ("zzz%1",)))),
    ]
    out = sense_embeddings(StaticEncoder(table), sents, views=[0])[0]
    got = dict(zip(out["keys"].tolist(), out["vectors"].tolist()))
    assert got == {"bank%1": [1.5, 1.0], "bank%2": [1.0, 0.0], "river%1": [0.0, 1.0]}  # zzz: no vector
    assert dict(zip(out["keys"].tolist(), out["counts"].tolist()))["bank%1"] == 2
    assert out["sentences"] == 2
    assert sense_embeddings(StaticEncoder(table), sents, views=[0], limit=1)[0]["keys"].tolist() == [
        "bank%1", "bank%2", "river%1"]


def test_unknown_gold_keys_are_an_error():
    from nltk.corpus.reader.wordnet import WordNetError

    from contextlens.evaluation.wsd import check_gold_keys

    class FakeWordNet:
        def lemma_from_key(self, key):
            if key.startswith("bad"):
                raise WordNetError(f"no lemma for {key}")
            return key

    check_gold_keys(FakeWordNet(), {"i1": ["good%1:00::"]}, "toy")
    with pytest.raises(InputError, match="1 gold sense key"):
        check_gold_keys(FakeWordNet(), {"i1": ["good%1"], "i2": ["bad%2"]}, "toy")


def test_only_keys_learns_the_same_vectors_and_skips_other_sentences():
    table = EmbeddingTable(["bank", "river", "money"], [[1, 0], [0, 1], [2, 2]])
    inst = lambda i, idx, keys: WsdInstance(f"t{i}", "bank", "NOUN", idx, keys)  # noqa: E731
    sents = [
        WsdSentence("s1", ("river", "bank"), ("river", "bank"), ("NOUN", "NOUN"),
                    (inst(1, 0, ("river%1",)), inst(2, 1, ("bank%1", "bank%2")))),
        WsdSentence("s2", ("river", "money"), ("river", "money"), ("NOUN", "NOUN"),
                    (inst(3, 0, ("river%1",)), inst(4, 1, ("money%1",)))),
        WsdSentence("s3", ("money", "bank"), ("money", "bank"), ("NOUN", "NOUN"),
                    (inst(5, 0, ("bank%1",)),)),
    ]
    encoded: list = []

    class Counting(StaticEncoder):
        def encode(self, texts, **kw):
            encoded.extend(texts)
            return super().encode(texts, **kw)

    full = sense_embeddings(StaticEncoder(table), sents, views=[0])[0]
    some = sense_embeddings(Counting(table), sents, views=[0], only_keys={"bank%1", "bank%3"})[0]
    assert some["keys"].tolist() == ["bank%1"]
    want = dict(zip(full["keys"].tolist(), full["vectors"].tolist()))
    assert dict(zip(some["keys"].tolist(), some["vectors"].tolist()))["bank%1"] == want["bank%1"]
    assert len(encoded) == 2 and not any("money" in t and "river" in t for t in encoded)  # s2 never encoded
    assert some["sentences"] == 3
