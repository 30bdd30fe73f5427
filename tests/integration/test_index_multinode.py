"""The Ray engine on several nodes: Ray's own multi-node test cluster on this machine (a head
with no CPU for actors, two worker nodes of one CPU each), driven as a user would
(``index build --engine ray --address HEAD``, ``static distill --engine ray``). Both worker
nodes do work (the actors report their node with every batch); the results equal a local
run (same usages, vectors within 1e-5, stored as float32); a worker node killed while a
chunk is being encoded, or the driver killed between chunks, still ends with exactly the
clean result. A chunk lost with a node is encoded again (``RayEncoder``'s retry; Ray Data's
own task retries recover the node killed here first)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections import Counter

import numpy as np
import pytest

from tests.missing import need

need("lancedb")
ray = need("ray")
need("torch")
need("transformers")

from ray.cluster_utils import Cluster  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from contextlens.cli import app  # noqa: E402
from contextlens.index import build_index, open_store  # noqa: E402
from contextlens.index.build import make_index_encoder  # noqa: E402
from contextlens.passes import ray_engine  # noqa: E402
from tests.integration.tiny_models import tiny_model  # noqa: E402

WORDS = ["bank", "spring"]
runner = CliRunner()


@pytest.fixture(scope="module")
def cluster():
    """A head (no CPU: actors go to the workers) and two worker nodes of one CPU each."""
    if ray.is_initialized():
        ray.shutdown()
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    workers = [c.add_node(num_cpus=1) for _ in range(2)]
    c.wait_for_nodes()
    yield c, workers
    if ray.is_initialized():
        ray.shutdown()
    c.shutdown()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("multinode")
    model = str(tiny_model(root, init=0.5))
    rng = np.random.default_rng(0)
    fill = "the a of money loan water mud we sat on it by far near old new green cold river".split()
    corpus = root / "corpus"
    corpus.mkdir()
    for d in range(3):
        lines = [" ".join([*rng.choice(fill, 3), WORDS[(d + i) % 2], *rng.choice(fill, 4), str(i)])
                 for i in range(40)]
        (corpus / f"doc{d}.txt").write_text("\n".join(lines) + "\n")
    local = build_index(corpus, root / "local", WORDS, model=model, layers=[1, 2], dtype="float32",
                        encoder=make_index_encoder(model, [1, 2]))
    assert local.usages == 120
    return {"root": root, "model": model, "corpus": corpus, "local": root / "local"}


@pytest.fixture
def seen_by_engine(monkeypatch):
    """What each RayEncoder reported when it closed: usages per node, chunks encoded again."""
    seen: list[dict] = []
    close = ray_engine.RayEncoder.close

    def recording_close(self):
        seen.append({"nodes": dict(self.nodes), "retried": self.retried})
        close(self)

    monkeypatch.setattr(ray_engine.RayEncoder, "close", recording_close)
    return seen


def stored(db):
    table = open_store(db).table.search().select(["usage_id", "word", "doc", "start", "end", "v1", "v2"]) \
        .limit(None).to_arrow().sort_by("usage_id")
    vec = {k: table.column(k).combine_chunks().flatten().to_numpy(zero_copy_only=False)
           .reshape(table.num_rows, -1) for k in ("v1", "v2")}
    return table.drop_columns(["v1", "v2"]).to_pylist(), vec


def assert_same_index(db, local):
    a, va = stored(local)
    b, vb = stored(db)
    assert a == b  # the same usages: ids, words, documents, spans
    for k in va:
        np.testing.assert_allclose(vb[k], va[k], atol=1e-5)


def worker_ids(workers) -> set[str]:
    return {w.node_id for w in workers}


def test_a_build_spreads_over_both_worker_nodes(cluster, data, tmp_path):
    c, workers = cluster
    res = runner.invoke(app, ["index", "build", str(data["corpus"]), "--db", str(tmp_path / "db"), "--words",
                              ",".join(WORDS), "--model", data["model"], "--layers", "1,2", "--dtype",
                              "float32",
                              "--engine", "ray", "--address", c.address, "--concurrency", "2", "--batch-size",
                              "4", "--json"])
    assert res.exit_code == 0, res.output
    nodes = json.loads(res.stdout)["nodes"]  # reported by the actors, batch by batch
    assert set(nodes) == worker_ids(workers) and all(n > 0 for n in nodes.values())
    assert sum(nodes.values()) == 120
    assert_same_index(tmp_path / "db", data["local"])


def test_distillation_spreads_over_both_worker_nodes(cluster, data, tmp_path, seen_by_engine):
    from contextlens.vectors_io import read_table

    c, workers = cluster
    common = ["static", "distill", str(data["corpus"]), "--model", data["model"], "--layers", "1,2",
              "--min-count", "2", "--json"]
    res = runner.invoke(app, [*common, "--out", str(tmp_path / "local.npz")])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, [*common, "--out", str(tmp_path / "ray.npz"), "--engine", "ray", "--address",
                              c.address, "--concurrency", "2"])
    assert res.exit_code == 0, res.output
    assert set(seen_by_engine[-1]["nodes"]) == worker_ids(workers)
    assert all(n > 0 for n in seen_by_engine[-1]["nodes"].values())
    for layer in (1, 2):
        a, b = (read_table(tmp_path / f"{name}.layer{layer}.npz") for name in ("local", "ray"))
        assert a.keys == b.keys and len(a.keys) > 20
        np.testing.assert_allclose(b.vectors, a.vectors, atol=1e-5)


CHILD = textwrap.dedent("""
    import os, signal, sys
    from contextlens.index import build_index
    corpus, db, model, address = sys.argv[1:5]
    def progress(done, usages):  # the driver dies once its first chunk is committed
        if done >= 40:
            os.kill(os.getpid(), signal.SIGKILL)
    build_index(corpus, db, ["bank", "spring"], model=model, layers=[1, 2], dtype="float32", engine="ray",
                address=address, concurrency=2, batch_size=4, chunk_size=40, progress=progress)
""")


def test_a_killed_driver_resumes_to_the_clean_result(cluster, data, tmp_path):
    c, workers = cluster
    db = tmp_path / "db"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.run([sys.executable, "-c", CHILD, str(data["corpus"]), str(db), data["model"],
                            c.address],
                           env=env, capture_output=True, text=True, timeout=900)
    assert child.returncode == -signal.SIGKILL, child.stderr[-2000:]
    assert open_store(db).checkpoint()["sentences_done"] == 40
    result = build_index(data["corpus"], db, WORDS, model=data["model"], layers=[1, 2], dtype="float32",
                         engine="ray", address=c.address, concurrency=2, batch_size=4, chunk_size=40)
    assert result.resumed_at == 40 and result.usages == 120 and set(result.nodes) <= worker_ids(workers)
    assert_same_index(db, data["local"])


def test_a_worker_node_killed_mid_build_still_gives_the_clean_result(cluster, data, tmp_path, monkeypatch,
                                                                      seen_by_engine):
    c, workers = cluster
    killed: list[str] = []
    batches = ray_engine.RayEncoder._batches

    def killing(self, planned, elastic=False):
        for batch in batches(self, planned, elastic):
            yield batch
            # the node that encoded this batch dies, its chunk unfinished
            if not killed and len(batch["node"]):
                victim = next(w for w in c.worker_nodes if w.node_id == batch["node"][0])
                killed.append(victim.node_id)
                c.remove_node(victim, allow_graceful=False)

    monkeypatch.setattr(ray_engine.RayEncoder, "_batches", killing)
    try:
        result = build_index(data["corpus"], tmp_path / "db", WORDS, model=data["model"], layers=[1, 2],
                             dtype="float32", engine="ray", address=c.address, concurrency=2, batch_size=2)
    finally:
        if len(c.worker_nodes) < 2:
            c.add_node(num_cpus=1)  # for tests run after this one
    assert killed  # the node lost had encoded a batch of the chunk (which was then unfinished)
    assert seen_by_engine[-1]["retried"] == 1  # the chunk, lost with the node, was encoded again
    assert result.usages == sum(result.nodes.values()) == 120 and killed[0] not in result.nodes
    assert_same_index(tmp_path / "db", data["local"])


def test_no_address_starts_a_cluster_of_its_own_beside_a_running_one(cluster, data, tmp_path, monkeypatch):
    """With no --address the build runs on a local cluster of its own: it never joins a cluster
    that Ray finds by itself (RAY_ADDRESS, or the last one started on this machine, as this
    test's cluster is: another test's, or another user's)."""
    c, workers = cluster
    monkeypatch.setenv("RAY_ADDRESS", c.address)
    if ray.is_initialized():
        ray.shutdown()
    result = build_index(data["corpus"], tmp_path / "db", WORDS, model=data["model"], layers=[1, 2],
                         dtype="float32", engine="ray", concurrency=1, batch_size=8)
    assert result.usages == sum(result.nodes.values()) == 120
    # not the running cluster's nodes
    assert not set(result.nodes) & {*worker_ids(workers), c.head_node.node_id}
    assert not ray.is_initialized()  # the cluster it started is gone with the build
    assert_same_index(tmp_path / "db", data["local"])


def test_a_chunk_lost_with_a_node_is_encoded_again_and_other_errors_are_not_retried(monkeypatch):
    from ray.exceptions import NodeDiedError

    from contextlens.corpus.targets import Occurrence
    from contextlens.passes.rows import PlannedSentence

    enc = object.__new__(ray_engine.RayEncoder)  # the retry logic alone: no cluster
    enc.nodes, enc.retried, enc.retries, enc.layers, enc.dim, enc.lost_node = Counter(), 0, 2, [1], 2, False
    planned = [PlannedSentence("d", 0, "the bank", (Occurrence("u", "bank", "bank", 4, 8),))]
    row = np.empty(1, dtype=object)
    row[0] = ("u", "bank")
    calls, starts = [], []

    def flaky(self, _, elastic=False):
        starts.append(elastic)
        calls.append(1)
        yield {"row": row, "node": np.array(["n1"]), "1": np.ones((1, 2), np.float32)}
        if len(calls) == 1:
            raise NodeDiedError("node n1 died")  # after a batch: the chunk's other batches are lost

    monkeypatch.setattr(ray_engine.RayEncoder, "_batches", flaky)
    got = enc.encode(planned)
    assert len(calls) == 2 and enc.retried == 1 and len(got.rows) == 1 and enc.nodes == {"n1": 1}
    assert starts == [False, True] and enc.lost_node  # again, on an elastic pool (the CPUs left)
    try:
        try:
            raise NodeDiedError("node n2 died")
        except NodeDiedError as e:
            raise RuntimeError("the dataset's execution failed") from e
    except RuntimeError as wrapped:  # as Ray Data may raise it
        assert ray_engine.node_lost(wrapped) and not ray_engine.node_lost(ValueError("x"))

    def broken(self, _, elastic=False):
        calls.append(1)
        raise ValueError("a bug, not a lost node")
        yield

    monkeypatch.setattr(ray_engine.RayEncoder, "_batches", broken)
    calls.clear()
    with pytest.raises(ValueError, match="a bug"):
        enc.encode(planned)
    assert len(calls) == 1
