"""The DNC's addressing on hand-checkable cases and against plain NumPy loops (Graves et al. 2016,
Methods; deepmind/dnc's semantics)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import optimised, trained_scores

from memrl import cores, tasks
from memrl.cores import dnc_addressing as addressing

EPS = addressing.EPSILON


def np_allocation(usage):
    """a[φ_j] = (1 − u[φ_j]) Π_{i<j} u[φ_i], written as a loop over the sorted slots."""
    usage = EPS + (1 - EPS) * np.asarray(usage, np.float64)
    out = np.zeros_like(usage)
    for b in range(usage.shape[0]):
        product = 1.0
        for slot in sorted(range(usage.shape[1]), key=lambda i: (usage[b, i], i)):
            out[b, slot] = (1 - usage[b, slot]) * product
            product *= usage[b, slot]
    return out


def np_link(prev_link, prev_precedence, w):
    """L[i, j] = (1 − w_i − w_j) L_prev[i, j] + w_i p_prev[j], i ≠ j; p = (1 − Σw) p_prev + w (one head)."""
    n = len(w)
    link = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j:
                link[i, j] = (1 - w[i] - w[j]) * prev_link[i, j] + w[i] * prev_precedence[j]
    return link, (1 - w.sum()) * prev_precedence + w


def test_allocation_by_hand():
    """usage (0.5, 0.25, 1, 0.5): the free-est slot 1 gets 0.75, then slot 0 (tie with 3, lower
    index first) 0.5·0.25, slot 3 0.5·0.25·0.5, the full slot 2 nothing."""
    a = addressing.allocation(jnp.array([[0.5, 0.25, 1.0, 0.5]]))
    np.testing.assert_allclose(a[0], [0.125, 0.75, 0.0, 0.0625], atol=1e-5)


def test_allocation_matches_numpy_loop():
    usage = jax.random.uniform(jax.random.PRNGKey(0), (4, 7)).at[0, :3].set(0.0).at[1, 2:5].set(1.0)
    np.testing.assert_allclose(addressing.allocation(usage), np_allocation(usage), atol=1e-6)


def test_write_heads_allocate_in_turn():
    """Usage (0, .1, .2, .3), two fully gated write heads: the first takes slot 0, the second sees
    slot 0 used and takes slot 1 (0.9), leaving 0.1·0.8 for slot 2 and 0.1·0.2·0.7 for slot 3.
    (From an all-zero usage the second head would pick slot 3, not 1: the first head's ε-sized
    leftovers make slots 1, 2 slightly used, as in the official code.)"""
    weights = addressing.write_allocation_weights(jnp.array([[0.0, 0.1, 0.2, 0.3]]), jnp.ones((1, 2)))
    np.testing.assert_allclose(weights[0], [[1, 0, 0, 0], [0, 0.9, 0.08, 0.014]], atol=1e-5)
    usage = np.array([[0.0, 0.1, 0.2, 0.3]])
    first = np_allocation(usage)
    np.testing.assert_allclose(weights[0, 1], np_allocation(usage + (1 - usage) * first)[0], atol=1e-6)


def test_usage_by_hand():
    """Writing half into both slots raises usage (0.5, 0) to (0.75, 0.5); a read of slot 0 with
    free gate 1 frees it, a read with free gate 0 keeps it."""
    prev_usage = jnp.array([[0.5, 0.0], [0.5, 0.0]])
    write = jnp.full((2, 1, 2), 0.5)
    read = jnp.array([[[1.0, 0.0]], [[1.0, 0.0]]])
    free = jnp.array([[1.0], [0.0]])
    usage = addressing.usage_after_write_and_read(prev_usage, write, free, read)
    np.testing.assert_allclose(usage, [[0.0, 0.5], [0.75, 0.5]], atol=1e-6)


def test_usage_takes_no_gradient_through_the_write_weights():
    grad = jax.grad(
        lambda w: addressing.usage_after_write_and_read(
            jnp.zeros((1, 3)), w, jnp.zeros((1, 1)), jnp.zeros((1, 1, 3))
        ).sum()
    )(jnp.full((1, 1, 3), 0.3))
    np.testing.assert_array_equal(grad, 0.0)


def test_links_by_hand_and_directional_reads():
    """Write slot 0, then slot 1: L[1, 0] = 1 (1 was written after 0), nothing else. Forward from a
    read of slot 0 goes to slot 1; backward from slot 1 goes to slot 0."""
    link, precedence = jnp.zeros((1, 1, 3, 3)), jnp.zeros((1, 1, 3))
    for slot in (0, 1):
        link, precedence = addressing.link_and_precedence(link, precedence, jnp.eye(3)[slot][None, None])
    expected = np.zeros((3, 3))
    expected[1, 0] = 1.0
    np.testing.assert_allclose(link[0, 0], expected)
    np.testing.assert_allclose(precedence[0, 0], [0, 1, 0])
    reads = jnp.array([[[1.0, 0, 0], [0, 1.0, 0]]])  # two read heads at slots 0 and 1
    np.testing.assert_allclose(
        addressing.directional_read_weights(link, reads, forward=True)[0, :, 0], [[0, 1, 0], [0, 0, 0]]
    )
    np.testing.assert_allclose(
        addressing.directional_read_weights(link, reads, forward=False)[0, :, 0], [[0, 0, 0], [1, 0, 0]]
    )


def test_links_match_numpy_loop():
    keys = jax.random.split(jax.random.PRNGKey(1), 3)
    prev_link = jax.random.uniform(keys[0], (1, 1, 5, 5)) * (1 - jnp.eye(5))
    prev_precedence = jax.random.dirichlet(keys[1], jnp.ones(5))[None, None] * 0.8
    w = jax.random.dirichlet(keys[2], jnp.ones(5))[None, None] * 0.9
    link, precedence = addressing.link_and_precedence(prev_link, prev_precedence, w)
    expected_link, expected_precedence = np_link(
        np.asarray(prev_link[0, 0]), np.asarray(prev_precedence[0, 0]), np.asarray(w[0, 0])
    )
    np.testing.assert_allclose(link[0, 0], expected_link, atol=1e-6)
    np.testing.assert_allclose(precedence[0, 0], expected_precedence, atol=1e-6)


def test_erase_then_add_by_hand():
    """Full weight on slot 0 with erase (1, 0) clears its first unit, keeps the second, then adds v."""
    memory = jnp.array([[[2.0, 3.0], [4.0, 5.0]]])
    out = addressing.erase_and_write(
        memory, jnp.array([[[1.0, 0.0]]]), jnp.array([[[1.0, 0.0]]]), jnp.array([[[0.5, 0.5]]])
    )
    np.testing.assert_allclose(out[0], [[0.5, 3.5], [4.0, 5.0]])


def test_content_weights_match_numpy():
    memory = jax.random.normal(jax.random.PRNGKey(2), (2, 5, 3))
    keys = jax.random.normal(jax.random.PRNGKey(3), (2, 4, 3))
    strengths = jax.random.normal(jax.random.PRNGKey(4), (2, 4))
    m, k, s = (np.asarray(a, np.float64) for a in (memory, keys, strengths))
    norm = lambda v: np.sqrt((v * v).sum(-1) + EPS)
    cos = np.einsum("bkw,bnw->bkn", k, m) / (norm(k)[..., None] * norm(m)[:, None, :] + EPS)
    logits = cos * np.log1p(np.exp(s))[..., None]
    expected = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    np.testing.assert_allclose(addressing.content_weights(memory, keys, strengths), expected, atol=1e-6)


def test_step_keeps_weights_and_usage_in_range():
    core = cores.make(
        "dnc", memory_size=6, word_size=4, num_reads=3, num_writes=2, hidden=8, output_size=5, clip_value=0.5
    )
    carry = core.initialize_carry(None, (2,))
    xs = 5.0 * jax.random.normal(jax.random.PRNGKey(5), (8, 2, 3))
    resets = jnp.zeros((8, 2), bool)
    params = jax.jit(core.init)(jax.random.PRNGKey(6), carry, xs[0], resets[0])  # jitted: eager runs op by op
    state, ys = jax.jit(lambda p: core.apply(p, carry, xs, resets, method=core.unroll))(params)
    assert float(jnp.abs(ys).max()) <= 0.5  # the output is clipped
    assert float(jnp.abs(state.controller[0][1]).max()) <= 0.5
    assert np.all((state.usage >= 0) & (state.usage <= 1))
    assert np.all(state.write_weights.sum(-1) <= 1 + 1e-5) and np.all(state.read_weights.sum(-1) <= 1 + 1e-5)
    np.testing.assert_allclose(np.diagonal(state.link, axis1=-2, axis2=-1), 0.0)


def test_a_stacked_controller_clips_its_state_after_the_stack():
    """Each controller layer reads the unclipped output of the layer below; the state is clipped
    after the whole stack (deepmind/dnc clips its controller's output and state, not between layers)."""
    from memrl.cores.lstm import LSTMCellFused

    clip = 0.05
    core = cores.make(
        "dnc", memory_size=4, word_size=3, num_reads=1, hidden=8, controller_layers=2, output_size=8, clip_value=clip
    )
    carry = core.initialize_carry(None, (2,))
    x = 3.0 * jax.random.normal(jax.random.PRNGKey(7), (2, 5))
    reset = jnp.zeros((2,), bool)
    params = core.init(jax.random.PRNGKey(8), carry, x, reset)
    state, _ = core.apply(params, carry, x, reset)
    cell = LSTMCellFused(8)
    controller_input = jnp.concatenate([x, carry.read_words.reshape(2, -1)], axis=-1)
    (_, h0), _ = cell.apply({"params": params["params"]["controller_0"]}, carry.controller[0], controller_input)
    (c1, h1), _ = cell.apply({"params": params["params"]["controller_1"]}, carry.controller[1], h0)
    assert float(jnp.abs(h0).max()) > clip  # clipping h0 would change what the top layer reads
    np.testing.assert_allclose(state.controller[1][0], jnp.clip(c1, -clip, clip), atol=1e-6)
    np.testing.assert_allclose(state.controller[1][1], jnp.clip(h1, -clip, clip), atol=1e-6)


@pytest.mark.parametrize(
    "settings, message",
    [
        (dict(memory_size=0), "DNC.memory_size must be a positive integer"),
        (dict(clip_value=-1.0), "clip_value must be >= 0"),
        (
            dict(controller_weight_init="keras"),
            r"DNC.controller_weight_init must be one of \('fused', 'split'\), got 'keras'",
        ),
    ],
)
def test_bad_settings_are_refused(settings, message):
    with pytest.raises(ValueError, match=message):
        cores.make("dnc", **settings)


@pytest.mark.slow
def test_learns_to_copy():
    """deepmind/dnc's default sizes (memory 16 x 16, 4 reads, 1 write, controller 64) learn to copy
    5 digits over a gap of 8 in 1000 updates of 32 at lr 6e-3: at least 90% of the digits right on
    held-out sequences (measured 0.987, 0.971 and 0.981 with seeds 0, 1, 2; at lr 3e-3 0.857 after
    1000 and 0.946 after 1500: docs/results/benchmarks.md)."""
    from memrl.learn.supervised_config import SupervisedConfig

    config = SupervisedConfig(
        task=tasks.make("copying", **dict(gap=8, num_digits=5)),
        core=cores.make("dnc", **dict(hidden=64, output_size=64)),
        embed_dim=16,
        batch_size=32,
        total_steps=32 * 1000,
        lr=6e-3,
    )
    scores = optimised(trained_scores, config, 1000, evaluated=512)
    assert np.all(scores["token_accuracy"] >= 0.9), scores
