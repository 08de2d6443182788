"""A positive control for continuous actions with memory (issue 87 §1): recurrent PPO with the
squashed Gaussian policy on gymnax's Pendulum, swung up and held from the positions alone.

``gymnax/Pendulum-v1/positions`` observes cos θ and sin θ without the angular velocity θ', as
POPGym's PositionOnlyPendulum and the velocity-masked tasks of Ni et al. 2022 ("Recurrent model-free
RL can be a strong baseline for many POMDPs"): a policy must infer θ' from the positions it has
seen. An LSTM and the memoryless control (a layer of the current observation alone) train on it; the
memoryless control also trains on the full observation, where θ' is seen and no memory is needed.
Checks, on the final agents frozen in fresh episodes: the memoryless agent with the velocity swings
the pendulum up (the task and the learner work); the LSTM from positions beats the memoryless agent
from positions (the memory finds the velocity), and loses return when its memory is reset before
every step.

Every run: PPO, 32 environments × 32 steps, 10 epochs of 4 minibatches, Adam 1e-3, γ 0.95, no
entropy bonus, the value loss unclipped, the rewards scaled by 0.1 in the losses (Pendulum's reach
−16 a step), 300k steps (293 updates), seeds 100-102 (the pilots ran seed 0: LSTM on positions
-330 over the last tenth of training, the memoryless control -1,211 on positions and -181 with the
velocity; random play -1,219, measured).
"""

from __future__ import annotations

from memrl import cores, envs
from memrl.experiments.base import Expectation, Experiment, register
from memrl.experiments.evaluations import frozen_returns
from memrl.learn.ppo_config import PPOConfig

RANDOM_PLAY = -1219.0
"""random play's mean return per 200-step episode (``random_play_returns``, 1,000 episodes; the test measures it)"""
SWUNG_UP = -400.0
"""a return above this swings the pendulum up and mostly holds it (random play -1,219; PPO's usual
solved level about -200)"""
LEARNER = dict(
    encoder_widths=(64,),
    head_widths=(64,),
    num_envs=32,
    rollout_len=32,
    total_steps=32 * 32 * 293,
    lr=1e-3,
    gamma=0.95,
    entropy_coef=0.0,
    update_epochs=10,
    value_clip=None,
    reward_scale=0.1,
    seed=100,
    seeds=3,
)
CORES = {"lstm": cores.make("lstm", hidden=32), "memoryless": cores.make("memoryless", hidden=64)}
EVALUATION_STEPS = 400
"""each final agent acts 400 steps in its 32 environments: 64 whole episodes a seed"""


def runs() -> dict[str, PPOConfig]:
    """The LSTM and the memoryless control on the positions, and the memoryless control with the velocity."""
    observed = {"positions": "gymnax/Pendulum-v1/positions", "full": "gymnax/Pendulum-v1"}
    pairs = (("positions", "lstm"), ("positions", "memoryless"), ("full", "memoryless"))
    return {
        f"{view}/{core}": PPOConfig(env=envs.make(observed[view]), core=CORES[core], **LEARNER) for view, core in pairs
    }


EXPECTATIONS = (
    Expectation(
        "full/memoryless",
        ">",
        SWUNG_UP,
        "the memoryless agent that sees the velocity swings the pendulum up (return above -400; random play -1,219): "
        "the Gaussian policy and the learner work",
        evaluated=("returns",),
        central=True,
        learning=True,
    ),
    Expectation(
        "positions/lstm",
        ">",
        RANDOM_PLAY,
        "the LSTM from the positions alone is above random play (-1,219)",
        evaluated=("returns",),
        learning=True,
    ),
    Expectation(
        "positions/lstm",
        ">",
        None,
        "from the positions alone the LSTM's return is above the memoryless agent's (Ni et al. 2022: a recurrent "
        "policy solves the velocity-masked task a Markovian one cannot)",
        evaluated=("returns",),
        against="positions/memoryless",
        central=True,
    ),
    Expectation(
        "positions/lstm",
        ">",
        0.0,
        "the LSTM's return falls when its memory is reset before every step (what the memory gives, paired over "
        "the same episodes)",
        evaluated=("memory_gain",),
    ),
)

CONTINUOUS_CONTROL = Experiment(
    name="continuous-control",
    version=1,
    description="recurrent PPO with a squashed Gaussian policy on Pendulum from the positions alone: an LSTM "
    "against the memoryless control, and the memoryless control with the velocity",
    reproduces="Ni et al. 2022, velocity-masked control as POPGym's PositionOnlyPendulum, on gymnax's Pendulum "
    "(a positive control, no paper figure)",
    finding="a memory infers the velocity that the positions hide, with continuous actions",
    paper_steps=None,
    kind="benchmark",
    runs=runs(),
    expectations=EXPECTATIONS,
    optima={"positions": [("random play", RANDOM_PLAY)], "full": [("random play", RANDOM_PLAY)]},
    evaluation=frozen_returns(EVALUATION_STEPS),
)

register("continuous-control", lambda: CONTINUOUS_CONTROL)
