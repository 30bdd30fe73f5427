"""Request and response bodies of the lab's JSON API (they document it in the OpenAPI schema).

Responses carry the library's result dicts unchanged; the models below name their main
fields and allow the rest (``extra="allow"``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ENCODER_HELP = "static | average | attention (over the server's table) or a model: minilm, mpnet, smollm2"


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class EncoderOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    encoder: str = Field("static", description=ENCODER_HELP, examples=["minilm"])
    alpha: float | None = Field(None, description="average: the weight a word keeps of itself, 0..1")
    include_self: bool | None = Field(None, description="attention: may a word attend to itself")
    scale: float | None = Field(None, description="attention: multiplies the dot products (default 1/√d)")


class TokensRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sentences: list[str] = Field(..., examples=[["The bank approved my loan."]])


class EncodeRequest(EncoderOptions):
    sentences: list[str] = Field(..., examples=[["The bank approved my loan.", "We sat on the bank."]])


class WordRequest(EncoderOptions):
    sentences: list[str] = Field(..., examples=[["The bank approved my loan.", "We sat on the bank of the river."]])
    word: str = Field(..., examples=["bank"])


class ExploreRequest(WordRequest):
    layer: int = Field(-1, description="layer index (0 = static row, -1 = last)")
    projection: Literal["pca", "tsne", "umap"] = "pca"


class SensesRequest(ExploreRequest):
    k: int | Literal["auto"] = Field("auto", description="number of clusters, or auto (best silhouette)")
    missing: Literal["error", "skip"] = Field("skip", description="sentences without the word: error or skip")


class CompareRequest(EncoderOptions):
    sentences: list[str] = Field(..., min_length=2, max_length=2)
    word: str


class ContextualizeRequest(EncoderOptions):
    sentence: str = Field(..., examples=["We sat on the bank of the river."])
    word: str = Field(..., examples=["bank"])
    probes: list[str] = Field([], description="words of the table to measure the vector against")
    layer: int = -1


class AttentionRequest(EncoderOptions):
    sentence: str = Field(..., examples=["We sat on the bank of the river."])
    word: str = Field(..., examples=["bank"])
    occurrence: int | None = None
    layer: int = Field(-1, description="contextual layer, 1..L or -1 for the last")
    head: int | None = Field(None, description="a head, or none for the mean over heads")
    rollout: bool = True


class ToyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    neighbours: list[list[str]] = Field([["loan", "money"], ["river", "water"]],
                                        description="the neighbours of bank in each of the two sentences")
    vectors: dict[str, list[float]] | None = Field(None, description="moved words: {word: [finance, nature]}")
    method: Literal["average", "attention"] = "average"
    alpha: float = 0.0
    include_self: bool = True
    scale: float | None = None


class ModelLoadRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(..., examples=["minilm"])


class IndexSearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sentence: str = Field(..., examples=["We sat on the bank of the river."])
    word: str = Field(..., description="one of the index's words", examples=["bank"])
    k: int = Field(10, ge=1, description="how many usages (at most the server's max_results)")
    layer: int | None = Field(None, ge=0, description="a layer the index stores (default: its last)")
    occurrence: int | None = Field(None, ge=0, description="which occurrence of the word (0-based), if it occurs twice")


class IndexLikeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    usage_id: str = Field(..., description="the id of a usage in the index (from a search result)")
    k: int = Field(10, ge=1, description="how many usages (at most the server's max_results)")
    layer: int | None = Field(None, ge=0, description="a layer the index stores (default: its last)")


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
    limits: dict[str, int]
    resources: dict[str, ResourceStatus]


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
    sentences: list[EncodedSentence]
    encoder: dict[str, Any]


class LayersResponse(Open):
    word: str
    layer_names: list[str]
    layer_ids: list[int] = Field(..., description="the layer numbers (0 = static row), one per name")
    pairs: list[dict[str, Any]]


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
    encoder: str | None = Field(None, description="the lab model that encodes queries (None: the index loads its own)")
    max_results: int | None = Field(None, description="the largest k a search may ask for")
    hint: str | None = Field(None, description="how to start the lab with an index (when none is loaded)")


class UsageHit(Open):
    usage_id: str
    word: str
    form: str
    doc: str
    sentence_no: int
    start: int
    end: int
    sentence: str
    similarity: float


class UsagesResponse(Open):
    query: dict[str, Any]
    word: str
    layer: int
    model: str
    results: list[UsageHit]
