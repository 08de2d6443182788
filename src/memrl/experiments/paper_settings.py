"""Settings-table rows that several experiments share: the same agent of the same paper, compared
with the paper once (``PaperSetting``)."""

from memrl.experiments.base import PaperSetting

HTM_SMALL = "cpu: small memories whose training fits a CPU"
"""why the cpu presets' HTM memories are smaller than Table 1's"""
HTM_ROOM_VISUAL_ENCODER = PaperSetting(
    "visual encoder",
    "a CNN or a ResNet (Table 1's layout does not say which task takes which)",
    "conv_kernels",
    "Ballet's CNN, as the view is Ballet's (paper preset: kernels 9, 3, 3 with strides 9, 1, 1)",
)
HTM_CLONING_SETTINGS = (
    PaperSetting("reconstruction loss weight", "1 (Table 1)", "reconstruction_coef"),
    PaperSetting("optimiser", "Adam (Table 1)", "optimizer"),
    PaperSetting("learning rate", "2e-4 (Table 1)", "lr", "1e-3, the PVM clone pilots' (cloning, not V-trace)"),
    PaperSetting("unroll length", "128 (Table 1)", "rollout_len"),
)
"""the learner rows of HTM's imitation analogues (``htm_pvm_imitation.cloning``)"""
HTM_ROOM_AGENT_SETTINGS = (
    PaperSetting("memory width (state dimension)", "512 (Table 1)", "core.d_model", HTM_SMALL),
    PaperSetting("memory layers", "4 (Table 1)", "core.num_layers", HTM_SMALL),
    PaperSetting("attention heads", "8 (Table 1)", "core.num_heads", HTM_SMALL),
    PaperSetting("HTM chunks", "more than the longest episode / chunk size (Table 1)", "core.num_chunks"),
    PaperSetting(
        "HTM window (recent steps attended directly)",
        'not stated: an HTM block supplements "standard attention within the present window" (Sec. 2); the official release has the attention module, not the agent',
        "core.window",
        "at least the chunk size, so that no step of the still open chunk is out of both the window and the store",
    ),
    PaperSetting("LSTM size", "state dimension 512 (Table 1)", "core.hidden", HTM_SMALL),
    PaperSetting("policy and value nets", "MLP, 1 hidden layer of 512 (Table 1)", "head_widths"),
    PaperSetting("V-trace policy loss weight", "0.1 (Table 1)", "policy_coef"),
    PaperSetting("V-trace baseline weight", "1 (Table 1)", "value_coef"),
    PaperSetting("entropy weight", "1e-3 (Table 1)", "entropy_coef"),
    PaperSetting("optimiser", "Adam (Table 1)", "optimizer"),
    PaperSetting("learning rate", "2e-4 (Table 1)", "lr"),
    PaperSetting("batch (trajectories per update)", "32 (Table 1)", "num_envs", "cpu: 16 on 2 cores"),
    PaperSetting("unroll length", "128 (Table 1)", "rollout_len"),
    PaperSetting("discount γ", "not stated", "gamma"),
    PaperSetting(
        "env steps per run",
        "not in the text (runs of 4 hours to days on TPUs, A.3)",
        "total_steps",
        "cpu: 500k, what 2 cores train in about an hour",
    ),
)
"""Table 1's agent and learner rows that the 2D analogues of HTM's Unity tasks (object permanence,
word learning) share"""
EPN_SETTINGS = (
    PaperSetting(
        "learner",
        "IMPALA: 1000 actors, one learner, V-trace (A.2)",
        "",
        "one synchronous program: the actors' lag is 0 (``policy_lag`` sets one)",
        fixed="V-trace, synchronous",
    ),
    PaperSetting(
        "optimiser",
        "RMSprop, ε 1e-4, decay 0.99, momentum 0 (Table 1)",
        "optimizer",
        "cpu: Adam learns faster at small budgets (the LSTM: 7.1 at 800k steps; RMSprop at the top of the ranges 2.0 at 1M, 6.9 at 2.5M; epn-settings-sweep)",
    ),
    PaperSetting(
        "RMSprop's squared-gradient average at the start",
        "TensorFlow 1's: 1 (the paper's RMSPropOptimizer)",
        "rmsprop_initial_scale",
        "runs with Adam have none",
    ),
    PaperSetting(
        "learning rate",
        "swept in [1e-5, 4e-4] (Table 1)",
        "lr",
        "cpu: Adam's; paper: the top of the range, far ahead of 1e-4 in epn-settings-sweep (6.7-7.5 against 1.4-2.7 at 5M steps)",
    ),
    PaperSetting(
        "mini-batch (trajectories)",
        "swept in [32, 128] (Table 1)",
        "num_envs",
        "cpu: 16 on 2 cores; paper: the top of the range, for a GPU's throughput (in epn-settings-sweep 32 was ahead at 5M steps, 7.5 against 6.7, 128 still rising)",
    ),
    PaperSetting(
        "unroll length",
        "swept in [10, 40] (Table 1)",
        "rollout_len",
        "cpu: five updates per episode; paper: the top of the range",
    ),
    PaperSetting(
        "entropy cost",
        "swept in [1e-3, 1e-2] (Table 1)",
        "entropy_coef",
        "the top of the range, a little ahead of 1e-3 at lr 4e-4 in epn-settings-sweep",
    ),
    PaperSetting("discount γ", "swept in [0.9, 0.95] (Table 1)", "gamma"),
    PaperSetting(
        "planner iterations",
        "4 in the RL runs of Sec. 6.2 (footnote 5); 1, 2, 4 compared (Fig. 4a)",
        "core.iterations",
        "cpu: 2, half the planner's compute (an update of 4x4/epn: 0.26 s with 2 iterations and 2 heads, 0.49 s with 4 and 1, on one core); "
        "the paper finds 2 nearly saturating on 5 intersections, and on the 3×3 game at the cpu settings 4 iterations and 1 head were level with 2 and 2 at 560-600k steps (a GPU pilot, docs/results.md)",
    ),
    PaperSetting(
        "planner heads",
        "1 to 4, no benefit past 1 (A.3)",
        "core.num_heads",
        "cpu: the core's default, with 2 iterations (above)",
    ),
    PaperSetting("planner width (queries, keys, values; MLPs)", "64 (A.3)", "core.width"),
    PaperSetting("episodic store", "the whole 100-step episode (Sec. 4)", "core.capacity"),
    PaperSetting("N×k belief rows", "k = 50, half the store (A.4)", "core.k"),
    PaperSetting("policy network", "2-layer MLP of 64 (A.3)", "head_widths"),
    PaperSetting("LSTM baseline", "not described", "core.hidden", "memrl's: 256 units, previous action as input"),
    PaperSetting("seeds", "the best runs of a large sweep (Fig. 2); 3 per condition in Fig. 4", "seeds"),
    PaperSetting(
        "env steps per run",
        "not in the text (the figures' axes were lost)",
        "total_steps",
        "cpu: what 2 cores train in under two hours; paper: 1e8, the aim for half an hour of one H100 (not measured at these settings)",
    ),
)
"""the EPN agent's and learner's rows: all of them for the Memory&Planning Game; other tasks drop the rows they set otherwise"""

AMRL_LEARNER = PaperSetting(
    "learner",
    "PPO (A.5; Ray 0.6.2's RLlib)",
    "",
    "memrl's recurrent PPO, environments in parallel",
    fixed="recurrent PPO",
)
"""AMRL's learner (amrl-tmaze, amrl-minecraft)"""
AMRL_OPTIMISER = PaperSetting("optimiser", "Adam (A.5)", "", "", fixed="Adam (ε 1e-5)")
"""AMRL's optimiser"""
AMRL_DISCOUNT = PaperSetting("discount γ", "0.98 (A.5)", "gamma")
"""AMRL's discount"""
AMRL_TRAIN_BATCH = PaperSetting("train batch (env steps per update)", "4,000 (A.5)", "steps_per_update")
"""AMRL's PPO batch"""
AMRL_MINIBATCH = PaperSetting("SGD minibatch (env steps)", "200 (A.5)", "minibatch_steps")
"""AMRL's PPO minibatch"""
AMRL_EPOCHS = PaperSetting("SGD iterations (epochs) per batch", "30 (A.5)", "update_epochs")
"""AMRL's PPO epochs"""
AMRL_FF2 = PaperSetting("FF2 after the memory", "1 layer of 256 (A.5)", "head_widths")
"""AMRL's layer after the memory"""
AMRL_MEMORY_SIZE = PaperSetting("memory size (LSTM, AMRL, SET; DNC controller)", "256 (A.5)", "core.hidden")
"""AMRL's memory size, every model's"""
