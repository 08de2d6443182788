"""gymnasium environments stepped on the host (``gymnasium/<id>``): the same steps as gymnasium's
own vector loop, the same episodes as the JAX environment they wrap, the spaces memrl reads, and
clear refusals."""

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import envs
from memrl.envs.gymnasium_adapter import GymnasiumEnv
from memrl.envs.host_environment import as_memrl_observation, observation_structure, seeds_of
from memrl.envs.tmaze_policies import oracle

SHORT_TLN = dict(maze_length=6, timeout=10)
gymnasium.register("memrl-test/ShortTLN-v0", entry_point=lambda: GymnasiumEnv("tmaze/T-LN", **SHORT_TLN))


class MatrixActions(gymnasium.Env):
    """An environment whose actions are a 2×2 matrix, which memrl's agents cannot take."""

    observation_space = gymnasium.spaces.Box(0.0, 1.0, (2,), np.float32)
    action_space = gymnasium.spaces.Box(-1.0, 1.0, (2, 2), np.float32)


gymnasium.register("memrl-test/MatrixActions-v0", entry_point=MatrixActions)


def batched(env):
    return jax.jit(jax.vmap(env.reset, (0, None))), jax.jit(jax.vmap(env.step, (0, 0, 0, None)))


def gymnasium_vector(env_id: str, keys):
    """(gymnasium's own same-step-resetting vector of ``env_id``, one copy a key, reset as memrl seeds
    them; its first observations)."""
    vector = gymnasium.vector.SyncVectorEnv(
        [lambda: gymnasium.make(env_id)] * len(keys), autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP
    )
    return vector, vector.reset(seed=seeds_of(np.asarray(keys)))[0]


def test_steps_are_gymnasiums_own_vector_loop_with_same_step_resets():
    env = envs.make("gymnasium/CartPole-v1")
    assert env.action_dims == (2,) and env.observation_shape == (4,)
    keys = jax.random.split(jax.random.PRNGKey(0), 3)
    reset, step = batched(env)
    reference, expected_obs = gymnasium_vector("CartPole-v1", keys)
    obs, state = reset(keys, env.default_params)
    np.testing.assert_allclose(obs, expected_obs, rtol=1e-6)
    actions = np.random.default_rng(0).integers(0, 2, (40, 3))
    episodes_ended = 0
    for action in actions:
        obs, state, reward, done, info = step(keys, state, jnp.asarray(action[:, None], jnp.int32), env.default_params)
        expected_obs, expected_reward, terminated, truncated, expected_info = reference.step(action)
        np.testing.assert_allclose(obs, expected_obs, rtol=1e-6)  # a new episode's first observation where done
        np.testing.assert_array_equal(reward, expected_reward)
        np.testing.assert_array_equal(done, terminated | truncated)
        for i in np.flatnonzero(done):
            np.testing.assert_allclose(info["final_obs"][i], expected_info["final_obs"][i], rtol=1e-6)
        episodes_ended += int(done.sum())
    assert episodes_ended >= 3
    assert env.host_seconds > 0  # the time in the host's resets and steps, which ``memrl bench host`` reads


@pytest.mark.parametrize("env_id, bound", [("Pendulum-v1", 2.0), ("InvertedPendulum-v5", 3.0)])  # the second: MuJoCo's
def test_continuous_actions_step_gymnasiums_environment_as_its_own_vector_loop(env_id, bound):
    env = envs.make(f"gymnasium/{env_id}")
    assert env.action_dims == () and env.action_bounds == ((-bound,), (bound,))
    keys = jax.random.split(jax.random.PRNGKey(0), 2)
    reset, step = batched(env)
    reference, _ = gymnasium_vector(env_id, keys)
    _, state = reset(keys, env.default_params)
    for action in np.random.default_rng(0).uniform(-bound, bound, (5, 2, 1)).astype(np.float32):
        obs, state, reward, _, _ = step(keys, state, jnp.asarray(action), env.default_params)
        expected_obs, expected_reward, *_ = reference.step(action)
        np.testing.assert_allclose(obs, expected_obs, rtol=1e-5)
        np.testing.assert_allclose(reward, expected_reward, rtol=1e-5)


def test_observed_keeps_the_chosen_components_of_each_observation():
    """Pendulum's positions without the velocity (cos θ, sin θ of [cos θ, sin θ, θ']), at the reset and
    after steps; a choice that is not a component of a one-dimensional observation is refused."""
    env = envs.make("gymnasium/Pendulum-v1", observed=(0, 1))
    assert env.observation_shape == (2,)
    keys = jax.random.split(jax.random.PRNGKey(0), 2)
    reset, step = batched(env)
    reference, expected = gymnasium_vector("Pendulum-v1", keys)
    obs, state = reset(keys, env.default_params)
    np.testing.assert_allclose(obs, expected[:, :2], rtol=1e-5)
    obs, *_ = step(keys, state, jnp.zeros((2, 1)), env.default_params)
    np.testing.assert_allclose(obs, reference.step(np.zeros((2, 1), np.float32))[0][:, :2], rtol=1e-5)
    with pytest.raises(ValueError, match="observed keeps components of a one-dimensional observation"):
        envs.make("gymnasium/Pendulum-v1", observed=(3,))


def run_oracle(env, steps: int, num_envs: int = 4):
    """(return, length) of every episode the T-maze oracle finishes in ``steps`` batched steps,
    its memory cleared at each episode start as an agent's carry is."""
    policy = oracle(envs.make("tmaze/T-LN", **SHORT_TLN))
    reset, step = batched(env)
    act = jax.jit(jax.vmap(policy.act))
    keys = jax.random.split(jax.random.PRNGKey(1), num_envs)
    params = env.default_params
    obs, state = reset(keys, params)
    fresh = jax.vmap(policy.initial_memory)(jnp.zeros(num_envs))
    memory, episode_return, length, finished = fresh, np.zeros(num_envs), np.zeros(num_envs, int), []
    for t in range(steps):
        action, memory = act(keys, obs, memory)
        obs, state, reward, done, _ = step(jax.random.split(jax.random.PRNGKey(t), num_envs), state, action, params)
        episode_return, length = episode_return + np.asarray(reward), length + 1
        for i in np.flatnonzero(done):
            finished.append((i, round(float(episode_return[i]), 4), int(length[i])))
        memory = jax.tree.map(lambda m, f: jnp.where(done, f, m), memory, fresh)
        episode_return, length = np.where(done, 0.0, episode_return), np.where(done, 0, length)
    return finished


def test_tln_through_gymnasium_gives_the_episodes_of_the_jax_tln():
    """The memory-reading oracle on T-LN run natively and round-tripped through gymnasium on the
    host: the same episodes, each with the oracle's return and the corridor's length."""
    native, host = (
        run_oracle(envs.make("tmaze/T-LN", **SHORT_TLN), 40),
        run_oracle(envs.make("gymnasium/memrl-test/ShortTLN-v0"), 40),
    )
    assert host == native and len(native) >= 8
    assert {(r, n) for _, r, n in native} == {(4.0, SHORT_TLN["maze_length"])}


def test_space_conversions():
    spaces = gymnasium.spaces
    tuple_space = spaces.Tuple(
        (spaces.Discrete(2), spaces.MultiDiscrete([2, 3]), spaces.Box(0, 255, (2, 2, 1), np.uint8))
    )
    structure = observation_structure(tuple_space, "test")
    assert {k: (v.shape, v.dtype) for k, v in structure.items()} == {
        "0": ((2,), np.float32),
        "1": ((5,), np.float32),
        "2": ((2, 2, 1), np.uint8),
    }
    converted = as_memrl_observation(
        tuple_space, (np.array([1, 0]), np.array([[1, 2], [0, 0]]), np.zeros((2, 2, 2, 1), np.uint8))
    )
    np.testing.assert_array_equal(converted["0"], [[0, 1], [1, 0]])
    np.testing.assert_array_equal(converted["1"], [[0, 1, 0, 0, 1], [1, 0, 1, 0, 0]])
    assert converted["2"].dtype == np.uint8


@pytest.mark.parametrize(
    "name, message",
    [
        (
            "gymnasium/memrl-test/MatrixActions-v0",
            "\\(one-dimensional\\) Box actions; its action space is Box\\(-1.0, 1.0, \\(2, 2\\)",
        ),
        ("gymnasium/NoSuchEnv-v0", "gymnasium cannot make 'NoSuchEnv-v0'"),
        ("gymnasium/no_such_module:Thing-v0", "gymnasium cannot make 'no_such_module:Thing-v0'"),
    ],
)
def test_what_memrl_cannot_run_is_refused(name, message):
    with pytest.raises(ValueError, match=message):
        envs.make(name)


def test_unknown_envs_list_the_gymnasium_family():
    with pytest.raises(ValueError, match="unknown environment 'gymnasium'; known: .*; and gymnasium/<id>"):
        envs.make("gymnasium")


def test_a_state_from_another_process_truncates_its_episodes_and_starts_fresh_ones():
    """What a resumed run sees: the checkpoint's vector id is unknown to a new process's environment,
    so every copy's episode ends there (truncated, reward 0) and a new one starts."""
    keys = jax.random.split(jax.random.PRNGKey(0), 2)
    _, state = batched(envs.make("gymnasium/CartPole-v1"))[0](keys, ())
    fresh = envs.make("gymnasium/CartPole-v1")
    _, step = batched(fresh)
    obs, new_state, reward, done, info = step(keys, state, jnp.zeros((2, 1), jnp.int32), ())
    assert done.all() and info["truncated"].all() and not info["terminated"].any() and not reward.any()
    assert (new_state != state).all() and obs.shape == (2, 4)
    _, _, _, done, _ = step(keys, new_state, jnp.zeros((2, 1), jnp.int32), ())
    assert not done.any()  # the new vector's episodes go on


def test_an_environment_of_a_missing_extra_names_its_install_command(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "popgym", None)  # as if not installed
    with pytest.raises(
        ValueError, match='gymnasium cannot make .*popgym.* \\(install it: pip install "memrl\\[popgym\\]"\\)'
    ):
        envs.make("gymnasium/popgym:popgym-RepeatPreviousEasy-v0")
