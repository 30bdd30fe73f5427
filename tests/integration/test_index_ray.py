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

from contextlens.index import build_index, open_store  # noqa: E402
from contextlens.index.build import make_index_encoder  # noqa: E402
from tests.integration.tiny_models import tiny_bert  # noqa: E402

WORDS = ["bank", "spring"]


def rows(db):
    table = open_store(db).table.search().select(["usage_id", "word", "doc", "start", "end", "v1", "v2"]) \
        .limit(None).to_arrow().sort_by("usage_id")
    vec = {k: table.column(k).combine_chunks().flatten().to_numpy(zero_copy_only=False).reshape(table.num_rows, -1)
           for k in ("v1", "v2")}
    return table.drop_columns(["v1", "v2"]).to_pylist(), vec


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
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
