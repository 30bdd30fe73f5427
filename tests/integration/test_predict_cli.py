"""The issue-13 commands on tiny random-weight models and the worked example's table: each
command's JSON is the library's result (checked against the library called directly), the
issue's JSON keys are there, figures are written, and bad input is one line, exit code 2."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.missing import need

need("torch")
need("transformers")

from contextlens.analysis.neighbours import contextual_neighbours  # noqa: E402
from contextlens.analysis.occlusion import occlusion_vs_attention  # noqa: E402
from contextlens.analysis.sentences import compare_sentences  # noqa: E402
from contextlens.cli import app  # noqa: E402
from contextlens.encoders.lm import LanguageModel  # noqa: E402
from contextlens.encoders.registry import make_encoder  # noqa: E402
from contextlens.encoders.transformer import TransformerEncoder  # noqa: E402
from contextlens.passes.distill import distill  # noqa: E402
from contextlens.static.cooccurrence import count_table  # noqa: E402
from contextlens.vectors import EmbeddingTable  # noqa: E402
from contextlens.walkthrough import worked_example_corpus  # noqa: E402
from tests.integration.tiny_models import tiny_bert, tiny_lms  # noqa: E402

runner = CliRunner()


def run_json(*args):
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def fails(*args, match: str):
    result = runner.invoke(app, list(args))
    assert result.exit_code == 2, result.output
    assert match in result.output and len(result.output.strip().splitlines()) == 1, result.output


@pytest.fixture(scope="module")
def worked(tmp_path_factory):
    path = tmp_path_factory.mktemp("vectors") / "bank.npz"
    count_table(worked_example_corpus(), window=3, vocab_order="alphabetical").save(path)
    return path


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_lms(tmp_path_factory.mktemp("tiny-lm"))


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return tiny_bert(tmp_path_factory.mktemp("bert"))


def test_predict_fill_mask_json_is_the_library_result(tiny):
    text = "We sat on the [MASK] of the river."
    out = run_json("predict", text, "--model", str(tiny / "mlm"), "-k", "4")
    assert {"model", "text", "position", "predictions"} <= out.keys() and out["position"] == 4
    expected = LanguageModel(str(tiny / "mlm")).predict(text, k=4)
    assert out["predictions"] == [{"word": p.word, "probability": p.probability, "pieces": list(p.pieces)}
                                  for p in expected.predictions]
    assert out["kind"] == "masked" and "first piece" in out["rule"]


def test_predict_next_word_and_its_table(tiny):
    out = run_json("predict", "the bank of the", "--model", str(tiny / "causal"), "-k", "3")
    assert out["kind"] == "causal" and len(out["predictions"]) == 3
    probs = [p["probability"] for p in out["predictions"]]
    assert probs == sorted(probs, reverse=True) and 0 < sum(probs) <= 1
    shown = runner.invoke(app, ["predict", "the bank of the", "--model", str(tiny / "causal"), "-k", "3"])
    assert shown.exit_code == 0 and out["predictions"][0]["word"] in shown.stdout


def test_predict_says_when_a_model_has_no_head(tiny):
    fails("predict", "a [MASK] b", "--model", str(tiny / "headless"), match="head")
    fails("predict", "no mask here", "--model", str(tiny / "mlm"), match="[MASK]")


def test_lens_json_plot_and_the_last_layer(tiny, tmp_path):
    plot = tmp_path / "lens.png"
    out = run_json("lens", "the bank of the river", "--model", str(tiny / "causal"), "--position", "2",
                   "--track", "river", "--plot", str(plot))
    assert plot.stat().st_size > 0
    assert out["word"] == "of" and out["position"] == 2 and len(out["layers"]) == 4  # embedding output + 3
    expected = LanguageModel(str(tiny / "causal")).lens("the bank of the river", 2, k=3, track=["river"])
    assert out["layers"][-1]["tracked"] == [t.as_dict() for t in expected.layers[-1].tracked]
    fails("lens", "the bank", "--model", str(tiny / "causal"), "--position", "5", match="position")
    fails("lens", "the [MASK] bank", "--model", str(tiny / "mlm"), match="causal")


def test_compare_sentences_is_the_library_cosine(bert):
    a, b = "The bank approved my loan.", "We sat on the bank of the river."
    out = run_json("compare-sentences", a, b, "--model", str(bert))
    expected = compare_sentences(TransformerEncoder(str(bert)), a, b)
    assert out["cosine"] == pytest.approx(expected["cosine"], abs=1e-6)
    assert out["cosine_by_layer"] == pytest.approx(expected["cosine_by_layer"], abs=1e-6)
    fails("compare-sentences", a, b, "--model", str(bert), "--pooling", "sum", match="mean")


def test_attention_occlusion_is_the_library_measurement(worked, tmp_path):
    text = "we sat on the bank of the river"
    plot = tmp_path / "occ.svg"
    out = run_json("attention", text, "--word", "bank", "--vectors", str(worked), "--occlusion", "--plot",
                   str(plot))
    expected = occlusion_vs_attention(make_encoder("attention", vectors=str(worked), include_self=False),
                                      text, "bank")
    assert [w["word"] for w in out["others"]] == [w["word"] for w in expected["others"]]
    assert out["layers"][0]["occlusion"] == pytest.approx(expected["layers"][0]["occlusion"])
    assert out["layers"][0]["spearman_attention"] == pytest.approx(
        expected["layers"][0]["spearman_attention"]
    )
    assert plot.stat().st_size > 0
    fails("attention", text, "--word", "bank", "--vectors", str(worked), "--occlusion", "--head", "0",
          match="--occlusion")


def test_static_vectors_is_the_static_side(worked, tmp_path):
    table = EmbeddingTable.load(worked)
    out = run_json("layers", "sat bank river", "bank of money", "--word", "bank", "--vectors", str(worked),
                   "--method", "average", "--static-vectors", str(worked))
    assert out["static"]["source"] == "table" and out["pairs"][0]["static_cosine"] == pytest.approx(1.0)
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("bank river\nbank money\nriver money\n")
    out = run_json("rank", str(pairs), "--template", "sat {word} river", "--vectors", str(worked), "--method",
                   "average", "--static-vectors", str(worked))
    rows = {(p["word1"], p["word2"]): p["static"] for p in out["pairs"]}
    assert rows[("bank", "river")] == pytest.approx(table.similarity("bank", "river"))
    out = run_json("compare", "sat bank river", "bank of money", "--word", "bank", "--vectors", str(worked),
                   "--method", "average", "--static-vectors", str(worked))
    assert out["static"]["vectors"] == table.name and out["static"]["cosine"] == pytest.approx(1.0)
    fails("compare", "a bank", "the bank", "--word", "bank", "--vectors", str(worked), "--static-vectors",
          str(tmp_path / "none.npz"), match="none.npz")


def test_neighbours_in_a_sentence_and_the_static_command_unchanged(worked):
    static = run_json("neighbours", "bank", "--vectors", str(worked), "-k", "3")
    assert set(static) == {"word", "vectors", "neighbours"} and len(static["neighbours"]) == 3
    text = "we sat on the bank of the river"
    out = run_json("neighbours", "bank", "--in", text, "--vectors", str(worked), "--reference", str(worked),
                   "-k", "3")
    assert {"word", "sentence", "model", "layer", "neighbours"} <= out.keys() and out["layer"] == 1
    expected = contextual_neighbours(make_encoder("attention", vectors=str(worked), include_self=False), text,
                                     "bank", k=3, reference=EmbeddingTable.load(worked))
    assert out["neighbours"] == [{"word": n["word"], "cosine": pytest.approx(n["cosine"])}
                                 for n in expected["neighbours"]]
    fails("neighbours", "bank", "--vectors", str(worked), "--layer", "1", match="--in")


def test_static_distill_writes_the_library_tables(bert, tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("The bank approved my loan.\nWe sat on the bank of the river.\nThe river was cold.\n"
                      "My loan was small.\n")
    out_path = tmp_path / "t.npz"
    out = run_json("static", "distill", str(corpus), "--model", str(bert), "--layers", "all", "--min-count",
                   "2", "-o", str(out_path))
    # bank loan my river the was
    assert [t["layer"] for t in out["tables"]] == [0, 1, 2] and out["words"] == 6
    expected = distill(corpus, TransformerEncoder(str(bert)), layers="all", min_count=2)
    for t in out["tables"]:
        written = EmbeddingTable.load(t["path"])
        np.testing.assert_allclose(written.vectors, expected.tables[(t["layer"], "mean")].vectors, atol=1e-6)
    assert not list(tmp_path.glob("*.distill.npz"))  # the checkpoint is gone at the end
    fails("static", "distill", str(corpus), "--model", str(bert), "--layer", "1", "--layers", "all", "-o",
          str(tmp_path / "x.npz"), match="--layers")
    fails("static", "distill", str(corpus), "--model", str(bert), "--pool", "median", "-o",
          str(tmp_path / "y.npz"), match="max_usages")
