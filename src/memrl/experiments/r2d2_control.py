"""A positive control for R2D2 (issue 87 §2): recurrent Q-learning from prioritised replay of
sequences with stored states and burn-in (Kapturowski et al. 2019) solves AMRL's T-L with an LSTM,
with its memory, on every seed; beside it the paper's zero-state variant and recurrent PPO at the
same number of environment steps.

T-L with a corridor of 12 cells (the indicator at the first, the turn at the last: 12 steps an
episode). R2D2: an LSTM of 32, 16 environments, sequences of 4 burn-in steps and 16 learnt, a replay
of 1,024 sequences, 2 gradient steps an update on 32 drawn sequences (a replay ratio of 4), the
target network every 100 gradient steps, Adam at 1e-3 (as the learner's test; the paper's 1e-4, for
its far larger runs, was not tried), the other settings the paper's (n = 5, γ = 0.997, priority
exponent 0.9, η 0.9, importance exponent 0.6, value rescaling, Ape-X's ε with base 0.4 and α = 7).
Every episode of T-L is 12 steps, so consecutive sequences start 16 mod 12 = 4 steps further into an
episode: of the sequences starting 0, 4 and 8 steps in, the one starting 4 steps in learns a turn
whose indicator lies before its first step, which only the stored carry holds (from a zero carry the
turn's target is a guess). PPO: memrl's defaults (32 environments × 100 steps, 4 epochs of 4
minibatches, Adam at 5e-4) with the same LSTM, encoder and head. 128k environment steps a run, 5
seeds (100-104).

Checks, on the final agents frozen and greedy in fresh episodes: R2D2 solves T-L (a greedy return of
at least 3.5, right at least 93% of the time: 4 for the right turn, −3 for the wrong one, a guess
0.5) on every seed, and loses its return when its memory is reset before every step (the solution
is memory). Not central: the zero-state variant and PPO at the same steps solve it too, and the
stored state's training return over the run (the area under its learning curve) is above the zero
state's (R2D2's finding, Sec. 3, on a span that reaches past a sequence's start).
"""

from __future__ import annotations

import dataclasses

from memrl import cores, envs
from memrl.experiments.base import Expectation, Experiment, per_seed, register
from memrl.experiments.evaluations import frozen_returns, learning_curve_areas, seed_entry
from memrl.learn.ppo_config import PPOConfig
from memrl.learn.r2d2_config import R2D2Config

GUESS = 0.5
"""the return of a guessed turn (4 or −3 with equal chance)"""
SOLVED = 3.5
"""a greedy return at least this turns right at least 93% of the time"""
STEPS = 16 * 16 * 500
SHARED = dict(
    env=envs.make("tmaze/T-L", maze_length=12, timeout=20),
    core=cores.make("lstm", hidden=32),
    encoder_widths=(32,),
    head_widths=(32,),
    total_steps=STEPS,
    seed=100,
    seeds=5,
)
R2D2 = R2D2Config(
    num_envs=16,
    rollout_len=16,
    burn_in=4,
    replay_size=1024,
    learn_start=64,
    batch_size=32,
    learn_steps=2,
    target_period=100,
    lr=1e-3,
    **SHARED,
)
EVALUATION_STEPS = 200
"""each final agent acts 200 steps in its environments: 20 whole episodes in each"""


def runs() -> dict:
    """R2D2 with stored states, its zero-state variant, and PPO at the same environment steps."""
    return {
        "T-L/r2d2": R2D2,
        "T-L/r2d2-zero-state": dataclasses.replace(R2D2, stored_state=False),
        "T-L/ppo": PPOConfig(**SHARED),
    }


def evaluation(folders: dict, out) -> dict:
    """``frozen_returns`` acting greedily; "solved": per seed 1 where its greedy return is at least
    ``SOLVED``; "learning": per seed the mean training return over the run."""
    results = frozen_returns(EVALUATION_STEPS, greedy=True)(folders, out)
    results["solved"] = {
        run: seed_entry([float(value >= SOLVED) for value in per_seed(entry)])
        for run, entry in results["returns"].items()
    }
    results["learning"] = {
        run: seed_entry(learning_curve_areas(folder, "episode_return")) for run, folder in folders.items()
    }
    return results


def solved(run: str, who: str, central: bool) -> Expectation:
    return Expectation(
        run,
        ">=",
        1.0,
        f"{who} solves T-L on every seed (a greedy return of at least {SOLVED}: right at least 93% of the time; a "
        f"guess returns {GUESS})",
        evaluated=("solved",),
        central=central,
        learning=central,
    )


EXPECTATIONS = (
    solved("T-L/r2d2", "R2D2 with an LSTM", central=True),
    Expectation(
        "T-L/r2d2",
        ">",
        0.0,
        "R2D2's greedy return falls when its memory is reset before every step (the solution is memory; paired over "
        "the same episodes)",
        evaluated=("memory_gain",),
        central=True,
    ),
    solved("T-L/r2d2-zero-state", "R2D2 from zero states", central=False),
    solved("T-L/ppo", "recurrent PPO at the same environment steps", central=False),
    Expectation(
        "T-L/r2d2",
        ">",
        None,
        "R2D2's training return over the run is above its zero-state variant's (Kapturowski et al. 2019, Sec. 3: "
        "stored states with burn-in learn better than zero states), a third of its sequences learning a turn whose "
        "indicator precedes them",
        evaluated=("learning",),
        against="T-L/r2d2-zero-state",
    ),
)

R2D2_CONTROL = Experiment(
    name="r2d2-control",
    version=1,
    description="R2D2 (stored states, burn-in, prioritised sequence replay) with an LSTM on T-L, beside its "
    "zero-state variant and recurrent PPO at the same environment steps",
    reproduces="Kapturowski et al. 2019 (R2D2), a positive control on AMRL's T-L (no paper figure)",
    finding="recurrent Q-learning from replayed sequences learns to carry the indicator",
    paper_steps=None,
    kind="benchmark",
    runs=runs(),
    expectations=EXPECTATIONS,
    optima={"T-L": [("guess", GUESS), ("optimum", 4.0)]},
    evaluation=evaluation,
)

register("r2d2-control", lambda: R2D2_CONTROL)
