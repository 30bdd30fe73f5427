"""``senses --wordnet``: the clusters of the sense probe matched to WordNet senses by the one
mapping ``index senses --wordnet`` uses (:func:`contextlens.evaluation.wordnet_map.map_centroids`),
on the README's six sentences of *bank* (finance × 3, river × 3) with the packaged minilm and
the shared WordNet and SemCor.

The SemCor pass (the ~200 sentences holding the keys the propagation to "bank"'s senses
reads) and the glosses run once, in the module fixture, into a module-wide cache (the parsed
SemCor is shared), so that the progress step of a cold pass is seen; the CLI tests read the
result from that cache."""

from __future__ import annotations

import json
import logging

import pytest

from tests.missing import missing, need, need_model

need("torch")
need("transformers")

from contextlens.datasets import DatasetMissingError  # noqa: E402
from contextlens.errors import InputError  # noqa: E402
from contextlens.evaluation.wordnet_map import WordNetNamer  # noqa: E402
from contextlens.files import cache_dir  # noqa: E402

FINANCE = ["The bank approved my loan.", "She opened an account at the bank.", "The bank raised its rates."]
RIVER = ["We sat on the bank of the river.", "Reeds grew along the bank of the stream.",
         "The boat drifted to the far bank."]
README = FINANCE + RIVER  # the README's `contextlens senses bank --model minilm -s ...` example
# the financial institution (depository_financial_institution.n.01), or the bank building (bank.n.09)
FINANCE_KEYS = ("bank%1:14:00::", "bank%1:06:00::")
RIVER_KEY = "bank%1:17:01::"  # bank.n.01, sloping land (especially the slope beside a body of water)


@pytest.fixture(scope="module")
def probed(tmp_path_factory, data_dir):
    for name in ("wordnet/index.sense", "wsd/semcor/semcor3.0_naf.tar.gz"):
        if not (data_dir / name).is_file():
            missing(f"{data_dir / name} is missing (WordNet and SemCor are needed)")
    need_model("minilm")
    from contextlens import make_encoder
    from contextlens.analysis.senses import senses
    from contextlens.evaluation import lmms
    from contextlens.progress import LOG

    root = tmp_path_factory.mktemp("wnsenses")
    (root / "cache").mkdir()
    (root / "cache" / "datasets").symlink_to(cache_dir("datasets"))  # the parsed SemCor is shared
    reports = []

    class Keep(logging.Handler):
        def emit(self, record):
            reports.append(record.progress)

    handler, level = Keep(), LOG.level
    LOG.addHandler(handler)
    LOG.setLevel(logging.INFO)
    try:
        with pytest.MonkeyPatch.context() as mp:
            # hermetic: the pass below is this module's own
            mp.setenv("CONTEXTLENS_CACHE", str(root / "cache"))
            mp.setattr(lmms, "_memo", {})  # nor kept in memory by an earlier test of this process
            encoder = make_encoder(model="minilm")
            cold = senses(encoder, README, "bank", wordnet=WordNetNamer(data_dir))
            cold_reports, reports[:] = list(reports), []
            warm = senses(encoder, README, "bank", wordnet=WordNetNamer(data_dir))
            yield {"out": cold, "warm": warm, "cold_reports": cold_reports, "warm_reports": list(reports),
                   "encoder": encoder, "data_dir": data_dir, "root": root, "senses": senses}
    finally:
        LOG.removeHandler(handler)
        LOG.setLevel(level)


def _cluster_of(out, sentences):
    for cluster in out["clusters"]:
        if set(cluster["sentences"]) == set(sentences):
            return cluster
    raise AssertionError("no cluster holds exactly these sentences: "
                         f"{[c['sentences'] for c in out['clusters']]}")


def test_clusters_carry_their_wordnet_senses(probed):
    out = probed["out"]
    assert out["k"] == 2 and out["layer"] == 6 and out["wordnet_lemma"] == "bank"
    finance = _cluster_of(out, FINANCE)
    assert finance["wordnet"][0]["key"] in FINANCE_KEYS, finance["wordnet"]
    best = finance["wordnet"][0]
    assert ("financial institution" in best["gloss"] and best["semcor_count"] > 0
            and best["source"] == "semcor")
    for cluster in out["clusters"]:
        got = cluster["wordnet"]
        assert len(got) == 3 and len({w["key"] for w in got}) == 3
        sims = [w["similarity"] for w in got]
        assert sims == sorted(sims, reverse=True) and all(-1 <= s <= 1 for s in sims)
        assert all(w["key"].startswith("bank%") and w["gloss"] and w["synset"] for w in got)
        assert {w["source"] for w in got} <= {"semcor", "synset", "hypernym", "lexname"}
    assert out["wordnet_unseen"] == []  # propagation gives every sense of "bank" an embedding
    # the second call reads the cache: the same senses, and no SemCor step
    assert [c["wordnet"] for c in probed["warm"]["clusters"]] == [c["wordnet"] for c in out["clusters"]]


@pytest.mark.xfail(strict=True, reason="minilm, layer 6, the README's three river sentences: the centroid is "
                   "nearest bank%1:17:00:: 'a long ridge or pile' (0.750), then bank%1:17:01:: 'sloping "
                   "land' (0.738); mpnet gets bank%1:17:01:: (tests/acceptance/test_senses_wordnet_mpnet.py)")
def test_the_river_cluster_is_sloping_land(probed):
    river = _cluster_of(probed["out"], RIVER)
    assert river["wordnet"][0]["key"] == RIVER_KEY, river["wordnet"]


def test_same_mapping_as_index_senses(probed):
    """The clusters' senses are map_centroids' own answer for their centroids (the one
    mapping both commands use), computed here from the usages' vectors."""
    import numpy as np

    from contextlens.evaluation.runner import make_task_encoder
    from contextlens.evaluation.wordnet_map import map_centroids, wordnet_candidates

    out, encoder = probed["out"], probed["encoder"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CONTEXTLENS_CACHE", str(probed["root"] / "cache"))
        centroids = []
        for cluster in out["clusters"]:
            x = np.stack([e.layers[-1, 0] for e in encoder.encode(cluster["sentences"], targets="bank")])
            x = x / np.linalg.norm(x, axis=1, keepdims=True)
            centroids.append(x.mean(axis=0) / np.linalg.norm(x.mean(axis=0)))
        candidates = wordnet_candidates("bank", 6, probed["data_dir"], layers_said="")
        mapped = map_centroids(make_task_encoder(model="minilm"), candidates, 6, np.stack(centroids))
    for cluster, senses in zip(out["clusters"], mapped["senses"], strict=True):
        assert [w["key"] for w in cluster["wordnet"]] == [w["key"] for w in senses]
        assert [w["similarity"] for w in cluster["wordnet"]] == pytest.approx([w["similarity"]
                                                                               for w in senses],
                                                                              abs=2e-4)


def test_the_semcor_pass_is_a_progress_step_once(probed):
    semcor = [r for r in probed["cold_reports"] if r.what.startswith("reading SemCor")]
    assert semcor and semcor[0].state == "start" and semcor[-1].state == "end", probed["cold_reports"]
    assert semcor[-1].done > 0 and "minilm, layer 6" in semcor[0].what and "cached" in semcor[0].once
    assert not [r for r in probed["warm_reports"] if r.what.startswith("reading SemCor")]


def _cli(probed, *args):
    from typer.testing import CliRunner

    from contextlens.cli import app

    sentences = [a for s in README for a in ("-s", s)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CONTEXTLENS_CACHE", str(probed["root"] / "cache"))
        return CliRunner().invoke(app, ["senses", "bank", *sentences, "--wordnet", "--data-dir",
                                        str(probed["data_dir"]), *args])


def test_cli_prints_each_clusters_senses_and_json_carries_them(probed):
    res = _cli(probed, "--model", "minilm", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    finance = _cluster_of(out, FINANCE)
    assert finance["wordnet"][0]["key"] in FINANCE_KEYS
    assert [c["wordnet"] for c in out["clusters"]] == [c["wordnet"] for c in probed["out"]["clusters"]]
    assert out["wordnet_lemma"] == "bank" and out["wordnet_unseen"] == []
    res = _cli(probed, "--model", "minilm")
    assert res.exit_code == 0, res.output
    for cluster in probed["out"]["clusters"]:
        best = cluster["wordnet"][0]
        assert f"cluster {cluster['id']} ({cluster['size']} usages)" in res.stdout
        assert (
            f"WordNet {best['similarity']:.3f}  {best['key']} {best['synset']}: {best['gloss']}" in res.stdout
        )


def test_a_static_encoder_and_layer_zero_get_one_line(probed):
    res = _cli(probed, "--vectors", "glove-6b-50d")
    assert res.exit_code == 2
    assert res.output.count("\n") == 1 and "need a transformer (--model" in res.output, res.output
    with pytest.raises(InputError, match="need a transformer"):
        from contextlens import make_encoder

        probed["senses"](make_encoder("average", vectors="glove-6b-50d"), README, "bank",
                         wordnet=WordNetNamer(probed["data_dir"]))
    from typer.testing import CliRunner

    from contextlens.cli import app

    res = CliRunner().invoke(app, ["senses", "bank", "-s", README[0], "--model", "minilm", "--data-dir", "x"])
    assert res.exit_code == 2 and "--data-dir only applies with --wordnet" in res.output, res.output
    res = _cli(probed, "--model", "minilm", "--layer", "0")
    assert res.exit_code == 2
    assert res.output.count("\n") == 1 and "layer 0 is the model's embedding row" in res.output, res.output


def test_data_folder_without_wordnet_or_semcor(probed, tmp_path):
    senses, encoder = probed["senses"], probed["encoder"]
    with pytest.raises(DatasetMissingError, match=r"wordnet/index\.sense.*CONTEXTLENS_DATA"):
        senses(encoder, README, "bank", wordnet=WordNetNamer(tmp_path))
    (tmp_path / "wordnet").symlink_to(probed["data_dir"] / "wordnet")
    with pytest.raises(DatasetMissingError, match=r"semcor3\.0_naf\.tar\.gz"):
        senses(encoder, README, "bank", wordnet=WordNetNamer(tmp_path))
    with pytest.raises(InputError, match="no sense in WordNet"):
        senses(encoder, ["a zqxjv here", "the zqxjv there", "one zqxjv"], "zqxjv",
               wordnet=WordNetNamer(probed["data_dir"]))
