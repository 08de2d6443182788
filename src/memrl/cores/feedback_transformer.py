"""Feedback Transformer (Fan et al. 2021, "Addressing Some Limitations of Transformers with Feedback
Memory", Sec. 3): the TLB paper's baseline on copying (Didolkar et al. 2022, Sec. 5, App. 7.6).

At step t every layer attends to one shared memory of the last S = ``memory_length`` steps (never
the current one), each memory vector a learned mix of all layers' outputs at its step, so the top
of the past reaches the bottom of the present:

    m_t = Σ_{l=0..L} softmax(w)_l x_t^l                      (x_t^0 the input, x_t^l layer l's output)
    z   = x^{l-1} + W_o^l Attn(q = W_q^l LN1_l(x^{l-1}), k_j = W_k^l LN1_l(m_j), v_j = W_v^l LN1_l(m_j))
    x^l = z + W_2^l ReLU(W_1^l LN2_l(z) + b_1^l) + b_2^l,     y_t = LN(x_t^L)

over the memories j = t−S..t−1 of the episode; each logit also gets q·p_d, a learned vector per
distance d = 1..S shared by the layers and heads (the official relative positions, ``key_pe``).
Where the paper is silent this follows the official code (facebookresearch/transformer-sequential,
``models/feedback.py`` with ``--feedback --pre-norm``, as its algorithmic tasks ran): pre-norm
layers, attention maps without biases, the attention output and the FFN's output layer initialised
at 1/sqrt(2L) of the usual scale, the layer weights w starting at zero (a uniform mix), positions
drawn from N(0, 1). Differences, named: memory rows an episode has not written are masked (the
official cache starts as zeros that are attended like memories); no dropout (official: 0.2 on the
algorithmic tasks); each layer has its own key and value maps (the official default;
``--share-proj-kv`` is not offered); the input is projected to ``d_model`` (the official model
embeds tokens at that width).

The computation is sequential over steps. A segment of T steps runs in one ``lax.scan`` whose
gradient is written by hand (``feedback_segment``): the forward keeps every layer's keys and values
of the segment in one buffer [S + T, L, B, H, d], and the backward recomputes each step in reverse,
adding its key and value gradients into a buffer of the same size, so memory grows with S + T and
not with T × S, as the carries a scan saves for its gradient would.
"""

from __future__ import annotations

import math

import flax.linen as nn
import jax
import jax.numpy as jnp

from memrl.cores.base import SegmentCore, register
from memrl.cores.sliding_window import slide, window_mask
from memrl.settings import check_positive

LAYER_NORM_EPSILON = 1e-5  # PyTorch's LayerNorm, as the official code


def layer_norm(x, scale, bias):
    mean = x.mean(-1, keepdims=True)
    variance = jnp.square(x - mean).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(variance + LAYER_NORM_EPSILON) * scale + bias


def feedback_step(num_heads: int, params: dict, x, keys, values, mask):
    """One step: input x [B, D], the window's keys and values [S, L, B, H, d] (row S − d at distance
    d), mask [B, S] (true = attend) -> (y [B, D], memory m [B, D], its keys and values [L, B, H, d])."""
    batch, width = x.shape
    head_dim = width // num_heads
    layers = params["layers"]
    h, outputs = x, [x]
    for l, layer in enumerate(layers):
        q = (layer_norm(h, *layer["attention_norm"]) @ layer["query"]).reshape(batch, num_heads, head_dim)
        logits = jnp.einsum("bhd,sbhd->bhs", q, keys[:, l]) + jnp.einsum("bhd,sd->bhs", q, params["position"])
        logits = jnp.where(mask[:, None], logits / math.sqrt(head_dim), -1e30)
        weights = jax.nn.softmax(logits, axis=-1) * mask[:, None]  # a step with nothing to attend reads zeros
        attended = jnp.einsum("bhs,sbhd->bhd", weights, values[:, l]).reshape(batch, width)
        h = h + attended @ layer["output"]
        hidden = jax.nn.relu(layer_norm(h, *layer["mlp_norm"]) @ layer["mlp_in"][0] + layer["mlp_in"][1])
        h = h + hidden @ layer["mlp_out"][0] + layer["mlp_out"][1]
        outputs.append(h)
    memory = jnp.einsum("l,lbd->bd", jax.nn.softmax(params["layer_weights"]), jnp.stack(outputs))
    keys_new, values_new = memory_keys_values(num_heads, params, memory)
    return layer_norm(h, *params["output_norm"]), memory, keys_new, values_new


def memory_keys_values(num_heads: int, params: dict, memory):
    """Every layer's keys and values of memories [..., D] -> two [L, ..., H, d]."""
    head_shape = memory.shape[:-1] + (num_heads, memory.shape[-1] // num_heads)

    def project(name):
        return jnp.stack(
            [
                (layer_norm(memory, *layer["attention_norm"]) @ layer[name]).reshape(head_shape)
                for layer in params["layers"]
            ]
        )

    return project("key"), project("value")


def _window(buffer, t, size):
    return jax.lax.dynamic_slice_in_dim(buffer, t, size, axis=0)


def _segment(num_heads: int, params: dict, xs, keys0, values0, masks):
    """T steps: xs [T, B, D], the keys and values of the S memories before the segment [S, L, B, H, d],
    masks [T, B, S] -> (ys [T, B, D], memories [T, B, D]). Differentiable by JAX as it stands (the
    reference for the hand-written gradient)."""
    (ys, memories), _ = _segment_forward(num_heads, params, xs, keys0, values0, masks)
    return ys, memories


def _segment_forward(num_heads, params, xs, keys0, values0, masks):
    size = keys0.shape[0]
    pad = lambda first: jnp.concatenate([first, jnp.zeros((xs.shape[0],) + first.shape[1:], first.dtype)])

    def body(buffers, inputs):
        keys, values = buffers
        t, x, mask = inputs
        y, memory, k, v = feedback_step(num_heads, params, x, _window(keys, t, size), _window(values, t, size), mask)
        keys = jax.lax.dynamic_update_index_in_dim(keys, k, size + t, axis=0)
        values = jax.lax.dynamic_update_index_in_dim(values, v, size + t, axis=0)
        return (keys, values), (y, memory)

    (keys, values), outputs = jax.lax.scan(body, (pad(keys0), pad(values0)), (jnp.arange(xs.shape[0]), xs, masks))
    return outputs, (params, xs, keys, values, masks)


def _segment_backward(num_heads, residuals, cotangents):
    params, xs, keys, values, masks = residuals
    dys, dmemories = cotangents
    size = keys.shape[0] - xs.shape[0]

    def body(carry, inputs):
        dkeys, dvalues, dparams = carry
        t, x, mask, dy, dmemory = inputs
        step = lambda p, x, k, v: feedback_step(num_heads, p, x, k, v, mask)
        _, pullback = jax.vjp(step, params, x, _window(keys, t, size), _window(values, t, size))
        dk_new, dv_new = dkeys[size + t], dvalues[size + t]  # what later steps sent back to this step's memory
        dp, dx, dk, dv = pullback((dy, dmemory, dk_new, dv_new))
        dkeys = jax.lax.dynamic_update_slice_in_dim(dkeys, _window(dkeys, t, size) + dk, t, axis=0)
        dvalues = jax.lax.dynamic_update_slice_in_dim(dvalues, _window(dvalues, t, size) + dv, t, axis=0)
        return (dkeys, dvalues, jax.tree.map(jnp.add, dparams, dp)), dx

    start = (jnp.zeros_like(keys), jnp.zeros_like(values), jax.tree.map(jnp.zeros_like, params))
    inputs = (jnp.arange(xs.shape[0]), xs, masks, dys, dmemories)
    (dkeys, dvalues, dparams), dxs = jax.lax.scan(body, start, inputs, reverse=True)
    return dparams, dxs, dkeys[:size], dvalues[:size], None


feedback_segment = jax.custom_vjp(_segment, nondiff_argnums=(0,))
feedback_segment.defvjp(_segment_forward, _segment_backward)


def window_masks(valid, resets, size: int):
    """valid [B, S] (the carry's memories), resets [B, T] -> [T, B, S]: the memories each step attends
    to, window row s at distance S − s (its episode's last S steps, itself excluded)."""
    _, mask = window_mask(valid, resets)  # [B, T, S + T], distances 0..S
    steps = resets.shape[1]
    rows = jnp.arange(steps)[:, None] + jnp.arange(size)[None]  # step t's window: rows t..t+S-1, distances S..1
    return jnp.take_along_axis(mask, rows[None], axis=2).transpose(1, 0, 2)


def arrange_parameters(flat: dict, num_layers: int) -> dict:
    """The core's flat parameters (``params["params"]``) in the nested form ``feedback_step`` takes."""

    def layer(l):
        g = lambda name: flat[f"layer_{l}_{name}"]
        return {
            "attention_norm": (g("attention_norm_scale"), g("attention_norm_bias")),
            "query": g("query"),
            "key": g("key"),
            "value": g("value"),
            "output": g("output"),
            "mlp_norm": (g("mlp_norm_scale"), g("mlp_norm_bias")),
            "mlp_in": (g("mlp_in_kernel"), g("mlp_in_bias")),
            "mlp_out": (g("mlp_out_kernel"), g("mlp_out_bias")),
        }

    return {
        "layers": [layer(l) for l in range(num_layers)],
        "position": flat["position"],
        "layer_weights": flat["layer_weights"],
        "output_norm": (flat["output_norm_scale"], flat["output_norm_bias"]),
    }


class FeedbackTransformer(SegmentCore):
    """``num_layers`` pre-norm layers over one shared feedback memory (module docstring)."""

    num_layers: int = 4
    """transformer layers L"""
    d_model: int = 64
    """width of the layers and memories (inputs are projected to it)"""
    num_heads: int = 4
    """attention heads"""
    mlp_dim: int = 128
    """hidden units of each layer's FFN"""
    memory_length: int = 64
    """S: past steps (memories) each layer attends to"""

    def __post_init__(self):
        check_positive(self, "num_layers", "d_model", "num_heads", "mlp_dim", "memory_length")
        if self.d_model % self.num_heads:
            raise ValueError(
                f"FeedbackTransformer.d_model ({self.d_model}) must be divisible by num_heads ({self.num_heads})"
            )
        super().__post_init__()

    def initialize_carry(self, rng, batch_shape):
        return {
            "memory": jnp.zeros((*batch_shape, self.memory_length, self.d_model)),
            "valid": jnp.zeros((*batch_shape, self.memory_length), dtype=bool),
        }

    def declare_parameters(self) -> dict:
        """The parameters by their flat names (``arrange_parameters`` nests them)."""
        width, mlp = self.d_model, self.mlp_dim
        dense = nn.initializers.lecun_normal()
        residual_out = nn.initializers.variance_scaling(1.0 / (2 * self.num_layers), "fan_in", "truncated_normal")
        shapes = {
            "position": (nn.initializers.normal(1.0), (self.memory_length, width // self.num_heads)),
            "layer_weights": (nn.initializers.zeros, (self.num_layers + 1,)),
            "output_norm_scale": (nn.initializers.ones, (width,)),
            "output_norm_bias": (nn.initializers.zeros, (width,)),
        }
        for l in range(self.num_layers):
            shapes |= {
                f"layer_{l}_attention_norm_scale": (nn.initializers.ones, (width,)),
                f"layer_{l}_attention_norm_bias": (nn.initializers.zeros, (width,)),
                **{f"layer_{l}_{name}": (dense, (width, width)) for name in ("query", "key", "value")},
                f"layer_{l}_output": (residual_out, (width, width)),
                f"layer_{l}_mlp_norm_scale": (nn.initializers.ones, (width,)),
                f"layer_{l}_mlp_norm_bias": (nn.initializers.zeros, (width,)),
                f"layer_{l}_mlp_in_kernel": (dense, (width, mlp)),
                f"layer_{l}_mlp_in_bias": (nn.initializers.zeros, (mlp,)),
                f"layer_{l}_mlp_out_kernel": (residual_out, (mlp, width)),
                f"layer_{l}_mlp_out_bias": (nn.initializers.zeros, (width,)),
            }
        return {name: self.param(name, init, shape) for name, (init, shape) in shapes.items()}

    @nn.compact
    def segment(self, carry, xs, resets):
        """T steps: xs [T, B, D_in], resets [T, B] -> (carry, ys [T, B, d_model]); equal to T single steps."""
        resets = resets.T  # [B, T]
        params = arrange_parameters(self.declare_parameters(), self.num_layers)
        h = nn.Dense(self.d_model, name="input_projection")(xs)
        keys0, values0 = memory_keys_values(self.num_heads, params, carry["memory"])  # [L, B, S, H, d]
        to_rows = lambda a: a.transpose(2, 0, 1, 3, 4)  # [S, L, B, H, d]
        masks = window_masks(carry["valid"], resets, self.memory_length)
        ys, memories = feedback_segment(self.num_heads, params, h, to_rows(keys0), to_rows(values0), masks)
        memory, valid = slide(carry["memory"][:, None], carry["valid"], jnp.swapaxes(memories, 0, 1)[:, None], resets)
        return {"memory": memory[:, 0], "valid": valid}, ys


register("feedback-transformer", FeedbackTransformer)
