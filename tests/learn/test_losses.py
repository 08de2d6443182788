"""Losses against plain NumPy loops and hand-checkable cases."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl.learn import losses
from memrl.learn.losses import clipped_value_loss, generalized_advantage_estimation, ppo_clipped_policy_loss, vtrace


def numpy_gae(r, discount, v, v_next, lam):
    advantages = np.zeros_like(r)
    running = 0.0
    for t in reversed(range(len(r))):
        delta = r[t] + discount[t] * v_next[t] - v[t]
        running = delta + discount[t] * lam * running
        advantages[t] = running
    return advantages


def test_gae_matches_numpy_loop():
    rng = np.random.default_rng(0)
    T = 17
    r, v, v_next = rng.normal(size=(3, T)).astype(np.float32)
    discount = (0.97 * (rng.random(T) > 0.2)).astype(np.float32)
    for lam in (0.0, 0.9, 1.0):
        got = generalized_advantage_estimation(r, discount, v, v_next, lam)
        np.testing.assert_allclose(got, numpy_gae(r, discount, v, v_next, lam), rtol=1e-5, atol=1e-5)


def test_gae_hand_case_and_batching():
    # λ = 1, γ = 1, no dones: A_t = sum of future rewards + bootstrap − v_t
    r = jnp.array([1.0, 2.0, 3.0])
    v = jnp.array([0.5, 0.5, 0.5])
    v_next = jnp.array([0.5, 0.5, 10.0])
    np.testing.assert_allclose(generalized_advantage_estimation(r, jnp.ones(3), v, v_next, 1.0), [15.5, 14.5, 12.5])
    batched = jax.vmap(generalized_advantage_estimation, (1, 1, 1, 1, None), 1)
    stacked = lambda x: jnp.stack([x, x], 1)
    out = batched(stacked(r), stacked(jnp.ones(3)), stacked(v), stacked(v_next), 1.0)
    np.testing.assert_allclose(out[:, 1], [15.5, 14.5, 12.5])


def test_gae_checks_shapes():
    with pytest.raises(AssertionError):
        generalized_advantage_estimation(jnp.ones(3), jnp.ones(4), jnp.ones(3), jnp.ones(3), 0.9)


def test_ppo_policy_loss_matches_numpy_loop():
    rng = np.random.default_rng(1)
    logp, old, adv = rng.normal(size=(3, 50)).astype(np.float32) * 0.3
    eps = 0.2
    expected = 0.0
    for t in range(50):
        ratio = np.exp(logp[t] - old[t])
        expected += min(ratio * adv[t], np.clip(ratio, 1 - eps, 1 + eps) * adv[t])
    np.testing.assert_allclose(ppo_clipped_policy_loss(logp, old, adv, eps), -expected / 50, rtol=1e-5)


def test_ppo_policy_loss_clips_only_in_the_improving_direction():
    # ratio 2 with positive advantage is clipped at 1.2; with negative advantage it is not.
    logp, old = jnp.log(jnp.array([2.0])), jnp.zeros(1)
    assert float(ppo_clipped_policy_loss(logp, old, jnp.array([1.0]), 0.2)) == pytest.approx(-1.2)
    assert float(ppo_clipped_policy_loss(logp, old, jnp.array([-1.0]), 0.2)) == pytest.approx(2.0)


def test_clipped_value_loss_matches_numpy_loop():
    rng = np.random.default_rng(2)
    v, old, target = rng.normal(size=(3, 40)).astype(np.float32)
    eps = 0.3
    expected = np.mean(
        [max((v[t] - target[t]) ** 2, (old[t] + np.clip(v[t] - old[t], -eps, eps) - target[t]) ** 2) for t in range(40)]
    )
    np.testing.assert_allclose(clipped_value_loss(v, old, target, eps), 0.5 * expected, rtol=1e-5)


def numpy_vtrace(r, discount, v, v_next, log_rho, rho_bar, c_bar):
    """V-trace written as the paper's sums: vs_t = v_t + Σ_{s≥t} (Π_{i<s} discount_i c_i) δ_s."""
    rho = np.exp(log_rho)
    clipped, c = np.minimum(rho_bar, rho), np.minimum(c_bar, rho)
    delta = clipped * (r + discount * v_next - v)
    T = len(r)
    vs = np.zeros(T)
    for t in range(T):
        weight, total = 1.0, 0.0
        for s in range(t, T):
            total += weight * delta[s]
            weight *= discount[s] * c[s]
        vs[t] = v[t] + total
    vs_next = np.append(vs[1:], v_next[-1])
    vs_next[:-1] += v_next[:-1] - v[1:]  # keeps v_{t+1} from v_next where the two differ
    return vs, clipped * (r + discount * vs_next - v)


@pytest.mark.parametrize("rho_bar, c_bar", [(1.0, 1.0), (0.5, 2.0), (100.0, 100.0)])
def test_vtrace_matches_numpy_sums(rho_bar, c_bar):
    rng = np.random.default_rng(0)
    T = 9
    r, v = rng.normal(size=T), rng.normal(size=T)
    v_next = np.append(v[1:], rng.normal())
    discount = 0.9 * (rng.random(T) > 0.2)
    log_rho = rng.normal(scale=0.7, size=T)
    out = vtrace(*(jnp.asarray(x, jnp.float32) for x in (r, discount, v, v_next, log_rho)), rho_bar, c_bar)
    vs, advantage = numpy_vtrace(r, discount, v, v_next, log_rho, rho_bar, c_bar)
    np.testing.assert_allclose(out.vs, vs, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out.pg_advantage, advantage, rtol=1e-5, atol=1e-5)


def test_vtrace_on_policy_is_the_bootstrapped_return():
    """With π = μ and no clipping, vs_t is the n-step return bootstrapped from the last value."""
    r = jnp.array([1.0, 0.0, 2.0])
    v = jnp.array([0.5, -1.0, 3.0])
    v_next = jnp.array([-1.0, 3.0, 10.0])
    discount = jnp.array([0.5, 0.5, 0.5])
    out = vtrace(r, discount, v, v_next, jnp.zeros(3))
    np.testing.assert_allclose(out.vs, [1 + 0.5 * 0 + 0.25 * 2 + 0.125 * 10, 0 + 0.5 * 2 + 0.25 * 10, 2 + 0.5 * 10])
    np.testing.assert_allclose(out.pg_advantage, r + discount * jnp.append(out.vs[1:], 10.0) - v)


def test_vtrace_cuts_traces_at_episode_ends_and_with_small_ratios():
    r, v = jnp.ones(3), jnp.zeros(3)
    ended = vtrace(r, jnp.array([0.9, 0.0, 0.9]), v, jnp.zeros(3), jnp.zeros(3))
    np.testing.assert_allclose(ended.vs, [1.9, 1.0, 1.0])
    tiny_ratio = vtrace(r, jnp.full(3, 0.9), v, jnp.zeros(3), jnp.array([0.0, jnp.log(1e-6), 0.0]))
    np.testing.assert_allclose(tiny_ratio.vs[0], 1.0, atol=1e-5)  # ρ_1 ≈ 0 drops δ_1 and c_1 ≈ 0 cuts the rest


def test_masked_sequence_cross_entropy_matches_a_numpy_loop():
    rng = np.random.default_rng(0)
    logits, targets, mask = (
        rng.normal(size=(6, 4)).astype(np.float32),
        rng.integers(0, 4, 6),
        np.array([0, 1, 1, 0, 1, 1], bool),
    )
    expected = 0.0
    for t in range(6):
        if mask[t]:
            expected -= logits[t, targets[t]] - np.log(np.exp(logits[t]).sum())
    np.testing.assert_allclose(losses.masked_sequence_cross_entropy(logits, targets, mask), expected, rtol=1e-5)
    assert float(losses.masked_sequence_cross_entropy(logits, targets, np.zeros(6, bool))) == 0.0


def test_masked_bit_cross_entropy_matches_a_numpy_loop():
    rng = np.random.default_rng(1)
    logits, targets, mask = (
        rng.normal(size=(5, 3)).astype(np.float32),
        rng.integers(0, 2, (5, 3)).astype(np.float32),
        np.array([1, 0, 1, 1, 0], bool),
    )
    expected = 0.0
    for t in range(5):
        for i in range(3):
            if mask[t]:
                p = 1.0 / (1.0 + np.exp(-logits[t, i]))
                expected -= targets[t, i] * np.log(p) + (1 - targets[t, i]) * np.log(1 - p)
    np.testing.assert_allclose(losses.masked_bit_cross_entropy(logits, targets, mask), expected, rtol=1e-5)


def numpy_n_step_returns(r, done, v, gamma, n):
    """G_t for t < T - 1 by the definition: rewards until n steps, the sequence's last step or an
    episode's end, then the bootstrap where the episode goes on."""
    last, returns = len(r) - 1, []
    for t in range(last):
        total, scale, ended = 0.0, 1.0, False
        m = min(n, last - t)
        for j in range(m):
            total += scale * r[t + j]
            scale *= gamma
            if done[t + j]:
                ended = True
                break
        returns.append(total if ended else total + scale * v[t + m])
    return np.array(returns)


def test_n_step_returns_match_the_definition():
    rng = np.random.default_rng(1)
    T = 12
    r, v = rng.normal(size=(2, T)).astype(np.float32)
    done = (rng.random(T) < 0.25).astype(np.float32)
    for n in (1, 3, 5, 20):
        got = losses.n_step_returns(jnp.asarray(r), jnp.asarray(done), jnp.asarray(v), 0.9, n)
        np.testing.assert_allclose(got, numpy_n_step_returns(r, done, v, 0.9, n), rtol=1e-5, atol=1e-5)
    one_step = losses.n_step_returns(jnp.asarray(r), jnp.zeros(T), jnp.asarray(v), 0.9, 1)
    np.testing.assert_allclose(one_step, r[:-1] + 0.9 * v[1:], rtol=1e-6)


def test_q_lambda_returns_are_the_lambda_weighted_n_step_returns():
    """The backward recursion against the forward view: G^λ_t = (1 − λ) Σ_{n<N} λ^(n−1) G^(n)_t +
    λ^(N−1) G^(N)_t over the N = T − 1 − t n-step returns left in the sequence, each bootstrapped from
    max_a q and cut at an episode's end."""
    rng = np.random.default_rng(2)
    T, gamma = 11, 0.9
    r = rng.normal(size=T).astype(np.float32)
    q = rng.normal(size=(T, 3)).astype(np.float32)
    done = (rng.random(T) < 0.25).astype(np.float32)
    n_step = {n: numpy_n_step_returns(r, done, q.max(-1), gamma, n) for n in range(1, T)}
    for lam in (0.0, 0.65, 1.0):
        expected = []
        for t in range(T - 1):
            N = T - 1 - t
            weights = [(1 - lam) * lam ** (n - 1) for n in range(1, N)] + [lam ** (N - 1)]
            expected.append(sum(w * n_step[n][t] for n, w in zip(range(1, N + 1), weights)))
        got = losses.q_lambda_returns(jnp.asarray(r), jnp.asarray(done), jnp.asarray(q), gamma, lam)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    one_step = losses.q_lambda_returns(jnp.asarray(r), jnp.zeros(T), jnp.asarray(q), gamma, 0.0)
    np.testing.assert_allclose(one_step, r[:-1] + gamma * q[1:].max(-1), rtol=1e-6)


def test_value_rescaling_is_inverted_and_compresses_large_values():
    x = jnp.asarray([-1000.0, -10.0, -1.0, 0.0, 0.5, 3.0, 1e4])
    for eps in (1e-3, 1e-2):
        h = losses.value_rescale(x, eps)
        np.testing.assert_allclose(losses.inverse_value_rescale(h, eps), x, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(losses.value_rescale(jnp.asarray(3.0), 1e-3), 1.0 + 3e-3, rtol=1e-6)  # sqrt(4) − 1 + εx
    assert float(losses.value_rescale(jnp.asarray(1e4), 1e-3)) < 111
