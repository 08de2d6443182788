"""Named reproductions; importing this package registers them."""

from memrl.experiments.base import EXPERIMENTS, Expectation, Experiment, get, names, register
from memrl.experiments import amrl_minecraft, amrl_tmaze, epn_graph_nav, epn_memory_planning, epn_settings_sweep, htm_ballet, htm_graph_nav, htm_object_permanence, htm_pai, htm_word_learning, htm_pvm, rmc_boxworld, rmc_language_model, rmc_lte, rmc_nth_farthest, rmc_pacman, tlb_babyai, tlb_copying, tlb_decision, tlb_image, tlb_listops  # noqa: F401  (registration)

__all__ = ["EXPERIMENTS", "Expectation", "Experiment", "get", "names", "register"]
