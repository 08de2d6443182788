"""Passive Visual Match analogue: phase timing, what each phase shows, rewards, and that the
choice needs the remembered colour (a remembering policy scores ~10, a guesser 10 / choices)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import envs
from memrl.envs.passive_visual_match import MOVES, NUM_COLORS
from memrl.envs.scripted_policy import ScriptedPolicy, episode_rewards, scripted_policy

SHORT = dict(steps_per_second=2)  # phases of 10, 60 and 10 steps


def colour_cells(obs):
    return jnp.argwhere(obs[..., 3:].any(-1), size=8, fill_value=-1)


def walk_to(agent, cell):
    """N/E/S/W move that brings the agent closer to cell (rows first)."""
    d = cell - agent
    return jnp.where(d[0] < 0, 0, jnp.where(d[0] > 0, 2, jnp.where(d[1] > 0, 1, 3)))


def chooser(remember: bool) -> ScriptedPolicy:
    """Walks to the square of the phase-1 colour (remember) or to the first square it sees."""

    def act(key, obs, memory):
        colours = obs[..., 3:]
        shown = colours.sum()
        agent = jnp.argwhere(obs[..., 1], size=1)[0]
        memory = jnp.where((shown == 1) & (memory < 0), jnp.argmax(colours.any((0, 1))), memory)
        in_choice = shown > 1
        target = jnp.argwhere(colours[..., jnp.maximum(memory, 0)], size=1)[0] if remember else colour_cells(obs)[0]
        action = jnp.where(in_choice, walk_to(agent, target), jax.random.randint(key, (), 0, 4))
        return action[None], memory

    return ScriptedPolicy(lambda state: jnp.int32(-1), act)


@pytest.fixture(scope="module")
def env():
    return envs.make("pvm", num_choices=2, **SHORT)


def test_phases_show_the_square_then_apples_then_the_choices(env):
    obs, state = env.reset(jax.random.PRNGKey(0))
    step = jax.jit(env.step_env)
    seen = []
    for t in range(80):
        seen.append((int(obs[..., 3:].sum()), bool(obs[..., 2].any())))
        obs, state, reward, terminated, truncated, _ = step(
            jax.random.PRNGKey(t), state, jnp.array([t % 4]), env.default_params
        )
        if terminated or truncated:
            break
    assert all(s == (1, False) for s in seen[:10])  # one coloured square, no apples
    assert all(s[0] == 0 for s in seen[10:70]) and any(s[1] for s in seen[10:70])  # apples only
    assert all(s == (2, False) for s in seen[70:])  # two squares to choose from
    assert len(seen) <= 80 and (terminated or truncated)


def test_apples_pay_once_and_only_in_the_distractor_phase(env):
    _, state = env.reset(jax.random.PRNGKey(1))
    params = env.default_params
    cell = jnp.array([2, 2])
    state = state._replace(agent=cell + jnp.array([0, 1]), apples=state.apples.at[2, 2].set(True), step=jnp.int32(20))
    _, state, reward, *_ = env.step_env(jax.random.PRNGKey(0), state, jnp.array([3]), params)  # West onto the apple
    assert float(reward) == 1.0 and not bool(state.apples[2, 2])
    _, state, *_ = env.step_env(jax.random.PRNGKey(0), state, jnp.array([1]), params)
    _, state, reward, *_ = env.step_env(jax.random.PRNGKey(0), state, jnp.array([3]), params)
    assert float(reward) == 0.0  # eaten
    early = state._replace(step=jnp.int32(3), apples=state.apples.at[2, 3].set(True), agent=jnp.array([2, 2]))
    assert float(env.step_env(jax.random.PRNGKey(0), early, jnp.array([1]), params)[2]) == 0.0


def test_choosing_needs_the_remembered_colour():
    env = envs.make("pvm", num_choices=3, apple_density=0.0, **SHORT)
    key = jax.random.PRNGKey(2)
    remembering = jax.jit(lambda k: episode_rewards(env, chooser(True), k, 200, 80))(key).sum(1)
    guessing = jax.jit(lambda k: episode_rewards(env, chooser(False), k, 200, 80))(key).sum(1)
    assert np.mean(remembering) >= 8.5  # ~10 unless another square lies on the way
    assert 1.5 <= np.mean(guessing) <= 5.5  # ~10 / 3


def test_a_smaller_palette_shows_only_its_colours():
    small = envs.make("pvm", num_colors=2, num_choices=2)
    assert small.observation_shape == (7, 7, 5)
    for seed in range(8):
        obs, state = small.reset(jax.random.PRNGKey(seed))
        assert obs.shape == small.observation_shape and obs[..., 3:].sum() == 1
        assert set(np.asarray(state.choice_colors).tolist()) == {0, 1}


def test_walls_block_and_bad_settings_are_refused(env):
    _, state = env.reset(jax.random.PRNGKey(3))
    corner = state._replace(agent=jnp.array([1, 1]))
    for action in (0, 3):  # North and West into the walls
        assert np.array_equal(
            env.step_env(jax.random.PRNGKey(0), corner, jnp.array([action]), env.default_params)[1].agent, [1, 1]
        )
    with pytest.raises(ValueError, match="num_choices must be between 2 and"):
        envs.make("pvm", num_choices=NUM_COLORS + 1)
    with pytest.raises(ValueError, match=r"num_choices must be between 2 and 3 \(num_colors 3"):
        envs.make("pvm", num_colors=3, num_choices=4)
    with pytest.raises(ValueError, match=r"between 2 and 2 \(num_colors 8, room_size 4\), got 3"):
        envs.make("pvm", room_size=4, num_choices=3)  # a 2×2 floor: the agent, the phase-1 square and 2 choices
    with pytest.raises(ValueError, match="num_colors must be at least 2"):
        envs.make("pvm", num_colors=1)
    with pytest.raises(ValueError, match="no setting 'phase_seconds'; its settings: room_size"):
        envs.make("pvm", phase_seconds=3)
    assert len(MOVES) == env.action_dims[0]


def test_around_sets_the_agent_at_the_centre_among_one_square_per_move():
    """choice_layout "around": when the squares appear the agent is at the centre and each of the
    four lies one move away (in an order drawn per episode), so the oracle's first choice move
    steps onto the matching square (10), the guesser's right a quarter of the time."""
    env = envs.make("pvm", num_choices=4, choice_layout="around", apple_density=0.0, **SHORT)
    centre = np.full(2, env.room_size // 2)
    step = jax.jit(env.step_env)
    first_squares = set()
    for seed in range(6):
        obs, state = env.reset(jax.random.PRNGKey(seed))
        for t in range(70):  # the colour and distractor phases, wandering
            obs, state, *_ = step(jax.random.PRNGKey(t), state, jnp.array([t % 4]), env.default_params)
        assert np.array_equal(state.agent, centre) and obs[..., 3:].sum() == 4
        offsets = {tuple(c) for c in np.asarray(state.choice_cells) - centre}
        assert offsets == {tuple(m) for m in np.asarray(MOVES)}
        first_squares.add(tuple(np.asarray(state.choice_cells[0])))
        move = int(np.argmax(np.all(np.asarray(MOVES) == np.asarray(state.choice_cells[0]) - centre, -1)))
        _, _, reward, terminated, *_ = step(jax.random.PRNGKey(0), state, jnp.array([move]), env.default_params)
        assert float(reward) == 10.0 and bool(terminated)
    assert len(first_squares) > 1  # the matching square's place is drawn
    last = state._replace(step=jnp.int32(69), agent=jnp.array([1, 1]), apples=state.apples.at[3, 3].set(True))
    _, moved, reward, *_ = step(jax.random.PRNGKey(0), last, jnp.array([1]), env.default_params)
    assert np.array_equal(moved.agent, centre) and float(reward) == 0.0  # set there, not walking onto its apple
    oracle, guesser = (scripted_policy("pvm", env, name) for name in ("oracle", "guesser"))
    right = [
        float(np.mean(jax.jit(lambda k, p=p: episode_rewards(env, p, k, 400, 80))(jax.random.PRNGKey(5)).sum(1) >= 10))
        for p in (oracle, guesser)
    ]
    assert right[0] == 1.0 and 0.17 <= right[1] <= 0.33


def test_around_refuses_more_squares_than_moves_and_a_room_without_a_centre():
    with pytest.raises(ValueError, match=r"num_choices must be between 2 and 4"):
        envs.make("pvm", choice_layout="around", num_choices=5)
    with pytest.raises(ValueError, match="choice_layout 'around' needs room_size >= 5"):
        envs.make("pvm", choice_layout="around", room_size=4, num_choices=2)
    with pytest.raises(ValueError, match="choice_layout"):
        envs.make("pvm", choice_layout="ring")


def test_a_mix_of_delays_draws_each_episodes_distractor_phase_and_the_oracle_still_matches():
    """shortest_distractor_seconds: each episode's distractor phase lasts a whole number of seconds
    from it to distractor_seconds, drawn uniformly; the squares appear when it ends, and the oracle
    (which reads the episode's own end) chooses right in every episode."""
    env = envs.make(
        "pvm", num_choices=4, choice_layout="around", distractor_seconds=4, shortest_distractor_seconds=1, **SHORT
    )
    color_end = 10
    ends = np.array(jax.vmap(lambda k: env.reset(k)[1].distractor_end)(jax.random.split(jax.random.PRNGKey(0), 400)))
    assert set(ends.tolist()) == {color_end + 2 * s for s in range(1, 5)}
    assert np.all(np.bincount(ends)[ends.min() :: 2] > 70)  # about 100 each
    _, state = env.reset(jax.random.PRNGKey(1))
    step = jax.jit(env.step_env)
    for t in range(int(state.distractor_end)):
        obs, state, *_ = step(jax.random.PRNGKey(t), state, jnp.array([t % 4]), env.default_params)
        assert (obs[..., 3:].sum() == 4) == (t + 1 == int(state.distractor_end))  # squares only from its end
    oracle = scripted_policy("pvm", env, "oracle")
    rewards = jax.jit(lambda k: episode_rewards(env, oracle, k, 200, 60))(jax.random.PRNGKey(5)).sum(1)
    assert np.mean(np.asarray(rewards) >= 10) == 1.0
    fixed = envs.make("pvm", distractor_seconds=4, **SHORT)
    assert int(fixed.reset(jax.random.PRNGKey(0))[1].distractor_end) == color_end + 8
    for shortest in (-1, 5):
        with pytest.raises(
            ValueError, match=r"shortest_distractor_seconds must be between 0 and distractor_seconds \(4\)"
        ):
            envs.make("pvm", distractor_seconds=4, shortest_distractor_seconds=shortest)
