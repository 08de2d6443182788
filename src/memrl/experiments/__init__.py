"""Named reproductions. Importing this package imports every experiment module, a module named
after its paper's memory (``amrl_*``, ``epn_*``, ``htm_*``, ``rmc_*``, ``tlb_*``) or its benchmark
(``popgym_*``, ``memory_benchmark``), and each registers
its experiments (``base.register``); the other modules (base, records, runner, ...) are helpers."""

import importlib
import pkgutil

from memrl.experiments.base import EXPERIMENTS, Expectation, Experiment, get, names, register

MODULE_PREFIXES = ("amrl", "epn", "htm", "rmc", "tlb", "popgym", "memory")
"""the prefixes of experiment modules: the memories whose papers they reproduce, and the benchmarks"""

for _module in pkgutil.iter_modules(__path__):
    if _module.name.split("_")[0] in MODULE_PREFIXES:
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["EXPERIMENTS", "Expectation", "Experiment", "get", "names", "register"]
