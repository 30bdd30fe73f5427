"""Contextual neighbours: the words whose vectors lie nearest one usage, at the same layer.

A usage (a word in a sentence) is encoded and its vector at a layer compared with a
*reference table* of word vectors at that same layer. *bank* in "We sat on the bank of the
river" then lists river-side words, in "The bank approved my loan" money words.

The reference table is, by default, each of the 20,000 most frequent words of GloVe 6B
encoded **alone** (the word is the whole text) by the same encoder: GloVe's keys are a
frequency list of lower-cased English that ships with the package (no download), long
enough to hold the words people look for, short enough to encode once per model in
minutes. A causal model (``Encoder.causal``) reads each word after a line break instead
(:data:`CAUSAL_PREFIX`): its first piece is where every later piece parks attention (an
attention sink), and SmolLM2 gives a word alone there almost one vector for every word
from layer 2 on (mean cosine 0.94 between words at layer 2; the word itself was among its
usage's 10 nearest reference words for none of 100 usages), while after a line break it
is among them for all 100 from layer 3 to 14 (84 at layer 21;
``benchmarks/neighbour_layers.py``). A model's reference is built once and cached on disk (kind
``neighbours`` of :mod:`contextlens.disk_cache`: least recently used references go past its bound), every
layer at once, one ``.npz`` per layer, built whole and checked by content
(:func:`reference_table`); its key is what changes a word encoded alone (the model, its
pooling and layers, the words), not settings that only matter for longer texts or for
speed. A reference over a static table (a mixing encoder) is computed in memory, never
written: 20,000 words alone take 0.1 s (averaging: a word alone has nothing to mix, so
it is the table's rows whatever alpha is) to 3 s (self-attention) over glove-6b-50d, so
no new alpha or scale adds files. A table distilled from a
corpus (:mod:`contextlens.passes.distill`) at the same layer is a better reference
(each word is the mean of its real usages, not the word out of any context): pass it as
``reference``.

The word's own forms (*banks*, *banking*, *banker* for *bank*: :func:`is_form`) are left
out of the list by default (they are near any usage of the word whatever its sense, so
they crowd out the words that tell the senses apart); ``keep_forms=True`` keeps them.
Bommasani, Davis & Cardie (ACL 2020) found tables distilled from many usages far better
word vectors than words encoded alone: :func:`reference_at_layer` reads a distilled table
(``contextlens static distill``) at the usage's layer.

With some models a usage's nearest words are still mostly its word's dominant sense: the
usage vector holds the word itself as much as its context. ``contrast`` (λ, default 0)
ranks instead by what the context adds, a definition of ours (not a paper's): a reference
word ``w`` scores ``cos(u, w) − λ · cos(t, w)``, ``u`` the usage, ``t`` the word's own row
in the reference (the word alone, or its distilled row), both centred. On 350 CoarseWSD-20
train usages the share whose top-10 words lean to their own sense goes, with λ = 0.5, from
50 % to 59 % for minilm (65 % with a table distilled from three corpora), but from 76 % down
to 62 % for mpnet, whose usages already lean (``benchmarks/eval_results.py --tasks
neighbours --contrast``; benchmarks/RESULTS.md): a choice per model, hence off by default.

Vectors are **centred** before the cosine by default: the mean reference vector is taken
off both sides. Contextual layers are anisotropic (every vector shares a large common
direction; Ethayarajh 2019), and a word in a sentence and a word alone differ by a shared
offset of their own; left in, these common parts rank the same few words first for any
usage.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..bounds import MAX_K
from ..build_marker import check_marker, write_marker
from ..disk_cache import DiskCache
from ..encoders.base import Encoder
from ..errors import EmptyInputError, InputError, ZeroVectorError, ask, check_float, check_int
from ..progress import step
from ..text import tokenize
from ..vectors import EmbeddingTable

__all__ = ["REFERENCE_WORDS", "CAUSAL_PREFIX", "reference_words", "reference_table", "contextual_neighbours",
           "nearest", "is_form", "reference_at_layer"]

log = logging.getLogger(__name__)
REFERENCE_WORDS = 20_000
#: what comes before a reference word encoded by a causal encoder (so the word is not its first piece)
CAUSAL_PREFIX = "\n"
_CHUNK = 4096  # words encoded per call while building a reference table


def reference_words(n: int = REFERENCE_WORDS) -> list[str]:
    """The ``n`` most frequent alphabetic words of GloVe 6B (lower-case, frequency order)."""
    from ..static.pretrained import load_vectors

    n = check_int("n", n, low=1, high=400_000)
    return [w for w in load_vectors("glove-6b-50d").keys if w.isalpha()][:n]


#: a transformer's settings that cannot change a word encoded alone (one short text): the
#: batch size and attention implementation change nothing beyond float rounding, the
#: window length and stride only texts longer than the model's window.
ALONE_SETTINGS = ("batch_size", "attention", "max_length", "stride")
MEMO_BYTES = 256 * 2**20  # references over static tables kept in memory, least recently used dropped
_memo: OrderedDict[str, tuple[np.ndarray, list[str], str]] = OrderedDict()
_memo_lock = threading.Lock()


def _on_disk(encoder: Encoder) -> bool:
    """Whether the encoder's reference is worth a place on disk: a model's (minutes to
    encode), not one over a static table (seconds at most, from a table in memory)."""
    return encoder.params().get("model") is not None


def _key(encoder: Encoder, words: Sequence[str]) -> str:
    """What a model's reference depends on: the encoder's ``params()`` without
    :data:`ALONE_SETTINGS`, its layers and the words.

    >>> class E:
    ...     layer_ids, causal = (0, 1), False
    ...     def __init__(self, batch): self.batch = batch
    ...     def params(self): return {"model": "m", "pooling": "mean", "batch_size": self.batch}
    >>> _key(E(8), ["bank"]) == _key(E(64), ["bank"]), _key(E(8), ["bank"]) == _key(E(8), ["river"])
    (True, False)
    """
    params = {k: v for k, v in encoder.params().items() if k not in ALONE_SETTINGS}
    identity = {"encoder": params, "layer_ids": list(encoder.layer_ids),
                "words": hashlib.sha256("\n".join(words).encode()).hexdigest()}
    if encoder.causal:
        identity["prefix"] = CAUSAL_PREFIX
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _in_memory(encoder: Encoder, words: list[str]) -> tuple[np.ndarray, list[str], str]:
    """:func:`_alone` for an encoder over a static table, kept in memory (least recently
    used dropped beyond :data:`MEMO_BYTES`)."""
    identity = json.dumps({"encoder": encoder.params(), "layer_ids": list(encoder.layer_ids),
                           "words": hashlib.sha256("\n".join(words).encode()).hexdigest()},
                          sort_keys=True, default=str)
    with _memo_lock:
        if identity in _memo:
            _memo.move_to_end(identity)
            return _memo[identity]
    found = _counted_alone(encoder, words, "once per encoder in this process, then kept in memory")
    with _memo_lock:
        _memo[identity] = found
        while _memo and sum(v[0].nbytes for v in _memo.values()) > MEMO_BYTES:  # one too large: not kept
            _memo.popitem(last=False)
    return found


def reference_table(encoder: Encoder, layer: int = -1, words: Sequence[str] | None = None, *,
                    root: str | Path | None = None) -> EmbeddingTable:
    """Each of ``words`` (default :func:`reference_words`) encoded alone, at ``layer``.

    A model's is built once for every layer of the encoder and cached under ``root``
    (default: the ``neighbours`` cache), keyed by what changes it (:func:`_key`); one over
    a static table is computed in memory. Words the encoder gives no vector alone are
    left out.
    """
    position = encoder.layer_position(layer)
    number = encoder.layer_ids[position]
    words = list(dict.fromkeys(words if words is not None else reference_words()))
    if not words:
        raise EmptyInputError("the reference vocabulary is empty; give some words")
    name = getattr(encoder, "name", None) or encoder.params().get("encoder", "encoder")
    if not _on_disk(encoder):
        vectors, kept, how = _in_memory(encoder, words)  # (layers, words, dim)
        return EmbeddingTable(kept, vectors[position], name=f"{name} layer {number}, {how}")
    cache = DiskCache("neighbours", root)
    folder = cache.folder / _key(encoder, words)
    path = folder / f"layer{number}.npz"

    def complete(built: Path) -> str | None:
        return check_marker(built) or (None if path.is_file() else f"{path} is missing")

    with cache.use(folder):
        with cache.building(folder, check=complete) as tmp:
            if tmp is not None:
                _build(encoder, words, name, tmp)
        try:
            return EmbeddingTable.load(path)
        except InputError as err:  # checked by content: written by another version, say
            log.warning("rebuilding the reference table %s: %s", path, err)
        with cache.building(folder, rebuild=True, check=complete) as tmp:
            _build(encoder, words, name, tmp)
        return EmbeddingTable.load(path)


def _build(encoder: Encoder, words: list[str], name: str, folder: Path) -> None:
    """Write every layer's reference table into ``folder`` (a build, renamed into place)."""
    vectors, kept, how = _counted_alone(encoder, words, f"once per model, then cached in {folder.parent}")
    for pos, k in enumerate(encoder.layer_ids):
        EmbeddingTable(kept, vectors[pos], name=f"{name} layer {k}, {how}").save(folder / f"layer{k}.npz")
    (folder / "identity.json").write_text(json.dumps(
        {"encoder": encoder.params(), "layer_ids": list(encoder.layer_ids), "words": len(kept),
         "vectors": how}, indent=1, default=str))
    write_marker(folder, f"neighbours: {name}, {len(kept)} words, {how}")


def _counted_alone(encoder: Encoder, words: list[str], once: str) -> tuple[np.ndarray, list[str], str]:
    """:func:`_alone` as a counted progress step (:func:`contextlens.progress.step`); ``once``
    says where the result is kept, so that the user knows the wait happens once."""
    name = getattr(encoder, "name", None) or encoder.params().get("encoder", "encoder")
    with step(f"encoding {len(words):,} reference words alone with {name}", total=len(words), unit="words",
              once=once) as s:
        return _alone(encoder, words, s.advance)


def _alone(encoder: Encoder, words: list[str], advance: Callable[[int], None] = lambda n: None
           ) -> tuple[np.ndarray, list[str], str]:
    """``(vectors (layers, kept, dim), kept words, how)``: each word encoded alone, in
    chunks (``advance(n)`` after each: n more words done); words the encoder gives no
    vector alone are left out. A mixing encoder that
    leaves the word itself out has nothing to mix for a word alone: its reference is the
    table row at every layer (what a word alone gives where it may attend to itself)."""
    rows = {}  # word -> its static row, for the words the encoder has one for
    for w in words:
        try:
            rows[w] = encoder.static_vectors([w])[0]  # (dim,)
        except InputError:
            continue
        break  # one known word is enough to ask whether a word alone can be encoded
    try:
        encoder.encode(list(rows)[:1] or words[:1])
    except InputError as err:
        log.info("a word alone has no context to mix (%s); the reference is the table row at every layer",
                 err)
        for w in words:
            with contextlib.suppress(InputError):
                rows[w] = encoder.static_vectors([w])[0]
        if not rows:
            raise EmptyInputError(
                f"the encoder's table holds none of the {len(words)} reference words") from None
        kept = [w for w in words if w in rows]
        return (np.repeat(np.stack([rows[w] for w in kept])[None], len(encoder.layer_ids), 0), kept,
                "table rows")
    kept = []
    single = [w for w in words if len(tokenize(w)) == 1]  # a reference word is one word of the tokenizer
    prefix = CAUSAL_PREFIX if encoder.causal else ""  # white space: the word is still word 0 of the text
    advance(len(words) - len(single))
    # filled in place: SmolLM2's 20,000 words x 31 layers x 576 numbers are 1.4 GB once (a list of
    # rows stacked at the end held them twice)
    # (layers, words, dim)
    stack = np.empty((len(encoder.layer_ids), len(single), encoder.dim), dtype=np.float32)
    for start in range(0, len(single), _CHUNK):
        chunk = single[start : start + _CHUNK]
        for w, enc in zip(chunk, encoder.encode([prefix + w for w in chunk], targets=[[0]] * len(chunk))):
            if len(enc.words) == 1:  # the word alone, with a vector (not skipped)
                stack[:, len(kept)] = enc.layers[:, 0]  # (layers, dim)
                kept.append(w)
        advance(len(chunk))
    if not kept:
        raise EmptyInputError(f"the encoder gave none of the {len(words)} reference words a vector")
    return stack[:, : len(kept)], kept, "words alone" + (" after a line break" if prefix else "")


#: endings that make a word's inflections and its commonest derivations; "es" only after a
#: sibilant (box-es, church-es), so *cares* is not read as *car* + es
_ENDINGS = ("s", "'s", "ed", "d", "ing", "ings", "er", "ers", "est", "ly", "ness", "ment", "ments")
_SIBILANT = re.compile(r"(s|x|z|ch|sh)$")


def _stems(word: str) -> set[str]:
    """The word and what it is with one ending taken off (with the spelling changes:
    a dropped e, a doubled consonant, y → i)."""
    w = word.lower()
    out = {w}
    for end in _ENDINGS:
        if w.endswith(end) and len(w) - len(end) >= 3:
            stem = w[: -len(end)]
            out.add(stem)
            if end[0] in "aeiou":
                out.add(stem + "e")  # bak-ing -> bake
                if len(stem) >= 4 and stem[-1] == stem[-2] and stem[-1] not in "aeiou":
                    out.add(stem[:-1])  # runn-ing -> run
            if stem.endswith("i"):
                out.add(stem[:-1] + "y")  # studi-ed -> study
    if w.endswith("es") and _SIBILANT.search(w[:-2]) and len(w) >= 5:
        out.add(w[:-2])
    if w.endswith("ies") and len(w) >= 5:
        out.add(w[:-3] + "y")
    return out


def is_form(word: str, other: str) -> bool:
    """Whether ``other`` is ``word`` itself, inflected or with a common derivational ending
    (either way round, any case): both reduce to one stem by the rules of :func:`_stems`.
    A rule of English spelling, not a dictionary: *banco* is not a form of *bank*.

    >>> [w for w in ["banks", "Banking", "banker", "bankers", "banco", "bankrupt", "river"]
    ...  if is_form("bank", w)]
    ['banks', 'Banking', 'banker', 'bankers']
    >>> is_form("run", "running"), is_form("study", "studies"), is_form("bake", "baked"), is_form("car",
    ...                                                                                            "cares")
    (True, True, True, False)
    """
    return bool(_stems(word) & _stems(other))


_LAYER_IN_NAME = re.compile(r" layer (-?\d+) .*\(distilled\)")


def reference_at_layer(path: str | Path, layer: int) -> EmbeddingTable:
    """The reference table of ``path`` for layer number ``layer``: ``path`` itself, else,
    when ``contextlens static distill -o path`` wrote one table per layer, the file of that
    layer beside it (``t.npz`` → ``t.layer6.npz``). A table distilled at another layer is
    refused: its words sit in another layer's space.
    """
    from ..encoders.registry import resolve_vectors

    path = Path(path)
    chosen = path
    if not path.exists():
        stem, suffix = (path.name[: -len(path.suffix)], path.suffix) if path.suffix else (path.name, ".npz")
        beside = path.with_name(f"{stem}.layer{layer}{suffix}")
        if beside.exists():
            chosen = beside
        else:
            others = sorted(p.name for p in path.parent.glob(f"{stem}.layer*{suffix}"))
            if others:
                raise InputError(f"no reference table of layer {layer} beside {path} (there are: "
                                 f"{', '.join(others)}); distil that layer (`contextlens static distill "
                                 f"--layers {layer}`) or give --layer to match one")
    table = resolve_vectors(str(chosen))
    found = _LAYER_IN_NAME.search(table.name or "")
    if found and int(found.group(1)) != layer:
        raise InputError(f"{chosen} was distilled at layer {found.group(1)}, the usage is read at layer "
                         f"{layer}; give --layer {found.group(1)}, or the table of layer {layer}")
    return table


def cosines(table: EmbeddingTable, query: np.ndarray, *, center: bool = True) -> np.ndarray:
    """The cosine of ``query`` with every row of ``table`` (``(n,)`` float64), after taking the
    table's mean row off both sides (``center``); ``-inf`` for a zero row.

    >>> t = EmbeddingTable(["river", "money"], [[1.0, 0.0], [0.0, 2.0]])
    >>> cosines(t, np.array([1.0, 1.0]), center=False).round(3).tolist()
    [0.707, 0.707]
    """
    q = np.asarray(query, dtype=np.float64)
    rows = table.vectors.astype(np.float64)  # (n, dim)
    if center:
        mean = rows.mean(axis=0)
        rows, q = rows - mean, q - mean
    norms = np.linalg.norm(rows, axis=1) * np.linalg.norm(q)
    if not np.linalg.norm(q):
        raise ZeroVectorError("the usage's vector equals the reference mean; it has no direction")
    return np.where(norms > 0, rows @ q / np.where(norms > 0, norms, 1.0), -np.inf)  # (n,)


def nearest(table: EmbeddingTable, query: np.ndarray, k: int, *, center: bool = True,
            exclude: Sequence[str] = ()) -> list[tuple[str, float]]:
    """The ``k`` rows of ``table`` nearest ``query`` by cosine, after taking the table's
    mean row off both sides (``center``); keys in ``exclude`` (any case) are left out.

    >>> t = EmbeddingTable(["river", "money", "bank"], [[1.0, 3.0], [3.0, 1.0], [2.0, 2.0]])
    >>> [w for w, _ in nearest(t, np.array([1.5, 2.5]), 2, exclude=["Bank"])]
    ['river', 'money']
    """
    return best(table, cosines(table, query, center=center), k, exclude=exclude)


def best(table: EmbeddingTable, scores: np.ndarray, k: int, *,
         exclude: Sequence[str] = ()) -> list[tuple[str, float]]:
    """The ``k`` keys of ``table`` with the highest ``scores`` (``(n,)``, one per row), with
    their scores, best first; keys in ``exclude`` (any case) are left out.

    >>> best(EmbeddingTable(["a", "B", "c"], [[1.0], [2.0], [3.0]]), np.array([0.1, 0.9, 0.5]), 1,
    ...      exclude=["b"])
    [('c', 0.5)]
    """
    k = check_int("k", k, low=1, high=len(table))
    skip = {w.lower() for w in exclude}
    out = []
    for i in np.argsort(-scores, kind="stable"):
        if table.keys[i].lower() not in skip:
            out.append((table.keys[i], float(scores[i])))
            if len(out) == k:
                break
    return out


def contextual_neighbours(encoder: Encoder, sentence: str, word: str, *, layer: int = -1, k: int = 10,
                          occurrence: int | None = None, reference: EmbeddingTable | None = None,
                          words: Sequence[str] | None = None, center: bool = True,
                          root: str | Path | None = None, keep_forms: bool = False,
                          contrast: float = 0.0) -> dict[str, Any]:
    """The ``k`` reference words nearest ``word`` as used in ``sentence``, at ``layer``.

    Returns ``{word, sentence, start, end, model, layer, layer_name, reference, contrast,
    neighbours: [{word, cosine}], forms_left_out}`` (``start``/``end``: the usage's
    characters in ``sentence``), best first; the word itself is not listed, nor its forms
    (:func:`is_form`; ``forms_left_out`` names those that ranked among the first ``k``)
    unless ``keep_forms``. ``contrast`` λ in [0, 1] (see the module docstring): rank by
    ``cos(usage, w) − λ · cos(own, w)``, ``own`` the word's own row of the reference (which
    must hold the word); each neighbour then also gives ``own_cosine`` and ``score``.
    ``reference``: a table at the same layer; default :func:`reference_table` of this encoder
    over ``words`` (default :func:`reference_words`), cached under ``root``. Only the one usage is encoded
    (:func:`~contextlens.analysis.incontext.usage_vectors`), so a text of any length works.
    """
    from .incontext import usage_vectors

    position = encoder.layer_position(layer)  # a layer the encoder lacks fails before encoding
    k = check_int("k", k, low=1, high=MAX_K)
    contrast = check_float("contrast", contrast, low=0.0, high=1.0)
    enc = usage_vectors(encoder, sentence, word, occurrence)  # one word: (layers, 1, dim)
    table = reference if reference is not None else reference_table(encoder, layer, words, root=root)
    if table.dim != enc.dim:
        raise InputError(f"the reference table has dim {table.dim}, the encoder {enc.dim}; give a table of "
                         "this encoder at this layer")
    used = enc.words[0].text
    forms = [] if keep_forms else [w for w in table.keys if w[:3].lower() == used[:3].lower()
                                   and is_form(used, w)]
    cos = cosines(table, enc.layers[position, 0], center=center)  # (n,)
    own = None
    if contrast:
        row = next((table.index(w) for w in (used, used.lower()) if w in table), None)
        if row is None:
            raise InputError(f"contrast needs {used!r} in the reference table ({table.name}), which lacks "
                             f"it; give a reference that holds the word (a table distilled with it) or "
                             f"{ask('contrast', 0)}")
        own = cosines(table, table.vectors[row], center=center)
    scores = cos if own is None else cos - contrast * own
    found = best(table, scores, min(k + len(forms), len(table)), exclude=[used])
    skip = {w.lower() for w in forms}
    kept = [(w, c) for w, c in found if w.lower() not in skip][:k]
    cutoff = kept[-1][1] if len(kept) == k else -np.inf
    left_out = [w for w, c in found if w.lower() in skip and c >= cutoff]
    rows = [{"word": w, "cosine": c} if own is None else
            {"word": w, "cosine": float(cos[i]), "own_cosine": float(own[i]), "score": c}
            for w, c in kept for i in [table.index(w)]]
    return {"word": used, "sentence": sentence, "start": enc.words[0].start, "end": enc.words[0].end,
            "model": enc.source,
            "layer": enc.layer_ids[position], "layer_name": enc.layer_names[position],
            "reference": table.name, "contrast": contrast,
            "neighbours": rows, "forms_left_out": left_out}
