"""EPN specifics: thinking time without retraining, invalid rows are invisible, input checks."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import cores
from memrl.cores.epn import EPN

SMALL = dict(capacity=12, embed_dim=8, width=16, num_heads=2, prefixes=2)


def inputs(key, batch=2):
    k1, k2, k3 = jax.random.split(key, 3)
    return {
        "observation": jax.nn.one_hot(jax.random.randint(k1, (batch,), 0, 5), 5),
        "goal": jax.nn.one_hot(jax.random.randint(k2, (batch,), 0, 5), 5),
        "prev_action": jax.nn.one_hot(jax.random.randint(k3, (batch,), 0, 4), 4),
    }


@pytest.mark.parametrize("name", ["epn", "epn-nxk"])
def test_iterations_change_without_new_parameters(name):
    """ "Thinking time": a planner trained with 2 iterations runs with 1 or 6 using the same parameters."""
    core = cores.make(name, **SMALL, k=4)
    carry = core.initialize_carry(None, (2,))
    x, reset = inputs(jax.random.PRNGKey(0)), jnp.array([True, True])
    params = core.init(jax.random.PRNGKey(1), carry, x, reset)
    outputs = {}
    for iterations in (1, 2, 6):
        other = cores.make(name, **SMALL, k=4, iterations=iterations)
        assert jax.tree.structure(other.init(jax.random.PRNGKey(1), carry, x, reset)) == jax.tree.structure(params)
        stepped = carry
        for t in range(3):
            stepped, outputs[iterations] = other.apply(params, stepped, inputs(jax.random.PRNGKey(t)), reset & (t == 0))
    assert not np.allclose(outputs[1], outputs[6])


@pytest.mark.parametrize("name", ["epn", "epn-nxk"])
def test_readouts_after_several_iteration_counts_equal_separate_plans(name):
    core = cores.make(name, **SMALL, k=4)
    key = jax.random.PRNGKey(0)
    memory, state, goal = (
        jax.random.normal(key, (2, 12, 24)),
        jax.random.normal(key, (2, 8)),
        jax.random.normal(key, (2, 8)) + 1,
    )
    count = jnp.array([5, 12])
    params = core.init(key, core.initialize_carry(None, (2,)), inputs(key), jnp.ones(2, bool))
    readouts = core.apply(params, memory, count, state, goal, (3, 1), method=core.plan_readouts)
    for row, iterations in zip(readouts, (3, 1)):
        other = cores.make(name, **SMALL, k=4, iterations=iterations)
        np.testing.assert_allclose(row, other.apply(params, memory, count, state, goal, method=other.plan), atol=1e-6)
    assert not np.allclose(readouts[0], readouts[1])
    with pytest.raises(ValueError, match="iteration counts >= 1"):
        core.apply(params, memory, count, state, goal, (0, 2), method=core.plan_readouts)


@pytest.mark.parametrize("name", ["epn", "epn-nxk"])
def test_rows_not_yet_written_are_invisible(name):
    core = cores.make(name, **SMALL, k=4)
    x = inputs(jax.random.PRNGKey(0))
    carry = core.initialize_carry(None, (2,))
    params = core.init(jax.random.PRNGKey(1), carry, x, jnp.array([True, True]))
    step = jax.jit(lambda c, x: core.apply(params, c, x, jnp.array([False, False])))
    for t in range(3):
        carry, _ = step(carry, inputs(jax.random.PRNGKey(10 + t)))
    garbage = jax.random.normal(jax.random.PRNGKey(5), carry["memory"].shape)
    dirty = {**carry, "memory": carry["memory"].at[:, 3:].set(garbage[:, 3:])}
    np.testing.assert_allclose(step(carry, x)[1], step(dirty, x)[1], atol=1e-6)


def test_memory_wraps_around_at_capacity():
    core = cores.make("epn", **{**SMALL, "capacity": 4})
    carry = core.initialize_carry(None, (1,))
    x = inputs(jax.random.PRNGKey(0), batch=1)
    params = core.init(jax.random.PRNGKey(1), carry, x, jnp.array([True]))
    for t in range(6):
        carry, y = core.apply(params, carry, inputs(jax.random.PRNGKey(t), batch=1), jnp.array([t == 0]))
    assert carry["memory"].shape == (1, 4, 24) and float(carry["count"][0]) == 6
    assert np.all(np.isfinite(y))


def test_bad_settings_and_inputs_are_rejected():
    with pytest.raises(ValueError, match="core 'epn' setting 'variant' must be one of 'a2a', 'nxk', got 'full'"):
        cores.make("epn", variant="full")
    with pytest.raises(ValueError, match="variant must be 'a2a' or 'nxk'"):  # the class's own check
        EPN(variant="full")
    with pytest.raises(ValueError, match="prefixes"):
        cores.make("epn", prefixes=0)
    with pytest.raises(ValueError, match="divisible by num_heads"):
        cores.make("epn", width=10, num_heads=4)
    core = cores.make("epn", **SMALL)
    with pytest.raises(ValueError, match="takes a dict with keys"):
        core.init(jax.random.PRNGKey(0), core.initialize_carry(None, (2,)), jnp.zeros((2, 5)), jnp.ones(2, bool))


def episode_inputs(key, steps, batch):
    """[steps, batch] named inputs and resets: episodes of 20 steps (longer than a capacity of 12, so
    the memory wraps), out of step across the batch."""
    k1, k2, k3 = jax.random.split(key, 3)
    xs = {
        "observation": jax.nn.one_hot(jax.random.randint(k1, (steps, batch), 0, 5), 5),
        "goal": jax.nn.one_hot(jax.random.randint(k2, (steps, batch), 0, 5), 5),
        "prev_action": jax.nn.one_hot(jax.random.randint(k3, (steps, batch), 0, 4), 4),
    }
    resets = (jnp.arange(steps)[:, None] + 7 * jnp.arange(batch)[None]) % 20 == 0
    return xs, resets.at[0].set(True)


@pytest.mark.parametrize("name", ["epn", "epn-nxk"])
def test_planning_on_a_prefix_of_the_memory_changes_no_output_or_gradient(name):
    """``prefixes`` (the planner runs on the shortest prefix holding every written row) is a cost,
    not a model: outputs and parameter gradients equal planning on the whole memory every step."""
    xs, resets = episode_inputs(jax.random.PRNGKey(0), 24, 3)
    weights = jax.random.normal(jax.random.PRNGKey(1), (24, 3, 16 + 2 * 8))
    results = []
    for prefixes in (1, 3):
        core = cores.make(name, **{**SMALL, "prefixes": prefixes}, k=4)
        carry = core.initialize_carry(None, (3,))
        params = core.init(jax.random.PRNGKey(2), carry, jax.tree.map(lambda x: x[0], xs), resets[0])

        def loss(params):
            _, ys = core.apply(params, carry, xs, resets, method=core.unroll)
            return jnp.sum(ys * weights), ys

        results.append(jax.jit(jax.value_and_grad(loss, has_aux=True))(params))
    (_, whole), whole_grads = results[0]
    (_, prefix), prefix_grads = results[1]
    np.testing.assert_allclose(prefix, whole, atol=1e-5)
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, atol=1e-4), prefix_grads, whole_grads)


def test_the_prefix_is_chosen_once_for_all_seeds_under_vmap():
    """Under ``vmap`` over seeds the planner takes the longest prefix any seed needs (a real branch,
    not a select of every prefix's result), each seed's output equals its own run, and the
    parameter gradient runs under ``vmap`` too (as training does)."""
    core = cores.make("epn", **{**SMALL, "prefixes": 4})
    x = inputs(jax.random.PRNGKey(0))
    carry = core.initialize_carry(None, (2,))
    params = core.init(jax.random.PRNGKey(1), carry, x, jnp.ones(2, bool))
    step = lambda carry, params=params: core.apply(params, carry, x, jnp.zeros(2, bool))[1]
    carries = jax.tree.map(lambda a: jnp.stack([a, a]), carry)
    carries["count"] = jnp.array([[1.0, 2.0], [9.0, 4.0]])  # seed 0 needs a prefix of 3 rows, seed 1 all 12
    carries["memory"] = jax.random.normal(jax.random.PRNGKey(3), carries["memory"].shape)
    mapped = jax.jit(jax.vmap(step))(carries)
    for seed in range(2):
        np.testing.assert_allclose(mapped[seed], step(jax.tree.map(lambda a: a[seed], carries)), atol=1e-6)
    assert "cond" in str(jax.make_jaxpr(jax.vmap(step))(carries))
    gradients = jax.jit(jax.vmap(jax.grad(lambda params, carry: jnp.sum(step(carry, params) ** 2)), in_axes=(None, 0)))(
        params, carries
    )
    assert all(np.isfinite(g).all() for g in jax.tree.leaves(gradients))
