"""The linear-recurrent cores (LRU, S6, linear attention, minGRU, FFM): the parallel scan with resets
against a sequential loop, each core's unroll against its paper's equations in NumPy (the LRU
against memax's implementation too, the FFM's aggregator against memax's), and the minGRU's
forgetting at the paper's initialisation."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import cores
from memrl.cores.linear_recurrence import scan_linear

T, B, D = 9, 3, 5
RESETS = np.zeros((T, B), bool)
RESETS[0] = True
RESETS[4, 1] = RESETS[7, 2] = True


def unrolled(name, **settings):
    """(params as NumPy, inputs [T, B, D], the core's outputs [T, B, ...]) from fresh carries with ``RESETS``."""
    core = cores.make(name, **settings)
    xs = jax.random.normal(jax.random.PRNGKey(1), (T, B, D))
    carry = core.initialize_carry(None, (B,))
    params = core.init(jax.random.PRNGKey(0), carry, xs[0], jnp.ones(B, bool))
    _, ys = core.apply(params, carry, xs, jnp.asarray(RESETS), method=core.unroll)
    return jax.tree.map(np.asarray, params["params"]), np.asarray(xs, np.float64), np.asarray(ys)


def dense(p, x):
    return x @ p["kernel"] + p.get("bias", 0.0)


def recur(step, h0, xs):
    """Outputs of ``step(h, x) -> (h, y)`` over time, h reset to ``h0`` where ``RESETS`` says."""
    outputs = []
    for b in range(B):
        h = h0
        for t in range(T):
            h = h0 if RESETS[t, b] else h
            h, y = step(h, xs[t, b])
            outputs.append(y)
    return np.stack(outputs).reshape(B, T, -1).transpose(1, 0, 2)


@pytest.mark.parametrize("scan", ["sequential", "associative"])
def test_the_scan_with_resets_equals_the_sequential_recurrence(scan):
    key_a, key_b, key_h = jax.random.split(jax.random.PRNGKey(0), 3)
    a = jax.random.uniform(key_a, (T, B, 4))
    b = {"x": jax.random.normal(key_b, (T, B, 4)), "y": jax.random.normal(key_b, (T, B, 4, 2))}
    h0 = jax.tree.map(lambda x: jax.random.normal(key_h, x.shape[1:]), b)
    hs = scan_linear(a, b, h0, jnp.asarray(RESETS), scan)
    for name, trailing in (("x", ()), ("y", (None,))):
        expected = np.zeros(b[name].shape)
        for row in range(B):
            h = np.asarray(h0[name][row])
            for t in range(T):
                h = np.zeros_like(h) if RESETS[t, row] else h  # a reset starts from the zero state
                h = np.asarray(a[t, row])[(...,) + trailing] * h + np.asarray(b[name][t, row])
                expected[t, row] = h
        np.testing.assert_allclose(hs[name], expected, rtol=1e-5, atol=1e-5)


def test_lru_is_the_papers_and_memaxs():
    params, xs, ys = unrolled("lru", hidden=6, state=6)
    lam = np.exp(-np.exp(params["nu_log"]) + 1j * np.exp(params["theta_log"]))
    b_norm = (params["B_re"] + 1j * params["B_im"]) * np.exp(params["gamma_log"])[:, None]
    c = params["C_re"] + 1j * params["C_im"]
    np.testing.assert_allclose(np.exp(params["gamma_log"]), np.sqrt(1 - np.abs(lam) ** 2), rtol=1e-5)  # initial γ

    def step(h, x):
        u = dense(params["input"], x)
        h = lam * h + b_norm @ u
        return h, (c @ h).real + params["D"] * u

    np.testing.assert_allclose(ys, recur(step, np.zeros(6, complex), xs), rtol=1e-4, atol=1e-5)

    memax_lru = pytest.importorskip("memax.linen.semigroups.lru")  # the test extra installs memax
    lru = memax_lru.LRU(
        hidden_size=6,
        recurrent_size=6,
        algebra=memax_lru.LRU.default_algebra(recurrent_size=6),
        scan=memax_lru.LRU.default_scan(),
    )
    layer = {
        name: jnp.asarray(value) for name, value in params.items() if name != "input"
    }  # memax checks for JAX arrays
    u = jnp.asarray(dense(params["input"], xs), jnp.float32)
    for row in range(B):
        _, theirs = lru.apply({"params": layer}, lru.initialize_carry(), (u[:, row], jnp.asarray(RESETS[:, row])))
        np.testing.assert_allclose(theirs, ys[:, row], atol=1e-5)


@pytest.mark.parametrize("name", ["lru", "s5", "s6", "linear-attention", "min-gru", "ffm"])
def test_both_scans_give_the_same_outputs_and_gradients(name):
    """The sequential scan (a CPU's choice under scan="auto") and the associative one (an
    accelerator's) are one computation in another order: equal outputs, final carries and gradients."""
    settings = dict(hidden=6) | ({"channels": 6, "state": 3} if name == "s6" else {"state": 4} if name == "s5" else {})
    settings |= {"num_heads": 2, "head_size": 3} if name == "linear-attention" else {}
    xs = jax.random.normal(jax.random.PRNGKey(1), (T, B, D))
    results = {}
    for scan in ("sequential", "associative"):
        core = cores.make(name, scan=scan, **settings)
        carry = core.initialize_carry(None, (B,))
        params = core.init(jax.random.PRNGKey(0), carry, xs[0], jnp.ones(B, bool))
        unroll = lambda p, c: core.apply(p, c, xs, jnp.asarray(RESETS), method=core.unroll)
        final, ys = unroll(params, carry)
        grads = jax.grad(lambda p: sum(jnp.sum(jnp.abs(y) ** 2) for y in jax.tree.leaves(unroll(p, carry)[1])))(params)
        results[scan] = (final, ys, grads)
    for ours, theirs in zip(*(jax.tree.leaves(results[scan]) for scan in ("sequential", "associative"))):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


def test_auto_picks_the_sequential_scan_on_a_cpu_and_refuses_an_unknown_one():
    from memrl.cores.linear_recurrence import chosen_scan

    assert jax.default_backend() != "cpu" or chosen_scan("auto") == "sequential"
    assert chosen_scan("associative") == "associative"
    with pytest.raises(ValueError, match="scan must be one of"):
        cores.make("lru", scan="parallel")


def test_s5_is_the_papers_discretised_diagonal_state_space():
    """x_t = Λ̄ x_{t-1} + B̄ u_t, y_t = 2 Re(C̃ x_t) + D u_t, with Λ̄ = exp(ΛΔ) and B̄ = Λ⁻¹(Λ̄ − 1) B̃ (zero-order hold)."""
    params, xs, ys = unrolled("s5", hidden=4, state=3)
    lam = params["Lambda_re"] + 1j * params["Lambda_im"]
    step = np.exp(params["log_step"])
    lam_bar = np.exp(lam * step)
    b = params["B"][..., 0] + 1j * params["B"][..., 1]
    c = params["C"][..., 0] + 1j * params["C"][..., 1]
    b_bar = ((lam_bar - 1) / lam)[:, None] * b

    def step_fn(h, x):
        u = dense(params["input"], x)
        h = lam_bar * h + b_bar @ u
        return h, 2 * (c @ h).real + params["D"] * u

    np.testing.assert_allclose(ys, recur(step_fn, np.zeros(3, complex), xs), rtol=1e-4, atol=1e-5)
    assert ((0.001 <= step) & (step <= 0.1)).all()


def test_s5_starts_from_the_hippo_n_spectrum():
    """HiPPO-LegS plus P Pᵀ is normal: V diag(Λ) V* gives it back, every eigenvalue's real part is −1/2,
    and the kept half of each block's conjugate pairs has the same imaginary parts in every block."""
    from memrl.cores.s5 import hippo_normal_spectrum

    lam, v = hippo_normal_spectrum(8)
    n = np.arange(8)
    legs = -np.where(n[:, None] > n[None, :], np.sqrt((2 * n[:, None] + 1) * (2 * n[None, :] + 1)), 0.0) - np.diag(
        n + 1
    )
    normal = legs + np.sqrt(n + 0.5)[:, None] * np.sqrt(n + 0.5)[None, :]
    np.testing.assert_allclose(v @ np.diag(lam) @ v.conj().T, normal, atol=1e-9)
    np.testing.assert_allclose(lam.real, -0.5)
    params, _, _ = unrolled("s5", hidden=4, state=4, blocks=2)
    np.testing.assert_allclose(params["Lambda_re"], -0.5)
    np.testing.assert_allclose(params["Lambda_im"][:2], params["Lambda_im"][2:])


def test_s6_is_the_papers_selective_scan():
    params, xs, ys = unrolled("s6", hidden=4, channels=6, state=3)
    silu = lambda x: x / (1 + np.exp(-x))
    softplus = lambda x: np.log1p(np.exp(x))
    a = -np.exp(params["A_log"])
    np.testing.assert_allclose(a, -np.tile(np.arange(1.0, 4.0), (6, 1)), rtol=1e-6)  # S4D-real

    def step(h, x):
        u = silu(dense(params["input"], x))
        delta = softplus(dense(params["dt"], dense(params["dt_rank"], u)))
        h = np.exp(delta[:, None] * a) * h + delta[:, None] * dense(params["B"], u)[None, :] * u[:, None]
        y = h @ dense(params["C"], u) + params["D"] * u
        return h, dense(params["output"], y * silu(dense(params["gate"], x)))

    np.testing.assert_allclose(ys, recur(step, np.zeros((6, 3)), xs), rtol=1e-4, atol=1e-5)


def test_linear_attention_is_the_papers_causal_form():
    params, xs, ys = unrolled("linear-attention", hidden=4, num_heads=2, head_size=3)
    phi = lambda x: np.where(x > 0, x + 1, np.exp(x))  # elu(x) + 1

    def step(state, x):
        s, z = state
        q, k, v = (dense(params[n], x).reshape(2, 3) for n in ("query", "key", "value"))
        s = s + phi(k)[:, :, None] * v[:, None, :]
        z = z + phi(k)
        o = np.einsum("hk,hkv->hv", phi(q), s) / (np.einsum("hk,hk->h", phi(q), z)[:, None] + 1e-6)
        return (s, z), dense(params["output"], o.reshape(-1))

    np.testing.assert_allclose(ys, recur(step, (np.zeros((2, 3, 3)), np.zeros((2, 3))), xs), rtol=1e-4, atol=1e-5)


def test_min_gru_is_the_papers_and_starts_forgetting_at_half_a_step():
    params, xs, ys = unrolled("min-gru", hidden=4)
    sigmoid = lambda x: 1 / (1 + np.exp(-x))

    def step(h, x):
        z = sigmoid(dense(params["gate"], x))
        h = (1 - z) * h + z * dense(params["candidate"], x)
        return h, h

    np.testing.assert_allclose(ys, recur(step, np.zeros(4), xs), rtol=1e-4, atol=1e-5)
    assert np.all(params["gate"]["bias"] == 0.0)  # the paper's: the gate starts at σ(W_z x)
    _, _, kept = unrolled("min-gru", hidden=4, gate_bias=-3.0)
    assert np.abs(kept).mean() < np.abs(ys).mean()  # a closed gate writes less and keeps more


def test_ffm_is_the_papers_and_its_aggregator_memaxs():
    params, xs, ys = unrolled("ffm", hidden=4, trace=3, context=2)
    sigmoid = lambda x: 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(params["alpha"], [np.log(2), (np.log(2) + np.log(100) / 1024) / 2, np.log(100) / 1024])
    np.testing.assert_allclose(params["omega"], [2 * np.pi, 2 * np.pi / 1024])
    gamma = np.exp(-np.abs(params["alpha"])[:, None] + 1j * params["omega"][None, :])

    def layer_norm(z):
        return (z - z.mean()) / np.sqrt(z.var() + 1e-5)

    def step(s, x):
        s = gamma * s + (dense(params["trace_input"], x) * sigmoid(dense(params["input_gate"], x)))[:, None]
        z = dense(params["mix"], np.stack([s.real, s.imag], -1).reshape(-1))
        g = sigmoid(dense(params["output_gate"], x))
        return s, layer_norm(z) * g + dense(params["skip"], x) * (1 - g)

    np.testing.assert_allclose(ys, recur(step, np.zeros((3, 2), complex), xs), rtol=1e-4, atol=1e-5)

    memax_ffm = pytest.importorskip("memax.equinox.semigroups.ffm")  # the test extra installs memax
    import equinox as eqx
    from memax.equinox.groups import Resettable
    from memax.equinox.scans import semigroup_scan

    semigroup = memax_ffm.FFMSemigroup(3, 2, deterministic_init=True, key=jax.random.PRNGKey(0))
    semigroup = eqx.tree_at(lambda g: g.params, semigroup, (jnp.asarray(params["alpha"]), jnp.asarray(params["omega"])))
    algebra = Resettable(semigroup)
    inputs = np.random.default_rng(0).normal(size=(T, B, 3, 2)) + 1j * np.random.default_rng(1).normal(
        size=(T, B, 3, 2)
    )
    ours = scan_linear(
        jnp.broadcast_to(jnp.asarray(gamma, jnp.complex64), (T, B, 3, 2)),
        jnp.asarray(inputs, jnp.complex64),
        jnp.zeros((B, 3, 2), jnp.complex64),
        jnp.asarray(RESETS),
    )
    for row in range(B):
        elements = ((jnp.asarray(inputs[:, row], jnp.complex64), jnp.ones(T, jnp.int32)), jnp.asarray(RESETS[:, row]))
        (theirs, _), _ = semigroup_scan(algebra, algebra.initialize_carry(), elements)
        np.testing.assert_allclose(theirs, ours[:, row], rtol=1e-5, atol=1e-5)
