"""Analyses the papers use: gradient decay, signal-to-noise, planning measures, and probes of what a
memory holds. Each analysis module registers its ``memrl analyze`` command in ``ANALYSES``."""

from memrl.registry import Registry

ANALYSIS_MODULES = (
    "gradient_strength",
    "gradient_scale",
    "signal_to_noise",
    "distance_probe",
    "planner_distance_training",
    "visited_moves",
    "ballet_memory",
    "decision_probe",
    "attention_maps",
    "chunk_selection",
)
"""the modules that register analyses, imported when ``ANALYSES`` is first asked"""
ANALYSES: Registry = Registry("analysis", modules=tuple(f"memrl.analysis.{module}" for module in ANALYSIS_MODULES))
"""``memrl analyze``'s subcommands: name -> the command (a function tyro parses)"""
