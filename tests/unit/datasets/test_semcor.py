"""SemCor read from a small NAF archive built in the published layout."""

from __future__ import annotations

import io
import tarfile
from itertools import islice
from pathlib import Path

import pytest

from contextlens.datasets import (
    SEMCOR_ARCHIVE,
    DatasetMissingError,
    load_semcor,
    semcor,
    universal_tag,
)
from contextlens.errors import EmptyInputError, FileFormatError, InputError

DOC1 = """<?xml version='1.0' encoding='UTF-8'?>
<NAF>
  <nafHeader/>
  <text>
    <wf id="w0" offset="0" sent="1" para="1">The</wf>
    <wf id="w1" offset="4" sent="1" para="1">jury</wf>
    <wf id="w2" offset="9" sent="1" para="1">took_place</wf>
    <wf id="w3" offset="20" sent="1" para="1">.</wf>
    <wf id="w4" offset="22" sent="2" para="2">Gin</wf>
    <wf id="w5" offset="26" sent="2" para="2">rummy</wf>
    <wf id="w6" offset="32" sent="2" para="2">&amp;</wf>
  </text>
  <terms>
    <term id="t0" pos="DT" lemma="the" type="open"><span><target id="w0"/></span></term>
    <term id="t1" pos="NN" lemma="jury" type="close">
      <span><target id="w1"/></span>
      <externalReferences>
        <externalRef confidence="1.0" reference="1" resource="WordNet-eng30" reftype="sense_number"/>
        <externalRef confidence="1.0" reference="1:14:00::" resource="WordNet-eng30" reftype="lexical_key"/>
        <externalRef confidence="1.0" resource="WordNet-eng30" reference="eng30-08184600-n" reftype="synset"/>
      </externalReferences>
    </term>
    <term id="t2" pos="VB" lemma="take_place" type="close">
      <span><target id="w2"/></span>
      <externalReferences>
        <externalRef reference="2:30:00::" reftype="lexical_key"/>
        <externalRef reference="take_place%2:30:01::" reftype="lexical_key"/>
      </externalReferences>
    </term>
    <term id="t3" pos="NN" lemma="gin_rummy" type="close">
      <span><target id="w4"/><target id="w5"/></span>
      <externalReferences><externalRef reference="1:04:00::" reftype="lexical_key"/></externalReferences>
    </term>
  </terms>
</NAF>
"""
DOC2 = DOC1.replace("jury", "panel")


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """The parsed copies these small archives leave go to a cache of the test's own."""
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "cache"))


def archive(root: Path, docs: dict[str, str]) -> Path:
    path = root / SEMCOR_ARCHIVE
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        for name, text in docs.items():
            data = text.encode()
            info = tarfile.TarInfo(f"semcor3.0/{name}.naf")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_semcor_sentences_instances_and_keys(tmp_path):
    archive(tmp_path, {"brown1/br-a01": DOC1, "brownv/br-e04": DOC2})
    sentences = list(load_semcor(tmp_path))
    assert [s.id for s in sentences] == ["brown1/br-a01.s1", "brown1/br-a01.s2", "brownv/br-e04.s1",
                                         "brownv/br-e04.s2"]
    s1, s2 = sentences[:2]
    assert s1.tokens == ("The", "jury", "took_place", ".")
    assert s1.lemmas == ("the", "jury", "take_place", ".") and s1.pos == ("DET", "NOUN", "VERB", ".")
    jury, took = s1.instances
    assert (jury.id, jury.lemma, jury.pos, jury.index, jury.keys) == (
        "brown1/br-a01.t1", "jury", "NOUN", 1, ("jury%1:14:00::",))
    assert took.keys == ("take_place%2:30:00::", "take_place%2:30:01::") and took.index == 2
    # a term spanning two tokens: one instance at its first token, lemma on both tokens
    (gin,) = s2.instances
    assert gin.index == 0 and s2.lemmas == ("gin_rummy", "gin_rummy", "&")
    assert s2.tokens[2] == "&"
    ids = [i.id for s in sentences for i in s.instances]
    assert len(ids) == len(set(ids)) == 6


def test_semcor_documents_filter_and_laziness(tmp_path):
    archive(tmp_path, {"brown1/br-a01": DOC1, "brownv/br-e04": DOC2})
    only = list(load_semcor(tmp_path, documents=["brownv/br-e04"]))
    assert {s.id.split(".")[0] for s in only} == {"brownv/br-e04"}
    assert next(islice(load_semcor(tmp_path), 1, None)).id == "brown1/br-a01.s2"
    with pytest.raises(InputError, match="only 1 of the 2 documents"):
        list(load_semcor(tmp_path, documents=["brownv/br-e04", "brown9/nope"]))


def test_semcor_errors(tmp_path):
    with pytest.raises(DatasetMissingError, match="semcor3.0_naf.tar.gz"):
        list(load_semcor(tmp_path))
    archive(tmp_path, {"brown1/br-a01": DOC1.replace("</terms>", "</term>")})
    with pytest.raises(FileFormatError, match="br-a01.naf, line 34: not well-formed XML"):
        list(load_semcor(tmp_path))
    archive(tmp_path, {"brown1/br-a01": DOC1.replace('<target id="w5"/>', '<target id="w99"/>')})
    with pytest.raises(FileFormatError, match="term 't3': needs an id, a lemma and a span of known <wf> ids"):
        list(load_semcor(tmp_path))
    archive(tmp_path, {})
    with pytest.raises(EmptyInputError, match="no .naf document"):
        list(load_semcor(tmp_path))
    (tmp_path / SEMCOR_ARCHIVE).write_bytes(b"not a tar at all")
    with pytest.raises(FileFormatError, match="not a readable .tar.gz"):
        list(load_semcor(tmp_path))


@pytest.mark.parametrize("penn, tag", [("NNP", "NOUN"), ("MD", "VERB"), ("JJS", "ADJ"), ("WRB", "ADV"),
                                       ("PRP$", "PRON"), ("IN", "ADP"), ("''", "."), ("UH", "X")])
def test_universal_tag(penn, tag):
    assert universal_tag(penn) == tag


def test_a_whole_read_is_kept_parsed_and_a_damaged_copy_is_parsed_again(tmp_path, monkeypatch, caplog):
    archive(tmp_path, {"brown1/br-a01": DOC1, "brownv/br-e04": DOC2})
    first = list(load_semcor(tmp_path))
    (copy,) = (tmp_path / "cache" / "datasets").glob("semcor-*.pickle")
    real_parse = semcor._parse
    with monkeypatch.context() as mp:
        mp.setattr(semcor, "_parse", lambda *a: pytest.fail("parsed although a copy is kept"))
        assert list(load_semcor(tmp_path)) == first
        assert [s.id for s in islice(load_semcor(tmp_path), 1)] == [first[0].id]
    copy.write_bytes(copy.read_bytes()[:40])  # damaged
    assert list(load_semcor(tmp_path)) == first and "damaged" in caplog.text
    assert semcor._parse is real_parse and len(list((tmp_path / "cache" / "datasets").glob("*.pickle"))) == 1
    archive(tmp_path, {"brown1/br-a01": DOC2})  # another archive at the same path: its own copy
    assert [s.tokens[1] for s in load_semcor(tmp_path)] == ["panel", "rummy"]


def test_a_read_that_stops_early_keeps_no_copy(tmp_path):
    archive(tmp_path, {"brown1/br-a01": DOC1, "brownv/br-e04": DOC2})
    next(iter(load_semcor(tmp_path)))
    list(load_semcor(tmp_path, documents=["brownv/br-e04"]))
    assert not list((tmp_path / "cache").glob("datasets/*.pickle"))


def test_parsed_copies_stay_within_the_cache_bound(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE_LIMIT_DATASETS", "1")  # room for the newest copy only
    archive(tmp_path, {"brown1/br-a01": DOC1})
    list(load_semcor(tmp_path))
    (first,) = (tmp_path / "cache" / "datasets").glob("semcor-*.pickle")
    archive(tmp_path, {"brown1/br-a01": DOC2})  # another archive: another copy, the old one goes
    list(load_semcor(tmp_path))
    (second,) = (tmp_path / "cache" / "datasets").glob("semcor-*.pickle")
    assert second != first
