"""HTM's chunk attention against the official haiku module's golden outputs and query gradients."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl.nn.hierarchical_attention import HierarchicalMemoryAttention, chunk_position_encoding

PREFIX = "params/hierarchical_memory_attention/"


@pytest.fixture(scope="module")
def golden(data_dir):
    return np.load(data_dir / "htm" / "htm_attention.npz")


def case(golden, i):
    """(module, flax params, inputs, data) for golden case i, haiku names mapped onto memrl's."""
    get = lambda name: jnp.asarray(golden[f"case{i}/{name}"])
    _, _, _, _, _, _, features, heads, k, position = (int(v) for v in golden[f"case{i}/config"])
    module = HierarchicalMemoryAttention(features, heads, k, memory_position_encoding=bool(position))
    dense = lambda path, bias=True: (
        {"kernel": get(PREFIX + path + "/w"), "bias": get(PREFIX + path + "/b")}
        if bias
        else {"kernel": get(PREFIX + path + "/w")}
    )
    params = {
        "params": {
            "query": dense("query", bias=False),
            "key": dense("key", bias=False),
            "within_mem_attn": {name: dense("within_mem_attn/" + name) for name in ("query", "key", "value", "linear")},
        }
    }
    mask = get("mask") if f"case{i}/mask" in golden.files else None
    inputs = (get("queries"), get("memory/keys"), get("memory/contents"), mask)
    return module, params, inputs, get


@pytest.mark.parametrize("i", range(6))
def test_output_and_query_gradient_match_official(golden, i):
    module, params, (queries, keys, contents, mask), get = case(golden, i)
    apply = jax.jit(lambda q: module.apply(params, q, keys, contents, mask))  # one compile, not op-by-op dispatch
    np.testing.assert_allclose(apply(queries), get("output"), atol=1e-5, rtol=1e-5)
    grad = jax.jit(jax.grad(lambda q: apply(q).sum()))(queries)
    np.testing.assert_allclose(grad, get("grad_queries_of_sum_output"), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("i", range(6))
def test_params_have_the_official_shapes(golden, i):
    """Initialising memrl's module gives exactly the parameter tree the golden file loads into."""
    module, params, (queries, keys, contents, mask), _ = case(golden, i)
    fresh = module.init(jax.random.PRNGKey(0), queries, keys, contents, mask)
    assert jax.tree.map(jnp.shape, fresh) == jax.tree.map(jnp.shape, params)


def test_position_encoding_is_reversed_sine_then_cosine(golden):
    for i in range(6):
        expected = golden[f"case{i}/debug/position_encoding"]
        np.testing.assert_allclose(chunk_position_encoding(*expected.shape), expected, atol=1e-6)


def test_no_gradient_reaches_keys_or_contents(golden):
    module, params, (queries, keys, contents, mask), _ = case(golden, 2)
    grads = jax.grad(lambda k, c: module.apply(params, queries, k, c, mask).sum(), argnums=(0, 1))(keys, contents)
    assert all(not np.any(g) for g in grads)


def test_bad_k_is_refused(golden):
    module, params, (queries, keys, contents, mask), _ = case(golden, 0)
    with pytest.raises(ValueError, match="k \\(9\\) must be between 1 and the number of chunks \\(7\\)"):
        HierarchicalMemoryAttention(12, 3, 9).init(jax.random.PRNGKey(0), queries, keys, contents, mask)


@pytest.mark.parametrize("i", [0, 3])
def test_segment_form_equals_query_by_query(golden, i):
    """Many queries (every chunk read several times: key and value maps on the query's side) give the
    outputs and parameter gradients of the same queries asked one at a time (rows projected)."""
    module, params, (queries, keys, contents, mask), _ = case(golden, i)
    assert queries.shape[1] * module.k >= contents.shape[1] > module.k  # the two forms are the two branches

    def together(params):
        return module.apply(params, queries, keys, contents, mask)

    def one_by_one(params):
        return jnp.concatenate(
            [
                module.apply(params, queries[:, [q]], keys, contents, None if mask is None else mask[:, [q]])
                for q in range(queries.shape[1])
            ],
            axis=1,
        )

    np.testing.assert_allclose(together(params), one_by_one(params), atol=1e-5, rtol=1e-5)
    weights = jax.random.normal(jax.random.PRNGKey(3), together(params).shape)
    gradients = [jax.grad(lambda p, f=f: jnp.sum(jnp.sin(f(p)) * weights))(params) for f in (together, one_by_one)]
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, atol=1e-5, rtol=1e-5), *gradients)
