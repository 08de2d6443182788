"""The learners by name (``config.learner``), in one registry: each entry is a learner class whose
``config_class`` is its config. Every learner has the same interface, ``learner.Learner``:
``init(key)``, ``update(state)``, ``run(state, n)`` (jittable, vmappable over seeds),
``evaluate(params, key, n)`` and ``evaluation_summary``; its config names its metrics."""

from __future__ import annotations

from memrl.learn.impala import Impala
from memrl.learn.learner import Learner
from memrl.learn.ppo import PPO
from memrl.learn.pqn import PQN
from memrl.learn.r2d2 import R2D2
from memrl.learn.run_config import ConfigRecord
from memrl.learn.supervised import SupervisedLearner
from memrl.registry import Registry

LEARNERS: Registry = Registry("learner")
for _learner in (PPO, Impala, R2D2, PQN, SupervisedLearner):
    LEARNERS.register(_learner.config_class.learner, _learner)


def learner_for(config: ConfigRecord) -> Learner:
    """The learner that runs ``config`` (its ``imports`` imported first: they register what it names)."""
    config.import_modules()
    return LEARNERS.make(config.learner, config=config)


def make_train(config: ConfigRecord):
    """``train(key) -> (state, metrics)`` for a whole run of ``config.num_updates`` updates."""
    learner = learner_for(config)

    def train(key):
        return learner.run(learner.init(key), config.num_updates)

    return train
