"""Every number a view carries equals the library's: weights, special shares, rollout,
queries and keys, scores, cosines, projections and neighbours; and the pages are
self-contained (no network), atomic to write, and small where they must be."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from contextlens import views
from contextlens.analysis.attribution import attention_rollout
from contextlens.analysis.projection import project
from contextlens.analysis.similarity import cosine_by_layer, cosine_matrix
from contextlens.analysis.toy import COURSE_VECTORS, toy_table
from contextlens.encoders.base import Encoding, WordPieces
from contextlens.encoders.mixing import NeighbourAverage, SelfAttention
from contextlens.errors import InputError
from contextlens.text import tokenize
from contextlens.vectors import EmbeddingTable
from contextlens.views.packing import QUANT, Packed, pack, quantise, sparsify

STEP = 0.5 / QUANT  # the largest error of a quantised weight


def transformer_like(n=5, layers=3, heads=4, seed=0) -> Encoding:
    """An Encoding shaped like a transformer's: attention rows plus a special share sum to 1."""
    rng = np.random.default_rng(seed)
    raw = rng.gamma(0.3, size=(layers, heads, n, n + 1))
    raw /= raw.sum(-1, keepdims=True)
    text = " ".join(["bank", "river", "money", "loan", "sat", "the", "of"][:n])
    meta = {"encoder": "transformer", "model": "fake", "pieces": [[w] for w in text.split()],
            "piece_ids": [[100 + i] for i in range(n)]}
    return Encoding(text, tokenize(text), rng.normal(size=(layers + 1, n, 6)),
                    raw[..., :n].astype(np.float32),
                    meta=meta, special_attention=raw[..., n].astype(np.float32),
                    embeddings_output=rng.normal(size=(n, 6)).astype(np.float32), source="fake",
                    pieces=WordPieces(tuple((w,) for w in text.split()), tuple((100 + i,) for i in range(n))))


def unpacked(d: dict) -> np.ndarray:
    """A packed array of a view's JSON, back as numpy."""
    return Packed(d["dtype"], tuple(d["shape"]), d["data"], d.get("scale")).unpack()


def test_packed_arrays_round_trip():
    a = np.arange(6, dtype=np.float64).reshape(2, 3) / 7
    assert np.array_equal(pack(a).unpack(), a) and pack(a).dtype == "float64"
    assert pack(a.astype(np.float32)).unpack().dtype == np.float32
    assert pack(np.array([[True, False]])).unpack().tolist() == [[1, 0]]
    w = np.random.default_rng(1).random(1000)
    assert np.abs(quantise(w).unpack() - w).max() <= STEP
    with pytest.raises(InputError, match="only weights in"):
        quantise([1.5])


def test_sparse_weights_keep_what_is_drawn_and_say_how_much():
    w = np.random.default_rng(2).dirichlet(np.full(50, 0.2), size=(3, 50))  # (3, 50, 50)
    s = sparsify(w, 0.01)
    kept = w >= 0.01
    assert s.counts.unpack().sum() == kept.sum()
    d = s.dense()
    assert np.abs(d[kept] - w[kept]).max() <= STEP and not d[~kept].any()
    assert s.stored == pytest.approx(w[kept].sum() / w.sum())
    capped = sparsify(w, 0.01, budget=600)  # 200 a matrix: each keeps its strongest weights
    cut = np.array(capped.thresholds)
    assert capped.threshold == 0.01 and (cut > 0.01).all() and capped.counts.unpack().sum() <= 610
    assert (
        capped.counts.unpack().reshape(3, 50).sum(1).tolist()
        == (w >= cut[:, None, None]).sum((1, 2)).tolist()
    )
    assert sparsify(w, 0.01, budget=10**6).thresholds == (0.01,) * 3


def test_attention_data_equals_the_encoding():
    enc = transformer_like()
    data = views.attention_data(enc, threshold=0.02)
    L, H, n = enc.attention.shape[:3]
    dense = data.words.weights.dense()  # (layers, heads + 1, n, n)
    assert dense.shape == (L, H + 1, n, n) and data.threshold == 0.02
    full = np.concatenate([enc.attention, enc.attention.mean(1, keepdims=True)], 1).astype(np.float64)
    kept = full >= 0.02
    assert np.abs(dense[kept] - full[kept]).max() <= STEP and not dense[~kept].any()
    share = data.words.special_share.unpack()
    assert np.array_equal(share[:, :H], enc.special_attention)
    assert np.allclose(share[:, H], enc.special_attention.astype(np.float64).mean(1), atol=1e-7)
    roll = attention_rollout(enc.attention.astype(np.float64), enc.special_attention.astype(np.float64))
    assert np.abs(data.words.rollout.unpack() - roll[:, :n, :]).max() <= STEP and data.words.rollout_special
    assert data.words.titles[0] == "bank: bank (id 100)" and data.layer_ids == (1, 2, 3)


def test_piece_level_comes_from_the_parts():
    encoder = SelfAttention(toy_table(COURSE_VECTORS), heads=2)
    enc = encoder.encode(["bank loan river"])[0]
    parts = encoder.attention_parts("bank loan river")
    data = views.attention_data(enc, parts, threshold=0.0)
    assert data.pieces.tokens == ("bank", "loan", "river") and data.pieces.token_words == ((0,), (1,), (2,))
    assert np.abs(data.pieces.weights.dense()[0, :2] - parts[0].weights).max() <= STEP
    assert not data.pieces.special_share.unpack().any()  # no special tokens among words
    with pytest.raises(InputError, match="every layer of the encoding"):
        views.attention_data(enc, encoder.attention_parts("bank loan river", pad=1))


def test_head_and_model_views_check_their_options():
    enc = transformer_like()
    v = views.head_view(enc, layer=2, heads=[3, 1])
    assert v.data["initial"] == {"layer": 1, "heads": [1, 3], "level": "words", "specials": False}
    with pytest.raises(InputError, match="heads must be"):
        views.head_view(enc, heads=[7])
    with pytest.raises(InputError, match="unknown level 'pieces'"):
        views.head_view(enc, level="pieces")
    with pytest.raises(InputError, match="layer 0 is the static row"):
        views.head_view(enc, layer=0)
    assert views.model_view(enc, word="money").data["initial"]["word"] == 2
    with pytest.raises(InputError, match="no attention weights"):
        views.head_view(Encoding("a b", tokenize("a b"), np.ones((1, 2, 2))))
    averaged = NeighbourAverage(EmbeddingTable(["a", "b"], [[1.0, 0], [0, 1]])).encode(["a b"])[0]
    assert views.head_view(averaged).data["attention"]["heads"] == 1


def test_neuron_and_mask_views_carry_the_parts():
    encoder = SelfAttention(toy_table(COURSE_VECTORS), causal=True)
    parts = encoder.attention_parts("bank loan river", pad=1)[0]
    v = views.neuron_view(parts, word="loan").data
    assert v["initial"] == {"head": 0, "token": 1} and v["scale"] == parts.scale
    assert (np.array_equal(unpacked(v["queries"]), parts.queries)
            and np.array_equal(unpacked(v["keys"]), parts.keys))
    assert np.array_equal(unpacked(v["weights"]), parts.weights)
    m = views.mask_view(parts, fill="0").data
    assert np.array_equal(unpacked(m["scores"]), parts.scores()) and m["padding"] == 1
    assert np.array_equal(unpacked(m["allowed"]).astype(bool), parts.allowed)
    leak = views.leaked_weight(parts.scores()[0], parts.allowed)
    assert np.allclose(leak, (parts.softmax(fill=0.0)[0] * ~parts.allowed).sum(-1)) and (leak > 0).all()
    with pytest.raises(InputError, match="head must be"):
        views.neuron_view(parts, head=1)
    with pytest.raises(InputError, match="fill must be"):
        views.mask_view(parts, fill="nan")


def test_input_view_compares_usages_stage_by_stage():
    a, b = transformer_like(seed=1), transformer_like(seed=2)
    d = views.input_view([a, b], word="bank").data
    row = d["comparison"][0]
    assert row["a"] == [0, 0] and row["b"] == [1, 0] and row["same_ids"] is True
    want = cosine_by_layer(a.layers[:, 0], b.layers[:, 0])
    got = [s["cosine"] for s in row["stages"]]
    assert got[0] == want[0] and got[2:] == want[1:]
    e1, e2 = a.embeddings_output[0].astype(float), b.embeddings_output[0].astype(float)
    assert got[1] == pytest.approx(e1 @ e2 / np.linalg.norm(e1) / np.linalg.norm(e2))
    assert d["sentences"][0]["piece_ids"][1] == [101]
    assert np.array_equal(unpacked(d["sentences"][1]["row"]), b.layers[0].astype(np.float32))
    with pytest.raises(InputError, match="occurs 0 time"):
        views.input_view([a], word="castle")


def test_projection_view_computes_with_the_library():
    encs = [transformer_like(seed=s) for s in range(3)]
    d = views.projection_view(encs, layer=2, methods=["pca"], neighbours=3).data  # t-SNE: in the browser test
    x = np.stack([e.layers[2, i] for e in encs for i in range(5)])
    assert d["points"]["word"][:5] == encs[0].tokens and d["points"]["sentence"][5] == 1
    assert np.allclose(unpacked(d["coords"]["pca"]["3"]), project(x, "pca", dims=3), atol=1e-5)
    cos = cosine_matrix(x)
    np.fill_diagonal(cos, -np.inf)
    idx = unpacked(d["neighbours"]["index"])
    assert idx.tolist() == np.argsort(-cos, axis=1, kind="stable")[:, :3].tolist()
    assert np.array_equal(unpacked(d["neighbours"]["cosine"]), np.take_along_axis(cos, idx.astype(int), 1))
    assert set(d["coords"]) == {"pca"} and d["initial"] == {"method": "pca", "dims": 2, "colour": "sentence"}
    assert (d["cluster_method"], d["k_chosen_by"]) == ("spectral", "eigengap")  # what the page says it used
    with pytest.raises(InputError, match="at least 3 points"):
        views.projection_view(encs, words=["castle"])


def test_result_views_carry_the_results():
    lv = views.layers_view({"word": "bank", "layer_names": ["static", "mixed"], "layer_ids": [0, 1],
                            "cosine_by_layer": [1.0, 0.25], "sentences": ["a bank", "bank b"]})
    assert lv.data["pairs"] == [{"label": "S0–S1", "sentences": ["a bank", "bank b"],
                                 "labels": ["S0", "S1"], "cosine_by_layer": [1.0, 0.25]}]
    with pytest.raises(InputError, match="not the result of explore"):
        views.cosine_view({"word": "bank"})
    with pytest.raises(InputError, match="2 sentences for 3 labels"):
        views.senses_view({"word": "w", "layer_name": "l", "k": 2, "labels": [0, 1, 0], "clusters": []},
                          ["a", "b"])


def test_pages_are_self_contained_and_share_data(tmp_path):
    enc = transformer_like(n=7, layers=6, heads=8)
    head, model = views.head_view(enc, threshold=0.0), views.model_view(enc, threshold=0.0)
    page, alone = views.Page(head, model).html(), head.html()
    attention = json.dumps(head._data["attention"], separators=(",", ":"))
    assert page.count(attention) == 1 and len(page) < len(alone) + len(attention) / 2  # stored once for both
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # nothing is fetched
    assert "plotly.js v" not in page and len(page) < 200_000  # our SVG script, no Plotly
    assert head._repr_html_().startswith('<iframe class="contextlens-view" srcdoc="&lt;!DOCTYPE html&gt;')
    path = head.save_html(tmp_path / "out" / "head.html")
    assert path.read_text(encoding="utf-8") == alone
    with pytest.raises(InputError, match="ending in .html"):
        head.save_html(tmp_path / "head.png")
    assert not (tmp_path / "head.png").exists() and [p.name
                                                     for p in (tmp_path / "out").iterdir()] == ["head.html"]


HOSTILE = ["<!--<script> the bank </script> of the river", 'Click <a href="x">the bank</a> & &lt;b&gt;',
           "The bank\u2028of the\u2029river", "bank <b>]]></b> -->"]


def test_every_views_data_is_embedded_inert_and_whole():
    """A sentence holding <!--<script> once made every offline view draw nothing: the page's
    data is JSON inside <script>, and only "</" was escaped. Every view kind, with hostile
    sentences: the data holds none of < > & U+2028 U+2029 as such, and reads back whole."""
    from tests.every_view import every_view
    from tests.view_pages import page_views

    made = every_view(HOSTILE, "bank")
    page = views.Page(*made).html()
    data = r'<script type="application/json" class="clv-(?:data|blob)"[^>]*>(.*?)</script>'
    bodies = re.findall(data, page, re.S)
    assert len(bodies) >= len(made)
    assert not [b for b in bodies if re.search("[<>&\u2028\u2029]", b)]
    assert page_views(page) == [v.data for v in made]
    assert page.count("<script") == page.count("</script>")  # no script element left open or opened early
