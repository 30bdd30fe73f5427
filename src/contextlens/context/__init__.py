"""Training-free contextualisers: numpy-only pure functions (attention, averaging).

Floor 3 (ARCHITECTURE.md): imports only ``errors`` of contextlens, and numpy. Nothing here imports from
:mod:`contextlens.encoders`; the Encoder classes that use these functions live in
:mod:`contextlens.encoders.mixing`. The package offers every public name of
:mod:`~contextlens.context.attention` and :mod:`~contextlens.context.mixers`.
"""

from . import attention, mixers
from .attention import *  # noqa: F403 - the names listed in attention.__all__
from .mixers import *  # noqa: F403 - the names listed in mixers.__all__

__all__ = [*attention.__all__, *mixers.__all__]
