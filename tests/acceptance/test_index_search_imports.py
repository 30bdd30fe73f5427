"""``index search`` of a complete local index imports neither lancedb (a second of CPU) nor
torch or transformers: it is answered from the side index and the model's ONNX export
(issue 23 §1, goal ≤ 1.5 s of CPU above a bare interpreter); its hits are those of the same
search through LanceDB."""

from __future__ import annotations

import json

from tests.acceptance.test_startup_imports import run
from tests.missing import need, need_model

need("lancedb")
need("onnxruntime")
need("tokenizers")

RIVER = "We sat on the bank of the river."


def test_index_search_imports_neither_lancedb_nor_torch_and_finds_what_lancedb_finds(brown, tmp_path):
    need_model("minilm")
    lines = [line for line in brown.read_text(errors="replace").splitlines() if " bank " in line][:30]
    corpus, db = tmp_path / "corpus.txt", tmp_path / "usages.lance"
    corpus.write_text("\n".join(lines) + "\n")
    run(["index", "build", str(corpus), "--db", str(db), "--words", "bank", "--model", "minilm"])
    search = ["index", "search", "--db", str(db), RIVER, "--word", "bank", "-k", "5", "--json"]
    run(search)  # the model's export made if it was not (the first run may import torch)
    fast, modules = run(search, importtime=True)
    assert "contextlens.index.reader" in modules  # the measurement sees our modules
    assert sorted({"lancedb", "torch", "transformers", "pandas"} & modules) == []
    # the same search through LanceDB: a side index without the index's parameters (as an
    # older version wrote it) is not used alone
    meta = next(db.glob("search-v*")) / "meta.json"
    older = json.loads(meta.read_text())
    del older["index"]
    meta.write_text(json.dumps(older))
    slow, modules = run(search, importtime=True)
    assert "lancedb" in modules
    assert json.loads(fast) == json.loads(slow) and len(json.loads(fast)["results"]) == 5
