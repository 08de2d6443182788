"""Ctrl-C that is never lost: Python raises KeyboardInterrupt wherever the main thread is, and one
raised inside a callback the interpreter calls for itself (JAX's garbage-collection hook) is
printed as "Exception ignored" and dropped, after which training went on to its end. The handler
also records the request, and the loops that wait on training raise it again (``raise_if_requested``)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

_requested = False


def _on_interrupt(signum, frame) -> None:
    global _requested
    _requested = True
    raise KeyboardInterrupt


@contextlib.contextmanager
def recorded() -> Iterator[None]:
    """Within the block, every Ctrl-C (SIGINT) is recorded besides raising KeyboardInterrupt (the
    command line runs inside one); the previous handler returns after it, and the record is
    forgotten (a Ctrl-C belongs to the block it came in: training started later must not stop for it)."""
    global _requested
    _requested = False
    if threading.current_thread() is not threading.main_thread():  # only the main thread gets signals
        yield
        return
    previous = signal.signal(signal.SIGINT, _on_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        _requested = False


def raise_if_requested() -> None:
    """Raise KeyboardInterrupt if a Ctrl-C came and was swallowed on its way."""
    if _requested:
        raise KeyboardInterrupt
