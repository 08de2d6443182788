"""Return-conditioned T-maze episodes: the offline behaviour guesses (half its episodes succeed, and
only the junction is rewarded), a batch carries the return to come and the previous action, and
``play`` conditions on a target return as the decision transformer is evaluated."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import tasks
from memrl.envs.tmaze import DOWN, RIGHT, UP

LENGTH = 6


@pytest.fixture(scope="module")
def task():
    return tasks.make("tmaze-returns", maze_length=LENGTH, episodes=400, test_episodes=40, batch_size=5)


def test_the_behaviour_walks_right_and_guesses_at_the_junction(task):
    data = task.splits["train"]
    actions, rewards, observations = (np.asarray(data[k]) for k in ("actions", "rewards", "observations"))
    assert actions.shape == (LENGTH, 400) and (actions[:-1] == RIGHT).all() and set(actions[-1]) == {UP, DOWN}
    assert (rewards[:-1] == 0).all() and set(rewards[-1]) == {4.0, -3.0}
    indicator_up = observations[0, :, 1] > 0
    np.testing.assert_array_equal(rewards[-1] == 4.0, (actions[-1] == UP) == indicator_up)
    assert 0.4 < (rewards[-1] > 0).mean() < 0.6
    assert not np.array_equal(np.asarray(task.splits["test"]["observations"][:, :40]), observations[:, :40])


def test_a_batch_holds_the_return_to_come_and_the_previous_action(task):
    batch = task.sample(jax.random.PRNGKey(0))
    inputs, targets = np.asarray(batch.inputs), np.asarray(batch.targets)
    assert inputs.shape == (LENGTH, 5, task.input_size) and np.asarray(batch.target_mask).all()
    final = 4.0 * inputs[-1, :, 4]  # the last step's return to come is its reward
    assert set(final) <= {4.0, -3.0}
    np.testing.assert_allclose(inputs[:, :, 4], np.broadcast_to(final / 4.0, (LENGTH, 5)))  # nothing is rewarded before
    assert not inputs[0, :, 5:].any()
    np.testing.assert_array_equal(inputs[1:, :, 5:].argmax(-1), targets[:-1])


def test_play_follows_the_target_return(task):
    """A hand-written policy that reads the indicator at step 0 and the return it is asked for gets
    exactly that return; one that ignores the indicator gets +4 about half the time."""

    def conditional(inputs):
        indicator, to_go = inputs[0, :, 1], inputs[:, :, 4]
        final = jnp.where((indicator > 0) == (to_go > 0), UP, DOWN)
        return jax.nn.one_hot(jnp.where(jnp.arange(LENGTH)[:, None] < LENGTH - 1, RIGHT, final), 4)

    play = jax.jit(task.play, static_argnums=(0, 2))
    np.testing.assert_array_equal(play(conditional, jax.random.PRNGKey(1), 64, 4.0), 4.0)
    np.testing.assert_array_equal(play(conditional, jax.random.PRNGKey(1), 64, -3.0), -3.0)
    always_up = lambda inputs: jax.nn.one_hot(jnp.full(inputs.shape[:2], UP), 4)
    returns = np.asarray(play(always_up, jax.random.PRNGKey(2), 400, 4.0))
    assert set(returns) == {4.0, -3.0} and 0.4 < (returns > 0).mean() < 0.6


@pytest.mark.parametrize(
    "settings, message",
    [
        (dict(maze_length=1), "maze_length must be an integer >= 2"),
        (dict(episodes=0), "episodes must be a positive integer"),
    ],
)
def test_bad_settings_are_refused(settings, message):
    with pytest.raises(ValueError, match=message):
        tasks.make("tmaze-returns", **settings)
