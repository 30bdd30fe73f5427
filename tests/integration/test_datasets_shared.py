"""The loaders on the real shared data (CONTEXTLENS_DATA): published counts, WordNet 3.0
agreement, SemCor against its derived TSVs, and ``contextlens data list``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from contextlens.datasets import (
    ANALOGY_FILES,
    COARSE_WORDS,
    SIMILARITY_FILES,
    DatasetMissingError,
    candidate_keys,
    coarse_classes,
    coarsewsd_words,
    dataset_status,
    gensim_pairs_file,
    load_analogies,
    load_coarsewsd,
    load_scws,
    load_semcor,
    load_similarity,
    load_wic,
    load_wic_tsv,
    load_wsd_eval,
    most_frequent_key,
    unknown_keys,
    wordnet,
)

pytestmark = pytest.mark.data


def test_wic_counts(data_dir):
    train, dev = load_wic(data_dir, "train"), load_wic(data_dir, "dev")
    assert (len(train), len(dev)) == (5428, 638)
    assert Counter(it.label for it in train) == {True: 2714, False: 2714}
    assert {it.pos for it in train} == {"N", "V"}
    if not (data_dir / "wic/test/test.data.txt").exists():
        with pytest.raises(DatasetMissingError, match="wic/test/test.data.txt"):
            load_wic(data_dir, "test")


def test_wic_tsv_counts(data_dir):
    assert [len(load_wic_tsv(data_dir, s)) for s in ("train", "dev", "test")] == [2828, 389, 1306]
    assert {it.label for it in load_wic_tsv(data_dir, "test")} == {None}


def test_scws_sample(data_dir):
    items = load_scws(data_dir, "scws/ratings.sample.txt")
    assert len(items) == 40 and len(items[0].ratings) == 10
    assert items[0].context1[items[0].index1] == items[0].word1 == "Brazil"
    assert all(it.context2[it.index2].lower() == it.word2.lower() for it in items)
    if not (data_dir / "scws/ratings.txt").exists():
        with pytest.raises(DatasetMissingError, match="scws/ratings.txt"):
            load_scws(data_dir)


@pytest.fixture(scope="module")
def wn(data_dir):
    return wordnet(data_dir)


def test_semeval2007_and_wordnet(data_dir, wn):
    sentences, gold = load_wsd_eval(data_dir, "semeval2007")
    instances = [i for s in sentences for i in s.instances]
    assert (len(sentences), len(instances), len(gold)) == (135, 455, 455)
    assert all(s.tokens[i.index] for s in sentences for i in s.instances)
    keys = [k for ks in gold.values() for k in ks]
    assert len(keys) == 459 and unknown_keys(wn, keys) == []  # every gold key is a WordNet 3.0 key
    assert all(set(gold[i.id]) <= set(candidate_keys(wn, i.lemma, i.pos)) for i in instances)
    # WordNet first sense: 55.2 F1 on SemEval-2007, the "WN 1st sense" figure of the literature
    correct = sum(most_frequent_key(wn, i.lemma, i.pos) in gold[i.id] for i in instances)
    assert round(100 * correct / len(instances), 1) == 55.2


def test_wordnet_helpers(data_dir, wn, caplog):
    assert wn.get_version() == "3.0"
    assert candidate_keys(wn, "bank", "NOUN")[:2] == ["bank%1:17:01::", "bank%1:14:00::"]
    assert most_frequent_key(wn, "take place", "VERB") == "take_place%2:30:00::"
    assert candidate_keys(wn, "good", "ADJ")[1] == "good%5:00:00:ample:00"  # satellites count as ADJ
    assert most_frequent_key(wn, "qwertyzz", "NOUN") is None
    assert "'qwertyzz' is not a NOUN in WordNet 3.0" in caplog.text
    assert wordnet(data_dir) is wn  # cached per folder


def _tsv(path: Path, docs: set[str]) -> list[list[str]]:
    with open(path, encoding="utf-8") as f:
        next(f)
        return [row for row in (line.rstrip("\n").split("\t") for line in f) if row[0] in docs]


def test_semcor_sample_matches_the_derived_tsvs(data_dir):
    docs = {"brown1/br-a01", "brown2/br-h13", "brownv/br-a18"}
    sentences = list(load_semcor(data_dir, documents=docs))
    tsv_sentences = _tsv(data_dir / "wsd/semcor/semcor3.0_sentences.tsv", docs)
    assert {s.id: " ".join(s.tokens) for s in sentences} == {f"{r[0]}.s{r[1]}": r[2] for r in tsv_sentences}
    assert len(sentences) == len(tsv_sentences)
    ours = [(s.id.rsplit(".s", 1)[0], s.tokens[i.index], i.lemma, " ".join(i.keys))
            for s in sentences for i in s.instances]
    theirs = [(row[0], row[4], row[5], row[7])
              for row in _tsv(data_dir / "wsd/semcor/semcor3.0_annotations.tsv",
                                                               docs)]
    assert sorted(ours) == sorted(theirs) and len(ours) > 1000


@pytest.mark.slow
def test_semcor_full_counts(data_dir, wn):
    """The whole archive: 352 documents, 37,176 sentences, 234,136 tagged terms (README)."""
    docs, n_sentences, keys = set(), 0, []
    for s in load_semcor(data_dir):
        docs.add(s.id.rsplit(".s", 1)[0])
        n_sentences += 1
        keys.extend(k for i in s.instances for k in i.keys)
    assert (len(docs), n_sentences, len(keys)) == (352, 37176, 234136)
    assert len(unknown_keys(wn, keys)) == 9420  # WordNet 1.6/2.x keys the conversion could not map


def test_coarsewsd20(data_dir):
    words = coarsewsd_words(data_dir)
    assert words == sorted(COARSE_WORDS) and len(words) == 20
    items = load_coarsewsd(data_dir, "bank", "train")
    assert {it.label for it in items} == set(coarse_classes(data_dir, "bank").values())
    assert all(it.tokens[it.index].startswith("bank") for it in items[:50])
    assert sum(len(load_coarsewsd(data_dir, w, "train")) for w in words) == 23370


EXPECTED_PAIRS = {"ws353": 353, "ws353-all": 353, "ws353-sim": 203, "ws353-rel": 252, "men-dev": 2000,
                  "rg65": 65, "mc30": 30, "mturk287": 287, "yp130": 130}


@pytest.mark.parametrize("name", sorted(EXPECTED_PAIRS))
def test_similarity_counts_and_gensim_files(data_dir, tmp_path, name):
    path = data_dir / SIMILARITY_FILES[name]
    pairs = load_similarity(path)
    assert len(pairs) == EXPECTED_PAIRS[name]
    lines = [ln for ln in gensim_pairs_file(path, tmp_path).read_text().splitlines()
             if not ln.startswith("#")]
    if name == "ws353":
        lines = lines[1:]  # gensim skips the header line of the original (its score is not a number)
    assert [tuple(ln.split("\t")[:2]) for ln in lines] == [(p.word1, p.word2) for p in pairs]
    if name == "men-dev":
        assert pairs[0].word1 == "berry" and not any(p.word1.endswith("-n") for p in pairs)


def test_google_analogies(data_dir):
    sections = load_analogies(data_dir / ANALOGY_FILES["google"])
    assert len(sections) == 14 and sum(len(s.questions) for s in sections) == 19544
    assert sections[0].name == "capital-common-countries" and sections[-1].name == "gram9-plural-verbs"


def test_status_of_the_shared_folder(data_dir):
    rows = {r["name"]: r for r in dataset_status(data_dir)}
    for name in ("wic", "wsd", "semcor", "coarsewsd20", "similarity", "analogy", "wordnet"):
        assert rows[name]["complete"], (name, rows[name]["missing"])
    assert rows["scws"]["present"]
    assert "scws/ratings.sample.txt" in rows["scws"]["optional_present"]


def test_data_list_cli(data_dir):
    import typer
    from typer.testing import CliRunner

    from contextlens.cli import data

    app = typer.Typer()
    app.callback()(lambda: None)
    data.register(app)
    result = CliRunner().invoke(app, ["data", "list", "--data-dir", str(data_dir), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["data_dir"] == str(data_dir)
    assert {r["name"]: r["complete"] for r in out["datasets"]}["wic"] is True
    result = CliRunner().invoke(app, ["data", "list", "--data-dir", str(data_dir)])
    assert result.exit_code == 0 and "wic" in result.stdout and "complete" in result.stdout
