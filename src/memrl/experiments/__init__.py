"""Named reproductions. The registry imports the modules that register experiments
(``base.EXPERIMENT_MODULES``: one per paper's experiment or benchmark) when it is first asked; the
other modules (base, records, runner, ...) are helpers."""

from memrl.experiments.base import EXPERIMENTS, Expectation, Experiment, get, names, register

__all__ = ["EXPERIMENTS", "Expectation", "Experiment", "get", "names", "register"]
