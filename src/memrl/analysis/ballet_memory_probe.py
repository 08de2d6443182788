"""Can a Ballet agent's memory tell which dancer did the named dance? A supervised check.

Not an analysis from the paper. The paper's agents learn Ballet from reward alone (Lampinen et al.
2021, Sec. 3.1, Table 3); at memrl's budgets none gets past touching a random dancer
(docs/results.md), which leaves open whether the memory could hold what the task asks. Before
the choice phase a Ballet agent cannot move, so the watch phase's observations do not depend on
the policy. This trains a fresh agent of a run config (encoder -> memory core -> head, its
policy output widened to the 8 dancer slots) on the watch phase of fresh episodes of one level,
frames 0 .. N·(15 + delay), the last being the first choice frame where the instruction names the
target's dance, to classify the slot of the target from its output at that frame:

    L = −log softmax(logits_T)[slot(target)]

Chance is 1/N. Accuracy on fresh episodes says how much of the memory demand of each level the
architecture meets when it is told the answer, free of exploration and credit assignment.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

from memrl.agents.distributions import Categorical
from memrl.envs import ballet
from memrl.envs.ballet_tables import DANCER_SLOTS
from memrl.learn.actor import ActorCriticLearner
from memrl.learn.impala_config import ImpalaConfig
from memrl.nn.compiled_init import compiled_init


def watch_frames(env: ballet.Ballet) -> int:
    """Observations from the reset one to the first choice frame, N·(15 + delay) + 1, of a one-level Ballet."""
    if len(env.levels) != 1:
        raise ValueError(f"the probe needs one Ballet level (its episodes have one length), got levels {env.levels}")
    (num_dancers, delay), *_ = env.levels
    return num_dancers * (ballet.NUM_MOVES - 1 + delay) + 1


def watch_episodes(env: ballet.Ballet, key, batch_size: int):
    """(observations, time-major [T, B, ...], of the watch phase up to the first choice frame;
    the target's slot [B], an index of ``DANCER_SLOTS``) of ``batch_size`` fresh episodes."""
    frames, params = watch_frames(env), env.default_params
    slots = jnp.asarray(DANCER_SLOTS, jnp.int32)
    no_move = jnp.zeros(len(env.action_dims), jnp.int32)  # the agent cannot move before the choice phase

    def episode(key):
        first, state = env.reset_env(key, params)

        def step(state, _):
            obs, state, *_ = env.step_env(key, state, no_move, params)
            return state, obs

        state, later = jax.lax.scan(step, state, None, frames - 1)
        observations = jax.tree.map(lambda a, rest: jnp.concatenate([a[None], rest]), first, later)
        return observations, jnp.argmax(jnp.all(slots == state.slots[state.target], axis=-1))

    observations, labels = jax.vmap(episode)(jax.random.split(key, batch_size))
    return jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), observations), labels


class BalletMemoryProbe:
    """The agent of ``config`` (a Ballet run config of one level) with a slot classifier for a head."""

    what = "a ballet-memory probe"

    def __init__(self, config: ImpalaConfig):
        learner = ActorCriticLearner(config)
        if not isinstance(learner.env, ballet.Ballet):
            raise ValueError(f"the probe needs a Ballet environment, got {config.env_name}")
        self.env = learner.env
        self.frames = watch_frames(self.env)
        self.agent = learner.agent.clone(actions=Categorical((len(DANCER_SLOTS),)), reconstruct=False)

    def slot_logits(self, params, observations) -> jax.Array:
        """[B, 8] logits over the dancer slots at the last observation of time-major ``observations``."""
        batch = jax.tree.leaves(observations)[0].shape[1]
        resets = jnp.zeros((self.frames, batch), bool).at[0].set(True)
        no_action, no_reward = jnp.zeros((self.frames, batch, 1), jnp.int32), jnp.zeros((self.frames, batch))
        carry = self.agent.initialize_carry((batch,))
        _, (logits, _, _) = self.agent.apply(
            params, carry, observations, no_action, no_reward, resets, method=self.agent.unroll
        )
        return logits[-1]

    def init(self, key):
        observations, _ = watch_episodes(self.env, key, 1)
        carry = self.agent.initialize_carry((1,))
        resets = jnp.zeros((self.frames, 1), bool).at[0].set(True)
        return compiled_init(
            self.agent,
            "unroll",
            key,
            carry,
            observations,
            jnp.zeros((self.frames, 1, 1), jnp.int32),
            jnp.zeros((self.frames, 1)),
            resets,
        )

    def loss(self, params, key, batch_size: int):
        """(mean L, (fraction of the batch classified right,)) on fresh episodes."""
        observations, labels = watch_episodes(self.env, key, batch_size)
        logits = self.slot_logits(params, observations)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean(), (
            (logits.argmax(-1) == labels).mean(),
        )

    def accuracy(self, params, key, episodes: int, batch_size: int) -> float:
        """Fraction of ``episodes`` fresh episodes classified right, ``batch_size`` at a time."""
        right = jax.jit(lambda k: self.loss(params, k, batch_size)[1][0])
        return float(np.mean([right(k) for k in jax.random.split(key, max(1, episodes // batch_size))]))
