"""The experiment commands (explore, senses, layers, attention, rank, geometry) on a small
saved table: JSON shapes, figures by suffix, and exit code 2 with a clear message on bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from contextlens.cli import experiments
from contextlens.vectors import EmbeddingTable

runner = CliRunner()
app = typer.Typer(pretty_exceptions_enable=False)


@app.callback()
def _root() -> None:
    """The experiment commands alone, as the lead's app registers them."""


experiments.register(app)

WORDS = {
    "bank": [1, 1, 0.2, 0], "money": [1, 0, 0, 0.1], "loan": [0.9, 0, 0, 0.2], "cash": [1, 0.1, 0, 0],
    "deposit": [0.8, 0.1, 0, 0.1], "river": [0, 1, 0, 0.1], "water": [0.1, 0.9, 0, 0],
    "fish": [0, 0.8, 0, 0.3], "shore": [0, 1, 0.1, 0], "the": [0, 0, 1, 0.1], "a": [0.05, 0, 1, 0],
    "sentence": [0, 0, 0.3, 1], "with": [0, 0.05, 0.8, 0.2], "of": [0, 0, 0.9, 0.1], "by": [0.1, 0, 0.7, 0.1],
}
SENTENCES = [
    "The bank approved the loan.", "Fish swim by the river bank.", "She took cash from the bank.",
    "Water flooded the bank of the river.", "The bank holds my money deposit.",
    "We sat on the bank near the water.",
]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("experiments")
    EmbeddingTable(list(WORDS), list(WORDS.values()), name="toy").save(d / "t.npz")
    (d / "bank.txt").write_text("# usages of bank\n" + "\n\n".join(SENTENCES) + "\n")
    (d / "labels.txt").write_text("money\nriver\nmoney\nriver\nmoney\nriver\n")
    (d / "pairs.txt").write_text("money cash 9\nmoney river 1\nbank river 5\nfish water 8\nloan deposit 7\n")
    return d


def run(*args, code: int = 0):
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result


def run_json(*args):
    return json.loads(run(*args, "--json").stdout)


def vec(files):
    return ["--vectors", files / "t.npz", "--method", "average"]


def test_explore_one_word(files):
    out = run_json("explore", "bank", "--sentences", files / "bank.txt", *vec(files), "--plot",
                   files / "e.png")
    (w,) = out["words"]
    m = np.array(w["matrix"])
    assert m.shape == (6, 6) and w["sentences"] == SENTENCES
    np.testing.assert_allclose(m, m.T)
    np.testing.assert_allclose(np.diag(m), 1.0)
    assert w["spread"] == pytest.approx(1 - m[np.triu_indices(6, 1)].mean())
    assert (files / "e.png").read_bytes()[:4] == b"\x89PNG"


def test_the_explore_table_names_usages_as_the_json_and_the_lab_do(files):
    """The table numbered rows and columns from 1 (and a sentence holding the word twice twice
    alike) while the JSON and the lab number sentences from 0: now each usage is named as the lab's
    matrix names it, S<sentence>, and #<occurrence> where its sentence holds two."""
    args = ("explore", "bank", "-s", "money bank", "-s", "the bank by the bank", "-s", "river bank",
            *vec(files), "--occurrence", "all")
    out = run_json(*args)["words"][0]
    assert out["labels"] == ["S0", "S1 #0", "S1 #1", "S2"] and out["positions"] == [0, 1, 1, 2]
    lines = [ln for ln in run(*args).stdout.splitlines() if "│" in ln or "┃" in ln]
    header = [c.strip() for c in lines[0].strip("┃").split("┃")]
    assert header == ["usage", "sentence", "S0", "S1 #0", "S1 #1", "S2"]
    rows = [ln.strip("│").split("│")[0].strip() for ln in lines[1:5]]  # (then the spread table)
    assert rows == out["labels"]


def test_senses_offers_only_what_it_takes_for_a_word_twice_in_a_sentence(files):
    """senses takes one usage per sentence: its error offered --occurrence all, which it refuses."""
    result = run("senses", "bank", "-s", "the bank by the bank", "-s", "money bank", "-s", "river bank",
                 *vec(files), code=2)
    said = " ".join(result.output.split())
    assert said.startswith("error: sentence 0 ('the bank by the bank'): 'bank' occurs 2 times")
    assert "all" not in said and "use --occurrence 0" in said
    assert run_json("senses", "bank", "-s", "the bank by the bank", "-s", "money bank", "-s", "river bank",
                    *vec(files), "--occurrence", "0")["n_usages"] == 3  # the advice works
    refused = run("senses", "bank", "-s", "money bank", "-s", "river bank", "-s", "cash bank", *vec(files),
                  "--occurrence", "all", code=2)
    assert "--occurrence must be a whole number (0 = the first), got 'all'" in refused.output


def test_explore_several_words_and_a_projection(files):
    out = run_json("explore", "bank", "river", "--sentences", files / "bank.txt", "-s", "A river of cash.",
                   *vec(files), "--projection", "pca", "--plot", files / "p.svg")
    bank, river = out["words"]
    assert (bank["n_usages"], river["n_usages"]) == (6, 3)
    assert river["positions"] == [1, 3, 6] and len(out["projection"]["points"]) == 9
    assert (files / "p.svg").read_text().lstrip().startswith("<?xml")


def test_senses_labels_in_input_order(files):
    out = run_json("senses", "bank", "--sentences", files / "bank.txt", "--labels", files / "labels.txt",
                   *vec(files), "--plot", files / "s.pdf")
    assert out["labels"] == [0, 1, 0, 1, 0, 1]
    assert out["k"] == 2 and out["k_chosen_by"] == "eigengap" and out["n_clustered"] == 6
    assert sorted(out["score_by_k"]) == ["2", "3", "4", "5"]
    assert out["purity"] == 1.0 and out["ari"] == pytest.approx(1.0)
    assert [c["size"] for c in out["clusters"]] == [3, 3]
    assert (files / "s.pdf").read_bytes()[:4] == b"%PDF"


def test_senses_skips_sentences_on_request(files):
    out = run_json("senses", "bank", "-s", "money bank", "-s", "the river", "-s", "river bank", "-s",
                   "cash bank", *vec(files), "--k", "2", "--skip-missing")
    assert out["labels"] == [0, None, 1, 0] and out["skipped"] == [1]


@pytest.mark.parametrize("args, message", [
    (["-s", "money bank", "-s", "the river"], "sentence 1 ('the river') lacks 'bank'"),  # the second: [1]
    (["-s", "money bank", "-s", "river bank", "--k", "3"], "whole number from 1 to 2"),
    (["-s", "money bank", "-s", "river bank", "--k", "two"], "--k must be 'auto' or a whole number"),
    (["-s", "money bank", "-s", "river bank", "--projection", "mds"], "unknown projection 'mds'"),
    (["-s", "money bank", "-s", "river bank", "--plot", "out.jpg"],
     "unknown figure format (file suffix) 'jpg'"),
    (["-s", "money bank", "-s", "river bank", "--model", "minilm"], "not both"),
    ([], "no sentences given"),
    (["-s", "money bank", "-s", "river bank", "-s", "cash bank", "--max-sentences", "2"],
     "3 sentences given; senses encodes at most 2 unless asked for more (each is encoded, which takes "
     "time): use --max-sentences 3, or give fewer sentences"),
    (["-s", "money bank", "--max-sentences", "200001"],
     "--max-sentences must be a whole number from 1 to 200,000"),
])
def test_senses_bad_input_exits_2(files, args, message):
    result = run("senses", "bank", "--vectors", files / "t.npz", *args, code=2)
    assert message in " ".join(result.output.split())


def test_senses_labels_must_align(files, tmp_path):
    (tmp_path / "few.txt").write_text("money\nriver\n")
    result = run("senses", "bank", "--sentences", files / "bank.txt", "--labels", tmp_path / "few.txt",
                 *vec(files), "--plot", tmp_path / "never.png", code=2)
    assert "2 labels for 6 sentences" in " ".join(result.output.split())
    assert not list(tmp_path.glob("*.png")) and not list(tmp_path.glob(".never*"))


def test_layers_with_several_pairs(files):
    out = run_json("layers", "money bank", "river bank", "--word", "bank", "--pair", "cash bank",
                   "the bank of fish",
                   "--vectors", files / "t.npz", "--n-layers", "2", "--plot", files / "l.png")
    assert out["layer_names"] == ["static", "attention 1", "attention 2"]
    assert [p["label"] for p in out["pairs"]] == ["pair 0", "pair 1"]  # their indices in the JSON's pairs
    assert all(p["cosine_by_layer"][0] == pytest.approx(1.0) and len(p["cosine_by_layer"]) == 3
               for p in out["pairs"])
    assert (files / "l.png").exists()


def test_layers_bad_pairs_exit_2(files):
    result = run("layers", "money bank", "river bank", "--pair", "cash bank", "-w", "bank",
                 "--vectors", files / "t.npz", code=2)
    assert "pair 1 has 1 sentence(s)" in result.output
    result = run("layers", "money bank", "the river", "-w", "bank", "--vectors", files / "t.npz", code=2)
    assert "pair 0, sentence 'the river'" in result.output


def test_attention_grid_and_rollout(files):
    out = run_json("attention", "the bank of the river", "-w", "bank", "--vectors", files / "t.npz",
                   "--heads", "2", "--n-layers", "2", "--rollout", "--plot", files / "a.png")
    assert np.array(out["per_head"]).shape == (2, 2, 5)
    np.testing.assert_allclose(np.sum(out["rollout"], axis=1), 1.0, atol=1e-6)
    one = run_json("attention", "the bank of the river", "-w", "bank", "--vectors", files / "t.npz",
                   "--heads", "2", "--layer", "1", "--head", "0", "--plot", files / "a1.png")
    assert np.array(one["selected"]["matrix"]).shape == (5, 5)
    assert (files / "a.png").exists() and (files / "a1.png").exists()


def test_attention_needs_weights(files):
    result = run("attention", "the bank", "-w", "bank", "--vectors", files / "t.npz", "--method", "static",
                 code=2)
    assert "no attention weights" in result.output


def test_rank_pairs(files):
    out = run_json("rank", files / "pairs.txt", *vec(files), "--alpha", "0.5",
                   "--template", "a sentence with {word}", "--plot", files / "r.png")
    assert out["n_pairs"] == 5 and out["comparisons"] == 10
    assert set(out["gold"]) == {"static_spearman", "contextual_spearman"}
    assert -1 <= out["spearman"] <= 1 and len(out["pairs"]) == 5
    assert all(m["shift"] != 0 for m in out["moved"])
    assert (files / "r.png").exists()
    result = run("rank", files / "pairs.txt", *vec(files), "--template", "no slot", code=2)
    assert "exactly once" in result.output


def test_geometry(files):
    out = run_json("geometry", "--sentences", files / "bank.txt", "--vectors", files / "t.npz",
                   "--n-layers", "2", "--plot", files / "g.png")
    assert [x["name"] for x in out["layers"]] == ["static", "attention 1", "attention 2"]
    assert out["layers"][0]["self_similarity"] == pytest.approx(1.0)
    assert {w["word"] for w in out["words"]} >= {"bank", "the"}
    only = run_json("geometry", "--sentences", files / "bank.txt", "--vectors", files / "t.npz", "--words",
                    "bank")
    assert [w["word"] for w in only["words"]] == ["bank"]
    result = run("geometry", "--sentences", files / "bank.txt", "--vectors", files / "t.npz", "--words",
                 "loan", code=2)
    assert "'loan' (1)" in result.output
