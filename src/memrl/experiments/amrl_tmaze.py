"""AMRL (Beck et al. 2020) T-maze results: Fig. 3 (T-L, T-LN, T-LS) and the summary of Sec. 5.

Finding: on T-LS, AMRL-Max and AMRL-Avg reach near the optimum 13.9 while LSTM and the stacked LSTM
stay at or below the memory-less optimum 10.4 (99 checks and a coin flip: 9.9 + 0.5); on T-LN the
AMRL models solve the task (return 4.0).
"""

from __future__ import annotations

from memrl.experiments.base import Expectation, Experiment, register
from memrl.learn.ppo_config import PPOConfig

CORES = ("amrl-max", "amrl-avg", "set", "lstm", "lstm-stack")

# Budgets and batch shapes chosen so the whole experiment runs in under an hour on 2 CPU cores.
# lr 5e-3 is the largest of AMRL's grid {5e-3, 5e-4, 5e-5}; on T-LN it started learning at about
# 150k steps where 5e-4 needed about 250k-400k. Updates use 2 epochs (AMRL used 30 SGD iterations
# over 4000-step batches; on a CPU the compute per sample is the bottleneck). T-LS episodes last
# 100 to 151 steps, so its 320-step rollouts hold whole episodes far more often than 160-step ones.
T_L_SETTINGS = dict(total_steps=350_000, num_envs=32, rollout_len=100, num_minibatches=2, update_epochs=2, lr=5e-3)
T_LS_SETTINGS = dict(total_steps=600_000, num_envs=32, rollout_len=320, num_minibatches=4, update_epochs=2, lr=5e-3)
ENVS = {"T-LS": T_LS_SETTINGS, "T-LN": T_L_SETTINGS, "T-L": T_L_SETTINGS}  # longest jobs first


def tmaze_runs(envs: dict, cores, seeds: int) -> dict[str, PPOConfig]:
    return {
        f"{env}/{core}": PPOConfig(env=f"tmaze/{env}", core=core, seeds=seeds, **settings)
        for env, settings in envs.items()
        for core in cores
    }


AMRL_TMAZE = Experiment(
    name="amrl-tmaze",
    version=1,
    description="AMRL-Max, AMRL-Avg, SET, LSTM and stacked LSTM on T-L, T-LN and T-LS, 3 seeds each",
    reproduces="Beck et al. 2020, Fig. 3 and Sec. 5 (T-maze results)",
    runs=tmaze_runs(ENVS, CORES, seeds=3),
    expectations=(
        Expectation("T-LS/amrl-max", ">=", 13.0, "AMRL-Max solves T-LS (optimum 13.9)"),
        Expectation("T-LS/amrl-avg", ">=", 13.0, "AMRL-Avg solves T-LS (optimum 13.9)"),
        Expectation("T-LS/lstm", "<=", 10.4, "LSTM stays at or below the memory-less optimum 10.4"),
        Expectation("T-LS/lstm-stack", "<=", 10.4, "stacked LSTM stays at or below the memory-less optimum 10.4"),
        Expectation("T-LN/amrl-max", ">=", 3.8, "AMRL-Max solves T-LN (optimum 4.0)"),
        Expectation("T-LN/amrl-avg", ">=", 3.8, "AMRL-Avg solves T-LN (optimum 4.0)"),
    ),
    optima={
        "T-L": [("optimum 4.0", 4.0), ("no memory 0.5", 0.5)],
        "T-LN": [("optimum 4.0", 4.0), ("no memory 0.5", 0.5)],
        "T-LS": [("optimum 13.9", 13.9), ("no memory 10.4", 10.4)],
    },
)

TLN_DEMO = Experiment(
    name="tln-demo",
    version=1,
    description="The quick-start job: AMRL-Max and LSTM on T-LN, one seed each (a few minutes on 2 CPU cores)",
    reproduces="Beck et al. 2020, Fig. 3 (T-LN panel), one seed",
    runs=tmaze_runs({"T-LN": T_L_SETTINGS}, ("amrl-max", "lstm"), seeds=1),
    expectations=(Expectation("T-LN/amrl-max", ">=", 3.8, "AMRL-Max solves T-LN (optimum 4.0)"),),
    optima={"T-LN": [("optimum 4.0", 4.0), ("no memory 0.5", 0.5)]},
)

register("amrl-tmaze", lambda: AMRL_TMAZE)
register("tln-demo", lambda: TLN_DEMO)
