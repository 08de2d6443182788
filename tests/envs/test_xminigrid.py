"""XLand-MiniGrid's MiniGrid tasks (``xminigrid/<id>``): every one registered, each step xminigrid's
own with memrl's auto-reset and the episode's end told apart as terminated or truncated, and PPO
trains on the memory task."""

import jax
import jax.numpy as jnp
import numpy as np
import xminigrid
from conftest import tiny_ppo

from memrl import envs
from memrl.envs.xminigrid_adapter import LAST, MINIGRID_ENVS, NUM_COLORS, NUM_TILES
from memrl.learn.learners import make_train


def test_every_minigrid_task_of_xminigrid_is_registered():
    theirs = {name for name in xminigrid.registered_environments() if name.startswith("MiniGrid-")}
    ours = {name.removeprefix("xminigrid/") for name in envs.names() if name.startswith("xminigrid/")}
    assert theirs == set(MINIGRID_ENVS) == ours


def test_steps_are_xminigrids_own_and_episodes_end_terminated_or_truncated():
    """Random moves in a 5×5 room for 150 steps (at most 20 a episode here): some episodes reach the
    goal (terminated, xminigrid's discount 0) and some run out of steps (truncated); between ends
    every observation (one-hot here) and reward is xminigrid's, and after an end the next episode starts."""
    env = envs.make("xminigrid/MiniGrid-EmptyRandom-5x5", max_steps=20, one_hot=True)
    native, params = xminigrid.make("MiniGrid-EmptyRandom-5x5")
    params = params.replace(max_steps=20)
    step, native_step = jax.jit(env.step), jax.jit(native.step)
    obs, state = env.reset(jax.random.PRNGKey(0))
    ends = {"terminated": 0, "truncated": 0}
    for t, action in enumerate(np.random.default_rng(0).integers(0, 3, 150)):
        expected = native_step(params, state, jnp.int32(action))
        obs, state, reward, done, info = step(jax.random.PRNGKey(t), state, jnp.array([action]))
        assert float(reward) == float(expected.reward) and bool(done) == bool(expected.step_type == LAST)
        if done:
            assert bool(info["terminated"]) == (float(expected.discount) == 0.0) != bool(info["truncated"])
            ends["terminated" if info["terminated"] else "truncated"] += 1
            np.testing.assert_array_equal(info["final_obs"], env.observe(expected.observation))
            assert int(state.state.step_num) == 0  # a fresh episode
        else:
            np.testing.assert_array_equal(obs, env.observe(expected.observation))
    assert ends["terminated"] >= 1 and ends["truncated"] >= 1, ends


def test_each_cell_is_xminigrids_codes_or_its_tile_and_colour_one_hot_when_asked():
    """The default view is xminigrid's observation itself; with ``one_hot`` it holds, per cell, one 1
    among the 13 tiles at xminigrid's tile code and one among the 12 colours at its colour code."""
    assert (NUM_TILES, NUM_COLORS) == (xminigrid.core.constants.NUM_TILES, xminigrid.core.constants.NUM_COLORS)
    native, params = xminigrid.make("MiniGrid-MemoryS8")
    codes = native.reset(params, jax.random.PRNGKey(3)).observation
    one_hot = envs.make("xminigrid/MiniGrid-MemoryS8", one_hot=True)
    obs, _ = one_hot.reset(jax.random.PRNGKey(3))
    assert obs.shape == one_hot.observation_shape == (3, 3, 25) and obs.dtype == jnp.uint8
    tiles, colours = obs[..., :NUM_TILES], obs[..., NUM_TILES:]
    np.testing.assert_array_equal(tiles.sum(-1), 1)
    np.testing.assert_array_equal(colours.sum(-1), 1)
    np.testing.assert_array_equal(np.stack([tiles.argmax(-1), colours.argmax(-1)], -1), codes)
    assert len(np.unique(codes[..., 0])) > 1  # the view holds more than one kind of tile
    raw = envs.make("xminigrid/MiniGrid-MemoryS8")
    assert raw.observation_shape == (3, 3, 2)
    np.testing.assert_array_equal(raw.reset(jax.random.PRNGKey(3))[0], codes)


def test_ppo_trains_on_the_memory_task():
    config = tiny_ppo(env=envs.make("xminigrid/MiniGrid-MemoryS8"), num_minibatches=1, total_steps=128)
    _, metrics = jax.jit(make_train(config))(jax.random.PRNGKey(0))
    assert np.all(np.isfinite(np.asarray(metrics["policy_loss"]))) and int(metrics["env_steps"][-1]) == 128
