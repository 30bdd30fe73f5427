"""Training-free contextualisers: numpy-only pure functions (attention, averaging).

Floor: imports only ``errors`` of contextlens, and numpy. Nothing here imports from
:mod:`contextlens.encoders`; the Encoder classes that use these functions live in
:mod:`contextlens.encoders.mixing`.
"""

from .attention import (
    causal_mask,
    check_window,
    exclude_self_mask,
    multi_head_attention,
    random_projections,
    scaled_dot_product_attention,
    sinusoidal_positions,
    softmax,
    window_mask,
)
from .mixers import check_alpha, neighbour_average, neighbour_weights

__all__ = [
    "softmax",
    "scaled_dot_product_attention",
    "causal_mask",
    "exclude_self_mask",
    "window_mask",
    "check_window",
    "sinusoidal_positions",
    "multi_head_attention",
    "random_projections",
    "check_alpha",
    "neighbour_weights",
    "neighbour_average",
]
