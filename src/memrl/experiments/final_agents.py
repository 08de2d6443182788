"""Evaluating the final agents of a run folder, possibly on another environment or core setting
(generalisation, thinking time): the parameters come from each seed's last checkpoint."""

from __future__ import annotations

import dataclasses

import jax
import numpy as np

from memrl.learn.learners import learner_for


def final_agent_rewards(folder, key, num_steps: int, **overrides) -> list[np.ndarray]:
    """Per seed with a checkpoint: rewards [num_steps, num_envs] of its agent acting (sampling) in
    fresh environments of the run's config with ``overrides`` (e.g. ``env``, ``core_args``)."""
    config = folder.load_config()
    template = learner_for(config).init(jax.random.PRNGKey(0))  # checkpoints have the training shapes
    learner = learner_for(dataclasses.replace(config, **overrides))
    evaluate = jax.jit(learner.evaluate, static_argnums=2)
    rewards = []
    for seed in config.seed_list():
        runner = folder.load_checkpoint(seed, template)
        if runner is not None:
            rewards.append(np.asarray(evaluate(runner.params, key, num_steps)[2]))
    return rewards
