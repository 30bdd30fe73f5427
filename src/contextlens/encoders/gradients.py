"""Gradient attributions of a word's vector to the pieces of its sentence: gradient × input and
integrated gradients, layer by layer.

The quantity differentiated (the *target*) is, for layer ``L``, the word's layer-``L`` vector ``h_L``
(its ``ffn`` stage pooled over its pieces, :mod:`contextlens.encoders.blocks`) projected on the
direction it has in the unchanged sentence:

    f_L(e) = ⟨h_L(e), u_L⟩,  u_L = h_L(x) / ‖h_L(x)‖,

a function of the input embeddings ``e`` (the rows of the model's embedding matrix for the
pieces, what contextlens calls layer 0; positions and any embedding norm are added by the model
after them). The cosine to the unchanged vector would be the natural target, but it is maximal at
the input itself, where its gradient is zero; the projection moves with the vector's length and
direction and is smooth.

- **gradient × input** (Shrikumar et al. 2016; Kindermans et al. 2016): ``∂f_L/∂e_p ⊙ x_p`` per
  piece ``p`` at the input ``x``.
- **integrated gradients** (Sundararajan et al. 2017, "Axiomatic Attribution for Deep Networks",
  ICML): ``(x_p − b_p) ⊙ ∫₀¹ ∂f_L/∂e_p (b + α(x − b)) dα``, the integral by the midpoint rule over
  ``steps`` equal intervals (32 by default). The baseline ``b`` is ``x`` with the row of every
  piece that belongs to a word replaced by the mean row of the embedding matrix (a row that stands
  for no word in particular); special tokens ([CLS], [SEP], BOS) keep their rows, so only the words
  are attributed. (The zero vector, the other usual baseline, sits where an RMSNorm, as in Llama,
  divides by almost nothing: the path leaves it so steeply that 32 points miss the jump and the
  attributions no longer add up.) Completeness: the attributions of all pieces and dimensions add
  up to ``f_L(x) − f_L(b)`` up to the error of the integral (returned, to check).

Each layer's target is run only up to that layer (a hook stops the forward there), all ``steps``
points of the path and the input in one batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import check_int
from .blocks import Internals, Pieces, _first, _numpy, run

__all__ = ["GradientScores", "gradient_scores", "riemann_alphas", "MAX_STEPS"]

MAX_STEPS = 256


@dataclass
class GradientScores:
    """Per layer, each piece's attribution vector.

    grad_input, integrated : ``(layers, T, dim)``; target, baseline_target : ``(layers,)`` the
    target ``f_L`` at the input and at the baseline (their difference is what integrated gradients
    split among the pieces); steps : the points of the integral.
    """

    grad_input: np.ndarray
    integrated: np.ndarray
    target: np.ndarray
    baseline_target: np.ndarray
    steps: int


def riemann_alphas(steps: int) -> np.ndarray:
    """The points of the midpoint rule on ``[0, 1]`` with ``steps`` equal intervals.

    >>> riemann_alphas(4).tolist()
    [0.125, 0.375, 0.625, 0.875]
    """
    steps = check_int("steps", steps, low=1, high=MAX_STEPS, hint="points of the integrated-gradients integral")
    return (np.arange(steps) + 0.5) / steps


class _Stop(Exception):
    """Raised by a hook once the layer a target needs has run: the rest of the model is not needed."""


def gradient_scores(model: Internals, pieces: Pieces, target: Sequence[int], *, steps: int = 32) -> GradientScores:
    """Gradient × input and integrated gradients of the word whose pieces are ``target``, every layer
    (see the module notes for the target and the baseline)."""
    import torch

    alphas = torch.tensor(riemann_alphas(steps), dtype=torch.float32)
    dev = model.model.device
    embed = model.model.get_input_embeddings()
    ids = torch.tensor([list(pieces.ids)], device=dev)
    with torch.no_grad():
        x = embed(ids)[0].float()  # (T, dim): the input rows
        neutral = embed.weight.float().mean(0)  # (dim,): the mean row
    base = x.clone()
    content = [p for p in range(len(pieces.ids)) if p not in set(pieces.special)]
    base[content] = neutral
    chosen = list(target)
    chosen = {"first": chosen[:1], "last": chosen[-1:]}.get(model.pooling, chosen)
    n = model.n_layers
    out = {k: np.zeros((n, *x.shape), dtype=np.float32) for k in ("gi", "ig")}
    f_x, f_b = np.zeros(n), np.zeros(n)
    points = torch.cat([base[None] + alphas[:, None, None] * (x - base)[None], x[None], base[None]])  # (S + 2, T, dim)
    for k in range(1, n + 1):
        state = _run_to(model, points, k)  # (S + 2, T, dim), with its graph
        word = state[:, chosen].mean(1)  # (S + 2, dim)
        direction = (word[-2] / word[-2].norm()).detach()
        f = word @ direction  # (S + 2,)
        grads, = torch.autograd.grad(f[:-1].sum(), points)  # the baseline's own value needs no gradient
        out["gi"][k - 1] = _numpy(grads[-2] * x)
        out["ig"][k - 1] = _numpy((x - base) * grads[:steps].mean(0))
        f_x[k - 1], f_b[k - 1] = float(f[-2].detach()), float(f[-1].detach())
    return GradientScores(out["gi"], out["ig"], f_x, f_b, len(alphas))


def _run_to(model: Internals, embeds, k: int):
    """The ``ffn`` stage of layer ``k`` for a batch of input rows ``(B, T, dim)`` (leaf tensor with
    gradients), running the model's blocks 1..k only; layer ``n``: after the final norm."""
    import torch

    embeds.requires_grad_(True)
    kept = {}

    def stop(module, args, output):
        kept["h"] = _first(output)
        raise _Stop

    handle = model.blocks[k - 1].register_forward_hook(stop)
    try:
        with torch.enable_grad():
            run(model, inputs_embeds=embeds)
    except _Stop:
        pass
    finally:
        handle.remove()
    h = kept["h"]
    if k == model.n_layers and model.final_norm is not None:
        with torch.enable_grad():
            h = model.final_norm(h)
    return h
