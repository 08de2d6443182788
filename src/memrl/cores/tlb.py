"""Temporal Latent Bottleneck (Didolkar et al. 2022, Sec. 2, Algorithm 1; LRA's ``transformer_tlb``).

The input is cut into chunks of ``chunk_size`` K steps. The perceptual module (fast stream) is a
Transformer over the chunk: ``num_reads`` times, R = ``self_per_read`` self-attention layers and
then one cross-attention layer that reads the bottleneck state I (top-down, Eq. 3):

    X = X + Attn(LN(X), LN(X), LN(X)),  X = X + FFN(LN(X))          self-attention layer
    X = X + Attn(LN(X), LN(I), LN(I)),  X = X + FFN(LN(X))          cross-attention read (Eq. 3)

When a chunk is complete, the N = ``num_state`` state vectors are updated from the chunk's outputs
X̄ (Eq. 4), ``num_updates`` times:

    Ī = I + Attn(LN(I), LN(X̄), LN(X̄)),   I' = Ī + FFN(LN(Ī))

Where the paper is silent this follows LRA's ``transformer_tlb``: the state starts at zeros; a
fixed sinusoidal encoding of the slot index is added to the state before each chunk's reads and
update (and so stays in the state, as there); the chunk's steps get a sinusoidal encoding of their
position within the chunk (LRA interleaves the sines and cosines, memrl concatenates them: a
permutation of the features); attention has no biases; the FFN is Dense-GELU-Dense; no dropout
(LRA: 0.1). By default the core is causal within a chunk, the form the paper's autoregressive
uses (BabyAI, decision transformer) need: step t sees the chunk's steps up to t and the state from
before the chunk, and outputs its last layer. ``causal=False`` lets every step of a chunk see the
whole chunk, as the paper's ViT + TLB and LRA's classifier do; it has the sequence form only.

Two forms, equal on the same inputs (a test shows it):
- streaming (``step``, ``unroll``): the carry holds the state, each self-attention layer's inputs of
  the partial chunk, the chunk's outputs so far and the position in the chunk; a reset starts a new
  chunk from the zero state anywhere;
- sequence (``sequence``): whole chunks at once (one attention over K steps per layer), a
  ``lax.scan`` over the T/K chunks; for fresh sequences (reset at the first step only).

``num_state=0`` removes the bottleneck (no reads, no state): the ``transformer`` baseline, a causal
Transformer over blocks of ``chunk_size`` steps (the whole sequence when it fits; with
``causal=False`` a bidirectional encoder, ViT's form on a sequence of patches). ``state_reads``
sets Table 2's ablations (Sec. 3.1): "top-down" is the model above; "none" keeps the state but drops
the reads ("no past info": the perceptual module sees nothing before its chunk, the state still
summarises every chunk); "own-layer" gives every read its own state, updated (Eq. 4, its own
layers) from the chunk's activations at that read's input, so each layer reads its own past and no
higher layer's ("no top-down conditioning": "a separate temporal latent bottleneck module at every
layer"; sequence form only). The carry's state is then [B, num_reads, N, D].
"""

from __future__ import annotations

import flax.linen as nn
import jax.numpy as jnp

from memrl.cores.base import MemoryCore, register
from memrl.nn.attention import sinusoid_encoding
from memrl.settings import check_positive

STATE_READS = ("top-down", "none", "own-layer")


class AttentionBlock(nn.Module):
    """Pre-LN attention of ``queries`` [B, Q, D] over ``keys`` [B, S, D] (``mask`` [B, Q, S], true =
    may attend) with a residual, then a pre-LN FFN with a residual. Self-attention normalises
    queries and keys with one LayerNorm, cross-attention with one each."""

    num_heads: int
    mlp_dim: int
    cross: bool

    @nn.compact
    def __call__(self, queries, keys, mask=None):
        norm = nn.LayerNorm(name="query_norm")
        keys = (nn.LayerNorm(name="key_norm") if self.cross else norm)(keys)
        attended = nn.MultiHeadDotProductAttention(
            num_heads=self.num_heads, use_bias=False, kernel_init=nn.initializers.xavier_uniform(), name="attention"
        )(norm(queries), keys, mask=None if mask is None else mask[:, None])
        x = queries + attended
        hidden = nn.gelu(nn.Dense(self.mlp_dim, name="mlp_in")(nn.LayerNorm(name="mlp_norm")(x)))
        return x + nn.Dense(x.shape[-1], name="mlp_out")(hidden)


class TemporalLatentBottleneck(MemoryCore):
    """Perceptual Transformer over chunks with a slow bottleneck state (module docstring)."""

    chunk_size: int = 10
    """K: steps per chunk; the state updates once per chunk"""
    num_state: int = 8
    """N: bottleneck state vectors (0: no bottleneck, the Transformer baseline)"""
    d_model: int = 64
    """width of every layer and state vector (inputs are projected to it)"""
    num_heads: int = 4
    """attention heads"""
    mlp_dim: int = 128
    """hidden units of each FFN"""
    num_reads: int = 1
    """cross-attention reads from the state per chunk, each after ``self_per_read`` self-attention layers"""
    self_per_read: int = 2
    """R: self-attention layers per read"""
    num_updates: int = 1
    """cross-attention layers of the state update"""
    state_reads: str = "top-down"
    """what the perceptual module reads (Table 2): "top-down" (the state), "none" (nothing: no past
    info) or "own-layer" (each read its own state: no top-down conditioning; sequence form only)"""
    causal: bool = True
    """attend to the chunk's earlier steps only (False: the whole chunk, ViT's form; sequence form only)"""

    def __post_init__(self):
        check_positive(
            self, "chunk_size", "d_model", "num_heads", "mlp_dim", "num_reads", "self_per_read", "num_updates"
        )
        if not isinstance(self.num_state, int) or self.num_state < 0:
            raise ValueError(
                f"TemporalLatentBottleneck.num_state must be a non-negative integer, got {self.num_state!r}"
            )
        if self.state_reads not in STATE_READS:
            raise ValueError(
                f"TemporalLatentBottleneck.state_reads must be one of {STATE_READS}, got {self.state_reads!r}"
            )
        if self.d_model % self.num_heads or self.d_model % 2:
            raise ValueError(
                f"TemporalLatentBottleneck.d_model must be even and divisible by num_heads ({self.num_heads}), got {self.d_model}"
            )
        super().__post_init__()

    @property
    def reads_state(self) -> bool:
        return self.state_reads != "none" and self.num_state > 0

    @property
    def own_layer_states(self) -> bool:
        return self.state_reads == "own-layer" and self.num_state > 0

    @property
    def num_self_layers(self) -> int:
        return self.num_reads * self.self_per_read

    def setup(self):
        self.input_projection = nn.Dense(self.d_model)
        self.self_layers = [
            AttentionBlock(self.num_heads, self.mlp_dim, cross=False) for _ in range(self.num_self_layers)
        ]
        self.read_layers = [
            AttentionBlock(self.num_heads, self.mlp_dim, cross=True)
            for _ in range(self.num_reads if self.reads_state else 0)
        ]
        states = self.num_reads if self.own_layer_states else 1
        self.update_layers = [
            AttentionBlock(self.num_heads, self.mlp_dim, cross=True)
            for _ in range(states * self.num_updates if self.num_state else 0)
        ]

    def initialize_carry(self, rng, batch_shape):
        per_read = (self.num_reads,) if self.own_layer_states else ()
        return {
            "state": jnp.zeros((*batch_shape, *per_read, self.num_state, self.d_model)),
            "inputs": jnp.zeros((*batch_shape, self.num_self_layers, self.chunk_size, self.d_model)),
            "outputs": jnp.zeros((*batch_shape, self.chunk_size, self.d_model)),
            "position": jnp.zeros(batch_shape, jnp.int32),
        }

    def state_with_positions(self, state):
        return state + sinusoid_encoding(jnp.arange(self.num_state), self.d_model)

    def perceive(self, h, state, self_keys):
        """The perceptual module on chunk steps ``h`` [B, Q, D]: layer j's self-attention reads
        ``self_keys(j, its input)`` -> (keys [B, S, D], mask [B, Q, S]); returns (outputs, the
        inputs of each self-attention layer, the inputs of each read)."""
        layer_inputs, read_inputs = [], []
        for read in range(self.num_reads):
            for r in range(self.self_per_read):
                j = read * self.self_per_read + r
                layer_inputs.append(h)
                keys, mask = self_keys(j, h)
                h = self.self_layers[j](h, keys, mask)
            read_inputs.append(h)
            if self.reads_state:
                h = self.read_layers[read](h, state[:, read] if self.own_layer_states else state)
        return h, layer_inputs, read_inputs

    def update_state(self, state, chunk_outputs, read: int = 0):
        """Eq. 4 on the state (with its slot encoding) and a complete chunk's outputs [B, K, D], by
        the update layers of state ``read`` (own-layer states: one state per read)."""
        for layer in self.update_layers[read * self.num_updates : (read + 1) * self.num_updates]:
            state = layer(state, chunk_outputs)
        return state

    def update_own_layer_states(self, states, read_inputs):
        """Eq. 4 on each read's state [B, num_reads, N, D] from the chunk's activations at that read."""
        return jnp.stack(
            [self.update_state(states[:, read], chunk, read) for read, chunk in enumerate(read_inputs)], axis=1
        )

    def step(self, carry, x, reset):
        if not self.causal:
            raise ValueError(
                "a TemporalLatentBottleneck with causal=False sees whole chunks and has no streaming form (step, unroll); use sequence"
            )
        if self.own_layer_states:
            raise ValueError(
                'a TemporalLatentBottleneck with state_reads="own-layer" has no streaming form (step, unroll); use sequence'
            )
        position = carry["position"]
        rows = jnp.arange(position.shape[0])
        state = self.state_with_positions(carry["state"])
        h = self.input_projection(x) + sinusoid_encoding(position, self.d_model)
        mask = (jnp.arange(self.chunk_size)[None] <= position[:, None])[:, None]  # [B, 1, K]
        buffers = []

        def self_keys(j, h):
            buffers.append(carry["inputs"][:, j].at[rows, position].set(h[:, 0]))
            return buffers[-1], mask

        y, _, _ = self.perceive(h[:, None], state, self_keys)
        outputs = carry["outputs"].at[rows, position].set(y[:, 0])
        complete = position == self.chunk_size - 1
        if self.num_state:
            if self.is_initializing():
                updated = self.update_state(state, outputs)
            else:  # skipped when no row completes a chunk (the common case when acting)
                updated = nn.cond(
                    jnp.any(complete), TemporalLatentBottleneck.update_state, lambda _, s, __: s, self, state, outputs
                )
            state = jnp.where(complete[:, None, None], updated, carry["state"])
        else:
            state = carry["state"]
        keep = ~complete[:, None, None]
        carry = {
            "state": state,
            "inputs": jnp.stack(buffers, axis=1) * keep[:, None],
            "outputs": outputs * keep,
            "position": jnp.where(complete, 0, position + 1),
        }
        return carry, y[:, 0]

    def sequence(self, xs):
        """The sequence form on fresh sequences xs [T, B, D_in] (one episode each): chunk by chunk,
        all of a chunk's steps at once -> (carry, ys [T, B, d_model]), equal to ``unroll`` from the
        initial carry with a reset at the first step only."""
        length, batch = xs.shape[:2]
        k = self.chunk_size
        chunks = -(-length // k)
        padded = jnp.pad(xs, ((0, chunks * k - length),) + ((0, 0),) * (xs.ndim - 1))
        h = self.input_projection(padded) + sinusoid_encoding(jnp.arange(chunks * k) % k, self.d_model)[:, None]
        h = jnp.swapaxes(h.reshape(chunks, k, batch, self.d_model), 1, 2)  # [chunks, B, K, D]
        complete = jnp.arange(chunks) < length // k
        steps = jnp.where(complete, k, length % k)  # real steps per chunk: a non-causal chunk must not see the padding
        visible = jnp.tril(jnp.ones((k, k), bool)) if self.causal else jnp.arange(k) < steps[:, None, None, None]
        visible = jnp.broadcast_to(visible, (chunks, batch, k, k))

        def chunk_step(module, state, inputs):
            h, complete, visible = inputs
            read = module.state_with_positions(state)
            y, layer_inputs, read_inputs = module.perceive(h, read, lambda j, h: (h, visible))
            if module.own_layer_states:
                state = jnp.where(complete, module.update_own_layer_states(read, read_inputs), state)
            elif module.num_state:
                state = jnp.where(complete, module.update_state(read, y), state)
            return state, (y, jnp.stack(layer_inputs, axis=1))

        scan = nn.scan(chunk_step, variable_broadcast="params", split_rngs={"params": False}, in_axes=0, out_axes=0)
        state, (chunk_ys, layer_inputs) = scan(
            self, self.initialize_carry(None, (batch,))["state"], (h, complete, visible)
        )
        partial = (jnp.arange(k) < length % k)[:, None]  # the last chunk's steps, if it is incomplete
        carry = {
            "state": state,
            "inputs": layer_inputs[-1] * partial,
            "outputs": chunk_ys[-1] * partial,
            "position": jnp.full((batch,), length % k, jnp.int32),
        }
        ys = jnp.swapaxes(chunk_ys, 1, 2).reshape(chunks * k, batch, self.d_model)[:length]
        return carry, ys


register("tlb", TemporalLatentBottleneck)
register("transformer", TemporalLatentBottleneck, fixed=dict(num_state=0), defaults=dict(chunk_size=128))
