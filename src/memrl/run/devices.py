"""Several local devices for one run (``--devices N``): the run's environments are split over a 1-D
device mesh (axis ``envs``), its parameters, optimiser state and keys replicated. The jitted update
is then one SPMD program: XLA partitions the rollout by environment and all-reduces what the
minibatch gradients sum over devices, so a run equals its single-device self up to float rounding.
In a run of several processes (``hosts.py``) the mesh holds ``devices`` local devices of every
process. Only actor-critic runs have environments to split; a supervised run takes one device."""

from __future__ import annotations

import dataclasses
import math
import os

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

PER_ENV_FIELDS = ("env_state", "obs", "carry", "prev_action", "prev_reward", "reset", "episode_return")
"""RunnerState fields whose leaves are [seeds, envs, ...] (train_seeds stacks seeds on axis 0)"""


def default_devices(config) -> int:
    """All local accelerators for an actor-critic run whose environments they divide; else 1 (on a
    CPU each seed is its own process on one core)."""
    count = jax.local_device_count()
    if jax.default_backend() == "cpu" or not hasattr(config, "num_envs") or config.num_envs % count:
        return 1
    return count


def device_memory() -> int:
    """Bytes one run may use: the first local accelerator's memory limit, or this machine's RAM on a CPU."""
    if jax.default_backend() != "cpu":
        limit = (jax.local_devices()[0].memory_stats() or {}).get("bytes_limit")
        if limit:
            return int(limit)
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def check_fits_memory(state) -> None:
    """Refuse a run whose state (parameters, optimiser state, environments: ``state`` as
    ``jax.eval_shape`` gives it) alone exceeds ``device_memory``, before anything is compiled;
    its activations come on top."""
    needed = sum(math.prod(leaf.shape) * leaf.dtype.itemsize for leaf in jax.tree.leaves(state))
    available = device_memory()
    if needed > available:
        raise ValueError(
            f"the run's parameters, optimiser and environment state alone take {needed / 2**30:,.1f} GiB, more than the "
            f"{available / 2**30:,.1f} GiB of memory here ({jax.default_backend()}); choose smaller sizes (--core.SETTING, widths)"
        )


def check_workers(workers: int | None) -> None:
    """Refuse a count of worker processes below 1 (None: the default, one per CPU core)."""
    if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool) or workers < 1):
        raise ValueError(
            f"--workers must be a positive integer (processes at once; leave it out for one per CPU core), got {workers!r}"
        )


def check_devices(devices: int, config, processes: int = 1) -> None:
    """Refuse a device count (per process, of ``processes``) this machine or ``config`` cannot use,
    saying what is allowed."""
    available = jax.local_device_count()
    if not isinstance(devices, int) or not 1 <= devices <= available:
        raise ValueError(
            f"--devices must lie in 1..{available} (the local {jax.default_backend()} devices), got {devices!r}"
        )
    mesh = devices * processes
    if mesh > 1:
        if not hasattr(config, "num_envs"):
            raise ValueError(
                "--devices and --num-processes split a run's environments over devices; a supervised run takes one device"
            )
        if config.num_envs % mesh:
            per_process = f" x {processes} processes" if processes > 1 else ""
            raise ValueError(
                f"num_envs ({config.num_envs}) must be divisible by the devices it is split over ({devices}{per_process})"
            )


def mesh_devices(devices: int) -> list:
    """The first ``devices`` local devices of every process, process by process."""
    by_process = sorted(jax.devices(), key=lambda d: (d.process_index, d.id))
    return [d for p in range(jax.process_count()) for d in [d for d in by_process if d.process_index == p][:devices]]


def shard_envs(runner, devices: int):
    """``runner`` (seeds stacked on axis 0, the same on every process) with its per-environment
    fields split over ``mesh_devices(devices)`` along the environment axis and everything else
    replicated."""
    mesh = Mesh(np.array(mesh_devices(devices)), ("envs",))
    per_env, replicated = NamedSharding(mesh, PartitionSpec(None, "envs")), NamedSharding(mesh, PartitionSpec())
    fields = {f.name: getattr(runner, f.name) for f in dataclasses.fields(runner)}
    return runner.replace(
        **{
            name: jax.device_put(value, per_env if name in PER_ENV_FIELDS else replicated)
            for name, value in fields.items()
        }
    )
