"""The HTM agent's encoders and reconstruction decoders, alone and inside the actor-critic."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from memrl import cores, envs
from memrl.agents import ActorCritic, AgentSpec
from memrl.agents.distributions import Categorical, for_env
from memrl.agents.encoders import (
    ConvEncoder,
    ImageDecoder,
    ResNetDecoder,
    ResNetEncoder,
    image_reconstruction_loss,
    language_reconstruction_loss,
)

CELLS = dict(conv_kernels=(1, 3, 3), conv_strides=(1, 1, 1))


@pytest.mark.parametrize(
    "shape, kernels, strides", [((99, 99, 3), (9, 3, 3), (9, 1, 1)), ((11, 11, 36), (1, 3, 3), (1, 1, 1))]
)
def test_conv_encoder_grid_and_decoder_shape(shape, kernels, strides):
    image = jnp.zeros((2, *shape), jnp.uint8)
    encoder = ConvEncoder((4, 8, 8), kernels, strides)
    features, _ = jax.jit(encoder.init_with_output)(jax.random.PRNGKey(0), image)
    assert features.shape == (2, 11 * 11 * 8)  # the Ballet frame becomes the 11×11 cell grid
    decoder = ImageDecoder(shape, (4, 8, 8), kernels, strides)
    logits, _ = jax.jit(decoder.init_with_output)(jax.random.PRNGKey(0), jnp.zeros((2, 5)))
    assert logits.shape == (2, *shape)


def test_reconstruction_losses_match_numpy():
    rng = np.random.default_rng(0)
    logits, image = rng.normal(size=(3, 4, 4, 2)), rng.integers(0, 256, (3, 4, 4, 2)).astype(np.uint8)
    p, y = 1 / (1 + np.exp(-logits)), image / 255.0
    expected = -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean(axis=(1, 2, 3))
    np.testing.assert_allclose(image_reconstruction_loss(jnp.asarray(logits), jnp.asarray(image)), expected, rtol=1e-5)
    token_logits, tokens = rng.normal(size=(3, 2, 5)), rng.integers(0, 5, (3, 2))
    log_softmax = token_logits - np.log(np.exp(token_logits).sum(-1, keepdims=True))
    expected = -np.take_along_axis(log_softmax, tokens[..., None], -1)[..., 0].sum(-1)
    np.testing.assert_allclose(
        language_reconstruction_loss(jnp.asarray(token_logits), jnp.asarray(tokens)), expected, rtol=1e-5
    )


@pytest.fixture(scope="module")
def ballet_batch():
    """Time-major observations [T=6, B=2] of ``ballet/2_delay16`` (cells) at choice-phase frames."""
    env = envs.make("ballet/2_delay16", observation="cells")
    frames = []
    for b in range(2):
        _, state = env.reset(jax.random.PRNGKey(b))
        frames.append([env.observe(state._replace(frame=jnp.int32(58 + t))) for t in range(6)])
    obs = jax.tree.map(lambda *x: jnp.stack(x), *[jax.tree.map(lambda *y: jnp.stack(y), *f) for f in frames])
    return env, jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), obs)


def conv_agent(env, reconstruct):
    core = cores.make(
        "htm", num_layers=1, d_model=16, num_heads=2, mlp_dim=16, window=2, chunk_size=2, num_chunks=3, k=2
    )
    return ActorCritic(
        core=core,
        actions=for_env(env),
        token_vocab=tuple(env.token_vocab.items()),
        reconstruct=reconstruct,
        spec=AgentSpec(encoder_widths=(16,), head_widths=(16,), encoder="conv", conv_channels=(4, 8, 8), **CELLS),
    )


def test_conv_agent_step_equals_unroll_and_reconstruction_learns(ballet_batch):
    env, obs = ballet_batch
    agent = conv_agent(env, reconstruct=True)
    T, B = obs["language"].shape
    prev_action, prev_reward = jnp.zeros((T, B, 1), jnp.int32), jnp.zeros((T, B))
    resets = jnp.zeros((T, B), bool).at[0].set(True)
    carry = agent.initialize_carry((B,))
    params = jax.jit(lambda k: agent.init(k, carry, obs, prev_action, prev_reward, resets, method=agent.unroll))(
        jax.random.PRNGKey(0)
    )
    assert {"image_decoder", "language_decoder", "image_encoder", "language_encoder"} <= set(params["params"])

    def unroll(p):
        return agent.apply(p, carry, obs, prev_action, prev_reward, resets, method=agent.unroll)[1]

    logits, values, reconstruction = jax.jit(unroll)(params)
    step = jax.jit(agent.apply)  # compiled once: eager dispatch of the conv agent's many ops is slow
    stepped = carry
    for t in range(T):
        step_obs = jax.tree.map(lambda x: x[t], obs)
        stepped, (step_logits, step_value) = step(params, stepped, step_obs, prev_action[t], prev_reward[t], resets[t])
        np.testing.assert_allclose(step_logits, logits[t], atol=1e-5)
        np.testing.assert_allclose(step_value, values[t], atol=1e-5)

    optimizer = optax.adam(1e-2)

    @jax.jit
    def train(params):
        def sgd(carry, _):
            p, state = carry
            grads = jax.grad(lambda q: unroll(q)[2].mean())(p)
            updates, state = optimizer.update(grads, state, p)
            return (optax.apply_updates(p, updates), state), None

        return jax.lax.scan(sgd, (params, optimizer.init(params)), None, 60)[0][0]

    before, after = float(reconstruction.mean()), float(jax.jit(unroll)(train(params))[2].mean())
    assert after < 0.5 * before, (before, after)


def test_without_reconstruct_the_loss_is_zero_and_no_decoder_exists(ballet_batch):
    env, obs = ballet_batch
    agent = conv_agent(env, reconstruct=False)
    T, B = obs["language"].shape
    inputs = (obs, jnp.zeros((T, B, 1), jnp.int32), jnp.zeros((T, B)), jnp.zeros((T, B), bool).at[0].set(True))
    params = agent.init(jax.random.PRNGKey(0), agent.initialize_carry((B,)), *inputs, method=agent.unroll)
    assert not {"image_decoder", "language_decoder"} & set(params["params"])
    assert not np.any(agent.apply(params, agent.initialize_carry((B,)), *inputs, method=agent.unroll)[1][2])


def test_conv_encoder_needs_an_image():
    agent = ActorCritic(core=cores.make("gru", hidden=4), actions=Categorical((2,)), spec=AgentSpec(encoder="conv"))
    with pytest.raises(
        ValueError,
        match=r"needs an image part \(\[height, width, channels\]\) in the observation; its parts are \['observation'\]",
    ):
        agent.init(
            jax.random.PRNGKey(0),
            agent.initialize_carry((1,)),
            jnp.ones((1, 3)),
            jnp.zeros((1, 1), jnp.int32),
            jnp.zeros(1),
            jnp.ones(1, bool),
        )


@pytest.mark.parametrize("shape, grid", [((99, 99, 3), 13), ((11, 11, 36), 2)])
def test_resnet_encoder_grid_and_decoder_shape(shape, grid):
    """Three stride-2 poolings: 99 -> 50 -> 25 -> 13 and 11 -> 6 -> 3 -> 2; the decoder comes back."""
    image = jax.random.randint(jax.random.PRNGKey(0), (2, *shape), 0, 256).astype(jnp.uint8)
    features, params = jax.jit(ResNetEncoder((4, 8, 8)).init_with_output)(jax.random.PRNGKey(0), image)
    assert features.shape == (2, grid * grid * 8) and np.all(features >= 0)
    assert len(params["params"]) == 9  # per stack: a conv and two residual blocks
    logits, _ = jax.jit(ResNetDecoder(shape, (4, 8, 8)).init_with_output)(jax.random.PRNGKey(0), features)
    assert logits.shape == (2, *shape)


def test_resnet_agent_encodes_and_reconstructs(ballet_batch):
    env, obs = ballet_batch
    agent = ActorCritic(
        core=cores.make("gru", hidden=16),
        actions=for_env(env),
        token_vocab=tuple(env.token_vocab.items()),
        reconstruct=True,
        spec=AgentSpec(encoder="resnet", encoder_widths=(), conv_channels=(4, 8, 8)),
    )
    T, B = obs["language"].shape
    inputs = (obs, jnp.zeros((T, B, 1), jnp.int32), jnp.zeros((T, B)), jnp.zeros((T, B), bool).at[0].set(True))
    params = jax.jit(lambda k: agent.init(k, agent.initialize_carry((B,)), *inputs, method=agent.unroll))(
        jax.random.PRNGKey(0)
    )
    assert set(params["params"]["image_encoder"]) == {"conv_0", "conv_1", "conv_2"} | {
        f"residual_{i}_{j}" for i in range(3) for j in range(2)
    }
    grads = jax.jit(
        jax.grad(lambda p: agent.apply(p, agent.initialize_carry((B,)), *inputs, method=agent.unroll)[1][2].mean())
    )(params)
    assert all(np.isfinite(g).all() for g in jax.tree.leaves(grads))
    assert float(optax.tree.norm(grads["params"]["image_encoder"])) > 0


def test_conv_encoder_tags_its_last_grid_with_x_and_y():
    """The RMC's BoxWorld encoder: 2x2 convolutions keep the 5x5 grid; two channels follow the
    features, x = the column and y = the row, each evenly spaced in [-1, 1]."""
    encoder = ConvEncoder((12, 24), (2, 2), (1, 1), coordinates=True)
    features, _ = encoder.init_with_output(jax.random.PRNGKey(0), jnp.ones((3, 5, 5, 6)))
    grid = features.reshape(3, 5, 5, 26)
    np.testing.assert_allclose(grid[1, 2, :, 24], [-1, -0.5, 0, 0.5, 1])  # x along a row
    np.testing.assert_allclose(grid[1, :, 4, 25], [-1, -0.5, 0, 0.5, 1])  # y down a column


def test_a_convolution_too_costly_per_observation_is_refused_before_it_compiles():
    from memrl.agents.encoders import ConvEncoder

    image = jnp.zeros((1, 84, 84, 3))
    huge = ConvEncoder(channels=(16, 32), kernels=(84, 3), strides=(1, 1))
    with pytest.raises(
        ValueError, match=r"2\.4 billion multiply-adds per \(84, 84, 3\) observation \(kernel 84 stride 1"
    ):
        jax.eval_shape(huge.init, jax.random.PRNGKey(0), image)
    jax.eval_shape(ConvEncoder(channels=(16, 32), kernels=(9, 3), strides=(9, 1)).init, jax.random.PRNGKey(0), image)
