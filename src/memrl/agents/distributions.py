"""The action distributions of memrl's agents, chosen by the environment's actions (``for_env``):
one categorical per discrete action component (``Categorical``), or a diagonal Gaussian over
continuous components (``Gaussian``), squashed by tanh into the bounds of each component bounded on
both sides.

A policy head outputs ``num_outputs`` numbers per step: the components' logits concatenated
[..., sum(dims)], or the Gaussian's means and log standard deviations [..., 2n]. The agent's
actions are int32 [..., len(dims)], or the Gaussian's draws before the squash, float32 [..., n]:
learners keep those (a log-probability never inverts the squash, which loses the draw at a bound)
and ``to_env`` gives what the environment takes.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

LOG_STD_RANGE = (-5.0, 2.0)
"""the Gaussian's log standard deviations are clipped to this range (σ from 0.007 to 7.4)"""


class Categorical(NamedTuple):
    """One categorical per discrete action component of ``dims`` choices."""

    dims: tuple[int, ...]

    @property
    def num_outputs(self) -> int:
        return sum(self.dims)

    @property
    def action_shape(self) -> tuple[int, ...]:
        return (len(self.dims),)

    @property
    def dtype(self):
        return jnp.int32

    def _split(self, logits):
        bounds = [sum(self.dims[:i]) for i in range(1, len(self.dims))]
        return jnp.split(logits, bounds, axis=-1)

    def sample(self, key, logits) -> jax.Array:
        keys = jax.random.split(key, len(self.dims))
        parts = [jax.random.categorical(k, part) for k, part in zip(keys, self._split(logits))]
        return jnp.stack(parts, axis=-1).astype(jnp.int32)

    def greedy(self, logits) -> jax.Array:
        return jnp.stack([jnp.argmax(part, -1) for part in self._split(logits)], axis=-1).astype(jnp.int32)

    def log_prob(self, logits, actions) -> jax.Array:
        """Sum over components of log π(a_c)."""
        total = 0.0
        for c, part in enumerate(self._split(logits)):
            logp = jax.nn.log_softmax(part)
            total = total + jnp.take_along_axis(logp, actions[..., c : c + 1], axis=-1)[..., 0]
        return total

    def entropy(self, logits) -> jax.Array:
        """Sum over components of the categorical entropy."""
        total = 0.0
        for part in self._split(logits):
            logp = jax.nn.log_softmax(part)
            total = total - jnp.sum(jnp.exp(logp) * logp, axis=-1)
        return total

    def to_env(self, actions) -> jax.Array:
        """What the environment takes: the actions themselves."""
        return actions

    def features(self, actions) -> jax.Array:
        """The actions as the agent reads its previous one: each component one-hot, concatenated."""
        return jnp.concatenate([jax.nn.one_hot(actions[..., c], n) for c, n in enumerate(self.dims)], -1)


class Gaussian(NamedTuple):
    """A diagonal Gaussian over continuous components with bounds ``low`` and ``high`` (±inf where a
    side is unbounded): the agent draws u ~ N(μ, σ²) per component, and the environment takes a =
    low + (tanh(u) + 1)(high − low)/2 where both bounds are finite (a = u elsewhere), so that
    log π(a) = log N(u; μ, σ²) − log |da/du| (Haarnoja et al. 2018, App. C)."""

    low: tuple[float, ...]
    high: tuple[float, ...]

    @property
    def num_outputs(self) -> int:
        return 2 * len(self.low)

    @property
    def action_shape(self) -> tuple[int, ...]:
        return (len(self.low),)

    @property
    def dtype(self):
        return jnp.float32

    def _squashed(self):
        """(which components are squashed, their low, their half-width), finite stand-ins elsewhere
        (so that no inf reaches a gradient through the branch ``where`` drops)."""
        low, high = np.asarray(self.low, np.float32), np.asarray(self.high, np.float32)
        squashed = np.isfinite(low) & np.isfinite(high)
        return squashed, np.where(squashed, low, -1.0), np.where(squashed, (high - low) / 2, 1.0)

    def _parts(self, out):
        mean, log_std = jnp.split(out, 2, axis=-1)
        return mean, jnp.clip(log_std, *LOG_STD_RANGE)

    def sample(self, key, out) -> jax.Array:
        mean, log_std = self._parts(out)
        return mean + jnp.exp(log_std) * jax.random.normal(key, mean.shape)

    def greedy(self, out) -> jax.Array:
        """The mode of u (the mean)."""
        return self._parts(out)[0]

    def log_prob(self, out, u) -> jax.Array:
        """log π of the environment's action of the draws ``u``."""
        squashed, _, half = self._squashed()
        mean, log_std = self._parts(out)
        normal = -0.5 * ((u - mean) / jnp.exp(log_std)) ** 2 - log_std - 0.5 * math.log(2 * math.pi)
        # log |da/du| = log(half · (1 − tanh²u)), 1 − tanh²u = 4 / (e^u + e^−u)²
        jacobian = jnp.log(half) + 2 * (math.log(2) - u - jax.nn.softplus(-2 * u))
        return jnp.sum(normal - jnp.where(squashed, jacobian, 0.0), axis=-1)

    def entropy(self, out) -> jax.Array:
        """The entropy of u's Gaussian, Σ log σ + ½ log 2πe (the squashed action's has no closed
        form; the bonus pushes the same spread)."""
        return jnp.sum(self._parts(out)[1] + 0.5 * math.log(2 * math.pi * math.e), axis=-1)

    def to_env(self, u) -> jax.Array:
        """What the environment takes: each bounded component squashed into its bounds."""
        squashed, low, half = self._squashed()
        return jnp.where(squashed, low + (jnp.tanh(u) + 1) * half, u).astype(jnp.float32)

    def features(self, u) -> jax.Array:
        """The actions as the agent reads its previous one: bounded components squashed into [-1, 1]."""
        return jnp.where(self._squashed()[0], jnp.tanh(u), u).astype(jnp.float32)


Distribution = Categorical | Gaussian


def for_env(env) -> Distribution:
    """The distribution of ``env``'s actions: a Gaussian within its ``action_bounds`` where it has
    them, else a categorical per discrete component."""
    if env.action_bounds is not None:
        low, high = env.action_bounds
        return Gaussian(tuple(map(float, low)), tuple(map(float, high)))
    return Categorical(tuple(env.action_dims))
