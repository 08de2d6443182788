"""Adapters: memrl envs as gymnasium envs, gymnax envs as memrl envs."""

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import envs
from memrl.envs.gymnasium_adapter import GymnasiumEnv, make_vector


@pytest.mark.parametrize("name", ["tmaze/T-LS", "memory-planning/4x4", "ballet/2_delay16", "pvm"])
def test_gymnasium_env_passes_the_gymnasium_checker(name):
    from gymnasium.utils.env_checker import check_env

    check_env(GymnasiumEnv(name), skip_render_check=True)


def test_ballet_spaces_keep_the_image_and_token_types():
    env = GymnasiumEnv("ballet/2_delay16")
    assert env.observation_space["image"] == gymnasium.spaces.Box(0, 255, (99, 99, 3), np.uint8)
    assert env.observation_space["language"] == gymnasium.spaces.Discrete(14)
    obs, _ = env.reset(seed=0)
    assert obs["image"].dtype == np.uint8 and int(obs["language"]) == 0  # "watch"


def test_gymnasium_env_plays_an_oracle_episode():
    env = GymnasiumEnv("tmaze/T-LN", maze_length=5)
    assert env.action_space == gymnasium.spaces.Discrete(4)
    obs, _ = env.reset(seed=3)
    goal_up = obs[1] > 0  # T-LN shows the indicator in the first observation
    total, terminated, truncated = 0.0, False, False
    while not (terminated or truncated):
        action = (2 if goal_up else 3) if obs[2] == 1.0 else 1
        obs, reward, terminated, truncated, _ = env.step(action)
        total += reward
    assert total == 4.0 and terminated and not truncated


def test_vector_env_and_multidiscrete_actions():
    vec = make_vector("tmaze/T-LS", 3)
    obs, _ = vec.reset(seed=0)
    assert obs.shape == (3, 4)
    assert vec.single_action_space == gymnasium.spaces.MultiDiscrete([4, 2])
    obs, reward, terminated, truncated, _ = vec.step(np.array([[1, 0], [1, 1], [2, 0]]))
    assert obs.shape == (3, 4) and reward.shape == (3,)


def test_gymnax_env_is_a_memrl_env_and_keeps_truncation_apart():
    env = envs.make("gymnax/CartPole-v1", max_steps_in_episode=5)
    assert env.action_dims == (2,) and env.observation_shape == (4,)
    obs, state = env.reset(jax.random.PRNGKey(0))
    step = jax.jit(env.step)
    for t in range(5):
        obs, state, reward, done, info = step(jax.random.PRNGKey(t), state, jnp.array([t % 2]))
    assert bool(done) and bool(info["truncated"]) and not bool(info["terminated"])


def test_memrl_ppo_trains_on_a_gymnax_env():
    from memrl.learn.learners import make_train
    from memrl.learn.ppo_config import PPOConfig

    config = PPOConfig(
        env="gymnax/MemoryChain-bsuite", core="gru", core_args={"hidden": 16}, encoder_widths=(16,),
        head_widths=(16,), num_envs=8, rollout_len=16, total_steps=8 * 16 * 2,
    )
    _, metrics = jax.jit(make_train(config))(jax.random.PRNGKey(0))
    assert np.all(np.isfinite(np.asarray(metrics["policy_loss"])))
    assert int(metrics["env_steps"][-1]) == 256
