"""TransformerEncoder.encode from two threads at once (one shared encoder, tiny random models):
each thread gets exactly what it gets alone, the model is never changed, and a pass that
needs only the first layers still stops early; the same for the hooks that look inside the
layers (encoders/blocks.py), one of which changes a block's output."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from tests.missing import need

torch = need("torch")
need("transformers")
need("tokenizers")

from contextlens.encoders import blocks, hooks  # noqa: E402
from contextlens.encoders.transformer import TransformerEncoder  # noqa: E402
from tests.integration.test_transformer_tiny import TEXTS, build  # noqa: E402

ROUNDS = 6


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    return {kind: build(kind, root) for kind in ("bert", "llama")}


def together(work: list) -> list:
    """Run each callable of ``work`` in its own thread, started together; their results."""
    start, out, errors = threading.Barrier(len(work)), [None] * len(work), []

    def run(i):
        try:
            start.wait()
            out[i] = work[i]()
        except BaseException as e:  # noqa: BLE001 - shown by the test
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(work))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return out


def same(got, want) -> None:
    assert [e.text for e in got] == [e.text for e in want]
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.layers, b.layers, atol=1e-6)
        if b.attention is not None:
            np.testing.assert_allclose(a.attention, b.attention, atol=1e-6)


@pytest.mark.parametrize("kind", ["bert", "llama"])
@pytest.mark.parametrize("layers", [[1], None])
def test_two_threads_encode_what_each_encodes_alone(kind, layers, tiny):
    encoder = TransformerEncoder(str(tiny[kind]), engine="torch", layers=layers, batch_size=1)
    parts = [TEXTS[:2] * 2, TEXTS[2:] * 2]  # different texts, so a state written by the other thread shows
    alone = [encoder.encode(p) for p in parts]
    blocks = hooks.layer_list(encoder.hf_model, encoder.n_model_layers)[1]
    placed = [(len(b._forward_hooks), len(b._forward_pre_hooks)) for b in blocks]  # transformers' own
    for _ in range(ROUNDS):
        for got, want in zip(together([lambda p=p: encoder.encode(p) for p in parts]), alone):
            same(got, want)
    assert len(hooks.layer_list(encoder.hf_model, encoder.n_model_layers)[1]) == encoder.n_model_layers
    assert [(len(b._forward_hooks), len(b._forward_pre_hooks)) for b in blocks] == placed  # none left behind


def test_a_pass_of_the_first_layers_stops_there(tiny):
    encoder = TransformerEncoder(str(tiny["bert"]), engine="torch", layers=[1], attention=False)
    ran = []
    last = hooks.layer_list(encoder.hf_model, encoder.n_model_layers)[1][-1]
    handle = last.register_forward_hook(lambda *a: ran.append(1))
    try:
        enc = encoder.encode_one(TEXTS[0])
    finally:
        handle.remove()
    assert ran == [] and enc.layer_ids == (0, 1)


def test_two_threads_look_inside_the_layers_as_each_does_alone(tiny):
    """Value zeroing (its hook zeroes some values of a block) in one thread, every stage captured in
    the other: neither sees the other's hooks."""
    model = blocks.internals(TransformerEncoder(str(tiny["bert"]), engine="torch"))
    river, money = blocks.read_pieces(model, TEXTS[1]), blocks.read_pieces(model, TEXTS[0])

    def look():
        return [a for _ in range(3) for cap in [blocks.capture(model, river)]
                for a in (cap.embedding, cap.attention, cap.ffn, *cap.writes.values())]

    def zero():
        return [blocks.value_zeroing(model, money, [money.word_pieces[3]]) for _ in range(3)]

    alone = [look(), zero()]
    for _ in range(ROUNDS):
        for got, want in zip(together([look, zero]), alone):
            assert len(got) == len(want)
            for a, b in zip(got, want):
                np.testing.assert_allclose(a, b, atol=1e-6)
