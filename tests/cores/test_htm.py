"""HTM specifics: the chunk store's writing side, cross-episode memory, configuration checks."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import cores

SMALL = dict(num_layers=2, d_model=8, num_heads=2, mlp_dim=8, window=2, chunk_size=3, num_chunks=2, k=1)


def written_chunks(inputs, chunk_size, num_chunks, overlap):
    """Plain-Python reference: inputs [T, D] of one layer -> (contents, keys, valid) of the ring store."""
    contents, keys = np.zeros((num_chunks, chunk_size, inputs.shape[-1])), np.zeros((num_chunks, inputs.shape[-1]))
    valid, pointer, chunk = np.zeros(num_chunks, bool), 0, []
    for row in inputs:
        chunk.append(row)
        if len(chunk) == chunk_size:
            contents[pointer], keys[pointer], valid[pointer] = chunk, np.mean(chunk, axis=0), True
            pointer = (pointer + 1) % num_chunks
            chunk = chunk[chunk_size - overlap :]
    return contents, keys, valid


def run(core, params, xs, resets, carry=None):
    carry = core.initialize_carry(None, (xs.shape[1],)) if carry is None else carry
    return jax.jit(lambda *args: core.apply(*args, method=core.unroll))(
        params, carry, xs, resets
    )  # one compile, not one per op


@pytest.mark.parametrize("overlap", [0, 1, 2])
@pytest.mark.parametrize("split", [14, 5])
def test_unrolled_store_matches_reference_ring_store(overlap, split):
    """The first layer's store after 14 steps (in one unroll, or two from the carry between them)
    holds the chunks of its inputs that a plain ring store holds."""
    core = cores.make("htm", **{**SMALL, "num_chunks": 3, "chunk_overlap": overlap})
    xs = jax.random.normal(jax.random.PRNGKey(0), (14, 2, 5))
    resets = jnp.zeros((14, 2), bool).at[0].set(True)
    params = jax.jit(core.init)(jax.random.PRNGKey(1), core.initialize_carry(None, (2,)), xs[0], resets[0])
    carry, _ = run(core, params, xs[:split], resets[:split])
    if split < len(xs):
        carry, _ = run(core, params, xs[split:], resets[split:], carry)
    projection = params["params"]["input_projection"]
    first_layer_inputs = np.asarray(xs @ projection["kernel"] + projection["bias"])
    for b in range(2):
        contents, keys, valid = written_chunks(first_layer_inputs[:, b], SMALL["chunk_size"], 3, overlap)
        np.testing.assert_allclose(carry["contents"][b, 0], contents, atol=1e-5)
        np.testing.assert_allclose(carry["keys"][b, 0], keys, atol=1e-5)
        np.testing.assert_array_equal(carry["store_valid"][b], valid)


@pytest.fixture(scope="module")
def episodes():
    core = cores.make("htm", **SMALL)
    xs = jax.random.normal(jax.random.PRNGKey(1), (8, 1, 5))
    params = jax.jit(core.init)(jax.random.PRNGKey(2), core.initialize_carry(None, (1,)), xs[0], jnp.ones((1,), bool))
    return params, xs


def test_cross_episode_keeps_the_store_and_nothing_else(episodes):
    params, xs = episodes
    resets = jnp.zeros((8, 1), bool).at[0].set(True).at[7].set(True)
    within = cores.make("htm", **SMALL)
    across = cores.make("htm", **SMALL, cross_episode=True)
    carry_within, ys_within = run(within, params, xs, resets)
    carry_across, ys_across = run(across, params, xs, resets)
    np.testing.assert_allclose(ys_within[:7], ys_across[:7], atol=1e-6)  # identical until the reset
    assert not carry_within["store_valid"].any()
    np.testing.assert_array_equal(carry_across["store_valid"][0], [True, True])  # two chunks of the first episode
    assert int(carry_across["count"][0]) == 1  # the new episode's chunk started afresh
    assert not np.allclose(ys_within[7], ys_across[7])  # the second episode reads the first one's chunks


def test_the_store_is_read_once_a_chunk_is_written(episodes):
    """Step 0 leaves the window (2 steps) at step 3; from then on only the chunk store, written at
    step 2, can carry it, so a change to step 0 reaching steps 3.. shows that the store is read."""
    params, xs = episodes
    core = cores.make("htm", **SMALL)
    resets = jnp.zeros((8, 1), bool).at[0].set(True)
    _, ys = run(core, params, xs, resets)
    _, ys_changed = run(core, params, xs.at[0].add(5.0), resets)
    for t in range(3, 8):
        assert not np.allclose(ys[t], ys_changed[t], atol=1e-4), t


@pytest.mark.parametrize(
    "fields, message",
    [
        (dict(k=5), "k \\(5\\) must be between 1 and num_chunks \\(2\\)"),
        (dict(chunk_overlap=3), "chunk_overlap \\(3\\) must be in \\[0, chunk_size=3\\)"),
        (dict(d_model=9), "d_model \\(9\\) must be divisible by num_heads \\(2\\)"),
        (dict(window=0), "window must be a positive integer"),
    ],
)
def test_bad_configuration_is_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        cores.make("htm", **{**SMALL, **fields})
