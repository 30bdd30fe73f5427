"""Queries and keys computed with numpy (no torch): which configs are covered, the pieces of
arithmetic (RMSNorm, rotary embedding, MPNet's relative buckets, the causal mask) against
their definitions, and reading a model's weights from a safetensors file."""

from __future__ import annotations

import json

import numpy as np
import pytest

from contextlens.encoders.qk import allowed_of
from contextlens.encoders.qk_numpy import (
    LayerWeights,
    Projection,
    Spec,
    layer_qk,
    open_weights,
    relative_buckets,
    rms_norm,
    rotate,
    spec_of,
)

BERT = {"model_type": "bert", "num_attention_heads": 2, "hidden_size": 8, "num_hidden_layers": 1}
LLAMA = {"model_type": "llama", "num_attention_heads": 4, "num_key_value_heads": 2, "hidden_size": 16,
         "num_hidden_layers": 1, "rms_norm_eps": 1e-5, "rope_parameters": {"rope_theta": 500.0,
                                                                          "rope_type": "default"}}


def test_covered_configs_and_the_reasons_of_the_others():
    assert spec_of(BERT) == Spec("bert", 2, 2, 4, 1)
    assert spec_of({**BERT, "model_type": "mpnet"}).model_type == "mpnet"
    llama = spec_of(LLAMA)
    assert (llama.heads, llama.kv_heads, llama.d_head, llama.causal) == (4, 2, 4, True)
    assert llama.rope_theta == 500.0
    old = {**LLAMA, "rope_parameters": None, "rope_theta": 250.0, "head_dim": 8}  # transformers 4's keys
    assert (spec_of(old).rope_theta, spec_of(old).d_head) == (250.0, 8)
    assert "'llama3'" in spec_of({**LLAMA, "rope_parameters": {"rope_theta": 5e5, "rope_type": "llama3"}})
    assert "'linear'" in spec_of({**LLAMA, "rope_parameters": None, "rope_scaling": {"type": "linear"}})
    assert "relative_key" in spec_of({**BERT, "position_embedding_type": "relative_key"})
    assert spec_of({**BERT, "is_decoder": True}) == "BERT as a decoder"
    assert "'gpt2'" in spec_of({"model_type": "gpt2"})


def test_rms_norm_is_unit_root_mean_square_times_the_weight():
    h = np.random.default_rng(0).normal(size=(3, 16)).astype(np.float32) * 50
    out = rms_norm(h, np.ones(16), 0.0)
    np.testing.assert_allclose(np.sqrt((out**2).mean(-1)), 1.0, rtol=1e-6)
    np.testing.assert_allclose(rms_norm(h, np.full(16, 2.0), 0.0), 2 * out, rtol=1e-6)


def test_the_rotary_embedding_makes_scores_depend_on_the_distance_only():
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=(1, 1, 8)), rng.normal(size=(1, 1, 8))
    t = 40
    rq, rk = rotate(np.repeat(q, t, axis=1), 100.0)[0], rotate(np.repeat(k, t, axis=1), 100.0)[0]
    scores = rq @ rk.T  # (t, t): the same q and k at every position
    for shift in (0, 3, 17):
        diagonal = np.diagonal(scores, offset=shift)
        np.testing.assert_allclose(diagonal, diagonal[0], atol=1e-4)
    np.testing.assert_allclose(np.linalg.norm(rq, axis=-1), np.linalg.norm(q), rtol=1e-5)  # a rotation
    np.testing.assert_allclose(rq[0], q[0, 0], rtol=1e-6)  # position 0 is not turned


def test_mpnet_buckets_exact_near_logarithmic_far_and_capped():
    b = relative_buckets(300)
    assert b[0, :8].tolist() == [0, 17, 18, 19, 20, 21, 22, 23]  # keys after the query: 16 + distance
    assert b[7, 0] == 7 and b[8, 0] == 8  # exact below 8
    assert b[15, 0] == 9 and b[16, 0] == 10  # 8 + int(log(n/8) / log(16) * 8): n=15 → 9.8, n=16 → 10
    assert b[0, 16] == 26 and b[299, 0] == 15 and b[0, 299] == 31  # capped at the last bucket of each half
    assert np.array_equal(np.diagonal(b, offset=-5), np.full(295, 5))  # a function of j − i


def test_the_causal_mask_never_lets_a_token_see_padding_or_the_future():
    assert allowed_of(2, 2, causal=False).astype(int).tolist() == [[1, 1, 0, 0]] * 4
    assert allowed_of(3, 1, causal=True).astype(int).tolist() == [
        [1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 0]]


def test_grouped_keys_are_repeated_for_their_query_heads():
    spec = spec_of(LLAMA)
    rng = np.random.default_rng(2)
    weights = LayerWeights(Projection(rng.normal(size=(16, 16))), Projection(rng.normal(size=(8, 16))),
                           np.ones(16))
    q, k, bias = layer_qk(spec, weights, rng.normal(size=(5, 16)))
    assert q.shape == k.shape == (4, 5, 4) and bias is None
    assert np.array_equal(k[0], k[1]) and np.array_equal(k[2], k[3]) and not np.array_equal(k[1], k[2])


def test_open_weights_reads_a_safetensors_file_by_its_names_after_any_prefix(tmp_path):
    from safetensors.numpy import save_file

    rng = np.random.default_rng(3)
    tensors = {f"bert.encoder.layer.0.attention.self.{n}.{p}": rng.normal(size=(8, 8) if p == "weight" else 8)
               .astype(np.float32) for n in ("query", "key") for p in ("weight", "bias")}
    save_file(tensors, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps(BERT))
    weights = open_weights(tmp_path)
    h = rng.normal(size=(3, 8)).astype(np.float32)
    q, k, _ = weights.parts(1, h)
    want = h @ tensors["bert.encoder.layer.0.attention.self.query.weight"].T \
        + tensors["bert.encoder.layer.0.attention.self.query.bias"]
    np.testing.assert_allclose(q, want.reshape(3, 2, 4).transpose(1, 0, 2), rtol=1e-5, atol=1e-6)
    assert weights.spec.scale == 0.5


@pytest.mark.parametrize("problem", ["gpt2", "float16 is fine", "bfloat16", "no file"])
def test_open_weights_answers_none_for_what_numpy_cannot_read(tmp_path, problem, caplog):
    from safetensors.numpy import save_file

    config = {**BERT, "model_type": "gpt2"} if problem == "gpt2" else BERT
    (tmp_path / "config.json").write_text(json.dumps(config))
    dtype = np.float16 if problem == "float16 is fine" else np.float32
    tensors = {f"encoder.layer.0.attention.self.{n}.weight": np.ones((8, 8), dtype) for n in ("query", "key")}
    if problem != "no file":
        save_file(tensors, str(tmp_path / "model.safetensors"))
    if problem == "bfloat16":  # numpy has no bfloat16, nor safetensors' numpy API: the file written by hand
        header = {name: {"dtype": "BF16", "shape": [8, 8], "data_offsets": [128 * i, 128 * (i + 1)]}
                  for i, name in enumerate(tensors)}
        text = json.dumps(header).encode()
        (tmp_path / "model.safetensors").write_bytes(len(text).to_bytes(8, "little") + text + bytes(256))
    with caplog.at_level("INFO", logger="contextlens.encoders.qk_numpy"):
        got = open_weights(tmp_path)
    assert (got is not None) == (problem == "float16 is fine")
    reason = {"gpt2": "model type 'gpt2'", "bfloat16": "is BF16", "no file": "has no safetensors weights"}
    assert reason.get(problem, "nothing logged") in (caplog.text or "nothing logged")
