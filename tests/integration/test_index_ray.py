"""The Ray Data engine gives the same usages as the local engine (same ids, vectors equal
within float16 tolerance), on a small local Ray cluster."""

from __future__ import annotations

import numpy as np
import pytest

from tests.missing import need

need("lancedb")
ray = need("ray")
torch = need("torch")
transformers = need("transformers")

from contextlens.errors import InputError  # noqa: E402
from contextlens.index import build_index, open_store  # noqa: E402
from contextlens.index.build import make_index_encoder  # noqa: E402
from tests.integration.tiny_models import tiny_bert  # noqa: E402

WORDS = ["bank", "spring"]


def rows(db):
    table = open_store(db).table.search().select(["usage_id", "word", "doc", "start", "end", "v1", "v2"]) \
        .limit(None).to_arrow().sort_by("usage_id")
    vec = {k: table.column(k).combine_chunks().flatten().to_numpy(zero_copy_only=False)
           .reshape(table.num_rows, -1) for k in ("v1", "v2")}
    return table.drop_columns(["v1", "v2"]).to_pylist(), vec


def encoder_actors() -> int:
    """The Ray actors (alive or gone) that ran the usage encoder."""
    return sum(a["ActorClassName"] == "MapWorker(MapBatches(UsageEncoderActor))"
               for a in ray._private.state.actors().values())


@pytest.fixture(scope="module")
def local_ray():
    # a cluster of its own: never one that runs on the machine (another test's, another user's)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_engine_equals_local_engine(tmp_path, local_ray):
    model = str(tiny_bert(tmp_path))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(
        f"{'The' if i % 3 else 'A'} bank {'of the river' if i % 2 else 'lends money'} in spring number {i} ."
        if i % 4 else f"nothing to see on line {i} ." for i in range(40)) + "\n")
    local = build_index(corpus, tmp_path / "local", WORDS, model=model, layers=[1, 2], chunk_size=16,
                        encoder=make_index_encoder(model, [1, 2]))
    far = build_index(corpus, tmp_path / "ray", WORDS, model=model, layers=[1, 2], engine="ray",
                      concurrency=2, batch_size=4)  # one Ray Dataset (chunk): actors start once
    assert far.usages == local.usages == 60 and far.words == local.words
    a, va = rows(tmp_path / "local")
    b, vb = rows(tmp_path / "ray")
    assert a == b  # same ids, words, documents and spans
    for k in ("v1", "v2"):
        np.testing.assert_allclose(vb[k].astype(np.float32), va[k].astype(np.float32), atol=2e-3, rtol=2e-3)


def test_distillation_on_ray_equals_the_local_one(tmp_path, local_ray):
    from contextlens.encoders.transformer import TransformerEncoder
    from contextlens.passes.distill import distill

    model = str(tiny_bert(tmp_path))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(f"the bank {'of the river' if i % 2 else 'lends money'} in spring {i} ."
                                for i in range(30)) + "\n")
    encoder = TransformerEncoder(model, attention=False)
    kw = {"layers": "all", "pools": ["mean", "max"], "min_count": 2, "max_usages": 12, "chunk_size": 10}
    local = distill(corpus, encoder, **kw)
    out = tmp_path / "ray.npz"

    def stop(done, _):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):  # a local run stopped after its first chunk...
        distill(corpus, encoder, out, progress=stop, **kw)
    before = encoder_actors()
    far = distill(corpus, encoder, out, engine="ray", concurrency=2, **kw)  # ... resumed on Ray
    assert encoder_actors() >= before + 2  # the usages were encoded by Ray actors
    assert far.resumed_at == 10 and far.usages == local.usages and set(far.tables) == set(local.tables) == {
        (k, p) for k in (0, 1, 2) for p in ("mean", "max")}
    for key, table in local.tables.items():  # the pooling is the driver's: only the engine's 1e-5 differs
        assert far.tables[key].keys == table.keys
        np.testing.assert_allclose(far.tables[key].vectors, table.vectors, atol=1e-5)
    assert sorted(p.name for p in tmp_path.glob("ray*")) == [f"ray.layer{k}.{p}.npz" for k in (0, 1, 2)
                                                             for p in ("max", "mean")]
    with pytest.raises(InputError, match="pools a word's pieces by their mean"):
        distill(corpus, TransformerEncoder(model, attention=False, pooling="first"), engine="ray",
                min_count=2)


def test_more_actors_than_the_cluster_has_cpus_are_refused_at_once(tmp_path, local_ray):
    model = str(tiny_bert(tmp_path))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the bank of the river in spring .\n")
    with pytest.raises(InputError, match=r"the Ray cluster has 2 CPU\(s\): 3 encoder actor\(s\) need 3; pass "
                                         r"concurrency of at most 2, or add nodes"):
        build_index(corpus, tmp_path / "db", WORDS, model=model, layers=[1], engine="ray", concurrency=3)
