"""The actor-critic agent: nothing of the previous episode reaches the core at an episode start."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import cores
from memrl.agents import ActorCritic, AgentSpec
from memrl.agents.distributions import Categorical


@pytest.mark.parametrize(
    "core_name, obs",
    [
        ("gru", jnp.ones((2, 3))),
        ("epn", {"goal": jnp.eye(3)[:2], "position": jnp.eye(3)[1:]}),
    ],
)
def test_previous_action_and_reward_do_not_leak_across_episodes(core_name, obs):
    core = cores.make(
        core_name, **({"hidden": 8} if core_name == "gru" else {"capacity": 4, "embed_dim": 4, "width": 8})
    )
    agent = ActorCritic(
        core=core,
        actions=Categorical((4,)),
        spec=AgentSpec(encoder_widths=(8,), head_widths=(8,), feed_prev_action=True, feed_prev_reward=True),
    )
    carry = agent.initialize_carry((2,))
    reset = jnp.array([True, True])
    params = agent.init(jax.random.PRNGKey(0), carry, obs, jnp.zeros((2, 1), jnp.int32), jnp.zeros(2), reset)
    a = agent.apply(params, carry, obs, jnp.array([[0], [1]]), jnp.array([0.0, 4.0]), reset)[1]
    b = agent.apply(params, carry, obs, jnp.array([[3], [2]]), jnp.array([-3.0, 0.5]), reset)[1]
    jax.tree.map(np.testing.assert_array_equal, a, b)
    c = agent.apply(params, carry, obs, jnp.array([[3], [2]]), jnp.array([-3.0, 0.5]), ~reset)[1]
    assert not np.allclose(a[0], c[0])


def test_named_input_core_needs_a_goal():
    agent = ActorCritic(core=cores.make("epn", capacity=4, embed_dim=4, width=8), actions=Categorical((4,)))
    with pytest.raises(ValueError, match="needs dict observations with a 'goal' part"):
        agent.init(
            jax.random.PRNGKey(0),
            agent.initialize_carry((2,)),
            jnp.ones((2, 3)),
            jnp.zeros((2, 1), jnp.int32),
            jnp.zeros(2),
            jnp.ones(2, bool),
        )


@pytest.mark.parametrize("core_name", ["gru", "epn"])
def test_image_parts_share_one_cnn(core_name):
    """Graph-nav views: the current view and the goal view go through the same CNN, for a plain core
    and for EPN, which gets them as its observation and goal."""
    core = cores.make(
        core_name, **({"hidden": 8} if core_name == "gru" else {"capacity": 4, "embed_dim": 4, "width": 8})
    )
    agent = ActorCritic(
        core=core,
        actions=Categorical((4,)),
        spec=AgentSpec(
            encoder="conv",
            conv_channels=(2, 4),
            conv_kernels=(3, 3),
            conv_strides=(2, 1),
            encoder_widths=(8,),
            head_widths=(8,),
        ),
    )
    view = jax.random.randint(jax.random.PRNGKey(1), (2, 8, 8, 3), 0, 256).astype(jnp.uint8)
    inputs = (jnp.zeros((2, 1), jnp.int32), jnp.zeros(2), jnp.ones(2, bool))
    params = agent.init(
        jax.random.PRNGKey(0), agent.initialize_carry((2,)), {"image": view, "goal": view[::-1]}, *inputs
    )
    assert set(params["params"]["image_encoder"]) == {"conv_0", "conv_1"}
    _, state = agent.apply(
        params,
        agent.initialize_carry((2,)),
        {"image": view, "goal": view},
        *inputs,
        capture_intermediates=True,
        mutable=["intermediates"],
    )
    features = state["intermediates"]["image_encoder"]["__call__"]
    assert len(features) == 2  # called once per image part; the same picture, the same features
    np.testing.assert_array_equal(features[0], features[1])


def test_a_separate_critic_is_a_network_of_its_own_and_steps_as_it_unrolls():
    """With separate_critic: the policy's network has no value head, the critic (same sizes, its own
    encoder and core) no policy head; the logits depend only on the actor's parameters and the values
    only on the critic's; stepping gives what the unroll gives, resets included."""
    agent = ActorCritic(
        core=cores.make("gru", hidden=8),
        actions=Categorical((3,)),
        spec=AgentSpec(encoder_widths=(8,), head_widths=(8,), feed_prev_action=True, separate_critic=True),
    )
    steps, batch = 5, 2
    obs = jax.random.normal(jax.random.PRNGKey(1), (steps, batch, 4))
    prev_action, prev_reward = jnp.zeros((steps, batch, 1), jnp.int32), jnp.zeros((steps, batch))
    resets = jnp.zeros((steps, batch), bool).at[0].set(True).at[3, 1].set(True)
    carry = agent.initialize_carry((batch,))
    params = agent.init(jax.random.PRNGKey(0), carry, obs, prev_action, prev_reward, resets, method=agent.unroll)[
        "params"
    ]
    assert {"policy", "critic"} <= set(params) and "value" not in params
    assert {"core", "encoder", "head", "value"} == set(params["critic"])

    def outputs(params):
        return agent.apply({"params": params}, carry, obs, prev_action, prev_reward, resets, method=agent.unroll)[1]

    logits, values, _ = outputs(params)
    logit_grads = jax.grad(lambda p: outputs(p)[0].sum())(params)
    value_grads = jax.grad(lambda p: outputs(p)[1].sum())(params)
    assert not any(np.any(leaf) for leaf in jax.tree.leaves(logit_grads["critic"]))
    assert not any(
        np.any(leaf) for name, part in value_grads.items() if name != "critic" for leaf in jax.tree.leaves(part)
    )
    assert all(np.any(leaf) for leaf in jax.tree.leaves(value_grads["critic"]["core"]))
    stepped, c = [], carry
    for t in range(steps):
        c, out = agent.apply({"params": params}, c, obs[t], prev_action[t], prev_reward[t], resets[t])
        stepped.append(out)
    np.testing.assert_allclose(jnp.stack([s[0] for s in stepped]), logits, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jnp.stack([s[1] for s in stepped]), values, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("scale", [0.01, 1.0])
def test_the_policy_layer_is_orthogonal_with_its_configured_gain(scale):
    """``policy_init_scale`` is the gain of the policy layer's orthogonal init: its kernel's
    singular values are all that gain (the layer maps 8 features to 3 logits)."""
    agent = ActorCritic(
        core=cores.make("gru", hidden=8),
        actions=Categorical((3,)),
        spec=AgentSpec(encoder_widths=(8,), head_widths=(8,), policy_init_scale=scale),
    )
    carry = agent.initialize_carry((2,))
    obs, zeros = jnp.ones((2, 4)), jnp.zeros((2, 1), jnp.int32)
    kernel = agent.init(jax.random.PRNGKey(0), carry, obs, zeros, jnp.zeros(2), jnp.ones(2, bool))["params"]["policy"][
        "kernel"
    ]
    np.testing.assert_allclose(np.linalg.svd(np.asarray(kernel), compute_uv=False), scale, rtol=1e-5)


@pytest.mark.parametrize("scale", [0.0, -1.0])
def test_a_policy_init_scale_that_is_not_positive_is_refused(scale):
    with pytest.raises(ValueError, match="policy_init_scale must be a number > 0"):
        AgentSpec(policy_init_scale=scale).check_agent()


def test_layer_norm_normalises_every_encoder_and_head_layer_before_its_relu():
    """``layer_norm``: each encoder and head layer is ReLU(LN(Wx + b)), against NumPy from the
    parameters (PQN's network); without it the layers have no norm parameters."""
    spec = dict(encoder_widths=(8, 6), head_widths=(5,))
    make = lambda layer_norm: ActorCritic(
        core=cores.make("gru", hidden=4), actions=Categorical((3,)), spec=AgentSpec(**spec, layer_norm=layer_norm)
    )
    carry = make(True).initialize_carry((2,))
    obs = jax.random.normal(jax.random.PRNGKey(1), (2, 4))
    inputs = (carry, obs, jnp.zeros((2, 1), jnp.int32), jnp.zeros(2), jnp.ones(2, bool))
    plain = make(False).init(jax.random.PRNGKey(0), *inputs)["params"]
    assert not any("norm" in name for name in plain["encoder"]) and "norm_0" not in plain["head"]
    agent = make(True)
    params = agent.init(jax.random.PRNGKey(0), *inputs)["params"]
    assert set(params["head"]) == {"dense_0", "norm_0"}
    # perturb the norms' scales and offsets, so that the check is not of LayerNorm's initial (1, 0)
    params = jax.tree_util.tree_map_with_path(
        lambda path, x: x + 0.3 if "norm" in jax.tree_util.keystr(path) else x, params
    )
    _, sown = agent.apply({"params": params}, *inputs, capture_intermediates=True)
    encoded = sown["intermediates"]["encoder"]["__call__"][0]

    def layer(x, dense, norm):
        y = x @ np.asarray(dense["kernel"]) + np.asarray(dense["bias"])
        y = (y - y.mean(-1, keepdims=True)) / np.sqrt(y.var(-1, keepdims=True) + 1e-6)
        return np.maximum(y * np.asarray(norm["scale"]) + np.asarray(norm["bias"]), 0.0)

    x = np.asarray(obs)
    for i in range(2):
        x = layer(x, params["encoder"][f"dense_{i}"], params["encoder"][f"norm_{i}"])
    np.testing.assert_allclose(encoded, x, rtol=1e-5, atol=1e-5)
