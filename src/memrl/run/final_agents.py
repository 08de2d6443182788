"""The final agents of a run folder: each seed's last checkpoint, and what those agents do in fresh
environments (possibly of another environment or core setting: generalisation, thinking time) or on
fresh held-out sequences. Analyses and experiments both read trained agents through here."""

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


def seed_params(folder, seed: int):
    """The parameters of ``seed``'s last checkpoint; refuses a seed the run does not have or has
    not checkpointed yet."""
    config = folder.load_config()
    seeds = config.seed_list()
    if seed not in seeds:
        raise ValueError(f"{folder.path} has seeds {seeds}, not {seed}")
    runner = folder.load_checkpoint(seed, learner_for(config).init(jax.random.PRNGKey(0)))
    if runner is None:
        raise FileNotFoundError(f"{folder.checkpoint_path(seed)}: seed {seed} of {folder.path} has no checkpoint yet")
    return runner.params


def agent_evaluations(
    config, params: list, key, num_steps: int, amnesic: bool = False, **overrides
) -> list[tuple[np.ndarray, ...]]:
    """Per entry of ``params``: (done, episode return where done, reward), each [num_steps,
    num_envs], of that agent acting (sampling) in fresh environments of ``config`` with
    ``overrides`` (e.g. ``env``, ``core_args``); one compile. ``amnesic``: with its memory reset
    before every step (``Actor.evaluate``)."""
    learner = learner_for(dataclasses.replace(config, **overrides))
    evaluate = jax.jit(learner.evaluate, static_argnums=(2, 3))
    return [tuple(np.asarray(a) for a in evaluate(p, key, num_steps, amnesic)) for p in params]


def agent_rewards(config, params: list, key, num_steps: int, amnesic: bool = False, **overrides) -> list[np.ndarray]:
    """Per entry of ``params``: rewards [num_steps, num_envs] (see ``agent_evaluations``)."""
    return [reward for _, _, reward in agent_evaluations(config, params, key, num_steps, amnesic, **overrides)]


def agent_episode_returns(config, params: list, key, num_steps: int, **overrides) -> list[np.ndarray]:
    """Per entry of ``params``: the returns of the episodes that ended (see ``agent_evaluations``)."""
    return [returns[done] for done, returns, _ in agent_evaluations(config, params, key, num_steps, **overrides)]


def held_out_batches(
    folder, num_sequences: int, batch_size: int = 1280, seed: int = 2018
) -> list[dict[str, list[float]]]:
    """Per seed of a supervised run: its final model's accuracies on each of ``num_sequences //
    batch_size`` batches of fresh held-out sequences (one compile; the same sequences for every run
    with the same task); NaN where a batch has nothing a score counts."""
    if num_sequences % batch_size:
        raise ValueError(f"num_sequences must be a multiple of batch_size {batch_size}, got {num_sequences}")
    learner = learner_for(folder.load_config())
    evaluate = jax.jit(learner.evaluate, static_argnums=2)
    keys = jax.random.split(jax.random.PRNGKey(seed), num_sequences // batch_size)
    per_seed = []
    for params in final_params(folder):
        batches = [evaluate(params, key, batch_size) for key in keys]
        per_seed.append({name: [float(b[name]) for b in batches] for name in batches[0]})
    return per_seed
