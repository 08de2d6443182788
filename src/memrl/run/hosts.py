"""Several processes (hosts) for one run: ``memrl train ... --coordinator HOST:PORT --num-processes P
--process-id I``, one command per process, joined by ``jax.distributed.initialize`` into one device
mesh. Every process runs the same SPMD program on its own devices' environments (``devices.py``);
only process 0 writes the run folder, and every process loads the same checkpoint when resuming
(the folder must be on a file system they share). On CPUs the processes talk through JAX's CPU
collectives (gloo)."""

from __future__ import annotations

import dataclasses

import jax
from jax.experimental import multihost_utils


@dataclasses.dataclass(frozen=True)
class Hosts:
    """Where this process stands among the processes of one run.

    Attributes:
        coordinator: HOST:PORT of process 0's coordination service (every process names the same);
            unset: a run of one process.
        num_processes: processes in the run.
        process_id: this process's index, 0 .. num_processes - 1 (process 0 writes the run folder).
    """

    coordinator: str | None = None
    num_processes: int = 1
    process_id: int = 0

    def __post_init__(self):
        if not isinstance(self.num_processes, int) or self.num_processes < 1:
            raise ValueError(f"--num-processes must be an integer >= 1, got {self.num_processes!r}")
        if not isinstance(self.process_id, int) or not 0 <= self.process_id < self.num_processes:
            raise ValueError(
                f"--process-id must lie in 0..{self.num_processes - 1} (--num-processes {self.num_processes}), got {self.process_id!r}"
            )
        if (self.num_processes > 1) != (self.coordinator is not None):
            raise ValueError(
                "--coordinator HOST:PORT and --num-processes > 1 go together: give both for a run of several processes, neither for one"
            )
        if self.coordinator is not None:
            host, _, port = self.coordinator.rpartition(":")
            if not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError(f"--coordinator must be HOST:PORT with a port in 1..65535, got {self.coordinator!r}")

    @property
    def several(self) -> bool:
        return self.num_processes > 1

    @property
    def owns_folder(self) -> bool:
        """Whether this process writes the run folder (process 0)."""
        return self.process_id == 0

    def option(self) -> str:
        """This process as the worker's ``hosts=`` argument (read back by ``from_option``)."""
        return f"hosts={self.coordinator},{self.num_processes},{self.process_id}"

    @classmethod
    def from_option(cls, value: str) -> Hosts:
        """The ``Hosts`` of a worker's ``hosts=`` argument value."""
        coordinator, processes, process_id = value.rsplit(",", 2)
        return cls(coordinator, int(processes), int(process_id))

    def join(self) -> None:
        """Join the run's other processes (before JAX starts its backend); nothing for one process."""
        if self.several:
            jax.distributed.initialize(self.coordinator, self.num_processes, self.process_id)


def owns_folder() -> bool:
    """Whether this process (joined to its run's others, or alone) writes the run folder: process 0."""
    return jax.process_index() == 0


def to_host(tree):
    """``tree``'s arrays as NumPy arrays, whole on every process (split arrays gathered from all)."""
    if jax.process_count() > 1:
        return multihost_utils.process_allgather(tree, tiled=True)
    return jax.device_get(tree)


def wait_for_all(name: str) -> None:
    """Block until every process of the run reaches the barrier ``name``."""
    if jax.process_count() > 1:
        multihost_utils.sync_global_devices(name)
