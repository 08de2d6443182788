"""T-maze: exact replay of the official implementation's golden trajectories, and the API."""

import dataclasses
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import envs
from memrl.envs.scripted_policy import first_episode_returns, uniform_random
from memrl.envs.tmaze import DOWN, UP, VARIANTS, TMaze

POLICIES = ("oracle", "always_left", "random")


def _replay(env, trajectory):
    """Run the env's transition on the recorded actions, injecting the recorded random draws
    (indicators and noise values come from gym's RNG, which cannot be reproduced)."""
    params = env.default_params
    obs = trajectory["obs"]
    noise = (lambda t: obs[t][3]) if env.noise else (lambda t: 0.0)
    state = env.initial_state(trajectory["indicator"] == 2, trajectory["secondary_indicator"] == 2, noise(0))
    transition = jax.jit(env.transition)
    record = {
        "obs": [env.observe(state, params)],
        "rewards": [],
        "dones": [],
        "cur_pos": [state.pos],
        "env_timestep": [state.timestep],
    }
    for t, action in enumerate(trajectory["actions"]):
        state, reward, terminated, truncated = transition(state, jnp.asarray(action), params, jnp.float32(noise(t + 1)))
        record["obs"].append(env.observe(state, params))
        record["rewards"].append(reward)
        record["dones"].append(terminated | truncated)
        record["cur_pos"].append(state.pos)
        record["env_timestep"].append(state.timestep)
    return {k: np.asarray(v) for k, v in record.items()}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_replays_golden_trajectories_exactly(variant, data_dir):
    env = envs.make(f"tmaze/{variant}")
    golden = np.load(data_dir / "tmaze" / f"{variant}.npz")
    for seed in range(4):
        for policy in POLICIES:
            trajectory = {k.split("/")[-1]: golden[k] for k in golden.files if k.startswith(f"seed{seed}/{policy}/")}
            replayed = _replay(env, trajectory)
            np.testing.assert_array_equal(replayed["obs"], trajectory["obs"], err_msg=f"{seed}/{policy}")
            np.testing.assert_allclose(replayed["rewards"], trajectory["rewards"], atol=1e-6)
            np.testing.assert_array_equal(replayed["dones"], trajectory["dones"])
            np.testing.assert_array_equal(replayed["cur_pos"], trajectory["cur_pos"])
            np.testing.assert_array_equal(replayed["env_timestep"], trajectory["env_timestep"])
            assert replayed["rewards"].sum() == pytest.approx(float(trajectory["return"]), abs=1e-4)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_spaces_match_official_configs(variant, data_dir):
    spec = json.loads((data_dir / "tmaze" / "tmaze_configs_and_returns.json").read_text())[variant]
    env = envs.make(f"tmaze/{variant}")
    assert list(env.observation_shape) == spec["observation_space"]["shape"]
    assert [f"Discrete({n})" for n in env.action_dims] == spec["action_space"]["components"]
    config = spec["env_config"]
    params = env.default_params
    assert params.maze_length == config["maze_length"] and params.timeout == config["timeout"]
    assert params.indicator_pos == config["indicator_pos"]
    assert (params.success_reward, params.fail_reward, params.check_reward) == (
        config["success_reward"],
        config["fail_reward"],
        config["check_reward"],
    )
    assert env.noise == config["intermediate_indicators"] and env.checks == config["intermediate_checks"]
    assert env.force_right == config["force_right"] and env.force_final_decision == config["force_final_decision"]
    assert env.ordered == (config["correlated_indicator_pos"] is not None)
    if env.ordered:
        assert params.second_indicator_pos == config["correlated_indicator_pos"]


def test_step_auto_resets_and_keeps_terminated_apart():
    env = envs.make("tmaze/T-L", maze_length=3)
    obs, state = env.reset(jax.random.PRNGKey(0))
    step = jax.jit(env.step)
    for _ in range(2):  # two moves reach the end cell
        obs, state, reward, done, info = step(jax.random.PRNGKey(1), state, jnp.array([1]))
        assert not done
    assert obs[2] == 1.0  # end flag
    obs, state, reward, done, info = step(jax.random.PRNGKey(2), state, jnp.array([2]))
    assert done and bool(info["terminated"]) and not bool(info["truncated"])
    assert reward in (4.0, -3.0)
    assert info["final_obs"][2] == 1.0 and obs[0] == 1.0 and int(state.pos) == 0  # fresh episode


@dataclasses.dataclass(frozen=True)
class FewResets(TMaze):
    """A T-maze that makes 2 fresh episodes per ``batch_step`` (as Craftax's optimistic resets)."""

    resets_per_step = 2


def test_a_batch_step_with_few_resets_gives_the_copies_that_end_the_fresh_episodes_in_turn():
    """``batch_step`` with ``resets_per_step`` 2 (the optimistic resets that Craftax's world
    generation needs) on T-L copies at the junction: those that turn end and start the 2 fresh
    episodes in turn, 0, 1, 0; the others step as ``step`` steps them, as does every copy's reward,
    done and info."""
    env = FewResets(force_final_decision=False, params=envs.make("tmaze/T-L", maze_length=2, indicator_pos=0).params)
    keys = jax.random.split(jax.random.PRNGKey(2), 5)
    _, states = jax.vmap(env.reset)(keys)
    _, states, *_ = jax.vmap(env.step)(keys, states, jnp.ones((5, 1), jnp.int32))  # to the junction
    actions = jnp.array([[UP], [1], [DOWN], [UP], [1]])  # copies 0, 2 and 3 turn, 1 and 4 stay
    obs, states_after, reward, done, info = jax.jit(env.batch_step)(keys, states, actions)
    exact = jax.vmap(env.step)(keys, states, actions)
    np.testing.assert_array_equal(done, [True, False, True, True, False])
    for got, want in zip((reward, done, info), exact[2:]):
        jax.tree.map(np.testing.assert_array_equal, got, want)
    stayed, ended = np.array([1, 4]), np.array([0, 2, 3])
    np.testing.assert_array_equal(obs[stayed], exact[0][stayed])
    reset_keys = jax.vmap(jax.random.split)(keys)[:2, 1]
    fresh_obs, fresh_states = jax.vmap(env.reset_env, (0, None))(reset_keys, env.default_params)
    assert fresh_states.indicator_up[0] != fresh_states.indicator_up[1]  # so that the turns show
    in_turn = np.array([0, 1, 0])
    np.testing.assert_array_equal(obs[ended], fresh_obs[in_turn])
    np.testing.assert_array_equal(states_after.indicator_up[ended], fresh_states.indicator_up[in_turn])


def test_first_episodes_are_the_same_with_few_resets_per_step():
    """``first_episode_returns`` steps through ``batch_step``: with ``resets_per_step`` the copies'
    first episodes (all that random play's level reads) are those of ``step``, to the last reward."""
    params = envs.make("tmaze/T-L", maze_length=3).params
    plain, few = TMaze(force_final_decision=False, params=params), FewResets(force_final_decision=False, params=params)
    returns = [first_episode_returns(env, uniform_random(env), jax.random.PRNGKey(3), 64, 50) for env in (plain, few)]
    assert len(set(np.asarray(returns[0]).tolist())) > 1  # both arms' rewards drawn
    np.testing.assert_array_equal(returns[1], returns[0])


def test_timeout_is_truncation_after_timeout_plus_one_steps():
    env = envs.make("tmaze/T-LS", maze_length=5, timeout=5)
    _, state = env.reset(jax.random.PRNGKey(0))
    wrong = lambda s: jnp.array([0, jnp.where(s.noise > 0, 1, 0)])  # always a wrong answer
    for t in range(6):
        _, state, reward, done, info = env.step(jax.random.PRNGKey(t), state, wrong(state))
        assert bool(done) == (t == 5)
    assert bool(info["truncated"]) and not bool(info["terminated"]) and reward == 0.0


def test_longer_corridor_is_a_parameter():
    env = envs.make("tmaze/T-LN", maze_length=200, timeout=300)
    assert env.default_params.maze_length == 200
    with pytest.raises(ValueError, match="no setting 'corridor'; its settings: maze_length"):
        envs.make("tmaze/T-LN", corridor=3)


def test_unknown_env_name_lists_known_ones():
    with pytest.raises(ValueError, match="tmaze/T-L.*memrl list"):
        envs.make("tmaze/T-X")


def test_bad_action_shape_is_refused():
    env = envs.make("tmaze/T-LS")
    _, state = env.reset(jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        env.step(jax.random.PRNGKey(0), state, jnp.array([1]))


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_scripted_policy_returns_match_reference(variant, data_dir):
    from memrl.envs.tmaze_policies import POLICIES, episode_returns

    spec = json.loads((data_dir / "tmaze" / "tmaze_configs_and_returns.json").read_text())[variant]
    env = envs.make(f"tmaze/{variant}")
    for name, make_policy in POLICIES.items():
        returns = np.asarray(jax.jit(lambda k: episode_returns(env, make_policy(env), k, 2000))(jax.random.PRNGKey(3)))
        reference = spec["returns_1000_episodes"][name]
        if name == "oracle":  # deterministic optimum: 4.0, or 13.9 with checks
            np.testing.assert_allclose(returns, reference["mean"], atol=1e-4)
        else:  # both are 1000/2000-episode means; 5 joint standard errors
            tolerance = 5 * reference["std"] * np.sqrt(1 / 1000 + 1 / 2000)
            assert abs(returns.mean() - reference["mean"]) < tolerance, (name, returns.mean(), reference["mean"])


def test_the_shortest_timeout_lets_the_shortest_episode_end():
    """timeout = maze_length, the least allowed: maze_length - 1 moves and the turn end the episode
    with the goal's reward; one step less is refused by name."""
    env = envs.make("tmaze/T-L", maze_length=4, timeout=4)
    _, state = env.reset(jax.random.PRNGKey(0))
    for t in range(4):
        turn = jnp.where(
            state.indicator_up, UP, DOWN
        )  # the goal's turn at the junction (any action moves right before it)
        _, state, reward, done, info = env.step(jax.random.PRNGKey(t), state, jnp.array([turn]))
    assert bool(done) and bool(info["terminated"]) and float(reward) == env.default_params.success_reward
    with pytest.raises(ValueError, match="timeout \\(3\\) must be >= maze_length \\(4\\)"):
        envs.make("tmaze/T-L", maze_length=4, timeout=3)


def test_a_variant_fixes_its_rules_and_lists_only_its_params():
    from memrl.settings import settings_of

    with pytest.raises(ValueError, match="'tmaze/T-L' fixes noise by its name"):
        envs.make("tmaze/T-L", noise=True)
    listed = {s.name: s.default for s in settings_of(envs.ENVS, "tmaze/T-LN")}
    assert "noise" not in listed and listed["indicator_pos"] == 0 and listed["maze_length"] == 100


def test_from_settings_gives_the_fields_by_name_and_the_rest_to_the_params():
    """``Environment.from_settings``, which every memrl environment registers: settings given flat."""
    from memrl.envs.tmaze import TMaze, TMazeParams

    env = TMaze.from_settings(noise=True, maze_length=20, timeout=40)
    assert env == TMaze(noise=True, params=TMazeParams(maze_length=20, timeout=40))
    assert TMaze.from_settings() == TMaze()
    with pytest.raises(TypeError, match=r"unknown TMaze params \['corridor'\]; allowed: \['check_reward'"):
        TMaze.from_settings(corridor=3)
