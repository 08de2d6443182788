"""Deciding a check with the seed as the unit of evidence.

A check compares the mean over seeds of each seed's own value with a level, or with the mean over
seeds of another run. Its margin is ``STANDARD_ERRORS`` standard errors over the seeds: of the mean
for a level; for an ordering, of the difference of the two means, over the per-seed differences
when the runs' seeds share their data and held-out sets (paired), else Welch's
sqrt(s_a^2 / n_a + s_b^2 / n_b). Episodes and batches within a seed never make a margin.

- *passed*: the seed mean has the claimed side of the level (or of the other run's mean), no leniency;
- *decided*: it passed, every run has at least ``MIN_SEEDS`` seeds, and the mean minus the margin
  (plus, for "at most") still has that side;
- *reversed* (orderings only): the opposite ordering holds beyond the margin, on ``MIN_SEEDS`` seeds.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

OPS = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt}
STANDARD_ERRORS = 2.0
"""the margin, in standard errors over the seeds, by which a check must hold to be decided"""
MIN_SEEDS = 3
"""the fewest seeds of every compared run for a check to be decided (or reversed)"""


def seed_mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def seed_standard_error(values: Sequence[float]) -> float | None:
    """The standard error of the mean over seeds, sqrt(var / n) with var over n - 1 (None below 2 seeds)."""
    n = len(values)
    if n < 2:
        return None
    mean = seed_mean(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n)


def ordering_error(per_seed: Sequence[float], against_per_seed: Sequence[float], paired: bool) -> float | None:
    """The standard error of mean(per_seed) - mean(against_per_seed): over the seeds' differences
    when ``paired`` (seed i of both runs saw the same data), Welch's otherwise."""
    if paired:
        if len(per_seed) != len(against_per_seed):
            raise ValueError(
                f"a paired ordering needs as many seeds in both runs, got {len(per_seed)} and {len(against_per_seed)}"
            )
        return seed_standard_error([a - b for a, b in zip(per_seed, against_per_seed)])
    errors = [seed_standard_error(per_seed), seed_standard_error(against_per_seed)]
    return None if None in errors else math.sqrt(sum(e**2 for e in errors))


def decide(
    op: str,
    per_seed: Sequence[float],
    threshold: float | None = None,
    against_per_seed: Sequence[float] | None = None,
    paired: bool = False,
) -> dict:
    """A check of the seed mean of ``per_seed`` ``op`` ``threshold`` (a level) or ``op`` the seed mean
    of ``against_per_seed`` (an ordering): {"value", "threshold" (the level or the other mean),
    "margin", "seeds", "test", "passed", "decided", "reversed"}."""
    if op not in OPS:
        raise ValueError(f"op must be one of {tuple(OPS)}, got {op!r}")
    if (threshold is None) == (against_per_seed is None):
        raise ValueError("a check has either a level (threshold) or the other run's per-seed values, not both")
    if not per_seed or (against_per_seed is not None and not against_per_seed):
        raise ValueError("a check needs at least one seed's value in each run")
    value = seed_mean(per_seed)
    if against_per_seed is None:
        bound, error, test, seeds = threshold, seed_standard_error(per_seed), "level", len(per_seed)
    else:
        bound, error = seed_mean(against_per_seed), ordering_error(per_seed, against_per_seed, paired)
        test, seeds = "paired" if paired else "Welch", min(len(per_seed), len(against_per_seed))
    margin = None if error is None else STANDARD_ERRORS * error
    passed = OPS[op](value, bound)
    enough = margin is not None and seeds >= MIN_SEEDS
    sign = 1 if op in (">", ">=") else -1
    decided = passed and enough and OPS[op](value - sign * margin, bound)
    reversed = (
        test != "level" and enough and (value + sign * margin < bound if sign > 0 else value + sign * margin > bound)
    )
    return {
        "value": value,
        "threshold": bound,
        "margin": margin,
        "seeds": seeds,
        "test": test,
        "passed": passed,
        "decided": decided,
        "reversed": reversed,
    }


def undecided(op: str, value: float | None, bound: float | None) -> dict:
    """A check whose values carry no per-seed spread (a pooled or transcribed number): its direction
    only, never decided nor reversed."""
    passed = value is not None and bound is not None and OPS[op](value, bound)
    return {
        "value": value,
        "threshold": bound,
        "margin": None,
        "seeds": None,
        "test": None,
        "passed": passed,
        "decided": False,
        "reversed": False,
    }
