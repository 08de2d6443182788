"""Banks of sequences made on the host (strings: ListOps trees, Learning to Execute programs),
kept as fixed-shape arrays in memrl's cache folder (``~/.cache/memrl/tasks``, or
``XDG_CACHE_HOME``) so that they are made once per setting, and sampled in JAX."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np


def cache_dir() -> Path:
    """Where banks are kept: ``$XDG_CACHE_HOME/memrl/tasks`` or ``~/.cache/memrl/tasks``."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memrl" / "tasks"


def bank_path(name: str, settings: dict) -> Path:
    """Where the bank ``name`` with ``settings`` is kept."""
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]
    return cache_dir() / f"{name}-{digest}.npz"


def cached_bank(name: str, settings: dict, make: Callable[[], dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The arrays ``make()`` returns for ``settings``, made on the first call and read from the
    cache after (written atomically, so processes that make the same bank at once do not clash)."""
    path = bank_path(name, settings)
    if not path.exists():
        arrays = make()
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp.npz")
        np.savez(partial, **arrays)
        os.replace(partial, path)
    with np.load(path) as saved:
        return {key: saved[key] for key in saved.files}
