"""A positive control for Craftax (issue 87 §3): recurrent PPO with a GRU learns
``craftax/Craftax-Classic-Symbolic-v1`` (Matthews et al. 2024's JAX Crafter; the ``craftax`` extra)
well above random play, on every seed.

Craftax-Classic: Crafter's survival game in a 64 × 64 world, seen as a symbolic 7 × 9 window of it
with the inventory and the agent's state (1,345 numbers); 17 actions. The reward is 1 for each of
its 22 achievements the first time it is unlocked in an episode (collect wood, place a table, eat,
drink, ...) and ±0.1 for each point of health gained or lost; an episode ends at death or after
10,000 steps. Uniformly random play returns ``RANDOM_PLAY`` (most random episodes die within a few
hundred steps). This is no memory task: it checks that memrl's learner, a recurrent core and
Craftax's JAX stepping (with its optimistic resets, ``resets=4``) learn together at a CPU budget.
Matthews et al. train PPO-RNN for 1B steps; this run trains 1M.

The agent: xminigrid-control's (``JAX_SUITE_AGENT``: the memory benchmark's, a GRU of 128, an
encoder and a head of 64, the previous action fed back), recurrent PPO with 32 environments × 128
steps, 4 epochs of 4 minibatches, Adam at 1e-3, γ 0.99, the rest memrl's defaults (an entropy bonus of
0.01). A pilot (seed 0, runs/pilots/craftax-gru-1m) returned 3.25 by 120k steps and
4.25 over the last tenth of its 1M (720 episodes), at 1,630 steps/s on one core.

The check: each seed's final return (its training episodes over the last tenth of its updates) is
above random play's. Version 1: 4.75, 4.85, 5.34, 5.38, 4.70 on seeds 100-104 (mean 5.00; p 1e-5), 24
minutes on 2 cores (docs/results/benchmarks.md).
"""

from __future__ import annotations

from memrl import envs
from memrl.experiments.base import Expectation, Experiment, register
from memrl.experiments.xminigrid_control import JAX_SUITE_AGENT
from memrl.learn.ppo_config import PPOConfig

ENV = "craftax/Craftax-Classic-Symbolic-v1"
RANDOM_PLAY = 1.59
"""uniformly random play's mean return (``random_play_returns``: 256 first episodes, key 0; standard
error 0.09, 10th/50th/90th percentiles 0.1/1.1/4.1). On the run's environment (4 fresh worlds a step)
it took 3.7 minutes on a busy core, too long for a test; the same measure with a fresh world for every
copy at every step took 35 minutes and gave the same 1.592"""


def runs() -> dict:
    """PPO with a GRU on Craftax-Classic (the ``craftax`` extra: made here, so that without it the
    experiment says what to install)."""
    return {
        "Classic/gru": PPOConfig(
            env=envs.make(ENV, resets=4),
            total_steps=32 * 128 * 256,  # 1.05M in whole updates
            **JAX_SUITE_AGENT,
        )
    }


EXPECTATIONS = (
    Expectation(
        "Classic/gru",
        ">",
        RANDOM_PLAY,
        f"PPO with a GRU learns Craftax-Classic: its final return is above random play's ({RANDOM_PLAY})",
        central=True,
        learning=True,
    ),
)


def craftax_control() -> Experiment:
    """The experiment (built when asked: its run makes a Craftax environment)."""
    return Experiment(
        name="craftax-control",
        version=1,
        description="recurrent PPO with a GRU on Craftax-Classic (symbolic), stepped in JAX",
        reproduces="Matthews et al. 2024 (Craftax), a positive control on Craftax-Classic (no paper figure)",
        finding="memrl's recurrent PPO learns Craftax's survival game at a CPU budget",
        paper_steps=1_000_000_000,
        kind="benchmark",
        runs=runs(),
        expectations=EXPECTATIONS,
        optima={"Classic": [("random play", RANDOM_PLAY)]},
    )


register("craftax-control", craftax_control)
