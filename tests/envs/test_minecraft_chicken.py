"""AMRL's Minecraft Chicken (2D analogue): rules on a hand-played episode, the floor's signal and
the scripted policies' optimum (8.8, App. A.2.3) and memory-less returns."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import envs
from memrl.envs import minecraft_chicken as mc
from memrl.envs.minecraft_chicken import BACKWARD, COLLECT, FORWARD, LEFT, RIGHT
from memrl.envs.minecraft_chicken_policies import forgetter, oracle
from memrl.envs.minecraft_view import CODE, crop
from memrl.envs.scripted_policy import episode_rewards

ENV = envs.make("minecraft-maze/chicken")
PARAMS = ENV.default_params
step = jax.jit(lambda state, action: ENV.step_env(jax.random.PRNGKey(3), state, jnp.array([action]), PARAMS))


def play(state, actions):
    seen = []
    for action in actions:
        _, state, reward, terminated, truncated, _ = step(state, action)
        seen.append((round(float(reward), 6), bool(terminated), bool(truncated)))
    return state, seen


def test_chickens_take_turns_between_c1_or_c2_and_c3_and_block_the_way():
    state = ENV.initial_state(True, mc.C1_C2[0])
    # collecting a chicken that is not right in front does nothing; c1 blocks the move west onto it
    state, seen = play(state, [COLLECT, FORWARD, FORWARD, LEFT, COLLECT])
    assert [r for r, *_ in seen] == [0.0] * 5 and tuple(np.asarray(state.agent)) == (3, 2)
    state = ENV.initial_state(True, mc.C1_C2[0])
    state, seen = play(state, [LEFT, FORWARD, COLLECT])  # the shortest way: to the cell south of c1
    assert [r for r, *_ in seen] == [0.0, 0.0, 0.1] and tuple(np.asarray(state.chicken)) == mc.C3
    blocked, [(reward, *_)] = play(state, [RIGHT])  # c3 stands east of the agent now
    assert tuple(np.asarray(blocked.agent)) == (2, 1) and reward == 0.0
    state, seen = play(state, [BACKWARD, RIGHT, COLLECT])
    assert [r for r, *_ in seen] == [0.0, 0.0, 0.1] and tuple(np.asarray(state.chicken)) in mc.C1_C2
    assert not any(t or tr for _, t, tr in seen)


@pytest.fixture(scope="module")
def at_the_choice():
    """Per floor colour: the floor under the agent at each of the 144 steps before the choice
    (stepping back against the south wall) and the state at the choice."""
    walked = {}
    for green in (True, False):
        state, floors = ENV.initial_state(green, mc.C1_C2[1]), []
        for _ in range(mc.ChickenParams.signal_steps + mc.ChickenParams.grey_steps):
            floors.append(int(ENV.world(state, PARAMS)[1, 1]))
            state, [(_, terminated, truncated)] = play(state, [BACKWARD])
            assert not terminated and not truncated
        walked[green] = floors, state
    return walked


@pytest.mark.parametrize("green", [True, False])
def test_the_floor_signals_then_turns_grey_then_purple_for_the_choice(at_the_choice, green):
    floors, state = at_the_choice[green]
    colour = CODE["green"] if green else CODE["red"]
    assert floors == [colour] * 48 + [CODE["grey"]] * 96 and int(ENV.world(state, PARAMS)[1, 1]) == CODE["end"]
    assert int(crop(ENV.world(state, PARAMS), state.agent[0], state.agent[1])[3, 2]) == CODE["end"]  # the agent sees it


@pytest.mark.parametrize(
    ("green", "choice", "reward"),
    [
        (True, RIGHT, 4.0),
        (False, LEFT, 4.0),
        (True, LEFT, -3.0),
        (False, RIGHT, -3.0),
        (True, FORWARD, -3.0),
        (False, COLLECT, -3.0),
    ],
)
def test_left_recalls_red_and_right_green_and_anything_else_fails(at_the_choice, green, choice, reward):
    _, [(got, terminated, _)] = play(at_the_choice[green][1], [choice])
    assert got == reward and terminated


def test_settings_are_checked():
    with pytest.raises(ValueError, match="signal_steps must be >= 1"):
        envs.make("minecraft-maze/chicken", signal_steps=0)
    with pytest.raises(ValueError, match="no setting 'chickens'; its settings: signal_steps"):
        envs.make("minecraft-maze/chicken", chickens=3)


def test_the_oracle_gets_8_8_and_a_forgetter_5_3():
    @jax.jit
    def returns(key):
        best_key, forget_key = jax.random.split(key)
        return episode_rewards(ENV, oracle(ENV), best_key, 8, 145), episode_rewards(
            ENV, forgetter(ENV), forget_key, 1000, 145
        )

    best, forgot = returns(jax.random.PRNGKey(0))
    np.testing.assert_allclose(np.asarray(best.sum(-1)), 8.8, rtol=1e-5)
    assert np.all(np.isclose(best[:, :144], 0.1).sum(-1) == 48)  # a chicken every three steps
    totals = np.asarray(forgot.sum(-1))
    assert np.all(np.isclose(totals, 8.8, atol=1e-4) | np.isclose(totals, 1.8, atol=1e-4))
    assert abs(totals.mean() - 5.3) < 0.35  # 1000 episodes: the mean's standard deviation is 0.11
