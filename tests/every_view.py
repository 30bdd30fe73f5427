"""Every kind of view (views.KINDS), built with the library from any sentences, for the tests
that must hold for all of them: hostile text, repeated words, emoji, downloads.

The encoder is self-attention over a small random table holding every word of the sentences
(no model, no download), with two heads and two layers so that every view has something to
draw; the lens view, which needs a causal language model, is built from a result of the same
shape whose words are taken from the sentences, and so is the probes view (a probe needs SemCor),
its model named by a sentence.
"""

from __future__ import annotations

import numpy as np

from contextlens import views
from contextlens.analysis.cka import layer_cka
from contextlens.analysis.explore import explore
from contextlens.analysis.faithfulness import attributions
from contextlens.analysis.layers import layer_divergence
from contextlens.analysis.neighbours import contextual_neighbours
from contextlens.analysis.occlusion import occlusion_vs_attention
from contextlens.analysis.senses import senses
from contextlens.analysis.sublayers import sublayers
from contextlens.encoders.mixing import SelfAttention
from contextlens.text import tokenize
from contextlens.vectors import EmbeddingTable


def table_of(sentences: list[str], seed: int = 0) -> EmbeddingTable:
    """A random 8-d table holding every word of ``sentences`` (as written and lower-cased)."""
    words = sorted({v for s in sentences for w in tokenize(s) for v in (w.text, w.text.lower())})
    rng = np.random.default_rng(seed)
    return EmbeddingTable(words, rng.normal(size=(len(words), 8)), name="every-view")


def lens_result(sentence: str, word: str) -> dict:
    """A logit-lens result over ``sentence``'s own words (its shape: LensResult.as_dict())."""
    words = [w.text for w in tokenize(sentence)]
    position = next(i for i, w in enumerate(words) if w.lower() == word.lower())
    top = words[:5]
    layers = [
        {
            "layer": i,
            "layer_name": "embedding output" if i == 0 else f"layer {i}",
            "top": [{"word": w, "probability": 0.5 / (j + 1 + i), "pieces": [w]} for j, w in enumerate(top)],
            "tracked": [
                {"word": w, "pieces": [w], "probability": 0.01 * (i + 1), "rank": 50 - 10 * i}
                for w in top[:2]
            ],
        }
        for i in range(3)
    ]
    return {
        "model": "every-view",
        "text": sentence,
        "position": position,
        "word": words[position],
        "rule": "first piece",
        "layers": layers,
    }


def patch_result(recipient: str, donor: str, word: str) -> dict:
    """A patching result over two sentences (its shape: analysis.patching.patch), with next words
    taken from the sentences (patching needs a transformer, this module's encoder is a table)."""
    words = [w.text for w in tokenize(donor)][:3]
    next_words = [{"word": w, "probability": 0.3 / (j + 1), "pieces": [w]} for j, w in enumerate(words)]
    rows = [{"layer": k, "layer_name": f"layer {k}", "cosine_to_donor": 0.5 + 0.2 * k,
             "cosine_to_recipient": 1 - 0.2 * k, "next": next_words} for k in (1, 2)]
    return {"model": "every-view", "word": word, "at": "layer", "recipient": recipient, "donor": donor,
            "pieces": [word], "unpatched": 0.4, "rows": rows,
            "predictions": {"rule": "first piece", "recipient": next_words, "donor": next_words,
                            "donor_words": [{"word": w["word"], "in_recipient": 0.01,
                                             "in_donor": w["probability"],
                                             "patched": [0.05, w["probability"]]} for w in next_words]}}


def probe_result(model: str, task: str = "pos") -> dict:
    """A probe result of three layers for ``model`` (its shape: ProbeResult.as_dict())."""
    rows = [{"layer": k, "accuracy": 0.6 + 0.1 * k, "control_accuracy": 0.5, "selectivity": 0.1 + 0.1 * k,
             "n_train": 30, "n_test": 10, "missing": k} for k in range(3)]
    return {"task": task, "model": model, "rows": rows, "expected_layer": 1.5, "probe": "linear", "seed": 0,
            "labels": 4, "train_rows": 30, "test_rows": 10, "lemmas": None}


def every_view(sentences: list[str], word: str, *, sentence: int = 0, occurrence=None) -> list[views.View]:
    """One view of each kind of ``views.KINDS``, in its order, of ``word`` in ``sentences``
    (the views of one sentence take ``sentences[sentence]`` and the ``occurrence`` of the word
    there; the layers view compares it with the sentence before; senses take the first
    occurrence in each sentence, the cosine view every one)."""
    table = table_of(sentences)
    encoder = SelfAttention(table, heads=2, n_layers=2)
    text = sentences[sentence]
    encs = encoder.encode(sentences)
    parts = encoder.attention_parts(text)
    where = {} if occurrence is None else {"occurrence": occurrence}
    made = {
        "head": views.head_view(encs[sentence], parts),
        "model": views.model_view(encs[sentence], parts, word=word, **where),
        "neuron": views.neuron_view(parts[-1], word=word, occurrence=occurrence or 0),
        "mask": views.mask_view(parts[-1]),
        "input": views.input_view(encs, word=word),
        "projection": views.projection_view(encs, methods=["pca"], neighbours=3),
        "layers": views.layers_view(
            layer_divergence(
                encoder, [(sentences[sentence - 1], text)], word, occurrences=(0, occurrence or 0)
            )
        ),
        "cosine": views.cosine_view(explore(encoder, sentences, word, occurrence="all")),
        "senses": views.senses_view(
            senses(encoder, sentences, word, k=2, projection="pca", occurrence=0), sentences
        ),
        "lens": views.lens_view(lens_result(text, word)),
        "occlusion": views.occlusion_view(occlusion_vs_attention(encoder, text, word, **where)),
        "neighbours": views.neighbours_view(
            contextual_neighbours(encoder, text, word, k=5, reference=table, **where)
        ),
        "sublayers": views.sublayers_view(
            sublayers(encoder, sentences[sentence - 1], text, word, occurrences=(0, occurrence or 0))
        ),
        "attributions": views.attributions_view(attributions(encoder, text, word, occurrence=occurrence)),
        "patch": views.patch_view(patch_result(text, sentences[sentence - 1], word)),
        "probes": views.probes_view([probe_result(text), probe_result(text, "supersense")]),
        "cka": views.cka_view(layer_cka(encoder, sentences, use_cache=False)),
    }
    assert list(made) == list(views.KINDS)
    return list(made.values())
