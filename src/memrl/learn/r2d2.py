"""R2D2: recurrent Q-learning from prioritised replay of sequences with stored states and burn-in
(Kapturowski et al. 2019), for any registered core, end-to-end jitted as PPO is.

Each update acts ε-greedily (environment i with ε_i = ε^(1 + α i / (E − 1)), Ape-X) for
``rollout_len`` steps in each environment, and stores one sequence per environment: the previous
update's last ``burn_in`` steps, then these, with the core's carry at the sequence's first step (the
replay is a circular buffer of ``replay_size`` sequences inside the run's state, so a checkpoint holds
it and a resumed run continues exactly). Then ``learn_steps`` gradient steps, each on ``batch_size``
sequences drawn with probability ∝ p^α. For a drawn sequence, the online network unrolls the burn-in
from the stored carry (or zeros, ``stored_state`` False) without gradient, then the rest; the target
network unrolls the whole sequence. With Q the online network's and Q⁻ the target's, over the
steps after the burn-in,

    a*_t = argmax_a Q(s_t, a)        v_t = h⁻¹(Q⁻(s_t, a*_t))        (double Q-learning)
    G_t = Σ_{j<m} γ^j r_{t+j} + γ^m v_{t+m},  m = min(n, T − 1 − t), cut at an episode's end
    L = mean_{b,t} w_b · ½ (Q(s_t, a_t) − h(G_t))²,  w_b = (N P(b))^−β / max_b' (N P(b'))^−β

(the last step of a sequence has no successor to bootstrap from and is not learnt; it lies in the
next sequence's burn-in). A drawn sequence's priority becomes η max_t |δ_t| + (1 − η) mean_t |δ_t|;
a new one's is the largest so far. The target network is the online one every ``target_period``
gradient steps. Evaluation acts greedily (``R2D2Config.GREEDY_ONLY``).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import optax
from flax import struct

from memrl.learn.actor import RunnerState, Segment, Transition
from memrl.learn.losses import inverse_value_rescale, n_step_returns, value_rescale
from memrl.learn.optimizers import make_optimizer
from memrl.learn.q_learner import QLearner
from memrl.learn.r2d2_config import R2D2Config


@struct.dataclass
class Replay:
    """Stored sequences, batch-major [replay_size, sequence_length, ...], with the core's carry at
    each one's first step and its priority; ``size`` of them are filled, ``position`` is the next to
    overwrite."""

    sequences: Transition
    carry: Any
    priority: jax.Array  # [replay_size]
    max_priority: jax.Array
    size: jax.Array
    position: jax.Array


@struct.dataclass
class R2D2State(RunnerState):
    """The runner, the target network, the replay and the last ``burn_in`` steps acted (the next
    sequence's burn-in) with the carry at their first step."""

    target_params: Any = None
    replay: Replay | None = None
    tail: Transition | None = None  # [burn_in, E]
    tail_carry: Any = None
    gradient_steps: jax.Array | None = None


class R2D2(QLearner):
    """The pure functions of an R2D2 run."""

    config: R2D2Config

    config_class = R2D2Config

    def __init__(self, config: R2D2Config):
        super().__init__(config)
        self.optimizer = make_optimizer(config.lr, config.max_grad_norm, adam_eps=config.adam_eps)
        i = jnp.arange(config.num_envs)
        self.ape_x_epsilons = config.epsilon ** (1 + config.epsilon_alpha * i / max(config.num_envs - 1, 1))

    def exploration(self, runner):
        """Ape-X's fixed ε_i = ε^(1 + α i / (E − 1)) of environment i."""
        return self.ape_x_epsilons

    def init(self, key, params=None) -> R2D2State:
        c = self.config
        runner = self.new_runner(key, self.optimizer, params)
        step = jax.eval_shape(lambda r: self.env_step(r, r.params, teach=self.explore)[1][0], runner)
        zeros = lambda *lead: jax.tree.map(lambda s: jnp.zeros(lead + s.shape[1:], s.dtype), step)
        tail = zeros(c.burn_in, c.num_envs)._replace(reset=jnp.ones((c.burn_in, c.num_envs), bool))
        carry = jax.tree.map(lambda x: jnp.zeros((c.replay_size, *x.shape[1:]), x.dtype), runner.carry)
        replay = Replay(
            sequences=zeros(c.replay_size, c.sequence_length),
            carry=carry,
            priority=jnp.zeros(c.replay_size),
            max_priority=jnp.ones(()),
            size=jnp.zeros((), jnp.int32),
            position=jnp.zeros((), jnp.int32),
        )
        return R2D2State(
            **vars(runner),
            target_params=runner.params,
            replay=replay,
            tail=tail,
            tail_carry=runner.carry,
            gradient_steps=jnp.zeros((), jnp.int32),
        )

    def act(self, runner: R2D2State):
        """``rollout_len`` ε-greedy steps; returns the runner, the episode segment and the new
        sequences ([burn_in + rollout_len, E], with the carry at their start)."""
        c = self.config
        steps = lambda runner, n: jax.lax.scan(
            lambda r, _: self.env_step(r, r.params, teach=self.explore), runner, None, n
        )
        initial_carry, sequence_carry, tail = runner.carry, runner.tail_carry, runner.tail
        runner, (first, first_done, first_returns, _) = steps(runner, c.rollout_len - c.burn_in)
        tail_carry = runner.carry
        runner, (last, last_done, last_returns, _) = steps(runner, c.burn_in)
        joined = lambda *parts: jax.tree.map(lambda *x: jnp.concatenate(x), *parts)
        transitions = joined(first, last)
        segment = Segment(
            initial_carry,
            transitions,
            jnp.zeros(c.num_envs),
            joined(first_done, last_done),
            joined(first_returns, last_returns),
        )
        runner = runner.replace(tail=last, tail_carry=tail_carry)
        return runner, segment, (joined(tail, transitions), sequence_carry)

    def stored(self, replay: Replay, sequences: Transition, carry) -> Replay:
        """``replay`` with the E new time-major ``sequences`` written over its oldest, at the largest priority so far."""
        slots = (replay.position + jnp.arange(self.config.num_envs)) % self.config.replay_size
        write = lambda stored, new: stored.at[slots].set(new)
        return replay.replace(
            sequences=jax.tree.map(write, replay.sequences, jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), sequences)),
            carry=jax.tree.map(write, replay.carry, carry),
            priority=replay.priority.at[slots].set(replay.max_priority),
            size=jnp.minimum(replay.size + self.config.num_envs, self.config.replay_size),
            position=(replay.position + self.config.num_envs) % self.config.replay_size,
        )

    def drawn(self, replay: Replay, key):
        """``batch_size`` slots drawn with probability ∝ priority^α, and their importance weights."""
        c = self.config
        filled = jnp.arange(c.replay_size) < replay.size
        logits = jnp.where(filled, c.priority_exponent * jnp.log(jnp.maximum(replay.priority, 1e-12)), -jnp.inf)
        slots = jax.random.categorical(key, logits, shape=(c.batch_size,))
        probability = jax.nn.softmax(logits)[slots]
        weights = (replay.size * probability) ** -c.importance_exponent
        return slots, weights / weights.max()

    def q_values(self, params, carry, sequences: Transition, burn_in: int):
        """Q [T − burn_in, B, A] of ``params`` over time-major ``sequences`` from ``carry``, the
        burn-in unrolled without gradient, and the reconstruction loss after it."""
        inputs = lambda s: (s.obs, s.prev_action, s.prev_reward, s.reset)
        head, rest = (jax.tree.map(lambda x: x[:burn_in], sequences), jax.tree.map(lambda x: x[burn_in:], sequences))
        if burn_in:
            carry, _ = self.agent.apply(params, carry, *inputs(head), method=self.agent.unroll)
        _, (q, _, reconstruction) = self.agent.apply(
            params, jax.lax.stop_gradient(carry), *inputs(rest), method=self.agent.unroll
        )
        return q, reconstruction

    def _loss(self, params, target_params, carry, sequences: Transition, weights):
        c = self.config
        if not c.stored_state:
            carry = self.agent.initialize_carry((c.batch_size,))
        q, reconstruction = self.q_values(params, carry, sequences, c.burn_in)
        target_q, _ = self.q_values(target_params, carry, sequences, c.burn_in)
        learnt = jax.tree.map(lambda x: x[c.burn_in :], sequences)
        best = jnp.argmax(jax.lax.stop_gradient(q), axis=-1)
        bootstrap = jnp.take_along_axis(target_q, best[..., None], axis=-1)[..., 0]
        h, h_inverse = (
            (
                lambda x: value_rescale(x, c.value_rescaling_eps),
                lambda x: inverse_value_rescale(x, c.value_rescaling_eps),
            )
            if c.value_rescaling
            else (lambda x: x, lambda x: x)
        )
        returns = jax.vmap(n_step_returns, in_axes=(1, 1, 1, None, None), out_axes=1)(
            c.reward_scale * learnt.reward, learnt.done.astype(jnp.float32), h_inverse(bootstrap), c.gamma, c.n_step
        )
        taken = jnp.take_along_axis(q, learnt.action, axis=-1)[..., 0]
        error = taken[:-1] - jax.lax.stop_gradient(h(returns))
        q_loss = jnp.mean(weights * 0.5 * jnp.square(error))
        reconstruction = reconstruction.mean()
        priority = c.priority_eta * jnp.abs(error).max(0) + (1 - c.priority_eta) * jnp.abs(error).mean(0)
        total = q_loss + c.reconstruction_coef * reconstruction
        return total, (priority, {"q_loss": q_loss, "mean_q": taken.mean(), "reconstruction_loss": reconstruction})

    def gradient_step(self, runner: R2D2State, key):
        """One gradient step on a drawn batch: the online network, its optimiser, the drawn
        sequences' priorities and (every ``target_period`` steps) the target network."""
        replay = runner.replay
        slots, weights = self.drawn(replay, key)
        take = lambda x: x[slots]
        sequences = jax.tree.map(lambda x: jnp.swapaxes(take(x), 0, 1), replay.sequences)
        grads, (priority, info) = jax.grad(self._loss, has_aux=True)(
            runner.params, runner.target_params, jax.tree.map(take, replay.carry), sequences, weights
        )
        updates, opt_state = self.optimizer.update(grads, runner.opt_state, runner.params)
        params = optax.apply_updates(runner.params, updates)
        steps = runner.gradient_steps + 1
        copy = steps % self.config.target_period == 0
        replay = replay.replace(
            priority=replay.priority.at[slots].set(priority),
            max_priority=jnp.maximum(replay.max_priority, priority.max()),
        )
        return runner.replace(
            params=params,
            opt_state=opt_state,
            replay=replay,
            gradient_steps=steps,
            target_params=jax.tree.map(lambda p, t: jnp.where(copy, p, t), params, runner.target_params),
        ), info

    def learn(self, runner: R2D2State, segment: Segment, stored):
        """Store the update's sequences (``stored``: ``act``'s), then ``learn_steps`` gradient steps
        once the replay holds ``learn_start``."""
        sequences, carry = stored
        key, learn_key = jax.random.split(runner.key)
        runner = runner.replace(key=key, replay=self.stored(runner.replay, sequences, carry))
        # before the first gradient step nothing is measured (None in metrics.jsonl), and the
        # reconstruction loss, which the run checks is finite at every update, is 0
        idle = {"q_loss": jnp.full((), jnp.nan), "mean_q": jnp.full((), jnp.nan), "reconstruction_loss": jnp.zeros(())}

        def learning(runner):
            runner, info = jax.lax.scan(
                self.gradient_step, runner, jax.random.split(learn_key, self.config.learn_steps)
            )
            return runner, jax.tree.map(jnp.mean, info)

        runner, info = jax.lax.cond(
            runner.replay.size >= self.config.learn_start, learning, lambda r: (r, idle), runner
        )
        runner = self.advanced(runner)
        return runner, {
            **self.episode_metrics(runner, segment),
            **info,
            "gradient_steps": runner.gradient_steps,
            "replay_size": runner.replay.size,
        }
