"""The acting half every learner shares: the runner state, one environment step of the agent, a
rollout segment with its bootstrap value, and the per-update episode metrics.

A learner subclasses ``ActorCriticLearner`` and implements ``init`` and an update's two halves,
``act`` (a rollout) and ``learn`` (from its segment); ``update`` is one after the other and ``run``
scans it. With a ``policy_lag`` the halves of consecutive updates are independent, so
``run/pipeline.py`` runs them side by side. Rollout segments store the core's carry at their start,
so losses can unroll the core over the whole segment from it with the stored reset flags
(truncated BPTT).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from memrl.agents.actor_critic import split_observation
from memrl.learn.run_config import RunConfig
from memrl.nn.compiled_init import compiled_init


@struct.dataclass
class RunnerState:
    """Everything a run needs to continue; a checkpoint is exactly this."""

    params: Any
    opt_state: Any
    env_state: Any
    obs: Any
    carry: Any
    prev_action: jax.Array  # [E, components]
    prev_reward: jax.Array  # [E]
    reset: jax.Array  # [E] the next step starts an episode
    episode_return: jax.Array  # [E] running return of the current episodes
    key: jax.Array
    update: jax.Array  # updates done


@struct.dataclass
class LaggedRunnerState(RunnerState):
    """The runner of a run with a policy lag: also the older parameters the actor uses."""

    behaviour_params: Any = None  # [lag, ...] the parameters of the last ``policy_lag`` updates, oldest first


class Transition(NamedTuple):
    """One stored step of the acting policy (time-major when stacked)."""

    obs: Any
    prev_action: jax.Array
    prev_reward: jax.Array
    reset: jax.Array
    action: jax.Array
    logp: jax.Array  # log μ(a) of the acting policy
    value: jax.Array
    reward: jax.Array
    done: jax.Array
    target: Any = None  # a teacher's action at this step while the agent clones it (``teach``), else None
    target_weight: Any = None  # the weight of that action in the cloning loss (``teach``), else None


class Segment(NamedTuple):
    """A rollout of ``rollout_len`` steps from every environment, time-major [T, E]."""

    initial_carry: Any
    transitions: Transition
    bootstrap_value: jax.Array  # [E] value of the state after the last step
    episode_done: jax.Array  # [T, E]
    episode_return: jax.Array  # [T, E] the finished episode's return where done


class ActorCriticLearner:
    """Acts and learns with the environment and agent of a ``RunConfig`` (``env``, ``agent``); subclasses add the learning rule."""

    def __init__(self, config: RunConfig):
        self.config = config
        self.env = config.env
        self.env_params = self.env.default_params
        if config.reconstruction_coef > 0:
            self.check_reconstruction(config)
        self.agent = config.agent

    def check_reconstruction(self, config: RunConfig) -> None:
        """Refuse a reconstruction loss that would reconstruct nothing: an observation without an
        image part that the encoder reads or token parts (the loss would be silently zero)."""
        obs = jax.eval_shape(lambda key: self.env.reset(key, self.env_params)[0], jax.random.PRNGKey(0))
        images, tokens, _ = split_observation(obs, 0, config.encoder, self.env.token_vocab)
        if not images and not tokens:
            parts = {
                name: tuple(part.shape)
                for name, part in (obs.items() if isinstance(obs, dict) else [("observation", obs)])
            }
            raise ValueError(
                f"reconstruction_coef > 0 needs something to reconstruct: an image part ([height, width, channels]) read by "
                f"encoder 'conv' or 'resnet', or token parts; {config.env_name}'s observation parts are {parts}, read by encoder {config.encoder!r}"
            )

    def init(self, key, params=None) -> RunnerState:
        raise NotImplementedError

    def act(self, runner: RunnerState) -> tuple[RunnerState, Segment, Any]:
        """An update's acting half: a rollout with ``acting_params``. Returns the runner, the segment
        and the key that the learning half draws from (None where it draws none)."""
        raise NotImplementedError

    def learn(self, runner: RunnerState, segment: Segment, key) -> tuple[RunnerState, dict]:
        """An update's learning half, from the segment ``act`` collected; it ends with
        ``after_learning``. Returns (runner, metrics)."""
        raise NotImplementedError

    def update(self, runner: RunnerState, _=None) -> tuple[RunnerState, dict]:
        """One update: a rollout, then learning from it."""
        return self.learn(*self.act(runner))

    def acting_params(self, runner: RunnerState):
        """The parameters the actor uses: ``policy_lag`` updates old, or the current ones."""
        if self.config.policy_lag == 0:
            return runner.params
        return jax.tree.map(lambda stacked: stacked[0], runner.behaviour_params)

    def advanced(self, runner: RunnerState) -> RunnerState:
        """What an update changes in ``runner`` whatever its gradient: the count, and with a policy lag
        the parameters it started from appended to the actor's (the oldest dropped). The next
        update's rollout reads nothing else of what learning changes, so it may start from this."""
        if self.config.policy_lag > 0:
            behaviour = jax.tree.map(
                lambda stacked, p: jnp.concatenate([stacked[1:], p[None]]), runner.behaviour_params, runner.params
            )
            runner = runner.replace(behaviour_params=behaviour)
        return runner.replace(update=runner.update + 1)

    def after_learning(self, runner: RunnerState, params, opt_state) -> RunnerState:
        """The runner after an update that produced ``params`` and ``opt_state``."""
        return self.advanced(runner).replace(params=params, opt_state=opt_state)

    def no_action(self) -> jax.Array:
        """A zero action for every environment copy, as the agent's distribution holds actions."""
        return jnp.zeros((self.config.num_envs, *self.agent.actions.action_shape), self.agent.actions.dtype)

    def new_runner(self, key, optimizer, params=None) -> RunnerState:
        """Fresh environments, zero carries, new parameters (or ``params``) and ``optimizer``'s state
        (with a ``policy_lag``, the actor's older parameters: the new ones, ``policy_lag`` times)."""
        c = self.config
        key, init_key, env_key = jax.random.split(key, 3)
        # compiled: run eagerly, a level generator (BoxWorld, Ballet, Mini Pacman) takes seconds op by op
        env_keys = jax.random.split(env_key, c.num_envs)
        obs, env_state = jax.jit(jax.vmap(self.env.reset, (0, None)))(env_keys, self.env_params)
        # typed as a step returns them (a reset may leave a value weakly typed, Craftax's facing
        # direction): else the runner an update returns differs and a jitted update compiles again
        stepped = jax.eval_shape(
            self.env.batch_step, env_keys, env_state, self.agent.actions.to_env(self.no_action()), self.env_params
        )
        obs, env_state = jax.tree.map(lambda x, s: jnp.asarray(x, s.dtype), (obs, env_state), stepped[:2])
        carry = self.agent.initialize_carry((c.num_envs,))
        prev_action = self.no_action()
        prev_reward = jnp.zeros((c.num_envs,))
        reset = jnp.ones((c.num_envs,), bool)
        one_step = lambda x: x[None]  # init through ``unroll`` creates every parameter
        if params is None:
            params = compiled_init(
                self.agent, "unroll", init_key, carry, *jax.tree.map(one_step, (obs, prev_action, prev_reward, reset))
            )
        runner = RunnerState(
            params=params,
            opt_state=optimizer.init(params),
            env_state=env_state,
            obs=obs,
            carry=carry,
            prev_action=prev_action,
            prev_reward=prev_reward,
            reset=reset,
            episode_return=jnp.zeros((c.num_envs,)),
            key=key,
            update=jnp.zeros((), jnp.int32),
        )
        if c.policy_lag == 0:
            return runner
        lagged = jax.tree.map(lambda p: jnp.stack([p] * c.policy_lag), params)
        return LaggedRunnerState(**vars(runner), behaviour_params=lagged)

    def env_step(self, runner: RunnerState, acting_params, record: bool = False, greedy: bool = False, teach=None):
        """The agent acts with ``acting_params`` in every environment once (its most probable action
        if ``greedy``, else sampled). Returns the runner and (transition, done, episode return where
        done, recorded): with ``record``, recorded is what the agent sowed in ``intermediates`` at this
        step (an analysis reads it), else {}. ``teach(runner, action, logp, logits, key) -> (runner,
        action, logp, target, target_weight)`` may put another policy's action (and the acting
        mixture's log-probability) in the agent's place, and gives the action the agent learns and its
        weight (``Transition.target``, ``Transition.target_weight``)."""
        key, act_key, env_key = jax.random.split(runner.key, 3)
        inputs = (runner.carry, runner.obs, runner.prev_action, runner.prev_reward, runner.reset)
        if record:
            (carry, (logits, value)), sown = self.agent.apply(acting_params, *inputs, mutable=["intermediates"])
            recorded = sown.get("intermediates", {})
        else:
            (carry, (logits, value)), recorded = self.agent.apply(acting_params, *inputs), {}
        action = self.agent.actions.greedy(logits) if greedy else self.agent.actions.sample(act_key, logits)
        logp, target, target_weight = self.agent.actions.log_prob(logits, action), None, None
        if teach is not None:  # its key folded from the agent's, so that runs without a teacher keep their streams
            runner, action, logp, target, target_weight = teach(
                runner, action, logp, logits, jax.random.fold_in(act_key, 1)
            )
        env_keys = jax.random.split(env_key, self.config.num_envs)
        obs, env_state, reward, done, _ = self.env.batch_step(
            env_keys, runner.env_state, self.agent.actions.to_env(action), self.env_params
        )
        episode_return = runner.episode_return + reward
        transition = Transition(
            runner.obs,
            runner.prev_action,
            runner.prev_reward,
            runner.reset,
            action,
            logp,
            value,
            reward,
            done,
            target,
            target_weight,
        )
        runner = runner.replace(
            key=key,
            carry=carry,
            obs=obs,
            env_state=env_state,
            prev_action=action,
            prev_reward=reward,
            reset=done,
            episode_return=jnp.where(done, 0.0, episode_return),
        )
        return runner, (transition, done, episode_return, recorded)

    def rollout(self, runner: RunnerState, acting_params, teach=None) -> tuple[RunnerState, Segment]:
        """``rollout_len`` steps with ``acting_params`` (and ``teach``, as ``env_step`` takes it) and
        the bootstrap value after them."""
        initial_carry = runner.carry
        runner, (transitions, done, returns, _) = jax.lax.scan(
            lambda r, _: self.env_step(r, acting_params, teach=teach), runner, None, self.config.rollout_len
        )
        _, (_, bootstrap_value) = self.agent.apply(
            acting_params, runner.carry, runner.obs, runner.prev_action, runner.prev_reward, runner.reset
        )
        return runner, Segment(initial_carry, transitions, bootstrap_value, done, returns)

    def total_loss(self, policy_loss, value_loss, entropy, reconstruction, value_coef=None):
        """The loss every actor-critic learner minimises:

        L = policy_coef · L_π + value_coef · L_V − entropy_coef · H + reconstruction_coef · L_rec

        (``value_coef`` given: that weight in place of the config's, as while cloning a teacher)
        """
        c = self.config
        return (
            c.policy_coef * policy_loss
            + (c.value_coef if value_coef is None else value_coef) * value_loss
            - c.entropy_coef * entropy
            + c.reconstruction_coef * reconstruction
        )

    def unroll(self, params, segment_initial_carry, transitions: Transition):
        """(logits, values, reconstruction loss) [T, E, ...] of ``params`` over stored transitions,
        from the stored carry."""
        _, outputs = self.agent.apply(
            params,
            segment_initial_carry,
            transitions.obs,
            transitions.prev_action,
            transitions.prev_reward,
            transitions.reset,
            method=self.agent.unroll,
        )
        return outputs

    def episode_metrics(self, runner: RunnerState, segment: Segment) -> dict:
        """Environment steps so far and the mean and spread (standard deviation) of the returns of
        the episodes that ended in the segment (NaN where none did)."""
        done, returns = segment.episode_done, segment.episode_return
        episodes = done.sum()
        mean_of = lambda x: jnp.where(episodes > 0, jnp.sum(x * done) / jnp.maximum(episodes, 1), jnp.nan)
        mean = mean_of(returns)
        return {
            "env_steps": runner.update * self.config.steps_per_update,
            "episode_return": mean,
            "episode_return_std": jnp.sqrt(mean_of(jnp.square(returns - mean))),
            "episodes": episodes,
        }

    def evaluate(self, params, key, num_steps: int, amnesic: bool = False, greedy: bool = False):
        """Act with ``params`` (sampling; the most probable action if ``greedy`` or the config is
        ``GREEDY_ONLY``) in fresh environments for ``num_steps`` steps; no learning. Returns (done, episode return where done,
        reward), each [T, E]. ``amnesic``: the agent's carry (and previous action and reward) is reset
        before every step, as at an episode start: the same network without memory, to measure how
        much of its return the memory gives."""

        def step(runner, _):
            if amnesic:
                runner = runner.replace(reset=jnp.ones_like(runner.reset))
            return self.env_step(runner, params, greedy=greedy or self.config.GREEDY_ONLY)

        runner = self.init(key).replace(params=params)
        _, (transitions, done, returns, _) = jax.lax.scan(step, runner, None, num_steps)
        return done, returns, transitions.reward

    def evaluation_summary(self, results, num_steps: int) -> str:
        """One line on what ``evaluate`` returned."""
        done, returns, _ = results
        episodes = np.asarray(returns)[np.asarray(done)]
        if not len(episodes):
            return (
                f"no episode finished in {num_steps} steps of {np.shape(done)[1]} environments: "
                "give more --steps to score one"
            )
        error = episodes.std(ddof=1) / np.sqrt(len(episodes)) if len(episodes) > 1 else float("nan")
        return (
            f"mean return {episodes.mean():.3f} ± {error:.3f} (standard error of the mean) over {len(episodes)} episodes, "
            f"their standard deviation {episodes.std():.3f}"
        )

    def run(self, runner: RunnerState, num_updates: int):
        """``num_updates`` updates in one ``lax.scan``; metrics are stacked over updates."""
        return jax.lax.scan(self.update, runner, None, num_updates)
