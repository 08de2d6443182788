"""Word learning with distractor phases (HTM's task, a 2D analogue): rules on hand-built states,
the scripted policies' returns."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import envs
from memrl.envs import word_learning as wl
from memrl.envs.scripted_policy import episode_rewards
from memrl.envs.word_learning_policies import guesser, oracle

EAST, WEST = 2, 6
ENV = envs.make("word-learning/distractors1", observation="cells")
SUPER = envs.make("word-learning/episodes2", observation="cells")


def stepper(env):
    return jax.jit(
        lambda state, action: env.step_env(jax.random.PRNGKey(3), state, jnp.array([action]), env.default_params)
    )


STEP, SUPER_STEP = stepper(ENV), stepper(SUPER)


def in_row(env, phase, target=0, distractors_left=0, kinds=(0, 1, 2), nouns=(6, 7, 8), **fields):
    """A state with the agent at (5, 5) and the three objects east of it at (5, 6), (5, 7), (5, 8)."""
    _, state = env.reset_env(jax.random.PRNGKey(0), env.default_params)
    return state._replace(
        agent=jnp.array([5, 5]),
        objects=jnp.array([[5, 6], [5, 7], [5, 8]]),
        kinds=jnp.array(kinds),
        nouns=jnp.array(nouns),
        target=jnp.int32(target),
        touched=jnp.zeros(3, bool),
        phase=jnp.int32(phase),
        phase_frame=jnp.int32(0),
        distractors_left=jnp.int32(distractors_left),
        **fields,
    )


def play(step, state, actions):
    seen = []
    for action in actions:
        obs, state, reward, terminated, truncated, _ = step(state, action)
        seen.append((np.asarray(obs["language"]).tolist(), float(reward), bool(terminated), bool(truncated)))
    return state, seen


def test_each_object_is_named_while_the_agent_is_on_it_and_the_phase_ends_after_the_third():
    state = in_row(ENV, wl.LEARNING, distractors_left=1)
    state, seen = play(STEP, state, [EAST, EAST, EAST, WEST])
    assert [language for language, *_ in seen[:3]] == [[wl.THIS_IS, 6], [wl.THIS_IS, 7], [wl.THIS_IS, 8]]
    assert int(state.phase) == wl.DISTRACTOR and sorted(np.asarray(state.kinds).tolist()) == list(wl.DISTRACTOR_KINDS)
    assert seen[3][0] == [wl.LIFT, 3 + int(state.target)] and sum(r for _, r, _, _ in seen) == 0


def test_the_learning_phase_ends_after_60_frames_without_all_three_lifted():
    state, seen = play(STEP, in_row(ENV, wl.LEARNING, distractors_left=1), [WEST] * wl.LEARN_FRAMES)
    assert [language for language, *_ in seen[:-1]] == [[wl.SILENT, wl.SILENT]] * (wl.LEARN_FRAMES - 1)
    assert int(state.phase) == wl.DISTRACTOR


def test_a_distractor_phase_pays_0_1_for_the_named_object_only_and_gives_up_after_20_seconds():
    fixed = dict(kinds=wl.DISTRACTOR_KINDS, nouns=(3, 4, 5))
    state, seen = play(
        STEP, in_row(ENV, wl.DISTRACTOR, target=1, **fixed), [EAST, EAST]
    )  # the wrong one, then the named one
    np.testing.assert_allclose([r for _, r, _, _ in seen], [0.0, wl.DISTRACTOR_REWARD])
    assert int(state.phase) == wl.TEST and seen[-1][0][0] == wl.LIFT and seen[-1][0][1] >= wl.FIRST_WORD
    state, seen = play(STEP, in_row(ENV, wl.DISTRACTOR, target=1, **fixed), [WEST] * wl.DISTRACTOR_FRAMES)
    assert int(state.phase) == wl.TEST and sum(r for _, r, _, _ in seen) == 0 and not any(t for *_, t, _ in seen)


@pytest.mark.parametrize(("target", "reward"), [(0, 1.0), (2, 0.0)])
def test_lifting_an_object_in_the_test_ends_the_episode_with_1_for_the_named_one(target, reward):
    _, seen = play(STEP, in_row(ENV, wl.TEST, target=target), [WEST, EAST, EAST])
    assert seen[0][0] == [wl.LIFT, 6 + target] and seen[1][1:] == (0.0, False, False) and seen[2][1:3] == (reward, True)


def test_a_super_episodes_last_test_asks_for_a_word_of_its_first_sub_episode():
    _, state = SUPER.reset_env(jax.random.PRNGKey(0), SUPER.default_params)
    first_kinds, first_nouns = np.asarray(state.learned_kinds[0]), np.asarray(state.learned_nouns[0])
    assert set(first_nouns.tolist()).isdisjoint(np.asarray(state.learned_nouns[1]).tolist())  # no word reused
    state = in_row(
        SUPER,
        wl.TEST,
        target=0,
        kinds=first_kinds,
        nouns=first_nouns,
        distractor_counts=jnp.zeros(2, jnp.int32),
        learned_kinds=state.learned_kinds,
        learned_nouns=state.learned_nouns,
    )
    state, seen = play(SUPER_STEP, state, [EAST])  # the first sub-episode's test: 1, and the second sub-episode starts
    assert seen[0][1:3] == (1.0, False) and int(state.sub) == 1 and int(state.phase) == wl.LEARNING
    assert np.asarray(state.kinds).tolist() == np.asarray(state.learned_kinds[1]).tolist()
    state = SUPER.next_phase(
        state._replace(distractors_left=jnp.int32(0)), jax.random.PRNGKey(4)
    )  # learning done: the test
    assert int(state.phase) == wl.TEST and np.asarray(state.kinds).tolist() == first_kinds.tolist()
    assert int(state.nouns[state.target]) in first_nouns.tolist()


def test_around_lays_each_test_out_as_one_move_and_the_oracle_takes_it():
    """``test_layout="around"``: every test's objects on three of the agent's eight neighbours (the
    agent off the walls), the other phases as before; the oracle lifts the named one in one move."""
    around = envs.make("word-learning/distractors1", observation="cells", test_layout="around")
    tests = jax.vmap(lambda key: around.next_phase(in_row(around, wl.DISTRACTOR), key))(
        jax.random.split(jax.random.PRNGKey(5), 200)
    )
    agent, objects = np.asarray(tests.agent), np.asarray(tests.objects)
    assert np.all(tests.phase == wl.TEST) and agent.min() == 2 and agent.max() == wl.tables.ROOM_SIZE - 3
    offsets = objects - agent[:, None]
    assert np.all(np.abs(offsets).max(-1) == 1) and all(len({tuple(o) for o in each}) == 3 for each in offsets)
    assert len({tuple(o) for o in offsets.reshape(-1, 2)}) == 8  # every neighbour is used
    distract = around.next_phase(in_row(around, wl.LEARNING, distractors_left=1), jax.random.PRNGKey(6))
    random = ENV.next_phase(in_row(ENV, wl.LEARNING, distractors_left=1), jax.random.PRNGKey(6))
    assert np.array_equal(distract.objects, random.objects)  # a distractor phase is laid out as before
    rewards = jax.jit(lambda k: episode_rewards(around, oracle(around), k, 64, 300))(jax.random.PRNGKey(7))
    assert np.all(np.asarray(rewards.max(-1)) == 1.0)
    with pytest.raises(ValueError, match="test_layout must be one of"):
        wl.WordLearning(test_layout="ring")


def test_an_episode_is_truncated_at_450_seconds():
    state = in_row(ENV, wl.LEARNING, frame=jnp.int32(wl.TIME_LIMIT - 2))
    _, seen = play(STEP, state, [WEST, WEST])
    assert [t for *_, t in seen] == [False, True]


def test_settings_and_observations():
    with pytest.raises(ValueError, match="sub_episodes must be in 1..10"):
        wl.WordLearning(distractors=(0,), sub_episodes=11)
    with pytest.raises(ValueError, match="distractor-phase counts >= 0"):
        wl.WordLearning(distractors=(-1,))
    obs = ENV.observe(in_row(ENV, wl.LEARNING))
    assert obs["image"].shape == (11, 11, wl.CELL_CHANNELS) and obs["language"].shape == (2,)
    assert obs["image"][5, 5, 1] == 1 and obs["image"][5, 6, 2 + 0] == 1  # the agent, and kind 0 east of it
    picture = envs.make("word-learning/train").observe(in_row(ENV, wl.LEARNING))["image"]
    assert picture.shape == (99, 99, 3) and picture.dtype == jnp.uint8


def test_the_oracle_gets_every_reward_and_a_guess_a_third_of_the_tests():
    env = envs.make("word-learning/train", observation="cells")
    best = jax.jit(lambda k: episode_rewards(env, oracle(env), k, 32, 300))(jax.random.PRNGKey(0))
    returns = np.asarray(best.sum(-1))
    assert np.all(np.isclose(returns, 1.0) | np.isclose(returns, 1.1) | np.isclose(returns, 1.2)) and np.all(
        np.asarray(best.max(-1)) == 1.0
    )
    guessed = jax.jit(lambda k: episode_rewards(ENV, guesser(ENV), k, 300, 300))(jax.random.PRNGKey(1))
    tests = np.asarray(guessed.max(-1))  # the test's reward (the distractor phase's is 0.1)
    assert abs(float((tests == 1.0).mean()) - 1 / 3) < 0.085  # 300 episodes: the mean's standard deviation is 0.027


def test_the_policies_decisions_are_the_test_phases_steps():
    """``decides`` (what cloning weighs) marks a state in the test phase only."""
    for policy in (oracle(ENV), guesser(ENV)):
        marks = [bool(policy.decides(in_row(ENV, phase))) for phase in (wl.LEARNING, wl.DISTRACTOR, wl.TEST)]
        assert marks == [False, False, True]
