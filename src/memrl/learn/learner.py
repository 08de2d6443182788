"""The interface every learner has (PPO, IMPALA, supervised), as a ``typing.Protocol``: what the run
layer (``memrl.run``) and the analyses may call, whatever the learner."""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

from memrl.learn.run_config import ConfigRecord


@runtime_checkable
class Learner(Protocol):
    """A learner built from its config (``learners.learner_for(config)``). Every method but
    ``evaluation_summary`` is a pure function of arrays: jittable, and ``init``, ``update`` and
    ``run`` vmappable over seeds. The state is a pytree that checkpoints as it is (it holds the
    parameters as ``state.params``)."""

    config_class: ClassVar[type[ConfigRecord]]
    config: ConfigRecord

    def init(self, key, params=None) -> Any:
        """The learner's state at the start of a run of seed ``key``, with ``params`` where given
        (``ConfigRecord.init_params``: an earlier run's) instead of new ones."""

    def update(self, state, _=None) -> tuple[Any, dict]:
        """One update: the next state and this update's metrics (the names its config lists)."""

    def run(self, state, num_updates: int) -> tuple[Any, dict]:
        """``num_updates`` updates in one ``lax.scan``, the metrics stacked per update."""

    def evaluate(self, params, key, n: int) -> Any:
        """What ``params`` do without learning: ``n`` steps of fresh environments, or ``n`` fresh
        held-out sequences."""

    def evaluation_summary(self, results, n: int) -> str:
        """One line on what ``evaluate`` returned."""
