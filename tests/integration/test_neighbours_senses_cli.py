"""``contextlens neighbours WORD --in TEXT`` with --senses, --keep-forms and a distilled
--reference, on a tiny random-weight BERT and the shared WordNet and SemCor."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from contextlens.cli import app
from contextlens.vectors import EmbeddingTable
from tests.integration.tiny_models import tiny_bert
from tests.missing import need

runner = CliRunner()
TEXT = "we sat on the bank of the river"


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    need("torch")
    return str(tiny_bert(tmp_path_factory.mktemp("senses")))


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """A small table 'distilled' at layer 2 (the tiny model's last), with forms of bank."""
    words = ["river", "water", "money", "loan", "banks", "banking", "banker", "shore", "the"]
    rng = np.random.default_rng(0)
    path = tmp_path_factory.mktemp("ref") / "ref.layer2.npz"
    EmbeddingTable(words, rng.normal(size=(len(words), 32)), name="tiny layer 2 mean (distilled)").save(path)
    return path


@pytest.fixture
def env(tmp_path_factory, monkeypatch, data_dir):
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path_factory.getbasetemp() / "senses-cache"))
    monkeypatch.setenv("CONTEXTLENS_DATA", str(data_dir))
    # a full SemCor pass takes minutes even for the tiny model: learn from its first 40 sentences
    from contextlens.evaluation import lmms, usage_senses

    monkeypatch.setattr(usage_senses, "sense_parts", functools.partial(lmms.sense_parts, semcor_limit=40))


def neighbours(*args):
    return runner.invoke(app, ["neighbours", "bank", "--in", TEXT, *args], env={"COLUMNS": "200"})


def test_senses_and_forms(model, reference, env):
    res = neighbours("--model", model, "--reference", str(reference.with_name("ref.npz")), "--senses",
                     "--json")
    assert res.exit_code == 0, res.output
    r = json.loads(res.stdout)
    assert [n["word"] for n in r["neighbours"]] and not {"banks", "banking", "banker"} & {
        n["word"] for n in r["neighbours"]}
    assert r["forms_left_out"] and set(r["forms_left_out"]) <= {"banks", "banking", "banker"}
    s = r["senses"]
    assert s["lemma"] == "bank" and s["layer"] == 2 and s["candidates"] == 18  # 10 noun + 8 verb senses
    assert len(s["senses"]) == 5 and all(x["key"].startswith("bank%") and x["gloss"] for x in s["senses"])
    cos = [x["cosine"] for x in s["senses"]]
    assert cos == sorted(cos, reverse=True)
    assert {x["source"] for x in s["senses"]} <= {"semcor", "synset", "hypernym", "lexname"}
    table = neighbours("--model", model, "--reference", str(reference), "--senses")
    assert table.exit_code == 0, table.output
    assert "WordNet senses of 'bank'" in table.stdout and "left out, forms of 'bank'" in table.output


def test_keep_forms(model, reference, env):
    res = neighbours("--model", model, "--reference", str(reference), "-k", "9", "--keep-forms", "--json")
    assert res.exit_code == 0, res.output
    r = json.loads(res.stdout)
    assert {"banks", "banking",
            "banker"} <= {n["word"] for n in r["neighbours"]} and r["forms_left_out"] == []


def test_reference_of_another_layer_is_refused(model, reference, env):
    res = neighbours("--model", model, "--reference", str(reference), "--layer", "1")
    assert res.exit_code == 2 and "distilled at layer 2" in res.output
    res = runner.invoke(app, ["neighbours", "bank", "--senses", "--keep-forms"])
    assert res.exit_code == 2 and "--senses, --keep-forms only apply to contextual neighbours" in res.output


def test_contrast(model, reference, env, tmp_path):
    res = neighbours("--model", model, "--reference", str(reference), "--contrast", "0.5")
    assert res.exit_code == 2 and "contrast needs 'bank' in the reference table" in res.output
    table = EmbeddingTable.load(reference)
    with_bank = tmp_path / "with-bank.layer2.npz"
    EmbeddingTable([*table.keys, "bank"], np.vstack([table.vectors, table.vectors[:2].mean(0)]),
                   name="tiny layer 2 mean (distilled)").save(with_bank)
    res = neighbours("--model", model, "--reference", str(with_bank), "--contrast", "0.5", "--json")
    assert res.exit_code == 0, res.output
    r = json.loads(res.stdout)
    assert r["contrast"] == 0.5 and "bank" not in {n["word"] for n in r["neighbours"]}
    for n in r["neighbours"]:
        assert n["score"] == pytest.approx(n["cosine"] - 0.5 * n["own_cosine"])
    scores = [n["score"] for n in r["neighbours"]]
    assert scores == sorted(scores, reverse=True)
    shown = neighbours("--model", model, "--reference", str(with_bank), "--contrast", "0.5")
    assert shown.exit_code == 0 and "cosine to 'bank'" in shown.stdout
    assert "score = cosine − 0.5" in shown.stdout
    alone = runner.invoke(app, ["neighbours", "bank", "--contrast", "0.5"])
    assert alone.exit_code == 2 and "--contrast only apply to contextual neighbours" in alone.output
