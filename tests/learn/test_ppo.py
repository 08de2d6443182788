"""Recurrent PPO: learning a short T-maze, determinism, resuming, and the multi-seed path."""

from types import SimpleNamespace

import jax
import numpy as np
import pytest
from conftest import final_returns, trained_over_seeds

from memrl import cores, envs
from memrl.learn.ppo import PPO
from memrl.learn.ppo_config import PPOConfig
from memrl.run.folder import ConfigMismatch, RunFolder
from memrl.run.seed_training import train_seeds

TINY = dict(
    env=envs.make("tmaze/T-LN", maze_length=6, timeout=20),
    core=cores.make("gru", hidden=32),
    encoder_widths=(32,),
    head_widths=(32,),
    num_envs=16,
    rollout_len=24,
    lr=3e-3,
)


def tiny(**overrides) -> PPOConfig:
    return PPOConfig(**{**TINY, **overrides})


@pytest.mark.slow
@pytest.mark.parametrize("policy_lag", [0, 1])
def test_learns_short_tmaze_above_memoryless_optimum(policy_lag):
    """A 6-cell T-LN needs memory of the first observation; without it the best return is 0.5. With
    a policy lag (the pipelined run's), PPO's ratio is taken against the older behaviour policy.
    Every one of 3 seeds (3.90-3.96 over the last ten updates without lag, 2026-12-07)."""
    _, metrics = trained_over_seeds(tiny(total_steps=16 * 24 * 50, policy_lag=policy_lag))
    assert np.all(final_returns(metrics) >= 3.5), final_returns(metrics)


@pytest.mark.slow
def test_learns_to_swing_up_the_pendulum_with_a_gaussian_policy():
    """gymnax's Pendulum (Box actions in [-2, 2]): the squashed Gaussian head, its draws kept for the
    ratio and squashed for the environment, takes the return from random play's -1,219 per
    200-step episode to about -200 within 100k steps (seeds 0-2: -202, -215, -213 over the last
    tenth), with continuous-control's learner (the rewards scaled by 0.1 in the losses)."""
    from memrl.experiments.continuous_control import LEARNER

    settings = {**LEARNER, "total_steps": 32 * 32 * 96}
    config = PPOConfig(env=envs.make("gymnax/Pendulum-v1"), core=cores.make("gru", hidden=32), **settings)
    _, metrics = trained_over_seeds(config)
    first = np.nanmean(np.asarray(metrics["episode_return"])[:, :10], axis=1)
    assert np.all(first < -900) and np.all(final_returns(metrics) > -500), (first, final_returns(metrics))


def test_same_seed_same_run_and_other_seed_differs():
    config = tiny(total_steps=16 * 24 * 2)
    trainer = PPO(config)
    run = jax.jit(trainer.run, static_argnums=1)
    _, a = run(trainer.init(jax.random.PRNGKey(0)), 2)
    _, b = run(trainer.init(jax.random.PRNGKey(0)), 2)
    _, c = run(trainer.init(jax.random.PRNGKey(1)), 2)
    np.testing.assert_array_equal(a["policy_loss"], b["policy_loss"])
    assert not np.array_equal(a["policy_loss"], c["policy_loss"])


def test_episode_metrics_are_the_mean_and_spread_of_the_ended_episodes():
    done = np.array([[True, False], [False, True], [True, False]])
    returns = np.array([[1.0, 7.0], [9.0, 4.0], [3.0, 9.0]])  # read only where done: 1, 4, 3
    segment = SimpleNamespace(episode_done=done, episode_return=returns)
    metrics = PPO(tiny()).episode_metrics(SimpleNamespace(update=2), segment)
    assert metrics["episodes"] == 3 and metrics["env_steps"] == 2 * tiny().steps_per_update
    np.testing.assert_allclose(
        [metrics["episode_return"], metrics["episode_return_std"]], [np.mean([1, 4, 3]), np.std([1, 4, 3])], rtol=1e-6
    )
    none = PPO(tiny()).episode_metrics(
        SimpleNamespace(update=1), SimpleNamespace(episode_done=done & False, episode_return=returns)
    )
    assert np.isnan(none["episode_return"]) and np.isnan(none["episode_return_std"])


def test_killed_run_resumes_to_the_same_result(tmp_path):
    """Interrupt after the first chunk, resume, and end exactly where an uninterrupted run ends."""
    config = tiny(total_steps=16 * 24 * 4, updates_per_chunk=2)

    class Killed(Exception):
        pass

    def kill_after_first_chunk(steps_done):
        if steps_done >= 2 * config.steps_per_update:
            raise Killed

    interrupted = RunFolder(tmp_path / "interrupted")
    interrupted.prepare(config)
    with pytest.raises(Killed):
        train_seeds(config, interrupted, [0], on_chunk=kill_after_first_chunk)
    assert [r["env_steps"] for r in interrupted.read_metrics(0)] == [384, 768]
    interrupted.append_metrics(0, [{"env_steps": -1, "episode_return": None}])  # written after the checkpoint
    train_seeds(config, interrupted, [0])

    straight = RunFolder(tmp_path / "straight")
    straight.prepare(config)
    train_seeds(config, straight, [0])

    assert [r["env_steps"] for r in interrupted.read_metrics(0)] == [384, 768, 1152, 1536]
    template = PPO(config).init(jax.random.PRNGKey(0))
    a = interrupted.load_checkpoint(0, template)
    b = straight.load_checkpoint(0, template)
    jax.tree.map(np.testing.assert_array_equal, a.params, b.params)
    assert int(a.update) == 4


def test_run_folder_refuses_another_config(tmp_path):
    folder = RunFolder(tmp_path / "run")
    folder.prepare(tiny(total_steps=16 * 24 * 4))
    with pytest.raises(ConfigMismatch, match="lr: 0.003 there, 0.001 asked"):
        folder.prepare(tiny(total_steps=16 * 24 * 4, lr=1e-3))


def test_checkpoint_of_another_shape_is_refused(tmp_path):
    folder = RunFolder(tmp_path / "run")
    small = tiny(total_steps=16 * 24)
    folder.save_checkpoint(0, PPO(small).init(jax.random.PRNGKey(0)))
    other = PPO(tiny(total_steps=16 * 24, core=cores.make("gru", hidden=16))).init(jax.random.PRNGKey(0))
    with pytest.raises(ConfigMismatch, match="does not fit"):
        folder.load_checkpoint(0, other)


@pytest.mark.parametrize(
    "overrides, message",
    [
        (dict(num_envs=10, num_minibatches=4), "divisible"),
        (dict(gamma=1.5), r"gamma must be within \[0.0, 1.0\]"),
        (dict(num_envs=0), "num_envs must be a positive integer"),
        (dict(total_steps=10), "less than one update"),
        (
            dict(advantage_normalization="episode"),
            r"advantage_normalization must be one of \('minibatch', 'batch'\), got 'episode'",
        ),
        (dict(value_clip=0.0), "value_clip must be > 0"),
        (dict(reward_scale=0.0), "reward_scale must be > 0"),
        (dict(seed=2**70), r"seed must lie in \[0, 4,294,967,295\] for 1 seed\(s\) \(JAX's PRNG keys hold 32 bits"),
        (dict(seed=2**32 - 2, seeds=3), r"seed must lie in \[0, 4,294,967,293\] for 3 seed\(s\)"),
        (dict(seed=-5), r"seed must lie in \[0, "),
    ],
)
def test_bad_config_values_say_what_is_allowed(overrides, message):
    with pytest.raises(ValueError, match=message):
        tiny(**overrides).validate()


@pytest.mark.parametrize(
    "make, message",
    [
        (
            lambda: cores.make("lstmx"),
            "unknown core 'lstmx'; did you mean 'lstm' or 'mlstm'\\? \\(`memrl list` names all",
        ),
        (lambda: envs.make("tmaze/T-X"), "unknown environment 'tmaze/T-X'"),
        (lambda: cores.make("gru", width=3), r"core 'gru' has no setting 'width'; its settings: hidden"),
        (lambda: tiny(core="gru"), r"core must be the core itself, made by its name: core=memrl.cores.make\('gru'"),
    ],
)
def test_a_bad_component_says_what_is_allowed(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.slow
def test_multi_seed_path_finishes(tmp_path, monkeypatch):
    """Two seeds on the CPU run as two pinned processes and both finish (docs/architecture.md: in-process
    vmap over seeds deadlocked on 2-core machines); the workers write their compiled programs to
    the disk cache that later jobs of the run load."""
    from memrl.run.train import train_folders

    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", str(tmp_path / "xla"))

    folder = RunFolder(tmp_path / "seeds")
    config = tiny(total_steps=16 * 24 * 2, seeds=2)
    folder.prepare(config)
    train_folders([folder], workers=2)
    for seed in (0, 1):
        assert [r["env_steps"] for r in folder.read_metrics(seed)] == [384, 768]
    losses = [folder.read_metrics(s)[0]["policy_loss"] for s in (0, 1)]
    assert losses[0] != losses[1]
    assert any((tmp_path / "xla").iterdir())


def test_advantage_normalization_over_the_batch_is_the_minibatchs_when_they_coincide_and_not_otherwise():
    """With one minibatch per epoch, standardising over the update's batch and over the minibatch
    are the same update; with several, the loss itself standardises only in "minibatch" mode (its
    value is unchanged by an affine rescaling of the advantages there, and changed in "batch")."""

    def one_update(**overrides):
        trainer = PPO(tiny(total_steps=16 * 24, **overrides))
        runner, _ = jax.jit(trainer.update)(trainer.init(jax.random.PRNGKey(0)))
        return jax.tree.leaves(runner.params)

    for a, b in zip(one_update(num_minibatches=1), one_update(num_minibatches=1, advantage_normalization="batch")):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)

    def gradients(mode):
        """The loss's gradient at the rollout's parameters (ratio 1) for random advantages and
        for an affine rescaling of them, the value targets fixed."""
        trainer = PPO(tiny(num_minibatches=4, advantage_normalization=mode))
        runner = trainer.init(jax.random.PRNGKey(0))
        _, segment = trainer.rollout(runner, runner.params)
        advantages = jax.random.normal(jax.random.PRNGKey(1), segment.transitions.reward.shape)
        grad = lambda adv: jax.grad(
            lambda p: trainer._loss(p, segment.initial_carry, segment.transitions, adv, advantages)[0]
        )(runner.params)
        return np.concatenate([np.ravel(g) for g in jax.tree.leaves(grad(advantages))]), np.concatenate(
            [np.ravel(g) for g in jax.tree.leaves(grad(3.0 * advantages + 2.0))]
        )

    plain, rescaled = gradients("minibatch")
    np.testing.assert_allclose(plain, rescaled, rtol=1e-4, atol=1e-6)
    plain, rescaled = gradients("batch")
    assert np.abs(plain - rescaled).max() > 100 * np.abs(plain).max() * 1e-4


def test_amrl_reference_config_is_the_papers_batching():
    from memrl.learn.ppo_config import amrl_reference

    config = amrl_reference()
    assert config.steps_per_update == 4000  # 4000-step batches
    assert config.envs_per_minibatch * config.rollout_len == 200  # minibatches of 200 steps
    assert config.update_epochs == 30 and config.gamma == 0.98 and config.lr in (5e-3, 5e-4, 5e-5)


def test_a_run_starts_from_another_runs_parameters(tmp_path):
    from memrl.run.final_agents import check_starting_params, seed_params

    first = RunFolder(tmp_path / "first")
    config = tiny(total_steps=16 * 24)
    first.prepare(config)
    train_seeds(config, first, [0])
    grown = tiny(total_steps=16 * 24, lr=1e-12, init_params=str(first.path))  # one update that changes nothing
    shapes = jax.eval_shape(PPO(grown).init, jax.random.PRNGKey(0)).params
    check_starting_params(grown, shapes)
    second = RunFolder(tmp_path / "second")
    second.prepare(grown)
    train_seeds(grown, second, [0])
    jax.tree.map(
        lambda a, b: np.testing.assert_allclose(a, b, atol=1e-6), seed_params(second, 0), seed_params(first, 0)
    )
    narrow = tiny(core=cores.make("gru", hidden=16), init_params=str(first.path))
    with pytest.raises(ValueError, match="parameters differ from this run's at"):
        check_starting_params(narrow, jax.eval_shape(PPO(narrow).init, jax.random.PRNGKey(0)).params)
    with pytest.raises(FileNotFoundError, match="has no checkpoint of seed"):
        check_starting_params(tiny(seeds=2, init_params=str(first.path)), shapes)


def test_a_runner_is_typed_as_an_update_returns_it_so_a_jitted_update_compiles_once(monkeypatch):
    """An environment whose reset leaves a value weakly typed (Craftax's facing direction) got a
    runner that its first update returned typed otherwise, and the next call compiled again (20 s
    on Craftax); the runner's environment state now takes the types a step gives."""
    import dataclasses

    import jax.numpy as jnp

    from memrl.envs.tmaze import TMaze

    @dataclasses.dataclass(frozen=True)
    class WeakReset(TMaze):
        def reset_env(self, key, params):
            obs, state = super().reset_env(key, params)
            return obs, state._replace(pos=jnp.asarray(0))  # a Python 0: weakly typed

        def step_env(self, key, state, action, params):
            obs, state, *rest = super().step_env(key, state, action, params)
            return obs, state._replace(pos=jnp.asarray(state.pos, jnp.int32)), *rest  # typed, as Craftax's step

    assert jax.typeof(WeakReset().reset(jax.random.PRNGKey(0))[1].pos).weak_type
    monkeypatch.setattr(envs.ENVS, "_registered", dict(envs.ENVS._factories))  # the registration ends with the test
    envs.register("test/weak-reset", WeakReset.from_settings)
    env, core = envs.make("test/weak-reset"), cores.make("gru", hidden=4)
    ppo = PPO(PPOConfig(env=env, core=core, num_envs=2, rollout_len=4, num_minibatches=1))
    runner = ppo.init(jax.random.PRNGKey(0))
    updated, _ = jax.eval_shape(ppo.update, runner)
    assert jax.tree.map(jax.typeof, runner) == jax.tree.map(
        lambda s: jax.core.ShapedArray(s.shape, s.dtype, s.weak_type), updated
    )
