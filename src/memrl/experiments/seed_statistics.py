"""Deciding a check with the seed as the unit of evidence, by a test that holds at its number of seeds.

A check compares the mean over seeds of each seed's own value with a level, or with the mean over
seeds of another run (an ordering). It is decided by a one-sided test at ``ALPHA`` (95%):

- values that are not all 0 or 1: Student's t. A level: the one-sample t, t = (mean - level) / (s / sqrt(n)),
  df = n - 1. An ordering: Welch's t over the two runs' seeds, t = (m_a - m_b) / sqrt(s_a^2/n_a + s_b^2/n_b)
  with the Welch-Satterthwaite df, or, where seed i of both runs saw the same data and held-out sets
  (``paired``), the one-sample t of the seeds' differences. The check's ``margin`` is the one-sided
  95% half-width t_{0.95, df} * SE: decided exactly when the mean minus the margin still has the
  claimed side.
- values that are all 0 or 1 (a seed solved it or not): an exact test. A level: the binomial test of
  k successes in n seeds against the level as the seeds' success rate (a level of 0 or 1, "in every
  seed", against a rate of 1/2: 3 of 3 gives p = 0.125, 5 of 5 p = 0.031). An ordering: Fisher's
  exact test (3 of 3 against 0 of 3 gives p = 0.05, the least three seeds can give), paired:
  McNemar's exact test on the discordant seeds.
- zero spread decides nothing by itself: a t-test whose standard error is 0 has no p.
- "at least as good as" (``parity``, a non-inferiority bound delta > 0 stated before the runs): the
  difference is tested against -delta, not 0 (for "at most", against +delta).
- a held-out set that every seed shares (``shared_episodes`` = its episodes, the values fractions of
  them): each run's variance of the mean adds the set's binomial sampling variance p(1 - p) / m,
  whose df is unbounded in the Satterthwaite df.

*passed*: the seed mean has the claimed side of the bound (the level, the other run's mean, or the
other run's mean shifted by the parity bound), no leniency. *decided*: passed, every run has at least
``MIN_SEEDS`` seeds and p < ``ALPHA``. *reversed* (orderings only): the opposite one-sided test at
``ALPHA`` on as many seeds. Episodes and batches within a seed never make a margin.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

OPS = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt}
ALPHA = 0.05
"""the one-sided level of every test: decided when p < ALPHA"""
MIN_SEEDS = 3
"""the fewest seeds of every compared run for a check to be decided (or reversed)"""
COIN = 0.5
"""the success rate a 0/1 level of 0 or 1 ("in every seed", "in no seed") is tested against"""
RESULT_KEYS = ("value", "threshold", "margin", "seeds", "test", "statistic", "df", "p", "passed", "decided", "reversed")
"""what ``decide`` gives: the mean, the bound, the t-test's margin, the fewest seeds of a run, the
test's name, statistic, degrees of freedom and one-sided p, and the three outcomes"""


def seed_mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def seed_variance(values: Sequence[float]) -> float | None:
    """The sample variance over seeds (over n - 1; None below 2 seeds)."""
    n = len(values)
    if n < 2:
        return None
    mean = seed_mean(values)
    return sum((v - mean) ** 2 for v in values) / (n - 1)


def seed_standard_error(values: Sequence[float]) -> float | None:
    """The standard error of the mean over seeds, sqrt(var / n) with var over n - 1 (None below 2 seeds)."""
    variance = seed_variance(values)
    return None if variance is None else math.sqrt(variance / len(values))


def is_binary(*runs: Sequence[float]) -> bool:
    """Whether every value of every run is 0 or 1 (each seed succeeded or not)."""
    return all(v in (0.0, 1.0) for run in runs for v in run)


def t_test(difference: float, parts: list[tuple[float, float]]) -> tuple[float | None, float | None, float | None]:
    """(statistic, df, standard error) of ``difference`` whose variance is the sum of ``parts``
    (variance, df), the df Welch-Satterthwaite's (a part of df ``math.inf`` adds none to its
    denominator); (None, None, se) where the variance is 0: zero spread has no test."""
    variance = sum(v for v, _ in parts)
    if variance <= 0:
        return None, None, 0.0
    df = variance**2 / sum(v**2 / d for v, d in parts if d != math.inf and v > 0)
    error = math.sqrt(variance)
    return difference / error, df, error


def t_p(statistic: float, df: float) -> float:
    """One-sided p of Student's t: P(T >= statistic) with df degrees of freedom."""
    from scipy.stats import t

    return float(t.sf(statistic, df))


def t_critical(df: float) -> float:
    from scipy.stats import t

    return float(t.ppf(1 - ALPHA, df))


def binomial_p(successes: int, n: int, rate: float, greater: bool) -> float:
    """One-sided exact binomial p: P(X >= successes) (``greater``) or P(X <= successes), X ~ Bin(n, rate)."""
    from scipy.stats import binom

    return float(binom.sf(successes - 1, n, rate) if greater else binom.cdf(successes, n, rate))


def fisher_p(a: Sequence[float], b: Sequence[float], greater: bool) -> float:
    """One-sided p of Fisher's exact test that run a succeeds more often (``greater``) or less often than run b."""
    from scipy.stats import fisher_exact

    table = [[sum(a), len(a) - sum(a)], [sum(b), len(b) - sum(b)]]
    return float(fisher_exact(table, alternative="greater" if greater else "less").pvalue)


def mcnemar_p(a: Sequence[float], b: Sequence[float], greater: bool) -> float:
    """One-sided p of McNemar's exact test on paired 0/1 seeds: of the discordant pairs, how many favour a."""
    favour_a = sum(1 for x, y in zip(a, b) if x > y)
    discordant = sum(1 for x, y in zip(a, b) if x != y)
    if discordant == 0:
        return 1.0
    return binomial_p(favour_a if greater else discordant - favour_a, discordant, 0.5, greater=True)


def variance_parts(values: Sequence[float], shared_episodes: int) -> list[tuple[float, float]]:
    """The variance of a run's seed mean, as (variance, df) parts: over its seeds, and the shared
    held-out set's binomial sampling variance where there is one."""
    parts = [(seed_variance(values) / len(values), len(values) - 1)]
    if shared_episodes:
        mean = seed_mean(values)
        if not 0 <= mean <= 1:
            raise ValueError(f"a shared held-out set's noise is for fractions of its episodes, got a mean of {mean}")
        parts.append((mean * (1 - mean) / shared_episodes, math.inf))
    return parts


def decide(
    op: str,
    per_seed: Sequence[float],
    threshold: float | None = None,
    against_per_seed: Sequence[float] | None = None,
    paired: bool = False,
    parity: float = 0.0,
    shared_episodes: int = 0,
) -> dict:
    """A check of the seed mean of ``per_seed`` ``op`` ``threshold`` (a level), or ``op`` the seed
    mean of ``against_per_seed`` (an ordering; ``parity``: its non-inferiority bound), by the test
    the module docstring names: a dict of ``RESULT_KEYS``."""
    if op not in OPS:
        raise ValueError(f"op must be one of {tuple(OPS)}, got {op!r}")
    if (threshold is None) == (against_per_seed is None):
        raise ValueError("a check has either a level (threshold) or the other run's per-seed values, not both")
    if not per_seed or (against_per_seed is not None and not against_per_seed):
        raise ValueError("a check needs at least one seed's value in each run")
    if parity < 0 or (parity and against_per_seed is None):
        raise ValueError(
            f"a parity bound is a delta >= 0 for an ordering, got {parity} for a {'level' if against_per_seed is None else 'ordering'}"
        )
    if paired and against_per_seed is not None and len(per_seed) != len(against_per_seed):
        raise ValueError(
            f"a paired ordering needs as many seeds in both runs, got {len(per_seed)} and {len(against_per_seed)}"
        )
    greater = op in (">", ">=")
    sign = 1 if greater else -1
    runs = [per_seed] + ([against_per_seed] if against_per_seed is not None else [])
    value = seed_mean(per_seed)
    bound = threshold if against_per_seed is None else seed_mean(against_per_seed) - sign * parity
    seeds = min(len(r) for r in runs)
    statistic = df = margin = p = p_opposite = None
    binary = is_binary(*runs) and not shared_episodes
    if binary and parity:
        raise ValueError(
            "a parity bound on 0/1 outcomes has no exact test here: give each seed a value that is not 0/1"
        )
    if binary and against_per_seed is None:
        test = "exact binomial"
        rate = threshold if 0 < threshold < 1 else COIN
        successes = int(sum(per_seed))
        p = binomial_p(successes, len(per_seed), rate, greater)
    elif binary:
        test = "McNemar exact" if paired else "Fisher exact"
        exact = mcnemar_p if paired else fisher_p
        p, p_opposite = exact(per_seed, against_per_seed, greater), exact(per_seed, against_per_seed, not greater)
    elif seeds >= 2:
        if against_per_seed is None:
            test, parts = "one-sample t", variance_parts(per_seed, shared_episodes)
        elif paired:
            differences = [a - b for a, b in zip(per_seed, against_per_seed)]
            test, parts = "paired t", variance_parts(differences, 0)
            parts += [part for run in runs for part in variance_parts(run, shared_episodes)[1:]]
        else:
            test = "Welch t"
            parts = [part for run in runs for part in variance_parts(run, shared_episodes)]
        statistic, df, error = t_test(value - bound, parts)
        if statistic is None:
            test += ": no spread over seeds"
        else:
            margin = t_critical(df) * error
            p, p_opposite = t_p(sign * statistic, df), t_p(-sign * statistic, df)
    else:
        test = f"none: {seeds} seed"
    passed = OPS[op](value, bound)
    enough = seeds >= MIN_SEEDS
    return {
        "value": value,
        "threshold": bound,
        "margin": margin,
        "seeds": seeds,
        "test": test,
        "statistic": statistic,
        "df": df,
        "p": p,
        "passed": passed,
        "decided": bool(passed and enough and p is not None and p < ALPHA),
        "reversed": bool(
            against_per_seed is not None and enough and p_opposite is not None and p_opposite < ALPHA and not passed
        ),
    }


def could_decide(
    op: str,
    per_seed: Sequence[float],
    threshold: float | None = None,
    against_per_seed: Sequence[float] | None = None,
    paired: bool = False,
    parity: float = 0.0,
    shared_episodes: int = 0,
) -> bool:
    """Whether a check on these runs could be decided at all: every run has ``MIN_SEEDS`` seeds and,
    for 0/1 values, the most favourable outcome (every seed of the run succeeding, every seed of the
    other failing) gives p < ``ALPHA`` (three seeds never decide "solved in every seed")."""
    runs = [per_seed] + ([against_per_seed] if against_per_seed is not None else [])
    if min(len(r) for r in runs) < MIN_SEEDS:
        return False
    if not is_binary(*runs) or shared_episodes:
        return True
    best, worst = (1.0, 0.0) if op in (">", ">=") else (0.0, 1.0)
    other = None if against_per_seed is None else [worst] * len(against_per_seed)
    return decide(op, [best] * len(per_seed), threshold, other, paired, parity)["decided"]


def seed_note(result: dict) -> str:
    """How a check was tested, for its record: "on 3 seeds, Welch t (df 3.4), one-sided p 0.012 (decided below 0.05)"."""
    seeds, p = result["seeds"], result["p"]
    df = f" (df {result['df']:.3g})" if result["df"] is not None else ""
    head = (
        f"on {seeds} seed(s), {result['test']}"
        if p is None
        else f"on {seeds} seeds, {result['test']}{df}, one-sided p {p:.3g}"
    )
    if seeds < MIN_SEEDS:
        return f"{head}; fewer than {MIN_SEEDS} seeds, not decided"
    return f"{head}: not decided" if p is None else f"{head} (decided below {ALPHA:g})"


def undecided(op: str, value: float | None, bound: float | None) -> dict:
    """A check whose values carry no per-seed spread (a pooled or transcribed number): its direction
    only, never decided nor reversed."""
    passed = value is not None and bound is not None and OPS[op](value, bound)
    return {
        **dict.fromkeys(RESULT_KEYS),
        "value": value,
        "threshold": bound,
        "test": "none: no per-seed values",
        "passed": passed,
        "decided": False,
        "reversed": False,
    }
