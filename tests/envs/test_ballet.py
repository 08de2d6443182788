"""Ballet replays the official environment's golden episodes exactly: boards, crops, positions,
instructions, rewards, episode ends and the 99×99 frames."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import envs
from memrl.envs import ballet_tables as tables
from memrl.envs.ballet import COLOR_NAMES, DANCE_NAMES, SHAPE_NAMES, WATCH, Ballet, render_cells

FILES = ["2_delay16", "4_delay16", "8_delay16", "8_delay48"]
EPISODES = [(f, e) for f in FILES for e in ("ep0", "ep1")] + [("2_delay16", "ep2")]


@pytest.fixture(scope="module")
def golden(data_dir):
    return {f: np.load(data_dir / "ballet" / f"{f}.npz") for f in FILES}


@pytest.fixture(scope="module")
def compiled():
    env = Ballet(observation="image")
    step = jax.jit(env.step_env)
    views = jax.jit(lambda s: (env.board(s), env.crop(s), env.dancer_positions(s), env.observe(s)))
    return env, step, views


def ascii_of(codes, dancer_chars):
    lookup = np.array([ord(" "), ord("#"), ord("A")] + [ord(c) for c in dancer_chars] + [0] * (8 - len(dancer_chars)))
    return lookup[np.asarray(codes)]


@pytest.mark.parametrize("name, episode", EPISODES)
def test_replays_golden_episode(golden, compiled, name, episode):
    env, step, views = compiled
    data = golden[name]
    get = lambda key: data[f"{episode}/{key}"]
    chars = list(get("layout/dancer_chars"))
    n = len(chars)
    state = env.initial_state(
        get("layout/positions"),
        [DANCE_NAMES.index(m) for m in get("layout/motions")],
        [SHAPE_NAMES.index(s) for s in get("layout/shapes")],
        [COLOR_NAMES.index(c) for c in get("layout/colors")],
        get("layout/target_index"),
        n,
        get("meta/dance_delay"),
        get("meta/max_steps"),
    )
    images = dict(zip(get("image_steps").tolist(), get("images")))
    actions = get("actions")
    for t in range(len(actions) + 1):
        board, crop, dancers, obs = views(state)
        np.testing.assert_array_equal(ascii_of(board, chars), get("board")[t], err_msg=f"board at {t}")
        np.testing.assert_array_equal(ascii_of(crop, chars), get("cropped_board")[t], err_msg=f"crop at {t}")
        np.testing.assert_array_equal(state.agent, get("agent_pos")[t])
        np.testing.assert_array_equal(dancers[:n], get("dancer_pos")[t], err_msg=f"dancers at {t}")
        instruction = get("language")[t]
        assert int(obs["language"]) == (WATCH if instruction == "watch" else 1 + DANCE_NAMES.index(instruction)), t
        if t in images:
            np.testing.assert_array_equal(obs["image"], images[t], err_msg=f"image at {t}")
        if t == len(actions):
            break
        _, state, reward, terminated, truncated, _ = step(
            jax.random.PRNGKey(0), state, jnp.array([actions[t]]), env.default_params
        )
        assert float(reward) == get("reward")[t + 1], t
        last = get("step_type")[t + 1] == 2
        assert bool(terminated | truncated) == last, t
        if last:
            assert bool(terminated) == (get("discount")[t + 1] == 0.0)  # dancer: discount 0; timeout: 1
    assert last


def test_cells_observation_carries_the_image_information(golden):
    """Every cell of the compact observation decodes to the same pixels as the image."""
    env = envs.make("ballet/4_delay16", observation="cells")
    _, state = env.reset(jax.random.PRNGKey(3))
    image_env = envs.make("ballet/4_delay16")
    for _ in range(40):
        state = state._replace(frame=state.frame + 1)
        crop = env.crop(state)
        cells = np.asarray(render_cells(crop, state))
        image = np.asarray(image_env.observe(state)["image"]).reshape(11, 9, 11, 9, 3).transpose(0, 2, 1, 3, 4)
        for r in range(11):
            for c in range(11):
                wall, agent, shape, color = cells[r, c, 0], cells[r, c, 1], cells[r, c, 2:17], cells[r, c, 17:]
                if wall:
                    expected = np.broadcast_to(tables.WALL_RGB, (9, 9, 3))
                elif agent:
                    expected = np.broadcast_to(tables.AGENT_RGB, (9, 9, 3))
                elif shape.any():
                    mask = np.array([[ch == "#" for ch in row] for row in tables.SHAPES[SHAPE_NAMES[shape.argmax()]]])
                    expected = mask[..., None] * np.array(tables.COLORS[COLOR_NAMES[color.argmax()]])
                else:
                    expected = np.zeros((9, 9, 3))
                np.testing.assert_array_equal(image[r, c], expected)


def test_random_layouts_follow_the_official_rules():
    env = envs.make("ballet/mixed", observation="cells")
    for seed in range(20):
        _, state = env.reset(jax.random.PRNGKey(seed))
        n = int(state.num_dancers)
        assert (n, int(state.delay), int(state.max_steps)) in {
            (a, d, {16: 320, 48: 1024}[d]) for a in (2, 4, 8) for d in (16, 48)
        }
        for field in (state.dances, state.shapes, state.colors):
            assert len(set(np.asarray(field[:n]).tolist())) == n  # distinct per episode
        assert len({tuple(p) for p in np.asarray(state.slots[:n]).tolist()}) == n
        assert {tuple(p) for p in np.asarray(state.slots[:n]).tolist()} <= set(tables.DANCER_SLOTS)
        assert 0 <= int(state.target) < n


def test_bad_levels_and_observation_are_refused():
    with pytest.raises(ValueError, match="delays are \\[16, 48\\]"):
        envs.ballet.Ballet(levels=((2, 20),))
    with pytest.raises(ValueError, match="1..8 dancers"):
        envs.ballet.Ballet(levels=((9, 16),))
    with pytest.raises(ValueError, match="at least one"):
        envs.ballet.Ballet(levels=())
    with pytest.raises(ValueError, match="'image' or 'cells'"):
        envs.make("ballet/2_delay16", observation="pixels")


def test_a_trained_agents_test_level_keeps_the_observation_it_trained_with():
    """htm-ballet's agents train on ``ballet/mixed`` with cell codes and are scored on each test level:
    a level made by its name alone would show them 99×99 frames (its evaluation crashed so)."""
    trained = envs.make("ballet/mixed", observation="cells")
    level = envs.ENVS.variant(trained, "ballet/8_delay16")
    assert envs.ENVS.name_of(level) == ("ballet/8_delay16", {"observation": "cells"})
    assert level.observation_shape == trained.observation_shape != envs.make("ballet/8_delay16").observation_shape
