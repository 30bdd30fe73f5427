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

One forward pass runs the input, the baseline and the ``steps`` points of the path in one batch and
keeps every layer's output; each layer's target is then differentiated back through the layers
below it only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..bounds import MAX_STEPS
from ..errors import check_int
from . import hooks
from .blocks import Internals, Pieces, _first, _hooked, _numpy, run

__all__ = ["GradientScores", "gradient_scores", "riemann_alphas", "MAX_STEPS"]


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
    steps = check_int("steps", steps, low=1, high=MAX_STEPS,
                      hint="points of the integrated-gradients integral")
    return (np.arange(steps) + 0.5) / steps


def gradient_scores(model: Internals, pieces: Pieces, target: Sequence[int], *, steps: int = 32,
                    integrated: bool = True) -> GradientScores:
    """Gradient × input and (with ``integrated``) integrated gradients of the word whose pieces are
    ``target``, every layer (see the module notes for the target and the baseline). One forward
    pass of the input, the baseline and the path's points together keeps every layer's output; each
    layer's target is then differentiated back through the layers below it only."""
    import torch

    alphas = torch.tensor(riemann_alphas(steps) if integrated else np.zeros(0), dtype=torch.float32)
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
    n, s = model.n_layers, len(alphas)
    out = {k: np.zeros((n, *x.shape), dtype=np.float32) for k in ("gi", "ig")}
    f_x, f_b = np.zeros(n), np.zeros(n)
    path = base[None] + alphas[:, None, None] * (x - base)[None]  # (S, T, dim)
    points = torch.cat([path, x[None], base[None]])  # (S + 2, T, dim)
    states = _every_layer(model, points)  # k -> (S + 2, T, dim), with the graph
    for k in range(1, n + 1):
        word = states[k][:, chosen].mean(1)  # (S + 2, dim)
        direction = (word[s] / word[s].norm()).detach()
        f = word @ direction  # (S + 2,)
        # the baseline's own value needs no gradient
        grads, = torch.autograd.grad(f[:-1].sum(), points, retain_graph=k < n)
        out["gi"][k - 1] = _numpy(grads[s] * x)
        if s:
            out["ig"][k - 1] = _numpy((x - base) * grads[:s].mean(0))
        f_x[k - 1], f_b[k - 1] = float(f[s].detach()), float(f[-1].detach())
    return GradientScores(out["gi"], out["ig"], f_x, f_b, s)


def _every_layer(model: Internals, embeds) -> dict:
    """Each layer's ``ffn`` stage for a batch of input rows ``(B, T, dim)`` (made a leaf with
    gradients), ``{k: (B, T, dim)}`` with their graph; the last layer after the final norm."""
    import torch

    embeds.requires_grad_(True)
    kept: dict = {}

    def keep(k):
        def record(module, args, output):
            kept[k] = _first(output)
        return record

    handles = [hooks.place(model.blocks[k - 1], keep(k)) for k in range(1, model.n_layers + 1)]
    with torch.enable_grad(), _hooked(handles):
        out = run(model, inputs_embeds=embeds)
    kept[model.n_layers] = out.last_hidden_state  # after the final norm, if any
    return kept
