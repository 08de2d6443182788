"""The levels that the reinforcement-learning rows' learning checks read against are what uniformly
random play scores (issue 82 §4). Each constant was measured on 1,000 episodes (key 0); here 200
other episodes must land within four of their standard errors of it."""

import numpy as np
import pytest

from memrl import envs
from memrl.envs.graph_nav_policies import RANDOM_PLAY as GRAPH_NAV_RANDOM
from memrl.envs.scripted_policy import random_play_returns
from memrl.experiments.amrl_minecraft import RANDOM_PLAY as MINECRAFT_RANDOM
from memrl.experiments.rmc_boxworld import RANDOM_SOLVED, SOLVED_RETURN
from memrl.experiments.rmc_pacman import RANDOM_PLAY as PACMAN_RANDOM

EPISODES = 200
LEVELS = [
    ("graph-nav/5", GRAPH_NAV_RANDOM["graph-nav/5"], lambda returns: returns),
    ("minipacman/viewport", PACMAN_RANDOM, lambda returns: returns),
    ("boxworld/viewport", RANDOM_SOLVED, lambda returns: returns >= SOLVED_RETURN),
    *((f"minecraft-maze/{maze}", level, lambda returns: returns) for maze, level in MINECRAFT_RANDOM.items()),
]


@pytest.mark.parametrize(("env", "level", "per_episode"), LEVELS, ids=[env for env, *_ in LEVELS])
def test_a_learning_checks_level_is_random_plays_score(env, level, per_episode):
    values = np.asarray(per_episode(random_play_returns(envs.make(env), episodes=EPISODES, key=1)), float)
    standard_error = max(values.std(ddof=1), np.sqrt(level * (1 - level)) if level < 1 else 0.0) / np.sqrt(EPISODES)
    assert abs(values.mean() - level) < 4 * standard_error + 1e-3, (values.mean(), level)
