"""A positive control for R2D2 (issue 87 §2): recurrent Q-learning from prioritised replay of
sequences with stored states and burn-in (Kapturowski et al. 2019) solves AMRL's T-L with an LSTM
and POPGym's RepeatPreviousEasy with a GRU, with its memory, on every seed; beside it the paper's
zero-state variant, recurrent PPO and (version 3) PQN at the same number of environment steps.

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

POPGym's RepeatPreviousEasy (version 2; say the suit of the card dealt 4 steps ago, 52 steps an
episode, ±1/51 a step: returns in [−1, 1], uniformly random play −0.5): the memory benchmark's GRU of
128 with its encoder and head of 64 and the previous action fed back, 16 host-stepped environments,
sequences of 8 burn-in steps and 16 learnt, the replay and the rest as on T-L, and a reward scale of
50 in the loss (Q-targets of order one: at 1, a pilot's greedy return after 524k steps was 0.04,
at 50 its training return 0.87; gamma 0.9 gave 0.89, so the paper's 0.997 stays). 524k environment
steps a run, 5 seeds (100-104); PPO: the memory benchmark's cpu learner at the same steps.

PQN (Gallici et al. 2024; version 3), the other off-policy learner: Q(λ) from each rollout, no replay
and no target network, the same core, encoder and head as R2D2 on each task, its defaults (32
environments × 128 steps, 4 epochs of 16 minibatches, RAdam, λ 0.95, ε from 1 to 0.01 over the first
tenth, LayerNorm in the encoder and head) but for the learning rate on RepeatPreviousEasy: 3e-4, where
pilots on seeds 0-2 at the default 1e-3 learnt and then lost the task (final training returns 0.34,
−0.35, 0.45) and at 3e-4 held it (0.99, 0.98, 0.98); on T-L (12 cells) the default solved every pilot
seed. On T-L its budget is 31 whole updates, 126,976 steps (the others' 128,000 is not a whole number
of its 4,096-step updates).

Checks, on the final agents frozen and greedy in fresh episodes: R2D2 solves T-L (a greedy return of
at least 3.5, right at least 93% of the time: 4 for the right turn, −3 for the wrong one, a guess
0.5) and RepeatPreviousEasy (at least 0.5: three answers in four right, where a memory-less agent
gets one in four) on every seed, and loses its return when its memory is reset before every step
(the solution is memory). Not central: the zero-state variant, PPO and PQN at the same steps solve them
too, and the stored state's training return over the run (the area under its learning curve) is
above the zero state's (R2D2's finding, Sec. 3, on a span that reaches past a sequence's start).
"""

from __future__ import annotations

import dataclasses

from memrl import cores, envs
from memrl.experiments.base import Expectation, Experiment, register
from memrl.experiments.evaluations import frozen_returns, learning_curve_areas, seed_entry, solved_on_each_seed
from memrl.experiments.memory_benchmark import LEARNER, TASKS
from memrl.learn.ppo_config import PPOConfig
from memrl.learn.pqn_config import PQNConfig
from memrl.learn.r2d2_config import R2D2Config

GUESS = 0.5
"""the return of a guessed turn (4 or −3 with equal chance)"""
SOLVED = {"T-L": 3.5, "RepeatPreviousEasy": 0.5}
"""a greedy return at least this is solved: T-L's turns right at least 93% of the time,
RepeatPreviousEasy's answers right three times in four"""
WHAT_SOLVED_MEANS = {
    "T-L": f"a greedy return of at least {SOLVED['T-L']}: right at least 93% of the time; a guess returns {GUESS}",
    "RepeatPreviousEasy": f"a greedy return of at least {SOLVED['RepeatPreviousEasy']}: three answers in four right; "
    f"random play returns {TASKS['RepeatPreviousEasy'].random}",
}
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
POPGYM_STEPS = 16 * 16 * 2048
REPEAT_PREVIOUS = TASKS["RepeatPreviousEasy"]
POPGYM_PPO = PPOConfig(
    env=envs.make(REPEAT_PREVIOUS.env, **REPEAT_PREVIOUS.env_args),
    core=cores.make("gru", hidden=128),
    feed_prev_action=True,
    **{**LEARNER["cpu"], "total_steps": POPGYM_STEPS, "seed": 100, "seeds": 5},
)
POPGYM_R2D2 = dataclasses.replace(
    R2D2,
    env=POPGYM_PPO.env,
    core=POPGYM_PPO.core,
    feed_prev_action=True,
    encoder_widths=(64,),
    head_widths=(64,),
    burn_in=8,
    reward_scale=50.0,
    total_steps=POPGYM_STEPS,
)
PQN = PQNConfig(**{**SHARED, "total_steps": 32 * 128 * 31})
POPGYM_PQN = PQNConfig(
    env=POPGYM_PPO.env,
    core=POPGYM_PPO.core,
    feed_prev_action=True,
    encoder_widths=(64,),
    head_widths=(64,),
    lr=3e-4,
    total_steps=POPGYM_STEPS,
    seed=100,
    seeds=5,
)
EVALUATION_STEPS = 200
"""each final agent acts 200 steps in its environments: 20 whole episodes of T-L in each, 3 of
RepeatPreviousEasy"""


def runs() -> dict:
    """R2D2 with stored states, its zero-state variant, PPO and PQN at the same environment steps, on each task."""
    return {
        "T-L/r2d2": R2D2,
        "T-L/r2d2-zero-state": dataclasses.replace(R2D2, stored_state=False),
        "T-L/ppo": PPOConfig(**SHARED),
        "T-L/pqn": PQN,
        "RepeatPreviousEasy/r2d2": POPGYM_R2D2,
        "RepeatPreviousEasy/r2d2-zero-state": dataclasses.replace(POPGYM_R2D2, stored_state=False),
        "RepeatPreviousEasy/ppo": POPGYM_PPO,
        "RepeatPreviousEasy/pqn": POPGYM_PQN,
    }


def evaluation(folders: dict, out) -> dict:
    """``frozen_returns`` acting greedily; "solved": per seed 1 where its greedy return is at least
    its task's ``SOLVED``; "learning": per seed the mean training return over the run."""
    results = frozen_returns(EVALUATION_STEPS, greedy=True)(folders, out)
    results["solved"] = solved_on_each_seed(results["returns"], lambda run: SOLVED[run.split("/")[0]])
    results["learning"] = {
        run: seed_entry(learning_curve_areas(folder, "episode_return")) for run, folder in folders.items()
    }
    return results


def solved(run: str, who: str, central: bool) -> Expectation:
    task = run.split("/")[0]
    return Expectation(
        run,
        ">=",
        1.0,
        f"{who} solves {task} on every seed ({WHAT_SOLVED_MEANS[task]})",
        evaluated=("solved",),
        central=central,
        learning=central,
    )


def task_expectations(task: str, memory: str) -> tuple[Expectation, ...]:
    """R2D2 with ``memory`` solves ``task`` with its memory; its zero-state variant and PPO beside it."""
    return (
        solved(f"{task}/r2d2", f"R2D2 with {memory}", central=True),
        Expectation(
            f"{task}/r2d2",
            ">",
            0.0,
            f"R2D2's greedy return on {task} falls when its memory is reset before every step (the solution is "
            "memory; paired over the same episodes)",
            evaluated=("memory_gain",),
            central=True,
        ),
        solved(f"{task}/r2d2-zero-state", "R2D2 from zero states", central=False),
        solved(f"{task}/ppo", "recurrent PPO at the same environment steps", central=False),
        solved(f"{task}/pqn", "PQN (no replay, no target network) at the same environment steps", central=False),
        Expectation(
            f"{task}/r2d2",
            ">",
            None,
            f"R2D2's training return on {task} over the run is above its zero-state variant's (Kapturowski et al. "
            "2019, Sec. 3: stored states with burn-in learn better than zero states)",
            evaluated=("learning",),
            against=f"{task}/r2d2-zero-state",
        ),
    )


EXPECTATIONS = (*task_expectations("T-L", "an LSTM"), *task_expectations("RepeatPreviousEasy", "a GRU"))

R2D2_CONTROL = Experiment(
    name="r2d2-control",
    version=3,
    description="R2D2 (stored states, burn-in, prioritised sequence replay) with an LSTM on T-L and a GRU on POPGym's "
    "RepeatPreviousEasy, beside its zero-state variant, recurrent PPO and PQN at the same environment steps",
    reproduces="Kapturowski et al. 2019 (R2D2), a positive control on AMRL's T-L and POPGym (no paper figure)",
    finding="recurrent Q-learning from replayed sequences learns to carry what it saw",
    paper_steps=None,
    kind="benchmark",
    runs=runs(),
    expectations=EXPECTATIONS,
    optima={
        "T-L": [("guess", GUESS), ("optimum", 4.0)],
        "RepeatPreviousEasy": [("random / memory-less", REPEAT_PREVIOUS.random), ("optimum", 1.0)],
    },
    changes="adds PQN on both tasks (its defaults; lr 3e-4 on RepeatPreviousEasy, from pilots on seeds 0-2), "
    "not central; the other runs are version 2's configs, trained again",
    evaluation=evaluation,
)

register("r2d2-control", lambda: R2D2_CONTROL)
