"""Flax's ``init``, compiled. Run eagerly it executes the model op by op (a supervised HTM's init took
77-104 s that way and 11 s to compile); jitted with the module as a static argument, equal modules
(Flax modules compare by their fields) share one compiled program in a process."""

from __future__ import annotations

import functools

import jax


@functools.partial(jax.jit, static_argnums=(0, 1))
def compiled_init(module, method: str | None, key, *args):
    """``module.init(key, *args, method=module.<method>)`` (``method`` None: ``__call__``)."""
    return module.init(key, *args, method=None if method is None else getattr(module, method))
