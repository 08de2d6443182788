"""BoxWorld's rules on hand-built levels, and the structure of generated ones."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import envs
from memrl.envs.boxworld import AGENT_RGB, FIRST_KEY, FLOOR, GEM, PALETTE, WALL, BoxWorldState

UP, DOWN, LEFT, RIGHT = 0, 1, 2, 3


def hand_level(rows: list[str]) -> BoxWorldState:
    """'#' wall, '.' floor, '@' the agent, '*' the gem, '0'-'9' a key of that colour, 'a'-'j' a lock
    of colour 0-9 (solution path), 'k'-'t' a distractor lock of colour 0-9."""
    g = len(rows)
    cells = np.full((g, g), FLOOR)
    locks = np.zeros((g, g), bool)
    distractors = np.zeros((g, g), bool)
    agent = None
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            if ch == "#":
                cells[r, c] = WALL
            elif ch == "@":
                agent = (r, c)
            elif ch == "*":
                cells[r, c] = GEM
            elif ch.isdigit():
                cells[r, c] = FIRST_KEY + int(ch)
            elif "a" <= ch <= "j":
                cells[r, c], locks[r, c] = FIRST_KEY + ord(ch) - ord("a"), True
            elif "k" <= ch <= "t":
                cells[r, c], locks[r, c], distractors[r, c] = FIRST_KEY + ord(ch) - ord("k"), True, True
    return BoxWorldState(
        jnp.asarray(cells),
        jnp.asarray(locks),
        jnp.asarray(distractors),
        jnp.asarray(agent, jnp.int32),
        jnp.int32(FLOOR),
        jnp.int32(0),
    )


@pytest.fixture(scope="module")
def env():
    return envs.make("boxworld/viewport", grid_size=7, min_path=1, max_path=2, max_distractors=1)


@pytest.fixture(scope="module")
def step(env):
    return jax.jit(
        lambda state, action: env.step_env(jax.random.PRNGKey(0), state, jnp.array([action]), env.default_params)
    )


def play(step, state, actions):
    rewards, ends = [], []
    for action in actions:
        _, state, reward, terminated, truncated, _ = step(state, action)
        rewards.append(float(reward))
        ends.append((bool(terminated), bool(truncated)))
    return state, rewards, ends


LEVEL = [
    "#######",
    "#@0...#",
    "#.....#",
    "#.1a..#",
    "#.....#",
    "#.*b..#",
    "#######",
]


def test_the_solution_path_pays_one_per_box_and_ten_for_the_gem(step):
    """Key 0, box [1|a] (lock 0), box [*|b] (lock 1): best return L + 10 = 12."""
    state = hand_level(LEVEL)
    # right: take key 0; right, down, down: onto lock a (3, 3), which opens; left: take key 1 from
    # the opened box; down, right, down: onto lock b (5, 3), which opens; left: the gem.
    state, rewards, ends = play(step, state, [RIGHT, RIGHT, DOWN, DOWN])
    assert rewards == [0, 0, 0, 1.0] and tuple(state.agent) == (3, 3) and int(state.held) == FLOOR
    assert not bool(state.locks[3, 3]) and int(state.cells[3, 3]) == FLOOR
    state, rewards, ends = play(step, state, [LEFT, DOWN, RIGHT, DOWN, LEFT])
    assert rewards == [0, 0, 0, 1.0, 10.0]
    assert ends[-1] == (True, False) and not any(t for t, _ in ends[:-1])


def test_locked_boxes_and_walls_block(step):
    state = hand_level(LEVEL)
    start = tuple(state.agent)
    state, rewards, _ = play(step, state, [UP, LEFT])  # the wall
    assert tuple(state.agent) == start and rewards == [0, 0]
    state = state._replace(agent=jnp.array([3, 1], jnp.int32))
    state, rewards, _ = play(step, state, [RIGHT])  # the key of a box still locked
    assert tuple(state.agent) == (3, 1) and int(state.held) == FLOOR
    state = state._replace(agent=jnp.array([2, 3], jnp.int32))
    state, rewards, _ = play(step, state, [DOWN])  # lock a without its key
    assert tuple(state.agent) == (2, 3) and bool(state.locks[3, 3]) and rewards == [0]
    state = state._replace(agent=jnp.array([4, 2], jnp.int32))
    state, _, ends = play(step, state, [DOWN])  # the gem while its box is locked
    assert tuple(state.agent) == (4, 2) and ends == [(False, False)]


def test_a_wrong_key_does_not_open_and_a_distractor_box_ends_the_level(step):
    level = ["#######", "#@0.5k#", "#.....#", "#.1a..#", "#.....#", "#.*b..#", "#######"]
    state = hand_level(level)  # box [5|k]: a distractor locked with colour 0
    state, rewards, ends = play(
        step, state, [RIGHT, DOWN, RIGHT, RIGHT, RIGHT, UP]
    )  # take key 0, go round, onto lock k
    assert rewards == [0, 0, 0, 0, 0, -1.0] and ends[-1] == (True, False) and not any(t for t, _ in ends[:-1])
    state = hand_level(["#######", "#@1.a.#", "#.....#", "#.....#", "#.....#", "#.....#", "#######"])
    state, rewards, _ = play(step, state, [RIGHT, RIGHT, RIGHT])  # key 1 does not open lock a (colour 0)
    assert tuple(state.agent) == (1, 3) and int(state.held) == FIRST_KEY + 1 and rewards == [0, 0, 0]


def test_levels_are_truncated_at_max_steps():
    env = envs.make("boxworld/viewport", grid_size=7, max_path=2, max_distractors=1, max_steps=3)
    state = hand_level(LEVEL)
    ends = [
        env.step_env(jax.random.PRNGKey(0), state._replace(step=jnp.int32(t)), jnp.array([UP]), env.default_params)[4]
        for t in (1, 2)
    ]
    assert [bool(e) for e in ends] == [False, True]


def test_the_viewport_shows_the_agent_the_wall_beyond_and_the_key_held(env, step):
    state = hand_level(LEVEL)
    obs = np.asarray(env.observe(state))
    assert obs.shape == (5, 5, 6)
    np.testing.assert_allclose(obs[2, 2, :3], AGENT_RGB)
    np.testing.assert_allclose(obs[0, :, :3], 0.0)  # two rows above the agent: beyond the grid
    np.testing.assert_allclose(obs[2, 3, :3], PALETTE[FIRST_KEY])  # key 0 to its right
    np.testing.assert_allclose(obs[..., 3:], 0.0)  # no key held
    state, _, _ = play(step, state, [RIGHT])
    np.testing.assert_allclose(np.asarray(env.observe(state))[..., 3:], np.broadcast_to(PALETTE[FIRST_KEY], (5, 5, 3)))
    full = envs.make("boxworld/full", grid_size=7, max_path=2, max_distractors=1)
    assert full.observe(state).shape == (7, 7, 6)


def follow_chain(cells, locks, distractors):
    """From the one loose key, open the solution box of the key held until the gem: the number of
    boxes opened, or None if a key opens no solution box or more than one."""
    loose = [(r, c) for r, c in zip(*np.nonzero(cells >= FIRST_KEY)) if not locks[r, c] and not locks[r, c + 1]]
    assert len(loose) == 1
    held, boxes = cells[loose[0]], 0
    while boxes <= locks.sum():
        opens = list(zip(*np.nonzero(locks & ~distractors & (cells == held))))
        if len(opens) != 1:
            return None
        boxes += 1
        r, c = opens[0]
        if cells[r, c - 1] == GEM:
            return boxes
        held = cells[r, c - 1]
    return None


def test_generated_levels_follow_the_papers_recipe():
    env = envs.make("boxworld/viewport")
    states = jax.jit(jax.vmap(lambda k: env.reset(k)[1]))(jax.random.split(jax.random.PRNGKey(0), 300))
    lengths, distractor_counts = [], []
    for i in range(300):
        cells, locks, distractors = (np.asarray(a[i]) for a in (states.cells, states.locks, states.distractor_locks))
        assert (
            np.all(cells[0] == WALL)
            and np.all(cells[:, 0] == WALL)
            and np.all(cells[-1] == WALL)
            and np.all(cells[:, -1] == WALL)
        )
        assert (cells == GEM).sum() == 1 and cells[tuple(states.agent[i])] == FLOOR
        length = follow_chain(cells, locks, distractors)
        assert length is not None and length == (locks & ~distractors).sum()
        lengths.append(length)
        distractor_counts.append(int(distractors.sum()))
        path_colours = set(cells[locks & ~distractors])
        assert all(cells[r, c] in path_colours for r, c in zip(*np.nonzero(distractors)))  # locked with a path key
        objects = np.argwhere(cells >= GEM)
        for (r1, c1), (r2, c2) in zip(
            objects[:, None].repeat(len(objects), 1).reshape(-1, 2), np.tile(objects, (len(objects), 1))
        ):
            if (r1, c1) != (r2, c2) and abs(r1 - r2) <= 1 and abs(c1 - c2) <= 1:
                assert (
                    r1 == r2 and abs(c1 - c2) == 1 and (locks[r1, max(c1, c2)] and not locks[r1, min(c1, c2)])
                )  # only a box's own two cells touch
    assert sorted(set(lengths)) == [1, 2, 3, 4, 5] and sorted(set(distractor_counts)) == [0, 1, 2, 3, 4, 5]


@pytest.mark.parametrize(
    "settings, message",
    [
        (dict(max_path=6), "max_path <= path_capacity"),
        (dict(min_path=0), "1 <= min_path"),
        (dict(max_distractors=6), "max_distractors must lie in"),
        (dict(viewport=4), "viewport must be an odd number"),
        (dict(max_steps=0), "max_steps must be >= 2 \\* min_path \\+ 1 = 3, got 0"),
        (
            dict(min_path=2, max_steps=4),
            "max_steps must be >= 2 \\* min_path \\+ 1 = 5, got 4: no level could be solved",
        ),
    ],
)
def test_bad_settings_are_refused(settings, message):
    with pytest.raises(ValueError, match=message):
        envs.make("boxworld/viewport", **settings)
