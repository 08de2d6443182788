"""HTM on rapid word learning with distractor phases (Lampinen et al. 2021, Sec. 3.3, Fig. 5 and
App. D.5; memrl's 2D analogue ``word-learning``, see ``memrl/envs/word_learning.py``).

Finding: trained with 0-2 distractor phases, HTM and TrXL both learn the training tasks and the
LSTM does not (App. D.5); only HTM generalises to 20 distractor phases (about 90% correct, Fig. 5c)
and to words learned one or more whole episodes earlier (Fig. 5d-e).

Runs: HTM, GTrXL and an LSTM trained on ``word-learning/train``. The final agents are scored,
as the fraction of episodes whose last test lifts the named object (chance 1/3), on 0, 2, 10 and
20 distractor phases (within an episode) and on super-episodes of 2 and 4 sub-episodes whose last
test asks for a word of the first (across episodes: the memory is not cleared in between).

Presets (Table 1's "Words" column: V-trace policy loss 0.1, baseline 1, reconstruction 1, entropy
1e-3, Adam 2e-4, 128-step unrolls; HTM chunks of 16 overlapping by 1, read 16 at a time):
- ``cpu``: the compact ``cells`` observation, memories of width 64 in 2 layers, 16 environments,
  one seed, 500k steps per run.
- ``paper``: the 99×99 frames through Ballet's CNN, the paper's memory sizes, batch 32, 3 seeds,
  1e9 steps per run (the paper's budget is not in its text).
"""

from __future__ import annotations

from pathlib import Path

import jax

from memrl.agents.paper_agents import HTM_AGENT, HTM_SIZES, HTM_TABLE_1_LOSSES, HTM_VISUAL, htm_room, htm_view
from memrl.envs.base import ENVS
from memrl.envs.word_learning import TIME_LIMIT
from memrl.experiments.base import Expectation, Experiment, PaperSetting, register
from memrl.experiments.paper_settings import HTM_ROOM_AGENT_SETTINGS, HTM_ROOM_VISUAL_ENCODER
from memrl.learn.impala_config import ImpalaConfig

PRESETS = ("cpu", "paper")
TEST_LEVELS = ("distractors0", "distractors2", "distractors10", "distractors20", "episodes2", "episodes4")
WORDS_LOSSES = dict(HTM_TABLE_1_LOSSES, reconstruction_coef=1.0, rollout_len=128)
"""Table 1's Words column: Ballet's loss weights and learning rate, 128-step unrolls"""
CHUNK_SIZE, CHUNK_OVERLAP, TOP_K = 16, 1, 16
"""Table 1's HTM chunk size, overlap and top-k for the word-learning tasks"""
MEMORY_LENGTH = {"cpu": 128, "paper": 256}
"""the TrXL's extra memory: Table 1's 256 for Words; cpu: 128, a small memory's"""
BATCH = {
    "cpu": dict(num_envs=16, seeds=1, total_steps=500_000),
    "paper": dict(num_envs=32, seeds=3, total_steps=1_000_000_000),
}
EVALUATION_STEPS = 2 * TIME_LIMIT
"""steps each evaluation environment acts: at least one whole episode of every test level (the time
limit ends the longest), so each level is scored on at least as many episodes as environments"""


def preset_runs(preset: str) -> dict[str, ImpalaConfig]:
    """The runs of a preset (see ``PRESETS``)."""
    stride = CHUNK_SIZE - CHUNK_OVERLAP
    memories = HTM_SIZES[preset].memories(
        MEMORY_LENGTH[preset],
        chunk_size=CHUNK_SIZE,
        chunk_overlap=CHUNK_OVERLAP,
        num_chunks=TIME_LIMIT // stride + 1,
        k=TOP_K,
    )
    common = dict(**HTM_AGENT, **WORDS_LOSSES, **HTM_VISUAL[htm_view(preset)], **BATCH[preset])
    return {
        f"train/{name}": ImpalaConfig(env=htm_room("word-learning/train", preset), core=core, **common)
        for name, core in memories.items()
    }


def evaluate_levels(folders: dict, out: Path, steps: int = EVALUATION_STEPS) -> dict:
    """Fraction of episodes whose last test lifts the named object, per final agent and test level
    (an episode cut off by the time limit counts as wrong)."""
    from memrl.experiments.evaluations import fraction_correct_by_level
    from memrl.run.final_agents import agent_evaluations

    key = jax.random.PRNGKey(2021)

    def right(config, params, level):
        per_seed = agent_evaluations(config, params, key, steps, env=ENVS.variant(config.env, f"word-learning/{level}"))
        return [reward[done] == 1.0 for done, _, reward in per_seed]

    return fraction_correct_by_level(
        folders, TEST_LEVELS, right, "fraction of episodes whose last test lifts the named object (chance 1/3)"
    )


CHUNK_SETTINGS = (
    PaperSetting("HTM chunk size", "16 (Table 1)", "core.chunk_size"),
    PaperSetting("HTM chunk overlap", "1 (Table 1, as read from its layout)", "core.chunk_overlap"),
    PaperSetting("HTM top-k", "16 (Table 1)", "core.k"),
)
SETTINGS = (
    PaperSetting(
        "task",
        "Hill et al.'s 3D word-learning rooms with 0-20 distractor phases (B.3)",
        "env",
        "memrl's 2D analogue in Ballet's room and view (memrl/envs/word_learning.py)",
    ),
    PaperSetting("training distractor phases", "0, 1 or 2 (Sec. 3.3)", "env"),
    PaperSetting(
        "observation",
        "Unity frames and the instruction",
        "env.observation",
        "cpu: the 11×11 grid of cell codes the 99×99 frames are drawn from",
    ),
    HTM_ROOM_VISUAL_ENCODER,
    PaperSetting(
        "language encoder",
        "word embedding 32, 1-layer LSTM 256 (Table 1)",
        "",
        fixed="word embedding 32, LSTM 256 over (verb, noun)",
    ),
    *CHUNK_SETTINGS,
    PaperSetting(
        "TrXL memory (extra length)",
        "256 (Table 1)",
        "core.memory_length",
        "cpu: 128, a small memory's: with 10 or more distractor phases (up to 100 steps each) the learning phase is "
        "beyond GTrXL's reach by construction, as the paper's contrast at 20 phases intends",
    ),
    PaperSetting(
        "reconstruction loss weight", "1 (Table 1; without it nothing is learned, D.4)", "reconstruction_coef"
    ),
    *HTM_ROOM_AGENT_SETTINGS,
    PaperSetting("seeds", "3 (Fig. 5)", "seeds", "cpu: one seed fits the CPU budget"),
)


def htm_word_learning(preset: str) -> Experiment:
    """The experiment's runs and checks in ``preset``."""
    at = lambda level: ("fraction_correct", level)
    return Experiment(
        name="htm-word-learning",
        version=2,
        description=f"HTM, GTrXL and LSTM on rapid word learning (a 2D analogue; V-trace + reconstruction), preset {preset!r}; tested on 0-20 distractor phases and across episodes",
        reproduces="Lampinen et al. 2021, Sec. 3.3 and Fig. 5 (only HTM generalises to 20 distractor phases and to earlier episodes' words)",
        finding="only HTM recalls new words past 20 distractor phases and across episodes",
        paper_steps=None,
        runs=preset_runs(preset),
        expectations=(
            Expectation(
                "train/htm",
                ">=",
                0.9,
                "HTM about 90% right with 20 distractor phases (Fig. 5c)",
                evaluated=at("distractors20"),
                central=True,
            ),
            Expectation(
                "train/htm",
                ">",
                1 / 3,
                "HTM's last test right more often than chance (1/3) with 20 distractor phases",
                evaluated=at("distractors20"),
                learning=True,
            ),
            Expectation(
                "train/htm",
                ">",
                None,
                "HTM above TrXL with 20 distractor phases (Fig. 5c)",
                evaluated=at("distractors20"),
                against="train/gtrxl",
                central=True,
            ),
            Expectation(
                "train/htm",
                ">",
                None,
                "HTM above TrXL on a word from an earlier episode (Fig. 5d-e)",
                evaluated=at("episodes2"),
                against="train/gtrxl",
                central=True,
            ),
        ),
        optima={"train": [("optimum 1.1", 1.1), ("no memory 0.43", 0.1 + 1 / 3)]},
        evaluation=evaluate_levels,
        settings=SETTINGS,
    )


register("htm-word-learning", htm_word_learning, presets=PRESETS)
