"""The EPN paper's planning measures on fixed-length episodes (Ritter et al. 2021, Sec. 5, Fig. 2).

Inputs are per-step rewards of whole episodes, [episodes, episode_length], with reward 1 per goal
reached (the Memory&Planning Game and graph navigation).
"""

from __future__ import annotations

import numpy as np


def episodes_from_stream(rewards: np.ndarray, episode_length: int) -> np.ndarray:
    """[T, E] rewards of environments that all started together -> [E · (T // L), L] whole episodes."""
    steps, envs = rewards.shape
    whole = (steps // episode_length) * episode_length
    return rewards[:whole].T.reshape(envs * (whole // episode_length), episode_length)


def late_episode_fraction(agent: np.ndarray, oracle: np.ndarray) -> float:
    """Reward in the last third of each episode as a fraction of the oracle's there (the paper's
    measure of planning: by then an agent that remembers has seen most of the map)."""
    start = 2 * agent.shape[1] // 3
    return float(agent[:, start:].sum(1).mean() / oracle[:, start:].sum(1).mean())


def steps_to_nth_goal(rewards: np.ndarray, max_goals: int) -> np.ndarray:
    """[max_goals]: mean number of steps from the n-th goal's start to reaching it (Fig. 2e), over
    the episodes that reached it; NaN where none did."""
    means = np.full(max_goals, np.nan)
    for n in range(max_goals):
        durations = []
        for episode in rewards:
            times = np.flatnonzero(episode > 0) + 1  # step at which each goal is reached
            if len(times) > n:
                durations.append(times[n] - (times[n - 1] if n else 0))
        if durations:
            means[n] = np.mean(durations)
    return means
