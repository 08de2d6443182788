import numpy as np

from memrl.analysis.planning_metrics import episodes_from_stream, late_episode_fraction, steps_to_nth_goal


def test_episodes_from_stream_keeps_each_environment_in_order():
    rewards = np.arange(12).reshape(6, 2)  # [T=6, E=2]
    np.testing.assert_array_equal(episodes_from_stream(rewards, 3), [[0, 2, 4], [6, 8, 10], [1, 3, 5], [7, 9, 11]])


def test_steps_to_nth_goal_by_hand():
    rewards = np.array([[0, 1, 0, 0, 1, 1], [1, 0, 0, 0, 0, 0]])
    np.testing.assert_allclose(steps_to_nth_goal(rewards, 4), [1.5, 3.0, 1.0, np.nan])


def test_late_episode_fraction_counts_only_the_last_third():
    oracle = np.array([[1, 1, 1, 1, 1, 1]])
    agent = np.array([[0, 0, 0, 0, 1, 0]])
    assert late_episode_fraction(agent, oracle) == 0.5
