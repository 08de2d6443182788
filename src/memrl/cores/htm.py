"""Hierarchical Transformer Memory, HTM (Lampinen et al. 2021, "Towards mental time travel",
Sec. 2, App. A.1 and D.2-D.3).

Each of ``num_layers`` layers, for the layer input E at one step:

    Y  = E + MHA(LN([W, E]))                         local causal self-attention over a window W
    Z  = Y + HCA(LN(Y), store)                       top-k chunk attention (nn/hierarchical_attention)
    E' = Z + MLP(LN(Z))                              (``gated``: GTrXL gates instead of the sums)

The writing side, which the official code does not release, follows the paper: each layer keeps
its *input* E in a chunk accumulator; when ``chunk_size`` steps have accumulated, the chunk is
written into a ring store of ``num_chunks`` chunks, keyed by the mean of its rows (with
``chunk_overlap`` > 0 the next chunk starts with the last rows of the previous one). A new chunk
starts at every episode boundary: the unfinished chunk of the ending episode is dropped. The store
is cleared at episode start unless ``cross_episode``; the window always is. The memory is read
before the current step is written, and a step with no written chunk reads nothing.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

from memrl.cores.base import SegmentCore, register, reset_carry
from memrl.cores.sliding_window import slide, window_mask
from memrl.nn.attention import RelativeMultiHeadAttention
from memrl.nn.gating import residual
from memrl.nn.hierarchical_attention import HierarchicalMemoryAttention
from memrl.settings import check_positive

STORE_FIELDS = ("contents", "keys", "store_valid", "pointer")  # what ``cross_episode`` keeps at a reset


class HTMLayer(nn.Module):
    """One memory layer for new steps ``x`` [B, Q, D]: window self-attention over ``window`` [B, W, D]
    and themselves (distances [Q, W + Q], window_mask [B, Q, W + Q]), chunk attention over the
    chunks ``keys`` [B, E, D] / ``contents`` [B, E, C, D] that store_mask [B, Q, E] lets each step
    read, and the MLP."""

    d_model: int
    num_heads: int
    mlp_dim: int
    k: int
    gated: bool
    gate_bias: float

    @nn.compact
    def __call__(self, x, window, distances, window_mask, keys, contents, store_mask):
        context = nn.LayerNorm(name="attention_norm")(jnp.concatenate([window, x], axis=1))
        attended = RelativeMultiHeadAttention(self.num_heads, self.d_model, name="attention")(
            context[:, window.shape[1] :], context, distances, window_mask
        )
        y = residual(self.gated, self.gate_bias, "attention_gate")(x, attended)
        query = nn.LayerNorm(name="memory_norm")(y)
        read = HierarchicalMemoryAttention(self.d_model, self.num_heads, self.k, name="memory_attention")(
            query, keys, contents, store_mask
        )
        read = jnp.where(store_mask.any(axis=-1, keepdims=True), read, 0.0)
        z = residual(self.gated, self.gate_bias, "memory_gate")(y, read)
        hidden = nn.Dense(self.mlp_dim, name="mlp_in")(nn.LayerNorm(name="mlp_norm")(z))
        return residual(self.gated, self.gate_bias, "mlp_gate")(
            z, nn.Dense(self.d_model, name="mlp_out")(nn.relu(hidden))
        )


def write_schedule(count, pointer, resets, chunk_size: int, overlap: int, num_chunks: int, cross_episode: bool):
    """The chunk writes of a segment, from integers alone: count [B] rows in the open chunk and
    pointer [B] at the start, resets [B, T]. Rows are numbered in [the open chunk's C rows, the
    segment's T steps, one zero row]. Returns, per step t: whether a chunk is full after t
    (written [B, T]), its slot [B, T] and its rows [B, T, C]; and the open chunk's rows, count and
    pointer after the segment."""
    steps = resets.shape[1]
    zero_row = chunk_size + steps
    positions = jnp.arange(chunk_size)

    def body(state, inputs):
        count, pointer, rows = state
        t, reset = inputs
        count = jnp.where(reset, 0, count)
        rows = jnp.where(reset[:, None], zero_row, rows)
        if not cross_episode:
            pointer = jnp.where(reset, 0, pointer)
        rows = jnp.where(positions == count[:, None], chunk_size + t, rows)
        full = count + 1 == chunk_size
        carried_over = jnp.where(positions < overlap, jnp.roll(rows, overlap, axis=1), zero_row)
        written = (full, pointer, rows)
        state = (
            jnp.where(full, overlap, count + 1),
            jnp.where(full, (pointer + 1) % num_chunks, pointer),
            jnp.where(full[:, None], carried_over, rows),
        )
        return state, written

    open_rows = jnp.broadcast_to(positions, (count.shape[0], chunk_size))
    (count, pointer, open_rows), (written, slot, rows) = jax.lax.scan(
        body, (count, pointer, open_rows), (jnp.arange(steps), resets.T)
    )
    return written.T, slot.T, jnp.swapaxes(rows, 0, 1), open_rows, count, pointer


class HierarchicalTransformerMemory(SegmentCore):
    """Input projection to ``d_model``, then ``num_layers`` HTM layers.

    Carry (B = batch, L = layers, W = window, N = num_chunks, C = chunk_size, D = d_model):
    window [B, L, W, D] and window_valid [B, W]; contents [B, L, N, C, D], keys [B, L, N, D] and
    store_valid [B, N]; accumulator [B, L, C, D], count [B] (rows in the open chunk) and pointer
    [B] (the next store slot; the oldest chunk is overwritten when the store is full)."""

    num_layers: int = 4
    """HTM layers"""
    d_model: int = 512
    """width of the layers (inputs are projected to it)"""
    num_heads: int = 8
    """attention heads"""
    mlp_dim: int = 1024
    """hidden units of each layer's MLP"""
    window: int = 16
    """recent steps each layer attends to directly"""
    chunk_size: int = 16
    """steps summarised into one stored chunk"""
    num_chunks: int = 64
    """chunks the store holds (the oldest is overwritten when full)"""
    k: int = 8
    """chunks each query reads (top-k by key similarity)"""
    chunk_overlap: int = 0
    """steps shared by consecutive chunks"""
    cross_episode: bool = False
    """keep the store across episode resets"""
    gated: bool = False
    """GRU-type gating of the residuals"""
    gate_bias: float = 2.0
    """initial bias of the gates towards the identity"""

    def __post_init__(self):
        check_positive(self, "d_model", "num_heads", "num_layers", "window", "chunk_size", "num_chunks")
        if self.d_model % self.num_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by num_heads ({self.num_heads})")
        if not 1 <= self.k <= self.num_chunks:
            raise ValueError(f"k ({self.k}) must be between 1 and num_chunks ({self.num_chunks})")
        if not 0 <= self.chunk_overlap < self.chunk_size:
            raise ValueError(f"chunk_overlap ({self.chunk_overlap}) must be in [0, chunk_size={self.chunk_size})")
        super().__post_init__()

    def initialize_carry(self, rng, batch_shape):
        layers, d = self.num_layers, self.d_model
        return {
            "window": jnp.zeros((*batch_shape, layers, self.window, d)),
            "window_valid": jnp.zeros((*batch_shape, self.window), bool),
            "contents": jnp.zeros((*batch_shape, layers, self.num_chunks, self.chunk_size, d)),
            "keys": jnp.zeros((*batch_shape, layers, self.num_chunks, d)),
            "store_valid": jnp.zeros((*batch_shape, self.num_chunks), bool),
            "accumulator": jnp.zeros((*batch_shape, layers, self.chunk_size, d)),
            "count": jnp.zeros(batch_shape, jnp.int32),
            "pointer": jnp.zeros(batch_shape, jnp.int32),
        }

    def __call__(self, carry, x, reset):
        initial = self.initialize_carry(None, reset.shape)
        kept = STORE_FIELDS if self.cross_episode else ()
        carry = {
            name: value if name in kept else reset_carry(value, initial[name], reset) for name, value in carry.items()
        }
        return self.step(carry, x, reset)

    @nn.compact
    def segment(self, carry, xs, resets):
        """T steps at once: xs [T, B, D_in], resets [T, B] -> (carry, ys [T, B, d_model]), equal to T
        single steps. Step t reads the store as it was before its own write: the chunks of the
        starting store and those written at steps before t (N + T candidates), less those
        overwritten since and, unless ``cross_episode``, those of earlier episodes."""
        steps = xs.shape[0]
        resets = resets.T  # [B, T]
        episode = jnp.cumsum(resets, axis=1)  # resets so far, the step's own included
        time = jnp.arange(steps)
        distances, window_attention_mask = window_mask(carry["window_valid"], resets)

        # the store: candidates [N old slots, T chunks written after steps 0..T-1]
        written, slot, rows, open_rows, count, pointer = write_schedule(
            carry["count"],
            carry["pointer"],
            resets,
            self.chunk_size,
            self.chunk_overlap,
            self.num_chunks,
            self.cross_episode,
        )
        candidate_slot = jnp.concatenate(
            [jnp.broadcast_to(jnp.arange(self.num_chunks), carry["store_valid"].shape), slot], axis=1
        )
        candidate_time = jnp.concatenate(
            [jnp.full(carry["store_valid"].shape, -1), jnp.broadcast_to(time, resets.shape)], axis=1
        )
        candidate_written = jnp.concatenate([carry["store_valid"], written], axis=1)
        candidate_episode = jnp.concatenate(
            [jnp.zeros_like(carry["store_valid"], dtype=episode.dtype), episode], axis=1
        )

        # the first step after each candidate whose chunk goes to the candidate's slot (``steps``: none)
        same_slot = (candidate_slot[:, :, None] == slot[:, None, :]) & written[:, None, :]  # [B, E, T]
        overwritten_at = jnp.min(
            jnp.where(same_slot & (time > candidate_time[..., None]), time, steps), axis=-1
        )  # [B, E]

        def readable(query_time, query_episode):
            """[B, Q, N + T]: the candidates the store holds before the writes of ``query_time`` [Q]."""
            before = candidate_time[:, None] < query_time[None, :, None]  # [B, Q, E]
            overwritten = (
                overwritten_at[:, None] < query_time[None, :, None]
            )  # overwritten after the candidate, before the query
            same_episode = True if self.cross_episode else candidate_episode[:, None] == query_episode[:, :, None]
            return candidate_written[:, None] & before & ~overwritten & same_episode

        readable_in_segment = self.num_chunks + steps - 1  # the last step's chunk is read only after the segment
        store_mask = readable(time, episode)[..., :readable_in_segment]
        final = readable(jnp.array([steps]), episode[:, -1:])[:, 0]  # [B, N + T]: the store after the segment
        store_valid = (final[..., None] & (candidate_slot[..., None] == jnp.arange(self.num_chunks))).any(axis=1)
        # slots whose chunk is one written in this segment take it; the rest keep theirs (or zeros when cleared)
        target = jnp.where(final[:, self.num_chunks :], slot, self.num_chunks)  # [B, T]; num_chunks = no slot
        cleared = resets.any(axis=1) & (not self.cross_episode)

        def updated_store(old, new):
            """old [B, L, N, ...], new [B, L, T, ...] -> the store after the segment, all layers in
            one scatter (the store is the carry's bulk: no per-layer copies of it)."""
            base = jnp.where(cleared.reshape((-1,) + (1,) * (old.ndim - 1)), 0.0, old)
            return jax.vmap(lambda base, index, rows: base.at[:, index].set(rows, mode="drop"))(base, target, new)

        h = nn.Dense(self.d_model, name="input_projection")(jnp.swapaxes(xs, 0, 1))  # [B, T, D]
        layer_inputs, written_contents, written_keys, accumulators = [], [], [], []
        for layer in range(self.num_layers):
            layer_inputs.append(h)
            sources = jnp.concatenate(
                [carry["accumulator"][:, layer], h, jnp.zeros_like(h[:, :1])], axis=1
            )  # [B, C + T + 1, D]
            new_contents = jax.vmap(lambda source, index: source[index])(sources, rows)  # [B, T, C, D]
            new_keys = new_contents.mean(axis=2)
            layer_contents, layer_keys = carry["contents"][:, layer], carry["keys"][:, layer]
            if steps > 1:
                layer_contents = jnp.concatenate([layer_contents, new_contents[:, :-1]], axis=1)
                layer_keys = jnp.concatenate([layer_keys, new_keys[:, :-1]], axis=1)
            h = HTMLayer(
                self.d_model, self.num_heads, self.mlp_dim, self.k, self.gated, self.gate_bias, name=f"layer_{layer}"
            )(h, carry["window"][:, layer], distances, window_attention_mask, layer_keys, layer_contents, store_mask)
            written_contents.append(new_contents)
            written_keys.append(new_keys)
            accumulators.append(jax.vmap(lambda source, index: source[index])(sources, open_rows))

        window, window_valid = slide(carry["window"], carry["window_valid"], jnp.stack(layer_inputs, axis=1), resets)
        new_carry = {
            "window": window,
            "window_valid": window_valid,
            "contents": updated_store(carry["contents"], jnp.stack(written_contents, axis=1)),
            "keys": updated_store(carry["keys"], jnp.stack(written_keys, axis=1)),
            "store_valid": store_valid,
            "accumulator": jnp.stack(accumulators, axis=1),
            "count": count,
            "pointer": pointer,
        }
        return new_carry, jnp.swapaxes(h, 0, 1)


register(
    "htm",
    HierarchicalTransformerMemory,
    small=dict(num_layers=1, d_model=32, num_heads=2, mlp_dim=64, window=8, chunk_size=8, num_chunks=16, k=2),
)
