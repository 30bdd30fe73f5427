"""The lab's JSON API under ``/api/``: each route checks the limits and calls the library."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, Request

from ..analysis.attribution import attribute
from ..analysis.cka import corpus_sample, layer_cka
from ..analysis.explore import explore
from ..analysis.faithfulness import attributions
from ..analysis.incontext import compare, contextualize
from ..analysis.layers import usage_divergence
from ..analysis.neighbours import contextual_neighbours
from ..analysis.occlusion import occlusion_vs_attention
from ..analysis.patching import patch
from ..analysis.probing import probe
from ..analysis.reading import reading_guide
from ..analysis.senses import senses
from ..analysis.sublayers import sublayers
from ..analysis.toy import TOY_AXES, TOY_METHODS, TOY_VECTORS, course_example, toy_compare
from ..datasets import resolve_data_dir
from ..errors import InputError
from ..index.search import like_usage, search_usages
from ..index.stats import index_stats
from ..results import jsonable
from ..text import locate, tokenize
from ..views import (
    attention_views,
    attributions_view,
    cka_view,
    lens_view,
    neighbours_view,
    occlusion_view,
    patch_view,
    probes_view,
    sublayers_view,
)
from . import schemas as s
from .state import NO_INDEX, LabState

__all__ = ["router"]

ERRORS = {400: {"model": s.ErrorBody, "description": "bad input (unknown word, model, option...)"},
          413: {"model": s.ErrorBody, "description": "the request body is over the size limit"},
          422: {"model": s.ErrorBody, "description": "malformed request or over a limit"}}
WORKER_ERRORS = {500: {"model": s.ErrorBody, "description": "the worker process of the projection died"},
                 503: {"model": s.ErrorBody,
                       "description": "the projection took too long, or the lab is stopping"}}
router = APIRouter(prefix="/api", responses=ERRORS)
SERVER_KEYS = ("path",)  # what a result may hold that only the server should see
NO_INDEX_ERROR = {409: {"model": s.ErrorBody, "description": "the lab was started without --index"}}


def lab(request: Request) -> LabState:
    return request.app.state.lab


def plain(obj: Any) -> Any:
    """The library's result as JSON data (:func:`~contextlens.results.jsonable`: numpy values as
    numbers and lists, NaN as null), without the server's file paths (an encoder's ``path``:
    where a model sits on this machine).

    >>> import numpy as np
    >>> plain({"encoder": {"model": "minilm", "path": "/srv/models/minilm"}, "x": np.float32(0.5)})
    {'encoder': {'model': 'minilm'}, 'x': 0.5}
    """
    return jsonable(obj, hide=SERVER_KEYS)


def _encoder(state: LabState, req: s.EncoderOptions):
    return state.encoder(req.encoder, alpha=req.alpha, include_self=req.include_self, scale=req.scale)


@router.get("/status", response_model=s.StatusResponse, summary="Encoders, limits, and what is loaded")
def status(state: LabState = Depends(lab)):
    return state.status()


@router.post("/models/load", response_model=s.ResourceStatus,
             summary="Start loading a model (or the table) in the background; poll /api/status")
def load_model(req: s.ModelLoadRequest, state: LabState = Depends(lab)):
    return state.preload(req.name)


@router.get("/toy/defaults", summary="The toy plane: starting vectors, axes and methods")
def toy_defaults():
    return {"vectors": {w: list(v) for w, v in TOY_VECTORS.items()},
            "axes": {w: list(v) for w, v in TOY_AXES.items()}, "methods": list(TOY_METHODS)}


@router.get("/toy/course",
            summary="The course text's 2-D example: vectors, one weight step by step, the comparison")
def toy_course():
    return plain(course_example())


@router.post("/toy", response_model=s.ToyResponse, summary="Bank's contextual vector in two toy sentences")
def toy(req: s.ToyRequest):
    return plain(toy_compare(req.neighbours, vectors=req.vectors, method=req.method, alpha=req.alpha,
                             include_self=req.include_self, scale=req.scale))


@router.post("/tokens", response_model=s.TokensResponse,
             summary="The words of each sentence, with char spans")
def tokens(req: s.TokensRequest, state: LabState = Depends(lab)):
    state.limits.check_sentences(req.sentences)
    return {"sentences": [[{"text": w.text, "start": w.start, "end": w.end} for w in tokenize(t)]
                          for t in req.sentences]}


@router.post("/encode", response_model=s.EncodeResponse,
             summary="Encode sentences: words, layers, shapes, and how to read this encoder's figures")
def encode(req: s.EncodeRequest, state: LabState = Depends(lab)):
    state.limits.check_sentences(req.sentences)
    encoder = _encoder(state, req)
    encs = encoder.encode(req.sentences)
    return plain({
        "layer_names": list(encs[0].layer_names), "layer_ids": list(encs[0].layer_ids),
        "encoder": encs[0].describe(), **reading_guide(encoder),
        "sentences": [{"text": e.text, "words": e.tokens, "n_layers": e.n_layers, "dim": e.dim,
                       "heads": None if e.attention is None else int(e.attention.shape[1])} for e in encs],
    })


@router.post("/layers", response_model=s.LayersResponse,
             summary="Layer divergence: cosine of every two usages of the word (occurrence all: two in one "
                     "sentence too), every layer")
def layers(req: s.WordRequest, state: LabState = Depends(lab)):
    state.limits.check_sentences(req.sentences)
    return plain(usage_divergence(_encoder(state, req), req.sentences, req.word, occurrence=req.occurrence,
                                  missing=req.missing))


@router.post("/explore", response_model=s.ExploreResponse, responses=WORKER_ERRORS,
             summary="Cosine matrix of the word's usages at a layer, and their 2-D projection")
def explore_route(req: s.ExploreRequest, state: LabState = Depends(lab)):
    state.limits.check_sentences(req.sentences)
    return plain(explore(_encoder(state, req), req.sentences, req.word, layer=req.layer, missing=req.missing,
                         occurrence=req.occurrence, projection=req.projection, run=state.pool.run))


@router.post("/compare", summary="Cosine between the word in two sentences, layer by layer")
def compare_route(req: s.CompareRequest, state: LabState = Depends(lab)):
    state.limits.check_sentences(req.sentences)
    return plain(compare(_encoder(state, req), req.sentences[0], req.sentences[1], req.word))


@router.post("/contextualize", summary="The weights a word gave its neighbours, and cosines to probe words")
def contextualize_route(req: s.ContextualizeRequest, state: LabState = Depends(lab)):
    state.limits.check_sentences([req.sentence])
    return plain(contextualize(_encoder(state, req), req.sentence, req.word, probes=req.probes,
                               layer=req.layer))


@router.post("/attention", response_model=s.AttentionResponse,
             summary="Attention of a sentence at a layer (a head or the mean), with rollout")
def attention(req: s.AttentionRequest, state: LabState = Depends(lab)):
    state.limits.check_attention_sentence(req.sentence)
    return plain(attribute(_encoder(state, req), req.sentence, req.word, occurrence=req.occurrence,
                           layer=req.layer, head=req.head, rollout=req.rollout))


@router.post("/views/attention", response_model=s.ViewsResponse,
             summary="The head, model and (queries and keys permitting) neuron views of a sentence")
def attention_views_route(req: s.AttentionViewsRequest, state: LabState = Depends(lab)):
    state.limits.check_attention_sentence(req.sentence)
    found = attention_views(_encoder(state, req), req.sentence, req.word, layer=req.layer, head=req.head,
                            occurrence=req.occurrence)
    return {"views": [v.data for v in found]}


@router.post("/views/lens", response_model=s.ViewResponse,
             summary="The logit lens: a causal model's next-word predictions read from every layer after a "
                     "word")
def lens_view_route(req: s.LensViewRequest, state: LabState = Depends(lab)):
    state.limits.check_sentences([req.sentence])
    position = req.position
    if req.word is not None:
        if position is not None:
            raise InputError("give the word or its position, not both")
        position = locate(tokenize(req.sentence), req.word, occurrence=req.occurrence)
    lm, lock = state.language_model(req.model)
    with lock:
        result = lm.lens(req.sentence, position, k=req.k, track=req.track)
    return {"view": lens_view(result).data}


@router.post("/views/occlusion", response_model=s.ViewResponse,
             summary="Occlusion beside attention: how far the word's vector moves without each other word, "
                     "per layer")
def occlusion_view_route(req: s.OcclusionViewRequest, state: LabState = Depends(lab)):
    state.limits.check_attention_sentence(req.sentence)
    result = occlusion_vs_attention(_encoder(state, req), req.sentence, req.word, occurrence=req.occurrence)
    return {"view": occlusion_view(plain(result)).data}


# ---- inside a layer (issue 24): each hooks the model's modules, alone on its encoder ---------------
def _pair(values: list) -> tuple:
    """A request's per-sentence list (``occurrences``) as the library's pair: ``[2]`` -> ``(2, None)``."""
    return (*values, None, None)[:2]


def _alone(state: LabState, req, explain, *args, **options) -> dict:
    """``explain(encoder, *args, **options)`` on the request's encoder, alone on it (it hooks the
    model's modules), as plain data."""
    with _encoder(state, req).alone() as encoder:
        return plain(explain(encoder, *args, **options))


@router.post("/views/sublayers", response_model=s.ViewResponse,
             summary="The two blocks of every layer: how far the attention and the feed-forward block "
                     "move the word, and where two usages separate")
def sublayers_view_route(req: s.SublayersViewRequest, state: LabState = Depends(lab)):
    state.limits.check_sentences(req.sentences)
    result = _alone(state, req, sublayers, *req.sentences, word=req.word, occurrences=_pair(req.occurrences))
    return {"view": sublayers_view(result, labels=req.labels).data}


@router.post("/views/attributions", response_model=s.ViewResponse,
             summary="Attributions beside occlusion: each method's score for every other word, every "
                     "layer, with its Spearman correlation with occlusion")
def attributions_view_route(req: s.AttributionsViewRequest, state: LabState = Depends(lab)):
    state.limits.check_attention_sentence(req.sentence)
    result = _alone(state, req, attributions, req.sentence, req.word, methods=req.methods,
                    occurrence=req.occurrence, steps=req.steps)
    return {"view": attributions_view(result).data}


@router.post("/views/patch", response_model=s.ViewResponse,
             summary="Patching: the word's state from the donor put into the recipient at each layer in turn")
def patch_view_route(req: s.PatchViewRequest, state: LabState = Depends(lab)):
    state.limits.check_sentences([req.recipient, req.donor])
    result = _alone(state, req, patch, req.recipient, req.donor, req.word, at=req.at, k=req.k,
                    occurrences=_pair(req.occurrences))
    return {"view": patch_view(result).data}


@router.post("/views/neighbours", response_model=s.ViewResponse,
             summary="The contextual neighbours view: the reference words nearest the word as used in the "
                     "sentence")
def neighbours_view_route(req: s.NeighboursViewRequest, state: LabState = Depends(lab)):
    """The first call for an encoder builds its reference table (20,000 words each encoded
    alone: seconds over the table, minutes for a transformer); it is cached on disk."""
    state.limits.check_sentences([req.sentence])
    result = contextual_neighbours(_encoder(state, req), req.sentence, req.word, layer=req.layer, k=req.k,
                                   occurrence=req.occurrence, contrast=req.contrast)
    return {"view": neighbours_view(plain(result)).data}


# ---- what layers know (issue 25): probes and CKA, through the evaluation cache ---------------------
@router.post("/views/probes", response_model=s.ViewResponse,
             summary="Probes of every layer over SemCor (accuracy, control accuracy, selectivity, expected "
                     "layer)")
def probes_view_route(req: s.ProbesViewRequest, state: LabState = Depends(lab)):
    """The words' vectors come from the evaluation cache; the first probe of an encoder encodes
    SemCor's 40,000 words (minutes for a transformer), then each task fits two probes per layer."""
    encoder = _encoder(state, req)
    return {"view": probes_view([probe(encoder, task, kind=req.probe) for task in req.tasks]).data}


@router.post("/views/cka", response_model=s.ViewResponse,
             summary="Linear CKA between the layers of an encoder, or of two, over a sample of the shared "
                     "corpora")
def cka_view_route(req: s.CkaViewRequest, state: LabState = Depends(lab)):
    encoder, other = _encoder(state, req), None if req.other is None else state.encoder(req.other)
    texts = corpus_sample(resolve_data_dir(None), req.sample, seed=req.seed)
    result = layer_cka(encoder, texts, other=other, debiased=req.debiased,
                       source=f"{req.sample} sentences of the shared corpora (seed {req.seed})")
    return {"view": cka_view(result).data}


@router.post("/senses", response_model=s.SensesResponse, responses=WORKER_ERRORS,
             summary="Cluster the word's usages (senses), with silhouette and a 2-D projection")
def senses_route(req: s.SensesRequest, state: LabState = Depends(lab)):
    state.limits.check_sentences(req.sentences)
    result = senses(_encoder(state, req), req.sentences, req.word, k=req.k, layer=req.layer,
                    occurrence=req.occurrence, missing=req.missing, projection=req.projection,
                    run=state.pool.run)
    result["sentences"] = req.sentences
    return plain(result)


# ---- the usage index (contextlens lab --index PATH) ------------------------------------------
@router.get("/index", response_model=s.IndexResponse,
            summary="Whether a usage index is loaded, and its statistics")
def index_route(state: LabState = Depends(lab)):
    if state.index is None:
        return {"loaded": False, "hint": NO_INDEX}
    with state.index_lock:
        stats = index_stats(state.index)
    stats["db"] = Path(stats["db"]).name  # the folder's name, not where it sits on the server
    return plain({"loaded": True, "stats": stats, "encoder": state.index_model(),
                  "max_results": state.limits.max_results})


@router.post("/index/search", response_model=s.UsagesResponse, responses=NO_INDEX_ERROR,
             summary="The usages of a word in the index nearest its usage in a sentence")
def index_search(req: s.IndexSearchRequest, state: LabState = Depends(lab)):
    store = state.store()
    state.limits.check_sentences([req.sentence])
    state.limits.check_results(req.k)
    encoder = state.index_encoder(req.layer)
    with state.index_lock:
        return plain(search_usages(store, req.sentence, req.word, k=req.k, layer=req.layer,
                                   occurrence=req.occurrence, encoder=encoder, threads=state.threads))


@router.post("/index/like", response_model=s.UsagesResponse, responses=NO_INDEX_ERROR,
             summary="The usages of the same word nearest a usage already in the index")
def index_like(req: s.IndexLikeRequest, state: LabState = Depends(lab)):
    store = state.store()
    state.limits.check_results(req.k)
    with state.index_lock:
        return plain(like_usage(store, req.usage_id, k=req.k, layer=req.layer))
