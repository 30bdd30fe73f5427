"""Request and response bodies of the lab's JSON API (they document it in the OpenAPI schema).

Responses carry the library's result dicts unchanged; the models below name their main
fields and allow the rest (``extra="allow"``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_type_hints

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, create_model

from ..analysis.cka import DEFAULT_SENTENCES
from ..analysis.faithfulness import METHODS
from ..analysis.patching import PATCH_POINTS
from ..analysis.probing import PROBE_KINDS, PROBE_TASKS
from ..analysis.toy import MAX_COORD
from ..bounds import MAX_PATCH_PREDICTIONS
from ..encoders.gradients import MAX_STEPS
from ..passes.rows import UsageRow
from .limits import CAPS, utf8_text

ENCODER_HELP = "static | average | attention (over the server's table) or a model: minilm, mpnet, smollm2"

# ---- the kinds of request field, each with its bound (see limits.py) -------------------------
Sentence = Annotated[str, Field(max_length=CAPS.max_chars), BeforeValidator(utf8_text)]
Sentences = Annotated[list[Sentence], Field(min_length=1, max_length=CAPS.max_sentences)]
Word = Annotated[str, Field(min_length=1, max_length=CAPS.max_word_chars), BeforeValidator(utf8_text)]
Name = Annotated[str, Field(min_length=1, max_length=CAPS.max_word_chars), BeforeValidator(utf8_text)]
Layer = Annotated[int, Field(ge=-CAPS.max_layer, le=CAPS.max_layer,
                             description="a layer number: 0 = static row, then the model's layers; -1 = the "
                                         "last")]
StoredLayer = Annotated[int, Field(ge=0, le=CAPS.max_layer, description="a layer the index stores")]
Occurrence = Annotated[int, Field(ge=0, le=CAPS.max_occurrence,
                                  description="which occurrence of the word (0-based), if it occurs twice")]
Results = Annotated[int, Field(ge=1, le=CAPS.max_results,
                               description="how many usages (at most the server's max_results)")]
Coordinate = Annotated[float, Field(ge=-MAX_COORD, le=MAX_COORD)]


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Request(BaseModel):
    """A request body: no unknown fields, no NaN or infinity, and each value of its JSON type
    (strict: ``false`` is not a number, ``0`` not a boolean, ``"3"`` not an integer)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True)


class EncoderOptions(Request):
    encoder: Name = Field("static", description=ENCODER_HELP, examples=["minilm"])
    alpha: float | None = Field(None, ge=0.0, le=1.0,
                                description="average: the weight a word keeps of itself, 0..1")
    include_self: bool | None = Field(None, description="attention: may a word attend to itself")
    scale: float | None = Field(None, ge=-CAPS.max_scale, le=CAPS.max_scale,
                                description="attention: multiplies the dot products (default 1/√d)")


class TokensRequest(Request):
    sentences: Sentences = Field(..., examples=[["The bank approved my loan."]])


class EncodeRequest(EncoderOptions):
    sentences: Sentences = Field(..., examples=[["The bank approved my loan.", "We sat on the bank."]])


class WordRequest(EncoderOptions):
    sentences: Sentences = Field(..., examples=[["The bank approved my loan.",
                                                 "We sat on the bank of the river."]])
    word: Word = Field(..., examples=["bank"])
    missing: Literal["error", "skip"] = Field(
        "error", description="sentences without the word: an error, or left out (listed in skipped)")
    occurrence: Occurrence | Literal["all"] | None = Field(
        None, description="which occurrence of the word (0-based), if it occurs twice; all: each one is a "
                          "usage")


class ExploreRequest(WordRequest):
    layer: Layer = -1
    projection: Literal["pca", "tsne", "umap"] = "pca"


class SensesRequest(ExploreRequest):
    occurrence: Occurrence | None = None  # senses takes one usage per sentence
    k: Annotated[int, Field(ge=1, le=CAPS.max_sentences)] | Literal["auto"] = Field(
        "auto", description="number of clusters, or auto (the largest eigengap)")
    missing: Literal["error", "skip"] = Field("skip", description="sentences without the word: error or skip")


class CompareRequest(EncoderOptions):
    sentences: list[Sentence] = Field(..., min_length=2, max_length=2)
    word: Word


class ContextualizeRequest(EncoderOptions):
    sentence: Sentence = Field(..., examples=["We sat on the bank of the river."])
    word: Word = Field(..., examples=["bank"])
    probes: list[Word] = Field([], max_length=CAPS.max_probes,
                               description="words of the table to measure the vector against")
    layer: Layer = -1


class AttentionViewsRequest(EncoderOptions):
    sentence: Sentence = Field(..., examples=["We sat on the bank of the river."])
    word: Word = Field(..., examples=["bank"])
    occurrence: Occurrence | None = None
    layer: Layer = -1
    head: int | None = Field(None, ge=0, le=CAPS.max_head,
                             description="a head, or none for the mean over heads")


class NeighboursViewRequest(EncoderOptions):
    sentence: Sentence = Field(..., examples=["We sat on the bank of the river."])
    word: Word = Field(..., examples=["bank"])
    occurrence: Occurrence | None = None
    layer: Layer = -1
    k: Annotated[int, Field(ge=1, le=CAPS.max_neighbours)] = Field(10, description="how many neighbours")
    contrast: float = Field(0.0, ge=0.0, le=1.0,
                            description="λ, 0..1: rank by the cosine to the usage minus λ times the "
                                        "cosine to the word's own reference row (what the context adds; the "
                                        "word must be in the reference); 0 = by cosine")


class OcclusionViewRequest(EncoderOptions):
    sentence: Sentence = Field(..., examples=["We sat on the bank of the river."])
    word: Word = Field(..., examples=["bank"])
    occurrence: Occurrence | None = None


class SublayersViewRequest(EncoderOptions):
    sentences: list[Sentence] = Field(
        ..., min_length=1, max_length=2,
        description="one or two sentences with the word (two: the cosine between its usages after every "
                    "block)",
        examples=[["We sat on the bank of the river.", "The bank approved my loan."]])
    word: Word = Field(..., examples=["bank"])
    occurrences: list[Occurrence | None] = Field(
        [], max_length=2, description="per sentence, which occurrence of the word (0-based)")
    labels: list[Name] = Field([], max_length=2,
                               description="how the view names the sentences (default S0, S1)")


class AttributionsViewRequest(OcclusionViewRequest):
    methods: list[Literal[("all", *METHODS)]] = Field(  # type: ignore[valid-type]
        ["all"], min_length=1, max_length=len(METHODS),
        description=f"all, or some of: {', '.join(METHODS)} (all: those this encoder can give)")
    steps: int = Field(32, ge=1, le=MAX_STEPS, description="points of the integrated-gradients integral")


class PatchViewRequest(EncoderOptions):
    recipient: Sentence = Field(..., description="the sentence whose word gets the donor's state",
                                examples=["We sat on the bank of the river."])
    donor: Sentence = Field(..., description="the sentence the state comes from",
                            examples=["The bank approved my loan."])
    word: Word = Field(..., examples=["bank"])
    occurrences: list[Occurrence | None] = Field(
        [], max_length=2,
        description="which occurrence of the word (0-based) in the recipient and in the donor")
    at: Literal[PATCH_POINTS] = Field(  # type: ignore[valid-type]
        "layer", description="layer: the layer's output; attention / ffn: what that block writes before its "
                             "residual add")
    k: int = Field(5, ge=1, le=MAX_PATCH_PREDICTIONS, description="causal LMs: next words listed per layer")


class LensViewRequest(Request):
    model: Name = Field(..., description="a causal language model the lab offers (smollm2, or one given with "
                        "`contextlens lab --model`)", examples=["smollm2"])
    sentence: Sentence = Field(..., examples=["We sat on the bank of the river."])
    position: int | None = Field(None, ge=0, le=CAPS.max_chars,
                                 description="the word (0-based) after which to read the predictions; "
                                             "default the last")
    word: Word | None = Field(
        None, description="or the word itself, after which to read them (instead of position)")
    occurrence: Occurrence | None = None
    k: Annotated[int, Field(ge=1, le=CAPS.max_neighbours)] = Field(5, description="best next words per layer")
    track: list[Word] = Field([], max_length=CAPS.max_probes,
                              description="words whose rank to follow layer by layer")


class ProbesViewRequest(EncoderOptions):
    tasks: list[Literal[PROBE_TASKS]] = Field(  # type: ignore[valid-type]
        ["pos"], min_length=1, max_length=len(PROBE_TASKS),
        description="the probe tasks over SemCor: pos, supersense, sense (one probe per layer each)")
    # type: ignore
    probe: Literal[PROBE_KINDS] = Field("linear", description="linear (logistic regression) or mlp")


class CkaViewRequest(EncoderOptions):
    other: Name | None = Field(None, description="a second encoder (default options) whose layers to compare "
                               "with the first's; none: the first's layers with each other",
                               examples=["mpnet"])
    sample: Annotated[int, Field(ge=2, le=DEFAULT_SENTENCES)] = Field(
        200, description="how many sentences of the shared corpora (Brown, ABC, movie reviews) to draw")
    seed: Annotated[int, Field(ge=0, le=2**32 - 1)] = Field(0, description="the seed of the sample")
    debiased: bool = Field(False, description="the debiased CKA estimator (Nguyen et al. 2021)")


class AttentionRequest(AttentionViewsRequest):
    rollout: bool = True


class ToyRequest(Request):
    neighbours: list[Annotated[list[Word], Field(max_length=CAPS.max_toy_words)]] = Field(
        [["loan", "money"], ["river", "water"]], min_length=2, max_length=2,
        description="the neighbours of bank in each of the two sentences")
    vectors: dict[Word, Annotated[list[Coordinate], Field(min_length=2, max_length=2)]] | None = Field(
        None, max_length=CAPS.max_toy_words, description="moved words: {word: [finance, nature]}")
    method: Literal["average", "attention"] = "average"
    alpha: float = Field(0.0, ge=0.0, le=1.0)
    include_self: bool = True
    scale: float | None = Field(None, ge=-CAPS.max_scale, le=CAPS.max_scale)


class ModelLoadRequest(Request):
    name: Name = Field(..., examples=["minilm"])


class IndexSearchRequest(Request):
    sentence: Sentence = Field(..., examples=["We sat on the bank of the river."])
    word: Word = Field(..., description="one of the index's words", examples=["bank"])
    k: Results = 10
    layer: StoredLayer | None = Field(None, description="a layer the index stores (default: its last)")
    occurrence: Occurrence | None = None


class IndexLikeRequest(Request):
    usage_id: Annotated[str, Field(min_length=1, max_length=CAPS.max_id_chars),
                        BeforeValidator(utf8_text)] = Field(
        ..., description="the id of a usage in the index (from a search result)")
    k: Results = 10
    layer: StoredLayer | None = Field(None, description="a layer the index stores (default: its last)")


# ---- responses ---------------------------------------------------------------------------
class ErrorBody(BaseModel):
    detail: str = Field(..., description="what was wrong and how to fix it")
    error: str = Field(..., description="the kind of error (an exception class name)")


class ResourceStatus(Open):
    state: Literal["not loaded", "loading", "ready", "failed"]
    seconds: float | None = None
    error: str | None = None


class StatusResponse(Open):
    default_model: str
    vectors: str
    encoders: list[str]
    limits: dict[str, int | float] = Field(...,
                                           description="every limit of a request, by name (see limits.py)")
    resources: dict[str, ResourceStatus]
    workers: dict[str, int] = Field(..., description="the worker processes of the projections: running, busy")
    cache: dict[str, int] = Field(
        ..., description="the encodings kept for every encoder together, and their bytes")


class WordSpan(BaseModel):
    text: str
    start: int
    end: int


class TokensResponse(BaseModel):
    sentences: list[list[WordSpan]]


class EncodedSentence(BaseModel):
    text: str
    words: list[str]
    n_layers: int
    dim: int
    heads: int | None


class EncodeResponse(Open):
    layer_names: list[str]
    layer_ids: list[int] = Field(..., description="the layer numbers (0 = static row), one per name")
    sentences: list[EncodedSentence]
    encoder: dict[str, Any]
    causal: bool = Field(..., description="whether a word's vector is computed from the words before it only")
    default_layer: int = Field(..., description="the layer the lab reads by default for this encoder")
    notes: dict[str, str] = Field(
        ..., description="what a figure of this encoder means, by figure (causal models)")


class LayersResponse(Open):
    word: str
    layer_names: list[str]
    layer_ids: list[int] = Field(..., description="the layer numbers (0 = static row), one per name")
    pairs: list[dict[str, Any]] = Field(..., description="one per two usages of the word; indices: their "
                                        "sentences (0-based), occurrences: which occurrence of the word each "
                                        "is in its sentence (0-based), labels: the two as S0 or S0 #1, "
                                        "label: the pair as S0–S2")
    skipped: list[dict[str, Any]] = Field([], description="the sentences without the word (missing: skip): "
                                          "position (0-based), sentence, reason")


class ExploreResponse(Open):
    layer_name: str
    layer_names: list[str]
    words: list[dict[str, Any]]
    projection: dict[str, Any]


class SensesResponse(Open):
    k: int
    silhouette: float | None
    labels: list[int | None]
    clusters: list[dict[str, Any]]


class AttentionResponse(Open):
    words: list[str]
    layer_names: list[str]
    heads: int
    selected: dict[str, Any]


class ViewsResponse(BaseModel):
    views: list[dict[str, Any]] = Field(...,
                                        description="each view's data, drawn by CLViews.render (/views/*.js)")


class ViewResponse(BaseModel):
    view: dict[str, Any] = Field(..., description="the view's data, drawn by CLViews.render (/views/*.js)")


class ToyResponse(Open):
    sentences: list[dict[str, Any]]
    cosine: float
    vectors: dict[str, list[float]]


class IndexStats(Open):
    db: str
    model: str
    layers: list[int]
    usages: int
    words: dict[str, int]
    size_bytes: int


class IndexResponse(BaseModel):
    loaded: bool
    stats: IndexStats | None = Field(None, description="the library's index_stats (when loaded)")
    encoder: str | None = Field(None,
                                description="the lab model that encodes queries (None: the index loads its "
                                            "own)")
    max_results: int | None = Field(None, description="the largest k a search may ask for")
    hint: str | None = Field(None, description="how to start the lab with an index (when none is loaded)")


#: a search result: the index's usage row (its columns spelled once, as the fields of
#: :class:`contextlens.passes.rows.UsageRow`) and its similarity to the query
UsageHit = create_model("UsageHit", __base__=Open, __module__=__name__,
                        **{name: (kind, ...) for name, kind in get_type_hints(UsageRow).items()},
                        similarity=(float, ...))


class UsagesResponse(Open):
    query: dict[str, Any]
    word: str
    layer: int
    model: str
    results: list[UsageHit]
