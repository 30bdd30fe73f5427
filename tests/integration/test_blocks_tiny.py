"""Inside the layers of tiny random-weight models (a BERT and an MPNet with minilm's WordPiece, a
Llama causal LM with a byte-level BPE; no download): every stage, every patch, value zeroing and
the norm-based vectors are checked against the model's own modules, called here by hand, one
block at a time; the gradients against finite differences and the completeness of integrated
gradients."""

from __future__ import annotations

import numpy as np
import pytest

from tests.missing import need

torch = need("torch")
transformers = need("transformers")

from contextlens.analysis.incontext import compare  # noqa: E402
from contextlens.analysis.patching import patch  # noqa: E402
from contextlens.analysis.sublayers import sublayers  # noqa: E402
from contextlens.encoders import blocks  # noqa: E402
from contextlens.encoders.gradients import gradient_scores  # noqa: E402
from contextlens.encoders.transformer import TransformerEncoder  # noqa: E402
from contextlens.errors import InputError  # noqa: E402
from tests.integration.tiny_models import tiny_lms, tiny_model  # noqa: E402

RIVER = "We sat on the river bank and watched the water flow past."
MONEY = "I deposited money at the bank."
KINDS = ("bert", "mpnet", "llama")


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    root = tmp_path_factory.mktemp("blocks")
    out = {k: tiny_model(root, k, layers=3, init=0.2) for k in ("bert", "mpnet")}
    out["llama"] = tiny_lms(root) / "causal"  # 3 layers, with its LM head
    return out


@pytest.fixture(scope="module")
def encoders(paths):
    return {k: TransformerEncoder(str(p), engine="torch") for k, p in paths.items()}


@pytest.fixture(scope="module")
def smooth(tmp_path_factory, encoders):
    """For the integral: the Llama causal LM above has large weights (peaky predictions), so its
    gradients swing along the path; a Llama with trained-like weights (init 0.02) does not."""
    llama = tiny_model(tmp_path_factory.mktemp("smooth"), "llama", layers=3, init=0.02)
    return {**encoders, "llama": TransformerEncoder(str(llama), engine="torch")}


def causal_mask(t: int):
    return torch.full((t, t), float("-inf")).triu(1)[None, None]


def by_hand(model: blocks.Internals, prev, k: int):
    """Layer ``k`` run from its input ``prev`` ``(1, T, dim)`` with its own sub-modules, called here
    one by one: ``(attention stage, layer output)``."""
    blk = model.blocks[k - 1]
    kind = model.model.config.model_type
    t = prev.shape[1]
    if kind == "bert":
        att = blk.attention(prev)[0]
        return att, blk.output(blk.intermediate(att), att)
    if kind == "mpnet":
        att = blk.attention(prev, position_bias=model.model.encoder.compute_position_bias(prev))[0]
        return att, blk.output(blk.intermediate(att), att)
    cos_sin = model.model.rotary_emb(prev, position_ids=torch.arange(t)[None])
    wrote = blk.self_attn(blk.input_layernorm(prev), position_embeddings=cos_sin,
                          attention_mask=causal_mask(t))[0]
    att = prev + wrote
    return att, att + blk.mlp(blk.post_attention_layernorm(att))


def run_from(model: blocks.Internals, h, start: int):
    """The layers after ``start`` run on ``h`` by hand; the last layer after the final norm."""
    for k in range(start + 1, model.n_layers + 1):
        h = by_hand(model, h, k)[1]
    return h if model.final_norm is None else model.final_norm(h)


@pytest.mark.parametrize("kind", KINDS)
def test_every_stage_is_what_the_modules_compute(encoders, kind):
    model = blocks.internals(encoders[kind])
    pieces = blocks.read_pieces(model, RIVER)
    cap = blocks.capture(model, pieces)
    prev = torch.tensor(cap.embedding)[None]
    with torch.inference_mode():
        for k in range(1, model.n_layers + 1):
            att, out = by_hand(model, prev, k)
            np.testing.assert_allclose(cap.attention[k - 1], att[0].numpy(), atol=2e-5)
            raw = cap.ffn[k - 1] if k < model.n_layers else cap.last_block
            np.testing.assert_allclose(raw, out[0].numpy(), atol=2e-5)
            prev = torch.tensor(raw)[None]
        if model.final_norm is not None:
            np.testing.assert_allclose(cap.ffn[-1], model.final_norm(prev)[0].numpy(), atol=2e-5)
    # what each block writes: the residual add of a pre-LN model, the LayerNorm's input of a post-LN one
    before = np.concatenate([cap.embedding[None], cap.blocks_out()[:-1]])
    if kind == "llama":
        np.testing.assert_allclose(cap.attention - before, cap.writes["attention"], atol=2e-5)
        np.testing.assert_allclose(cap.blocks_out() - cap.attention, cap.writes["ffn"], atol=2e-5)
    else:
        first = model.blocks[0].attention
        ln = first.output.LayerNorm if kind == "bert" else first.LayerNorm
        with torch.inference_mode():
            again = ln(torch.tensor(cap.writes["attention"][0] + before[0]))
        np.testing.assert_allclose(cap.attention[0], again.numpy(), atol=2e-5)


@pytest.mark.parametrize("kind", KINDS)
def test_the_ffn_rows_are_compare_s_layers(encoders, kind):
    r = sublayers(encoders[kind], RIVER, MONEY, "bank")
    c = compare(encoders[kind], RIVER, MONEY, "bank")
    ffn = [x["cosine"] for x in r["rows"] if x["after"] == "ffn"]
    np.testing.assert_allclose(ffn, c["cosine_by_layer"][1:], atol=1e-5)
    assert [(x["layer"], x["after"]) for x in r["rows"][:3]] == [(1, "attention"), (1, "ffn"),
                                                                  (2, "attention")]
    assert r["stages"] == ["attention", "ffn"] and r["note"] is None
    assert all(len(x["moved"]) == 2 and min(x["moved"]) >= 0 for x in r["rows"])
    one = sublayers(encoders[kind], RIVER, word="bank")
    assert one["rows"][0]["cosine"] is None and one["largest_drop"] is None
    assert [x["moved"][0] for x in one["rows"]] == [x["moved"][0] for x in r["rows"]]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("at", ["layer", "attention", "ffn"])
def test_patching_is_the_rest_of_the_model_run_on_the_patched_state(encoders, kind, at):
    model = blocks.internals(encoders[kind])
    rec, don = blocks.read_pieces(model, RIVER), blocks.read_pieces(model, MONEY)
    r_pieces = rec.word_pieces[[w.text for w in rec.words].index("bank")]
    d_pieces = don.word_pieces[[w.text for w in don.words].index("bank")]
    r_cap, d_cap = blocks.capture(model, rec), blocks.capture(model, don)
    out = patch(encoders[kind], RIVER, MONEY, "bank", at=at)
    donor_word = d_cap.ffn[-1][list(d_pieces)].mean(0)
    with torch.inference_mode():
        for layer in (1, model.n_layers):
            if at == "layer":
                h = torch.tensor(r_cap.blocks_out()[layer - 1])[None].clone()
                h[0, list(r_pieces)] = torch.tensor(d_cap.blocks_out()[layer - 1][list(d_pieces)])
            else:  # the block's write replaced, the recipient's residual kept: redo that layer by hand
                h = torch.tensor(_patched_layer(model, r_cap, d_cap, layer, at, r_pieces, d_pieces))[None]
            last = run_from(model, h, layer)[0, list(r_pieces)].mean(0).numpy()
            row = out["rows"][layer - 1]
            assert row["cosine_to_donor"] == pytest.approx(_cos(last, donor_word), abs=1e-5)
            assert row["cosine_to_recipient"] == pytest.approx(
                _cos(last, r_cap.ffn[-1][list(r_pieces)].mean(0)), abs=1e-5)
    if at == "layer":
        assert out["rows"][-1]["cosine_to_donor"] == pytest.approx(1.0, abs=1e-6)


def _patched_layer(model, r_cap, d_cap, layer: int, at: str, r_pieces, d_pieces) -> np.ndarray:
    """Layer ``layer`` of the recipient with one block's write at the word's pieces taken from the
    donor, rebuilt from the captured writes: residual + write (pre-LN), LayerNorm(residual + write)
    (post-LN)."""
    before = np.concatenate([r_cap.embedding[None], r_cap.blocks_out()[:-1]])[layer - 1]
    wa = r_cap.writes["attention"][layer - 1].copy()
    if at == "attention":
        wa[list(r_pieces)] = d_cap.writes["attention"][layer - 1][list(d_pieces)]
    blk, kind = model.blocks[layer - 1], model.model.config.model_type
    with torch.inference_mode():
        if kind == "llama":
            att = torch.tensor(before + wa)
            wf = blk.mlp(blk.post_attention_layernorm(att)).numpy()
        else:
            ln = blk.attention.output.LayerNorm if kind == "bert" else blk.attention.LayerNorm
            att = ln(torch.tensor(before + wa))
            wf = blk.output.dense(blk.intermediate(att)).numpy()
        if at == "ffn":
            wf[list(r_pieces)] = d_cap.writes["ffn"][layer - 1][list(d_pieces)]
        if kind == "llama":
            return (att + torch.tensor(wf)).numpy()
        return blk.output.LayerNorm(torch.tensor(wf) + att).numpy()


def _cos(a, b) -> float:
    return float(np.dot(a, b) / np.linalg.norm(a) / np.linalg.norm(b))


def test_a_word_cut_differently_in_the_two_texts_names_both_splits(encoders):
    model = blocks.internals(encoders["llama"])  # byte-level BPE: "Bank" opening a text is not " bank"
    first = blocks.read_pieces(model, "Bank and river.")
    later = blocks.read_pieces(model, RIVER)
    if len(first.word_pieces[0]) == len(later.word_pieces[5]):
        pytest.skip("this BPE happens to cut both the same way")
    split = r"cut into \d piece\(s\) in the recipient \(.*\) and \d in the donor"
    with pytest.raises(InputError, match=split):
        patch(encoders["llama"], "Bank and river.", RIVER, "bank")


@pytest.mark.parametrize("kind", KINDS)
def test_value_zeroing_is_the_layer_run_again_with_those_values_zeroed(encoders, kind):
    model = blocks.internals(encoders[kind])
    pieces = blocks.read_pieces(model, MONEY)
    groups = [pieces.word_pieces[1], pieces.word_pieces[4]]
    zeroed = blocks.value_zeroing(model, pieces, groups)
    for k in (1, model.n_layers):
        for g, group in enumerate(groups):  # the whole model run, a hook zeroing the values of layer k only
            store = {}

            def zero(module, args, output, group=group):
                output = output.clone()
                output[:, list(group)] = 0
                return output

            def keep(module, args, output, store=store):
                store["h"] = blocks._first(output)

            hooks = [model.block_part(k, model.arch.value).register_forward_hook(zero),
                     model.blocks[k - 1].register_forward_hook(keep)]
            with torch.inference_mode(), blocks._hooked(hooks):
                out = blocks.run(model, input_ids=torch.tensor([list(pieces.ids)]))
            want = out.last_hidden_state if k == model.n_layers else store["h"]
            np.testing.assert_allclose(zeroed[k - 1, g], want[0].numpy(), atol=3e-5)


def test_value_zeroing_of_bert_by_hand(encoders):
    model = blocks.internals(encoders["bert"])
    pieces = blocks.read_pieces(model, MONEY)
    group = pieces.word_pieces[2]
    zeroed = blocks.value_zeroing(model, pieces, [group])
    cap = blocks.capture(model, pieces)
    x = torch.tensor(cap.embedding)  # layer 1's input
    sa = model.blocks[0].attention.self
    heads, d = sa.num_attention_heads, sa.attention_head_size
    with torch.inference_mode():
        q, key, v = (m(x).view(-1, heads, d).transpose(0, 1) for m in (sa.query, sa.key, sa.value))
        v[:, list(group)] = 0
        alpha = torch.softmax(q @ key.transpose(1, 2) * d**-0.5, -1)
        context = (alpha @ v).transpose(0, 1).reshape(len(pieces.ids), -1)
        blk = model.blocks[0]
        att = blk.attention.output(context, x)
        out = blk.output(blk.intermediate(att), att)
    np.testing.assert_allclose(zeroed[0, 0], out.numpy(), atol=3e-5)


@pytest.mark.parametrize("kind", KINDS)
def test_norm_vectors_add_up_to_the_attention_module_output(encoders, kind):
    model = blocks.internals(encoders[kind])
    pieces = blocks.read_pieces(model, RIVER)
    rows = [1, 4, len(pieces.ids) - 1]
    vectors, bias = blocks.norm_contributions(model, pieces, rows)
    cap = blocks.capture(model, pieces)  # writes["attention"]: the output projection's own output
    np.testing.assert_allclose(vectors.sum(2) + bias[:, None], cap.writes["attention"][:, rows], atol=3e-5)
    if kind == "llama":  # causal: a piece gets nothing from the pieces after it
        assert np.abs(vectors[:, 0, 2:]).max() == 0.0


def test_norm_vectors_of_one_head_by_hand(encoders):
    model = blocks.internals(encoders["bert"])
    pieces = blocks.read_pieces(model, MONEY)
    vectors, _ = blocks.norm_contributions(model, pieces, [3])
    cap = blocks.capture(model, pieces)
    x = torch.tensor(cap.embedding)
    sa, dense = model.blocks[0].attention.self, model.blocks[0].attention.output.dense
    heads, d = sa.num_attention_heads, sa.attention_head_size
    with torch.inference_mode():
        q, key = (m(x).view(-1, heads, d).transpose(0, 1) for m in (sa.query, sa.key))
        alpha = torch.softmax(q @ key.transpose(1, 2) * d**-0.5, -1)  # (heads, T, T)
        v = sa.value(x)  # (T, heads · d)
        want = sum(alpha[h, 3, 5] * dense.weight[:, h * d:(h + 1) * d] @ v[5, h * d:(h + 1) * d]
                   for h in range(heads))
    np.testing.assert_allclose(vectors[0, 0, 5], want.numpy(), atol=2e-5)


def _f(model, pieces, target, embeds, layer: int) -> float:
    """The gradient target by hand: the word's layer vector projected on its unchanged direction."""
    with torch.inference_mode():
        h = blocks.run(model, inputs_embeds=embeds[None], output_hidden_states=True).hidden_states[layer][0]
        x = model.model.get_input_embeddings()(torch.tensor(pieces.ids))
        h0 = blocks.run(model, inputs_embeds=x[None], output_hidden_states=True).hidden_states[layer][0]
    u = h0[list(target)].mean(0)
    return float(h[list(target)].mean(0) @ (u / u.norm()))


@pytest.mark.parametrize("kind", KINDS)
def test_gradients_match_finite_differences_and_integrated_gradients_are_complete(smooth, kind):
    model = blocks.internals(smooth[kind])
    pieces = blocks.read_pieces(model, MONEY)
    target = pieces.word_pieces[5]
    g = gradient_scores(model, pieces, target, steps=64)
    assert g.grad_input.shape == (model.n_layers, len(pieces.ids), model.model.config.hidden_size)
    layer = 2
    x = model.model.get_input_embeddings()(torch.tensor(pieces.ids)).detach()
    for p, d in ((1, 3), (2, 7)):
        eps = 1e-2
        up, down = x.clone(), x.clone()
        up[p, d] += eps
        down[p, d] -= eps
        slope = (_f(model, pieces, target, up, layer) - _f(model, pieces, target, down, layer)) / (2 * eps)
        assert g.grad_input[layer - 1, p, d] == pytest.approx(slope * float(x[p, d]), rel=0.05, abs=1e-5)
    total = g.integrated.sum(axis=(1, 2))
    np.testing.assert_allclose(total, g.target - g.baseline_target, rtol=0.02, atol=1e-3)
    assert g.target[layer - 1] == pytest.approx(_f(model, pieces, target, x, layer), rel=1e-5)
    special = list(pieces.special)  # the baseline keeps the special rows: nothing to attribute to them
    assert np.abs(g.integrated[:, special]).max() == 0.0


def test_integrated_gradients_match_captum_when_installed(encoders):
    captum = pytest.importorskip("captum.attr",
                                 reason="captum is an optional oracle (pip install --no-deps --target DIR)")
    model = blocks.internals(encoders["bert"])
    pieces = blocks.read_pieces(model, MONEY)
    target, layer = pieces.word_pieces[5], 2
    ours = gradient_scores(model, pieces, target, steps=32).integrated[layer - 1]
    x = model.model.get_input_embeddings()(torch.tensor(pieces.ids)).detach()
    base = x.clone()
    words = [p for p in range(len(pieces.ids)) if p not in pieces.special]
    base[words] = model.model.get_input_embeddings().weight.mean(0)
    u = torch.tensor(blocks.capture(model, pieces).ffn[layer - 1][list(target)].mean(0))

    def f(e):
        h = blocks.run(model, inputs_embeds=e, output_hidden_states=True).hidden_states[layer]
        return h[:, list(target)].mean(1) @ (u / u.norm())

    ig = captum.IntegratedGradients(f)
    theirs = ig.attribute(x[None], base[None], n_steps=32, method="riemann_middle")[0].detach().numpy()
    np.testing.assert_allclose(ours, theirs, atol=2e-4)


def test_bounds_and_other_encoders(encoders):
    from contextlens.analysis.toy import COURSE_VECTORS, toy_table
    from contextlens.encoders.static import StaticEncoder

    model = blocks.internals(encoders["bert"])
    with pytest.raises(InputError, match="give a shorter text"):
        blocks.read_pieces(model, " ".join(["bank"] * 200))
    with pytest.raises(blocks.NotATransformerError, match="no transformer"):
        blocks.internals(StaticEncoder(toy_table(COURSE_VECTORS)))
    with pytest.raises(InputError, match="no layers after the static row"):
        sublayers(StaticEncoder(toy_table(COURSE_VECTORS)), "bank loan", "bank river", "bank")
    with pytest.raises(InputError, match="unknown patch point"):
        patch(encoders["bert"], RIVER, MONEY, "bank", at="mlp")
