"""Evaluating the final agents of a run folder, possibly on another environment or core setting
(generalisation, thinking time): the parameters come from each seed's last checkpoint."""

from __future__ import annotations

import dataclasses

import jax
import numpy as np

from memrl.learn.learners import learner_for


def final_params(folder) -> list:
    """The parameters of each seed's last checkpoint (seeds without one are skipped)."""
    config = folder.load_config()
    template = learner_for(config).init(jax.random.PRNGKey(0))  # checkpoints have the training shapes
    runners = [folder.load_checkpoint(seed, template) for seed in config.seed_list()]
    return [runner.params for runner in runners if runner is not None]


def agent_evaluations(config, params: list, key, num_steps: int, **overrides) -> list[tuple[np.ndarray, ...]]:
    """Per entry of ``params``: (done, episode return where done, reward), each [num_steps,
    num_envs], of that agent acting (sampling) in fresh environments of ``config`` with
    ``overrides`` (e.g. ``env``, ``core_args``); one compile."""
    learner = learner_for(dataclasses.replace(config, **overrides))
    evaluate = jax.jit(learner.evaluate, static_argnums=2)
    return [tuple(np.asarray(a) for a in evaluate(p, key, num_steps)) for p in params]


def agent_rewards(config, params: list, key, num_steps: int, **overrides) -> list[np.ndarray]:
    """Per entry of ``params``: rewards [num_steps, num_envs] (see ``agent_evaluations``)."""
    return [reward for _, _, reward in agent_evaluations(config, params, key, num_steps, **overrides)]


def agent_episode_returns(config, params: list, key, num_steps: int, **overrides) -> list[np.ndarray]:
    """Per entry of ``params``: the returns of the episodes that ended (see ``agent_evaluations``)."""
    return [returns[done] for done, returns, _ in agent_evaluations(config, params, key, num_steps, **overrides)]
