"""SEAT and CEAT through a tiny random-weight BERT (no download): CEAT's contexts from a usage
index equal those encoded from the same corpus, the CLI's JSON rows equal the library's,
--plot writes a figure, bad input exits 2 with one line."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.missing import need

need("lancedb")
need("torch")
need("transformers")

from contextlens.bias import WordSets, ceat_by_layer, ceat_contexts, seat  # noqa: E402
from contextlens.cli import app  # noqa: E402
from contextlens.encoders.registry import make_encoder  # noqa: E402
from contextlens.index import build_index  # noqa: E402
from tests.integration.tiny_models import tiny_bert  # noqa: E402

SETS = WordSets("tiny", X=("rose", "tulip"), Y=("ant", "flea"), A=("love", "peace"), B=("filth", "grief"))
WORDS = [w for key in "XYAB" for w in getattr(SETS, key)]
runner = CliRunner()


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("bias")
    model = str(tiny_bert(root))
    rng = np.random.default_rng(0)
    fill = "the a of we saw it by far near old new green cold and".split()
    lines = []
    for i in range(64):  # each line holds one word of the sets, once: 8 lines per word
        words = list(rng.choice(fill, size=int(rng.integers(3, 9))))
        words.insert(int(rng.integers(0, len(words) + 1)), WORDS[i % len(WORDS)])
        lines.append(" ".join(words) + " .")
    corpus = root / "corpus.txt"
    corpus.write_text("\n".join(lines) + "\n")
    db = root / "db"
    build_index(corpus, db, WORDS, model=model, layers=[1, 2], dtype="float32", chunk_size=20)
    return {"model": model, "corpus": corpus, "db": db, "root": root}


def test_index_contexts_equal_corpus_contexts(setup):
    from_index = ceat_contexts(WORDS, model=setup["model"], db=setup["db"])
    from_corpus = ceat_contexts(WORDS, model=setup["model"], corpus=setup["corpus"], per_word=100)
    assert sorted(from_index) == [1, 2] and sorted(from_corpus) == [0, 1, 2]
    for layer in (1, 2):
        assert set(from_index[layer]) == set(WORDS)
        for w in WORDS:
            a, b = from_index[layer][w], from_corpus[layer][w]  # (usages, dim); the index's in usage-id order
            assert a.shape == b.shape == (8, 32)
            np.testing.assert_allclose(a[np.lexsort(a.T)], b[np.lexsort(b.T)], atol=1e-5)
    # in one order of the contexts, the same draws give the same CEAT
    ordered = [{k: {w: v[np.lexsort(v.T)] for w, v in c[k].items()} for k in (1, 2)}
               for c in (from_index, from_corpus)]
    rows_i, rows_c = (ceat_by_layer(c, SETS, model="tiny", samples=200) for c in ordered)
    for ri, rc in zip(rows_i, rows_c):
        assert ri.layer == rc.layer and ri.effect_size == pytest.approx(rc.effect_size, abs=1e-6)


def run_json(*args):
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_cli_seat_ceat_weat_rows_equal_the_library(setup, tmp_path):
    sets = tmp_path / "tiny.json"
    sets.write_text(json.dumps({"name": "tiny", **SETS.as_dict()}))
    model = setup["model"]
    (row,) = run_json("bias", "seat", "--sets", str(sets), "--model", model, "--permutations", "500")["rows"]
    lib = json.loads(json.dumps(seat(make_encoder(model=model, attention=False), SETS,
                                     permutations=500).as_dict()))
    assert row["effect_size"] == pytest.approx(lib.pop("effect_size"), abs=1e-6)  # eager vs sdpa attention
    assert row["statistic"] == pytest.approx(lib.pop("statistic"), abs=1e-6)
    assert {k: v for k, v in row.items() if k in lib} == lib
    assert (row["measure"], row["layer"], row["n_x"]) == ("seat", 2, 28)

    plot = tmp_path / "ceat.png"
    out = run_json("bias", "ceat", "--sets", str(sets), "--model", model, "--db", str(setup["db"]),
                   "--samples", "100", "--plot", str(plot))
    assert [r["layer"] for r in out["rows"]] == [1, 2] and out["contexts"] == "index"
    lib = ceat_by_layer(ceat_contexts(WORDS, model=model, db=setup["db"]), SETS, model=model, samples=100)
    assert out["rows"] == [json.loads(json.dumps(r.as_dict())) for r in lib]
    assert all(r["ci"][0] < r["effect_size"] < r["ci"][1] for r in out["rows"])
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    corpus_rows = run_json("bias", "ceat", "--sets", str(sets), "--model", model, "--corpus",
                           str(setup["corpus"]), "--samples", "50", "--per-word", "3")["rows"]
    assert [r["layer"] for r in corpus_rows] == [0, 1, 2]

    (w,) = run_json("bias", "weat", "--sets", str(sets), "--model", model)["rows"]
    assert (w["measure"], w["layer"], w["n_x"], w["missing"]["X"]) == ("weat", 0, 2, [])


@pytest.mark.parametrize("args, says", [
    (["--db", "DB", "--corpus", "C"], "drop --corpus and --per-word"),
    (["--db", "DB", "--per-word", "5"], "drop --corpus and --per-word"),
    (["--corpus", "C", "--limit", "5"], "for a corpus use --per-word"),
    (["--db", "DB", "--model", "minilm"], "not 'minilm'"),
])
def test_cli_ceat_bad_input_exits_2(setup, args, says):
    args = [str(setup["db"]) if a == "DB" else str(setup["corpus"]) if a == "C" else a for a in args]
    if "--model" not in args:
        args += ["--model", setup["model"]]
    result = runner.invoke(app, ["bias", "ceat", "weat6", *args])
    assert result.exit_code == 2 and says in result.output, result.output
