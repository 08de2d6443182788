"""Brax's environments (``brax/<name>``): every one registered, each step Brax's own with memrl's
auto-reset, the episode's end told apart as terminated (Brax's ``done``) or truncated (the episode
length), the positions-only variant keeping the positions alone, and PPO's Gaussian head acting in
one. On the "spring" backend, Brax's cheapest on a CPU."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from brax import envs as brax_envs
from conftest import tiny_ppo

from memrl import envs
from memrl.envs.brax_adapter import BRAX_ENVS
from memrl.learn.learners import make_train


def test_every_brax_environment_is_registered():
    theirs = set(brax_envs._envs) - {"fast"}  # brax's registry; "fast" is its test environment
    ours = {
        name.removeprefix("brax/") for name in envs.names() if name.startswith("brax/") and "/positions" not in name
    }
    assert theirs == set(BRAX_ENVS) == ours


def test_steps_are_braxs_own_and_episodes_end_terminated_or_truncated():
    """The inverted pendulum pushed hard one way falls (Brax's done: terminated) within the episode
    length; pushed gently both ways it stands until the length cuts it (truncated). Between ends
    every observation and reward is Brax's; after an end the next episode starts."""
    env = envs.make("brax/inverted_pendulum", backend="spring", episode_length=12)
    native = brax_envs.get_environment("inverted_pendulum", backend="spring")
    step, native_step = jax.jit(env.step), jax.jit(native.step)
    ends = []
    for actions in (np.ones(12), np.tile([0.05, -0.05], 8)):
        obs, state = env.reset(jax.random.PRNGKey(0))
        expected = native.reset(jax.random.PRNGKey(0))
        np.testing.assert_allclose(obs, expected.obs, rtol=1e-6)
        for t, action in enumerate(actions):
            expected = native_step(expected, jnp.array([action], jnp.float32))
            obs, state, reward, done, info = step(jax.random.PRNGKey(t), state, jnp.array([action]))
            assert float(reward) == float(expected.reward)
            if done:
                np.testing.assert_allclose(info["final_obs"], expected.obs, rtol=1e-6)
                assert int(state.steps) == 0  # a fresh episode
                ends.append(("terminated" if info["terminated"] else "truncated", t + 1))
                break
            np.testing.assert_allclose(obs, expected.obs, rtol=1e-6)
    assert ends[0][0] == "terminated" and ends[0][1] < 12 and ends[1] == ("truncated", 12), ends


def test_the_positions_only_pendulum_keeps_the_cart_position_and_pole_angle():
    env = envs.make("brax/inverted_pendulum/positions", backend="spring")
    whole = envs.make("brax/inverted_pendulum", backend="spring")
    assert env.observation_shape == (2,) and whole.observation_shape == (4,)
    assert env.action_dims == () and env.action_bounds == ((-1.0,), (1.0,))
    np.testing.assert_array_equal(env.reset(jax.random.PRNGKey(3))[0], whole.reset(jax.random.PRNGKey(3))[0][:2])
    assert envs.ENVS.record(env) == {"kind": "brax/inverted_pendulum/positions", "backend": "spring"}


def test_a_bad_backend_or_episode_length_is_refused():
    with pytest.raises(ValueError, match="backend must be one of"):
        envs.make("brax/inverted_pendulum", backend="bullet")
    with pytest.raises(ValueError, match="episode_length must be a positive integer"):
        envs.make("brax/inverted_pendulum", episode_length=0)


def test_ppo_acts_in_a_brax_environment_with_its_gaussian_head():
    config = tiny_ppo(
        env=envs.make("brax/inverted_pendulum/positions", backend="spring"), num_minibatches=1, total_steps=32
    )
    _, metrics = jax.jit(make_train(config))(jax.random.PRNGKey(0))
    assert np.all(np.isfinite(np.asarray(metrics["policy_loss"]))) and int(metrics["env_steps"][-1]) == 32
