"""Mini Pacman's rules (DeepMind's PillEater, "regular") on hand-set states."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import envs
from memrl.envs.minipacman import STANDARD_MAZE, MiniPacmanState, ghost_direction

STAY, RIGHT, UP, LEFT, DOWN = range(5)


@pytest.fixture(scope="module")
def env():
    return envs.make("minipacman/viewport", max_ghosts=2, ghost_speed=0.0, ghost_speed_increase=0.0, stochasticity=0.0)


@pytest.fixture(scope="module")
def step(env):
    return jax.jit(lambda key, state, action: env.step_env(key, state, jnp.array([action]), env.default_params))


def hand_state(agent, ghosts=(), power=0, food=None, pills=((13, 17), (13, 17)), pills_left=(False, False), level=1):
    """A level-``level`` state with the agent, the ghosts given (the others gone) and food everywhere unless given."""
    positions = np.zeros((2, 2), np.int32)
    if ghosts:
        positions[: len(ghosts)] = ghosts
    return MiniPacmanState(
        food=jnp.asarray(~STANDARD_MAZE if food is None else food),
        pills=jnp.asarray(pills, jnp.int32),
        pills_left=jnp.asarray(pills_left),
        agent=jnp.asarray(agent, jnp.int32),
        ghosts=jnp.asarray(positions),
        ghost_dirs=jnp.ones(2, jnp.int32),
        ghosts_left=jnp.arange(2) < len(ghosts),
        power=jnp.int32(power),
        level=jnp.int32(level),
        step=jnp.int32(0),
    )


def test_food_pays_once_and_walls_block(step):
    key = jax.random.PRNGKey(0)
    state = hand_state((1, 1))
    _, state, reward, *_ = step(key, state, RIGHT)
    assert tuple(state.agent) == (1, 2) and float(reward) == 1.0 and not bool(state.food[1, 2])
    _, state, reward, *_ = step(key, state, LEFT)
    _, state, reward2, *_ = step(key, state, RIGHT)
    assert float(reward) == 1.0 and float(reward2) == 0.0  # (1, 1) eaten on the way back; (1, 2) already eaten
    _, state, reward, *_ = step(key, state, UP)  # row 0 is wall
    assert tuple(state.agent) == (1, 2)


def test_a_pill_powers_the_agent_which_then_eats_a_ghost(step, env):
    key = jax.random.PRNGKey(0)
    state = hand_state((1, 1), ghosts=[(1, 3)], pills=((1, 2), (13, 17)), pills_left=(True, False))
    obs, state, reward, terminated, *_ = step(key, state, RIGHT)
    assert float(reward) == 1.0 + 2.0 and int(state.power) == 20 and not bool(state.pills_left[0])
    np.testing.assert_allclose(obs[2, 3], [1.0, 1.0, 0.0])  # the ghost to the right, fully edible (yellow)
    _, state, reward, terminated, *_ = step(key, state, RIGHT)
    assert float(reward) == 1.0 + 5.0 and not bool(state.ghosts_left[0]) and not bool(terminated)
    assert int(state.power) == 19


def test_an_unpowered_ghost_kills(step):
    state = hand_state((1, 1), ghosts=[(1, 2)])
    _, state, reward, terminated, truncated, _ = step(jax.random.PRNGKey(0), state, RIGHT)
    assert bool(terminated) and not bool(truncated) and float(reward) == 1.0  # the food, then death (reward 0)


def test_the_last_food_starts_the_next_level_with_more_ghosts(step):
    food = np.zeros(STANDARD_MAZE.shape, bool)
    food[1, 2] = True
    for level, ghosts in ((1, 1), (2, 2)):  # level 2 -> 1 ghost, level 3 -> 2
        state = hand_state((1, 1), food=food, level=level)
        _, state, reward, terminated, *_ = step(jax.random.PRNGKey(level), state, RIGHT)
        assert int(state.level) == level + 1 and float(reward) == 1.0 and not bool(terminated)
        assert bool(state.food[~STANDARD_MAZE].all()) and int(state.ghosts_left.sum()) == ghosts
        assert int(state.step) == 1 and bool(state.pills_left.all())
        ghost, agent = np.asarray(state.ghosts[:ghosts]), np.asarray(state.agent)
        assert not np.all((ghost >= agent - 5) & (ghost < agent + 5), axis=-1).any()  # outside the 10x10 square


def test_ghosts_follow_corridors_and_chase_or_flee_at_junctions():
    key = jax.random.PRNGKey(0)
    direction = lambda pos, d, agent, powered=False: int(
        ghost_direction(key, jnp.array(pos), jnp.int32(d), jnp.array(agent), powered, 0.0)
    )
    assert direction((1, 2), RIGHT, (13, 1)) == RIGHT  # a corridor (1, 1)-(1, 3): keep going, wherever the agent is
    assert direction((1, 1), LEFT, (13, 1)) == DOWN  # the corner: round the turn, not back
    # (3, 3) is a junction (up, right, left, down open); coming from the left (moving right):
    assert direction((3, 3), RIGHT, (3, 10)) == RIGHT  # the agent to the right: chase
    assert direction((3, 3), RIGHT, (11, 3)) == DOWN  # the agent below
    assert direction((3, 3), RIGHT, (3, 10), powered=True) in (UP, DOWN)  # powered: away, never back (left)


def test_the_viewport_shows_the_agent_food_and_the_wall(env):
    state = hand_state((1, 1), ghosts=[(3, 1)])
    obs = np.asarray(env.observe(state, env.default_params))
    np.testing.assert_allclose(obs[2, 2], [0, 1, 0])  # the agent
    np.testing.assert_allclose(obs[2, 3], [0, 0, 1])  # food to its right
    np.testing.assert_allclose(obs[1, 2], [1, 1, 1])  # the wall above
    np.testing.assert_allclose(obs[0, 2], [0, 0, 0])  # beyond the maze
    np.testing.assert_allclose(obs[4, 2], [1, 0, 0])  # a hungry ghost two rows down


def test_episodes_are_truncated_at_the_frame_cap():
    env = envs.make("minipacman/full", max_ghosts=2, ghost_speed=0.0, ghost_speed_increase=0.0, max_steps=2)
    state = hand_state((1, 1))
    _, state, _, _, truncated, _ = env.step_env(jax.random.PRNGKey(0), state, jnp.array([STAY]), env.default_params)
    _, state, _, _, truncated2, _ = env.step_env(jax.random.PRNGKey(0), state, jnp.array([STAY]), env.default_params)
    assert not bool(truncated) and bool(truncated2)


def test_levels_place_ghosts_away_from_the_agent():
    env = envs.make("minipacman/viewport")
    states = jax.jit(jax.vmap(lambda k: env.reset(k)[1]))(jax.random.split(jax.random.PRNGKey(3), 200))
    assert int(states.ghosts_left.sum(-1).max()) == 1  # level 1: one ghost
    ghost, agent = np.asarray(states.ghosts[:, 0]), np.asarray(states.agent)
    inside = np.all((ghost >= agent - 5) & (ghost < agent + 5), axis=-1)
    assert not inside.any() and not STANDARD_MAZE[ghost[:, 0], ghost[:, 1]].any()


@pytest.mark.parametrize(
    "settings, message",
    [
        (dict(stochasticity=1.5), "stochasticity must lie in"),
        (dict(viewport=2), "odd number"),
        (dict(observation="full"), "fixes observation by its name"),
    ],
)
def test_bad_settings_are_refused(settings, message):
    with pytest.raises(ValueError, match=message):
        envs.make("minipacman/viewport", **settings)
