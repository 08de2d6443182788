"""Fast-weight memories (DeltaNet, Gated DeltaNet, mLSTM): each core's unroll against a NumPy
transcription of its paper's recurrence, step by step, with resets inside the sequence."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import cores

T, B, D = 9, 3, 5
RESETS = np.zeros((T, B), bool)
RESETS[0] = True
RESETS[4, 1] = RESETS[7, 2] = True
HEADS, SIZE, HIDDEN = 2, 3, 4


def unrolled(name, **settings):
    """(params as NumPy, inputs [T, B, D] as float64, the core's outputs [T, B, HIDDEN])."""
    core = cores.make(name, hidden=HIDDEN, num_heads=HEADS, head_size=SIZE, **settings)
    xs = jax.random.normal(jax.random.PRNGKey(1), (T, B, D))
    carry = core.initialize_carry(None, (B,))
    params = core.init(jax.random.PRNGKey(0), carry, xs[0], jnp.ones(B, bool))
    _, ys = core.apply(params, carry, xs, jnp.asarray(RESETS), method=core.unroll)
    return (
        jax.tree.map(lambda a: np.asarray(a, np.float64), params["params"]),
        np.asarray(xs, np.float64),
        np.asarray(ys),
    )


def dense(p, x):
    return x @ p["kernel"] + p.get("bias", 0.0)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def silu(x):
    return x * sigmoid(x)


def softplus(x):
    return np.log1p(np.exp(x))


def per_row(step, initial, xs):
    """Outputs of ``step(state, x) -> (state, y)`` over time, the state back to ``initial()`` where ``RESETS`` says."""
    ys = np.zeros((T, B, HIDDEN))
    for b in range(B):
        state = initial()
        for t in range(T):
            state = initial() if RESETS[t, b] else state
            state, ys[t, b] = step(state, xs[t, b])
    return ys


@pytest.mark.parametrize("name", ["delta-net", "gated-delta-net"])
def test_delta_net_is_the_papers_delta_rule(name):
    """S_t = α_t S_{t-1} - β_t (α_t S_{t-1} k_t - v_t) k_tᵀ, o_t = S_t q_t (α_t = 1 without the gate)."""
    p, xs, ys = unrolled(name)
    unit = lambda x: x / (np.linalg.norm(x) + 1e-6)

    def step(memory, x):
        outputs = []
        beta = sigmoid(dense(p["beta"], x))
        decay = np.ones(HEADS)
        if name == "gated-delta-net":
            decay = np.exp(-np.exp(p["decay_log_rate"]) * softplus(dense(p["decay"], x)))
        q, k, v = (dense(p[f], x).reshape(HEADS, SIZE) for f in ("query", "key", "value"))
        memory = memory.copy()
        for h in range(HEADS):
            kh, qh = unit(silu(k[h])), unit(silu(q[h]))
            old = decay[h] * memory[h]
            memory[h] = old - beta[h] * np.outer(old @ kh - v[h], kh)
            outputs.append(memory[h] @ qh)
        return memory, dense(p["output"], np.concatenate(outputs))

    np.testing.assert_allclose(ys, per_row(step, lambda: np.zeros((HEADS, SIZE, SIZE)), xs), rtol=1e-4, atol=1e-5)


def test_a_delta_rule_write_replaces_what_its_key_reads():
    """With β = 1 a write makes S k = v exactly (linear attention would add v to what was there)."""
    core = cores.make("delta-net", hidden=HIDDEN, num_heads=1, head_size=SIZE)
    k = jnp.asarray([0.6, 0.8, 0.0])
    q = k
    mapped = lambda v: (q[None, None], k[None, None], v[None, None], jnp.ones((1, 1)) * 1.0, jnp.zeros((1, 1)))
    params = core.init(jax.random.PRNGKey(0), core.initialize_carry(None, (1,)), jnp.zeros((1, D)), jnp.ones(1, bool))
    carry = core.initialize_carry(None, (1,))
    for v in (jnp.asarray([1.0, 2.0, 3.0]), jnp.asarray([-1.0, 0.5, 0.0])):
        carry, _ = core.apply(params, carry, mapped(v), jnp.zeros(1, bool), method=core.step_mapped)
        np.testing.assert_allclose(carry[0, 0] @ k, v, rtol=1e-5, atol=1e-6)


def test_mlstm_is_the_papers_stabilised_matrix_memory():
    """xLSTM's eqs. 19-27 with the stabiliser m_t, one head at a time."""
    p, xs, ys = unrolled("mlstm")

    def step(state, x):
        C, n, m = (a.copy() for a in state)
        q, k, v = (dense(p[f], x).reshape(HEADS, SIZE) for f in ("query", "key", "value"))
        k = k / np.sqrt(SIZE)
        gate = sigmoid(dense(p["output_gate"], x)).reshape(HEADS, SIZE)
        log_i, log_f = dense(p["input_gate"], x), np.log(sigmoid(dense(p["forget_gate"], x)))
        outputs = []
        for h in range(HEADS):
            m_new = max(log_f[h] + m[h], log_i[h])
            i_scale, f_scale = np.exp(log_i[h] - m_new), np.exp(log_f[h] + m[h] - m_new)
            C[h] = f_scale * C[h] + i_scale * np.outer(v[h], k[h])
            n[h] = f_scale * n[h] + i_scale * k[h]
            m[h] = m_new
            outputs.append(gate[h] * (C[h] @ q[h]) / max(abs(n[h] @ q[h]), np.exp(-m_new)))
        return (C, n, m), dense(p["output"], np.concatenate(outputs))

    initial = lambda: (np.zeros((HEADS, SIZE, SIZE)), np.zeros((HEADS, SIZE)), np.zeros(HEADS))
    np.testing.assert_allclose(ys, per_row(step, initial, xs), rtol=1e-4, atol=1e-5)


def test_mlstm_starts_as_the_papers_code_does():
    p, _, _ = unrolled("mlstm")
    np.testing.assert_allclose(p["forget_gate"]["bias"], np.linspace(3.0, 6.0, HEADS))
    assert not p["input_gate"]["kernel"].any() and 0 < np.abs(p["input_gate"]["bias"]).max() < 0.5
