"""Gradient decay (AMRL, Beck et al. 2020, Sec. 6, Fig. 6): how strongly the output at step t still
depends on the input at step 0.

The input sequence is 1 at t = 0 and 0 afterwards (width 1); the gradient strength at t is
‖∂y_t / ∂x_0‖₂, computed exactly by forward-mode differentiation and averaged over
initialisations. Straight-through aggregators keep it from decaying; an LSTM's decays.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import jax
import jax.numpy as jnp
import numpy as np
import tyro

from memrl import cores
from memrl.analysis import ANALYSES
from memrl.settings import CoreName, Count, OutputFolder

DEFAULT_CORES = ("lstm", "lstm-stack", "gru", "amrl-max", "amrl-avg", "amrl-sum", "set")


def make_core_for_width(name: str, width: int, **kwargs) -> cores.MemoryCore:
    """Build a core; cores whose carry needs the input width (``features``) get ``width``."""
    core = cores.make(name, **kwargs)
    if "features" in {f.name for f in dataclasses.fields(core)}:
        core = cores.make(name, **{**kwargs, "features": width})
    return core


def gradient_strength(core: cores.MemoryCore, key, steps: int) -> np.ndarray:
    """‖∂y_t/∂x_0‖₂ for t = 0 .. steps − 1 with the input 1, 0, 0, ... (batch 1, width 1)."""
    resets = jnp.zeros((steps, 1), bool).at[0].set(True)
    carry = core.initialize_carry(key, (1,))
    xs = jnp.zeros((steps, 1, 1)).at[0].set(1.0)
    params = core.init(key, carry, xs[0], resets[0])

    def outputs(x0):
        return core.apply(params, carry, xs.at[0].set(x0), resets, method=core.unroll)[1][:, 0]

    _, tangent = jax.jvp(outputs, (xs[0],), (jnp.ones_like(xs[0]),))
    return np.asarray(jnp.linalg.norm(tangent, axis=-1))


def gradient_table(names, steps: int = 100, inits: int = 3, seed: int = 0) -> dict[str, np.ndarray]:
    """Mean gradient strength over ``inits`` initialisations, per core: name -> [steps]."""
    keys = jax.random.split(jax.random.PRNGKey(seed), inits)
    return {
        name: np.mean([gradient_strength(make_core_for_width(name, 1), k, steps) for k in keys], axis=0)
        for name in names
    }


def command(
    core_names: Annotated[tuple[CoreName, ...], tyro.conf.arg(name="cores")] = DEFAULT_CORES,
    steps: Count = 100,
    inits: Count = 3,
    out: OutputFolder = Path("runs/analysis/gradients"),
) -> None:
    """Gradient of the output at step t with respect to the input at step 0 (AMRL Sec. 6).

    Args:
        core_names: cores to compare.
        steps: sequence length.
        inits: initialisations averaged.
        out: folder for gradients.png and gradients.json.
    """
    from memrl.analysis.series_report import write_series_report

    table = gradient_table(core_names, steps, inits)
    write_series_report(
        out,
        "gradients",
        {f"gradient decay (mean of {inits} initialisations)": table},
        "‖∂y_t/∂x_0‖",
        tuple(t for t in (1, 10, 50, steps - 1) if t < steps),
    )


ANALYSES.register("gradients", command)
