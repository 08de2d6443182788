"""Differentiable Neural Computer (Graves et al. 2016; as ``deepmind/dnc``), the baseline of the
RMC paper (Santoro et al. 2018) and of AMRL (Beck et al. 2020).

    h_t = LSTM([x_t; r_{t-1}])                                  controller, clipped to ±clip_value
    interface = Linear(h_t): read keys/strengths, write key/strength, erase (σ) and write vectors,
                free gates (σ), allocation and write gates (σ), read modes (softmax over
                backward, forward, content per write head)
    u_t = usage from u_{t-1}, the previous write weights (stop-gradient) and free gates
    w^w = g^w (g^a a(u_t) + (1 − g^a) C(M_{t-1}, k^w, β^w))   allocation sequential over write heads
    M_t = M_{t-1} ⊙ (1 − w^w eᵀ) + w^w vᵀ                       erase, then add
    L_t, p_t                                                    temporal links (zero diagonal), precedence
    w^r = π_b · Lᵀ w^r_{t-1} + π_f · L w^r_{t-1} + π_c · C(M_t, k^r, β^r)   reads after the write
    r_t = w^r M_t
    y_t = clip(Linear([h_t; r_t]), ±clip_value)

Strengths go through softplus (the official code's choice, not the paper's oneplus). The carry
starts at zeros. The addressing functions are in ``dnc_addressing``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp

from memrl.cores import dnc_addressing as addressing
from memrl.cores.base import MemoryCore, register
from memrl.cores.lstm import LSTMCellFused, check_weight_init, lstm_zeros
from memrl.settings import check_positive


class DNCState(NamedTuple):
    controller: tuple  # per controller layer, the LSTM's (c, h)
    read_words: jax.Array  # [B, R, W]
    memory: jax.Array  # [B, N, W]
    read_weights: jax.Array  # [B, R, N]
    write_weights: jax.Array  # [B, H, N]
    link: jax.Array  # [B, H, N, N]
    precedence: jax.Array  # [B, H, N]
    usage: jax.Array  # [B, N]


class DNC(MemoryCore):
    """DNC (module docstring); output [B, output_size]."""

    memory_size: int = 16
    """memory slots N (deepmind/dnc train.py: 16)"""
    word_size: int = 16
    """width W of each slot (train.py: 16)"""
    num_reads: int = 4
    """read heads (train.py: 4)"""
    num_writes: int = 1
    """write heads (train.py: 1)"""
    hidden: int = 64
    """units of each controller LSTM layer (train.py: 64)"""
    controller_layers: int = 1
    """stacked LSTM layers in the controller (train.py: 1; the RMC paper's DNC: 2)"""
    output_size: int = 64
    """width of the output (the Linear over the controller output and the reads)"""
    clip_value: float = 20.0
    """clip of the controller state and output and of the final output (train.py: 20; 0 = none)"""
    controller_weight_init: str = "fused"
    """the controller LSTMs' ``weight_init`` (cores/lstm.py): "fused" (sonnet's, default) or "split" (per part)"""

    def __post_init__(self):
        check_positive(
            self, "memory_size", "word_size", "num_reads", "num_writes", "hidden", "controller_layers", "output_size"
        )
        check_weight_init(self, "controller_weight_init")
        if self.clip_value < 0:
            raise ValueError(f"dnc clip_value must be >= 0 (0: no clipping), got {self.clip_value}")
        super().__post_init__()

    def initialize_carry(self, rng, batch_shape):
        n, w, r, h = self.memory_size, self.word_size, self.num_reads, self.num_writes
        zeros = lambda *shape: jnp.zeros((*batch_shape, *shape))
        return DNCState(
            controller=tuple(lstm_zeros(batch_shape, self.hidden) for _ in range(self.controller_layers)),
            read_words=zeros(r, w),
            memory=zeros(n, w),
            read_weights=zeros(r, n),
            write_weights=zeros(h, n),
            link=zeros(h, n, n),
            precedence=zeros(h, n),
            usage=zeros(n),
        )

    def _clip(self, x):
        return jnp.clip(x, -self.clip_value, self.clip_value) if self.clip_value > 0 else x

    @nn.compact
    def step(self, state: DNCState, x, reset):
        batch = x.shape[0]
        h = jnp.concatenate([x.reshape(batch, -1), state.read_words.reshape(batch, -1)], axis=-1)
        controller = []
        for layer in range(self.controller_layers):
            # each layer reads the unclipped output of the one below; the state is clipped after
            # the whole stack, as the official core clips its controller's output and state
            (c, h), _ = LSTMCellFused(self.hidden, self.controller_weight_init, name=f"controller_{layer}")(
                state.controller[layer], h
            )
            controller.append((self._clip(c), self._clip(h)))
        h = controller[-1][1]
        interface = self._interface(h)
        usage = addressing.usage_after_write_and_read(
            state.usage, state.write_weights, interface["free_gates"], state.read_weights
        )
        write_weights = self._write_weights(interface, state.memory, usage)
        memory = addressing.erase_and_write(
            state.memory, write_weights, interface["erase_vectors"], interface["write_vectors"]
        )
        link, precedence = addressing.link_and_precedence(state.link, state.precedence, write_weights)
        read_weights = self._read_weights(interface, memory, state.read_weights, link)
        read_words = jnp.einsum("brn,bnw->brw", read_weights, memory)
        output = self._clip(
            nn.Dense(self.output_size, name="output")(jnp.concatenate([h, read_words.reshape(batch, -1)], axis=-1))
        )
        return DNCState(
            tuple(controller), read_words, memory, read_weights, write_weights, link, precedence, usage
        ), output

    @nn.nowrap
    def _interface(self, h):
        """The controller output mapped to the memory's read and write instructions."""
        r, hw, w = self.num_reads, self.num_writes, self.word_size
        linear = lambda name, *shape: nn.Dense(math.prod(shape), name=name)(h).reshape(h.shape[0], *shape)
        return dict(
            read_keys=linear("read_keys", r, w),
            read_strengths=linear("read_strengths", r),
            write_keys=linear("write_keys", hw, w),
            write_strengths=linear("write_strengths", hw),
            erase_vectors=jax.nn.sigmoid(linear("erase_vectors", hw, w)),
            write_vectors=linear("write_vectors", hw, w),
            free_gates=jax.nn.sigmoid(linear("free_gates", r)),
            allocation_gates=jax.nn.sigmoid(linear("allocation_gates", hw)),
            write_gates=jax.nn.sigmoid(linear("write_gates", hw)),
            read_modes=jax.nn.softmax(linear("read_modes", r, 1 + 2 * hw), axis=-1),
        )

    @staticmethod
    def _write_weights(interface, memory, usage):
        content = addressing.content_weights(memory, interface["write_keys"], interface["write_strengths"])
        allocation_gate, write_gate = interface["allocation_gates"][..., None], interface["write_gates"][..., None]
        allocated = addressing.write_allocation_weights(usage, interface["allocation_gates"] * interface["write_gates"])
        return write_gate * (allocation_gate * allocated + (1.0 - allocation_gate) * content)

    @nn.nowrap
    def _read_weights(self, interface, memory, prev_read_weights, link):
        hw = self.num_writes
        content = addressing.content_weights(memory, interface["read_keys"], interface["read_strengths"])
        forward = addressing.directional_read_weights(link, prev_read_weights, forward=True)
        backward = addressing.directional_read_weights(link, prev_read_weights, forward=False)
        modes = interface["read_modes"]
        backward_mode, forward_mode, content_mode = modes[..., :hw], modes[..., hw : 2 * hw], modes[..., 2 * hw]
        return (
            content_mode[..., None] * content
            + jnp.sum(forward_mode[..., None] * forward, axis=2)
            + jnp.sum(backward_mode[..., None] * backward, axis=2)
        )


register("dnc", DNC)
