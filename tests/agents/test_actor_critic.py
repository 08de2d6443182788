"""The actor-critic agent: nothing of the previous episode reaches the core at an episode start."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import cores
from memrl.agents import ActorCritic


@pytest.mark.parametrize("core_name, obs", [
    ("gru", jnp.ones((2, 3))),
    ("epn", {"goal": jnp.eye(3)[:2], "position": jnp.eye(3)[1:]}),
])
def test_previous_action_and_reward_do_not_leak_across_episodes(core_name, obs):
    core = cores.make(core_name, **({"hidden": 8} if core_name == "gru" else {"capacity": 4, "embed_dim": 4, "width": 8}))
    agent = ActorCritic(core=core, action_dims=(4,), encoder_widths=(8,), head_widths=(8,), feed_prev_action=True, feed_prev_reward=True)
    carry = agent.initialize_carry((2,))
    reset = jnp.array([True, True])
    params = agent.init(jax.random.PRNGKey(0), carry, obs, jnp.zeros((2, 1), jnp.int32), jnp.zeros(2), reset)
    a = agent.apply(params, carry, obs, jnp.array([[0], [1]]), jnp.array([0.0, 4.0]), reset)[1]
    b = agent.apply(params, carry, obs, jnp.array([[3], [2]]), jnp.array([-3.0, 0.5]), reset)[1]
    jax.tree.map(np.testing.assert_array_equal, a, b)
    c = agent.apply(params, carry, obs, jnp.array([[3], [2]]), jnp.array([-3.0, 0.5]), ~reset)[1]
    assert not np.allclose(a[0], c[0])


def test_named_input_core_needs_a_goal():
    agent = ActorCritic(core=cores.make("epn", capacity=4, embed_dim=4, width=8), action_dims=(4,))
    with pytest.raises(ValueError, match="needs dict observations with a 'goal' part"):
        agent.init(jax.random.PRNGKey(0), agent.initialize_carry((2,)), jnp.ones((2, 3)), jnp.zeros((2, 1), jnp.int32), jnp.zeros(2), jnp.ones(2, bool))
