"""Memory&Planning Game: exact replay of the official implementation's golden streams, and the API."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import envs

STREAMS = [(4, 0), (4, 1), (3, 0), (3, 1)]
FIRST, LAST = 0, 2


def _stream(golden, n, seed):
    prefix = f"n{n}_seed{seed}/"
    return {k[len(prefix) :]: golden[k] for k in golden.files if k.startswith(prefix)}


@pytest.mark.parametrize("n, seed", STREAMS)
def test_replays_golden_streams_exactly(n, seed, data_dir):
    """Each FIRST step starts an episode from the recorded map, position and goal; every other step
    runs memrl's transition on the recorded action, injecting the recorded next goal (the official
    RNG cannot be reproduced), and must give the recorded observation, reward and episode end."""
    env = envs.make(f"memory-planning/{n}x{n}")
    params = env.default_params
    stream = _stream(np.load(data_dir / "memory_planning" / "memory_planning_game.npz"), n, seed)
    np.testing.assert_array_equal(stream["node_order_xy"], np.asarray(env.xy(jnp.arange(n * n))))
    transition = jax.jit(env.transition)
    state, collected = None, 0
    for t in range(len(stream["actions"])):
        if stream["step_type"][t] == FIRST:
            state = env.initial_state(stream["labels_by_node"][t], stream["position_xy"][t], stream["goal_xy"][t])
        else:
            state, reward, terminated = transition(
                state, jnp.array([stream["actions"][t]]), params, jnp.asarray(stream["goal_xy"][t])
            )
            assert float(reward) == stream["reward"][t], t
            assert bool(terminated) == (stream["step_type"][t] == LAST), t
            assert (stream["discount"][t] == 0.0) == bool(terminated), t
            collected += int(reward > 0)
        obs = env.observe(state)
        np.testing.assert_array_equal(obs["position"], stream["obs_position"][t], err_msg=str(t))
        np.testing.assert_array_equal(obs["goal"], stream["obs_goal"][t], err_msg=str(t))
        np.testing.assert_array_equal(state.position, stream["position_xy"][t])
    assert collected > 0  # the streams exercise the goal redraw


def test_episode_lasts_max_steps_and_auto_resets():
    env = envs.make("memory-planning/4x4")
    obs, state = env.reset(jax.random.PRNGKey(0))
    step = jax.jit(env.step)
    for t in range(100):
        obs, new_state, reward, done, info = step(jax.random.PRNGKey(t), state, jnp.array([t % 4]))
        assert bool(done) == (t == 99)
        if not done:
            assert not np.array_equal(new_state.position, state.position)  # moves always succeed on a torus
            state = new_state
    assert bool(info["terminated"]) and not bool(info["truncated"])
    assert int(new_state.timestep) == 0


def test_reset_draws_a_permutation_and_a_goal_away_from_the_start():
    env = envs.make("memory-planning/3x3")
    _, states = jax.vmap(env.reset)(jax.random.split(jax.random.PRNGKey(1), 500))
    assert np.all(np.sort(np.asarray(states.labels), axis=1) == np.arange(9))
    assert not np.any(np.all(np.asarray(states.position) == np.asarray(states.goal), axis=1))
    goals = np.asarray(env.node(states.goal))
    assert len(np.unique(goals)) == 9


def test_collect_redraws_goal_elsewhere():
    env = envs.make("memory-planning/4x4")
    state = env.initial_state(np.arange(16), np.array([1, 2]), np.array([1, 2]))
    rewards = []
    for t in range(50):
        _, state, reward, _, _, _ = env.step_env(jax.random.PRNGKey(t), state, jnp.array([4]), env.default_params)
        rewards.append(float(reward))
        assert not np.array_equal(state.goal, [1, 2])
        state = state._replace(goal=jnp.array([1, 2]))
    assert rewards == [1.0] * 50


def test_bad_size_and_params_are_rejected():
    from memrl.envs.memory_planning import MemoryPlanningGame

    with pytest.raises(ValueError, match="maze_size must be an integer >= 2"):
        MemoryPlanningGame(maze_size=1)
    with pytest.raises(ValueError, match="no setting 'max_step'; its settings: max_steps"):
        envs.make("memory-planning/4x4", max_step=5)
