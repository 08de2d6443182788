"""The pipeline of a lagged run (acting for the next update while this one learns) gives the numbers
of the learner's own scan of updates, for both actor-critic learners."""

import jax
import numpy as np
import pytest

from memrl import cores, envs
from memrl.learn.impala import Impala
from memrl.learn.impala_config import ImpalaConfig
from memrl.learn.ppo import PPO
from memrl.learn.ppo_config import PPOConfig
from memrl.run.pipeline import Pipeline, chunk_runner

TINY = dict(
    env=envs.make("tmaze/T-LN", maze_length=4, timeout=12),
    core=cores.make("gru", hidden=8),
    encoder_widths=(8,),
    head_widths=(8,),
    num_envs=4,
    rollout_len=6,
    total_steps=4 * 6 * 3,
)
PPO_TINY = dict(num_minibatches=2, update_epochs=2)


@pytest.mark.parametrize(
    "learner, config",
    [
        (Impala, ImpalaConfig(**TINY, policy_lag=1)),
        (PPO, PPOConfig(**TINY, **PPO_TINY, policy_lag=2)),
    ],
    ids=["impala-lag1", "ppo-lag2"],
)
def test_pipelined_updates_equal_the_scanned_ones(learner, config):
    learner = learner(config)
    runner = jax.vmap(learner.init)(jax.random.split(jax.random.PRNGKey(3), 2))  # two seeds
    scanned, scanned_metrics = jax.jit(jax.vmap(lambda r: learner.run(r, 3)))(runner)
    piped, piped_metrics = Pipeline(learner)(runner, 3)
    assert int(piped.update[0]) == 3
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6), piped, scanned)
    assert piped_metrics.keys() == scanned_metrics.keys()
    for name in ("episode_return", "policy_loss", "value_loss", "env_steps"):
        np.testing.assert_allclose(piped_metrics[name], scanned_metrics[name], rtol=1e-5, atol=1e-6)


def test_a_run_without_lag_scans_its_chunk():
    config = PPOConfig(**TINY, **PPO_TINY)
    assert not isinstance(chunk_runner(PPO(config), config), Pipeline)
    assert isinstance(chunk_runner(PPO(config), PPOConfig(**TINY, **PPO_TINY, policy_lag=1)), Pipeline)


def test_policy_lag_is_refused_below_zero():
    with pytest.raises(ValueError, match="policy_lag must be >= 0, got -1"):
        PPOConfig(**TINY, **PPO_TINY, policy_lag=-1)
