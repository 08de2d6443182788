"""GTrXL's gate and TrXL's attention against plain NumPy."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl.nn.attention import RelativeMultiHeadAttention, sinusoid_encoding
from memrl.nn.gating import GRUGate


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def test_gru_gate_matches_numpy_and_starts_near_identity():
    x, y = np.random.default_rng(0).normal(size=(2, 3, 5)).astype(np.float32)
    gate = GRUGate()
    params = gate.init(jax.random.PRNGKey(0), x, y)["params"]
    w = {k: np.asarray(v["kernel"]) for k, v in params.items() if k != "b_g"}
    b_g = np.asarray(params["b_g"])
    np.testing.assert_array_equal(b_g, 2.0)
    r = sigmoid(y @ w["W_r"] + x @ w["U_r"])
    z = sigmoid(y @ w["W_z"] + x @ w["U_z"] - b_g)
    h = np.tanh(y @ w["W_g"] + (r * x) @ w["U_g"])
    np.testing.assert_allclose(gate.apply({"params": params}, x, y), (1 - z) * x + z * h, rtol=1e-5, atol=1e-6)
    zero = jax.tree.map(jnp.zeros_like, params) | {"b_g": params["b_g"]}
    np.testing.assert_allclose(gate.apply({"params": zero}, x, y), (1 - sigmoid(-2.0)) * x, rtol=1e-6)


@pytest.mark.parametrize("top_k", [None, 2])
def test_relative_attention_matches_numpy(top_k):
    """Full attention, and trxl-topk's: each query and head keeps its k highest logits."""
    rng = np.random.default_rng(1)
    B, Q, K, D, H = 2, 1, 5, 8, 2
    q_in = rng.normal(size=(B, Q, D)).astype(np.float32)
    kv = rng.normal(size=(B, K, D)).astype(np.float32)
    distances = np.arange(K - 1, -1, -1)[None]
    mask = np.ones((B, Q, K), bool)
    mask[1, 0, :2] = False
    attention = RelativeMultiHeadAttention(num_heads=H, out_features=D, top_k=top_k)
    params = attention.init(jax.random.PRNGKey(0), q_in, kv, distances, mask)["params"]
    params = jax.tree.map(lambda p: p + 0.1 * jax.random.normal(jax.random.PRNGKey(3), p.shape), params)
    p = jax.tree.map(np.asarray, params)
    d = D // H
    q = np.einsum("bqe,ehd->bqhd", q_in, p["query"]["kernel"])
    k = np.einsum("bke,ehd->bkhd", kv, p["key"]["kernel"])
    v = np.einsum("bke,ehd->bkhd", kv, p["value"]["kernel"])
    rel = np.einsum("qke,ehd->qkhd", np.asarray(sinusoid_encoding(jnp.asarray(distances), D)), p["position"]["kernel"])
    logits = (
        np.einsum("bqhd,bkhd->bhqk", q + p["content_bias"], k)
        + np.einsum("bqhd,qkhd->bhqk", q + p["position_bias"], rel)
    ) / np.sqrt(d)
    logits = np.where(mask[:, None], logits, -np.inf)
    if top_k is not None:
        kth = np.sort(logits, axis=-1)[..., -top_k][..., None]
        logits = np.where(logits >= kth, logits, -np.inf)
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    out = np.einsum("bhqk,bkhd->bqhd", weights, v)
    expected = np.einsum("bqhd,hde->bqe", out, p["output"]["kernel"]) + p["output"]["bias"]
    np.testing.assert_allclose(
        attention.apply({"params": params}, q_in, kv, distances, mask), expected, rtol=1e-4, atol=1e-5
    )
