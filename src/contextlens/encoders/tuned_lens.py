"""The tuned lens (Belrose et al. 2023, "Eliciting Latent Predictions from Transformers with the Tuned
Lens"): one affine translator per layer, trained so that the layer's hidden state, translated and
read through the model's final norm and unembedding, gives the model's own final distribution.

The logit lens (:meth:`~contextlens.encoders.lm.LanguageModel.lens`) reads every layer's hidden state
``h_k`` as if it were the last one: ``softmax(W_U · norm(h_k))``. Middle layers do not speak the last
layer's coordinates, so that reading is poor there (SmolLM2 ranks *Paris* 2,000-5,000th after "The
capital of France is" until layer 24). The tuned lens reads ``softmax(W_U · norm(h_k + A_k h_k +
b_k))`` instead, with ``A_k, b_k`` learned for each layer ``k = 0 .. L−1`` (the last layer needs none),
written residually as in the authors' code so that the zero translator is the logit lens.

Training (:meth:`TunedLens.fit`), on sentences of the shipped corpora (the data folder's
``corpora``: Brown, ABC, movie reviews, packed into chunks of ``context`` pieces):

1. every layer's hidden states at ``tokens`` positions (and ``eval_tokens`` more, held out) from one
   forward pass each;
2. each translator started at the least-squares map from ``h_k`` to the last layer's own state
   ``h_L`` (each position weighted by ``1 / rms(h_L)²``, since the final norm discards the scale), a
   ridge of ``ridge`` times the mean diagonal;
3. then ``steps`` steps of Adam on the loss of the paper, the KL divergence from the model's final
   distribution to the tuned lens's, summed over layers, on ``batch`` random positions per step.

The first step is not in the paper, which trains from the identity for 250 steps of 2^18 tokens on
GPUs. On a CPU a KL evaluation of one position at one layer is a product with the 49,152 × 576
unembedding, forward and back; the budget of minutes :data:`DEFAULTS` aims at (SmolLM2 on this
project's shared 2-core machine) affords about 10^4 of them, so the closed-form start does most of
the work and the KL steps refine it. Measured on SmolLM2 (256 held-out positions): the mean KL over
layers 0-29 is 1.76 nats after the least-squares start and 1.63 after 16 KL steps of 16 positions,
against 18.2 for the logit lens (108.6 at the embedding output; benchmarks/RESULTS.md). The result
reports the KL divergence to the final distribution per layer, logit lens and tuned lens, on the
held-out positions (``kl_``). A fitted lens is cached per model weights, settings and corpus files
(:func:`tuned_lens_for`, the ``lenses`` cache of :mod:`contextlens.disk_cache`). Each stage of the
training is a :func:`contextlens.progress.step` (``contextlens -v`` and the command line show it).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError, check_float, check_int
from ..progress import step

__all__ = ["TunedLens", "LensSettings", "DEFAULTS", "tuned_lens_for", "corpus_files", "corpus_texts",
           "kl_per_layer"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LensSettings:
    """How a tuned lens is trained (see the module notes); part of its cache key."""

    tokens: int = 4096
    eval_tokens: int = 128
    context: int = 64
    steps: int = 16
    batch: int = 16
    lr: float = 3e-4
    ridge: float = 1e-3
    seed: int = 0

    def checked(self) -> LensSettings:
        check_int("tokens", self.tokens, low=64, high=1 << 20, hint="positions the translators are fitted on")
        check_int("eval_tokens", self.eval_tokens, low=16, high=1 << 16, hint="held-out positions")
        check_int("context", self.context, low=8, high=4096, hint="pieces per chunk of corpus text")
        check_int("steps", self.steps, low=0, high=100_000)
        check_int("batch", self.batch, low=1, high=4096)
        check_float("lr", self.lr, low=0.0, high=1.0)
        check_float("ridge", self.ridge, low=0.0, high=1e6)
        check_int("seed", self.seed, low=0, high=2**32 - 1)
        return self


DEFAULTS = LensSettings()


def corpus_files(folder: str | Path) -> list[Path]:
    """The corpora a tuned lens is trained on: every ``*_plain.txt`` of ``folder`` (the data folder's
    ``corpora``: one sentence per line), in name order."""
    root = Path(folder)
    files = sorted(root.glob("*_plain.txt")) if root.is_dir() else []
    if not files:
        raise InputError(f"no corpus to train a tuned lens on: {root} holds no *_plain.txt (one sentence per "
                         "line); give the data folder's corpora (set CONTEXTLENS_DATA, see its README)")
    return files


def corpus_texts(folder: str | Path, *, seed: int = 0) -> list[str]:
    """The sentences of :func:`corpus_files` ``(folder)``, shuffled with ``seed``; lines that are not
    UTF-8 (27 of ABC) are skipped."""
    from ..corpus.reading import iter_lines

    lines = [line.strip() for f in corpus_files(folder) for line in iter_lines(f, errors="skip")
             if line.strip()]
    rng = np.random.default_rng(seed)
    return [lines[i] for i in rng.permutation(len(lines))]


def _chunks(tokenizer, texts: Iterable[str], context: int, needed: int) -> list[list[int]]:
    """Consecutive texts joined with spaces and cut into chunks of ``context`` pieces (a BOS first
    where the tokenizer adds one), until ``needed`` positions are collected."""
    bos = tokenizer("a", add_special_tokens=True)["input_ids"][:-len(tokenizer("a", add_special_tokens=False)
                                                                      ["input_ids"])]
    out, have, pending = [], 0, []
    for text in texts:
        pending += tokenizer(" " + text, add_special_tokens=False)["input_ids"]
        while len(pending) >= context - len(bos) and have < needed:
            out.append(list(bos) + pending[: context - len(bos)])
            pending = pending[context - len(bos):]
            have += context
        if have >= needed:
            return out
    if have < needed:
        raise InputError(f"the corpus holds {have} positions; a tuned lens needs {needed}: give more text")
    return out


class TunedLens:
    """One affine translator per layer (scikit-learn style: ``fit`` returns self; what it learns
    ends in ``_``).

    Learned: ``weight_`` ``(layers, dim, dim)`` and ``bias_`` ``(layers, dim)``, the translator of
    layer ``k`` being ``h ↦ h + weight_[k] @ h + bias_[k]`` (layers ``0 .. L−1``; layer ``L`` is read
    as it is); ``kl_`` ``{"layers", "logit", "tuned"}``, the mean KL divergence (nats) from the final
    distribution on held-out positions per layer; ``model_``, ``seconds_``.
    """

    def __init__(self, settings: LensSettings = DEFAULTS):
        self.settings = settings

    # -- reading through it --------------------------------------------------------------------
    def translate(self, k: int, h):
        """``h`` (torch, ``(..., dim)``) of layer ``k`` translated (layer ``L``: unchanged)."""
        import torch

        if k >= len(self.weight_):
            return h
        w = torch.as_tensor(self.weight_[k], dtype=h.dtype, device=h.device)
        b = torch.as_tensor(self.bias_[k], dtype=h.dtype, device=h.device)
        return h + h @ w.T + b

    # -- training ------------------------------------------------------------------------------
    def fit(self, lm, texts: Iterable[str]) -> TunedLens:
        """Train the translators of ``lm`` (a causal :class:`~contextlens.encoders.lm.LanguageModel`)
        on ``texts`` (see the module notes), each stage reported as a progress step."""
        import torch

        s = self.settings.checked()
        lm._require_causal()
        started = time.perf_counter()
        say = f"tuned lens of {lm.name}"
        torch.manual_seed(s.seed)
        states = self._states(lm, texts, s, say)  # (N, L + 1, dim), float32
        n_layers = states.shape[1] - 1
        rng = np.random.default_rng(s.seed)
        order = torch.as_tensor(rng.permutation(len(states)))
        held, train = states[order[: s.eval_tokens]], states[order[s.eval_tokens:]]
        norm, head = lm._final_norm(), lm.hf_model.get_output_embeddings()
        w, b = self._least_squares(train, s.ridge, say)
        if s.steps:
            w, b = self._kl_steps(train, w, b, norm, head, s, say)
        self.weight_, self.bias_ = w.numpy(), b.numpy()
        self.kl_ = kl_per_layer(held, norm, head, self, what=say)
        self.model_, self.n_layers_ = lm.name, n_layers
        self.seconds_ = time.perf_counter() - started
        log.info("tuned lens of %s in %.0f s: KL logit %s, tuned %s", lm.name, self.seconds_,
                 np.round(self.kl_["logit"], 2).tolist(), np.round(self.kl_["tuned"], 2).tolist())
        return self

    @staticmethod
    def _states(lm, texts, s: LensSettings, say: str):
        """Every layer's hidden state (before the final norm) at ``tokens + eval_tokens`` positions."""
        import torch

        needed = s.tokens + s.eval_tokens
        chunks = _chunks(lm.tokenizer, texts, s.context, needed)
        rows, have = [], 0
        with step(f"{say}: reading the corpus", total=needed, unit="positions") as done:
            for i in range(0, len(chunks), 8):
                with torch.inference_mode(), lm._capture(True) as states:  # chunks of one length: no padding
                    lm.hf_model(input_ids=torch.tensor(chunks[i:i + 8]).to(lm.device))
                with torch.inference_mode():
                    rows.append(torch.stack([states[k].float() for k in range(lm.n_layers + 1)], 2).reshape(
                        -1, lm.n_layers + 1, states[0].shape[-1]).clone())
                have += sum(len(c) for c in chunks[i:i + 8])
                done.update(min(have, needed))
        return torch.cat(rows)[:needed]

    @staticmethod
    def _least_squares(train, ridge: float, say: str):
        """Per layer, the affine map from ``h_k`` to ``h_L`` minimising the squared error weighted by
        ``1 / rms(h_L)²``, as residual translators ``(weight (layers, dim, dim), bias (layers, dim))``."""
        import torch

        last = train[:, -1].double()  # (N, dim)
        weight = 1.0 / last.pow(2).mean(1).clamp_min(1e-12)  # (N,)
        layers, dim = train.shape[1] - 1, train.shape[2]
        w_out = torch.zeros(layers, dim, dim)
        b_out = torch.zeros(layers, dim)
        ones = torch.ones(len(train), 1, dtype=torch.float64)
        with step(f"{say}: fitting the translators", total=layers, unit="layers") as done:
            for k in range(layers):
                x = torch.cat([train[:, k].double(), ones], 1)  # (N, dim + 1)
                gram = (x * weight[:, None]).T @ x
                gram += ridge * gram.diagonal().mean() * torch.eye(dim + 1, dtype=torch.float64)
                beta = torch.linalg.solve(gram, (x * weight[:, None]).T @ last)  # (dim + 1, dim)
                w_out[k] = (beta[:dim].T - torch.eye(dim, dtype=torch.float64)).float()
                b_out[k] = beta[dim].float()
                done.advance()
        return w_out, b_out

    @staticmethod
    def _kl_steps(train, w, b, norm, head, s: LensSettings, say: str):
        """``steps`` steps of Adam on the summed KL divergence from the final distribution."""
        import torch

        w, b = w.clone().requires_grad_(True), b.clone().requires_grad_(True)
        opt = torch.optim.Adam([w, b], lr=s.lr)
        gen = torch.Generator().manual_seed(s.seed)
        layers = w.shape[0]
        with step(f"{say}: training on the KL divergence", total=s.steps, unit="steps") as done:
            for _ in range(s.steps):
                pick = torch.randint(len(train), (s.batch,), generator=gen)
                batch = train[pick]  # (B, L + 1, dim)
                with torch.no_grad():
                    target = torch.log_softmax(head(norm(batch[:, -1])).float(), -1)  # (B, vocab)
                opt.zero_grad()
                for k in range(layers):  # one layer at a time: the (B, vocab) logits of one layer in memory
                    h = batch[:, k]
                    lens = torch.log_softmax(head(norm(h + h @ w[k].T + b[k])).float(), -1)
                    loss = torch.nn.functional.kl_div(lens, target, log_target=True, reduction="batchmean")
                    loss.backward()
                opt.step()
                done.advance()
        return w.detach(), b.detach()

    # -- storing -------------------------------------------------------------------------------
    def save(self, folder: str | Path) -> None:
        """Write the translators and what they were trained with into ``folder``."""
        folder = Path(folder)
        np.savez(folder / "translators.npz", weight=self.weight_, bias=self.bias_)
        (folder / "lens.json").write_text(json.dumps(
            {"model": self.model_, "n_layers": self.n_layers_, "settings": asdict(self.settings),
             "kl": self.kl_, "seconds": self.seconds_}, indent=1))

    @classmethod
    def load(cls, folder: str | Path) -> TunedLens:
        folder = Path(folder)
        meta = json.loads((folder / "lens.json").read_text())
        lens = cls(LensSettings(**meta["settings"]))
        with np.load(folder / "translators.npz") as z:
            lens.weight_, lens.bias_ = z["weight"], z["bias"]
        lens.model_, lens.n_layers_, lens.kl_, lens.seconds_ = meta["model"], meta["n_layers"], meta["kl"], \
            meta["seconds"]
        return lens


def kl_per_layer(states, norm, head, lens: TunedLens | None = None, *, chunk: int = 64,
                 what: str = "the lenses") -> dict[str, list]:
    """Mean KL divergence (nats) from the final distribution to each layer's logit-lens reading and,
    with ``lens``, its tuned-lens reading: ``{"layers": [0 .. L], "logit": [...], "tuned": [...]}``.
    ``states`` ``(N, L + 1, dim)``: hidden states before the final norm (the last one's reading is
    the final distribution itself: KL 0); ``what``: whose KL, as the progress step names it."""
    import torch

    n, layers = states.shape[0], states.shape[1] - 1
    sums = {"logit": np.zeros(layers + 1), "tuned": np.zeros(layers + 1)}
    measuring = step(f"{what}: measuring the KL divergence", total=n, unit="positions")
    with torch.inference_mode(), measuring as done:
        for start in range(0, n, chunk):
            batch = states[start:start + chunk]
            target = torch.log_softmax(head(norm(batch[:, -1])).double(), -1)
            p = target.exp()
            for k in range(layers + 1):
                readings = {"logit": batch[:, k]}
                if lens is not None:
                    readings["tuned"] = lens.translate(k, batch[:, k])
                for name, h in readings.items():
                    q = torch.log_softmax(head(norm(h)).double(), -1)
                    sums[name][k] += float((p * (target - q)).sum())
            done.update(min(start + chunk, n))
    out = {"layers": list(range(layers + 1)), "logit": (sums["logit"] / n).tolist()}
    if lens is not None:
        out["tuned"] = (sums["tuned"] / n).tolist()
    return out


def _key(lm, settings: LensSettings, corpus: Sequence[Path]) -> str:
    from .onnx_engine import weights_checksum

    described = {"weights": weights_checksum(lm.hf_model), "settings": asdict(settings),
                 "corpus": [(p.name, p.stat().st_size) for p in corpus], "version": 1}
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()[:24]


def tuned_lens_for(lm, corpus: str | Path, *, settings: LensSettings | None = None,
                   rebuild: bool = False) -> TunedLens:
    """The tuned lens of ``lm`` trained on ``corpus`` (a folder of ``*_plain.txt``, e.g. the data
    folder's ``corpora``) with ``settings`` (default :data:`DEFAULTS`): loaded from the ``lenses``
    cache, else trained (:meth:`TunedLens.fit`) and stored there, keyed by the model's weights, the
    settings and the corpus files."""
    from ..build_marker import check_marker, write_marker
    from ..disk_cache import DiskCache

    lm._require_causal()
    settings = DEFAULTS if settings is None else settings
    files = corpus_files(corpus)
    cache = DiskCache("lenses")
    safe = "".join(c if c.isalnum() or c in "._-" else "-" for c in Path(str(lm.name)).name)[-40:] or "model"
    folder = cache.folder / f"{safe}-{_key(lm, settings.checked(), files)}"

    def complete(built: Path) -> str | None:
        return check_marker(built) or (None if (built / "translators.npz").is_file() else "no translators")

    with cache.use(folder):
        with cache.building(folder, rebuild=rebuild, check=complete) as tmp:
            if tmp is not None:
                texts = corpus_texts(corpus, seed=settings.seed)
                once = f"once, then cached in {cache.folder}"
                with step(f"training the tuned lens of {lm.name}", once=once):
                    lens = TunedLens(settings).fit(lm, texts)
                lens.save(tmp)
                write_marker(tmp, f"tuned lens: {lm.name}, {settings.tokens} positions, "
                                  f"{settings.steps} KL steps")
                return lens
        return TunedLens.load(folder)
