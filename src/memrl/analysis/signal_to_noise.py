"""Signal-to-noise ratio of a memory over time (AMRL, Beck et al. 2020, Sec. 3 and App. A.3-A.4).

A signal s arrives at step 0 and noise n_k ~ N(0, σ²) at every later step (width 1). With y_t the
output at step t for the sequence (s, n_1, ..., n_t) and y⁰_t the output for (0, n_1, ..., n_t)
(same noise), memrl measures

    SNR_t = E‖y_t − y⁰_t‖² / E‖y⁰_t − E[y⁰_t]‖²

(the power of the part of the output the signal caused, over the variance the noise causes).
The closed forms for the aggregators (carry starting at 0) are

    sum, avg:  SNR_t = s² / (t σ²)
    max:       SNR_t = E[((s − M)⁺)²] / Var(M),   M = max(0, n_1, ..., n_t),  P(M ≤ m) = Φ(m/σ)^t

with E[((s − M)⁺)²] = 2 ∫_0^s (s − m) Φ(m/σ)^t dm, E[M] = ∫_0^∞ (1 − Φ(m/σ)^t) dm and
E[M²] = ∫_0^∞ 2m (1 − Φ(m/σ)^t) dm. In the weak-signal setting (s = σ) max forgets the signal as
soon as one noise sample exceeds it while sum/avg decay like 1/t; in the strong-signal setting
(s ≫ σ) max keeps it. The paper's own definitions of the two settings were not available to us;
these are memrl's, stated here and in the docs.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import jax
import jax.numpy as jnp
import numpy as np
import tyro
from jax.scipy.special import ndtr

from memrl import cores
from memrl.analysis import ANALYSES
from memrl.analysis.gradient_strength import make_core_for_width
from memrl.settings import CoreName, Count, OutputFolder

DEFAULT_CORES = ("lstm", "lstm-stack", "gru", "amrl-max", "amrl-avg", "amrl-sum", "set")


@dataclasses.dataclass(frozen=True)
class Setting:
    """A signal of size ``signal`` at step 0, then N(0, ``noise_std``²) noise at every later step."""

    signal: float
    noise_std: float


SETTINGS = {"weak signal": Setting(signal=1.0, noise_std=1.0), "strong signal": Setting(signal=10.0, noise_std=1.0)}


def analytic_snr(aggregator: str, setting: Setting, steps: int, grid: int = 20_001) -> np.ndarray:
    """Closed-form SNR_t of an aggregator for t = 0 .. steps − 1 (inf at t = 0, no noise yet)."""
    s, sigma = setting.signal, setting.noise_std
    t = np.arange(steps, dtype=np.float64)
    if aggregator in ("sum", "avg"):
        with np.errstate(divide="ignore"):
            return s**2 / (t * sigma**2)
    if aggregator != "max":
        raise ValueError(f"aggregator must be 'max', 'avg' or 'sum', got {aggregator!r}")
    m = np.linspace(0.0, max(s, 0.0) + 12.0 * sigma, grid)
    cdf_one = np.asarray(ndtr(jnp.asarray(m / sigma, jnp.float32)), np.float64)
    snr = np.full(steps, np.inf)
    below_s = m <= s
    for k in range(1, steps):
        cdf = cdf_one**k
        mean = np.trapezoid(1.0 - cdf, m)
        second = np.trapezoid(2.0 * m * (1.0 - cdf), m)
        signal_power = 2.0 * np.trapezoid(((s - m) * cdf)[below_s], m[below_s])
        snr[k] = signal_power / (second - mean**2)
    return snr


def empirical_snr(core: cores.MemoryCore, key, setting: Setting, steps: int, sequences: int) -> np.ndarray:
    """SNR_t of one initialisation of ``core`` estimated from ``sequences`` noise sequences."""
    init_key, noise_key = jax.random.split(key)
    noise = setting.noise_std * jax.random.normal(noise_key, (steps, sequences, 1)).at[0].set(0.0)
    xs = jnp.concatenate([noise.at[0].set(setting.signal), noise], axis=1)
    resets = jnp.zeros((steps, 2 * sequences), bool).at[0].set(True)
    carry = core.initialize_carry(init_key, (2 * sequences,))
    params = core.init(init_key, carry, xs[0], resets[0])
    _, ys = core.apply(params, carry, xs, resets, method=core.unroll)
    with_signal, noise_only = ys[:, :sequences], ys[:, sequences:]
    signal_power = jnp.mean(jnp.sum((with_signal - noise_only) ** 2, -1), axis=1)
    noise_power = jnp.sum(jnp.var(noise_only, axis=1), -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(signal_power, np.float64) / np.asarray(noise_power, np.float64)


def snr_table(
    names, setting: Setting, steps: int = 100, sequences: int = 20, inits: int = 3, seed: int = 0
) -> dict[str, np.ndarray]:
    """Mean over ``inits`` initialisations of each core's empirical SNR_t: name -> [steps]."""
    keys = jax.random.split(jax.random.PRNGKey(seed), inits)
    return {
        name: np.mean([empirical_snr(make_core_for_width(name, 1), k, setting, steps, sequences) for k in keys], axis=0)
        for name in names
    }


def command(
    core_names: Annotated[tuple[CoreName, ...], tyro.conf.arg(name="cores")] = DEFAULT_CORES,
    steps: Count = 100,
    sequences: Count = 20,
    inits: Count = 3,
    out: OutputFolder = Path("runs/analysis/snr"),
) -> None:
    """Signal-to-noise ratio of each core's output over time, weak and strong signal (AMRL App. A.3-A.4).

    Args:
        core_names: cores to compare.
        steps: sequence length.
        sequences: noise sequences per initialisation.
        inits: initialisations averaged.
        out: folder for snr.png and snr.json.
    """
    from memrl.analysis.series_report import write_series_report

    panels, analytic = {}, {}
    for name, setting in SETTINGS.items():
        title = f"{name} (s={setting.signal:g}, σ={setting.noise_std:g})"
        panels[title] = snr_table(core_names, setting, steps, sequences, inits)
        analytic[title] = {agg: analytic_snr(agg, setting, steps) for agg in ("max", "avg")}
    write_series_report(out, "snr", panels, "SNR_t", tuple(t for t in (1, 10, 50, steps - 1) if t < steps), analytic)


ANALYSES.register("snr", command)
