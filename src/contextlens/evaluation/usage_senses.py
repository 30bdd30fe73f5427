"""The WordNet senses nearest one usage of a word: LMMS 1-NN (:mod:`contextlens.evaluation.lmms`)
over the word's senses, with their glosses (``contextlens neighbours WORD --in TEXT --senses``).

The sense embeddings are LMMS's with propagation and glosses (LMMS-2048; the static part
cannot change a ranking among one lemma's senses), built by the model's all-layers task
encoder at the usage's layer, so they share the evaluation caches: the first request for a
word encodes the SemCor sentences its senses' propagation reads (a few hundred; a cached
pass over all of SemCor serves every word) and its senses' glosses, both cached.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..errors import InputError
from .lmms import SOURCES, rank_senses, sense_parts

__all__ = ["usage_senses", "SENSES_SHOWN", "SENSE_STEPS"]

SENSES_SHOWN = 5
SENSE_STEPS = ("propagation", "glosses")


def _task_encoder(encoder):
    """The all-layers encoder the caches are keyed by: the model's task encoder (same
    precision; the last one kept, so a session asking about many usages loads it once),
    or a table encoder itself."""
    params = encoder.params()
    if params.get("model") is None:
        return encoder
    return _model_encoder(params["model"], params.get("precision"), params.get("engine"))


@functools.lru_cache(maxsize=1)
def _model_encoder(model: str, precision: str | None, engine: str | None):
    from .runner import make_task_encoder

    return make_task_encoder(model=model, precision=precision, engine=engine)


def usage_senses(encoder, sentence: str, word: str, *, layer: int = -1, occurrence: int | None = None,
                 data_dir=None, top: int = SENSES_SHOWN, use_cache: bool = True,
                 progress: Callable[[str, int, int | None], None] | None = None) -> dict[str, Any]:
    """The ``top`` WordNet senses of ``word`` (any POS; else of its base form) nearest its
    use in ``sentence`` at ``layer``, best first.

    Returns ``{word, lemma, layer, candidates, senses: [{key, synset, gloss, cosine,
    source}]}``; ``source`` says where the sense's SemCor-side embedding comes from
    (semcor, synset, hypernym, lexname). Needs WordNet 3.0 and SemCor in the data folder
    (``data_dir``, else ``CONTEXTLENS_DATA``). ``progress(stage, done, total)``.
    """
    from .. import datasets
    from ..analysis.incontext import usage_vectors
    from ..encoders.encoding_cache import EncodingCache
    from ..errors import check_int

    top = check_int("top", top, low=1, high=10_000)
    position = encoder.layer_position(layer)  # a layer the encoder lacks fails first
    number = encoder.layer_ids[position]
    root = datasets.resolve_data_dir(data_dir)
    wn = datasets.wordnet(root)
    datasets.require(root, "semcor", datasets.SEMCOR_ARCHIVE)
    enc = usage_vectors(encoder, sentence, word, occurrence)
    lemma, keys = datasets.word_senses(wn, enc.words[0].text)
    if not keys:
        raise InputError(f"{word!r} has no sense in WordNet {wn.get_version()}, nor a base form that has: "
                         "there is no sense to name; drop --senses")
    task = _task_encoder(encoder)
    if number not in task.layer_ids:
        raise InputError(f"layer {number} is not a layer of {task.name} (layers {task.layer_ids[0]}.."
                         f"{task.layer_ids[-1]})")
    view = task.layer_position(number)
    parts = sense_parts(EncodingCache(task, enabled=use_cache), root, keys, [view], steps=SENSE_STEPS,
                        progress=progress)[view]
    ranked = rank_senses(parts, enc.layers[position, 0], keys, SENSE_STEPS)[:top]
    graph = datasets.wordnet_graph(root)
    out = []
    for key, cosine in ranked:
        s = graph.key_synset[graph.key_row[key]]
        out.append({"key": key, "synset": graph.synsets[s], "gloss": graph.definitions[s], "cosine": cosine,
                    "source": SOURCES[parts.source[parts.index[key]]]})
    return {"word": enc.words[0].text, "lemma": lemma, "layer": number, "candidates": len(keys),
            "senses": out}
