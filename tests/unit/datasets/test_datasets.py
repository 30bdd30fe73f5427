"""Dataset loaders on small files written in each published format (WiC, WiC-TSV, SCWS,
the WSD framework, CoarseWSD-20) and the registry: paths, status, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contextlens.datasets import (
    DATASETS,
    DatasetMissingError,
    coarsewsd_words,
    context_tokens,
    dataset_status,
    load_coarsewsd,
    load_scws,
    load_wic,
    load_wic_tsv,
    load_wsd_eval,
    require,
    resolve_data_dir,
)
from contextlens.errors import EmptyInputError, FileFormatError, InputError, UnknownOptionError


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# --- registry ---------------------------------------------------------------------------

def test_resolve_data_dir_order(monkeypatch, tmp_path):
    monkeypatch.setenv("CONTEXTLENS_DATA", str(tmp_path / "env"))
    assert resolve_data_dir(tmp_path / "explicit") == tmp_path / "explicit"
    assert resolve_data_dir() == tmp_path / "env"
    monkeypatch.delenv("CONTEXTLENS_DATA")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert resolve_data_dir() == tmp_path / "home/.cache/contextlens/data"


def test_registry_names_and_sources():
    assert set(DATASETS) == {"wic", "wic_tsv", "scws", "wsd", "semcor", "coarsewsd20", "similarity",
                             "analogy", "wordnet", "cosimlex"}
    for spec in DATASETS.values():
        # CoSimLex: no download address is known that gives its file in the published layout
        assert spec.files and (spec.sources or spec.name == "cosimlex") and spec.citation and spec.license
        assert all(f.startswith(spec.folder.split("/")[0] + "/") for f in spec.files + spec.optional)
        for src in spec.sources:
            assert src.url.startswith(("http://", "https://"))
            assert src.sha256 is None or len(src.sha256) == 64


def test_dataset_status_reports_missing_and_optional(tmp_path):
    for f in DATASETS["wic"].files:
        write(tmp_path / f, "x\n")
    write(tmp_path / "wic/test/test.data.txt", "x\n")
    write(tmp_path / "analogy/other.txt", "")
    rows = {r["name"]: r for r in dataset_status(tmp_path)}
    assert rows["wic"]["complete"] and rows["wic"]["missing"] == []
    assert rows["wic"]["optional_present"] == ["wic/test/test.data.txt"]
    assert rows["wic"]["optional_missing"] == ["wic/test/test.gold.txt"]
    assert rows["analogy"]["present"] and not rows["analogy"]["complete"]
    assert rows["analogy"]["missing"] == ["analogy/questions-words.txt"]
    assert not rows["wordnet"]["present"] and rows["wordnet"]["path"] == str(tmp_path / "wordnet")


def test_require_names_full_paths_and_how_to_fetch(tmp_path):
    with pytest.raises(DatasetMissingError) as e:
        require(tmp_path, "wic", "wic/test/test.data.txt")
    msg = str(e.value)
    assert str(tmp_path / "wic/test/test.data.txt") in msg
    assert "contextlens data fetch wic" in msg and "pilehvar.github.io" in msg
    assert isinstance(e.value, InputError)
    with pytest.raises(UnknownOptionError, match="valid values"):
        require(tmp_path, "wicc")


# --- WiC -------------------------------------------------------------------------------

WIC_DATA = ("carry\tV\t2-1\tYou must carry your camping gear .\tSound carries well over water .\n"
            "bank\tN\t1-0\tThe bank closed .\tbank of the river\n")


def test_wic_reads_items_and_labels(tmp_path):
    write(tmp_path / "wic/train/train.data.txt", WIC_DATA)
    write(tmp_path / "wic/train/train.gold.txt", "F\nT\n")
    items = load_wic(tmp_path, "train")
    assert [it.label for it in items] == [False, True]
    a = items[0]
    assert (a.word, a.pos, a.index1, a.index2) == ("carry", "V", 2, 1)
    assert a.tokens1[a.index1] == "carry" and a.tokens2[a.index2] == "carries"
    assert a.tokens1 == ("You", "must", "carry", "your", "camping", "gear", ".")


def test_wic_test_without_gold_has_no_labels(tmp_path):
    write(tmp_path / "wic/test/test.data.txt", WIC_DATA)
    assert [it.label for it in load_wic(tmp_path, "test")] == [None, None]


def test_wic_train_without_gold_is_missing(tmp_path):
    write(tmp_path / "wic/train/train.data.txt", WIC_DATA)
    with pytest.raises(DatasetMissingError, match="train.gold.txt"):
        load_wic(tmp_path, "train")


def test_wic_missing_split_names_where_it_goes(tmp_path):
    with pytest.raises(DatasetMissingError, match=str(tmp_path / "wic/test/test.data.txt")):
        load_wic(tmp_path, "test")
    with pytest.raises(UnknownOptionError, match="train, dev, test"):
        load_wic(tmp_path, "validation")


def test_wic_gold_count_mismatch_names_both_counts(tmp_path):
    write(tmp_path / "wic/dev/dev.data.txt", WIC_DATA)
    write(tmp_path / "wic/dev/dev.gold.txt", "F\n")
    with pytest.raises(FileFormatError, match="1 gold labels for 2 items"):
        load_wic(tmp_path, "dev")


@pytest.mark.parametrize("line, problem", [
    ("carry\tV\t9-1\tYou must carry .\tSound carries .", "index '9' of sentence 1"),
    ("carry\tV\t2-x\tYou must carry .\tSound carries .", "index 'x' of sentence 2"),
    ("carry\tV\t2:1\tYou must carry .\tSound carries .", "i1-i2"),
    ("carry\tV\t2-1\tYou must carry .", "5 tab-separated fields"),
])
def test_wic_malformed_line_gives_line_number(tmp_path, line, problem):
    write(tmp_path / "wic/dev/dev.data.txt", WIC_DATA + line + "\n")
    write(tmp_path / "wic/dev/dev.gold.txt", "F\nT\nT\n")
    with pytest.raises(FileFormatError, match=f"line 3: .*{problem}") as e:
        load_wic(tmp_path, "dev")
    assert e.value.line == 3


def test_wic_bad_label_and_empty_split(tmp_path):
    write(tmp_path / "wic/dev/dev.data.txt", WIC_DATA)
    write(tmp_path / "wic/dev/dev.gold.txt", "F\nyes\n")
    with pytest.raises(FileFormatError, match="line 2: expected a gold label T or F"):
        load_wic(tmp_path, "dev")
    write(tmp_path / "wic/train/train.data.txt", "\n")
    write(tmp_path / "wic/train/train.gold.txt", "")
    with pytest.raises(EmptyInputError, match="train.data.txt holds no WiC items"):
        load_wic(tmp_path, "train")


def test_wic_tsv(tmp_path):
    base = tmp_path / "wic_tsv/en/Development/dev"
    write(Path(f"{base}_examples.txt"), "spring\t3\tI spent my spring holidays .\nhome\t0\thome is here\n")
    write(Path(f"{base}_definitions.txt"), "the season of growth\nan environment\n")
    write(Path(f"{base}_hypernyms.txt"), "season\ttime_of_year\nenvironment\n")
    write(Path(f"{base}_labels.txt"), "T\nF\n")
    items = load_wic_tsv(tmp_path, "dev")
    assert items[0].tokens[items[0].index] == "spring"
    assert items[0].hypernyms == ("season", "time_of_year") and items[1].label is False
    write(Path(f"{base}_labels.txt"), "T\n")
    with pytest.raises(FileFormatError, match="1 gold labels for 2 items"):
        load_wic_tsv(tmp_path, "dev")


# --- SCWS ------------------------------------------------------------------------------

def scws_line(i: int, c1: str = "the <b> bank </b> was closed", rating: str = "7.5") -> str:
    return "\t".join([str(i), "bank", "n", "river", "n", c1, "along the <b> river </b> bank", rating]
                     + ["7.0"] * 9 + ["8.0"]) + "\n"


def test_scws_reads_contexts_without_markers(tmp_path):
    write(tmp_path / "scws/ratings.txt", scws_line(1) + scws_line(2))
    a = load_scws(tmp_path)[0]
    assert a.context1 == ("the", "bank", "was", "closed") and a.index1 == 1
    assert a.context2[a.index2] == "river" and a.mean == 7.5
    assert a.ratings == (7.0,) * 9 + (8.0,)
    sample = write(tmp_path / "scws/ratings.sample.txt", scws_line(3))
    assert load_scws(tmp_path, "scws/ratings.sample.txt")[0].id == "3"
    assert load_scws(tmp_path, sample)[0].id == "3"


@pytest.mark.parametrize("line, problem", [
    (scws_line(2, c1="no marker here"), "context 1: expected the target marked once"),
    (scws_line(2, c1="<b> a </b> and <b> b </b>"), "context 1: .*found 2 <b>"),
    (scws_line(2, rating="high"), "expected a numeric rating, got 'high'"),
    ("2\tbank\tn\n", "expected 18 tab-separated fields"),
])
def test_scws_malformed_line_gives_line_number(tmp_path, line, problem):
    write(tmp_path / "scws/ratings.txt", scws_line(1) + line)
    with pytest.raises(FileFormatError, match=f"line 2: {problem}"):
        load_scws(tmp_path)


def test_scws_missing_file(tmp_path):
    with pytest.raises(DatasetMissingError, match="scws/ratings.txt"):
        load_scws(tmp_path)
    with pytest.raises(DatasetMissingError, match="nothing.txt"):
        load_scws(tmp_path, "scws/nothing.txt")


def test_context_tokens_multi_token_target():
    assert context_tokens("in <b> New York </b> now") == (("in", "New", "York", "now"), 1)


# --- WSD framework ---------------------------------------------------------------------

WSD_XML = """<?xml version="1.0" encoding="UTF-8" ?>
<corpus lang="en" source="semeval2007">
<text id="d000">
<sentence id="d000.s000">
<wf lemma="the" pos="DET">The</wf>
<instance id="d000.s000.t000" lemma="bank" pos="NOUN">bank</instance>
<instance id="d000.s000.t001" lemma="point_out" pos="VERB">pointed out</instance>
<wf lemma="." pos=".">.</wf>
</sentence>
<sentence id="d000.s001">
<instance id="d000.s001.t000" lemma="go" pos="VERB">Go</instance>
</sentence>
</text>
</corpus>
"""
WSD_GOLD = "d000.s000.t000 bank%1:14:00::\nd000.s000.t001 point_out%2:32:01:: point_out%2:32:03::\n" \
           "d000.s001.t000 go%2:38:00::\n"


def wsd_files(root: Path, name: str = "senseval2", xml: str = WSD_XML, gold: str = WSD_GOLD) -> None:
    write(root / f"wsd/eval/{name}/{name}.data.xml", xml)
    write(root / f"wsd/eval/{name}/{name}.gold.key.txt", gold)


def test_wsd_eval_sentences_instances_and_gold(tmp_path):
    wsd_files(tmp_path)
    sentences, gold = load_wsd_eval(tmp_path, "senseval2")
    assert [s.id for s in sentences] == ["d000.s000", "d000.s001"]
    s = sentences[0]
    assert s.tokens == ("The", "bank", "pointed out", ".") and s.lemmas[2] == "point_out"
    assert s.pos == ("DET", "NOUN", "VERB", ".")
    assert [(i.id, i.index, i.keys) for i in s.instances] == [("d000.s000.t000", 1, ()),
                                                              ("d000.s000.t001", 2, ())]
    assert gold["d000.s000.t001"] == ("point_out%2:32:01::", "point_out%2:32:03::")


def test_wsd_eval_missing_set_and_unknown_name(tmp_path):
    with pytest.raises(DatasetMissingError, match=str(tmp_path / "wsd/eval/ALL/ALL.data.xml")):
        load_wsd_eval(tmp_path, "ALL")
    with pytest.raises(UnknownOptionError, match="semeval2007"):
        load_wsd_eval(tmp_path, "semeval2008")


def test_wsd_eval_gold_mismatch(tmp_path):
    wsd_files(tmp_path, gold=WSD_GOLD.splitlines(keepends=True)[0] + "zzz bank%1:14:00::\n")
    with pytest.raises(FileFormatError, match=r"2 instance\(s\) without a key .* 1 key line"):
        load_wsd_eval(tmp_path, "senseval2")


def test_wsd_eval_bad_gold_line(tmp_path):
    wsd_files(tmp_path, gold=WSD_GOLD + "lonely_id\n")
    with pytest.raises(FileFormatError, match="line 4: expected 'instance_id sense_key"):
        load_wsd_eval(tmp_path, "senseval2")


def test_wsd_eval_malformed_xml_gives_line(tmp_path):
    wsd_files(tmp_path, xml=WSD_XML.replace('<wf lemma="." pos=".">.</wf>', '<wf lemma="." pos=".">.</w>'))
    with pytest.raises(FileFormatError, match="line 8: not well-formed XML"):
        load_wsd_eval(tmp_path, "senseval2")
    wsd_files(tmp_path, xml=WSD_XML.replace('lemma="go" ', ""))
    with pytest.raises(FileFormatError, match="line 11: <instance> has no 'lemma'"):
        load_wsd_eval(tmp_path, "senseval2")


# --- CoarseWSD-20 ----------------------------------------------------------------------

def coarse_files(root: Path, gold: str = "0\n1\n", data: str | None = None) -> None:
    d = root / "coarsewsd20/bank"
    write(d / "classes_map.txt", json.dumps({"0": "bank_bank", "1": "bank_bank_(geography)"}))
    write(d / "train.data.txt", data or "1\tthe bank raised rates\n2\twe sat by the bank\n")
    write(d / "train.gold.txt", gold)


def test_coarsewsd_reads_labels(tmp_path):
    coarse_files(tmp_path)
    write(tmp_path / "coarsewsd20/senses.tsv", "bank\tbank_bank\n")
    assert coarsewsd_words(tmp_path) == ["bank"]
    items = load_coarsewsd(tmp_path, "bank", "train")
    assert [it.label for it in items] == ["bank_bank", "bank_bank_(geography)"]
    assert items[0].tokens[items[0].index] == "bank" and items[1].index == 2
    write(tmp_path / "coarsewsd20/bank/test.data.txt", "0\tbank\n")
    assert load_coarsewsd(tmp_path, "bank", "test")[0].label is None


def test_coarsewsd_errors(tmp_path):
    with pytest.raises(DatasetMissingError, match="coarsewsd20"):
        coarsewsd_words(tmp_path)
    coarse_files(tmp_path, gold="0\n7\n")
    with pytest.raises(FileFormatError, match="line 2: class id '7' is not in classes_map.txt"):
        load_coarsewsd(tmp_path, "bank", "train")
    with pytest.raises(UnknownOptionError, match="did you mean 'bank'"):
        load_coarsewsd(tmp_path, "bnak", "train")
    coarse_files(tmp_path, data="1\tthe bank raised rates\n9\twe sat\n")
    with pytest.raises(FileFormatError, match="line 2: target index '9'"):
        load_coarsewsd(tmp_path, "bank", "train")
    coarse_files(tmp_path, gold="0\n")
    with pytest.raises(FileFormatError, match="1 gold lines for 2 sentences"):
        load_coarsewsd(tmp_path, "bank", "train")
    write(tmp_path / "coarsewsd20/bank/classes_map.txt", "{not json")
    coarse_files(tmp_path)
    write(tmp_path / "coarsewsd20/bank/classes_map.txt", "{not json")
    with pytest.raises(FileFormatError, match="JSON object"):
        load_coarsewsd(tmp_path, "bank", "train")


# --- WordNet helpers (the real database is exercised in tests/integration) ---------------

def test_wordnet_missing_and_pos_checked_first(tmp_path):
    from contextlens.datasets import candidate_keys, wordnet

    (tmp_path / "wordnet").mkdir()
    (tmp_path / "wordnet/data.noun").write_text("")
    with pytest.raises(DatasetMissingError, match=str(tmp_path / "wordnet/lexnames")):
        wordnet(tmp_path)
    with pytest.raises(UnknownOptionError, match="NOUN, VERB, ADJ, ADV"):
        candidate_keys(None, "bank", "N")
