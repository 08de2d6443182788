"""The Feedback Transformer against a NumPy transcription of Fan et al. (2021), Sec. 3, and its
hand-written segment gradient against JAX's derivative of the same scan."""

import jax
import jax.numpy as jnp
import numpy as np

from memrl import cores
from memrl.cores.feedback_transformer import _segment, arrange_parameters, feedback_segment, window_masks

L, D, H, F, S, B = 2, 8, 2, 12, 3, 4


def numpy_layer_norm(x, scale, bias):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * scale + bias


def numpy_step(p, x, memory, valid):
    """One step from the equations: x [B, D_in], memory [B, S, D] (oldest first), valid [B, S]."""
    softmax = lambda z: (
        np.exp(z - z.max(-1, keepdims=True)) / np.exp(z - z.max(-1, keepdims=True)).sum(-1, keepdims=True)
    )
    h = x @ p["input_projection"]["kernel"] + p["input_projection"]["bias"]
    d = D // H
    outputs = [h]
    for l in range(L):
        g = lambda name: np.asarray(p[f"layer_{l}_{name}"])
        norm = lambda v: numpy_layer_norm(v, g("attention_norm_scale"), g("attention_norm_bias"))
        attended = np.zeros((B, D))
        for b in range(B):
            for head in range(H):
                cols = slice(head * d, (head + 1) * d)
                q = (norm(h[b]) @ g("query"))[cols]
                k = (norm(memory[b]) @ g("key"))[:, cols]  # [S, d]
                v = (norm(memory[b]) @ g("value"))[:, cols]
                logits = (k @ q + np.asarray(p["position"]) @ q) / np.sqrt(d)
                seen = valid[b]
                if seen.any():
                    w = softmax(logits[seen])
                    attended[b, cols] = w @ v[seen]
        h = h + attended @ g("output")
        z = numpy_layer_norm(h, g("mlp_norm_scale"), g("mlp_norm_bias"))
        h = h + np.maximum(z @ g("mlp_in_kernel") + g("mlp_in_bias"), 0) @ g("mlp_out_kernel") + g("mlp_out_bias")
        outputs.append(h)
    mix = softmax(np.asarray(p["layer_weights"]))
    m = np.tensordot(mix, np.stack(outputs), axes=1)
    return numpy_layer_norm(h, np.asarray(p["output_norm_scale"]), np.asarray(p["output_norm_bias"])), m


def test_one_step_matches_the_numpy_transcription():
    core = cores.make("feedback-transformer", num_layers=L, d_model=D, num_heads=H, mlp_dim=F, memory_length=S)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(B, 5)).astype(np.float32)
    carry = {
        "memory": jnp.asarray(rng.normal(size=(B, S, D)), jnp.float32),
        "valid": jnp.array([[1, 1, 1], [0, 1, 1], [0, 0, 1], [0, 0, 0]], bool),
    }
    params = core.init(jax.random.PRNGKey(0), carry, x, jnp.zeros((B,), bool))
    # non-trivial layer weights and positions, so the test sees the mix and the distances
    params = jax.tree_util.tree_map_with_path(
        lambda path, v: (
            jnp.asarray(rng.normal(size=v.shape), v.dtype) if path[-1].key in ("layer_weights", "position") else v
        ),
        params,
    )
    new_carry, y = core.apply(params, carry, x, jnp.zeros((B,), bool))
    expected_y, expected_m = numpy_step(params["params"], x, np.asarray(carry["memory"]), np.asarray(carry["valid"]))
    np.testing.assert_allclose(y, expected_y, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(
        new_carry["memory"][:, -1], expected_m, rtol=1e-4, atol=1e-4
    )  # the new memory is the newest row
    np.testing.assert_allclose(new_carry["memory"][:, :-1], carry["memory"][:, 1:])
    np.testing.assert_array_equal(
        new_carry["valid"], jnp.concatenate([carry["valid"][:, 1:], jnp.ones((B, 1), bool)], axis=1)
    )


def test_hand_written_segment_gradient_equals_jax_derivative():
    core = cores.make("feedback-transformer", num_layers=L, d_model=D, num_heads=H, mlp_dim=F, memory_length=S)
    T = 7
    rng = np.random.default_rng(1)
    carry = {
        "memory": jnp.asarray(rng.normal(size=(B, S, D)), jnp.float32),
        "valid": jnp.asarray(rng.random((B, S)) < 0.7),
    }
    resets = jnp.asarray(rng.random((B, T)) < 0.2)
    params = core.init(jax.random.PRNGKey(0), carry, jnp.zeros((B, D)), jnp.zeros((B,), bool))
    params = jax.tree.map(
        lambda v: v + 0.3 * jnp.asarray(rng.normal(size=v.shape), v.dtype), params
    )  # off the initial point
    p = arrange_parameters(params["params"], L)
    xs = jnp.asarray(rng.normal(size=(T, B, D)), jnp.float32)
    k0 = jnp.asarray(rng.normal(size=(S, L, B, H, D // H)), jnp.float32)
    v0 = jnp.asarray(rng.normal(size=(S, L, B, H, D // H)), jnp.float32)
    masks = window_masks(carry["valid"], resets, S)
    weights = [jnp.asarray(rng.normal(size=(T, B, D)), jnp.float32) for _ in range(2)]

    def loss(segment):
        return lambda p, xs, k0, v0: sum(jnp.sum(w * out) for w, out in zip(weights, segment(H, p, xs, k0, v0, masks)))

    expected = jax.grad(loss(_segment), argnums=(0, 1, 2, 3))(p, xs, k0, v0)
    got = jax.grad(loss(feedback_segment), argnums=(0, 1, 2, 3))(p, xs, k0, v0)
    for e, g in zip(jax.tree.leaves(expected), jax.tree.leaves(got)):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)
    assert float(jnp.abs(got[2]).sum()) > 0  # the memories before the segment receive gradient
