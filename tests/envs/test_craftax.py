"""Craftax (``craftax/<name>``): every environment registered, each step Craftax's own with memrl's
auto-reset, and the time limit told apart from Craftax's ``done`` as truncated."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from craftax.craftax_env import make_craftax_env_from_name

from memrl import envs
from memrl.envs.craftax_adapter import CRAFTAX_ENVS


def test_every_craftax_environment_is_registered_with_its_shapes():
    ours = {name.removeprefix("craftax/") for name in envs.names() if name.startswith("craftax/")}
    assert ours == set(CRAFTAX_ENVS)
    env = envs.make("craftax/Craftax-Classic-Symbolic-v1", max_timesteps=30)
    assert env.observation_shape == (1345,) and env.action_dims == (17,) and env.params.max_timesteps == 30
    assert envs.ENVS.record(env) == {"kind": "craftax/Craftax-Classic-Symbolic-v1", "max_timesteps": 30}
    optimistic = envs.make("craftax/Craftax-Classic-Symbolic-v1", resets=4)
    assert optimistic.resets_per_step == 4 and env.resets_per_step is None  # batch_step's optimistic resets
    with pytest.raises(ValueError, match="resets must be an integer >= 0"):
        envs.make("craftax/Craftax-Classic-Symbolic-v1", resets=-1)


@pytest.mark.slow
def test_steps_are_craftaxs_own_and_the_time_limit_truncates():
    """Random actions for 14 steps of episodes of at most 6: every observation and reward is
    Craftax's own step's (one compile holds both), each episode ends truncated at its sixth step
    (Craftax's ``done`` there too), and the next starts fresh."""
    env = envs.make("craftax/Craftax-Classic-Symbolic-v1", max_timesteps=6)
    native = make_craftax_env_from_name("Craftax-Classic-Symbolic-v1", auto_reset=False)

    @jax.jit
    def both(key, state, action):
        ours = env.step(key, state, action)
        theirs = native.step_env(jax.random.split(key)[0], state, action[0], env.params)  # the key memrl's step uses
        return ours, theirs

    _, state = env.reset(jax.random.PRNGKey(0))
    ends = []
    for t, action in enumerate(np.random.default_rng(0).integers(0, 17, 14)):
        (obs, state, reward, done, info), (native_obs, _, native_reward, native_done, _) = both(
            jax.random.PRNGKey(t), state, jnp.array([action])
        )
        assert float(reward) == float(native_reward) and bool(done) == bool(native_done)
        np.testing.assert_array_equal(info["final_obs"], native_obs)
        if done:
            assert bool(info["truncated"]) and not bool(info["terminated"]) and int(state.timestep) == 0
            ends.append(t + 1)
        else:
            np.testing.assert_array_equal(obs, native_obs)
    assert ends == [6, 12]


def test_the_command_line_sets_craftaxs_params_and_shows_them(monkeypatch, capsys):
    """Craftax's ``fractal_noise_angles`` defaults to four Nones under ``tuple[int, int, int, int]``:
    it is no flag (tyro could not show its default), and the other params are."""
    import memrl.run.train
    from memrl.cli import main

    trained = []
    monkeypatch.setattr(memrl.run.train, "train_run", lambda config, *rest: trained.append(config))
    command = ["train", "ppo", "env:craftax/Craftax-Classic-Symbolic-v1", "--env.max-timesteps", "50", "core:gru"]
    main(command)
    assert trained[0].env.params.max_timesteps == 50
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    shown = capsys.readouterr().out
    assert "--env.day-length" in shown and "fractal" not in shown
