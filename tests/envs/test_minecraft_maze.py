"""AMRL's Minecraft mazes (2D analogue): rules on hand-built episodes, what the view shows, and
the scripted policies' optimum and memory-less returns (App. A.1.4-A.1.6)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import envs
from memrl.envs import minecraft_maze as mm
from memrl.envs.minecraft_maze import EAST, NORTH, SOUTH, WEST
from memrl.envs.minecraft_maze_policies import forgetter, oracle
from memrl.envs.minecraft_view import CODE, COLOURS, crop
from memrl.envs.scripted_policy import episode_rewards

SMALL = envs.make("minecraft-maze/MC-LS", num_rooms=2)
PARAMS = SMALL.default_params
step = jax.jit(lambda state, action: SMALL.step_env(jax.random.PRNGKey(0), state, jnp.array([action]), PARAMS))
# room 0's column is diamond (safe side east), room 1's iron (west)
ROOM_WAY = {True: [NORTH, NORTH, EAST, NORTH, NORTH, WEST], False: [NORTH, NORTH, WEST, NORTH, NORTH, EAST]}


def play(state, actions):
    """(state, [(reward, terminated, truncated)] per action)."""
    seen = []
    for action in actions:
        _, state, reward, terminated, truncated, _ = step(state, action)
        seen.append((round(float(reward), 6), bool(terminated), bool(truncated)))
    return state, seen


def cell(state):
    return int(state.row), int(state.col)


@pytest.mark.parametrize(
    ("green", "choice", "final"), [(True, EAST, 4.0), (True, WEST, -3.0), (False, WEST, 4.0), (False, EAST, -3.0)]
)
def test_a_hand_walked_episode_earns_0_1_a_step_and_4_or_minus_3_at_the_end(green, choice, final):
    state = SMALL.initial_state([green, False], [True, False])
    actions = [EAST] + ROOM_WAY[True] + ROOM_WAY[False] + [choice]
    state, seen = play(state, actions)
    assert [r for r, _, _ in seen] == [0.1] * 13 + [final]
    assert [t for _, t, _ in seen] == [False] * 13 + [True] and not any(tr for *_, tr in seen)


def test_off_the_path_actions_do_nothing():
    state = SMALL.initial_state([True, False], [True, False])
    for actions in (
        [],
        [EAST],
        [EAST, NORTH],
        [EAST, NORTH, NORTH],
        [EAST, NORTH, NORTH, EAST],
        [EAST, NORTH, NORTH, EAST, NORTH],
        [EAST, NORTH, NORTH, EAST, NORTH, NORTH],
    ):
        here, _ = play(state, actions)
        needed = int(SMALL.required_action(here))
        for action in {NORTH, EAST, SOUTH, WEST} - {needed}:
            stayed, [(reward, terminated, truncated)] = play(here, [action])
            assert cell(stayed) == cell(here) and reward == 0.0 and not terminated and not truncated, (actions, action)
    # the ledge of room 0 (diamond): west is the closed, unsafe side; north is the column
    ledge, _ = play(state, [EAST, NORTH, NORTH])
    assert cell(ledge) == (3, mm.CENTRE_COL) and int(SMALL.required_action(ledge)) == EAST


def test_an_undecided_episode_is_truncated_at_the_timeout():
    _, seen = play(SMALL.initial_state([True, False], [True, False]), [SOUTH] * PARAMS.timeout)
    assert [tr for *_, tr in seen].index(True) == PARAMS.timeout - 1 and not any(t for _, t, _ in seen)


@pytest.mark.parametrize(
    ("first", "second", "east"), [(True, False, True), (False, True, False), (True, True, False), (False, False, False)]
)
def test_mc_lso_goal_is_east_only_for_green_then_red(first, second, east):
    ordered = envs.make("minecraft-maze/MC-LSO", num_rooms=1)
    state = ordered.initial_state([first, second], [True])
    steps = jax.jit(lambda s, a: ordered.step_env(jax.random.PRNGKey(0), s, jnp.array([a]), ordered.default_params))
    rewards = []
    for action in [EAST, EAST] + ROOM_WAY[True] + [EAST]:
        _, state, reward, *_ = steps(state, action)
        rewards.append(round(float(reward), 6))
    assert rewards == [0.1] * 8 + [4.0 if east else -3.0]


def path_states(env, state):
    """Every state along the oracle's way through the maze (the last one at the purple cell)."""
    states = [state]
    for _ in range(env.rewarded_steps):
        action = int(env.required_action(states[-1]))
        states.append(env.step_env(jax.random.PRNGKey(0), states[-1], jnp.array([action]), env.default_params)[1])
    return states


def test_the_indicators_are_seen_only_from_their_platforms():
    ordered = envs.make("minecraft-maze/MC-LSO", num_rooms=2)
    states = path_states(ordered, ordered.initial_state([True, False], [True, False]))
    codes = [np.asarray(crop(ordered.world(s), s.row, s.col)) for s in states]
    # on a platform the agent stands on it (row 3 of the north-up crop) and faces its indicator
    assert [(c[3, 2], c[2, 2]) for c in codes[:2]] == [
        (CODE["platform"], CODE["green"]),
        (CODE["platform"], CODE["red"]),
    ]
    assert not np.isin(codes[0], [CODE["red"]]).any() and not np.isin(codes[1], [CODE["green"]]).any()
    assert all(not np.isin(c, [CODE["green"], CODE["red"]]).any() for c in codes[2:])
    assert codes[-1][3, 2] == CODE["end"]


def test_the_view_alone_tells_every_rewarded_step():
    """What a policy without memory can do: along every way through the maze, equal pictures ask
    for the same action, except at the purple cell."""
    env = envs.make("minecraft-maze/MC-LS", num_rooms=3)
    needed = {}
    for green in (True, False):
        for diamond in ([True, False, True], [False, True, False]):
            for state in path_states(env, env.initial_state([green, False], diamond))[:-1]:
                picture = np.asarray(env.observe(jax.random.PRNGKey(0), state, env.default_params)).tobytes()
                needed.setdefault(picture, set()).add(int(env.required_action(state)))
    assert all(len(actions) == 1 for actions in needed.values())
    assert len(needed) > 6


def test_pictures_and_the_mc_lsn_noise():
    state = SMALL.initial_state([True, False], [True, False])
    clean = np.asarray(SMALL.observe(jax.random.PRNGKey(0), state, PARAMS))
    assert clean.shape == (20, 20, 3) and clean.dtype == np.float32
    np.testing.assert_allclose(
        clean[8:12, 8:12], np.broadcast_to(COLOURS[CODE["green"]], (4, 4, 3))
    )  # the indicator ahead
    np.testing.assert_array_equal(
        clean, np.asarray(SMALL.observe(jax.random.PRNGKey(1), state, PARAMS))
    )  # no noise in MC-LS
    noisy_env = envs.make("minecraft-maze/MC-LSN", num_rooms=2)
    noisy = np.stack(
        [np.asarray(noisy_env.observe(jax.random.PRNGKey(k), state, noisy_env.default_params)) for k in range(20)]
    )
    assert noisy.min() >= -1.0 and noisy.max() <= 1.0
    mid = np.abs(clean) < 0.8  # pixels far from the clipping bounds
    residual = (noisy - clean)[:, mid]
    assert abs(residual.std() - 0.05) < 0.005 and abs(residual.mean()) < 0.005
    assert (noisy[:, clean == -1.0] >= -1.0).all() and (noisy[:, clean == -1.0] > -1.0).any()


def test_settings_are_checked():
    with pytest.raises(ValueError, match="num_rooms must be an integer >= 1"):
        envs.make("minecraft-maze/MC-LS", num_rooms=0)
    with pytest.raises(ValueError, match="noise_std must be >= 0"):
        envs.make("minecraft-maze/MC-LSN", noise_std=-0.1)
    with pytest.raises(ValueError, match="no setting 'rooms'; its settings: num_rooms"):
        envs.make("minecraft-maze/MC-LS", rooms=3)


@pytest.mark.parametrize(
    ("variant", "optimum", "memoryless"), [("MC-LS", 13.7, 10.2), ("MC-LSO", 10.2, 8.45), ("MC-LSN", 10.1, 6.6)]
)
def test_scripted_policies_give_the_papers_optimum_and_memoryless_returns(variant, optimum, memoryless):
    env = envs.make(f"minecraft-maze/{variant}")
    steps = env.rewarded_steps + 1

    @jax.jit
    def returns(key):
        best_key, forget_key = jax.random.split(key)
        best = episode_rewards(env, oracle(env), best_key, 8, steps).sum(-1)
        return best, episode_rewards(env, forgetter(env), forget_key, 1000, steps).sum(-1)

    best, forgot = returns(jax.random.PRNGKey(0))
    np.testing.assert_allclose(np.asarray(best), optimum, rtol=1e-5)
    assert np.all(np.isclose(forgot, optimum, atol=1e-4) | np.isclose(forgot, optimum - 7.0, atol=1e-4))
    assert abs(float(forgot.mean()) - memoryless) < 0.35  # 1000 episodes: the mean's standard deviation is at most 0.11
