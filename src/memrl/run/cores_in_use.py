"""Which cores a launcher pins its workers to: those of its own affinity that other memrl workers
on the machine use least, so that two memrl commands started side by side share the cores instead
of both pinning to the first ones (Linux: other workers are found in /proc; elsewhere, or where
/proc cannot be read, every core counts as free)."""

from __future__ import annotations

import collections
import os
from pathlib import Path

WORKER_MODULE = b"memrl.run.worker"
"""what a worker's command line runs (``python -m memrl.run.worker ...``, ``launch.run_jobs``)"""


def other_workers_cores(proc: Path = Path("/proc")) -> collections.Counter:
    """How many memrl workers of other launchers are pinned to each core (a worker free to run on
    every core counts for none)."""
    everywhere = os.cpu_count()
    counts: collections.Counter = collections.Counter()
    for entry in proc.iterdir() if proc.is_dir() else ():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if WORKER_MODULE not in (entry / "cmdline").read_bytes().split(b"\0"):
                continue
            pinned = os.sched_getaffinity(int(entry.name))
        except OSError:  # it ended meanwhile, or is not ours to read
            continue
        if len(pinned) < everywhere:
            counts.update(pinned)
    return counts


def least_used_cores(workers: int) -> list[int]:
    """``workers`` cores of this process's affinity, those that other memrl workers use least
    first (ties: the lower core), in increasing order."""
    busy = other_workers_cores()
    return sorted(sorted(os.sched_getaffinity(0), key=lambda core: (busy[core], core))[:workers])
