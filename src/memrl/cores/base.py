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

import functools

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from memrl.registry import ComponentRegistry

CORE_MODULES = (
    "amrl",
    "conv_lstm",
    "delta_net",
    "dnc",
    "epn",
    "feedback_transformer",
    "ffm",
    "gru",
    "htm",
    "linear_attention",
    "lru",
    "lstm",
    "memoryless",
    "min_gru",
    "mlstm",
    "rmc",
    "s5",
    "s6",
    "tlb",
    "transformer_xl",
)
"""the modules of memrl's own cores, each registering its names"""
CORES: ComponentRegistry = ComponentRegistry("core", modules=tuple(f"memrl.cores.{module}" for module in CORE_MODULES))


register = CORES.register  # register(name, build, fixed=..., defaults=..., small=...); refuses duplicates
make = CORES.make  # make(name, **fields) -> MemoryCore; unknown names list the known ones
small = CORES.small  # make(name, **small(name)): a size that trains in minutes on a CPU
names = CORES.names


def broadcast_right(flags: jax.Array, like: jax.Array) -> jax.Array:
    """Reshape [B] flags to broadcast against ``like`` [B, ...] on the right (never the left)."""
    return flags.reshape(flags.shape + (1,) * (like.ndim - flags.ndim))


def reset_carry(carry, initial, reset: jax.Array):
    """Rows where ``reset`` is true take their initial carry."""
    return jax.tree.map(lambda c, i: jnp.where(broadcast_right(reset, c), i, c), carry, initial)


def check_batch_shape(core: str, batch_shape) -> None:
    """Refuse a batch shape that is not a tuple of positive integers."""
    if not isinstance(batch_shape, tuple) or not all(isinstance(n, int) and n > 0 for n in batch_shape):
        raise ValueError(
            f"{core}.initialize_carry: batch_shape must be a tuple of positive integers, such as (16,); got {batch_shape!r}"
        )


def check_inputs(core: MemoryCore, carry, x, reset, time_axes: int) -> None:
    """Refuse, at trace time and named by what was expected, what a step (``time_axes`` 0) or an
    unroll (1) cannot take: resets that are not [B] (or [T, B]), an input array without those leading
    axes or of integers (ids must be embedded first), and a carry of another core or batch size."""
    kind, what = type(core).__name__, ("an unroll" if time_axes else "a step")
    axes = "[T, B]" if time_axes else "[B]"
    shape = jnp.shape(reset)
    if len(shape) != 1 + time_axes:
        raise ValueError(f"{kind}, {what}: resets must have shape {axes}, got shape {shape}")
    if isinstance(x, jax.Array | np.ndarray):
        if x.shape[: len(shape)] != shape:
            raise ValueError(
                f"{kind}, {what}: inputs must be {axes[:-1]}, ...] as the resets {shape}; got shape {x.shape}"
            )
        if not jnp.issubdtype(x.dtype, jnp.floating):
            raise ValueError(
                f"{kind}, {what}: inputs must be floating point, got {x.dtype} (embed token ids first, e.g. nn.Embed)"
            )
    expected = jax.eval_shape(lambda: core.clone(parent=None).initialize_carry(jax.random.PRNGKey(0), shape[-1:]))
    given = jax.tree.map(lambda leaf: tuple(jnp.shape(leaf)), carry)
    if jax.tree.structure(carry) != jax.tree.structure(expected) or given != jax.tree.map(lambda s: s.shape, expected):
        raise ValueError(
            f"{kind}, {what}: the carry does not fit {shape[-1]} sequences of this core (another core's, or another batch "
            f"size's): make it with this core's initialize_carry(rng, ({shape[-1]},))"
        )


def checked(method, time_axes: int | None):
    """``method`` (a core's initialize_carry, step call or unroll) with its inputs checked first."""

    @functools.wraps(method)
    def initialize_carry(self, rng, batch_shape):
        check_batch_shape(type(self).__name__, batch_shape)
        return method(self, rng, batch_shape)

    @functools.wraps(method)
    def stepping(self, carry, x, reset, *args, **kwargs):
        check_inputs(self, carry, x, reset, time_axes)
        return method(self, carry, x, reset, *args, **kwargs)

    return initialize_carry if time_axes is None else stepping


CHECKED = {"initialize_carry": None, "__call__": 0, "unroll": 1}
"""the contract's methods whose inputs every core checks at its boundary (``checked``), with the
time axes of their inputs; a core that overrides one is checked too"""


class MemoryCore(nn.Module):
    """Base class: subclasses implement ``initialize_carry`` and ``step``; resets are handled here.
    The contract's entry points (``CHECKED``) check their inputs, in every subclass that defines them."""

    def __init_subclass__(cls, **kwargs):
        for name, time_axes in CHECKED.items():
            if name in cls.__dict__ and not getattr(cls.__dict__[name], "__isabstractmethod__", False):
                setattr(cls, name, checked(cls.__dict__[name], time_axes))
        super().__init_subclass__(**kwargs)

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


for _name, _time_axes in CHECKED.items():  # the base's own entry points (subclasses wrap theirs)
    setattr(MemoryCore, _name, checked(MemoryCore.__dict__[_name], _time_axes))


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
