"""The Relational Memory Core against a plain NumPy step written from sonnet v1's semantics."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import cores
from memrl.cores.rmc import initial_memory


def np_dense(p, x):
    return x @ np.asarray(p["kernel"]) + np.asarray(p["bias"])


def np_layer_norm(p, x, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * np.asarray(p["scale"]) + np.asarray(p["bias"])


def np_softmax(z):
    z = z - z.max(-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(-1, keepdims=True)


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def np_rmc_step(params, memory, x, core):
    """One RMC step, written out row by row and head by head: [M; Wx] -> blocks -> drop the
    input row -> gates. Returns (new memory, attention weights per block [B, H, N+1, N+1])."""
    p = params["params"]
    heads, head_size, key_size = core.num_heads, core.head_size, core.key_size or core.head_size
    row = np_dense(p["input"], x)
    z = np.concatenate([memory, row[:, None]], axis=1)
    all_weights = []
    for block in range(core.num_blocks):
        qkv = np_layer_norm(p[f"attention_{block}"]["qkv_norm"], np_dense(p[f"attention_{block}"]["qkv"], z))
        attended = np.zeros_like(z)
        weights = np.zeros((z.shape[0], heads, z.shape[1], z.shape[1]))
        size = 2 * key_size + head_size
        for h in range(heads):
            chunk = qkv[..., h * size : (h + 1) * size]
            q, k, v = (
                chunk[..., :key_size] / np.sqrt(key_size),
                chunk[..., key_size : 2 * key_size],
                chunk[..., 2 * key_size :],
            )
            weights[:, h] = np_softmax(np.einsum("bqd,bkd->bqk", q, k))
            attended[..., h * head_size : (h + 1) * head_size] = np.einsum("bqk,bkd->bqd", weights[:, h], v)
        all_weights.append(weights)
        z = np_layer_norm(p[f"attention_norm_{block}"], z + attended)
        y = z
        for i in range(core.attention_mlp_layers):
            y = np_dense(p[f"mlp_{i}"], y)
            if i < core.attention_mlp_layers - 1:
                y = np.maximum(y, 0.0)
        z = np_layer_norm(p[f"mlp_norm_{block}"], y + z)
    attended = z[:, :-1]
    if core.gate_style == "none":
        return attended, all_weights
    gates = np_dense(p["gate_input"], row)[:, None] + np_dense(p["gate_memory"], np.tanh(memory))
    half = gates.shape[-1] // 2
    i, f = sigmoid(gates[..., :half] + core.input_bias), sigmoid(gates[..., half:] + core.forget_bias)
    return i * np.tanh(attended) + f * memory, all_weights


def test_initial_memory_is_the_padded_or_truncated_identity():
    np.testing.assert_array_equal(initial_memory((2,), 3, 5)[1], np.eye(3, 5))
    np.testing.assert_array_equal(initial_memory((1,), 4, 2)[0], np.eye(4)[:, :2])


@pytest.mark.parametrize(
    "settings",
    [
        dict(mem_slots=3, head_size=4, num_heads=2, num_blocks=1, gate_style="unit"),
        dict(
            mem_slots=2, head_size=3, num_heads=3, num_blocks=2, gate_style="memory", key_size=2, attention_mlp_layers=3
        ),
        dict(mem_slots=4, head_size=2, num_heads=1, num_blocks=1, gate_style="none", input_bias=0.5, forget_bias=2.0),
    ],
)
def test_step_matches_numpy(settings):
    core = cores.make("rmc", **settings)
    batch, width = 3, 5
    key = jax.random.PRNGKey(0)
    memory = initial_memory((batch,), core.mem_slots, core.mem_size) + 0.3 * jax.random.normal(
        key, (batch, core.mem_slots, core.mem_size)
    )
    x = jax.random.normal(jax.random.PRNGKey(1), (batch, width))
    reset = jnp.zeros((batch,), bool)
    params = core.init(jax.random.PRNGKey(2), memory, x, reset)
    (new_memory, output), sown = core.apply(params, memory, x, reset, mutable=["intermediates"])
    expected, weights = np_rmc_step(
        jax.tree.map(np.asarray, params), np.asarray(memory, np.float64), np.asarray(x, np.float64), core
    )
    np.testing.assert_allclose(new_memory, expected, atol=2e-5)
    np.testing.assert_allclose(output, expected.reshape(batch, -1), atol=2e-5)
    for block, w in enumerate(weights):
        np.testing.assert_allclose(sown["intermediates"]["attention"][block], w, atol=2e-5)


def test_memory_gating_gives_one_gate_per_slot():
    core = cores.make("rmc", mem_slots=3, head_size=4, num_heads=2, gate_style="memory")
    memory = core.initialize_carry(None, (1,))
    params = core.init(jax.random.PRNGKey(0), memory, jnp.ones((1, 5)), jnp.zeros((1,), bool))
    assert params["params"]["gate_memory"]["kernel"].shape == (8, 2)


def test_unroll_stacks_the_attention_weights_over_time():
    core = cores.make("rmc", mem_slots=3, head_size=4, num_heads=2, num_blocks=2)
    T, B = 5, 2
    carry = core.initialize_carry(None, (B,))
    xs, resets = jnp.ones((T, B, 4)), jnp.zeros((T, B), bool)
    params = core.init(jax.random.PRNGKey(0), carry, xs[0], resets[0])
    _, sown = core.apply(params, carry, xs, resets, method=core.unroll, mutable=["intermediates"])
    weights = sown["intermediates"]["attention"]
    assert len(weights) == 2 and weights[0].shape == (T, B, 2, 4, 4)
    np.testing.assert_allclose(weights[1].sum(-1), 1.0, rtol=1e-5)


@pytest.mark.parametrize(
    "settings, message",
    [
        (dict(mem_slots=0), "RelationalMemory.mem_slots must be a positive integer"),
        (dict(num_heads=0), "num_heads must be a positive integer"),
        (dict(key_size=0), "key_size must be >= 1"),
        (dict(gate_style="slot"), "gate_style'? must be one of"),  # the type's refusal (a Literal)
    ],
)
def test_bad_settings_are_refused(settings, message):
    with pytest.raises(ValueError, match=message):
        cores.make("rmc", **settings)


def test_unroll_gradient_with_recomputed_steps_equals_the_plain_scan_gradient():
    """The RMC's unroll keeps only matrix products for its backward pass (``unroll_saves``); the
    gradient must be what the scan that keeps everything gives."""
    core = cores.make("rmc", mem_slots=3, head_size=4, num_heads=2, num_blocks=2, gate_style="unit")
    keeps_everything = type("KeepsEverything", (type(core),), {"unroll_saves": None})(
        **{f: getattr(core, f) for f in ("mem_slots", "head_size", "num_heads", "num_blocks", "gate_style")}
    )
    xs = jax.random.normal(jax.random.PRNGKey(0), (6, 2, 5))
    resets = jnp.zeros((6, 2), bool).at[3, 0].set(True)
    carry = core.initialize_carry(None, (2,))
    params = core.init(jax.random.PRNGKey(1), carry, xs, resets, method=core.unroll)

    def gradient(model):
        loss = lambda p, x: jnp.sum(jnp.sin(model.apply(p, carry, x, resets, method=model.unroll)[1]))
        return jax.grad(loss, argnums=(0, 1))(params, xs)

    assert core.unroll_saves is not None
    for ours, plain in zip(jax.tree.leaves(gradient(core)), jax.tree.leaves(gradient(keeps_everything))):
        np.testing.assert_allclose(ours, plain, rtol=1e-4, atol=1e-6)  # float32 summed in another order
