"""Forward hooks on a transformer's layers that never change the model and act only for the
thread that placed them, so two threads may run one model at once.

A hook placed on a shared module fires in every forward pass through it, whichever thread
runs it; :func:`own_thread` makes a hook return at once in other threads. :func:`hook_states`
records ``hidden_states[k]`` and, with ``stop_after``, ends the forward pass after the last
layer needed by raising :class:`StopForward` (the rest of the model is not run, and its
block list is never shortened).

>>> calls = []
>>> hook = own_thread(lambda *a: calls.append(a))
>>> hook(1, 2), calls
(None, [(1, 2)])
"""

from __future__ import annotations

import functools
import threading

from ..errors import InputError

__all__ = ["StopForward", "own_thread", "place", "layer_list", "hook_states"]


class StopForward(Exception):
    """Raised by a hook of :func:`hook_states` once the last layer needed has run."""


def own_thread(hook):
    """``hook`` acting only in the thread that calls this (elsewhere it returns None, so the
    module's output is unchanged)."""
    owner = threading.get_ident()

    @functools.wraps(hook)
    def wrapped(*args, **kwargs):
        if threading.get_ident() == owner:
            return hook(*args, **kwargs)
        return None

    return wrapped


def place(module, hook, *, before: bool = False):
    """``hook`` placed on ``module`` for this thread only (:func:`own_thread`): a forward hook
    ``hook(module, args, output)``, or with ``before`` a forward pre-hook ``hook(module, args,
    kwargs)``. Every hook of the project is placed through it; returns the handle, to ``remove()``."""
    if before:
        return module.register_forward_pre_hook(own_thread(hook), with_kwargs=True)
    return module.register_forward_hook(own_thread(hook))


def layer_list(model, n: int):
    """``(dotted path, ModuleList)`` of the model's n transformer layers."""
    import torch

    for path, module in model.named_modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) == n and n > 0:
            return path, module
    raise InputError(f"cannot find the {n} layers of {type(model).__name__}; this architecture is not "
                     "supported")


def hook_states(blocks, layers, store: dict, stop_after: int | None = None) -> list:
    """Forward hooks (of this thread only) that record, in ``store``, the first block's input
    (key 0) and the output of block ``k - 1`` for each ``k`` of ``layers`` (1-based, before
    any final norm): ``hidden_states[k]``; with ``stop_after``, block ``stop_after - 1``
    raises :class:`StopForward` after it ran. Returns the hook handles, to ``remove()``."""
    def pre(module, args, kwargs):
        store[0] = args[0] if args else kwargs["hidden_states"]

    def post(k):
        def record(module, args, output):
            if k in wanted:
                store[k] = output[0] if isinstance(output, tuple) else output
            if k == stop_after:
                raise StopForward
        return record

    wanted = set(layers)
    hooked = sorted(wanted | ({stop_after} if stop_after else set()))
    return [place(blocks[0], pre, before=True)] + [place(blocks[k - 1], post(k)) for k in hooked]
