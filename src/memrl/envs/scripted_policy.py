"""Hand-written reference policies (oracles, explorers, random) and their rollouts.

A scripted policy is a pair of pure functions: ``memory = initial_memory(env_state)`` at the start
of an episode (an oracle may read the map there; an observation-only policy ignores it) and
``action, memory = act(key, obs, memory)`` at every step (an oracle that ``reads_state`` gets the
environment state there instead).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp


class ScriptedPolicy(NamedTuple):
    """``initial_memory(env_state)`` at an episode start, then ``act(key, obs, memory) -> (action,
    memory)``; a policy that ``reads_state`` gets the environment state in place of ``obs``, and one
    that ``decides`` marks the steps whose action the task scores. A policy that ``tracks_action``
    keeps the action the environment last took as its memory's "action" (an int32 scalar), from which
    it updates what it believes at its next step (where it stands, which transition it made); ``took``
    puts there another action when the environment took that one instead (a learner mixing the
    agent's actions into the teacher's, ``ImpalaConfig.agent_share``)."""

    initial_memory: Callable[[Any], Any]
    act: Callable[[jax.Array, Any, Any], tuple[jax.Array, Any]]
    reads_state: bool = False
    tracks_action: bool = False
    decides: Callable[[Any], jax.Array] | None = None
    """whether the action at a step is one the task scores (Passive Visual Match's choice), from what
    ``act`` reads: a learner cloning the policy can weigh those steps (``ImpalaConfig.clone_decision_weight``)"""

    def took(self, memory, action: jax.Array):
        """``memory`` after the environment took ``action`` ([len(action_dims)]) in place of this
        policy's own; unchanged where the policy does not track its actions."""
        return {**memory, "action": action[0].astype(jnp.int32)} if self.tracks_action else memory


def scripted_episodes(env, policy: ScriptedPolicy, key, num_episodes: int, num_steps: int, emit, params=None):
    """``emit(obs, action, reward, ended, seen)`` at each of ``num_steps`` steps of ``num_episodes``
    independent episodes of ``policy`` (``obs`` the observation acted on, ``ended`` whether the
    episode had ended before the step: no reset; ``seen`` what the policy read: the environment state
    where it ``reads_state``, else ``obs``), stacked [num_episodes, num_steps, ...]."""
    params = env.default_params if params is None else params

    def episode(key):
        reset_key, key = jax.random.split(key)
        obs, state = env.reset_env(reset_key, params)

        def step(carry, key):
            obs, state, memory, ended = carry
            policy_key, env_key = jax.random.split(key)
            seen = state if policy.reads_state else obs
            action, memory = policy.act(policy_key, seen, memory)
            next_obs, state, reward, terminated, truncated, _ = env.step_env(env_key, state, action, params)
            return (next_obs, state, memory, ended | terminated | truncated), emit(obs, action, reward, ended, seen)

        init = (obs, state, policy.initial_memory(state), jnp.bool_(False))
        return jax.lax.scan(step, init, jax.random.split(key, num_steps))[1]

    return jax.vmap(episode)(jax.random.split(key, num_episodes))


def episode_rewards(env, policy: ScriptedPolicy, key, num_episodes: int, num_steps: int, params=None) -> jax.Array:
    """Rewards [num_episodes, num_steps] of independent episodes, 0 after an episode has ended."""
    rewarded = lambda obs, action, reward, ended, seen: jnp.where(ended, 0.0, reward)
    return scripted_episodes(env, policy, key, num_episodes, num_steps, rewarded, params)


def recorded_episodes(env, policy: ScriptedPolicy, key, num_episodes: int, num_steps: int) -> dict[str, jax.Array]:
    """``num_episodes`` independent episodes of ``policy``, each cut at ``num_steps`` steps, as the
    ``demonstrations`` task reads them: observations [N, T, D] (flattened), actions [N, T] (its
    first action component) and lengths [N] (steps up to and with the episode's last, ``num_steps``
    where it had not ended); the steps after an episode's end are zeros."""
    if isinstance(env.observation_shape, dict) or len(env.action_dims) != 1:
        raise ValueError(
            f"recorded_episodes records one observation array and one discrete action a step; {type(env).__name__} "
            f"observes {env.observation_shape} and acts with {len(env.action_dims)} components"
        )

    def recorded(obs, action, reward, ended, seen):
        return jnp.where(ended, 0.0, jnp.ravel(obs).astype(jnp.float32)), jnp.where(ended, 0, action[0]), ended

    observations, actions, after_end = scripted_episodes(env, policy, key, num_episodes, num_steps, recorded)
    return {
        "observations": observations,
        "actions": actions.astype(jnp.int32),
        "lengths": (num_steps - after_end.sum(-1)).astype(jnp.int32),
    }


def uniform_random(env) -> ScriptedPolicy:
    """Every component of the action uniformly at random (continuous ones within their bounds, a
    standard normal where a side is unbounded): the reference of no skill at all."""
    if env.action_bounds is None:
        dims = jnp.asarray(env.action_dims)
        return ScriptedPolicy(
            lambda state: None, lambda key, obs, memory: (jax.random.randint(key, dims.shape, 0, dims), memory)
        )
    low, high = (jnp.asarray(bound, jnp.float32) for bound in env.action_bounds)
    bounded = jnp.isfinite(low) & jnp.isfinite(high)
    low, high = jnp.where(bounded, low, 0.0), jnp.where(bounded, high, 1.0)

    def act(key, obs, memory):
        uniform_key, normal_key = jax.random.split(key)
        uniform = jax.random.uniform(uniform_key, low.shape, minval=low, maxval=high)
        return jnp.where(bounded, uniform, jax.random.normal(normal_key, low.shape)), memory

    return ScriptedPolicy(lambda state: None, act)


def first_episode_returns(env, policy: ScriptedPolicy, key, num_episodes: int, max_steps: int) -> jax.Array:
    """The return [num_episodes] of the first episode of each of ``num_episodes`` copies of ``env``
    acting in parallel until every first episode has ended (at most ``max_steps`` steps; an episode
    still open then counts what it has). Stepped through ``env.batch_step``, as the learners step
    them: host environments (one callback per step for every copy) work as JAX ones do, and an
    environment with ``resets_per_step`` makes only that many fresh episodes a step (the first
    episodes are the same; Craftax's world generation would otherwise run for every copy at every
    step); the policy must read observations."""
    reset_key, key = jax.random.split(key)
    obs, state = jax.vmap(env.reset)(jax.random.split(reset_key, num_episodes))
    split = lambda key: jax.random.split(key, num_episodes)

    def step(carry):
        t, obs, state, memory, ended, total = carry
        policy_key, env_key = jax.random.split(jax.random.fold_in(key, t))
        action, memory = jax.vmap(policy.act)(split(policy_key), obs, memory)
        obs, state, reward, done, _ = env.batch_step(split(env_key), state, action)
        return t + 1, obs, state, memory, ended | done, total + jnp.where(ended, 0.0, reward)

    unfinished = lambda carry: (carry[0] < max_steps) & ~carry[4].all()
    memory = jax.vmap(policy.initial_memory)(state)
    init = (0, obs, state, memory, jnp.zeros(num_episodes, bool), jnp.zeros(num_episodes))
    return jax.lax.while_loop(unfinished, step, init)[-1]


def random_play_returns(env, episodes: int = 1000, key: int = 0) -> jax.Array:
    """The returns [episodes] of uniformly random play over the first episode of ``episodes``
    copies of ``env`` (PRNG key ``key``): the no-skill level that a learning check reads against."""
    returns = jax.jit(lambda k: first_episode_returns(env, uniform_random(env), k, episodes, max_steps=10_000))
    return returns(jax.random.PRNGKey(key))


POLICY_MODULES = (
    "ballet_policies",
    "boxworld_policies",
    "graph_nav_policies",
    "memory_planning_policies",
    "minecraft_chicken_policies",
    "minecraft_maze_policies",
    "object_permanence_policies",
    "pvm_policies",
    "tmaze_policies",
    "word_learning_policies",
)
"""the modules of memrl's scripted policies, each registering the policies of its environments
(``register_policies``), imported when policies are first asked for"""
_REGISTERED: dict[str, dict[str, Callable[[Any], ScriptedPolicy]]] = {}
_UNIMPORTED = list(POLICY_MODULES)


def register_policies(environments: str, policies: dict[str, Callable[[Any], ScriptedPolicy]]) -> None:
    """Register ``policies`` (name -> maker of a ``ScriptedPolicy`` from the environment) for
    ``environments``: a family (its name before "/": every ``tmaze/*``) or one environment's whole
    name, which comes before its family. A second registration of the same environments is refused."""
    if environments in registered_policies():  # memrl's own first, so that a user's cannot shadow them
        raise ValueError(f"scripted policies of {environments!r} are registered twice")
    _REGISTERED[environments] = dict(policies)


def registered_policies() -> dict[str, dict[str, Callable[[Any], ScriptedPolicy]]]:
    """environments (a family or a whole name) -> their policies, every module of
    ``POLICY_MODULES`` imported first."""
    while _UNIMPORTED:
        importlib.import_module(f"memrl.envs.{_UNIMPORTED.pop(0)}")
    return _REGISTERED


def policies_of(env_name: str) -> dict:
    """The scripted policies of environment ``env_name`` (name -> maker), empty where it has none."""
    registered = registered_policies()
    return registered.get(env_name) or registered.get(env_name.split("/", 1)[0], {})


def scripted_policy(env_name: str, env, name: str) -> ScriptedPolicy:
    """The scripted policy ``name`` of environment ``env_name`` (made as ``env``); refused by name
    where the environment has none of that name."""
    policies = policies_of(env_name)
    if not policies:
        raise ValueError(
            f"{env_name} has no scripted policies; these environments do: "
            + ", ".join(f if "/" in f else f"{f}/*" for f in registered_policies())
        )
    if name not in policies:
        raise ValueError(f"{env_name} has no scripted policy {name!r}; its policies: {', '.join(policies)}")
    return policies[name](env)
