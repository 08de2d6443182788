"""``memrl.load_policy``: a trained actor acting step by step chooses what the learner's own unroll of
the same steps chooses, runs in a plain gymnasium loop, and refuses what it cannot do."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import tiny_ppo

import memrl
from memrl import cores, envs, tasks
from memrl.envs.gymnasium_adapter import GymnasiumEnv
from memrl.learn.learners import learner_for
from memrl.learn.ppo_config import PPOConfig
from memrl.learn.supervised_config import SupervisedConfig
from memrl.run.folder import RunFolder
from memrl.run.seed_training import train_seeds

ENV_ARGS = {"maze_length": 3, "timeout": 8}


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    config = PPOConfig(
        env=envs.make("tmaze/T-LN", **ENV_ARGS),
        core=cores.make("gru", hidden=8),
        encoder_widths=(8,),
        head_widths=(8,),
        feed_prev_action=True,
        num_envs=4,
        rollout_len=8,
        num_minibatches=1,
        total_steps=64,
        updates_per_chunk=2,
    )
    folder = RunFolder(tmp_path_factory.mktemp("policy") / "run")
    folder.prepare(config)
    train_seeds(config, folder, [0])
    return folder


def test_acting_step_by_step_chooses_what_the_unroll_chooses(run_folder):
    policy = memrl.load_policy(run_folder.path)
    learner = learner_for(run_folder.load_config())
    env = learner.env
    obs, env_state = jax.vmap(env.reset)(jax.random.split(jax.random.PRNGKey(1), 3))
    state, start = policy.initial_state(3), np.ones(3, bool)
    steps = []
    for t in range(12):  # episodes end within the timeout: resets inside the sequence
        action, new_state = policy.act(obs, state, start)
        steps.append((obs, state.prev_action, start, action))
        obs, env_state, _, done, _ = jax.vmap(env.step)(
            jax.random.split(jax.random.PRNGKey(100 + t), 3), env_state, action[:, None]
        )
        state, start = new_state, np.asarray(done)
    observations, prev_actions, starts, actions = (jnp.stack(x) for x in zip(*steps))
    _, (logits, _, _) = learner.agent.apply(
        policy.params,
        learner.agent.initialize_carry((3,)),
        observations,
        prev_actions,
        jnp.zeros(starts.shape),
        starts,
        method=learner.agent.unroll,
    )
    assert np.asarray(starts)[1:].any()
    np.testing.assert_array_equal(np.asarray(learner.agent.actions.greedy(logits))[..., 0], np.asarray(actions))


def test_a_policy_acts_in_a_gymnasium_loop_and_samples_with_a_key(run_folder):
    policy = memrl.load_policy(run_folder.path, seed=0)
    env = GymnasiumEnv("tmaze/T-LN", **ENV_ARGS)
    obs, _ = env.reset(seed=0)
    state, start, episodes, key = policy.initial_state(1), np.ones(1, bool), 0, jax.random.PRNGKey(0)
    for _ in range(30):
        key, act_key = jax.random.split(key)
        action, state = policy.act(obs[None], state, start, greedy=False, key=act_key)
        obs, reward, terminated, truncated, _ = env.step(int(action[0]))
        start = np.array([terminated or truncated])
        if start[0]:
            episodes += 1
            obs, _ = env.reset()
    assert episodes >= 3 and env.action_space.contains(int(action[0]))
    with pytest.raises(ValueError, match="give it a key"):
        policy.act(obs[None], state, start, greedy=False)
    with pytest.raises(ValueError, match="seeds \\[0\\], not 3"):
        memrl.load_policy(run_folder.path, seed=3)


def test_a_supervised_run_is_not_a_policy(tmp_path):
    folder = RunFolder(tmp_path / "run")
    folder.prepare(
        SupervisedConfig(
            task=tasks.make("copying", gap=2),
            core=cores.make("gru", hidden=4),
            embed_dim=4,
            batch_size=2,
            total_steps=4,
        )
    )
    with pytest.raises(
        ValueError,
        match="load_policy loads impala, ppo, pqn, r2d2 runs; .* holds a supervised run \\(load it with memrl.load_predictor\\)",
    ):
        memrl.load_policy(folder.path)


def test_loading_builds_the_run_s_learner_once(run_folder, monkeypatch):
    from memrl.run import final_agents

    built = []
    monkeypatch.setattr(final_agents, "learner_for", lambda config: built.append(config) or learner_for(config))
    policy = memrl.load_policy(run_folder.path)
    assert len(built) == 1 and policy.learner.config == built[0]


def test_inputs_of_other_shapes_are_named_at_the_boundary(run_folder):
    policy = memrl.load_policy(run_folder.path)
    obs = np.zeros((2, *learner_for(run_folder.load_config()).env.observation_shape), np.float32)
    state, start = policy.initial_state(2), np.ones(2, bool)
    with pytest.raises(ValueError, match="obs must have shape \\(2, 4\\) .*got \\(4,\\)"):
        policy.act(obs[0], state, start)
    with pytest.raises(ValueError, match="state does not fit this step: it holds 1 environments, episode_start 2"):
        policy.act(obs, policy.initial_state(1), start)
    with pytest.raises(ValueError, match="episode_start must have shape \\[B\\]"):
        policy.act(obs, state, True)
    with pytest.raises(ValueError, match="obs holds NaN or infinite values"):
        policy.act(np.full_like(obs, np.nan), state, start)
    with pytest.raises(ValueError, match="reward must have shape"):
        policy.act(obs, state, start, reward=np.zeros(3))
    action, _ = policy.act(obs, state, start)
    assert action.shape == (2,)


def test_predict_takes_one_observation_or_a_batch_as_stable_baselines3_does(run_folder):
    policy = memrl.load_policy(run_folder.path)
    env = GymnasiumEnv("tmaze/T-LN", **ENV_ARGS)
    obs, _ = env.reset(seed=0)
    action, state = policy.predict(obs, deterministic=True)  # one observation, a fresh state
    assert np.ndim(action) == 0 and env.action_space.contains(int(action))
    batched, batched_state = policy.act(obs[None], policy.initial_state(1), np.ones(1, bool))
    assert int(action) == int(batched[0])
    np.testing.assert_array_equal(np.asarray(jax.tree.leaves(state)[0]), np.asarray(jax.tree.leaves(batched_state)[0]))
    obs, *_ = env.step(int(action))
    action, state = policy.predict(obs, state, episode_start=False)  # sampled, from the policy's own keys
    assert env.action_space.contains(int(action))
    actions, _ = policy.predict(np.stack([obs, obs]), deterministic=True)
    assert actions.shape == (2,)
    with pytest.raises(ValueError, match=r"observation has shape \(5,\); .* one observation of shape \(4,\), a batch"):
        policy.predict(np.zeros(5))  # read as one wrong observation, not as a batch of 5
    with pytest.raises(
        ValueError, match=r"episode_start must be one value or one per environment, shape \(2,\); got shape \(3,\)"
    ):
        policy.predict(np.stack([obs, obs]), episode_start=np.ones(3, bool))


def test_a_continuous_policy_acts_within_the_bounds_and_reads_its_own_draws_back(tmp_path):
    """Pendulum's torques lie in [-2, 2]: ``act`` and ``predict`` give float32 actions of the Box's
    shape within it, greedy and sampled, and keep the agent's unsquashed draw as its previous action."""
    config = tiny_ppo(env=envs.make("gymnax/Pendulum-v1/positions"), feed_prev_action=True, num_minibatches=1)
    folder = RunFolder(tmp_path / "run")
    folder.prepare(config)
    train_seeds(config, folder, [0])
    policy = memrl.load_policy(folder.path)
    obs = np.tile(np.array([[1.0, 0.0]], np.float32), (3, 1))
    state = policy.initial_state(3)
    assert state.prev_action.shape == (3, 1) and state.prev_action.dtype == jnp.float32
    for greedy in (True, False):
        action, next_state = policy.act(obs, state, np.ones(3, bool), greedy=greedy, key=jax.random.PRNGKey(0))
        assert action.shape == (3, 1) and action.dtype == jnp.float32
        assert np.all(np.abs(np.asarray(action)) <= 2.0)
        np.testing.assert_allclose(np.asarray(action), 2 * np.tanh(np.asarray(next_state.prev_action)), atol=1e-6)
    single, _ = policy.predict(np.array([1.0, 0.0], np.float32), deterministic=True)
    assert single.shape == (1,) and single.dtype == np.float32
