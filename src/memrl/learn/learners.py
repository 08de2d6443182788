"""The learners by name: each is a config class and the learner class that runs it (the
actor-critic learners and the supervised one share ``init``/``run``)."""

from __future__ import annotations

from memrl.learn.actor import ActorCriticLearner
from memrl.learn.impala import Impala
from memrl.learn.impala_config import ImpalaConfig
from memrl.learn.ppo import PPO
from memrl.learn.ppo_config import PPOConfig
from memrl.learn.run_config import RunConfig
from memrl.learn.supervised import SupervisedLearner
from memrl.learn.supervised_config import SupervisedConfig

LEARNERS: dict[str, tuple[type, type]] = {
    "ppo": (PPOConfig, PPO),
    "impala": (ImpalaConfig, Impala),
    "supervised": (SupervisedConfig, SupervisedLearner),
}


def _entry(name: str):
    if name not in LEARNERS:
        raise ValueError(f"unknown learner {name!r}; known: {', '.join(LEARNERS)}")
    return LEARNERS[name]


def config_from_dict(learner: str, data: dict) -> RunConfig:
    """The config of a learner from its JSON record."""
    return _entry(learner)[0].from_dict(data)


def learner_for(config: RunConfig) -> ActorCriticLearner:
    """The learner that runs ``config``."""
    return _entry(config.learner)[1](config)


def make_train(config: RunConfig):
    """``train(key) -> (RunnerState, metrics)`` for a whole run of ``config.num_updates`` updates."""
    learner = learner_for(config)

    def train(key):
        return learner.run(learner.init(key), config.num_updates)

    return train
