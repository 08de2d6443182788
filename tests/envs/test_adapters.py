"""Adapters: memrl envs as gymnasium envs, gymnax envs as memrl envs and memrl envs as gymnax envs."""

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import cores, envs
from memrl.envs.as_gymnax import AsGymnax
from memrl.envs.gymnasium_adapter import GymnasiumEnv, make_vector


@pytest.mark.parametrize("name", ["tmaze/T-LS", "memory-planning/4x4", "ballet/2_delay16", "pvm"])
def test_gymnasium_env_passes_the_gymnasium_checker(name):
    from gymnasium.utils.env_checker import check_env

    check_env(GymnasiumEnv(name), skip_render_check=True)


@pytest.mark.parametrize("name", ["tmaze/T-LO", "minecraft-maze/MC-LSN"])
def test_bounded_observations_pass_the_checker_without_a_warning(name):
    import warnings

    from gymnasium.utils.env_checker import check_env

    env = GymnasiumEnv(name)
    assert (env.observation_space.low.min(), env.observation_space.high.max()) == (-1.0, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an unbounded Box makes the checker warn
        check_env(env, skip_render_check=True)


def test_a_native_env_takes_one_number_for_one_action_component():
    env = envs.make("tmaze/T-LN", maze_length=4, timeout=8)
    _, state = env.reset(jax.random.PRNGKey(0))
    scalar = env.step(jax.random.PRNGKey(1), state, 1)
    vector = env.step(jax.random.PRNGKey(1), state, jnp.array([1]))
    for a, b in zip(jax.tree.leaves(scalar), jax.tree.leaves(vector)):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="takes actions of shape \\(1,\\)"):
        env.step(jax.random.PRNGKey(1), state, jnp.array([1, 0]))


def test_ballet_spaces_keep_the_image_and_token_types():
    env = GymnasiumEnv("ballet/2_delay16")
    assert env.observation_space["image"] == gymnasium.spaces.Box(0, 255, (99, 99, 3), np.uint8)
    assert env.observation_space["language"] == gymnasium.spaces.Discrete(14)
    obs, _ = env.reset(seed=0)
    assert obs["image"].dtype == np.uint8 and int(obs["language"]) == 0  # "watch"


def test_a_continuous_memrl_env_is_a_gymnasium_box_and_passes_the_checker():
    from gymnasium.utils.env_checker import check_env

    env = GymnasiumEnv("gymnax/Pendulum-v1/positions")
    assert env.action_space == gymnasium.spaces.Box(-2.0, 2.0, (1,), np.float32)
    check_env(env, skip_render_check=True)
    with pytest.raises(ValueError, match="actions are continuous"):
        AsGymnax("gymnax/Pendulum-v1")


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


def test_every_gymnax_env_is_registered_or_said_why_not():
    import gymnax

    from memrl.envs.gymnax_adapter import (
        CONTINUOUS_GYMNAX_ENVS,
        DISCRETE_GYMNAX_ENVS,
        POSITIONS_ONLY,
        UNWRAPPED_GYMNAX_ENVS,
    )

    wrapped = [name for name in gymnax.registered_envs if name not in UNWRAPPED_GYMNAX_ENVS]
    discrete = {name for name in wrapped if hasattr(gymnax.make(name)[0].action_space(), "n")}
    assert discrete == set(DISCRETE_GYMNAX_ENVS) and set(wrapped) - discrete == set(CONTINUOUS_GYMNAX_ENVS)
    registered = {name.removeprefix("gymnax/") for name in envs.ENVS.names() if name.startswith("gymnax/")}
    assert registered == set(wrapped) | {f"{name}/positions" for name in POSITIONS_ONLY}
    assert set(UNWRAPPED_GYMNAX_ENVS) <= set(gymnax.registered_envs)
    for name in ("Seaquest-MinAtar", "Pong-misc", "BernoulliBandit-misc"):  # some of those added last: one step each
        env = envs.make(f"gymnax/{name}")
        obs, state = env.reset(jax.random.PRNGKey(0))
        obs, state, reward, done, _ = env.step(jax.random.PRNGKey(1), state, jnp.array([0]))
        assert obs.shape == env.observation_shape and reward.shape == () and done.dtype == bool


def test_memrl_ppo_trains_on_a_gymnax_env():
    from memrl.learn.learners import make_train
    from memrl.learn.ppo_config import PPOConfig

    config = PPOConfig(
        env=envs.make("gymnax/MemoryChain-bsuite"),
        core=cores.make("gru", hidden=16),
        encoder_widths=(16,),
        head_widths=(16,),
        num_envs=8,
        rollout_len=16,
        total_steps=8 * 16 * 2,
    )
    _, metrics = jax.jit(make_train(config))(jax.random.PRNGKey(0))
    assert np.all(np.isfinite(np.asarray(metrics["policy_loss"])))
    assert int(metrics["env_steps"][-1]) == 256


def test_a_memrl_env_behind_gymnax_steps_as_memrl_does_with_scalar_actions():
    from gymnax.environments import environment, spaces

    env = AsGymnax("tmaze/T-LN", maze_length=3)
    assert isinstance(env, environment.Environment)
    assert isinstance(env.action_space(), spaces.Discrete) and env.action_space().n == 4 == env.num_actions
    memrl_env = env.env
    assert env.observation_space(env.default_params).shape == memrl_env.observation_shape
    obs, state = env.reset(jax.random.PRNGKey(0), env.default_params)
    memrl_obs, memrl_state = memrl_env.reset(jax.random.PRNGKey(0))
    step, memrl_step = jax.jit(env.step), jax.jit(memrl_env.step)
    episodes = 0
    for t, action in enumerate([1, 1, 1, 2, 0, 1]):  # corridor, junction, turns
        obs, state, reward, terminated, truncated, info = step(
            jax.random.PRNGKey(t), state, jnp.int32(action), env.default_params
        )
        memrl_obs, memrl_state, memrl_reward, memrl_done, memrl_info = memrl_step(
            jax.random.PRNGKey(t), memrl_state, jnp.array([action])
        )
        np.testing.assert_array_equal(obs, memrl_obs)
        np.testing.assert_array_equal(info["final_observation"], memrl_info["final_obs"])
        assert float(reward) == float(memrl_reward) and bool(terminated | truncated) == bool(memrl_done)
        assert bool(terminated) == bool(memrl_info["terminated"]) and set(info) == {
            "terminated",
            "truncated",
            "final_observation",
        }
        episodes += int(terminated | truncated)
    assert episodes >= 1  # auto-reset compared too
    with pytest.raises(NotImplementedError, match="truncation in step_env"):
        env.is_truncated(state, env.default_params)


def random_rollout(env, params, key, num_envs: int = 4, steps: int = 60):
    """A rollout written for gymnax 1.0's own environments: vmapped resets and steps, random actions."""
    reset_keys = jax.random.split(key, num_envs)
    obs, state = jax.vmap(env.reset, (0, None))(reset_keys, params)

    def body(carry, key):
        obs, state = carry
        action_key, step_key = jax.random.split(key)
        action = jax.random.randint(action_key, (num_envs,), 0, env.action_space(params).n)
        obs, state, reward, terminated, truncated, info = jax.vmap(env.step, (0, 0, 0, None))(
            jax.random.split(step_key, num_envs), state, action, params
        )
        return (obs, state), (obs, reward, terminated, truncated, info["final_observation"])

    return jax.lax.scan(body, (obs, state), jax.random.split(key, steps))[1]


def test_a_gymnax_rollout_runs_unchanged_on_as_gymnax_and_matches_gymnax():
    import gymnax

    from memrl.envs.gymnax_adapter import GymnaxEnv

    native, params = gymnax.make("CartPole-v1")
    params = params.replace(max_steps_in_episode=15)  # truncations as well as terminations
    ours = AsGymnax(GymnaxEnv("CartPole-v1", params=params))
    theirs = jax.jit(lambda key: random_rollout(native, params, key))(jax.random.PRNGKey(3))
    mine = jax.jit(lambda key: random_rollout(ours, params, key))(jax.random.PRNGKey(3))
    for a, b in zip(theirs, mine):  # the same episodes; the floats of two programs, to rounding
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-5, atol=1e-6)
    assert np.asarray(theirs[2]).any() and np.asarray(theirs[3]).any()  # both kinds of episode end happened


def test_gymnax_view_refuses_what_gymnax_cannot_say():
    with pytest.raises(ValueError, match="one discrete choice"):
        AsGymnax("tmaze/T-LS")


def test_gymnax_view_keeps_named_parts_in_a_dict_space():
    env = AsGymnax("ballet/2_delay16")
    space = env.observation_space(env.default_params)
    obs, state = env.reset(jax.random.PRNGKey(0), env.default_params)
    assert set(space.spaces) == set(obs) == {"image", "language"} and space.spaces["language"].n == 14
    inside = lambda obs: all(bool(space.spaces[k].contains(obs[k])) for k in obs)  # gymnax's Dict reads attributes
    assert inside(obs) and env.observation_space().spaces["image"].high == 255
    obs, *_ = env.step(jax.random.PRNGKey(1), state, 0, env.default_params)
    assert inside(obs)


@pytest.mark.parametrize(
    "name, package, extra",
    [
        ("craftax/Craftax-Classic-Symbolic-v1", "craftax", "craftax"),
        ("brax/inverted_pendulum", "brax", "brax"),
        ("xminigrid/MiniGrid-MemoryS8", "xminigrid", "xminigrid"),
    ],
)
def test_a_jax_suite_without_its_extra_says_what_to_install(monkeypatch, name, package, extra):
    import sys

    for module in [m for m in sys.modules if m == package or m.startswith(f"{package}.")]:
        monkeypatch.setitem(sys.modules, module, None)  # as where the extra is not installed
    monkeypatch.setitem(sys.modules, package, None)
    with pytest.raises(ValueError, match=rf'need {package}.*: pip install "memrl\[{extra}\]"'):
        envs.make(name)
