"""The ONNX Runtime engine on tiny random-weight models (BERT, MPNet, Llama) built from
configs: every hidden state (and attention) equal to Hugging Face's own within 1e-5, on
batch shapes other than the one the export was traced on; the export cache reused,
keyed by the weights, and rebuilt when corrupt."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.missing import need

torch = need("torch")
transformers = need("transformers")
need("onnxruntime")

from contextlens.encoders import onnx_engine  # noqa: E402
from contextlens.encoders.model_cache import MARKER  # noqa: E402
from contextlens.encoders.onnx_engine import ExportSettings, OnnxRunner  # noqa: E402
from contextlens.errors import InputError, UnknownOptionError  # noqa: E402

VOCAB = 120


def tiny(kind: str, attention: bool = False, seed: int = 0):
    """A 2-layer, 32-dim random model, as ``models.load`` gives it (float32, eval)."""
    torch.manual_seed(seed)
    common = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=37, max_position_embeddings=64)
    config = {
        "bert": lambda: transformers.BertConfig(**common),
        "mpnet": lambda: transformers.MPNetConfig(**common),
        "llama": lambda: transformers.LlamaConfig(**common, num_key_value_heads=1, pad_token_id=1),
    }[kind]()
    kwargs = {"attn_implementation": "eager"} if attention else {}  # as models.load does
    return transformers.AutoModel.from_config(config, **kwargs).float().eval()


def batch(lengths: list[int], seed: int = 1):
    """Random ids (2..VOCAB) right-padded with 1 to the longest length, and the mask."""
    gen = torch.Generator().manual_seed(seed)
    width = max(lengths)
    ids = torch.ones((len(lengths), width), dtype=torch.long)
    mask = torch.zeros((len(lengths), width), dtype=torch.long)
    for b, n in enumerate(lengths):
        ids[b, :n] = torch.randint(2, VOCAB, (n,), generator=gen)
        mask[b, :n] = 1
    return ids, mask


def hf(model, ids, mask, attention=False):
    with torch.no_grad():
        return model(input_ids=ids, attention_mask=mask, output_hidden_states=True,
                     output_attentions=attention)


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "onnx"


@pytest.mark.parametrize("kind", ["bert", "mpnet", "llama"])
def test_every_hidden_state_equals_hugging_face(kind):
    model = tiny(kind)
    runner = OnnxRunner(model, threads=1)
    for lengths in ([9, 4, 1], [1], [23, 23], [40, 2, 17, 30]):  # the export was traced on [5, 3]
        ids, mask = batch(lengths)
        out = runner.run(ids, mask)
        ref = hf(model, ids, mask).hidden_states
        assert out.attentions is None and len(out.hidden_states) == len(ref) == 3
        valid = mask.numpy().astype(bool)
        for got, want in zip(out.hidden_states, ref):
            assert got.shape == tuple(want.shape)  # (batch, seq, dim)
            np.testing.assert_allclose(got[valid], want.numpy()[valid], atol=1e-5, rtol=0)


def test_attentions_equal_hugging_face_eager():
    model = tiny("bert", attention=True)
    runner = OnnxRunner(model, threads=1)
    ids, mask = batch([11, 6, 3])
    out = runner.run(ids, mask, want_attention=True)
    ref = hf(model, ids, mask, attention=True)
    assert len(out.attentions) == 2
    for got, want in zip(out.attentions, ref.attentions):  # (batch, heads, seq, seq)
        for b, n in enumerate(mask.sum(1).tolist()):
            np.testing.assert_allclose(got[b, :, :n, :n], want[b, :, :n, :n].numpy(), atol=1e-5, rtol=0)
            np.testing.assert_allclose(got[b, :, :n, :n].sum(-1), 1, atol=1e-5)
    for got, want in zip(out.hidden_states, ref.hidden_states):
        np.testing.assert_allclose(got[0], want[0].numpy(), atol=1e-5, rtol=0)


def test_attention_needs_the_eager_model():
    runner = OnnxRunner(tiny("bert"), threads=1)
    with pytest.raises(InputError, match="attention=True"):
        runner.run(*batch([3]), want_attention=True)


def test_bad_shapes_and_settings_are_refused():
    runner = OnnxRunner(tiny("bert"), threads=1)
    ids, mask = batch([4, 2])
    with pytest.raises(InputError, match="must both be"):
        runner.run(ids, mask[:, :3])
    with pytest.raises(UnknownOptionError, match="torchscript"):
        ExportSettings(exporter="jit")


def test_the_export_is_cached_by_weights_and_settings(cache, monkeypatch):
    model = tiny("bert")
    first = OnnxRunner(model, threads=1)
    first.session()
    folder = first.paths[False]
    assert folder.parent == cache and (folder / MARKER).is_file() and (folder / "export.json").is_file()

    def no_export(*args, **kwargs):
        raise AssertionError("exported again")

    with monkeypatch.context() as patch:
        patch.setattr(onnx_engine, "export", no_export)
        again = OnnxRunner(tiny("bert"), threads=1)  # same seed: same weights
        again.session()
    assert again.paths[False] == folder
    other = OnnxRunner(tiny("bert", seed=1), threads=1)
    other.session()
    assert other.paths[False] != folder
    assert len([p for p in cache.iterdir() if not p.name.startswith(".")]) == 2  # two exports, beside locks


def test_old_exports_are_removed_past_the_cache_budget(cache, monkeypatch):
    import fcntl
    import os

    first = OnnxRunner(tiny("bert"), threads=1)
    first.session()
    old = first.paths[False]
    os.utime(old, (1, 1))  # used long ago
    monkeypatch.setenv("CONTEXTLENS_CACHE_LIMIT_ONNX", "1")  # any two exports are over budget
    with open(cache / f".{old.name}.lock") as lock:  # another process is (re)building it: it stays
        fcntl.flock(lock, fcntl.LOCK_EX)
        OnnxRunner(tiny("bert", seed=1), threads=1).session()
        assert old.is_dir()
    newest = OnnxRunner(tiny("bert", seed=2), threads=1)
    newest.session()  # the lock is free now: the least recently used go, the new one stays
    assert [p for p in cache.iterdir() if not p.name.startswith(".")] == [newest.paths[False]]
    assert not (cache / f".{old.name}.lock").exists() and not (cache / f".{old.name}.use").exists()


@pytest.mark.parametrize("damage", ["truncate", "garble"])
def test_a_corrupt_export_is_rebuilt(damage):
    model = tiny("bert")
    runner = OnnxRunner(model, threads=1)
    runner.session()
    graph = runner.paths[False] / "model.onnx"
    data = graph.read_bytes()
    # truncated: the marker's size check sees it; same size but garbled: onnxruntime cannot load it
    graph.write_bytes(data[: len(data) // 2] if damage == "truncate" else b"\x07" * len(data))
    fresh = OnnxRunner(model, threads=1)
    ids, mask = batch([7, 3])
    out = fresh.run(ids, mask)
    assert fresh.paths[False] == runner.paths[False] and graph.read_bytes() != b"\x07" * len(data)
    np.testing.assert_allclose(out.hidden_states[2][0], hf(model, ids, mask).hidden_states[2][0].numpy(),
                               atol=1e-5, rtol=0)


def _poison_largest_weights(graph: Path) -> None:
    """Overwrite the largest weight array of an ONNX graph in place with NaN bytes (0xFF):
    the file keeps its size and still loads (as ``dd conv=notrunc`` over the weights file
    beside ``model.onnx``)."""
    onnx = need("onnx")
    from onnx.external_data_helper import uses_external_data

    weights = max(onnx.load(str(graph), load_external_data=False).graph.initializer,
                  key=lambda t: int({e.key: e.value for e in t.external_data}.get("length", 0)))
    assert uses_external_data(weights)
    where = {e.key: e.value for e in weights.external_data}
    assert int(where["length"]) > 1000
    with open(graph.parent / where["location"], "r+b") as f:
        f.seek(int(where.get("offset", 0)))
        f.write(b"\xff" * int(where["length"]))


def test_an_export_overwritten_in_place_is_seen_by_its_checksum(caplog):
    model = tiny("bert")
    runner = OnnxRunner(model, threads=1)
    runner.session()
    graph = runner.paths[False] / "model.onnx"
    size = graph.stat().st_size
    _poison_largest_weights(graph)
    assert graph.stat().st_size == size
    ids, mask = batch([7, 3])
    with caplog.at_level("INFO", logger="contextlens.disk_cache"):
        out = OnnxRunner(model, threads=1).run(ids, mask)
    assert "SHA-256 differs" in caplog.text  # seen when loading, before anything ran
    for got, want in zip(out.hidden_states, hf(model, ids, mask).hidden_states):
        np.testing.assert_allclose(got[0], want[0].numpy(), atol=1e-5, rtol=0)


def test_non_finite_outputs_rebuild_the_export_once(monkeypatch, caplog):
    real, calls = onnx_engine.export, []

    def damaged_first(model, target, settings):  # an export damaged before its checksum was taken
        path = real(model, target, settings)
        if not calls:
            _poison_largest_weights(path)
        calls.append(path)
        return path

    monkeypatch.setattr(onnx_engine, "export", damaged_first)
    model = tiny("bert")
    runner = OnnxRunner(model, threads=1)
    ids, mask = batch([6, 2])
    with caplog.at_level("WARNING"):
        out = runner.run(ids, mask)
    assert len(calls) == 2 and "gave NaN or infinite values" in caplog.text
    assert str(runner.paths[False]) in caplog.text
    for got, want in zip(out.hidden_states, hf(model, ids, mask).hidden_states):
        np.testing.assert_allclose(got[0], want[0].numpy(), atol=1e-5, rtol=0)


def test_a_model_that_gives_nan_is_an_error_naming_the_export():
    model = tiny("bert")
    with torch.no_grad():
        model.embeddings.LayerNorm.weight[0] = float("nan")  # the model itself gives NaN
    runner = OnnxRunner(model, threads=1)
    with pytest.raises(onnx_engine.OnnxOutputError, match="torch engine") as err:
        runner.run(*batch([4]))
    assert str(runner.paths[False]) in str(err.value)


def test_padding_may_hold_anything():
    mask = np.array([[1, 1, 0]])
    hidden = np.zeros((1, 3, 2))
    hidden[0, 2] = np.nan  # a padded position
    attention = np.zeros((1, 1, 3, 3))
    attention[0, 0, 2, :] = np.nan  # weights of a padded query
    assert onnx_engine.all_finite([hidden, attention], mask)
    attention[0, 0, 1, 0] = np.inf
    assert not onnx_engine.all_finite([hidden, attention], mask)


def test_threads_follow_the_torch_setting(monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_THREADS", "1")
    threads = torch.get_num_threads()
    runner = OnnxRunner(tiny("bert"))
    assert runner.threads == 1 and torch.get_num_threads() == threads  # torch's own is left alone
    opts = onnx_engine.session_options(runner.threads, spinning=False)
    assert opts.intra_op_num_threads == 1
    assert opts.get_session_config_entry("session.intra_op.allow_spinning") == "0"
