"""Recurrent actor-critic: encoder (FF1) -> memory core -> head (FF2) -> policy logits and value.

With ``feed_prev_action`` / ``feed_prev_reward`` the core input also holds the one-hot previous
action and the previous reward (zeros at an episode start, so nothing leaks across episodes).
Observations may be pytrees; their leaves are flattened and joined.

A core with ``named_inputs`` (EPN) embeds its inputs itself: it gets
``{"observation", "goal", "prev_action"}`` from a dict observation with a ``"goal"`` part, and the
encoder is not used.
"""

from __future__ import annotations

from typing import Sequence

import jax
import jax.numpy as jnp
import flax.linen as nn

from memrl.cores.base import MemoryCore


class MLP(nn.Module):
    """ReLU layers of the given widths (an empty tuple is the identity)."""

    widths: Sequence[int]

    @nn.compact
    def __call__(self, x):
        for i, width in enumerate(self.widths):
            x = nn.relu(nn.Dense(width, name=f"dense_{i}")(x))
        return x


def flatten_observation(obs, batch_ndim: int) -> jax.Array:
    leaves = jax.tree.leaves(obs)
    return jnp.concatenate([leaf.reshape(leaf.shape[:batch_ndim] + (-1,)).astype(jnp.float32) for leaf in leaves], -1)


class ActorCritic(nn.Module):
    core: MemoryCore
    action_dims: tuple[int, ...]
    encoder_widths: tuple[int, ...] = (256, 256)
    head_widths: tuple[int, ...] = (256,)
    feed_prev_action: bool = False
    feed_prev_reward: bool = False

    def initialize_carry(self, batch_shape):
        return self.core.initialize_carry(jax.random.PRNGKey(0), batch_shape)

    def _core_input(self, obs, prev_action, prev_reward, reset, batch_ndim):
        starts = reset[..., None]
        prev_action_one_hot = jnp.where(starts, 0.0, jnp.concatenate([jax.nn.one_hot(prev_action[..., c], n) for c, n in enumerate(self.action_dims)], -1))
        if getattr(self.core, "named_inputs", False):
            if not isinstance(obs, dict) or "goal" not in obs:
                raise ValueError(f"core {type(self.core).__name__} needs dict observations with a 'goal' part")
            rest = {k: v for k, v in obs.items() if k != "goal"}
            return {
                "observation": flatten_observation(rest, batch_ndim),
                "goal": flatten_observation(obs["goal"], batch_ndim),
                "prev_action": prev_action_one_hot,
            }
        parts = [MLP(self.encoder_widths, name="encoder")(flatten_observation(obs, batch_ndim))]
        if self.feed_prev_action:
            parts.append(prev_action_one_hot)
        if self.feed_prev_reward:
            parts.append(jnp.where(starts, 0.0, prev_reward[..., None]))
        return jnp.concatenate(parts, axis=-1)

    def _heads(self, y):
        y = MLP(self.head_widths, name="head")(y)
        logits = nn.Dense(sum(self.action_dims), kernel_init=nn.initializers.orthogonal(0.01), name="policy")(y)
        value = nn.Dense(1, kernel_init=nn.initializers.orthogonal(1.0), name="value")(y)[..., 0]
        return logits, value

    @nn.compact
    def __call__(self, carry, obs, prev_action, prev_reward, reset):
        """One step for a batch [B]: returns (carry, (logits [B, sum(dims)], value [B]))."""
        x = self._core_input(obs, prev_action, prev_reward, reset, batch_ndim=1)
        carry, y = self.core(carry, x, reset)
        return carry, self._heads(y)

    @nn.compact
    def unroll(self, carry, obs, prev_action, prev_reward, resets):
        """Time-major [T, B] inputs; same parameters and results as stepping ``__call__``."""
        x = self._core_input(obs, prev_action, prev_reward, resets, batch_ndim=2)
        carry, ys = self.core.unroll(carry, x, resets)
        return carry, self._heads(ys)
