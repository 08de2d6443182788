"""The memory-core contract (docs/architecture.md) and the core registry.

Every core is a Linen module with

    carry = core.initialize_carry(rng, batch_shape)   # fixed-shape pytree
    carry, y = core(carry, x, reset)                  # one step, x [B, D], reset bool [B]
    carry, ys = core.unroll(carry, xs, resets)        # time-major xs [T, B, D], resets [T, B]
    carry, ys = core.sequence(xs)                     # fresh sequences: the initial carry, reset at t = 0

``reset[b]`` replaces row b's carry by its initial value *before* the step. Initial carries are
deterministic (zeros unless a core says otherwise), so the rng argument only keeps the signature
uniform for cores that may want a random start.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

from memrl.registry import Registry

CORES: Registry = Registry("core")


register = CORES.register  # register(name, build, fixed=..., defaults=...); refuses duplicates
make = CORES.make  # make(name, **fields) -> MemoryCore; unknown names list the known ones
names = CORES.names


def broadcast_right(flags: jax.Array, like: jax.Array) -> jax.Array:
    """Reshape [B] flags to broadcast against ``like`` [B, ...] on the right (never the left)."""
    return flags.reshape(flags.shape + (1,) * (like.ndim - flags.ndim))


def reset_carry(carry, initial, reset: jax.Array):
    """Rows where ``reset`` is true take their initial carry."""
    return jax.tree.map(lambda c, i: jnp.where(broadcast_right(reset, c), i, c), carry, initial)


class MemoryCore(nn.Module):
    """Base class: subclasses implement ``initialize_carry`` and ``step``; resets are handled here."""

    unroll_saves = None
    """what the gradient of ``unroll`` keeps of each step's forward pass, as a ``jax.checkpoint``
    policy (the rest is recomputed in the backward pass), or None: everything. Only the outputs of
    matrix products (``jax.checkpoint_policies.dots_saveable``) make the RMC's unroll gradient 1.35
    times faster on a CPU core: the saved elementwise results cost more memory traffic than their
    recomputation."""

    def initialize_carry(self, rng: jax.Array, batch_shape: tuple[int, ...]):
        raise NotImplementedError

    def step(self, carry, x, reset):
        """One step on a carry that has already been reset. ``reset`` is passed for cores that
        need to know an episode starts (e.g. to start a new chunk); most ignore it."""
        raise NotImplementedError

    def map_input(self, x, batch_ndim: int):
        """The part of a step that reads only the step's own input (no carry), on inputs with
        ``batch_ndim`` leading batch axes; ``unroll`` applies it to all T steps at once (one matrix
        product of T·B rows where a scan would run T products of B rows: the input projections of
        the RMC and the LSTM) and then ``step_mapped``. Default: none."""
        return x

    def step_mapped(self, carry, mapped, reset):
        """``step`` on the input as ``map_input`` maps it (a core with a ``map_input`` says how)."""
        return self.step(carry, mapped, reset)

    def __call__(self, carry, x, reset):
        initial = self.initialize_carry(jax.random.PRNGKey(0), reset.shape)
        return self.step(reset_carry(carry, initial, reset), x, reset)

    def sequence(self, xs):
        """Fresh sequences xs [T, B, ...] (one episode each, from the initial carry) -> (carry, ys).
        Default: ``unroll`` with a reset at the first step; a core with a faster whole-sequence
        form (TLB's chunks) overrides it, and a test shows the two agree."""
        resets = jnp.zeros(xs.shape[:2], bool).at[0].set(True)
        return self.unroll(self.initialize_carry(jax.random.PRNGKey(0), xs.shape[1:2]), xs, resets)

    def unroll(self, carry, xs, resets):
        """Default unroll: ``lax.scan`` of the step over time (time-major inputs). What a step sows
        in ``intermediates`` (RMC's attention weights) comes out stacked over time."""

        def body(core, carry, inputs):
            mapped, reset = inputs
            initial = core.initialize_carry(jax.random.PRNGKey(0), reset.shape)
            return core.step_mapped(reset_carry(carry, initial, reset), mapped, reset)

        if self.unroll_saves is not None:
            body = nn.checkpoint(body, policy=self.unroll_saves)
        scan = nn.scan(
            body,
            variable_broadcast="params",
            variable_axes={"intermediates": 0},
            split_rngs={"params": False},
            in_axes=0,
            out_axes=0,
        )
        return scan(self, carry, (self.map_input(xs, 2), resets))


class SegmentCore(MemoryCore):
    """A core that computes T steps at once (``segment(carry, xs, resets) -> (carry, ys)``, equal to
    T single steps): a step is a segment of one, and ``unroll`` is one segment from a carry whose
    gradient is stopped (the previous segment's activations, as Transformer-XL trains)."""

    def segment(self, carry, xs, resets):
        raise NotImplementedError

    def step(self, carry, x, reset):
        carry, ys = self.segment(carry, x[None], reset[None])
        return carry, ys[0]

    def unroll(self, carry, xs, resets):
        return self.segment(jax.lax.stop_gradient(carry), xs, resets)
