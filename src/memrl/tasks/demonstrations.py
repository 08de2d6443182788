"""Behaviour cloning from recorded episodes: a policy of yours (a bot, a planner, a person) recorded
as arrays and cloned into any registered core by the supervised learner, as the TLB paper clones
BabyAI's bot (Didolkar et al. 2022, Sec. 3.2; memrl's ``babyai`` task)::

    np.savez("demos.npz", observations=observations, actions=actions, lengths=lengths)
    memrl train supervised task:demonstrations --task.path demos.npz core:gru

The file holds N episodes padded to T steps: ``observations`` [N, T, D] (numbers; one-hot a
discrete observation), ``actions`` [N, T] (integers 0 .. A - 1) and, optionally, ``lengths`` [N]
(each episode's steps, 1 .. T; T where absent). Step t's input is the observation and, with
``previous_action``, the action before it one-hot (zeros at t = 0, as memrl's agents read theirs);
its target is the action, scored at the episode's steps. The last ``held_out_episodes`` episodes
are the held-out split. The file is read by its path whenever the task is built (a run's resume
included): keep it unchanged while a run uses it.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from memrl.settings import check_positive
from memrl.tasks.base import SequenceBatch, SequenceTask, check_split, previous_actions, register


@dataclasses.dataclass(frozen=True)
class Demonstrations(SequenceTask):
    """Recorded episodes of a policy, its actions the targets (module docstring)."""

    path: str = ""
    """the .npz file of the recorded episodes: observations [N, T, D], actions [N, T], lengths [N]
    (kept as an absolute path, so that a run resumed from another folder finds it)"""
    batch_size: int = 32
    """episodes per batch"""
    held_out_episodes: int = 16
    """the file's last episodes, kept out of training: the held-out split"""
    num_actions: int = 0
    """the actions the policy chooses from (0: one more than the largest recorded)"""
    previous_action: bool = True
    """whether each step's input holds the action before it, one-hot"""

    input_kind = "vectors"

    def __post_init__(self):
        check_positive(self, "batch_size", "held_out_episodes")
        if self.path:
            object.__setattr__(self, "path", str(Path(self.path).resolve()))
        if not isinstance(self.num_actions, int) or self.num_actions < 0:
            raise ValueError(
                f"Demonstrations.num_actions must be an integer >= 0 (0: from the file), got {self.num_actions!r}"
            )

    @property
    def episodes(self) -> dict[str, np.ndarray]:
        """The file's arrays, checked: observations [N, T, D] float32, actions [N, T] int32, lengths [N]
        (read once per file version: every batch size's copy of the task shares them)."""
        if not self.path:
            raise ValueError("the demonstrations task needs the file of recorded episodes: path=FILE.npz (--task.path)")
        if not Path(self.path).is_file():
            raise ValueError(f"demonstrations file {self.path!r} does not exist")
        return checked_episodes(self.path, Path(self.path).stat().st_mtime_ns, self.num_actions, self.held_out_episodes)

    @property
    def input_size(self) -> int:
        return self.episodes["observations"].shape[-1] + (self.num_outputs if self.previous_action else 0)

    @property
    def num_outputs(self) -> int:
        return self.episodes["num_actions"]

    def sample(self, key, split: str = "train", state=None) -> SequenceBatch:
        data, held_out = self.episodes, self.held_out_episodes
        total = len(data["actions"])
        low, high = (0, total - held_out) if check_split(split) == 0 else (total - held_out, total)
        rows = jax.random.randint(key, (self.batch_size,), low, high)
        observations, actions, lengths = (jnp.asarray(data[k])[rows] for k in ("observations", "actions", "lengths"))
        observations, actions = jnp.swapaxes(observations, 0, 1), actions.T  # time-major
        if self.previous_action:
            observations = jnp.concatenate([observations, previous_actions(actions, self.num_outputs)], -1)
        mask = jnp.arange(actions.shape[0])[:, None] < lengths[None]
        return SequenceBatch(observations, actions, mask)


@functools.cache
def checked_episodes(path: str, modified_ns: int, num_actions: int, held_out_episodes: int) -> dict:
    """``Demonstrations.episodes`` of the file at ``path`` as last modified at ``modified_ns``."""
    with np.load(path) as saved:
        missing = {"observations", "actions"} - set(saved.files)
        if missing:
            raise ValueError(
                f"{path} lacks {', '.join(sorted(missing))}: it must hold observations [N, T, D], "
                f"actions [N, T] and optionally lengths [N]; it holds {', '.join(saved.files) or 'nothing'}"
            )
        observations, actions = saved["observations"], saved["actions"]
        lengths = saved["lengths"] if "lengths" in saved.files else np.full(len(actions), actions.shape[-1])
    if observations.ndim != 3 or actions.shape != observations.shape[:2] or lengths.shape != actions.shape[:1]:
        raise ValueError(
            f"{path}: observations must be [N, T, D], actions [N, T] and lengths [N] for N episodes of T "
            f"steps; got {observations.shape}, {actions.shape} and {lengths.shape}"
        )
    if not np.issubdtype(observations.dtype, np.number) or not np.isfinite(observations).all():
        raise ValueError(f"{path}: observations must be finite numbers (one-hot a discrete observation)")
    if not np.issubdtype(actions.dtype, np.integer) or not np.issubdtype(lengths.dtype, np.integer):
        raise ValueError(f"{path}: actions and lengths must be integers, got {actions.dtype} and {lengths.dtype}")
    episodes, steps = actions.shape
    if not ((lengths >= 1) & (lengths <= steps)).all():
        raise ValueError(f"{path}: every length must lie in 1..{steps} (the steps each episode has)")
    scored = actions[np.arange(steps)[None] < lengths[:, None]]
    largest = num_actions or int(scored.max()) + 1
    if scored.min() < 0 or scored.max() >= largest:
        raise ValueError(
            f"{path}: actions must lie in 0..{largest - 1} (num_actions {largest}); "
            f"recorded {scored.min()}..{scored.max()}"
        )
    if held_out_episodes >= episodes:
        raise ValueError(
            f"held_out_episodes ({held_out_episodes}) must leave episodes to train on: {path} holds {episodes}"
        )
    actions = np.where(np.arange(steps)[None] < lengths[:, None], actions, 0)  # padding: any valid class
    return {
        "observations": observations.astype(np.float32),
        "actions": actions.astype(np.int32),
        "lengths": lengths.astype(np.int32),
        "num_actions": largest,
    }


register("demonstrations", Demonstrations)
